import Foundation
import Vapor
import WaybillCore

extension WebRoutes {
    static let imports = WebPath("/imports")
    static let importFile = WebPath<OrderImportID>("/imports/:id") { [$0.uuidString] }
    static let importCommit = WebPath<OrderImportID>("/imports/:id/commit") { [$0.uuidString] }
    static let bulk = WebPath("/dispatch/bulk")
    static let labels = WebPath("/dispatch/labels")
    static let export = WebPath<ExportKind>("/exports/:kind") { [$0.rawValue] }
    /// The API's template (public), linked from the import page.
    static func importTemplate(french: Bool, xlsx: Bool) -> String {
        "/api/v1/order-import-template?lang=\(french ? "fr" : "en")&format=\(xlsx ? "xlsx" : "csv")"
    }
}

/// The delivery import in the web app: upload, the check row by row, confirm; and the board's bulk
/// actions (assign, cancel, print labels). The services are `OrderImports` and `Orders.bulk`.
struct ImportPages {
    func register(_ routes: any RoutesBuilder) {
        routes.get(WebRoutes.imports, use: list)
        routes.post(WebRoutes.imports, use: upload)
        routes.get(WebRoutes.importFile, use: show)
        routes.post(WebRoutes.importCommit, use: commit)
        routes.post(WebRoutes.bulk, use: bulk)
        routes.post(WebRoutes.labels, use: labels)
        routes.get(WebRoutes.export, use: export)
    }

    /// A CSV export, streamed as it is read (`Exports`): the same rows as the API's.
    func export(_ req: Request) async throws -> Response {
        let (_, me) = try TravelPages.signedIn(req)
        guard let kind = req.parameters.get("kind").flatMap(ExportKind.init(rawValue:)) else { throw WaybillError.notFound }
        let box = req.query[String.self, at: "box"].flatMap(ShipmentBox.init(rawValue:))
        let export = try await Exports(request: req).export(kind, from: req.query[String.self, at: "from"], to: req.query[String.self, at: "to"],
                                                           box: box, by: me)
        let body = export.body
        let response = Response(status: .ok, body: .init(asyncStream: { writer in
            do {
                for try await chunk in body { try await writer.write(.buffer(ByteBuffer(bytes: chunk))) }
                try await writer.write(.end)
            } catch {
                try? await writer.write(.error(error))
            }
        }))
        response.headers.contentType = HTTPMediaType(type: "text", subType: "csv", parameters: ["charset": "utf-8"])
        response.headers.replaceOrAdd(name: .contentDisposition, value: "attachment; filename=\"\(export.fileName)\"")
        response.headers.replaceOrAdd(name: .cacheControl, value: "no-store")
        return response
    }

    struct UploadForm: Content {
        var file: File?
    }

    func list(_ req: Request) async throws -> Response {
        let (ctx, me) = try TravelPages.signedIn(req)
        return try ImportListPage(recent: try await OrderImports(request: req).recent(by: me)).response(ctx)
    }

    func upload(_ req: Request) async throws -> Response {
        let (ctx, me) = try TravelPages.signedIn(req)
        let imports = OrderImports(request: req)
        guard let file = (try? req.content.decode(UploadForm.self))?.file, file.data.readableBytes > 0 else {
            var page = ImportListPage(recent: try await imports.recent(by: me))
            page.error = ctx.t(.errValidation)
            page.status = .unprocessableEntity
            return try page.response(ctx)
        }
        do {
            let record = try await imports.upload(Array(buffer: file.data), fileName: file.filename, by: me)
            return req.redirect(to: WebRoutes.importFile(try record.storedID), redirectType: .normal)
        } catch let error as WaybillError where error.status != .forbidden && error.status != .notFound {
            var page = ImportListPage(recent: try await imports.recent(by: me))
            // A file beyond a bound is told by the bound it broke.
            page.error = error.fields?["file"].flatMap { ImportProblem.boundCodes.contains($0) ? ctx.t(ImportText.message($0)) : nil } ?? ctx.message(error)
            page.status = error.status
            return try page.response(ctx)
        }
    }

    func show(_ req: Request) async throws -> Response {
        let (ctx, me) = try TravelPages.signedIn(req)
        let id: OrderImportID = try WebRoutes.id(req)
        return try ImportPage(record: try await OrderImports(request: req).find(id, by: me)).response(ctx)
    }

    func commit(_ req: Request) async throws -> Response {
        let (ctx, me) = try TravelPages.signedIn(req)
        let id: OrderImportID = try WebRoutes.id(req)
        let imports = OrderImports(request: req)
        do {
            _ = try await imports.commit(id, by: me)
        } catch let error as WaybillError where error.status == .conflict || error.code == .tooManyOrders {
            var page = ImportPage(record: try await imports.find(id, by: me))
            page.error = ctx.message(error)
            page.status = error.status
            return try page.response(ctx)
        }
        return req.redirect(to: WebRoutes.importFile(id), redirectType: .normal)
    }

    // MARK: The board's bulk actions

