import Fluent
import Foundation
import Testing
@testable import WaybillServer
import WaybillCore

@Suite("The money ledger, recorded")
struct LedgerRecordingTests {
    @Test("Every movement of money is one ledger entry, written with the change; the migration fills the same entries for older orders",
          arguments: TestDatabase.both)
    func recordedAndBackfilled(db: TestDatabase) async throws {
        try await PaymentTests.withStripe(db) { server, stripe in
            let cast = try await server.cast()
            // A card order paid, then cancelled by dispatch and refunded.
            let (card, _) = try await PaymentTests().paidCardOrder(server, stripe, cast)
            #expect(try await server.send(.POST, "/orders/\(card)/cancel", json: ["reason": "Wrong address"], token: cast.manager.access).status == .ok)
            _ = try await server.deliverMail()
            // A cash order picked up; a company's invoice order; another one cancelled.
            let cash = try await server.placeOrder(cast.customer.access)
            try await server.advance(cash, to: .inTransit, cast: cast)
            try await server.registerCustomer("firm@example.com", isCompany: true)
            let firm = try await server.login("firm@example.com")
            let invoiced = try await server.placeOrder(firm.access, payment: "invoice")
            let credited = try await server.placeOrder(firm.access, payment: "invoice")
            #expect(try await server.send(.POST, "/orders/\(credited)/cancel", json: ["reason": "Not needed"], token: firm.access).status == .ok)

            func ledger() async throws -> [OrderID: [LedgerEntry]] {
                Dictionary(grouping: try await LedgerRecord.query(on: server.db).sort(\.$id).all().map(\.entry)) { $0.shipment! }
            }
            let recorded = try await ledger()
            let id = { (raw: String) in OrderID(uuidString: raw)! }
            #expect(recorded[id(card)]?.map(\.kind) == [.charge, .refund])
            #expect(recorded[id(cash)]?.map(\.kind) == [.cashCollected])
            #expect(recorded[id(invoiced)]?.map(\.kind) == [.invoiceLine])
            #expect(recorded[id(credited)]?.map(\.kind) == [.invoiceLine, .refund])
            let price = try await server.price(of: cash)
            #expect(try Ledger.balance(recorded[id(card)] ?? [])?.paidByCustomer == 0)
            #expect(try Ledger.balance(recorded[id(cash)] ?? [])?.paidByCustomer == price)
            #expect(try Ledger.balance(recorded[id(invoiced)] ?? [])?.paidByCustomer == (try await server.price(of: invoiced)))
            #expect(try Ledger.balance(recorded[id(credited)] ?? [])?.paidByCustomer == 0)
            #expect(recorded[id(card)]?.first?.reference?.isEmpty == false, "the charge names Stripe's payment")

            // The migration's backfill, run again over the same orders, finds the same entries.
            try await CreateLedger().revert(on: server.db)
            try await CreateLedger().prepare(on: server.db)
            let backfilled = try await ledger()
            #expect(Set(backfilled.keys) == Set(recorded.keys))
            for (shipment, entries) in recorded {
                let again = backfilled[shipment] ?? []
                #expect(again.map(\.kind) == entries.map(\.kind), "\(shipment)")
                #expect(again.map(\.amount) == entries.map(\.amount) && again.map(\.reference) == entries.map(\.reference), "\(shipment)")
                #expect(again.map(\.account) == entries.map(\.account) && again.map(\.at) == entries.map(\.at), "\(shipment)")
            }
        }
    }

