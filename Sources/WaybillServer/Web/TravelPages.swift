import Fluent
import Foundation
import Vapor
import WaybillCore

/// Travellers' and senders' pages: becoming a traveller, posting trips, finding one, requesting a
/// place, paying, and the traveller's steps up to the receiver's code. The handlers call `Travel`;
/// what each side may do comes from WaybillCore (`TripRequestProgress.actions`, `TripPolicy`).
struct TravelPages {
    func register(_ routes: any RoutesBuilder) {
        routes.get(WebRoutes.travel, use: hub)
        routes.post(WebRoutes.becomeTraveller, use: become)
        routes.get(WebRoutes.newTrip, use: newTrip)
        routes.post(WebRoutes.newTrip, use: postTrip)
        routes.get(WebRoutes.findTrips, use: find)
        routes.get(WebRoutes.trip, use: trip)
        routes.post(WebRoutes.cancelTrip, use: cancelTrip)
        routes.post(WebRoutes.requestPlace, use: sendRequest)
        routes.get(WebRoutes.tripRequest, use: request)
        routes.post(WebRoutes.tripRequestAction, use: act)
        routes.get(WebRoutes.picture, use: picture)
        routes.post(WebRoutes.accountPicture, use: setPicture)
        routes.post(WebRoutes.payoutsStart, use: startPayouts)
        routes.get(WebRoutes.payoutsRefresh, use: refreshPayouts)
        routes.get(WebRoutes.payoutsReturn, use: payoutsReturn)
    }

    // MARK: profile pictures

    func picture(_ req: Request) async throws -> Response {
        let (_, me) = try Self.signedIn(req)
        let (picture, data) = try await Accounts(request: req).picture(of: try WebRoutes.id(req), for: me)
        var headers = HTTPHeaders()
        headers.replaceOrAdd(name: .contentType, value: picture.contentType)
        headers.replaceOrAdd(name: .cacheControl, value: "private, no-store")
        return Response(status: .ok, headers: headers, body: .init(data: data))
    }

    struct PictureForm: Content { var photo: File? }

    /// The account page's picture form: the browser crops to a square first (`picture.js`).
    func setPicture(_ req: Request) async throws -> Response {
        let (ctx, me) = try Self.signedIn(req)
        let form = try? req.content.decode(PictureForm.self)
        guard let file = form?.photo, file.data.readableBytes > 0 else { return req.redirect(to: WebRoutes.account(), redirectType: .normal) }
        do {
            _ = try await Accounts(request: req).setPicture(.init(bytes: Array(buffer: file.data), field: "photo"), by: me)
        } catch let error as WaybillError {
            var page = AccountPage(me)
            page.hasPicture = try await Accounts(request: req).hasPicture(me)
            page.message = error.fields?["photo"] == "not_square" ? ctx.t(.pictureNotSquare) : ctx.message(error)
            page.status = error.status
            return try page.response(ctx)
        }
        return req.redirect(to: WebRoutes.account(query: "saved=1"), redirectType: .normal)
    }

    static func signedIn(_ req: Request) throws -> (WebContext, Principal) {
        let ctx = try req.web
        guard let me = ctx.principal else { throw WebRedirect(location: WebRoutes.login(query: "next=" + queryValue(req.url.path))) }
        return (ctx, me)
    }

    // MARK: the hub

    func hub(_ req: Request) async throws -> Response {
        let (ctx, me) = try Self.signedIn(req)
        let travel = Travel(request: req)
        let trips = me.caller.capabilities.contains(.traveller) ? try await travel.myTrips(for: me) : []
        let sent = try await travel.requests(received: false, for: me)
        let received = me.caller.capabilities.contains(.traveller) ? try await travel.requests(received: true, for: me) : []
        let index = try await travel.areas()
        // The provider is asked again only when coming back from its onboarding.
        let payouts = TripPolicy.mayPost(me.caller)
            ? try await travel.payoutAccount(for: me, refresh: req.query[String.self, at: "payouts"] != nil) : nil
        return try TravelHubPage(isTraveller: me.caller.capabilities.contains(.traveller), trips: trips, sent: sent, received: received,
                             index: index, payouts: payouts,
                             notice: req.query[String.self, at: "done"].map { _ in ctx.t(.travelDone) }).response(ctx)
    }

    // MARK: payouts

    /// "Set up payouts": to the provider's onboarding (or the sandbox's test page).
    func startPayouts(_ req: Request) async throws -> Response {
        let (ctx, me) = try Self.signedIn(req)
        _ = try AccountPages.form(req)
        do {
            return req.redirect(to: try await Travel(request: req).startPayoutOnboarding(by: me), redirectType: .normal)
        } catch let error as WaybillError {
            return WebErrors.page(for: error, ctx)
        }
    }

