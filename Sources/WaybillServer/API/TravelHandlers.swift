import Fluent
import Foundation
import OpenAPIRuntime
import Vapor
import WaybillAPI
import WaybillCore

/// Areas, the travel tariff, traveller profiles and trips: translation only (`Travel` decides).
extension APIHandler {
    var travel: Travel { get throws { Travel(request: try request) } }

    // MARK: areas

    func searchAreas(_ input: Operations.SearchAreas.Input) async throws -> Operations.SearchAreas.Output {
        _ = try await principal()
        let q = input.query
        let language = try Self.language(q.lang)
        let travel = try self.travel
        let within = q.within.map { AreaID(rawValue: $0) }
        if let text = q.q, !text.trimmingCharacters(in: .whitespaces).isEmpty {
            let (_, matches) = try await travel.searchAreas(text, limit: q.limit ?? 10, within: within)
            return .ok(.init(body: .json(.init(items: matches.map { m in
                S.AreaSummary(id: m.area.id.rawValue, level: m.area.level, name: m.area.name(in: language), matchedName: m.matchedName,
                              path: m.ancestors.map { Self.areaRef($0, language) })
            }))))
        }
        let index = try await travel.areas()
        let limit = q.limit ?? 10
        guard (1...50).contains(limit) else { throw WaybillError.invalidParameter("limit", "out_of_range") }
        let list: [Area]
        if let within {
            guard index[within] != nil else { throw WaybillError.invalidParameter("within", "unknown_area") }
            list = index.children(of: within)
        } else {
            list = index.roots
        }
        return .ok(.init(body: .json(.init(items: list.prefix(limit).map { area in
            S.AreaSummary(id: area.id.rawValue, level: area.level, name: area.name(in: language), matchedName: area.name,
                          path: index.ancestors(of: area.id).map { Self.areaRef($0, language) })
        }))))
    }

    func getArea(_ input: Operations.GetArea.Input) async throws -> Operations.GetArea.Output {
        _ = try await principal()
        let (index, area) = try await travel.area(AreaID(input.path.areaId))
        return .ok(.init(body: .json(Self.areaDetail(area, index: index, language: try Self.language(input.query.lang)))))
    }

    func createArea(_ input: Operations.CreateArea.Input) async throws -> Operations.CreateArea.Output {
        let me = try await principal()
        guard case .json(let body) = input.body else { throw WaybillError.unsupportedBody }
        let travel = try self.travel
        let area = try await travel.saveArea(Self.area(body), creating: true, by: me)
        return .created(.init(body: .json(Self.areaDetail(area, index: try await travel.areas(), language: nil))))
    }

    func updateArea(_ input: Operations.UpdateArea.Input) async throws -> Operations.UpdateArea.Output {
        let me = try await principal()
        guard case .json(let body) = input.body else { throw WaybillError.unsupportedBody }
        guard body.id == input.path.areaId else { throw WaybillError.validation("id", "differs_from_path") }
        let travel = try self.travel
        let area = try await travel.saveArea(Self.area(body), creating: false, by: me)
        return .ok(.init(body: .json(Self.areaDetail(area, index: try await travel.areas(), language: nil))))
    }

    func deleteArea(_ input: Operations.DeleteArea.Input) async throws -> Operations.DeleteArea.Output {
        let me = try await principal()
        try await travel.deleteArea(AreaID(input.path.areaId), by: me)
        return .noContent(.init())
    }

    static func area(_ body: S.AreaInput) -> Area {
        let coordinate = body.latitude.flatMap { lat in body.longitude.map { Coordinate(latitude: lat, longitude: $0) } }
        return Area(id: AreaID(body.id), parent: body.parentId.flatMap { $0.isEmpty ? nil : AreaID($0) }, level: body.level, name: body.name,
                    names: body.names?.additionalProperties ?? [:], coordinate: coordinate, keywords: body.keywords ?? [])
    }

    static func areaRef(_ area: Area, _ language: String?) -> S.AreaRef {
        S.AreaRef(id: area.id.rawValue, level: area.level, name: area.name(in: language))
    }

