import Fluent
import Foundation
import Vapor
import WaybillCore

/// The few HTML pages the API needs before the web app exists: where Stripe sends the customer
/// back, the sandbox checkout (labelled as a test everywhere), and printable monthly statements.
struct PaymentPages: RouteCollection {
    func boot(routes: any RoutesBuilder) throws {
        routes.get(WebRoutes.paymentReturn, use: paymentReturn)
        routes.get(WebRoutes.sandboxCheckout, use: sandboxPage)
        routes.post(WebRoutes.sandboxPay, use: sandboxPay)
        routes.post(WebRoutes.sandboxCancel, use: sandboxCancel)
        // The payout onboarding's stand-in changes an account: the web app's session and CSRF check
        // (`WebSessionMiddleware`), and only for the account's owner (second audit, finding 5).
        let web = routes.grouped(WebSessionMiddleware()).grouped(WebRedirectMiddleware())
        web.get(WebRoutes.sandboxConnect, use: sandboxConnectPage)
        web.post(WebRoutes.sandboxConnectComplete, use: sandboxConnectComplete)
        routes.get(WebRoutes.statement, use: statementPage)
        routes.get(WebRoutes.sandboxSubscription, use: sandboxSubscriptionPage)
        routes.post(WebRoutes.sandboxSubscriptionAct, use: sandboxSubscriptionAct)
    }

    /// The sandbox's stand-in for Stripe Billing's checkout and the life of a subscription: the
    /// first payment, and buttons for what would happen later (a renewal paid, one that fails, the
    /// provider giving up), so grace and renewals can be tried without waiting a month.
    func sandboxSubscriptionPage(_ req: Request) async throws -> Response {
        _ = try sandboxProvider(req)
        guard let id = req.parameters.get("id"),
              let row = try await SandboxSubscription.query(on: req.db).filter(\.$checkoutID == id).first(),
              let subscription = try await SubscriptionRecord.find(row.subscriptionID, on: req.db) else { throw WaybillError.notFound }
        let price = Money(row.amount, row.currency)
        let name = (try? subscription.terms.name) ?? ""
        func button(_ action: SandboxPayments.SubscriptionAction, _ label: String, secondary: Bool = false) -> String {
            """
            <form method="post" action="\(Self.escape(WebRoutes.sandboxSubscriptionAct((id, action.rawValue))))"><button type="submit"\(secondary ? " class=\"secondary\"" : "")>\(Self.escape(label))</button></form>
            """
        }
        let actions: String = switch row.status {
        case "open": button(.pay, "Subscribe for \(price.description) a month (test)")
            + "<p><a href=\"\(Self.escape(WebRoutes.planPage(query: "cancelled=1")))\">Back without subscribing</a></p>"
        case "active": button(.renew, "Renew now (test payment)") + button(.failRenewal, "Fail the next renewal (test)", secondary: true)
            + button(.end, "End it as the provider would after failed retries", secondary: true)
        case "past_due": button(.renew, "Retry the renewal successfully (test)") + button(.end, "Give up: end the subscription", secondary: true)
        default: "<p>This test subscription is \(Self.escape(row.status)).</p>"
        }
        return Self.page(title: "Test subscription", sandbox: true, body: """
            <h1>Test subscription — \(Self.escape(name))</h1>
            <p class="amount">\(Self.escape(price.description)) / month</p>
            <p>This server has no Stripe keys, so this page stands in for Stripe Billing. Subscribing starts a 30-day period as if it had been paid; <strong>no money moves</strong>.</p>
            \(actions)
            <p><a href="\(Self.escape(WebRoutes.planPage()))">Back to Waybill</a></p>
            """)
    }

    func sandboxSubscriptionAct(_ req: Request) async throws -> Response {
        _ = try sandboxProvider(req)
        guard let id = req.parameters.get("id"), let raw = req.parameters.get("action"),
              let action = SandboxPayments.SubscriptionAction(rawValue: raw) else { throw WaybillError.notFound }
        guard try await Subscriptions(request: req).sandbox(action, checkout: id) else { throw WaybillError.notFound }
        return req.redirect(to: action == .pay ? WebRoutes.planPage(query: "checkout=" + queryValue(id)) : WebRoutes.sandboxSubscription(id),
                            redirectType: .normal)
    }

