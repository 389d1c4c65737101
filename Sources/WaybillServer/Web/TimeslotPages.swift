import Fluent
import Foundation
import Vapor
import WaybillCore

extension WebRoutes {
    static let timeslots = WebPath("/timeslots")
    static let timeslotTemplates = WebPath("/timeslots/templates")
    static let timeslotTemplate = WebPath<SlotTemplateID>("/timeslots/templates/:id") { [$0.uuidString] }
    static let orderSlots = WebPath<OrderID>("/orders/:id/slots") { [$0.uuidString] }
    static let slotBookingAction = WebPath<(SlotBookingID, String)>("/slot-bookings/:id/:action") { [$0.0.uuidString, $0.1] }
    static let scan = WebPath("/scan")
}

extension Text {
    static let timeslots = Text("Timeslots", "Créneaux")
    static let timeslotsIntro = Text("Weekly templates make pickup and delivery slots on each date, in the zone’s own time.",
                                     "Des modèles hebdomadaires créent les créneaux d’enlèvement et de livraison de chaque date, à l’heure locale de la zone.")
    static let slotPickup = Text("Pickup", "Enlèvement")
    static let slotDelivery = Text("Delivery", "Livraison")
    static let slotDropOff = Text("Drop-off at a counter", "Dépôt au guichet")
    static let slotTemplates = Text("Weekly templates", "Modèles hebdomadaires")
    static let slotAddTemplate = Text("Add a template", "Ajouter un modèle")
    static let slotWeekday = Text("Day", "Jour")
    static let slotStart = Text("From (HH:MM)", "De (HH:MM)")
    static let slotEnd = Text("To (HH:MM)", "À (HH:MM)")
    static let slotCapacity = Text("Seats", "Places")
    static let slotZone = Text("Zone (postal-code prefix, empty for everywhere)", "Zone (début de NPA, vide pour partout)")
    static let slotApproval = Text("Bookings wait for approval", "Les réservations attendent une approbation")
    static let slotOff = Text("Switch off", "Désactiver")
    static let slotOn = Text("Switch on", "Activer")
    static let slotPending = Text("Waiting for approval", "En attente d’approbation")
    static let slotBookedList = Text("Booked visits", "Visites réservées")
    static let slotApprove = Text("Approve", "Approuver")
    static let slotDecline = Text("Decline", "Refuser")
    static let slotComplete = Text("Done", "Effectuée")
    static let slotFail = Text("Did not happen", "N’a pas eu lieu")
    static let slotCancel = Text("Cancel this timeslot", "Annuler ce créneau")
    static let slotNone = Text("Nothing here.", "Rien ici.")
    static let slotChoose = Text("Choose a timeslot", "Choisir un créneau")
    static let slotBook = Text("Book this timeslot", "Réserver ce créneau")
    static let slotYours = Text("your timeslot", "votre créneau")
    static let slotBooked = Text("Timeslot booked.", "Créneau réservé.")
    static let slotSeats = Text("%@ seats", "%@ places")
    static let slotAvailable = Text("available", "disponible")
    static let slotNearlyFull = Text("nearly full", "presque complet")
    static let slotFull = Text("full", "complet")
    static let slotUnavailable = Text("unavailable", "indisponible")
    static let slotStatusPending = Text("waiting for approval", "en attente d’approbation")
    static let slotStatusBooked = Text("booked", "réservé")
    static let slotStatusDeclined = Text("declined", "refusé")
    static let slotStatusCancelled = Text("cancelled", "annulé")
    static let slotStatusCompleted = Text("done", "effectué")
    static let slotStatusFailed = Text("did not happen", "n’a pas eu lieu")
    static let slotWindow = Text("%@ timeslot: %@", "Créneau %@ : %@")
    static let slotLate = Text("Will miss its timeslot", "Va manquer son créneau")
    static let slotToday = Text("Booked timeslots", "Créneaux réservés")
    static let scanLabel = Text("Scan a label", "Scanner une étiquette")
    static let scanIntro = Text("Point the camera at the parcel’s QR code, or type the code printed under it.",
                                "Visez le code QR du colis avec la caméra, ou saisissez le code imprimé dessous.")
    static let scanCode = Text("Label code or link", "Code ou lien de l’étiquette")
    static let scanFind = Text("Find the parcel", "Trouver le colis")
    static let scanCamera = Text("Use the camera", "Utiliser la caméra")
}