    static func areaDetail(_ area: Area, index: AreaIndex, language: String?) -> S.AreaDetail {
        S.AreaDetail(id: area.id.rawValue, parentId: area.parent?.rawValue, level: area.level, name: area.name,
                     names: .init(additionalProperties: area.names), latitude: area.coordinate?.latitude,
                     longitude: area.coordinate?.longitude, keywords: area.keywords,
                     path: index.ancestors(of: area.id).map { areaRef($0, language) },
                     children: index.children(of: area.id).map { areaRef($0, language) })
    }

    static func language(_ raw: String?) throws -> String? {
        guard let raw, !raw.isEmpty else { return nil }
        guard AreaRules.isValidLanguage(raw) else { throw WaybillError.invalidParameter("lang") }
        return raw.lowercased()
    }

    // MARK: the travel tariff

    func getTravelTariff(_ input: Operations.GetTravelTariff.Input) async throws -> Operations.GetTravelTariff.Output {
        _ = try await principal()
        return .ok(.init(body: .json(Self.travelTariff(try await travel.tariff()))))
    }

    func setTravelTariff(_ input: Operations.SetTravelTariff.Input) async throws -> Operations.SetTravelTariff.Output {
        let me = try await principal()
        guard case .json(let body) = input.body else { throw WaybillError.unsupportedBody }
        let tariff = TravelTariff(
            currency: body.currency,
            categories: body.categories.map { TravelCategory(id: $0.id, names: $0.names.additionalProperties, basePrice: $0.basePrice,
                                                             pricePerKg: $0.pricePerKg, maxGrams: $0.maxGrams) },
            platformFeePercent: body.platformFeePercent, prohibitedItems: body.prohibitedItems.additionalProperties)
        return .ok(.init(body: .json(Self.travelTariff(try await travel.setTariff(tariff, by: me)))))
    }

    static func travelTariff(_ t: TravelTariff) -> S.TravelTariff {
        S.TravelTariff(currency: t.currency,
                       categories: t.categories.map { .init(id: $0.id, names: .init(additionalProperties: $0.names), basePrice: $0.basePrice,
                                                            pricePerKg: $0.pricePerKg, maxGrams: $0.maxGrams) },
                       platformFeePercent: t.platformFeePercent, prohibitedItems: .init(additionalProperties: t.prohibitedItems))
    }

    // MARK: travellers and trips

    func becomeTraveller(_ input: Operations.BecomeTraveller.Input) async throws -> Operations.BecomeTraveller.Output {
        let me = try await principal()
        guard case .json(let body) = input.body else { throw WaybillError.unsupportedBody }
        let user = try await travel.becomeTraveller(acceptTerms: body.acceptTerms, by: me)
        return .ok(.init(body: .json(try Self.user(user))))
    }

    func getPayoutAccount(_ input: Operations.GetPayoutAccount.Input) async throws -> Operations.GetPayoutAccount.Output {
        let me = try await principal()
        let view = try await travel.payoutAccount(for: me)
        return .ok(.init(body: .json(.init(status: try wire(view.status), requirementsDue: view.requirementsDue,
                                           sandbox: view.sandbox))))
    }

    func startPayoutOnboarding(_ input: Operations.StartPayoutOnboarding.Input) async throws -> Operations.StartPayoutOnboarding.Output {
        let me = try await principal()
        return .ok(.init(body: .json(.init(url: try await travel.startPayoutOnboarding(by: me)))))
    }

    func listMyTrips(_ input: Operations.ListMyTrips.Input) async throws -> Operations.ListMyTrips.Output {
        let me = try await principal()
        let travel = try self.travel
        let trips = try await travel.myTrips(for: me)
        let view = try await TripView.load(trips, travel: travel, me: me)
        return .ok(.init(body: .json(.init(items: try trips.map { try view.trip($0) }))))
    }

    func postTrip(_ input: Operations.PostTrip.Input) async throws -> Operations.PostTrip.Output {
        let me = try await principal()
        guard case .json(let b) = input.body else { throw WaybillError.unsupportedBody }
        let draft = TripDraft(from: AreaID(b.from), to: AreaID(b.to), fromPoint: Self.point(b.fromPoint), toPoint: Self.point(b.toPoint),
                              date: b.date, earliest: b.earliest, latest: b.latest, timeZone: b.timeZone, capacityGrams: b.capacityGrams,
                              capacityParcels: b.capacityParcels, categories: b.categories, minimumReward: b.minimumReward, notes: b.notes)
        let travel = try self.travel
        let trip = try await travel.postTrip(draft, by: me)
        return .created(.init(body: .json(try await TripView.load([trip], travel: travel, me: me).trip(trip))))
    }

