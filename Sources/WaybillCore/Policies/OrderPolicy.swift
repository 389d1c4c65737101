import Foundation

// The rules about one order: who has which capacity, what each capacity sees in each status, and
// which statuses mean what to drivers, dispatchers and the public. The API, the web pages, the live
// channel and the SDK ask these; none of them keeps a status list of its own.

extension OrderStatus {
    /// The stop the assigned driver is heading for: the pickup once accepted, the drop-off in
    /// transit. Only then is the driver's position part of the order (ETA, map, live location).
    public var nextStop: ArrivalEstimate.Stop? {
        switch self {
        case .accepted: .pickup
        case .inTransit: .dropoff
        case .awaitingPayment, .pending, .assigned, .delivered, .cancelled, .failed: nil
        }
    }

    /// The assigned driver still has something to do: it counts towards their load and is on
    /// their day's list. Derived from the state machine: a status from which the assignee may act.
    public var isOnDriversList: Bool { Self.driverListStatuses.contains(self) }

    public static let driverListStatuses: Set<OrderStatus> = Set(
        OrderStateMachine.rules.filter { $0.by == .assignee }.flatMap(\.from))

    /// Where an order sits on the driver's list for the day: what is under way first, then what
    /// they accepted, then what was newly assigned (nil: not on the list).
    public var driverListRank: Int? {
        switch self {
        case .inTransit: 0
        case .accepted: 1
        case .assigned: 2
        case .awaitingPayment, .pending, .delivered, .cancelled, .failed: nil
        }
    }

    /// The order ended for whoever carried it (delivered, cancelled, or given up): its map stops
    /// showing the driver (the web maps' script reads this list).
    public var endsTheDrive: Bool { isFinal || self == .failed }

    /// The driver's part ended here: shown under "done today" on their day.
    public var endsDriversWork: Bool {
        switch self {
        case .delivered, .failed: true
        case .awaitingPayment, .pending, .assigned, .accepted, .inTransit, .cancelled: false
        }
    }

    /// The driver has set off for this order (or delivered it): from here the route so far is
    /// shown, and the public page names the driver by first name.
    public var driverHasSetOff: Bool {
        switch self {
        case .accepted, .inTransit, .delivered: true
        case .awaitingPayment, .pending, .assigned, .cancelled, .failed: false
        }
    }

    /// The parcel is still with the sender: the customer may add photos of it.
    public var parcelWithSender: Bool {
        switch self {
        case .awaitingPayment, .pending, .assigned, .accepted: true
        case .inTransit, .delivered, .cancelled, .failed: false
        }
    }

    /// On the customer's monthly statement (orders paid by invoice): everything but a cancelled order.
    public var billed: Bool { self != .cancelled }

    public static let billedStatuses = allCases.filter(\.billed)

    /// In a customer's lists: everything but a checkout not yet paid.
    public var listedForCustomer: Bool { self != .awaitingPayment }

    /// The column of the dispatch board the order sits in, if it is on the board at all.
    public var dispatchColumn: DispatchColumn? {
        switch self {
        case .pending: .new
        case .assigned, .accepted: .assigned
        case .inTransit: .underWay
        case .failed: .failed
        case .awaitingPayment, .delivered, .cancelled: nil
        }
    }
}

/// The lists of shipments a person has.
public enum ShipmentBox: String, Sendable, CaseIterable {
    /// What they sent.
    case sent
    /// What is addressed to their verified email.
    case incoming
    /// What they carry (a fleet driver's legs; a traveller's, later).
    case carrying
    /// Everything (dispatch).
    case all
}

/// The dispatch board's columns, left to right.
public enum DispatchColumn: String, Sendable, CaseIterable {
    case new, assigned, underWay = "under_way", failed

    public var statuses: [OrderStatus] { OrderStatus.allCases.filter { $0.dispatchColumn == self } }
}

/// Whom an order concerns, as the policies need it.
public struct OrderParties: Sendable, Hashable {
    public var customerID: UserID
    public var driverID: UserID?
    /// The recipient's email (lowercased), when the sender gave one.
    public var recipientEmail: String?

    public init(customerID: UserID, driverID: UserID?, recipientEmail: String? = nil) {
        self.customerID = customerID
        self.driverID = driverID
        self.recipientEmail = recipientEmail?.lowercased()
    }
}

