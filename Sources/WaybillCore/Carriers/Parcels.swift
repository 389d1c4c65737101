import Foundation
import Tagged

extension Identifiers { public enum Parcel {} }
/// A parcel of another carrier that a person follows.
public typealias ParcelID = Tagged<Identifiers.Parcel, UUID>

/// Where a parcel of another carrier stands, normalised across carriers (Karrio's twelve, and
/// `expired` for one nobody heard of for 90 days).
public enum ParcelStatus: String, Sendable, Hashable, Codable, CaseIterable {
    case pending
    case pickedUp = "picked_up"
    case inTransit = "in_transit"
    case onHold = "on_hold"
    case outForDelivery = "out_for_delivery"
    case readyForPickup = "ready_for_pickup"
    case deliveryDelayed = "delivery_delayed"
    case deliveryFailed = "delivery_failed"
    case delivered
    case returnToSender = "return_to_sender"
    case cancelled
    case unknown
    case expired

    /// Nothing more will happen: no more polling.
    public var isFinal: Bool { self == .delivered || self == .cancelled || self == .expired || self == .returnToSender }
}

/// A parcel a person adds: its number, the carrier if they chose one, a name and notes.
public struct ParcelDraft: Sendable, Equatable {
    public var number: String
    /// A carrier the person chose (`dhl`, `swiss_post`…); nil: the best suggestion.
    public var carrier: String?
    public var name: String?
    public var notes: String?

    public init(number: String, carrier: String? = nil, name: String? = nil, notes: String? = nil) {
        self.number = number
        self.carrier = carrier
        self.name = name
        self.notes = notes
    }

    /// What is stored: the normalised number, the carrier and format, whether the person chose the
    /// carrier (pinned: never changed by a later suggestion), the name and notes.
    public struct Accepted: Sendable, Equatable {
        public var number: String
        public var carrier: String
        public var carrierName: String
        public var format: String?
        public var pinned: Bool
        public var name: String?
        public var notes: String?
    }

    public func validated(detection: CarrierDetection) -> Result<Accepted, FieldErrorsError> {
        var errors = FieldErrors()
        let normalized = CarrierDetection.normalized(number)
        if normalized.isEmpty { errors.add("number", "required") }
        else if normalized.count < 4 || normalized.count > 60 || !normalized.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }) {
            errors.add("number", "invalid")
        }
        let cleanName = name?.trimmingCharacters(in: .whitespacesAndNewlines)
        if let cleanName, cleanName.count > 80 { errors.add("name", "too_long") }
        let cleanNotes = notes?.trimmingCharacters(in: .whitespacesAndNewlines)
        if let cleanNotes, cleanNotes.count > 1_000 { errors.add("notes", "too_long") }
        let known = detection.carrierNames
        let candidates = errors.isEmpty ? detection.candidates(for: normalized) : []
        var chosen: (code: String, name: String, format: String?, pinned: Bool)?
        if let carrier = carrier?.trimmingCharacters(in: .whitespaces).lowercased(), !carrier.isEmpty {
            if let name = known[carrier] {
                // The person's choice stands, even against the suggestion (they know their parcel).
                chosen = (carrier, name, candidates.first { $0.carrier == carrier }?.format, true)
            } else {
                errors.add("carrier", "unknown_carrier")
            }
        } else if let best = candidates.first {
            chosen = (best.carrier, best.carrierName, best.format, false)
        } else if errors.isEmpty {
            errors.add("carrier", "not_recognised")
        }
        guard errors.isEmpty, let chosen else { return .failure(FieldErrorsError(errors)) }
        return .success(Accepted(number: normalized, carrier: chosen.code, carrierName: chosen.name, format: chosen.format,
                                 pinned: chosen.pinned, name: cleanName?.isEmpty == false ? cleanName : nil,
                                 notes: cleanNotes?.isEmpty == false ? cleanNotes : nil))
    }
}

/// How someone stands to a followed parcel.
public enum ParcelRelation: String, Sendable, Codable, CaseIterable {
    /// Added it: renames, corrects, shares, removes.
    case owner
    /// The owner shared it with them: they see it live in their list, are told of its news, may
    /// ask the carrier now, and may leave.
    case shared
}