    func getTrip(_ input: Operations.GetTrip.Input) async throws -> Operations.GetTrip.Output {
        let me = try await principal()
        let travel = try self.travel
        let trip = try await travel.trip(try Self.uuid(input.path.tripId), for: me)
        return .ok(.init(body: .json(try await TripView.load([trip], travel: travel, me: me).trip(trip))))
    }

    func updateTrip(_ input: Operations.UpdateTrip.Input) async throws -> Operations.UpdateTrip.Output {
        let me = try await principal()
        guard case .json(let b) = input.body else { throw WaybillError.unsupportedBody }
        let travel = try self.travel
        let trip = try await travel.editTrip(try Self.uuid(input.path.tripId), by: me) { d in
            if let v = b.from { d.from = AreaID(v) }
            if let v = b.to { d.to = AreaID(v) }
            if let v = b.fromPoint { d.fromPoint = Self.point(v) }
            if let v = b.toPoint { d.toPoint = Self.point(v) }
            if let v = b.date { d.date = v }
            if let v = b.earliest { d.earliest = v }
            if let v = b.latest { d.latest = v }
            if let v = b.timeZone { d.timeZone = v }
            if let v = b.capacityGrams { d.capacityGrams = v }
            if let v = b.capacityParcels { d.capacityParcels = v }
            if let v = b.categories { d.categories = v }
            if let v = b.minimumReward { d.minimumReward = v }
            if let v = b.notes { d.notes = v }
        }
        return .ok(.init(body: .json(try await TripView.load([trip], travel: travel, me: me).trip(trip))))
    }

    func cancelTrip(_ input: Operations.CancelTrip.Input) async throws -> Operations.CancelTrip.Output {
        let me = try await principal()
        let travel = try self.travel
        let trip = try await travel.cancelTrip(try Self.uuid(input.path.tripId), by: me)
        return .ok(.init(body: .json(try await TripView.load([trip], travel: travel, me: me).trip(trip))))
    }

    func searchTrips(_ input: Operations.SearchTrips.Input) async throws -> Operations.SearchTrips.Output {
        let me = try await principal()
        let q = input.query
        func point(_ lat: Double?, _ lon: Double?, _ field: String) throws -> Coordinate? {
            switch (lat, lon) {
            case (nil, nil): return nil
            case let (la?, lo?): return Coordinate(latitude: la, longitude: lo)
            default: throw WaybillError.invalidParameter(field, "needs_both_coordinates")
            }
        }
        let search = TripSearch(from: AreaID(q.from), to: AreaID(q.to), earliest: q.earliest.map(Self.millis), latest: q.latest.map(Self.millis),
                                grams: q.grams, category: q.category,
                                pickup: try point(q.pickupLatitude, q.pickupLongitude, "pickupLatitude"),
                                dropoff: try point(q.dropoffLatitude, q.dropoffLongitude, "dropoffLatitude"))
        let travel = try self.travel
        let found = try await travel.searchTrips(search, limit: q.limit ?? 20, for: me)
        let view = try await TripView.load(found.map(\.1), travel: travel, me: me)
        return .ok(.init(body: .json(.init(items: try found.map { match, record in
            S.TripMatch(trip: try view.trip(record),
                        price: .init(total: Self.money(match.price.total), travellerShare: Self.money(match.price.travellerShare),
                                     platformFee: Self.money(match.price.platformFee)),
                        waitMinutes: match.waitMinutes, detourMeters: match.detourMeters)
        }))))
    }

    static func point(_ p: S.GeoPoint?) -> Coordinate? { p.map { Coordinate(latitude: $0.latitude, longitude: $0.longitude) } }

    static func millis(_ date: Date) -> Int64 {
        let ms = (date.timeIntervalSince1970 * 1000).rounded()
        return ms.isFinite && abs(ms) < 9e15 ? Int64(ms) : 0
    }
}

