import Fluent
import Foundation
import Vapor
import WaybillCore

/// The manager's desk: the dispatch board, the fleet map, people and the tariff.
struct DispatchPages {
    func register(_ routes: any RoutesBuilder) {
        routes.get("dispatch", use: board)
        routes.post("dispatch", ":id", "assign", use: assign)
        routes.get("fleet", use: fleet)
        routes.get("users", use: users)
        routes.post("users", use: createUser)
        routes.post("users", ":id", "reset", use: resetUser)
        routes.post("users", ":id", "disable", use: disableUser)
        routes.post("users", ":id", "enable", use: enableUser)
        routes.get("tariff", use: tariffPage)
        routes.post("tariff", use: saveTariff)
    }

    // MARK: Dispatch

    /// One action: a list of drivers with their load and distance to the pickup, nearest first.
    /// `fleet` is `Tracking.fleet(nearOrder: nil)`, read once for a whole board.
    static func assignForm(_ ctx: WebContext, order: Order, reassign: Bool, fleet: [Tracking.FleetEntry]? = nil) async throws -> String {
        guard let me = ctx.principal else { return "" }
        var entries: [Tracking.FleetEntry]
        if let fleet { entries = fleet } else { entries = try await Tracking(request: ctx.request).fleet(nearOrder: nil, by: me) }
        let sorted = Tracking.ranked(entries, pickup: (try? order.pickup)?.coordinate)
        var options = sorted.map { entry -> (String, String) in
            var text = entry.driver.displayName + " · " + ctx.t(.loadCount, String(entry.load))
            if let d = entry.distanceToPickupMeters { text += " · " + String(format: "%.1f km", Double(d) / 1000) }
            if entry.state?.onDuty != true { text += " · " + ctx.t(.offDuty) }
            return (entry.driver.id!.uuidString, text)
        }
        if !options.contains(where: { $0.0 == me.userID.uuidString }) {
            options.append((me.userID.uuidString, ctx.t(.myself, me.user.displayName)))
        }
        let form = Form(ctx: ctx, values: ["driverId": order.driverID?.uuidString ?? options.first?.0 ?? ""])
        return """
            <form method="post" action="/dispatch/\(order.id!.uuidString)/assign" class="assign">\(form.hidden())
            <input type="hidden" name="reassign" value="\(reassign ? "true" : "false")">
            \(form.select("driverId", reassign ? ctx.t(.reassignTo) : ctx.t(.assignTo), options: options, attributes: "data-order=\"\(order.reference)\""))
            <button type="submit" class="primary">\(h(reassign ? ctx.t(.reassign) : ctx.t(.assign)))</button>
            </form>
            """
    }

