import Fluent
import FluentPostgresDriver
import FluentSQLiteDriver
import AsyncHTTPClient
import Crypto
import Foundation
import OpenAPIVapor
import SQLKit
import Vapor
import WaybillCore
import NIOConcurrencyHelpers
import WaybillAPI
import WaybillAPIServer

/// Sets up storage, services, middleware and routes. The executable and the tests both call this.
///
/// - Parameter mailer: overrides the mailer chosen from the configuration (tests pass one that
///   records, or one that fails).
public func configure(_ app: Application, config: WaybillConfig, mailer: (any Mailer)? = nil) async throws {
    try await configure(app, config: config, mailer: mailer, push: nil)
}

/// - Parameter push: overrides the push senders chosen from the configuration (tests).
/// - Parameter clock: the time as the application reads it (tests pass one they move).
func configure(_ app: Application, config: WaybillConfig, mailer: (any Mailer)?, push: PushService?,
               clock: WaybillClock = .system, random: WaybillRandom = .system) async throws {
    // storage
    switch config.database {
    case .sqlite(let path):
        let directory = (path as NSString).deletingLastPathComponent
        if !directory.isEmpty { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) }
        // With read-only connections beside it for reads outside transactions (`SQLiteReaders`) and
        // one for write transactions (`SQLiteWriter`), unless SQLITE_DIRECT=0.
        if config.sqliteDirect {
            app.databases.use(ReadingSQLiteConfiguration(path: path), as: .sqlite)
        } else {
            app.databases.use(.sqlite(.file(path)), as: .sqlite)
        }
        app.writeLock = WriteLock(enabled: true)
    case .postgres(let url, let searchPath):
        var postgres = try SQLPostgresConfiguration(url: url)
        if let searchPath { postgres.searchPath = [searchPath] }
        app.databases.use(.postgres(configuration: postgres, maxConnectionsPerEventLoop: config.databasePoolSize), as: .psql)
    }
    // Registered in order; never edit one that has shipped.
    app.migrations.add(CreateAccounts())             // users, sessions, refresh tokens
    app.migrations.add(CreateCodesDevicesOutbox())   // mailed codes, push devices, outbox, throttles
    app.migrations.add(CreateOrders())               // orders, events, files, notifications, tariff, payments
    app.migrations.add(CreateLive())                 // positions, trails, live events and tickets, tracking links
    app.migrations.add(AddWebSessions())             // web app sessions (cookie)
    app.migrations.add(AddSessionLastUsed())         // idle timeout of web sessions
    app.migrations.add(CreateLedger())               // the money ledger, filled for existing orders
    app.migrations.add(CreateShipments())            // legs, hand-overs, places and recipient as columns
    app.migrations.add(CreatePayouts())              // payouts the sandbox provider records, payout claims
    app.migrations.add(CreateCapabilities())         // capability grants and restrictions on accounts
    app.migrations.add(CreateTravel())               // areas, the travel tariff, trips
    app.migrations.add(CreateTripRequests())         // senders' requests for a place on a trip, payout accounts
    app.migrations.add(CreateProfilePictures())      // one square picture per account
    app.migrations.add(CreatePayoutAccounts())       // travellers' payout accounts, the receiver's code in their app
    app.migrations.add(CreateParcels())              // parcels of other carriers people follow
    app.migrations.add(CreateParcelEvents())         // their events at the carriers, polling, carrier budgets
    app.migrations.add(CreateParcelSharing())        // sharing parcels, when to tell people, incident reasons
    app.migrations.add(CreateDeliverySamples())      // delivered parcels and shipments, for the statistics per carrier
    app.migrations.add(CreateShops())                // shops whose orders' tracking numbers arrive by webhook
    app.migrations.add(CreateForwardingAddresses())  // personal addresses shipping confirmations are forwarded to
    app.migrations.add(CreateWebhooks())             // integrators' endpoints, their deliveries and the attempts made
    app.migrations.add(CreateAPIKeys())              // keys for server-to-server clients, kept as hashes
    app.migrations.add(CreateOrderImports())         // uploaded delivery files awaiting confirmation; outside references
    app.migrations.add(CreateRoutePlans())           // route plans, versioned, and their stops
    app.migrations.add(CreateConversations())        // conversations, their members and messages, reports
    app.migrations.add(CreateRatings())              // ratings both ways, their published aggregates
    app.migrations.add(AddDirectConversations())     // direct conversations between two people
    app.migrations.add(CreateTimeslots())            // slot templates, slots, holds, bookings
    app.migrations.add(AddHandoverTokens())          // labels' hand-over tokens, scans
    app.migrations.add(CreateCounters())             // reception counters, their staff, drop-off templates
    app.migrations.add(CreateCounterDesk())          // typed references as counter proof, legs by counter
    app.migrations.add(CreateStepReceipts())         // drivers' steps sent with an idempotency key, done once
    app.migrations.add(CreateAdministration())       // the audit log, re-authentication, report decisions
    app.migrations.add(CreateInsurance())            // the premium table, insured orders, claims
    app.migrations.add(CreateLoyalty())              // loyalty rules, each account's points, what orders spent
    app.migrations.add(CreateSubscriptions())        // subscription plans, subscriptions, their invoices, what plans took off orders
    app.migrations.add(AddPublicCarrierBudget())     // anonymous carrier lookups' own share of each carrier's daily budget
    app.migrations.add(VetExistingCompanies())       // invoice and imports need a vetted company: those already invoiced keep it
    app.migrations.add(VersionTheTravelTariff())     // the travel tariff kept by version, like the tariff, insurance and loyalty

    // services
    guard let specURL = Bundle.module.url(forResource: "openapi", withExtension: "yaml"),
          let spec = try? String(contentsOf: specURL, encoding: .utf8) else {
        throw ConfigurationError("openapi.yaml is missing from the server's resources.")
    }
    let chosenMailer: any Mailer = mailer
        ?? config.smtp.map { SMTPMailer(settings: $0, group: app.eventLoopGroup) }
        ?? LogMailer(logger: app.logger)
    let caches = ReadCaches(keepOrders: config.orderReadCache)
    // Writes made through the models forget what the caches kept of them (`ReadCaches`).
    // Accounts and sessions (their kept session checks, and the orders and pages naming them).
    app.databases.middleware.use(ChangeNotingMiddleware<User>(creates: false) { WrittenChanges.note($0.id, caches: caches) })
    app.databases.middleware.use(ChangeNotingMiddleware<Session>(creates: false) { WrittenChanges.note($0.$user.id, caches: caches) })
    // A subscription: its account's kept plan. A tariff: the kept tariff.
    app.databases.middleware.use(ChangeNotingMiddleware<SubscriptionRecord>(creates: true) { WrittenChanges.note($0.accountID, caches: caches) })
    app.databases.middleware.use(ChangeNotingMiddleware<TariffRecord>(creates: true) { _ in caches.tariff.forgetAll() })
    // An order, a line of its history, a file: its kept detail, and every kept page.
    app.databases.middleware.use(ChangeNotingMiddleware<Order>(creates: true) { WrittenChanges.note(order: $0.id, caches: caches) })
    app.databases.middleware.use(ChangeNotingMiddleware<OrderEvent>(creates: true) { WrittenChanges.note(order: $0.orderID, caches: caches) })
    app.databases.middleware.use(ChangeNotingMiddleware<OrderFile>(creates: true) { WrittenChanges.note(order: $0.orderID, caches: caches) })
    let hub = LiveHub(logger: app.logger, caches: caches)
    let feedMode: LiveFeed.Mode
    switch config.database {
    case .sqlite: feedMode = .sqlite
    case .postgres(let url, _): feedMode = .postgres(try SQLPostgresConfiguration(url: url).coreConfiguration)
    }
    // bcrypt gets its own threads, one fewer than the cores: a flood of sign-ins then always
    // leaves a core to the event loops, so everything else keeps answering (scripts/bench).
    let hashingPool = NIOThreadPool(numberOfThreads: max(1, System.coreCount - 1))
    hashingPool.start()
    app.lifecycle.use(ThreadPoolShutdown(pool: hashingPool))
    // Redirects are refused: Web Push endpoints come from browsers and must not steer the server.
    let pushClient = HTTPClient(eventLoopGroup: app.eventLoopGroup, configuration: PushService.clientConfiguration)
    app.lifecycle.use(HTTPClientShutdown(client: pushClient))
    let outbox = OutboxWorker(db: { app.db }, writeLock: app.writeLock, mailer: chosenMailer, from: config.mailFrom, logger: app.logger)
    let liveFeed = LiveFeed(hub: hub, mode: feedMode, db: { app.db }, writeLock: app.writeLock, logger: app.logger, metrics: outbox.metrics)
    let codes = OneTimeCodes(secret: config.jwtSecret)
    let webhookWorker = WebhookWorker(db: { app.db }, services: { app.waybillIfConfigured }, writeLock: app.writeLock,
                                      codes: codes, logger: app.logger, group: app.eventLoopGroup,
                                      timeoutSeconds: config.webhookTimeoutSeconds, allowPrivate: config.webhooksAllowPrivate)
    let carrierTrackers = config.carriers.trackers(client: { app.client })
    if !carrierTrackers.off.isEmpty {
        app.logger.notice("Carrier adapters off, parcels of these carriers keep their first status: \(carrierTrackers.off.joined(separator: ", "))")
    }
    app.waybill = WaybillServices(
        config: config,
        tokens: await TokenService.make(secret: config.jwtSecret),
        passwords: try await PasswordHasher.make(cost: config.bcryptCost, threadPool: hashingPool),
        codes: codes,
        outbox: outbox,
        payments: config.stripe.map { settings in StripePayments(settings: settings, client: { app.client }) }
            ?? SandboxPayments(db: { app.db }, writeLock: app.writeLock, publicURL: config.publicURL, logger: app.logger),
        files: FileStore(root: config.storagePath + "/files", threadPool: app.threadPool),
        live: hub,
        liveFeed: liveFeed,
        push: push ?? PushService(settings: config.push, httpClient: pushClient, logger: app.logger),
        writeLock: app.writeLock,
        threadPool: app.threadPool,
        webhookWorker: webhookWorker,
        clock: clock,
        random: random,
        carrierTrackers: carrierTrackers.trackers,
        client: { app.client },
        caches: caches,
        database: { app.db }
    )
    app.waybill.events.subscribeStandard(etaAverageSpeedKmh: config.etaAverageSpeedKmh)
    // Integrators' endpoints: each event queued for those that asked for it, in its transaction.
    app.waybill.events.subscribe("webhooks") { event, db in
        guard let services = app.waybillIfConfigured else { return }
        try await Webhooks.enqueue(event, services: services, on: db)
    }
    outbox.handle(Outbox.pushKind) { payload in
        try await PushDelivery(app: app).deliver(payload)
    }
    outbox.handle(Outbox.travellerPayoutKind) { payload in
        guard let id = OrderID(uuidString: payload) else { return }
        try await app.waybill.run { try await Travel(services: app.waybill, db: app.db, logger: app.logger).payTraveller(shipment: id) }
    }
    outbox.handle(Outbox.banWithdrawalKind) { payload in
        guard let id = UserID(uuidString: payload) else { return }
        try await app.waybill.run {
            try await Accounts(services: app.waybill, db: app.db, logger: app.logger, clientAddress: "server").withdrawAccepted(bannedUser: id)
        }
    }
    outbox.handle(Claims.paymentKind) { payload in
        guard let id = ClaimID(uuidString: payload) else { return }
        try await app.waybill.run { try await Claims(services: app.waybill, db: app.db, logger: app.logger).pay(id) }
    }
    outbox.handle(Outbox.refundKind) { payload in
        guard let id = OrderID(uuidString: payload) else { return }
        try await app.waybill.run { try await Orders(services: app.waybill, db: app.db, logger: app.logger).refundNow(id) }
    }

    // A connection silent this long is closed: half-sent headers cannot hold sockets for ever.
    // (The live channel pings more often than this, so quiet subscribers stay.)
    app.http.server.configuration.idleTimeout = .seconds(Int64(config.httpIdleTimeoutSeconds))
    // Text (pages, JSON, scripts, styles) leaves gzip-compressed for clients that ask for it;
    // images and other compressed types do not. Pages mask their CSRF token per response, so
    // compression reveals nothing secret (BREACH).
    app.http.server.configuration.responseCompression = .enabled(disallowedTypes: .incompressible, allowRequestOverrides: true)

    // middleware: every error, including unknown routes, leaves as the JSON error shape
    app.middleware = .init()
    app.middleware.use(ClockMiddleware(clock: clock, random: random))  // every request reads the application's clock and randomness
    app.middleware.use(MetricsMiddleware(metrics: app.waybill.metrics))  // outside the error middleware: it counts the final status
    if WaybillTracing.isEnabled { app.middleware.use(RequestSpanMiddleware()) }  // likewise: the span has the status sent
    app.middleware.use(RouteLoggingMiddleware(logLevel: .debug))  // per-request logs cost throughput at info
    // Outside the error middleware, so error answers carry the same headers (nosniff, HSTS).
    app.middleware.use(SecurityHeadersMiddleware(strictTransport: config.publicURL.hasPrefix("https://")))
    let validator = try SpecValidator.parsed(yaml: spec)
    app.middleware.use(APIErrorMiddleware(validator: validator))

    try routes(app, spec: spec, validator: validator)
}

