import Foundation
import Vapor
import WaybillCore

extension WebRoutes {
    static let confirmPassword = WebPath("/confirm-password")
    static let admin = WebPath("/admin")
    static let decideReport = WebPath<ReportID>("/admin/reports/:id") { [$0.uuidString.lowercased()] }
    static let moderateContent = WebPath<ModeratedItem>("/admin/content/:kind/:id") { [$0.kind.rawValue, $0.uuid.uuidString.lowercased()] }
    static let audit = WebPath("/admin/audit")
    static let auditExport = WebPath("/admin/audit.csv")
}

extension WebRedirect {
    /// To the page that asks for the password again, coming back to `next` (a local path) afterwards.
    static func confirmPassword(next: String) -> WebRedirect {
        WebRedirect(location: WebRoutes.confirmPassword(query: "next=" + (next.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "/")))
    }

    /// Where to come back to after confirming: the page asked for, or for a form the page it came
    /// from (its `return` field), else the administration.
    static func confirmPassword(_ req: Request) -> WebRedirect {
        if req.method == .GET { return confirmPassword(next: req.url.path + (req.url.query.map { "?" + $0 } ?? "")) }
        let back = (try? req.content.decode([String: String].self, as: .urlEncodedForm))?["return"]
        return confirmPassword(next: safeLocalPath(back) ?? WebRoutes.admin())
    }
}

/// The administration in the web app (admins, with a password proven in the last 15 minutes): the
/// reports queue with its decisions, the audit log with its search and CSV, and the page that asks
/// for the password again. Suspending and banning are on a person's page. The services decide
/// (`Accounts`' administration, `Permission.moderate`, `Reauthentication`); these pages translate.
struct AdminPages {
    func register(_ routes: any RoutesBuilder) {
        routes.get(WebRoutes.confirmPassword, use: confirmPage)
        routes.post(WebRoutes.confirmPassword, use: confirm)
        routes.get(WebRoutes.admin, use: queue)
        routes.post(WebRoutes.decideReport, use: decide)
        routes.post(WebRoutes.moderateContent, use: moderate)
        routes.get(WebRoutes.audit, use: audit)
        routes.get(WebRoutes.auditExport, use: export)
    }

    static func next(_ raw: String?) -> String { safeLocalPath(raw) ?? WebRoutes.admin() }

    func confirmPage(_ req: Request) async throws -> Response {
        let (ctx, _) = try WebAuth.require(req)
        return try ConfirmPasswordPage(next: Self.next(req.query[String.self, at: "next"])).response(ctx)
    }

    func confirm(_ req: Request) async throws -> Response {
        let (ctx, me) = try WebAuth.require(req)
        let form = try AccountPages.form(req)
        let next = Self.next(form["next"])
        do {
            try await Accounts(request: req).reauthenticate(password: form["password"] ?? "", by: me)
        } catch let error as WaybillError where error.code == .invalidCredentials {
            return try ConfirmPasswordPage(next: next, wrong: true, status: .unprocessableEntity).response(ctx)
        }
        return req.redirect(to: next, redirectType: .normal)
    }

    func queue(_ req: Request) async throws -> Response {
        let (ctx, me) = try WebAuth.require(req, .moderate)
        let raw = req.query[String.self, at: "status"] ?? "pending"
        let status = raw == "all" ? nil : ReportStatus(rawValue: raw) ?? .pending
        let views = try await Accounts(request: req).reportViews(status: status, for: me)
        return try ReportsPage(reports: views, status: status, me: me).response(ctx)
    }

    func decide(_ req: Request) async throws -> Response {
        let (_, me) = try WebAuth.require(req, .moderate)
        let id: ReportID = try WebRoutes.id(req)
        let form = try AccountPages.form(req)
        guard let status = ReportStatus(rawValue: form["status"] ?? "") else { throw WaybillError.validation("status", "required") }
        _ = try await Accounts(request: req).decide(report: id, status: status, note: form["note"], by: me)
        return req.redirect(to: Self.next(form["return"]), redirectType: .normal)
    }