    /// Stripe's success URL. Asks Stripe itself whether the checkout is paid (the query string
    /// proves nothing) and confirms the order if so.
    func paymentReturn(_ req: Request) async throws -> Response {
        let orders = Orders(request: req)
        let sandbox = req.application.waybill.payments.isSandbox
        if let sessionID = req.query[String.self, at: "session_id"], !sessionID.isEmpty, sessionID.count <= 200 {
            let state = try await req.application.waybill.payments.checkout(id: sessionID)
            try await orders.settleCheckout(state)
            if let id = state.orderID.flatMap(OrderID.init(uuidString:)), let order = try await Order.find(id, on: req.db) {
                // Back in the web app: the delivery's page, if this browser is signed in as someone who may see it.
                if let cookie = req.cookies[WebContext.sessionCookie(req)]?.string,
                   let principal = try? await Accounts(request: req).authenticate(webCookie: cookie),
                   (try? await orders.visibleOrder(id, to: principal)) != nil {
                    return req.redirect(to: WebRoutes.order(id, query: "paid=1"), redirectType: .normal)
                }
                let paid = order.paymentStatus == .paid
                return Self.page(title: paid ? "Payment received" : "Payment not completed", sandbox: sandbox, body: """
                    <h1>\(paid ? "Payment received" : "Payment not completed")</h1>
                    <p>Order <strong>\(Self.escape(order.reference))</strong> — \(Self.escape(order.price.description)).</p>
                    <p>\(paid ? "Your order is confirmed and goes to dispatch. You can return to the Waybill app." : "No payment was taken. You can try again from the Waybill app.")</p>
                    """)
            }
        }
        return Self.page(title: "Payment not completed", sandbox: sandbox, body: """
            <h1>Payment not completed</h1>
            <p>No payment was taken. You can return to the Waybill app and try again, or choose another payment method.</p>
            """)
    }

    private func sandboxProvider(_ req: Request) throws -> SandboxPayments {
        guard let sandbox = req.application.waybill.payments as? SandboxPayments else { throw WaybillError.notFound }
        return sandbox
    }

    func sandboxPage(_ req: Request) async throws -> Response {
        _ = try sandboxProvider(req)
        guard let id = req.parameters.get("id"), let checkout = try await SandboxCheckout.find(id, on: req.db),
              let order = try await Order.find(checkout.orderID, on: req.db) else { throw WaybillError.notFound }
        let price = Money(checkout.amount, checkout.currency)
        let method = checkout.method == .twint ? "TWINT" : "Card"
        let actions = checkout.status == "open" ? """
            <form method="post" action="\(Self.escape(WebRoutes.sandboxPay(id)))"><button type="submit">Pay \(Self.escape(price.description)) (test)</button></form>
            <form method="post" action="\(Self.escape(WebRoutes.sandboxCancel(id)))"><button type="submit" class="secondary">Cancel</button></form>
            """ : "<p>This test checkout is \(Self.escape(checkout.status)).</p>"
        return Self.page(title: "Test payment", sandbox: true, body: """
            <h1>Test payment — \(method)</h1>
            <p>Order <strong>\(Self.escape(order.reference))</strong></p>
            <p class="amount">\(Self.escape(price.description))</p>
            <p>This server has no Stripe keys, so this page stands in for the payment site. Pressing “Pay” confirms the order as if it had been paid; <strong>no money moves</strong>.</p>
            \(actions)
            """)
    }

    func sandboxPay(_ req: Request) async throws -> Response {
        let sandbox = try sandboxProvider(req)
        guard let id = req.parameters.get("id") else { throw WaybillError.notFound }
        guard try await SandboxCheckout.find(id, on: req.db) != nil else { throw WaybillError.notFound }
        _ = try await sandbox.markPaid(id: id)
        return req.redirect(to: WebRoutes.paymentReturn(query: "session_id=" + queryValue(id)), redirectType: .normal)
    }

    func sandboxCancel(_ req: Request) async throws -> Response {
        _ = try sandboxProvider(req)
        guard let id = req.parameters.get("id"), try await SandboxCheckout.find(id, on: req.db) != nil else { throw WaybillError.notFound }
        return req.redirect(to: WebRoutes.paymentReturn(query: "cancelled=1"), redirectType: .normal)
    }

    /// The sandbox's stand-in for Stripe's onboarding of a traveller's payout account: for its owner,
    /// signed in to the web app (else to the sign-in page and back); anyone else gets 404.
    func sandboxConnectPage(_ req: Request) async throws -> Response {
        _ = try sandboxProvider(req)
        let (ctx, me) = try WebAuth.require(req)
        guard let id = req.parameters.get("id"), let account = try await SandboxAccount.find(id, on: req.db),
              account.userID == me.userID else { throw WaybillError.notFound }
        let back = Self.localPath(req.query[String.self, at: "return"])
        let action = WebRoutes.sandboxConnectComplete(id, query: "return=" + queryValue(back))
        let body = account.transfers == "active"
            ? "<p>This test account is already set up.</p><p><a href=\"\(Self.escape(back))\">Back to Waybill</a></p>"
            : """
              <form method="post" action="\(Self.escape(action))"><input type="hidden" name="_csrf" value="\(Self.escape(ctx.csrf))"><button type="submit">Complete the setup (test)</button></form>
              <p><a href="\(Self.escape(back))">Back to Waybill without finishing</a></p>
              """
        return Self.page(title: "Test payout setup", sandbox: true, csrf: ctx.csrf, body: """
            <h1>Test payout setup</h1>
            <p>Account <code>\(Self.escape(id))</code></p>
            <p>This server has no Stripe keys, so this page stands in for Stripe's onboarding, where a traveller proves who they are and gives a bank account. Completing it makes transfers active as if Stripe had verified everything; <strong>no money will move</strong>.</p>
            \(body)
            """)
    }

