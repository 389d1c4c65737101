import Foundation
import Vapor
import WaybillCore

extension WebRoutes {
    static let claims = WebPath("/claims")
    static let claim = WebPath<ClaimID>("/claims/:id") { [$0.uuidString.lowercased()] }
    static let claimDecision = WebPath<ClaimID>("/claims/:id/decision") { [$0.uuidString.lowercased()] }
    static let claimPhoto = WebPath<(ClaimID, FileID)>("/claims/:id/photos/:file") { [$0.0.uuidString.lowercased(), $0.1.uuidString.lowercased()] }
    static let fileClaim = WebPath<OrderID>("/orders/:id/claim") { [$0.uuidString.lowercased()] }
    static let insurance = WebPath("/insurance")
}

/// Insurance in the web app: the sender's claim form (on the shipment's page), the claims list and
/// a claim's page with staff's decision (two staff above the threshold, a recent password), and
/// the admins' premium table. `Claims` decides; these pages translate.
struct ClaimPages {
    func register(_ routes: any RoutesBuilder) {
        routes.get(WebRoutes.claims, use: list)
        routes.get(WebRoutes.claim, use: show)
        routes.post(WebRoutes.claimDecision, use: decide)
        routes.get(WebRoutes.claimPhoto, use: photo)
        routes.post(WebRoutes.fileClaim, use: file)
        routes.get(WebRoutes.insurance, use: table)
        routes.post(WebRoutes.insurance, use: saveTable)
    }

    func list(_ req: Request) async throws -> Response {
        let (ctx, me) = try WebAuth.require(req)
        let raw = req.query[String.self, at: "status"] ?? (me.caller.may(.decideClaims) ? "submitted" : "all")
        let status = raw == "all" ? nil : ClaimStatus(rawValue: raw)
        let views = try await Claims(request: req).list(status: status, for: me)
        return try ClaimsPage(claims: views, status: status, staff: me.caller.may(.decideClaims)).response(ctx)
    }

    func show(_ req: Request) async throws -> Response {
        let (ctx, me) = try WebAuth.require(req)
        let claims = Claims(request: req)
        let view = try await claims.claim(try WebRoutes.id(req), for: me)
        return try ClaimPage(view: view, table: try await claims.currentTable().table, me: me,
                         filed: req.query[String.self, at: "filed"] != nil).response(ctx)
    }

    func decide(_ req: Request) async throws -> Response {
        let (ctx, me) = try WebAuth.require(req, .decideClaims)
        let id: ClaimID = try WebRoutes.id(req)
        let form = try AccountPages.form(req)
        let claims = Claims(request: req)
        let decision: ClaimPolicy.Decision
        if form["decision"] == "decline" {
            decision = .decline(reason: form["reason"] ?? "")
        } else {
            let amount = Money.minorUnits(fromText: form["amount"] ?? "", maximum: Decimal(Tariff.maxAmount) / 100)
            decision = .approve(amount: amount ?? 0)
        }
        do {
            _ = try await claims.decide(id, decision, by: me)
        } catch let error as WaybillError where error.status == .unprocessableEntity || error.code == .secondApproverRequired {
            let view = try await claims.claim(id, for: me)
            return try ClaimPage(view: view, table: try await claims.currentTable().table, me: me, values: form,
                             errors: error.fields ?? [:], message: ctx.message(error), status: error.status).response(ctx)
        }
        return req.redirect(to: WebRoutes.claim(id), redirectType: .normal)
    }

    func photo(_ req: Request) async throws -> Response {
        let (_, me) = try WebAuth.require(req)
        let (file, data) = try await Claims(request: req).photo(try WebRoutes.id(req), file: try WebRoutes.id(req, "file"), for: me)
        var headers = HTTPHeaders()
        headers.replaceOrAdd(name: .contentType, value: file.contentType)
        headers.replaceOrAdd(name: .cacheControl, value: "private, max-age=3600")
        headers.replaceOrAdd(name: "Content-Security-Policy", value: "default-src 'none'")
        return Response(status: .ok, headers: headers, body: .init(data: data))
    }

    struct ClaimForm: Content {
        var kind: String?
        var amount: String?
        var description: String?
        var photos: [File]?
    }

