/// Where a traveller is paid: an account with the payment provider (a Stripe Connect Express
/// account). The provider runs the onboarding (identity, bank account); Waybill keeps the status it
/// last read from the provider.
public enum PayoutAccountStatus: String, Sendable, Hashable, Codable, CaseIterable {
    /// No account yet.
    case none
    /// Onboarding started; the traveller has not finished giving their details.
    case pending
    /// Transfers are active: the traveller may accept paid requests and is paid on delivery.
    case active
    /// Details were given but the provider has not activated transfers (checking them, or it
    /// needs more).
    case restricted
    /// The traveller removed Waybill's access to their account; onboarding starts again.
    case disconnected

    /// The status an account has, from what the provider says of it: the state of its `transfers`
    /// capability (`active`, `pending`, `inactive`) and whether the details were submitted.
    public static func of(transfersCapability: String?, detailsSubmitted: Bool) -> PayoutAccountStatus {
        if transfersCapability == "active" { return .active }
        return detailsSubmitted ? .restricted : .pending
    }

    /// Whether onboarding creates a new account rather than continuing the stored one.
    public var needsNewAccount: Bool { self == .none || self == .disconnected }
}

/// The order of the provider's account events: they arrive at least once and in any order, so a
/// status read for an older event never replaces one read for a newer event.
public enum ProviderEventOrder {
    public static func supersedes(_ incoming: Int64, stored: Int64?) -> Bool {
        guard let stored else { return true }
        return incoming >= stored
    }
}

extension TripPolicy {
    /// A traveller accepts a paid request only once they can be paid for it (their transfers
    /// active): the sender's money is taken at acceptance and must be able to reach them.
    public static func mayAcceptPaid(price: Int, payouts: PayoutAccountStatus) -> Bool {
        price <= 0 || payouts == .active
    }
}

/// Who shares a position, and with whom. Drivers go on duty: their position reaches the fleet map
/// and every order they carry. Travellers are not staff: no duty, no fleet map; while they share
/// from a shipment's page their position reaches only the shipments they carry (their senders,
/// and receivers through the tracking link).
public enum PositionSharing: Sendable, Equatable {
    case fleet
    case ownShipments

    public static func mode(for caller: Caller) -> PositionSharing? {
        if caller.may(.drive) { return .fleet }
        if caller.capabilities.contains(.traveller) { return .ownShipments }
        return nil
    }
}
