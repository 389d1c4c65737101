import Fluent
import FluentSQLiteDriver
import SQLKit
import Tracing
import Vapor
import WaybillCore
import NIOConcurrencyHelpers

/// The services one Waybill process runs with, built once at start-up.
public final class WaybillServices: Sendable {
    public let config: WaybillConfig
    let tokens: TokenService
    let passwords: PasswordHasher
    let codes: OneTimeCodes
    public let outbox: OutboxWorker
    /// Sends integrators' webhook deliveries.
    let webhookWorker: WebhookWorker
    let payments: any PaymentProvider
    let files: FileStore
    /// This process's live connections, and the feed that brings them committed events.
    let live: LiveHub
    let liveFeed: LiveFeed
    let push: PushService
    /// A few position reports a second per driver.
    let positionLimiter: TokenBuckets
    /// Drivers' position reports written together, one transaction for all that arrive at once.
    let positionCommits: PositionCommits
    /// The application's database (not a request's), for work that outlives one request.
    let appDatabase: @Sendable () -> any Database
    /// Unknown tracking links per client address (a link is 144 random bits; this is belt and braces).
    let trackingMissLimiter: TokenBuckets
    /// Live tickets for tracking links per client address (each one is a database write).
    let publicTicketLimiter: TokenBuckets
    /// Calls one account makes the payment provider do for it (onboarding links, status reads): ten a minute.
    let providerCallLimiter = TokenBuckets(ratePerSecond: 10.0 / 60, burst: 10)
    /// Refresh tokens presented without an account (refresh, sign-out), per client address: a burst of
    /// 120, then two a second. An app refreshes every quarter of an hour; the tokens are 256 random
    /// bits, so this only keeps a stranger from spending the server's time on guesses.
    let sessionTokenLimiter = TokenBuckets(ratePerSecond: 2, burst: 120)
    /// Carrier lookups without an account, per client address: sixty a minute.
    let carrierLookupLimiter = TokenBuckets(ratePerSecond: 1, burst: 60)
    /// Asking a carrier again by hand: once every five minutes per parcel.
    let parcelRefreshLimiter = TokenBuckets(ratePerSecond: 1.0 / 300, burst: 1)
    /// Asking a carrier for someone without an account: ten a minute per client address.
    let carrierLiveLimiter = TokenBuckets(ratePerSecond: 10.0 / 60, burst: 10)
    /// And thirty a day per client address (a token back every 48 minutes), so a few addresses do not
    /// spend the whole of the anonymous share of a carrier's budget (`ParcelPoller.publicShare`).
    let carrierLiveDailyLimiter = TokenBuckets(ratePerSecond: 30.0 / 86_400, burst: 30)
    /// What carriers said about numbers looked up without an account, for ten minutes.
    let carrierAnswerCache = CarrierAnswerCache()
    /// The public board of delivery statistics per carrier, worked out at most once every five minutes.
    let statisticsBoard = BoardCache()
    /// Shop webhooks: two a second per shop (a bulk fulfilment), bursts of a hundred.
    let shopWebhookLimiter = TokenBuckets(ratePerSecond: 2, burst: 100)
    /// Webhook deliveries asked for by hand (test events, redeliveries): sixty an hour per account,
    /// so nobody turns Waybill into a way of flooding someone else's server.
    let webhookManualLimiter = TokenBuckets(ratePerSecond: 60.0 / 3600, burst: 60)
    /// The process's counters, served at `/metrics` (`WaybillMetrics`).
    var metrics: WaybillMetrics { outbox.metrics }
    /// Requests per API key: twenty a second, bursts of a hundred.
    let apiKeyLimiter = TokenBuckets(ratePerSecond: 20, burst: 100)
    /// Sharing parcels with other accounts: thirty a day per person.
    let parcelShareLimiter = TokenBuckets(ratePerSecond: 30.0 / 86_400, burst: 30)
    /// The time as this application reads it (`UnixTime`): the system's, or a test's.
    let clock: WaybillClock
    /// Where random numbers come from: the system's, or a test's seeded generator.
    let random: WaybillRandom
    /// What requests read often and seldom changes, kept for a moment (`ReadCaches`).
    let caches: ReadCaches
    /// What happened, and who reacts to it (notifications, the live channel).
    let events = DomainEvents()
    /// Serialises write transactions on SQLite (see `WriteLock`); disabled on PostgreSQL.
    let writeLock: WriteLock
    /// Threads for blocking work (image decoding, file reads).
    let threadPool: NIOThreadPool
    /// The area hierarchy as a search index, rebuilt when the areas change.
    let areas = AreaCatalog()
    /// The carrier adapters configured (`CarrierSettings`): the parcel poller asks these.
    let carrierTrackers: [any CarrierTracker]
    /// Route planning's distances: OSRM when configured, straight lines otherwise.
    let routing: RoutingMatrices
    /// Messages one account may send: 30 at once, then one every two seconds.
    let messageLimiter = TokenBuckets(ratePerSecond: 0.5, burst: 30)
    /// Holding timeslots: 20 at once, then one every 3 s (holds are cheap to take, costly to hoard).
    let slotHoldLimiter = TokenBuckets(ratePerSecond: 1.0 / 3, burst: 20)
    /// Looking scanned labels up: 60 at once (a counter's morning), then one a second.
    let scanLimiter = TokenBuckets(ratePerSecond: 1, burst: 60)
    /// Reports one account may file: 20 a day.
    let reportLimiter = TokenBuckets(ratePerSecond: 20.0 / 86_400, burst: 20)
    /// Route plans one account may ask for (`RoutePlanningPolicy.plansPerMinute`).
    let routePlanLimiter = TokenBuckets(ratePerSecond: Double(RoutePlanningPolicy.plansPerMinute) / 60,
                                        burst: Double(RoutePlanningPolicy.plansPerMinute))