    /// The sender's claim, from the shipment's page; problems are shown there.
    func file(_ req: Request) async throws -> Response {
        let (ctx, me) = try WebAuth.require(req)
        let id: OrderID = try WebRoutes.id(req)
        let form = try req.content.decode(ClaimForm.self)
        try requireStorableText([form.kind, form.amount, form.description].compactMap { $0 })
        let photos = (form.photos ?? []).filter { $0.data.readableBytes > 0 }
            .map { Orders.Upload(bytes: Array($0.data.readableBytesView), field: "photos") }
        let amount = Money.minorUnits(fromText: form.amount ?? "", maximum: Decimal(Tariff.maxAmount) / 100) ?? 0
        do {
            let claim = try await Claims(request: req).file(id, .init(kind: ClaimKind(rawValue: form.kind ?? "") ?? .damaged,
                                                                       description: form.description ?? "", amount: amount, photos: photos), by: me)
            return req.redirect(to: WebRoutes.claim(try claim.storedID, query: "filed=1"), redirectType: .normal)
        } catch let error as WaybillError where error.status == .unprocessableEntity || error.status == .conflict
                    || error.status == .unsupportedMediaType {
            var page = try await OrderPage.load(id, req, for: me)
            page.claimValues = ["kind": form.kind ?? "", "amount": form.amount ?? "", "description": form.description ?? ""]
            page.claimErrors = error.fields ?? [:]
            page.claimMessage = ctx.message(error)
            let response = try page.response(ctx)
            response.status = error.status
            return response
        }
    }

    // MARK: The premium table (admins)

    func table(_ req: Request) async throws -> Response {
        let (ctx, me) = try WebAuth.require(req, .manageInsurance)
        let record = try await Claims(request: req).table(for: me)
        return try InsuranceTablePage(values: InsuranceTablePage.values(try record.table), saved: req.query[String.self, at: "saved"] != nil).response(ctx)
    }

    func saveTable(_ req: Request) async throws -> Response {
        let (ctx, me) = try WebAuth.require(req, .manageInsurance)
        let form = try AccountPages.form(req)
        let claims = Claims(request: req)
        let currency = try await claims.currentTable().table.currency
        func cents(_ key: String) -> Int { Money.minorUnits(fromText: form[key] ?? "", maximum: Decimal(Tariff.maxAmount) / 100) ?? -1 }
        var bands: [InsuranceTable.Band] = []
        for index in 0..<InsurancePageLimits.bands where !(form["upTo\(index)"] ?? "").trimmingCharacters(in: .whitespaces).isEmpty {
            bands.append(.init(upTo: cents("upTo\(index)"), rateBasisPoints: Int(form["rate\(index)"] ?? "") ?? -1, minimumPremium: cents("minimum\(index)")))
        }
        let table = InsuranceTable(currency: currency, bands: bands, claimWindowDays: Int(form["claimWindowDays"] ?? "") ?? 0,
                                   secondApprovalAbove: cents("secondApprovalAbove"))
        do {
            _ = try await claims.replaceTable(table, by: me)
        } catch let error as WaybillError where error.status == .unprocessableEntity {
            var errors: [String: String] = [:]
            for (key, value) in error.fields ?? [:] {
                // "bands.1.upTo" is the form's "upTo1".
                let parts = key.split(separator: ".")
                errors[parts.count == 3 ? "\(parts[2])\(parts[1])".replacingOccurrences(of: "rateBasisPoints", with: "rate")
                    .replacingOccurrences(of: "minimumPremium", with: "minimum") : key] = value
            }
            return try InsuranceTablePage(values: form, errors: errors, message: ctx.message(error), status: error.status).response(ctx)
        }
        return req.redirect(to: WebRoutes.insurance(query: "saved=1"), redirectType: .normal)
    }
}

enum InsurancePageLimits {
    /// Rows the premium form offers (the table may have up to `InsuranceTable.maxBands`).
    static let bands = 5
}

