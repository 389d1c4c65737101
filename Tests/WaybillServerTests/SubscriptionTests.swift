import Fluent
import Foundation
import Testing
import Vapor
@testable import WaybillServer
import WaybillCore

@Suite("Subscription plans through Stripe Billing, and the sandbox")
struct SubscriptionTests {
    static let pro: [String: any Sendable] = ["name": "Pro", "monthlyPrice": 4_900, "includedDeliveries": 2, "discountPercent": 20, "expressIncluded": true]

    static func quote(_ server: TestServer, _ token: String, service: String = "standard") async throws -> Reply {
        var body = TestServer.orderBody()
        body["paymentMethod"] = nil; body["recipient"] = nil; body["service"] = service
        return try await server.send(.POST, "/quotes", json: body, token: token)
    }

    static func webhook(_ server: TestServer, _ id: String, _ type: String, _ object: [String: Any]) async throws -> Reply {
        let payload = PaymentTests.event(id, type: type, object: object)
        let signature = StripeSignature.sign(payload: payload, secret: PaymentTests.webhookSecret, timestamp: Int64(server.clock.now.timeIntervalSince1970))
        return try await server.send(.POST, "/payments/stripe/webhook", rawBody: String(decoding: payload, as: UTF8.self),
                                     headers: [("Stripe-Signature", signature)])
    }

    /// An admin offers Pro; Ada subscribes and pays on Stripe's page; Stripe's event activates it.
    static func subscribed(_ server: TestServer, _ stripe: FakeStripe, _ cast: Cast, token: String? = nil) async throws -> (plan: String, subscription: String) {
        let admin = try await server.makeAdmin(cast.otherDriver)
        let plan = try #require(try await server.send(.POST, "/plans", json: pro, token: admin).json["id"].string)
        let asked = try await server.send(.POST, "/subscription", json: ["planId": plan], token: token ?? cast.customer.access)
        try #require(asked.status == .created, "\(asked)")
        let session = try #require(stripe.requests.last { $0.path == "/v1/checkout/sessions" && $0.form["mode"] == "subscription" }).form
        let sessionID = try #require(asked.json["checkoutUrl"].string?.split(separator: "/").last.map(String.init))
        let sub = stripe.paySubscription(sessionID, start: Int64(server.clock.now.timeIntervalSince1970))
        #expect(session["subscription_data[metadata][subscription_id]"] == asked.json["id"].string)
        let done = try await webhook(server, "evt_sub_paid", "checkout.session.completed", stripe.sessionObject(sessionID))
        try #require(done.status == .ok, "\(done)")
        return (plan, sub)
    }