/// Things done to an order that are not state changes.
public enum OrderSideAction: String, Sendable, CaseIterable {
    /// See the order at all (else it does not exist for the caller: 404).
    case see
    /// Read the shareable tracking link.
    case seeTrackingLink = "see_tracking_link"
    /// Make a new tracking link (the old one stops working).
    case renewTrackingLink = "renew_tracking_link"
    /// Withdraw the tracking link.
    case revokeTrackingLink = "revoke_tracking_link"
    /// Add a photo of the parcel.
    case addPhoto = "add_photo"
    /// Ask the payment provider whether the checkout was paid.
    case confirmPayment = "confirm_payment"
    /// Share one's position from the order's page while heading for one of its stops.
    case sharePosition = "share_position"
    /// Pay an order placed with card or TWINT whose checkout is not paid yet.
    case pay
    /// The receiver says the parcel reached them (seed Mesajem: "click received, then take a photo").
    case confirmReceipt = "confirm_receipt"
    /// Read the code to give at the hand-over, in one's own app, while the parcel is on its way.
    case seeRecipientCode = "see_recipient_code"
    /// Give a delivered (or failed) shipment's payment back, taking back what its carrier was paid
    /// first (a dispute: the parcel never really arrived).
    case refund
    /// Claim the insurance of an insured shipment (when is `ClaimPolicy.filing`'s to say).
    case fileClaim = "file_claim"
}

public enum OrderPolicy {
    /// The capacities in which `caller` stands to an order. Empty means the order does not exist
    /// for them.
    public static func capacities(of caller: Caller, for parties: OrderParties) -> Set<OrderCapacity> {
        var result: Set<OrderCapacity> = []
        if parties.customerID == caller.id { result.insert(.owner) }
        if parties.driverID == caller.id { result.insert(.assignee) }
        if let email = caller.verifiedEmail, email == parties.recipientEmail { result.insert(.receiver) }
        if caller.may(.dispatch) { result.insert(.manager) }
        return result
    }

    /// Whether someone in `capacities` may do `action` to an order in `status`. `.forbidden` for
    /// a capacity that never may; `.wrongStatus` for one that may, but not now.
    public static func decide(_ action: OrderSideAction, status: OrderStatus, as capacities: Set<OrderCapacity>) -> OrderDecision {
        if capacities.isEmpty { return .forbidden }
        let ownerOrManager = !capacities.isDisjoint(with: [.owner, .manager, .system])
        switch action {
        case .see:
            // A receiver learns of a shipment once it is really on its way: not an unpaid checkout.
            if capacities == [.receiver], !status.listedForCustomer { return .forbidden }
            return .allowed(status)
        case .seeTrackingLink, .renewTrackingLink:
            // A cancelled order has nothing left to follow.
            guard ownerOrManager else { return .forbidden }
            return status == .cancelled ? .wrongStatus(status) : .allowed(status)
        case .revokeTrackingLink:
            // Withdrawing a link only ever reduces what is exposed: always allowed.
            return ownerOrManager ? .allowed(status) : .forbidden
        case .addPhoto:
            guard capacities.contains(.owner) else { return .forbidden }
            return status.parcelWithSender ? .allowed(status) : .wrongStatus(status)
        case .confirmPayment:
            return ownerOrManager ? .allowed(status) : .forbidden
        case .sharePosition:
            guard capacities.contains(.assignee) else { return .forbidden }
            return status.nextStop != nil ? .allowed(status) : .wrongStatus(status)
        case .pay:
            guard capacities.contains(.owner) else { return .forbidden }
            return status == .awaitingPayment ? .allowed(status) : .wrongStatus(status)
        case .confirmReceipt:
            guard capacities.contains(.receiver) else { return .forbidden }
            return status == .delivered ? .allowed(status) : .wrongStatus(status)
        case .seeRecipientCode:
            // The receiver only: the sender's copy would let anyone who ordered take the hand-over.
            guard capacities.contains(.receiver) else { return .forbidden }
            return status == .inTransit ? .allowed(status) : .wrongStatus(status)
        case .refund:
            // Staff, once the shipment's journey ended (before that, cancelling refunds).
            guard !capacities.isDisjoint(with: [.manager, .system]) else { return .forbidden }
            return status == .delivered || status == .failed ? .allowed(status) : .wrongStatus(status)
        case .fileClaim:
            // The sender who insured it; whether now is `ClaimPolicy.filing`'s to say.
            return capacities.contains(.owner) ? .allowed(status) : .forbidden
        }
    }

    public static func allows(_ action: OrderSideAction, status: OrderStatus, as capacities: Set<OrderCapacity>) -> Bool {
        if case .allowed = decide(action, status: status, as: capacities) { return true }
        return false
    }

