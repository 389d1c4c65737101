import Foundation
import Vapor
import WaybillCore
import WaybillLabels

/// Labels and scans in the web app: a shipment's label as PDF (A6, or four to an A4 sheet), the
/// board's ticked shipments' labels, and what a label's QR code opens (`/h/{token}`): for the
/// driver or receiver signed in, the shipment's page with the scan carried into its hand-over
/// forms as proof. The services are `Labels` and `Handovers`; the rules `HandOverPolicy`.
struct HandoverPages {
    func register(_ routes: any RoutesBuilder) {
        routes.get(WebRoutes.orderLabel, use: label)
        routes.post(WebRoutes.labelsPDF, use: labels)
        routes.get(WebRoutes.handover, use: handover)
    }

    static func pdf(_ bytes: [UInt8], name: String) -> Response {
        var headers = HTTPHeaders()
        headers.replaceOrAdd(name: .contentType, value: "application/pdf")
        headers.replaceOrAdd(name: .contentDisposition, value: "inline; filename=\"\(name).pdf\"")
        headers.replaceOrAdd(name: .cacheControl, value: "private, no-store")
        return Response(status: .ok, headers: headers, body: .init(data: Data(bytes)))
    }

    func label(_ req: Request) async throws -> Response {
        let (ctx, me) = try WebAuth.require(req)
        let id: OrderID = try WebRoutes.id(req)
        let layout: LabelLayout = req.query[String.self, at: "layout"] == "a4" ? .a4Four : .a6
        return Self.pdf(try await Labels(request: req).label(id, layout: layout, lang: ctx.lang, by: me), name: "label")
    }

    func labels(_ req: Request) async throws -> Response {
        let (ctx, me) = try WebAuth.require(req, .dispatch)
        let ids = ImportPages.selected(try AccountPages.form(req))
        guard !ids.isEmpty else { return req.redirect(to: WebRoutes.dispatch(query: "bulk=none"), redirectType: .normal) }
        return Self.pdf(try await Labels(request: req).labels(ids, layout: .a4Four, lang: ctx.lang, by: me), name: "labels")
    }

    /// A phone's camera opened a label: signed in, the parcel's page (404 for a label that is not
    /// theirs, kept and logged); otherwise a page asking to sign in, which says nothing of the parcel.
    func handover(_ req: Request) async throws -> Response {
        let ctx = try req.web
        let token = req.parameters.get("token") ?? ""
        guard let me = ctx.principal else {
            return WebPage(title: ctx.t(.handoverTitle), body: """
                <h1>\(h(ctx.t(.handoverTitle)))</h1>
                <p>\(h(ctx.t(.handoverSignIn)))</p>
                <p><a class="button primary" href="\(WebRedirect.signIn(req).location)">\(h(ctx.t(.signIn)))</a></p>
                """).render(ctx)
        }
        // Counter staff: their desk, with the label in its fields.
        if let counter = try await CounterDesks(request: req).desk(for: token, by: me) {
            return req.redirect(to: WebRoutes.deskCounter(counter, query: "code=" + token), redirectType: .normal)
        }
        do {
            let (order, _) = try await Handovers(request: req).lookup(token, by: me)
            return req.redirect(to: WebRoutes.order(try order.storedID, query: "scan=" + token), redirectType: .normal)
        } catch let error as WaybillError where error.status == .notFound {
            return WebPage(title: ctx.t(.handoverTitle), body: """
                <h1>\(h(ctx.t(.handoverTitle)))</h1>
                <p class="alert error" role="alert">\(h(ctx.t(.handoverUnknown)))</p>
                """, status: .notFound).render(ctx)
        }
    }
}
