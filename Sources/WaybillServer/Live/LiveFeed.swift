import Fluent
import Foundation
import NIOConcurrencyHelpers
import FluentPostgresDriver
import SQLKit
import Vapor

/// Brings committed live events to this process's hub.
///
/// - SQLite: one process owns the file and its writes are serialised, so ids commit in order. After
///   each write transaction (`poke`) and at least once a second the feed reads the rows after the
///   last one it saw.
/// - PostgreSQL: every process listens on one channel per schema. `pg_notify` in the writing
///   transaction reaches all of them when it commits, whichever process wrote it. After a lost
///   connection the feed reads what it missed from the table.
final class LiveFeed: Sendable {
    static let channelPrefix = "waybill_live_"
    /// Events are kept this long for clients that reconnect.
    static let retentionMillis: Int64 = 24 * 3_600_000

    enum Mode: Sendable {
        case sqlite
        case postgres(PostgresConnection.Configuration)
    }

    let hub: LiveHub
    let mode: Mode
    let db: @Sendable () -> any Database
    let writeLock: WriteLock
    let logger: Logger
    /// Counts the fan-out lag (`waybill_live_fanout_lag_seconds`).
    let metrics: WaybillMetrics?
    private let lastID = NIOLockedValueBox<Int64>(0)
    /// Ids delivered lately, so that an event read from the table after a reconnect and also
    /// announced by NOTIFY reaches subscribers once.
    private let recent = NIOLockedValueBox(RecentIDs())
    private let wakeup = Wakeup()
    /// Whether the PostgreSQL listener is attached; signalled when that changes.
    private let listening = NIOLockedValueBox(false)
    private let listeningChanges = ChangeSignal()

    init(hub: LiveHub, mode: Mode, db: @escaping @Sendable () -> any Database, writeLock: WriteLock, logger: Logger,
         metrics: WaybillMetrics? = nil) {
        self.metrics = metrics
        self.hub = hub
        self.mode = mode
        self.db = db
        self.writeLock = writeLock
        self.logger = logger
    }

    /// A write transaction committed: look for new events now (SQLite).
    func poke() {
        if case .sqlite = mode { wakeup.poke() }
    }

    /// True once the PostgreSQL listener is attached.
    var isListening: Bool { listening.withLockedValue { $0 } }

    /// Returns once the PostgreSQL listener is attached (tests wait for it before publishing); at once
    /// when it is, or on SQLite, which has no listener. Throws when the caller is cancelled.
    func untilListening() async throws {
        if case .sqlite = mode { return }
        _ = try await listeningChanges.wait(guard: .seconds(600)) { self.isListening ? true : nil }
    }

    private func setListening(_ attached: Bool) {
        listening.withLockedValue { $0 = attached }
        listeningChanges.signal()
    }

    /// The newest event id this process has read (0 before the first).
    var newestID: Int64 { lastID.withLockedValue { $0 } }