    /// Stripe sends the traveller here when the onboarding link expired: a new link.
    func refreshPayouts(_ req: Request) async throws -> Response {
        let (ctx, me) = try Self.signedIn(req)
        do {
            return req.redirect(to: try await Travel(request: req).startPayoutOnboarding(by: me), redirectType: .normal)
        } catch let error as WaybillError {
            return WebErrors.page(for: error, ctx)
        }
    }

    /// Back from the onboarding: the hub, which asks the provider for the account's status.
    func payoutsReturn(_ req: Request) async throws -> Response {
        _ = try Self.signedIn(req)
        return req.redirect(to: WebRoutes.travel(query: "payouts=1"), redirectType: .normal)
    }

    func become(_ req: Request) async throws -> Response {
        let (ctx, me) = try Self.signedIn(req)
        let form = try AccountPages.form(req)
        do {
            _ = try await Travel(request: req).becomeTraveller(acceptTerms: form["acceptTerms"] == "on", by: me)
        } catch let error as WaybillError {
            return WebErrors.page(for: error, ctx)
        }
        return req.redirect(to: WebRoutes.newTrip(), redirectType: .normal)
    }

    // MARK: trips

    func newTrip(_ req: Request) async throws -> Response {
        let (ctx, me) = try Self.signedIn(req)
        guard TripPolicy.mayPost(me.caller) else { return req.redirect(to: WebRoutes.travel()) }
        return try NewTripPage(values: ["timeZone": "Europe/Zurich", "parcels": "1"], tariff: try await Travel(request: req).tariff()).response(ctx)
    }

    func postTrip(_ req: Request) async throws -> Response {
        let (ctx, me) = try Self.signedIn(req)
        let form = try AccountPages.form(req)
        let travel = Travel(request: req)
        let tariff = try await travel.tariff()
        let index = try await travel.areas()
        var errors: [String: String] = [:]
        let from = Self.resolve(form["from"] ?? "", index, field: "from", into: &errors)
        let to = Self.resolve(form["to"] ?? "", index, field: "to", into: &errors)
        let grams = Self.grams(form["kg"], field: "kg", into: &errors)
        let categories = tariff.categories.map(\.id).filter { form["cat_" + $0] == "on" }
        // `resolve` answers nil only with an error for its field.
        guard errors.isEmpty, let from, let to else {
            return try NewTripPage(values: form, errors: errors, tariff: tariff, message: ctx.t(.errValidation), status: .unprocessableEntity).response(ctx)
        }
        let draft = TripDraft(from: from, to: to, date: form["date"] ?? "", earliest: form["earliest"] ?? "", latest: form["latest"] ?? "",
                              timeZone: form["timeZone"] ?? "Europe/Zurich", capacityGrams: grams ?? 0,
                              capacityParcels: Int(form["parcels"] ?? "") ?? 0, categories: categories,
                              notes: form["notes"].flatMap { $0.isEmpty ? nil : $0 })
        do {
            let trip = try await travel.postTrip(draft, by: me)
            return req.redirect(to: WebRoutes.trip(try trip.storedID), redirectType: .normal)
        } catch let error as WaybillError {
            var fields = error.fields ?? [:]
            if let e = fields.removeValue(forKey: "capacityGrams") { fields["kg"] = e }
            if let e = fields.removeValue(forKey: "capacityParcels") { fields["parcels"] = e }
            return try NewTripPage(values: form, errors: fields, tariff: tariff, message: ctx.message(error), status: error.status).response(ctx)
        }
    }

    func trip(_ req: Request) async throws -> Response {
        let (ctx, me) = try Self.signedIn(req)
        let travel = Travel(request: req)
        let trip = try await travel.trip(try WebRoutes.id(req), for: me)
        return try await Self.tripPage(trip, travel: travel, me: me, ctx: ctx)
    }

    static func tripPage(_ trip: TripRecord, travel: Travel, me: Principal, ctx: WebContext, values: [String: String] = [:],
                         errors: [String: String] = [:], message: String? = nil, status: HTTPResponseStatus = .ok) async throws -> Response {
        let requests = trip.travellerID == me.userID ? try await travel.requests(received: true, trip: try trip.storedID, for: me) : []
        let names = try await TripView.load([trip], travel: travel, me: me).names
        let hasPicture = try await Accounts(services: travel.services, db: travel.db, logger: travel.logger, clientAddress: "")
            .showsPicture(of: trip.travellerID, to: me)
        return try TripPage(trip: trip, mine: trip.travellerID == me.userID, travellerName: names[trip.travellerID] ?? "", hasPicture: hasPicture,
                        index: try await travel.areas(), tariff: try await travel.tariff(), requests: requests,
                        values: values, errors: errors, message: message, status: status).response(ctx)
    }

    func cancelTrip(_ req: Request) async throws -> Response {
        let (ctx, me) = try Self.signedIn(req)
        let id: TripID = try WebRoutes.id(req)
        do {
            _ = try await Travel(request: req).cancelTrip(id, by: me)
        } catch let error as WaybillError {
            return WebErrors.page(for: error, ctx)
        }
        return req.redirect(to: WebRoutes.trip(id), redirectType: .normal)
    }

