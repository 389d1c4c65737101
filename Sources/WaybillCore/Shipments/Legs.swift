import Foundation

// Shipments with legs (issue "Shipments with legs, parties and a money ledger"), the pure part:
// what a leg is, the state machine of each kind of leg, the shipment's status derived from its
// legs, and the proof each hand-over needs. A shipment is what the customer bought (today's order:
// same public id and reference); it moves through one or more legs, each carried by someone.

/// Who carries a leg.
public enum LegKind: String, Sendable, Hashable, Codable, CaseIterable {
    /// One of the company's drivers, dispatched.
    case fleet
    /// A person who takes the parcel along on a trip they make anyway.
    case traveller
    /// An outside carrier (DHL, La Poste, …): Waybill only follows its tracking number.
    case carrier
    /// A reception counter holds the parcel until the next leg or the receiver collects it.
    case counter
}

/// Where a leg is.
public enum LegStatus: String, Sendable, Hashable, Codable, CaseIterable {
    /// Nobody carries it yet: waiting for dispatch, for a traveller to accept, for the carrier's
    /// first scan, or for the parcel to be dropped at the counter.
    case open
    /// A driver is named (fleet).
    case assigned
    /// The one carrying it said yes (a fleet driver, a traveller).
    case accepted
    /// The parcel is on its way.
    case inTransit = "in_transit"
    /// The parcel is at a counter.
    case held
    /// The leg is done: the parcel went to the next leg or to the receiver.
    case handedOver = "handed_over"
    /// It could not be done; back with dispatch.
    case failed
    case cancelled

    public var isFinal: Bool { self == .handedOver || self == .cancelled }
}

/// Something done to a leg.
public enum LegAction: String, Sendable, Hashable, Codable, CaseIterable {
    case assign, reassign, accept
    /// A traveller gives back a request they accepted, before taking the parcel.
    case decline
    case pickUp = "pick_up"
    /// The parcel is received at a counter.
    case dropOff = "drop_off"
    /// The carrier reports the parcel moving.
    case track
    case handOver = "hand_over"
    case fail, cancel
}

/// In what capacity someone acts on a leg.
public enum LegCapacity: String, Sendable, Hashable, Codable, CaseIterable {
    /// Whoever sent the shipment.
    case sender
    /// Whoever carries this leg: the driver, the traveller.
    case assignee
    case manager
    /// Staff of the counter that holds (or will hold) the parcel.
    case counterStaff = "counter_staff"
    /// The account the shipment is addressed to: moves no leg (they confirm receipt, a hand-over).
    case receiver
    /// The server itself: a carrier's tracking update, an abandoned checkout.
    case system
}

/// The answer to "may this capacity do this to the leg now?"
public enum LegDecision: Sendable, Equatable {
    case allowed(LegStatus)
    case forbidden
    case wrongStatus(LegStatus)
}

/// The state machine of each kind of leg: which action moves which status where, and who may.
public enum LegStateMachine {
    public struct Rule: Sendable, Equatable {
        public let action: LegAction
        public let by: LegCapacity
        public let from: Set<LegStatus>
        public let to: LegStatus
    }

    private static func rule(_ action: LegAction, _ by: LegCapacity, _ from: Set<LegStatus>, _ to: LegStatus) -> Rule {
        Rule(action: action, by: by, from: from, to: to)
    }

