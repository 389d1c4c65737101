import Foundation

// The shipment as one aggregate (issue 52, step 1): a value with its legs, the commands that change
// it, and one decision function that answers a command with the events it amounts to or a refusal.
// It composes the rules that were applied in three places (the order state machine and the leg
// machine in `Orders.transition`, and the counter desk's own transaction), so that the store that
// applies commands has one question to ask, and the API, the web pages and the live channel one
// list of what a viewer may do now.

/// A shipment's id. Today every shipment is an order, with the order's id.
public typealias ShipmentID = OrderID

/// A shipment as its rules see it: whether it awaits its payment, its legs in order, and whether the
/// receiver's code is asked for at delivery. Its status is derived from the legs, never stored apart.
/// (Named like `LegState`: the SDK's `Shipment` is the API's view of a shipment, and apps see both
/// modules.)
public struct ShipmentState: Sendable, Hashable {
    public struct Leg: Sendable, Hashable {
        public var kind: LegKind
        public var status: LegStatus
        /// Who carries it: the fleet's driver, the traveller.
        public var assignee: UserID?
        /// The counter of a counter leg (its id, as the legs table keeps it).
        public var counter: String?

        public init(_ kind: LegKind, _ status: LegStatus, assignee: UserID? = nil, counter: String? = nil) {
            self.kind = kind
            self.status = status
            self.assignee = assignee
            self.counter = counter
        }

        public var state: LegState { LegState(kind, status) }
    }

    public var id: ShipmentID
    public var awaitingPayment: Bool
    public var legs: [Leg]
    /// The sender asked for the receiver's code at delivery.
    public var requireRecipientCode: Bool

    public init(id: ShipmentID, awaitingPayment: Bool, legs: [Leg], requireRecipientCode: Bool = false) {
        self.id = id
        self.awaitingPayment = awaitingPayment
        self.legs = legs
        self.requireRecipientCode = requireRecipientCode
    }

    /// Where the shipment is, from its legs (`ShipmentStatus.derive`).
    public var status: OrderStatus { ShipmentStatus.derive(awaitingPayment: awaitingPayment, legs: legs.map(\.state)) }
}

/// What someone asks of a shipment.
public enum ShipmentCommand: Sendable, Hashable {
    /// Its payment arrived (the server, from the payment provider).
    case confirmPayment
    /// Dispatch gives the carrying leg to a driver; `reassign` takes it from the one who has it.
    case assign(driver: UserID)
    case reassign(driver: UserID)
    case accept
    case pickUp
    case deliver
    case fail
    case cancel
    /// A counter's staff take the parcel in: dropped off by its sender, or brought by a driver.
    case checkIn(counter: String)
    /// A counter's staff hand the parcel to its receiver.
    case handOut(counter: String)

    /// The order action this command is, where it is one (a counter's desk steps are not).
    public var orderAction: OrderAction? {
        switch self {
        case .confirmPayment: .confirmPayment
        case .assign: .assign
        case .reassign: .reassign
        case .accept: .accept
        case .pickUp: .pickup
        case .deliver: .deliver
        case .fail: .fail
        case .cancel: .cancel
        case .checkIn, .handOut: nil
        }
    }

    /// The command an order action is; assigning gives the leg to `driver`.
    public init(_ action: OrderAction, driver: UserID) {
        switch action {
        case .confirmPayment: self = .confirmPayment
        case .assign: self = .assign(driver: driver)
        case .reassign: self = .reassign(driver: driver)
        case .accept: self = .accept
        case .pickup: self = .pickUp
        case .deliver: self = .deliver
        case .fail: self = .fail
        case .cancel: self = .cancel
        }
    }

    /// A driver who stands for "anyone": what may be done does not depend on which driver.
    public static let anyDriver = UserID(rawValue: UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)))
}

/// Who asks: in what capacities they stand to this shipment (worked out from the account and the
/// shipment by `OrderPolicy`), and the counters whose desk they work at.
public struct ShipmentActor: Sendable, Hashable {
    public var capacities: Set<OrderCapacity>
    public var counters: Set<String>

    public init(_ capacities: Set<OrderCapacity>, counters: Set<String> = []) {
        self.capacities = capacities
        self.counters = counters
    }

    /// The server itself: a confirmed payment, an abandoned checkout, a ban's withdrawal.
    public static let system = ShipmentActor([.system])
}

/// What a command did, as values (no database rows): what the store writes and subscribers hear.
public enum ShipmentEvent: Sendable, Hashable {
    case paymentConfirmed
    /// Leg `leg` moved from one status to another.
    case legMoved(leg: Int, from: LegStatus, to: LegStatus)
    /// Leg `leg` is now carried by `to` (`previous` had it: a reassignment).
    case assigned(leg: Int, to: UserID, previous: UserID?)
    /// The parcel changed hands at leg `leg`, with the proof the command brought.
    case handedOver(HandOverKind, leg: Int, proof: Set<ProofKind>)
    /// The shipment's derived status changed.
    case statusChanged(from: OrderStatus, to: OrderStatus)
}

