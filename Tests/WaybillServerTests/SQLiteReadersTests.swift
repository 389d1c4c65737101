import FluentKit
import Foundation
import SQLiteNIO
import SQLKit
import NIOConcurrencyHelpers
import Testing
import Vapor
@testable import WaybillServer
import WaybillCore

/// On SQLite, reads outside a transaction run on read-only connections of their own, on the
/// caller's thread (`SQLiteReaders`). They must read what was committed, never what a transaction
/// has not committed yet, never write, and stay right however many run at once.
@Suite("SQLite's reads beside the writer")
struct SQLiteReadersTests {
    @Test("A read outside a transaction sees the last commit at once; one inside sees its own writes; a reader never writes")
    func readsFollowCommits() async throws {
        try await TestServer.run(.sqlite) { server in
            let cast = try await server.cast()
            let id = OrderID(uuidString: try await server.placeOrder(cast.customer.access))!
            let database = server.app.db
            let sql = try #require(database.tracedSQL)
            let readers = try #require(SQLiteReaders.of(database as! any SQLDatabase))

            @Sendable func notes(on sql: any SQLDatabase) async throws -> String? {
                try await OrderRow.read(OrderRow.select(on: sql, listed: false).where("id", .equal, SQLBind(id)), on: sql).first?.notes
            }

            // Committed through Fluent's own connection, read at once on a reader.
            let order = try #require(try await Order.find(id, on: database))
            order.notes = "Leave with the neighbour"
            try await order.save(on: database)
            #expect(try await notes(on: sql) == "Leave with the neighbour")

            // Inside a transaction, reads are the transaction's (its uncommitted write), and the
            // readers outside it still see the last commit until it commits.
            try await database.transaction { tx in
                let inside = try #require(try await Order.find(id, on: tx))
                inside.notes = "Uncommitted"
                try await inside.save(on: tx)
                #expect(SQLiteReaders.of(tx as! any SQLDatabase) == nil)
                #expect(try await notes(on: try #require(tx.tracedSQL)) == "Uncommitted")
                #expect(try await notes(on: sql) == "Leave with the neighbour")
            }
            #expect(try await notes(on: sql) == "Uncommitted")

            // The people and the events, read through `ListRows` on a reader, are Fluent's.
            let customer = try #require(UserID(uuidString: cast.customer.userID))
            let people = try await Orders.people([customer], on: sql)
            #expect(people[customer]?.email == "ada@example.com")
            let events = try await ListRows.outputs(sql.select().column(SQLLiteral.all).from(OrderEvent.schema)
                .where("order_id", .equal, SQLBind(id)).orderBy("id"), sql: sql).map(OrderEvent.init(reading:))
            let fluentEvents = try await OrderEvent.query(on: database).filter(\.$orderID == id).sort(\.$id).all()
            #expect(events.map(\.id) == fluentEvents.map(\.id) && events.map(\.type) == fluentEvents.map(\.type) && !events.isEmpty)

            // A reader refuses to write, and its refusal is an error, not a crash.
            #expect(throws: SQLiteHandle.Failure.self) {
                _ = try readers.rows("UPDATE orders SET notes = 'x'", [])
            }
            #expect(try await notes(on: sql) == "Uncommitted")
            // A statement that does not parse is an error too, and the readers go on.
            #expect(throws: SQLiteHandle.Failure.self) { _ = try readers.rows("SELECT FROM nowhere", []) }
            #expect(try readers.rows("SELECT ? AS a, ? AS b, ? AS c, ? AS d", [.integer(7), .text("é"), .null, .float(1.5)]).rows
                    == [[.integer(7), .text("é"), .null, .float(1.5)]])
        }
    }

    @Test("A write transaction on SQLite commits whole or not at all, a duplicate is a constraint failure, and a new row gets its id")
    func writerTransactions() async throws {
        try await TestServer.run(.sqlite) { server in
            let cast = try await server.cast()
            let id = OrderID(uuidString: try await server.placeOrder(cast.customer.access))!
            let db = server.app.db
            struct Refused: Error {}
            await #expect(throws: Refused.self) {
                try await db.writeTransaction(server.app) { tx in
                    #expect(tx is WriterDatabase)
                    let order = try #require(try await Order.find(id, on: tx))
                    order.notes = "Half written"
                    try await order.save(on: tx)
                    #expect(try await Order.find(id, on: tx)?.notes == "Half written")
                    throw Refused()
                }
            }
            #expect(try await Order.find(id, on: db)?.notes != "Half written")

            let eventID = try await db.writeTransaction(server.app) { tx -> Int? in
                let order = try #require(try await Order.find(id, on: tx))
                order.notes = "Whole"
                try await order.save(on: tx)
                let event = OrderEvent(orderID: id, type: "note", status: nil, actorID: nil, note: "Whole")
                try await event.create(on: tx)
                return event.id
            }
            #expect(try await Order.find(id, on: db)?.notes == "Whole")
            let stored = try await OrderEvent.query(on: db).filter(\.$orderID == id).sort(\.$id, .descending).first()
            #expect(eventID != nil && stored?.id == eventID && stored?.note == "Whole")

            do {
                try await db.writeTransaction(server.app) { tx in
                    let someone = try #require(try await User.query(on: tx).first())
                    try await User(id: someone.id, role: someone.role, email: "copy@example.com", passwordHash: nil, firstName: "A", lastName: "B")
                        .create(on: tx)
                }
                Issue.record("a second account with the same id was written")
            } catch let error as any DatabaseError {
                #expect(error.isConstraintFailure)
            }
            #expect(try await User.query(on: db).filter(\.$email == "copy@example.com").count() == 0)
        }
    }

    @Test("A model's insert on the writer is plain SQL with its values bound, and reads back exactly as the model was")
    func plainInserts() async throws {
        try await TestServer.run(.sqlite) { server in
            let cast = try await server.cast()
            let id = OrderID(uuidString: try await server.placeOrder(cast.customer.access))!
            let db = server.app.db
            // The order the API just placed was written so: its columns read back through Fluent.
            let order = try #require(try await Order.find(id, on: db))
            #expect(order.status == .pending && order.reference.hasPrefix("WB-") && order.driverID == nil && order.priceAmount > 0)
            #expect(order.customerID.uuidString.lowercased() == cast.customer.userID.lowercased())
            let event = OrderEvent(orderID: id, type: "note", status: .pending, actorID: nil, note: #"Quote "this" 'and' that"#)
            try await db.writeTransaction(server.app) { tx in try await event.create(on: tx) }
            let stored = try #require(try await OrderEvent.find(try #require(event.id), on: db))
            #expect(stored.status == .pending && stored.actorID == nil && stored.note == event.note && stored.at == event.at && stored.type == "note")

            // The query Fluent makes for a create takes the plain path; a value of another kind does not.
            var query = OrderEvent.query(on: db).query
            query.action = .create
            query.fields = [.extendedPath(["type"], schema: "order_events", space: nil), .extendedPath(["status"], schema: "order_events", space: nil),
                            .extendedPath(["note"], schema: "order_events", space: nil), .extendedPath(["id"], schema: "order_events", space: nil)]
            query.input = [.dictionary(["type": .bind("note"), "status": .enumCase("pending"), "note": .bind(String?.none), "id": .default])]
            let insert = try #require(PlainInsert(query))
            #expect(insert.sql == #"INSERT INTO "order_events" ("type", "status", "note", "id") VALUES (?1, ?2, ?3, ?4) RETURNING "id""#)
            #expect(try insert.binds() == [.text("note"), .text("pending"), .null, .null])
            query.input = [.dictionary(["type": .array([.bind("a")]), "status": .null, "note": .null, "id": .default])]
            #expect(PlainInsert(query) == nil)
        }
    }

    @Test("What the writer commits reaches the database file itself in the background, not only its write-ahead log")
    func commitsAreCheckpointed() async throws {
        try await TestServer.run(.sqlite) { server in
            let cast = try await server.cast()
            let id = OrderID(uuidString: try await server.placeOrder(cast.customer.access))!
            let db = server.app.db
            let readers = try #require(SQLiteReaders.of(db as! any SQLDatabase))
            @Sendable func size(_ path: String) -> Int { ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? 0 }
            let before = size(readers.path)
            let writer = NIOLockedValueBox<SQLiteWriter?>(nil)
            // Enough commits for a checkpoint, each adding a page or more to the log.
            for round in 0..<SQLiteWriter.commitsPerCheckpoint {
                try await db.writeTransaction(server.app) { tx in
                    writer.withLockedValue { $0 = $0 ?? (tx as? WriterDatabase)?.writer }
                    try await OrderEvent(orderID: id, type: "note", status: nil, actorID: nil,
                                         note: String(repeating: "\(round % 10)", count: 4_000)).create(on: tx)
                }
            }
            #expect(size(readers.path + "-wal") > 0)
            // The writer says when a background checkpoint has ended: the test waits for that.
            let checkpoints = try #require(writer.withLockedValue { $0 }).checkpointsDone
            let grown = try await checkpoints.wait(guard: .seconds(600)) { size(readers.path) > before + 100 * 4_000 ? true : nil }
            #expect(grown == true, "the database file stayed at \(size(readers.path)) bytes (\(before) before)")
            #expect(try await OrderEvent.query(on: db).filter(\.$orderID == id).filter(\.$type == "note").count()
                    == SQLiteWriter.commitsPerCheckpoint)
        }
    }

    @Test("Reads from many tasks at once, and more distinct statements than a reader keeps prepared, all read right")
    func concurrentReads() async throws {
        try await TestServer.run(.sqlite) { server in
            let cast = try await server.cast()
            var ids: [OrderID] = []
            for _ in 0..<5 { ids.append(OrderID(uuidString: try await server.placeOrder(cast.customer.access))!) }
            let sql = try #require(server.app.db.tracedSQL)
            let readers = try #require(SQLiteReaders.of(server.app.db as! any SQLDatabase))
            let expected = Set(ids), orders = ids, customer = cast.customer.userID
            try await withThrowingTaskGroup(of: Void.self) { group in
                for round in 0..<200 {
                    group.addTask {
                        let id = orders[round % orders.count]
                        let read = try await OrderRow.read(OrderRow.select(on: sql, listed: true).where("id", .equal, SQLBind(id)), on: sql)
                        #expect(read.map(\.id) == [id])
                        // A different text each round: the prepared statements are renewed past their limit.
                        let counted = try readers.rows("SELECT count(*) AS n, \(round) AS round FROM orders WHERE customer_id = ?",
                                                       [.text(customer)])
                        #expect(counted.rows == [[.integer(expected.count), .integer(round)]])
                    }
                }
                try await group.waitForAll()
            }
        }
    }

    @Test("While another connection holds the file's write lock, waiting writers leave the threads to other tasks, then commit once it is released")
    func waitingForTheLockHoldsNoThread() async throws {
        try await TestServer.run(.sqlite) { server in
            let path = try #require(SQLiteReaders.of(server.sql)).path
            let context = server.app.db.context, metrics = server.app.waybill.metrics
            // Another connection (as SQLiteNIO's during a migration, or another process) writes.
            let holder = try SQLiteHandle(path: path, readOnly: false)
            try holder.exec("BEGIN IMMEDIATE TRANSACTION")
            let log = Log()
            // More waiting writers than Swift has threads for tasks (one per core): with SQLite's
            // own busy handler each would sleep on its thread, and nothing else would run.
            let statistics = SQLiteStatistics()
            let writers = (0..<(2 * ProcessInfo.processInfo.activeProcessorCount + 2)).map { _ in SQLiteWriter(path: path, statistics: statistics) }
            defer { for writer in writers { writer.close() } }
            try await SQLiteBusy.$patience.withValue(.seconds(600)) {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for (number, writer) in writers.enumerated() {
                        group.addTask {
                            try await writer.transaction(lock: WriteLock(enabled: true), metrics: metrics, context: context) { db in
                                try await (db as! any SQLDatabase).raw("UPDATE orders SET notes = \(bind: "writer \(number)")").run()
                            }
                            await log.add("committed")
                        }
                    }
                    // Runs while the writers wait, because they wait without a thread: once each has
                    // tried and been told the file is busy (the statistics signal every retry).
                    let waiting = try await statistics.retriesChanged.wait(guard: .seconds(600)) {
                        statistics.busyRetries >= writers.count ? true : nil
                    }
                    #expect(waiting == true)
                    await log.add("other work")
                    try holder.exec("COMMIT TRANSACTION")
                    try await group.waitForAll()
                }
            }
            let entries = await log.entries
            #expect(entries.first == "other work")
            #expect(entries.filter { $0 == "committed" }.count == writers.count)
            // Each waited by trying again: SQLite's own busy handler, which sleeps on the thread, is off
            // on the writer's connections and the readers'.
            #expect(statistics.busyRetries >= writers.count)
            #expect(try writers[0].rows("PRAGMA busy_timeout", []).rows == [[.integer(0)]])
            let readers = try #require(SQLiteReaders.of(server.sql))
            #expect(try readers.rows("PRAGMA busy_timeout", []).rows == [[.integer(0)]])
        }
    }

    /// Starts `count` write transactions, the first of which runs `first` once all the others
    /// wait for the lock (so that they join its commit); each other one runs `other(i)`. Every
    /// transaction's result, in order.
    private func queued(_ app: Application, count: Int, first: @escaping @Sendable (any SQLDatabase) async throws -> Void,
                        other: @escaping @Sendable (Int, any SQLDatabase) async throws -> Void) async -> [Result<Void, any Error>] {
        let holding = NIOLockedValueBox(false)
        let held = ChangeSignal()
        return await withTaskGroup(of: (Int, Result<Void, any Error>).self) { group in
            group.addTask {
                (0, await outcome { try await app.db.writeTransaction(app) { db in
                    holding.withLockedValue { $0 = true }
                    held.signal()
                    // The lock says when someone starts waiting for it.
                    _ = try await app.writeLock.queueChanges.wait(guard: .seconds(600)) { app.writeLock.waiting >= count - 1 ? true : nil }
                    try await first(db as! any SQLDatabase)
                } })
            }
            _ = try? await held.wait(guard: .seconds(600)) { holding.withLockedValue { $0 } ? true : nil }
            for i in 1..<count {
                group.addTask { (i, await outcome { try await app.db.writeTransaction(app) { db in try await other(i, db as! any SQLDatabase) } }) }
            }
            var results = [Result<Void, any Error>?](repeating: nil, count: count)
            for await (i, result) in group { results[i] = result }
            return results.map { $0! }
        }
    }

    @Test("Writes queued behind one another share one commit, and each caller hears back only once its write is stored")
    func queuedWritesShareACommit() async throws {
        try await TestServer.run(.sqlite) { server in
            let app = server.app
            let sqlite = try #require(app.db.context.configuration as? ReadingSQLiteConfiguration)
            let path = sqlite.readers.path, before = sqlite.statistics.commits
            @Sendable func insert(_ key: String, on sql: any SQLDatabase) async throws {
                try await sql.raw("INSERT INTO throttles (key, window_start, count, last_at) VALUES (\(bind: key), 0, 1, 0)").run()
                // Not yet visible to another connection: the transaction is still open.
                let reader = try SQLiteHandle(path: path, readOnly: true)
                #expect(try reader.rows("SELECT count(*) FROM throttles WHERE key = ?1", [.text(key)]).rows == [[.integer(0)]])
            }
            let results = await queued(app, count: 12, first: { try await insert("batch-0", on: $0) },
                                       other: { i, sql in try await insert("batch-\(i)", on: sql) })
            for result in results { #expect(throws: Never.self) { try result.get() } }
            // One commit for all twelve, after which another connection reads every row.
            #expect(sqlite.statistics.commits - before == 1)
            let reader = try SQLiteHandle(path: path, readOnly: true)
            #expect(try reader.rows("SELECT count(*) FROM throttles WHERE key LIKE 'batch-%'", []).rows == [[.integer(12)]])
        }
    }

    @Test("A write that fails among writes sharing a commit is undone alone, and the others are stored")
    func aFailedWriteInASharedCommitIsUndoneAlone() async throws {
        try await TestServer.run(.sqlite) { server in
            let app = server.app
            let sqlite = try #require(app.db.context.configuration as? ReadingSQLiteConfiguration)
            struct Refused: Error {}
            let results = await queued(app, count: 6, first: { sql in
                try await sql.raw("INSERT INTO throttles (key, window_start, count, last_at) VALUES ('undo-0', 0, 1, 0)").run()
            }, other: { i, sql in
                try await sql.raw("INSERT INTO throttles (key, window_start, count, last_at) VALUES (\(bind: "undo-\(i)"), 0, 1, 0)").run()
                if i == 3 { throw Refused() }
            })
            #expect(throws: Refused.self) { try results[3].get() }
            for i in [0, 1, 2, 4, 5] { #expect(throws: Never.self) { try results[i].get() } }
            let reader = try SQLiteHandle(path: sqlite.readers.path, readOnly: true)
            #expect(try reader.rows("SELECT key FROM throttles WHERE key LIKE 'undo-%' ORDER BY key", []).rows
                    == ["undo-0", "undo-1", "undo-2", "undo-4", "undo-5"].map { [.text($0)] })
        }
    }

    @Test("When a shared commit fails, every write in it fails and none is stored")
    func aFailedCommitFailsEveryWriteInIt() async throws {
        try await TestServer.run(.sqlite) { server in
            let app = server.app
            let sqlite = try #require(app.db.context.configuration as? ReadingSQLiteConfiguration)
            let setup = try SQLiteHandle(path: sqlite.readers.path, readOnly: false)
            try setup.exec("CREATE TABLE test_parents (id INTEGER PRIMARY KEY); CREATE TABLE test_children (id INTEGER PRIMARY KEY, parent INTEGER REFERENCES test_parents (id))")
            // A foreign key checked only at the commit (deferred): the savepoint is released, the commit refused.
            let results = await queued(app, count: 5, first: { sql in
                try await sql.raw("PRAGMA defer_foreign_keys = ON").run()
                try await sql.raw("INSERT INTO test_children (id, parent) VALUES (1, 999)").run()
            }, other: { i, sql in
                try await sql.raw("INSERT INTO throttles (key, window_start, count, last_at) VALUES (\(bind: "lost-\(i)"), 0, 1, 0)").run()
            })
            for result in results { #expect(throws: (any Error).self) { try result.get() } }
            let reader = try SQLiteHandle(path: sqlite.readers.path, readOnly: true)
            #expect(try reader.rows("SELECT count(*) FROM throttles WHERE key LIKE 'lost-%'", []).rows == [[.integer(0)]])
            #expect(try reader.rows("SELECT count(*) FROM test_children", []).rows == [[.integer(0)]])
            // The writer goes on: the next write commits.
            try await app.db.writeTransaction(app) { db in
                try await (db as! any SQLDatabase).raw("INSERT INTO throttles (key, window_start, count, last_at) VALUES ('after', 0, 1, 0)").run()
            }
            #expect(try reader.rows("SELECT count(*) FROM throttles WHERE key = 'after'", []).rows == [[.integer(1)]])
        }
    }

    @Test("Once the application stops, its SQLite connections refuse statements instead of opening the file again")
    func closedConnectionsStayClosed() async throws {
        try await TestServer.run(.sqlite) { server in
            let path = try #require(SQLiteReaders.of(server.sql)).path
            let readers = SQLiteReaders(path: path), writer = SQLiteWriter(path: path)
            #expect(try readers.rows("SELECT 1 AS one", []).rows == [[.integer(1)]])
            try await writer.transaction(lock: WriteLock(enabled: true), metrics: server.app.waybill.metrics, context: server.app.db.context) { db in
                try await (db as! any SQLDatabase).raw("SELECT 1").run()
            }
            readers.close()
            writer.close()
            // Refused as closed (not busy: nothing would try them again).
            let refusedAsClosed: @Sendable (any Error) -> Bool = { ($0 as? SQLiteHandle.Failure).map { $0.isConnectionClosed && !$0.isBusy } ?? false }
            #expect(performing: { _ = try readers.rows("SELECT 1 AS one", []) }, throws: refusedAsClosed)
            #expect(performing: { _ = try writer.rows("SELECT 1 AS one", []) }, throws: refusedAsClosed)
        }
    }
}

private func outcome(_ body: () async throws -> Void) async -> Result<Void, any Error> {
    do { try await body(); return .success(()) } catch { return .failure(error) }
}

private actor Log {
    private(set) var entries: [String] = []
    func add(_ entry: String) { entries.append(entry) }
}
