import Foundation
import Fluent
import FluentPostgresDriver
import PostgresNIO
import NIOConcurrencyHelpers
import SQLKit
import Testing
import Vapor
import VaporTesting
@testable import WaybillServer
import WaybillCore

/// Which database a server test runs against. PostgreSQL is there when `WAYBILL_TEST_POSTGRES_URL` is
/// set (scripts/test sets it).
/// - `both`: tests whose subject is SQL, locking, transactions or concurrency (two requests at once,
///   a migration, an aggregate query, a row lock) run on SQLite and on PostgreSQL in every run.
/// - `available`: every other test runs on SQLite, and on both databases in the full tier
///   (`WAYBILL_TEST_ALL_DATABASES=1`, which `scripts/test full` sets). docs/testing.md lists the split.
enum TestDatabase: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case sqlite, postgres

    static var postgresURL: String? {
        ProcessInfo.processInfo.environment["WAYBILL_TEST_POSTGRES_URL"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// SQLite, and PostgreSQL when it is there: for tests of SQL, locking, transactions and concurrency.
    static var both: [TestDatabase] { postgresURL == nil ? [.sqlite] : [.sqlite, .postgres] }

    /// SQLite; both databases in the full tier.
    static var available: [TestDatabase] {
        ProcessInfo.processInfo.environment["WAYBILL_TEST_ALL_DATABASES"] == "1" ? both : [.sqlite]
    }

    var testDescription: String { rawValue }
}

/// Records mail instead of sending it, so tests can read the codes a person would receive.
final class RecordingMailer: Mailer, Sendable {
    private let box = NIOLockedValueBox<[MailMessage]>([])

    func send(_ message: MailMessage, from: MailAddress) async throws {
        box.withLockedValue { $0.append(message) }
    }

    var messages: [MailMessage] { box.withLockedValue { $0 } }

    /// The 6-digit code in the newest mail to `address`.
    func lastCode(to address: String) -> String? {
        guard let message = messages.last(where: { $0.to.address == address }) else { return nil }
        // The subject carries the code alone; the text may also hold an order reference whose
        // random characters can include six digits in a row.
        return Self.code(in: message.subject) ?? Self.code(in: message.text)
    }

    static func code(in text: String) -> String? {
        var digits = ""
        for character in text {
            if character.isASCII, character.isNumber { digits.append(character) } else {
                if digits.count == 6 { return digits }
                digits = ""
            }
        }
        return digits.count == 6 ? digits : nil
    }
}

/// A Waybill server in memory on a fresh database, with helpers to talk to it as a client would.
struct TestServer: Sendable {
    let app: Application
    let mailer: RecordingMailer
    let database: TestDatabase
    /// The server's clock: the system's until a test moves it forward (`clock.advance`).
    let clock: TestClock

    /// Runs `body` against a fresh, migrated Waybill. Each test gets its own SQLite file or its own
    /// PostgreSQL schema, so tests can run in parallel.
    static func run(
        _ database: TestDatabase,
        mailer: (any Mailer)? = nil,
        push: PushService? = nil,
        adjust: (inout WaybillConfig) -> Void = { _ in },
        random: WaybillRandom = .system,
        sqliteFile: URL? = nil,
        beforeMigrating: ((TestServer) async throws -> Void)? = nil,
        _ body: (TestServer) async throws -> Void
    ) async throws {
        // Every test starts at once. Without a bound, PostgreSQL's servers together ask for more
        // connections than it has (`max_connections`: "too many clients"), and hundreds of servers
        // share two cores: a request then waits minutes for its turn and timeouts meant for a slow
        // answer (a live message within 5 s, a local OSRM within 30 s) fire in a full run only.
        _ = StallWatchdog.started
        await TestSlots.servers.acquire()
        do {
            try await runAcquired(database, mailer: mailer, push: push, adjust: adjust, random: random, sqliteFile: sqliteFile,
                                  beforeMigrating: beforeMigrating, body)
        } catch {
            await TestSlots.servers.release()
            throw error
        }
        await TestSlots.servers.release()
    }

    private static func runAcquired(
        _ database: TestDatabase,
        mailer: (any Mailer)?,
        push: PushService?,
        adjust: (inout WaybillConfig) -> Void,
        random: WaybillRandom,
        sqliteFile: URL?,
        beforeMigrating: ((TestServer) async throws -> Void)?,
        _ body: (TestServer) async throws -> Void
    ) async throws {
        let recording = RecordingMailer()
        let clock = TestClock()
        let app = try await Application.make(.testing)
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("waybill-test-\(UUID().uuidString)")
        let schema = "t_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(20)
        // Migrating takes longer than most tests: a server that starts from nothing in particular
        // starts from a copy of a database migrated once per run (`TestTemplates`). One given a file,
        // or something to do before migrating, migrates as production does.
        let fromTemplate = sqliteFile == nil && beforeMigrating == nil
        var ownDatabase: String?  // PostgreSQL: the database copied for this server, dropped after it
        do {
            let target: WaybillConfig.DatabaseTarget
            switch database {
            case .sqlite:
                target = .sqlite(path: scratch.appendingPathComponent("waybill.sqlite").path)
                // A database made earlier (a migration's fixture) instead of an empty one.
                if let file = try await fromTemplate ? TestTemplates.shared.sqlite() : sqliteFile {
                    try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
                    try FileManager.default.copyItem(at: file, to: scratch.appendingPathComponent("waybill.sqlite"))
                }
            case .postgres:
                guard let url = TestDatabase.postgresURL else { throw TestSkipped() }
                if fromTemplate {
                    let copy = try await TestTemplates.shared.postgresCopy()
                    ownDatabase = copy.name
                    target = .postgres(url: copy.url, searchPath: nil)
                } else {
                    target = .postgres(url: url, searchPath: String(schema))
                }
            }
            var config = Self.config(target, storagePath: scratch.path)
            adjust(&config)
            try await configure(app, config: config, mailer: mailer ?? recording, push: push, clock: clock.waybillClock, random: random)
            // Vapor's in-memory testing asks for `app.responder.current` on every request, and the default
            // one builds a new router from every route each time: a seventh of the test suite's time.
            // The routes are all registered now: one responder serves the test.
            let responder = app.responder.current
            app.responder.use { _ in responder }
            if case .postgres = database, ownDatabase == nil, let sql = app.db as? any SQLDatabase {
                try await sql.raw("CREATE SCHEMA IF NOT EXISTS \(ident: String(schema))").run()
            }
            let server = TestServer(app: app, mailer: recording, database: database, clock: clock)
            try await beforeMigrating?(server)
            try await migrate(app)  // nothing left to do on a copy of the template but check
            try await withTimeLimit(Self.timeLimit) { try await body(server) }
        } catch {
            // PostgresNIO hides the server's message in `description`: say it, or a failure under load
            // cannot be told from another.
            if String(describing: type(of: error)).hasPrefix("PSQL") { print("PostgreSQL error in a test server: \(String(reflecting: error))") }
            await cleanUp(app: app, database: database, schema: String(schema), ownDatabase: ownDatabase, scratch: scratch)
            throw error
        }
        await cleanUp(app: app, database: database, schema: String(schema), ownDatabase: ownDatabase, scratch: scratch)
    }

    /// A test server's configuration on `target`, before the test's own adjustments.
    static func config(_ target: WaybillConfig.DatabaseTarget, storagePath: String) -> WaybillConfig {
        var config = WaybillConfig(
            database: target, publicURL: "http://localhost:8080",
            jwtSecret: Array("test-secret-that-is-long-enough-for-hs256-0123456789".utf8),
            smtp: nil, mailFrom: MailAddress(name: "Waybill", address: "no-reply@waybill.example"),
            storagePath: storagePath,
            bcryptCost: 4  // the real cost is 12; tests that are not about hashing need not pay it
        )
        config.databasePoolSize = 2  // many test servers share one PostgreSQL
        config.ordersPerCustomerPerHour = 1_000_000  // tests place many orders; HardeningTests checks the budget
        // A loaded machine running the whole suite can take longer than 30 s to answer one of many
        // parallel requests; the idle timeout itself is checked by scripts/attack.
        config.httpIdleTimeoutSeconds = 600
        return config
    }

    /// How long a test may take once its database is ready: a test that hangs fails alone instead of
    /// holding up the whole run. Twenty minutes: the order-transition matrix on PostgreSQL took more
    /// than ten in a loaded full run. Not swift-testing's `.timeLimit`: that one also counts the wait for
    /// a test-server slot (`TestSlots`, shared by SQLite and PostgreSQL), and with the whole suite queued on those slots a test can wait
    /// most of ten minutes for its turn (the SDK suites failed that way in full runs, never alone).
    static let timeLimit: Duration = .seconds(1200)

    /// Runs `body`; if it has not finished within `limit`, records an issue, cancels it and throws.
    static func withTimeLimit(_ limit: Duration, _ body: () async throws -> Void) async throws {
        try await withoutActuallyEscaping(body) { body in
            // The body runs in a child task so that the deadline can cancel it; it is awaited before
            // this returns, so it never outlives the closure it came from.
            let work = UncheckedSendable(body)
            try await withThrowingTaskGroup(of: Bool.self) { group in
                group.addTask { try await work.value(); return true }
                group.addTask { try await Task.sleep(for: limit); return false }
                let finished = try await group.next() ?? true
                group.cancelAll()
                if !finished {
                    Issue.record("The test took longer than \(limit) once its database was ready")
                    throw CancellationError()
                }
            }
        }
    }

    private static func cleanUp(app: Application, database: TestDatabase, schema: String, ownDatabase: String?,
                                scratch: URL) async {
        if case .postgres = database, ownDatabase == nil, let sql = app.db as? any SQLDatabase {
            try? await sql.raw("DROP SCHEMA IF EXISTS \(ident: schema) CASCADE").run()
        }
        try? await app.asyncShutdown()
        if let ownDatabase { await TestTemplates.shared.drop(ownDatabase) }
        try? FileManager.default.removeItem(at: scratch)
    }

    var db: any Database { app.db }
    var sql: any SQLDatabase { app.db as! any SQLDatabase }

    /// Delivers what the outbox holds, as the background worker would.
    @discardableResult
    func deliverMail() async throws -> Int { try await app.waybill.outbox.runOnce() }

    /// Delivers pending mail and returns the newest code sent to `email`.
    func code(for email: String) async throws -> String {
        try await deliverMail()
        return try #require(mailer.lastCode(to: email), "no code was mailed to \(email)")
    }

    // MARK: HTTP

    @discardableResult
    func send(_ method: HTTPMethod, _ path: String, json: [String: any Sendable]? = nil, rawBody: String? = nil,
              token: String? = nil, headers extra: [(String, String)] = []) async throws -> Reply {
        var headers = HTTPHeaders()
        var body: ByteBuffer?
        if let json {
            headers.contentType = .json
            body = ByteBuffer(data: try JSONSerialization.data(withJSONObject: json))
        } else if let rawBody {
            headers.contentType = .json
            body = ByteBuffer(string: rawBody)
        }
        if let token { headers.bearerAuthorization = BearerAuthorization(token: token) }
        for (name, value) in extra { headers.replaceOrAdd(name: name, value: value) }
        let response = try await app.testing().sendRequest(method, "/api/v1" + path, headers: headers, body: body)
        return Reply(status: response.status, headers: response.headers, body: response.body)
    }

    /// A part of a multipart/form-data body.
    struct Part: Sendable {
        var name: String
        var bytes: [UInt8]
        var filename: String?
        var contentType: String?

        static func file(_ name: String, _ bytes: [UInt8], type: String? = "application/octet-stream", filename: String = "upload.bin") -> Part {
            Part(name: name, bytes: bytes, filename: filename, contentType: type)
        }
        static func text(_ name: String, _ value: String) -> Part { Part(name: name, bytes: Array(value.utf8)) }
    }

    /// Sends a multipart/form-data request, as a phone app uploading a signature would.
    @discardableResult
    func upload(_ path: String, parts: [Part], token: String?, headers extra: [(String, String)] = []) async throws -> Reply {
        try await upload(.POST, path, parts: parts, token: token, headers: extra)
    }

    func upload(_ method: HTTPMethod, _ path: String, parts: [Part], token: String?, headers extra: [(String, String)] = []) async throws -> Reply {
        let boundary = "waybill-test-\(UUID().uuidString)"
        var body = ByteBuffer()
        for part in parts {
            body.writeString("--\(boundary)\r\n")
            var disposition = "Content-Disposition: form-data; name=\"\(part.name)\""
            if let filename = part.filename { disposition += "; filename=\"\(filename)\"" }
            body.writeString(disposition + "\r\n")
            if let type = part.contentType { body.writeString("Content-Type: \(type)\r\n") }
            body.writeString("\r\n")
            body.writeBytes(part.bytes)
            body.writeString("\r\n")
        }
        body.writeString("--\(boundary)--\r\n")
        var headers = HTTPHeaders()
        headers.replaceOrAdd(name: .contentType, value: "multipart/form-data; boundary=\(boundary)")
        if let token { headers.bearerAuthorization = BearerAuthorization(token: token) }
        for (name, value) in extra { headers.replaceOrAdd(name: name, value: value) }
        let response = try await app.testing().sendRequest(method, "/api/v1" + path, headers: headers, body: body)
        return Reply(status: response.status, headers: response.headers, body: response.body)
    }

    /// A GET outside the JSON API (HTML pages).
    func page(_ method: HTTPMethod = .GET, _ path: String) async throws -> Reply {
        let response = try await app.testing().sendRequest(method, path)
        return Reply(status: response.status, headers: response.headers, body: response.body)
    }

    // MARK: People

    static let password = "correct-horse-battery"

    /// A complete sign-up form.
    static func form(_ email: String, isCompany: Bool = false, password: String = TestServer.password) -> [String: any Sendable] {
        var form: [String: any Sendable] = [
            "firstName": "Ada", "lastName": "Muster", "address": "Bahnhofstrasse 1", "postalCode": "8001",
            "city": "Zürich", "email": email, "password": password, "isCompany": isCompany,
        ]
        if isCompany { form["companyName"] = "Acme SA" }
        return form
    }

    /// Sends the sign-up form without confirming the email.
    @discardableResult
    func register(_ email: String) async throws -> Reply {
        try await send(.POST, "/auth/register", json: Self.form(email))
    }

    /// Registers a customer and confirms their email, as the app's sign-up would.
    @discardableResult
    /// A company is vetted by staff at once (the `invoice` capability: it pays by invoice and
    /// imports) unless `vetted` is false, as an operator's `waybill user grant --capability invoice` does.
    func registerCustomer(_ email: String, isCompany: Bool = false, vetted: Bool = true, password: String = TestServer.password) async throws -> Reply {
        let registered = try await send(.POST, "/auth/register", json: Self.form(email, isCompany: isCompany, password: password))
        try #require(registered.status == .created, "register: \(registered)")
        let verified = try await send(.POST, "/auth/verify-email", json: ["email": email, "code": try await code(for: email)])
        try #require(verified.status == .ok, "verify: \(verified)")
        if isCompany, vetted {
            let user = try #require(try await User.query(on: db).filter(\.$email == email.lowercased()).first())
            try await db.transaction { db in
                try await Accounts.setStaffCapabilities(user, to: Capability.parseList(user.staffCapabilities).union([.invoice]), by: nil, on: db)
            }
        }
        return registered
    }

    /// Signs in and returns the token pair.
    func login(_ email: String, password: String = TestServer.password) async throws -> Tokens {
        let reply = try await send(.POST, "/auth/login", json: ["email": email, "password": password])
        try #require(reply.status == .ok, "login \(email): \(reply)")
        return Tokens(access: try #require(reply.json["accessToken"].string),
                      refresh: try #require(reply.json["refreshToken"].string),
                      userID: try #require(reply.json["user"]["id"].string))
    }

    /// Creates a verified account of any role directly, as `waybill user create` does.
    @discardableResult
    /// A staff account named after its email ("luca@…" is Luca), with a last name nobody else has.
    func createAccount(_ email: String, role: Role, password: String = TestServer.password) async throws -> Tokens {
        let hash = try await app.waybill.passwords.hash(password)
        let first = String(email.prefix { $0 != "@" && $0 != "." && $0 != "-" }).capitalized
        let user = User(role: role, email: email, passwordHash: hash, firstName: first, lastName: "Zurbriggen-\(role.rawValue.capitalized)",
                        emailVerifiedAt: Date())
        try await db.transaction { db in
            try await user.create(on: db)
            try await Accounts.recordGrants(of: user, by: nil, on: db)
        }
        return try await login(email, password: password)
    }
}


struct TestSkipped: Error {}

/// A clock tests move forward instead of sleeping: from a fixed start, or (without one) the system
/// time, plus however far the test moved it.
final class TestClock: Sendable {
    private let start: Date?
    private let offset = NIOLockedValueBox<TimeInterval>(0)

    init(_ start: Date? = nil) { self.start = start }

    /// The push tests' clock: a fixed moment, so tokens' times are known.
    static func fixed() -> TestClock { TestClock(Date(timeIntervalSince1970: 1_800_000_000)) }

    func advance(by seconds: TimeInterval) { offset.withLockedValue { $0 += seconds } }

    /// Moves the clock on to the next 08:00 in Zurich, for tests about a working day (drivers' shifts
    /// end at midnight there) that would otherwise depend on the hour they run at.
    func advanceToMorning() {
        let zurich = TimeZone(identifier: "Europe/Zurich")!
        let nowMillis = Int64(now.timeIntervalSince1970 * 1000)
        // The next 08:00: less than a day ahead, so positions stamped with the system's time still count.
        let today = LocalDate.at(nowMillis, in: zurich)
        let morning = LocalClock.instant(today, minute: 8 * 60, in: zurich)
        let next = morning > nowMillis ? morning : LocalClock.instant(today.adding(days: 1)!, minute: 8 * 60, in: zurich)
        advance(by: TimeInterval(next - nowMillis) / 1000)
    }
    func advance(minutes: Double) { advance(by: minutes * 60) }

    var now: Date { (start ?? Date()).addingTimeInterval(offset.withLockedValue { $0 }) }
    var function: @Sendable () -> Date { { self.now } }

    var waybillClock: WaybillClock { WaybillClock { [self] in now } }

    /// Runs `body` (which calls services directly, outside any request) on this clock.
    func run<T: Sendable>(_ body: () async throws -> T) async rethrows -> T {
        try await UnixTime.$clock.withValue(waybillClock, operation: body)
    }
}

struct Tokens: Sendable {
    var access: String
    var refresh: String
    var userID: String
}

struct Reply: Sendable, CustomStringConvertible {
    let status: HTTPResponseStatus
    let headers: HTTPHeaders
    let body: ByteBuffer

    var json: JSON { JSON(data: Data(buffer: body)) }
    var errorCode: String? { json["error"]["code"].string }
    var text: String { String(buffer: body) }
    /// The body without its request id (`"requestId":"…"`, different for every request): two answers
    /// that must not tell accounts apart are compared this way.
    var textWithoutRequestID: String { text.replacingOccurrences(of: #","requestId":"[^"]*""#, with: "", options: .regularExpression) }
    var description: String { "\(status.code) \(text)" }
}

/// Read-only access into a JSON document for assertions.
struct JSON: @unchecked Sendable {
    let value: Any?

    init(value: Any?) { self.value = value }
    init(data: Data) { value = try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]) }

    subscript(key: String) -> JSON { JSON(value: (value as? [String: Any])?[key]) }
    subscript(index: Int) -> JSON {
        guard let array = value as? [Any], array.indices.contains(index) else { return JSON(value: nil) }
        return JSON(value: array[index])
    }
    var string: String? { value as? String }
    var int: Int? { (value as? NSNumber)?.intValue }
    var double: Double? { (value as? NSNumber)?.doubleValue }
    var bool: Bool? { (value as? NSNumber).map { $0.boolValue } }
    var array: [JSON] { (value as? [Any] ?? []).map { JSON(value: $0) } }
    var keys: Set<String> { Set((value as? [String: Any])?.keys.map { $0 } ?? []) }
    var exists: Bool { value != nil && !(value is NSNull) }
}

/// Carries a value the compiler cannot prove sendable to a child task that is awaited before its
/// owner goes on (`TestServer.withTimeLimit`).
struct UncheckedSendable<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

/// A bound on test servers alive at once (an async semaphore): each PostgreSQL one holds a pool of
/// up to `databasePoolSize` connections per core, a live listener and its migrations' connection.
actor TestSlots {
    /// On SQLite and PostgreSQL alike. 24 servers × (2 × 2 pooled + 1 listener + 1 migrating) stays well
    /// under the 500 connections scripts/test gives PostgreSQL, and keeps two cores busy: tests also
    /// wait (on local receivers, on clocks) while they hold a slot.
    static let servers = TestSlots(24)

    private var free: Int
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(_ count: Int) { free = count }

    func acquire() async {
        if free > 0 {
            free -= 1
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    func release() {
        if waiting.isEmpty { free += 1 } else { waiting.removeFirst().resume() }
    }
}

/// Databases migrated once per test process: each test server starts from a copy instead of running
/// every migration again (a file copy on SQLite, `CREATE DATABASE … TEMPLATE` on PostgreSQL). The
/// migrations themselves are still tested: by the servers given a file or a step before migrating,
/// and by the template itself, made by `migrate` on an empty database as production does.
actor TestTemplates {
    static let shared = TestTemplates()

    private var sqliteTemplate: Task<URL, any Error>?
    private var postgresTemplate: Task<(name: String, strategy: String), any Error>?

    /// The migrated SQLite file to copy.
    func sqlite() async throws -> URL {
        if let sqliteTemplate { return try await sqliteTemplate.value }
        let task = Task<URL, any Error> {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("waybill-template-\(UUID().uuidString)")
            let file = folder.appendingPathComponent("waybill.sqlite")
            try await Self.migrateOnce(.sqlite(path: file.path), storagePath: folder.path)
            // Shutting down checkpointed the write-ahead log into the file: the file is the whole database.
            if FileManager.default.fileExists(atPath: file.path + "-wal") {
                throw TemplateError(description: "the template's write-ahead log was left beside it")
            }
            return file
        }
        sqliteTemplate = task
        return try await task.value
    }

    /// A new PostgreSQL database copied from the migrated template, and the URL to reach it.
    func postgresCopy() async throws -> (name: String, url: String) {
        let template: (name: String, strategy: String)
        if let postgresTemplate { template = try await postgresTemplate.value } else {
            let task = Task<(name: String, strategy: String), any Error> { try await Self.makePostgresTemplate() }
            postgresTemplate = task
            template = try await task.value
        }
        let name = "wbt_\(getpid())_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(16)
        try await Self.administer("CREATE DATABASE \(name) TEMPLATE \(template.name)\(template.strategy)")
        return (name, try Self.url(database: name))
    }

    func drop(_ name: String) async {
        try? await Self.administer("DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
    }

    /// The template's name, and how to copy it: from PostgreSQL 15 on, `STRATEGY FILE_COPY` copies the
    /// files as they are (a tenth of a second) instead of writing them through the write-ahead log
    /// page by page (what 15 does by default); earlier versions copy files and know no STRATEGY.
    private static func makePostgresTemplate() async throws -> (name: String, strategy: String) {
        // Templates and copies of test processes that ended without cleaning up (a crash, a ^C).
        let leftovers = try await administer("SELECT datname FROM pg_database WHERE datname LIKE 'wbt\\_%'")
        for name in leftovers {
            let pid = name.split(separator: "_").dropFirst().first.flatMap { Int32($0) }
            if let pid, pid != getpid(), kill(pid, 0) != 0 {
                _ = try? await administer("DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
            }
        }
        let name = "wbt_\(getpid())_template"
        try await administer("DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
        try await administer("CREATE DATABASE \(name)")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("waybill-template-\(UUID().uuidString)")
        try await migrateOnce(.postgres(url: try url(database: name), searchPath: nil), storagePath: folder.path)
        try? FileManager.default.removeItem(at: folder)
        let version = try await administer("SHOW server_version_num").first.flatMap { Int($0) } ?? 0
        return (name, version >= 150_000 ? " STRATEGY FILE_COPY" : "")
    }

    /// Configures a server on `target` as the tests do, migrates it and shuts it down.
    private static func migrateOnce(_ target: WaybillConfig.DatabaseTarget, storagePath: String) async throws {
        let app = try await Application.make(.testing)
        do {
            try await configure(app, config: TestServer.config(target, storagePath: storagePath), mailer: RecordingMailer())
            try await migrate(app)
        } catch {
            try? await app.asyncShutdown()
            throw error
        }
        try await app.asyncShutdown()
    }

    /// `WAYBILL_TEST_POSTGRES_URL` with another database.
    private static func url(database: String) throws -> String {
        guard let given = TestDatabase.postgresURL, var components = URLComponents(string: given) else { throw TestSkipped() }
        components.path = "/" + database
        guard let url = components.string else { throw TemplateError(description: "cannot make a URL for \(database)") }
        return url
    }

    /// Runs one statement on the database `WAYBILL_TEST_POSTGRES_URL` names (outside any transaction,
    /// as CREATE and DROP DATABASE want) and returns the first column of its rows as text.
    @discardableResult
    private static func administer(_ statement: String) async throws -> [String] {
        guard let given = TestDatabase.postgresURL else { throw TestSkipped() }
        let logger = Logger(label: "waybill.test-templates")
        let connection = try await PostgresConnection.connect(
            configuration: try SQLPostgresConfiguration(url: given).coreConfiguration, id: 0, logger: logger)
        do {
            var names: [String] = []
            for try await row in try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger) {
                names.append(try row.decode(String.self))
            }
            try await connection.close()
            return names
        } catch {
            try? await connection.close()
            throw error
        }
    }

    struct TemplateError: Error, CustomStringConvertible {
        var description: String
    }
}