    // MARK: finding a trip and asking for a place

    func find(_ req: Request) async throws -> Response {
        let (ctx, me) = try Self.signedIn(req)
        let travel = Travel(request: req)
        let tariff = try await travel.tariff(), index = try await travel.areas()
        let fromText = req.query[String.self, at: "from"] ?? "", toText = req.query[String.self, at: "to"] ?? ""
        let category = req.query[String.self, at: "category"] ?? "", kg = req.query[String.self, at: "kg"] ?? ""
        let values = ["from": fromText, "to": toText, "category": category, "kg": kg]
        guard !fromText.isEmpty || !toText.isEmpty else {
            return try FindTripsPage(values: values, tariff: tariff, index: index, results: nil).response(ctx)
        }
        var errors: [String: String] = [:]
        let from = Self.resolve(fromText, index, field: "from", into: &errors)
        let to = Self.resolve(toText, index, field: "to", into: &errors)
        let grams = Self.grams(kg, field: "kg", into: &errors)
        // `resolve` answers nil only with an error for its field.
        guard errors.isEmpty, let from, let to else {
            return try FindTripsPage(values: values, errors: errors, tariff: tariff, index: index, results: nil, message: ctx.t(.errValidation),
                                 status: .unprocessableEntity).response(ctx)
        }
        do {
            let found = try await travel.searchTrips(TripSearch(from: from, to: to, grams: grams ?? 0, category: category), limit: 20, for: me)
            let names = try await TripView.load(found.map(\.1), travel: travel, me: me).names
            return try FindTripsPage(values: values, tariff: tariff, index: index, results: found, names: names).response(ctx)
        } catch let error as WaybillError {
            return try FindTripsPage(values: values, errors: error.fields ?? [:], tariff: tariff, index: index, results: nil,
                                 message: ctx.message(error), status: error.status).response(ctx)
        }
    }

    func sendRequest(_ req: Request) async throws -> Response {
        let (ctx, me) = try Self.signedIn(req)
        let tripID: TripID = try WebRoutes.id(req)
        let form = try AccountPages.form(req)
        let travel = Travel(request: req)
        var errors: [String: String] = [:]
        let grams = Self.grams(form["kg"], field: "kg", into: &errors)
        let rawValue = (form["declaredValue"] ?? "").trimmingCharacters(in: .whitespaces)
        let value = rawValue.isEmpty ? 0 : Money.minorUnits(fromText: rawValue, maximum: 50_000)
        if value == nil { errors["declaredValue"] = "invalid" }
        let draft = TripRequestDraft(trip: tripID, category: form["category"] ?? "", grams: grams ?? 0, declaredValue: value ?? 0,
                                     description: form["description"] ?? "",
                                     receiver: Recipient(name: form["receiverName"] ?? "", email: form["receiverEmail"], phone: form["receiverPhone"]),
                                     attestsAllowedContents: form["attest"] == "on",
                                     paymentMethod: PaymentMethod(rawValue: form["paymentMethod"] ?? "") ?? .card)
        do {
            if !errors.isEmpty { throw WaybillError.validation(FieldErrors(errors)) }
            let sent = try await travel.sendRequest(draft, by: me)
            return req.redirect(to: WebRoutes.tripRequest(try sent.storedID), redirectType: .normal)
        } catch let error as WaybillError {
            let trip = try await travel.trip(tripID, for: me)
            var fields = error.fields ?? [:]
            for (api, web) in [("grams", "kg"), ("receiver.name", "receiverName"), ("receiver.email", "receiverEmail"),
                               ("receiver.phone", "receiverPhone"), ("attestsAllowedContents", "attest")] {
                if let e = fields.removeValue(forKey: api) { fields[web] = e }
            }
            return try await Self.tripPage(trip, travel: travel, me: me, ctx: ctx, values: form, errors: fields,
                                           message: ctx.message(error), status: error.status)
        }
    }

    // MARK: a request

    func request(_ req: Request) async throws -> Response {
        let (ctx, me) = try Self.signedIn(req)
        let travel = Travel(request: req)
        let view = try await travel.request(try WebRoutes.id(req), for: me)
        return try await Self.requestPage(view, travel: travel, me: me, ctx: ctx)
    }

    static func requestPage(_ view: Travel.RequestView, travel: Travel, me: Principal, ctx: WebContext, message: String? = nil,
                            status: HTTPResponseStatus = .ok) async throws -> Response {
        let people = try await APIHandler.requestPeople([view], travel: travel)
        return try TripRequestPage(view: view, me: me, people: people, index: try await travel.areas(),
                                   paidOut: try await travel.paidOut(view, for: me),
                               message: message, status: status).response(ctx)
    }

