import Fluent
import Foundation
import Testing
import Vapor
@testable import WaybillServer
import WaybillCore

/// Loyalty points (issue 19, item 3): earned per paid delivery by the admins' rules, spent as a
/// discount when ordering, expiring oldest first, given back with a cancellation, taken back with a
/// refund; never negative, never spent twice by parallel checkouts.
@Suite("Loyalty points: earned per delivery, spent at checkout, expiring oldest first, never negative or spent twice")
struct LoyaltyTests {
    /// Rules that earn enough on one delivery to spend: `perUnit` points per franc, a point worth a centime.
    static func rules(perUnit: Int = 100, validityDays: Int = 365) -> [String: any Sendable] {
        ["pointsPerUnit": perUnit, "pointValue": 1, "validityDays": validityDays, "minimumRedemption": 100, "maxDiscountPercent": 50]
    }

    static func setRules(_ server: TestServer, _ cast: Cast, _ rules: [String: any Sendable]) async throws {
        let admin = try await server.makeAdmin(cast.otherDriver)
        let saved = try await server.send(.PUT, "/loyalty/rules", json: rules, token: admin)
        try #require(saved.status == .ok, "\(saved)")
    }

    static func points(_ server: TestServer, _ token: String) async throws -> Reply {
        try await server.send(.GET, "/loyalty", token: token)
    }

    /// Everyone signed in again (after the clock moved past the tokens' lifetime).
    static func again(_ server: TestServer) async throws -> Cast {
        Cast(customer: try await server.login("ada@example.com"), otherCustomer: try await server.login("bob@example.com"),
             driver: try await server.login("luca@courier.example"), otherDriver: try await server.login("mia@courier.example"),
             manager: try await server.login("boss@courier.example"))
    }

    @Test("Admins set the rules (audited; others 403; 422 field by field); a delivery earns points; the sender spends them as the price's last line, recorded in the ledger with the payment; too few, too many or more than held is 422",
          arguments: TestDatabase.available)
    func earnAndSpend(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let initial = try await server.send(.GET, "/loyalty/rules", token: cast.customer.access)
            #expect(initial.status == .ok && initial.json["pointValue"].int == 5 && initial.json["currency"].string == "CHF" && initial.json["version"].int == 1)
            #expect(try await server.send(.PUT, "/loyalty/rules", json: Self.rules(), token: cast.manager.access).status == .forbidden)
            let admin = try await server.makeAdmin(cast.otherDriver)
            var bad = Self.rules()
            bad["pointsPerUnit"] = -1; bad["maxDiscountPercent"] = 95
            let refused = try await server.send(.PUT, "/loyalty/rules", json: bad, token: admin)
            #expect(refused.status == .unprocessableEntity && refused.json["error"]["fields"]["pointsPerUnit"].string == "too_small"
                    && refused.json["error"]["fields"]["maxDiscountPercent"].string == "too_large", "\(refused)")
            let saved = try await server.send(.PUT, "/loyalty/rules", json: Self.rules(), token: admin)
            #expect(saved.status == .ok && saved.json["version"].int == 2 && saved.json["pointsPerUnit"].int == 100, "\(saved)")
            #expect(try await AuditRecord.query(on: server.db).filter(\.$action == .loyaltyChanged).count() == 1)