    func board(_ req: Request) async throws -> Response {
        let (ctx, me) = try WebAuth.require(req, .dispatch)
        let fleet = try await Tracking(request: req).fleet(nearOrder: nil, by: me)
        let open = try await Order.query(on: req.db).filter(\.$status ~~ DispatchColumn.allCases.flatMap(\.statuses))
            .sort(\.$createdAt).all()
        var ids = Set(open.map(\.customerID))
        for order in open { if let d = order.driverID { ids.insert(d) } }
        let people = Dictionary(uniqueKeysWithValues: try await User.query(on: req.db).filter(\.$id ~~ Array(ids)).all().map { ($0.id!, $0) })
        func card(_ order: Order, assign: Bool) async throws -> String {
            let pickup = try order.pickup, dropoff = try order.dropoff
            let customer = people[order.customerID]
            return """
                <li class="card" id="card-\(order.reference)">
                <p class="card-head"><a href="/orders/\(order.id!.uuidString)"><strong>\(h(order.reference))</strong></a> \(order.service == .express ? "<span class=\"status express\">\(h(ctx.t(.express)))</span>" : "") <span class="when">\(ctx.time(order.createdAt))</span></p>
                <p>\(h(customer?.companyName ?? customer?.displayName ?? "")) · \(h(ctx.weight(order.weightClass))) · \(ctx.money(order.price)) · \(h(ctx.payment(order.paymentMethod)))</p>
                <p><span class="label">\(h(ctx.t(.pickup)))</span> \(ctx.address(pickup))</p>
                <p><span class="label">\(h(ctx.t(.dropoff)))</span> \(ctx.address(dropoff))</p>
                \(order.driverID.flatMap { people[$0] }.map { "<p><span class=\"label\">\(h(ctx.t(.driver)))</span> \(h($0.displayName))</p>" } ?? "")
                \(order.failureReason.map { "<p class=\"error\">\(h(ctx.failure($0)))</p>" } ?? "")
                \(assign ? try await Self.assignForm(ctx, order: order, reassign: DispatchPolicy.assignAction(for: order.status) == .reassign, fleet: fleet) : "")
                </li>
                """
        }
        var html = ""
        for column in DispatchColumn.allCases {
            let id = column == .underWay ? "under-way" : column.rawValue
            let title = switch column {
            case .new: ctx.t(.colNew)
            case .assigned: ctx.t(.colAssigned)
            case .underWay: ctx.t(.colUnderWay)
            case .failed: ctx.t(.colFailed)
            }
            let orders = open.filter { $0.status.dispatchColumn == column }
            var cards = ""
            // Cards offer the assign form where dispatch may (re)assign from the column's status
            // without taking the order from a driver who has it: new and failed orders.
            for order in orders { cards += try await card(order, assign: DispatchPolicy.assignAction(for: order.status) == .assign) }
            html += """
                <section class="column" id="col-\(id)" aria-labelledby="h-\(id)"><h2 id="h-\(id)">\(h(title)) <span class="count">\(orders.count)</span></h2>
                \(cards.isEmpty ? "<p class=\"empty\">\(h(ctx.t(.none)))</p>" : "<ol class=\"cards\">\(cards)</ol>")</section>
                """
        }
        return WebPage(title: ctx.t(.dispatch), body: """
            <h1>\(h(ctx.t(.dispatch)))</h1>
            <div class="board" id="board" data-live-refresh="status notification duty">\(html)</div>
            """, liveTopics: ["fleet"], wide: true).render(ctx)
    }

    func assign(_ req: Request) async throws -> Response {
        let (_, me) = try WebAuth.require(req, .dispatch)
        let id = try OrderPages.orderID(req)
        let form = try AccountPages.form(req)
        guard let driver = (form["driverId"]).flatMap(UserID.init(uuidString:)) else { throw WaybillError.validation("driverId", "required") }
        _ = try await Orders(request: req).assign(id, to: driver, reassign: form["reassign"] == "true", by: me)
        let back = safeLocalPath(req.headers.first(name: .referer).flatMap { URL(string: $0)?.path }) ?? "/dispatch"
        return req.redirect(to: back == "/dispatch" ? "/dispatch" : "/orders/\(id.uuidString)?done=assigned", redirectType: .normal)
    }

    // MARK: Fleet

    func fleet(_ req: Request) async throws -> Response {
        let (ctx, me) = try WebAuth.require(req, .dispatch)
        let entries = try await Tracking(request: req).fleet(nearOrder: nil, by: me)
        var map = WebMap(id: "fleet-map", label: ctx.t(.fleetMap), fleet: true)
        for entry in entries {
            if let p = entry.state?.position, entry.state?.onDuty == true {
                map.markers.append(.init(id: "driver:\(entry.driver.id!.uuidString)", latitude: p.latitude, longitude: p.longitude,
                                         label: entry.driver.firstName, kind: "driver"))
            }
        }
        let rows = entries.map { entry -> String in
            let duty = entry.state?.onDuty == true
            return "<tr><td>\(h(entry.driver.displayName))</td><td>\(duty ? h(ctx.t(.onDuty)) : h(ctx.t(.offDuty)))</td><td class=\"num\">\(entry.load)</td><td>\(duty ? entry.state?.position.map { ctx.time($0.recordedAt) } ?? "—" : "—")</td><td><a href=\"/orders?driver=\(entry.driver.id!.uuidString)\">\(h(ctx.t(.orders)))</a></td></tr>"
        }.joined()
        return WebPage(title: ctx.t(.fleet), body: """
            <h1>\(h(ctx.t(.fleet)))</h1>
            \(map.render(ctx))
            <div id="fleet-table" data-live-refresh="duty status">
            <table><thead><tr><th>\(h(ctx.t(.driver)))</th><th>\(h(ctx.t(.duty)))</th><th class="num">\(h(ctx.t(.load)))</th><th>\(h(ctx.t(.lastPosition)))</th><th></th></tr></thead>
            <tbody>\(rows)</tbody></table></div>
            """, scripts: ["map"], liveTopics: ["fleet"], wide: true).render(ctx)
    }

