import FluentKit
import FluentSQLiteDriver
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import SQLiteKit
import SQLiteNIO
import SQLKit
import VaporCSQLite

/// Reads of the SQLite file that run on the caller's thread, on read-only connections of their own
/// with their statements kept prepared.
///
/// SQLiteNIO runs every statement on a thread pool: each is a hop to that thread and back, and
/// SQLite parses the statement again each time. For the reads every answer makes (an order, its
/// history, its people) the hops and the parsing cost more than the reads themselves: a fifth of an
/// order's detail was the kernel's scheduler (docs/performance.md). A read here takes tens of
/// microseconds, as a computation would, and never waits on a write: in WAL mode a reader sees the
/// last commit and runs beside the writer. The same SQLite library as SQLiteNIO's (`VaporCSQLite`),
/// so the file's locks are shared within the process as SQLite requires.
///
/// Only reads outside a transaction come here (`PlainRows`): a transaction reads on its own
/// connection, which sees its own writes.
final class SQLiteReaders: SQLiteStatements {
    let path: String
    /// The connections kept between reads, and whether the application has stopped (then nothing is
    /// kept or opened: a connection left open to a file that is later deleted keeps its lock state
    /// in SQLite's table of open files, which a new file given the same inode would inherit).
    private let idle = NIOLockedValueBox<(handles: [SQLiteHandle], closed: Bool, reading: Int)>(([], false, 0))
    /// Connections kept between reads; more are opened when more threads read at once, and closed after.
    private static let kept = 8
    let statistics: SQLiteStatistics

    init(path: String, statistics: SQLiteStatistics = SQLiteStatistics()) {
        self.path = path
        self.statistics = statistics
    }

    /// Connections reading now, and connections kept idle (for `/metrics`).
    var connections: (reading: Int, idle: Int) { idle.withLockedValue { ($0.reading, $0.handles.count) } }

    /// The result of one statement: its columns' names, and each row as its columns' values.
    struct Result {
        var columns: [String]
        var rows: [[SQLiteData]]
    }

    /// The rows of one statement, each as its columns' values.
    func rows(_ sql: String, _ binds: [SQLiteData]) throws -> Result {
        let (kept, closed) = idle.withLockedValue { state in
            if !state.closed { state.reading += 1 }
            return (state.handles.popLast(), state.closed)
        }
        guard !closed else { throw SQLiteHandle.Failure.closed }
        do {
            let reader = try kept ?? SQLiteHandle(path: path, readOnly: true)
            // A connection whose read failed is closed, not kept (it may be the file that changed under it).
            let result = try reader.rows(sql, binds)
            idle.withLockedValue { state in
                state.reading -= 1
                if !state.closed, state.handles.count < Self.kept { state.handles.append(reader) }
            }
            return result
        } catch {
            idle.withLockedValue { $0.reading -= 1 }
            throw error
        }
    }

    /// Closes the kept connections, and those still reading as they finish (the application stops).
    func close() {
        idle.withLockedValue { $0.handles = []; $0.closed = true }
    }
}

/// One connection of Waybill's own to the SQLite file, its statements kept prepared; used by one
/// thread at a time (the readers' pool, or the writer's lock, hands it out).
final class SQLiteHandle: @unchecked Sendable {
    private let handle: OpaquePointer
    private var statements: [String: OpaquePointer] = [:]
    /// Statements kept prepared at most (a list of ids makes one text per count of ids).
    private static let keptStatements = 128

