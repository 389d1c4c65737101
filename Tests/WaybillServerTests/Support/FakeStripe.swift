import Foundation
import NIOConcurrencyHelpers
import Vapor

/// A local HTTP server that speaks the part of Stripe's API Waybill uses (Checkout Sessions,
/// PaymentIntents, Refunds, and Connect: accounts, account links, transfers and their reversals:
/// form-encoded requests, bearer secret key, JSON answers; a repeated Idempotency-Key gets the
/// first answer again), recording every request so tests can check what Waybill sent. Connect
/// events are made with `connectEvent`, signed as Stripe signs them.
final class FakeStripe: Sendable {
    struct Recorded: Sendable {
        var method: String
        var path: String
        var form: [String: String]
        var idempotencyKey: String?
        var authorization: String?
    }

    struct SessionState: Sendable {
        var id: String
        var form: [String: String]
        var paymentStatus = "unpaid"
        var status = "open"
        var subscription: String?
    }

    /// A connected account: what `GET /v1/accounts/{id}` answers; `revoked` answers 403 as Stripe
    /// does once the traveller removed the platform's access.
    struct AccountState: Sendable {
        var id: String
        var form: [String: String]
        var detailsSubmitted = false
        var transfers = "inactive"
        var revoked = false
    }

    /// A Billing subscription: what `GET /v1/subscriptions/{id}` answers, the period on its item
    /// (as since API version 2025-03-31.basil).
    struct SubscriptionState: Sendable {
        var id: String
        var status = "active"
        var cancelAtPeriodEnd = false
        var periodStart: Int64
        var periodEnd: Int64
        var metadata: [String: String]
    }

    let app: Application
    let port: Int
    private let subscriptions = NIOLockedValueBox<[String: SubscriptionState]>([:])
    private let state = NIOLockedValueBox<(requests: [Recorded], sessions: [String: SessionState], idempotent: [String: String], failNext: Bool)>(([], [:], [:], false))
    private let accounts = NIOLockedValueBox<[String: AccountState]>([:])

    static let secretKey = "sk_test_waybill_fake"

    var requests: [Recorded] { state.withLockedValue { $0.requests } }
    var baseURL: String { "http://127.0.0.1:\(port)" }

    private init(app: Application, port: Int) {
        self.app = app
        self.port = port
    }

    static func start() async throws -> FakeStripe {
        let app = try await Application.make(.testing)
        app.http.server.configuration.hostname = "127.0.0.1"
        app.http.server.configuration.port = 0
        let box = NIOLockedValueBox<FakeStripe?>(nil)
        app.post("v1", "checkout", "sessions") { req async throws -> Response in
            try box.withLockedValue { $0! }.createSession(req)
        }
        app.get("v1", "checkout", "sessions", ":id") { req async throws -> Response in
            try box.withLockedValue { $0! }.getSession(req)
        }
        app.post("v1", "refunds") { req async throws -> Response in
            try box.withLockedValue { $0! }.refund(req)
        }
        app.post("v1", "transfers") { req async throws -> Response in
            try box.withLockedValue { $0! }.transfer(req)
        }
        app.post("v1", "transfers", ":id", "reversals") { req async throws -> Response in
            try box.withLockedValue { $0! }.reversal(req)
        }
        app.get("v1", "payment_intents", ":id") { req async throws -> Response in
            try box.withLockedValue { $0! }.paymentIntent(req)
        }
        app.post("v1", "accounts") { req async throws -> Response in
            try box.withLockedValue { $0! }.createAccount(req)
        }
        app.get("v1", "accounts", ":id") { req async throws -> Response in
            try box.withLockedValue { $0! }.getAccount(req)
        }
        app.get("v1", "subscriptions", ":id") { req async throws -> Response in
            try box.withLockedValue { $0! }.getSubscription(req)
        }
        app.post("v1", "subscriptions", ":id") { req async throws -> Response in
            try box.withLockedValue { $0! }.updateSubscription(req)
        }
        app.post("v1", "account_links") { req async throws -> Response in
            try box.withLockedValue { $0! }.accountLink(req)
        }
        try await app.server.start(address: .hostname("127.0.0.1", port: 0))
        guard let port = app.http.server.shared.localAddress?.port else { throw Abort(.internalServerError) }
        let fake = FakeStripe(app: app, port: port)
        box.withLockedValue { $0 = fake }
        return fake
    }

