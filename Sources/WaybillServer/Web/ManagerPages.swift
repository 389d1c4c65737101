import Fluent
import Foundation
import Vapor
import WaybillCore

/// The manager's desk: the dispatch board, the fleet map, people and the tariff. The handlers call
/// the services; each page is its model (`load`) and a view.
struct DispatchPages {
    func register(_ routes: any RoutesBuilder) {
        routes.get(WebRoutes.dispatch, use: board)
        routes.post(WebRoutes.assign, use: assign)
        routes.get(WebRoutes.fleet, use: fleet)
        routes.get(WebRoutes.users, use: users)
        routes.post(WebRoutes.users, use: createUser)
        routes.post(WebRoutes.resetUser, use: resetUser)
        routes.post(WebRoutes.disableUser, use: disableUser)
        routes.post(WebRoutes.enableUser, use: enableUser)
        routes.get(WebRoutes.user, use: person)
        routes.post(WebRoutes.userCapabilities, use: setCapabilities)
        routes.post(WebRoutes.restrictUser, use: restrictUser)
        routes.post(WebRoutes.liftRestriction, use: liftRestriction)
        routes.get(WebRoutes.tariff, use: tariffPage)
        routes.post(WebRoutes.tariff, use: saveTariff)
    }

    // MARK: Dispatch

    func board(_ req: Request) async throws -> Response {
        let (ctx, me) = try WebAuth.require(req, .dispatch)
        var page = try await DispatchBoardPage.load(for: me, orders: Orders(request: req), tracking: Tracking(request: req))
        if let bulk = req.query[String.self, at: "bulk"] {
            let counts = bulk.split(separator: ",").compactMap { Int($0) }
            if counts.count == 2 { page.notice = ctx.t(.bulkDone, String(counts[0]), String(counts[1])); page.noticeIsError = counts[1] > 0 }
            else { page.notice = ctx.t(.bulkNoneSelected); page.noticeIsError = true }
        }
        return try page.response(ctx)
    }

    func assign(_ req: Request) async throws -> Response {
        let (_, me) = try WebAuth.require(req, .dispatch)
        let id: OrderID = try WebRoutes.id(req)
        let form = try AccountPages.form(req)
        guard let driver = (form["driverId"]).flatMap(UserID.init(uuidString:)) else { throw WaybillError.validation("driverId", "required") }
        _ = try await Orders(request: req).assign(id, to: driver, reassign: form["reassign"] == "true", by: me)
        let back = safeLocalPath(req.headers.first(name: .referer).flatMap { URL(string: $0)?.path }) ?? WebRoutes.dispatch()
        return req.redirect(to: back == WebRoutes.dispatch() ? WebRoutes.dispatch() : WebRoutes.order(id, query: "done=assigned"), redirectType: .normal)
    }

    // MARK: Fleet

    func fleet(_ req: Request) async throws -> Response {
        let (ctx, me) = try WebAuth.require(req, .dispatch)
        return try FleetPage(entries: try await Tracking(request: req).fleet(nearOrder: nil, by: me)).response(ctx)
    }

    // MARK: People

    func users(_ req: Request) async throws -> Response {
        let (ctx, me) = try WebAuth.require(req, .manageUsers)
        return try await UsersPage.load(req, for: me, values: ["role": "driver"]).response(ctx)
    }

    func createUser(_ req: Request) async throws -> Response {
        let (ctx, me) = try WebAuth.require(req, .manageUsers)
        let form = try AccountPages.form(req)
        guard let role = Role(rawValue: form["role"] ?? ""), AccountPolicy.creatableRoles.contains(role) else {
            var page = try await UsersPage.load(req, for: me, values: form)
            (page.errors, page.message, page.status) = (["role": "invalid"], ctx.t(.errValidation), .unprocessableEntity)
            return try page.response(ctx)
        }
        do {
            _ = try await Accounts(request: req).createStaff(role: role, firstName: form["firstName"] ?? "", lastName: form["lastName"] ?? "",
                                                             email: form["email"] ?? "", by: me)
        } catch let error as WaybillError {
            var page = try await UsersPage.load(req, for: me, values: form)
            (page.errors, page.message, page.status) = (error.fields ?? [:], ctx.message(error), error.status)
            return try page.response(ctx)
        }
        var page = try await UsersPage.load(req, for: me, values: ["role": "driver"])
        (page.notice, page.status) = (ctx.t(.invited, form["email"] ?? ""), .created)
        return try page.response(ctx)
    }

    func resetUser(_ req: Request) async throws -> Response {
        let (ctx, me) = try WebAuth.require(req, .manageUsers)
        try await Accounts(request: req).resetUser(id: try WebRoutes.id(req), by: me)
        var page = try await UsersPage.load(req, for: me, values: ["role": "driver"])
        page.notice = ctx.t(.resetSent)
        return try page.response(ctx)
    }