    func act(_ req: Request) async throws -> Response {
        let (ctx, me) = try Self.signedIn(req)
        let id: TripRequestID = try WebRoutes.id(req)
        guard let action = req.parameters.get("action").flatMap(TripRequestUserAction.init(rawValue:)), action != .pay else {
            throw WaybillError.notFound
        }
        let form = try AccountPages.form(req)
        let travel = Travel(request: req)
        do {
            switch action {
            case .accept: _ = try await travel.answer(id, accept: true, reason: nil, by: me)
            case .reject: _ = try await travel.answer(id, accept: false, reason: form["reason"], by: me)
            case .cancel: _ = try await travel.cancelRequest(id, reason: form["reason"].flatMap { $0.isEmpty ? nil : $0 }, by: me)
            case .pickUp: _ = try await travel.pickUp(id, by: me)
            case .deliver: _ = try await travel.deliver(id, code: form["code"] ?? "", by: me)
            case .pay: break
            }
        } catch let error as WaybillError {
            let view = try await travel.request(id, for: me)
            return try await Self.requestPage(view, travel: travel, me: me, ctx: ctx, message: ctx.message(error), status: error.status)
        }
        return req.redirect(to: WebRoutes.tripRequest(id), redirectType: .normal)
    }

    // MARK: helpers

    /// An area from what a person typed: its id, or the best match of a search (an exact name first).
    static func resolve(_ text: String, _ index: AreaIndex, field: String, into errors: inout [String: String]) -> AreaID? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if trimmed.isEmpty { errors[field] = "required"; return nil }
        if index[AreaID(trimmed)] != nil { return AreaID(trimmed) }
        // "Lausanne (municipality, Vaud)" as the list offers it: the name before the bracket.
        let name = trimmed.split(separator: "(").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? trimmed
        let matches = index.search(name, limit: 5)
        if let level = trimmed.split(separator: "(").dropFirst().first?.split(separator: ",").first.map({ $0.trimmingCharacters(in: .whitespaces) }),
           let exact = matches.first(where: { $0.area.level == level && AreaText.fold($0.matchedName) == AreaText.fold(name) }) {
            return exact.area.id
        }
        guard let best = matches.first else { errors[field] = "unknown_area"; return nil }
        return best.area.id
    }

    /// Kilograms as typed ("1.5", "1,5") to grams.
    static func grams(_ text: String?, field: String, into errors: inout [String: String]) -> Int? {
        guard let text, !text.isEmpty else { errors[field] = "required"; return nil }
        guard let centi = Money.minorUnits(fromText: text, maximum: 50), centi > 0 else { errors[field] = "invalid"; return nil }
        return centi * 10
    }
}

extension WebRoutes {
    static let picture = WebPath<UserID>("/people/:id/picture") { [$0.uuidString] }
    static let accountPicture = WebPath("/account/picture")
    static let travel = WebPath("/travel")
    static let becomeTraveller = WebPath("/travel/become")
    static let newTrip = WebPath("/travel/trips/new")
    static let findTrips = WebPath("/travel/find")
    static let trip = WebPath<TripID>("/travel/trips/:id") { [$0.uuidString] }
    static let cancelTrip = WebPath<TripID>("/travel/trips/:id/cancel") { [$0.uuidString] }
    static let requestPlace = WebPath<TripID>("/travel/trips/:id/requests") { [$0.uuidString] }
    static let tripRequest = WebPath<TripRequestID>("/travel/requests/:id") { [$0.uuidString] }
    static let tripRequestAction = WebPath<(TripRequestID, TripRequestUserAction)>("/travel/requests/:id/:action") { [$0.0.uuidString, $0.1.rawValue] }
}

extension WebContext {
    func areaName(_ id: String, _ index: AreaIndex) -> String {
        guard let area = index[AreaID(id)] else { return id }
        return area.name(in: lang.rawValue)
    }

    func kg(_ grams: Int) -> String { String(format: "%.1f kg", Double(grams) / 1000) }

    func tripStatus(_ status: TripStatus) -> String {
        switch status {
        case .open: t(.tripOpen)
        case .full: t(.tripFull)
        case .departed: t(.tripDeparted)
        case .cancelled: t(.tripCancelled)
        }
    }

    func requestStatus(_ p: TripRequestProgress) -> String {
        switch p {
        case .requested: t(.reqRequested)
        case .awaitingPayment: t(.reqAwaitingPayment)
        case .paid: t(.reqPaid)
        case .pickedUp: t(.reqPickedUp)
        case .delivered: t(.reqDelivered)
        case .rejected: t(.reqRejected)
        case .expired: t(.reqExpired)
        case .cancelled: t(.reqCancelled)
        case .lapsed: t(.reqLapsed)
        case .failed: t(.reqFailed)
        }
    }

    func category(_ id: String, _ tariff: TravelTariff) -> String { tariff.category(id)?.name(in: lang.rawValue) ?? id }
}

