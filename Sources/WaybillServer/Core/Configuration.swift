import Foundation
import Vapor
import Crypto
import WaybillCore

/// Everything Waybill reads from its environment, read here and nowhere else.
///
/// | variable | meaning |
/// |---|---|
/// | `DATABASE_URL` | `sqlite:///abs/path/file.sqlite`, `sqlite://relative.sqlite` (default `waybill.sqlite` in the working directory) or `postgres://user:pass@host:port/db` |
/// | `PUBLIC_URL` | the address people reach Waybill at, for links in mail (default `http://localhost:8080`) |
/// | `JWT_SECRET` | signing key for access tokens, at least 32 bytes; generated once into `STORAGE_PATH` in development |
/// | `SMTP_URL` | `smtp://host:port`, `smtp+starttls://user:pass@host:port`, `smtps://user:pass@host:port`; unset = mail to the log |
/// | `MAIL_FROM` | sender of every mail (default `Waybill <no-reply@localhost>`) |
/// | `STORAGE_PATH` | data folder for generated keys and uploads (default `./data`) |
/// | `BCRYPT_COST` | bcrypt work factor, 10…16 (default 12) |
/// | `LOG_LEVEL` | read by Vapor's logging bootstrap: trace, debug, info, notice, warning, error, critical |
/// | `LIVE_ALLOWED_ORIGINS` | comma-separated origins a browser may open the live channel from (default: `PUBLIC_URL`'s) |
/// | `DATABASE_POOL_SIZE` | PostgreSQL connections per event loop (one loop per core), default 4 |
/// | `ETA_AVERAGE_SPEED_KMH` | average door-to-door speed for arrival estimates (default 25) |
/// | `APNS_*`, `FCM_*`, `VAPID_*` | push notifications: see `PushSettings` |
/// | `TRUSTED_PROXIES` | reverse proxies (CIDR list) whose forwarding headers name the client |
/// | `LIVE_MAX_SOCKETS_PER_ACCOUNT`, `LIVE_MAX_SOCKETS_PER_ADDRESS`, `LIVE_PUBLIC_TICKETS_PER_MINUTE` | live channel limits |
/// | `HTTP_IDLE_TIMEOUT_SECONDS` | silent connections (slow headers included, and a request still being worked on: Vapor's idle timer counts both directions) are closed after this |
/// | `ORDERS_PER_CUSTOMER_PER_HOUR` | orders one customer may place per hour (and requests one sender may send to travellers) |
/// | `IMPORTED_ORDERS_PER_DAY` | orders one account may place by importing files, per day (default 10,000) |
/// | `TRIP_REQUEST_ANSWER_HOURS` | hours a traveller has to answer a request (default 48; never past the trip's departure) |
/// | `TRIP_REQUEST_PAY_MINUTES` | minutes a sender has to pay an accepted request (default 120) |
/// | `CHAT_CLOSE_DAYS` | days after a shipment or request ends that its conversation becomes read-only (default 14) |
/// | `RATINGS_MIN_COUNT` | published ratings before a person's or a carrier's average is shown (default 3) |
/// | `CHAT_RETENTION_DAYS` | days after a conversation closes that its messages are deleted (default 365) |
/// | `PAYOUT_COUNTRY` | the country (ISO 3166-1 alpha-2) travellers' payout accounts are opened in (default CH) |
/// | `STRIPE_CONNECT_WEBHOOK_SECRET` | signing secret of the Stripe Connect webhook endpoint (account events) |
/// | `DHL_API_KEY`, `DHL_API_BASE` | DHL Shipment Tracking – Unified (parcels of other carriers); unset: off |
/// | `UPS_`, `FEDEX_`, `USPS_`, `GLS_` + `CLIENT_ID`, `CLIENT_SECRET`, `API_BASE` | OAuth client credentials of those carriers' tracking APIs; unset: off |
/// | `LAPOSTE_API_KEY`, `LAPOSTE_API_BASE` | La Poste Suivi v2; unset: off |
/// | `INBOUND_MAIL_DOMAIN` | domain of the forwarding addresses for shipping confirmations (its mail piped to `waybill inbound-mail`); unset: off |
/// | `PARCEL_POLL_SECONDS` | seconds between two rounds of the parcel poller (default 60) |
/// | `WEBHOOK_TIMEOUT_SECONDS` | how long an integrator's endpoint has to answer a delivery (default 10) |
/// | `METRICS_TOKEN` | the bearer token Prometheus sends to `/metrics` (16+ characters); without it `/metrics` is off |
/// | `OTEL_EXPORTER_OTLP_ENDPOINT` | an OpenTelemetry collector (OTLP/HTTP): traces of requests and database calls; unset: off (see `WaybillTracing`) |
/// | `WEBHOOKS_ALLOW_PRIVATE` | `1`: development only; endpoints may be `http://` and on private or loopback addresses (refused in production) |
/// | `WEB_SESSION_IDLE_MINUTES` | a web session unused this long ends |
/// | `ROUTING_MATRIX_URL` | an OSRM server (`http://osrm:5000`) whose table service gives route planning its road distances; unset: straight lines |
/// | `ROUTING_MATRIX_PROFILE`, `ROUTING_MATRIX_MAX_LOCATIONS` | its profile (default `driving`) and `--max-table-size` (default 100) |
/// | `ROUTING_DETOUR_FACTOR`, `ROUTING_SPEED_KMH` | straight-line planning: road distance = straight line × factor (default 1.3), driven at this speed (default 30) |
/// | `MAIL_TO_LOG` | `1`: production may run without `SMTP_URL`, writing mail to the log |
public struct WaybillConfig: Sendable {
    public enum DatabaseTarget: Sendable, Equatable {
        case sqlite(path: String)
        /// `searchPath` puts Waybill's tables in one PostgreSQL schema (tests use one per test).
        case postgres(url: String, searchPath: String? = nil)
    }

