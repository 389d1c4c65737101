import Crypto
import Fluent
import Foundation
import Vapor
import WaybillCore

/// What the payment provider is asked to collect.
struct CheckoutRequest: Sendable {
    var orderID: OrderID
    var reference: String
    var price: Money
    var method: PaymentMethod
    var customerEmail: String
    var successURL: String
    var cancelURL: String
}

struct Checkout: Sendable, Equatable {
    var id: String
    var url: String
}

/// A checkout as the provider sees it now.
struct CheckoutState: Sendable, Equatable {
    var id: String
    var paid: Bool
    var expired: Bool
    var orderID: String?
    var amount: Int?
    var currency: String?
    var paymentIntent: String?
}

/// Money sent to someone who carried a leg (a traveller), to their account with the provider.
struct PayoutRequest: Sendable {
    var shipmentID: OrderID
    /// The Waybill account paid.
    var accountID: UserID
    /// Their account with the provider (a Stripe connected account, `acct_…`).
    var destination: String
    var amount: Money
    /// Makes a retried payout harmless: the provider answers with the first transfer.
    var idempotencyKey: String
    /// The sender's payment (its PaymentIntent): the transfer draws on that charge
    /// (`source_transaction`), so it never waits for the platform's balance.
    var paymentIntent: String? = nil
}

/// A connected account as the provider sees it now.
struct ConnectedAccountState: Sendable, Equatable {
    var id: String
    var status: PayoutAccountStatus
    /// What the provider still needs (its `requirements.currently_due`), for the traveller's page.
    var requirementsDue: [String] = []
}

/// A monthly subscription to a plan, to be paid on the provider's checkout page.
struct SubscriptionCheckoutRequest: Sendable {
    /// Waybill's subscription (the provider's subscription carries it in its metadata).
    var subscriptionID: SubscriptionID
    var accountID: UserID
    var planName: String
    var monthlyPrice: Money
    var customerEmail: String
    var successURL: String
    var cancelURL: String
}

/// A subscription checkout as the provider sees it now.
struct SubscriptionCheckoutState: Sendable, Equatable {
    var id: String
    var complete: Bool
    var expired: Bool
    /// The provider's subscription, once paid.
    var subscription: String?
    /// Waybill's subscription id.
    var reference: String?
}

/// A subscription as the provider sees it now.
struct ProviderSubscription: Sendable, Equatable {
    var id: String
    /// The provider's status (Stripe's: active, past_due, canceled, …).
    var status: String
    var cancelAtPeriodEnd: Bool
    /// The current period, Unix milliseconds.
    var periodStart: Int64?
    var periodEnd: Int64?
    /// Waybill's subscription id (metadata).
    var reference: String?
}

/// Takes card and TWINT payments: Stripe Checkout, or the sandbox page when no keys are set.
protocol PaymentProvider: Sendable {
    var isSandbox: Bool { get }
    func createCheckout(_ request: CheckoutRequest) async throws -> Checkout
    func checkout(id: String) async throws -> CheckoutState
    /// Refunds a paid checkout: in full, or `amount` of it (an insurance claim). The idempotency
    /// key makes a retried refund harmless.
    func refund(checkout: CheckoutState, amount: Int?, idempotencyKey: String) async throws -> String
    /// Pays `request.amount` out to a connected account; returns the provider's id for the transfer.
    func payOut(_ request: PayoutRequest) async throws -> String
    /// Takes back `amount` of a transfer (a refund after the traveller was paid); returns the reversal's id.
    func reverse(transfer: String, amount: Money, idempotencyKey: String) async throws -> String
    /// Opens a connected account (Stripe Connect Express, transfers requested) for a traveller.
    func createConnectedAccount(for accountID: UserID, email: String, country: String) async throws -> String
    /// A single-use link to the provider's onboarding for `account`.
    func onboardingLink(account: String, refreshURL: String, returnURL: String) async throws -> String
    /// The account as the provider sees it now; nil if the platform no longer has access to it.
    func connectedAccount(_ id: String) async throws -> ConnectedAccountState?
    /// Opens a checkout for a monthly subscription (Stripe Billing: Checkout in subscription mode).
    func createSubscriptionCheckout(_ request: SubscriptionCheckoutRequest) async throws -> Checkout
    func subscriptionCheckout(id: String) async throws -> SubscriptionCheckoutState
    /// The subscription as the provider sees it now; nil if it does not know it.
    func subscription(id: String) async throws -> ProviderSubscription?
    /// Stops (or restores) the renewal at the end of the current period.
    func setCancelAtPeriodEnd(subscription id: String, _ cancel: Bool) async throws -> ProviderSubscription
}

