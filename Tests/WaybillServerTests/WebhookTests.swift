import Foundation
import Testing
import Vapor
@testable import WaybillServer
import WaybillClient
import WaybillCore

/// Integrators' endpoints against a local HTTPS receiver that checks signatures as integrators
/// are told to, answers errors, redirects and does not answer at all.
@Suite("Webhooks: signed deliveries to integrators' endpoints, retried, logged, refused where they must be")
struct WebhookTests {
    static let shipmentEvents = ["shipment.placed", "shipment.assigned", "shipment.accepted", "shipment.picked_up",
                                 "shipment.delivered", "shipment.failed", "shipment.cancelled"]

    /// The receiver is on this machine: allowed, as in development. Fifteen seconds to answer: a
    /// loaded CI machine can take more than a second over a local TLS handshake, and an attempt the
    /// receiver got but the worker gave up on is a failure (tests of timeouts use `quickTimeout`).
    static func local(_ config: inout WaybillConfig) {
        config.webhooksAllowPrivate = true
        config.webhookTimeoutSeconds = 15
    }

    /// Eight seconds to answer, for the test of a receiver that does not answer in time: short enough
    /// to wait for, long enough that a loaded machine answers the other attempts within it (at two
    /// seconds the full suite once saw a plain 500 time out).
    static func quickTimeout(_ config: inout WaybillConfig) {
        local(&config)
        config.webhookTimeoutSeconds = 8
    }

    /// A test server (configured by `adjust`) and a local receiver it trusts.
    static func withReceiver(_ db: TestDatabase, adjust: (inout WaybillConfig) -> Void = local,
                             _ body: (TestServer, FakeWebhookReceiver) async throws -> Void) async throws {
        try await FakeWebhookReceiver.with { receiver in
            try await TestServer.run(db, adjust: adjust) { server in
                connect(server, receiver)
                try await body(server, receiver)
            }
        }
    }

    static func connect(_ server: TestServer, _ receiver: FakeWebhookReceiver) {
        server.app.waybill.webhookWorker.trust([receiver.certificate])
        let clock = server.clock
        receiver.useClock { clock.now }
    }

    /// Registers an endpoint at `path` of the receiver, which then knows its secret.
    static func register(_ server: TestServer, _ receiver: FakeWebhookReceiver, _ path: String, events: [String],
                         scope: String = "own", token: String) async throws -> String {
        let reply = try await server.send(.POST, "/webhook-endpoints", json: ["url": receiver.url(path), "events": events, "scope": scope],
                                          token: token)
        try #require(reply.status == .created, "\(reply)")
        let secret = try #require(reply.json["secret"].string)
        #expect(secret.hasPrefix("whsec_"))
        receiver.use(secret: secret, at: path)
        return try #require(reply.json["id"].string)
    }

    /// What a worker would send by now.
    static func sendDue(_ server: TestServer) async throws {
        for _ in 0..<5 { _ = try await server.app.waybill.run { try await server.app.waybill.webhookWorker.runOnce() } }
    }

    static func log(_ server: TestServer, _ endpoint: String, token: String) async throws -> Reply {
        let reply = try await server.send(.GET, "/webhook-endpoints/\(endpoint)/deliveries", token: token)
        try #require(reply.status == .ok, "\(reply)")
        return reply
    }