    public var database: DatabaseTarget
    public var publicURL: String
    public var jwtSecret: [UInt8]
    public var smtp: SMTPSettings?
    public var mailFrom: MailAddress
    public var storagePath: String
    public var bcryptCost: Int
    /// Stripe Checkout for card and TWINT; nil means the sandbox payment page.
    public var stripe: StripeSettings? = nil
    /// Origins (scheme://host[:port]) a browser may open the live channel from. A request without
    /// an `Origin` header (a native app) is not a browser and is let through to the ticket check.
    public var liveAllowedOrigins: [String] = []
    /// Average door-to-door speed for arrival estimates, detours and stops included.
    public var etaAverageSpeedKmh: Double = 25
    /// PostgreSQL connections per event loop.
    public var databasePoolSize = 4
    /// SQLite: reads outside transactions and write transactions on Waybill's own connections, on
    /// the caller's thread (`SQLiteReaders`, `SQLiteWriter`); false: every statement through SQLiteNIO.
    public var sqliteDirect = true
    /// Orders' details and pages kept for a second (`ReadCaches`); `ORDER_READ_CACHE=0` to compare.
    public var orderReadCache = true
    /// Position reports accepted per driver and second (twice that in a burst).
    var positionReportsPerSecond: Double = 4
    /// How many reports a driver may send at once before the rate applies (twice the rate unless set).
    var positionReportBurst: Double?
    /// Unknown tracking links answered per client address and second, after a burst of 30.
    var trackingMissesPerSecond: Double = 0.5
    /// APNs, FCM and Web Push credentials; a service without them logs pushes instead.
    var push = PushSettings()
    /// The web app's map tiles (`{z}/{x}/{y}` template) and their attribution.
    public var mapTileURL = "https://tile.openstreetmap.org/{z}/{x}/{y}.png"
    public var mapAttribution = "© OpenStreetMap contributors"
    /// Where the web app's maps open before they have a point to show: latitude, longitude.
    public var mapCenter: (Double, Double) = (46.948, 7.447)
    /// The time zone the web app shows times in.
    public var displayTimeZone = TimeZone(identifier: "Europe/Zurich") ?? .gmt
    /// Folder of third-party files for the web app (Leaflet, from scripts/setup-assets).
    public var vendorAssetsPath = "Public/vendor"
    /// Reverse proxies whose `Forwarded` / `X-Forwarded-For` name the client (`TRUSTED_PROXIES`).
    public var trustedProxies: [CIDR] = []
    /// Live connections one account may hold open in one process, and one client address.
    public var liveMaxSocketsPerAccount = 20
    public var liveMaxSocketsPerAddress = 200
    /// Live tickets for tracking links per client address and minute.
    public var livePublicTicketsPerMinute = 20
    /// Seconds a connection may stay silent (half-sent headers included) before it is closed.
    public var httpIdleTimeoutSeconds = 30
    /// Orders one customer may place per hour.
    public var ordersPerCustomerPerHour = 30
    /// Orders one account may place by importing files, per day (`OrderImportPolicy`).
    public var importedOrdersPerDay = OrderImportPolicy.defaultImportedOrdersPerDay
    /// Days a subscription plan keeps applying after a renewal failed (`SUBSCRIPTION_GRACE_DAYS`).
    public var subscriptionGraceDays = SubscriptionPolicy.defaultGraceDays
    /// An unanswered request for a place on a trip expires after this many hours (or when the trip leaves).
    public var tripRequestAnswerHours = 48
    /// An accepted request not paid within this many minutes lapses and frees its room.
    public var tripRequestPayMinutes = 120
    /// Days after its subject ends that a conversation becomes read-only.
    public var chatCloseDays = ConversationPolicy.defaultCloseAfterDays
    /// Days after a conversation closes that its messages are deleted.
    public var chatRetentionDays = ConversationPolicy.defaultRetentionDays
    /// Published ratings before a person's or a carrier's average is shown.
    public var ratingsMinimumCount = RatingPolicy.defaultMinimumCount
    /// Seconds between two rounds of the parcel poller (which parcels are due is decided per parcel).
    public var parcelPollSeconds = 60
    /// The domain of forwarding addresses (`parcels+TOKEN@domain`); nil: no mail is received.
    public var inboundMailDomain: String?
    /// Seconds an integrator's endpoint has to answer one webhook delivery.
    public var webhookTimeoutSeconds = 10
    /// The bearer token `/metrics` asks for; nil: `/metrics` is off (404).
    public var metricsToken: String?
    /// Development only: webhook endpoints may be plain HTTP and on private, loopback or link-local
    /// addresses (a receiver on the developer's machine). Never in production.
    public var webhooksAllowPrivate = false
    /// Where travellers' payout accounts are opened (Stripe needs a country).
    public var payoutCountry = "CH"
    /// The carriers' tracking APIs (parcels of other carriers): each off without its key.
    public var carriers = CarrierSettings()
    /// Minutes a web session may go unused before it ends.
    public var webSessionIdleMinutes = 12 * 60
    /// Where route planning's distances come from.
    public var routing = RoutingSettings()

