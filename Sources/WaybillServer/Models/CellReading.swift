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
        let traced = sql as? TracedSQLDatabase
        if let direct = SQLiteReaders.direct(traced?.base ?? sql) {
            let result = try await direct.run(sql.serialize(select.query), traced: traced != nil)
            let names = ColumnIndex(result.columns)
            return result.rows.map { RowOutput(row: ReadSQLiteRow(names: names, values: $0)) }
        }
        guard sql.dialect.name == "postgresql", let postgres = (traced?.base ?? sql) as? any PostgresDatabase else {
            return try await select.all().map { RowOutput(row: $0) }
        }
        let rows = try await postgresRows(sql.serialize(select.query), postgres: postgres, traced: traced != nil)
        guard let first = rows.first else { return [] }
        let index = ColumnIndex(first.map(\.columnName))
        return rows.map { CellsOutput(cells: Array($0), index: index) }
    }

    /// A serialized statement run on PostgreSQL with its binds encoded by PostgresNIO directly.
    static func postgresRows(_ serialized: (sql: String, binds: [any Encodable & Sendable]), postgres: any PostgresDatabase,
                             traced: Bool) async throws -> [PostgresRow] {
        var bindings = PostgresBindings(capacity: serialized.binds.count)
        for bind in serialized.binds { try append(bind, to: &bindings) }
        let query = PostgresQuery(unsafeSQL: serialized.sql, binds: bindings)
        let logger = postgres.logger
        return try await TracedSQLDatabase.span(serialized.sql, system: "postgresql", when: traced) {
            try await postgres.withConnection { connection in connection.query(query, logger: logger) }.get().rows
        }
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
        // Fluent asks for an optional field's value as an optional (`FailureReason?`).
        if let optional = T.self as? any OptionalColumn.Type {
            if cell.bytes == nil { return try columnValue(optional.empty, as: T.self, column: column) }
            return try columnValue(optional.wrapping(try Self.value(optional.wrappedType, cell, column)), as: T.self, column: column)
        }
        return try columnValue(try Self.value(T.self, cell, column), as: T.self, column: column)
    }

    private static func value(_ type: Any.Type, _ cell: PostgresCell, _ column: String) throws -> Any {
        if type == String.self { return try cell.decode(String.self) }
        if type == Int.self { return try cell.decode(Int.self) }
        if type == Int64.self { return try cell.decode(Int64.self) }
        if type == UUID.self { return try cell.decode(UUID.self) }
        if type == Bool.self { return try cell.decode(Bool.self) }
        if type == Double.self { return try cell.decode(Double.self) }
        if type == Date.self { return try cell.decode(Date.self) }
        if let text = type as? any TextColumn.Type {
            let raw = try cell.decode(String.self)
            guard let value = text.init(rawValue: raw) else {
                throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "\(column): \(raw)"))
            }
            return value
        }
        if let id = type as? any UUIDColumn.Type { return id.init(rawValue: try cell.decode(UUID.self)) }
        if let decodable = type as? any PostgresDecodable.Type { return try decode(decodable, cell) }
        throw DecodingError.typeMismatch(type, .init(codingPath: [], debugDescription: "\(column): \(type) is read by RowOutput only"))
    }

    private static func decode<U: PostgresDecodable>(_ type: U.Type, _ cell: PostgresCell) throws -> U {
        try cell.decode(U.self)
    }

    var description: String { "CellsOutput(\(index.positions.keys.sorted()))" }

    struct MissingColumn: Error { let column: String }
}

/// An optional, seen from outside its type: what it wraps, and how to make one.
protocol OptionalColumn {
    static var wrappedType: Any.Type { get }
    static var empty: Self { get }
    static func wrapping(_ value: Any) -> Self
}

extension Optional: OptionalColumn {
    static var wrappedType: Any.Type { Wrapped.self }
    static var empty: Self { nil }
    static func wrapping(_ value: Any) -> Self { value as? Wrapped }
}

/// A typed id as the UUID PostgreSQL stores.
protocol UUIDColumnValue { var uuid: UUID { get } }
extension Tagged: UUIDColumnValue where RawValue == UUID { var uuid: UUID { rawValue } }
