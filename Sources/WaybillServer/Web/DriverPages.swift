import Fluent
import Foundation
import SQLKit
import Vapor
import WaybillCore

/// The driver's phone: today's deliveries in order, the steps, position sharing and the proof screen.
struct DriverPages {
    func register(_ routes: any RoutesBuilder) {
        routes.get(WebRoutes.driverDay, use: today)
        routes.get(WebRoutes.driverMap, use: map)
        routes.post(WebRoutes.driverDuty, use: duty)
        routes.post(WebRoutes.accept, use: accept)
        routes.post(WebRoutes.pickup, use: pickup)
        routes.get(WebRoutes.deliver, use: proofPage)
        routes.post(WebRoutes.deliver, use: deliver)
        routes.post(WebRoutes.fail, use: fail)
        routes.post(WebRoutes.queuedStep, use: queuedStep)
    }

    func today(_ req: Request) async throws -> Response {
        let (ctx, me) = try WebAuth.require(req, .drive)
        return try await DriverDayPage.load(for: me, orders: Orders(request: req)).response(ctx)
    }

    /// The day's stops on a map (the phone's Map tab): each order's next stop, numbered in the day's
    /// order, and the driver's own position once shared.
    func map(_ req: Request) async throws -> Response {
        let (ctx, me) = try WebAuth.require(req, .drive)
        let day = try await Orders(request: req).driverDay(for: me)
        var map = WebMap(id: "driver-map", label: ctx.t(.driverMapTitle))
        for (index, entry) in day.todo.enumerated() {
            let order = entry.order
            let stop = order.status.nextStop == .dropoff ? order.dropoff : order.pickup
            guard let c = stop.coordinate else { continue }
            map.markers.append(.init(id: "stop:\(order.id.uuidString)", latitude: c.latitude, longitude: c.longitude,
                                     label: "\(index + 1). \(order.reference), \(stop.singleLine)", kind: order.status.nextStop == .dropoff ? "dropoff" : "pickup"))
        }
        if let p = day.state?.position {
            map.markers.append(.init(id: "driver:\(me.userID.uuidString)", latitude: p.latitude, longitude: p.longitude, label: me.user.firstName, kind: "driver"))
        }
        return WebPage(title: ctx.t(.driverMapTitle), body: """
            <h1>\(h(ctx.t(.driverMapTitle)))</h1>
            \(day.todo.isEmpty ? "<p class=\"empty\">\(h(ctx.t(.driverMapEmpty)))</p>" : "")
            \(map.render(ctx))
            """, scripts: ["map"]).render(ctx)
    }

    /// The switch that shares the driver's position while the page is open (position.js).
    /// `duty: false` for travellers (`PositionSharing.ownShipments`): sharing is this page's, no duty.
    static func sharingToggle(_ ctx: WebContext, onDuty: Bool, boxed: Bool = true, duty: Bool = true) -> String {
        let inner = """
            <p><label class="switch"><input type="checkbox" data-share-position\(onDuty ? " checked" : "")\(duty ? "" : " data-no-duty")> \(h(ctx.t(.sharePosition)))</label></p>
            <p data-share-state aria-live="polite" data-text-on="\(h(ctx.t(.sharingOn)))" data-text-off="\(h(ctx.t(.sharingOff)))" data-text-denied="\(h(ctx.t(.sharingDenied)))" data-text-error="\(h(ctx.t(.sharingError)))" data-text-waiting="\(h(ctx.t(.sharingWaiting)))" class="hint">\(h(ctx.t(.sharingHint)))</p>
            """
        return boxed ? "<section class=\"duty\">\(inner)</section>" : inner
    }

    func duty(_ req: Request) async throws -> Response {
        let (_, me) = try WebAuth.require(req, .drive)
        let on = try AccountPages.form(req)["onDuty"] == "true"
        _ = try await Tracking(request: req).setDuty(on, by: me)
        return req.redirect(to: WebRoutes.driverDay(), redirectType: .normal)
    }

    func accept(_ req: Request) async throws -> Response { try await stepped(.accept, req) }
    func pickup(_ req: Request) async throws -> Response { try await stepped(.pickup, req) }
    func fail(_ req: Request) async throws -> Response { try await stepped(.fail, req) }

    /// A step's form: done, then the order's page says so.
    private func stepped(_ action: OrderAction, _ req: Request) async throws -> Response {
        let (_, me) = try WebAuth.require(req)
        let id: OrderID = try WebRoutes.id(req)
        let order = try await step(action, id, req, by: me)
        return req.redirect(to: WebRoutes.order(id, query: "done=" + order.status.rawValue), redirectType: .normal)
    }

