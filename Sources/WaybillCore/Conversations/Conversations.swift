import Crypto
import Foundation

// Conversations (issue "Conversations, ratings and delivery statistics", items 1, 2 and 4), the pure
// part: what a conversation is about, who takes part (derived from its subject every time, never
// stored as a right), what a message may be, how long it may be changed, when a conversation closes,
// and which contact details are masked before a traveller's parcel is paid.

extension Identifiers {
    public enum Conversation {}
    public enum Message {}
}

public typealias ConversationID = Tagged<Identifiers.Conversation, UUID>
public typealias MessageID = Tagged<Identifiers.Message, UUID>

/// What a conversation is attached to: one conversation per subject.
public enum ConversationSubject: Sendable, Hashable {
    /// A shipment (a courier order, or a traveller's parcel once its request was accepted).
    case shipment(OrderID)
    /// A traveller request, from the moment it is sent: sender and traveller talk before and after
    /// the traveller answers (the accepted request's shipment shares this conversation).
    case request(TripRequestID)
    /// Two people writing to each other directly, because they share a shipment or a followed parcel
    /// (`ConversationPolicy.linksDirectly`).
    case direct(DirectPair)
    /// A drop-off booked at a reception counter: its customer and the counter's staff talk about it
    /// ("I will be ten minutes late").
    case booking(SlotBookingID)

    public var kind: String {
        switch self {
        case .shipment: "shipment"
        case .request: "request"
        case .direct: "direct"
        case .booking: "booking"
        }
    }

    /// The subject's id as conversations are kept (a pair's is derived from its two people).
    public var id: UUID {
        switch self {
        case .shipment(let id): id.rawValue
        case .request(let id): id.rawValue
        case .direct(let pair): pair.id
        case .booking(let id): id.rawValue
        }
    }

    /// The subject as someone asks for it: for `direct`, `id` is the other person. Nil for an unknown
    /// kind, and for a direct conversation with oneself.
    public init?(kind: String, id: UUID, by caller: UserID) {
        if kind == "direct" {
            guard let pair = DirectPair(caller, UserID(rawValue: id)) else { return nil }
            self = .direct(pair)
        } else {
            self.init(kind: kind, id: id)
        }
    }

    /// How `caller` names it: a direct conversation by the other person's id.
    public func id(for caller: UserID) -> UUID {
        if case .direct(let pair) = self { return (pair.other(than: caller) ?? pair.low).rawValue }
        return id
    }

    public init?(kind: String, id: UUID) {
        switch kind {
        case "shipment": self = .shipment(OrderID(rawValue: id))
        case "request": self = .request(TripRequestID(rawValue: id))
        case "booking": self = .booking(SlotBookingID(rawValue: id))
        default: return nil
        }
    }
}

/// Two different people, in a fixed order, so that they have one direct conversation whoever opens it.
public struct DirectPair: Sendable, Hashable {
    public let low: UserID
    public let high: UserID

    public init?(_ a: UserID, _ b: UserID) {
        guard a != b else { return nil }
        if a.rawValue.uuidString < b.rawValue.uuidString { (low, high) = (a, b) } else { (low, high) = (b, a) }
    }

    public func contains(_ id: UserID) -> Bool { id == low || id == high }

    public func other(than id: UserID) -> UserID? { id == low ? high : id == high ? low : nil }

    /// The pair's subject id: a name-based UUID (version 8) from a SHA-256 of both ids, the same
    /// every time and for nobody else.
    public var id: UUID {
        var hash = SHA256()
        hash.update(data: Data("waybill.direct-conversation".utf8))
        withUnsafeBytes(of: low.rawValue.uuid) { hash.update(bufferPointer: $0) }
        withUnsafeBytes(of: high.rawValue.uuid) { hash.update(bufferPointer: $0) }
        var b = Array(hash.finalize().prefix(16))
        b[6] = (b[6] & 0x0F) | 0x80
        b[8] = (b[8] & 0x3F) | 0x80
        return UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]))
    }
}

/// In what capacity someone takes part.
public enum ConversationRole: String, Sendable, Hashable, Codable, CaseIterable {
    /// The customer who placed the order, or the sender of a traveller request.
    case sender
    /// The driver of the order, or the traveller.
    case carrier
    /// The account the shipment is addressed to.
    case receiver
    /// A dispatcher: reads every shipment's conversation, and takes part once they write in it.
    case staff
    /// One of two people writing to each other directly.
    case peer
    /// Staff of the reception counter a booking is at.
    case counter
}