enum TimeslotCatalogue {
    static let all: [Text] = [
        .timeslots, .timeslotsIntro, .slotPickup, .slotDelivery, .slotDropOff, .slotTemplates, .slotAddTemplate, .slotWeekday, .slotStart, .slotEnd, .slotCapacity, .slotZone, .slotApproval, .slotOff, .slotOn, .slotPending, .slotBookedList, .slotApprove, .slotDecline, .slotComplete, .slotFail, .slotCancel, .slotNone, .slotChoose, .slotBook, .slotYours, .slotBooked, .slotSeats, .slotAvailable, .slotNearlyFull, .slotFull, .slotUnavailable, .slotStatusPending, .slotStatusBooked, .slotStatusDeclined, .slotStatusCancelled, .slotStatusCompleted, .slotStatusFailed, .slotWindow, .slotLate, .slotToday, .scanLabel, .scanIntro, .scanCode, .scanFind, .scanCamera,
    ]
}

extension WebContext {
    func slotKind(_ kind: SlotKind) -> String {
        switch kind {
        case .pickup: t(.slotPickup)
        case .delivery: t(.slotDelivery)
        case .dropOff: t(.slotDropOff)
        }
    }

    func availability(_ a: SlotAvailability) -> String {
        switch a {
        case .available: t(.slotAvailable)
        case .nearlyFull: t(.slotNearlyFull)
        case .full: t(.slotFull)
        case .unavailable: t(.slotUnavailable)
        }
    }

    func bookingStatus(_ s: SlotBookingStatus) -> String {
        switch s {
        case .pending: t(.slotStatusPending)
        case .booked: t(.slotStatusBooked)
        case .declined: t(.slotStatusDeclined)
        case .cancelled: t(.slotStatusCancelled)
        case .completed: t(.slotStatusCompleted)
        case .failed: t(.slotStatusFailed)
        }
    }

    func weekday(_ day: Int) -> String {
        let en = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
        let fr = ["lundi", "mardi", "mercredi", "jeudi", "vendredi", "samedi", "dimanche"]
        guard (1...7).contains(day) else { return String(day) }
        return lang == .fr ? fr[day - 1] : en[day - 1]
    }

    /// "Tue 1 Dec 10:00–12:00": a slot in its own zone's time.
    func slotWhen(_ slot: SlotRecord, _ template: SlotTemplateRecord) -> String {
        let day = LocalDate(slot.localDate).map { "\(weekday($0.weekday.rawValue)) \($0.description)" } ?? slot.localDate
        return "\(day) \(SlotTemplate.text(minute: template.startMinute))–\(SlotTemplate.text(minute: template.endMinute))"
    }
}

extension TimeslotPages {
    /// A card's timeslot lines: each live booking's window, marked when the visit will miss it
    /// (`SlotPolicy.timing` with the planned arrival at that stop).
    static func windows(_ ctx: WebContext, _ bookings: [SlotBookingView], arrival: (SlotKind) -> Int64?, now: Int64) -> String {
        bookings.map { b in
            let late = SlotPolicy.timing(arrival: arrival(b.booking.kind), slotEnd: b.slot.endsAt, now: now) == .late
            return "<p class=\"slot-window\" data-slot-window=\"\(b.booking.kind.rawValue)\"\(late ? " data-slot-late" : "")>\(h(ctx.t(.slotWindow, ctx.slotKind(b.booking.kind), ctx.slotWhen(b.slot, b.template))))\(late ? " <strong class=\"error\">" + h(ctx.t(.slotLate)) + "</strong>" : "")</p>"
        }.joined()
    }
}

/// Timeslots in the web app: a shipment's page lists its bookings and offers the week's slots to
/// whoever may book them; dispatch's *Timeslots* page sets the weekly templates and answers the
/// bookings; the *Scan* page finds a parcel by its label. The services are `Timeslots` and
/// `Handovers`; the rules `SlotPolicy`, `SlotBookingMachine` and `HandOverPolicy`.
struct TimeslotPages {
    func register(_ routes: any RoutesBuilder) {
        routes.get(WebRoutes.timeslots, use: dispatchPage)
        routes.post(WebRoutes.timeslotTemplates, use: addTemplate)
        routes.post(WebRoutes.timeslotTemplate, use: toggleTemplate)
        routes.post(WebRoutes.orderSlots, use: book)
        routes.post(WebRoutes.slotBookingAction, use: decide)
        routes.get(WebRoutes.scan, use: scanPage)
        routes.post(WebRoutes.scan, use: scan)
    }

