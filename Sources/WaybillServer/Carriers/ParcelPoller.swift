import Fluent
import SQLKit
import Vapor
import WaybillCore

/// Asks the carriers about the parcels people follow (issue "Parcels of every carrier", item 3):
/// every parcel due (`next_check_at`), in batches per carrier, within each carrier's daily budget
/// (kept in `carrier_budgets`, so it survives restarts and binds every process), backing off after
/// 429s and errors. Several processes may run it: a parcel is claimed by a compare-and-set on its
/// `next_check_at` before the carrier is asked.
struct ParcelPoller {
    let services: WaybillServices
    let db: any Database
    let logger: Logger

    /// Minutes between two checks of a parcel (sooner when out for delivery).
    static let pulseMinutes = 120
    /// Requests a day per carrier (DHL asks new keys to stay under 250).
    static let dailyBudget: [String: Int] = ["dhl": 250, "la_poste": 50_000]
    /// Carriers without a documented budget.
    static let defaultDailyBudget = 1_000

    /// Requests a day this server may make to `carrier`, the poller and lookups without an account together.
    static func dailyLimit(_ carrier: String) -> Int { dailyBudget[carrier] ?? defaultDailyBudget }
    /// The share of it lookups without an account may spend (`PublicLookup`): a tenth, at least one.
    /// The rest is the poller's and the owners' "refresh", which strangers can never spend.
    static func publicShare(_ carrier: String) -> Int { max(1, dailyLimit(carrier) / 10) }
    /// Requests a day the poller (and "refresh") may make to `carrier`.
    static func pollerLimit(_ carrier: String) -> Int { dailyLimit(carrier) - publicShare(carrier) }
    /// How long a claimed parcel is left alone if the process dies while asking.
    static let leaseMillis: Int64 = 10 * 60_000

    /// One round: every configured carrier, up to `limit` parcels each. Returns the parcels checked.
    @discardableResult
    func runOnce(limit: Int = 50) async throws -> Int {
        var checked = 0
        for tracker in services.carrierTrackers {
            checked += try await poll(tracker, limit: limit)
        }
        try await expireOld()
        return checked
    }

    /// Parcels nobody heard of for 90 days are `expired` and no longer asked about.
    func expireOld() async throws {
        let cutoff = UnixTime.nowMillis - 90 * 86_400_000
        try await db.writeTransaction(services) { db in
            guard let sql = db.tracedSQL else { return }
            let finals = ParcelStatus.allCases.filter(\.isFinal).map(\.rawValue)
            try await sql.update("parcels").set("status", to: SQLBind(ParcelStatus.expired.rawValue)).set("next_check_at", to: SQLLiteral.null)
                .where("created_at", .lessThan, SQLBind(cutoff)).where("status", .notIn, SQLBind.group(finals)).run()
        }
    }

    func poll(_ tracker: any CarrierTracker, limit: Int) async throws -> Int {
        let now = UnixTime.nowMillis
        let due = try await ParcelRecord.query(on: db).filter(\.$carrier ~~ Array(tracker.carriers))
            .filter(\.$nextCheckAt != nil).filter(\.$nextCheckAt <= now).sort(\.$nextCheckAt).limit(limit).all()
        return try await poll(due, with: tracker)
    }

    /// One parcel now (a manual refresh), through the same claim, budget and backoff.
    func pollOne(_ parcel: ParcelRecord, with tracker: any CarrierTracker) async throws -> Int {
        try await poll([parcel], with: tracker)
    }

    private func poll(_ due: [ParcelRecord], with tracker: any CarrierTracker) async throws -> Int {
        guard !due.isEmpty else { return 0 }
        var checked = 0
        var index = 0
        while index < due.count {
            let batch = Array(due[index..<min(index + tracker.batchSize, due.count)])
            index += batch.count
            guard let carrier = tracker.carriers.sorted().first, try await takeBudget(carrier) else { break }
            let claimed = try await claim(batch)
            guard !claimed.isEmpty else { continue }
            do {
                let answers = try await tracker.track(claimed.map(\.number))
                for parcel in claimed { try await apply(answers[parcel.number] ?? .notFound, to: parcel) }
                checked += claimed.count
            } catch CarrierTrackingError.rateLimited(let retryAfter) {
                try await block(carrier, seconds: retryAfter ?? 900)
                try await release(claimed, after: Int64(retryAfter ?? 900) * 1000)
                break
            } catch {
                logger.warning("Asking \(carrier) failed: \(String(describing: error))")
                for parcel in claimed {
                    // 5, 10, 20… minutes, at most the pulse.
                    let wait = min(Int64(Self.pulseMinutes) * 60_000, Int64(5 * 60_000) << Int64(min(parcel.checkFailures, 5)))
                    try await release([parcel], after: wait, failed: true)
                }
            }
        }
        return checked
    }