    func stop() async {
        await app.server.shutdown()
        try? await app.asyncShutdown()
    }

    /// Makes the next request fail with a 500, as an outage would.
    func failNextRequest() { state.withLockedValue { $0.failNext = true } }

    /// The customer pays on Stripe's page.
    func pay(_ sessionID: String) {
        state.withLockedValue { $0.sessions[sessionID]?.paymentStatus = "paid"; $0.sessions[sessionID]?.status = "complete" }
    }

    func session(_ id: String) -> SessionState? { state.withLockedValue { $0.sessions[id] } }

    // MARK: Billing

    /// The customer pays a subscription checkout: the session completes with a new subscription
    /// whose period starts at `start` (Unix seconds) and lasts thirty days. Returns its id.
    @discardableResult
    func paySubscription(_ sessionID: String, start: Int64) -> String {
        let id = "sub_\(UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(16))"
        let form = session(sessionID)?.form ?? [:]
        var metadata: [String: String] = [:]
        for (key, value) in form where key.hasPrefix("subscription_data[metadata][") {
            metadata[String(key.dropFirst("subscription_data[metadata][".count).dropLast())] = value
        }
        subscriptions.withLockedValue { $0[id] = SubscriptionState(id: id, periodStart: start, periodEnd: start + 30 * 86_400, metadata: metadata) }
        state.withLockedValue { $0.sessions[sessionID]?.status = "complete"; $0.sessions[sessionID]?.paymentStatus = "paid"; $0.sessions[sessionID]?.subscription = id }
        return id
    }

    func changeSubscription(_ id: String, _ change: (inout SubscriptionState) -> Void) {
        subscriptions.withLockedValue { if var s = $0[id] { change(&s); $0[id] = s } }
    }

    func subscription(_ id: String) -> SubscriptionState? { subscriptions.withLockedValue { $0[id] } }

    func subscriptionObject(_ s: SubscriptionState) -> [String: Any] {
        ["id": s.id, "object": "subscription", "status": s.status, "cancel_at_period_end": s.cancelAtPeriodEnd, "metadata": s.metadata,
         "items": ["object": "list", "data": [["id": "si_\(s.id.dropFirst(4))", "current_period_start": s.periodStart, "current_period_end": s.periodEnd]]]]
    }

    /// An invoice of a subscription, as Stripe's basil API version shapes it.
    func invoiceObject(_ id: String, subscription: String, amount: Int, paid: Bool) -> [String: Any] {
        ["id": id, "object": "invoice", "status": paid ? "paid" : "open", "currency": "chf", "amount_paid": paid ? amount : 0, "amount_due": amount,
         "billing_reason": "subscription_cycle",
         "parent": ["type": "subscription_details", "subscription_details": ["subscription": subscription, "metadata": self.subscription(subscription)?.metadata ?? [:]]]]
    }

    private func getSubscription(_ req: Request) throws -> Response {
        let (_, early) = try record(req)
        if let early { return early }
        guard let id = req.parameters.get("id"), let s = subscription(id) else {
            return Self.json(["error": ["code": "resource_missing"]], status: .notFound)
        }
        return Self.json(subscriptionObject(s))
    }

    private func updateSubscription(_ req: Request) throws -> Response {
        let (recorded, early) = try record(req)
        if let early { return early }
        guard let id = req.parameters.get("id"), subscription(id) != nil else {
            return Self.json(["error": ["code": "resource_missing"]], status: .notFound)
        }
        if let cancel = recorded.form["cancel_at_period_end"] { changeSubscription(id) { $0.cancelAtPeriodEnd = cancel == "true" } }
        return Self.json(subscriptionObject(subscription(id)!))
    }

    /// The JSON Stripe would put in `data.object` for this session.
    func sessionObject(_ id: String) -> [String: Any] {
        guard let session = session(id) else { return [:] }
        let billing = session.form["mode"] == "subscription"
        let intent: Any = session.paymentStatus == "paid" && !billing ? "pi_\(id.dropFirst(3))" : NSNull()
        let metadata: [String: String] = billing ? ["subscription_id": session.form["metadata[subscription_id]"] ?? ""]
            : ["order_id": session.form["metadata[order_id]"] ?? ""]
        var object: [String: Any] = ["id": id, "object": "checkout.session", "payment_status": session.paymentStatus, "status": session.status]
        object["client_reference_id"] = session.form["client_reference_id"] ?? ""
        object["metadata"] = metadata
        object["amount_total"] = Int(session.form["line_items[0][price_data][unit_amount]"] ?? "0") ?? 0
        object["currency"] = session.form["line_items[0][price_data][currency]"] ?? ""
        object["payment_intent"] = intent
        object["mode"] = session.form["mode"] ?? "payment"
        object["subscription"] = session.subscription ?? NSNull()
        return object
    }