    // MARK: a shipment's timeslots

    /// What a shipment's page shows of its timeslots: its bookings, and the slots the person may book.
    struct Section: Sendable {
        var bookings: [SlotBookingView] = []
        var choices: [(kind: SlotKind, slots: [SlotView])] = []

        /// `legs`: the shipment's, read once for its page.
        static func load(_ order: some OrderColumns, legs: Timeslots.LegKinds, capacities: Set<OrderCapacity>, _ req: Request, for me: Principal) async throws -> Section {
            let timeslots = Timeslots(request: req)
            var section = Section()
            for kind in [SlotKind.dropOff, .pickup, .delivery] {
                guard SlotPolicy.mayBook(kind, as: capacities, status: order.status, legKind: legs.for(kind)) else { continue }
                let slots: [SlotView]
                if kind == .dropOff {
                    // The drop-off counter's own slots.
                    guard let counter = legs.dropOffCounter else { continue }
                    slots = try await timeslots.slots(kind: kind, postalCode: nil, counter: counter, from: nil, days: 7, for: me)
                } else {
                    let place = kind == .pickup ? order.pickup : order.dropoff
                    guard (1...16).contains(place.postalCode.count) else { continue }
                    slots = try await timeslots.slots(kind: kind, postalCode: place.postalCode, from: nil, days: 7, for: me)
                }
                if !slots.isEmpty { section.choices.append((kind, slots)) }
            }
            section.bookings = try await timeslots.bookings(of: order.orderID, for: me)
            return section
        }

        func render(_ ctx: WebContext, order id: OrderID, capacities: Set<OrderCapacity>, status: OrderStatus, notice: String?) throws -> String {
            guard !bookings.isEmpty || !choices.isEmpty else { return "" }
            let csrf = "<input type=\"hidden\" name=\"_csrf\" value=\"\(h(ctx.csrf))\">"
            let list = try bookings.reversed().map { b -> String in
                let bookingID = try b.booking.storedID
                let mayCancel = b.booking.status.takesSeat && SlotPolicy.mayBook(b.booking.kind, as: capacities, status: status,
                                                                                 legKind: SlotPolicy.legKind(of: b.booking.kind))
                let cancel = mayCancel ? """
                     <form method="post" action="\(WebRoutes.slotBookingAction((bookingID, "cancel")))" class="inline">\(csrf)<button type="submit" class="link">\(h(ctx.t(.slotCancel)))</button></form>
                    """ : ""
                // A drop-off at a counter: its customer may write to the counter's staff about it.
                let write = b.booking.kind == .dropOff && capacities.contains(.owner)
                    ? ConversationPages.bookingButton(ctx, booking: bookingID, label: .writeToCounter) : ""
                return "<li data-booking=\"\(b.booking.status.rawValue)\">\(h(ctx.slotKind(b.booking.kind))): \(h(ctx.slotWhen(b.slot, b.template))) · <strong>\(h(ctx.bookingStatus(b.booking.status)))</strong>\(b.booking.reason.map { " (" + h($0) + ")" } ?? "")\(cancel)\(write)</li>"
            }.joined()
            let forms = try choices.map { kind, slots -> String in
                let mine = Set(bookings.filter { $0.booking.status.takesSeat }.map(\.booking.slotID))
                let options = try slots.map { v -> String in
                    let slotID = try v.slot.storedID
                    let chosen = mine.contains(slotID)
                    let usable = !chosen && v.availability != .full && v.availability != .unavailable
                    let state = chosen ? ctx.t(.slotYours) : ctx.availability(v.availability)
                    return "<label class=\"choice\"><input type=\"radio\" name=\"slotId\" value=\"\(slotID.uuidString)\"\(usable ? "" : " disabled")> \(h(ctx.slotWhen(v.slot, v.template))) · <span class=\"slot-\(chosen ? "yours" : v.availability.rawValue)\">\(h(state))</span></label>"
                }.joined()
                return """
                    <form method="post" action="\(WebRoutes.orderSlots(id))" class="stack" data-slot-kind="\(kind.rawValue)">\(csrf)
                    <fieldset class="field"><legend>\(h(ctx.t(.slotChoose))): \(h(ctx.slotKind(kind)))</legend>\(options)</fieldset>
                    <button type="submit" class="secondary">\(h(ctx.t(.slotBook)))</button></form>
                    """
            }.joined()
            return """
                <section class="timeslots" id="timeslots"><h2>\(h(ctx.t(.timeslots)))</h2>
                \(notice.map { "<div class=\"alert \($0 == "booked" ? "ok" : "error")\" role=\"status\">\(h($0 == "booked" ? ctx.t(.slotBooked) : (ErrorCode(rawValue: $0) ?? .conflict).message(french: ctx.lang == .fr)))</div>" } ?? "")
                \(list.isEmpty ? "" : "<ul class=\"list\">\(list)</ul>")
                \(forms)
                </section>
                """
        }
    }

