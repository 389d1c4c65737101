/// Where an order is in its life.
public enum OrderStatus: String, Sendable, Hashable, Codable, CaseIterable {
    /// Card or TWINT order waiting for the payment; not in the customer's history yet.
    case awaitingPayment = "awaiting_payment"
    /// Paid or confirmed; new for managers.
    case pending
    case assigned
    case accepted
    case inTransit = "in_transit"
    case delivered
    case cancelled
    /// The driver could not deliver; back with the managers for reassignment or cancellation.
    case failed

    public var isFinal: Bool { self == .delivered || self == .cancelled }
}

/// Something that can be done to an order.
public enum OrderAction: String, Sendable, Hashable, Codable, CaseIterable {
    case confirmPayment = "confirm_payment"
    case assign, reassign, accept, pickup, deliver, fail, cancel
}

/// In what capacity someone acts on an order. One person may have several: a manager who
/// assigned an order to themself is both `manager` and `assignee`.
public enum OrderCapacity: String, Sendable, Hashable, Codable, CaseIterable {
    /// The customer who placed the order.
    case owner
    /// The driver (or manager) the order is assigned to.
    case assignee
    /// The account the shipment is addressed to: its verified email is the recipient's.
    case receiver
    case manager
    /// The server itself (a confirmed payment, an abandoned checkout).
    case system
}

/// The answer to "may this person do this now?"
public enum OrderDecision: Sendable, Equatable {
    case allowed(OrderStatus)
    /// No capacity the caller has may ever do this.
    case forbidden
    /// The caller may do this, but not while the order is in its current status.
    case wrongStatus(OrderStatus)
}

/// The order state machine: which action moves which status where, and who may do it.
public enum OrderStateMachine {
    public struct Rule: Sendable, Equatable {
        public let action: OrderAction
        public let by: OrderCapacity
        public let from: Set<OrderStatus>
        public let to: OrderStatus
    }

    public static let rules: [Rule] = [
        Rule(action: .confirmPayment, by: .system, from: [.awaitingPayment], to: .pending),
        Rule(action: .assign, by: .manager, from: [.pending, .failed], to: .assigned),
        // Taking an order from its driver before pickup (a driver off sick, a better route).
        // Separate from assign so that two managers assigning at once cannot both win.
        Rule(action: .reassign, by: .manager, from: [.assigned, .accepted], to: .assigned),
        Rule(action: .accept, by: .assignee, from: [.assigned], to: .accepted),
        Rule(action: .pickup, by: .assignee, from: [.accepted], to: .inTransit),
        Rule(action: .deliver, by: .assignee, from: [.inTransit], to: .delivered),
        Rule(action: .fail, by: .assignee, from: [.assigned, .accepted, .inTransit], to: .failed),
        // The customer may cancel until the parcel is picked up.
        Rule(action: .cancel, by: .owner, from: [.awaitingPayment, .pending, .assigned, .accepted], to: .cancelled),
        // A manager may cancel at any time before delivery.
        Rule(action: .cancel, by: .manager, from: [.awaitingPayment, .pending, .assigned, .accepted, .inTransit, .failed], to: .cancelled),
        // An abandoned checkout; or, until pickup as its owner could, the shipment of a request
        // a ban withdrew (`BanWithdrawal`).
        Rule(action: .cancel, by: .system, from: [.awaitingPayment, .pending, .assigned, .accepted], to: .cancelled),
    ]

    public static func decide(_ action: OrderAction, from status: OrderStatus, as capacities: Set<OrderCapacity>) -> OrderDecision {
        let applicable = rules.filter { $0.action == action && capacities.contains($0.by) }
        if applicable.isEmpty { return .forbidden }
        if let rule = applicable.first(where: { $0.from.contains(status) }) { return .allowed(rule.to) }
        return .wrongStatus(status)
    }

    /// The actions someone in `capacities` could take now (for clients to show the right buttons).
    public static func availableActions(from status: OrderStatus, as capacities: Set<OrderCapacity>) -> [OrderAction] {
        // Both lists are `allCases`, so every status and capacity has its place.
        var mask = 0
        for (bit, capacity) in capacityOrder.enumerated() where capacities.contains(capacity) { mask |= 1 << bit }
        guard let row = statusOrder.firstIndex(of: status) else { return [] }
        return actionTable[row << capacityOrder.count | mask]
    }

    private static let statusOrder = OrderStatus.allCases
    private static let capacityOrder = OrderCapacity.allCases

    /// `availableActions` for every status and set of capacities, worked out once from `rules`: a
    /// list asks it for each of its fifty orders (4 % of the list, asked rule by rule).
    private static let actionTable: [[OrderAction]] = statusOrder.flatMap { status in
        (0..<(1 << capacityOrder.count)).map { mask in
            let capacities = Set(capacityOrder.enumerated().filter { mask & (1 << $0.offset) != 0 }.map(\.element))
            return OrderAction.allCases.filter {
                if case .allowed = decide($0, from: status, as: capacities) { return true }
                return false
            }
        }
    }
}