extension OrderPage {
    /// The shipment's insurance: what it is insured for, its claim, or the form to claim.
    func insuranceBlock(_ ctx: WebContext) throws -> String {
        let order = record.order
        guard let declared = order.declaredValue, details.money else { return "" }
        var block = "<section class=\"insurance\" id=\"insurance\"><h2>\(h(ctx.t(.insurance)))</h2><p>\(h(ctx.t(.insuredFor, Money(declared, order.currency).description, Money(order.insurancePremium ?? 0, order.currency).description)))</p>"
        if let claim {
            let claimID = try claim.claim.storedID
            block += "<p data-claim-status=\"\(claim.claim.status.rawValue)\">\(h(ctx.t(.claim))): \(h(InsuranceCatalogue.status(claim.claim.status).in(ctx.lang))) · <a href=\"\(WebRoutes.claim(claimID))\">\(h(ctx.t(.claimOpen)))</a></p>"
        } else if !claimKinds.isEmpty {
            let form = Form(ctx: ctx, values: claimValues, errors: claimErrors, idPrefix: "claim-")
            block += """
                <details\(claimMessage == nil ? "" : " open")><summary>\(h(ctx.t(.fileClaim)))</summary>
                \(form.summary(message: claimMessage, shown: ["kind", "amount", "description"]))
                <form method="post" action="\(WebRoutes.fileClaim(order.id))" enctype="multipart/form-data" class="stack">\(form.hidden())
                \(form.select("kind", ctx.t(.claimKind), options: claimKinds.map { ($0.rawValue, InsuranceCatalogue.kind($0).in(ctx.lang)) }))
                \(form.field("amount", ctx.t(.claimAmount, order.currency), attributes: "inputmode=\"decimal\""))
                <div class="field\(claimErrors["description"] == nil ? "" : " invalid")"><label for="claim-description">\(h(ctx.t(.claimDescription)))</label>
                <textarea id="claim-description" name="description" maxlength="\(ClaimPolicy.descriptionLimit)" rows="3" required>\(h(claimValues["description"]))</textarea></div>
                <div class="field"><label for="claim-photos">\(h(ctx.t(.claimPhotos))) <span class="optional">(\(h(ctx.t(.optional))))</span></label>
                <input id="claim-photos" name="photos[]" type="file" accept="image/jpeg,image/png" multiple></div>
                <button type="submit" class="primary">\(h(ctx.t(.claimSend)))</button></form></details>
                """
        }
        return block + "</section>"
    }
}

struct ClaimsPage: PageView {
    var claims: [Claims.View]
    var status: ClaimStatus?
    var staff: Bool

    func page(_ ctx: WebContext) throws -> WebPage {
        let filters = (ClaimStatus.allCases.map { ($0.rawValue, InsuranceCatalogue.status($0).in(ctx.lang)) } + [("all", ctx.t(.claimAll))])
            .map { value, label -> String in
                let current = (status?.rawValue ?? "all") == value
                return "<a href=\"\(WebRoutes.claims(query: "status=" + value))\"\(current ? " aria-current=\"page\" class=\"current\"" : "")>\(h(label))</a>"
            }.joined(separator: " · ")
        let rows = try claims.map { view -> String in
            let c = view.claim, id = try c.storedID
            return """
                <tr data-claim="\(id.uuidString.lowercased())"><td><a href="\(WebRoutes.claim(id))">\(h(view.order.reference))</a></td>
                <td>\(h(InsuranceCatalogue.kind(c.kind).in(ctx.lang)))</td><td class="num">\(ctx.money(Money(c.claimedAmount, c.currency)))</td>
                \(staff ? "<td>\(h(view.claimant?.displayName ?? "—"))</td>" : "")
                <td>\(h(InsuranceCatalogue.status(c.status).in(ctx.lang)))</td><td>\(ctx.time(c.createdAt))</td></tr>
                """
        }.joined()
        return WebPage(title: ctx.t(.claims), body: """
            <h1>\(h(ctx.t(.claims)))</h1>
            <nav class="filters" aria-label="\(h(ctx.t(.claims)))">\(filters)</nav>
            \(rows.isEmpty ? "<p>\(h(ctx.t(.claimsEmpty)))</p>" : """
            <div class="table-wrap"><table><thead><tr><th>\(h(ctx.t(.claimOrder)))</th><th>\(h(ctx.t(.claimKind)))</th><th class="num">\(h(ctx.t(.claimClaimed)))</th>
            \(staff ? "<th>\(h(ctx.t(.claimBy)))</th>" : "")<th>\(h(ctx.t(.status)))</th><th>\(h(ctx.t(.date)))</th></tr></thead><tbody>\(rows)</tbody></table></div>
            """)
            """, wide: true)
    }
}