    func book(_ req: Request) async throws -> Response {
        let (_, me) = try WebAuth.require(req)
        let id: OrderID = try WebRoutes.id(req)
        guard let raw = try AccountPages.form(req)["slotId"], let slot = SlotID(uuidString: raw) else {
            return req.redirect(to: WebRoutes.order(id, query: "slot=validation_failed") + "#timeslots", redirectType: .normal)
        }
        do {
            _ = try await Timeslots(request: req).book(order: id, slot: slot, by: me)
            return req.redirect(to: WebRoutes.order(id, query: "slot=booked") + "#timeslots", redirectType: .normal)
        } catch let error as WaybillError where error.status == .conflict || error.status == .unprocessableEntity {
            return req.redirect(to: WebRoutes.order(id, query: "slot=" + error.code.rawValue) + "#timeslots", redirectType: .normal)
        }
    }

    /// Approve, decline, complete, fail (staff, from the Timeslots page) or cancel (from the shipment's page).
    func decide(_ req: Request) async throws -> Response {
        let (_, me) = try WebAuth.require(req)
        let id: SlotBookingID = try WebRoutes.id(req)
        guard let action = req.parameters.get("action").flatMap(SlotBookingAction.init(rawValue:)) else { throw WaybillError.notFound }
        let reason = try AccountPages.form(req)["reason"]
        let view = try await Timeslots(request: req).decide(id, action, reason: reason, by: me)
        if action == .cancel, !SlotPolicy.isStaff(me.caller) {
            return req.redirect(to: WebRoutes.order(view.booking.orderID) + "#timeslots", redirectType: .normal)
        }
        return req.redirect(to: WebRoutes.timeslots(), redirectType: .normal)
    }

    // MARK: dispatch

    func dispatchPage(_ req: Request) async throws -> Response {
        let (ctx, me) = try WebAuth.require(req, .dispatch)
        let timeslots = Timeslots(request: req)
        return try DispatchTimeslotsPage(templates: try await timeslots.templates(by: me),
                                     counters: try await Counters(request: req).active(by: me),
                                     pending: try await timeslots.bookings(status: .pending, date: nil, by: me),
                                     booked: try await timeslots.bookings(status: .booked, date: nil, by: me)).response(ctx)
    }


    func addTemplate(_ req: Request) async throws -> Response {
        let (ctx, me) = try WebAuth.require(req, .dispatch)
        let form = try AccountPages.form(req)
        var errors = FieldErrors()
        let kind = SlotKind(rawValue: form["kind"] ?? "")
        let weekday = Int(form["weekday"] ?? "").flatMap(Weekday.init(rawValue:))
        let start = SlotTemplate.minute(form["start"] ?? ""), end = SlotTemplate.minute(form["end"] ?? "")
        let capacity = Int(form["capacity"] ?? "")
        if kind == nil { errors.add("kind", "invalid") }
        if weekday == nil { errors.add("weekday", "invalid") }
        if start == nil { errors.add("start", "invalid") }
        if end == nil { errors.add("end", "invalid") }
        if capacity == nil { errors.add("capacity", "invalid") }
        let timeslots = Timeslots(request: req)
        do {
            guard errors.isEmpty, let kind, let weekday, let start, let end, let capacity else { throw WaybillError.validation(errors) }
            _ = try await timeslots.createTemplate(SlotTemplate(kind: kind, weekday: weekday, startMinute: start, endMinute: end, capacity: capacity,
                                                                requiresApproval: form["requiresApproval"] == "on"),
                                                   zone: form["zone"] ?? "", counter: (form["counterId"]).flatMap(UUID.init(uuidString:)).map(CounterID.init(rawValue:)), by: me)
            return req.redirect(to: WebRoutes.timeslots(), redirectType: .normal)
        } catch let error as WaybillError where error.status == .unprocessableEntity {
            var page = DispatchTimeslotsPage(templates: try await timeslots.templates(by: me),
                                             counters: try await Counters(request: req).active(by: me),
                                             pending: try await timeslots.bookings(status: .pending, date: nil, by: me),
                                             booked: try await timeslots.bookings(status: .booked, date: nil, by: me))
            page.values = form
            page.errors = error.fields ?? [:]
            page.message = ctx.message(error)
            page.status = .unprocessableEntity
            return try page.response(ctx)
        }
    }

