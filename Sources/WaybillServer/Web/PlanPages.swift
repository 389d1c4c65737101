import Foundation
import Vapor
import WaybillCore

extension WebRoutes {
    /// A customer's subscription and the plans on offer.
    static let planPage = WebPath("/plan")
    static let planSubscribe = WebPath("/plan/subscribe")
    static let planCancel = WebPath("/plan/cancel")
    static let planResume = WebPath("/plan/resume")
    /// The admins' plans.
    static let adminPlans = WebPath("/admin/plans")
    static let adminPlan = WebPath<PlanID>("/admin/plans/:id") { [$0.uuidString] }
    /// Who subscribes (`?plan=`, `?status=`, `?cursor=`).
    static let adminSubscribers = WebPath("/admin/plans/subscribers")
}

/// Subscription plans in the web app: a customer subscribes (on Stripe's page or the sandbox's),
/// follows and cancels their subscription; admins offer, change and withdraw plans.
/// `Subscriptions` decides; these pages translate.
struct PlanPages {
    func register(_ routes: any RoutesBuilder) {
        routes.get(WebRoutes.planPage, use: show)
        routes.post(WebRoutes.planSubscribe, use: subscribe)
        routes.post(WebRoutes.planCancel, use: cancel)
        routes.post(WebRoutes.planResume, use: resume)
        routes.get(WebRoutes.adminPlans, use: adminList)
        routes.post(WebRoutes.adminPlans, use: adminCreate)
        routes.post(WebRoutes.adminPlan, use: adminUpdate)
        routes.get(WebRoutes.adminSubscribers, use: adminSubscribers)
    }

    func show(_ req: Request) async throws -> Response {
        let (ctx, me) = try WebAuth.require(req, .placeOrders)
        return try await page(req, ctx, me, notice: req.query[String.self, at: "cancelled"] != nil ? ctx.t(.subNotStarted) : nil)
    }

    private func page(_ req: Request, _ ctx: WebContext, _ me: Principal, notice: String? = nil, message: String? = nil,
                      status: HTTPResponseStatus = .ok) async throws -> Response {
        let subscriptions = Subscriptions(request: req)
        let current = try await subscriptions.current(for: me)
        let plans = try await subscriptions.plans(all: false, for: me)
        return try PlanPage(current: current, plans: plans, notice: notice, message: message, status: status).response(ctx)
    }

    func subscribe(_ req: Request) async throws -> Response {
        let (ctx, me) = try WebAuth.require(req, .placeOrders)
        let form = try AccountPages.form(req)
        guard let planID = form["planId"].flatMap(PlanID.init(uuidString:)) else { throw WaybillError.notFound }
        do {
            let view = try await Subscriptions(request: req).subscribe(to: planID, by: me)
            guard let url = view.record.checkoutURL else { return req.redirect(to: WebRoutes.planPage(), redirectType: .normal) }
            return req.redirect(to: url, redirectType: .normal)
        } catch let error as WaybillError where error.status == .conflict || error.status == .tooManyRequests {
            return try await page(req, ctx, me, message: ctx.message(error), status: error.status)
        }
    }

    func cancel(_ req: Request) async throws -> Response {
        try await change(req) { try await $0.cancel(by: $1) }
    }

    func resume(_ req: Request) async throws -> Response {
        try await change(req) { try await $0.resume(by: $1) }
    }

    private func change(_ req: Request, _ body: (Subscriptions, Principal) async throws -> Subscriptions.View) async throws -> Response {
        let (ctx, me) = try WebAuth.require(req, .placeOrders)
        do {
            _ = try await body(Subscriptions(request: req), me)
        } catch let error as WaybillError where error.status == .conflict {
            return try await page(req, ctx, me, message: ctx.message(error), status: error.status)
        }
        return req.redirect(to: WebRoutes.planPage(), redirectType: .normal)
    }

    // MARK: Admins

    func adminList(_ req: Request) async throws -> Response {
        let (ctx, me) = try WebAuth.require(req, .managePlans)
        return try await adminPage(req, ctx, me, saved: req.query[String.self, at: "saved"] != nil)
    }

