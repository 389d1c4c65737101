import FluentKit
import FluentSQL
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import SQLiteKit
import SQLiteNIO
import SQLKit

/// The connection SQLite's write transactions run on, on the caller's thread.
///
/// Every write on SQLite is serialized by `WriteLock`, so while one transaction runs nobody else
/// writes, and its throughput is one over the time the lock is held. Through SQLiteNIO each of a
/// transaction's statements was a hop to SQLiteNIO's thread pool and back to an event loop busy
/// with the other connections' requests: placing an order held the lock for 13 such round trips
/// while the two cores stayed half idle (docs/performance.md). Here the statements run where the
/// transaction's code runs, one after another, with their text kept prepared.
final class SQLiteWriter: SQLiteStatements {
    let path: String
    /// The connection, opened on first use (after the migrations); `closed` once the application
    /// stopped, after which nothing opens it again (see `SQLiteReaders`).
    private let connection = NIOLockedValueBox<(handle: SQLiteHandle?, closed: Bool)>((nil, false))

    let statistics: SQLiteStatistics

    init(path: String, statistics: SQLiteStatistics = SQLiteStatistics()) {
        self.path = path
        self.statistics = statistics
    }

    private func withHandle<T>(_ body: (SQLiteHandle) throws -> T) throws -> T {
        try connection.withLockedValue { state in
            guard !state.closed else { throw SQLiteHandle.Failure.closed }
            if state.handle == nil { state.handle = try SQLiteHandle(path: path, readOnly: false) }
            return try body(state.handle!)
        }
    }

    /// Runs one statement.
    func rows(_ sql: String, _ binds: [SQLiteData]) throws -> SQLiteReaders.Result {
        try withHandle { try $0.rows(sql, binds) }
    }

    func exec(_ sql: String) throws {
        try withHandle { try $0.exec(sql) }
    }

    func close() {
        connection.withLockedValue { $0 = (nil, true) }
        checkpointer.withLockedValue { $0 = (nil, true) }
    }

    /// Checkpoints run on NIO's thread pool on a connection of their own, every
    /// `commitsPerCheckpoint` commits (the writer's connection does not checkpoint by itself).
    private let checkpointer = NIOLockedValueBox<(handle: SQLiteHandle?, closed: Bool)>((nil, false))
    private let checkpoints = NIOLockedValueBox<(commits: Int, running: Bool)>((0, false))
    static let commitsPerCheckpoint = 200

    /// Counts a commit, and starts a checkpoint in the background when enough have gathered.
    func committed() {
        let start = checkpoints.withLockedValue { state -> Bool in
            state.commits += 1
            guard state.commits >= Self.commitsPerCheckpoint, !state.running else { return false }
            state = (0, true)
            return true
        }
        guard start else { return }
        let path = path, checkpointer = checkpointer, checkpoints = checkpoints
        NIOThreadPool.singleton.submit { _ in
            checkpointer.withLockedValue { state in
                // On a thread of its own: SQLite may wait here for the lock it needs to open the log.
                guard !state.closed else { return }
                if state.handle == nil { state.handle = try? SQLiteHandle(path: path, readOnly: false, busyMilliseconds: 5_000) }
                try? state.handle?.checkpoint()
            }
            checkpoints.withLockedValue { $0.running = false }
        }
    }

    /// `body` in one transaction on this connection: committed if it returns, rolled back if it throws.
    /// The caller holds the write lock. Once begun, the transaction holds SQLite's write lock, so its
    /// statements never find the file busy; beginning waits, asynchronously, for another connection
    /// that writes (SQLiteNIO's, during migrations or a backup; another process).
    func transaction<T: Sendable>(context: DatabaseContext, _ body: @escaping @Sendable (any Database) async throws -> T) async throws -> T {
        try await SQLiteBusy.retrying(statistics) { try exec("BEGIN IMMEDIATE TRANSACTION") }
        do {
            let result = try await body(WriterDatabase(writer: self, context: context))
            try exec("COMMIT TRANSACTION")
            committed()
            return result
        } catch {
            try? exec("ROLLBACK TRANSACTION")
            throw error
        }
    }
}

