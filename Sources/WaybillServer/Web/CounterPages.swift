import Foundation
import Vapor
import WaybillCore

extension WebRoutes {
    static let counters = WebPath("/counters")
    static let counterStaff = WebPath<CounterID>("/counters/:id/staff") { [$0.uuidString] }
    static let counterStaffRemove = WebPath<(CounterID, UserID)>("/counters/:id/staff/:user/remove") { [$0.0.uuidString, $0.1.uuidString] }
    static let counterActive = WebPath<CounterID>("/counters/:id/active") { [$0.uuidString] }
}

extension Text {
    static let counters = Text("Counters", "Guichets")
    static let countersIntro = Text("Reception counters where people drop parcels off and collect them, with their opening hours and staff.",
                                    "Les guichets où l’on dépose et retire des colis, avec leurs horaires et leur personnel.")
    static let counterAdd = Text("Add a counter", "Ajouter un guichet")
    static let counterName = Text("Name", "Nom")
    static let counterStreet = Text("Street and number", "Rue et numéro")
    static let counterPostalCode = Text("Postal code", "NPA")
    static let counterCity = Text("City", "Localité")
    static let counterLatitude = Text("Latitude", "Latitude")
    static let counterLongitude = Text("Longitude", "Longitude")
    static let counterTimeZone = Text("Time zone", "Fuseau horaire")
    static let counterHoursHint = Text("Each day as 08:00-12:00, 13:30-18:00; empty for closed.", "Chaque jour comme 08:00-12:00, 13:30-18:00 ; vide si fermé.")
    static let counterHolidays = Text("Holidays (dates, comma-separated)", "Jours fériés (dates, séparées par des virgules)")
    static let counterOpenNow = Text("open now", "ouvert")
    static let counterClosedNow = Text("closed now", "fermé")
    static let counterOff = Text("switched off", "désactivé")
    static let counterStaff = Text("Staff", "Personnel")
    static let counterStaffEmail = Text("Add staff by email", "Ajouter du personnel par e-mail")
    static let counterRemove = Text("Remove", "Retirer")
    static let counterSwitchOff = Text("Switch off", "Désactiver")
    static let counterSwitchOn = Text("Switch on", "Activer")
}

enum CounterCatalogue {
    static let all: [Text] = [
        .counters, .countersIntro, .counterAdd, .counterName, .counterStreet, .counterPostalCode, .counterCity, .counterLatitude, .counterLongitude,
        .counterTimeZone, .counterHoursHint, .counterHolidays, .counterOpenNow, .counterClosedNow, .counterOff, .counterStaff, .counterStaffEmail,
        .counterRemove, .counterSwitchOff, .counterSwitchOn,
    ]
}

/// The admins' Counters page: every counter with its hours, whether it is open, its staff; a form
/// to add one; staff named by email. The service is `Counters`; the rules `CounterPolicy`, `CounterHours`.
struct CounterPages {
    func register(_ routes: any RoutesBuilder) {
        routes.get(WebRoutes.counters, use: list)
        routes.post(WebRoutes.counters, use: create)
        routes.post(WebRoutes.counterStaff, use: addStaff)
        routes.post(WebRoutes.counterStaffRemove, use: removeStaff)
        routes.post(WebRoutes.counterActive, use: toggle)
    }

    func list(_ req: Request) async throws -> Response {
        let (ctx, me) = try WebAuth.require(req, .manageCounters)
        return try CountersPage(counters: try await Counters(request: req).list(by: me)).response(ctx)
    }

    func create(_ req: Request) async throws -> Response {
        let (ctx, me) = try WebAuth.require(req, .manageCounters)
        let form = try AccountPages.form(req)
        let counters = Counters(request: req)
        do {
            _ = try await counters.create(try Self.draft(form), by: me)
            return req.redirect(to: WebRoutes.counters(), redirectType: .normal)
        } catch let error as WaybillError where error.status == .unprocessableEntity {
            var page = CountersPage(counters: try await counters.list(by: me))
            page.values = form
            page.errors = error.fields ?? [:]
            page.message = ctx.message(error)
            page.status = .unprocessableEntity
            return try page.response(ctx)
        }
    }

    static func draft(_ form: [String: String]) throws -> CounterDraft {
        var errors = FieldErrors()
        var weekly: [[OpeningInterval]] = []
        for day in 1...7 {
            if let intervals = CounterHours.parse(form["day\(day)"] ?? "") { weekly.append(intervals) } else { errors.add("day\(day)", "invalid"); weekly.append([]) }
        }
        let holidays = (form["holidays"] ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        let lat = (form["latitude"] ?? "").isEmpty ? nil : Double(form["latitude"] ?? "")
        let lon = (form["longitude"] ?? "").isEmpty ? nil : Double(form["longitude"] ?? "")
        if !(form["latitude"] ?? "").isEmpty, lat == nil { errors.add("latitude", "invalid") }
        if !(form["longitude"] ?? "").isEmpty, lon == nil { errors.add("longitude", "invalid") }
        guard errors.isEmpty else { throw WaybillError.validation(errors) }
        let coordinate = lat.flatMap { la in lon.map { Coordinate(latitude: la, longitude: $0) } }
        return CounterDraft(name: form["name"] ?? "",
                            address: Address(street: form["street"] ?? "", postalCode: form["postalCode"] ?? "", city: form["city"] ?? "", coordinate: coordinate),
                            timeZone: form["timeZone"].flatMap { $0.isEmpty ? nil : $0 } ?? "Europe/Zurich",
                            hours: CounterHours(weekly: weekly, holidays: holidays))
    }

    func addStaff(_ req: Request) async throws -> Response {
        let (ctx, me) = try WebAuth.require(req, .manageCounters)
        let id: CounterID = try WebRoutes.id(req)
        let counters = Counters(request: req)
        do {
            _ = try await counters.addStaff(id, email: try AccountPages.form(req)["email"] ?? "", by: me)
            return req.redirect(to: WebRoutes.counters(), redirectType: .normal)
        } catch let error as WaybillError where error.status == .unprocessableEntity {
            var page = CountersPage(counters: try await counters.list(by: me))
            page.message = ctx.message(error)
            page.status = .unprocessableEntity
            return try page.response(ctx)
        }
    }

    func removeStaff(_ req: Request) async throws -> Response {
        let (_, me) = try WebAuth.require(req, .manageCounters)
        _ = try await Counters(request: req).removeStaff(try WebRoutes.id(req), user: try WebRoutes.id(req, "user"), by: me)
        return req.redirect(to: WebRoutes.counters(), redirectType: .normal)
    }

    func toggle(_ req: Request) async throws -> Response {
        let (_, me) = try WebAuth.require(req, .manageCounters)
        _ = try await Counters(request: req).update(try WebRoutes.id(req), nil, active: try AccountPages.form(req)["active"] == "on", by: me)
        return req.redirect(to: WebRoutes.counters(), redirectType: .normal)
    }
}

struct CountersPage: PageView {
    var counters: [CounterView]
    var values: [String: String] = [:]
    var errors: [String: String] = [:]
    var message: String?
    var status: HTTPResponseStatus = .ok