    public static func rules(for kind: LegKind) -> [Rule] {
        switch kind {
        case .fleet: [
            rule(.assign, .manager, [.open, .failed], .assigned),
            // Taking the leg from its driver before pickup; separate from assign so two managers
            // assigning at once cannot both win.
            rule(.reassign, .manager, [.assigned, .accepted], .assigned),
            rule(.accept, .assignee, [.assigned], .accepted),
            rule(.pickUp, .assignee, [.accepted], .inTransit),
            rule(.handOver, .assignee, [.inTransit], .handedOver),
            rule(.fail, .assignee, [.assigned, .accepted, .inTransit], .failed),
            // The sender may cancel until the parcel is picked up; a manager until it arrives.
            rule(.cancel, .sender, [.open, .assigned, .accepted], .cancelled),
            rule(.cancel, .manager, [.open, .assigned, .accepted, .inTransit, .failed], .cancelled),
        ]
        case .traveller: [
            // The traveller accepts a sender's request for their trip, or gives it back before
            // taking the parcel (the leg is open again for another trip).
            rule(.accept, .assignee, [.open], .accepted),
            rule(.decline, .assignee, [.accepted], .open),
            rule(.pickUp, .assignee, [.accepted], .inTransit),
            rule(.handOver, .assignee, [.inTransit], .handedOver),
            rule(.fail, .assignee, [.accepted, .inTransit], .failed),
            rule(.cancel, .sender, [.open, .accepted], .cancelled),
            rule(.cancel, .manager, [.open, .accepted, .inTransit, .failed], .cancelled),
        ]
        case .carrier: [
            // Waybill follows: the carrier's own events move the leg.
            rule(.track, .system, [.open, .inTransit], .inTransit),
            rule(.handOver, .system, [.open, .inTransit], .handedOver),
            rule(.fail, .system, [.open, .inTransit], .failed),
            rule(.cancel, .sender, [.open], .cancelled),
            rule(.cancel, .manager, [.open, .inTransit, .failed], .cancelled),
        ]
        case .counter: [
            rule(.dropOff, .counterStaff, [.open], .held),
            rule(.handOver, .counterStaff, [.held], .handedOver),
            rule(.fail, .counterStaff, [.held], .failed),
            rule(.cancel, .sender, [.open], .cancelled),
            rule(.cancel, .manager, [.open, .held, .failed], .cancelled),
        ]
        }
    }

    public static func decide(_ action: LegAction, kind: LegKind, from status: LegStatus, as capacities: Set<LegCapacity>) -> LegDecision {
        let applicable = rules(for: kind).filter { $0.action == action && capacities.contains($0.by) }
        if applicable.isEmpty { return .forbidden }
        if let rule = applicable.first(where: { $0.from.contains(status) }) { return .allowed(rule.to) }
        return .wrongStatus(status)
    }

    /// The statuses a leg of `kind` can ever be in.
    public static func statuses(of kind: LegKind) -> Set<LegStatus> {
        var reachable: Set<LegStatus> = [.open]
        var frontier: [LegStatus] = [.open]
        while let status = frontier.popLast() {
            for rule in rules(for: kind) where rule.from.contains(status) && !reachable.contains(rule.to) {
                reachable.insert(rule.to)
                frontier.append(rule.to)
            }
        }
        return reachable
    }
}

/// A shipment's legs, in order, as far as its status needs them.
public struct LegState: Sendable, Hashable {
    public var kind: LegKind
    public var status: LegStatus

    public init(_ kind: LegKind, _ status: LegStatus) {
        self.kind = kind
        self.status = status
    }
}

public enum ShipmentStatus {
    /// The shipment's status, from its legs: the one function that says it. A shipment is paid (or
    /// confirmed) before any leg moves; it is delivered when every leg is handed over, failed when
    /// a leg failed, and otherwise where its first unfinished leg is (in transit once any leg is done).
    /// A counter the sender drops the parcel at (a counter leg with a leg after it) is where the
    /// parcel waits for its driver: until the driver has it, the shipment is where the driver's leg is.
    public static func derive(awaitingPayment: Bool, legs: [LegState]) -> OrderStatus {
        if legs.contains(where: { $0.status == .cancelled }) { return .cancelled }
        if awaitingPayment { return .awaitingPayment }
        guard var current = legs.firstIndex(where: { $0.status != .handedOver }) else {
            return legs.isEmpty ? .pending : .delivered
        }
        if legs.contains(where: { $0.status == .failed }) { return .failed }
        if current == 0, legs[0].kind == .counter, legs.count > 1 { current = 1 }
        if current > 0, !(current == 1 && legs[0].kind == .counter && legs[0].status != .handedOver) { return .inTransit }
        switch legs[current].status {
        case .open: return .pending
        case .assigned: return .assigned
        case .accepted: return .accepted
        case .inTransit, .held: return .inTransit
        case .handedOver: return .delivered
        case .failed: return .failed
        case .cancelled: return .cancelled
        }
    }