    /// `busyMilliseconds`: how long SQLite itself waits for a lock; only for connections used on
    /// threads that may block (the background checkpoint's).
    init(path: String, readOnly: Bool, busyMilliseconds: Int32 = 0) throws {
        var handle: OpaquePointer?
        let opened = sqlite_nio_sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nil)
        guard opened == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite_nio_sqlite3_errmsg($0)) } ?? "cannot open"
            if let handle { sqlite_nio_sqlite3_close_v2(handle) }
            throw Failure(code: opened, message: message)
        }
        self.handle = handle
        // A reader never writes: a statement that would is refused. The writer has SQLiteKit's
        // settings (foreign keys) and the transactions' (synchronous=NORMAL, see `writeTransaction`).
        // The writer leaves checkpoints to `SQLiteWriter`'s background job: run by the commit
        // that fills the log, a checkpoint's writes and fsync would hold the request's thread.
        // No busy timeout: these connections run on the caller's thread, usually one of Swift's
        // few concurrency threads, where SQLite's busy handler would sleep. A statement that finds
        // the file locked fails with SQLITE_BUSY at once and is tried again after an asynchronous
        // pause (`SQLiteBusy`), which leaves the thread to other tasks, the lock's holder among them.
        sqlite_nio_sqlite3_busy_timeout(handle, busyMilliseconds)
        let settings = readOnly ? "PRAGMA query_only = ON"
            : "PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL; PRAGMA wal_autocheckpoint = 0; PRAGMA temp_store = MEMORY"
        guard sqlite_nio_sqlite3_exec(handle, settings, nil, nil, nil) == SQLITE_OK else {
            let failure = Failure(code: sqlite_nio_sqlite3_errcode(handle), message: String(cString: sqlite_nio_sqlite3_errmsg(handle)))
            sqlite_nio_sqlite3_close_v2(handle)
            throw failure
        }
    }

    deinit {
        for statement in statements.values { sqlite_nio_sqlite3_finalize(statement) }
        sqlite_nio_sqlite3_close_v2(handle)
    }

    /// Whether a transaction is open on this connection (SQLite rolls a whole transaction back
    /// by itself after some errors: a full disk, an I/O error).
    var inTransaction: Bool { sqlite_nio_sqlite3_get_autocommit(handle) == 0 }

    private func failure() -> Failure {
        Failure(code: sqlite_nio_sqlite3_extended_errcode(handle), message: String(cString: sqlite_nio_sqlite3_errmsg(handle)))
    }

    private func prepared(_ sql: String) throws -> OpaquePointer {
        if let statement = statements[sql] { return statement }
        if statements.count >= Self.keptStatements {
            for statement in statements.values { sqlite_nio_sqlite3_finalize(statement) }
            statements.removeAll(keepingCapacity: true)
        }
        var statement: OpaquePointer?
        guard sqlite_nio_sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil) == SQLITE_OK,
              let statement else { throw failure() }
        statements[sql] = statement
        return statement
    }

    func rows(_ sql: String, _ binds: [SQLiteData]) throws -> SQLiteReaders.Result {
        let statement = try prepared(sql)
        defer {
            sqlite_nio_sqlite3_reset(statement)
            sqlite_nio_sqlite3_clear_bindings(statement)
        }
        for (index, bind) in binds.enumerated() {
            let at = Int32(index + 1)
            let bound: Int32
            switch bind {
            case .integer(let value): bound = sqlite_nio_sqlite3_bind_int64(statement, at, Int64(value))
            case .float(let value): bound = sqlite_nio_sqlite3_bind_double(statement, at, value)
            case .text(let value):
                bound = sqlite_nio_sqlite3_bind_text64(statement, at, value, UInt64(value.utf8.count), Self.transient, UInt8(SQLITE_UTF8))
            case .blob(let value):
                bound = value.withUnsafeReadableBytes {
                    sqlite_nio_sqlite3_bind_blob64(statement, at, $0.baseAddress, UInt64($0.count), Self.transient)
                }
            case .null: bound = sqlite_nio_sqlite3_bind_null(statement, at)
            }
            guard bound == SQLITE_OK else { throw failure() }
        }
        let count = sqlite_nio_sqlite3_column_count(statement)
        let columns = (0..<count).map { sqlite_nio_sqlite3_column_name(statement, $0).map { String(cString: $0) } ?? "" }
        var rows: [[SQLiteData]] = []
        while true {
            let stepped = sqlite_nio_sqlite3_step(statement)
            if stepped == SQLITE_DONE { break }
            guard stepped == SQLITE_ROW else { throw failure() }
            var row: [SQLiteData] = []
            row.reserveCapacity(Int(count))
            for column in 0..<count {
                switch sqlite_nio_sqlite3_column_type(statement, column) {
                case SQLITE_INTEGER: row.append(.integer(Int(sqlite_nio_sqlite3_column_int64(statement, column))))
                case SQLITE_FLOAT: row.append(.float(sqlite_nio_sqlite3_column_double(statement, column)))
                case SQLITE_TEXT:
                    let length = Int(sqlite_nio_sqlite3_column_bytes(statement, column))
                    guard let text = sqlite_nio_sqlite3_column_text(statement, column) else { row.append(.text("")); continue }
                    row.append(.text(String(decoding: UnsafeBufferPointer(start: text, count: length), as: UTF8.self)))
                case SQLITE_BLOB:
                    let length = Int(sqlite_nio_sqlite3_column_bytes(statement, column))
                    var buffer = ByteBufferAllocator().buffer(capacity: length)
                    if let bytes = sqlite_nio_sqlite3_column_blob(statement, column) {
                        buffer.writeBytes(UnsafeRawBufferPointer(start: bytes, count: length))
                    }
                    row.append(.blob(buffer))
                default: row.append(.null)
                }
            }
            rows.append(row)
        }
        return SQLiteReaders.Result(columns: columns, rows: rows)
    }

    /// Copies what the write-ahead log holds back into the database, as far as no reader still
    /// needs it (PASSIVE: never waits, never blocks the writer).
    func checkpoint() throws {
        guard sqlite_nio_sqlite3_wal_checkpoint_v2(handle, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil) == SQLITE_OK else { throw failure() }
    }

    /// Runs statements without results (BEGIN, COMMIT, ROLLBACK).
    func exec(_ sql: String) throws {
        guard sqlite_nio_sqlite3_exec(handle, sql, nil, nil, nil) == SQLITE_OK else { throw failure() }
    }

    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    struct Failure: Error, CustomStringConvertible, DatabaseError {
        let code: Int32
        let message: String
        var description: String { "SQLite error \(code): \(message)" }
        // FluentKit's classification, as SQLiteKit gives it (primary result codes).
        var isSyntaxError: Bool { code & 0xFF == SQLITE_ERROR }
        var isConstraintFailure: Bool { code & 0xFF == SQLITE_CONSTRAINT }
        var isConnectionClosed: Bool { code & 0xFF == SQLITE_MISUSE || code & 0xFF == SQLITE_CANTOPEN }
        /// Another connection holds the lock the statement needs: worth trying again shortly.
        var isBusy: Bool { code & 0xFF == SQLITE_BUSY }
        /// A statement after the application stopped.
        static let closed = Failure(code: SQLITE_MISUSE, message: "the database's connections are closed (the application stopped)")
    }
}