    /// Completes the test onboarding: a form of the page above (its CSRF token is checked by
    /// `WebSessionMiddleware`), sent by the account's owner.
    func sandboxConnectComplete(_ req: Request) async throws -> Response {
        let sandbox = try sandboxProvider(req)
        let (_, me) = try WebAuth.require(req)
        guard let id = req.parameters.get("id"), try await SandboxAccount.find(id, on: req.db)?.userID == me.userID,
              let userID = try await sandbox.completeOnboarding(account: id) else { throw WaybillError.notFound }
        // What Stripe would send as `account.updated`, applied at once.
        let state = try await sandbox.connectedAccount(id)
        try await Travel(request: req).store(state, account: id, user: userID, at: UnixTime.nowSeconds * 1000)
        return req.redirect(to: Self.localPath(req.query[String.self, at: "return"]), redirectType: .normal)
    }

    /// A path on this site (never another site: no open redirect), by the web app's rule
    /// (`RedirectPolicy.safeLocalPath`: no tab, newline or backslash a browser would forgive).
    static func localPath(_ raw: String?) -> String {
        RedirectPolicy.safeLocalPath(raw) ?? "/"
    }

    func statementPage(_ req: Request) async throws -> Response {
        let links = StatementLinks(secret: req.application.waybill.config.jwtSecret)
        guard let token = req.parameters.get("token"), let (customerID, month) = links.verify(token) else {
            throw WaybillError(.notFound, .linkExpired, "This statement link is not valid or has expired; open the statement again from the app.")
        }
        let statement = try await Orders(request: req).statement(customerID: customerID, month: month)
        let rows = statement.lines.map { line -> String in
            let order = line.order
            let date = Date(timeIntervalSince1970: TimeInterval(order.createdAt) / 1000).formatted(.iso8601.year().month().day())
            return "<tr><td>\(date)</td><td>\(Self.escape(order.reference))</td><td>\(Self.escape(order.dropoff.city))</td><td class=\"num\">\(Self.escape(line.money.description))</td></tr>"
        }.joined(separator: "\n")
        let customer = statement.customer
        return Self.page(title: "Statement \(month)", sandbox: false, body: """
            <h1>Statement \(Self.escape(month))</h1>
            <p><strong>\(Self.escape(customer.companyName ?? customer.displayName))</strong><br>\(Self.escape(customer.displayName))<br>\(Self.escape(customer.address ?? "")), \(Self.escape(customer.postalCode ?? "")) \(Self.escape(customer.city ?? ""))</p>
            <table>
            <thead><tr><th>Date</th><th>Order</th><th>To</th><th class="num">Amount</th></tr></thead>
            <tbody>\(rows.isEmpty ? "<tr><td colspan=\"4\">No invoice orders this month.</td></tr>" : rows)</tbody>
            <tfoot><tr><th colspan="3">Total</th><th class="num">\(Self.escape(statement.total.description))</th></tr></tfoot>
            </table>
            """)
    }

    static func escape(_ text: String) -> String {
        var out = ""
        for ch in text {
            switch ch {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(ch)
            }
        }
        return out
    }

    static func page(title: String, sandbox: Bool, csrf: String? = nil, body: String) -> Response {
        let banner = sandbox ? #"<div class="test" role="alert">TEST MODE — sandbox payments, no money moves</div>"# : ""
        let token = csrf.map { "<meta name=\"csrf-token\" content=\"\(escape($0))\">" } ?? ""
        let html = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">\(token)
            <title>\(escape(title))\(sandbox ? " (test)" : "") · Waybill</title>
            <style>
            body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:0 auto;padding:1rem;color:#1a1a1a}
            .test{background:#ffd60a;color:#000;font-weight:700;padding:.75rem 1rem;margin:-1rem -1rem 1rem;text-align:center}
            .amount{font-size:2rem;font-weight:700}
            button{font:inherit;padding:.75rem 1.25rem;margin:.25rem 0;border:0;border-radius:.5rem;background:#0b5cad;color:#fff;cursor:pointer}
            button.secondary{background:#e4e4e4;color:#1a1a1a}
            button:focus-visible{outline:3px solid #1a1a1a;outline-offset:2px}
            table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.4rem;border-bottom:1px solid #ccc}.num{text-align:right}
            @media print{.test{display:none}}
            </style></head>
            <body>\(banner)<main>\(body)</main></body></html>
            """
        var headers = HTTPHeaders()
        headers.contentType = .html
        headers.replaceOrAdd(name: "Content-Security-Policy", value: "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'")
        headers.replaceOrAdd(name: .cacheControl, value: "no-store")
        return Response(status: .ok, headers: headers, body: .init(string: html))
    }
}