    func toggleTemplate(_ req: Request) async throws -> Response {
        let (_, me) = try WebAuth.require(req, .dispatch)
        let id: SlotTemplateID = try WebRoutes.id(req)
        _ = try await Timeslots(request: req).updateTemplate(id, capacity: nil, requiresApproval: nil, active: try AccountPages.form(req)["active"] == "on", by: me)
        return req.redirect(to: WebRoutes.timeslots(), redirectType: .normal)
    }

    // MARK: scanning

    func scanPage(_ req: Request) async throws -> Response {
        let (ctx, _) = try WebAuth.require(req)
        return try ScanPage().response(ctx)
    }

    /// The code the camera (or the person) read: the parcel's page with the scan carried along.
    func scan(_ req: Request) async throws -> Response {
        let (ctx, me) = try WebAuth.require(req)
        let code = try AccountPages.form(req)["code"] ?? ""
        do {
            let (order, _) = try await Handovers(request: req).lookup(code, by: me)
            let token = HandOverPolicy.token(fromScan: code) ?? ""
            return req.redirect(to: WebRoutes.order(try order.storedID, query: "scan=" + token), redirectType: .normal)
        } catch let error as WaybillError where error.status == .notFound {
            return try ScanPage(error: ctx.t(.handoverUnknown), code: code, status: .notFound).response(ctx)
        }
    }
}

struct DispatchTimeslotsPage: PageView {
    var templates: [SlotTemplateRecord]
    /// Active counters, for drop-off templates.
    var counters: [CounterRecord] = []
    var pending: [SlotBookingView]
    var booked: [SlotBookingView]
    var values: [String: String] = [:]
    var errors: [String: String] = [:]
    var message: String?
    var status: HTTPResponseStatus = .ok