    private func adminPage(_ req: Request, _ ctx: WebContext, _ me: Principal, saved: Bool = false, values: [String: String] = [:],
                           errors: [String: String] = [:], editing: PlanID? = nil, message: String? = nil,
                           status: HTTPResponseStatus = .ok) async throws -> Response {
        let subscriptions = Subscriptions(request: req)
        let plans = try await subscriptions.plans(all: true, for: me)
        let counts = try await subscriptions.subscriberCounts(for: me)
        let currency = try await Orders(request: req).currentTariff().tariff.currency
        return try AdminPlansPage(plans: plans, subscribers: counts, currency: currency, values: values, errors: errors, editing: editing,
                              message: message, saved: saved, status: status).response(ctx)
    }

    func adminSubscribers(_ req: Request) async throws -> Response {
        let (ctx, me) = try WebAuth.require(req, .managePlans)
        let planText = req.query[String.self, at: "plan"] ?? "", statusText = req.query[String.self, at: "status"] ?? ""
        let plan = planText.isEmpty ? nil : try PlanID(uuidString: planText) ?? { throw WaybillError.invalidParameter("plan") }()
        let status = statusText.isEmpty ? nil : try SubscriptionStatus(rawValue: statusText) ?? { throw WaybillError.invalidParameter("status") }()
        let subscriptions = Subscriptions(request: req)
        let page = try await subscriptions.subscribers(plan: plan, status: status, cursor: req.query[String.self, at: "cursor"], limit: 50, for: me)
        let plans = try await subscriptions.plans(all: true, for: me)
        return try AdminSubscribersPage(items: page.items, plans: plans, values: ["plan": planText, "status": statusText],
                                    next: page.nextCursor).response(ctx)
    }

    func adminCreate(_ req: Request) async throws -> Response {
        try await save(req, id: nil)
    }

    func adminUpdate(_ req: Request) async throws -> Response {
        let id: PlanID = try WebRoutes.id(req)
        return try await save(req, id: id)
    }

    private func save(_ req: Request, id: PlanID?) async throws -> Response {
        let (ctx, me) = try WebAuth.require(req, .managePlans)
        let form = try AccountPages.form(req)
        // What does not read as a number goes as -1, which the terms refuse field by field.
        func number(_ key: String) -> Int { Int((form[key] ?? "").trimmingCharacters(in: .whitespaces)) ?? -1 }
        let terms = PlanTerms(name: form["name"] ?? "", monthlyPrice: Money.minorUnits(fromText: form["monthlyPrice"] ?? "", maximum: 100_000) ?? -1,
                              includedDeliveries: number("includedDeliveries"), discountPercent: number("discountPercent"),
                              expressIncluded: form["expressIncluded"] == "on")
        let active = form["active"] == "on"
        let subscriptions = Subscriptions(request: req)
        do {
            if let id { _ = try await subscriptions.updatePlan(id, terms, active: active, by: me) }
            else { _ = try await subscriptions.createPlan(terms, active: active, by: me) }
        } catch let error as WaybillError where error.status == .unprocessableEntity {
            return try await adminPage(req, ctx, me, values: form, errors: error.fields ?? [:], editing: id, message: ctx.message(error), status: error.status)
        }
        return req.redirect(to: WebRoutes.adminPlans(query: "saved=1"), redirectType: .normal)
    }
}

extension SubscriptionStatus {
    /// The status in the page's language.
    func text(_ ctx: WebContext) -> String {
        switch self {
        case .incomplete: ctx.t(.subIncomplete)
        case .active: ctx.t(.subActive)
        case .pastDue: ctx.t(.subPastDue)
        case .canceled: ctx.t(.subEnded)
        }
    }
}

extension SubscriptionRecord {
    /// "Renews on …" or "Ends on …" (escaped HTML) while paid for; nil otherwise.
    func periodLine(_ ctx: WebContext) -> String? {
        guard let end = periodEnd, status.isPaid else { return nil }
        return h(ctx.t(cancelAtPeriodEnd ? .subEnds : .subRenews, "{date}")).replacingOccurrences(of: "{date}", with: ctx.time(end, dateOnly: true))
    }
}

extension PlanTerms {
    /// What the plan gives, in the page's language.
    func benefits(_ ctx: WebContext) -> [String] {
        var lines: [String] = []
        if includedDeliveries > 0 { lines.append(ctx.t(.planIncludedN, String(includedDeliveries))) }
        if discountPercent > 0 { lines.append(ctx.t(.planDiscountN, String(discountPercent))) }
        if expressIncluded { lines.append(ctx.t(.planExpressIncluded)) }
        return lines
    }
}