    /// Hides or shows again a message, a review, a trip or a profile picture, back to the page it came from.
    func moderate(_ req: Request) async throws -> Response {
        let (_, me) = try WebAuth.require(req, .moderate)
        guard let kind = req.parameters.get("kind").flatMap(ModeratedContent.init(rawValue:)),
              let id = req.parameters.get("id").flatMap(UUID.init(uuidString:)) else { throw WaybillError.notFound }
        let form = try AccountPages.form(req)
        _ = try await Accounts(request: req).setHidden(ModeratedItem(kind, id: id), hide: form["hidden"] == "true", reason: form["reason"], by: me)
        return req.redirect(to: Self.next(form["return"]), redirectType: .normal)
    }

    /// The form that hides content (with its reason) or shows it again.
    static func moderationForm(_ ctx: WebContext, _ item: ModeratedItem, hidden: Bool, back: String) -> String {
        let field = "hide-\(item.kind.rawValue)-\(item.uuid.uuidString.lowercased())"
        return """
            <form method="post" action="\(WebRoutes.moderateContent(item))" class="stack">\(Form(ctx: ctx).hidden())
            <input type="hidden" name="return" value="\(h(back))"><input type="hidden" name="hidden" value="\(!hidden)">
            \(hidden ? "" : "<div class=\"field\"><label for=\"\(field)\">\(h(ctx.t(.hideReason)))</label><input id=\"\(field)\" name=\"reason\" maxlength=\"500\" required></div>")
            <button type="submit" class="\(hidden ? "secondary" : "danger")">\(h(ctx.t(hidden ? .restoreContent : .hideContent)))</button></form>
            """
    }

    static func search(_ req: Request, _ ctx: WebContext) -> AuditSearch {
        func value(_ name: String) -> String? { req.query[String.self, at: name].flatMap { $0.isEmpty ? nil : $0 } }
        let startOfDay = value("from").flatMap { ctx.endOfDay($0) }.map { $0 - 86_400_000 }
        return AuditSearch(actor: value("actor").flatMap(UserID.init(uuidString:)), action: value("action").flatMap(AuditAction.init(rawValue:)),
                           targetID: value("target"), from: startOfDay, to: value("to").flatMap { ctx.endOfDay($0) }.map { $0 - 1 },
                           before: value("before").flatMap(Int64.init), limit: 50)
    }

    func audit(_ req: Request) async throws -> Response {
        let (ctx, me) = try WebAuth.require(req, .moderate)
        let search = Self.search(req, ctx)
        let accounts = Accounts(request: req)
        let entries = try await accounts.auditLog(search, for: me)
        return try AuditPage(entries: entries, people: try await accounts.auditPeople(entries), query: req.url.query ?? "",
                         values: ["actor": req.query[String.self, at: "actor"] ?? "", "action": req.query[String.self, at: "action"] ?? "",
                                  "target": req.query[String.self, at: "target"] ?? "", "from": req.query[String.self, at: "from"] ?? "",
                                  "to": req.query[String.self, at: "to"] ?? ""],
                         next: entries.count == search.limit ? entries.last?.id : nil).response(ctx)
    }

    func export(_ req: Request) async throws -> Response {
        let (ctx, me) = try WebAuth.require(req, .moderate)
        let csv = try await Accounts(request: req).auditExport(Self.search(req, ctx), for: me)
        var headers = HTTPHeaders()
        headers.replaceOrAdd(name: .contentType, value: "text/csv; charset=utf-8")
        headers.replaceOrAdd(name: .contentDisposition, value: "attachment; filename=\"waybill-audit-log.csv\"")
        headers.replaceOrAdd(name: .cacheControl, value: "no-store")
        return Response(status: .ok, headers: headers, body: .init(string: csv))
    }
}

struct ConfirmPasswordPage: PageView {
    var next: String
    var wrong = false
    var status: HTTPResponseStatus = .ok

    func page(_ ctx: WebContext) -> WebPage {
        let form = Form(ctx: ctx, errors: wrong ? ["password": "invalid"] : [:])
        return WebPage(title: ctx.t(.confirmItsYou), body: """
            <h1>\(h(ctx.t(.confirmItsYou)))</h1>
            <p>\(h(ctx.t(.confirmItsYouHint)))</p>
            \(wrong ? "<div class=\"alert error\" role=\"alert\">\(h(ctx.t(.wrongPassword)))</div>" : "")
            <form method="post" action="\(WebRoutes.confirmPassword())" class="stack">\(form.hidden())
            <input type="hidden" name="next" value="\(h(next))">
            \(form.field("password", ctx.t(.password), type: "password", autocomplete: "current-password"))
            <button type="submit" class="primary">\(h(ctx.t(.confirmPassword)))</button></form>
            """, status: status)
    }
}