extension WaybillError {
    static func paymentProvider(_ detail: String) -> WaybillError {
        WaybillError(.badGateway, .paymentProviderError, "The payment provider could not be reached or refused the request (\(detail)). Nothing was changed; try again.")
    }
}

/// Stripe's REST API (form-encoded requests, JSON answers), over Vapor's HTTP client.
struct StripePayments: PaymentProvider {
    let settings: StripeSettings
    let client: @Sendable () -> any Client
    var isSandbox: Bool { false }

    func createCheckout(_ request: CheckoutRequest) async throws -> Checkout {
        let id = request.orderID.uuidString
        let fields: [(String, String)] = [
            ("mode", "payment"),
            ("payment_method_types[0]", request.method == .twint ? "twint" : "card"),
            ("line_items[0][quantity]", "1"),
            ("line_items[0][price_data][currency]", request.price.currency.lowercased()),
            ("line_items[0][price_data][unit_amount]", String(request.price.amount)),
            ("line_items[0][price_data][product_data][name]", "Delivery \(request.reference)"),
            ("client_reference_id", id),
            ("metadata[order_id]", id),
            ("payment_intent_data[metadata][order_id]", id),
            // The charge and any transfer of its money to a traveller share a group.
            ("payment_intent_data[transfer_group]", id),
            ("customer_email", request.customerEmail),
            ("success_url", request.successURL),
            ("cancel_url", request.cancelURL),
        ]
        let json = try await post("/v1/checkout/sessions", fields, idempotencyKey: "checkout-\(id)")
        guard let sessionID = json["id"] as? String, let url = json["url"] as? String else {
            throw WaybillError.paymentProvider("no session in the answer")
        }
        return Checkout(id: sessionID, url: url)
    }

