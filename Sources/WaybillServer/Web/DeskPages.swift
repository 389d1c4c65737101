import Foundation
import Vapor
import WaybillCore

// A counter's desk in the web app (issue "Counters, timeslots and QR hand-overs", item 1): the day
// (booked drop-offs in time order, parcels here, parcels expected), checking a parcel in by scanning
// its label or typing its reference (with a photo), and handing one to its receiver against their
// code. The rules are `CounterDesks` and WaybillCore's `CounterDesk`; these pages only render.

extension WebRoutes {
    static let desk = WebPath("/desk")
    static let deskCounter = WebPath<CounterID>("/desk/:id") { [$0.uuidString] }
    static let deskCheckIn = WebPath<CounterID>("/desk/:id/check-in") { [$0.uuidString] }
    static let deskHandOut = WebPath<CounterID>("/desk/:id/hand-out") { [$0.uuidString] }
}

extension Text {
    static let desk = Text("Counter", "Guichet")
    static let deskNone = Text("You are not staff of any counter. An administrator names counter staff.",
                               "Vous n’êtes membre du personnel d’aucun guichet. Un administrateur le désigne.")
    static let deskBooked = Text("Drop-offs booked on %@", "Dépôts réservés le %@")
    static let deskHere = Text("Here now", "Au guichet")
    static let deskExpected = Text("Expected", "Attendus")
    static let deskCheckIn = Text("Check a parcel in", "Enregistrer un colis")
    static let deskCheckInHint = Text("Scan the label with the camera, or type the code under the QR code or the reference (WB-…).",
                                      "Scannez l’étiquette avec la caméra, ou tapez le code sous le QR code ou la référence (WB-…).")
    static let deskReference = Text("Reference (WB-…)", "Référence (WB-…)")
    static let deskPhoto = Text("Photo of the parcel", "Photo du colis")
    static let deskCheckInButton = Text("Check in", "Enregistrer")
    static let deskCheckedIn = Text("%@ is checked in.", "%@ est enregistré.")
    static let deskHandOut = Text("Hand a parcel to its receiver", "Remettre un colis à son destinataire")
    static let deskReceiverCode = Text("The receiver's code", "Le code du destinataire")
    static let deskCollectedBy = Text("Collected by (name)", "Retiré par (nom)")
    static let deskHandOutButton = Text("Hand over", "Remettre")
    static let deskHandedOut = Text("%@ was handed to its receiver.", "%@ a été remis à son destinataire.")
    static let deskNothing = Text("Nothing.", "Rien.")
    static let deskPreviousDay = Text("Previous day", "Jour précédent")
    static let writeToCounter = Text("Write to the counter", "Écrire au guichet")
    static let writeToCustomer = Text("Write to the customer", "Écrire au client")
    static let deskNextDay = Text("Next day", "Jour suivant")
    static let stageDropOffExpected = Text("the sender brings it", "l’expéditeur l’apporte")
    static let stageArriving = Text("a driver brings it", "un chauffeur l’apporte")
    static let stageWaitingForDriver = Text("waits for its driver", "attend son chauffeur")
    static let stageWaitingForReceiver = Text("waits for its receiver", "attend son destinataire")
    static let stageDone = Text("gone", "parti")
    static let dropAtCounter = Text("I will drop it at a counter", "Je le dépose à un guichet")
    static let counterWhich = Text("Counter", "Guichet")
    static let dropoffWhere = Text("Where does it go?", "Où va-t-il ?")
    static let deliverToAddress = Text("To an address", "À une adresse")
    static let collectAtCounter = Text("The receiver collects it at a counter", "Le destinataire le retire à un guichet")
    static let atCounter = Text("At the counter %@", "Au guichet %@")
    static let counterRoute = Text("Counters", "Guichets")
    static let counterDropHint = Text("Bring the parcel with its label to %@ (%@).", "Apportez le colis avec son étiquette au guichet %@ (%@).")
    static let counterCollectHint = Text("The receiver collects it at %@ (%@) with the code we mail them.",
                                         "Le destinataire le retire au guichet %@ (%@) avec le code que nous lui envoyons.")
    static let counterHandsIn = Text("Take the parcel to the counter %@: its staff check it in.", "Apportez le colis au guichet %@ : son personnel l’enregistre.")
}

enum DeskCatalogue {
    static let all: [Text] = [
        .desk, .deskNone, .deskBooked, .deskHere, .deskExpected, .deskCheckIn, .deskCheckInHint, .deskReference, .deskPhoto, .deskCheckInButton,
        .deskCheckedIn, .deskHandOut, .deskReceiverCode, .deskCollectedBy, .deskHandOutButton, .deskHandedOut, .deskNothing, .deskPreviousDay, .deskNextDay, .writeToCounter, .writeToCustomer,
        .stageDropOffExpected, .stageArriving, .stageWaitingForDriver, .stageWaitingForReceiver, .stageDone,
        .dropAtCounter, .counterWhich, .dropoffWhere, .deliverToAddress, .collectAtCounter, .atCounter, .counterRoute,
        .counterDropHint, .counterCollectHint, .counterHandsIn,
    ]
}