    func bulk(_ req: Request) async throws -> Response {
        let (ctx, me) = try WebAuth.require(req, .dispatch)
        let form = try AccountPages.form(req)
        let ids = Self.selected(form)
        let orders = Orders(request: req)
        let action: Orders.BulkAction
        switch form["action"] {
        case "cancel": action = .cancel(reason: form["reason"] ?? "")
        default:
            guard let driver = form["driverId"].flatMap(UserID.init(uuidString:)) else { throw WaybillError.validation("driverId", "required") }
            action = .assign(driver: driver)
        }
        do {
            let results = try await orders.bulk(action, ids, by: me)
            let done = results.filter(\.ok).count
            return req.redirect(to: WebRoutes.dispatch(query: "bulk=\(done),\(results.count - done)"), redirectType: .normal)
        } catch let error as WaybillError where error.fields != nil {
            var page = try await DispatchBoardPage.load(for: me, orders: orders, tracking: Tracking(request: req))
            page.notice = error.fields?["orderIds"] == "required" ? ctx.t(.bulkNoneSelected) : ctx.message(error)
            page.noticeIsError = true
            return try page.response(ctx)
        }
    }

    /// The board's ticked cards: a checkbox `order_<id>` each.
    static func selected(_ form: [String: String]) -> [OrderID] {
        form.keys.sorted().compactMap { key in
            guard key.hasPrefix("order_"), form[key] == "on" else { return nil }
            return OrderID(uuidString: String(key.dropFirst(6)))
        }
    }

    func labels(_ req: Request) async throws -> Response {
        let (ctx, me) = try WebAuth.require(req, .dispatch)
        let ids = Self.selected(try AccountPages.form(req))
        guard !ids.isEmpty else { return req.redirect(to: WebRoutes.dispatch(query: "bulk=none"), redirectType: .normal) }
        let orders = try await Orders(request: req).labels(ids, by: me)
        let tracking = Tracking(request: req)
        return try LabelsPage(orders: orders, trackingURL: { $0.trackingToken.map(tracking.trackingURL) }).response(ctx)
    }
}

extension WebContext {
    func importStatus(_ record: OrderImportRecord) -> String {
        switch record.shownStatus {
        case "committed": t(.importStatusCommitted)
        case "rejected": t(.importStatusRejected)
        case "expired": t(.importStatusExpired)
        default: t(.importStatusReady)
        }
    }
}

struct ImportListPage: PageView {
    var recent: [OrderImportRecord]
    var error: String?
    var status: HTTPResponseStatus = .ok

    func page(_ ctx: WebContext) throws -> WebPage {
        let french = ctx.lang == .fr
        let rows = try recent.map { r -> String in
            let id = try r.storedID
            return "<li data-import=\"\(id.uuidString)\"><a href=\"\(WebRoutes.importFile(id))\">\(h(r.fileName))</a> · \(h(ctx.t(.importRows, String(r.rowCount)))) · <span class=\"status\">\(h(ctx.importStatus(r)))</span> · <small>\(h(ctx.time(r.createdAt)))</small></li>"
        }.joined()
        let csrf = "<input type=\"hidden\" name=\"_csrf\" value=\"\(h(ctx.csrf))\">"
        return WebPage(title: ctx.t(.imports), body: """
            <h1>\(h(ctx.t(.imports)))</h1>
            \(error.map { "<div class=\"alert error\" role=\"alert\">\(h($0))</div>" } ?? "")
            <p>\(h(ctx.t(.importsIntro)))</p>
            <p>\(h(ctx.t(.importTemplates)))
            <a href="\(WebRoutes.importTemplate(french: french, xlsx: true))" download>\(h(ctx.t(french ? .importTemplateXLSXFr : .importTemplateXLSX)))</a> ·
            <a href="\(WebRoutes.importTemplate(french: french, xlsx: false))" download>\(h(ctx.t(french ? .importTemplateCSVFr : .importTemplateCSV)))</a> ·
            <a href="\(WebRoutes.importTemplate(french: !french, xlsx: true))" download>\(h(ctx.t(french ? .importTemplateXLSX : .importTemplateXLSXFr)))</a></p>
            <form method="post" action="\(WebRoutes.imports())" enctype="multipart/form-data" class="stack">\(csrf)
            <div class="field"><label for="import-file">\(h(ctx.t(.importFile)))</label>
            <input id="import-file" type="file" name="file" required accept=".csv,.xlsx,text/csv,application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"></div>
            <button type="submit" class="primary">\(h(ctx.t(.importCheck)))</button>
            </form>
            <h2>\(h(ctx.t(.importRecent)))</h2>
            \(recent.isEmpty ? "<p>\(h(ctx.t(.importNone)))</p>" : "<ul class=\"list\">\(rows)</ul>")
            """, status: status)
    }
}

struct ImportPage: PageView {
    var record: OrderImportRecord
    var error: String?
    var status: HTTPResponseStatus = .ok