/// Travel: one's trips, the requests on them, one's own requests, and where to start.
struct TravelHubPage: PageView {
    var isTraveller: Bool
    var trips: [TripRecord]
    var sent: [Travel.RequestView]
    var received: [Travel.RequestView]
    var index: AreaIndex
    var payouts: Travel.PayoutAccountView?
    var notice: String?

    func page(_ ctx: WebContext) throws -> WebPage {
        let now = UnixTime.nowMillis
        func tripLine(_ t: TripRecord) throws -> String {
            "<li><a href=\"\(WebRoutes.trip(try t.storedID))\">\(h(ctx.areaName(t.fromAreaID, index))) → \(h(ctx.areaName(t.toAreaID, index)))</a> · \(h(t.departureDate)) \(h(t.earliest))–\(h(t.latest)) · <span class=\"status\">\(h(ctx.tripStatus(t.status(at: now))))</span></li>"
        }
        func requestLine(_ v: Travel.RequestView) throws -> String {
            let p = TripRequestProgress.of(v.request.status, shipment: v.shipment?.status)
            return "<li><a href=\"\(WebRoutes.tripRequest(try v.request.storedID))\">\(h(ctx.areaName(v.trip.fromAreaID, index))) → \(h(ctx.areaName(v.trip.toAreaID, index)))</a> · \(h(v.trip.departureDate)) · \(h(ctx.kg(v.request.grams))) · <span class=\"status\">\(h(ctx.requestStatus(p)))</span></li>"
        }
        let tripItems = try trips.map(tripLine).joined()
        let receivedItems = try received.map(requestLine).joined(), sentItems = try sent.map(requestLine).joined()
        let traveller: String
        if isTraveller {
            let payoutBlock = payouts.map { p -> String in
                let state: Text = switch p.status {
                case .none: .payoutsNone
                case .pending: .payoutsPending
                case .active: .payoutsActive
                case .restricted: .payoutsRestricted
                case .disconnected: .payoutsDisconnected
                }
                let button = p.status == .active ? "" : """
                    <form method="post" action="\(WebRoutes.payoutsStart())" class="inline"><input type="hidden" name="_csrf" value="\(h(ctx.csrf))">
                    <button type="submit" class="primary">\(h(ctx.t(p.status == .none || p.status == .disconnected ? .setUpPayouts : .continuePayouts)))</button></form>
                    """
                return """
                    <section class="payouts" data-payout-status="\(p.status.rawValue)">
                    <h2>\(h(ctx.t(.payouts)))</h2>
                    <p>\(h(ctx.t(state)))\(p.sandbox ? " <small>(\(h(ctx.t(.sandboxNote))))</small>" : "")</p>
                    \(button)
                    </section>
                    """
            } ?? ""
            traveller = """
                \(payoutBlock)
                <h2>\(h(ctx.t(.myTrips)))</h2>
                <p><a class="button primary" href="\(WebRoutes.newTrip())">\(h(ctx.t(.postTrip)))</a></p>
                \(trips.isEmpty ? "<p>\(h(ctx.t(.noTrips)))</p>" : "<ul class=\"list\">\(tripItems)</ul>")
                <h2>\(h(ctx.t(.requestsReceived)))</h2>
                \(received.isEmpty ? "<p>\(h(ctx.t(.noRequests)))</p>" : "<ul class=\"list\">\(receivedItems)</ul>")
                """
        } else {
            let form = Form(ctx: ctx, values: [:], errors: [:])
            traveller = """
                <h2>\(h(ctx.t(.becomeTraveller)))</h2>
                <p>\(h(ctx.t(.travellerTerms)))</p>
                <form method="post" action="\(WebRoutes.becomeTraveller())" class="stack">\(form.hidden())
                \(form.checkbox("acceptTerms", ctx.t(.iAcceptTerms)))
                <button type="submit">\(h(ctx.t(.becomeTraveller)))</button>
                </form>
                """
        }
        return WebPage(title: ctx.t(.travel), body: """
            <h1>\(h(ctx.t(.travel)))</h1>
            \(notice.map { "<div class=\"alert ok\" role=\"status\">\(h($0))</div>" } ?? "")
            <p>\(h(ctx.t(.travelIntro)))</p>
            <p><a class="button primary" href="\(WebRoutes.findTrips())">\(h(ctx.t(.findTraveller)))</a></p>
            <h2>\(h(ctx.t(.myRequests)))</h2>
            \(sent.isEmpty ? "<p>\(h(ctx.t(.noRequests)))</p>" : "<ul class=\"list\">\(sentItems)</ul>")
            \(traveller)
            """)
    }
}

/// The area fields offer the names as one types (a datalist the server fills with the search).
private func areaField(_ form: Form, _ name: String, _ label: String, _ ctx: WebContext) -> String {
    form.field(name, label, hint: ctx.t(.areaHint), attributes: "data-area-search list=\"areas-\(name)\" autocomplete=\"off\"")
        + "<datalist id=\"areas-\(name)\"></datalist>"
}