    /// A step kept by the offline queue (`outbox.js`) while the phone had no network, sent now with
    /// the same fields as its form and its idempotency key: JSON answers, errors in the driver's
    /// language, so the queue can show what was refused and why.
    func queuedStep(_ req: Request) async throws -> Response {
        await IslandEndpoints.run(req, localized: true) {
            let me = try IslandEndpoints.principal(req)
            let id: OrderID = try WebRoutes.id(req)
            guard let action = req.parameters.get("action").flatMap(OrderAction.init(rawValue:)),
                  [.accept, .pickup, .deliver, .fail].contains(action) else { throw WaybillError.notFound }
            let order = try await step(action, id, req, by: me)
            return IslandEndpoints.json(["id": try order.storedID.uuidString, "reference": order.reference, "status": order.status.rawValue,
                                         "url": WebRoutes.order(id, query: "done=" + order.status.rawValue)])
        }
    }

    /// One step from its form's fields, for the page's form and the offline queue alike. The form's
    /// `idempotencyKey` (`StepForm`) makes sending it again harmless.
    private func step(_ action: OrderAction, _ id: OrderID, _ req: Request, by me: Principal) async throws -> Order {
        let orders = Orders(request: req)
        if action == .deliver { return try await deliverStep(id, req, by: me) }
        let form = try AccountPages.form(req)
        let key = form["idempotencyKey"].flatMap { $0.isEmpty ? nil : $0 }
        switch action {
        case .accept:
            return try await orders.accept(id, idempotencyKey: key, by: me)
        case .pickup:
            let order = try await orders.visibleOrder(id, to: me)
            var cash: Money?
            if order.paymentMethod == .cash {
                guard let cents = Money.minorUnits(fromText: form["cash"] ?? "", maximum: 999_999) else {
                    throw WaybillError.validation("cashCollected", "invalid")
                }
                cash = Money(cents, order.currency)
            }
            return try await orders.pickup(id, cashCollected: cash, scannedCode: form["scannedCode"].flatMap { $0.isEmpty ? nil : $0 },
                                           idempotencyKey: key, by: me)
        default:
            guard let reason = FailureReason(rawValue: form["reason"] ?? "") else { throw WaybillError.validation("reason", "invalid") }
            let note = (form["note"] ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
            return try await orders.fail(id, reason: reason, note: note.isEmpty ? nil : note, idempotencyKey: key, by: me)
        }
    }

    // MARK: Proof of delivery

    func proofPage(_ req: Request) async throws -> Response {
        let (ctx, me) = try WebAuth.require(req)
        let id: OrderID = try WebRoutes.id(req)
        let order = try await Orders(request: req).visibleOrder(id, to: me)
        return try ProofPage(order: order, values: ["recipientName": order.recipient.name,
                                                "scannedCode": req.query[String.self, at: "scan"].flatMap(HandOverPolicy.token(fromScan:)) ?? ""]).response(ctx)
    }

    struct ProofForm: Content {
        var signature: String?
        var recipientName: String?
        var code: String?
        var photo: File?
        var scannedCode: String?
        var idempotencyKey: String?
    }

    /// The proof's fields: the pad's PNG as a data URL, the name, the code, a photo.
    private func deliverStep(_ id: OrderID, _ req: Request, by me: Principal) async throws -> Order {
        let form = try req.content.decode(ProofForm.self)
        try requireStorableText([form.recipientName, form.code, form.idempotencyKey])
        let prefix = "data:image/png;base64,"
        guard let raw = form.signature, raw.hasPrefix(prefix), let png = Data(base64Encoded: String(raw.dropFirst(prefix.count))), !png.isEmpty else {
            throw WaybillError.validation("signature", "required")
        }
        let photo = form.photo.flatMap { $0.data.readableBytes > 0 ? Orders.Upload(bytes: Array($0.data.readableBytesView), field: "photo") : nil }
        return try await Orders(request: req).deliver(id, signature: .init(bytes: Array(png), field: "signature"), photo: photo,
                                                      recipientName: form.recipientName ?? "", code: form.code,
                                                      scannedCode: form.scannedCode.flatMap { $0.isEmpty ? nil : $0 },
                                                      idempotencyKey: form.idempotencyKey.flatMap { $0.isEmpty ? nil : $0 }, by: me)
    }

    func deliver(_ req: Request) async throws -> Response {
        let (ctx, me) = try WebAuth.require(req)
        let id: OrderID = try WebRoutes.id(req)
        let delivered: Order
        do {
            delivered = try await step(.deliver, id, req, by: me)
        } catch let error as WaybillError where error.status == .unprocessableEntity
            || [.invalidRecipientCode, .recipientCodeLocked, .noRecipientCode].contains(error.code) {
            // Shown on the form, in the driver's language, so they can try again or call dispatch.
            let order = try await Orders(request: req).visibleOrder(id, to: me)
            let form = try? req.content.decode(ProofForm.self)
            let values = ["recipientName": form?.recipientName ?? "", "code": form?.code ?? "", "scannedCode": form?.scannedCode ?? ""]
            let message = error.fields?["signature"] != nil ? ctx.t(.signatureMissing) : ctx.message(error)
            return try ProofPage(order: order, values: values, errors: error.fields ?? [:], message: message, status: error.status).response(ctx)
        }
        return req.redirect(to: WebRoutes.order(id, query: "done=" + delivered.status.rawValue), redirectType: .normal)
    }
}

// MARK: - Pages

/// The proof of delivery: signature pad, recipient's name, code (when the order asks for one), photo.
struct ProofPage: PageView {
    var order: Order
    var values: [String: String]
    var errors: [String: String] = [:]
    var message: String?
    var status: HTTPResponseStatus = .ok

