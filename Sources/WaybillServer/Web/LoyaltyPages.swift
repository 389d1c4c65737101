import Foundation
import Vapor
import WaybillCore

extension WebRoutes {
    static let points = WebPath("/points")
    static let loyaltyRules = WebPath("/loyalty")
}

/// Loyalty points in the web app: a sender's points with their history, and the admins' rules.
/// `Loyalty` decides; these pages translate. Spending is a field of the ordering form.
struct LoyaltyPages {
    func register(_ routes: any RoutesBuilder) {
        routes.get(WebRoutes.points, use: points)
        routes.get(WebRoutes.loyaltyRules, use: rules)
        routes.post(WebRoutes.loyaltyRules, use: saveRules)
    }

    func points(_ req: Request) async throws -> Response {
        let (ctx, me) = try WebAuth.require(req)
        return try PointsPage(account: try await Loyalty(request: req).account(for: me, limit: 200)).response(ctx)
    }

    func rules(_ req: Request) async throws -> Response {
        let (ctx, me) = try WebAuth.require(req, .manageLoyalty)
        let (record, currency) = try await Loyalty(request: req).rules(for: me)
        return try LoyaltyRulesPage(values: LoyaltyRulesPage.values(try record.rules, currency: currency),
                                saved: req.query[String.self, at: "saved"] != nil).response(ctx)
    }

    func saveRules(_ req: Request) async throws -> Response {
        let (ctx, me) = try WebAuth.require(req, .manageLoyalty)
        var form = try AccountPages.form(req)
        let loyalty = Loyalty(request: req)
        form["currency"] = try await loyalty.rules(for: me).currency
        // What does not read as a number goes as -1, which the rules refuse field by field.
        func number(_ key: String) -> Int { Int((form[key] ?? "").trimmingCharacters(in: .whitespaces)) ?? -1 }
        let value = Money.minorUnits(fromText: form["pointValue"] ?? "", maximum: 100) ?? -1
        let rules = LoyaltyRules(pointsPerUnit: number("pointsPerUnit"), pointValue: value, validityDays: number("validityDays"),
                                 minimumRedemption: number("minimumRedemption"), maxDiscountPercent: number("maxDiscountPercent"))
        do {
            _ = try await loyalty.replaceRules(rules, by: me)
        } catch let error as WaybillError where error.status == .unprocessableEntity {
            return try LoyaltyRulesPage(values: form, errors: error.fields ?? [:], message: ctx.message(error), status: error.status).response(ctx)
        }
        return req.redirect(to: WebRoutes.loyaltyRules(query: "saved=1"), redirectType: .normal)
    }
}

/// A sender's points: how many, what they are worth, the next expiry, and the history.
struct PointsPage: PageView {
    var account: Loyalty.Account

    func page(_ ctx: WebContext) -> WebPage {
        let rules = (try? account.rules.rules) ?? .initial
        let worth = Money(rules.value(of: account.balance.points) ?? 0, account.currency)
        let rows = account.entries.map { line -> String in
            let sign = line.entry.kind.sign > 0 ? "+" : "−"
            let order = line.entry.order.map { id in "<a href=\"\(WebRoutes.order(id))\">\(h(line.reference ?? ""))</a>" } ?? ""
            return """
                <tr data-points-kind="\(line.entry.kind.rawValue)"><td>\(ctx.time(line.entry.at))</td><td>\(h(LoyaltyCatalogue.kind(line.entry.kind).in(ctx.lang)))</td>\
                <td class="num">\(sign)\(line.entry.points)</td><td>\(order)</td></tr>
                """
        }.joined()
        // The date is a <time> element: the sentence is escaped first, then the date put in.
        let next = account.balance.nextExpiry.map {
            "<p>" + h(ctx.t(.pointsNextExpiry, String($0.points), "{date}")).replacingOccurrences(of: "{date}", with: ctx.time($0.expiresAt, dateOnly: true)) + "</p>"
        } ?? ""
        return WebPage(title: ctx.t(.plPoints), body: """
            <h1>\(h(ctx.t(.plPoints)))</h1>
            <p class="big-status" id="points" data-points="\(account.balance.points)">\(h(ctx.t(.pointsHeld, String(account.balance.points), worth.description)))</p>
            \(next)
            <p class="hint">\(h(ctx.t(.pointsRulesHint, String(rules.pointsPerUnit), account.currency, Money(rules.pointValue, account.currency).description,
                                      String(rules.minimumRedemption), String(rules.maxDiscountPercent), String(rules.validityDays))))</p>
            <h2>\(h(ctx.t(.pointsHistory)))</h2>
            \(rows.isEmpty ? "<p>\(h(ctx.t(.pointsNone)))</p>" : """
                <div class="table-wrap"><table class="list"><thead><tr><th>\(h(ctx.t(.pointsWhen)))</th><th>\(h(ctx.t(.pointsWhat)))</th><th class="num">\(h(ctx.t(.plPoints)))</th><th>\(h(ctx.t(.pointsOrder)))</th></tr></thead>
                <tbody>\(rows)</tbody></table></div>
                """)
            """)
    }
}

/// The admins' rules for points.
struct LoyaltyRulesPage: PageView {
    var values: [String: String]
    var errors: [String: String] = [:]
    var message: String?
    var status: HTTPResponseStatus = .ok
    var saved = false

    static func values(_ rules: LoyaltyRules, currency: String) -> [String: String] {
        ["pointsPerUnit": String(rules.pointsPerUnit), "pointValue": OrderPages.decimal(Money(rules.pointValue, currency)),
         "validityDays": String(rules.validityDays), "minimumRedemption": String(rules.minimumRedemption),
         "maxDiscountPercent": String(rules.maxDiscountPercent), "currency": currency]
    }

    func page(_ ctx: WebContext) -> WebPage {
        let form = Form(ctx: ctx, values: values, errors: errors)
        let currency = values["currency"] ?? ""
        return WebPage(title: ctx.t(.loyaltyRules), body: """
            <h1>\(h(ctx.t(.loyaltyRules)))</h1>
            \(saved ? "<div class=\"alert ok\" role=\"status\">\(h(ctx.t(.saved)))</div>" : "")
            \(form.summary(message: message, shown: ["pointsPerUnit", "pointValue", "validityDays", "minimumRedemption", "maxDiscountPercent"]))
            <p class="hint">\(h(ctx.t(.loyaltyRulesHint)))</p>
            <form method="post" action="\(WebRoutes.loyaltyRules())" class="stack">\(form.hidden())
            \(form.field("pointsPerUnit", ctx.t(.rulePointsPerUnit, currency), attributes: "inputmode=\"numeric\""))
            \(form.field("pointValue", ctx.t(.rulePointValue, currency), attributes: "inputmode=\"decimal\""))
            \(form.field("minimumRedemption", ctx.t(.ruleMinimum), attributes: "inputmode=\"numeric\""))
            \(form.field("maxDiscountPercent", ctx.t(.ruleMaxPercent), attributes: "inputmode=\"numeric\""))
            \(form.field("validityDays", ctx.t(.ruleValidity), attributes: "inputmode=\"numeric\""))
            <button type="submit" class="primary">\(h(ctx.t(.saveLoyalty)))</button></form>
            """, status: status)
    }
}