/// What a message is.
public enum MessageKind: String, Sendable, Hashable, Codable, CaseIterable {
    case text
    /// A shipment shared into the conversation: a card that opens its tracking.
    case shipment
    /// A photo (JPEG or PNG, re-encoded by the server's sanitizer), with an optional caption in `text`.
    case image
    /// Written by the server: a status change of the subject (`body` is the status, translated by clients).
    case system
}

public enum ConversationPolicy {
    /// The roles a person has in a shipment's conversation, from their capacities on the order and
    /// whether they may see it at all (a receiver does not see an unpaid checkout). Staff may read;
    /// they become participants when they write.
    public static func roles(shipment capacities: Set<OrderCapacity>, status: OrderStatus) -> Set<ConversationRole> {
        guard OrderPolicy.allows(.see, status: status, as: capacities) else { return [] }
        var roles: Set<ConversationRole> = []
        for capacity in capacities {
            switch capacity {
            case .owner: roles.insert(.sender)
            case .assignee: roles.insert(.carrier)
            case .receiver: roles.insert(.receiver)
            case .manager: roles.insert(.staff)
            case .system: break
            }
        }
        return roles
    }

    /// The roles in a traveller request's conversation: its sender and its traveller only. Staff read
    /// it through the shipment once the request is accepted.
    public static func roles(request roles: Set<TripRequestRole>) -> Set<ConversationRole> {
        var result: Set<ConversationRole> = []
        if roles.contains(.sender) { result.insert(.sender) }
        if roles.contains(.traveller) { result.insert(.carrier) }
        return result
    }

    /// The roles in a direct conversation: its two people, nobody else (staff included).
    public static func roles(direct pair: DirectPair, caller: UserID) -> Set<ConversationRole> {
        pair.contains(caller) ? [.peer] : []
    }

    /// The roles in a counter booking's conversation: the shipment's customer (while they may see it)
    /// and the staff of the booking's counter; nobody else, dispatch included (the counter's desk is
    /// its staff's).
    public static func roles(booking capacities: Set<OrderCapacity>, status: OrderStatus, counterStaff: Bool) -> Set<ConversationRole> {
        var roles: Set<ConversationRole> = []
        if capacities.contains(.owner), OrderPolicy.allows(.see, status: status, as: [.owner]) { roles.insert(.sender) }
        if counterStaff { roles.insert(.counter) }
        return roles
    }

    /// A counter booking's conversation ends when the booking does: done, failed, declined or cancelled.
    public static func endedAt(booking status: SlotBookingStatus, updatedAt: Int64) -> Int64? {
        status.takesSeat ? nil : updatedAt
    }

    /// The capacities on a shipment that make someone one of its parties (a dispatcher is not).
    static let partyCapacities: Set<OrderCapacity> = [.owner, .assignee, .receiver]

    /// Whether two people share a shipment closely enough to write to each other directly: each is
    /// one of its parties (its customer, its driver, its receiver with an account), and may see it now.
    /// A traveller's parcel links its sender and traveller only once it is paid: before that they
    /// talk in the request's conversation, where contact details are masked (`masksContacts`).
    public static func linksDirectly(shipment parties: OrderParties, status: OrderStatus, masked: Bool, _ a: Caller, _ b: Caller) -> Bool {
        guard a.id != b.id, !masked else { return false }
        func party(_ caller: Caller) -> Bool {
            let capacities = OrderPolicy.capacities(of: caller, for: parties).intersection(partyCapacities)
            return !capacities.isEmpty && OrderPolicy.allows(.see, status: status, as: capacities)
        }
        return party(a) && party(b)
    }

    /// Whether a followed parcel links two people: one owns it and shared it with the other.
    public static func linksDirectly(parcelOwner owner: UserID, sharedWith: Set<UserID>, _ pair: DirectPair) -> Bool {
        (owner == pair.low && sharedWith.contains(pair.high)) || (owner == pair.high && sharedWith.contains(pair.low))
    }

    /// Only staff read a conversation without being one of its parties; they are told so in the app.
    public static func isObserver(_ roles: Set<ConversationRole>) -> Bool { roles == [.staff] }

    /// How long after sending its author may change or delete a message.
    public static let editWindowMillis: Int64 = 5 * 60 * 1000

