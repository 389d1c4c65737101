import Foundation
import Vapor
import WaybillAPI
import WaybillCore

/// Parcels of other carriers: the carrier suggested from a number, and numbers found in pasted
/// text (`WaybillCore.CarrierDetection`, offline). No sign-in; limited per client address.
extension APIHandler {
    func detectCarrier(_ input: Operations.DetectCarrier.Input) async throws -> Operations.DetectCarrier.Output {
        try limitCarrierLookups()
        let number = input.query.number
        guard !number.isEmpty, number.count <= 100 else { throw WaybillError.invalidParameter("number") }
        let found = CarrierDetection.standard.candidates(for: number)
        return .ok(.init(body: .json(.init(items: try found.prefix(100).map(Self.candidate)))))
    }

    func lookUpNumber(_ input: Operations.LookUpNumber.Input) async throws -> Operations.LookUpNumber.Output {
        try limitCarrierLookups()
        let req = try request
        guard input.query.number.count <= 100 else { throw WaybillError.invalidParameter("number") }
        let carrier = input.query.carrier.flatMap { $0.isEmpty ? nil : $0.lowercased() }
        let found = try await PublicLookup(services: req.application.waybill, db: req.db, logger: req.logger)
            .lookUp(input.query.number, carrier: carrier, clientAddress: req.clientAddress)
        let names = CarrierDetection.standard.carrierNames
        return .ok(.init(body: .json(try S.NumberLookup(
            number: found.number, candidates: found.candidates.prefix(100).map(Self.candidate), carrier: found.carrier,
            carrierName: found.carrier.flatMap { names[$0] },
            status: found.report.map { try wire(ParcelTracking.overall($0.events, delivered: $0.delivered)) },
            estimatedDelivery: found.report?.estimatedDelivery.map(Self.date),
            events: found.report.map { try $0.events.sorted { $0.at > $1.at }.prefix(500).map(Self.parcelEvent) },
            unknownAtCarrier: found.unknownAtCarrier, notAsked: found.notAsked.flatMap { .init(rawValue: $0) }))))
    }

    func getCarrierStatistics(_ input: Operations.GetCarrierStatistics.Input) async throws -> Operations.GetCarrierStatistics.Output {
        // Public: limited per address like the lookups, and worked out at most once every few minutes.
        try limitCarrierLookups()
        let board = try await DeliveryStats.publicBoard(try request.application.waybill)
        return .ok(.init(body: .json(Self.statistics(board, minimum: DeliveryStats.publicMinimum))))
    }

    func getMyCarrierStatistics(_ input: Operations.GetMyCarrierStatistics.Input) async throws -> Operations.GetMyCarrierStatistics.Output {
        let me = try await principal()
        let board = try await DeliveryStats.ownBoard(me.userID, try request.application.waybill)
        return .ok(.init(body: .json(Self.statistics(board, minimum: 1))))
    }

    static func statistics(_ board: (carriers: [DeliveryStatistics.Row], routes: [DeliveryStatistics.Row]), minimum: Int) -> S.CarrierStatistics {
        let names = CarrierDetection.standard.carrierNames
        func row(_ r: DeliveryStatistics.Row) -> S.CarrierStatisticsRow {
            S.CarrierStatisticsRow(carrier: r.carrier, carrierName: r.carrier == "waybill" ? "Waybill" : names[r.carrier] ?? r.carrier,
                                   origin: r.origin, destination: r.destination, count: r.count, medianHours: r.medianHours,
                                   p90Hours: r.p90Hours, firstAttemptShare: r.firstAttemptShare)
        }
        return S.CarrierStatistics(carriers: board.carriers.prefix(1000).map(row), routes: board.routes.prefix(10_000).map(row), minimumCount: minimum)
    }

    func findTrackingNumbers(_ input: Operations.FindTrackingNumbers.Input) async throws -> Operations.FindTrackingNumbers.Output {
        try limitCarrierLookups()
        guard case .json(let body) = input.body else { throw WaybillError.unsupportedBody }
        guard body.text.count <= CarrierDetection.maxTextLength else { throw WaybillError.validation("text", "too_long") }
        // Bounded work (at most `CarrierDetection.maxChecks` checks), done on the thread pool, not an event loop.
        let text = body.text
        let found = try await request.application.waybill.threadPool.runIfActive {
            CarrierDetection.standard.scan(text, maxNumbers: 100).numbers
        }
        return .ok(.init(body: .json(.init(items: try found.map(Self.candidate)))))
    }

    // MARK: parcels one follows