    /// Takes one request of today's budget for `carrier`; false if it is spent or the carrier said to wait.
    /// `anonymous`: a lookup without an account, out of its own share (`publicShare`, counted in
    /// `public_used`), never out of the poller's (`used`, up to `pollerLimit`).
    func takeBudget(_ carrier: String, anonymous: Bool = false) async throws -> Bool {
        let today = String(ISO8601DateFormatter().string(from: UnixTime.now).prefix(10))
        let column = SQLIdentifier(anonymous ? "public_used" : "used")
        let limit = anonymous ? Self.publicShare(carrier) : Self.pollerLimit(carrier)
        return try await db.writeTransaction(services) { db in
            guard let sql = db.tracedSQL else { return false }
            try await sql.raw("""
                INSERT INTO carrier_budgets (carrier, day, used, public_used) VALUES (\(bind: carrier), \(bind: today), 0, 0)
                ON CONFLICT (carrier) DO NOTHING
                """).run()
            try await sql.raw("""
                UPDATE carrier_budgets SET day = \(bind: today), used = 0, public_used = 0 WHERE carrier = \(bind: carrier) AND day <> \(bind: today)
                """).run()
            let rows = try await sql.raw("""
                UPDATE carrier_budgets SET \(column) = \(column) + 1 WHERE carrier = \(bind: carrier) AND \(column) < \(bind: limit)
                AND (blocked_until IS NULL OR blocked_until <= \(bind: UnixTime.nowMillis)) RETURNING \(column)
                """).all()
            return !rows.isEmpty
        }
    }

    func block(_ carrier: String, seconds: Int) async throws {
        let until = UnixTime.nowMillis + Int64(seconds) * 1000
        try await db.writeTransaction(services) { db in
            guard let sql = db.tracedSQL else { return }
            try await sql.raw("UPDATE carrier_budgets SET blocked_until = \(bind: until) WHERE carrier = \(bind: carrier)").run()
        }
        logger.notice("\(carrier) asked to wait \(seconds) s (429): polling paused")
    }

    /// Each parcel is taken by one process: its `next_check_at` moves past a lease, only if unchanged.
    private func claim(_ parcels: [ParcelRecord]) async throws -> [ParcelRecord] {
        let lease = UnixTime.nowMillis + Self.leaseMillis
        return try await db.writeTransaction(services) { db in
            guard let sql = db.tracedSQL else { return [] }
            var mine: [ParcelRecord] = []
            for parcel in parcels {
                let rows = try await sql.update("parcels").set("next_check_at", to: SQLBind(lease))
                    .where("id", .equal, SQLBind(try parcel.storedID)).where("next_check_at", .equal, SQLBind(parcel.nextCheckAt))
                    .returning("id").all()
                if !rows.isEmpty { mine.append(parcel) }
            }
            return mine
        }
    }

    private func release(_ parcels: [ParcelRecord], after wait: Int64, failed: Bool = false) async throws {
        let at = UnixTime.nowMillis + wait
        try await db.writeTransaction(services) { db in
            guard let sql = db.tracedSQL else { return }
            for parcel in parcels {
                var update = sql.update("parcels").set("next_check_at", to: SQLBind(at)).where("id", .equal, SQLBind(try parcel.storedID))
                if failed { update = update.set("check_failures", to: SQLRaw("check_failures + 1")) }
                try await update.run()
            }
        }
    }

    /// Merges what the carrier said into the parcel: new events stored once, the status from all
    /// of them, the next check; the owner is told when the status changes.
    func apply(_ answer: CarrierAnswer, to parcel: ParcelRecord) async throws {
        let now = UnixTime.nowMillis
        let parcelID = try parcel.storedID
        try await db.writeTransaction(services) { db in
            guard let current = try await ParcelRecord.find(parcelID, on: db) else { return }
            let stored = try await ParcelEventRecord.query(on: db).filter(\.$parcelID == parcelID).all().map(\.event)
            var status = current.status
            var estimated = current.estimatedDelivery
            var newEvents: [ParcelEvent] = []
            if case .found(let report) = answer {
                let merged = ParcelTracking.merge(stored, report.events)
                for event in merged.new { try await ParcelEventRecord(parcel: parcelID, event).create(on: db) }
                newEvents = merged.new
                status = ParcelTracking.overall(merged.all, delivered: report.delivered)
                estimated = report.estimatedDelivery ?? estimated
                let unmapped = Set(merged.new.filter { $0.status == nil }.map(\.rawCode))
                if !unmapped.isEmpty { logger.notice("\(current.carrier) codes with no status yet: \(unmapped.sorted().joined(separator: ", "))") }
            }
            let old = current.status
            current.status = status
            current.estimatedDelivery = estimated
            current.lastCheckedAt = now
            current.checkFailures = 0
            current.nextCheckAt = ParcelTracking.nextCheck(status: status, now: now, addedAt: current.createdAt, pulseMinutes: Self.pulseMinutes)
            current.updatedAt = now
            try await current.save(on: db)
            if status != old { try await services.events.record(.parcelChanged(try ParcelFacts(current), from: old, newEvents: newEvents), on: db) }
        }
        services.outbox.poke()
    }
}
