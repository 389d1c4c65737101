import Fluent
import Foundation
import Testing
@testable import WaybillServer
import WaybillCore

@Suite("The money ledger, recorded")
struct LedgerRecordingTests {
    @Test("Every movement of money is one ledger entry, written with the change; the migration fills the same entries for older orders",
          arguments: TestDatabase.available)
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
}
