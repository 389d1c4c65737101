import Foundation
import Vapor
import WaybillCore

extension WebRoutes {
    static let routePlans = WebPath("/dispatch/routes")
    static let routePlanApply = WebPath<RoutePlanID>("/dispatch/routes/:id/apply") { [$0.uuidString] }
    static let autoDispatch = WebPath("/dispatch/auto")
}

/// Route planning in the web app: plan, look at the routes on a map and per driver, see what is left
/// out and why, apply. The service is `RoutePlans`.
struct RoutePages {
    func register(_ routes: any RoutesBuilder) {
        routes.get(WebRoutes.routePlans, use: show)
        routes.post(WebRoutes.routePlans, use: plan)
        routes.post(WebRoutes.routePlanApply, use: apply)
        routes.post(WebRoutes.autoDispatch, use: autoDispatch)
    }

    func autoDispatch(_ req: Request) async throws -> Response {
        let (_, me) = try WebAuth.require(req, .dispatch)
        _ = try await AutoDispatch(request: req).set(on: try AccountPages.form(req)["on"] == "true", capacity: nil, by: me)
        return req.redirect(to: WebRoutes.routePlans(), redirectType: .normal)
    }

    func show(_ req: Request) async throws -> Response {
        let (ctx, me) = try WebAuth.require(req, .dispatch)
        var page = RoutePlanPage(record: try await RoutePlans(request: req).latest(by: me),
                                 autoDispatch: try await AutoDispatch(request: req).settings(by: me).on)
        if let done = req.query[String.self, at: "applied"]?.split(separator: ",").map(String.init), done.count == 3 {
            page.notice = ctx.t(.planApplyDone, done[0], done[1], done[2])
        } else if let made = req.query[String.self, at: "made"], let version = Int(made) {
            page.notice = ctx.t(.planMade, String(version))
        }
        return try page.response(ctx)
    }

    func plan(_ req: Request) async throws -> Response {
        let (ctx, me) = try WebAuth.require(req, .dispatch)
        let form = try AccountPages.form(req)
        var ask = RoutePlanRequest()
        if let raw = form["seconds"] {
            guard let v = Double(raw) else { throw WaybillError.validation("seconds", "invalid") }
            ask.seconds = v
        }
        if let raw = form["capacity"], !raw.isEmpty {
            guard let v = Int(raw) else { throw WaybillError.validation("capacity", "invalid") }
            ask.capacity = v
        }
        ask.fewestDrivers = form["fewestDrivers"] == "on"
        let plans = RoutePlans(request: req)
        do {
            let made = try await plans.plan(ask, by: me)
            return req.redirect(to: WebRoutes.routePlans(query: "made=\(made.record.version)"), redirectType: .normal)
        } catch let error as WaybillError where error.status != .forbidden {
            var page = RoutePlanPage(record: try await plans.latest(by: me), autoDispatch: try await AutoDispatch(request: req).settings(by: me).on)
            page.notice = ctx.message(error)
            page.noticeIsError = true
            page.status = error.status
            return try page.response(ctx)
        }
    }

    func apply(_ req: Request) async throws -> Response {
        let (ctx, me) = try WebAuth.require(req, .dispatch)
        let id: RoutePlanID = try WebRoutes.id(req)
        let plans = RoutePlans(request: req)
        do {
            let results = try await plans.apply(id, by: me).results
            let given = results.filter { $0.outcome == .assigned || $0.outcome == .reassigned }.count
            let unchanged = results.filter { $0.outcome == .unchanged }.count
            return req.redirect(to: WebRoutes.routePlans(query: "applied=\(given),\(unchanged),\(results.count - given - unchanged)"),
                                redirectType: .normal)
        } catch let error as WaybillError where error.status == .conflict {
            var page = RoutePlanPage(record: try await plans.latest(by: me), autoDispatch: try await AutoDispatch(request: req).settings(by: me).on)
            page.notice = ctx.message(error)
            page.noticeIsError = true
            page.status = error.status
            return try page.response(ctx)
        }
    }
}

