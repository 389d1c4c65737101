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
        return .ok(.init(body: .json(.init(items: found.prefix(100).map(Self.candidate)))))
    }

    func findTrackingNumbers(_ input: Operations.FindTrackingNumbers.Input) async throws -> Operations.FindTrackingNumbers.Output {
        try limitCarrierLookups()
        guard case .json(let body) = input.body else { throw WaybillError.unsupportedBody }
        guard body.text.count <= 20_000 else { throw WaybillError.validation("text", "too_long") }
        let found = CarrierDetection.standard.numbers(in: body.text)
        return .ok(.init(body: .json(.init(items: found.prefix(100).map(Self.candidate)))))
    }

    // MARK: parcels one follows

    func listParcels(_ input: Operations.ListParcels.Input) async throws -> Operations.ListParcels.Output {
        let me = try await principal()
        let status = input.query.status.map { ParcelStatus(rawValue: $0.rawValue)! }
        let parcels = try await Parcels(request: try request).list(for: me, status: status)
        return .ok(.init(body: .json(.init(items: parcels.map { Self.parcel($0, candidates: false) }))))
    }

    func createParcel(_ input: Operations.CreateParcel.Input) async throws -> Operations.CreateParcel.Output {
        let me = try await principal()
        guard case .json(let body) = input.body else { throw WaybillError.unsupportedBody }
        let record = try await Parcels(request: try request).add(
            ParcelDraft(number: body.number, carrier: body.carrier, name: body.name, notes: body.notes), by: me)
        return .created(.init(body: .json(Self.parcel(record, candidates: true))))
    }

    func getParcel(_ input: Operations.GetParcel.Input) async throws -> Operations.GetParcel.Output {
        let me = try await principal()
        let parcels = Parcels(request: try request)
        let record = try await parcels.parcel(try Self.uuid(input.path.parcelId), for: me)
        return .ok(.init(body: .json(Self.parcel(record, candidates: true, events: try await parcels.events(of: record.id!)))))
    }

    func refreshParcel(_ input: Operations.RefreshParcel.Input) async throws -> Operations.RefreshParcel.Output {
        let me = try await principal()
        let parcels = Parcels(request: try request)
        let record = try await parcels.refresh(try Self.uuid(input.path.parcelId), by: me)
        return .ok(.init(body: .json(Self.parcel(record, candidates: true, events: try await parcels.events(of: record.id!)))))
    }

    func updateParcel(_ input: Operations.UpdateParcel.Input) async throws -> Operations.UpdateParcel.Output {
        let me = try await principal()
        guard case .json(let body) = input.body else { throw WaybillError.unsupportedBody }
        let record = try await Parcels(request: try request).update(try Self.uuid(input.path.parcelId), name: body.name, notes: body.notes,
                                                                    carrier: body.carrier, by: me)
        return .ok(.init(body: .json(Self.parcel(record, candidates: true))))
    }

    func deleteParcel(_ input: Operations.DeleteParcel.Input) async throws -> Operations.DeleteParcel.Output {
        let me = try await principal()
        try await Parcels(request: try request).remove(try Self.uuid(input.path.parcelId), by: me)
        return .noContent(.init())
    }

    /// A parcel for the API. Lists read names and pages from the table; only a single parcel runs
    /// the detection again, for the candidates to correct it.
    static func parcel(_ r: ParcelRecord, candidates: Bool, events: [ParcelEvent]? = nil) -> S.Parcel {
        let detection = CarrierDetection.standard
        return S.Parcel(id: r.id!.uuidString, number: r.number, carrier: r.carrier, carrierName: detection.carrierNames[r.carrier] ?? r.carrier,
                        format: r.format, pinned: r.pinned, name: r.name, notes: r.notes, status: .init(rawValue: r.status.rawValue)!,
                        trackingUrl: detection.trackingURL(format: r.format, number: r.number),
                        candidates: candidates ? detection.candidates(for: r.number).prefix(100).map(candidate) : nil,
                        events: events?.map { e in
                            S.ParcelEvent(at: date(e.at), timeZoneKnown: e.timeZoneKnown, localTime: e.localTime, code: e.rawCode,
                                          status: e.status.map { .init(rawValue: $0.rawValue)! }, description: e.description, location: e.location)
                        },
                        estimatedDelivery: r.estimatedDelivery.map(date), lastCheckedAt: r.lastCheckedAt.map(date),
                        createdAt: date(r.createdAt), updatedAt: date(r.updatedAt))
    }

    private func limitCarrierLookups() throws {
        let req = try request
        if let wait = req.application.waybill.carrierLookupLimiter.take(req.clientAddress) {
            throw WaybillError.tooManyRequests(retryAfter: wait, "Too many lookups from this address; try again in a minute.")
        }
    }

    static func candidate(_ c: CarrierCandidate) -> S.CarrierCandidate {
        S.CarrierCandidate(number: c.number, carrier: c.carrier, carrierName: c.carrierName, format: c.format, formatName: c.formatName,
                           reason: .init(rawValue: c.reason.rawValue)!, confidence: c.confidence, trackingUrl: c.trackingURL, country: c.country)
    }
}
