import Fluent
import Foundation
import NIOPosix
import NIOSSL
import Testing
import Vapor
@testable import WaybillServer
import WaybillCore

/// The SMTP sink started by scripts/test (scripts/smtp-sink.py, built on aiosmtpd): plain SMTP,
/// STARTTLS with AUTH, and implicit TLS with AUTH, each on its own port, saving every message it
/// accepts as a file. Without it these tests are skipped.
enum SMTPSink {
    static var environment: [String: String] { ProcessInfo.processInfo.environment }
    static var available: Bool { environment["WAYBILL_TEST_SMTP_DIR"] != nil }
    static var directory: String { environment["WAYBILL_TEST_SMTP_DIR"]! }
    static func port(_ name: String) -> Int { Int(environment[name] ?? "") ?? 0 }
    static var caFile: String { environment["WAYBILL_TEST_SMTP_CA"]! }

    static func settings(_ security: SMTPSettings.Security) throws -> SMTPSettings {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .file(caFile)
        switch security {
        case .none:
            return SMTPSettings(host: "localhost", port: port("WAYBILL_TEST_SMTP_PORT"), security: .none, tls: tls)
        case .startTLS:
            return SMTPSettings(host: "localhost", port: port("WAYBILL_TEST_SMTP_STARTTLS_PORT"), security: .startTLS,
                                username: "waybill", password: "sink-password", tls: tls)
        case .implicitTLS:
            return SMTPSettings(host: "localhost", port: port("WAYBILL_TEST_SMTP_TLS_PORT"), security: .implicitTLS,
                                username: "waybill", password: "sink-password", tls: tls)
        }
    }

    /// The message containing `marker` that the sink saved. The sink writes each message before it
    /// answers 250 to its DATA (scripts/smtp-sink.py), so once the sending side has that answer the
    /// file is there: read once, no waiting.
    static func message(containing marker: String) async throws -> String {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        for file in files {
            if let text = try? String(contentsOfFile: directory + "/" + file, encoding: .utf8), text.contains(marker) {
                return text
            }
        }
        throw NotInSink(marker: marker)
    }

    struct NotInSink: Error { let marker: String }
}

@Suite("Mail: outbox and SMTP")
struct MailTests {
    @Test("A failed delivery stays in the outbox and goes out once the mail server is back", arguments: TestDatabase.both)
    func outboxSurvivesSMTPFailure(db: TestDatabase) async throws {
        // A real SMTP client pointed at a port where nothing listens: every delivery fails.
        let closedPort = SMTPSettings(host: "127.0.0.1", port: 1, security: .none)
        let failing = SMTPMailer(settings: closedPort, group: MultiThreadedEventLoopGroup.singleton, timeout: .seconds(2))
        try await TestServer.run(db, mailer: failing) { server in
            let registered = try await server.register("patient@example.com")
            #expect(registered.status == .created)
            #expect(try await server.deliverMail() == 0)

            let queued = try #require(try await OutboxMessage.query(on: server.db).first())
            #expect(queued.status == .pending)
            #expect(queued.attempts == 1)
            #expect(queued.lastError != nil)
            #expect(queued.nextAttemptAt > UnixTime.nowMillis, "the retry waits")
            #expect(queued.payload != nil)

            // The mail server recovers; when the retry is due, a worker delivers the message.
            let recovered = RecordingMailer()
            let worker = OutboxWorker(db: { server.app.db }, writeLock: server.app.writeLock, mailer: recovered, from: MailAddress(address: "no-reply@waybill.example"), logger: server.app.logger)
            #expect(try await worker.runOnce() == 0, "not before the retry is due")
            queued.nextAttemptAt = UnixTime.nowMillis
            try await queued.save(on: server.db)
            #expect(try await worker.runOnce() == 1)
            #expect(try await worker.runOnce() == 0, "delivered once")
            #expect(recovered.messages.count == 1)
            let code = try #require(recovered.lastCode(to: "patient@example.com"))
            #expect(try await server.send(.POST, "/auth/verify-email", json: ["email": "patient@example.com", "code": code]).status == .ok)

            let sent = try #require(try await OutboxMessage.find(queued.id, on: server.db))
            #expect(sent.status == .sent)
            #expect(sent.payload == nil, "delivered codes do not linger in the database")
        }
    }