    /// What of the order's live delivery a caller receives over the live channel: `full` for its
    /// customer and managers, `assignee` (their own position, nothing about other drivers) for
    /// its driver; nil if they may not follow it.
    public static func liveFeed(for capacities: Set<OrderCapacity>) -> LiveFeedKind? {
        if !capacities.isDisjoint(with: [.owner, .manager, .system]) { return .full }
        if capacities.contains(.assignee) { return .assignee }
        // The receiver with an account follows in their app what a tracking link shows (the
        // carrier's first name, the ETA, the position while in transit); others use the link.
        if capacities.contains(.receiver) { return .receiver }
        return nil
    }

    public enum LiveFeedKind: Sendable, Equatable { case full, assignee, receiver }

    /// The box a caller's list opens on. Everyone sends, so it goes by the rest: dispatchers see
    /// everything, drivers what they carry, others what they sent; each switches to their other
    /// boxes (`boxes(for:)`).
    public static func defaultBox(for caller: Caller) -> ShipmentBox {
        if caller.may(.dispatch) { return .all }
        if caller.may(.drive) { return .carrying }
        return .sent
    }

    /// Which orders appear in a caller's lists when no box is asked for. A suspended account,
    /// which has no box of its default kind, still sees what it sent.
    public static func listScope(for caller: Caller) -> ListScope {
        listScope(for: caller, box: defaultBox(for: caller)) ?? .placedBy(caller.id)
    }

    /// Which shipments appear in one of a caller's boxes; nil when the box is not theirs (403).
    /// Without a box: the same as `listScope(for:)`.
    public static func listScope(for caller: Caller, box: ShipmentBox?) -> ListScope? {
        switch box {
        case nil: listScope(for: caller)
        case .sent: caller.may(.placeOrders) ? .placedBy(caller.id) : nil
        case .incoming: caller.verifiedEmail.map { .addressedTo($0) }
        // Fleet drivers, and travellers (who carry legs on their own trips).
        case .carrying: caller.may(.drive) || caller.capabilities.contains(.traveller) ? .assignedTo(caller.id) : nil
        case .all: caller.may(.dispatch) ? .all : nil
        }
    }

    /// The boxes a caller has, in the order an app shows them (seed ShipX: one account switches
    /// between sending, carrying and receiving).
    public static func boxes(for caller: Caller) -> [ShipmentBox] {
        ShipmentBox.allCases.filter { listScope(for: caller, box: $0) != nil }
    }

    public enum ListScope: Sendable, Hashable {
        /// The customer's own orders, without checkouts not yet paid (`OrderStatus.listedForCustomer`).
        case placedBy(UserID)
        case assignedTo(UserID)
        /// Shipments addressed to this (verified) email, without checkouts not yet paid.
        case addressedTo(String)
        case all
    }
}

/// Which details of an order's parties a viewer sees, decided once for the API, the web app and
/// the SDK alike, on the least exposure that still lets each one do their part: the driver may
/// call the recipient but needs neither the recipient's nor the customer's email; the customer
/// knows their driver by first name.
public struct PartyDetails: Sendable, Equatable {
    /// Who ordered (the customer themself needs no reminder).
    public var customer: Bool
    public var customerEmail: Bool
    public var recipientEmail: Bool
    public var recipientPhone: Bool
    public var driverEmail: Bool
    /// The last names of the staff who handle the order (its driver, the people in its timeline).
    public var staffLastNames: Bool

    /// The price, the payment and what it cost: not the receiver's business (a present stays a present).
    public var money: Bool

    public static func visible(to capacities: Set<OrderCapacity>) -> PartyDetails {
        let staff = capacities.contains(.manager) || capacities.contains(.system)
        let ownerOrStaff = capacities.contains(.owner) || staff
        let receiver = capacities.contains(.receiver)
        return PartyDetails(customer: staff || capacities.contains(.assignee) || receiver, customerEmail: ownerOrStaff,
                            recipientEmail: ownerOrStaff || receiver,
                            recipientPhone: ownerOrStaff || capacities.contains(.assignee) || receiver,
                            driverEmail: staff, staffLastNames: staff || capacities.contains(.assignee),
                            money: ownerOrStaff || capacities.contains(.assignee))
    }
}

/// What anyone holding an order's tracking link sees, by status: the stages always; the driver's
/// first name once they set off; the ETA while heading for a stop; the position only in transit
/// (where the driver is before pickup is nobody's business but the sender's).
public struct PublicTrackingView: Sendable, Equatable {
    public var driverFirstName: Bool
    public var eta: Bool
    public var position: Bool

    public static func visible(in status: OrderStatus) -> PublicTrackingView {
        PublicTrackingView(driverFirstName: status.driverHasSetOff, eta: status.nextStop != nil, position: status == .inTransit)
    }
}