    func disableUser(_ req: Request) async throws -> Response {
        let (_, me) = try WebAuth.require(req, .manageUsers)
        _ = try await Accounts(request: req).updateUser(actor: me, id: try WebRoutes.id(req), role: nil, disabled: true)
        return req.redirect(to: WebRoutes.users(), redirectType: .normal)
    }

    func enableUser(_ req: Request) async throws -> Response {
        let (_, me) = try WebAuth.require(req, .manageUsers)
        _ = try await Accounts(request: req).updateUser(actor: me, id: try WebRoutes.id(req), role: nil, disabled: false)
        return req.redirect(to: WebRoutes.users(), redirectType: .normal)
    }

    func person(_ req: Request) async throws -> Response {
        let (ctx, me) = try WebAuth.require(req, .manageUsers)
        let page = try await PersonPage.load(try WebRoutes.id(req), req, for: me)
        return try page.response(ctx)
    }

    /// The capability checkboxes: each one changed is granted or taken back under
    /// `CapabilityPolicy`, one at a time (the first refusal stops and is shown).
    func setCapabilities(_ req: Request) async throws -> Response {
        let (ctx, me) = try WebAuth.require(req, .manageUsers)
        let id: UserID = try WebRoutes.id(req)
        let form = try AccountPages.form(req)
        let accounts = Accounts(request: req)
        let user = try await accounts.user(id, for: me)
        let held = user.capabilities
        do {
            for capability in PersonPage.shown where (form[capability.rawValue] == "on") != held.contains(capability) {
                _ = try await accounts.setCapability(capability, granted: form[capability.rawValue] == "on", on: id, by: me)
            }
        } catch let error as WaybillError {
            var page = try await PersonPage.load(id, req, for: me)
            (page.message, page.status) = (ctx.message(error), error.status)
            return try page.response(ctx)
        }
        return req.redirect(to: WebRoutes.user(id, query: "saved=1"), redirectType: .normal)
    }

    func restrictUser(_ req: Request) async throws -> Response {
        let (ctx, me) = try WebAuth.require(req, .manageUsers)
        let id: UserID = try WebRoutes.id(req)
        let form = try AccountPages.form(req)
        let kind = Restriction.Kind(rawValue: form["kind"] ?? "") ?? .suspended
        // The suspension ends at the end of the chosen day, in the display time zone.
        let until = kind == .suspended ? (form["until"]).flatMap { ctx.endOfDay($0) } : nil
        do {
            _ = try await Accounts(request: req).restrict(id, RestrictionRequest(kind: kind, until: until, reason: form["reason"] ?? ""), by: me)
        } catch let error as WaybillError where error.code != .reauthenticationRequired {  // that one asks for the password
            var page = try await PersonPage.load(id, req, for: me)
            (page.values, page.errors, page.message, page.status) = (form, error.fields ?? [:], ctx.message(error), error.status)
            if kind == .suspended, until == nil, page.errors["until"] == nil { page.errors["until"] = "required" }
            return try page.response(ctx)
        }
        return req.redirect(to: WebRoutes.user(id, query: "saved=1"), redirectType: .normal)
    }

    func liftRestriction(_ req: Request) async throws -> Response {
        let (_, me) = try WebAuth.require(req, .manageUsers)
        let id: UserID = try WebRoutes.id(req)
        guard let restriction = req.parameters.get("restriction").flatMap(Int.init) else { throw WaybillError.notFound }
        _ = try await Accounts(request: req).lift(restriction: restriction, of: id, by: me)
        return req.redirect(to: WebRoutes.user(id, query: "saved=1"), redirectType: .normal)
    }

    // MARK: Tariff

    func tariffPage(_ req: Request) async throws -> Response {
        let (ctx, me) = try WebAuth.require(req, .manageTariff)
        let record = try await Orders(request: req).tariff(for: me)
        return try TariffPage(values: TariffPage.values(try record.tariff), version: record.id ?? 0,
                          notice: req.query[String.self, at: "saved"] != nil ? ctx.t(.saved) : nil).response(ctx)
    }

