import Foundation

// Ratings both ways (issue "Conversations, ratings and delivery statistics", item 5), the pure part:
// who may rate whom for which subject, when, with what; when a rating is published; what the public
// sees of a person's or a carrier's ratings.

extension Identifiers { public enum Rating {} }
public typealias RatingID = Tagged<Identifiers.Rating, UUID>

/// Who is rated: a person, or an outside carrier (by its code, as `CarrierDetection` names it).
public enum Ratee: Sendable, Hashable {
    case person(UserID)
    case carrier(String)

    public var key: String {
        switch self {
        case .person(let id): "person:\(id.uuidString)"
        case .carrier(let code): "carrier:\(code)"
        }
    }
}

/// In which direction a rating goes, which decides its tags and whether it has a counterpart.
public enum RatingDirection: String, Sendable, Hashable, Codable, CaseIterable {
    /// The sender (the customer, or a traveller's sender) rates who carried the parcel (the driver, the traveller).
    case senderToCarrier = "sender_to_carrier"
    /// Who carried the parcel rates its sender.
    case carrierToSender = "carrier_to_sender"
    /// The receiver with an account rates who brought the parcel.
    case receiverToCarrier = "receiver_to_carrier"
    /// Someone following an outside carrier's parcel rates the carrier.
    case personToCarrierCompany = "person_to_carrier_company"

    /// The direction that answers this one: both are published together. Nil: published at once.
    public var counterpart: RatingDirection? {
        switch self {
        case .senderToCarrier: .carrierToSender
        case .carrierToSender: .senderToCarrier
        case .receiverToCarrier, .personToCarrierCompany: nil
        }
    }

    /// The tags a rating in this direction may carry (stable codes; apps translate them).
    public var tags: [String] {
        switch self {
        case .senderToCarrier, .receiverToCarrier:
            ["on_time", "careful_with_parcel", "friendly", "good_communication", "late", "parcel_damaged", "rude", "hard_to_reach"]
        case .carrierToSender:
            ["ready_on_time", "well_packed", "friendly", "clear_instructions", "not_ready", "badly_packed", "rude", "wrong_address"]
        case .personToCarrierCompany:
            ["fast", "accurate_tracking", "careful_with_parcel", "slow", "lost_parcel", "parcel_damaged", "poor_tracking"]
        }
    }
}

public enum RatingStatus: String, Sendable, Hashable, Codable, CaseIterable {
    /// In, but hidden until its counterpart is in or the window closes (nobody sees it but its author).
    case pending
    case published
}

/// What a person writes.
public struct RatingDraft: Sendable, Equatable {
    public var stars: Int
    public var tags: [String]
    public var comment: String?
    /// For the rated person (and staff) only, never public.
    public var privateNote: String?

    public init(stars: Int, tags: [String] = [], comment: String? = nil, privateNote: String? = nil) {
        self.stars = stars
        self.tags = tags
        self.comment = comment
        self.privateNote = privateNote
    }

    public static let starRange = 1...5
    public static let maxTextLength = 1000

    public func validate(direction: RatingDirection) -> FieldErrors {
        var errors = FieldErrors()
        if !Self.starRange.contains(stars) { errors.add("stars", "out_of_range") }
        if tags.count > 8 { errors.add("tags", "too_many") }
        if Set(tags).count != tags.count { errors.add("tags", "repeated") }
        if let unknown = tags.first(where: { !direction.tags.contains($0) }) { errors.add("tags", "unknown:\(unknown.prefix(40))") }
        for (field, text) in [("comment", comment), ("privateNote", privateNote)] {
            guard let text else { continue }
            if text.count > Self.maxTextLength { errors.add(field, "too_long") }
            if text.unicodeScalars.contains(where: { $0.value == 0 || ($0.properties.generalCategory == .control && $0 != "\n") }) {
                errors.add(field, "invalid_character")
            }
        }
        return errors
    }

    /// Text as stored: trimmed, nil when empty.
    public static func clean(_ text: String?) -> String? {
        guard let text = text?.replacingOccurrences(of: "\r\n", with: "\n").trimmingCharacters(in: .whitespacesAndNewlines), !text.isEmpty else { return nil }
        return text
    }
}

public enum RatingPolicy {
    /// Whether `caller` sees a rating: its author always; anyone else once it is published, unless
    /// the moderators hid it (then only the administration).
    public static func maySee(reviewer: UserID, published: Bool, hidden: Bool, by caller: Caller) -> Bool {
        if caller.id == reviewer { return true }
        guard published else { return false }
        return !hidden || caller.capabilities.contains(.admin)
    }

    /// Whether `caller` may answer a rating now: the rated person, once it is published, once. The
    /// rating's page offers the answer and the API says `mayAnswer` by this one rule.
    public static func mayAnswer(ratee: UserID?, published: Bool, answered: Bool, by caller: UserID) -> Bool {
        ratee == caller && published && !answered
    }

    /// Days after completion during which the parties may rate (Airbnb's 14).
    public static let windowDays = 14
    public static let windowMillis: Int64 = Int64(windowDays) * 86_400_000

    /// Whether someone in these roles ever rates a shipment: its parties do, staff do not.
    public static func ratesShipments(_ roles: Set<ShipmentRole>) -> Bool {
        !roles.isDisjoint(with: [.sender, .carrier, .receiver])
    }

    /// The directions in which someone with these roles on a delivered shipment may rate, and whom.
    /// A shipment is rated only once delivered; a person never rates themself.
    public static func directions(shipment roles: Set<ShipmentRole>, caller: UserID, sender: UserID, carrier: UserID?)
        -> [(RatingDirection, UserID)] {
        guard let carrier else { return [] }
        var result: [(RatingDirection, UserID)] = []
        if roles.contains(.sender), carrier != caller { result.append((.senderToCarrier, carrier)) }
        if roles.contains(.carrier), sender != caller { result.append((.carrierToSender, sender)) }
        if roles.contains(.receiver), !roles.contains(.sender), carrier != caller { result.append((.receiverToCarrier, carrier)) }
        return result
    }

    public enum Window: Sendable, Equatable {
        /// Not completed yet: nothing to rate.
        case notYet
        case open(closesAt: Int64)
        case closed
    }

    /// The rating window of a subject completed at `completedAt` (nil: not completed).
    public static func window(completedAt: Int64?, now: Int64) -> Window {
        guard let completedAt else { return .notYet }
        let (closesAt, overflow) = completedAt.addingReportingOverflow(windowMillis)
        if overflow { return .open(closesAt: .max) }
        return now < closesAt ? .open(closesAt: closesAt) : .closed
    }

    /// Whether a rating just given is published at once: it has no counterpart, or its counterpart
    /// is already in (then both are published together).
    public static func publishesAtOnce(_ direction: RatingDirection, counterpartIn: Bool) -> Bool {
        direction.counterpart == nil || counterpartIn
    }

    /// The fewest published ratings before a person's or a carrier's average is shown
    /// (`RATINGS_MIN_COUNT`, default this).
    public static let defaultMinimumCount = 3
}

/// What the public sees of someone's ratings: the average only from the minimum count on.
public struct RatingSummary: Sendable, Equatable {
    public var count: Int
    /// Nil below the minimum count.
    public var average: Double?

    public init(count: Int, starsTotal: Int, minimumCount: Int) {
        self.count = count
        average = count >= max(1, minimumCount) ? (Double(starsTotal) / Double(count) * 10).rounded() / 10 : nil
    }
}