    func listParcels(_ input: Operations.ListParcels.Input) async throws -> Operations.ListParcels.Output {
        let me = try await principal()
        let status = try input.query.status.map { try wire($0, as: ParcelStatus.self) }
        let parcels = try await Parcels(request: try request).list(for: me, status: status)
        return .ok(.init(body: .json(.init(items: try parcels.map { try Self.parcel($0, candidates: false) }))))
    }

    func createParcelsFromText(_ input: Operations.CreateParcelsFromText.Input) async throws -> Operations.CreateParcelsFromText.Output {
        let me = try await principal()
        guard case .json(let body) = input.body else { throw WaybillError.unsupportedBody }
        let (added, skipped) = try await Parcels(request: try request).addAll(from: body.text, name: body.name, by: me)
        return .ok(.init(body: .json(.init(added: try added.map { try Self.parcel(ParcelView(record: $0, relation: .owner), candidates: false) },
                                           skipped: skipped))))
    }

    // MARK: forwarding address

    func getForwardingAddress(_ input: Operations.GetForwardingAddress.Input) async throws -> Operations.GetForwardingAddress.Output {
        let me = try await principal()
        let req = try request
        let address = try await Forwarding(services: req.application.waybill, db: req.db, logger: req.logger).address(for: me)
        return .ok(.init(body: .json(.init(address: address))))
    }

    func renewForwardingAddress(_ input: Operations.RenewForwardingAddress.Input) async throws -> Operations.RenewForwardingAddress.Output {
        let me = try await principal()
        let req = try request
        let address = try await Forwarding(services: req.application.waybill, db: req.db, logger: req.logger).address(for: me, renew: true)
        return .ok(.init(body: .json(.init(address: address))))
    }

    // MARK: shops

    /// Where the API is served (`openapi.yaml`'s server).
    static let basePath = "/api/v1"

    func listShops(_ input: Operations.ListShops.Input) async throws -> Operations.ListShops.Output {
        let me = try await principal()
        let shops = Shops(request: try request)
        return .ok(.init(body: .json(.init(items: try await shops.list(for: me).map { try Self.shop($0, shops: shops, secret: nil) }))))
    }

    func connectShop(_ input: Operations.ConnectShop.Input) async throws -> Operations.ConnectShop.Output {
        let me = try await principal()
        guard case .json(let body) = input.body else { throw WaybillError.unsupportedBody }
        let shops = Shops(request: try request)
        let (shop, secret) = try await shops.connect(platform: try wire(body.platform), name: body.name,
                                                     secret: body.secret.flatMap { $0.isEmpty ? nil : $0 }, by: me)
        return .created(.init(body: .json(try Self.shop(shop, shops: shops, secret: secret))))
    }

    func disconnectShop(_ input: Operations.DisconnectShop.Input) async throws -> Operations.DisconnectShop.Output {
        let me = try await principal()
        guard let id = ShopID(uuidString: input.path.shopId) else { throw WaybillError.invalidParameter("shopId") }
        try await Shops(request: try request).remove(id, by: me)
        return .noContent(.init())
    }

    func shopWebhook(_ input: Operations.ShopWebhook.Input) async throws -> Operations.ShopWebhook.Output {
        let req = try request
        guard let id = ShopID(uuidString: input.path.shopId) else { throw WaybillError.invalidParameter("shopId") }
        if case .urlEncodedForm = input.body {
            // WooCommerce's ping when the webhook is saved: nothing to do, but it must hear 200.
            guard try await ShopRecord.find(id, on: req.db) != nil else { throw WaybillError.notFound }
            return .ok(.init(body: .json(.init(followed: 0))))
        }
        // The signature covers the exact bytes the shop sent.
        let raw = req.body.data.map { Array($0.readableBytesView) } ?? []
        let headers = input.headers
        let followed = try await Shops(request: req).receive(id, body: raw, signature: headers.xShopifyHmacSha256 ?? headers.xWCWebhookSignature,
                                                             deliveryID: headers.xShopifyWebhookId ?? headers.xWCWebhookDeliveryID)
        return .ok(.init(body: .json(.init(followed: followed))))
    }

    static func shop(_ s: ShopRecord, shops: Shops, secret: String?) throws -> S.Shop {
        S.Shop(id: try s.storedID.uuidString, platform: try wire(s.platform), name: s.name, webhookUrl: try shops.webhookURL(s), secret: secret,
               numbersReceived: s.numbersReceived, lastDeliveryAt: s.lastDeliveryAt.map(date), createdAt: date(s.createdAt))
    }