    /// Whether `action` may be done to a leg of a shipment that may still be awaiting payment:
    /// until it is paid, the legs wait (only cancelling is possible).
    /// An abandoned checkout (the server, `system`) cancels a shipment nobody has paid; a ban
    /// (`BanWithdrawal`) has the server cancel one before pickup, as its owner could.
    public static func decide(_ action: LegAction, leg: LegState, awaitingPayment: Bool, as capacities: Set<LegCapacity>) -> LegDecision {
        // (A traveller's leg waits for the payment accepted: the traveller said yes first.)
        if action == .cancel, capacities.contains(.system), awaitingPayment,
           leg.status == .open || leg.kind == .traveller && leg.status == .accepted { return .allowed(.cancelled) }
        if action == .cancel, capacities.contains(.system), [.open, .assigned, .accepted].contains(leg.status) { return .allowed(.cancelled) }
        let decision = LegStateMachine.decide(action, kind: leg.kind, from: leg.status, as: capacities)
        if awaitingPayment, action != .cancel, case .allowed = decision { return .wrongStatus(leg.status) }
        if decision == .forbidden, action == .cancel, capacities.contains(.system) { return .wrongStatus(leg.status) }
        return decision
    }
}

/// A hand-over: the parcel changes hands, and the record keeps its proof, who and when.
public enum HandOverKind: String, Sendable, Hashable, Codable, CaseIterable {
    /// From the sender to the first leg.
    case pickup
    /// Into a counter's keeping.
    case counterDropOff = "counter_drop_off"
    /// From one leg to the next.
    case legToLeg = "leg_to_leg"
    /// To the receiver.
    case delivery
    /// The receiver, with an account, confirms they have it ("received", then a photo).
    case receipt
}

/// What proves a hand-over.
public enum ProofKind: String, Sendable, Hashable, Codable, CaseIterable {
    case signature, photo
    /// A one-time code the other side gives (the receiver's code, a traveller's collection code).
    case code
    /// The parcel's QR label scanned.
    case qrScan = "qr_scan"
    /// The outside carrier's own delivery event.
    case carrierEvent = "carrier_event"
}

public enum HandOverPolicy {
    /// Which hand-over an action on the leg at `index` (of `count` legs) is, if it is one.
    public static func kind(of action: LegAction, legKind: LegKind, index: Int, count: Int) -> HandOverKind? {
        switch action {
        case .pickUp: index == 0 ? .pickup : .legToLeg
        case .dropOff: .counterDropOff
        case .handOver: index == count - 1 ? .delivery : (legKind == .counter ? .legToLeg : nil)
        case .assign, .reassign, .accept, .decline, .track, .fail, .cancel: nil
        }
    }

    /// The proof a hand-over must carry (others may be added, such as an optional photo).
    /// `recipientCode`: the sender asked for the receiver's code at delivery.
    public static func required(_ kind: HandOverKind, carriedBy legKind: LegKind, recipientCode: Bool) -> Set<ProofKind> {
        switch (kind, legKind) {
        case (.delivery, .fleet): recipientCode ? [.signature, .code] : [.signature]
        // A traveller proves delivery with the receiver's code, always (the payout depends on it).
        case (.delivery, .traveller): [.code]
        case (.delivery, .carrier): [.carrierEvent]
        case (.delivery, .counter): recipientCode ? [.qrScan, .code] : [.qrScan, .signature]
        // The traveller checks the parcel against the sender's photo and confirms (a photo optional).
        case (.pickup, .traveller): []
        case (.pickup, .fleet), (.pickup, .carrier), (.pickup, .counter): []
        case (.counterDropOff, _), (.legToLeg, _): [.qrScan]
        // The receiver's own word; a photo is asked for but a desk has no camera.
        case (.receipt, _): []
        }
    }
}