func routes(_ app: Application, spec: String, validator: SpecValidator) throws {
    // health: no authentication, no database; the baseline for load figures
    app.get("health") { _ in HealthStatus(status: "ok") }
    WaybillCrashes.registerTrapRoute(on: app)

    app.get("api", "v1", "openapi.yaml") { _ -> Response in
        var headers = HTTPHeaders()
        headers.replaceOrAdd(name: .contentType, value: "application/yaml; charset=utf-8")
        return Response(status: .ok, headers: headers, body: .init(string: spec))
    }

    // Prometheus, for the holder of METRICS_TOKEN only (off without it)
    app.get("metrics") { req async throws -> Response in
        guard let token = req.application.waybill.config.metricsToken,
              let given = req.headers.bearerToken,
              Data(SHA256.hash(data: Data(given.utf8))) == Data(SHA256.hash(data: Data(token.utf8))) else { throw WaybillError.notFound }
        let text = try await req.application.waybill.metrics.scrape(db: req.db, liveConnections: req.application.waybill.live.connectionCount,
                                                                   caches: req.application.waybill.caches)
        var headers = HTTPHeaders()
        headers.replaceOrAdd(name: .contentType, value: "text/plain; version=0.0.4; charset=utf-8")
        headers.replaceOrAdd(name: .cacheControl, value: "no-store")
        return Response(status: .ok, headers: headers, body: .init(string: text))
    }

    // the spec-first API
    let api = app
        .grouped(SpecValidationMiddleware(validator: validator, pathPrefix: ["api", "v1"], maxBodySize: 64 * 1024))
    // Every operation through the generated server; the two reads of many orders answer through
    // `DirectJSON` (DirectAnswers).
    let transport = DirectAnswers(routes: api)
    // Compact JSON: the runtime's default (sorted, pretty-printed) cost a third of a list page's time.
    try APIHandler().registerHandlers(on: transport, serverURL: URL(string: APIHandler.basePath)!, // cannot fail: the constant "/api/v1" is a valid relative URL
                                      configuration: .waybill)

    // pages outside the JSON API: payment return, sandbox checkout, printable statements
    try app.register(collection: PaymentPages())
    // the live channel (WebSocket) and the public tracking page
    LiveSocket.register(app)
    try app.register(collection: TrackingPage())
    // the web app: pages for every role, its islands' endpoints and its files
    try WebApp.register(app)
}