/// A customer's subscription (status, period, included deliveries, invoices; cancel or keep it)
/// and the plans on offer.
struct PlanPage: PageView {
    var current: Subscriptions.View?
    var plans: [PlanRecord]
    var notice: String?
    var message: String?
    var status: HTTPResponseStatus = .ok

    func page(_ ctx: WebContext) throws -> WebPage {
        let form = Form(ctx: ctx)
        let holding = current?.record.status.isPaid ?? false
        let cards = try plans.map { plan -> String in
            let terms = plan.terms, planID = try plan.storedID
            let benefits = terms.benefits(ctx).map { "<li>\(h($0))</li>" }.joined()
            let action = holding ? "" : """
                <form method="post" action="\(WebRoutes.planSubscribe())">\(form.hidden())<input type="hidden" name="planId" value="\(planID.uuidString)">
                <button type="submit" class="primary">\(h(ctx.t(.subscribe)))</button></form>
                """
            return """
                <article class="card" data-plan="\(h(terms.name))"><h3>\(h(terms.name))</h3>
                <p class="amount">\(h(ctx.t(.planPerMonth, Money(terms.monthlyPrice, plan.currency).description)))</p>
                <ul>\(benefits)</ul>\(action)</article>
                """
        }.joined()
        return WebPage(title: ctx.t(.subPlanTitle), body: """
            <h1>\(h(ctx.t(.subPlanTitle)))</h1>
            \(notice.map { "<div class=\"alert\" role=\"status\">\(h($0))</div>" } ?? "")
            \(message.map { "<div class=\"alert error\" role=\"alert\">\(h($0))</div>" } ?? "")
            \(current.map { subscription($0, ctx) } ?? "")
            <h2>\(h(ctx.t(.plansOnOffer)))</h2>
            \(plans.isEmpty ? "<p>\(h(ctx.t(.plansNone)))</p>" : "<div class=\"cards\">\(cards)</div>")
            """, status: status)
    }

    private func subscription(_ view: Subscriptions.View, _ ctx: WebContext) -> String {
        let r = view.record
        let form = Form(ctx: ctx)
        var lines: [String] = []
        if let period = r.periodLine(ctx) { lines.append(period) }
        if let grace = SubscriptionPolicy.graceEnds(r.status, at: r.graceEndsAt) {
            lines.append(h(ctx.t(.subGrace, "{date}")).replacingOccurrences(of: "{date}", with: ctx.time(grace, dateOnly: true)))
        }
        if view.terms.includedDeliveries > 0, r.status.isPaid {
            lines.append(h(ctx.t(.subIncludedUsed, String(r.includedUsed), String(view.terms.includedDeliveries))))
        }
        if r.sandbox { lines.append(h(ctx.t(.subSandbox))) }
        var actions = ""
        if let url = SubscriptionPolicy.checkoutLink(r.status, r.checkoutURL) {
            actions = "<p><a class=\"button primary\" href=\"\(h(url))\">\(h(ctx.t(.subPay)))</a></p>"
        } else if case .success = SubscriptionPolicy.mayCancel(r.term) {
            actions = "<form method=\"post\" action=\"\(WebRoutes.planCancel())\">\(form.hidden())<button type=\"submit\">\(h(ctx.t(.subCancel)))</button></form>"
        } else if case .success = SubscriptionPolicy.mayResume(r.term) {
            actions = "<form method=\"post\" action=\"\(WebRoutes.planResume())\">\(form.hidden())<button type=\"submit\" class=\"primary\">\(h(ctx.t(.subResume)))</button></form>"
        }
        if r.sandbox, let checkout = r.checkoutID, r.status != .canceled {
            actions += "<p><a href=\"\(h(WebRoutes.sandboxSubscription(checkout)))\">\(h(ctx.t(.subSandboxPage)))</a></p>"
        }
        let invoices = view.invoices.map { invoice -> String in
            "<tr><td>\(ctx.time(invoice.at, dateOnly: true))</td><td class=\"num\">\(h(Money(invoice.amount, invoice.currency).description))</td>"
                + "<td>\(h(ctx.t(invoice.status == .paid ? .invoicePaid : .invoiceFailed)))</td></tr>"
        }.joined()
        return """
            <section class="card" id="subscription" data-status="\(r.status.rawValue)" data-benefit="\(view.benefitApplies)">
            <h2>\(h(view.terms.name)) — \(h(r.status.text(ctx)))</h2>
            <p>\(h(ctx.t(.planPerMonth, Money(view.terms.monthlyPrice, r.currency).description))) · \(h(view.terms.benefits(ctx).joined(separator: " · ")))</p>
            \(lines.map { "<p>\($0)</p>" }.joined())
            \(actions)
            \(invoices.isEmpty ? "" : """
                <h3>\(h(ctx.t(.subInvoices)))</h3>
                <div class="table-wrap"><table class="list"><tbody>\(invoices)</tbody></table></div>
                """)
            </section>
            """
    }
}

