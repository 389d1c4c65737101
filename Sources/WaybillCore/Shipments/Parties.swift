import Foundation

// A shipment's parties (issue "Shipments with legs, parties and a money ledger"): its sender, its
// receiver (an account when the receiver has one, otherwise a name and contact) and whoever carries
// each leg; and what each of them sees of the others, on the least exposure that still lets each do
// their part. Today's `PartyDetails` is the one-fleet-leg case of this (a test holds them together).

/// In what capacity someone stands to a shipment. One person may have several (a sender who is
/// also the receiver; a manager who drives a leg).
public enum ShipmentRole: String, Sendable, Hashable, Codable, CaseIterable {
    case sender
    /// The account the shipment is addressed to (by its verified email).
    case receiver
    /// Carries one of its legs: a fleet driver or a traveller.
    case carrier
    /// Staff of a counter one of its legs passes through.
    case counterStaff = "counter_staff"
    case manager
}

/// Whom a shipment concerns.
public struct ShipmentParties: Sendable, Hashable {
    public var sender: UserID
    /// Nil when the receiver has no account (a name and contact only).
    public var receiver: UserID?
    /// The assignee of each leg that has one.
    public var carriers: [UserID]
    /// Staff of the counters its legs pass through.
    public var counterStaff: [UserID]

    public init(sender: UserID, receiver: UserID?, carriers: [UserID] = [], counterStaff: [UserID] = []) {
        self.sender = sender
        self.receiver = receiver
        self.carriers = carriers
        self.counterStaff = counterStaff
    }

    /// The roles `caller` has: what they see and may do follows from these. Empty: the shipment
    /// does not exist for them (404).
    public func roles(of caller: UserID, capabilities: Set<Capability>) -> Set<ShipmentRole> {
        var roles: Set<ShipmentRole> = []
        if sender == caller { roles.insert(.sender) }
        if receiver == caller { roles.insert(.receiver) }
        if carriers.contains(caller) { roles.insert(.carrier) }
        if counterStaff.contains(caller), capabilities.contains(.counter) { roles.insert(.counterStaff) }
        if capabilities.contains(.manager) { roles.insert(.manager) }
        return roles
    }
}

/// What a viewer sees of a shipment's parties and money.
public struct ShipmentVisibility: Sendable, Equatable {
    /// The sender's name.
    public var senderName: Bool
    public var senderEmail: Bool
    public var receiverEmail: Bool
    /// The receiver's phone: the sender, staff, and whoever hands the parcel over (a carrier calls
    /// ahead; a counter calls when it is waiting).
    public var receiverPhone: Bool
    /// Carriers are known by first name except to staff and to each other.
    public var carrierLastNames: Bool
    public var carrierEmail: Bool
    /// The price and what was paid (the ledger of the shipment).
    public var money: Bool
    /// The amount the carrier collects in cash at pickup, and the payment method.
    public var amountDue: Bool
    /// Signatures and photos of the hand-overs.
    public var proofs: Bool
    /// The shareable tracking link.
    public var trackingLink: Bool

    public static func visible(to roles: Set<ShipmentRole>) -> ShipmentVisibility {
        let staff = roles.contains(.manager)
        let sender = roles.contains(.sender), receiver = roles.contains(.receiver)
        let carrier = roles.contains(.carrier), counter = roles.contains(.counterStaff)
        return ShipmentVisibility(
            senderName: staff || carrier || counter || receiver,
            senderEmail: staff || sender,
            receiverEmail: staff || sender,
            receiverPhone: staff || sender || carrier || counter,
            carrierLastNames: staff || carrier,
            carrierEmail: staff,
            money: staff || sender,
            amountDue: staff || sender || carrier,
            proofs: staff || sender || receiver,
            trackingLink: staff || sender)
    }
}

extension OrderCapacity {
    /// The shipment role an order capacity is (the one-fleet-leg case); nil for the server itself.
    public var shipmentRole: ShipmentRole? {
        switch self {
        case .owner: .sender
        case .assignee: .carrier
        case .receiver: .receiver
        case .manager: .manager
        case .system: nil
        }
    }
}