/// What the trip answers need besides the rows: area names and travellers' names, read once per list.
struct TripView {
    let index: AreaIndex
    let names: [UserID: String]
    let me: Principal
    let language: String?

    static func load(_ trips: [TripRecord], travel: Travel, me: Principal, language: String? = nil) async throws -> TripView {
        let index = try await travel.areas()
        let ids = Array(Set(trips.map(\.travellerID)))
        let users = ids.isEmpty ? [] : try await User.query(on: travel.db).filter(\.$id ~~ ids).all()
        var names = [UserID: String]()
        for user in users { names[try user.storedID] = TravellerName.short(first: user.firstName, last: user.lastName) }
        return TripView(index: index, names: names, me: me, language: language)
    }

    func ref(_ id: String) -> Components.Schemas.AreaRef {
        if let area = index[AreaID(id)] { return APIHandler.areaRef(area, language) }
        return .init(id: id, level: "unknown", name: id)
    }

    func trip(_ t: TripRecord) throws -> Components.Schemas.Trip {
        let mine = t.travellerID == me.userID
        let point = { (lat: Double?, lon: Double?) in TripRecord.point(lat, lon).map { Components.Schemas.GeoPoint(latitude: $0.latitude, longitude: $0.longitude) } }
        let status = t.status(at: UnixTime.nowMillis)
        return .init(
            id: try t.storedID.uuidString, traveller: .init(id: t.travellerID.uuidString, name: names[t.travellerID] ?? ""),
            from: ref(t.fromAreaID), to: ref(t.toAreaID), fromPoint: point(t.fromLatitude, t.fromLongitude),
            toPoint: point(t.toLatitude, t.toLongitude), date: t.departureDate, earliest: t.earliest, latest: t.latest,
            timeZone: t.timeZone, departsFrom: APIHandler.date(t.departsFrom), departsUntil: APIHandler.date(t.departsUntil),
            capacityGrams: t.capacityGrams, capacityParcels: t.capacityParcels,
            gramsLeft: max(0, t.capacityGrams - t.bookedGrams), parcelsLeft: max(0, t.capacityParcels - t.bookedParcels),
            categories: t.categories.split(separator: ",").map(String.init),
            minimumReward: TripPolicy.showsMinimumReward(traveller: t.travellerID, to: me.caller)
                ? t.minimumReward.map { APIHandler.money(Money($0, t.currency)) } : nil,
            notes: t.notes, status: try wire(status), mine: mine)
    }
}

/// Requests for a place on a trip: translation only (`Travel` decides; `TripRequestProgress` says
/// where a request stands and what each side may do).
extension APIHandler {
    func sendTripRequest(_ input: Operations.SendTripRequest.Input) async throws -> Operations.SendTripRequest.Output {
        let me = try await principal()
        guard case .json(let b) = input.body else { throw WaybillError.unsupportedBody }
        let method: PaymentMethod = b.paymentMethod.flatMap { PaymentMethod(rawValue: $0.rawValue) } ?? .card
        let draft = TripRequestDraft(trip: try Self.uuid(input.path.tripId), category: b.category, grams: b.grams, declaredValue: b.declaredValue,
                                     description: b.description, receiver: Recipient(name: b.receiver.name, email: b.receiver.email, phone: b.receiver.phone),
                                     attestsAllowedContents: b.attestsAllowedContents, paymentMethod: method)
        let travel = try self.travel
        let sent = try await travel.sendRequest(draft, by: me)
        return .created(.init(body: .json(try await Self.tripRequest(try await travel.request(try sent.storedID, for: me), travel: travel, me: me))))
    }

    func listTripRequests(_ input: Operations.ListTripRequests.Input) async throws -> Operations.ListTripRequests.Output {
        let me = try await principal()
        let travel = try self.travel
        let views = try await travel.requests(received: input.query.box == .received,
                                             trip: try input.query.tripId.map { try Self.uuidParameter($0, "tripId") }, for: me)
        var items: [S.TripRequest] = []
        let tripView = try await TripView.load(views.map(\.trip), travel: travel, me: me)
        let people = try await Self.requestPeople(views, travel: travel)
        for view in views { items.append(try Self.tripRequest(view, tripView: tripView, people: people, me: me)) }
        return .ok(.init(body: .json(.init(items: items))))
    }

