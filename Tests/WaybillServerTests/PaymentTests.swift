import Fluent
import Foundation
import Testing
import Vapor
@testable import WaybillServer
import WaybillCore

@Suite("Card and TWINT payments")
struct PaymentTests {
    static let webhookSecret = "whsec_test_waybill"

    static func withStripe(_ db: TestDatabase, _ body: (TestServer, FakeStripe) async throws -> Void) async throws {
        let stripe = try await FakeStripe.start()
        do {
            try await TestServer.run(db, adjust: { config in
                config.stripe = StripeSettings(secretKey: FakeStripe.secretKey, webhookSecret: webhookSecret, apiBase: stripe.baseURL)
            }) { server in try await body(server, stripe) }
        } catch {
            await stripe.stop()
            throw error
        }
        await stripe.stop()
    }

    static func event(_ id: String, type: String = "checkout.session.completed", object: [String: Any]) -> [UInt8] {
        let event: [String: Any] = ["id": id, "object": "event", "type": type, "data": ["object": object]]
        return Array(try! JSONSerialization.data(withJSONObject: event))
    }

    func postWebhook(_ server: TestServer, _ payload: [UInt8], signature: String) async throws -> Reply {
        try await server.send(.POST, "/payments/stripe/webhook", rawBody: String(decoding: payload, as: UTF8.self),
                              headers: [("Stripe-Signature", signature)])
    }

    @Test("Card order: Checkout Session with the right fields and key; confirm moves it on only once paid", arguments: TestDatabase.available)
    func checkoutAndConfirm(db: TestDatabase) async throws {
        try await Self.withStripe(db) { server, stripe in
            let cast = try await server.cast()
            let created = try await server.send(.POST, "/orders", json: TestServer.orderBody(payment: "card"), token: cast.customer.access)
            #expect(created.status == .created, "\(created)")
            let id = try #require(created.json["order"]["id"].string)
            #expect(created.json["order"]["status"].string == "awaiting_payment")
            #expect(created.json["next"]["action"].string == "pay")
            #expect(created.json["next"]["sandbox"].bool == false)
            let url = try #require(created.json["next"]["paymentUrl"].string)
            #expect(url.hasPrefix("https://checkout.stripe.test/"))

            let request = try #require(stripe.requests.first { $0.path == "/v1/checkout/sessions" })
            #expect(request.authorization == "Bearer \(FakeStripe.secretKey)")
            #expect(request.idempotencyKey == "checkout-\(id)")
            #expect(request.form["mode"] == "payment")
            #expect(request.form["payment_method_types[0]"] == "card")
            #expect(request.form["client_reference_id"] == id)
            #expect(request.form["metadata[order_id]"] == id)
            #expect(request.form["line_items[0][price_data][currency]"] == "chf")
            #expect(request.form["line_items[0][price_data][unit_amount]"] == String(try await server.price(of: id)))
            #expect(request.form["success_url"]?.contains("{CHECKOUT_SESSION_ID}") == true)

            // Not paid yet: not in the customer's history, not for managers as new, confirm changes nothing.
            #expect(try await server.send(.GET, "/orders", token: cast.customer.access).json["items"].array.isEmpty)
            let early = try await server.send(.POST, "/orders/\(id)/payment/confirm", token: cast.customer.access)
            #expect(early.json["status"].string == "awaiting_payment")
            #expect(try await server.send(.GET, "/notifications", token: cast.manager.access).json["items"].array.isEmpty)
            #expect(try await server.send(.POST, "/orders/\(id)/payment/confirm", token: cast.otherCustomer.access).status == .notFound)

            let session = try #require(try await Order.find(OrderID(uuidString: id)!, on: server.db)?.checkoutSessionID)
            stripe.pay(session)
            let paid = try await server.send(.POST, "/orders/\(id)/payment/confirm", token: cast.customer.access)
            #expect(paid.json["status"].string == "pending", "\(paid)")
            #expect(paid.json["payment"]["status"].string == "paid")
            #expect(paid.json["events"].array.compactMap { $0["type"].string } == ["created", "payment_confirmed"])
            // Again: nothing more happens.
            _ = try await server.send(.POST, "/orders/\(id)/payment/confirm", token: cast.customer.access)
            #expect(try await OrderEvent.query(on: server.db).filter(\.$type == "payment_confirmed").count() == 1)
            #expect(try await server.send(.GET, "/notifications", token: cast.manager.access).json["items"].array.count == 1)

            // TWINT asks Stripe for twint; a provider outage writes no order.
            _ = try await server.placeOrder(cast.customer.access, payment: "twint")
            #expect(stripe.requests.last { $0.path == "/v1/checkout/sessions" }?.form["payment_method_types[0]"] == "twint")
            let before = try await Order.query(on: server.db).count()
            stripe.failNextRequest()
            let outage = try await server.send(.POST, "/orders", json: TestServer.orderBody(payment: "card"), token: cast.customer.access)
            #expect(outage.status == .badGateway)
            #expect(outage.errorCode == "payment_provider_error")
            #expect(try await Order.query(on: server.db).count() == before)
        }
    }