    func saveTariff(_ req: Request) async throws -> Response {
        let (ctx, me) = try WebAuth.require(req, .manageTariff)
        let form = try AccountPages.form(req)
        var errors: [String: String] = [:]
        func cents(_ key: String) -> Int {
            guard let value = Money.minorUnits(fromText: form[key] ?? "", maximum: Decimal(Tariff.maxAmount) / 100) else {
                errors[key] = "invalid"; return 0
            }
            return value
        }
        func integer(_ key: String) -> Int {
            guard let value = Int((form[key] ?? "").trimmingCharacters(in: .whitespaces)) else { errors[key] = "invalid"; return 0 }
            return value
        }
        func rate(_ name: String) -> Tariff.Rate {
            Tariff.Rate(baseFee: cents("\(name).baseFee"), perKm: cents("\(name).perKm"), flatFee: cents("\(name).flatFee"))
        }
        let tariff = Tariff(currency: form["currency"] ?? "", small: rate("small"), medium: rate("medium"), large: rate("large"),
                            expressMultiplierPercent: integer("expressMultiplierPercent"), roundingIncrement: integer("roundingIncrement"))
        let version = try await Orders(request: req).tariff(for: me).id ?? 0
        guard errors.isEmpty else {
            return try TariffPage(values: form, version: version, errors: errors, message: ctx.t(.errValidation), status: .unprocessableEntity).response(ctx)
        }
        do {
            _ = try await Orders(request: req).replaceTariff(tariff, by: me)
        } catch let error as WaybillError {
            return try TariffPage(values: form, version: version, errors: error.fields ?? [:], message: ctx.message(error), status: error.status).response(ctx)
        }
        return req.redirect(to: WebRoutes.tariff(query: "saved=1"), redirectType: .normal)
    }
}

// MARK: - Pages

/// The assign (or reassign) form of one order: drivers ranked for it (`DispatchPolicy`), with their
/// load, distance to the pickup and duty; the dispatcher themself at the end if they are not listed.
struct AssignForm {
    var orderID: OrderID
    var reference: String
    var reassign: Bool
    var current: UserID?
    var drivers: [Tracking.FleetEntry]
    var me: User?

    /// `fleet` is `Tracking.fleet(nearOrder: nil)`, read once for a whole board.
    static func load(_ order: some OrderColumns, reassign: Bool, by me: Principal, fleet: [Tracking.FleetEntry]) throws -> AssignForm {
        let ranked = Tracking.ranked(fleet, pickup: order.pickup.coordinate)
        return AssignForm(orderID: try order.orderID, reference: order.reference, reassign: reassign, current: order.driverID, drivers: ranked,
                          me: ranked.contains { $0.driver.id == me.userID } ? nil : me.user)
    }

    func render(_ ctx: WebContext) throws -> String {
        var options = try drivers.map { entry -> (String, String) in
            var text = entry.driver.displayName + " · " + ctx.t(.loadCount, String(entry.load))
            if let d = entry.distanceToPickupMeters { text += " · " + String(format: "%.1f km", Double(d) / 1000) }
            if entry.state?.onDuty != true { text += " · " + ctx.t(.offDuty) }
            return (try entry.driver.storedID.uuidString, text)
        }
        if let me { options.append((try me.storedID.uuidString, ctx.t(.myself, me.displayName))) }
        var form = Form(ctx: ctx, values: ["driverId": current?.uuidString ?? options.first?.0 ?? ""])
        form.idPrefix = "assign-\(reference)-"  // a board holds one such form per card
        return """
            <form method="post" action="\(WebRoutes.assign(orderID))" class="assign">\(form.hidden())
            <input type="hidden" name="reassign" value="\(reassign ? "true" : "false")">
            \(form.select("driverId", reassign ? ctx.t(.reassignTo) : ctx.t(.assignTo), options: options, attributes: "data-order=\"\(reference)\""))
            <button type="submit" class="primary">\(h(reassign ? ctx.t(.reassign) : ctx.t(.assign)))</button>
            </form>
            """
    }
}

/// The dispatch board: a column per `DispatchColumn`, a card per order, the assign form on the cards
/// of orders dispatch may give to a driver from their status (new and failed ones).
struct DispatchBoardPage: PageView {
    struct Card {
        var order: Order
        var customer: PersonRow?
        var driver: PersonRow?
        var assign: AssignForm?
    }
    var columns: [(column: DispatchColumn, cards: [Card])]
    /// Drivers for the bulk assignment, ranked as on the cards; the dispatcher themself if unlisted.
    var drivers: [Tracking.FleetEntry] = []
    var me: User?
    var notice: String?
    var noticeIsError = false
    /// Orders the newest route plan left out, with the reason.
    var unplanned: [OrderID: RoutePlanningPolicy.Unplanned] = [:]
    /// The cards' booked timeslots, and the newest plan's arrival at each order's pickup and delivery.
    var slots: [OrderID: [SlotBookingView]] = [:]
    var arrivals: [String: Int64] = [:]
    /// The newest route plan (its number, whether applied), drawn on the board's map.
    var plan: RoutePlanRecord?
    var now: Int64 = UnixTime.nowMillis