    func checkout(id: String) async throws -> CheckoutState {
        let allowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "_"))
        guard !id.isEmpty, id.unicodeScalars.allSatisfy(allowed.contains) else { throw WaybillError.notFound }
        let response = try await send(.GET, "/v1/checkout/sessions/\(id)", body: nil, idempotencyKey: nil)
        return Self.state(from: response)
    }

    static func state(from json: [String: Any]) -> CheckoutState {
        let metadata = json["metadata"] as? [String: Any]
        return CheckoutState(
            id: json["id"] as? String ?? "",
            paid: (json["payment_status"] as? String) == "paid",
            expired: (json["status"] as? String) == "expired",
            orderID: (metadata?["order_id"] as? String) ?? (json["client_reference_id"] as? String),
            amount: (json["amount_total"] as? NSNumber).flatMap { Int(exactly: $0.doubleValue) },
            currency: (json["currency"] as? String)?.uppercased(),
            paymentIntent: json["payment_intent"] as? String)
    }

    func refund(checkout: CheckoutState, amount: Int?, idempotencyKey: String) async throws -> String {
        guard let intent = checkout.paymentIntent else { throw WaybillError.paymentProvider("the checkout has no payment to refund") }
        var fields = [("payment_intent", intent)]
        if let amount { fields.append(("amount", String(amount))) }
        if let order = checkout.orderID { fields.append(("metadata[order_id]", order)) }
        let json = try await post("/v1/refunds", fields, idempotencyKey: idempotencyKey)
        guard let id = json["id"] as? String else { throw WaybillError.paymentProvider("no refund in the answer") }
        return id
    }

    /// A Stripe Connect transfer from the platform's balance to the traveller's connected account,
    /// grouped with the shipment's charge (`transfer_group`).
    func payOut(_ request: PayoutRequest) async throws -> String {
        var fields = [
            ("amount", String(request.amount.amount)), ("currency", request.amount.currency.lowercased()),
            ("destination", request.destination), ("transfer_group", request.shipmentID.uuidString),
            ("metadata[order_id]", request.shipmentID.uuidString), ("metadata[account_id]", request.accountID.uuidString),
        ]
        // The charge, not the PaymentIntent: Stripe's `source_transaction` takes a charge id.
        if let intent = request.paymentIntent, Self.isStripeID(intent) {
            let json = try await send(.GET, "/v1/payment_intents/\(intent)", body: nil, idempotencyKey: nil)
            if let charge = json["latest_charge"] as? String { fields.append(("source_transaction", charge)) }
        }
        let json = try await post("/v1/transfers", fields, idempotencyKey: request.idempotencyKey)
        guard let id = json["id"] as? String else { throw WaybillError.paymentProvider("no transfer in the answer") }
        return id
    }

    func reverse(transfer: String, amount: Money, idempotencyKey: String) async throws -> String {
        guard Self.isStripeID(transfer) else { throw WaybillError.paymentProvider("not a transfer id") }
        let json = try await post("/v1/transfers/\(transfer)/reversals", [("amount", String(amount.amount))], idempotencyKey: idempotencyKey)
        guard let id = json["id"] as? String else { throw WaybillError.paymentProvider("no reversal in the answer") }
        return id
    }

    func createConnectedAccount(for accountID: UserID, email: String, country: String) async throws -> String {
        let json = try await post("/v1/accounts", [
            ("type", "express"), ("country", country), ("email", email),
            ("capabilities[transfers][requested]", "true"), ("business_type", "individual"),
            ("metadata[account_id]", accountID.uuidString),
        ], idempotencyKey: "connect-account-\(accountID.uuidString)")
        guard let id = json["id"] as? String, id.hasPrefix("acct_") else { throw WaybillError.paymentProvider("no account in the answer") }
        return id
    }

    func onboardingLink(account: String, refreshURL: String, returnURL: String) async throws -> String {
        let json = try await post("/v1/account_links", [
            ("account", account), ("type", "account_onboarding"), ("refresh_url", refreshURL), ("return_url", returnURL),
        ], idempotencyKey: "account-link-\(account)-\(randomHex(bytes: 8))")
        guard let url = json["url"] as? String, url.hasPrefix("https://") || url.hasPrefix("http://") else {
            throw WaybillError.paymentProvider("no link in the answer")
        }
        return url
    }

    func connectedAccount(_ id: String) async throws -> ConnectedAccountState? {
        guard Self.isStripeID(id) else { throw WaybillError.paymentProvider("not an account id") }
        let json: [String: Any]
        do {
            json = try await send(.GET, "/v1/accounts/\(id)", body: nil, idempotencyKey: nil)
        } catch let error as WaybillError where error.message.contains("account_invalid") || error.message.contains("resource_missing") {
            return nil  // access revoked (Stripe answers 403 account_invalid) or gone
        }
        return Self.accountState(from: json)
    }

    static func accountState(from json: [String: Any]) -> ConnectedAccountState {
        let capabilities = json["capabilities"] as? [String: Any]
        let requirements = json["requirements"] as? [String: Any]
        return ConnectedAccountState(
            id: json["id"] as? String ?? "",
            status: .of(transfersCapability: capabilities?["transfers"] as? String, detailsSubmitted: json["details_submitted"] as? Bool ?? false),
            requirementsDue: ((requirements?["currently_due"] as? [Any]) ?? []).compactMap { $0 as? String }.prefix(20).map { $0 })
    }

    // MARK: Billing

    /// Checkout in subscription mode with an inline monthly price: no Price object to keep in step
    /// with the plan; a changed plan applies to new subscriptions, existing ones keep their price.
    func createSubscriptionCheckout(_ request: SubscriptionCheckoutRequest) async throws -> Checkout {
        let id = request.subscriptionID.uuidString
        let json = try await post("/v1/checkout/sessions", [
            ("mode", "subscription"),
            ("line_items[0][quantity]", "1"),
            ("line_items[0][price_data][currency]", request.monthlyPrice.currency.lowercased()),
            ("line_items[0][price_data][unit_amount]", String(request.monthlyPrice.amount)),
            ("line_items[0][price_data][recurring][interval]", "month"),
            ("line_items[0][price_data][product_data][name]", "Plan \(request.planName)"),
            ("client_reference_id", id),
            ("metadata[subscription_id]", id),
            ("subscription_data[metadata][subscription_id]", id),
            ("subscription_data[metadata][account_id]", request.accountID.uuidString),
            ("customer_email", request.customerEmail),
            ("success_url", request.successURL),
            ("cancel_url", request.cancelURL),
        ], idempotencyKey: "subscription-checkout-\(id)")
        guard let sessionID = json["id"] as? String, let url = json["url"] as? String else {
            throw WaybillError.paymentProvider("no session in the answer")
        }
        return Checkout(id: sessionID, url: url)
    }

    func subscriptionCheckout(id: String) async throws -> SubscriptionCheckoutState {
        guard Self.isStripeID(id) else { throw WaybillError.notFound }
        return Self.subscriptionCheckoutState(from: try await send(.GET, "/v1/checkout/sessions/\(id)", body: nil, idempotencyKey: nil))
    }

    static func subscriptionCheckoutState(from json: [String: Any]) -> SubscriptionCheckoutState {
        let metadata = json["metadata"] as? [String: Any]
        // `subscription` is an id, or the object when expanded.
        let subscription = (json["subscription"] as? String) ?? ((json["subscription"] as? [String: Any])?["id"] as? String)
        return SubscriptionCheckoutState(
            id: json["id"] as? String ?? "",
            complete: (json["status"] as? String) == "complete" && subscription != nil,
            expired: (json["status"] as? String) == "expired",
            subscription: subscription,
            reference: (metadata?["subscription_id"] as? String) ?? (json["client_reference_id"] as? String))
    }

    func subscription(id: String) async throws -> ProviderSubscription? {
        guard Self.isStripeID(id) else { throw WaybillError.paymentProvider("not a subscription id") }
        do {
            return Self.subscriptionState(from: try await send(.GET, "/v1/subscriptions/\(id)", body: nil, idempotencyKey: nil))
        } catch let error as WaybillError where error.message.contains("resource_missing") {
            return nil
        }
    }

    func setCancelAtPeriodEnd(subscription id: String, _ cancel: Bool) async throws -> ProviderSubscription {
        guard Self.isStripeID(id) else { throw WaybillError.paymentProvider("not a subscription id") }
        // A fresh key per call: cancel, resume and cancel again are three different requests.
        let json = try await post("/v1/subscriptions/\(id)", [("cancel_at_period_end", cancel ? "true" : "false")],
                                  idempotencyKey: "subscription-\(id)-\(cancel)-\(randomHex(bytes: 8))")
        return Self.subscriptionState(from: json)
    }

    /// A Stripe subscription. The period is on the subscription in older API versions and on its
    /// items since 2025-03-31.basil: either is read.
    static func subscriptionState(from json: [String: Any]) -> ProviderSubscription {
        func millis(_ value: Any?) -> Int64? {
            (value as? NSNumber).flatMap { Int64(exactly: $0.doubleValue) }.flatMap { $0.multipliedReportingOverflow(by: 1000).overflow ? nil : $0 * 1000 }
        }
        let item = ((json["items"] as? [String: Any])?["data"] as? [[String: Any]])?.first
        return ProviderSubscription(
            id: json["id"] as? String ?? "",
            status: json["status"] as? String ?? "canceled",
            cancelAtPeriodEnd: json["cancel_at_period_end"] as? Bool ?? false,
            periodStart: millis(json["current_period_start"]) ?? millis(item?["current_period_start"]),
            periodEnd: millis(json["current_period_end"]) ?? millis(item?["current_period_end"]),
            reference: (json["metadata"] as? [String: Any])?["subscription_id"] as? String)
    }

    /// Ids Stripe made (`acct_…`, `tr_…`, `pi_…`): safe to put in a path.
    static func isStripeID(_ id: String) -> Bool {
        !id.isEmpty && id.count <= 255 && id.unicodeScalars.allSatisfy { CharacterSet.alphanumerics.contains($0) || $0 == "_" }
    }

    private func post(_ path: String, _ fields: [(String, String)], idempotencyKey: String) async throws -> [String: Any] {
        try await send(.POST, path, body: Self.formEncode(fields), idempotencyKey: idempotencyKey)
    }

    private func send(_ method: HTTPMethod, _ path: String, body: String?, idempotencyKey: String?) async throws -> [String: Any] {
        var headers = HTTPHeaders()
        headers.bearerAuthorization = BearerAuthorization(token: settings.secretKey)
        headers.replaceOrAdd(name: "Stripe-Version", value: "2024-06-20")
        if let idempotencyKey { headers.replaceOrAdd(name: "Idempotency-Key", value: idempotencyKey) }
        if body != nil { headers.contentType = .urlEncodedForm }
        let response: ClientResponse
        do {
            response = try await client().send(method, headers: headers, to: URI(string: settings.apiBase + path)) { request in
                if let body { request.body = ByteBuffer(string: body) }
            }.get()
        } catch {
            throw WaybillError.paymentProvider("unreachable")
        }
        let data = response.body.map { Data(buffer: $0) } ?? Data()
        let json = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
        guard (200..<300).contains(response.status.code) else {
            let message = ((json["error"] as? [String: Any])?["code"] as? String) ?? "HTTP \(response.status.code)"
            throw WaybillError.paymentProvider(message)
        }
        return json
    }

    /// `application/x-www-form-urlencoded` the way Stripe reads it (brackets for nesting).
    static func formEncode(_ fields: [(String, String)]) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        func encode(_ s: String) -> String { s.addingPercentEncoding(withAllowedCharacters: allowed) ?? "" }
        return fields.map { "\(encode($0.0))=\(encode($0.1))" }.joined(separator: "&")
    }
}