    @Test("Webhook: a good signature confirms once; bad, stale or duplicate deliveries change nothing", arguments: TestDatabase.both)
    func webhook(db: TestDatabase) async throws {
        try await Self.withStripe(db) { server, stripe in
            let cast = try await server.cast()
            let id = try await server.placeOrder(cast.customer.access, payment: "card")
            let session = try #require(try await Order.find(OrderID(uuidString: id)!, on: server.db)?.checkoutSessionID)
            stripe.pay(session)
            let payload = Self.event("evt_1", object: stripe.sessionObject(session))
            let now = UnixTime.nowSeconds

            let forged = StripeSignature.sign(payload: payload, secret: "whsec_wrong", timestamp: now)
            #expect(try await postWebhook(server, payload, signature: forged).errorCode == "invalid_signature")
            let stale = StripeSignature.sign(payload: payload, secret: Self.webhookSecret, timestamp: now - 301)
            #expect(try await postWebhook(server, payload, signature: stale).status == .badRequest)
            var tampered = payload
            tampered[tampered.count - 2] = UInt8(ascii: " ")
            #expect(try await postWebhook(server, tampered, signature: StripeSignature.sign(payload: payload, secret: Self.webhookSecret, timestamp: now)).status == .badRequest)
            #expect(try await postWebhook(server, payload, signature: "nonsense").status == .badRequest)
            #expect(try await server.status(of: id) == "awaiting_payment")

            // Rotated secrets: one good v1 among several is enough.
            let good = StripeSignature.sign(payload: payload, secret: Self.webhookSecret, timestamp: now)
            let rotated = good + ",v1=" + String(repeating: "ab", count: 32)
            let accepted = try await postWebhook(server, payload, signature: rotated)
            #expect(accepted.status == .ok, "\(accepted)")
            #expect(try await server.status(of: id) == "pending")
            // Delivered twice, and again after a manual confirm: handled once.
            #expect(try await postWebhook(server, payload, signature: good).status == .ok)
            _ = try await server.send(.POST, "/orders/\(id)/payment/confirm", token: cast.customer.access)
            #expect(try await OrderEvent.query(on: server.db).filter(\.$type == "payment_confirmed").count() == 1)

            // Out of order: a second event id for an order already confirmed changes nothing.
            let late = Self.event("evt_2", type: "checkout.session.async_payment_succeeded", object: stripe.sessionObject(session))
            #expect(try await postWebhook(server, late, signature: StripeSignature.sign(payload: late, secret: Self.webhookSecret, timestamp: now)).status == .ok)
            #expect(try await OrderEvent.query(on: server.db).filter(\.$type == "payment_confirmed").count() == 1)

            // An expired checkout cancels the waiting order.
            let abandoned = try await server.placeOrder(cast.customer.access, payment: "card")
            let abandonedSession = try #require(try await Order.find(OrderID(uuidString: abandoned)!, on: server.db)?.checkoutSessionID)
            var object = stripe.sessionObject(abandonedSession)
            object["status"] = "expired"
            let expired = Self.event("evt_3", type: "checkout.session.expired", object: object)
            #expect(try await postWebhook(server, expired, signature: StripeSignature.sign(payload: expired, secret: Self.webhookSecret, timestamp: now)).status == .ok)
            #expect(try await server.status(of: abandoned) == "cancelled")
        }
    }

    /// A card order the customer has paid on Stripe's page and confirmed.
    func paidCardOrder(_ server: TestServer, _ stripe: FakeStripe, _ cast: Cast) async throws -> (id: String, session: String) {
        let id = try await server.placeOrder(cast.customer.access, payment: "card")
        let session = try #require(try await Order.find(OrderID(uuidString: id)!, on: server.db)?.checkoutSessionID)
        stripe.pay(session)
        let confirmed = try await server.send(.POST, "/orders/\(id)/payment/confirm", token: cast.customer.access)
        try #require(confirmed.json["status"].string == "pending", "\(confirmed)")
        return (id, session)
    }

    @Test("Cancelling a paid card order refunds it through Stripe, once", arguments: TestDatabase.available)
    func refundOnCancel(db: TestDatabase) async throws {
        try await Self.withStripe(db) { server, stripe in
            let cast = try await server.cast()
            let (id, session) = try await paidCardOrder(server, stripe, cast)
            let cancelled = try await server.send(.POST, "/orders/\(id)/cancel", json: ["reason": "Wrong address"], token: cast.customer.access)
            #expect(cancelled.json["status"].string == "cancelled")
            #expect(cancelled.json["payment"]["status"].string == "refunded", "\(cancelled)")
            let refunds = stripe.requests.filter { $0.path == "/v1/refunds" }
            #expect(refunds.count == 1)
            #expect(refunds.first?.idempotencyKey == "refund-\(id)")
            #expect(refunds.first?.form["payment_intent"] == "pi_\(session.dropFirst(3))")
            // The queued job finds the refund done and does not repeat it.
            try await server.deliverMail()
            #expect(stripe.requests.filter { $0.path == "/v1/refunds" }.count == 1)
            let inbox = try await server.send(.GET, "/notifications", token: cast.customer.access)
            #expect(inbox.json["items"].array.contains { $0["kind"].string == "payment_refunded" })
        }
    }