    func getTripRequest(_ input: Operations.GetTripRequest.Input) async throws -> Operations.GetTripRequest.Output {
        let me = try await principal()
        let travel = try self.travel
        return .ok(.init(body: .json(try await Self.tripRequest(try await travel.request(try Self.uuid(input.path.requestId), for: me), travel: travel, me: me))))
    }

    func getTripRequestPhoto(_ input: Operations.GetTripRequestPhoto.Input) async throws -> Operations.GetTripRequestPhoto.Output {
        let me = try await principal()
        let (bytes, type) = try await travel.requestPhoto(try Self.uuid(input.path.requestId), for: me)
        let body = HTTPBody(bytes)
        return .ok(.init(body: type == "image/png" ? .png(body) : .jpeg(body)))
    }

    func setTripRequestPhoto(_ input: Operations.SetTripRequestPhoto.Input) async throws -> Operations.SetTripRequestPhoto.Output {
        let me = try await principal()
        guard case .multipartForm(let form) = input.body else { throw WaybillError.unsupportedBody }
        let photo = try await Self.photoPart(of: form, limit: UploadLimits.photoBytes) { if case .photo(let p) = $0 { p.payload.body } else { nil } }
        guard let photo else { throw WaybillError.validation("photo", "required") }
        let travel = try self.travel
        let id: TripRequestID = try Self.uuid(input.path.requestId)
        _ = try await travel.setRequestPhoto(id, .init(bytes: photo, field: "photo"), by: me)
        return .ok(.init(body: .json(try await Self.tripRequest(try await travel.request(id, for: me), travel: travel, me: me))))
    }

    func acceptTripRequest(_ input: Operations.AcceptTripRequest.Input) async throws -> Operations.AcceptTripRequest.Output {
        let me = try await principal()
        let travel = try self.travel
        let view = try await travel.answer(try Self.uuid(input.path.requestId), accept: true, reason: nil, by: me)
        return .ok(.init(body: .json(try await Self.tripRequest(view, travel: travel, me: me))))
    }

    func rejectTripRequest(_ input: Operations.RejectTripRequest.Input) async throws -> Operations.RejectTripRequest.Output {
        let me = try await principal()
        var reason: String?
        if case .json(let b)? = input.body { reason = b.reason }
        let travel = try self.travel
        let view = try await travel.answer(try Self.uuid(input.path.requestId), accept: false, reason: reason, by: me)
        return .ok(.init(body: .json(try await Self.tripRequest(view, travel: travel, me: me))))
    }

    func cancelTripRequest(_ input: Operations.CancelTripRequest.Input) async throws -> Operations.CancelTripRequest.Output {
        let me = try await principal()
        var reason: String?
        if case .json(let b)? = input.body { reason = b.reason?.trimmingCharacters(in: .whitespacesAndNewlines) }
        let travel = try self.travel
        let view = try await travel.cancelRequest(try Self.uuid(input.path.requestId), reason: reason?.isEmpty == false ? reason : nil, by: me)
        return .ok(.init(body: .json(try await Self.tripRequest(view, travel: travel, me: me))))
    }

    func pickUpTripRequest(_ input: Operations.PickUpTripRequest.Input) async throws -> Operations.PickUpTripRequest.Output {
        let me = try await principal()
        let travel = try self.travel
        let view = try await travel.pickUp(try Self.uuid(input.path.requestId), by: me)
        return .ok(.init(body: .json(try await Self.tripRequest(view, travel: travel, me: me))))
    }

    func deliverTripRequest(_ input: Operations.DeliverTripRequest.Input) async throws -> Operations.DeliverTripRequest.Output {
        let me = try await principal()
        guard case .json(let b) = input.body else { throw WaybillError.unsupportedBody }
        let travel = try self.travel
        let view = try await travel.deliver(try Self.uuid(input.path.requestId), code: b.code, by: me)
        return .ok(.init(body: .json(try await Self.tripRequest(view, travel: travel, me: me))))
    }