    @Test("A mail sent again after a crash carries the same Message-ID, so mail systems keep one copy",
          arguments: [TestDatabase.sqlite])
    func stableMessageID(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            try await server.register("ada@example.com")
            let row = try #require(try await OutboxMessage.query(on: server.db).filter(\.$kind == Outbox.mailKind).first())
            try await server.deliverMail()
            // The process died after the mail server said 250 but before the row was marked sent.
            try await server.sql.update(OutboxMessage.schema).set("status", to: "pending").set("next_attempt_at", to: 0)
                .where("id", .equal, row.id!).run()
            try await server.sql.update(OutboxMessage.schema).set("payload", to: row.payload!).where("id", .equal, row.id!).run()
            try await server.deliverMail()
            let sent = server.mailer.messages.filter { $0.to.address == "ada@example.com" }
            #expect(sent.count == 2)
            #expect(Set(sent.map(\.messageID)) == ["outbox-\(row.id!.uuidString.lowercased())"])
            let rendered = MIMEMessage.render(sent[0], from: MailAddress(name: "Waybill", address: "no-reply@waybill.example"), heloName: "x")
            #expect(rendered.contains("Message-ID: <outbox-\(row.id!.uuidString.lowercased())@waybill.example>"))
        }
    }

    @Test("Retries back off: 5 s, 10 s, 20 s … up to an hour")
    func backoff() {
        #expect(Outbox.backoffSeconds(afterAttempts: 1) == 5)
        #expect(Outbox.backoffSeconds(afterAttempts: 2) == 10)
        #expect(Outbox.backoffSeconds(afterAttempts: 3) == 20)
        #expect(Outbox.backoffSeconds(afterAttempts: 30) == 3600)
    }

    @Test("The mail, queued in the same transaction as the account, is not sent when the account is not created", arguments: TestDatabase.both)
    func noMailForFailedRegistration(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            try await server.registerCustomer("once@example.com")
            let before = try await OutboxMessage.query(on: server.db).count()
            try await server.register("once@example.com")
            #expect(try await OutboxMessage.query(on: server.db).count() == before)
        }
    }

    @Test("SMTP delivery to a real server: plain, STARTTLS with AUTH, implicit TLS with AUTH",
          .enabled(if: SMTPSink.available), arguments: [SMTPSettings.Security.none, .startTLS, .implicitTLS])
    func smtpDelivery(security: SMTPSettings.Security) async throws {
        let mailer = SMTPMailer(settings: try SMTPSink.settings(security), group: MultiThreadedEventLoopGroup.singleton)
        let marker = "marker-\(UUID().uuidString)"
        try await mailer.send(
            MailMessage(to: MailAddress(name: "Zoë Müller", address: "zoe@example.com"), subject: "Grüezi \(marker)",
                        text: "Ligne 1 — été\n.\nA line with a lone dot above.\n\(marker)"),
            from: MailAddress(name: "Waybill", address: "no-reply@waybill.example"))
        let received = try await SMTPSink.message(containing: "X-Waybill-Sink-Marker: \(marker)")
        #expect(received.contains("X-Waybill-Sink-Security: \(security.rawValue)"))
        #expect(received.contains("Ligne 1 — été\n.\nA line with a lone dot above."))
        #expect(received.contains("Grüezi"))
    }

    @Test("Registration mails its code through SMTP", .enabled(if: SMTPSink.available))
    func registrationThroughSMTP() async throws {
        let mailer = SMTPMailer(settings: try SMTPSink.settings(.startTLS), group: MultiThreadedEventLoopGroup.singleton)
        try await TestServer.run(.sqlite, mailer: mailer) { server in
            let email = "smtp-\(UUID().uuidString.prefix(8).lowercased())@example.com"
            _ = try await server.send(.POST, "/auth/register", json: [
                "firstName": "Sam", "lastName": "Tp", "address": "a 1", "postalCode": "1000", "city": "Bern",
                "email": email, "password": TestServer.password, "isCompany": false,
            ])
            #expect(try await server.deliverMail() == 1)
            let received = try await SMTPSink.message(containing: "X-Waybill-Sink-Rcpt: \(email)")
            // The code from the subject line: the raw message's other headers (dates, ids) may hold six digits too.
            let subject = try #require(received.split(separator: "\n").first { $0.hasPrefix("Subject:") }, "\(received)")
            let code = try #require(RecordingMailer.code(in: String(subject)))
            let verified = try await server.send(.POST, "/auth/verify-email", json: ["email": email, "code": code])
            #expect(verified.status == .ok, "\(verified) for \(subject)")
        }
    }

    @Test("Credentials are refused over plain SMTP; bad SMTP_URLs fail at start-up")
    func smtpURLParsing() throws {
        let starttls = try SMTPSettings(url: "smtp+starttls://user%40x:p%3Ass@mail.example:2525")
        #expect(starttls.security == .startTLS)
        #expect(starttls.username == "user@x")
        #expect(starttls.password == "p:ss")
        #expect(starttls.port == 2525)
        #expect(try SMTPSettings(url: "smtps://u:p@mail.example").port == 465)
        #expect(try SMTPSettings(url: "smtp://relay.local").port == 25)
        #expect(throws: ConfigurationError.self) { try SMTPSettings(url: "smtp://u:p@relay.local") }
        #expect(throws: ConfigurationError.self) { try SMTPSettings(url: "http://relay.local") }
    }
}