struct ClaimPage: PageView {
    var view: Claims.View
    var table: InsuranceTable
    var me: Principal
    var values: [String: String] = [:]
    var errors: [String: String] = [:]
    var message: String?
    var status: HTTPResponseStatus = .ok
    var filed = false

    func page(_ ctx: WebContext) throws -> WebPage {
        let c = view.claim, order = view.order
        let claimID = try c.storedID, orderID = try order.storedID
        func money(_ amount: Int?) -> String { amount.map { ctx.money(Money($0, c.currency)) } ?? "—" }
        let photos = try view.photos.map {
            "<figure><img src=\"\(WebRoutes.claimPhoto((claimID, try $0.storedID)))\" alt=\"\(h(ctx.t(.claim)))\" width=\"\($0.width)\" height=\"\($0.height)\" class=\"file claim_photo\" loading=\"lazy\"></figure>"
        }.joined()
        var decision = ""
        // What the viewer may do is the claim's rule (`ClaimPolicy.actions`): its first approver may decline, not confirm.
        if !view.actions.isEmpty {
            let form = Form(ctx: ctx, values: values.isEmpty ? ["amount": OrderPages.decimal(Money(c.proposedAmount ?? c.claimedAmount, c.currency))] : values,
                            errors: errors, idPrefix: "decide-")
            let second = c.status == .awaitingSecondApproval
            let approval = view.actions.contains(.approve) ? """
                <p class="hint">\(h(ctx.t(.claimSecondHint, Money(table.secondApprovalAbove, c.currency).description)))</p>
                <form method="post" action="\(WebRoutes.claimDecision(claimID))" class="stack">\(form.hidden())
                <input type="hidden" name="decision" value="approve"><input type="hidden" name="return" value="\(WebRoutes.claim(claimID))">
                \(second ? "<input type=\"hidden\" name=\"amount\" value=\"\(h(OrderPages.decimal(Money(c.proposedAmount ?? 0, c.currency))))\"><p>\(h(ctx.t(.claimProposed, Money(c.proposedAmount ?? 0, c.currency).description)))</p>"
                    : form.field("amount", ctx.t(.claimApproveAmount, c.currency), attributes: "inputmode=\"decimal\""))
                <button type="submit" class="primary">\(h(second ? ctx.t(.claimConfirmApproval) : ctx.t(.claimApprove)))</button></form>
                """ : ""
            decision = """
                <section class="decision"><h2>\(h(view.actions.contains(.approve) ? (second ? ctx.t(.claimConfirmApproval) : ctx.t(.claimApprove)) : ctx.t(.claimDecline)))</h2>
                \(form.summary(message: message, shown: ["amount", "reason"]))
                \(approval)
                <form method="post" action="\(WebRoutes.claimDecision(claimID))" class="stack">\(form.hidden())
                <input type="hidden" name="decision" value="decline"><input type="hidden" name="return" value="\(WebRoutes.claim(claimID))">
                \(form.field("reason", ctx.t(.claimDeclineWhy), attributes: "maxlength=\"\(ClaimPolicy.reasonLimit)\""))
                <button type="submit" class="danger">\(h(ctx.t(.claimDecline)))</button></form></section>
                """
        }
        let title = ctx.t(.claimFor, order.reference)
        return WebPage(title: title, body: """
            <h1>\(h(title))</h1>
            \(filed ? "<div class=\"alert ok\" role=\"status\">\(h(ctx.t(.claimFiled)))</div>" : "")
            \(c.paymentNote.map { "<div class=\"alert info\" role=\"note\">\(h($0))</div>" } ?? "")
            <p class="big-status" data-claim-status="\(c.status.rawValue)">\(h(InsuranceCatalogue.status(c.status).in(ctx.lang)))</p>
            <dl class="summary">
            <dt>\(h(ctx.t(.claimOrder)))</dt><dd><a href="\(WebRoutes.order(orderID))">\(h(order.reference))</a></dd>
            \(view.claimant.map { "<dt>\(h(ctx.t(.claimBy)))</dt><dd>\(h($0.displayName))</dd>" } ?? "")
            <dt>\(h(ctx.t(.claimKind)))</dt><dd>\(h(InsuranceCatalogue.kind(c.kind).in(ctx.lang)))</dd>
            <dt>\(h(ctx.t(.insuredValue)))</dt><dd>\(money(order.declaredValue))</dd>
            <dt>\(h(ctx.t(.claimClaimed)))</dt><dd>\(money(c.claimedAmount))</dd>
            \(ClaimPolicy.shownProposal(status: c.status, proposed: c.proposedAmount).map { "<dt>\(h(ctx.t(.claimApprovedAmount)))</dt><dd>\(h(ctx.t(.claimProposed, Money($0, c.currency).description)))</dd>" } ?? "")
            \(c.approvedAmount.map { "<dt>\(h(ctx.t(.claimApprovedAmount)))</dt><dd data-approved>\(money($0))</dd>" } ?? "")
            \(c.refundID != nil ? "<dt>\(h(ctx.t(.claimRefunded, Money(c.refundedAmount ?? 0, c.currency).description)))</dt><dd>\(ctx.time(c.paidAt ?? c.updatedAt))</dd>" : "")
            \(c.declineReason.map { "<dt>\(h(ctx.t(.claimDeclineReason)))</dt><dd>\(h($0))</dd>" } ?? "")
            <dt>\(h(ctx.t(.date)))</dt><dd>\(ctx.time(c.createdAt))</dd>
            </dl>
            <h2>\(h(ctx.t(.claimDescription)))</h2><p>\(h(c.description))</p>
            \(photos.isEmpty ? "" : "<div class=\"files\">\(photos)</div>")
            \(decision)
            """, status: status)
    }
}