    @Test("A dispatcher's endpoint hears a whole delivery in order, each signed; the sender's own endpoint hears theirs; nobody else's",
          arguments: TestDatabase.available)
    func companyAndOwnEndpoints(db: TestDatabase) async throws {
        try await Self.withReceiver(db) { server, receiver in
            let cast = try await server.cast()
            let company = try await Self.register(server, receiver, "/company", events: Self.shipmentEvents, scope: "company", token: cast.manager.access)
            _ = try await Self.register(server, receiver, "/ada", events: ["shipment.placed", "shipment.delivered"], token: cast.customer.access)
            _ = try await Self.register(server, receiver, "/bob", events: Self.shipmentEvents, token: cast.otherCustomer.access)
            // Only dispatchers hear the company's shipments.
            let refused = try await server.send(.POST, "/webhook-endpoints", json: ["url": receiver.url("/x"), "events": ["shipment.placed"], "scope": "company"],
                                                token: cast.driver.access)
            #expect(refused.status == .forbidden, "\(refused)")

            let id = try await server.placeOrder(cast.customer.access)
            try await server.advance(id, to: .delivered, cast: cast)
            try await Self.sendDue(server)

            let heard = receiver.received(at: "/company")
            #expect(heard.map(\.type) == ["shipment.placed", "shipment.assigned", "shipment.accepted", "shipment.picked_up", "shipment.delivered"])
            #expect(heard.allSatisfy { $0.verified && $0.shipmentID?.lowercased() == id.lowercased() })
            #expect(heard.allSatisfy { $0.headers.first(name: "Waybill-Event") == $0.type })
            #expect(Set(heard.compactMap { $0.json["id"] as? String }).count == 5, "one event id each")
            #expect(heard.allSatisfy { ($0.json["version"] as? String) == WebhookPayload.version })
            #expect(receiver.received(at: "/ada").map(\.type) == ["shipment.placed", "shipment.delivered"])
            #expect(receiver.received(at: "/ada").allSatisfy { $0.verified })
            #expect(receiver.received(at: "/bob").isEmpty, "another customer's shipment")

            let log = try await Self.log(server, company, token: cast.manager.access)
            #expect(log.json["items"].array.count == 5)
            #expect(log.json["items"][0]["eventType"].string == "shipment.delivered")
            #expect(log.json["items"][0]["status"].string == "delivered")
            #expect(log.json["items"][0]["attemptLog"][0]["statusCode"].int == 200)
            // Nobody else reads the log.
            #expect(try await server.send(.GET, "/webhook-endpoints/\(company)/deliveries", token: cast.customer.access).status == .notFound)
        }
    }

    @Test("A failing endpoint is retried with backoff while later events about the same shipment wait; timeouts and redirects are failures; every attempt is logged; redelivery by hand keeps the event id",
          arguments: TestDatabase.available)
    func retriesInOrder(db: TestDatabase) async throws {
        try await Self.withReceiver(db, adjust: Self.quickTimeout) { server, receiver in
            let cast = try await server.cast()
            let endpoint = try await Self.register(server, receiver, "/ada", events: ["shipment.placed", "shipment.cancelled"],
                                                   token: cast.customer.access)
            receiver.answer(.status(500), .hang(seconds: 20), .redirect(receiver.url("/elsewhere")))
            let id = try await server.placeOrder(cast.customer.access)
            #expect(try await server.send(.POST, "/orders/\(id)/cancel", json: ["reason": "changed my mind"], token: cast.customer.access).status == .ok)

            try await Self.sendDue(server)
            #expect(receiver.received(at: "/ada").map(\.type) == ["shipment.placed"], "the cancellation waits behind the placement")
            var log = try await Self.log(server, endpoint, token: cast.customer.access)
            let placed = try #require(log.json["items"].array.first { $0["eventType"].string == "shipment.placed" })
            #expect(placed["status"].string == "pending" && placed["attempts"].int == 1 && placed["lastStatusCode"].int == 500)
            let cancelled = try #require(log.json["items"].array.first { $0["eventType"].string == "shipment.cancelled" })
            #expect(cancelled["attempts"].int == 0)

            server.clock.advance(by: 61)  // 1 minute: no answer within the eight seconds allowed
            try await Self.sendDue(server)
            server.clock.advance(by: 301)  // 5 minutes: a redirect, not followed
            try await Self.sendDue(server)
            #expect(receiver.received(at: "/elsewhere").isEmpty)
            server.clock.advance(by: 1801)  // 30 minutes: answered; the cancellation follows at once
            try await Self.sendDue(server)
            #expect(receiver.received(at: "/ada").map(\.type) == ["shipment.placed", "shipment.placed", "shipment.placed", "shipment.placed", "shipment.cancelled"])

            log = try await Self.log(server, endpoint, token: cast.customer.access)
            let attempts = try #require(log.json["items"].array.first { $0["eventType"].string == "shipment.placed" })
            #expect(attempts["status"].string == "delivered")
            let tries = attempts["attemptLog"].array
            #expect(tries.map { $0["statusCode"].int } == [500, nil, 302, 200])
            #expect(tries[1]["error"].string?.contains("no answer") == true)
            #expect(tries[2]["error"].string?.contains("redirect") == true)

            // By hand: the same event again, with the same id.
            let original = try #require(attempts["id"].string)
            let again = try await server.send(.POST, "/webhook-endpoints/\(endpoint)/deliveries/\(original)/redeliveries", token: cast.customer.access)
            #expect(again.status == .accepted, "\(again)")
            try await Self.sendDue(server)
            let last = try #require(receiver.received(at: "/ada").last)
            #expect(last.type == "shipment.placed" && last.headers.first(name: "Waybill-Event-Id") == attempts["eventId"].string)

            // A ping, signed like the rest.
            #expect(try await server.send(.POST, "/webhook-endpoints/\(endpoint)/pings", token: cast.customer.access).status == .accepted)
            try await Self.sendDue(server)
            #expect(receiver.received(at: "/ada").last.map { $0.type == "ping" && $0.verified } == true)
        }
    }