    static func load(for me: Principal, orders: Orders, tracking: Tracking) async throws -> DispatchBoardPage {
        let fleet = try await tracking.fleet(nearOrder: nil, by: me)
        let board = try await orders.dispatchBoard(by: me)
        var page = DispatchBoardPage(columns: try DispatchColumn.allCases.map { column in
            (column, try board.orders.filter { $0.status.dispatchColumn == column }.map { order in
                // The card offers what the shipment's rules allow (a traveller's shipment: never a driver).
                let mayAssign = board.actions[try order.storedID]?.contains(.assign) == true
                return Card(order: order, customer: board.people[order.customerID], driver: order.driverID.flatMap { board.people[$0] },
                            assign: try mayAssign ? AssignForm.load(order, reassign: false, by: me, fleet: fleet) : nil)
            })
        })
        page.drivers = Tracking.ranked(fleet, pickup: nil)
        page.me = fleet.contains { $0.driver.id == me.userID } ? nil : me.user
        if let plan = try await RoutePlans(services: orders.services, db: orders.db, logger: orders.logger).latest(by: me) {
            page.unplanned = Dictionary(plan.plan.unplanned.map { ($0.orderID, $0.reason) }, uniquingKeysWith: { a, _ in a })
            for stop in plan.plan.routes.flatMap(\.stops) { page.arrivals["\(stop.orderID.uuidString)/\(stop.kind.rawValue)"] = stop.arrival }
            page.plan = plan
        }
        page.slots = try await Timeslots.live(for: board.orders.compactMap(\.id), on: orders.db)
        return page
    }

    func page(_ ctx: WebContext) throws -> WebPage {
        func card(_ card: Card) throws -> String {
            let order = card.order, id = try order.storedID
            let pickup = ctx.address(order.pickup), dropoff = ctx.address(order.dropoff)
            return """
                <li class="card" id="card-\(order.reference)">
                <label class="card-pick"><input type="checkbox" name="order_\(id.uuidString)" form="bulk-form"><span class="visually-hidden">\(h(ctx.t(.bulkSelect, order.reference)))</span></label>
                <p class="card-head"><a href="\(WebRoutes.order(id))"><strong>\(h(order.reference))</strong></a> \(order.service == .express ? "<span class=\"status express\">\(h(ctx.t(.express)))</span>" : "") <span class="when">\(ctx.time(order.createdAt))</span></p>
                <p>\(h(card.customer?.companyName ?? card.customer?.displayName ?? "")) · \(h(ctx.weight(order.weightClass))) · \(ctx.money(order.price)) · \(h(ctx.payment(order.paymentMethod)))</p>
                <p><span class="label">\(h(ctx.t(.pickup)))</span> \(pickup)</p>
                <p><span class="label">\(h(ctx.t(.dropoff)))</span> \(dropoff)</p>
                \(card.driver.map { "<p><span class=\"label\">\(h(ctx.t(.driver)))</span> \(h($0.displayName))</p>" } ?? "")
                \(TimeslotPages.windows(ctx, slots[id] ?? [], arrival: { arrivals["\(id.uuidString)/\($0 == .pickup ? "pickup" : "delivery")"] }, now: now))
                \(order.failureReason.map { "<p class=\"error\">\(h(ctx.failure($0)))</p>" } ?? "")\(unplanned[id].map { "<p class=\"unplanned\" data-unplanned-reason=\"\($0.rawValue)\"><span class=\"label\">\(h(ctx.t(.planUnplanned)))</span> \(h(ctx.t(Text.unplanned($0))))</p>" } ?? "")
                \(try card.assign?.render(ctx) ?? "")
                </li>
                """
        }
        var html = ""
        for (column, cards) in columns {
            let id = column == .underWay ? "under-way" : column.rawValue
            let title = switch column {
            case .new: ctx.t(.colNew)
            case .assigned: ctx.t(.colAssigned)
            case .underWay: ctx.t(.colUnderWay)
            case .failed: ctx.t(.colFailed)
            }
            let items = try cards.map(card).joined()
            html += """
                <section class="column" id="col-\(id)" aria-labelledby="h-\(id)"><h2 id="h-\(id)">\(h(title)) <span class="count">\(cards.count)</span></h2>
                \(items.isEmpty ? "<p class=\"empty\">\(h(ctx.t(.none)))</p>" : "<ol class=\"cards\">\(items)</ol>")</section>
                """
        }
        var options = try drivers.map { (try $0.driver.storedID.uuidString, $0.driver.displayName + ($0.state?.onDuty == true ? "" : " · " + ctx.t(.offDuty))) }
        if let me { options.append((try me.storedID.uuidString, ctx.t(.myself, me.displayName))) }
        var bulkForm = Form(ctx: ctx, values: ["driverId": options.first?.0 ?? ""])
        bulkForm.idPrefix = "bulk-"
        let banner = notice.map { "<div class=\"alert \(noticeIsError ? "error" : "ok")\" role=\"\(noticeIsError ? "alert" : "status")\">\(h($0))</div>" } ?? ""
        return WebPage(title: ctx.t(.dispatch), body: """
            <h1>\(h(ctx.t(.dispatch)))</h1>
            \(banner)
            <p><a href="\(WebRoutes.imports())">\(h(ctx.t(.imports)))</a></p>
            <form method="post" action="\(WebRoutes.bulk())" id="bulk-form" class="bulk">\(bulkForm.hidden())
            <fieldset><legend>\(h(ctx.t(.bulkWithSelected)))</legend>
            \(bulkForm.select("driverId", ctx.t(.assignTo), options: options))
            <button type="submit" name="action" value="assign" class="primary">\(h(ctx.t(.bulkAssign)))</button>
            \(bulkForm.field("reason", ctx.t(.bulkCancelReason), required: false))
            <button type="submit" name="action" value="cancel" class="danger">\(h(ctx.t(.bulkCancel)))</button>
            <button type="submit" formaction="\(WebRoutes.labels())" formtarget="_blank">\(h(ctx.t(.bulkLabels)))</button>
            <button type="submit" formaction="\(WebRoutes.labelsPDF())" formtarget="_blank" data-labels-pdf>\(h(ctx.t(.labelsPDF)))</button>
            </fieldset></form>
            \(routeMap(ctx))<div class="board" id="board" data-live-refresh="status notification duty">\(html)</div>
            """, scripts: plan == nil ? [] : ["map"], liveTopics: ["fleet"], wide: true)
    }