    public enum Decision: Sendable, Equatable {
        case allowed
        /// Not theirs, or a server's message.
        case forbidden
        /// Theirs, but too late, or already deleted.
        case tooLate
        /// The conversation is read-only.
        case closed
    }

    /// Whether `caller` may edit or delete a message now.
    public static func mayChange(messageBy author: UserID?, kind: MessageKind, sentAt: Int64, deleted: Bool, by caller: UserID,
                                 now: Int64, closed: Bool) -> Decision {
        guard let author, author == caller, kind != .system else { return .forbidden }
        if closed { return .closed }
        if deleted { return .tooLate }
        // Subtraction of two stored times: never traps (a clock moved back counts as just sent).
        let (elapsed, overflow) = now.subtractingReportingOverflow(sentAt)
        return !overflow && elapsed <= editWindowMillis ? .allowed : .tooLate
    }

    /// Days after its subject ends that a conversation becomes read-only (the server's setting,
    /// `CHAT_CLOSE_DAYS`, default this).
    public static let defaultCloseAfterDays = 14

    /// Whether a conversation whose subject ended at `endedAt` (nil: still going) is closed at `now`.
    /// A direct conversation has no end, but is read-only while its two people share nothing any
    /// more (a parcel no longer shared, an account banned): `linked` false.
    public static func isClosed(subjectEndedAt endedAt: Int64?, linked: Bool = true, now: Int64, closeAfterDays days: Int) -> Bool {
        guard linked else { return true }
        guard let endedAt else { return false }
        let (span, overflow) = Int64(max(0, days)).multipliedReportingOverflow(by: 86_400_000)
        if overflow { return false }
        let (closesAt, over) = endedAt.addingReportingOverflow(span)
        return !over && now >= closesAt
    }

    /// A shipment's subject ends when it is delivered or cancelled.
    public static func endedAt(shipment status: OrderStatus, updatedAt: Int64) -> Int64? {
        status.isFinal ? updatedAt : nil
    }

    /// A request that never became a shipment ends when it is declined, withdrawn or lapses;
    /// an accepted one lives on as its shipment.
    public static func endedAt(request status: TripRequestStatus, updatedAt: Int64) -> Int64? {
        switch status {
        case .requested, .accepted: nil
        case .rejected, .expired, .cancelled, .lapsed: updatedAt
        }
    }

    /// Before a traveller's parcel is paid, phone numbers and email addresses in messages are
    /// masked, so that nobody arranges the trip outside the platform (and its protections).
    public static func masksContacts(request status: TripRequestStatus, shipmentPaid: Bool) -> Bool {
        switch status {
        case .requested, .rejected, .expired, .cancelled, .lapsed: true
        case .accepted: !shipmentPaid
        }
    }

    /// Days of retention after a conversation closes (`CHAT_RETENTION_DAYS`, default this): then its
    /// messages are deleted by the server's sweep.
    public static let defaultRetentionDays = 365

    /// From when a conversation's retention counts: its subject's end, or for a direct conversation
    /// (which has none) its last message.
    public static func retainedFrom(_ subject: ConversationSubject, endedAt: Int64?, lastMessageAt: Int64?) -> Int64? {
        if case .direct = subject { return lastMessageAt }
        return endedAt
    }

    /// Messages per conversation page.
    public static let pageRange = 1...200
}

/// A message as a person writes it.
public struct MessageDraft: Sendable, Equatable {
    public var text: String
    /// Chosen by the app for each message: sending the same id again (a retry) gives back the
    /// message already stored instead of a second one.
    public var clientMessageId: String
    /// A shipment shared into the conversation (then `text` may be empty).
    public var sharedShipment: OrderID?
    /// A photo comes with it (then `text` is its optional caption).
    public var withImage: Bool

    public static let maxLength = 4000

    public init(text: String, clientMessageId: String, sharedShipment: OrderID? = nil, withImage: Bool = false) {
        self.text = text
        self.clientMessageId = clientMessageId
        self.sharedShipment = sharedShipment
        self.withImage = withImage
    }

    /// The text as stored: trimmed, line endings as `\n`.
    public var cleanText: String {
        text.replacingOccurrences(of: "\r\n", with: "\n").trimmingCharacters(in: .whitespacesAndNewlines)
    }