struct HealthStatus: Content {
    var status: String
}

struct SecurityHeadersMiddleware: AsyncMiddleware {
    /// Served over https: browsers are told to keep to https (HSTS).
    let strictTransport: Bool

    func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        let response = try await next.respond(to: request)
        response.headers.replaceOrAdd(name: "X-Content-Type-Options", value: "nosniff")
        response.headers.replaceOrAdd(name: "Referrer-Policy", value: "no-referrer")
        // Served over https: browsers keep to https for a year (ASVS 3.4.1).
        if strictTransport {
            response.headers.replaceOrAdd(name: "Strict-Transport-Security", value: "max-age=31536000; includeSubDomains")
        }
        // The request line's text when it is a path (reading `url.path` parses the whole URI again).
        let raw = request.url.string
        let api = raw.hasPrefix("/") ? raw.hasPrefix("/api/") : request.url.path.hasPrefix("/api/")
        if api, response.headers[.cacheControl].isEmpty {
            response.headers.replaceOrAdd(name: .cacheControl, value: "no-store")
        }
        return response
    }
}

/// Brings the schema up to date and, for `serve`, starts the background workers.
public func prepareToServe(_ app: Application, demo: Bool) async throws {
    try await migrate(app)
    if demo { try await DemoData.seed(app) }
    app.lifecycle.use(BackgroundWorkers(outbox: app.waybill.outbox, liveFeed: app.waybill.liveFeed))
    app.servers.use { app in AnnouncingServer(inner: app.http.server.shared) }
}