/// Verifies the `Stripe-Signature` header: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "t.body">`,
/// possibly several `v1` (during secret rotation); any one matching is enough.
enum StripeSignature {
    static let tolerance: Int64 = 300

    enum Failure: Error, Equatable { case malformed, stale, mismatch }

    static func verify(payload: [UInt8], header: String, secret: String, now: Int64 = UnixTime.nowSeconds) throws(Failure) {
        var timestamp: Int64?
        var signatures: [[UInt8]] = []
        for item in header.split(separator: ",") {
            let pair = item.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard pair.count == 2 else { continue }
            if pair[0] == "t" { timestamp = Int64(pair[1]) }
            if pair[0] == "v1", let bytes = hexBytes(pair[1]) { signatures.append(bytes) }
        }
        guard let timestamp, !signatures.isEmpty else { throw .malformed }
        // `t` is the sender's: the difference may not fit in 64 bits (t = Int64.min), so it is
        // computed with its overflow reported, never trapped on.
        let (age, overflow) = now.subtractingReportingOverflow(timestamp)
        guard !overflow, age.magnitude <= UInt64(tolerance) else { throw .stale }
        var signed = Array("\(timestamp).".utf8)
        signed.append(contentsOf: payload)
        let expected = Array(HMAC<SHA256>.authenticationCode(for: signed, using: SymmetricKey(data: Array(secret.utf8))))
        // Every candidate is compared in constant time; the loop does not stop at the first match.
        var matched = false
        for candidate in signatures where candidate.count == expected.count {
            if constantTimeEquals(Data(candidate), Data(expected)) { matched = true }
        }
        guard matched else { throw .mismatch }
    }