/// What can be done to a followed parcel.
public enum ParcelAction: Sendable, CaseIterable {
    case see, refresh, change, share, remove, leave, setAlerts
}

/// Who may do what with a followed parcel: its owner, and the people it is shared with (less);
/// staff have no business with people's private parcels.
public enum ParcelPolicy {
    /// Parcels one account may follow at once.
    public static let maxPerAccount = 500
    /// People one parcel may be shared with.
    public static let maxSharesPerParcel = 20

    /// nil relation: a stranger (404, as if the parcel did not exist).
    public static func allows(_ action: ParcelAction, as relation: ParcelRelation?, by caller: Caller) -> Bool {
        guard let relation else { return false }
        switch (action, relation) {
        case (.see, _), (.refresh, _), (.setAlerts, _): return true
        // Removing what one follows only reduces what is kept: a suspended account may too.
        case (.remove, .owner): return true
        case (.change, .owner), (.share, .owner): return caller.may(.placeOrders)
        case (.leave, .shared): return true
        case (.remove, .shared), (.change, .shared), (.share, .shared), (.leave, .owner): return false
        }
    }

    public static func relation(owner: UserID, sharedWith: Set<UserID>, caller: Caller) -> ParcelRelation? {
        if caller.id == owner { return .owner }
        return sharedWith.contains(caller.id) ? .shared : nil
    }
}

/// When to tell someone about a parcel's news (per account, and per parcel overriding it).
public enum ParcelAlerts: String, Sendable, Codable, CaseIterable {
    /// Every change of status.
    case all
    /// Only what asks something of the receiver or ends the journey: out for delivery, ready for
    /// pickup, a failed or delayed delivery, delivered, returned, cancelled.
    case important
    /// Never (spelled `none`; not `.none`, which an optional would swallow).
    case off = "none"

    public static let importantStatuses: Set<ParcelStatus> = [
        .outForDelivery, .readyForPickup, .deliveryFailed, .deliveryDelayed, .delivered, .returnToSender, .cancelled,
    ]

    /// Whether a change from `old` to `new` is told (a parcel's own setting wins over the account's).
    public static func tells(parcel: ParcelAlerts?, account: ParcelAlerts, from old: ParcelStatus, to new: ParcelStatus) -> Bool {
        guard old != new else { return false }
        switch parcel ?? account {
        case .all: return true
        case .important: return importantStatuses.contains(new)
        case .off: return false
        }
    }
}

/// Why a delivery did not happen, when the carrier says (Karrio's incident reasons, grouped).
public enum ParcelIncident: String, Sendable, Codable, CaseIterable {
    case consigneeNotHome = "consignee_not_home"
    case consigneeRefused = "consignee_refused"
    case incorrectAddress = "incorrect_address"
    case customs
    case damaged
    case weather
    case carrierDelay = "carrier_delay"
    case other
}

extension ParcelStatus {
    /// A Waybill shipment's status in the same words as other carriers' parcels, so both sit in
    /// one list (issue "Parcels of every carrier", item 4).
    public init(shipment status: OrderStatus) {
        switch status {
        case .awaitingPayment, .pending, .assigned, .accepted: self = .pending
        case .inTransit: self = .inTransit
        case .delivered: self = .delivered
        case .cancelled: self = .cancelled
        case .failed: self = .deliveryFailed
        }
    }
}

/// The filters of the list of everything a person follows (their parcels of other carriers and
/// Waybill's own shipments): what is still on its way, what needs them, what arrived.
public enum TrackedFilter: String, Sendable, CaseIterable, Codable {
    /// Not yet delivered, returned, cancelled or expired.
    case active
    /// Something to do or to know: failed, delayed, held, returned, or waiting to be collected.
    case attention
    case delivered
    case all

    public func includes(_ status: ParcelStatus) -> Bool {
        switch self {
        case .active: !status.isFinal
        case .attention: [.deliveryFailed, .deliveryDelayed, .onHold, .returnToSender, .readyForPickup].contains(status)
        case .delivered: status == .delivered
        case .all: true
        }
    }
}