extension SQLiteReaders {
    /// The readers of the database's file, when `sql` is an SQLite database outside a transaction
    /// (a transaction reads on its own connection, which sees its own writes).
    static func of(_ sql: any SQLDatabase) -> SQLiteReaders? {
        guard let database = sql as? any Database, !database.inTransaction, !(database is WriterDatabase) else { return nil }
        return (database.context.configuration as? ReadingSQLiteConfiguration)?.readers
    }

    /// Where a statement on `sql` runs directly: on the readers outside a transaction, on the writer
    /// inside one of its transactions; nil when it goes through SQLiteNIO (or is not SQLite).
    static func direct(_ sql: any SQLDatabase) -> (any SQLiteStatements)? {
        if let writer = sql as? WriterDatabase { return writer.writer }
        return of(sql)
    }
}

/// Runs statements on a connection of Waybill's own: the readers' or the writer's.
protocol SQLiteStatements: Sendable {
    func rows(_ sql: String, _ binds: [SQLiteData]) throws -> SQLiteReaders.Result
    var statistics: SQLiteStatistics { get }
}

/// What `/metrics` reports of Waybill's own SQLite connections beyond their number.
final class SQLiteStatistics: Sendable {
    private let retries = NIOLockedValueBox(0)
    /// Statements tried again because another connection held the lock they needed (`SQLiteBusy`).
    var busyRetries: Int { retries.withLockedValue { $0 } }
    func retried() {
        retries.withLockedValue { $0 += 1 }
        retriesChanged.signal()
    }
    /// Signalled at each retry (tests wait for writers to be waiting).
    let retriesChanged = ChangeSignal()
    private let commitCount = NIOLockedValueBox(0)
    /// Commits of the writer's transactions (`SQLiteWriter`), each of one or more of them.
    var commits: Int { commitCount.withLockedValue { $0 } }
    func committed() { commitCount.withLockedValue { $0 += 1 } }
    init() {}
}

private let bindEncoder = SQLiteDataEncoder()

extension SQLiteStatements {
    /// A serialized statement, its binds encoded as SQLiteNIO encodes them.
    func rows(_ serialized: (sql: String, binds: [any Encodable & Sendable])) throws -> SQLiteReaders.Result {
        try rows(serialized.sql, serialized.binds.map { try bindEncoder.encode($0) })
    }