    init(config: WaybillConfig, tokens: TokenService, passwords: PasswordHasher, codes: OneTimeCodes,
         outbox: OutboxWorker, payments: any PaymentProvider, files: FileStore, live: LiveHub, liveFeed: LiveFeed,
         push: PushService, writeLock: WriteLock, threadPool: NIOThreadPool, webhookWorker: WebhookWorker,
         clock: WaybillClock = .system, random: WaybillRandom = .system, carrierTrackers: [any CarrierTracker] = [],
         client: (@Sendable () -> any Client)? = nil, caches: ReadCaches = ReadCaches(),
         database: @escaping @Sendable () -> any Database) {
        appDatabase = database
        self.caches = caches
        positionCommits = PositionCommits(metrics: outbox.metrics)
        self.carrierTrackers = carrierTrackers
        routing = RoutingMatrices(settings: config.routing, client: client)
        self.webhookWorker = webhookWorker
        self.writeLock = writeLock
        self.threadPool = threadPool
        self.clock = clock
        self.random = random
        self.config = config
        self.tokens = tokens
        self.passwords = passwords
        self.codes = codes
        self.outbox = outbox
        self.payments = payments
        self.files = files
        self.live = live
        self.liveFeed = liveFeed
        self.push = push
        trackingMissLimiter = TokenBuckets(ratePerSecond: config.trackingMissesPerSecond, burst: 30)
        publicTicketLimiter = TokenBuckets(ratePerSecond: Double(config.livePublicTicketsPerMinute) / 60,
                                           burst: Double(config.livePublicTicketsPerMinute))
        positionLimiter = TokenBuckets(ratePerSecond: config.positionReportsPerSecond,
                                       burst: config.positionReportBurst ?? config.positionReportsPerSecond * 2)
        // The shipped carrier table, read now: a broken build stops at start-up, never in a request
        // (`CarrierDetection.standard`).
        _ = CarrierDetection.standard
    }
}

/// A service made for one request or job: the application's services, a database (the request's,
/// or a transaction's) and a logger. `init(request:)` is the same for all of them.
protocol WaybillService {
    init(services: WaybillServices, db: any Database, logger: Logger)
}

extension WaybillService {
    init(request: Request) {
        self.init(services: request.application.waybill, db: request.db, logger: request.logger)
    }
}

extension WaybillServices {
    /// Runs `body` reading this application's clock and randomness (what `ClockMiddleware` does for
    /// a request): for work outside a request, such as a test calling a service directly.
    func run<T: Sendable>(_ body: () async throws -> T) async rethrows -> T {
        try await withApplicationContext(clock: clock, random: random, body)
    }
}

