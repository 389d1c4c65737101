import Foundation
import OpenAPIRuntime
import WaybillCore

/// A carrier and format a tracking number may belong to, as the server ranks it.
public typealias CarrierSuggestion = Components.Schemas.CarrierCandidate

/// Parcels of other carriers. The suggestion needs no sign-in; apps may also run
/// `WaybillCore.CarrierDetection.standard` themselves, offline, with the same table.
extension WaybillSession {
    /// The carriers `number` may belong to, best first (empty: no known format).
    public func detectCarrier(_ number: String) async throws(WaybillError) -> [CarrierSuggestion] {
        try await call { try await $0.detectCarrier(query: .init(number: number)).ok.body.json.items }
    }

    /// The tracking numbers in pasted text (a shipping confirmation), each with its likeliest carrier.
    public func findTrackingNumbers(in text: String) async throws(WaybillError) -> [CarrierSuggestion] {
        try await call { try await $0.findTrackingNumbers(body: .json(.init(text: text))).ok.body.json.items }
    }
}