    private func record(_ req: Request) throws -> (Recorded, Response?) {
        let body = req.body.string ?? ""
        var form: [String: String] = [:]
        for pair in body.split(separator: "&") {
            let kv = pair.split(separator: "=", maxSplits: 1).map { String($0).removingPercentEncoding ?? String($0) }
            if kv.count == 2 { form[kv[0]] = kv[1] }
        }
        let recorded = Recorded(method: req.method.rawValue, path: req.url.path, form: form,
                                idempotencyKey: req.headers.first(name: "Idempotency-Key"),
                                authorization: req.headers.first(name: .authorization))
        let fail = state.withLockedValue { s -> Bool in
            s.requests.append(recorded)
            defer { s.failNext = false }
            return s.failNext
        }
        if fail { return (recorded, Self.json(["error": ["code": "api_error"]], status: .internalServerError)) }
        if recorded.authorization != "Bearer \(Self.secretKey)" {
            return (recorded, Self.json(["error": ["code": "invalid_api_key"]], status: .unauthorized))
        }
        return (recorded, nil)
    }

    private func createSession(_ req: Request) throws -> Response {
        let (recorded, early) = try record(req)
        if let early { return early }
        let id: String = state.withLockedValue { s in
            if let key = recorded.idempotencyKey, let existing = s.idempotent[key] { return existing }
            let id = "cs_test_\(UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(24))"
            s.sessions[id] = SessionState(id: id, form: recorded.form)
            if let key = recorded.idempotencyKey { s.idempotent[key] = id }
            return id
        }
        var object = sessionObject(id)
        object["url"] = "https://checkout.stripe.test/c/pay/\(id)"
        return Self.json(object)
    }

    private func getSession(_ req: Request) throws -> Response {
        let (_, early) = try record(req)
        if let early { return early }
        guard let id = req.parameters.get("id"), session(id) != nil else {
            return Self.json(["error": ["code": "resource_missing"]], status: .notFound)
        }
        return Self.json(sessionObject(id))
    }

    private func refund(_ req: Request) throws -> Response {
        let (recorded, early) = try record(req)
        if let early { return early }
        return Self.json(["id": "re_\(recorded.idempotencyKey ?? "none")", "object": "refund", "status": "succeeded",
                          "payment_intent": recorded.form["payment_intent"] ?? "", "amount": Int(recorded.form["amount"] ?? "") ?? 0])
    }

    /// A transfer to a connected account; the same key gets the same transfer (Stripe's idempotency).
    private func transfer(_ req: Request) throws -> Response {
        let (recorded, early) = try record(req)
        if let early { return early }
        guard let destination = recorded.form["destination"], destination.hasPrefix("acct_") else {
            return Self.json(["error": ["code": "resource_missing", "param": "destination"]], status: .badRequest)
        }
        let id = state.withLockedValue { s -> String in
            let key = "transfer:" + (recorded.idempotencyKey ?? UUID().uuidString)
            if let known = s.idempotent[key] { return known }
            let id = "tr_\(s.idempotent.count + 1)"
            s.idempotent[key] = id
            return id
        }
        return Self.json(["id": id, "object": "transfer", "amount": Int(recorded.form["amount"] ?? "") ?? 0,
                          "currency": recorded.form["currency"] ?? "", "destination": destination])
    }

    // MARK: Connect

    /// The traveller finishes (or Stripe changes) the account.
    func updateAccount(_ id: String, _ change: (inout AccountState) -> Void) {
        accounts.withLockedValue { if var a = $0[id] { change(&a); $0[id] = a } }
    }

    func account(_ id: String) -> AccountState? { accounts.withLockedValue { $0[id] } }

    func accountObject(_ a: AccountState) -> [String: Any] {
        ["id": a.id, "object": "account", "type": "express", "details_submitted": a.detailsSubmitted,
         "charges_enabled": false, "payouts_enabled": a.transfers == "active",
         "capabilities": ["transfers": a.transfers],
         "requirements": ["currently_due": a.detailsSubmitted ? [] : ["external_account", "individual.verification.document"]],
         "metadata": ["account_id": a.form["metadata[account_id]"] ?? ""]]
    }