    @Test("Admins offer plans (others 403, 422 field by field, audited); a customer subscribes through Checkout in subscription mode; Stripe's event activates it; quotes and orders show the plan's line; an included delivery costs nothing and needs no payment; parallel orders take the last included one once; a cancelled order gives it back",
          arguments: TestDatabase.available)
    func subscribeAndOrder(db: TestDatabase) async throws {
        try await PaymentTests.withStripe(db) { server, stripe in
            let cast = try await server.cast()
            #expect(try await server.send(.POST, "/plans", json: Self.pro, token: cast.manager.access).status == .forbidden, "managers do not sell plans")
            let admin = try await server.makeAdmin(cast.otherDriver)
            var nothing = Self.pro
            nothing["includedDeliveries"] = 0; nothing["discountPercent"] = 0; nothing["expressIncluded"] = false
            let refused = try await server.send(.POST, "/plans", json: nothing, token: admin)
            #expect(refused.status == .unprocessableEntity && refused.json["error"]["fields"]["includedDeliveries"].string == "plan_gives_nothing", "\(refused)")
            #expect(try await server.send(.GET, "/subscription", token: cast.customer.access).status == .notFound)
            #expect(try await server.send(.GET, "/plans", token: cast.customer.access).json["plans"].array.isEmpty)
            let basic = try await server.send(.POST, "/plans", json: ["name": "Old", "monthlyPrice": 900, "includedDeliveries": 1, "discountPercent": 0,
                                                                       "expressIncluded": false, "active": false], token: admin)
            #expect(basic.status == .created && basic.json["active"].bool == false)
            #expect(try await server.send(.POST, "/subscription", json: ["planId": basic.json["id"].string!], token: cast.customer.access).errorCode == "plan_closed")
            #expect(try await server.send(.GET, "/plans?all=true", token: cast.customer.access).status == .forbidden)

            let (plan, sub) = try await Self.subscribed(server, stripe, cast)
            #expect(try await AuditRecord.query(on: server.db).filter(\.$action == .planChanged).count() == 2)
            let offered = try await server.send(.GET, "/plans", token: cast.customer.access).json["plans"].array
            #expect(offered.map { $0["name"].string } == ["Pro"] && offered.first?["monthlyPrice"]["amount"].int == 4_900)
            let checkout = try #require(stripe.requests.last { $0.path == "/v1/checkout/sessions" })
            #expect(checkout.form["mode"] == "subscription" && checkout.form["line_items[0][price_data][recurring][interval]"] == "month"
                    && checkout.form["line_items[0][price_data][unit_amount]"] == "4900" && checkout.form["line_items[0][price_data][currency]"] == "chf"
                    && checkout.form["customer_email"] == "ada@example.com" && checkout.idempotencyKey?.hasPrefix("subscription-checkout-") == true)
            let mine = try await server.send(.GET, "/subscription", token: cast.customer.access)
            #expect(mine.status == .ok && mine.json["status"].string == "active" && mine.json["benefitApplies"].bool == true
                    && mine.json["plan"]["id"].string?.lowercased() == plan.lowercased() && mine.json["checkoutUrl"].string == nil, "\(mine)")
            #expect(try await SubscriptionRecord.query(on: server.db).filter(\.$providerID == sub).count() == 1)
            #expect(try await server.send(.POST, "/subscription", json: ["planId": plan], token: cast.customer.access).errorCode == "already_subscribed")

            // Included: the delivery charge is covered; express too with Pro.
            let free = try await Self.quote(server, cast.customer.access, service: "express")
            #expect(free.json["price"]["amount"].int == 0 && free.json["plan"]["included"].bool == true && free.json["plan"]["name"].string == "Pro", "\(free)")
            #expect(free.json["breakdown"].array.contains { $0["kind"].string == "plan" })
            // Bob has no plan: his price is whole.
            #expect(try await Self.quote(server, cast.otherCustomer.access).json["plan"].exists == false)

            // Three card orders at once for the last two included deliveries: two are free (no
            // checkout, already paid), the third is priced with the discount or refused with 409.
            let replies = try await withThrowingTaskGroup(of: Reply.self) { group in
                for _ in 0..<3 {
                    group.addTask { try await server.send(.POST, "/orders", json: TestServer.orderBody(payment: "card"), token: cast.customer.access) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let included = replies.filter { $0.json["order"]["plan"]["included"].bool == true }
            #expect(included.count == 2, "\(replies.map(\.json))")
            for reply in included {
                #expect(reply.status == .created && reply.json["order"]["status"].string == "pending" && reply.json["order"]["payment"]["status"].string == "paid"
                        && reply.json["order"]["price"]["amount"].int == 0 && reply.json["next"]["paymentUrl"].exists == false, "\(reply)")
            }
            for reply in replies where reply.json["order"]["plan"]["included"].bool != true {
                #expect(reply.errorCode == "included_deliveries_used" || (reply.status == .created && reply.json["order"]["plan"]["included"].bool == false
                                                                         && reply.json["order"]["status"].string == "awaiting_payment"), "\(reply)")
            }
            #expect(try await SubscriptionRecord.query(on: server.db).first()?.includedUsed == 2)
            let used = try await Self.quote(server, cast.customer.access)
            #expect(used.json["plan"]["included"].bool == false && used.json["breakdown"].array.filter { $0["kind"].string == "plan" }.count == 1, "20 % off, \(used)")