    /// Each driver's route of the newest plan on a map, the drivers moving live, above the columns.
    private func routeMap(_ ctx: WebContext) -> String {
        guard let plan, !plan.plan.routes.isEmpty else { return "" }
        let (markers, lines) = RoutePlanPage.drawn(plan.plan)
        let state = plan.status == .applied ? ctx.t(.planApplied) : plan.status == .proposed ? ctx.t(.planProposed) : ctx.t(.planSuperseded)
        let title = ctx.t(.planTitle, String(plan.version)) + " · " + state
        return """
            <details class="board-routes" id="board-routes" open><summary>\(h(title))</summary>
            \(WebMap(id: "board-map", label: title, markers: markers, routes: lines, fleet: true).render(ctx))
            <p><a href="\(WebRoutes.routePlans())">\(h(ctx.t(.routes)))</a></p></details>
            """
    }
}

/// The fleet: a map of the drivers on duty and a table of every driver.
struct FleetPage: PageView {
    var entries: [Tracking.FleetEntry]

    func page(_ ctx: WebContext) throws -> WebPage {
        var map = WebMap(id: "fleet-map", label: ctx.t(.fleetMap), fleet: true)
        for entry in entries {
            if let p = entry.state?.position, entry.state?.onDuty == true {
                let driverID = try entry.driver.storedID
                map.markers.append(.init(id: "driver:\(driverID.uuidString)", latitude: p.latitude, longitude: p.longitude,
                                         label: entry.driver.firstName, kind: "driver"))
            }
        }
        let rows = try entries.map { entry -> String in
            let duty = entry.state?.onDuty == true, driverID = try entry.driver.storedID
            return "<tr><td>\(h(entry.driver.displayName))</td><td>\(duty ? h(ctx.t(.onDuty)) : h(ctx.t(.offDuty)))</td><td class=\"num\">\(entry.load)</td><td>\(duty ? entry.state?.position.map { ctx.time($0.recordedAt) } ?? "—" : "—")</td><td><a href=\"\(WebRoutes.orders(query: "driver=" + driverID.uuidString))\">\(h(ctx.t(.orders)))</a></td></tr>"
        }.joined()
        return WebPage(title: ctx.t(.fleet), body: """
            <h1>\(h(ctx.t(.fleet)))</h1>
            \(map.render(ctx))
            <div id="fleet-table" class="table-wrap" data-live-refresh="duty status">
            <table><thead><tr><th>\(h(ctx.t(.driver)))</th><th>\(h(ctx.t(.duty)))</th><th class="num">\(h(ctx.t(.load)))</th><th>\(h(ctx.t(.lastPosition)))</th><th></th></tr></thead>
            <tbody>\(rows)</tbody></table></div>
            """, scripts: ["map"], liveTopics: ["fleet"], wide: true)
    }
}