    @Test("An endpoint that fails for three days is turned off and its owner told; turned on again, it hears new events",
          arguments: TestDatabase.available)
    func disabledAfterDays(db: TestDatabase) async throws {
        try await Self.withReceiver(db) { server, receiver in
            let cast = try await server.cast()
            let endpoint = try await Self.register(server, receiver, "/ada", events: ["shipment.placed"], token: cast.customer.access)
            for _ in 0..<40 { receiver.answer(.status(503)) }
            _ = try await server.placeOrder(cast.customer.access)
            for _ in 0..<12 {
                try await Self.sendDue(server)
                server.clock.advance(by: 10 * 3600)
            }
            let seen = try await server.send(.GET, "/webhook-endpoints/\(endpoint)", token: cast.customer.access)
            #expect(seen.json["enabled"].bool == false && seen.json["disabledReason"].string == "failing", "\(seen)")
            let told = try await server.send(.GET, "/notifications", token: cast.customer.access)
            #expect(told.json["items"].array.contains { $0["kind"].string == "webhook_disabled" }, "\(told)")
            let tries = receiver.received(at: "/ada").count
            #expect(tries >= 7 && tries <= 12, "retried along the schedule: \(tries)")

            // Fixed and turned on again: new events arrive.
            receiver.clearAnswers()
            let on = try await server.send(.PATCH, "/webhook-endpoints/\(endpoint)", json: ["enabled": true], token: cast.customer.access)
            #expect(on.json["enabled"].bool == true && on.json["disabledReason"].exists == false, "\(on)")
            _ = try await server.placeOrder(cast.customer.access)
            for _ in 0..<40 {
                try await Self.sendDue(server)
                if receiver.received(at: "/ada").last?.headers.first(name: "Waybill-Event") != nil,
                   try await Self.log(server, endpoint, token: cast.customer.access).json["items"][0]["status"].string == "delivered" { break }
                server.clock.advance(by: 3600)
            }
            #expect(try await Self.log(server, endpoint, token: cast.customer.access).json["items"][0]["status"].string == "delivered")
        }
    }