/// Vapor's HTTP server, which says on standard output where it listens once its socket is bound
/// (`Waybill is listening on http://127.0.0.1:8080`): the line people open, and what scripts and
/// tests that start `waybill serve` wait for (the port actually bound, when asked for port 0).
struct AnnouncingServer: Server {
    let inner: HTTPServer

    var onShutdown: EventLoopFuture<Void> { inner.onShutdown }

    func start(address: BindAddress?) async throws {
        try await inner.start(address: address)
        announce()
    }

    @available(*, noasync)
    func start(address: BindAddress?) throws {
        try inner.start(address: address)
        announce()
    }

    @available(*, deprecated)
    func start(hostname: String?, port: Int?) throws {
        try inner.start(address: .hostname(hostname, port: port))
        announce()
    }

    func shutdown() async { await inner.shutdown() }

    @available(*, noasync)
    func shutdown() { inner.shutdown() }

    private func announce() {
        guard let address = inner.localAddress, let ip = address.ipAddress, let port = address.port else { return }
        let host = ip.contains(":") ? "[\(ip)]" : ip
        // Unbuffered: whoever reads the pipe sees the line at once.
        FileHandle.standardOutput.write(Data("Waybill is listening on http://\(host):\(port)\n".utf8))
    }
}

/// On SIGTERM, before anything else shuts down: stops the HTTP server (no new connections; open ones
/// end after their current answer, within Vapor's shutdown timeout), then waits, up to `timeout`, for
/// handlers still running, so that none reaches for the database after it is closed. (Vapor's own
/// order shuts the databases before the server, and a handler outlives its connection when the
/// client or a balancer hangs up first: a request then crashed the process on its way out.)
public func finishRequests(_ app: Application, timeout: Duration = .seconds(5)) async {
    await app.server.shutdown()
    guard let services = app.waybillIfConfigured else { return }
    let deadline = ContinuousClock.now + timeout
    while services.metrics.requestsInFlight > 0 && ContinuousClock.now < deadline {
        try? await Task.sleep(for: .milliseconds(20))
    }
}