/// The admins' plans: each with a form to change or withdraw it, and one to offer a new plan.
struct AdminPlansPage: PageView {
    var plans: [PlanRecord]
    /// Paid subscriptions per plan.
    var subscribers: [PlanID: Int] = [:]
    var currency: String
    var values: [String: String]
    var errors: [String: String]
    var editing: PlanID?
    var message: String?
    var saved: Bool
    var status: HTTPResponseStatus

    static func values(_ plan: PlanRecord) -> [String: String] {
        ["name": plan.name, "monthlyPrice": OrderPages.decimal(Money(plan.monthlyPrice, plan.currency)),
         "includedDeliveries": String(plan.includedDeliveries), "discountPercent": String(plan.discountPercent),
         "expressIncluded": plan.expressIncluded ? "on" : "", "active": plan.active ? "on" : ""]
    }

    private func fields(_ form: Form, _ ctx: WebContext) -> String {
        """
        \(form.field("name", ctx.t(.planName)))
        \(form.field("monthlyPrice", ctx.t(.planMonthlyPrice, currency), attributes: "inputmode=\"decimal\""))
        <div class="row">\(form.field("includedDeliveries", ctx.t(.planIncluded), attributes: "inputmode=\"numeric\""))\(form.field("discountPercent", ctx.t(.planDiscount), attributes: "inputmode=\"numeric\""))</div>
        <fieldset class="field"><legend>\(h(ctx.t(.planOptions)))</legend>
        \(form.checkbox("expressIncluded", ctx.t(.planExpressIncluded)))
        \(form.checkbox("active", ctx.t(.planActive)))
        </fieldset>
        """
    }

    func page(_ ctx: WebContext) throws -> WebPage {
        let shown: Set<String> = ["name", "monthlyPrice", "includedDeliveries", "discountPercent"]
        let existing = try plans.enumerated().map { index, plan -> String in
            let id = try plan.storedID
            let mine = editing == id
            let form = Form(ctx: ctx, values: mine ? values : Self.values(plan), errors: mine ? errors : [:], idPrefix: "plan\(index)-")
            return """
                <details class="card" data-plan="\(h(plan.name))"\(mine ? " open" : "")><summary><strong>\(h(plan.name))</strong> · \(h(ctx.t(.planPerMonth, Money(plan.monthlyPrice, plan.currency).description)))\(plan.active ? "" : " · " + h(ctx.t(.planWithdrawn)))</summary>
                <p><a href="\(WebRoutes.adminSubscribers())?plan=\(id.uuidString)" data-subscribers="\(subscribers[id] ?? 0)">\(h(ctx.t(.planSubscribersN, String(subscribers[id] ?? 0))))</a></p>
                \(mine ? form.summary(message: message, shown: shown) : "")
                <form method="post" action="\(WebRoutes.adminPlan(id))" class="stack">\(form.hidden())\(fields(form, ctx))
                <button type="submit">\(h(ctx.t(.save)))</button></form></details>
                """
        }.joined()
        let creating = editing == nil && !errors.isEmpty
        let new = Form(ctx: ctx, values: creating ? values : ["active": "on"], errors: creating ? errors : [:], idPrefix: "new-")
        return WebPage(title: ctx.t(.managePlans), body: """
            <h1>\(h(ctx.t(.managePlans)))</h1>
            \(saved ? "<div class=\"alert ok\" role=\"status\">\(h(ctx.t(.saved)))</div>" : "")
            <p class="hint">\(h(ctx.t(.planAdminHint)))</p>
            <p><a href="\(WebRoutes.adminSubscribers())">\(h(ctx.t(.planSubscribers)))</a></p>
            \(plans.isEmpty ? "<p>\(h(ctx.t(.plansNone)))</p>" : existing)
            <h2>\(h(ctx.t(.planNew)))</h2>
            \(creating ? new.summary(message: message, shown: shown) : "")
            <form method="post" action="\(WebRoutes.adminPlans())" class="stack">\(new.hidden())\(fields(new, ctx))
            <button type="submit" class="primary">\(h(ctx.t(.planCreate)))</button></form>
            """, status: status)
    }
}