/// Fluent's and SQLKit's view of the writer's connection: every query converted and serialized as
/// FluentSQLiteDriver does (`SQLQueryConverter`, `SQLiteDialect`, `RETURNING` the new id), then run
/// at once on the caller's thread.
struct WriterDatabase: Database, SQLDatabase {
    let writer: SQLiteWriter
    let context: DatabaseContext
    /// Always: the writer's connection is only handed out inside its transactions.
    var inTransaction: Bool { true }

    // Database

    func execute(query: DatabaseQuery, onOutput: @escaping @Sendable (any DatabaseOutput) -> Void) -> EventLoopFuture<Void> {
        if let insert = PlainInsert(query) {
            return eventLoop.makeCompletedFuture {
                try rows(writer.rows(insert.sql, insert.binds())) { onOutput(FluentOutput(row: $0, schema: nil)) }
            }
        }
        var converted = SQLQueryConverter(delegate: Delegate()).convert(query)
        // As FluentSQLiteDatabase: a create returns the id it made, unless the id is composite.
        if case .create = query.action, query.customIDKey != .some(.string("")) {
            converted = SQLList([converted, SQLReturning(.init((query.customIDKey ?? .id).description))], separator: SQLRaw(" "))
        }
        return eventLoop.makeCompletedFuture { try run(converted) { onOutput(FluentOutput(row: $0, schema: nil)) } }
    }

    func execute(schema: DatabaseSchema) -> EventLoopFuture<Void> {
        eventLoop.makeFailedFuture(Unsupported(what: "schema changes (the migrations run on SQLiteNIO's connection)"))
    }

    func execute(enum: DatabaseEnum) -> EventLoopFuture<Void> { eventLoop.makeSucceededFuture(()) }

    func transaction<T: Sendable>(_ closure: @escaping @Sendable (any Database) -> EventLoopFuture<T>) -> EventLoopFuture<T> {
        closure(self)
    }

    func transaction<T: Sendable>(_ closure: @escaping @Sendable (any Database) async throws -> T) async throws -> T {
        try await closure(self)
    }

    func withConnection<T: Sendable>(_ closure: @escaping @Sendable (any Database) -> EventLoopFuture<T>) -> EventLoopFuture<T> {
        closure(self)
    }

    func withConnection<T: Sendable>(_ closure: @escaping @Sendable (any Database) async throws -> T) async throws -> T {
        try await closure(self)
    }

    // SQLDatabase

    var dialect: any SQLDialect { SQLiteDialect() }
    var version: (any SQLDatabaseReportedVersion)? { nil }
    var queryLogLevel: Logger.Level? { nil }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) -> EventLoopFuture<Void> {
        eventLoop.makeCompletedFuture { try run(query, onRow) }
    }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) async throws {
        try run(query, onRow)
    }

    func withSession<R>(_ closure: @escaping @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        try await closure(self)
    }

    private func run(_ query: any SQLExpression, _ onRow: (any SQLRow) -> Void) throws {
        try rows(writer.rows(serialize(query)), onRow)
    }

    private func rows(_ result: SQLiteReaders.Result, _ onRow: (any SQLRow) -> Void) throws {
        guard !result.rows.isEmpty else { return }
        let names = ColumnIndex(result.columns)
        for row in result.rows { onRow(ReadSQLiteRow(names: names, values: row)) }
    }

    struct Unsupported: Error, CustomStringConvertible {
        let what: String
        var description: String { "The SQLite writer does not run \(what)." }
    }

    /// FluentSQLiteDriver's converter delegate (internal to it): its types matter only to schemas.
    private struct Delegate: SQLConverterDelegate {
        func customDataType(_ dataType: DatabaseSchema.DataType) -> (any SQLExpression)? {
            switch dataType {
            case .string, .enum: SQLRaw("TEXT")
            case .datetime: SQLRaw("REAL")
            case .int64: SQLRaw("INTEGER")
            default: nil
            }
        }
    }

    /// A row as Fluent reads it: columns named `schema_field` once Fluent names the model's schema
    /// (as FluentSQLiteDriver's own output, which is internal to it).
    private struct FluentOutput: DatabaseOutput {
        let row: any SQLRow
        let schema: String?

        var description: String { String(describing: row) }
        private func column(_ key: FieldKey) -> String {
            (schema.map { FieldKey.prefix(.prefix(.string($0), "_"), key) } ?? key).description
        }
        func schema(_ schema: String) -> any DatabaseOutput { FluentOutput(row: row, schema: schema) }
        func contains(_ key: FieldKey) -> Bool { row.contains(column: column(key)) }
        func decodeNil(_ key: FieldKey) throws -> Bool { try row.decodeNil(column: column(key)) }
        func decode<T: Decodable>(_ key: FieldKey, as type: T.Type) throws -> T { try row.decode(column: column(key), as: T.self) }
    }
}