    func page(_ ctx: WebContext) throws -> WebPage {
        let csrf = "<input type=\"hidden\" name=\"_csrf\" value=\"\(h(ctx.csrf))\">"
        let now = UnixTime.nowMillis
        let items = try counters.map { v -> String in
            let r = v.record, hours = r.hours
            let id = try r.storedID
            let week = (1...7).map { day in
                "<li>\(h(ctx.weekday(day))): \(h(hours.weekly.indices.contains(day - 1) ? hours.weekly[day - 1].map(\.text).joined(separator: ", ") : ""))</li>"
            }.joined()
            let state = !r.active ? ctx.t(.counterOff) : hours.isOpen(at: now, in: r.zone) ? ctx.t(.counterOpenNow) : ctx.t(.counterClosedNow)
            let staff = try v.staff.map { user -> String in
                "<li>\(h(user.displayName)) <form method=\"post\" action=\"\(WebRoutes.counterStaffRemove((id, try user.storedID)))\" class=\"inline\">\(csrf)<button type=\"submit\" class=\"link\">\(h(ctx.t(.counterRemove)))</button></form></li>"
            }.joined()
            return """
                <li class="card" data-counter="\(id.uuidString)"><h2>\(h(r.name))</h2>
                <p>\(ctx.address(r.address)) · <strong>\(h(state))</strong></p>
                <ul class="hours">\(week)</ul>
                \(hours.holidays.isEmpty ? "" : "<p class=\"hint\">\(h(ctx.t(.counterHolidays))): \(h(hours.holidays.sorted().joined(separator: ", ")))</p>")
                <h3>\(h(ctx.t(.counterStaff)))</h3>
                \(staff.isEmpty ? "" : "<ul class=\"list\">\(staff)</ul>")
                <form method="post" action="\(WebRoutes.counterStaff(id))" class="inline">\(csrf)
                <input name="email" type="email" required aria-label="\(h(ctx.t(.counterStaffEmail)))" placeholder="\(h(ctx.t(.counterStaffEmail)))">
                <button type="submit" class="secondary">\(h(ctx.t(.counterStaffEmail)))</button></form>
                <form method="post" action="\(WebRoutes.counterActive(id))" class="inline">\(csrf)<input type="hidden" name="active" value="\(r.active ? "off" : "on")">
                <button type="submit" class="link">\(h(ctx.t(r.active ? .counterSwitchOff : .counterSwitchOn)))</button></form></li>
                """
        }.joined()
        var defaults = values
        if defaults.isEmpty {
            defaults = ["timeZone": "Europe/Zurich"]
            for day in 1...5 { defaults["day\(day)"] = "08:00-12:00, 13:30-18:00" }
        }
        let form = Form(ctx: ctx, values: defaults, errors: errors)
        let days = (1...7).map { form.field("day\($0)", ctx.weekday($0), required: false) }.joined()
        return WebPage(title: ctx.t(.counters), body: """
            <h1>\(h(ctx.t(.counters)))</h1>
            <p class="hint">\(h(ctx.t(.countersIntro)))</p>
            \(message.map { "<div class=\"alert error\" role=\"alert\">\(h($0))</div>" } ?? "")
            \(items.isEmpty ? "" : "<ul class=\"cards\" id=\"counters\">\(items)</ul>")
            <h2>\(h(ctx.t(.counterAdd)))</h2>
            <form method="post" action="\(WebRoutes.counters())" class="stack" id="counter-form">\(csrf)
            \(form.field("name", ctx.t(.counterName)))
            \(form.field("street", ctx.t(.counterStreet)))
            \(form.field("postalCode", ctx.t(.counterPostalCode)))
            \(form.field("city", ctx.t(.counterCity)))
            \(form.field("latitude", ctx.t(.counterLatitude), required: false, attributes: "inputmode=\"decimal\""))
            \(form.field("longitude", ctx.t(.counterLongitude), required: false, attributes: "inputmode=\"decimal\""))
            \(form.field("timeZone", ctx.t(.counterTimeZone)))
            <p class="hint">\(h(ctx.t(.counterHoursHint)))</p>
            \(days)
            \(form.field("holidays", ctx.t(.counterHolidays), required: false, attributes: "placeholder=\"2026-12-25, 2027-01-01\""))
            <button type="submit" class="primary">\(h(ctx.t(.counterAdd)))</button></form>
            """, status: status)
    }
}