struct ReportsPage: PageView {
    var reports: [ReportView]
    var status: ReportStatus?
    var me: Principal

    func page(_ ctx: WebContext) throws -> WebPage {
        let hidden = Form(ctx: ctx).hidden()
        let back = WebRoutes.admin(query: "status=" + (status?.rawValue ?? "all"))
        let filters = ([("pending", ctx.t(.reportPending)), ("reviewed", ctx.t(.reportReviewed)), ("dismissed", ctx.t(.reportDismissed)),
                        ("action_taken", ctx.t(.reportActionTaken)), ("all", ctx.t(.reportAllStatuses))] as [(String, String)]).map { value, label -> String in
            let current = (status?.rawValue ?? "all") == value
            return "<a href=\"\(WebRoutes.admin(query: "status=" + value))\"\(current ? " aria-current=\"page\" class=\"current\"" : "")>\(h(label))</a>"
        }.joined(separator: " · ")
        let items = try reports.map { view -> String in
            let r = view.report
            let id = try r.storedID
            let kind = r.ratingID != nil ? ctx.t(.reportOfReview) : r.messageID != nil ? ctx.t(.reportOfMessage) : ctx.t(.reportOfPerson)
            let choices = ReportStatus.allCases.filter { ReportDecisionRule.next(from: r.status, to: $0) }
            let decided = r.reviewedAt.map { _ in
                "<p class=\"hint\">\(h(ctx.t(.reportDecided, h(AdminCatalogue.status(r.status).in(ctx.lang)), r.decisionNote ?? "—")))</p>"
            } ?? ""
            let form = choices.isEmpty ? "" : """
                <form method="post" action="\(WebRoutes.decideReport(id))" class="stack">\(hidden)
                <input type="hidden" name="return" value="\(h(back))">
                <div class="row"><div class="field"><label for="decision-\(id)">\(h(ctx.t(.reportDecision)))</label>
                <select id="decision-\(id)" name="status" required>\(choices.map { "<option value=\"\($0.rawValue)\">\(h(AdminCatalogue.status($0).in(ctx.lang)))</option>" }.joined())</select></div>
                <div class="field"><label for="note-\(id)">\(h(ctx.t(.reportDecisionNote))) <span class="optional">(\(h(ctx.t(.optional))))</span></label>
                <input id="note-\(id)" name="note" maxlength="2000"></div></div>
                <button type="submit">\(h(ctx.t(.reportDecide)))</button></form>
                """
            return """
                <li class="card report" data-report="\(id.uuidString.lowercased())">
                <p><strong>\(h(Text.reason(r.reason).in(ctx.lang)))</strong> · \(h(kind)) · \(ctx.time(r.createdAt)) · \(h(AdminCatalogue.status(r.status).in(ctx.lang)))</p>
                <p>\(h(ctx.t(.reportAbout))): \(h(view.reported?.displayName ?? "—")) <a href="\(WebRoutes.user(r.reportedUserID))">\(h(ctx.t(.openPerson)))</a></p>
                \(view.excerpt.map { "<blockquote>\(h($0))</blockquote>" } ?? "")
                <p class="hint">\(h(ctx.t(.reportedBy, view.reporter?.displayName ?? "—")))\(r.note.map { ": " + h($0) } ?? "")</p>
                \(decided)\(form)\(view.content.map { AdminPages.moderationForm(ctx, $0.item, hidden: $0.hidden, back: back) } ?? "")</li>
                """
        }.joined()
        return WebPage(title: ctx.t(.administration), body: """
            <h1>\(h(ctx.t(.administration)))</h1>
            <p><a href="\(WebRoutes.audit())">\(h(ctx.t(.auditLog)))</a></p>
            <h2>\(h(ctx.t(.reportsQueue)))</h2>
            <nav class="filters" aria-label="\(h(ctx.t(.reportsQueue)))">\(filters)</nav>
            \(items.isEmpty ? "<p>\(h(ctx.t(.reportsEmpty)))</p>" : "<ul class=\"cards\">\(items)</ul>")
            """, wide: true)
    }
}