    public func validate() -> FieldErrors {
        var errors = FieldErrors()
        let text = cleanText
        if text.isEmpty && sharedShipment == nil && !withImage { errors.add("text", "required") }
        if text.count > Self.maxLength { errors.add("text", "too_long") }
        if text.unicodeScalars.contains(where: { $0.value == 0 || ($0.properties.generalCategory == .control && $0 != "\n" && $0 != "\t") }) {
            errors.add("text", "invalid_character")
        }
        errors.merge(Self.validateClientID(clientMessageId))
        return errors
    }

    public static func validateClientID(_ id: String) -> FieldErrors {
        var errors = FieldErrors()
        if id.isEmpty { errors.add("clientMessageId", "required") }
        else if id.utf8.count > 64 || !id.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "-_.:".unicodeScalars.contains($0)) }) {
            errors.add("clientMessageId", "invalid")
        }
        return errors
    }
}

/// Replaces phone numbers and email addresses with "•••" (see `ConversationPolicy.masksContacts`).
public enum ContactMasking {
    public static let mask = "•••"

    public static func masked(_ text: String) -> String {
        var result = maskEmails(text)
        result = maskPhones(result)
        return result
    }

    /// `name@domain.tld`, and the usual disguises (`name at domain dot com`, `name (at) domain`).
    static func maskEmails(_ text: String) -> String {
        var out = text
        let patterns = [
            #"[A-Za-z0-9._%+\-]+@[A-Za-z0-9.\-]+\.[A-Za-z]{2,}"#,
            #"[A-Za-z0-9._%+\-]+\s*[\(\[]?\s*(?:at|AT|arobase)\s*[\)\]]?\s*[A-Za-z0-9\-]+\s*[\(\[]?\s*(?:dot|DOT|point)\s*[\)\]]?\s*[A-Za-z]{2,}"#,
        ]
        for pattern in patterns {
            out = out.replacingOccurrences(of: pattern, with: mask, options: .regularExpression)
        }
        return out
    }

    /// Runs of at least 9 digits (a date's 8 stay), allowing spaces, dots, dashes, slashes and brackets between them
    /// and a leading `+` or `00` (Swiss, French and international forms).
    static func maskPhones(_ text: String) -> String {
        let scalars = Array(text.unicodeScalars)
        var out = String.UnicodeScalarView()
        var i = 0
        func isDigit(_ s: Unicode.Scalar) -> Bool { ("0"..."9").contains(s) }
        func isSeparator(_ s: Unicode.Scalar) -> Bool { " .-/()\u{00A0}".unicodeScalars.contains(s) }
        while i < scalars.count {
            let s = scalars[i]
            if isDigit(s) || (s == "+" && i + 1 < scalars.count && isDigit(scalars[i + 1])) {
                // Read a candidate: digits and separators (never two separators in a row but for ") (").
                var j = i + (s == "+" ? 1 : 0)
                var digits = 0, lastDigitEnd = j
                while j < scalars.count {
                    if isDigit(scalars[j]) { digits += 1; j += 1; lastDigitEnd = j }
                    else if isSeparator(scalars[j]), j + 1 < scalars.count, isDigit(scalars[j + 1]) || (isSeparator(scalars[j + 1]) && j + 2 < scalars.count && isDigit(scalars[j + 2])) { j += 1 }
                    else { break }
                }
                if digits >= 9 {
                    out.append(contentsOf: mask.unicodeScalars)
                    i = lastDigitEnd
                    continue
                }
                out.append(contentsOf: scalars[i..<lastDigitEnd])
                i = max(lastDigitEnd, i + 1)
                continue
            }
            out.append(s)
            i += 1
        }
        return String(out)
    }
}

/// Why someone reports a message or a person (the moderation queue).
public enum ReportReason: String, Sendable, Hashable, Codable, CaseIterable {
    case harassment
    case unsafeBehaviour = "unsafe_behaviour"
    case fakeProfile = "fake_profile"
    case spam
    case inappropriateContent = "inappropriate_content"
    case other
}

public enum ReportStatus: String, Sendable, Hashable, Codable, CaseIterable {
    case pending, reviewed, dismissed
    case actionTaken = "action_taken"
}

/// Unread counts: how far the conversation went against how far a participant has read.
public enum Unread {
    public static func count(lastSeq: Int64, lastReadSeq: Int64) -> Int64 {
        max(0, lastSeq - min(lastReadSeq, lastSeq))
    }
}