struct NewTripPage: PageView {
    var values: [String: String]
    var errors: [String: String] = [:]
    var tariff: TravelTariff
    var message: String?
    var status: HTTPResponseStatus = .ok

    func page(_ ctx: WebContext) -> WebPage {
        let form = Form(ctx: ctx, values: values, errors: errors)
        let categories = tariff.categories.map { c in
            form.checkbox("cat_" + c.id, c.name(in: ctx.lang.rawValue))
        }.joined()
        return WebPage(title: ctx.t(.postTrip), body: """
            <h1>\(h(ctx.t(.postTrip)))</h1>
            \(form.summary(message: message, shown: ["from", "to", "date", "earliest", "latest", "kg", "parcels", "notes"]))
            <form method="post" action="\(WebRoutes.newTrip())" class="stack">\(form.hidden())
            <div class="row">\(areaField(form, "from", ctx.t(.fromArea), ctx))\(areaField(form, "to", ctx.t(.toArea), ctx))</div>
            <div class="row">\(form.field("date", ctx.t(.departureDate), type: "date"))\(form.field("earliest", ctx.t(.earliestDeparture), type: "time"))\(form.field("latest", ctx.t(.latestDeparture), type: "time"))</div>
            <input type="hidden" name="timeZone" value="\(h(values["timeZone"] ?? "Europe/Zurich"))">
            <div class="row">\(form.field("kg", ctx.t(.roomKg), attributes: "inputmode=\"decimal\""))\(form.field("parcels", ctx.t(.roomParcels), type: "number", attributes: "min=\"1\" max=\"20\""))</div>
            <fieldset><legend>\(h(ctx.t(.categoriesTaken)))</legend>\(categories)</fieldset>
            \(form.field("notes", ctx.t(.notes), required: false))
            <button type="submit" class="primary">\(h(ctx.t(.postTrip)))</button>
            </form>
            """, status: status, scripts: ["areas"])
    }
}

struct FindTripsPage: PageView {
    var values: [String: String]
    var errors: [String: String] = [:]
    var tariff: TravelTariff
    var index: AreaIndex
    var results: [(TripMatch, TripRecord)]?
    var names: [UserID: String] = [:]
    var message: String?
    var status: HTTPResponseStatus = .ok

    func page(_ ctx: WebContext) throws -> WebPage {
        let form = Form(ctx: ctx, values: values, errors: errors)
        let options = tariff.categories.map { ($0.id, $0.name(in: ctx.lang.rawValue)) }
        var list = ""
        if let results {
            list = try results.isEmpty ? "<p>\(h(ctx.t(.noMatch)))</p>" : "<ul class=\"list\">" + results.map { match, trip -> String in
                let id = try trip.storedID
                return """
                <li><a href="\(WebRoutes.trip(id))">\(h(ctx.areaName(trip.fromAreaID, index))) → \(h(ctx.areaName(trip.toAreaID, index)))</a>
                · \(h(ctx.t(.leavesOn, trip.departureDate, trip.earliest, trip.latest))) · \(h(names[trip.travellerID] ?? "")) · <strong>\(ctx.money(match.price.total))</strong></li>
                """
            }.joined() + "</ul>"
        }
        return WebPage(title: ctx.t(.findTraveller), body: """
            <h1>\(h(ctx.t(.findTraveller)))</h1>
            \(form.summary(message: message, shown: ["from", "to", "category", "kg"]))
            <form method="get" action="\(WebRoutes.findTrips())" class="stack">
            <div class="row">\(areaField(form, "from", ctx.t(.fromArea), ctx))\(areaField(form, "to", ctx.t(.toArea), ctx))</div>
            <div class="row">\(form.select("category", ctx.t(.parcelCategory), options: options))\(form.field("kg", ctx.t(.weightKg), attributes: "inputmode=\"decimal\""))</div>
            <button type="submit" class="primary">\(h(ctx.t(.searchTrips)))</button>
            </form>
            \(list)
            """, status: status, scripts: ["areas"])
    }
}

struct TripPage: PageView {
    var trip: TripRecord
    var mine: Bool
    var travellerName: String
    var hasPicture: Bool
    var index: AreaIndex
    var tariff: TravelTariff
    var requests: [Travel.RequestView]
    var values: [String: String]
    var errors: [String: String]
    var message: String?
    var status: HTTPResponseStatus