            // A cancelled included delivery is given back (nothing was paid: nothing to refund).
            let first = try #require(included.first?.json["order"]["id"].string)
            let cancelled = try await server.send(.POST, "/orders/\(first)/cancel", json: ["reason": "Changed my mind"], token: cast.customer.access)
            #expect(cancelled.status == .ok && cancelled.json["payment"]["status"].string == "void", "\(cancelled)")
            #expect(try await SubscriptionRecord.query(on: server.db).first()?.includedUsed == 1)
            #expect(try await Self.quote(server, cast.customer.access).json["price"]["amount"].int == 0)
        }
    }

    @Test("A company on a plan imports deliveries: its first rows take the included deliveries, the others get the discount, and the check's total says so",
          arguments: TestDatabase.available)
    func importsGetThePlan(db: TestDatabase) async throws {
        try await PaymentTests.withStripe(db) { server, stripe in
            let cast = try await server.cast()
            try await server.registerCustomer("shop@acme.example", isCompany: true)
            let shop = try await server.login("shop@acme.example")
            _ = try await Self.subscribed(server, stripe, cast, token: shop.access)
            let file = "external_reference,dropoff_street,dropoff_postal_code,dropoff_city,recipient_name\n"
                + (1...4).map { "P-\($0),Bundesplatz 3,3005,Bern,Hans\n" }.joined()
            let checked = try await OrderImportTests.upload(server, Array(file.utf8), token: shop.access)
            #expect(checked.status == .created && checked.json["validCount"].int == 4, "\(checked)")
            let id = try #require(checked.json["id"].string)
            let committed = try await server.send(.POST, "/order-imports/\(id)/commit", token: shop.access)
            #expect(committed.status == .ok && committed.json["createdCount"].int == 4, "\(committed)")
            let orders = try await OrderImportTests.importedOrders(server).sorted { ($0.externalReference ?? "") < ($1.externalReference ?? "") }
            #expect(orders.map(\.externalReference) == ["P-1", "P-2", "P-3", "P-4"])
            #expect(orders.map(\.planIncluded) == [true, true, false, false] && orders.allSatisfy { $0.planName == "Pro" && $0.planSubscriptionID != nil })
            #expect(orders.prefix(2).allSatisfy { $0.priceAmount == 0 })
            let discounted = orders[2].priceAmount
            #expect(discounted > 0 && orders[3].priceAmount == discounted && (orders[3].planDiscount ?? 0) > 0)
            // What the check showed is what the orders cost.
            #expect(checked.json["total"]["amount"].int == orders.map(\.priceAmount).reduce(0, +), "\(checked)")
            #expect(try await SubscriptionRecord.query(on: server.db).first()?.includedUsed == 2)
            // None is left: the next file gets the discount on every row.
            let more = try await OrderImportTests.upload(server, Array("external_reference,dropoff_street,dropoff_postal_code,dropoff_city,recipient_name\nP-5,Bundesplatz 3,3005,Bern,Hans\n".utf8), token: shop.access)
            #expect(more.json["total"]["amount"].int == discounted, "\(more)")
        }
    }

    @Test("Cancel at the period's end (and keep it again); a failed renewal starts the grace, the plan applies until it ends; events are deduplicated and read again from Stripe; a renewal counts included deliveries from zero; a deleted subscription ends the plan",
          arguments: TestDatabase.both)
    func renewalsAndGrace(db: TestDatabase) async throws {
        try await PaymentTests.withStripe(db) { server, stripe in
            let cast = try await server.cast()
            let (plan, sub) = try await Self.subscribed(server, stripe, cast)
            let token = cast.customer.access

            let cancelled = try await server.send(.POST, "/subscription/cancel", token: token)
            #expect(cancelled.status == .ok && cancelled.json["cancelAtPeriodEnd"].bool == true && cancelled.json["benefitApplies"].bool == true, "\(cancelled)")
            #expect(stripe.requests.last?.path == "/v1/subscriptions/\(sub)" && stripe.requests.last?.form["cancel_at_period_end"] == "true")
            #expect(try await server.send(.POST, "/subscription/cancel", token: token).status == .conflict)
            #expect(try await server.send(.POST, "/subscription/resume", token: token).json["cancelAtPeriodEnd"].bool == false)
            #expect(stripe.subscription(sub)?.cancelAtPeriodEnd == false)
            _ = try await server.placeOrder(token)  // one included delivery used
            #expect(try await SubscriptionRecord.query(on: server.db).first()?.includedUsed == 1)

            // The renewal fails: past due, the plan stays for the grace (seven days).
            stripe.changeSubscription(sub) { $0.status = "past_due" }
            let failed = stripe.invoiceObject("in_fail1", subscription: sub, amount: 4_900, paid: false)
            #expect(try await Self.webhook(server, "evt_fail1", "invoice.payment_failed", failed).status == .ok)
            var mine = try await server.send(.GET, "/subscription", token: token)
            #expect(mine.json["status"].string == "past_due" && mine.json["benefitApplies"].bool == true && mine.json["graceEndsAt"].string != nil
                    && mine.json["invoices"].array.map { $0["status"].string } == ["failed"], "\(mine)")
            let grace = mine.json["graceEndsAt"].string
            // The customer is told at once, in the app and by mail, with the grace's last day.
            let day = String(grace?.prefix(10) ?? "?")
            func told() async throws -> [JSON] {
                try await server.send(.GET, "/notifications", token: token).json["items"].array.filter { $0["kind"].string == "plan_payment_failed" }
            }
            let notices = try await told()
            #expect(notices.map { $0["title"].string } == ["Your plan's payment failed"])
            #expect(notices.first?["body"].string?.contains(day) == true, "\(notices)")
            _ = try await server.deliverMail()
            #expect(server.mailer.messages.filter { $0.to.address == "ada@example.com" && $0.subject == "Your plan's payment failed" }.count == 1)
            // The same event again changes nothing; a second failure keeps the deadline and says nothing more.
            #expect(try await Self.webhook(server, "evt_fail1", "invoice.payment_failed", failed).status == .ok)
            #expect(try await StripeEvent.query(on: server.db).filter(\.$id == "evt_fail1").count() == 1)
            #expect(try await server.send(.GET, "/subscription", token: token).json["graceEndsAt"].string == grace)
            let failedAgain = stripe.invoiceObject("in_fail1", subscription: sub, amount: 4_900, paid: false)  // Stripe's retry
            #expect(try await Self.webhook(server, "evt_fail2", "invoice.payment_failed", failedAgain).status == .ok)
            #expect(try await server.send(.GET, "/subscription", token: token).json["graceEndsAt"].string == grace)
            #expect(try await told().count == 1)
            #expect(try await Self.quote(server, token).json["plan"]["name"].string == "Pro", "within the grace")
            server.clock.advance(by: 8 * 86_400)
            #expect(try await Self.quote(server, token).json["plan"].exists == false, "the grace is over")

            // Stripe's retry succeeds: a new period, the grace ends, included deliveries from zero.
            let renewedAt = Int64(server.clock.now.timeIntervalSince1970)
            stripe.changeSubscription(sub) { $0.status = "active"; $0.periodStart = renewedAt; $0.periodEnd = renewedAt + 30 * 86_400 }
            #expect(try await Self.webhook(server, "evt_paid1", "invoice.paid", stripe.invoiceObject("in_fail1", subscription: sub, amount: 4_900, paid: true)).status == .ok)
            mine = try await server.send(.GET, "/subscription", token: token)
            #expect(mine.json["status"].string == "active" && mine.json["graceEndsAt"].exists == false && mine.json["includedUsed"].int == 0
                    && mine.json["invoices"].array.map { $0["status"].string } == ["paid"], "\(mine)")
            #expect(try await Self.quote(server, token).json["plan"]["included"].bool == true)

            // An event arriving late with an old state: the subscription is read again from Stripe.
            var stale = stripe.subscriptionObject(stripe.subscription(sub)!)
            stale["status"] = "past_due"
            #expect(try await Self.webhook(server, "evt_old", "customer.subscription.updated", stale).status == .ok)
            #expect(try await server.send(.GET, "/subscription", token: token).json["status"].string == "active")

            // Stripe gives up (or the period ended after a cancellation): the plan ends.
            stripe.changeSubscription(sub) { $0.status = "canceled" }
            #expect(try await Self.webhook(server, "evt_del", "customer.subscription.deleted", stripe.subscriptionObject(stripe.subscription(sub)!)).status == .ok)
            mine = try await server.send(.GET, "/subscription", token: token)
            #expect(mine.json["status"].string == "canceled" && mine.json["benefitApplies"].bool == false)
            #expect(try await Self.quote(server, token).json["plan"].exists == false)
            // Someone else's subscription events change nothing; Ada may subscribe again.
            #expect(try await Self.webhook(server, "evt_other", "customer.subscription.updated",
                                           ["id": "sub_unknown", "object": "subscription", "status": "active"]).status == .ok)
            #expect(try await server.send(.POST, "/subscription", json: ["planId": plan], token: token).status == .created)
        }
    }

    @Test("A request asked again replaces the unpaid one; if the first checkout is paid after all, it becomes the subscription and the newer request gives way",
          arguments: TestDatabase.available)
    func paidAfterAskingAgain(db: TestDatabase) async throws {
        try await PaymentTests.withStripe(db) { server, stripe in
            let cast = try await server.cast()
            let admin = try await server.makeAdmin(cast.otherDriver)
            let plan = try #require(try await server.send(.POST, "/plans", json: Self.pro, token: admin).json["id"].string)
            let first = try await server.send(.POST, "/subscription", json: ["planId": plan], token: cast.customer.access)
            let second = try await server.send(.POST, "/subscription", json: ["planId": plan], token: cast.customer.access)
            #expect(first.status == .created && second.status == .created && first.json["id"].string != second.json["id"].string)
            #expect(try await SubscriptionRecord.query(on: server.db).filter(\.$status == .incomplete).count() == 1, "the first request gave way")
            let firstSession = try #require(first.json["checkoutUrl"].string?.split(separator: "/").last.map(String.init))
            stripe.paySubscription(firstSession, start: Int64(server.clock.now.timeIntervalSince1970))
            #expect(try await Self.webhook(server, "evt_late", "checkout.session.completed", stripe.sessionObject(firstSession)).status == .ok)
            let mine = try await server.send(.GET, "/subscription", token: cast.customer.access)
            #expect(mine.json["id"].string == first.json["id"].string && mine.json["status"].string == "active", "\(mine)")
            #expect(try await SubscriptionRecord.find(.init(uuidString: second.json["id"].string!)!, on: server.db)?.status == .canceled)
        }
    }

    @Test("Admins see who subscribes: the paying ones by default, one status or one plan on asking, newest first and paged; with the account's email but not the invoices or the checkout; others 403; in the web app too, with each plan's count, in French as well",
          arguments: TestDatabase.both)
    func adminsListSubscribers(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let admin = try await server.makeAdmin(cast.otherDriver)
            let pro = try #require(try await server.send(.POST, "/plans", json: Self.pro, token: admin).json["id"].string)
            var liteTerms = Self.pro
            liteTerms["name"] = "Lite"; liteTerms["includedDeliveries"] = 0
            let lite = try #require(try await server.send(.POST, "/plans", json: liteTerms, token: admin).json["id"].string)
            // Ada and Bob pay for Pro on the sandbox's page; Cyd asks for Lite and never pays.
            try await server.registerCustomer("cyd@example.com")
            for (email, plan, pays) in [("ada@example.com", pro, true), ("bob@example.com", pro, true), ("cyd@example.com", lite, false)] {
                let browser = TestBrowser(server)
                _ = try await browser.signIn(email)
                let asked = try await browser.post("/plan/subscribe", ["planId": plan], from: "/plan")
                #expect(asked.status == .seeOther, "\(asked.status)")
                guard pays else { continue }
                let checkout = try #require(URLComponents(string: asked.location ?? "")?.path.split(separator: "/").last.map(String.init))
                #expect(try await browser.post("/sandbox/subscription/\(checkout)/pay", [:], from: "/sandbox/subscription/\(checkout)").status == .seeOther)
            }

            let paying = try await server.send(.GET, "/subscriptions", token: admin)
            #expect(paying.status == .ok, "\(paying)")
            let items = paying.json["items"].array
            #expect(Set(items.map { $0["account"]["email"].string ?? "" }) == ["ada@example.com", "bob@example.com"], "\(paying)")
            for item in items {
                #expect(item["subscription"]["status"].string == "active" && item["subscription"]["plan"]["name"].string == "Pro")
                #expect(item["subscription"]["includedUsed"].int == 0 && item["subscription"]["sandbox"].bool == true)
                #expect(!item["subscription"]["invoices"].exists && !item["subscription"]["checkoutUrl"].exists)
            }
            let unpaid = try await server.send(.GET, "/subscriptions?status=incomplete", token: admin).json["items"].array
            #expect(unpaid.map { $0["account"]["email"].string ?? "" } == ["cyd@example.com"])
            #expect(try await server.send(.GET, "/subscriptions?planId=\(lite)", token: admin).json["items"].array.isEmpty)
            #expect(try await server.send(.GET, "/subscriptions?planId=\(lite)&status=incomplete", token: admin).json["items"].array.count == 1)
            // A page of one, then the next, then none.
            let first = try await server.send(.GET, "/subscriptions?limit=1", token: admin)
            let cursor = try #require(first.json["nextCursor"].string)
            let second = try await server.send(.GET, "/subscriptions?limit=1&cursor=\(cursor)", token: admin)
            #expect(!second.json["nextCursor"].exists)
            let paged = (first.json["items"].array + second.json["items"].array).map { $0["subscription"]["id"].string ?? "" }
            #expect(paged == items.map { $0["subscription"]["id"].string ?? "" }, "newest first, the same order page by page")
            #expect(try await server.send(.GET, "/subscriptions?cursor=nonsense", token: admin).status == .badRequest)
            #expect(try await server.send(.GET, "/subscriptions?planId=nope", token: admin).status == .badRequest)
            #expect(try await server.send(.GET, "/subscriptions?limit=0", token: admin).status == .badRequest)
            for token in [cast.customer.access, cast.manager.access, cast.driver.access] {
                #expect(try await server.send(.GET, "/subscriptions", token: token).status == .forbidden)
            }

            let mia = TestBrowser(server)
            _ = try await mia.signIn("mia@courier.example")
            let plans = try await mia.get("/admin/plans")
            #expect(plans.html.contains("href=\"/admin/plans/subscribers?plan=\(pro)\" data-subscribers=\"2\"")
                    && plans.html.contains("href=\"/admin/plans/subscribers?plan=\(lite)\" data-subscribers=\"0\""), "\(plans.html)")
            let list = try await mia.get("/admin/plans/subscribers")
            #expect(list.status == .ok && list.html.contains("data-subscriber=\"ada@example.com\"") && list.html.contains("data-subscriber=\"bob@example.com\"")
                    && !list.html.contains("cyd@example.com"), "\(list.html)")
            let incomplete = try await mia.get("/admin/plans/subscribers?plan=\(lite)&status=incomplete")
            #expect(incomplete.html.contains("data-subscriber=\"cyd@example.com\"") && !incomplete.html.contains("data-subscriber=\"ada@example.com\""))
            #expect(try await mia.get("/admin/plans/subscribers?status=nonsense").status == .badRequest)
            _ = try await mia.get("/lang/fr?back=/admin/plans/subscribers")
            #expect(try await mia.get("/admin/plans/subscribers").html.contains("Abonnés"))
            let ada = TestBrowser(server)
            _ = try await ada.signIn("ada@example.com")
            #expect(try await ada.get("/admin/plans/subscribers").status == .forbidden)
        }
    }

    @Test("In the web app without Stripe keys: an admin offers a plan (a field error shown beside the field), a customer subscribes on the sandbox's page, sees the plan and its included deliveries, a failed test renewal shows the grace, and cancels at the period's end; French too",
          arguments: TestDatabase.available)
    func sandboxInTheWebApp(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            _ = try await server.makeAdmin(cast.otherDriver)
            let admin = TestBrowser(server)
            _ = try await admin.signIn("mia@courier.example")
            let fields = ["name": "Pro", "monthlyPrice": "49.00", "includedDeliveries": "2", "discountPercent": "20", "expressIncluded": "on", "active": "on"]
            let refused = try await admin.post("/admin/plans", fields.merging(["discountPercent": "95"]) { $1 }, from: "/admin/plans")
            #expect(refused.status == .unprocessableEntity && refused.html.contains("aria-invalid=\"true\""), "\(refused.status)")
            let saved = try await admin.post("/admin/plans", fields, from: "/admin/plans")
            #expect(saved.status == .seeOther, "\(saved.status) \(saved.html)")
            #expect(try await admin.get("/admin/plans").html.contains("data-plan=\"Pro\""))

            let ada = TestBrowser(server)
            _ = try await ada.signIn("ada@example.com")
            #expect(try await ada.get("/admin/plans").status == .forbidden)
            #expect(try await ada.get("/account").html.contains("href=\"/plan\""))
            let offer = try await ada.get("/plan")
            #expect(offer.status == .ok && offer.html.contains("data-plan=\"Pro\"") && offer.html.contains("CHF 49.00 a month"), "\(offer.html)")
            let planID = try #require(try await PlanRecord.query(on: server.db).first()?.id?.uuidString)
            let toCheckout = try await ada.post("/plan/subscribe", ["planId": planID], from: "/plan")
            let sandboxURL = try #require(toCheckout.location)
            let sandboxPath = URLComponents(string: sandboxURL)?.path ?? sandboxURL
            #expect(sandboxPath.hasPrefix("/sandbox/subscription/"), "\(sandboxURL)")
            let sandboxPage = try await ada.get(sandboxPath)
            #expect(sandboxPage.html.contains("no money moves"), "\(sandboxPage.html)")
            let checkout = try #require(try await SubscriptionRecord.query(on: server.db).first()?.checkoutID)
            let paid = try await ada.post("/sandbox/subscription/\(checkout)/pay", [:], from: "/sandbox/subscription/\(checkout)")
            #expect(paid.status == .seeOther)
            var page = try await ada.get("/plan")
            #expect(page.html.contains("data-status=\"active\"") && page.html.contains("0 of 2 included deliveries used"), "\(page.html)")
            #expect(try await Self.quote(server, cast.customer.access).json["price"]["amount"].int == 0)

            _ = try await ada.post("/sandbox/subscription/\(checkout)/fail", [:], from: "/sandbox/subscription/\(checkout)")
            page = try await ada.get("/plan")
            #expect(page.html.contains("data-status=\"past_due\"") && page.html.contains("data-benefit=\"true\"") && page.html.contains("still applies until"), "\(page.html)")
            _ = try await ada.post("/sandbox/subscription/\(checkout)/renew", [:], from: "/sandbox/subscription/\(checkout)")
            #expect(try await ada.get("/plan").html.contains("data-status=\"active\""))
            let cancel = try await ada.post("/plan/cancel", [:], from: "/plan")
            #expect(cancel.status == .seeOther)
            page = try await ada.get("/plan")
            #expect(page.html.contains("Ends on") && page.html.contains("Keep my subscription"))
            _ = try await ada.get("/lang/fr?back=/plan")
            #expect(try await ada.get("/plan").html.contains("Garder mon abonnement"))
        }
    }
}