    static func requestPeople(_ views: [Travel.RequestView], travel: Travel) async throws -> [UserID: User] {
        let ids = Array(Set(views.flatMap { [$0.request.senderID, $0.request.travellerID] }))
        guard !ids.isEmpty else { return [:] }
        return Dictionary(uniqueKeysWithValues: try await User.query(on: travel.db).filter(\.$id ~~ ids).all().map { (try $0.storedID, $0) })
    }

    static func tripRequest(_ view: Travel.RequestView, travel: Travel, me: Principal) async throws -> S.TripRequest {
        try tripRequest(view, tripView: try await TripView.load([view.trip], travel: travel, me: me),
                    people: try await requestPeople([view], travel: travel), me: me)
    }

    static func tripRequest(_ view: Travel.RequestView, tripView: TripView, people: [UserID: User], me: Principal) throws -> S.TripRequest {
        let r = view.request
        let roles = TripRequestMachine.roles(of: me.userID, sender: r.senderID, traveller: r.travellerID)
        let progress = TripRequestProgress.of(r.status, shipment: view.shipment?.status)
        let seen = TripRequestVisibility.of(progress, for: roles)
        func name(_ id: UserID) -> String { people[id].map { TravellerName.short(first: $0.firstName, last: $0.lastName) } ?? "" }
        let items = (try? JSONDecoder().decode([String: [String]].self, from: Data(r.attestation.utf8))) ?? [:]
        let shipment = try view.shipment.map { o in
            S.TripRequest.ShipmentPayload(id: try o.storedID.uuidString, reference: o.reference,
                                          paymentUrl: seen.paymentLink ? o.checkoutURL : nil, sandbox: o.sandbox)
        }
        return try S.TripRequest(
            id: r.storedID.uuidString, trip: tripView.trip(view.trip), status: wire(progress),
            sender: .init(id: r.senderID.uuidString, name: name(r.senderID)),
            traveller: .init(id: r.travellerID.uuidString, name: name(r.travellerID)),
            category: r.category, grams: r.grams, declaredValue: money(Money(r.declaredValue, r.currency)), description: r.description,
            receiver: .init(name: r.receiverName, email: seen.receiverEmail ? r.receiverEmail : nil, phone: seen.receiverPhone ? r.receiverPhone : nil),
            price: .init(total: money(r.price.total), travellerShare: money(r.price.travellerShare), platformFee: money(r.price.platformFee)),
            prohibitedItems: items["en"] ?? items.values.first ?? [], attestedAt: date(r.attestedAt), hasPhoto: r.photoName != nil,
            answerBy: date(r.answerBy), payBy: r.payBy.map(date), reason: r.reason, shipment: shipment, createdAt: date(r.createdAt),
            availableActions: progress.actions(for: roles).map { try wire($0) })
    }
}

/// Profile pictures: translation only (`Accounts` and `ProfilePicturePolicy` decide).
extension APIHandler {
    func setProfilePicture(_ input: Operations.SetProfilePicture.Input) async throws -> Operations.SetProfilePicture.Output {
        let me = try await principal()
        guard case .multipartForm(let form) = input.body else { throw WaybillError.unsupportedBody }
        let photo = try await Self.photoPart(of: form, limit: ProfilePicturePolicy.maxBytes) { if case .photo(let p) = $0 { p.payload.body } else { nil } }
        guard let photo else { throw WaybillError.validation("photo", "required") }
        _ = try await Accounts(request: try request).setPicture(.init(bytes: photo, field: "photo"), by: me)
        return .noContent(.init())
    }

    func deleteProfilePicture(_ input: Operations.DeleteProfilePicture.Input) async throws -> Operations.DeleteProfilePicture.Output {
        let me = try await principal()
        try await Accounts(request: try request).deletePicture(by: me)
        return .noContent(.init())
    }

    func getProfilePicture(_ input: Operations.GetProfilePicture.Input) async throws -> Operations.GetProfilePicture.Output {
        let me = try await principal()
        let (picture, data) = try await Accounts(request: try request).picture(of: try Self.uuid(input.path.userId), for: me)
        let body = HTTPBody(data)
        return .ok(.init(body: picture.contentType == "image/png" ? .png(body) : .jpeg(body)))
    }
}