struct InsuranceTablePage: PageView {
    var values: [String: String]
    var errors: [String: String] = [:]
    var message: String?
    var status: HTTPResponseStatus = .ok
    var saved = false

    static func values(_ table: InsuranceTable) -> [String: String] {
        var values = ["claimWindowDays": String(table.claimWindowDays), "currency": table.currency,
                      "secondApprovalAbove": OrderPages.decimal(Money(table.secondApprovalAbove, table.currency))]
        for (index, band) in table.bands.prefix(InsurancePageLimits.bands).enumerated() {
            values["upTo\(index)"] = OrderPages.decimal(Money(band.upTo, table.currency))
            values["rate\(index)"] = String(band.rateBasisPoints)
            values["minimum\(index)"] = OrderPages.decimal(Money(band.minimumPremium, table.currency))
        }
        return values
    }

    func page(_ ctx: WebContext) -> WebPage {
        let form = Form(ctx: ctx, values: values, errors: errors)
        let currency = values["currency"] ?? ""
        let bands = (0..<InsurancePageLimits.bands).map { i in
            """
            <fieldset><legend>\(h(ctx.t(.bandUpTo, String(i + 1), currency)))</legend><div class="row">
            \(form.field("upTo\(i)", ctx.t(.bandUpTo, String(i + 1), currency), required: i == 0, attributes: "inputmode=\"decimal\""))
            \(form.field("rate\(i)", ctx.t(.bandRate), required: i == 0, attributes: "inputmode=\"numeric\""))
            \(form.field("minimum\(i)", ctx.t(.bandMinimum, currency), required: i == 0, attributes: "inputmode=\"decimal\""))
            </div></fieldset>
            """
        }.joined()
        let shown = Set((0..<InsurancePageLimits.bands).flatMap { ["upTo\($0)", "rate\($0)", "minimum\($0)"] } + ["claimWindowDays", "secondApprovalAbove"])
        return WebPage(title: ctx.t(.insuranceTable), body: """
            <h1>\(h(ctx.t(.insuranceTable)))</h1>
            \(saved ? "<div class=\"alert ok\" role=\"status\">\(h(ctx.t(.saved)))</div>" : "")
            \(form.summary(message: message, shown: shown))
            <p class="hint">\(h(ctx.t(.insuranceTableHint)))</p>
            <form method="post" action="\(WebRoutes.insurance())" class="stack">\(form.hidden())
            \(bands)
            \(form.field("claimWindowDays", ctx.t(.claimWindow), attributes: "inputmode=\"numeric\""))
            \(form.field("secondApprovalAbove", ctx.t(.secondApprovalAbove, currency), attributes: "inputmode=\"decimal\""))
            <button type="submit" class="primary">\(h(ctx.t(.saveInsurance)))</button></form>
            """, status: status)
    }
}
