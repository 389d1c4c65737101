import Fluent
import Foundation
import NIOConcurrencyHelpers
import Prometheus
import SQLKit
import Vapor

/// What the server counts for Prometheus (issue "Fast on two cores, and visible", item 4):
/// requests per route, method and status with their latency, outbox and webhook backlogs, live
/// connections, failed mail and push. Served at `/metrics` to a holder of `METRICS_TOKEN` only
/// (off without it).
final class WaybillMetrics: Sendable {
    let registry = PrometheusCollectorRegistry()
    /// Seconds: from a millisecond to ten.
    static let buckets: [Duration] = [.milliseconds(1), .milliseconds(2.5), .milliseconds(5), .milliseconds(10), .milliseconds(25),
                                      .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1),
                                      .seconds(2.5), .seconds(10)]

    func request(route: String, method: String, status: UInt, duration: Duration) {
        registry.makeCounter(name: "waybill_http_requests_total", labels: [("route", route), ("method", method), ("status", String(status))],
                             help: "HTTP requests answered, by route pattern, method and status.").increment()
        registry.makeDurationHistogram(name: "waybill_http_request_duration_seconds", labels: [("route", route), ("method", method)],
                                       buckets: Self.buckets, help: "Time to answer, by route pattern and method.").record(duration)
    }

    /// Seconds from a live event's commit (its `at`) to its hand-over to this process's sockets.
    static let lagBuckets: [Duration] = [.milliseconds(1), .milliseconds(2.5), .milliseconds(5), .milliseconds(10), .milliseconds(25),
                                         .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1),
                                         .seconds(5)]

    // Made once: these are recorded on hot paths (every live event, every write transaction).
    private let fanOutLag: DurationHistogram
    private let lockWait: DurationHistogram
    private let lockHeld: DurationHistogram
    private let positionGroups: Counter
    private let positionReports: Counter
    /// Requests being answered and write transactions under way in this process: counted on the
    /// hot path, turned into gauges only when scraped.
    private let inFlight = NIOLockedValueBox<Int>(0)
    private let transactions = NIOLockedValueBox<Int>(0)
    /// Counts kept elsewhere (SQLite's busy retries and commits, each read cache's hits and misses),
    /// by name, as already added to their counters, which count up at each scrape.
    private let reportedTotals = NIOLockedValueBox<[String: UInt64]>([:])

    /// How much `total`, a count kept elsewhere since the process started, grew since the last
    /// scrape: what the counter named `key` is incremented by.
    private func growth(_ key: String, total: UInt64) -> Int64 {
        Int64(clamping: reportedTotals.withLockedValue { reported -> UInt64 in
            let before = reported[key] ?? 0
            reported[key] = max(before, total)
            return total > before ? total - before : 0
        })
    }

    init() {
        fanOutLag = registry.makeDurationHistogram(name: "waybill_live_fanout_lag_seconds", buckets: Self.lagBuckets,
                                                   help: "Time from a live event's write to its delivery to this process's subscribers.")
        lockWait = registry.makeDurationHistogram(name: "waybill_db_write_lock_wait_seconds", buckets: Self.lagBuckets,
                                                  help: "Time a write transaction waited for the single writer (SQLite).")
        lockHeld = registry.makeDurationHistogram(name: "waybill_db_write_lock_held_seconds", buckets: Self.lagBuckets,
                                                  help: "Time a write transaction or statement held the single writer (SQLite); their sum per second is the writer's busy share.")
        positionGroups = registry.makeCounter(name: "waybill_position_transactions_total",
                                              help: "Transactions that wrote drivers' position reports (group commit).")
        positionReports = registry.makeCounter(name: "waybill_position_reports_written_total",
                                               help: "Drivers' position reports written; divided by the transactions, the mean group size.")
    }

    /// A transaction wrote `reports` position reports together.
    func positionsWritten(reports: Int) {
        positionGroups.increment()
        positionReports.increment(by: Int64(reports))
    }

    /// Live events reached this process's hub `lagMillis` after they were written.
    func liveFanOut(lagMillis: [Int64]) {
        for lag in lagMillis { fanOutLag.record(.milliseconds(max(0, lag))) }
    }

    /// Requests being answered by this process (a handler may still run after its client left).
    var requestsInFlight: Int { inFlight.withLockedValue { $0 } }

    /// A request starts (`+1`) or ends (`-1`).
    func requestsInFlight(_ change: Int) { inFlight.withLockedValue { $0 += change } }

    /// A write transaction starts (`+1`) or ends (`-1`).
    func writeTransaction(_ change: Int) { transactions.withLockedValue { $0 += change } }

    /// A write transaction waited this long for SQLite's single writer (`WriteLock`).
    func writeLockWait(_ duration: Duration) { lockWait.record(duration) }

    /// A write transaction or statement held SQLite's single writer this long.
    func writeLockHeld(_ duration: Duration) { lockHeld.record(duration) }

    /// A message of the outbox (mail, push, a job) failed an attempt.
    func outboxFailure(kind: String) {
        registry.makeCounter(name: "waybill_outbox_failures_total", labels: [("kind", kind)],
                             help: "Failed attempts to send an outbox message (mail, push, jobs), by kind.").increment()
    }

    /// The text exposition, with the gauges read now from the database and the live hub.
    func scrape(db: any Database, liveConnections: Int, caches: ReadCaches) async throws -> String {
        guard let sql = db.tracedSQL else { return registry.emitToString() }
        struct Backlog: Decodable { let kind: String; let n: Int; let oldest: Date? }
        let rows = try await sql.raw("SELECT kind, COUNT(*) AS n, MIN(created_at) AS oldest FROM outbox WHERE status = 'pending' GROUP BY kind")
            .all(decoding: Backlog.self)
        let now = Date()
        for kind in Set(rows.map(\.kind)).union(["mail", "push"]) {
            let row = rows.first { $0.kind == kind }
            registry.makeGauge(name: "waybill_outbox_pending", labels: [("kind", kind)], help: "Outbox messages waiting to be sent, by kind.")
                .set(Double(row?.n ?? 0))
            registry.makeGauge(name: "waybill_outbox_oldest_pending_seconds", labels: [("kind", kind)],
                               help: "Age of the oldest outbox message waiting, by kind.")
                .set(row?.oldest.map { max(0, now.timeIntervalSince($0)) } ?? 0)
        }
        struct Count: Decodable { let n: Int }
        let webhooks = try await sql.raw("SELECT COUNT(*) AS n FROM webhook_deliveries WHERE status = 'pending'").first(decoding: Count.self)?.n ?? 0
        registry.makeGauge(name: "waybill_webhook_deliveries_pending", help: "Webhook deliveries waiting to be sent or retried.").set(Double(webhooks))
        registry.makeGauge(name: "waybill_live_connections", help: "Open live-channel sockets in this process.").set(Double(liveConnections))
        // PostgreSQL: the server's connections to this database by state, against its limit (every process's pools together).
        if sql.dialect.name == "postgresql" {
            struct Connections: Decodable { let state: String; let n: Int }
            let states = try await sql.raw("""
                SELECT COALESCE(state, 'unknown') AS state, COUNT(*)::int AS n FROM pg_stat_activity
                WHERE datname = current_database() AND backend_type = 'client backend' GROUP BY 1
                """).all(decoding: Connections.self)
            for state in Set(states.map(\.state)).union(["active", "idle", "idle in transaction"]) {
                registry.makeGauge(name: "waybill_db_connections", labels: [("state", state)],
                                   help: "PostgreSQL connections to this database, by state (all processes).")
                    .set(Double(states.first { $0.state == state }?.n ?? 0))
            }
            struct Limit: Decodable { let n: Int }
            let limit = try await sql.raw("SELECT current_setting('max_connections')::int AS n").first(decoding: Limit.self)?.n ?? 0
            registry.makeGauge(name: "waybill_db_max_connections", help: "PostgreSQL's max_connections.").set(Double(limit))
        }
        // SQLite: Waybill's own connections (SQLiteReaders, SQLiteWriter) beside SQLiteNIO's.
        if let sqlite = db.context.configuration as? ReadingSQLiteConfiguration {
            let readers = sqlite.readers.connections
            for (state, n) in [("reading", readers.reading), ("idle", readers.idle)] {
                registry.makeGauge(name: "waybill_sqlite_reader_connections", labels: [("state", state)],
                                   help: "This process's read-only SQLite connections, reading now or kept idle.")
                    .set(Double(n))
            }
            registry.makeCounter(name: "waybill_sqlite_busy_retries_total",
                                 help: "SQLite statements tried again because another connection held the lock they needed.")
                .increment(by: growth("busy", total: UInt64(sqlite.statistics.busyRetries)))
            registry.makeCounter(name: "waybill_sqlite_commits_total",
                                 help: "Commits of the writer's transactions; several transactions queued behind one another share one.")
                .increment(by: growth("commits", total: UInt64(sqlite.statistics.commits)))
        }
        // What this process's read caches (`ReadCaches`) hold, and how often they answered.
        for (cache, statistics) in caches.statistics {
            registry.makeGauge(name: "waybill_read_cache_entries", labels: [("cache", cache)],
                               help: "Values kept now by each of this process's read caches.")
                .set(Double(statistics.entries))
            for (result, total) in [("hit", statistics.hits), ("miss", statistics.misses)] {
                registry.makeCounter(name: "waybill_read_cache_lookups_total", labels: [("cache", cache), ("result", result)],
                                     help: "Lookups in each read cache: a fresh value found (hit), or read from the database (miss).")
                    .increment(by: growth("cache/" + cache + "/" + result, total: total))
            }
        }
        registry.makeGauge(name: "waybill_http_requests_in_flight", help: "Requests being answered by this process.")
            .set(Double(requestsInFlight))
        registry.makeGauge(name: "waybill_db_write_transactions", help: "Write transactions under way in this process, waiting for their turn included.")
            .set(Double(transactions.withLockedValue { $0 }))
        // Carriers' daily request budgets (shared by every process through the table).
        struct Budget: Decodable { let carrier: String; let day: String; let used: Int; let public_used: Int; let blocked_until: Int64? }
        let today = String(ISO8601DateFormatter().string(from: UnixTime.now).prefix(10)), nowMillis = UnixTime.nowMillis
        for budget in try await sql.raw("SELECT carrier, day, used, public_used, blocked_until FROM carrier_budgets").all(decoding: Budget.self) {
            let labels = [("carrier", budget.carrier)]
            registry.makeGauge(name: "waybill_carrier_budget_used", labels: labels, help: "Requests to the carrier's tracking API used today (UTC).")
                .set(Double(budget.day == today ? budget.used + budget.public_used : 0))
            registry.makeGauge(name: "waybill_carrier_budget_limit", labels: labels, help: "The carrier's daily request budget.")
                .set(Double(ParcelPoller.dailyLimit(budget.carrier)))
            registry.makeGauge(name: "waybill_carrier_public_budget_used", labels: labels,
                               help: "Of those, requests made today (UTC) for lookups without an account, out of their own share.")
                .set(Double(budget.day == today ? budget.public_used : 0))
            registry.makeGauge(name: "waybill_carrier_public_budget_limit", labels: labels,
                               help: "The share of the carrier's daily budget lookups without an account may spend.")
                .set(Double(ParcelPoller.publicShare(budget.carrier)))
            registry.makeGauge(name: "waybill_carrier_blocked_seconds", labels: labels,
                               help: "Seconds until the carrier allows requests again after a 429 (0: not blocked).")
                .set(Double(max(0, (budget.blocked_until ?? 0) - nowMillis)) / 1000)
        }
        return registry.emitToString()
    }
}

/// Counts every request by the route it matched (the pattern, never the path: ids would make a
/// series each) — unmatched paths count as one route.
struct MetricsMiddleware: AsyncMiddleware {
    let metrics: WaybillMetrics

    func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        let start = ContinuousClock.now
        metrics.requestsInFlight(+1)
        defer { metrics.requestsInFlight(-1) }
        do {
            let response = try await next.respond(to: request)
            record(request, status: response.status.code, since: start)
            return response
        } catch {
            record(request, status: (error as? any AbortError)?.status.code ?? 500, since: start)
            throw error
        }
    }

    private func record(_ request: Request, status: UInt, since start: ContinuousClock.Instant) {
        let route = request.route.map { "/" + $0.path.map(\.description).joined(separator: "/") } ?? "unmatched"
        metrics.request(route: route, method: request.method.rawValue, status: status, duration: ContinuousClock.now - start)
    }
}