struct AuditPage: PageView {
    var entries: [AuditEntry]
    var people: [UserID: User]
    var query: String
    var values: [String: String]
    var next: Int64?


    func page(_ ctx: WebContext) -> WebPage {
        let form = Form(ctx: ctx, values: values)
        let rows = entries.map { e -> String in
            let who = e.actor.map { people[$0]?.displayName ?? $0.uuidString } ?? ctx.t(.auditOperator)
            let target: String = switch e.targetKind {
            case .user: UserID(uuidString: e.targetID).map { "<a href=\"\(WebRoutes.user($0))\">\(h(people[$0]?.displayName ?? e.targetID))</a>" } ?? h(e.targetID)
            case .order: OrderID(uuidString: e.targetID).map { "<a href=\"\(WebRoutes.order($0))\">\(h(e.targetID))</a>" } ?? h(e.targetID)
            case .trip: TripID(uuidString: e.targetID).map { "<a href=\"\(WebRoutes.trip($0))\">\(h(e.targetID))</a>" } ?? h(e.targetID)
            case .claim: ClaimID(uuidString: e.targetID).map { "<a href=\"\(WebRoutes.claim($0))\">\(h(e.targetID))</a>" } ?? h(e.targetID)
            default: h(e.targetID)
            }
            let change = [e.before, e.after].contains { $0 != nil }
                ? "<details><summary>\(h(ctx.t(.auditChange)))</summary><code>\(h(e.before ?? "—"))</code> → <code>\(h(e.after ?? "—"))</code></details>" : ""
            return """
                <tr><td><time datetime="\(e.utc)">\(e.utc)</time></td><td>\(h(who))</td><td>\(h(AdminCatalogue.action(e.action).in(ctx.lang)))</td><td>\(target)</td>
                <td>\(h(e.reason ?? ""))\(change)</td><td class="hint">\(h(e.requestID ?? ""))<br>\(h(e.address ?? ""))</td></tr>
                """
        }.joined()
        let plain = query.split(separator: "&").filter { !$0.hasPrefix("before=") }.joined(separator: "&")
        let actions = [("", ctx.t(.auditAnyAction))] + AuditAction.allCases.map { ($0.rawValue, AdminCatalogue.action($0).in(ctx.lang)) }
        return WebPage(title: ctx.t(.auditLog), body: """
            <p><a href="\(WebRoutes.admin())">\(h(ctx.t(.administration)))</a></p>
            <h1>\(h(ctx.t(.auditLog)))</h1>
            <p class="hint">\(h(ctx.t(.auditHint)))</p>
            <form method="get" action="\(WebRoutes.audit())" class="filters" role="search">
            \(form.select("action", ctx.t(.auditAction), options: actions, required: false))
            \(form.field("actor", ctx.t(.auditActor), required: false))
            \(form.field("target", ctx.t(.auditTarget), required: false))
            \(form.field("from", ctx.t(.statFrom), type: "date", required: false))
            \(form.field("to", ctx.t(.statTo), type: "date", required: false))
            <button type="submit">\(h(ctx.t(.auditFilter)))</button></form>
            <p><a href="\(WebRoutes.auditExport())\(plain.isEmpty ? "" : "?" + h(plain))" download>\(h(ctx.t(.auditCSV)))</a></p>
            \(rows.isEmpty ? "<p>\(h(ctx.t(.auditEmpty)))</p>" : """
            <div class="table-wrap"><table class="audit"><thead><tr><th>\(h(ctx.t(.auditWhen)))</th><th>\(h(ctx.t(.auditWho)))</th><th>\(h(ctx.t(.auditAction)))</th>
            <th>\(h(ctx.t(.reportAbout)))</th><th>\(h(ctx.t(.reason)))</th><th>\(h(ctx.t(.auditOrigin)))</th></tr></thead><tbody>\(rows)</tbody></table></div>
            """)
            \(next.map { "<p><a href=\"\(WebRoutes.audit())?\(h(plain.isEmpty ? "" : plain + "&"))before=\($0)\">\(h(ctx.t(.auditOlder)))</a></p>" } ?? "")
            """, wide: true)
    }
}
