import FluentPostgresDriver
import Foundation
import SQLKit
import WaybillCore

/// Rows of a list query as Fluent's `DatabaseOutput`, read the fastest way each database allows.
///
/// On PostgreSQL a row reached through SQLKit builds a name table of its own and decodes every cell
/// through the generic `Decodable` path (about a microsecond a cell; a page of 50 shipments and their
/// people is some 4,000 cells, a quarter of the request's CPU in `perf`). Here the query goes to
/// PostgresNIO directly: the column names are looked up once per result, and each cell is decoded
/// by its `PostgresDecodable` type. Elsewhere (SQLite) the rows come through `RowOutput`.
enum ListRows {
    static func outputs(_ select: SQLSelectBuilder, sql: any SQLDatabase) async throws -> [any DatabaseOutput] {
        guard sql.dialect.name == "postgresql", let postgres = sql as? any PostgresDatabase else {
            return try await select.all().map { RowOutput(row: $0) }
        }
        let serialized = sql.serialize(select.query)
        var bindings = PostgresBindings(capacity: serialized.binds.count)
        for bind in serialized.binds { try append(bind, to: &bindings) }
        let query = PostgresQuery(unsafeSQL: serialized.sql, binds: bindings)
        let logger = postgres.logger
        let rows = try await postgres.withConnection { connection in connection.query(query, logger: logger) }.get().rows
        guard let first = rows.first else { return [] }
        let index = ColumnIndex(first.map(\.columnName))
        return rows.map { CellsOutput(cells: Array($0), index: index) }
    }

    private static func append(_ value: any Encodable, to bindings: inout PostgresBindings) throws {
        switch value {
        case let id as any UUIDColumnValue: try bindings.append(id.uuid, context: .default)
        case let encodable as any PostgresEncodable: try appendEncodable(encodable, to: &bindings)
        default: throw UnsupportedBind(type: "\(type(of: value))")
        }
    }

    private static func appendEncodable<T: PostgresEncodable>(_ value: T, to bindings: inout PostgresBindings) throws {
        try bindings.append(value, context: .default)
    }

    struct UnsupportedBind: Error { let type: String }
}

/// Where each column of a result is, computed once for all its rows.
final class ColumnIndex: Sendable {
    let positions: [String: Int]
    init(_ names: [String]) {
        positions = Dictionary(names.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
    }
}

/// One PostgreSQL row as Fluent's `DatabaseOutput`.
struct CellsOutput: DatabaseOutput {
    let cells: [PostgresCell]
    let index: ColumnIndex

    func schema(_ schema: String) -> any DatabaseOutput { self }
    func contains(_ key: FieldKey) -> Bool { index.positions[key.description] != nil }

    func decodeNil(_ key: FieldKey) throws -> Bool {
        guard let position = index.positions[key.description] else { return true }
        return cells[position].bytes == nil
    }

    func decode<T: Decodable>(_ key: FieldKey, as type: T.Type) throws -> T {
        let column = key.description
        guard let position = index.positions[column] else { throw MissingColumn(column: column) }
        let cell = cells[position]
        if T.self == String.self { return try cell.decode(String.self) as! T }
        if T.self == Int.self { return try cell.decode(Int.self) as! T }
        if T.self == Int64.self { return try cell.decode(Int64.self) as! T }
        if T.self == UUID.self { return try cell.decode(UUID.self) as! T }
        if T.self == Bool.self { return try cell.decode(Bool.self) as! T }
        if T.self == Double.self { return try cell.decode(Double.self) as! T }
        if T.self == Date.self { return try cell.decode(Date.self) as! T }
        if let text = T.self as? any TextColumn.Type {
            let raw = try cell.decode(String.self)
            guard let value = text.init(rawValue: raw) else {
                throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "\(column): \(raw)"))
            }
            return value as! T
        }
        if let id = T.self as? any UUIDColumn.Type { return id.init(rawValue: try cell.decode(UUID.self)) as! T }
        if let decodable = T.self as? any PostgresDecodable.Type { return try Self.decode(decodable, cell) as! T }
        throw DecodingError.typeMismatch(T.self, .init(codingPath: [], debugDescription: "\(column) is read by RowOutput only"))
    }

    private static func decode<U: PostgresDecodable>(_ type: U.Type, _ cell: PostgresCell) throws -> U {
        try cell.decode(U.self)
    }

    var description: String { "CellsOutput(\(index.positions.keys.sorted()))" }

    struct MissingColumn: Error { let column: String }
}

/// A typed id as the UUID PostgreSQL stores.
protocol UUIDColumnValue { var uuid: UUID { get } }
extension Tagged: UUIDColumnValue where RawValue == UUID { var uuid: UUID { rawValue } }