    func page(_ ctx: WebContext) throws -> WebPage {
        let now = UnixTime.nowMillis
        let tripStatus = trip.status(at: now)
        let title = "\(ctx.areaName(trip.fromAreaID, index)) → \(ctx.areaName(trip.toAreaID, index))"
        let form = Form(ctx: ctx, values: values, errors: errors)
        let tripID = try trip.storedID
        var body = """
            <h1>\(h(title))</h1>
            <p>\(hasPicture ? "<img class=\"avatar\" src=\"\(WebRoutes.picture(trip.travellerID))\" alt=\"\" width=\"48\" height=\"48\"> " : "")<span class="status">\(h(ctx.tripStatus(tripStatus)))</span> · \(h(ctx.t(.leavesOn, trip.departureDate, trip.earliest, trip.latest))) (\(h(trip.timeZone))) · \(h(travellerName))</p>
            <p>\(h(ctx.t(.roomLeft, ctx.kg(max(0, trip.capacityGrams - trip.bookedGrams)), String(max(0, trip.capacityParcels - trip.bookedParcels)))))
            · \(h(trip.categories.split(separator: ",").map { ctx.category(String($0), tariff) }.joined(separator: ", ")))</p>
            \(trip.notes.map { "<p>\(h($0))</p>" } ?? "")
            \(trip.hiddenAt != nil ? "<p class=\"alert error\" role=\"note\">\(h(ctx.t(.hiddenByModerators, trip.hiddenReason ?? "—")))</p>" : "")
            """
        // The administration hides a trip from searches (or shows it again).
        if !mine, ctx.principal?.may(.moderate) == true {
            body += AdminPages.moderationForm(ctx, .trip(tripID), hidden: trip.hiddenAt != nil, back: WebRoutes.trip(tripID))
        }
        if mine {
            let list = try requests.map { v -> String in
                let p = TripRequestProgress.of(v.request.status, shipment: v.shipment?.status)
                return "<li><a href=\"\(WebRoutes.tripRequest(try v.request.storedID))\">\(h(ctx.kg(v.request.grams))) · \(h(ctx.category(v.request.category, tariff))) · \(h(v.request.description))</a> · <span class=\"status\">\(h(ctx.requestStatus(p)))</span></li>"
            }.joined()
            body += """
                <h2>\(h(ctx.t(.requestsReceived)))</h2>
                \(requests.isEmpty ? "<p>\(h(ctx.t(.noRequests)))</p>" : "<ul class=\"list\">\(list)</ul>")
                """
            if let caller = ctx.principal?.caller,
               TripPolicy.mayCancel(traveller: trip.travellerID, status: tripStatus, bookedParcels: trip.bookedParcels, by: caller) == .allowed {
                body += """
                    <form method="post" action="\(WebRoutes.cancelTrip(tripID))">\(form.hidden())<button type="submit" class="danger">\(h(ctx.t(.cancelTrip)))</button></form>
                    """
            }
        } else if tripStatus == .open {
            let categories = trip.categories.split(separator: ",").map { (String($0), ctx.category(String($0), tariff)) }
            let prohibited = (tariff.prohibitedItems[ctx.lang.rawValue] ?? tariff.prohibitedItems["en"] ?? []).map { "<li>\(h($0))</li>" }.joined()
            body += """
                <h2>\(h(ctx.t(.requestPlace)))</h2>
                \(form.summary(message: message, shown: ["category", "kg", "description", "declaredValue", "receiverName", "receiverEmail", "receiverPhone", "attest"]))
                <form method="post" action="\(WebRoutes.requestPlace(tripID))" class="stack">\(form.hidden())
                <div class="row">\(form.select("category", ctx.t(.parcelCategory), options: categories))\(form.field("kg", ctx.t(.weightKg), attributes: "inputmode=\"decimal\""))</div>
                \(form.field("description", ctx.t(.whatIsIt)))
                \(form.field("declaredValue", ctx.t(.declaredValue, tariff.currency), required: false, attributes: "inputmode=\"decimal\""))
                <div class="row">\(form.field("receiverName", ctx.t(.receiverName)))\(form.field("receiverEmail", ctx.t(.receiverEmail), type: "email"))</div>
                \(form.field("receiverPhone", ctx.t(.receiverPhone), type: "tel", required: false))
                \(form.select("paymentMethod", ctx.t(.payBy), options: [("card", ctx.t(.card)), ("twint", "TWINT")]))
                <p>\(h(ctx.t(.prohibitedList)))</p><ul>\(prohibited)</ul>
                \(form.checkbox("attest", ctx.t(.attestContents)))
                <button type="submit" class="primary">\(h(ctx.t(.sendRequest)))</button>
                </form>
                """
        } else if let message {
            body += "<div class=\"alert error\" role=\"alert\">\(h(message))</div>"
        }
        body += "<p><a href=\"\(WebRoutes.travel())\">\(h(ctx.t(.back)))</a></p>"
        return WebPage(title: title, body: body, status: status)
    }
}

struct TripRequestPage: PageView {
    var view: Travel.RequestView
    var me: Principal
    var people: [UserID: User]
    var index: AreaIndex
    var paidOut: Money?
    var message: String?
    var status: HTTPResponseStatus