    /// Runs until cancelled.
    func run() async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.pruneForever() }
            group.addTask {
                switch self.mode {
                case .sqlite: await self.pollSQLite()
                case .postgres(let configuration): await self.listenPostgres(configuration)
                }
            }
            await group.waitForAll()
        }
    }

    // MARK: SQLite

    private func pollSQLite() async {
        do { try await startFromNewest() } catch {
            logger.warning("Live feed could not read the event log: \(String(describing: error))")
        }
        while !Task.isCancelled {
            do { try await readNew() } catch {
                logger.warning("Live feed read failed: \(String(describing: error))")
            }
            await wakeup.wait(timeout: .seconds(1))
        }
    }

    private func startFromNewest() async throws {
        guard let sql = db().tracedSQL else { return }
        let row = try await sql.raw("SELECT MAX(id) AS id FROM live_events").first()
        let newest = try row.flatMap { try $0.decodeNil(column: "id") ? nil : $0.decode(column: "id", as: Int64.self) } ?? 0
        lastID.withLockedValue { $0 = newest }
    }

    /// Delivers every event after the last one seen.
    func readNew() async throws {
        guard let sql = db().tracedSQL else { return }
        while true {
            let after = lastID.withLockedValue { $0 }
            let rows = try await Self.rows(sql.select().columns("id", "topic", "type", "data", "at").from("live_events")
                .where("id", .greaterThan, SQLBind(after)).orderBy("id").limit(1000).all())
            guard let last = rows.last else { return }
            lastID.withLockedValue { $0 = max($0, last.id) }
            deliver(rows)
            if rows.count < 1000 { return }
        }
    }

    // MARK: PostgreSQL

    private func listenPostgres(_ configuration: PostgresConnection.Configuration) async {
        var delay = Duration.milliseconds(200)
        var connectionID = 1
        while !Task.isCancelled {
            do {
                guard let sql = db().tracedSQL else { return }
                let channel = try await sql.raw("SELECT '\(unsafeRaw: Self.channelPrefix)' || current_schema() AS channel").first()?
                    .decode(column: "channel", as: String.self) ?? Self.channelPrefix + "public"
                if lastID.withLockedValue({ $0 }) == 0 { try await startFromNewest() }
                let connection = try await PostgresConnection.connect(configuration: configuration, id: connectionID, logger: logger)
                connectionID += 1
                defer { Task { try? await connection.close() } }
                try await connection.listen(on: channel) { notifications in
                    setListening(true)
                    delay = .milliseconds(200)
                    // Whatever committed while no connection listened.
                    try await self.readNew()
                    for try await notification in notifications {
                        try await self.received(notification.payload)
                    }
                }
            } catch {
                if Task.isCancelled { break }
                logger.warning("Live listener lost PostgreSQL, retrying in \(delay): \(String(describing: error))")
            }
            setListening(false)
            try? await Task.sleep(for: delay)
            delay = min(delay * 2, .seconds(10))
        }
    }

    private func received(_ payload: String) async throws {
        guard let (rows, fetch) = LiveLog.parseNotification(payload) else {
            logger.warning("Live listener got a notification it cannot read (\(payload.utf8.count) bytes)")
            return
        }
        if let last = rows.last { lastID.withLockedValue { $0 = max($0, last.id) } }
        deliver(rows)
        if !fetch.isEmpty, let sql = db().tracedSQL {
            // Too large for a notification: read them from the table.
            let fetched = try Self.rows(try await sql.select().columns("id", "topic", "type", "data", "at").from("live_events")
                .where("id", .in, fetch).orderBy("id").all())
            if let last = fetched.last { lastID.withLockedValue { $0 = max($0, last.id) } }
            deliver(fetched)
        }
    }

    // MARK: Shared

    private func deliver(_ rows: [LiveRow]) {
        let fresh = recent.withLockedValue { recent in rows.filter { recent.insert($0.id) } }
        guard !fresh.isEmpty else { return }
        // The wall clock, not the application's: lag is real time, also in tests that move the clock.
        // Counted before the hand-over, so whoever has received an event can read its lag's count.
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        metrics?.liveFanOut(lagMillis: fresh.map { now - $0.at })
        hub.deliver(fresh)
    }

    static func rows(_ rows: [any SQLRow]) throws -> [LiveRow] {
        try rows.map { row in
            LiveRow(id: try row.decode(column: "id", as: Int64.self), topic: try row.decode(column: "topic", as: String.self),
                    type: try row.decode(column: "type", as: String.self), data: try row.decode(column: "data", as: String.self),
                    at: try row.decode(column: "at", as: Int64.self))
        }
    }

    /// Stored events after `since` on one topic, oldest first, for a client that reconnects.
    /// `complete` is false if some may have been pruned or there are more than `limit`.
    static func replay(topic: String, since: Int64, limit: Int = 1000, on db: any Database) async throws -> (rows: [LiveRow], complete: Bool) {
        guard let sql = db.tracedSQL else { return ([], true) }
        let rows = try rows(try await sql.select().columns("id", "topic", "type", "data", "at").from("live_events")
            .where("topic", .equal, SQLBind(topic)).where("id", .greaterThan, SQLBind(since))
            .orderBy("id").limit(limit).all())
        let oldest = try await sql.raw("SELECT MIN(id) AS id FROM live_events").first()
        let oldestID = try oldest.flatMap { try $0.decodeNil(column: "id") ? nil : $0.decode(column: "id", as: Int64.self) }
        // Written without `since + 1`: `since` comes from the client and may be Int64.max.
        let pruned = oldestID.map { since < $0 - 1 } ?? false
        return (rows, rows.count < limit && !pruned)
    }

    private func pruneForever() async {
        while !Task.isCancelled {
            try? await Task.sleep(for: .seconds(600))
            if Task.isCancelled { return }
            do { try await prune() } catch {
                logger.warning("Pruning live events failed: \(String(describing: error))")
            }
        }
    }

    func prune(now: Int64 = UnixTime.nowMillis) async throws {
        guard let sql = db().tracedSQL else { return }
        try await writeLock.withLock {
            try await sql.delete(from: "live_events").where("at", .lessThan, SQLBind(now - Self.retentionMillis)).run()
            try await sql.delete(from: "live_tickets").where("expires_at", .lessThan, SQLBind(now)).run()
        }
    }
}

/// A bounded set of recently seen ids (oldest forgotten first).
struct RecentIDs {
    private var set = Set<Int64>()
    private var order: [Int64] = []
    private var head = 0
    let capacity = 8_192

    /// False if `id` was seen lately.
    mutating func insert(_ id: Int64) -> Bool {
        guard set.insert(id).inserted else { return false }
        if order.count < capacity { order.append(id) } else {
            set.remove(order[head])
            order[head] = id
            head = (head + 1) % capacity
        }
        return true
    }
}
