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
