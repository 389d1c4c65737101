import Foundation
import Testing
import Vapor
import WaybillClient
import WaybillCore
@testable import WaybillServer

/// Loyalty points through the Swift SDK and `waybill-client points` (issue 19, item 3).
@Suite("Loyalty points through the SDK and the command line")
struct SDKLoyaltyTests {
    @Test("Through the SDK an admin sets the rules; a sender's delivery earns points, which a quote and an order spend; the history shows both",
          arguments: TestDatabase.available)
    func pointsThroughSDK(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            try await server.serving { port in
                let cast = try await server.cast()
                _ = try await server.makeAdmin(cast.otherDriver)
                let mia = server.sdk(port: port)
                try await mia.signIn(email: "mia@courier.example", password: TestServer.password)
                let rules = try await mia.setLoyaltyRules(LoyaltyRules(pointsPerUnit: 100, pointValue: 1, validityDays: 90, minimumRedemption: 100, maxDiscountPercent: 50))
                #expect(rules.version == 2 && rules.validityDays == 90)
                let ada = server.sdk(port: port)
                try await ada.signIn(email: "ada@example.com", password: TestServer.password)
                do throws(WaybillClient.WaybillError) {
                    _ = try await ada.setLoyaltyRules(.initial)
                    Issue.record("a customer does not set the rules")
                } catch { #expect(error.code == "forbidden") }

                let first = try await server.placeOrder(cast.customer.access)
                try await server.advance(first, to: .delivered, cast: cast)
                let earned = try await server.price(of: first) / 100 * 100
                #expect(try await ada.loyalty().points == earned)
                let delivery = Delivery(dropoff: Address(street: "Bundesplatz 3", postalCode: "3005", city: "Bern"), redeemPoints: 250)
                let quote = try await ada.quote(delivery)
                #expect(quote.points?.points == 250 && quote.breakdown.last?.kind == .points && quote.breakdown.last?.amount == -250)
                let placed = try await ada.placeOrder(NewOrder(delivery: delivery, paymentMethod: .cash, recipient: Recipient(name: "Bea Beispiel")))
                #expect(placed.order.points?.discount.amount == 250 && placed.order.price.amount == quote.price.amount)
                let account = try await ada.loyalty(limit: 5)
                #expect(account.points == earned - 250 && account.entries.map(\.kind) == [.redeemed, .earned]
                        && account.entries.first?.orderReference == placed.order.reference, "\(account)")
                var tooMany = delivery
                tooMany.redeemPoints = earned * 10
                do throws(WaybillClient.WaybillError) {
                    _ = try await ada.quote(tooMany)
                    Issue.record("more than half the price")
                } catch { #expect(error.fields["redeemPoints"] == "above_maximum", "\(error)") }
            }
        }
    }

    @Test("waybill-client: points shows the balance and history; quote and order create --points spend them; points rules reads and (admins) sets the rules")
    func pointsThroughCLI() async throws {
        try await TestServer.run(.sqlite) { server in
            try await server.serving { port in
                let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("waybill-cli-\(UUID().uuidString)")
                try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
                defer { try? FileManager.default.removeItem(at: scratch) }
                let cast = try await server.cast()
                _ = try await server.makeAdmin(cast.otherDriver)
                let mia = CLI(server: "http://127.0.0.1:\(port)", sessionFile: scratch.appendingPathComponent("mia.json").path)
                #expect(try await mia.run("login", "--email", "mia@courier.example", "--password", TestServer.password).status == 0)
                let set = try await mia.run("points", "rules", "--per-unit", "100", "--value", "0.01")
                #expect(set.status == 0 && set.stdout.contains("100 points per CHF") && set.stdout.contains("CHF 0.01"), "\(set)")
                let ada = CLI(server: "http://127.0.0.1:\(port)", sessionFile: scratch.appendingPathComponent("ada.json").path)
                #expect(try await ada.run("login", "--email", "ada@example.com", "--password", TestServer.password).status == 0)
                #expect(try await ada.run("points", "rules", "--per-unit", "5").status != 0, "customers do not set the rules")
                let first = try await server.placeOrder(cast.customer.access)
                try await server.advance(first, to: .delivered, cast: cast)
                let earned = try await server.price(of: first) / 100 * 100
                let shown = try await ada.run("points")
                #expect(shown.status == 0 && shown.stdout.contains("\(earned) points") && shown.stdout.contains("+\(earned)  earned"), "\(shown)")
                let quote = try await ada.run("quote", "--to-street", "Bundesplatz 3", "--to-postal-code", "3005", "--to-city", "Bern", "--points", "300")
                #expect(quote.status == 0 && quote.stdout.contains("Loyalty points (300)") && quote.stdout.contains("CHF -3.00"), "\(quote)")
                let order = try await ada.run("order", "create", "--to-street", "Bundesplatz 3", "--to-postal-code", "3005", "--to-city", "Bern",
                                              "--recipient-name", "Bea Beispiel", "--points", "300")
                #expect(order.status == 0, "\(order)")
                #expect(try await ada.run("points").stdout.contains("-300  redeemed"))
            }
        }
    }
}