    @Test("Outside development, plain http is refused and an address that resolves to loopback or a private network gets nothing",
          arguments: TestDatabase.available)
    func privateAddressesRefused(db: TestDatabase) async throws {
        // The server as in production: no private addresses, https only.
        try await Self.withReceiver(db, adjust: { _ in }) { server, receiver in
            let cast = try await server.cast()
            let plain = try await server.send(.POST, "/webhook-endpoints", json: ["url": "http://hooks.example.com/x", "events": ["shipment.placed"]],
                                              token: cast.customer.access)
            #expect(plain.status == .unprocessableEntity && plain.json["error"]["fields"]["url"].string == "https_required", "\(plain)")
            let unknown = try await server.send(.POST, "/webhook-endpoints", json: ["url": "https://hooks.example.com/x", "events": ["order.teleported"]],
                                                token: cast.customer.access)
            #expect(unknown.status == .badRequest || unknown.status == .unprocessableEntity, "\(unknown)")
            let loopback = try await Self.register(server, receiver, "/ada", events: ["shipment.placed"], token: cast.customer.access)
            let privateNet = try await server.send(.POST, "/webhook-endpoints", json: ["url": "https://10.1.2.3/hook", "events": ["shipment.placed"]],
                                                   token: cast.customer.access)
            let privateID = try #require(privateNet.json["id"].string)
            _ = try await server.placeOrder(cast.customer.access)
            try await Self.sendDue(server)
            #expect(receiver.received.isEmpty)
            for endpoint in [loopback, privateID] {
                let log = try await Self.log(server, endpoint, token: cast.customer.access)
                #expect(log.json["items"][0]["lastError"].string?.contains("not a public address") == true, "\(log)")
            }
        }
    }