/// Who subscribes, newest first: by default those paid for (active or past due), filtered by plan
/// and status, fifty a page.
struct AdminSubscribersPage: PageView {
    var items: [Subscriptions.Subscriber]
    var plans: [PlanRecord]
    var values: [String: String]
    var next: String?

    func page(_ ctx: WebContext) throws -> WebPage {
        let form = Form(ctx: ctx, values: values)
        let rows = items.map { item -> String in
            let r = item.view.record, terms = item.view.terms
            var period = r.periodLine(ctx) ?? "—"
            if let grace = SubscriptionPolicy.graceEnds(r.status, at: r.graceEndsAt) {
                period += "<br>" + h(ctx.t(.subscribersGraceUntil, "{date}")).replacingOccurrences(of: "{date}", with: ctx.time(grace, dateOnly: true))
            }
            let used = terms.includedDeliveries > 0 ? "\(r.includedUsed) / \(terms.includedDeliveries)" : "—"
            return """
                <tr data-subscriber="\(h(item.account.email))" data-status="\(r.status.rawValue)"><td><a href="\(WebRoutes.user(item.account.personID))">\(h(item.account.displayName))</a><br><span class="hint">\(h(item.account.email))</span></td>
                <td>\(h(terms.name))\(r.sandbox ? " <span class=\"hint\">(\(h(ctx.t(.subscribersTest))))</span>" : "")</td><td>\(h(r.status.text(ctx)))</td>
                <td>\(period)</td><td class="num">\(used)</td><td>\(ctx.time(r.createdAt, dateOnly: true))</td></tr>
                """
        }.joined()
        let planOptions = try [("", ctx.t(.subscribersAllPlans))] + plans.map { (try $0.storedID.uuidString, $0.name) }
        let statusOptions = [("", ctx.t(.subscribersPaid))] + [SubscriptionStatus.active, .pastDue, .incomplete, .canceled].map { ($0.rawValue, $0.text(ctx)) }
        var query = values.filter { !$0.value.isEmpty }.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")" }
        if let next { query.append("cursor=\(next.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")") }
        return WebPage(title: ctx.t(.planSubscribers), body: """
            <p><a href="\(WebRoutes.adminPlans())">\(h(ctx.t(.managePlans)))</a></p>
            <h1>\(h(ctx.t(.planSubscribers)))</h1>
            <form method="get" action="\(WebRoutes.adminSubscribers())" class="filters" role="search">
            \(form.select("plan", ctx.t(.plPlan), options: planOptions, required: false))
            \(form.select("status", ctx.t(.status), options: statusOptions, required: false))
            <button type="submit">\(h(ctx.t(.filter)))</button></form>
            \(rows.isEmpty ? "<p>\(h(ctx.t(.subscribersNone)))</p>" : """
            <div class="table-wrap"><table class="list subscribers"><thead><tr><th>\(h(ctx.t(.customer)))</th><th>\(h(ctx.t(.plPlan)))</th><th>\(h(ctx.t(.status)))</th>
            <th>\(h(ctx.t(.subscribersPeriod)))</th><th class="num">\(h(ctx.t(.subscribersIncluded)))</th><th>\(h(ctx.t(.subscribersSince)))</th></tr></thead><tbody>\(rows)</tbody></table></div>
            """)
            \(next == nil ? "" : "<p><a href=\"\(WebRoutes.adminSubscribers())?\(h(query.joined(separator: "&")))\">\(h(ctx.t(.subscribersMore)))</a></p>")
            """, wide: true)
    }
}