    func page(_ ctx: WebContext) throws -> WebPage {
        let csrf = "<input type=\"hidden\" name=\"_csrf\" value=\"\(h(ctx.csrf))\">"
        let rows = try templates.map { t -> String in
            let id = try t.storedID
            return """
            <tr data-template="\(id.uuidString)"><td>\(h(ctx.slotKind(t.kind)))</td><td>\(h(ctx.weekday(t.weekday)))</td>
            <td>\(SlotTemplate.text(minute: t.startMinute))–\(SlotTemplate.text(minute: t.endMinute))</td><td>\(t.capacity)</td>
            <td>\(h(t.zone.isEmpty ? "*" : t.zone))</td><td>\(t.requiresApproval ? "✓" : "")</td>
            <td><form method="post" action="\(WebRoutes.timeslotTemplate(id))" class="inline">\(csrf)<input type="hidden" name="active" value="\(t.active ? "off" : "on")">
            <button type="submit" class="link">\(h(ctx.t(t.active ? .slotOff : .slotOn)))</button></form></td></tr>
            """
        }.joined()
        func item(_ b: SlotBookingView, actions: [(SlotBookingAction, Text, Bool)]) throws -> String {
            let bookingID = try b.booking.storedID
            let forms = actions.map { action, label, needsReason in
                """
                <form method="post" action="\(WebRoutes.slotBookingAction((bookingID, action.rawValue)))" class="inline">\(csrf)\(needsReason ? "<input name=\"reason\" required maxlength=\"500\" aria-label=\"\(h(ctx.t(.reason)))\" placeholder=\"\(h(ctx.t(.reason)))\">" : "")
                <button type="submit" class="\(needsReason ? "secondary" : "primary")">\(h(ctx.t(label)))</button></form>
                """
            }.joined(separator: " ")
            return "<li data-booking=\"\(bookingID.uuidString)\"><a href=\"\(WebRoutes.order(b.booking.orderID))\">\(h(b.reference ?? ""))</a> · \(h(ctx.slotKind(b.booking.kind))) · \(h(ctx.slotWhen(b.slot, b.template))) \(forms)</li>"
        }
        let waiting = try pending.map { try item($0, actions: [(.approve, .slotApprove, false), (.decline, .slotDecline, true)]) }.joined()
        let visits = try booked.map { try item($0, actions: [(.complete, .slotComplete, false), (.fail, .slotFail, true)]) }.joined()
        let form = Form(ctx: ctx, values: values, errors: errors)
        let counterOptions = try [("", "—")] + counters.map { (try $0.storedID.uuidString, $0.name) }
        return WebPage(title: ctx.t(.timeslots), body: """
            <h1>\(h(ctx.t(.timeslots)))</h1>
            <p class="hint">\(h(ctx.t(.timeslotsIntro)))</p>
            <h2>\(h(ctx.t(.slotPending)))</h2>
            \(waiting.isEmpty ? "<p>\(h(ctx.t(.slotNone)))</p>" : "<ul class=\"list\" id=\"slot-pending\">\(waiting)</ul>")
            <h2>\(h(ctx.t(.slotBookedList)))</h2>
            \(visits.isEmpty ? "<p>\(h(ctx.t(.slotNone)))</p>" : "<ul class=\"list\" id=\"slot-booked\">\(visits)</ul>")
            <h2>\(h(ctx.t(.slotTemplates)))</h2>
            \(rows.isEmpty ? "<p>\(h(ctx.t(.slotNone)))</p>" : "<div class=\"table-wrap\"><table class=\"table\" id=\"slot-templates\"><tbody>\(rows)</tbody></table></div>")
            <h3>\(h(ctx.t(.slotAddTemplate)))</h3>
            <form method="post" action="\(WebRoutes.timeslotTemplates())" class="stack" id="slot-template-form">\(csrf)
            \(form.summary(message: message, shown: ["kind", "counterId", "weekday", "start", "end", "capacity", "zone"]))
            \(form.select("kind", ctx.t(.timeslots), options: [("delivery", ctx.t(.slotDelivery)), ("pickup", ctx.t(.slotPickup))]
                + (counters.isEmpty ? [] : [("drop_off", ctx.t(.slotDropOff))])))
            \(counters.isEmpty ? "" : form.select("counterId", ctx.t(.counterWhich), options: counterOptions, required: false))
            \(form.select("weekday", ctx.t(.slotWeekday), options: (1...7).map { (String($0), ctx.weekday($0)) }))
            \(form.field("start", ctx.t(.slotStart), attributes: "pattern=\"[0-2][0-9]:[0-5][0-9]\" placeholder=\"08:00\""))
            \(form.field("end", ctx.t(.slotEnd), attributes: "pattern=\"[0-2][0-9]:[0-5][0-9]\" placeholder=\"10:00\""))
            \(form.field("capacity", ctx.t(.slotCapacity), type: "number", attributes: "min=\"1\" max=\"1000\""))
            \(form.field("zone", ctx.t(.slotZone), required: false))
            \(form.checkbox("requiresApproval", ctx.t(.slotApproval)))
            <button type="submit" class="primary">\(h(ctx.t(.slotAddTemplate)))</button></form>
            """, status: status)
    }
}

struct ScanPage: PageView {
    var error: String?
    var code = ""
    var status: HTTPResponseStatus = .ok

    func page(_ ctx: WebContext) -> WebPage {
        WebPage(title: ctx.t(.scanLabel), body: """
            <h1>\(h(ctx.t(.scanLabel)))</h1>
            <p class="hint">\(h(ctx.t(.scanIntro)))</p>
            \(error.map { "<div class=\"alert error\" role=\"alert\">\(h($0))</div>" } ?? "")
            <div data-scanner hidden><video data-scanner-video playsinline muted class="scanner" hidden></video>
            <p><button type="button" class="secondary" data-scanner-start>\(h(ctx.t(.scanCamera)))</button></p></div>
            <form method="post" action="\(WebRoutes.scan())" class="stack" id="scan-form"><input type="hidden" name="_csrf" value="\(h(ctx.csrf))">
            <div class="field"><label for="scan-code">\(h(ctx.t(.scanCode)))</label>
            <input id="scan-code" name="code" required maxlength="300" autocomplete="off" autocapitalize="off" value="\(h(code))"></div>
            <button type="submit" class="primary">\(h(ctx.t(.scanFind)))</button></form>
            """, status: status, scripts: ["scan"])
    }
}
