import Foundation

/// A driver as dispatch weighs them for an order.
public struct DriverCandidate: Sendable, Equatable {
    public var id: UserID
    public var name: String
    public var onDuty: Bool
    /// Orders the driver still has to do (`OrderStatus.isOnDriversList`).
    public var load: Int
    /// From the driver's last position (on duty only) to the order's pickup.
    public var distanceToPickupMeters: Int?

    public init(id: UserID, name: String, onDuty: Bool, load: Int, distanceToPickupMeters: Int?) {
        self.id = id
        self.name = name
        self.onDuty = onDuty
        self.load = load
        self.distanceToPickupMeters = distanceToPickupMeters
    }
}

public enum DispatchPolicy {
    /// The order in which drivers are offered for an order: on duty before off duty, then nearest
    /// the pickup (unknown positions last), then the lightest load, then by name (so the list is
    /// stable), then by id.
    public static func rank(_ candidates: [DriverCandidate]) -> [DriverCandidate] {
        candidates.sorted { a, b in
            if a.onDuty != b.onDuty { return a.onDuty }
            let da = a.distanceToPickupMeters ?? Int.max, db = b.distanceToPickupMeters ?? Int.max
            if da != db { return da < db }
            if a.load != b.load { return a.load < b.load }
            // Plain string order: cheap (the board ranks the fleet for every card) and the same everywhere.
            if a.name != b.name { return a.name < b.name }
            return a.id.uuidString < b.id.uuidString
        }
    }

    /// Whether an order may be given to `assignee` by `caller`: to an active driver, or a manager
    /// to themself.
    public static func mayCarry(assignee: Caller, disabled: Bool, assignedBy caller: Caller) -> Bool {
        guard caller.may(.dispatch), !disabled, assignee.may(.drive) else { return false }
        // Another manager is not the fleet: a manager carries only what they take themself.
        return !assignee.may(.dispatch) || assignee.id == caller.id
    }

    /// Whether giving the order to a driver is an assignment or a reassignment (taking it from
    /// the driver who has it), by the state machine: whichever a manager may do now.
    /// Orders one bulk action on the board may change at once.
    public static let maxBulkOrders = 200

    public static func assignAction(for status: OrderStatus) -> OrderAction? {
        for action in [OrderAction.assign, .reassign] {
            if case .allowed = OrderStateMachine.decide(action, from: status, as: [.manager]) { return action }
        }
        return nil
    }
}

/// The ways an account may pay, decided once for the order form, the API and the checks on a new
/// order: card always; TWINT only in Swiss francs; cash always; a monthly invoice only for
/// companies that staff have vetted (second audit, finding 8: "company" is a box anyone ticks at
/// sign-up, and an invoice is a delivery made before anyone pays).
public enum PaymentOptions {
    public static func available(isCompany: Bool, vetted: Bool, currency: String) -> [PaymentMethod] {
        PaymentMethod.allCases.filter { refusal($0, isCompany: isCompany, vetted: vetted, currency: currency) == nil }
    }

    /// Why `method` is not open to this account (a field error code), or nil if it is.
    public static func refusal(_ method: PaymentMethod, isCompany: Bool, vetted: Bool, currency: String) -> String? {
        switch method {
        case .card, .cash: nil
        case .twint: currency == "CHF" ? nil : "twint_requires_chf"
        case .invoice: !isCompany ? "invoice_requires_company" : vetted ? nil : "company_not_vetted"
        }
    }

    /// Companies staff have vetted may pay by monthly invoice (and import deliveries, `OrderImportPolicy`).
    public static func paysByInvoice(isCompany: Bool, vetted: Bool) -> Bool { isCompany && vetted }

    /// Whether staff have vetted the account for invoices: the `invoice` capability, which managers
    /// and admins grant (`CapabilityPolicy`) and a suspension or ban takes away with the rest.
    public static func vetted(_ capabilities: Set<Capability>) -> Bool { capabilities.contains(.invoice) }

    /// Companies have monthly statements and the ledger of what they were billed, vetted or not
    /// (an account whose vetting was taken back still reads what it owes).
    public static func hasStatements(isCompany: Bool) -> Bool { isCompany }
}

/// The driver's day: their list, in the order they work through it.
public enum DriverDayPolicy {
    /// With an applied route plan: the orders in the order of their first stop still ahead in it (its
    /// `plannedOrder`, one id per stop), then those the plan does not have, as they were.
    public static func followingPlan<T>(_ items: [T], plannedOrder: [OrderID], id: (T) -> OrderID) -> [T] {
        var rank: [OrderID: Int] = [:]
        for (i, order) in plannedOrder.enumerated() where rank[order] == nil { rank[order] = i }
        return items.enumerated().sorted { a, b in
            let ra = rank[id(a.element)] ?? .max, rb = rank[id(b.element)] ?? .max
            return ra != rb ? ra < rb : a.offset < b.offset
        }.map(\.element)
    }

    /// Open work by `OrderStatus.driverListRank`, each group oldest first.
    public static func sorted<T>(_ items: [T], status: (T) -> OrderStatus, createdAt: (T) -> Int64) -> [T] {
        items.filter { status($0).driverListRank != nil }.sorted { a, b in
            let ra = status(a).driverListRank ?? .max, rb = status(b).driverListRank ?? .max
            return ra != rb ? ra < rb : createdAt(a) < createdAt(b)
        }
    }
}