/// Why a command was refused.
public enum ShipmentRefusal: Error, Sendable, Hashable {
    /// The actor has no part in this shipment: it does not exist for them (404).
    case notFound
    /// No capacity the actor has may ever do this (403).
    case forbidden
    /// Not in the shipment's current status (409, with the status).
    case wrongStatus(OrderStatus)
    /// A counter beside the leg is not ready for it (409, with the reason).
    case counterWait(CounterWait)
    /// The hand-over needs this proof (422 on `proof`).
    case missingProof(ProofKind)
    /// The counter's desk cannot do it (409, with the reason).
    case desk(CounterDesk.Refusal)
}

/// The outcome of an allowed command: the shipment after it and the events it amounts to, in order.
public struct ShipmentDecision: Sendable, Hashable {
    public var next: ShipmentState
    public var events: [ShipmentEvent]

    /// The hand-over the command made, if it made one.
    public var handOver: (kind: HandOverKind, leg: Int)? {
        for case .handedOver(let kind, let leg, _) in events { return (kind, leg) }
        return nil
    }
}

public enum ShipmentRules {
    /// The one decision: `command` on `shipment` by `actor`, with `proof` of the hand-over it makes.
    /// Order of the refusals, as people meet them: no part in it (404), never theirs to do (403), not
    /// now (409), a counter not ready (409), a missing proof (422).
    public static func decide(_ command: ShipmentCommand, on shipment: ShipmentState, by actor: ShipmentActor,
                              proof: Set<ProofKind> = []) -> Result<ShipmentDecision, ShipmentRefusal> {
        decide(command, on: shipment, by: actor, proof: proof, checkingProof: true)
    }

    /// What `actor` may do to `shipment` now, as order actions (the proof a hand-over needs is asked
    /// for when it is done): the list the API's `availableActions`, the web pages' buttons and the
    /// live channel read. Assigning is listed when dispatch could give the carrying leg to anyone.
    public static func actions(on shipment: ShipmentState, for actor: ShipmentActor) -> [OrderAction] {
        // A shipment of one fleet leg decides exactly as the order machine's table says, for every
        // status and set of capacities (`ShipmentDecisionTests` check each decision against it):
        // read from the table, as a list of fifty shipments needs, instead of eight decisions each.
        if shipment.legs.count == 1, shipment.legs[0].kind == .fleet {
            return OrderStateMachine.availableActions(from: shipment.status, as: actor.capacities)
        }
        return OrderAction.allCases.filter { action in
            let command = ShipmentCommand(action, driver: ShipmentCommand.anyDriver)
            if case .success = decide(command, on: shipment, by: actor, proof: [], checkingProof: false) { return true }
            return false
        }
    }

    private static func decide(_ command: ShipmentCommand, on shipment: ShipmentState, by actor: ShipmentActor, proof: Set<ProofKind>,
                               checkingProof: Bool) -> Result<ShipmentDecision, ShipmentRefusal> {
        switch command {
        case .checkIn(let counter): return checkIn(at: counter, on: shipment, by: actor, proof: proof, checkingProof: checkingProof)
        case .handOut(let counter): return handOut(at: counter, on: shipment, by: actor, proof: proof, checkingProof: checkingProof)
        default: break
        }
        guard let action = command.orderAction else { return .failure(.forbidden) }
        if actor.capacities.isEmpty { return .failure(.notFound) }
        let before = shipment.status
        switch OrderStateMachine.decide(action, from: before, as: actor.capacities) {
        case .forbidden: return .failure(.forbidden)
        case .wrongStatus(let status): return .failure(.wrongStatus(status))
        case .allowed: break
        }
        var next = shipment
        var events: [ShipmentEvent] = []
        if action == .confirmPayment {
            next.awaitingPayment = false
            events.append(.paymentConfirmed)
            return .success(finish(next, from: before, events))
        }
        guard let legAction = action.legAction else { return .failure(.forbidden) }
        let states = shipment.legs.map(\.state)
        guard !states.isEmpty else { return .failure(.wrongStatus(before)) }
        let index = ShipmentRoute.actingLeg(for: legAction, in: states) ?? states.firstIndex { !$0.status.isFinal } ?? states.count - 1
        if let wait = ShipmentRoute.counterWait(legAction, at: index, in: states) { return .failure(.counterWait(wait)) }
        let leg = shipment.legs[index]
        let decision = ShipmentStatus.decide(legAction, leg: leg.state, awaitingPayment: shipment.awaitingPayment,
                                             as: Set(actor.capacities.map(\.legCapacity)))
        guard case .allowed(let status) = decision else { return .failure(.wrongStatus(before)) }
        if let kind = HandOverPolicy.kind(of: legAction, legKind: leg.kind, index: index, count: states.count), checkingProof {
            let missing = HandOverPolicy.required(kind, carriedBy: leg.kind, recipientCode: shipment.requireRecipientCode).subtracting(proof)
            if let first = missing.sorted(by: { $0.rawValue < $1.rawValue }).first { return .failure(.missingProof(first)) }
        }
        move(&next, leg: index, to: status, &events)
        switch command {
        case .assign(let driver), .reassign(let driver):
            // Dispatch assigns fleet legs only (a traveller takes a leg by accepting a request).
            if leg.kind == .fleet {
                next.legs[index].assignee = driver
                events.append(.assigned(leg: index, to: driver, previous: leg.assignee))
            }
        default: break
        }
        if legAction == .pickUp, let left = ShipmentRoute.counterLeft(byPickUpAt: index, in: states) {
            move(&next, leg: left, to: .handedOver, &events)
        }
        // A cancelled shipment's later legs will not happen either.
        if legAction == .cancel {
            for later in shipment.legs.indices.dropFirst(index + 1) where !shipment.legs[later].status.isFinal {
                move(&next, leg: later, to: .cancelled, &events)
            }
        }
        if let kind = HandOverPolicy.kind(of: legAction, legKind: leg.kind, index: index, count: states.count) {
            events.append(.handedOver(kind, leg: index, proof: proof))
        }
        return .success(finish(next, from: before, events))
    }