    /// `PUBLIC_URL` as a WebSocket origin (`wss://` under https): where the live channel is opened.
    var liveSocketBase: String {
        publicURL.hasPrefix("https://") ? "wss://" + publicURL.dropFirst(8) : "ws://" + publicURL.dropFirst(7)
    }

    /// The tile server's origin, for the pages' Content-Security-Policy.
    var mapTileOrigin: String? {
        guard let url = URL(string: mapTileURL.replacingOccurrences(of: "{", with: "").replacingOccurrences(of: "}", with: "")),
              url.host != nil else { return nil }
        return Self.origin(of: url).replacingOccurrences(of: "https://s.", with: "https://*.")
    }

    public init(
        database: DatabaseTarget, publicURL: String, jwtSecret: [UInt8], smtp: SMTPSettings?,
        mailFrom: MailAddress, storagePath: String, bcryptCost: Int
    ) {
        self.database = database
        self.publicURL = publicURL
        self.jwtSecret = jwtSecret
        self.smtp = smtp
        self.mailFrom = mailFrom
        self.storagePath = storagePath
        self.bcryptCost = bcryptCost
        self.liveAllowedOrigins = URL(string: publicURL).map { [Self.origin(of: $0)] } ?? []
    }

    /// Reads the configuration. In production a missing `JWT_SECRET` is an error; in development a
    /// random key is made once and kept in the data folder, so tokens survive restarts.
    public static func fromEnvironment(
        _ env: [String: String] = ProcessInfo.processInfo.environment,
        isProduction: Bool,
        logger: Logger
    ) throws -> WaybillConfig {
        func value(_ name: String) -> String? {
            guard let v = env[name]?.trimmingCharacters(in: .whitespaces), !v.isEmpty else { return nil }
            return v
        }
        let storagePath = value("STORAGE_PATH") ?? "data"
        let database = try value("DATABASE_URL").map(parseDatabaseURL) ?? .sqlite(path: "waybill.sqlite")

        let secret: [UInt8]
        if let provided = value("JWT_SECRET") {
            guard provided.utf8.count >= 32 else {
                throw ConfigurationError("JWT_SECRET must be at least 32 bytes (256 bits) of random data, e.g. `openssl rand -base64 48`.")
            }
            secret = Array(provided.utf8)
        } else if isProduction {
            throw ConfigurationError("JWT_SECRET is required in production (at least 32 random bytes, e.g. `openssl rand -base64 48`).")
        } else {
            secret = try loadOrCreateDevelopmentSecret(storagePath: storagePath, logger: logger)
        }

        let smtp = try value("SMTP_URL").map(SMTPSettings.init(url:))
        let mailFrom = try MailAddress(parsing: value("MAIL_FROM") ?? "Waybill <no-reply@localhost>")
            .orThrow(ConfigurationError("MAIL_FROM must be an address such as `Waybill <no-reply@example.com>`."))

        var cost = 12
        if let raw = value("BCRYPT_COST") {
            guard let parsed = Int(raw), (10...16).contains(parsed) else {
                throw ConfigurationError("BCRYPT_COST must be a number from 10 to 16.")
            }
            cost = parsed
        }
        let publicURL = value("PUBLIC_URL").map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 } ?? "http://localhost:8080"
        guard let url = URL(string: publicURL), url.scheme == "http" || url.scheme == "https", url.host != nil else {
            throw ConfigurationError("PUBLIC_URL must be an absolute http(s) URL, such as https://waybill.example.com.")
        }
        var config = WaybillConfig(
            database: database, publicURL: publicURL, jwtSecret: secret, smtp: smtp,
            mailFrom: mailFrom, storagePath: storagePath, bcryptCost: cost
        )
        config.liveAllowedOrigins = [Self.origin(of: url)]
        if let raw = value("LIVE_ALLOWED_ORIGINS") {
            config.liveAllowedOrigins = try raw.split(separator: ",").map { part in
                let text = part.trimmingCharacters(in: .whitespaces)
                guard let url = URL(string: text), url.scheme == "http" || url.scheme == "https", url.host != nil else {
                    throw ConfigurationError("LIVE_ALLOWED_ORIGINS must list origins such as https://app.example.com, separated by commas.")
                }
                return Self.origin(of: url)
            }
        }
        if let raw = value("ETA_AVERAGE_SPEED_KMH") {
            guard let speed = Double(raw), speed >= 1, speed <= 200 else {
                throw ConfigurationError("ETA_AVERAGE_SPEED_KMH must be a number of km/h from 1 to 200.")
            }
            config.etaAverageSpeedKmh = speed
        }
        if let raw = value("DATABASE_POOL_SIZE") {
            guard let size = Int(raw), (1...64).contains(size) else {
                throw ConfigurationError("DATABASE_POOL_SIZE must be a number of connections per event loop, 1 to 64.")
            }
            config.databasePoolSize = size
        }
        if let raw = value("SQLITE_DIRECT") {
            guard raw == "0" || raw == "1" else { throw ConfigurationError("SQLITE_DIRECT must be 1 (the default) or 0.") }
            config.sqliteDirect = raw == "1"
        }
        if let raw = value("ORDER_READ_CACHE") {
            guard raw == "0" || raw == "1" else { throw ConfigurationError("ORDER_READ_CACHE must be 1 (the default) or 0.") }
            config.orderReadCache = raw == "1"
        }
        if let raw = value("MAP_TILE_URL") {
            guard raw.hasPrefix("https://") || raw.hasPrefix("http://"), raw.contains("{z}"), raw.contains("{x}"), raw.contains("{y}") else {
                throw ConfigurationError("MAP_TILE_URL must be an http(s) URL template with {z}, {x} and {y}.")
            }
            config.mapTileURL = raw
        }
        if let raw = value("MAP_ATTRIBUTION") { config.mapAttribution = raw }
        if let raw = value("MAP_CENTER") {
            let parts = raw.split(separator: ",").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
            guard parts.count == 2, (-90...90).contains(parts[0]), (-180...180).contains(parts[1]) else {
                throw ConfigurationError("MAP_CENTER must be latitude,longitude, such as 46.948,7.447.")
            }
            config.mapCenter = (parts[0], parts[1])
        }
        if let raw = value("DISPLAY_TIME_ZONE") {
            guard let zone = TimeZone(identifier: raw) else {
                throw ConfigurationError("DISPLAY_TIME_ZONE must be a time zone name, such as Europe/Zurich.")
            }
            config.displayTimeZone = zone
        }
        if let raw = value("VENDOR_ASSETS_PATH") { config.vendorAssetsPath = raw }
        if let raw = value("TRUSTED_PROXIES") {
            switch CIDR.parseList(raw) {
            case .success(let blocks): config.trustedProxies = blocks
            case .failure(let bad):
                throw ConfigurationError("TRUSTED_PROXIES must list addresses or CIDR blocks (10.0.0.0/8, ::1), separated by commas; `\(bad.text)` is neither.")
            }
        }
        func number(_ name: String, _ range: ClosedRange<Int>, _ meaning: String) throws -> Int? {
            guard let raw = value(name) else { return nil }
            guard let parsed = Int(raw), range.contains(parsed) else {
                throw ConfigurationError("\(name) must be \(meaning) from \(range.lowerBound) to \(range.upperBound).")
            }
            return parsed
        }
        // Generous upper bounds: load tests and busy company accounts raise these far above the defaults.
        if let n = try number("LIVE_MAX_SOCKETS_PER_ACCOUNT", 1...10_000_000, "a number of connections") { config.liveMaxSocketsPerAccount = n }
        if let n = try number("LIVE_MAX_SOCKETS_PER_ADDRESS", 1...10_000_000, "a number of connections") { config.liveMaxSocketsPerAddress = n }
        if let n = try number("LIVE_PUBLIC_TICKETS_PER_MINUTE", 1...10_000_000, "a number of tickets") { config.livePublicTicketsPerMinute = n }
        if let n = try number("HTTP_IDLE_TIMEOUT_SECONDS", 1...3_600, "a number of seconds") { config.httpIdleTimeoutSeconds = n }
        if let n = try number("ORDERS_PER_CUSTOMER_PER_HOUR", 1...100_000_000, "a number of orders") { config.ordersPerCustomerPerHour = n }
        if let n = try number("IMPORTED_ORDERS_PER_DAY", 1...100_000_000, "a number of orders") { config.importedOrdersPerDay = n }
        if let n = try number("SUBSCRIPTION_GRACE_DAYS", SubscriptionPolicy.graceDaysRange, "a number of days") { config.subscriptionGraceDays = n }
        if let n = try number("TRIP_REQUEST_ANSWER_HOURS", 1...720, "a number of hours") { config.tripRequestAnswerHours = n }
        if let n = try number("TRIP_REQUEST_PAY_MINUTES", 5...10_080, "a number of minutes") { config.tripRequestPayMinutes = n }
        if let n = try number("CHAT_CLOSE_DAYS", 0...3_650, "a number of days") { config.chatCloseDays = n }
        if let n = try number("CHAT_RETENTION_DAYS", 1...36_500, "a number of days") { config.chatRetentionDays = n }
        if let n = try number("RATINGS_MIN_COUNT", 1...1_000, "a number of ratings") { config.ratingsMinimumCount = n }
        if let n = try number("PARCEL_POLL_SECONDS", 1...3_600, "a number of seconds") { config.parcelPollSeconds = n }
        if let n = try number("WEBHOOK_TIMEOUT_SECONDS", 1...60, "a number of seconds") { config.webhookTimeoutSeconds = n }
        if let token = value("METRICS_TOKEN"), !token.isEmpty {
            guard token.count >= 16 else { throw ConfigurationError("METRICS_TOKEN must be at least 16 characters (a random secret).") }
            config.metricsToken = token
        }
        if value("WEBHOOKS_ALLOW_PRIVATE") == "1" {
            guard !isProduction else {
                throw ConfigurationError("WEBHOOKS_ALLOW_PRIVATE is for development: in production webhooks never go to private or loopback addresses.")
            }
            config.webhooksAllowPrivate = true
        }
        if let domain = value("INBOUND_MAIL_DOMAIN") {
            guard domain.count <= 200, domain.contains("."), domain.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "-") }) else {
                throw ConfigurationError("INBOUND_MAIL_DOMAIN must be a domain name such as in.courier.example.")
            }
            config.inboundMailDomain = domain.lowercased()
        }
        for (keyName, baseName) in [("DHL_API_KEY", "DHL_API_BASE"), ("LAPOSTE_API_KEY", "LAPOSTE_API_BASE")] {
            guard let base = value(baseName) else { continue }
            guard let url = URL(string: base), url.scheme == "https" || url.scheme == "http", url.host != nil else {
                throw ConfigurationError("\(baseName) must be an absolute URL such as https://api.example.com (for \(keyName)).")
            }
        }
        config.carriers = CarrierSettings(
            dhlAPIKey: value("DHL_API_KEY"), dhlAPIBase: (value("DHL_API_BASE") ?? "https://api-eu.dhl.com").trimmingCharacters(in: CharacterSet(charactersIn: "/")),
            laPosteAPIKey: value("LAPOSTE_API_KEY"), laPosteAPIBase: (value("LAPOSTE_API_BASE") ?? "https://api.laposte.fr").trimmingCharacters(in: CharacterSet(charactersIn: "/")))
        for (prefix, defaultBase, name) in CarrierSettings.oauthCarriers {
            let id = value("\(prefix)_CLIENT_ID"), secret = value("\(prefix)_CLIENT_SECRET")
            guard id != nil || secret != nil else { continue }
            guard let id, let secret else { throw ConfigurationError("\(name) needs both \(prefix)_CLIENT_ID and \(prefix)_CLIENT_SECRET.") }
            let base = value("\(prefix)_API_BASE") ?? defaultBase
            guard let url = URL(string: base), url.scheme == "https" || url.scheme == "http", url.host != nil else {
                throw ConfigurationError("\(prefix)_API_BASE must be an absolute URL such as \(defaultBase).")
            }
            let credentials = CarrierCredentials(clientID: id, clientSecret: secret, base: base.trimmingCharacters(in: CharacterSet(charactersIn: "/")))
            switch prefix {
            case "UPS": config.carriers.ups = credentials
            case "FEDEX": config.carriers.fedex = credentials
            case "USPS": config.carriers.usps = credentials
            default: config.carriers.gls = credentials
            }
        }
        if let raw = value("PAYOUT_COUNTRY") {
            guard raw.count == 2, raw.unicodeScalars.allSatisfy({ ("A"..."Z").contains($0) }) else {
                throw ConfigurationError("PAYOUT_COUNTRY must be a two-letter country code in capitals, such as CH.")
            }
            config.payoutCountry = raw
        }
        if let n = try number("WEB_SESSION_IDLE_MINUTES", 5...525_600, "a number of minutes") { config.webSessionIdleMinutes = n }
        if let base = value("ROUTING_MATRIX_URL") {
            guard let url = URL(string: base), url.scheme == "https" || url.scheme == "http", url.host != nil else {
                throw ConfigurationError("ROUTING_MATRIX_URL must be an OSRM server's address, such as http://osrm:5000.")
            }
            config.routing.matrixURL = base.trimmingCharacters(in: CharacterSet(charactersIn: "/"))
        }
        if let profile = value("ROUTING_MATRIX_PROFILE") {
            guard profile.count <= 40, profile.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) else {
                throw ConfigurationError("ROUTING_MATRIX_PROFILE must be a profile name such as driving.")
            }
            config.routing.profile = profile
        }
        if let n = try number("ROUTING_MATRIX_MAX_LOCATIONS", 2...100_000, "a number of coordinates") { config.routing.maxLocationsPerRequest = n }
        for (name, range, apply) in [("ROUTING_DETOUR_FACTOR", 1.0...5.0, { (c: inout WaybillConfig, v: Double) in c.routing.detourFactor = v }),
                                     ("ROUTING_SPEED_KMH", 1.0...200.0, { (c: inout WaybillConfig, v: Double) in c.routing.speedKmh = v })] {
            guard let raw = value(name) else { continue }
            guard let v = Double(raw), range.contains(v) else {
                throw ConfigurationError("\(name) must be a number from \(range.lowerBound) to \(range.upperBound).")
            }
            apply(&config, v)
        }
        // Mail to the log in production would put reset codes in the log: only when asked for.
        if isProduction, smtp == nil, value("MAIL_TO_LOG") != "1" {
            throw ConfigurationError("SMTP_URL is required in production (mail carries sign-up and reset codes). To write mail to the log instead, set MAIL_TO_LOG=1.")
        }
        config.push = try PushSettings.fromEnvironment(env)
        if let key = value("STRIPE_SECRET_KEY") {
            let base = value("STRIPE_API_BASE") ?? "https://api.stripe.com"
            guard let baseURL = URL(string: base), baseURL.scheme == "https" || baseURL.scheme == "http", baseURL.host != nil else {
                throw ConfigurationError("STRIPE_API_BASE must be an absolute URL such as https://api.stripe.com.")
            }
            let webhookSecret = value("STRIPE_WEBHOOK_SECRET")
            if webhookSecret == nil {
                logger.warning("STRIPE_WEBHOOK_SECRET is not set: Stripe webhooks are refused; payments are confirmed when the customer returns or the app calls /payment/confirm.")
            }
            config.stripe = StripeSettings(secretKey: key, webhookSecret: webhookSecret,
                                           apiBase: base.hasSuffix("/") ? String(base.dropLast()) : base,
                                           connectWebhookSecret: value("STRIPE_CONNECT_WEBHOOK_SECRET"))
        } else if value("STRIPE_WEBHOOK_SECRET") != nil {
            throw ConfigurationError("STRIPE_WEBHOOK_SECRET is set but STRIPE_SECRET_KEY is not.")
        }
        return config
    }

    /// `scheme://host[:port]` in lower case, the way browsers send `Origin`.
    static func origin(of url: URL) -> String {
        let scheme = (url.scheme ?? "http").lowercased()
        var text = "\(scheme)://\((url.host ?? "").lowercased())"
        if let port = url.port, !(scheme == "http" && port == 80), !(scheme == "https" && port == 443) { text += ":\(port)" }
        return text
    }

    static func parseDatabaseURL(_ raw: String) throws -> DatabaseTarget {
        if raw.hasPrefix("postgres://") || raw.hasPrefix("postgresql://") || raw.hasPrefix("postgres+") {
            return .postgres(url: raw.replacingOccurrences(of: "postgresql://", with: "postgres://"))
        }
        if raw.hasPrefix("sqlite://") {
            // sqlite:///absolute/path.sqlite → /absolute/path.sqlite; sqlite://relative.sqlite →
            // relative to the working directory.
            let path = String(raw.dropFirst("sqlite://".count))
            guard !path.isEmpty, path != "/" else { throw ConfigurationError("DATABASE_URL names no SQLite file.") }
            return .sqlite(path: path)
        }
        throw ConfigurationError("DATABASE_URL must start with sqlite:// or postgres://.")
    }

    private static func loadOrCreateDevelopmentSecret(storagePath: String, logger: Logger) throws -> [UInt8] {
        let fm = FileManager.default
        try fm.createDirectory(atPath: storagePath, withIntermediateDirectories: true)
        let path = storagePath + "/jwt-secret"
        if let data = fm.contents(atPath: path), data.count >= 32 {
            return Array(data)
        }
        let key = SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) }
        guard fm.createFile(atPath: path, contents: Data(key), attributes: [.posixPermissions: 0o600]) else {
            throw ConfigurationError("Could not write the development signing key to \(path).")
        }
        logger.notice("Generated a development JWT signing key in \(path). Set JWT_SECRET in production.")
        return key
    }
}

/// Stripe's keys, from `STRIPE_SECRET_KEY`, `STRIPE_WEBHOOK_SECRET` and `STRIPE_API_BASE`.
public struct StripeSettings: Sendable, Equatable {
    public var secretKey: String
    public var webhookSecret: String?
    public var apiBase: String
    /// The Connect endpoint's own signing secret (`STRIPE_CONNECT_WEBHOOK_SECRET`): account events
    /// of travellers' payout accounts.
    public var connectWebhookSecret: String?

    public init(secretKey: String, webhookSecret: String?, apiBase: String = "https://api.stripe.com", connectWebhookSecret: String? = nil) {
        self.secretKey = secretKey
        self.webhookSecret = webhookSecret
        self.apiBase = apiBase
        self.connectWebhookSecret = connectWebhookSecret
    }
}

public struct ConfigurationError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

extension Optional {
    func orThrow(_ error: @autoclosure () -> some Error) throws -> Wrapped {
        guard let self else { throw error() }
        return self
    }
}