    /// The same, traced as a database call when tracing is on, and tried again while the file is busy.
    func run(_ serialized: (sql: String, binds: [any Encodable & Sendable]), traced: Bool) async throws -> SQLiteReaders.Result {
        try await TracedSQLDatabase.span(serialized.sql, system: "sqlite", when: traced) {
            try await SQLiteBusy.retrying(statistics) { try rows(serialized) }
        }
    }
}

/// Waiting for a lock another connection holds (SQLiteNIO's, a checkpoint, another process) without
/// holding a thread: Waybill's own connections have no busy timeout, and a statement refused with
/// SQLITE_BUSY is tried again after a pause in which the thread runs other tasks. SQLite's own busy
/// handler sleeps on the thread: on two cores, two such sleeps stop every task of the process,
/// including the one that holds the lock.
enum SQLiteBusy {
    /// How long a statement keeps trying in all.
    @TaskLocal static var patience: Duration = .seconds(5)

    static func retrying<T>(_ statistics: SQLiteStatistics, _ attempt: () throws -> T) async throws -> T {
        // Every read goes through here: the clock and the patience are read only once the file is busy.
        var deadline: ContinuousClock.Instant?
        var pause = Duration.milliseconds(1)
        while true {
            do { return try attempt() } catch let failure as SQLiteHandle.Failure where failure.isBusy {
                let now = ContinuousClock.now
                let until = deadline ?? now + patience
                deadline = until
                guard now < until else { throw failure }
                statistics.retried()
                try await Task.sleep(for: pause)
                pause = min(pause * 2, .milliseconds(50))
            }
        }
    }
}

/// One row a reader read, as SQLKit's `SQLRow` (for `RowOutput`): decoded as SQLiteKit decodes.
struct ReadSQLiteRow: SQLRow {
    let names: ColumnIndex
    let values: [SQLiteData]
    private static let decoder = SQLiteDataDecoder()

    var allColumns: [String] { names.positions.sorted { $0.value < $1.value }.map(\.key) }
    func contains(column: String) -> Bool { names.positions[column] != nil }

    func decodeNil(column: String) throws -> Bool {
        guard let at = names.positions[column] else { return true }
        if case .null = values[at] { return true }
        return false
    }

    func decode<D: Decodable>(column: String, as type: D.Type) throws -> D {
        guard let at = names.positions[column] else {
            throw DecodingError.keyNotFound(SomeCodingKey(column), .init(codingPath: [], debugDescription: "No column \(column)"))
        }
        return try Self.decoder.decode(D.self, from: values[at])
    }

    private struct SomeCodingKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(_ name: String) { stringValue = name }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}

/// The SQLite configuration, with the readers of its file beside it: every `Database` of it can
/// find them (`context.configuration`), a transaction's included.
struct ReadingSQLiteConfiguration: DatabaseConfiguration {
    var base: any DatabaseConfiguration
    let readers: SQLiteReaders
    /// The connection write transactions run on (`writeTransaction`).
    let writer: SQLiteWriter
    /// The readers' and the writer's together.
    let statistics: SQLiteStatistics

    init(path: String) {
        base = DatabaseConfigurationFactory.sqlite(.file(path)).make()
        statistics = SQLiteStatistics()
        readers = SQLiteReaders(path: path, statistics: statistics)
        writer = SQLiteWriter(path: path, statistics: statistics)
    }

    var middleware: [any AnyModelMiddleware] {
        get { base.middleware }
        set { base.middleware = newValue }
    }

    func makeDriver(for databases: Databases) -> any DatabaseDriver {
        ClosingDriver(base: base.makeDriver(for: databases), readers: readers, writer: writer)
    }

    /// The driver, which closes the readers when the application stops.
    struct ClosingDriver: DatabaseDriver {
        let base: any DatabaseDriver
        let readers: SQLiteReaders
        let writer: SQLiteWriter
        func makeDatabase(with context: DatabaseContext) -> any Database { base.makeDatabase(with: context) }
        func shutdown() {
            readers.close()
            writer.close()
            base.shutdown()
        }
        func shutdownAsync() async {
            readers.close()
            writer.close()
            await base.shutdownAsync()
        }
    }
}