    // MARK: People

    func users(_ req: Request) async throws -> Response {
        let (ctx, _) = try WebAuth.require(req, .manageUsers)
        return try await usersView(ctx, values: ["role": "driver"], errors: [:])
    }

    func usersView(_ ctx: WebContext, values: [String: String], errors: [String: String], message: String? = nil,
                   notice: String? = nil, status: HTTPResponseStatus = .ok) async throws -> Response {
        let req = ctx.request
        let roleFilter = req.query[String.self, at: "filterRole"].flatMap(Role.init(rawValue:))
        let q = req.query[String.self, at: "q"].map { String(String.UnicodeScalarView($0.unicodeScalars.filter { $0 != "\u{0}" }).prefix(100)) }
        let page = try await Accounts(request: req).listUsers(role: roleFilter, query: q?.isEmpty == true ? nil : q,
                                                              cursor: req.query[String.self, at: "cursor"], limit: 50,
                                                              for: try WebAuth.require(req, .manageUsers).1)
        let form = Form(ctx: ctx, values: values, errors: errors)
        let hidden = form.hidden()
        let rows = page.users.map { user -> String in
            let id = user.id!.uuidString
            let toggle = user.isDisabled
                ? "<form method=\"post\" action=\"/users/\(id)/enable\" class=\"inline\">\(hidden)<button type=\"submit\" class=\"small\">\(h(ctx.t(.enable)))</button></form>"
                : "<form method=\"post\" action=\"/users/\(id)/disable\" class=\"inline\" data-confirm=\"\(h(ctx.t(.disableConfirm, user.displayName)))\">\(hidden)<button type=\"submit\" class=\"small danger\">\(h(ctx.t(.disable)))</button></form>"
            return """
                <tr\(user.isDisabled ? " class=\"disabled\"" : "")><td>\(h(user.displayName))\(user.companyName.map { "<br><span class=\"hint\">\(h($0))</span>" } ?? "")</td><td>\(h(user.email))</td><td>\(h(ctx.role(user.role)))</td>
                <td>\(user.isDisabled ? h(ctx.t(.disabled)) : user.emailVerifiedAt == nil ? h(ctx.t(.notVerified)) : h(ctx.t(.active)))</td>
                <td class="actions"><form method="post" action="/users/\(id)/reset" class="inline">\(hidden)<button type="submit" class="small secondary">\(h(ctx.t(.sendReset)))</button></form> \(toggle)</td></tr>
                """
        }.joined()
        let filter = Form(ctx: ctx, values: ["q": q ?? "", "filterRole": roleFilter?.rawValue ?? ""])
        return WebPage(title: ctx.t(.users), body: """
            <h1>\(h(ctx.t(.users)))</h1>
            \(notice.map { "<div class=\"alert ok\" role=\"status\">\(h($0))</div>" } ?? "")
            <form method="get" action="/users" class="filters" role="search">
            \(filter.field("q", ctx.t(.search), type: "search", required: false))
            \(filter.select("filterRole", ctx.t(.role), options: [("", ctx.t(.allRoles))] + Role.allCases.map { ($0.rawValue, ctx.role($0)) }, required: false, attributes: "data-autosubmit"))
            <button type="submit">\(h(ctx.t(.search)))</button></form>
            <div class="table-wrap"><table class="users"><thead><tr><th>\(h(ctx.t(.name)))</th><th>\(h(ctx.t(.email)))</th><th>\(h(ctx.t(.role)))</th><th>\(h(ctx.t(.state)))</th><th></th></tr></thead>
            <tbody>\(rows)</tbody></table></div>
            \(page.nextCursor.map { "<p><a href=\"/users?cursor=\(h($0.addingPercentEncoding(withAllowedCharacters: .alphanumerics)))&amp;q=\(h(q?.addingPercentEncoding(withAllowedCharacters: .alphanumerics)))\">\(h(ctx.t(.more)))</a></p>" } ?? "")
            <h2 id="new-user">\(h(ctx.t(.newStaff)))</h2>
            \(form.summary(message: message, shown: ["firstName", "lastName", "email", "role"]))
            <form method="post" action="/users" class="stack">\(hidden)
            <div class="row">\(form.field("firstName", ctx.t(.firstName)))\(form.field("lastName", ctx.t(.lastName)))</div>
            \(form.field("email", ctx.t(.email), type: "email"))
            \(form.select("role", ctx.t(.role), options: [("driver", ctx.t(.roleDriver)), ("manager", ctx.t(.roleManager))]))
            <p class="hint">\(h(ctx.t(.invitationHint)))</p>
            <button type="submit" class="primary">\(h(ctx.t(.createAndInvite)))</button></form>
            """, status: status, wide: true).render(ctx)
    }

