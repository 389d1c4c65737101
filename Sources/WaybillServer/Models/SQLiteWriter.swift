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
    /// Where the write lock's holder runs (`Database.writeTransaction`).
    let thread = WriterThread.take()

    init(path: String, statistics: SQLiteStatistics = SQLiteStatistics()) {
        self.path = path
        self.statistics = statistics
    }

    private func withHandle<T>(_ body: (SQLiteHandle) throws -> T) throws -> T {
        try connection.withLockedValue { state in
            guard !state.closed else { throw SQLiteHandle.Failure.closed }
            if let handle = state.handle { return try body(handle) }
            let handle = try SQLiteHandle(path: path, readOnly: false)
            state.handle = handle
            return try body(handle)
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
        let first = connection.withLockedValue { state in
            defer { state = (nil, true) }
            return !state.closed
        }
        checkpointer.withLockedValue { $0 = (nil, true) }
        if first { WriterThread.giveBack(thread) }
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
        let path = path, checkpointer = checkpointer, checkpoints = checkpoints, done = checkpointsDone
        NIOThreadPool.singleton.submit { _ in
            checkpointer.withLockedValue { state in
                // On a thread of its own: SQLite may wait here for the lock it needs to open the log.
                guard !state.closed else { return }
                if state.handle == nil { state.handle = try? SQLiteHandle(path: path, readOnly: false, busyMilliseconds: 5_000) }
                try? state.handle?.checkpoint()
            }
            checkpoints.withLockedValue { $0.running = false }
            done.signal()
        }
    }

    /// Signalled when a background checkpoint has ended (tests wait for it).
    let checkpointsDone = ChangeSignal()

    /// The transaction left open for the holders of the write lock queued behind the one that
    /// began it (group commit). Touched only by the lock's holder.
    private struct Batch {
        var open = false
        /// Transactions done in it, whose callers wait for its commit.
        var waiting: [CheckedContinuation<Void, any Error>] = []
    }
    private let batch = NIOLockedValueBox(Batch())
    /// Transactions committed together at most: the first of them waits for the others' work.
    static let transactionsPerCommit = 32

    /// `body` as one transaction on this connection: committed if it returns, rolled back if it
    /// throws; returns or throws once that is settled. Takes and hands on `lock`.
    ///
    /// When another writer's transaction waits for the lock, this one's is left open for it: each
    /// runs in a savepoint of the same SQLite transaction (undone alone if it throws), and one
    /// commit makes all of them durable together, in the order they ran. A commit writes every page
    /// the transactions changed to the log, so orders placed one after another, which change the
    /// same last pages of their tables and indexes, write each page once instead of once per
    /// order (docs/performance.md). Nobody is answered before the commit that holds their change;
    /// a commit that fails fails every transaction in it. A holder of the lock that writes through
    /// another connection (`WriteLock.withLock`) is let in only after a commit.
    func transaction<T: Sendable>(lock: WriteLock, metrics: WaybillMetrics, context: DatabaseContext,
                                  _ body: @escaping @Sendable (any Database) async throws -> T) async throws -> T {
        let asked = ContinuousClock.now
        await lock.acquire(joins: true)
        let held = ContinuousClock.now
        metrics.writeLockWait(held - asked)
        let outcome = await member(context: context, body)
        let open = batch.withLockedValue { $0.open && $0.waiting.count + 1 < Self.transactionsPerCommit }
        if open, lock.nextJoins {
            // Left open for the next: answered at its commit (a failure was undone already).
            metrics.writeLockHeld(ContinuousClock.now - held)
            guard case .success(let value) = outcome else { lock.release(); return try outcome.get() }
            try await withCheckedThrowingContinuation { (done: CheckedContinuation<Void, any Error>) in
                batch.withLockedValue { $0.waiting.append(done) }
                lock.release()
            }
            return value
        }
        let (waiting, failure) = commit()
        metrics.writeLockHeld(ContinuousClock.now - held)
        lock.release()
        for done in waiting {
            if let failure { done.resume(throwing: failure) } else { done.resume() }
        }
        if let failure, case .success = outcome { throw failure }
        return try outcome.get()
    }

    /// One transaction's body, in a savepoint of the open transaction (begun if none is).
    private func member<T: Sendable>(context: DatabaseContext, _ body: @escaping @Sendable (any Database) async throws -> T) async -> Result<T, any Error> {
        do {
            if !batch.withLockedValue({ $0.open }) {
                try await SQLiteBusy.retrying(statistics) { _ = try rows("BEGIN IMMEDIATE TRANSACTION", []) }
                batch.withLockedValue { $0.open = true }
            }
            _ = try rows("SAVEPOINT one", [])
        } catch {
            return .failure(error)
        }
        do {
            // The database's futures are the writer thread's: completed there, they go on at once.
            let context = DatabaseContext(configuration: context.configuration, logger: context.logger, eventLoop: thread.loop,
                                          history: context.history, pageSizeLimit: context.pageSizeLimit)
            let value = try await body(WriterDatabase(writer: self, context: context))
            _ = try rows("RELEASE one", [])
            return .success(value)
        } catch {
            if (try? withHandle({ $0.inTransaction })) == true {
                do {
                    _ = try rows("ROLLBACK TO one", [])
                    _ = try rows("RELEASE one", [])
                    return .failure(error)
                } catch {}
            }
            // SQLite undid the whole transaction by itself (a full disk, an I/O error), or it
            // cannot be undone in part: so are the transactions that wait for its commit.
            try? exec("ROLLBACK TRANSACTION")
            let lost = batch.withLockedValue { batch in
                defer { batch = Batch() }
                return batch.waiting
            }
            for done in lost { done.resume(throwing: error) }
            return .failure(error)
        }
    }

    /// Commits the open transaction, if any: the callers waiting for it, and the commit's failure.
    private func commit() -> (waiting: [CheckedContinuation<Void, any Error>], failure: (any Error)?) {
        let (open, waiting) = batch.withLockedValue { batch in
            defer { batch = Batch() }
            return (batch.open, batch.waiting)
        }
        guard open else { return (waiting, nil) }
        do {
            _ = try rows("COMMIT TRANSACTION", [])
            statistics.committed()
            committed()
            return (waiting, nil)
        } catch {
            try? exec("ROLLBACK TRANSACTION")
            return (waiting, error)
        }
    }
}