extension WebContext {
    func stage(_ stage: CounterParcel.Stage) -> String {
        switch stage {
        case .dropOffExpected: t(.stageDropOffExpected)
        case .arriving: t(.stageArriving)
        case .waitingForDriver: t(.stageWaitingForDriver)
        case .waitingForReceiver: t(.stageWaitingForReceiver)
        case .done: t(.stageDone)
        }
    }
}

struct DeskPages {
    func register(_ routes: any RoutesBuilder) {
        routes.get(WebRoutes.desk, use: desks)
        routes.get(WebRoutes.deskCounter, use: day)
        routes.post(WebRoutes.deskCheckIn, use: checkIn)
        routes.post(WebRoutes.deskHandOut, use: handOut)
    }

    struct CheckInForm: Content {
        var code: String?
        var photo: File?
    }

    /// The counters the person works at: straight to the day when there is one.
    func desks(_ req: Request) async throws -> Response {
        let (ctx, me) = try WebAuth.require(req, .receiveAtCounter)
        let mine = try await CounterDesks(request: req).myCounters(me)
        if mine.count == 1, let id = mine.first?.id { return req.redirect(to: WebRoutes.deskCounter(id), redirectType: .normal) }
        let items = try mine.map { "<li><a href=\"\(WebRoutes.deskCounter(try $0.storedID))\">\(h($0.name))</a> · \(ctx.address($0.address))</li>" }.joined()
        return WebPage(title: ctx.t(.desk), body: """
            <h1>\(h(ctx.t(.desk)))</h1>
            \(items.isEmpty ? "<p>\(h(ctx.t(.deskNone)))</p>" : "<ul class=\"list\">\(items)</ul>")
            """).render(ctx)
    }

    func day(_ req: Request) async throws -> Response {
        let (ctx, me) = try WebAuth.require(req)
        let id: CounterID = try WebRoutes.id(req)
        let date = req.query[String.self, at: "date"].flatMap(LocalDate.init)
        let day = try await CounterDesks(request: req).day(id, date: date, for: me)
        var notice: String?
        if let done = req.query[String.self, at: "in"] { notice = ctx.t(.deskCheckedIn, done) }
        if let done = req.query[String.self, at: "out"] { notice = ctx.t(.deskHandedOut, done) }
        // A label a phone's camera opened (`/h/…`): in both forms, ready to send.
        let scanned = req.query[String.self, at: "code"].flatMap(HandOverPolicy.token(fromScan:))
        return try DeskPage(day: day, notice: notice, values: scanned.map { ["code": $0, "outCode": $0] } ?? [:]).response(ctx)
    }

    func checkIn(_ req: Request) async throws -> Response {
        let (ctx, me) = try WebAuth.require(req)
        let id: CounterID = try WebRoutes.id(req)
        let form = try req.content.decode(CheckInForm.self)
        try requireStorableText([form.code ?? ""])
        let desks = CounterDesks(request: req)
        let photo = form.photo.flatMap { $0.data.readableBytes > 0 ? Orders.Upload(bytes: Array($0.data.readableBytesView), field: "photo") : nil }
        let code = form.code?.trimmingCharacters(in: .whitespacesAndNewlines)
        // The field takes both: what a scanner read, or a reference typed by hand.
        let entry = LabelEntry(code ?? "")
        do {
            let parcel = try await desks.checkIn(at: id, code: entry.scanned, reference: entry.typed, photo: photo, by: me)
            return req.redirect(to: WebRoutes.deskCounter(id, query: "in=" + parcel.order.reference), redirectType: .normal)
        } catch let error as WaybillError where error.status != .forbidden && error.status != .tooManyRequests {
            let day = try await desks.day(id, date: nil, for: me)
            return try DeskPage(day: day, error: ctx.message(error), values: ["code": code ?? ""], status: error.status).response(ctx)
        }
    }

    func handOut(_ req: Request) async throws -> Response {
        let (ctx, me) = try WebAuth.require(req)
        let id: CounterID = try WebRoutes.id(req)
        let form = try AccountPages.form(req)
        let desks = CounterDesks(request: req)
        let entry = LabelEntry(form["outCode"] ?? "")
        do {
            let parcel = try await desks.handOut(at: id, code: entry.scanned, reference: entry.typed,
                                                 receiverCode: form["receiverCode"] ?? "", collectedBy: form["collectedBy"] ?? "", by: me)
            return req.redirect(to: WebRoutes.deskCounter(id, query: "out=" + parcel.order.reference), redirectType: .normal)
        } catch let error as WaybillError where error.status != .forbidden && error.status != .tooManyRequests {
            let day = try await desks.day(id, date: nil, for: me)
            var values = form
            values["receiverCode"] = nil
            return try DeskPage(day: day, error: ctx.message(error), values: values, status: error.status).response(ctx)
        }
    }
}