struct RoutePlanPage: PageView {
    var record: RoutePlanRecord?
    var autoDispatch = false
    var notice: String?
    var noticeIsError = false
    var status: HTTPResponseStatus = .ok

    /// A plan on a map: each route a line from its driver's start through its stops, the stops
    /// numbered in their route's order, the drivers where they start (`driver:<id>`, so the live
    /// fleet channel moves them). The Routes page and the dispatch board draw it alike.
    static func drawn(_ plan: RoutePlan) -> (markers: [WebMap.Marker], lines: [[[Double]]]) {
        var markers: [WebMap.Marker] = []
        var lines: [[[Double]]] = []
        for route in plan.routes {
            var line: [[Double]] = []
            if let start = route.start {
                markers.append(.init(id: "driver:\(route.driverID.uuidString)", latitude: start.latitude, longitude: start.longitude,
                                     label: route.driverName, kind: "driver"))
                line.append([start.latitude, start.longitude])
            }
            for (index, stop) in route.stops.enumerated() {
                markers.append(.init(id: "\(stop.orderID.uuidString)-\(stop.kind.rawValue)", latitude: stop.latitude, longitude: stop.longitude,
                                     label: "\(index + 1). \(stop.reference)", kind: stop.kind == .pickup ? "pickup" : "dropoff"))
                line.append([stop.latitude, stop.longitude])
            }
            lines.append(line)
        }
        return (markers, lines)
    }

    static func km(_ metres: Double) -> String { String(format: "%.1f", metres / 1000) }

