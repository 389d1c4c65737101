import Foundation

// Shipments that pass through reception counters (issue "Counters, timeslots and QR hand-overs",
// item 1): the sender drops the parcel at a counter instead of a pickup (a counter leg first), or
// the receiver collects it at one (a counter leg last). The fleet leg between them starts or ends
// at the counter's address. The pure part: which leg an order action moves, what waits for a
// counter, and what a counter's check-in and hand-out do to the legs.

public enum ShipmentRoute {
    /// The leg an order action moves. Cancelling: the first unfinished leg. Every other action is
    /// its carrier's (a driver, a traveller, dispatch assigning): the first unfinished leg that is not
    /// a counter's, so a driver can be assigned while the parcel still waits to be dropped off.
    public static func actingLeg(for action: LegAction, in legs: [LegState]) -> Int? {
        if action == .cancel { return legs.firstIndex { !$0.status.isFinal } }
        return legs.firstIndex { !$0.status.isFinal && $0.kind != .counter }
    }

    /// Why an action on the carrying leg at `index` cannot happen yet because of a counter next to
    /// it; nil when nothing waits.
    public static func counterWait(_ action: LegAction, at index: Int, in legs: [LegState]) -> CounterWait? {
        guard legs.indices.contains(index) else { return nil }
        // The driver collects from a counter only what the counter holds.
        if action == .pickUp, index > 0, legs[index - 1].kind == .counter, legs[index - 1].status != .held {
            return .notAtCounterYet
        }
        // Into a counter's keeping only its staff take the parcel, by checking it in.
        if action == .handOver, index + 1 < legs.count, legs[index + 1].kind == .counter { return .counterChecksIn }
        return nil
    }

    /// The counter leg a pickup at `index` ends at the same moment (the parcel leaves the counter).
    public static func counterLeft(byPickUpAt index: Int, in legs: [LegState]) -> Int? {
        guard index > 0, legs.indices.contains(index), legs[index - 1].kind == .counter, legs[index - 1].status == .held else { return nil }
        return index - 1
    }

    /// Whether the parcel waits at a counter for a driver (dropped off, not yet collected).
    public static func waitsAtCounter(_ legs: [LegState]) -> Bool {
        guard let current = legs.firstIndex(where: { !$0.status.isFinal }) else { return false }
        return legs[current].kind == .counter && legs[current].status == .held && current + 1 < legs.count
    }
}

public enum CounterWait: String, Sendable, Hashable, Error {
    /// The sender has not dropped the parcel at the counter yet (or the previous driver has not
    /// brought it).
    case notAtCounterYet = "not_at_counter_yet"
    /// The parcel goes to a counter: its staff check it in when the driver brings it.
    case counterChecksIn = "counter_checks_in"
}

/// What a counter's staff may do with a parcel: take it in (check-in), hand it to its receiver.
public enum CounterDesk {
    public enum Refusal: String, Sendable, Hashable, Error {
        /// No leg of this shipment passes through this counter.
        case notHere = "not_here"
        /// Still waiting for its payment: nothing moves yet.
        case notPaid = "not_paid"
        /// The driver bringing it has not picked it up yet; or, for a hand-out, it has not arrived.
        case notArrived = "not_arrived"
        /// Already checked in (a second scan of the same parcel), or already handed out.
        case alreadyDone = "already_done"
        /// The shipment was cancelled.
        case cancelled
    }

    public struct CheckIn: Sendable, Equatable {
        /// The counter leg that now holds the parcel.
        public let counterLeg: Int
        /// The leg that ends here (the driver who brought it), if any.
        public let endsLeg: Int?
        /// The hand-over it is: the sender's drop-off, or from the driver's leg.
        public let handOver: HandOverKind
    }

    /// Checking a parcel in at counter `here` (`counters`: each leg's counter, parallel to `legs`):
    /// the first counter leg at this counter still waiting receives it. Dropped off by the sender
    /// (the first leg), once paid; brought by a driver, once the driver has it (their leg ends here).
    public static func checkIn(legs: [LegState], counters: [String?], here: String, awaitingPayment: Bool) -> Result<CheckIn, Refusal> {
        if legs.contains(where: { $0.status == .cancelled }) { return .failure(.cancelled) }
        let mine = legs.indices.filter { legs[$0].kind == .counter && counters.indices.contains($0) && counters[$0] == here }
        guard !mine.isEmpty else { return .failure(.notHere) }
        guard let index = mine.first(where: { legs[$0].status == .open }) else { return .failure(.alreadyDone) }
        if awaitingPayment { return .failure(.notPaid) }
        guard case .allowed = LegStateMachine.decide(.dropOff, kind: .counter, from: legs[index].status, as: [.counterStaff]) else {
            return .failure(.alreadyDone)
        }
        if index == 0 { return .success(CheckIn(counterLeg: 0, endsLeg: nil, handOver: .counterDropOff)) }
        guard legs[index - 1].status == .inTransit else { return .failure(.notArrived) }
        return .success(CheckIn(counterLeg: index, endsLeg: index - 1, handOver: .legToLeg))
    }

