import Fluent
import Foundation
import Testing
import Vapor
@testable import WaybillServer
import WaybillCore

/// Travellers are paid through Stripe Connect (issue "Travellers", item 7): onboarding, the
/// status from `account.updated`, transfers drawn on the sender's charge, and a refund after the
/// transfer (reversal first). Against the local server that speaks Stripe's protocol, and the
/// sandbox's test pages.
@Suite("Travellers' payouts: Stripe Connect onboarding, account events, transfers and reversals")
struct PayoutAccountTests {
    static let connectSecret = "whsec_connect_test_waybill"

    static func withStripe(_ db: TestDatabase, _ body: (TestServer, FakeStripe) async throws -> Void) async throws {
        let stripe = try await FakeStripe.start()
        do {
            try await TestServer.run(db, adjust: { config in
                config.stripe = StripeSettings(secretKey: FakeStripe.secretKey, webhookSecret: PaymentTests.webhookSecret,
                                               apiBase: stripe.baseURL, connectWebhookSecret: connectSecret)
            }) { server in try await body(server, stripe) }
        } catch {
            await stripe.stop()
            throw error
        }
        await stripe.stop()
    }

    static func postConnect(_ server: TestServer, _ payload: [UInt8], secret: String = connectSecret) async throws -> Reply {
        let signature = StripeSignature.sign(payload: payload, secret: secret, timestamp: UnixTime.nowSeconds)
        return try await server.send(.POST, "/payments/stripe/connect-webhook", rawBody: String(decoding: payload, as: UTF8.self),
                                     headers: [("Stripe-Signature", signature)])
    }