/// People: the accounts (searched, filtered by role, paged) and the form that invites staff.
struct UsersPage: PageView {
    var users: [User]
    var nextCursor: String?
    var query: String?
    var roleFilter: Role?
    var values: [String: String]
    var errors: [String: String] = [:]
    var message: String?
    var notice: String?
    var status: HTTPResponseStatus = .ok
    /// Disabling (a ban) and enabling are the administration's (`Permission.moderate`).
    var mayBan = false

    static func load(_ req: Request, for me: Principal, values: [String: String]) async throws -> UsersPage {
        let roleFilter = req.query[String.self, at: "filterRole"].flatMap(Role.init(rawValue:))
        let q = req.query[String.self, at: "q"].map { String(String.UnicodeScalarView($0.unicodeScalars.filter { $0 != "\u{0}" }).prefix(100)) }
        let page = try await Accounts(request: req).listUsers(role: roleFilter, query: q?.isEmpty == true ? nil : q,
                                                              cursor: req.query[String.self, at: "cursor"], limit: 50, for: me)
        return UsersPage(users: page.users, nextCursor: page.nextCursor, query: q, roleFilter: roleFilter, values: values,
                         mayBan: me.may(.moderate))
    }

    func page(_ ctx: WebContext) throws -> WebPage {
        let form = Form(ctx: ctx, values: values, errors: errors)
        let hidden = form.hidden()
        let rows = try users.map { user -> String in
            let id = try user.storedID
            let back = "<input type=\"hidden\" name=\"return\" value=\"\(WebRoutes.users())\">"
            let toggle = !mayBan ? "" : user.isBanned
                ? "<form method=\"post\" action=\"\(WebRoutes.enableUser(id))\" class=\"inline\">\(hidden)\(back)<button type=\"submit\" class=\"small\">\(h(ctx.t(.enable)))</button></form>"
                : "<form method=\"post\" action=\"\(WebRoutes.disableUser(id))\" class=\"inline\" data-confirm=\"\(h(ctx.t(.disableConfirm, user.displayName)))\">\(hidden)\(back)<button type=\"submit\" class=\"small danger\">\(h(ctx.t(.disable)))</button></form>"
            return """
                <tr\(user.isBanned ? " class=\"disabled\"" : "")><td><a href="\(WebRoutes.user(id))">\(h(user.displayName))</a>\(user.companyName.map { "<br><span class=\"hint\">\(h($0))</span>" } ?? "")</td><td>\(h(user.email))</td><td>\(h(ctx.role(user.role)))</td>
                <td>\(user.isBanned ? h(ctx.t(.disabled)) : user.restriction == .suspended ? h(ctx.t(.suspended)) : user.emailVerifiedAt == nil ? h(ctx.t(.notVerified)) : h(ctx.t(.active)))</td>
                <td class="actions"><form method="post" action="\(WebRoutes.resetUser(id))" class="inline">\(hidden)<button type="submit" class="small secondary">\(h(ctx.t(.sendReset)))</button></form> \(toggle)</td></tr>
                """
        }.joined()
        let filter = Form(ctx: ctx, values: ["q": query ?? "", "filterRole": roleFilter?.rawValue ?? ""])
        return WebPage(title: ctx.t(.users), body: """
            <h1>\(h(ctx.t(.users)))</h1>
            \(notice.map { "<div class=\"alert ok\" role=\"status\">\(h($0))</div>" } ?? "")
            <form method="get" action="\(WebRoutes.users())" class="filters" role="search">
            \(filter.field("q", ctx.t(.search), type: "search", required: false))
            \(filter.select("filterRole", ctx.t(.role), options: [("", ctx.t(.allRoles))] + Role.allCases.map { ($0.rawValue, ctx.role($0)) }, required: false, attributes: "data-autosubmit"))
            <button type="submit">\(h(ctx.t(.search)))</button></form>
            <div class="table-wrap"><table class="users"><thead><tr><th>\(h(ctx.t(.name)))</th><th>\(h(ctx.t(.email)))</th><th>\(h(ctx.t(.role)))</th><th>\(h(ctx.t(.state)))</th><th></th></tr></thead>
            <tbody>\(rows)</tbody></table></div>
            \(nextCursor.map { "<p><a href=\"\(WebRoutes.users())?cursor=\(h(queryValue($0)))&amp;q=\(h(queryValue(query ?? "")))\">\(h(ctx.t(.more)))</a></p>" } ?? "")
            <h2 id="new-user">\(h(ctx.t(.newStaff)))</h2>
            \(form.summary(message: message, shown: ["firstName", "lastName", "email", "role"]))
            <form method="post" action="\(WebRoutes.users())" class="stack">\(hidden)
            <div class="row">\(form.field("firstName", ctx.t(.firstName)))\(form.field("lastName", ctx.t(.lastName)))</div>
            \(form.field("email", ctx.t(.email), type: "email"))
            \(form.select("role", ctx.t(.role), options: [("driver", ctx.t(.roleDriver)), ("manager", ctx.t(.roleManager))]))
            <p class="hint">\(h(ctx.t(.invitationHint)))</p>
            <button type="submit" class="primary">\(h(ctx.t(.createAndInvite)))</button></form>
            """, status: status, wide: true)
    }
}