    func page(_ ctx: WebContext) -> WebPage {
        let csrf = "<input type=\"hidden\" name=\"_csrf\" value=\"\(h(ctx.csrf))\">"
        let seconds = [1, 2, 5, 10].map {
            "<option value=\"\($0)\"\($0 == Int(RoutePlanningPolicy.defaultSeconds) ? " selected" : "")>\(h(ctx.t(.planSeconds, String($0))))</option>"
        }.joined()
        let form = """
            <form method="post" action="\(WebRoutes.routePlans())" class="stack" id="plan-form">\(csrf)
            <div class="field"><label for="plan-seconds">\(h(ctx.t(.planSearch)))</label><select id="plan-seconds" name="seconds">\(seconds)</select></div>
            <div class="field"><label for="plan-capacity">\(h(ctx.t(.planCapacity)))</label>
            <input id="plan-capacity" type="number" name="capacity" min="\(RoutePlanningPolicy.capacityRange.lowerBound)" max="\(RoutePlanningPolicy.capacityRange.upperBound)" value="\(RoutePlanningPolicy.defaultCapacity)" inputmode="numeric"></div>
            <p><label><input type="checkbox" name="fewestDrivers"> \(h(ctx.t(.planFewest)))</label></p>
            <button type="submit" class="primary" id="plan-routes">\(h(ctx.t(.planRoutes)))</button>
            </form>
            """
        let auto = """
            <section id="auto-dispatch" data-auto="\(autoDispatch ? "on" : "off")"><h2>\(h(ctx.t(.autoDispatch)))</h2>
            <p>\(h(ctx.t(autoDispatch ? .autoDispatchOn : .autoDispatchOff)))</p>
            <form method="post" action="\(WebRoutes.autoDispatch())">\(csrf)<input type="hidden" name="on" value="\(autoDispatch ? "false" : "true")">
            <button type="submit" class="secondary">\(h(ctx.t(autoDispatch ? .autoDispatchStop : .autoDispatchStart)))</button></form></section>
            """
        let alert = notice.map { "<div class=\"alert \(noticeIsError ? "error" : "ok")\" role=\"\(noticeIsError ? "alert" : "status")\">\(h($0))</div>" } ?? ""
        guard let record else {
            return WebPage(title: ctx.t(.routes), body: """
                <h1>\(h(ctx.t(.routes)))</h1>\(alert)<p>\(h(ctx.t(.routesIntro)))</p>\(form)\(auto)<p id="route-plan-none">\(h(ctx.t(.planNone)))</p>
                """, status: status, wide: true)
        }
        let plan = record.plan
        let state = switch record.status {
        case .proposed: ctx.t(.planProposed)
        case .applied: ctx.t(.planApplied)
        case .superseded: ctx.t(.planSuperseded)
        }
        let source = plan.matrixSource.hasPrefix("OSRM") ? ctx.t(.planRoads)
            : plan.matrixSource.hasSuffix("(OSRM unavailable)") ? ctx.t(.planRoadsDown) : ctx.t(.planStraight)
        // The page shows the newest plan.
        let applyForm = RoutePlanningPolicy.mayApply(record.status, isNewest: true) ? """
            <form method="post" action="\(WebRoutes.routePlanApply(record.id))">\(csrf)<button type="submit" class="primary" id="apply-plan">\(h(ctx.t(.planApply)))</button></form>
            """ : ""
        let (markers, lines) = Self.drawn(plan)
        var sections = ""
        for route in plan.routes {
            let stops = route.stops.map { stop -> String in
                """
                    <li data-stop="\(stop.orderID.uuidString.lowercased())/\(stop.kind.rawValue)"><time datetime="\(ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: Double(stop.arrival) / 1000)))">\(h(ctx.clock(stop.arrival)))</time> \(h(ctx.t(stop.kind == .pickup ? .planPickUp : .planDeliver))) <a href="\(WebRoutes.order(stop.orderID))">\(h(stop.reference))</a></li>
                    """
            }.joined()
            sections += """
                <section class="route" data-driver="\(route.driverID.uuidString.lowercased())">
                <h3>\(h(route.driverName)) · <small>\(h(ctx.t(.planRouteSummary, String(route.stops.count), Self.km(route.distanceMeters))))</small></h3>
                \(route.stops.isEmpty ? "<p>\(h(ctx.t(.planNothing)))</p>" : "<ol class=\"route-stops\">\(stops)</ol>")
                </section>
                """
        }
        let unplanned = plan.unplanned.map { u in
            "<tr data-unplanned=\"\(u.orderID.uuidString.lowercased())\" data-reason=\"\(u.reason.rawValue)\"><td><a href=\"\(WebRoutes.order(u.orderID))\">\(h(u.reference))</a></td><td>\(h(ctx.t(Text.unplanned(u.reason))))</td></tr>"
        }.joined()
        let map = WebMap(id: "route-map", label: ctx.t(.planMap), markers: markers, routes: lines)
        return WebPage(title: ctx.t(.routes), body: """
            <h1>\(h(ctx.t(.routes)))</h1>\(alert)
            <p>\(h(ctx.t(.routesIntro)))</p>
            \(form)
            \(auto)
            <section id="route-plan" data-version="\(record.version)" data-status="\(record.status.rawValue)">
            <h2>\(h(ctx.t(.planTitle, String(record.version)))) · \(h(state))</h2>
            <p>\(h(ctx.t(.planTotal, Self.km(plan.distanceMeters)))) · \(h(source)) · <small>\(h(ctx.time(record.createdAt)))</small></p>
            \(applyForm)
            \(map.render(ctx))
            \(sections)
            \(unplanned.isEmpty ? "" : """
                <h3>\(h(ctx.t(.planUnplanned)))</h3>
                <div class="table-wrap"><table id="unplanned"><thead><tr><th scope="col">\(h(ctx.t(.planOrder)))</th><th scope="col">\(h(ctx.t(.planWhy)))</th></tr></thead><tbody>\(unplanned)</tbody></table></div>
                """)
            </section>
            """, status: status, scripts: ["map"], wide: true)
    }
}