    /// A counter's staff take the parcel in (`CounterDesk.checkIn`): the driver's leg that brought it
    /// ends here, the counter's leg holds it.
    private static func checkIn(at counter: String, on shipment: ShipmentState, by actor: ShipmentActor, proof: Set<ProofKind>,
                                checkingProof: Bool) -> Result<ShipmentDecision, ShipmentRefusal> {
        guard actor.counters.contains(counter) else { return .failure(actor.capacities.isEmpty ? .notFound : .forbidden) }
        let before = shipment.status
        let found = CounterDesk.checkIn(legs: shipment.legs.map(\.state), counters: shipment.legs.map(\.counter), here: counter,
                                        awaitingPayment: shipment.awaitingPayment)
        guard case .success(let checkIn) = found else {
            if case .failure(let refusal) = found { return .failure(.desk(refusal)) }
            return .failure(.forbidden)
        }
        if checkingProof, let missing = HandOverPolicy.required(checkIn.handOver, carriedBy: .counter, recipientCode: false)
            .subtracting(proof).sorted(by: { $0.rawValue < $1.rawValue }).first {
            return .failure(.missingProof(missing))
        }
        var next = shipment
        var events: [ShipmentEvent] = []
        if let ends = checkIn.endsLeg { move(&next, leg: ends, to: .handedOver, &events) }
        move(&next, leg: checkIn.counterLeg, to: .held, &events)
        events.append(.handedOver(checkIn.handOver, leg: checkIn.counterLeg, proof: proof))
        return .success(finish(next, from: before, events))
    }

    /// A counter's staff hand the parcel to its receiver (`CounterDesk.handOut`), against the label and
    /// the receiver's code: the shipment is delivered.
    private static func handOut(at counter: String, on shipment: ShipmentState, by actor: ShipmentActor, proof: Set<ProofKind>,
                                checkingProof: Bool) -> Result<ShipmentDecision, ShipmentRefusal> {
        guard actor.counters.contains(counter) else { return .failure(actor.capacities.isEmpty ? .notFound : .forbidden) }
        let before = shipment.status
        let found = CounterDesk.handOut(legs: shipment.legs.map(\.state), counters: shipment.legs.map(\.counter), here: counter)
        guard case .success(let index) = found else {
            if case .failure(let refusal) = found { return .failure(.desk(refusal)) }
            return .failure(.forbidden)
        }
        if checkingProof, let missing = HandOverPolicy.required(.delivery, carriedBy: .counter, recipientCode: true)
            .subtracting(proof).sorted(by: { $0.rawValue < $1.rawValue }).first {
            return .failure(.missingProof(missing))
        }
        var next = shipment
        var events: [ShipmentEvent] = []
        move(&next, leg: index, to: .handedOver, &events)
        events.append(.handedOver(.delivery, leg: index, proof: proof))
        return .success(finish(next, from: before, events))
    }

    private static func move(_ shipment: inout ShipmentState, leg index: Int, to status: LegStatus, _ events: inout [ShipmentEvent]) {
        let from = shipment.legs[index].status
        guard from != status else { return }
        shipment.legs[index].status = status
        events.append(.legMoved(leg: index, from: from, to: status))
    }

    private static func finish(_ next: ShipmentState, from before: OrderStatus, _ events: [ShipmentEvent]) -> ShipmentDecision {
        var events = events
        if next.status != before { events.append(.statusChanged(from: before, to: next.status)) }
        return ShipmentDecision(next: next, events: events)
    }
}