/// One person, for managers: what they hold (capabilities, with the ones the manager may change
/// as checkboxes), the restriction in force with its reason, the form to suspend or ban them,
/// and their restrictions so far.
struct PersonPage: PageView {
    /// The capabilities a person page shows as checkboxes: the granted ones (`invoice` only on a
    /// company's account, or one that holds it).
    static let shown: [Capability] = [.driver, .manager, .counter, .admin, .invoice]

    var user: User
    var me: Principal
    var restrictions: [RestrictionRecord]
    /// Their profile picture, for an admin who may hide it or show it again: whether it is hidden.
    var pictureHidden: Bool? = nil
    var values: [String: String] = [:]
    var errors: [String: String] = [:]
    var message: String?
    var notice: String?
    var status: HTTPResponseStatus = .ok

    static func load(_ id: UserID, _ req: Request, for me: Principal) async throws -> PersonPage {
        let accounts = Accounts(request: req)
        let user = try await accounts.user(id, for: me)
        return PersonPage(user: user, me: me, restrictions: try await accounts.restrictions(of: id, for: me),
                          pictureHidden: try await accounts.pictureHidden(of: id, for: me),
                          notice: req.query[String.self, at: "saved"] != nil ? "saved" : nil)
    }

    func page(_ ctx: WebContext) throws -> WebPage {
        let id = try user.storedID
        let held = user.capabilities
        let hidden = Form(ctx: ctx, values: [:]).hidden() + "<input type=\"hidden\" name=\"return\" value=\"\(WebRoutes.user(id))\">"
        let boxes = Self.shown.filter { $0 != .invoice || user.isCompany || held.contains($0) }.map { capability -> String in
            let changeable = CapabilityPolicy.mayChange(capability, on: id, by: me.userID, having: me.caller.capabilities) == .allowed
            return "<div class=\"field\"><label class=\"choice\"><input type=\"checkbox\" name=\"\(capability.rawValue)\" value=\"on\"\(held.contains(capability) ? " checked" : "")\(changeable ? "" : " disabled")> \(h(ctx.capability(capability)))</label></div>"
        }.joined()
        let always = Capability.allCases.filter { held.contains($0) && !Self.shown.contains($0) }.map { h(ctx.capability($0)) }.joined(separator: ", ")
        let mayRestrict = CapabilityPolicy.mayRestrict(id, targetHas: held, by: me.userID, having: me.caller.capabilities) == .allowed
        let now = UnixTime.nowMillis
        let history = try restrictions.map { record -> String in
            let recordID = try record.storedID
            let inForce = record.liftedAt == nil && record.restriction.holds(at: now)
            let lift = inForce && mayRestrict
                ? "<form method=\"post\" action=\"\(WebRoutes.liftRestriction((id, recordID)))\" class=\"inline\">\(hidden)<button type=\"submit\" class=\"small\">\(h(ctx.t(.liftRestriction)))</button></form>" : ""
            let state = inForce ? ctx.t(.inForce) : record.liftedAt != nil ? ctx.t(.lifted) : ctx.t(.over)
            return "<tr><td>\(h(ctx.restrictionKind(record.kind)))</td><td>\(h(record.reason))</td><td>\(ctx.time(record.setAt))</td><td>\(record.until.map { ctx.time($0) } ?? "—")</td><td>\(h(state))</td><td class=\"actions\">\(lift)</td></tr>"
        }.joined()
        let form = Form(ctx: ctx, values: values.isEmpty ? ["kind": "suspended"] : values, errors: errors)
        return WebPage(title: user.displayName, body: """
            <p><a href="\(WebRoutes.users())">\(h(ctx.t(.users)))</a></p>
            <h1>\(h(user.displayName))</h1>
            <p>\(h(user.email))\(user.companyName.map { " · " + h($0) } ?? "")</p>
            \(message.map { "<div class=\"alert error\" role=\"alert\">\(h($0))</div>" } ?? "")
            \(notice != nil ? "<div class=\"alert ok\" role=\"status\">\(h(ctx.t(.saved)))</div>" : "")
            <h2>\(h(ctx.t(.capabilities)))</h2>
            <form method="post" action="\(WebRoutes.userCapabilities(id))" class="stack">\(hidden)
            \(boxes)
            \(always.isEmpty ? "" : "<p class=\"hint\">\(h(ctx.t(.alsoHolds))) \(always)</p>")
            <button type="submit" class="primary">\(h(ctx.t(.save)))</button></form>
            \(pictureHidden.map { hidden in """
            <h2>\(h(ctx.t(.profilePicture)))</h2>
            <p><img class="avatar" src="\(WebRoutes.picture(id))" alt="" width="96" height="96"></p>
            \(AdminPages.moderationForm(ctx, .picture(id), hidden: hidden, back: WebRoutes.user(id)))
            """ } ?? "")
            <h2>\(h(ctx.t(.restrictions)))</h2>
            \(history.isEmpty ? "<p>\(h(ctx.t(.noRestrictions)))</p>" : """
            <div class="table-wrap"><table><thead><tr><th>\(h(ctx.t(.kind)))</th><th>\(h(ctx.t(.reason)))</th><th>\(h(ctx.t(.date)))</th><th>\(h(ctx.t(.until)))</th><th>\(h(ctx.t(.state)))</th><th></th></tr></thead>
            <tbody>\(history)</tbody></table></div>
            """)
            \(mayRestrict ? """
            <h3>\(h(ctx.t(.restrict)))</h3>
            \(form.summary(message: nil, shown: ["kind", "until", "reason"]))
            <form method="post" action="\(WebRoutes.restrictUser(id))" class="stack">\(hidden)
            \(form.select("kind", ctx.t(.kind), options: [("suspended", ctx.t(.suspended)), ("banned", ctx.t(.banned))]))
            \(form.field("until", ctx.t(.until), type: "date", required: false))
            \(form.field("reason", ctx.t(.reason)))
            <p class="hint">\(h(ctx.t(.restrictHint)))</p>
            <button type="submit" class="danger">\(h(ctx.t(.restrict)))</button></form>
            """ : "")
            """, status: status)
    }
}