    @Test("The Python and JavaScript verification code in docs/examples accepts a real delivery and refuses a changed one",
          arguments: [TestDatabase.sqlite])
    func documentedVerifiers(db: TestDatabase) async throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        try await Self.withReceiver(db) { server, receiver in
            let cast = try await server.cast()
            let endpoint = try await Self.register(server, receiver, "/ada", events: ["shipment.placed"], token: cast.customer.access)
            #expect(try await server.send(.POST, "/webhook-endpoints/\(endpoint)/pings", token: cast.customer.access).status == .accepted)
            try await Self.sendDue(server)
            let delivery = try #require(receiver.received(at: "/ada").first)
            #expect(delivery.verified)
            let secretReply = try await server.send(.POST, "/webhook-endpoints/\(endpoint)/secret", token: cast.customer.access)
            #expect(secretReply.status == .ok)
            // The secret the delivery was signed with (rotated just now, so the old one is kept here).
            let header = try #require(delivery.headers.first(name: "Waybill-Signature"))
            var tampered = delivery.body
            tampered[tampered.count - 2] ^= 0x01
            var verifiers: [[String]] = [["/usr/bin/env", "python3", root.appendingPathComponent("docs/examples/verify_webhook.py").path]]
            if FileManager.default.isExecutableFile(atPath: "/usr/bin/node") {
                verifiers.append(["/usr/bin/node", root.appendingPathComponent("docs/examples/verify-webhook.mjs").path])
            } else {
                Issue.record("node is not installed (scripts/test installs nodejs): the JavaScript example was not run")
            }
            let secret = try #require(receiver.secret(at: "/ada"))
            for command in verifiers {
                let good = try await Self.run(command + [secret, header], stdin: delivery.body)
                #expect(good.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "valid", "\(command): \(good)")
                let bad = try await Self.run(command + [secret, header], stdin: tampered)
                #expect(bad.stdout.hasPrefix("invalid") && bad.status != 0, "\(command): \(bad)")
            }
        }
    }

    @Test("Trip requests reach the sender's and the traveller's own endpoints as each of them sees the request; a followed parcel's news reaches its owner's; company endpoints hear neither",
          arguments: TestDatabase.available)
    func personalEvents(db: TestDatabase) async throws {
        let carriers = try await FakeCarriers.start()
        do {
            try await Self.withReceiver(db, adjust: { config in
                Self.local(&config)
                config.carriers = CarrierSettings(dhlAPIKey: FakeCarriers.dhlKey, dhlAPIBase: carriers.baseURL,
                                                  laPosteAPIKey: FakeCarriers.laPosteKey, laPosteAPIBase: carriers.baseURL)
            }) { server, receiver in
                let (cast, trip) = try await TripRequestTests.setUp(server)
                let personal = ["trip_request.created", "trip_request.accepted", "trip_request.declined", "parcel.updated"]
                _ = try await Self.register(server, receiver, "/ada", events: personal, token: cast.customer.access)
                _ = try await Self.register(server, receiver, "/bob", events: personal, token: cast.otherCustomer.access)
                _ = try await Self.register(server, receiver, "/company", events: personal + ["shipment.placed"], scope: "company", token: cast.manager.access)

                let sent = try await server.send(.POST, "/trips/\(trip)/requests", json: TripRequestTests.request(), token: cast.otherCustomer.access)
                let request = try #require(sent.json["id"].string, "\(sent)")
                #expect(try await server.send(.POST, "/trip-requests/\(request)/accept", token: cast.customer.access).status == .ok)
                let number = "00340434292135100124"
                carriers.setDHL(number, status: "transit", events: [("2026-11-20T18:40:00+01:00", "transit", "Processed in the parcel center", "Köln")])
                let parcel = try #require(try await server.send(.POST, "/parcels", json: ["number": number], token: cast.otherCustomer.access).json["id"].string)
                #expect(try await ParcelPollingTests.poll(server) == 1)
                try await Self.sendDue(server)

                func tripRequest(_ r: FakeWebhookReceiver.Received) -> [String: Any]? { (r.json["data"] as? [String: Any])?["tripRequest"] as? [String: Any] }
                let traveller = receiver.received(at: "/ada")
                #expect(traveller.map(\.type) == ["trip_request.created", "trip_request.accepted"])
                #expect(traveller.allSatisfy { $0.verified && (tripRequest($0)?["id"] as? String)?.lowercased() == request.lowercased() })
                // The traveller's view: no receiver's email before the sender paid.
                #expect(traveller.allSatisfy { (tripRequest($0)?["receiver"] as? [String: Any])?["email"] == nil })
                let sender = receiver.received(at: "/bob")
                #expect(sender.map(\.type) == ["trip_request.created", "trip_request.accepted", "parcel.updated"])
                #expect((tripRequest(sender[0])?["receiver"] as? [String: Any])?["email"] as? String == "bea@example.com")
                let news = try #require(sender.last.flatMap { $0.json["data"] as? [String: Any] })
                #expect((news["parcel"] as? [String: Any])?["id"] as? String == parcel && news["previousStatus"] as? String == "pending")
                #expect((news["newEvents"] as? [Any])?.count == 1)
                #expect(receiver.received(at: "/company").allSatisfy { $0.type?.hasPrefix("shipment.") == true }, "people's own requests and parcels stay theirs")
            }
        } catch {
            await carriers.stop()
            throw error
        }
        await carriers.stop()
    }

    @Test("The SDK and the CLI register an endpoint, send a test event, read the log and send it again; the SDK's verifier accepts the delivery",
          arguments: TestDatabase.available)
    func sdkAndCLI(db: TestDatabase) async throws {
        try await Self.withReceiver(db) { server, receiver in
            _ = try await server.cast()
            try await server.serving { port in
                let ada = server.sdk(port: port)
                try await ada.signIn(email: "ada@example.com", password: TestServer.password)
                let endpoint = try await ada.addWebhookEndpoint(url: receiver.url("/sdk"), events: [.shipmentDelivered, .parcelUpdated], description: "ERP")
                let secret = try #require(endpoint.secret)
                receiver.use(secret: secret, at: "/sdk")
                let id = try #require(UUID(uuidString: endpoint.id))
                _ = try await ada.pingWebhookEndpoint(id)
                try await Self.sendDue(server)
                let delivery = try #require(receiver.received(at: "/sdk").first)
                try WaybillWebhooks.verify(body: delivery.body, signatureHeader: delivery.headers.first(name: "Waybill-Signature") ?? "",
                                           secret: secret, now: server.clock.now)
                let log = try await ada.webhookDeliveries(id)
                #expect(log.first?.status == .delivered && log.first?.attemptLog.first?.statusCode == 200)

                let cli = CLI(server: "http://127.0.0.1:\(port)", sessionFile: NSTemporaryDirectory() + "/wb-cli-\(UUID().uuidString).json")
                _ = try await cli.run(["login", "--email", "ada@example.com", "--password", TestServer.password])
                let added = try await cli.run(["webhook", "add", receiver.url("/cli"), "--event", "shipment.placed", "--event", "shipment.delivered"])
                #expect(added.status == 0 && added.stdout.contains("Signing secret (shown once): whsec_"), "\(added)")
                let listed = try await cli.run(["webhook", "list"])
                #expect(listed.stdout.contains(receiver.url("/cli")) && listed.stdout.contains(receiver.url("/sdk")), "\(listed)")
                let shown = try await cli.run(["webhook", "show", endpoint.id])
                #expect(shown.stdout.contains("ping  delivered"), "\(shown)")
                let deliveryID = try #require(log.first?.id)
                let again = try await cli.run(["webhook", "redeliver", endpoint.id, deliveryID])
                #expect(again.status == 0 && again.stdout.contains("pending"), "\(again)")
                let off = try await cli.run(["webhook", "off", endpoint.id])
                #expect(off.stdout.contains("off (by_owner)"), "\(off)")
                #expect(try await cli.run(["webhook", "add", "ftp://files.example.com", "--event", "shipment.placed"]).status != 0)
            }
        }
    }

    @Test("Two workers (two processes on one database) send each delivery once, and each shipment's events in order",
          arguments: TestDatabase.both)
    func twoWorkers(db: TestDatabase) async throws {
        try await Self.withReceiver(db) { server, receiver in
            let cast = try await server.cast()
            _ = try await Self.register(server, receiver, "/ada", events: ["shipment.placed", "shipment.cancelled"], token: cast.customer.access)
            var ids: [String] = []
            for _ in 0..<6 {
                let id = try await server.placeOrder(cast.customer.access)
                #expect(try await server.send(.POST, "/orders/\(id)/cancel", json: ["reason": "test"], token: cast.customer.access).status == .ok)
                ids.append(id.lowercased())
            }
            let services = server.app.waybill
            let other = WebhookWorker(db: { server.app.db }, services: { services }, writeLock: server.app.writeLock, codes: services.codes,
                                      logger: server.app.logger, group: server.app.eventLoopGroup, timeoutSeconds: 15, allowPrivate: true)
            other.trust([receiver.certificate])
            for _ in 0..<8 {
                async let first = services.run { try await services.webhookWorker.runOnce(limit: 5) }
                async let second = services.run { try await other.runOnce(limit: 5) }
                _ = try await (first, second)
            }
            let heard = receiver.received(at: "/ada")
            let eventIDs = heard.compactMap { $0.json["id"] as? String }
            #expect(heard.count == 12 && Set(eventIDs).count == 12, "each of the 12 events once: \(heard.count)")
            for id in ids {
                #expect(heard.filter { $0.shipmentID?.lowercased() == id }.map(\.type) == ["shipment.placed", "shipment.cancelled"])
            }
        }
    }

    static func run(_ command: [String], stdin: [UInt8]) async throws -> CLI.Result {
        let child = try Spawned(command[0], Array(command.dropFirst()), environment: ProcessInfo.processInfo.environment, input: true)
        try child.stdin?.write(contentsOf: Data(stdin))
        try child.stdin?.close()
        return await CLI.finish(child)
    }
}