/// A model's insert (`Model.create`) written straight as SQL text with its binds, instead of through
/// SQLKit's `SQLInsert` and serializer: for the order's row, of some fifty columns, that path took
/// about 0.8 ms under the write lock (docs/performance.md). The text and the values are exactly what
/// `SQLQueryConverter` and `SQLiteDialect` make (a default is NULL on SQLite, an enum case its text,
/// a new row returns its id); an insert of several rows, or with a value of another kind (a nested
/// dictionary, an array, a custom expression), takes the general path.
struct PlainInsert {
    let sql: String
    private let values: [DatabaseQuery.Value]

    init?(_ query: DatabaseQuery) {
        guard case .create = query.action, query.space == nil, query.input.count == 1,
              case .dictionary(let given) = query.input[0] else { return nil }
        var columns: [String] = [], values: [DatabaseQuery.Value] = []
        columns.reserveCapacity(given.count)
        values.reserveCapacity(given.count)
        for field in query.fields {
            let path: [FieldKey]
            switch field {
            case .path(let given, let schema) where schema == query.schema: path = given
            case .extendedPath(let given, let schema, let space) where schema == query.schema && space == query.space: path = given
            default: return nil
            }
            guard path.count == 1 else { return nil }
            guard let value = given[path[0]] else { continue }  // listed but not given: not inserted
            switch value {
            case .bind, .null, .default, .enumCase: break
            default: return nil
            }
            columns.append(Self.quoted(path[0].description))
            values.append(value)
        }
        guard !columns.isEmpty, columns.count == given.count else { return nil }
        var sql = "INSERT INTO \(Self.quoted(query.schema)) (\(columns.joined(separator: ", "))) VALUES ("
        for index in 1...values.count { sql += index == 1 ? "?1" : ", ?\(index)" }
        sql += ")"
        if query.customIDKey != .some(.string("")) { sql += " RETURNING \(Self.quoted((query.customIDKey ?? .id).description))" }
        self.sql = sql
        self.values = values
    }

    /// The values as SQLiteNIO binds them, as `SQLBind` would.
    func binds() throws -> [SQLiteData] {
        try values.map { value in
            switch value {
            case .bind(let encodable):
                if let optional = encodable as? any AnyOptionalType, optional.wrappedValue == nil { return .null }
                return try plainInsertEncoder.encode(encodable)
            case .enumCase(let text): return .text(text)
            default: return .null  // `.null`, and `.default`: SQLite's dialect writes NULL for it
            }
        }
    }

    static func quoted(_ identifier: String) -> String {
        "\"" + (identifier.contains("\"") ? identifier.replacingOccurrences(of: "\"", with: "\"\"") : identifier) + "\""
    }
}

private let plainInsertEncoder = SQLiteDataEncoder()