/// The tariff in force (its version) as an editable form.
struct TariffPage: PageView {
    var values: [String: String]
    var version: Int
    var errors: [String: String] = [:]
    var message: String?
    var notice: String?
    var status: HTTPResponseStatus = .ok

    static func values(_ tariff: Tariff) -> [String: String] {
        var values = ["currency": tariff.currency, "expressMultiplierPercent": String(tariff.expressMultiplierPercent),
                      "roundingIncrement": String(tariff.roundingIncrement)]
        for (name, rate) in [("small", tariff.small), ("medium", tariff.medium), ("large", tariff.large)] {
            values["\(name).baseFee"] = OrderPages.decimal(Money(rate.baseFee, tariff.currency))
            values["\(name).perKm"] = OrderPages.decimal(Money(rate.perKm, tariff.currency))
            values["\(name).flatFee"] = OrderPages.decimal(Money(rate.flatFee, tariff.currency))
        }
        return values
    }

    func page(_ ctx: WebContext) -> WebPage {
        let form = Form(ctx: ctx, values: values, errors: errors)
        let rows = WeightClass.allCases.map { weight -> String in
            let n = weight.rawValue
            return "<fieldset><legend>\(h(ctx.weight(weight)))</legend><div class=\"row\">\(form.field("\(n).baseFee", ctx.t(.baseFee), attributes: "inputmode=\"decimal\""))\(form.field("\(n).perKm", ctx.t(.perKm), attributes: "inputmode=\"decimal\""))\(form.field("\(n).flatFee", ctx.t(.flatFee), attributes: "inputmode=\"decimal\""))</div></fieldset>"
        }.joined()
        return WebPage(title: ctx.t(.tariff), body: """
            <h1>\(h(ctx.t(.tariff)))</h1>
            <p class="hint">\(h(ctx.t(.tariffHint, String(version))))</p>
            \(notice.map { "<div class=\"alert ok\" role=\"status\">\(h($0))</div>" } ?? "")
            \(form.summary(message: message, shown: Set(values.keys)))
            <form method="post" action="\(WebRoutes.tariff())" class="stack">\(form.hidden())
            \(form.field("currency", ctx.t(.currency), attributes: "maxlength=\"3\""))
            \(rows)
            <div class="row">\(form.field("expressMultiplierPercent", ctx.t(.expressPercent), attributes: "inputmode=\"numeric\""))\(form.field("roundingIncrement", ctx.t(.rounding), attributes: "inputmode=\"numeric\""))</div>
            <button type="submit" class="primary">\(h(ctx.t(.saveTariff)))</button></form>
            """, status: status)
    }
}