struct DeskPage: PageView {
    var day: CounterDay
    var notice: String?
    var error: String?
    var values: [String: String] = [:]
    var status: HTTPResponseStatus = .ok

    func page(_ ctx: WebContext) throws -> WebPage {
        let csrf = "<input type=\"hidden\" name=\"_csrf\" value=\"\(h(ctx.csrf))\">"
        func list(_ parcels: [CounterParcel], id: String) -> String {
            guard !parcels.isEmpty else { return "<p id=\"\(id)\">\(h(ctx.t(.deskNothing)))</p>" }
            let items = parcels.map { p -> String in
                let slot = p.slot.map { " · " + ctx.clock($0.start) + "–" + ctx.clock($0.end) } ?? ""
                let write = p.bookingID.map { " " + ConversationPages.bookingButton(ctx, booking: $0, label: .writeToCustomer) } ?? ""
                return "<li data-parcel=\"\(h(p.order.reference))\" data-stage=\"\(p.stage.rawValue)\"><strong>\(h(p.order.reference))</strong>\(slot) · \(h(p.order.recipient.name)) · \(h(ctx.stage(p.stage)))\(write)</li>"
            }.joined()
            return "<ul class=\"list\" id=\"\(id)\">\(items)</ul>"
        }
        let c = day.counter, counterID = try c.storedID
        // The desk's forms are its staff's; admins and dispatch look at the day.
        let checkIn = """
            <section><h2>\(h(ctx.t(.deskCheckIn)))</h2>
            <p class="hint">\(h(ctx.t(.deskCheckInHint)))</p>
            <div data-scanner hidden><video data-scanner-video playsinline muted class="scanner" hidden></video>
            <p><button type="button" class="secondary" data-scanner-start>\(h(ctx.t(.scanCamera)))</button></p></div>
            <form method="post" action="\(WebRoutes.deskCheckIn(counterID))" enctype="multipart/form-data" class="stack" id="scan-form">\(csrf)
            <div class="field"><label for="scan-code">\(h(ctx.t(.scanCode)))</label>
            <input id="scan-code" name="code" required maxlength="300" autocomplete="off" autocapitalize="off" value="\(h(values["code"]))"></div>
            <div class="field"><label for="desk-photo">\(h(ctx.t(.deskPhoto))) <span class="optional">(\(h(ctx.t(.optional))))</span></label>
            <input id="desk-photo" name="photo" type="file" accept="image/jpeg,image/png" capture="environment"></div>
            <button type="submit" class="primary">\(h(ctx.t(.deskCheckInButton)))</button></form></section>
            """
        let handOut = """
            <section><h2>\(h(ctx.t(.deskHandOut)))</h2>
            <form method="post" action="\(WebRoutes.deskHandOut(counterID))" class="stack" id="hand-out-form">\(csrf)
            <div class="field"><label for="out-code">\(h(ctx.t(.scanCode)))</label>
            <input id="out-code" name="outCode" required maxlength="300" autocomplete="off" autocapitalize="off" value="\(h(values["outCode"]))"></div>
            <div class="field"><label for="out-receiver-code">\(h(ctx.t(.deskReceiverCode)))</label>
            <input id="out-receiver-code" name="receiverCode" required maxlength="20" inputmode="numeric" autocomplete="off"></div>
            <div class="field"><label for="out-name">\(h(ctx.t(.deskCollectedBy)))</label>
            <input id="out-name" name="collectedBy" required maxlength="200" autocomplete="off" value="\(h(values["collectedBy"]))"></div>
            <button type="submit" class="primary">\(h(ctx.t(.deskHandOutButton)))</button></form></section>
            """
        return WebPage(title: "\(ctx.t(.desk)) · \(c.name)", body: """
            <h1>\(h(c.name))</h1>
            <p>\(ctx.address(c.address))</p>
            \(notice.map { "<div class=\"alert ok\" role=\"status\">\(h($0))</div>" } ?? "")
            \(error.map { "<div class=\"alert error\" role=\"alert\">\(h($0))</div>" } ?? "")
            \(day.atDesk ? checkIn : "")
            <section><h2>\(h(ctx.t(.deskBooked, day.date.description)))</h2>
            <p class="pager">\(day.date.adding(days: -1).map { "<a rel=\"prev\" href=\"\(WebRoutes.deskCounter(counterID, query: "date=\($0)"))\">← \(h(ctx.t(.deskPreviousDay)))</a>" } ?? "")
            \(day.date.adding(days: 1).map { "<a rel=\"next\" href=\"\(WebRoutes.deskCounter(counterID, query: "date=\($0)"))\">\(h(ctx.t(.deskNextDay))) →</a>" } ?? "")</p>
            \(list(day.booked, id: "desk-booked"))</section>
            <section><h2>\(h(ctx.t(.deskHere)))</h2>\(list(day.here, id: "desk-here"))</section>
            <section><h2>\(h(ctx.t(.deskExpected)))</h2>\(list(day.expected, id: "desk-expected"))</section>
            \(day.atDesk ? handOut : "")
            """, status: status, scripts: ["scan"])
    }
}