/// The thread the holder of the write lock runs on (`Database.writeTransaction`), as the executor
/// its task prefers, and as the event loop of the writer's `Database`.
///
/// On the cooperative pool, each of a transaction's statements (a future completed at once, awaited)
/// resumed behind whatever the other requests had queued, on an event loop and again on the pool:
/// with 64 connections placing orders, SQLite's lock was held 3.2 ms per order against 2.2 ms with
/// one (docs/performance.md). Here nothing else runs but the lock's holder, and a future completed
/// on this loop runs its callbacks on the spot.
///
/// One per writer, so per database file. A closed writer's thread is kept for the next writer
/// (tests open many), never shut down: a job that reaches it late still runs.
final class WriterThread: TaskExecutor {
    let loop: any EventLoop

    private init() {
        loop = MultiThreadedEventLoopGroup(numberOfThreads: 1).next()
    }

    private static let idle = NIOLockedValueBox<[WriterThread]>([])

    static func take() -> WriterThread {
        idle.withLockedValue { $0.popLast() } ?? WriterThread()
    }

    static func giveBack(_ thread: WriterThread) {
        idle.withLockedValue { $0.append(thread) }
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job), executor = asUnownedTaskExecutor()
        loop.execute { job.runSynchronously(on: executor) }
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
            columns.append(path[0].description)
            values.append(value)
        }
        guard !columns.isEmpty, columns.count == given.count else { return nil }
        let returning = query.customIDKey != .some(.string("")) ? (query.customIDKey ?? .id).description : nil
        self.sql = Self.text(into: query.schema, columns: columns, returning: returning)
        self.values = values
    }

    /// The text of an insert of one row into `schema`'s `columns`, returning the column `returning`;
    /// made once for each shape (a model inserts the same columns each time).
    static func text(into schema: String, columns: [String], returning: String?) -> String {
        let key = TextKey(schema: schema, columns: columns, returning: returning)
        if let kept = texts.withLockedValue({ $0[key] }) { return kept }
        var sql = "INSERT INTO \(quoted(schema)) (\(columns.map(quoted).joined(separator: ", "))) VALUES ("
        for index in 1...columns.count { sql += index == 1 ? "?1" : ", ?\(index)" }
        sql += ")"
        if let returning { sql += " RETURNING \(quoted(returning))" }
        texts.withLockedValue { texts in
            if texts.count > 1_000 { texts.removeAll() }
            texts[key] = sql
        }
        return sql
    }

    private struct TextKey: Hashable {
        let schema: String
        let columns: [String]
        let returning: String?
    }
    private static let texts = NIOLockedValueBox<[TextKey: String]>([:])

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
        "\"" + (identifier.utf8.contains(UInt8(ascii: "\"")) ? identifier.replacingOccurrences(of: "\"", with: "\"\"") : identifier) + "\""
    }
}

private let plainInsertEncoder = SQLiteDataEncoder()