    /// Handing a parcel to its receiver at counter `here`: the shipment's last leg is this counter's
    /// and holds it. The proof is the label scanned (or its reference typed) and the receiver's code.
    public static func handOut(legs: [LegState], counters: [String?], here: String) -> Result<Int, Refusal> {
        if legs.contains(where: { $0.status == .cancelled }) { return .failure(.cancelled) }
        guard let last = legs.indices.last, legs[last].kind == .counter, counters.indices.contains(last), counters[last] == here else {
            return .failure(.notHere)
        }
        switch legs[last].status {
        case .held: return .success(last)
        case .handedOver: return .failure(.alreadyDone)
        default: return .failure(.notArrived)
        }
    }

    /// The proof a counter check-in or hand-out has, given what the staff did: a scanned label is a
    /// scan; a reference typed from the label in their hands stands for one at a desk.
    public static func proof(scanned: Bool, typedReference: Bool, receiverCode: Bool) -> Set<ProofKind> {
        var kinds: Set<ProofKind> = []
        if scanned || typedReference { kinds.insert(.qrScan) }
        if receiverCode { kinds.insert(.code) }
        return kinds
    }
}

extension CounterDesk {
    /// Who may see a counter's day and act at its desk: its own staff; admins and dispatch look.
    public static func mayWorkAt(_ caller: Caller, namedFor named: Bool) -> Bool {
        CounterPolicy.isStaff(caller, namedFor: named)
    }

    public static func maySeeDay(_ caller: Caller, namedFor named: Bool) -> Bool {
        mayWorkAt(caller, namedFor: named) || caller.may(.manageCounters) || caller.may(.dispatch)
    }
}

/// The counters a new shipment passes through, as the customer chose them, and what that asks of
/// the rest of the order.
public struct CounterChoice: Sendable, Equatable {
    /// "I will drop it at a counter": the counter's address stands for the pickup.
    public var dropOff: Address?
    public var dropOffID: String?
    /// "The receiver collects it at a counter": the counter's address stands for the drop-off.
    public var collection: Address?
    public var collectionID: String?

    public init(dropOffID: String? = nil, dropOff: Address? = nil, collectionID: String? = nil, collection: Address? = nil) {
        self.dropOffID = dropOffID
        self.dropOff = dropOff
        self.collectionID = collectionID
        self.collection = collection
    }

    public var isEmpty: Bool { dropOffID == nil && collectionID == nil }

    /// The legs' kinds, in order.
    public var legKinds: [LegKind] {
        (dropOffID != nil ? [.counter] : []) + [.fleet] + (collectionID != nil ? [.counter] : [])
    }

    /// What the order must also be:
    /// - dropped at a counter, it is not paid in cash (nobody meets the driver to pay);
    /// - collected at a counter, the receiver proves who they are with their code, so it is mailed
    ///   to them: the recipient's email is needed;
    /// - the two counters differ (one counter to itself is no delivery).
    public func check(paymentMethod: PaymentMethod, recipientEmail: String?, into errors: inout FieldErrors) {
        if dropOffID != nil, paymentMethod == .cash { errors.add("paymentMethod", "not_with_counter_drop_off") }
        if collectionID != nil, (recipientEmail ?? "").trimmingWhitespace().isEmpty {
            errors.add("recipient.email", "required_for_counter_collection")
        }
        if let a = dropOffID, a == collectionID { errors.add("collectionCounterId", "same_as_drop_off") }
    }
}

/// What a desk's one field holds: what a scanner read from a label (its hand-over token or link), or
/// the reference typed from it.
public enum LabelEntry: Sendable, Equatable {
    case scanned(String)
    case typed(String)

    /// A reference when it reads as one and not as a hand-over token; otherwise what was scanned
    /// (refused later if it is neither).
    public init(_ text: String) {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        self = HandOverPolicy.token(fromScan: trimmed) == nil && OrderReference.normalized(trimmed) != nil ? .typed(trimmed) : .scanned(trimmed)
    }

    public var scanned: String? { if case .scanned(let code) = self { code } else { nil } }
    public var typed: String? { if case .typed(let reference) = self { reference } else { nil } }
}

/// A shipment's reference (`WB-` and 8 characters of Crockford's base 32) as someone types it from
/// a label.
public enum OrderReference {
    /// The characters of a reference after `WB-`: Crockford's base 32, without I, L, O and U.
    public static let alphabet = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ")

    /// Upper case, spaces and dashes ignored, `WB-` added when left out, and the letters people mix
    /// up read as base 32 does (O as 0, I and L as 1); nil when it cannot be a reference.
    public static func normalized(_ text: String) -> String? {
        var body = text.uppercased().filter { !$0.isWhitespace && $0 != "-" }
        if body.hasPrefix("WB") { body.removeFirst(2) }
        guard body.count == 8 else { return nil }
        let alphabet = Set(Self.alphabet)
        let fixed = String(body.map { c -> Character in
            switch c { case "O": "0"; case "I", "L": "1"; default: c }
        })
        guard fixed.allSatisfy(alphabet.contains) else { return nil }
        return "WB-" + fixed
    }
}