    static func sign(payload: [UInt8], secret: String, timestamp: Int64) -> String {
        var signed = Array("\(timestamp).".utf8)
        signed.append(contentsOf: payload)
        let mac = HMAC<SHA256>.authenticationCode(for: signed, using: SymmetricKey(data: Array(secret.utf8)))
        return "t=\(timestamp),v1=" + mac.hexString
    }

    private static func hexBytes(_ hex: String) -> [UInt8]? {
        guard hex.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            guard let byte = UInt8(hex[index..<next], radix: 16) else { return nil }
            bytes.append(byte)
            index = next
        }
        return bytes
    }
}

/// The offline stand-in for Stripe: checkouts are rows in `sandbox_checkouts`, paid by pressing a
/// button on a page labelled as a test. No money moves.
struct SandboxPayments: PaymentProvider {
    let db: @Sendable () -> any Database
    let writeLock: WriteLock
    let publicURL: String
    var logger = Logger(label: "waybill.payments.sandbox")
    var isSandbox: Bool { true }

    func createCheckout(_ request: CheckoutRequest) async throws -> Checkout {
        let id = "sbx_cs_" + randomHex(bytes: 16)
        let row = SandboxCheckout()
        row.id = id
        row.orderID = request.orderID
        row.amount = request.price.amount
        row.currency = request.price.currency
        row.method = request.method
        row.status = "open"
        row.createdAt = UnixTime.nowMillis
        try await writeLock.withLock { try await row.create(on: db()) }
        return Checkout(id: id, url: publicURL + WebRoutes.sandboxCheckout(id))
    }

    func checkout(id: String) async throws -> CheckoutState {
        guard let row = try await SandboxCheckout.find(id, on: db()) else { throw WaybillError.notFound }
        return CheckoutState(id: id, paid: row.status == "paid", expired: row.status == "expired",
                             orderID: row.orderID.uuidString, amount: row.amount, currency: row.currency,
                             paymentIntent: row.status == "paid" ? "sbx_pi_" + String(id.dropFirst(7)) : nil)
    }

