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
        if T.self == String.self { return try row.decode(column: column, as: String.self) as! T }
        if T.self == Int.self { return Int(try row.decode(column: column, as: Int64.self)) as! T }
        if T.self == Int64.self { return try row.decode(column: column, as: Int64.self) as! T }
        if T.self == UUID.self { return try row.decode(column: column, as: UUID.self) as! T }
        if T.self == Bool.self { return try row.decode(column: column, as: Bool.self) as! T }
        if T.self == Double.self { return try row.decode(column: column, as: Double.self) as! T }
        if let text = T.self as? any TextColumn.Type {
            let raw = try row.decode(column: column, as: String.self)
            guard let value = text.init(rawValue: raw) else {
                throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "\(column): \(raw)"))
            }
            return value as! T
        }
        if let id = T.self as? any UUIDColumn.Type { return id.init(rawValue: try row.decode(column: column, as: UUID.self)) as! T }
        return try row.decode(column: column, as: T.self)
    }

    var description: String { "RowOutput(\(row.allColumns))" }
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