    func listTracked(_ input: Operations.ListTracked.Input) async throws -> Operations.ListTracked.Output {
        let me = try await principal()
        let filter = TrackedFilter(rawValue: input.query.filter?.rawValue ?? "active") ?? .active
        let items = try await Parcels(request: try request).tracked(for: me, filter: filter)
        let names = CarrierDetection.standard.carrierNames
        return .ok(.init(body: .json(.init(items: try items.map { i in
            S.TrackedItem(kind: try wire(i.kind), id: i.id.uuidString, name: i.name, number: i.number, carrier: i.carrier,
                          carrierName: i.carrier == "waybill" ? "Waybill" : names[i.carrier] ?? i.carrier,
                          status: try wire(i.status), updatedAt: Self.date(i.updatedAt),
                          estimatedDelivery: i.estimatedDelivery.map(Self.date), sharedBy: i.sharedBy,
                          direction: try i.direction.map { try wire($0) }, place: i.place)
        }))))
    }

    func shareParcel(_ input: Operations.ShareParcel.Input) async throws -> Operations.ShareParcel.Output {
        let me = try await principal()
        guard case .json(let body) = input.body else { throw WaybillError.unsupportedBody }
        let view = try await Parcels(request: try request).share(try Self.uuid(input.path.parcelId), with: body.email, by: me)
        return .ok(.init(body: .json(try Self.parcel(view, candidates: false))))
    }

    func unshareParcel(_ input: Operations.UnshareParcel.Input) async throws -> Operations.UnshareParcel.Output {
        let me = try await principal()
        try await Parcels(request: try request).unshare(try Self.uuid(input.path.parcelId), user: try Self.uuid(input.path.userId), by: me)
        return .noContent(.init())
    }

    func createParcelLink(_ input: Operations.CreateParcelLink.Input) async throws -> Operations.CreateParcelLink.Output {
        let me = try await principal()
        let view = try await Parcels(request: try request).setLink(try Self.uuid(input.path.parcelId), on: true, by: me)
        return .ok(.init(body: .json(try Self.parcel(view, candidates: false))))
    }

    func revokeParcelLink(_ input: Operations.RevokeParcelLink.Input) async throws -> Operations.RevokeParcelLink.Output {
        let me = try await principal()
        let view = try await Parcels(request: try request).setLink(try Self.uuid(input.path.parcelId), on: false, by: me)
        return .ok(.init(body: .json(try Self.parcel(view, candidates: false))))
    }

    func getSharedParcel(_ input: Operations.GetSharedParcel.Input) async throws -> Operations.GetSharedParcel.Output {
        let req = try request
        let (r, events) = try await Parcels.shared(token: input.path.token, clientAddress: req.clientAddress, services: req.application.waybill, db: req.db)
        let detection = CarrierDetection.standard
        return .ok(.init(body: .json(try S.SharedParcel(
            number: r.number, carrier: r.carrier, carrierName: detection.carrierNames[r.carrier] ?? r.carrier, name: r.name,
            status: wire(r.status), trackingUrl: detection.trackingURL(format: r.format, number: r.number, carrier: r.carrier),
            estimatedDelivery: r.estimatedDelivery.map(Self.date), events: events.map(Self.parcelEvent)))))
    }

    func getParcelAlerts(_ input: Operations.GetParcelAlerts.Input) async throws -> Operations.GetParcelAlerts.Output {
        let me = try await principal()
        return .ok(.init(body: .json(try Self.alertSettings(try await Parcels(request: try request).settings(for: me)))))
    }

    func setParcelAlerts(_ input: Operations.SetParcelAlerts.Input) async throws -> Operations.SetParcelAlerts.Output {
        let me = try await principal()
        guard case .json(let body) = input.body else { throw WaybillError.unsupportedBody }
        let saved = try await Parcels(request: try request).setSettings(alerts: try wire(body.alerts), mail: body.mail,
                                                                        push: body.push, by: me)
        return .ok(.init(body: .json(try Self.alertSettings(saved))))
    }

    static func alertSettings(_ s: ParcelSettingsRecord) throws -> S.ParcelAlertSettings {
        S.ParcelAlertSettings(alerts: try wire(s.alerts), mail: s.mail, push: s.push)
    }

    func createParcel(_ input: Operations.CreateParcel.Input) async throws -> Operations.CreateParcel.Output {
        let me = try await principal()
        guard case .json(let body) = input.body else { throw WaybillError.unsupportedBody }
        let record = try await Parcels(request: try request).add(
            ParcelDraft(number: body.number, carrier: body.carrier, name: body.name, notes: body.notes), by: me)
        return .created(.init(body: .json(try Self.parcel(ParcelView(record: record, relation: .owner), candidates: true))))
    }