    func refund(checkout: CheckoutState, amount: Int?, idempotencyKey: String) async throws -> String {
        if let amount {
            logger.notice("Sandbox refund of \(amount) on \(checkout.id): this is a test, no money moved.")
            return "sbx_re_" + String(Insecure.SHA1.hash(data: Data(idempotencyKey.utf8)).map { String(format: "%02x", $0) }.joined().prefix(24))
        }
        return "sbx_re_" + String(checkout.id.dropFirst(7))
    }

    /// No money moves: the payout is recorded in `sandbox_payouts` (a retry finds the first one)
    /// and the log says it is a test.
    func payOut(_ request: PayoutRequest) async throws -> String {
        try await writeLock.withLock {
            let db = db()
            if let earlier = try await SandboxPayout.query(on: db).filter(\.$idempotencyKey == request.idempotencyKey).first() {
                return try earlier.storedID
            }
            let row = SandboxPayout()
            let id = "sbx_tr_" + randomHex(bytes: 12)
            row.id = id
            row.shipmentID = request.shipmentID
            row.accountID = request.accountID
            row.destination = request.destination
            row.amount = request.amount.amount
            row.currency = request.amount.currency
            row.idempotencyKey = request.idempotencyKey
            row.createdAt = UnixTime.nowMillis
            try await row.create(on: db)
            logger.notice("Sandbox payout \(id) of \(request.amount) recorded for shipment \(request.shipmentID.uuidString): this is a test, no money moved.")
            return id
        }
    }

    func reverse(transfer: String, amount: Money, idempotencyKey: String) async throws -> String {
        try await writeLock.withLock {
            guard let row = try await SandboxPayout.find(transfer, on: db()) else { throw WaybillError.paymentProvider("no such transfer") }
            if row.reversedAt == nil {
                row.reversedAt = UnixTime.nowMillis
                try await row.save(on: db())
                logger.notice("Sandbox payout \(transfer) reversed (\(amount)): this is a test, no money moved.")
            }
            return "sbx_trr_" + String(transfer.dropFirst(7))
        }
    }

    /// One test account per person (a second onboarding continues it).
    func createConnectedAccount(for accountID: UserID, email: String, country: String) async throws -> String {
        try await writeLock.withLock {
            if let existing = try await SandboxAccount.query(on: db()).filter(\.$userID == accountID).first() { return try existing.storedID }
            let row = SandboxAccount()
            let id = "acct_sandbox_" + randomHex(bytes: 8)
            row.id = id
            row.userID = accountID
            row.detailsSubmitted = false
            row.transfers = "inactive"
            row.createdAt = UnixTime.nowMillis
            try await row.create(on: db())
            return id
        }
    }

    /// The test onboarding page (it says it is one); it sends the person back to `returnURL`.
    func onboardingLink(account: String, refreshURL: String, returnURL: String) async throws -> String {
        let back = returnURL.hasPrefix(publicURL) ? String(returnURL.dropFirst(publicURL.count)) : "/"
        return publicURL + WebRoutes.sandboxConnect(account, query: "return=" + queryValue(back.hasPrefix("/") ? back : "/"))
    }

    func connectedAccount(_ id: String) async throws -> ConnectedAccountState? {
        guard let row = try await SandboxAccount.find(id, on: db()) else { return nil }
        return ConnectedAccountState(id: id, status: .of(transfersCapability: row.transfers, detailsSubmitted: row.detailsSubmitted),
                                     requirementsDue: row.detailsSubmitted ? [] : ["individual.verification.document", "external_account"])
    }

    /// The test onboarding page's "Complete" button: transfers become active.
    func completeOnboarding(account: String) async throws -> UserID? {
        try await writeLock.withLock {
            guard let row = try await SandboxAccount.find(account, on: db()) else { return nil }
            row.detailsSubmitted = true
            row.transfers = "active"
            try await row.save(on: db())
            return row.userID
        }
    }

    // MARK: Billing

    func createSubscriptionCheckout(_ request: SubscriptionCheckoutRequest) async throws -> Checkout {
        let row = SandboxSubscription()
        row.id = "sbx_sub_" + randomHex(bytes: 12)
        row.checkoutID = "sbx_scs_" + randomHex(bytes: 16)
        row.subscriptionID = request.subscriptionID
        row.amount = request.monthlyPrice.amount
        row.currency = request.monthlyPrice.currency
        row.status = "open"
        row.cancelAtPeriodEnd = false
        row.createdAt = UnixTime.nowMillis
        try await writeLock.withLock { try await row.create(on: db()) }
        return Checkout(id: row.checkoutID, url: publicURL + WebRoutes.sandboxSubscription(row.checkoutID))
    }

