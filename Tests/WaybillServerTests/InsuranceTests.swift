import Fluent
import Foundation
import Testing
import Vapor
@testable import WaybillServer
import WaybillCore

/// Insurance (issue 19, item 1): the premium at quote time from the admins' table, claims after a
/// delivery or a loss, decided by staff (two of them above the threshold) and paid through the
/// provider as a refund and, beyond it, a transfer.
@Suite("Insurance: a premium from the admins' table, claims decided by staff (two above a threshold) and paid through the provider")
struct InsuranceTests {
    static func insured(_ value: Int, payment: String = "cash") -> [String: any Sendable] {
        TestServer.orderBody(payment: payment, extra: ["declaredValue": value])
    }

    /// A second manager (the second approver).
    static func secondManager(_ server: TestServer) async throws -> Tokens {
        try await server.createAccount("ann@courier.example", role: .manager)
    }

    static func file(_ server: TestServer, _ order: String, kind: String, amount: Int, description: String = "The box was crushed",
                     photo: [UInt8]? = SampleImages.photoJPEG, token: String?) async throws -> Reply {
        var parts: [TestServer.Part] = [.text("kind", kind), .text("amount", String(amount)), .text("description", description)]
        if let photo { parts.append(.file("photos", photo, type: "image/jpeg", filename: "damage.jpg")) }
        return try await server.upload("/orders/\(order)/claims", parts: parts, token: token)
    }