extension HandOverPolicy {
    /// Who may print a shipment's label, and so hold its hand-over token (the proof, when scanned,
    /// that the parcel is in hand): its sender, whoever carries it, and dispatch; never its
    /// receiver, who would then confirm a parcel they do not have. Once it is paid and until it ends.
    public static func mayPrintLabel(as capacities: Set<OrderCapacity>, status: OrderStatus) -> Bool {
        !capacities.isDisjoint(with: [.owner, .assignee, .manager]) && [.pending, .assigned, .accepted, .inTransit, .failed].contains(status)
    }
}

/// How a scan of a parcel's label went (kept for every scan, refused ones included).
public enum ScanOutcome: String, Sendable, Hashable, Codable, CaseIterable {
    case accepted
    /// Not this parcel's code, or no parcel's.
    case wrongToken = "wrong_token"
    /// Right code, for a hand-over already made.
    case replayed
    /// A real parcel, but the person does not handle it.
    case notAllowed = "not_allowed"
}

extension HandOverPolicy {
    /// The hand-over a scan of the parcel's label proves when this person makes it now: the driver's
    /// pickup, then delivery; the receiver's receipt. Nil: they may look it up (dispatch), no more.
    public static func scanStep(as capacities: Set<OrderCapacity>, status: OrderStatus) -> HandOverKind? {
        if capacities.contains(.assignee) {
            if [.assigned, .accepted].contains(status) { return .pickup }
            if status == .inTransit { return .delivery }
        }
        if capacities.contains(.receiver), [.inTransit, .delivered].contains(status) { return .receipt }
        return nil
    }

    /// Who may look a scanned label up: whoever handles the parcel or receives it, and dispatch.
    public static func mayLookUp(as capacities: Set<OrderCapacity>) -> Bool {
        !capacities.isDisjoint(with: [.owner, .assignee, .receiver, .manager])
    }

    /// A hand-over token as labels carry it: 24 characters of base64url (18 random bytes).
    public static func isWellFormedToken(_ token: String) -> Bool {
        token.utf8.count == 24 && token.utf8.allSatisfy { c in
            (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || c == 0x2D || c == 0x5F
        }
    }

    /// The token from what a scanner read: the token itself, or the label's link (`…/h/{token}`).
    public static func token(fromScan text: String) -> String? {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        let candidate = trimmed.split(separator: "/").last.map(String.init) ?? trimmed
        return isWellFormedToken(candidate) ? candidate : nil
    }
}

extension OrderStatus {
    /// Today's order as a shipment with one fleet leg: whether it awaits payment and where its leg is.
    public var asFleetLeg: (awaitingPayment: Bool, leg: LegStatus) {
        switch self {
        case .awaitingPayment: (true, .open)
        case .pending: (false, .open)
        case .assigned: (false, .assigned)
        case .accepted: (false, .accepted)
        case .inTransit: (false, .inTransit)
        case .delivered: (false, .handedOver)
        case .cancelled: (false, .cancelled)
        case .failed: (false, .failed)
        }
    }
}

extension OrderAction {
    /// The leg action an order action is on its fleet leg (nil: confirming a payment is the shipment's).
    public var legAction: LegAction? {
        switch self {
        case .confirmPayment: nil
        case .assign: .assign
        case .reassign: .reassign
        case .accept: .accept
        case .pickup: .pickUp
        case .deliver: .handOver
        case .fail: .fail
        case .cancel: .cancel
        }
    }
}

extension OrderCapacity {
    public var legCapacity: LegCapacity {
        switch self {
        case .owner: .sender
        case .assignee: .assignee
        case .manager: .manager
        case .system: .system
        case .receiver: .receiver
        }
    }
}