    func subscriptionCheckout(id: String) async throws -> SubscriptionCheckoutState {
        guard let row = try await SandboxSubscription.query(on: db()).filter(\.$checkoutID == id).first() else { throw WaybillError.notFound }
        return SubscriptionCheckoutState(id: id, complete: row.status != "open" && row.status != "expired", expired: row.status == "expired",
                                         subscription: row.status == "open" ? nil : row.id, reference: row.subscriptionID.uuidString)
    }

    /// A test subscription renews by itself when its period is over (or ends, when set to).
    func subscription(id: String) async throws -> ProviderSubscription? {
        try await writeLock.withLock {
            guard let row = try await SandboxSubscription.find(id, on: db()) else { return nil }
            let now = UnixTime.nowMillis
            if row.status == "active", let end = row.periodEnd, end <= now {
                if row.cancelAtPeriodEnd {
                    row.status = "canceled"
                } else {
                    var start = end
                    while start.addingReportingOverflow(Self.period).partialValue <= now { start += Self.period }
                    row.periodStart = start
                    row.periodEnd = start + Self.period
                    logger.notice("Sandbox subscription \(id) renewed: this is a test, no money moved.")
                }
                try await row.save(on: db())
            }
            return Self.state(row)
        }
    }

    func setCancelAtPeriodEnd(subscription id: String, _ cancel: Bool) async throws -> ProviderSubscription {
        try await writeLock.withLock {
            guard let row = try await SandboxSubscription.find(id, on: db()) else { throw WaybillError.paymentProvider("resource_missing") }
            row.cancelAtPeriodEnd = cancel
            try await row.save(on: db())
            return Self.state(row)
        }
    }

    /// A test month: thirty days.
    static let period: Int64 = 30 * 86_400_000

    static func state(_ row: SandboxSubscription) -> ProviderSubscription {
        ProviderSubscription(id: row.id ?? "", status: row.status == "open" ? "incomplete" : row.status == "expired" ? "incomplete_expired" : row.status,
                             cancelAtPeriodEnd: row.cancelAtPeriodEnd, periodStart: row.periodStart, periodEnd: row.periodEnd,
                             reference: row.subscriptionID.uuidString)
    }

    /// The sandbox subscription page's buttons: the first payment, a renewal that succeeds, one
    /// that fails (the subscription is past due), and the provider giving up (it ends). Each
    /// returns the test invoice it made, if any.
    enum SubscriptionAction: String, Sendable { case pay, renew, failRenewal = "fail", end }

    func act(_ action: SubscriptionAction, checkout: String) async throws -> (subscription: String, invoice: (id: String, amount: Int, currency: String)?)? {
        try await writeLock.withLock {
            guard let row = try await SandboxSubscription.query(on: db()).filter(\.$checkoutID == checkout).first(), let id = row.id else { return nil }
            let now = UnixTime.nowMillis
            let invoice = (id: "sbx_in_" + randomHex(bytes: 12), amount: row.amount, currency: row.currency)
            switch action {
            case .pay:
                guard row.status == "open" else { return nil }
                row.status = "active"
                row.periodStart = now
                row.periodEnd = now + Self.period
            case .renew:
                guard row.status == "active" || row.status == "past_due" else { return nil }
                row.status = "active"
                row.periodStart = now
                row.periodEnd = now + Self.period
            case .failRenewal:
                guard row.status == "active" else { return nil }
                row.status = "past_due"
            case .end:
                guard row.status != "canceled", row.status != "open" else { return nil }
                row.status = "canceled"
            }
            try await row.save(on: db())
            logger.notice("Sandbox subscription \(id): \(action.rawValue). This is a test, no money moved.")
            return (id, action == .end ? nil : invoice)
        }
    }

    /// The sandbox page's "Pay" button.
    func markPaid(id: String) async throws -> Bool {
        try await writeLock.withLock {
            guard let row = try await SandboxCheckout.find(id, on: db()), row.status == "open" else { return false }
            row.status = "paid"
            try await row.save(on: db())
            return true
        }
    }
}
