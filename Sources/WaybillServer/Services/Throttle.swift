import Fluent
import SQLKit
import Vapor
import Crypto
import WaybillCore

/// Counters in the database for rate limits, so every server process sees the same numbers.
/// Each key counts events in a fixed window; recording is one atomic upsert.
struct Throttle {
    let sql: any SQLDatabase

    init(_ db: any Database) throws {
        guard let sql = db.tracedSQL else { throw Abort(.internalServerError, reason: "SQL database required") }
        self.sql = sql
    }

    struct Entry: Decodable {
        var count: Int
        var window_start: Int64
        var last_at: Int64
    }

    /// A key that names no person in the database: "login:acct:" + SHA-256 of the email.
    static func key(_ kind: String, _ subject: String) -> String {
        let digest = SHA256.hash(data: Data(subject.utf8)).prefix(16).map { String(format: "%02x", $0) }.joined()
        return "\(kind):\(digest)"
    }

    /// Counts one event and returns the state after it.
    @discardableResult
    func record(_ key: String, window: Int64, now: Int64 = UnixTime.nowSeconds) async throws -> Entry {
        guard let entry = try await count(key, window: window, now: now, below: .max) else {
            throw Abort(.internalServerError, reason: "throttle upsert returned nothing")
        }
        return entry
    }

    /// The one upsert behind `record` and `take`: counts `amount` events (a new window when the
    /// last one has ended) unless the current window has no room for them under `limit`. The state
    /// after it, or nil when full. `amount` is at most `limit` (the callers see to it).
    private func count(_ key: String, window: Int64, now: Int64, below limit: Int, amount: Int = 1) async throws -> Entry? {
        let expired = now &- window
        return try await sql.raw("""
            INSERT INTO throttles (key, window_start, count, last_at) VALUES (\(bind: key), \(bind: now), \(bind: amount), \(bind: now))
            ON CONFLICT (key) DO UPDATE SET
              count = CASE WHEN throttles.window_start <= \(bind: expired) THEN \(bind: amount) ELSE throttles.count + \(bind: amount) END,
              window_start = CASE WHEN throttles.window_start <= \(bind: expired) THEN \(bind: now) ELSE throttles.window_start END,
              last_at = \(bind: now)
            WHERE throttles.window_start <= \(bind: expired) OR throttles.count <= \(bind: limit - amount)
            RETURNING count, window_start, last_at
            """).first(decoding: Entry.self)
    }

    /// Counts an attempt *before* it is tried, if `policy` lets it be heard now: nil when counted
    /// (go ahead), else the seconds to wait. Atomic per key: on PostgreSQL the row is locked for the
    /// check and the count (several processes), on SQLite the caller holds the write lock. Run it
    /// inside a transaction.
    func reserve(_ key: String, policy: LoginThrottlePolicy, now: Int64 = UnixTime.nowSeconds) async throws -> Int64? {
        // The policy itself knows when a window has ended.
        if let entry = try await lockedEntry(key, now: now),
           let next = policy.nextAttemptAllowed(failures: entry.count, windowStart: entry.window_start, lastFailure: entry.last_at, now: now) {
            return max(1, next - now)
        }
        try await record(key, window: policy.window, now: now)
        return nil
    }

    /// "At most `limit` per window": nil when counted, else the seconds to wait. One statement, an
    /// upsert that counts only while the window has room, so it is atomic by itself on both
    /// databases (on SQLite the caller holds the write lock); it needs no transaction around it.
    /// `amount` events at once (a file of imported orders): all counted, or none and the wait;
    /// more than `limit` at once never fits (a whole window to wait, for the message).
    func take(_ key: String, amount: Int = 1, limit: Int, window: Int64, now: Int64 = UnixTime.nowSeconds) async throws -> Int64? {
        guard amount > 0 else { return nil }
        guard amount <= limit else { return window }
        let counted = try await count(key, window: window, now: now, below: limit, amount: amount)
        guard counted == nil else { return nil }
        // Full: how long until its window ends.
        let entry = try await sql.select().columns("count", "window_start", "last_at").from("throttles")
            .where("key", .equal, SQLBind(key)).first(decoding: Entry.self)
        return Self.secondsLeft(windowStart: entry?.window_start ?? now, window: window, now: now)
    }

    /// The key's row, locked until the transaction ends on PostgreSQL (SQLite: the write lock).
    private func lockedEntry(_ key: String, now: Int64) async throws -> Entry? {
        let entry: Entry?
        if sql.dialect.name == "postgresql" {
            // Make sure there is a row to lock, so that the first parallel attempts queue on it too.
            try await sql.raw("""
                INSERT INTO throttles (key, window_start, count, last_at) VALUES (\(bind: key), \(bind: now), 0, 0)
                ON CONFLICT (key) DO NOTHING
                """).run()
            entry = try await sql.raw("SELECT count, window_start, last_at FROM throttles WHERE key = \(bind: key) FOR UPDATE")
                .first(decoding: Entry.self)
        } else {
            entry = try await sql.select().columns("count", "window_start", "last_at").from("throttles")
                .where("key", .equal, SQLBind(key)).first(decoding: Entry.self)
        }
        return entry
    }

    /// Seconds until a window ends, at least 1; a stored start so far off that the sum would not fit
    /// (never written by us) counts as a whole window.
    static func secondsLeft(windowStart: Int64, window: Int64, now: Int64) -> Int64 {
        let end = windowStart.addingReportingOverflow(window)
        guard !end.overflow else { return window }
        let left = end.partialValue.subtractingReportingOverflow(now)
        return left.overflow ? window : max(1, min(left.partialValue, window))
    }

    /// Takes back one counted attempt (it turned out to be a success).
    func release(_ key: String) async throws {
        try await sql.raw("UPDATE throttles SET count = count - 1 WHERE key = \(bind: key) AND count > 0").run()
    }

    func reset(_ key: String) async throws {
        try await sql.delete(from: "throttles").where("key", .equal, SQLBind(key)).run()
    }

}