/// Applies pending migrations. On SQLite also switches the file to write-ahead logging, so readers
/// never wait for a writer.
public func migrate(_ app: Application) async throws {
    if case .sqlite = app.waybill.config.database, let sql = app.db.tracedSQL {
        try await sql.raw("PRAGMA journal_mode=WAL").run()
    }
    guard case .postgres(let url, let searchPath) = app.waybill.config.database else {
        // SQLite: a second process started by mistake waits on a file lock instead of failing half-way.
        let lockPath: String
        if case .sqlite(let path) = app.waybill.config.database { lockPath = path + ".migrate-lock" } else { lockPath = "" }
        let fd = open(lockPath, O_CREAT | O_RDWR, 0o600)
        if fd >= 0 { _ = try await app.threadPool.runIfActive { flock(fd, LOCK_EX) } }
        defer { if fd >= 0 { flock(fd, LOCK_UN); close(fd) } }
        try await app.autoMigrate()
        return
    }
    // Several processes may start at once on one PostgreSQL: one migrates while the others wait
    // on an advisory lock (per schema), then find nothing left to do.
    var key: Int64 = 1_469_598_103  // FNV-1a of the schema name, so that schemas do not wait on each other
    for byte in (searchPath ?? "public").utf8 { key = (key ^ Int64(byte)) &* 16_777_619 & 0x7fff_ffff }
    let connection = try await PostgresConnection.connect(
        configuration: try SQLPostgresConfiguration(url: url).coreConfiguration, id: 0, logger: app.logger)
    do {
        _ = try await connection.query("SELECT pg_advisory_lock(\(key))", logger: app.logger)
        try await app.autoMigrate()
        _ = try await connection.query("SELECT pg_advisory_unlock(\(key))", logger: app.logger)
    } catch {
        try? await connection.close()
        throw error
    }
    try await connection.close()
}