    @Test("Sandbox: a traveller cannot accept a paid request until their payouts are set up on the test page; then they can",
          arguments: TestDatabase.available)
    func sandboxOnboarding(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let (cast, trip) = try await TripRequestTests.setUp(server, payouts: false)
            let ada = cast.customer
            let id = try #require(try await server.send(.POST, "/trips/\(trip)/requests", json: TripRequestTests.request(),
                                                        token: cast.otherCustomer.access).json["id"].string)
            let none = try await server.send(.GET, "/me/payouts", token: ada.access)
            #expect(none.json["status"].string == "none" && none.json["sandbox"].bool == true, "\(none)")
            let refused = try await server.send(.POST, "/trip-requests/\(id)/accept", token: ada.access)
            #expect(refused.status == .conflict && refused.errorCode == "payouts_not_ready", "\(refused)")
            #expect(try await Order.query(on: server.db).count() == 0, "nothing was written")
            // Senders who are not travellers have no payout account to set up.
            #expect(try await server.send(.POST, "/me/payouts/onboarding", token: cast.otherCustomer.access).status == .forbidden)

            // The link opens the sandbox's test page; leaving without finishing changes nothing.
            let link = try #require(try await server.send(.POST, "/me/payouts/onboarding", token: ada.access).json["url"].string)
            #expect(link.hasPrefix("http://localhost:8080/sandbox/connect/acct_sandbox_"), "\(link)")
            let path = String(link.dropFirst("http://localhost:8080".count))
            // The page is its owner's, signed in to the web app: a visitor is sent to sign in first.
            let visitor = try await server.page(.GET, path)
            #expect(visitor.status == .seeOther && visitor.headers.first(name: .location)?.hasPrefix("/login") == true, "\(visitor)")
            let browser = TestBrowser(server)
            _ = try await browser.signIn("ada@example.com")
            let page = try await browser.get(path)
            #expect(page.status == .ok && page.html.contains("TEST MODE") && page.html.contains("no money will move"))
            #expect(try await server.send(.GET, "/me/payouts", token: ada.access).json["status"].string == "pending")
            // A second link continues the same account.
            let again = try #require(try await server.send(.POST, "/me/payouts/onboarding", token: ada.access).json["url"].string)
            #expect(again.components(separatedBy: "?")[0] == link.components(separatedBy: "?")[0])

            let parts = path.components(separatedBy: "?")
            let done = try await browser.post(parts[0] + "/complete?" + parts[1], [:], from: path)
            #expect(done.status == .seeOther && done.location == "/travel/payouts/return", "\(done.status)")
            #expect(try await browser.post("/sandbox/connect/acct_sandbox_nothere/complete", [:], from: path).status == .notFound)
            // Only paths on this site are followed back.
            #expect(PaymentPages.localPath("//evil.example/x") == "/" && PaymentPages.localPath("https://evil.example") == "/")
            #expect(PaymentPages.localPath("/\t/evil.example/x") == "/" && PaymentPages.localPath("/\\evil.example") == "/")
            #expect(try await server.send(.GET, "/me/payouts", token: ada.access).json["status"].string == "active")
            let accepted = try await server.send(.POST, "/trip-requests/\(id)/accept", token: ada.access)
            #expect(accepted.status == .ok, "\(accepted)")
        }
    }

    @Test("Sandbox: the test onboarding sends nobody off-site, and only its owner, signed in with the page's token, completes it",
          arguments: TestDatabase.available)
    func sandboxOnboardingRefusals(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let (cast, _) = try await TripRequestTests.setUp(server, payouts: false)
            let link = try #require(try await server.send(.POST, "/me/payouts/onboarding", token: cast.customer.access).json["url"].string)
            let account = String(String(link.dropFirst("http://localhost:8080".count)).components(separatedBy: "?")[0])
            let evil = account + "/complete?return=/%09/evil.example/x"
            func status() async throws -> String? {
                try await server.send(.GET, "/me/payouts", token: cast.customer.access).json["status"].string
            }
            // What a browser would take for another site (it drops the tab: `/\t/evil.example` is `//evil.example`).
            func offSite(_ location: String?) -> Bool {
                location.map { !$0.hasPrefix("/") || $0.hasPrefix("//") || $0.hasPrefix("/\t") || $0.contains("\\") } ?? false
            }

            // Without a session or the page's token: refused, nothing changes, no redirect anywhere.
            let anonymous = try await server.page(.POST, evil)
            #expect(anonymous.status == .forbidden && !offSite(anonymous.headers.first(name: .location)), "\(anonymous)")
            let visitor = TestBrowser(server)
            let signedOut = try await visitor.post(evil, [:], from: "/login")
            #expect(signedOut.status != .ok && !offSite(signedOut.location) && signedOut.location?.hasPrefix("/login") == true, "\(signedOut.status)")
            // Another account, with its own valid token: as if the account did not exist.
            let bob = TestBrowser(server)
            _ = try await bob.signIn("bob@example.com")
            #expect(try await bob.get(account).status == .notFound)
            #expect(try await bob.post(evil, [:], from: "/account").status == .notFound)
            // The owner, without the token: refused.
            let ada = TestBrowser(server)
            _ = try await ada.signIn("ada@example.com")
            #expect(try await ada.post(evil, [:], from: account, withToken: false).status == .forbidden)
            #expect(try await status() == "pending")

            // The owner with the page's token: done, and sent back on this site only.
            let page = try await ada.get(account + "?return=/%09/evil.example/x")
            #expect(page.status == .ok && !page.html.contains("evil.example"), "\(page.html.prefix(1500))")
            let done = try await ada.post(evil, [:], from: account)
            #expect(done.status == .seeOther && done.location == "/", "\(String(describing: done.location))")
            #expect(try await status() == "active")
        }
    }

    @Test("Stripe: onboarding opens an Express account with transfers requested and an account link; account events set the status, once, in order",
          arguments: TestDatabase.available)
    func connectOnboardingAndEvents(db: TestDatabase) async throws {
        try await Self.withStripe(db) { server, stripe in
            let (cast, _) = try await TripRequestTests.setUp(server, payouts: false)
            let ada = cast.customer
            let link = try await server.send(.POST, "/me/payouts/onboarding", token: ada.access)
            #expect(link.json["url"].string?.hasPrefix("https://connect.stripe.test/setup/") == true, "\(link)")
            let create = try #require(stripe.requests.first { $0.path == "/v1/accounts" })
            #expect(create.form["type"] == "express" && create.form["country"] == "CH" && create.form["email"] == "ada@example.com")
            #expect(create.form["capabilities[transfers][requested]"] == "true" && create.form["metadata[account_id]"] == ada.userID.uppercased())
            #expect(create.idempotencyKey == "connect-account-\(ada.userID.uppercased())")
            let linkRequest = try #require(stripe.requests.first { $0.path == "/v1/account_links" })
            #expect(linkRequest.form["type"] == "account_onboarding")
            #expect(linkRequest.form["return_url"] == "http://localhost:8080/travel/payouts/return")
            #expect(linkRequest.form["refresh_url"] == "http://localhost:8080/travel/payouts/refresh")
            let account = try #require(linkRequest.form["account"])
            // A second link reuses the account.
            _ = try await server.send(.POST, "/me/payouts/onboarding", token: ada.access)
            #expect(stripe.requests.filter { $0.path == "/v1/accounts" }.count == 1)

            // Not finished: Stripe says so when asked.
            let pending = try await server.send(.GET, "/me/payouts", token: ada.access)
            #expect(pending.json["status"].string == "pending" && pending.json["requirementsDue"].array.count == 2, "\(pending)")

            // Bad signatures and the platform endpoint's secret are refused.
            let now = Int64(Date().timeIntervalSince1970)
            stripe.updateAccount(account) { $0.detailsSubmitted = true; $0.transfers = "active" }
            let updated = stripe.connectEvent("evt_acct_1", account: account, created: now)
            #expect(try await Self.postConnect(server, updated, secret: "whsec_wrong").status == .badRequest)
            #expect(try await Self.postConnect(server, updated, secret: PaymentTests.webhookSecret).status == .badRequest)
            #expect(try await User.find(UserID(uuidString: ada.userID), on: server.db)?.payoutStatus == .pending)

            // account.updated: the account is read again from Stripe; the status becomes active.
            let before = stripe.requests.filter { $0.path == "/v1/accounts/\(account)" }.count
            #expect(try await Self.postConnect(server, updated).status == .ok)
            #expect(stripe.requests.filter { $0.path == "/v1/accounts/\(account)" }.count == before + 1)
            #expect(try await User.find(UserID(uuidString: ada.userID), on: server.db)?.payoutStatus == .active)
            // The same event again is handled once (no second read).
            #expect(try await Self.postConnect(server, updated).status == .ok)
            #expect(stripe.requests.filter { $0.path == "/v1/accounts/\(account)" }.count == before + 1)

            // An older event arriving late does not undo the newer status.
            stripe.updateAccount(account) { $0.transfers = "inactive" }
            #expect(try await Self.postConnect(server, stripe.connectEvent("evt_acct_0", account: account, created: now - 60)).status == .ok)
            #expect(try await User.find(UserID(uuidString: ada.userID), on: server.db)?.payoutStatus == .active)
            // A newer one does: Stripe paused transfers (details were given: restricted).
            #expect(try await Self.postConnect(server, stripe.connectEvent("evt_acct_2", account: account, created: now + 1)).status == .ok)
            #expect(try await server.send(.GET, "/me/payouts", token: ada.access).json["status"].string == "restricted")
            // The traveller removes Waybill's access: disconnected; onboarding starts a new account.
            stripe.updateAccount(account) { $0.revoked = true }
            #expect(try await Self.postConnect(server, stripe.connectEvent("evt_acct_3", type: "account.application.deauthorized",
                                                                           account: account, created: now + 2)).status == .ok)
            #expect(try await server.send(.GET, "/me/payouts", token: ada.access).json["status"].string == "disconnected")
            // Events for accounts nobody here has are received and ignored.
            #expect(try await Self.postConnect(server, stripe.connectEvent("evt_other", account: "acct_unknown", created: now)).status == .ok)
            let bad = try await server.send(.POST, "/payments/stripe/connect-webhook", rawBody: "{", headers: [("Stripe-Signature", "t=1,v1=00")])
            #expect(bad.status == .badRequest)
        }
    }

    @Test("Stripe: the code completes the delivery, the traveller's transfer draws on the sender's charge; a refund after it reverses the transfer first",
          arguments: TestDatabase.available)
    func transferAndReversal(db: TestDatabase) async throws {
        try await Self.withStripe(db) { server, stripe in
            let (cast, trip) = try await TripRequestTests.setUp(server, payouts: false)
            let ada = cast.customer, bob = cast.otherCustomer
            _ = try await server.send(.POST, "/me/payouts/onboarding", token: ada.access)
            let account = try #require(stripe.requests.first { $0.path == "/v1/account_links" }?.form["account"])
            stripe.updateAccount(account) { $0.detailsSubmitted = true; $0.transfers = "active" }
            #expect(try await server.send(.GET, "/me/payouts", token: ada.access).json["status"].string == "active")

            // Bea, the receiver, has an account: she sees her code in her app while the parcel travels.
            try await server.registerCustomer("bea@example.com")
            let bea = try await server.login("bea@example.com")
            let id = try #require(try await server.send(.POST, "/trips/\(trip)/requests", json: TripRequestTests.request(), token: bob.access).json["id"].string)
            let accepted = try await server.send(.POST, "/trip-requests/\(id)/accept", token: ada.access)
            let shipment = try #require(accepted.json["shipment"]["id"].string, "\(accepted)")
            let order = try #require(try await Order.find(OrderID(uuidString: shipment), on: server.db))
            let session = try #require(order.checkoutSessionID)
            #expect(stripe.session(session)?.form["payment_intent_data[transfer_group]"] == shipment.uppercased())
            stripe.pay(session)
            #expect(try await server.send(.POST, "/orders/\(shipment)/payment/confirm", token: bob.access).status == .ok)
            #expect(try await server.send(.POST, "/trip-requests/\(id)/pickup", token: ada.access).json["status"].string == "picked_up")
            _ = try await server.deliverMail()
            // Bea has an account, so other mail reaches her too (the notification that it is on its way).
            let mail = try #require(server.mailer.messages.last { $0.to.address == "bea@example.com" && $0.subject.hasPrefix("Your delivery code") },
                                    "\(server.mailer.messages.map(\.subject))")
            let code = try #require(RecordingMailer.code(in: mail.subject))
            let asReceiver = try await server.send(.GET, "/shipments/\(shipment)", token: bea.access)
            #expect(asReceiver.json["recipientCode"].string == code, "\(asReceiver)")
            #expect(try await server.send(.GET, "/shipments/\(shipment)", token: bob.access).json["recipientCode"].exists == false)
            #expect(try await server.send(.GET, "/shipments/\(shipment)", token: ada.access).json["recipientCode"].exists == false)
            let stored = try #require(try await Order.find(OrderID(uuidString: shipment), on: server.db)?.recipientCodeSealed)
            #expect(!stored.contains(code), "the copy is sealed")

            #expect(try await server.send(.POST, "/trip-requests/\(id)/deliver", json: ["code": code], token: ada.access).json["status"].string == "delivered")
            #expect(try await Order.find(OrderID(uuidString: shipment), on: server.db)?.recipientCodeSealed == nil, "erased at delivery")
            #expect(try await server.send(.GET, "/shipments/\(shipment)", token: bea.access).json["recipientCode"].exists == false)
            _ = try await server.deliverMail()  // the payout job
            let transfer = try #require(stripe.requests.first { $0.path == "/v1/transfers" }, "\(stripe.requests.map(\.path))")
            #expect(transfer.form["destination"] == account && transfer.form["amount"] == "1955" && transfer.form["currency"] == "chf")
            #expect(transfer.form["transfer_group"] == shipment.uppercased())
            #expect(transfer.form["source_transaction"] == "ch_" + String(session.dropFirst(3)), "\(transfer.form)")
            var ledger = try await LedgerRecord.query(on: server.db).filter(\.$shipmentID == OrderID(uuidString: shipment)!).all().map(\.entry)
            let payout = try #require(ledger.first { $0.kind == .payout })
            #expect(payout.amount == 1955 && payout.reference?.hasPrefix("tr_") == true)
            #expect(ledger.contains { $0.kind == .platformFee && $0.amount == 345 })

            // A dispute: the receiver never really got it. Only staff refund a delivered shipment.
            #expect(try await server.send(.POST, "/orders/\(shipment)/refund", json: ["reason": "Never received"], token: bob.access).status == .forbidden)
            #expect(try await server.send(.POST, "/orders/\(shipment)/refund", json: ["reason": " "], token: cast.manager.access).status == .unprocessableEntity)
            let refunded = try await server.send(.POST, "/orders/\(shipment)/refund", json: ["reason": "Never received"], token: cast.manager.access)
            #expect(refunded.status == .ok && refunded.json["payment"]["status"].string == "refunded", "\(refunded)")
            let audited = try #require(try await AuditRecord.query(on: server.db).filter(\.$action == .orderRefunded).first())
            #expect(audited.actorID?.uuidString == UUID(uuidString: cast.manager.userID)?.uuidString && audited.reason == "Never received"
                    && audited.targetID == shipment.uppercased() && audited.after?.contains("\"amount\":\"2300\"") == true, "\(audited.entry)")
            let paths = stripe.requests.map(\.path)
            let reversalIndex = try #require(paths.firstIndex(of: "/v1/transfers/\(payout.reference!)/reversals"), "\(paths)")
            let refundIndex = try #require(paths.firstIndex(of: "/v1/refunds"))
            #expect(reversalIndex < refundIndex, "the transfer is reversed before the charge is refunded")
            #expect(stripe.requests[reversalIndex].form["amount"] == "1955")
            ledger = try await LedgerRecord.query(on: server.db).filter(\.$shipmentID == OrderID(uuidString: shipment)!).all().map(\.entry)
            #expect(ledger.filter { $0.kind == .transferReversal }.map(\.amount) == [1955])
            #expect(ledger.contains { $0.kind == .refund && $0.amount == 2300 })
            // Twice is refused; the outbox's retry does nothing more.
            #expect(try await server.send(.POST, "/orders/\(shipment)/refund", json: ["reason": "Again"], token: cast.manager.access).status == .conflict)
            _ = try await server.deliverMail()
            #expect(stripe.requests.filter { $0.path.hasSuffix("/reversals") }.count == 1)
            #expect(stripe.requests.filter { $0.path == "/v1/refunds" }.count == 1)
        }
    }

    @Test("A traveller shares their position while carrying: it reaches the shipment's trail, never the fleet, and needs no duty",
          arguments: TestDatabase.available)
    func travellerPosition(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let (cast, trip) = try await TripRequestTests.setUp(server)
            let ada = cast.customer, bob = cast.otherCustomer
            let point: [String: any Sendable] = ["latitude": 46.52, "longitude": 6.63, "recordedAt": ISO8601DateFormatter().string(from: Date())]
            // Nothing carried: nothing stored.
            let idle = try await server.send(.POST, "/drivers/me/locations", json: ["positions": [point]], token: ada.access)
            #expect(idle.status == .ok && idle.json["accepted"].int == 0, "\(idle)")
            let id = try #require(try await server.send(.POST, "/trips/\(trip)/requests", json: TripRequestTests.request(), token: bob.access).json["id"].string)
            let shipment = try #require(try await server.send(.POST, "/trip-requests/\(id)/accept", token: ada.access).json["shipment"]["id"].string)
            try await TripRequestTests.pay(server, url: try #require(try await server.send(.GET, "/trip-requests/\(id)", token: bob.access).json["shipment"]["paymentUrl"].string))
            _ = try await server.send(.POST, "/trip-requests/\(id)/pickup", token: ada.access)
            // Bea, the receiver, has an account: she follows in her app; Bob, the sender, too.
            try await server.registerCustomer("bea@example.com")
            let bea = try await server.login("bea@example.com")
            var shared = Reply(status: .ok, headers: [:], body: ByteBuffer())
            try await server.serving { port in
                let sender = try await server.live(port: port, token: bob.access)
                let receiver = try await server.live(port: port, token: bea.access)
                #expect(try await sender.subscribe("order:\(shipment)")["type"].string == "subscribed")
                #expect(try await receiver.subscribe("order:\(shipment)")["type"].string == "subscribed")
                shared = try await server.send(.POST, "/drivers/me/locations", json: ["positions": [point]], token: ada.access)
                let seen = try await sender.event("location", topic: "order:\(shipment)")
                #expect(seen["data"]["latitude"].double == 46.52, "\(seen)")
                // The receiver gets what a tracking link shows: the position, no ids.
                let followed = try await receiver.event("location", topic: "order:\(shipment)")
                #expect(followed["data"]["latitude"].double == 46.52 && followed["data"]["driverId"].exists == false, "\(followed)")
                await sender.close()
                await receiver.close()
            }
            #expect(shared.status == .ok && shared.json["accepted"].int == 1, "\(shared)")
            let trail = try await server.send(.GET, "/orders/\(shipment)/trail", token: bob.access)
            #expect(trail.json["points"].array.count == 1, "\(trail)")
            // Not a driver: no duty, no place on the fleet map.
            #expect(try await DriverState.find(UserID(uuidString: ada.userID)!, on: server.db) == nil)
            // Someone neither driver nor traveller may not report.
            #expect(try await server.send(.POST, "/drivers/me/locations", json: ["positions": [point]], token: bob.access).status == .forbidden)
        }
    }
}