    @Test("A payout goes through Stripe Connect as a transfer to the traveller's account, is one ledger entry, never twice and never more than was paid",
          arguments: TestDatabase.both)
    func payoutThroughStripe(db: TestDatabase) async throws {
        try await PaymentTests.withStripe(db) { server, stripe in
            let cast = try await server.cast()
            let (raw, _) = try await PaymentTests().paidCardOrder(server, stripe, cast)
            let id = try #require(OrderID(uuidString: raw)), price = try await server.price(of: raw)
            let traveller = try #require(UserID(uuidString: cast.otherCustomer.userID))
            let orders = Orders(services: server.app.waybill, db: server.db, logger: server.app.logger)
            let tooMuch = await #expect(throws: WaybillError.self) {
                try await orders.payOut(id, to: traveller, destination: "acct_traveller", amount: Money(price + 1, "CHF"))
            }
            #expect(tooMuch?.code == .payoutExceedsPayment)
            let entry = try await orders.payOut(id, to: traveller, destination: "acct_traveller", amount: Money(price - 300, "CHF"))
            let again = try await orders.payOut(id, to: traveller, destination: "acct_traveller", amount: Money(price - 300, "CHF"))
            #expect(entry == again)
            let transfers = stripe.requests.filter { $0.path == "/v1/transfers" }
            #expect(transfers.count == 1, "the second call found the ledger entry")
            #expect(transfers.first?.form["destination"] == "acct_traveller" && transfers.first?.form["amount"] == String(price - 300))
            #expect(transfers.first?.form["currency"] == "chf" && transfers.first?.form["transfer_group"] == id.uuidString)
            #expect(transfers.first?.idempotencyKey == "payout:\(id.uuidString):\(traveller.uuidString)")
            let recorded = try await LedgerRecord.query(on: server.db).filter(\.$shipmentID == id).sort(\.$id).all().map(\.entry)
            #expect(recorded.map(\.kind) == [.charge, .payout])
            #expect(recorded.last?.reference?.hasPrefix("tr_") == true && recorded.last?.account == traveller)
            #expect(try Ledger.balance(recorded)?.retained == 300)
            _ = try await server.deliverMail()
            let told = try await server.send(.GET, "/notifications", token: cast.otherCustomer.access)
            #expect(told.json["items"][0]["kind"].string == "paid_out")
        }
    }

    @Test("Two payouts of one shipment asked at once, to two carriers, never add up to more than was paid",
          arguments: TestDatabase.both)
    func concurrentPayouts(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let raw = try await server.placeOrder(cast.customer.access, payment: "card")
            let checkout = try #require(try await Order.find(OrderID(uuidString: raw)!, on: server.db)?.checkoutSessionID)
            #expect(try await (server.app.waybill.payments as! SandboxPayments).markPaid(id: checkout))
            _ = try await server.send(.POST, "/orders/\(raw)/payment/confirm", token: cast.customer.access)
            let id = try #require(OrderID(uuidString: raw)), price = try await server.price(of: raw)
            let carriers = [cast.otherCustomer.userID, cast.driver.userID, cast.otherDriver.userID].compactMap(UserID.init(uuidString:))
            let orders = Orders(services: server.app.waybill, db: server.db, logger: server.app.logger)
            // Each asks for more than half of what was paid: at most one can be paid.
            let share = price / 2 + 1
            let results = await withTaskGroup(of: Bool.self) { group in
                for carrier in carriers {
                    group.addTask { (try? await orders.payOut(id, to: carrier, destination: "acct_\(carrier)", amount: Money(share, "CHF"))) != nil }
                }
                return await group.reduce(into: [Bool]()) { $0.append($1) }
            }
            #expect(results.filter { $0 }.count == 1, "\(results)")
            let paidOut = try await LedgerRecord.query(on: server.db).filter(\.$shipmentID == id).filter(\.$kind == .payout).all()
            #expect(paidOut.count == 1 && paidOut.first?.amount == share)
            #expect(try await PayoutClaim.query(on: server.db).count() == 0, "no claim is left behind")
            #expect(try await SandboxPayout.query(on: server.db).count() == 1, "the provider moved money once")
        }
    }

    @Test("Without Stripe keys a payout is recorded by the sandbox, which says no money moved", arguments: TestDatabase.available)
    func sandboxPayout(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let raw = try await server.placeOrder(cast.customer.access, payment: "card")
            let checkout = try #require(try await Order.find(OrderID(uuidString: raw)!, on: server.db)?.checkoutSessionID)
            #expect(try await (server.app.waybill.payments as! SandboxPayments).markPaid(id: checkout))
            #expect(try await server.send(.POST, "/orders/\(raw)/payment/confirm", token: cast.customer.access).json["status"].string == "pending")
            let id = try #require(OrderID(uuidString: raw)), traveller = try #require(UserID(uuidString: cast.otherCustomer.userID))
            let orders = Orders(services: server.app.waybill, db: server.db, logger: server.app.logger)
            let entry = try await orders.payOut(id, to: traveller, destination: "acct_sandbox", amount: Money(500, "CHF"))
            #expect(entry.reference?.hasPrefix("sbx_tr_") == true)
            let rows = try await SandboxPayout.query(on: server.db).all()
            #expect(rows.count == 1 && rows.first?.id == entry.reference && rows.first?.amount == 500)
        }
    }
}