    func page(_ ctx: WebContext) throws -> WebPage {
        let r = view.request, id = try r.storedID
        let p = TripRequestProgress.of(r.status, shipment: view.shipment?.status)
        let roles = TripRequestMachine.roles(of: me.userID, sender: r.senderID, traveller: r.travellerID)
        let csrf = "<input type=\"hidden\" name=\"_csrf\" value=\"\(h(ctx.csrf))\">"
        func name(_ id: UserID) -> String { people[id].map { TravellerName.short(first: $0.firstName, last: $0.lastName) } ?? "" }
        var actions = ""
        for action in p.actions(for: roles) {
            switch action {
            case .pay:
                if let url = view.shipment?.checkoutURL {
                    actions += "<p><a class=\"button primary\" href=\"\(h(url))\">\(h(ctx.t(.payNow, r.price.total.description)))</a>\(view.shipment?.sandbox == true ? " <small>(\(h(ctx.t(.sandboxNote))))</small>" : "")</p>"
                }
            case .accept:
                actions += "<form method=\"post\" action=\"\(WebRoutes.tripRequestAction((id, .accept)))\" class=\"inline\">\(csrf)<button type=\"submit\" class=\"primary\">\(h(ctx.t(.acceptRequest)))</button></form> "
            case .reject:
                actions += "<form method=\"post\" action=\"\(WebRoutes.tripRequestAction((id, .reject)))\" class=\"inline\">\(csrf)<button type=\"submit\">\(h(ctx.t(.rejectRequest)))</button></form> "
            case .cancel:
                actions += "<form method=\"post\" action=\"\(WebRoutes.tripRequestAction((id, .cancel)))\" class=\"inline\">\(csrf)<button type=\"submit\" class=\"danger\">\(h(ctx.t(.cancelRequest)))</button></form> "
            case .pickUp:
                actions += "<form method=\"post\" action=\"\(WebRoutes.tripRequestAction((id, .pickUp)))\" class=\"stack\">\(csrf)<p>\(h(ctx.t(.checkAgainstPhoto)))</p><button type=\"submit\" class=\"primary\">\(h(ctx.t(.iHaveTheParcel)))</button></form>"
            case .deliver:
                actions += """
                    <form method="post" action="\(WebRoutes.tripRequestAction((id, .deliver)))" class="stack">\(csrf)
                    <div class="field"><label for="f-code">\(h(ctx.t(.receiverCode)))</label><input id="f-code" name="code" inputmode="numeric" autocomplete="one-time-code" maxlength="6" required></div>
                    <button type="submit" class="primary">\(h(ctx.t(.deliverWithCode)))</button></form>
                    """
            }
        }
        let shipmentLink = try view.shipment.map { "<p><a href=\"\(WebRoutes.order(try $0.storedID))\">\(h($0.reference))</a></p>" } ?? ""
        // The traveller shares their position from here while carrying (sender and receiver follow it).
        let sharing = view.shipment.map { s in
            OrderPolicy.allows(.sharePosition, status: s.status, as: OrderPolicy.capacities(of: me.caller, for: s.parties))
                ? DriverPages.sharingToggle(ctx, onDuty: false, duty: PositionSharing.mode(for: me.caller) == .fleet) : ""
        } ?? ""
        return WebPage(title: ctx.t(.request), body: """
            <h1>\(h(ctx.t(.request))): \(h(ctx.areaName(view.trip.fromAreaID, index))) → \(h(ctx.areaName(view.trip.toAreaID, index)))</h1>
            \(message.map { "<div class=\"alert error\" role=\"alert\">\($0.isEmpty ? "" : h($0))</div>" } ?? "")
            <p><span class="status" data-request-status>\(h(ctx.requestStatus(p)))</span> · \(h(ctx.t(.leavesOn, view.trip.departureDate, view.trip.earliest, view.trip.latest)))</p>
            <dl class="facts">
            <dt>\(h(ctx.t(.sender)))</dt><dd>\(h(name(r.senderID)))</dd>
            <dt>\(h(ctx.t(.traveller)))</dt><dd>\(h(name(r.travellerID)))</dd>
            <dt>\(h(ctx.t(.whatIsIt)))</dt><dd>\(h(r.description)) · \(h(ctx.kg(r.grams)))</dd>
            <dt>\(h(ctx.t(.receiverName)))</dt><dd>\(h(r.receiverName))</dd>
            <dt>\(h(ctx.t(.price)))</dt><dd>\(ctx.money(r.price.total)) (\(h(ctx.t(.travellerShare, r.price.travellerShare.description))))</dd>
            \(paidOut.map { "<dt>\(h(ctx.t(.paidOutLedger)))</dt><dd data-paid-out>\(ctx.money($0))</dd>" } ?? "")
            </dl>
            \(shipmentLink)
            \(ConversationPolicy.roles(request: roles).isEmpty ? "" : "<div class=\"chat-link\">" + ConversationPages.button(ctx, subject: .request(id)) + "</div>")
            <div class="actions">\(actions)</div>
            \(sharing)
            <p><a href="\(WebRoutes.travel())">\(h(ctx.t(.back)))</a></p>
            """, status: status, scripts: sharing.isEmpty ? [] : ["position"])
    }
}