    @Test("A sender insures a declared value: the premium is a line of the quote and of the price, in the ledger with the payment; above the maximum or uninsurable is 422",
          arguments: TestDatabase.available)
    func premiumInThePrice(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            var body = Self.insured(30_000)
            body["paymentMethod"] = nil; body["recipient"] = nil
            let quote = try await server.send(.POST, "/quotes", json: body, token: cast.customer.access)
            #expect(quote.status == .ok, "\(quote)")
            let line = quote.json["breakdown"].array.first { $0["kind"].string == "insurance" }
            #expect(line?["amount"].int == 600, "2 % of CHF 300.00: \(quote)")
            #expect(quote.json["insurance"]["premium"]["amount"].int == 600 && quote.json["insurance"]["declaredValue"]["amount"].int == 30_000)
            let plain = try await server.send(.POST, "/quotes", json: body.filter { $0.key != "declaredValue" }, token: cast.customer.access)
            #expect(quote.json["price"]["amount"].int == (plain.json["price"]["amount"].int ?? 0) + 600, "the premium adds to the price")
            // A small value pays the band's minimum; above the table's maximum nothing is insured.
            var small = body; small["declaredValue"] = 2_000
            #expect(try await server.send(.POST, "/quotes", json: small, token: cast.customer.access).json["insurance"]["premium"]["amount"].int == 200)
            var tooMuch = body; tooMuch["declaredValue"] = 500_001
            let refused = try await server.send(.POST, "/quotes", json: tooMuch, token: cast.customer.access)
            #expect(refused.status == .unprocessableEntity && refused.json["error"]["fields"]["declaredValue"].string == "above_maximum", "\(refused)")
            let refusedOrder = try await server.send(.POST, "/orders", json: Self.insured(500_001), token: cast.customer.access)
            #expect(refusedOrder.status == .unprocessableEntity && refusedOrder.json["error"]["fields"]["declaredValue"].string == "above_maximum")

            // Paid online, the premium is recorded in the ledger beside the charge.
            let created = try await server.send(.POST, "/orders", json: Self.insured(30_000, payment: "card"), token: cast.customer.access)
            let id = try #require(created.json["order"]["id"].string, "\(created)")
            #expect(created.json["order"]["insurance"]["premium"]["amount"].int == 600)
            try await CounterDeskTests.pay(server, id, cast)
            let entries = try await LedgerRecord.query(on: server.db).filter(\.$shipmentID == OrderID(uuidString: id)!).all().map(\.entry)
            #expect(entries.map(\.kind).sorted { $0.rawValue < $1.rawValue } == [.charge, .insurancePremium], "\(entries)")
            #expect(entries.first { $0.kind == .insurancePremium }?.amount == 600)
            let detail = try await server.send(.GET, "/orders/\(id)", token: cast.customer.access)
            #expect(detail.json["insurance"]["declaredValue"]["amount"].int == 30_000 && detail.json["breakdown"].array.contains { $0["kind"].string == "insurance" })
        }
    }

    @Test("Admins edit the premium table (audited); managers and customers cannot; a bad table is 422 field by field; new quotes use the new table",
          arguments: TestDatabase.available)
    func adminsEditTheTable(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let read = try await server.send(.GET, "/insurance", token: cast.customer.access)
            #expect(read.status == .ok && read.json["maxInsurableValue"].int == 500_000 && read.json["version"].int == 1, "\(read)")
            let table: [String: any Sendable] = [
                "currency": "CHF", "claimWindowDays": 14, "secondApprovalAbove": 20_000,
                "bands": [["upTo": 100_000, "rateBasisPoints": 100, "minimumPremium": 500]] as [[String: any Sendable]],
            ]
            #expect(try await server.send(.PUT, "/insurance", json: table, token: cast.manager.access).status == .forbidden)
            #expect(try await server.send(.PUT, "/insurance", json: table, token: cast.customer.access).status == .forbidden)
            let admin = try await server.makeAdmin(cast.otherDriver)
            var bad = table
            bad["bands"] = [["upTo": 100_000, "rateBasisPoints": 100, "minimumPremium": 500],
                            ["upTo": 50_000, "rateBasisPoints": 100, "minimumPremium": 500]] as [[String: any Sendable]]
            let refused = try await server.send(.PUT, "/insurance", json: bad, token: admin)
            #expect(refused.status == .unprocessableEntity && refused.json["error"]["fields"]["bands.1.upTo"].string == "not_ascending", "\(refused)")
            var euros = table; euros["currency"] = "EUR"
            #expect(try await server.send(.PUT, "/insurance", json: euros, token: admin).json["error"]["fields"]["currency"].string == "differs_from_tariff")
            let saved = try await server.send(.PUT, "/insurance", json: table, token: admin)
            #expect(saved.status == .ok && saved.json["version"].int == 2 && saved.json["maxInsurableValue"].int == 100_000, "\(saved)")
            var body = Self.insured(30_000)
            body["paymentMethod"] = nil; body["recipient"] = nil
            #expect(try await server.send(.POST, "/quotes", json: body, token: cast.customer.access).json["insurance"]["premium"]["amount"].int == 500)
            let audit = try await AuditRecord.query(on: server.db).filter(\.$action == .insuranceChanged).all()
            #expect(audit.count == 1 && audit.first?.actorID == UserID(uuidString: cast.otherDriver.userID))
        }
    }

    @Test("A lost insured parcel: the sender claims with a photo; two different staff approve above the threshold; the card is refunded up to the payment and the rest transferred once a payout account is active; paid once",
          arguments: TestDatabase.available)
    func lostParcelTwoApprovals(db: TestDatabase) async throws {
        try await PaymentTests.withStripe(db) { server, stripe in
            let cast = try await server.cast()
            let created = try await server.send(.POST, "/orders", json: Self.insured(100_000, payment: "card"), token: cast.customer.access)
            let id = try #require(created.json["order"]["id"].string, "\(created)")
            let session = try #require(try await Order.find(OrderID(uuidString: id)!, on: server.db)?.checkoutSessionID)
            stripe.pay(session)
            #expect(try await server.send(.POST, "/orders/\(id)/payment/confirm", token: cast.customer.access).json["status"].string == "pending")
            let price = try await server.price(of: id)

            // Before pickup nothing is lost; in transit the driver gives up: now it is.
            #expect(try await Self.file(server, id, kind: "lost", amount: 80_000, token: cast.customer.access).errorCode == "claim_too_early")
            try await server.advance(id, to: .accepted, cast: cast)
            let picked = try await server.send(.POST, "/orders/\(id)/pickup", json: [:], token: cast.driver.access)
            #expect(picked.status == .ok, "\(picked)")
            #expect(try await server.send(.POST, "/orders/\(id)/fail", json: ["reason": "other", "note": "Parcel missing from the van"],
                                          token: cast.driver.access).status == .ok)
            #expect(try await Self.file(server, id, kind: "damaged", amount: 80_000, token: cast.customer.access).errorCode == "claim_too_early",
                    "damage is claimed once delivered")
            #expect(try await Self.file(server, id, kind: "lost", amount: 100_001, token: cast.customer.access).status == .unprocessableEntity)
            #expect(try await Self.file(server, id, kind: "lost", amount: 80_000, token: cast.driver.access).status == .forbidden)
            let filed = try await Self.file(server, id, kind: "lost", amount: 80_000, token: cast.customer.access)
            #expect(filed.status == .created && filed.json["status"].string == "submitted" && filed.json["photos"].array.count == 1, "\(filed)")
            let claim = try #require(filed.json["id"].string)
            #expect(try await Self.file(server, id, kind: "lost", amount: 1_000, token: cast.customer.access).errorCode == "claim_decided", "one claim per shipment")
            // The claimant and staff see it and its photo; the driver does not.
            #expect(try await server.send(.GET, "/claims/\(claim)", token: cast.driver.access).status == .notFound)
            let photo = try #require(filed.json["photos"][0]["url"].string)
            #expect(try await server.send(.GET, String(photo.dropFirst("/api/v1".count)), token: cast.customer.access).status == .ok)
            #expect(try await server.send(.GET, String(photo.dropFirst("/api/v1".count)), token: cast.driver.access).status == .notFound)
            #expect(try await server.send(.GET, "/claims?status=submitted", token: cast.manager.access).json["items"].array.count == 1)
            #expect(try await server.send(.GET, "/claims", token: cast.otherCustomer.access).json["items"].array.isEmpty)

            // The sender cannot decide; the first manager's approval waits for a second staff member.
            let approve: [String: any Sendable] = ["decision": "approve", "amount": 80_000]
            #expect(try await server.send(.POST, "/claims/\(claim)/decision", json: approve, token: cast.customer.access).status == .forbidden)
            let first = try await server.send(.POST, "/claims/\(claim)/decision", json: approve, token: cast.manager.access)
            #expect(first.status == .ok && first.json["status"].string == "awaiting_second_approval" && first.json["proposed"]["amount"].int == 80_000, "\(first)")
            let again = try await server.send(.POST, "/claims/\(claim)/decision", json: approve, token: cast.manager.access)
            #expect(again.status == .forbidden && again.errorCode == "second_approver_required", "\(again)")
            let ann = try await Self.secondManager(server)
            // What each may do now is one rule (`ClaimPolicy.actions`), which the API and the claim's page
            // read: the first approver may still decline, never confirm; another staff member may do both.
            #expect(first.json["availableActions"].array.compactMap(\.string) == ["decline"], "\(first)")
            #expect(try await server.send(.GET, "/claims/\(claim)", token: ann.access).json["availableActions"].array.compactMap(\.string)
                    == ["approve", "decline"])
            #expect(try await server.send(.GET, "/claims/\(claim)", token: cast.customer.access).json["availableActions"].array.isEmpty)
            let boss = TestBrowser(server)
            _ = try await boss.signIn("boss@courier.example")
            let firstApproversPage = try await boss.get("/claims/\(claim)").html
            #expect(!firstApproversPage.contains("value=\"approve\"") && firstApproversPage.contains("value=\"decline\""))
            let annsBrowser = TestBrowser(server)
            _ = try await annsBrowser.signIn("ann@courier.example")
            let annsPage = try await annsBrowser.get("/claims/\(claim)").html
            #expect(annsPage.contains("value=\"approve\"") && annsPage.contains("value=\"decline\""))
            let other = try await server.send(.POST, "/claims/\(claim)/decision", json: ["decision": "approve", "amount": 70_000], token: ann.access)
            #expect(other.status == .unprocessableEntity && other.json["error"]["fields"]["amount"].string == "differs_from_first_approval")
            // Fifteen minutes on, money decisions ask for the password again.
            server.clock.advance(minutes: 16)
            #expect(try await server.send(.POST, "/claims/\(claim)/decision", json: approve, token: ann.access).errorCode == "reauthentication_required")
            #expect(try await server.send(.POST, "/auth/reauthenticate", json: ["password": TestServer.password], token: ann.access).status == .noContent)
            let second = try await server.send(.POST, "/claims/\(claim)/decision", json: approve, token: ann.access)
            #expect(second.status == .ok && second.json["status"].string == "approved" && second.json["approved"]["amount"].int == 80_000, "\(second)")

            // The card is refunded up to what was paid; the rest waits for the sender's payout account.
            let refunds = stripe.requests.filter { $0.path == "/v1/refunds" }
            #expect(refunds.count == 1 && refunds.first?.form["amount"] == String(price) && refunds.first?.idempotencyKey == "claim-refund-\(claim)",
                    "\(refunds.map(\.form))")
            let waiting = try await server.send(.GET, "/claims/\(claim)", token: cast.customer.access)
            #expect(waiting.json["status"].string == "approved" && waiting.json["paymentNote"].string?.contains("Set up payouts") == true, "\(waiting)")
            let ada = try #require(try await User.find(UserID(uuidString: cast.customer.userID), on: server.db))
            ada.payoutAccount = "acct_ada"
            ada.payoutStatusRaw = PayoutAccountStatus.active.rawValue
            try await ada.save(on: server.db)
            let claims = Claims(services: server.app.waybill, db: server.db, logger: server.app.logger)
            try await server.app.waybill.run { try await claims.pay(ClaimID(uuidString: claim)!) }
            try await server.app.waybill.run { try await claims.pay(ClaimID(uuidString: claim)!) }
            let transfers = stripe.requests.filter { $0.path == "/v1/transfers" }
            #expect(transfers.count == 1 && transfers.first?.form["amount"] == String(80_000 - price) && transfers.first?.form["destination"] == "acct_ada",
                    "\(transfers.map(\.form))")
            #expect(stripe.requests.filter { $0.path == "/v1/refunds" }.count == 1, "paid once")
            let paid = try await server.send(.GET, "/claims/\(claim)", token: cast.customer.access)
            #expect(paid.json["status"].string == "paid" && paid.json["refunded"]["amount"].int == price && paid.json["paymentNote"].string == nil, "\(paid)")
            let entries = try await LedgerRecord.query(on: server.db).filter(\.$shipmentID == OrderID(uuidString: id)!).all().map(\.entry)
            #expect(entries.filter { $0.kind == .refund }.map(\.amount) == [price] && entries.filter { $0.kind == .claimPayout }.map(\.amount) == [80_000 - price],
                    "\(entries)")
            // Staff's decisions are in the audit log; the sender was told.
            let audit = try await AuditRecord.query(on: server.db).filter(\.$action == .claimApproved).all()
            #expect(Set(audit.compactMap(\.actorID)) == [UserID(uuidString: cast.manager.userID)!, UserID(uuidString: ann.userID)!])
            let inbox = try await server.send(.GET, "/notifications", token: cast.customer.access)
            #expect(inbox.json["items"].array.contains { $0["kind"].string == "claim_paid" })
        }
    }

    @Test("Staff refunding a lost shipment while another approves its claim give the payment back once: the claim decides, the full refund is refused, at the same moment or after",
          arguments: TestDatabase.both)
    func refundRacesClaim(db: TestDatabase) async throws {
        try await PaymentTests.withStripe(db) { server, stripe in
            let cast = try await server.cast()
            let ann = try await Self.secondManager(server)
            // Three lost, insured, card-paid shipments, each with a claim below the one-approver threshold.
            var shipments: [(order: String, claim: String, price: Int)] = []
            for _ in 0..<3 {
                let created = try await server.send(.POST, "/orders", json: Self.insured(100_000, payment: "card"), token: cast.customer.access)
                let id = try #require(created.json["order"]["id"].string, "\(created)")
                let session = try #require(try await Order.find(OrderID(uuidString: id)!, on: server.db)?.checkoutSessionID)
                stripe.pay(session)
                #expect(try await server.send(.POST, "/orders/\(id)/payment/confirm", token: cast.customer.access).status == .ok)
                try await server.advance(id, to: .accepted, cast: cast)
                #expect(try await server.send(.POST, "/orders/\(id)/pickup", json: [:], token: cast.driver.access).status == .ok)
                #expect(try await server.send(.POST, "/orders/\(id)/fail", json: ["reason": "other", "note": "Lost"], token: cast.driver.access).status == .ok)
                let filed = try await Self.file(server, id, kind: "lost", amount: 15_000, token: cast.customer.access)
                shipments.append((id, try #require(filed.json["id"].string, "\(filed)"), try await server.price(of: id)))
            }
            // An open claim decides what goes back: a full refund is refused before it is decided.
            let early = try await server.send(.POST, "/orders/\(shipments[0].order)/refund", json: ["reason": "Never arrived"], token: cast.manager.access)
            #expect(early.status == .conflict, "\(early)")
            // The approval and the refund at the same moment, on each shipment.
            for shipment in shipments {
                async let refund = server.send(.POST, "/orders/\(shipment.order)/refund", json: ["reason": "Never arrived"], token: cast.manager.access)
                async let approval = server.send(.POST, "/claims/\(shipment.claim)/decision", json: ["decision": "approve", "amount": 15_000], token: ann.access)
                let (refunded, approved) = try await (refund, approval)
                #expect(refunded.status == .conflict, "\(refunded)")
                #expect(approved.status == .ok && approved.json["status"].string == "approved", "\(approved)")
            }
            // Each payment given back once, by its claim, up to the claim's amount; nothing transferred on top.
            for shipment in shipments {
                let entries = try await LedgerRecord.query(on: server.db).filter(\.$shipmentID == OrderID(uuidString: shipment.order)!).all().map(\.entry)
                let back = entries.filter { $0.kind == .refund || $0.kind == .claimPayout }.map(\.amount).reduce(0, +)
                #expect(back <= 15_000 && entries.filter { $0.kind == .refund }.map(\.amount) == [min(15_000, shipment.price)], "\(entries)")
                let order = try #require(try await Order.find(OrderID(uuidString: shipment.order)!, on: server.db))
                #expect(order.paymentStatus != .refundPending && order.paymentStatus != .refunded, "no full refund: \(order.paymentStatus)")
            }
            #expect(stripe.requests.filter { $0.path == "/v1/refunds" }.count == shipments.count, "one refund per shipment, the claim's")
            // After the claim is paid, the payment it partly refunded is not refunded again in full.
            let after = try await server.send(.POST, "/orders/\(shipments[1].order)/refund", json: ["reason": "Never arrived"], token: cast.manager.access)
            #expect(after.status == .conflict, "\(after)")
        }
    }

    @Test("One staff member approves a claim below the threshold; a decline needs a reason the sender reads; nobody decides their own claim; the window closes; an uninsured shipment has no claim",
          arguments: TestDatabase.available)
    func decisionsAndWindow(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            func delivered(_ body: [String: any Sendable]) async throws -> String {
                let reply = try await server.send(.POST, "/orders", json: body, token: cast.customer.access)
                let id = try #require(reply.json["order"]["id"].string, "\(reply)")
                try await server.advance(id, to: .delivered, cast: cast)
                return id
            }
            let small = try await delivered(Self.insured(20_000))
            let filed = try await Self.file(server, small, kind: "damaged", amount: 15_000, photo: nil, token: cast.customer.access)
            let claim = try #require(filed.json["id"].string, "\(filed)")
            let approved = try await server.send(.POST, "/claims/\(claim)/decision", json: ["decision": "approve", "amount": 15_000], token: cast.manager.access)
            #expect(approved.json["status"].string == "approved", "one approval is enough below CHF 500: \(approved)")
            #expect(try await server.send(.POST, "/claims/\(claim)/decision", json: ["decision": "decline", "reason": "x"], token: cast.manager.access)
                .errorCode == "claim_decided")

            let second = try await delivered(Self.insured(20_000))
            let tooMuch = try await Self.file(server, second, kind: "damaged", amount: 30_000, photo: nil, token: cast.customer.access)
            #expect(tooMuch.status == .unprocessableEntity && tooMuch.json["error"]["fields"]["amount"].string == "out_of_range", "more than insured")
            let other = try #require(try await Self.file(server, second, kind: "damaged", amount: 10_000, photo: nil, token: cast.customer.access).json["id"].string)
            let noReason = try await server.send(.POST, "/claims/\(other)/decision", json: ["decision": "decline", "reason": " "], token: cast.manager.access)
            #expect(noReason.status == .unprocessableEntity && noReason.json["error"]["fields"]["reason"].string == "required")
            let declined = try await server.send(.POST, "/claims/\(other)/decision", json: ["decision": "decline", "reason": "The photo shows no damage"],
                                                 token: cast.manager.access)
            #expect(declined.json["status"].string == "declined" && declined.json["declineReason"].string == "The photo shows no damage")
            #expect(try await server.send(.GET, "/claims/\(other)", token: cast.customer.access).json["declineReason"].string == "The photo shows no damage")

            // A manager who sent an insured parcel does not decide its claim.
            var managers = Self.insured(20_000)
            managers["pickup"] = TestServer.bern
            let own = try #require(try await server.send(.POST, "/orders", json: managers, token: cast.manager.access).json["order"]["id"].string)
            try await server.advance(own, to: .delivered, cast: cast)
            let ownClaim = try #require(try await Self.file(server, own, kind: "damaged", amount: 5_000, photo: nil, token: cast.manager.access).json["id"].string)
            #expect(try await server.send(.POST, "/claims/\(ownClaim)/decision", json: ["decision": "approve", "amount": 5_000], token: cast.manager.access)
                .status == .forbidden)

            // Thirty days after delivery the window is closed; an uninsured shipment has no claim.
            let late = try await delivered(Self.insured(20_000))
            let plain = try await delivered(TestServer.orderBody())
            server.clock.advance(by: 31 * 86_400)
            #expect(try await Self.file(server, late, kind: "damaged", amount: 5_000, photo: nil, token: try await server.login("ada@example.com").access)
                .errorCode == "claim_window_closed")
            #expect(try await Self.file(server, plain, kind: "damaged", amount: 5_000, photo: nil, token: try await server.login("ada@example.com").access)
                .errorCode == "not_insured")
        }
    }

    @Test("On the web a sender insures a parcel, claims from the shipment's page with a photo; a manager approves on the claim's page; French pages too",
          arguments: TestDatabase.available)
    func inTheWebApp(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let ada = TestBrowser(server)
            _ = try await ada.signIn("ada@example.com")
            let form = try await ada.get("/orders/new")
            #expect(form.html.contains("name=\"declaredValue\"") && form.html.contains("CHF 5000.00"), "the insurance field with its maximum")
            let review = try await ada.post("/orders/new", [
                "pickupMode": "own", "dropoffStreet": "Bundesplatz 3", "dropoffPostalCode": "3005", "dropoffCity": "Bern",
                "weightClass": "small", "service": "standard", "recipientName": "Bea Beispiel", "declaredValue": "300",
            ], from: "/orders/new")
            #expect(review.status == .ok && review.html.contains("Insurance") && review.html.contains("CHF 6.00"), "the premium line: \(review.status)")
            let tooMuch = try await ada.post("/orders/new", [
                "pickupMode": "own", "dropoffStreet": "Bundesplatz 3", "dropoffPostalCode": "3005", "dropoffCity": "Bern",
                "weightClass": "small", "service": "standard", "recipientName": "Bea Beispiel", "declaredValue": "9000",
            ], from: "/orders/new")
            #expect(tooMuch.status == .unprocessableEntity && tooMuch.html.contains("above the most that can be insured"))

            let id = try #require(try await server.send(.POST, "/orders", json: Self.insured(30_000), token: cast.customer.access).json["order"]["id"].string)
            try await server.advance(id, to: .delivered, cast: cast)
            let page = try await ada.get("/orders/\(id)")
            #expect(page.html.contains("Insured for CHF 300.00") && page.html.contains("action=\"/orders/\(id.lowercased())/claim\""), "the claim form")
            let filed = try await ada.postFile("/orders/\(id.lowercased())/claim", field: "photos[]", bytes: SampleImages.photoJPEG, filename: "damage.jpg",
                                               from: "/orders/\(id)", fields: ["kind": "damaged", "amount": "120.50", "description": "The glass is broken"])
            #expect(filed.status == .seeOther && filed.location?.hasPrefix("/claims/") == true, "\(filed.status) \(filed.html)")
            let claimPage = try await ada.get(try #require(filed.location))
            #expect(claimPage.html.contains("Your claim was sent") && claimPage.html.contains("CHF 120.50") && claimPage.html.contains("claim_photo"))
            #expect(!claimPage.html.contains("/decision\""), "no decision form for the sender")

            let boss = TestBrowser(server)
            _ = try await boss.signIn("boss@courier.example")
            let list = try await boss.get("/claims")
            #expect(list.status == .ok && list.html.contains("The glass is broken") == false && list.html.contains("CHF 120.50"))
            let claim = String(try #require(filed.location).dropFirst("/claims/".count).prefix(36))
            let decided = try await boss.post("/claims/\(claim)/decision", ["decision": "approve", "amount": "120.50", "return": "/claims/\(claim)"], from: "/claims/\(claim)")
            #expect(decided.status == .seeOther, "\(decided.status) \(decided.html)")
            // Paid in cash: nothing to refund on a card, and the sender has no payout account yet.
            let approvedPage = try await boss.get("/claims/\(claim)").html
            #expect(approvedPage.contains("data-claim-status=\"approved\"") && approvedPage.contains("Set up payouts"), "approved, waiting for a payout account")
            _ = try await ada.get("/lang/fr?back=/claims")
            let french = try await ada.get("/claims/\(claim)")
            #expect(french.html.contains("Déclaration de sinistre") || french.html.contains("Sinistre pour"))
        }
    }
}
