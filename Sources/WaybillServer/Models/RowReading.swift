import Fluent
import Foundation
import SQLKit
import WaybillCore

/// A text column holding an enum's raw value; `RowOutput` reads it without the generic decoder.
protocol TextColumn: RawRepresentable<String>, Decodable {}

extension OrderStatus: TextColumn {}
extension WeightClass: TextColumn {}
extension ServiceLevel: TextColumn {}
extension PaymentMethod: TextColumn {}
extension FailureReason: TextColumn {}
extension Order.PaymentStatus: TextColumn {}
extension Role: TextColumn {}
extension LegKind: TextColumn {}
extension LegStatus: TextColumn {}
extension HandOverKind: TextColumn {}
extension OrderFile.Kind: TextColumn {}

/// A plain SQL row seen as Fluent's `DatabaseOutput`, so a model is filled from its own property
/// declarations (the one mapping of its columns) without going through Fluent's query path.
/// Strings, integers, booleans, UUIDs and text enums are read directly: the generic decoding path
/// costs several microseconds a value, most of a list page's time (`scripts/bench`).
struct RowOutput: DatabaseOutput {
    let row: any SQLRow

    func schema(_ schema: String) -> any DatabaseOutput { self }
    func contains(_ key: FieldKey) -> Bool { row.contains(column: key.description) }
    func decodeNil(_ key: FieldKey) throws -> Bool { try row.decodeNil(column: key.description) }

    func decode<T: Decodable>(_ key: FieldKey, as type: T.Type) throws -> T {
        let column = key.description
        let value: Any
        if T.self == String.self { value = try row.decode(column: column, as: String.self) }
        else if T.self == Int.self { value = Int(try row.decode(column: column, as: Int64.self)) }
        else if T.self == Int64.self { value = try row.decode(column: column, as: Int64.self) }
        else if T.self == UUID.self { value = try row.decode(column: column, as: UUID.self) }
        else if T.self == Bool.self { value = try row.decode(column: column, as: Bool.self) }
        else if T.self == Double.self { value = try row.decode(column: column, as: Double.self) }
        else if let text = T.self as? any TextColumn.Type {
            let raw = try row.decode(column: column, as: String.self)
            guard let parsed = text.init(rawValue: raw) else {
                throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "\(column): \(raw)"))
            }
            value = parsed
        }
        else if let id = T.self as? any UUIDColumn.Type { value = id.init(rawValue: try row.decode(column: column, as: UUID.self)) }
        else { return try row.decode(column: column, as: T.self) }
        return try columnValue(value, as: T.self, column: column)
    }

    var description: String { "RowOutput(\(row.allColumns))" }
}

/// `value`, read for a column of type `T`, as a `T`: what the readers (`RowOutput`, `CellsOutput`)
/// read is of the type they were asked for, so a mismatch is a decoding error, not a trap.
func columnValue<T>(_ value: Any, as _: T.Type, column: String) throws -> T {
    guard let typed = value as? T else {
        throw DecodingError.typeMismatch(T.self, .init(codingPath: [], debugDescription: "\(column): read as \(type(of: value))"))
    }
    return typed
}

extension Model {
    /// The model from an SQL row of its table: the same mapping as Fluent's (the property
    /// declarations), read fast. Columns the row lacks stay unset.
    init(row: any SQLRow) throws {
        self.init()
        try output(from: RowOutput(row: row))
    }

    /// The model from a row read by `ListRows`.
    init(reading row: any DatabaseOutput) throws {
        self.init()
        try output(from: row)
    }
}
