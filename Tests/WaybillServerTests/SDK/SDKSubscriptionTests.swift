import Foundation
import Testing
import Vapor
import WaybillClient
import WaybillCore
@testable import WaybillServer

/// Subscription plans through the Swift SDK and `waybill-client subscription` (issue 19, item 2).
@Suite("Subscription plans through the SDK and the command line")
struct SDKSubscriptionTests {
    @Test("Through the SDK an admin offers a plan; a customer subscribes (the sandbox's checkout), the quote applies the plan, the admin finds them among the subscribers, and they cancel at the period's end",
          arguments: TestDatabase.available)
    func plansThroughSDK(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            try await server.serving { port in
                let cast = try await server.cast()
                _ = try await server.makeAdmin(cast.otherDriver)
                let mia = server.sdk(port: port)
                try await mia.signIn(email: "mia@courier.example", password: TestServer.password)
                let plan = try await mia.createPlan(PlanTerms(name: "Pro", monthlyPrice: 4_900, includedDeliveries: 2, discountPercent: 20, expressIncluded: true))
                #expect(plan.monthlyPrice.amount == 4_900 && plan.active)
                let ada = server.sdk(port: port)
                try await ada.signIn(email: "ada@example.com", password: TestServer.password)
                do throws(WaybillClient.WaybillError) {
                    _ = try await ada.createPlan(PlanTerms(name: "Mine", monthlyPrice: 100, includedDeliveries: 1, discountPercent: 0, expressIncluded: false))
                    Issue.record("a customer does not offer plans")
                } catch { #expect(error.code == "forbidden") }
                #expect(try await ada.subscription() == nil)
                #expect(try await ada.plans().map(\.name) == ["Pro"])
                let asked = try await ada.subscribe(to: UUID(uuidString: plan.id)!)
                #expect(asked.status == .incomplete && asked.sandbox && asked.checkoutUrl?.contains("/sandbox/subscription/") == true)
                // Paid on the sandbox's page.
                let checkout = try #require(try await SubscriptionRecord.query(on: server.db).first()?.checkoutID)
                #expect(try await server.app.waybill.run { try await Subscriptions(services: server.app.waybill, db: server.db, logger: server.app.logger).sandbox(.pay, checkout: checkout) })
                let active = try #require(try await ada.subscription())
                #expect(active.status == .active && active.benefitApplies && active.plan.name == "Pro")
                // The admin sees Ada among the paying subscribers; Ada may not look.
                let listed = try await mia.subscribers(plan: UUID(uuidString: plan.id)!)
                #expect(listed.items.map(\.account.email) == ["ada@example.com"] && listed.items.first?.subscription.status == .active && listed.nextCursor == nil)
                #expect(try await mia.subscribers(status: .incomplete).items.isEmpty)
                do throws(WaybillClient.WaybillError) {
                    _ = try await ada.subscribers()
                    Issue.record("a customer does not list subscribers")
                } catch { #expect(error.code == "forbidden") }
                let ended = try await ada.cancelSubscription()
                #expect(ended.cancelAtPeriodEnd && ended.benefitApplies)
                #expect(try await ada.resumeSubscription().cancelAtPeriodEnd == false)
            }
        }
    }

    @Test("waybill-client: subscription offer (admins), plans, subscribe prints where to pay, show, the admins' list of subscribers, and cancel")
    func plansThroughCLI() async throws {
        try await TestServer.run(.sqlite) { server in
            try await server.serving { port in
                let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("waybill-cli-\(UUID().uuidString)")
                try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
                defer { try? FileManager.default.removeItem(at: scratch) }
                let cast = try await server.cast()
                _ = try await server.makeAdmin(cast.otherDriver)
                let mia = CLI(server: "http://127.0.0.1:\(port)", sessionFile: scratch.appendingPathComponent("mia.json").path)
                #expect(try await mia.run("login", "--email", "mia@courier.example", "--password", TestServer.password).status == 0)
                let offered = try await mia.run("subscription", "offer", "--name", "Pro", "--price", "49.00", "--included", "2", "--express")
                #expect(offered.status == 0 && offered.stdout.contains("Pro  CHF 49.00 a month  2 deliveries included, express included"), "\(offered)")
                let ada = CLI(server: "http://127.0.0.1:\(port)", sessionFile: scratch.appendingPathComponent("ada.json").path)
                #expect(try await ada.run("login", "--email", "ada@example.com", "--password", TestServer.password).status == 0)
                #expect(try await ada.run("subscription").stdout.contains("No subscription."))
                let planID = try #require(try await PlanRecord.query(on: server.db).first()?.id?.uuidString)
                #expect(try await ada.run("subscription", "plans").stdout.contains(planID))
                let asked = try await ada.run("subscription", "subscribe", planID)
                #expect(asked.status == 0 && asked.stdout.contains("Pro: incomplete") && asked.stdout.contains("Pay at: "), "\(asked)")
                let checkout = try #require(try await SubscriptionRecord.query(on: server.db).first()?.checkoutID)
                _ = try await server.app.waybill.run { try await Subscriptions(services: server.app.waybill, db: server.db, logger: server.app.logger).sandbox(.pay, checkout: checkout) }
                #expect(try await ada.run("subscription").stdout.contains("Pro: active"))
                let listed = try await mia.run("subscription", "subscribers")
                #expect(listed.status == 0 && listed.stdout.contains("Ada Muster <ada@example.com>  Pro  active  renews") && listed.stdout.contains("0/2 included used"), "\(listed)")
                #expect(try await mia.run("subscription", "subscribers", "--status", "canceled").stdout.contains("No subscribers."))
                #expect(try await mia.run("subscription", "subscribers", "--status", "gone").status != 0)
                let cancelled = try await ada.run("subscription", "cancel")
                #expect(cancelled.status == 0 && cancelled.stdout.contains("ends at the period's end"), "\(cancelled)")
            }
        }
    }
}