    func page(_ ctx: WebContext) throws -> WebPage {
        let form = Form(ctx: ctx, values: values, errors: errors)
        let id = try order.storedID
        let code = order.requireRecipientCode
            ? form.field("code", ctx.t(.recipientCode), autocomplete: "off", hint: ctx.t(.recipientCodeHint), attributes: "inputmode=\"numeric\"") : ""
        return WebPage(title: ctx.t(.proofOfDelivery), body: """
            <h1>\(h(ctx.t(.proofOfDelivery)))</h1>
            <p>\(h(order.reference)) · \(ctx.address(order.dropoff))</p>
            \(form.summary(message: message, shown: ["recipientName", "code", "signature", "photo"]))
            <form method="post" action="\(WebRoutes.deliver(id))" enctype="multipart/form-data" class="stack" data-empty-signature="\(h(ctx.t(.signatureMissing)))"\(try StepForm.attributes(ctx, .deliver, order))>
            \(form.hidden())\(StepForm.key())
            \(values["scannedCode"].flatMap { $0.isEmpty ? nil : "<input type=\"hidden\" name=\"scannedCode\" value=\"\(h($0))\"><p class=\"alert ok\" role=\"status\">\(h(ctx.t(.labelScanned)))</p>" } ?? "")
            <div class="field\(errors["signature"] == nil ? "" : " invalid")"><p class="label" id="sig-label">\(h(ctx.t(.signHere)))</p>
            <canvas data-signature-pad width="600" height="240" aria-labelledby="sig-label" tabindex="0" class="signature"></canvas>
            <input type="hidden" name="signature" data-signature-output>
            <p class="error" data-signature-error aria-live="polite" hidden></p>
            <p><button type="button" data-signature-clear class="secondary">\(h(ctx.t(.clearSignature)))</button></p>
            <noscript><p class="alert error">\(h(ctx.t(.signatureNeedsJS)))</p></noscript></div>
            \(form.field("recipientName", ctx.t(.recipientName), autocomplete: "off"))
            \(code)
            <div class="field"><label for="f-photo">\(h(ctx.t(.deliveryPhoto))) <span class="optional">(\(h(ctx.t(.optional))))</span></label>
            <input id="f-photo" name="photo" type="file" accept="image/jpeg,image/png" capture="environment" data-preview>
            <img alt="" data-preview-for="f-photo" hidden class="preview"></div>
            <button type="submit" class="primary">\(h(ctx.t(.confirmDelivery)))</button>
            </form>
            <p><a href="\(WebRoutes.order(id))">\(h(ctx.t(.back)))</a></p>
            """, status: status, scripts: ["signature"])
    }
}


/// The driver's day: the deliveries to do in the order to do them, each with its one next step, and
/// those done today; duty and position sharing.
struct DriverDayPage: PageView {
    enum Step { case accept, pickUp, deliver }
    var todo: [(order: OrderRow, next: Step?)]
    var done: [OrderRow]
    var onDuty: Bool
    var plannedArrival: [OrderID: Int64] = [:]
    var slots: [OrderID: [SlotBookingView]] = [:]
    var now: Int64 = UnixTime.nowMillis

    static func load(for me: Principal, orders: Orders) async throws -> DriverDayPage {
        let day = try await orders.driverDay(for: me)
        return DriverDayPage(todo: day.todo.map { entry in
            // The card's one button: the assignee's next step, as the shipment's rules list it.
            let actions = entry.actions
            let next: Step? = actions.contains(.accept) ? .accept : actions.contains(.pickup) ? .pickUp : actions.contains(.deliver) ? .deliver : nil
            return (entry.order, next)
        }, done: day.done.map(\.order), onDuty: day.state?.onDuty ?? false, plannedArrival: day.plannedArrival, slots: day.slots)
    }