    @Test("A checkout paid after the customer cancelled the order is refunded, not confirmed", arguments: TestDatabase.available)
    func paidAfterCancel(db: TestDatabase) async throws {
        try await Self.withStripe(db) { server, stripe in
            let cast = try await server.cast()
            let id = try await server.placeOrder(cast.customer.access, payment: "card")
            let session = try #require(try await Order.find(OrderID(uuidString: id)!, on: server.db)?.checkoutSessionID)
            let cancelled = try await server.send(.POST, "/orders/\(id)/cancel", json: ["reason": "Ordered twice"], token: cast.customer.access)
            #expect(cancelled.json["payment"]["status"].string == "void")
            stripe.pay(session)  // the payment page was still open in another tab
            let payload = Self.event("evt_late", object: stripe.sessionObject(session))
            let reply = try await postWebhook(server, payload, signature: StripeSignature.sign(payload: payload, secret: Self.webhookSecret, timestamp: UnixTime.nowSeconds))
            #expect(reply.status == .ok)
            #expect(try await server.status(of: id) == "cancelled")
            #expect(try await Order.find(OrderID(uuidString: id)!, on: server.db)?.paymentStatus == .refunded)
            #expect(stripe.requests.filter { $0.path == "/v1/refunds" }.count == 1)
        }
    }

    @Test("A refund that fails is retried by the outbox until it succeeds", arguments: TestDatabase.available)
    func refundRetried(db: TestDatabase) async throws {
        try await Self.withStripe(db) { server, stripe in
            let cast = try await server.cast()
            let (id, _) = try await paidCardOrder(server, stripe, cast)
            stripe.failNextRequest()  // the session lookup before the refund fails
            let cancelled = try await server.send(.POST, "/orders/\(id)/cancel", json: ["reason": "Wrong address"], token: cast.manager.access)
            #expect(cancelled.json["status"].string == "cancelled")
            #expect(try await Order.find(OrderID(uuidString: id)!, on: server.db)?.paymentStatus == .refundPending)
            // Make the job due now and run the outbox, as the worker would later.
            try await server.sql.raw("UPDATE outbox SET next_attempt_at = 0 WHERE kind = 'refund'").run()
            try await server.deliverMail()
            #expect(try await Order.find(OrderID(uuidString: id)!, on: server.db)?.paymentStatus == .refunded)
        }
    }

    @Test("Without Stripe keys: a sandbox page labelled as a test confirms the order offline", arguments: TestDatabase.available)
    func sandbox(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let created = try await server.send(.POST, "/orders", json: TestServer.orderBody(payment: "twint"), token: cast.customer.access)
            #expect(created.json["next"]["sandbox"].bool == true)
            #expect(created.json["order"]["payment"]["sandbox"].bool == true)
            let id = try #require(created.json["order"]["id"].string)
            let url = try #require(created.json["next"]["paymentUrl"].string)
            let path = String(url.dropFirst("http://localhost:8080".count))
            let page = try await server.page(.GET, path)
            #expect(page.status == .ok)
            #expect(page.text.contains("TEST MODE") && page.text.contains("no money moves") && page.text.contains("TWINT"))
            let pay = try await server.page(.POST, path + "/pay")
            #expect(pay.status == .seeOther)
            let back = try #require(pay.headers.first(name: .location))
            let landing = try await server.page(.GET, back)
            #expect(landing.text.contains("Payment received") && landing.text.contains("TEST MODE"))
            let order = try await server.send(.GET, "/orders/\(id)", token: cast.customer.access)
            #expect(order.json["status"].string == "pending")
            #expect(order.json["payment"]["status"].string == "paid")
            // Paying twice does nothing more; an unknown checkout is 404; the webhook is off.
            _ = try await server.page(.POST, path + "/pay")
            #expect(try await OrderEvent.query(on: server.db).filter(\.$type == "payment_confirmed").count() == 1)
            #expect(try await server.page(.GET, "/sandbox/checkout/sbx_cs_nothing").status == .notFound)
            let hook = try await server.send(.POST, "/payments/stripe/webhook", rawBody: "{}", headers: [("Stripe-Signature", "t=1,v1=00")])
            #expect(hook.status == .serviceUnavailable)
            // Refunds in the sandbox are recorded as such.
            let cancelled = try await server.send(.POST, "/orders/\(id)/cancel", json: ["reason": "test"], token: cast.customer.access)
            #expect(cancelled.json["payment"]["status"].string == "refunded")
        }
    }
}