    func getParcel(_ input: Operations.GetParcel.Input) async throws -> Operations.GetParcel.Output {
        let me = try await principal()
        let parcels = Parcels(request: try request)
        let view = try await parcels.view(try Self.uuid(input.path.parcelId), for: me)
        return .ok(.init(body: .json(try Self.parcel(view, candidates: true, events: try await parcels.events(of: try view.record.storedID)))))
    }

    func refreshParcel(_ input: Operations.RefreshParcel.Input) async throws -> Operations.RefreshParcel.Output {
        let me = try await principal()
        let parcels = Parcels(request: try request)
        let id: ParcelID = try Self.uuid(input.path.parcelId)
        _ = try await parcels.refresh(id, by: me)
        return .ok(.init(body: .json(try Self.parcel(try await parcels.view(id, for: me), candidates: true, events: try await parcels.events(of: id)))))
    }

    func updateParcel(_ input: Operations.UpdateParcel.Input) async throws -> Operations.UpdateParcel.Output {
        let me = try await principal()
        guard case .json(let body) = input.body else { throw WaybillError.unsupportedBody }
        let id: ParcelID = try Self.uuid(input.path.parcelId)
        var alerts: ParcelAlerts?? = nil
        if let asked = body.alerts { alerts = .some(asked == ._default ? nil : ParcelAlerts(rawValue: asked.rawValue)) }
        let parcels = Parcels(request: try request)
        _ = try await parcels.update(id, number: body.number, name: body.name, notes: body.notes, carrier: body.carrier, alerts: alerts, by: me)
        return .ok(.init(body: .json(try Self.parcel(try await parcels.view(id, for: me), candidates: true))))
    }

    func deleteParcel(_ input: Operations.DeleteParcel.Input) async throws -> Operations.DeleteParcel.Output {
        let me = try await principal()
        try await Parcels(request: try request).remove(try Self.uuid(input.path.parcelId), by: me)
        return .noContent(.init())
    }

    /// A parcel for the API. Lists read names and pages from the table; only a single parcel runs
    /// the detection again, for the candidates to correct it.
    static func parcel(_ view: ParcelView, candidates: Bool, events: [ParcelEvent]? = nil) throws -> S.Parcel {
        let detection = CarrierDetection.standard
        let r = view.record
        let owner = view.relation == .owner
        return try S.Parcel(id: r.storedID.uuidString, number: r.number, carrier: r.carrier, carrierName: detection.carrierNames[r.carrier] ?? r.carrier,
                        format: r.format, pinned: r.pinned, name: r.name, notes: owner ? r.notes : nil,
                        relation: wire(view.relation), sharedBy: view.sharedBy,
                        alerts: view.alerts.map { try wire($0) },
                        sharedWith: owner && !view.sharedWith.isEmpty ? view.sharedWith.map { .init(userId: $0.id.uuidString, name: $0.name) } : nil,
                        shareUrl: owner ? view.shareURL : nil,
                        status: wire(r.status),
                        trackingUrl: detection.trackingURL(format: r.format, number: r.number, carrier: r.carrier),
                        candidates: candidates ? detection.candidates(for: r.number).prefix(100).map(candidate) : nil,
                        events: events?.map(parcelEvent),
                        estimatedDelivery: r.estimatedDelivery.map(date), lastCheckedAt: r.lastCheckedAt.map(date),
                        createdAt: date(r.createdAt), updatedAt: date(r.updatedAt))
    }

    static func parcelEvent(_ e: ParcelEvent) throws -> S.ParcelEvent {
        let place = e.place()
        return try S.ParcelEvent(at: date(e.at), timeZoneKnown: e.timeZoneKnown, localTime: e.localTime, code: e.rawCode,
                             status: e.status.map { try wire($0) }, description: e.description, location: e.location,
                             reason: e.reason.map { try wire($0) }, latitude: place?.latitude, longitude: place?.longitude,
                             placePrecision: place.map { try wire($0.precision) })
    }

    private func limitCarrierLookups() throws {
        let req = try request
        if let wait = req.application.waybill.carrierLookupLimiter.take(req.clientAddress) {
            throw WaybillError.tooManyRequests(retryAfter: wait, "Too many lookups from this address; try again in a minute.")
        }
    }

    static func candidate(_ c: CarrierCandidate) throws -> S.CarrierCandidate {
        S.CarrierCandidate(number: c.number, carrier: c.carrier, carrierName: c.carrierName, format: c.format, formatName: c.formatName,
                           reason: try wire(c.reason), confidence: c.confidence, trackingUrl: c.trackingURL, country: c.country)
    }
}