    func page(_ ctx: WebContext) throws -> WebPage {
        let r = record
        let problems = r.problems
        let rows = problems.map { p -> String in
            let column = p.column.map { ImportColumn(rawValue: $0).map { ctx.lang == .fr ? $0.french : $0.rawValue } ?? $0 } ?? "—"
            return "<tr data-row=\"\(p.row)\" data-column=\"\(h(p.column ?? ""))\" data-code=\"\(h(p.code))\"><td>\(p.row == 0 ? h(ctx.t(.importWholeFile)) : String(p.row))</td><td>\(h(column))</td><td>\(h(ctx.t(ImportText.message(p.code))))</td></tr>"
        }.joined()
        let more = r.problemCount > problems.count ? "<p>\(h(ctx.t(.importMoreProblems, String(r.problemCount - problems.count))))</p>" : ""
        let table = problems.isEmpty ? "" : """
            <h2>\(h(ctx.t(.importProblems)))</h2>
            <div class="table-wrap"><table id="import-problems"><thead><tr><th scope="col">\(h(ctx.t(.importRow)))</th><th scope="col">\(h(ctx.t(.importColumn)))</th><th scope="col">\(h(ctx.t(.importProblem)))</th></tr></thead>
            <tbody>\(rows)</tbody></table></div>\(more)
            """
        let csrf = "<input type=\"hidden\" name=\"_csrf\" value=\"\(h(ctx.csrf))\">"
        var action = ""
        switch r.shownStatus {
        case "committed":
            action = """
                <div class="alert ok" role="status" data-import-created="\(r.createdCount ?? 0)">\(h(ctx.t(.importCommitted, String(r.createdCount ?? 0))))</div>
                <p><a href="\(WebRoutes.orders())">\(h(ctx.t(.importSeeOrders)))</a></p>
                """
        case "rejected": action = "<div class=\"alert error\" role=\"alert\">\(h(ctx.t(.importRejected)))</div>"
        case "expired": action = "<div class=\"alert error\" role=\"alert\">\(h(ctx.t(.importExpired)))</div>"
        default:
            if r.mayCommit {
                action = """
                    <form method="post" action="\(WebRoutes.importCommit(try r.storedID))" class="stack">\(csrf)
                    <button type="submit" class="primary" id="import-commit">\(h(ctx.t(.importCommit, String(r.validCount))))</button></form>
                    """
            }
            if r.invalidCount > 0 { action += "<p class=\"note\">\(h(ctx.t(.importFixHint)))</p>" }
        }
        return WebPage(title: r.fileName, body: """
            <p><a href="\(WebRoutes.imports())">\(h(ctx.t(.imports)))</a></p>
            <h1>\(h(r.fileName))</h1>
            \(error.map { "<div class=\"alert error\" role=\"alert\">\(h($0))</div>" } ?? "")
            <dl class="facts" id="import-summary" data-status="\(r.shownStatus)">
            <dt>\(h(ctx.t(.importRows, "")).trimmingCharacters(in: .whitespaces))</dt><dd>\(r.rowCount)</dd>
            <dt>\(h(ctx.t(.importValid)))</dt><dd data-valid>\(r.validCount)</dd>
            <dt>\(h(ctx.t(.importInvalid)))</dt><dd data-invalid>\(r.invalidCount)</dd>
            <dt>\(h(ctx.t(.importAlready)))</dt><dd data-already>\(r.alreadyCount)</dd>
            <dt>\(h(ctx.t(.importTotal)))</dt><dd>\(ctx.money(Money(Int(clamping: r.totalAmount), r.currency)))</dd>
            </dl>
            \(action)
            \(table)
            """, wide: true)
    }
}

/// Labels for a selection of orders, one per printed page (A6, 105 × 148 mm): the reference large,
/// sender and receiver, weight and service, and the tracking link.
struct LabelsPage: PageView {
    var orders: [(order: Order, customer: PersonRow?)]
    var trackingURL: @Sendable (Order) -> String?

    func page(_ ctx: WebContext) -> WebPage {
        let labels = orders.map { order, customer -> String in
            let sender = customer?.companyName ?? customer?.displayName ?? ""
            return """
                <article class="shipping-label" data-label="\(h(order.reference))">
                <p class="label-ref">\(h(order.reference))</p>
                <p class="label-service">\(order.service == .express ? h(ctx.t(.express)) : "") \(h(ctx.weight(order.weightClass)))</p>
                <p><span class="label">\(h(ctx.t(.labelFrom)))</span> \(h(sender))<br>\(ctx.address(order.pickup))</p>
                <p class="label-to"><span class="label">\(h(ctx.t(.labelTo)))</span> <strong>\(h(order.recipient.name))</strong><br>\(ctx.address(order.dropoff))</p>
                \(order.externalReference.map { "<p><small>\(h($0))</small></p>" } ?? "")
                \(trackingURL(order).map { "<p><small>\(h(ctx.t(.labelTrack))) \(h($0))</small></p>" } ?? "")
                </article>
                """
        }.joined()
        return WebPage(title: ctx.t(.labelsTitle), body: """
            <p class="no-print"><a href="\(WebRoutes.dispatch())">\(h(ctx.t(.dispatch)))</a> · <button type="button" data-print>\(h(ctx.t(.labelPrint)))</button></p>
            <h1 class="no-print">\(h(ctx.t(.labelsTitle))) (\(orders.count))</h1>
            <div class="labels">\(labels)</div>
            """)
    }
}
