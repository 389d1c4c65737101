import Foundation
import OpenAPIRuntime
import WaybillCore

/// An account's loyalty points, what they are worth, the next expiry and the history.
public typealias LoyaltyAccountInfo = Components.Schemas.LoyaltyAccount
/// The loyalty rules in force.
public typealias LoyaltyRulesInfo = Components.Schemas.LoyaltyRules

/// Loyalty points: a delivery earns them, ``Delivery/redeemPoints`` spends them on an order, admins
/// set the rules.
extension WaybillSession {
    /// The caller's points (those past their validity are expired first) and the newest `limit` entries.
    public func loyalty(limit: Int? = nil) async throws(WaybillError) -> LoyaltyAccountInfo {
        try await call { try await $0.getLoyalty(query: .init(limit: limit)).ok.body.json }
    }

    public func loyaltyRules() async throws(WaybillError) -> LoyaltyRulesInfo {
        try await call { try await $0.getLoyaltyRules().ok.body.json }
    }

    /// Replaces the rules (admins; audited). Points already earned keep their expiry.
    @discardableResult
    public func setLoyaltyRules(_ rules: LoyaltyRules) async throws(WaybillError) -> LoyaltyRulesInfo {
        try await call {
            try await $0.putLoyaltyRules(body: .json(.init(
                pointsPerUnit: rules.pointsPerUnit, pointValue: rules.pointValue, validityDays: rules.validityDays,
                minimumRedemption: rules.minimumRedemption, maxDiscountPercent: rules.maxDiscountPercent))).ok.body.json
        }
    }
}