extension Application {
    private struct ServicesKey: StorageKey { typealias Value = WaybillServices }

    /// Waybill's services, or nil before `configure` (or after the application shut down).
    var waybillIfConfigured: WaybillServices? { storage[ServicesKey.self] }

    /// Waybill's services. Set by `configure` before it registers any route, so a request always
    /// finds them; work outside requests (jobs, workers) that may outlive the application reads
    /// `waybillIfConfigured` instead.
    public var waybill: WaybillServices {
        get {
            guard let services = storage[ServicesKey.self] else { fatalError("configure(_:) has not run") }  // cannot fail: set by configure before any route
            return services
        }
        set { storage[ServicesKey.self] = newValue }
    }

    /// SQLite allows one writer at a time, and two transactions that both start reading and then
    /// both write would fail with SQLITE_BUSY. Waybill serialises its write transactions in the
    /// process on SQLite (one process owns an SQLite file); PostgreSQL needs no such lock.
    var writeLock: WriteLock {
        get { storage[WriteLockKey.self] ?? WriteLock(enabled: false) }
        set { storage[WriteLockKey.self] = newValue }
    }
    private struct WriteLockKey: StorageKey { typealias Value = WriteLock }
}

/// An async mutex (FIFO) around write transactions.
final class WriteLock: Sendable {
    let enabled: Bool
    private typealias Waiter = (continuation: CheckedContinuation<Void, Never>, joins: Bool)
    private let state = NIOLockedValueBox<(locked: Bool, waiters: [Waiter])>((false, []))

    init(enabled: Bool) { self.enabled = enabled }

    func withLock<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        guard enabled else { return try await body() }
        await acquire()
        defer { release() }
        return try await body()
    }

    /// Waits for the lock. `joins`: the holder writes on `SQLiteWriter`'s connection, in its
    /// transaction if one is left open (`nextJoins`); any other holder finds SQLite's lock free.
    func acquire(joins: Bool = false) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeNow = state.withLockedValue { state -> Bool in
                if !state.locked { state.locked = true; return true }
                state.waiters.append((continuation, joins))
                return false
            }
            if resumeNow { continuation.resume() } else { queueChanges.signal() }
        }
    }

    /// Signalled when someone starts waiting for the lock (tests line up writers behind a holder).
    let queueChanges = ChangeSignal()

    func release() {
        let next = state.withLockedValue { state -> CheckedContinuation<Void, Never>? in
            guard !state.waiters.isEmpty else { state.locked = false; return nil }
            return state.waiters.removeFirst().continuation
        }
        next?.resume()
    }

    /// Whether the next holder, if anyone waits, writes in `SQLiteWriter`'s transaction.
    var nextJoins: Bool { state.withLockedValue { $0.waiters.first?.joins == true } }

    /// How many wait for the lock now.
    var waiting: Int { state.withLockedValue { $0.waiters.count } }
}

extension Database {
    func writeTransaction<T: Sendable>(_ app: Application, _ body: @escaping @Sendable (any Database) async throws -> T) async throws -> T {
        try await writeTransaction(app.waybill, body)
    }

