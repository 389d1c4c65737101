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

/// A parcel of another carrier the signed-in person follows.
public typealias FollowedParcel = Components.Schemas.Parcel

extension WaybillSession {
    /// Follows a parcel by its number; `carrier` chooses one instead of the suggestion (pinned).
    public func addParcel(_ draft: ParcelDraft) async throws(WaybillError) -> FollowedParcel {
        try await call {
            try await $0.createParcel(body: .json(.init(number: draft.number, carrier: draft.carrier, name: draft.name, notes: draft.notes))).created.body.json
        }
    }

    /// The parcels one follows, newest first.
    public func parcels(status: ParcelStatus? = nil) async throws(WaybillError) -> [FollowedParcel] {
        try await call { try await $0.listParcels(query: .init(status: status.map { .init(rawValue: $0.rawValue)! })).ok.body.json.items }
    }

    /// One parcel, with the carriers its number may belong to.
    public func parcel(_ id: ParcelID) async throws(WaybillError) -> FollowedParcel {
        try await call { try await $0.getParcel(path: .init(parcelId: id.uuidString.lowercased())).ok.body.json }
    }

    /// Renames, annotates (an empty string clears) or corrects the carrier (pinned).
    public func updateParcel(_ id: ParcelID, name: String? = nil, notes: String? = nil, carrier: String? = nil) async throws(WaybillError) -> FollowedParcel {
        try await call {
            try await $0.updateParcel(path: .init(parcelId: id.uuidString.lowercased()), body: .json(.init(carrier: carrier, name: name, notes: notes))).ok.body.json
        }
    }

    /// Asks the carrier now (once every five minutes per parcel); the parcel with its events.
    public func refreshParcel(_ id: ParcelID) async throws(WaybillError) -> FollowedParcel {
        try await call { try await $0.refreshParcel(path: .init(parcelId: id.uuidString.lowercased())).ok.body.json }
    }

    /// Stops following a parcel.
    public func removeParcel(_ id: ParcelID) async throws(WaybillError) {
        _ = try await call { try await $0.deleteParcel(path: .init(parcelId: id.uuidString.lowercased())).noContent }
    }
}