/// Stops a thread pool with the application.
struct ThreadPoolShutdown: LifecycleHandler {
    let pool: NIOThreadPool
    func shutdownAsync(_ application: Application) async {
        try? await pool.shutdownGracefully()
    }
}

/// Closes the push HTTP client with the application.
struct HTTPClientShutdown: LifecycleHandler {
    let client: HTTPClient
    func shutdownAsync(_ application: Application) async {
        try? await client.shutdown()
    }
}

final class BackgroundWorkers: LifecycleHandler, Sendable {
    let outbox: OutboxWorker
    let liveFeed: LiveFeed
    private let task = NIOLockedValueBox<Task<Void, Never>?>(nil)

    init(outbox: OutboxWorker, liveFeed: LiveFeed) {
        self.outbox = outbox
        self.liveFeed = liveFeed
    }

    func didBootAsync(_ application: Application) async throws {
        let outbox = self.outbox
        let liveFeed = self.liveFeed
        let clock = application.waybill.clock, random = application.waybill.random
        task.withLockedValue { $0 = Task {
            await withApplicationContext(clock: clock, random: random) {
                async let mail: Void = outbox.run()
                async let live: Void = liveFeed.run()
                async let chores: Void = Self.housekeeping(application)
                async let parcels: Void = Self.pollParcels(application)
                async let webhooks: Void = application.waybill.webhookWorker.run()
                async let dispatch: Void = AutoDispatch.run(application)
                _ = await (mail, live, chores, parcels, webhooks, dispatch)
            }
        } }
    }

    /// Hourly: photos of checkouts abandoned for a day are deleted, webhook deliveries done with
    /// for 30 days leave the log, and messages of conversations past their retention are deleted.
    static func housekeeping(_ app: Application) async {
        while !Task.isCancelled {
            do {
                try await Orders(services: app.waybill, db: app.db, logger: app.logger).deleteAbandonedPhotos()
                try await Webhooks(services: app.waybill, db: app.db, logger: app.logger).deleteOldDeliveries()
                try await OrderImports(services: app.waybill, db: app.db, logger: app.logger).deleteExpiredFiles()
                try await Conversations(services: app.waybill, db: app.db, logger: app.logger).deleteExpired()
                try await Ratings(services: app.waybill, db: app.db, logger: app.logger).publishDue()
            } catch {
                app.logger.warning("Housekeeping (abandoned photos, old webhook deliveries, expired imports) failed: \(String(describing: error))")
            }
            try? await Task.sleep(for: .seconds(3600))
        }
    }

    /// Every minute (`PARCEL_POLL_SECONDS`): parcels of other carriers that are due are asked about
    /// (when an adapter is configured).
    static func pollParcels(_ app: Application) async {
        guard !app.waybill.carrierTrackers.isEmpty else { return }
        while !Task.isCancelled {
            do {
                try await ParcelPoller(services: app.waybill, db: app.db, logger: app.logger).runOnce()
            } catch {
                app.logger.warning("Polling carriers failed: \(String(describing: error))")
            }
            try? await Task.sleep(for: .seconds(app.waybill.config.parcelPollSeconds))
        }
    }

    func shutdownAsync(_ application: Application) async {
        liveFeed.hub.closeAll()
        let running = task.withLockedValue { task -> Task<Void, Never>? in
            defer { task = nil }
            return task
        }
        running?.cancel()
        await running?.value
    }
}