    /// A Connect event as Stripe would post it to the Connect endpoint (it names the account),
    /// with `created` in seconds.
    func connectEvent(_ id: String, type: String = "account.updated", account: String, created: Int64) -> [UInt8] {
        let object: [String: Any] = self.account(account).map(accountObject) ?? ["id": account, "object": "account"]
        let event: [String: Any] = ["id": id, "object": "event", "type": type, "account": account, "created": created,
                                    "data": ["object": type == "account.application.deauthorized" ? ["id": "ca_test", "object": "application"] : object]]
        return Array(try! JSONSerialization.data(withJSONObject: event))
    }

    private func createAccount(_ req: Request) throws -> Response {
        let (recorded, early) = try record(req)
        if let early { return early }
        guard recorded.form["type"] == "express", recorded.form["country"]?.count == 2 else {
            return Self.json(["error": ["code": "parameter_invalid", "param": "type"]], status: .badRequest)
        }
        let id: String = state.withLockedValue { s in
            let key = "account:" + (recorded.idempotencyKey ?? UUID().uuidString)
            if let known = s.idempotent[key] { return known }
            let id = "acct_\(UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(16))"
            s.idempotent[key] = id
            return id
        }
        let account = accounts.withLockedValue { a -> AccountState in
            if let known = a[id] { return known }
            a[id] = AccountState(id: id, form: recorded.form)
            return a[id]!
        }
        return Self.json(accountObject(account))
    }

    private func getAccount(_ req: Request) throws -> Response {
        let (_, early) = try record(req)
        if let early { return early }
        guard let id = req.parameters.get("id"), let account = account(id) else {
            return Self.json(["error": ["code": "resource_missing"]], status: .notFound)
        }
        if account.revoked { return Self.json(["error": ["code": "account_invalid"]], status: .forbidden) }
        return Self.json(accountObject(account))
    }

    private func accountLink(_ req: Request) throws -> Response {
        let (recorded, early) = try record(req)
        if let early { return early }
        guard let id = recorded.form["account"], account(id) != nil, recorded.form["type"] == "account_onboarding",
              recorded.form["refresh_url"] != nil, recorded.form["return_url"] != nil else {
            return Self.json(["error": ["code": "parameter_invalid"]], status: .badRequest)
        }
        return Self.json(["object": "account_link", "url": "https://connect.stripe.test/setup/e/\(id)/\(UUID().uuidString.prefix(8))",
                          "expires_at": Int(Date().timeIntervalSince1970) + 300])
    }

    /// A paid session's PaymentIntent names its charge (`latest_charge`).
    private func paymentIntent(_ req: Request) throws -> Response {
        let (_, early) = try record(req)
        if let early { return early }
        guard let id = req.parameters.get("id"), id.hasPrefix("pi_") else {
            return Self.json(["error": ["code": "resource_missing"]], status: .notFound)
        }
        return Self.json(["id": id, "object": "payment_intent", "status": "succeeded", "latest_charge": "ch_" + id.dropFirst(3)])
    }

    private func reversal(_ req: Request) throws -> Response {
        let (recorded, early) = try record(req)
        if let early { return early }
        guard let transfer = req.parameters.get("id"), transfer.hasPrefix("tr_"), Int(recorded.form["amount"] ?? "") ?? 0 > 0 else {
            return Self.json(["error": ["code": "parameter_invalid"]], status: .badRequest)
        }
        let id = state.withLockedValue { s -> String in
            let key = "reversal:" + (recorded.idempotencyKey ?? UUID().uuidString)
            if let known = s.idempotent[key] { return known }
            let id = "trr_\(s.idempotent.count + 1)"
            s.idempotent[key] = id
            return id
        }
        return Self.json(["id": id, "object": "transfer_reversal", "transfer": transfer, "amount": Int(recorded.form["amount"] ?? "") ?? 0])
    }

    private static func json(_ object: [String: Any], status: HTTPResponseStatus = .ok) -> Response {
        var headers = HTTPHeaders()
        headers.contentType = .json
        return Response(status: status, headers: headers, body: .init(data: (try? JSONSerialization.data(withJSONObject: object)) ?? Data()))
    }
}