    /// A transaction that is safe on both SQLite and PostgreSQL (see `WriteLock`).
    func writeTransaction<T: Sendable>(_ services: WaybillServices, _ given: @escaping @Sendable (any Database) async throws -> T) async throws -> T {
        // Fluent runs the body in a task of its own, started from the event loop, which does not
        // inherit task-locals: the body gets the caller's clock, randomness, trace and request (for
        // the audit log's request id and address) back explicitly.
        let clock = UnixTime.clock, random = Randomness.current, trace = ServiceContext.current, request = RequestContext.current
        let changes = WrittenChanges()
        let body: @Sendable (any Database) async throws -> T = { db in
            try await WrittenChanges.$current.withValue(changes) {
                try await RequestContext.$current.withValue(request) {
                    try await ServiceContext.$current.withValue(trace) {
                        try await withApplicationContext(clock: clock, random: random) { try await given(db) }
                    }
                }
            }
        }
        let metrics = services.metrics, asked = ContinuousClock.now
        metrics.writeTransaction(+1)
        defer { metrics.writeTransaction(-1) }
        let result = try await onWriterThread {
          // On the writer's connection, statement after statement on its thread (`SQLiteWriter`),
          // committed together with the transactions queued behind it.
          if services.writeLock.enabled, let writer = (self.context.configuration as? ReadingSQLiteConfiguration)?.writer {
              return try await writer.transaction(lock: services.writeLock, metrics: metrics, context: self.context, body)
          }
          return try await services.writeLock.withLock {
            guard services.writeLock.enabled else { return try await self.transaction { db in try await body(db) } }
            metrics.writeLockWait(ContinuousClock.now - asked)
            let held = ContinuousClock.now
            defer { metrics.writeLockHeld(ContinuousClock.now - held) }
            // SQLite in WAL mode: a commit is safe from a crash of the process without an fsync
            // (synchronous=NORMAL); only a power cut can lose the last commits, never consistency.
            // Set once on each connection that runs a transaction (the setting is per connection).
            return try await self.withConnection { connection in
                if try await SQLiteConnections.firstTransaction(on: connection), let sql = connection.tracedSQL {
                    try await sql.raw("PRAGMA synchronous=NORMAL").run()
                }
                return try await connection.transaction { db in try await body(db) }
            }
          }
        }
        // Committed: accounts and orders it changed are read again from now on; live events written
        // by the transaction can go out now (SQLite reads them after each write; PostgreSQL has
        // already notified every process).
        changes.forget(in: services.caches)
        services.liveFeed.poke()
        return result
    }
}

extension Database {
    /// One statement that writes and is atomic by itself (an upsert): on SQLite under the write lock
    /// and on a connection with the transactions' settings (Waybill's own writer runs it in a
    /// transaction of its own; elsewhere it needs none).
    func writeStatement<T: Sendable>(_ services: WaybillServices, _ body: @escaping @Sendable (any Database) async throws -> T) async throws -> T {
        try await onWriterThread {
          // On the writer's connection, in its transaction (`SQLiteWriter`): beginning one is where a
          // statement waits for another connection's write, without holding the thread (`SQLiteBusy`).
          if services.writeLock.enabled, let writer = (self.context.configuration as? ReadingSQLiteConfiguration)?.writer {
              return try await writer.transaction(lock: services.writeLock, metrics: services.metrics, context: self.context, body)
          }
          return try await services.writeLock.withLock {
            guard services.writeLock.enabled else { return try await body(self) }
            let held = ContinuousClock.now
            defer { services.metrics.writeLockHeld(ContinuousClock.now - held) }
            return try await self.withConnection { connection in
                if try await SQLiteConnections.firstTransaction(on: connection), let sql = connection.tracedSQL {
                    try await sql.raw("PRAGMA synchronous=NORMAL").run()
                }
                return try await body(connection)
            }
          }
        }
    }

    /// `body` on the writer's thread when this is SQLite with Waybill's writer (`WriterThread`):
    /// waiting for the lock, holding it and handing it over, away from the requests' threads.
    private func onWriterThread<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        guard let writer = (context.configuration as? ReadingSQLiteConfiguration)?.writer else { return try await body() }
        return try await withTaskExecutorPreference(writer.thread) { try await body() }
    }
}

/// The SQLite connections that ran a write transaction already (and so have their settings).
enum SQLiteConnections {
    private final class Seen: @unchecked Sendable { weak var connection: SQLiteConnection? }
    private static let configured = NIOLockedValueBox<[ObjectIdentifier: Seen]>([:])

    /// Whether `db`, a connection of the pool, runs its first write transaction. A statement less
    /// per transaction: each one is a round trip to SQLite's threads (docs/performance.md). A closed
    /// connection's address taken by a new one counts as new (the entry holds it weakly).
    static func firstTransaction(on db: any Database) async throws -> Bool {
        guard let sqlite = db as? any SQLiteDatabase else { return true }
        let connection = try await sqlite.withConnection { $0.eventLoop.makeSucceededFuture($0) }.get()
        return configured.withLockedValue { seen in
            let id = ObjectIdentifier(connection)
            if let known = seen[id], known.connection === connection { return false }
            if seen.count > 1_000 { seen = seen.filter { $0.value.connection != nil } }
            let entry = Seen()
            entry.connection = connection
            seen[id] = entry
            return true
        }
    }
}