    func page(_ ctx: WebContext) -> WebPage {
        let form = Form(ctx: ctx)
        let cards = todo.enumerated().map { index, entry -> String in
            let order = entry.order
            let pickup = order.pickup, dropoff = order.dropoff
            let recipient = order.recipient
            let next = order.status.nextStop == .dropoff ? dropoff : pickup
            let cash = order.paymentStatus == .dueOnPickup
                ? "<p class=\"cash\">\(h(ctx.t(.cashToCollect, order.price.description)))</p>" : ""
            let buttons = switch entry.next {
            case .accept: "<form method=\"post\" action=\"\(WebRoutes.accept(order.id))\" class=\"inline\"\(StepForm.attributes(ctx, .accept, order))>\(form.hidden())\(StepForm.key())<button type=\"submit\" class=\"primary\">\(h(ctx.t(.accept)))</button></form>"
            case .pickUp: "<a class=\"button primary\" href=\"\(WebRoutes.order(order.id))\">\(h(ctx.t(.pickedUp)))…</a>"
            case .deliver: "<a class=\"button primary\" href=\"\(WebRoutes.deliver(order.id))\">\(h(ctx.t(.deliverProof)))</a>"
            case nil: ""
            }
            return """
                <li class="card">
                <p class="card-head"><span class="index">\(index + 1)</span> <a href="\(WebRoutes.order(order.id))"><strong>\(h(order.reference))</strong></a> \(ctx.statusBadge(order.status))\(order.service == .express ? " <span class=\"status express\">\(h(ctx.t(.express)))</span>" : "")</p>
                <p><span class="label">\(h(ctx.t(.pickup)))</span> \(ctx.address(pickup))</p>
                <p><span class="label">\(h(ctx.t(.dropoff)))</span> \(ctx.address(dropoff))</p>
                <p><span class="label">\(h(ctx.t(.recipient)))</span> \(h(recipient.name))\(recipient.phone.map { " · <a href=\"tel:\(h($0))\">\(h($0))</a>" } ?? "")</p>
                \(plannedArrival[order.id].map { "<p class=\"planned\" data-planned>\(h(ctx.t(.plannedAt, ctx.clock($0))))</p>" } ?? "")\(cash)
                \(TimeslotPages.windows(ctx, slots[order.id] ?? [], arrival: { kind in
                    // The plan's arrival is at the order's next stop: it speaks for that stop's slot only.
                    (kind == .pickup) == (order.status.nextStop != .dropoff) ? plannedArrival[order.id] : nil
                }, now: now))
                <p class="actions">\(WebMap.directionsLink(next, label: ctx.t(.directions)))\(buttons)</p>
                </li>
                """
        }.joined()
        let finished = done.map { order -> String in
            "<li><a href=\"\(WebRoutes.order(order.id))\">\(h(order.reference))</a> \(ctx.statusBadge(order.status)) \(ctx.time(order.updatedAt))</li>"
        }.joined()
        // Every booked timeslot of the day's work, in time order.
        let references = Dictionary(todo.map { ($0.order.id, $0.order.reference) }, uniquingKeysWith: { a, _ in a })
        let booked = slots.values.flatMap { $0 }.sorted { $0.slot.startsAt < $1.slot.startsAt }.map { b in
            "<li data-slot-booking=\"\(b.booking.kind.rawValue)\"><a href=\"\(WebRoutes.order(b.booking.orderID))\">\(h(references[b.booking.orderID] ?? ""))</a> · \(h(ctx.slotKind(b.booking.kind))) · \(h(ctx.slotWhen(b.slot, b.template)))</li>"
        }.joined()
        return WebPage(title: ctx.t(.today), body: """
            <h1>\(h(ctx.t(.today)))</h1>
            <section class="duty">
            <form method="post" action="\(WebRoutes.driverDuty())" class="inline">\(form.hidden())<input type="hidden" name="onDuty" value="\(onDuty ? "false" : "true")">
            <p>\(h(onDuty ? ctx.t(.youAreOnDuty) : ctx.t(.youAreOffDuty)))</p>
            <button type="submit" class="\(onDuty ? "secondary" : "primary")">\(h(onDuty ? ctx.t(.goOffDuty) : ctx.t(.goOnDuty)))</button></form>
            \(DriverPages.sharingToggle(ctx, onDuty: onDuty, boxed: false))
            </section>
            <div id="runs" data-live-refresh="status notification">
            \(booked.isEmpty ? "" : "<h2>\(h(ctx.t(.slotToday)))</h2><ol class=\"list\" id=\"day-slots\">\(booked)</ol>")
            <h2>\(h(ctx.t(.toDo)))</h2>
            \(cards.isEmpty ? "<p>\(h(ctx.t(.nothingToDo)))</p>" : "<ol class=\"cards\">\(cards)</ol>")
            \(finished.isEmpty ? "" : "<h2>\(h(ctx.t(.doneToday)))</h2><ul class=\"done\">\(finished)</ul>")
            </div>
            """, scripts: ["position"], liveTopics: [])
    }
}