    func createUser(_ req: Request) async throws -> Response {
        let (ctx, me) = try WebAuth.require(req, .manageUsers)
        let form = try AccountPages.form(req)
        guard let role = Role(rawValue: form["role"] ?? ""), AccountPolicy.creatableRoles.contains(role) else {
            return try await usersView(ctx, values: form, errors: ["role": "invalid"], message: ctx.t(.errValidation), status: .unprocessableEntity)
        }
        do {
            _ = try await Accounts(request: req).createStaff(role: role, firstName: form["firstName"] ?? "", lastName: form["lastName"] ?? "",
                                                             email: form["email"] ?? "", by: me)
        } catch let error as WaybillError {
            return try await usersView(ctx, values: form, errors: error.fields ?? [:], message: ctx.message(error), status: error.status)
        }
        return try await usersView(ctx, values: ["role": "driver"], errors: [:], notice: ctx.t(.invited, form["email"] ?? ""), status: .created)
    }

    static func userID(_ req: Request) throws -> UserID {
        guard let id = req.parameters.get("id").flatMap(UserID.init(uuidString:)) else { throw WaybillError.notFound }
        return id
    }

    func resetUser(_ req: Request) async throws -> Response {
        let (ctx, me) = try WebAuth.require(req, .manageUsers)
        try await Accounts(request: req).resetUser(id: try Self.userID(req), by: me)
        return try await usersView(ctx, values: ["role": "driver"], errors: [:], notice: ctx.t(.resetSent))
    }

    func disableUser(_ req: Request) async throws -> Response {
        let (_, me) = try WebAuth.require(req, .manageUsers)
        _ = try await Accounts(request: req).updateUser(actor: me, id: try Self.userID(req), role: nil, disabled: true)
        return req.redirect(to: "/users", redirectType: .normal)
    }

    func enableUser(_ req: Request) async throws -> Response {
        let (_, me) = try WebAuth.require(req, .manageUsers)
        _ = try await Accounts(request: req).updateUser(actor: me, id: try Self.userID(req), role: nil, disabled: false)
        return req.redirect(to: "/users", redirectType: .normal)
    }

    // MARK: Tariff

    func tariffPage(_ req: Request) async throws -> Response {
        let (ctx, me) = try WebAuth.require(req, .manageTariff)
        let record = try await Orders(request: req).tariff(for: me)
        return tariffView(ctx, Self.values(try record.tariff), version: record.id ?? 0, errors: [:],
                          notice: req.query[String.self, at: "saved"] != nil ? ctx.t(.saved) : nil)
    }

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

    func tariffView(_ ctx: WebContext, _ values: [String: String], version: Int, errors: [String: String], message: String? = nil,
                    notice: String? = nil, status: HTTPResponseStatus = .ok) -> Response {
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
            <form method="post" action="/tariff" class="stack">\(form.hidden())
            \(form.field("currency", ctx.t(.currency), attributes: "maxlength=\"3\""))
            \(rows)
            <div class="row">\(form.field("expressMultiplierPercent", ctx.t(.expressPercent), attributes: "inputmode=\"numeric\""))\(form.field("roundingIncrement", ctx.t(.rounding), attributes: "inputmode=\"numeric\""))</div>
            <button type="submit" class="primary">\(h(ctx.t(.saveTariff)))</button></form>
            """, status: status).render(ctx)
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
            return tariffView(ctx, form, version: version, errors: errors, message: ctx.t(.errValidation), status: .unprocessableEntity)
        }
        do {
            _ = try await Orders(request: req).replaceTariff(tariff, by: me)
        } catch let error as WaybillError {
            return tariffView(ctx, form, version: version, errors: error.fields ?? [:], message: ctx.message(error), status: error.status)
        }
        return req.redirect(to: "/tariff?saved=1", redirectType: .normal)
    }
}
