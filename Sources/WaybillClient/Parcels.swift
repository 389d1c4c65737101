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

    /// Where a parcel is, without an account: the carriers its number may belong to and, when the
    /// server can ask the likeliest (or the chosen) carrier, its status and events.
    public func lookUpNumber(_ number: String, carrier: String? = nil) async throws(WaybillError) -> Components.Schemas.NumberLookup {
        try await call { try await $0.lookUpNumber(query: .init(number: number, carrier: carrier)).ok.body.json }
    }

    /// How fast each carrier delivers: the public board (groups of at least five), or with
    /// `mine` the signed-in person's own parcels and shipments.
    public func carrierStatistics(mine: Bool = false) async throws(WaybillError) -> Components.Schemas.CarrierStatistics {
        if mine { return try await call { try await $0.getMyCarrierStatistics().ok.body.json } }
        return try await call { try await $0.getCarrierStatistics().ok.body.json }
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

    /// Follows every tracking number in pasted text (a shipping confirmation); numbers already
    /// followed come back in `skipped`.
    public func addParcels(fromText text: String, name: String? = nil) async throws(WaybillError) -> (added: [FollowedParcel], skipped: [String]) {
        let reply = try await call { try await $0.createParcelsFromText(body: .json(.init(text: text, name: name))).ok.body.json }
        return (reply.added, reply.skipped)
    }

    /// Connects a Shopify or WooCommerce shop: the answer holds its webhook URL and, this once, its
    /// signing secret (Shopify's own when given).
    public func connectShop(platform: ShopPlatform, name: String, secret: String? = nil) async throws(WaybillError) -> Components.Schemas.Shop {
        try await call {
            try await $0.connectShop(body: .json(.init(platform: .init(rawValue: platform.rawValue)!, name: name, secret: secret))).created.body.json
        }
    }

    public func shops() async throws(WaybillError) -> [Components.Schemas.Shop] {
        try await call { try await $0.listShops().ok.body.json.items }
    }

    public func disconnectShop(_ id: UUID) async throws(WaybillError) {
        _ = try await call { try await $0.disconnectShop(path: .init(shopId: id.uuidString.lowercased())).noContent }
    }

    /// Everything you follow: parcels of other carriers and Waybill's own shipments, in one list
    /// with the same statuses, most recently changed first.
    public func tracked(_ filter: TrackedFilter = .active) async throws(WaybillError) -> [Components.Schemas.TrackedItem] {
        try await call { try await $0.listTracked(query: .init(filter: .init(rawValue: filter.rawValue)!)).ok.body.json.items }
    }

    /// One parcel, with the carriers its number may belong to.
    public func parcel(_ id: ParcelID) async throws(WaybillError) -> FollowedParcel {
        try await call { try await $0.getParcel(path: .init(parcelId: id.uuidString.lowercased())).ok.body.json }
    }

    /// Renames, annotates (an empty string clears), corrects the carrier (pinned) or the tracking
    /// number (another parcel at the carrier: its carrier suggested again, its old events gone).
    public func updateParcel(_ id: ParcelID, number: String? = nil, name: String? = nil, notes: String? = nil,
                             carrier: String? = nil) async throws(WaybillError) -> FollowedParcel {
        try await call {
            try await $0.updateParcel(path: .init(parcelId: id.uuidString.lowercased()),
                                      body: .json(.init(number: number, carrier: carrier, name: name, notes: notes))).ok.body.json
        }
    }

    /// Asks the carrier now (once every five minutes per parcel); the parcel with its events.
    public func refreshParcel(_ id: ParcelID) async throws(WaybillError) -> FollowedParcel {
        try await call { try await $0.refreshParcel(path: .init(parcelId: id.uuidString.lowercased())).ok.body.json }
    }

    /// Stops following a parcel (its owner), or leaves a parcel shared with you.
    public func removeParcel(_ id: ParcelID) async throws(WaybillError) {
        _ = try await call { try await $0.deleteParcel(path: .init(parcelId: id.uuidString.lowercased())).noContent }
    }

    /// When you are told about this parcel (nil: as for all your parcels).
    public func setParcelAlerts(_ id: ParcelID, _ alerts: ParcelAlerts?) async throws(WaybillError) -> FollowedParcel {
        let value: Operations.UpdateParcel.Input.Body.JsonPayload.AlertsPayload = alerts.map { .init(rawValue: $0.rawValue)! } ?? ._default
        return try await call {
            try await $0.updateParcel(path: .init(parcelId: id.uuidString.lowercased()), body: .json(.init(alerts: value))).ok.body.json
        }
    }

    /// Shares a parcel with the Waybill account behind `email`: it appears in their list.
    public func shareParcel(_ id: ParcelID, with email: String) async throws(WaybillError) -> FollowedParcel {
        try await call { try await $0.shareParcel(path: .init(parcelId: id.uuidString.lowercased()), body: .json(.init(email: email))).ok.body.json }
    }

    /// Stops sharing a parcel with someone (or, with your own id, leaves a parcel shared with you).
    public func unshareParcel(_ id: ParcelID, with user: UserID) async throws(WaybillError) {
        _ = try await call {
            try await $0.unshareParcel(path: .init(parcelId: id.uuidString.lowercased(), userId: user.uuidString.lowercased())).noContent
        }
    }

    /// A new public link to the parcel (`shareUrl`); the old one stops working.
    public func createParcelLink(_ id: ParcelID) async throws(WaybillError) -> FollowedParcel {
        try await call { try await $0.createParcelLink(path: .init(parcelId: id.uuidString.lowercased())).ok.body.json }
    }

    public func revokeParcelLink(_ id: ParcelID) async throws(WaybillError) -> FollowedParcel {
        try await call { try await $0.revokeParcelLink(path: .init(parcelId: id.uuidString.lowercased())).ok.body.json }
    }

    /// What a parcel's public link shows (no sign-in).
    public func sharedParcel(token: String) async throws(WaybillError) -> Components.Schemas.SharedParcel {
        try await call { try await $0.getSharedParcel(path: .init(token: token)).ok.body.json }
    }

    /// When and how you are told about your parcels' news.
    public func parcelAlertSettings() async throws(WaybillError) -> Components.Schemas.ParcelAlertSettings {
        try await call { try await $0.getParcelAlerts().ok.body.json }
    }

    public func setParcelAlertSettings(_ alerts: ParcelAlerts, mail: Bool, push: Bool) async throws(WaybillError) -> Components.Schemas.ParcelAlertSettings {
        try await call {
            try await $0.setParcelAlerts(body: .json(.init(alerts: .init(rawValue: alerts.rawValue)!, mail: mail, push: push))).ok.body.json
        }
    }
}