            // Nothing before a delivery; a delivered shipment earns 100 points per whole franc paid.
            #expect(try await Self.points(server, cast.customer.access).json["points"].int == 0)
            let first = try await server.placeOrder(cast.customer.access)
            let price = try await server.price(of: first)
            try await server.advance(first, to: .accepted, cast: cast)
            #expect(try await Self.points(server, cast.customer.access).json["points"].int == 0, "not before it is delivered")
            try await server.advance(first, to: .delivered, cast: cast, from: .accepted)
            let earned = price / 100 * 100
            let account = try await Self.points(server, cast.customer.access)
            #expect(account.status == .ok && account.json["points"].int == earned && account.json["worth"]["amount"].int == earned, "\(account)")
            #expect(account.json["entries"][0]["kind"].string == "earned" && account.json["entries"][0]["orderId"].string?.lowercased() == first.lowercased()
                    && account.json["entries"][0]["orderReference"].string?.hasPrefix("WB-") == true && account.json["nextExpiry"]["points"].int == earned)
            #expect(try await LoyaltyEntryRecord.query(on: server.db).count() == 1, "one entry: the delivery's")

            // A quote shows what the points take off, as the last line.
            var quoteBody = TestServer.orderBody()
            quoteBody["paymentMethod"] = nil; quoteBody["recipient"] = nil
            let plain = try await server.send(.POST, "/quotes", json: quoteBody, token: cast.customer.access)
            let full = try #require(plain.json["price"]["amount"].int)
            var spending = quoteBody
            spending["redeemPoints"] = 300
            let quote = try await server.send(.POST, "/quotes", json: spending, token: cast.customer.access)
            #expect(quote.status == .ok && quote.json["price"]["amount"].int == full - 300 && quote.json["points"]["points"].int == 300, "\(quote)")
            #expect(quote.json["breakdown"].array.last?["kind"].string == "points" && quote.json["breakdown"].array.last?["amount"].int == -300)
            func refusal(_ points: Int, token: String) async throws -> String? {
                var body = quoteBody
                body["redeemPoints"] = points
                return try await server.send(.POST, "/quotes", json: body, token: token).json["error"]["fields"]["redeemPoints"].string
            }
            #expect(try await refusal(99, token: cast.customer.access) == "below_minimum")
            #expect(try await refusal(full / 2 + 1, token: cast.customer.access) == "above_maximum", "at most half the price")
            #expect(try await refusal(100, token: cast.otherCustomer.access) == "not_enough_points")

            // Spent on a card order: the checkout is for the rest; the ledger has the charge and the points.
            let created = try await server.send(.POST, "/orders", json: TestServer.orderBody(payment: "card", extra: ["redeemPoints": 300]),
                                                token: cast.customer.access)
            let id = try #require(created.json["order"]["id"].string, "\(created)")
            #expect(created.json["order"]["price"]["amount"].int == full - 300 && created.json["order"]["points"]["discount"]["amount"].int == 300)
            try await CounterDeskTests.pay(server, id, cast)
            let ledger = try await LedgerRecord.query(on: server.db).filter(\.$shipmentID == OrderID(uuidString: id)!).all().map(\.entry)
            #expect(ledger.first { $0.kind == .charge }?.amount == full - 300 && ledger.first { $0.kind == .pointsRedeemed }?.amount == 300, "\(ledger)")
            let after = try await Self.points(server, cast.customer.access)
            #expect(after.json["points"].int == earned - 300 && after.json["entries"][0]["kind"].string == "redeemed"
                    && after.json["entries"][0]["points"].int == 300, "\(after)")
        }
    }

    @Test("Points expire after the rules' validity, oldest first, shown in the history; a cancelled order gives its points back; a refund after delivery takes back what it earned, never below zero",
          arguments: TestDatabase.both)
    func expiryCancellationRefund(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            var cast = try await server.cast()
            try await Self.setRules(server, cast, Self.rules(validityDays: 30))
            let first = try await server.placeOrder(cast.customer.access)
            try await server.advance(first, to: .delivered, cast: cast)
            let price = try await server.price(of: first)
            let earned = price / 100 * 100
            server.clock.advance(by: 10 * 86_400)
            cast = try await Self.again(server)
            let second = try await server.placeOrder(cast.customer.access)
            try await server.advance(second, to: .delivered, cast: cast)
            #expect(try await Self.points(server, cast.customer.access).json["points"].int == 2 * earned)

            // Spent, then the order is cancelled: the points come back.
            let spent = try await server.placeOrder(cast.customer.access, extra: ["redeemPoints": 200])
            #expect(try await Self.points(server, cast.customer.access).json["points"].int == 2 * earned - 200)
            #expect(try await server.send(.POST, "/orders/\(spent)/cancel", json: ["reason": "Changed my mind"], token: cast.customer.access).status == .ok)
            let back = try await Self.points(server, cast.customer.access)
            #expect(back.json["points"].int == 2 * earned && back.json["entries"][0]["kind"].string == "restored" && back.json["entries"][0]["points"].int == 200,
                    "\(back)")

            // 35 days after the first delivery its points are gone (the 200 given back with them: they were the oldest).
            server.clock.advance(by: 25 * 86_400)
            cast = try await Self.again(server)
            let later = try await Self.points(server, cast.customer.access)
            #expect(later.json["points"].int == earned && later.json["nextExpiry"]["points"].int == earned, "\(later)")
            let expired = later.json["entries"].array.filter { $0["kind"].string == "expired" }.compactMap { $0["points"].int }
            #expect(expired.reduce(0, +) == earned, "\(later)")
            #expect(try await Self.points(server, cast.customer.access).json["entries"].array.filter { $0["kind"].string == "expired" }.count == expired.count,
                    "an expiry is recorded once")

            // Bob is paid by card, earns, spends part, and is refunded after delivery: what is left is taken back, never below zero.
            let bobs = try await server.placeOrder(cast.otherCustomer.access, payment: "card")
            try await CounterDeskTests.pay(server, bobs, Cast(customer: cast.otherCustomer, otherCustomer: cast.customer, driver: cast.driver,
                                                                otherDriver: cast.otherDriver, manager: cast.manager))
            try await server.advance(bobs, to: .accepted, cast: cast)
            #expect(try await server.send(.POST, "/orders/\(bobs)/pickup", json: [:], token: cast.driver.access).status == .ok)
            #expect(try await server.deliver(bobs, token: cast.driver.access).status == .ok)
            let bobEarned = try #require(try await Self.points(server, cast.otherCustomer.access).json["points"].int)
            #expect(bobEarned == earned)
            let spend = price / 2
            _ = try await server.placeOrder(cast.otherCustomer.access, extra: ["redeemPoints": spend])
            let refunded = try await server.send(.POST, "/orders/\(bobs)/refund", json: ["reason": "Never received"], token: cast.manager.access)
            #expect(refunded.status == .ok, "\(refunded)")
            let bob = try await Self.points(server, cast.otherCustomer.access)
            #expect(bob.json["points"].int == 0 && bob.json["entries"][0]["kind"].string == "revoked" && bob.json["entries"][0]["points"].int == bobEarned - spend,
                    "\(bob)")
        }
    }

    @Test("Eight parallel checkouts spending the same points: one is placed, the others get 422 not_enough_points, and the balance never goes below zero",
          arguments: TestDatabase.both)
    func parallelCheckoutsSpendOnce(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            // 60 points per franc: half the price (the most one order may take) is more than half the points.
            try await Self.setRules(server, cast, Self.rules(perUnit: 60))
            let first = try await server.placeOrder(cast.customer.access)
            try await server.advance(first, to: .delivered, cast: cast)
            let price = try await server.price(of: first)
            let earned = price / 100 * 60
            let each = price / 2
            try #require(each <= earned && 2 * each > earned, "price \(price)")
            let replies = try await withThrowingTaskGroup(of: Reply.self) { group in
                for _ in 0..<8 {
                    group.addTask {
                        try await server.send(.POST, "/orders", json: TestServer.orderBody(extra: ["redeemPoints": each]), token: cast.customer.access)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(replies.filter { $0.status == .created }.count == 1, "\(replies.map(\.status))")
            #expect(replies.filter { $0.status == .unprocessableEntity && $0.json["error"]["fields"]["redeemPoints"].string == "not_enough_points" }.count == 7,
                    "\(replies.map(\.json))")
            #expect(try await Self.points(server, cast.customer.access).json["points"].int == earned - each)
            #expect(try await LoyaltyEntryRecord.query(on: server.db).filter(\.$kind == .redeemed).count() == 1)
            #expect(try await Order.query(on: server.db).filter(\.$pointsRedeemed != nil).count() == 1, "no order is left half-written")
        }
    }

    @Test("On the web a sender sees their points and history, spends them on the ordering form (the review shows the line); too many is shown beside the field; an admin saves the rules; French pages too",
          arguments: TestDatabase.available)
    func inTheWebApp(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            try await Self.setRules(server, cast, Self.rules())
            let ada = TestBrowser(server)
            _ = try await ada.signIn("ada@example.com")
            #expect(!(try await ada.get("/orders/new").html.contains("name=\"redeemPoints\"")), "no field without points to spend")
            let first = try await server.placeOrder(cast.customer.access)
            try await server.advance(first, to: .delivered, cast: cast)
            let earned = try await server.price(of: first) / 100 * 100
            let points = try await ada.get("/points")
            #expect(points.status == .ok && points.html.contains("data-points=\"\(earned)\"") && points.html.contains("data-points-kind=\"earned\""), "\(points.html)")
            #expect(try await ada.get("/account").html.contains("href=\"/points\""))
            let form = try await ada.get("/orders/new")
            #expect(form.html.contains("name=\"redeemPoints\"") && form.html.contains("You hold \(earned) points"))
            let fields: [String: String] = ["pickupMode": "own", "dropoffStreet": "Bundesplatz 3", "dropoffPostalCode": "3005", "dropoffCity": "Bern",
                                            "weightClass": "small", "service": "standard", "recipientName": "Bea Beispiel"]
            let review = try await ada.post("/orders/new", fields.merging(["redeemPoints": "300"]) { $1 }, from: "/orders/new")
            #expect(review.status == .ok && review.html.contains("Loyalty points") && review.html.contains("CHF -3.00")
                    && review.html.contains("name=\"redeemPoints\" value=\"300\""), "the points line, and the points kept for the order")
            let tooMany = try await ada.post("/orders/new", fields.merging(["redeemPoints": String(earned * 10)]) { $1 }, from: "/orders/new")
            #expect(tooMany.status == .unprocessableEntity && tooMany.html.contains("More points than this price allows"))

            let mia = TestBrowser(server)
            _ = try await mia.signIn("mia@courier.example")
            let rulesPage = try await mia.get("/loyalty")
            #expect(rulesPage.status == .ok && rulesPage.html.contains("value=\"0.01\""), "\(rulesPage.html)")
            let refused = try await mia.post("/loyalty", ["pointsPerUnit": "2", "pointValue": "0.05", "validityDays": "0", "minimumRedemption": "100",
                                                          "maxDiscountPercent": "50"], from: "/loyalty")
            #expect(refused.status == .unprocessableEntity && refused.html.contains("out of range"), "\(refused.status)")
            let saved = try await mia.post("/loyalty", ["pointsPerUnit": "2", "pointValue": "0.05", "validityDays": "180", "minimumRedemption": "100",
                                                        "maxDiscountPercent": "50"], from: "/loyalty")
            #expect(saved.status == .seeOther, "\(saved.status) \(saved.html)")
            #expect(try await server.send(.GET, "/loyalty/rules", token: cast.customer.access).json["validityDays"].int == 180)
            #expect(try await ada.get("/loyalty").status == .forbidden, "customers do not set the rules")
            _ = try await ada.get("/lang/fr?back=/points")
            #expect(try await ada.get("/points").html.contains("Points de fidélité"))
        }
    }
}
