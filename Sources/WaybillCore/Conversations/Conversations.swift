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

    /// Whether two people share a shipment closely enough to write to each other directly: it links
    /// them (`Acquaintance.shipmentLinks`: not cancelled, and through its receiver only once picked
    /// up), and each may see it now. A traveller's parcel links its sender and traveller only once it
    /// is paid: before that they talk in the request's conversation, where contact details are
    /// masked (`masksContacts`).
    public static func linksDirectly(shipment parties: OrderParties, status: OrderStatus, masked: Bool, _ a: Caller, _ b: Caller) -> Bool {
        guard !masked, Acquaintance.shipmentLinks(parties, status: status, a, b) else { return false }
        func sees(_ caller: Caller) -> Bool {
            OrderPolicy.allows(.see, status: status, as: OrderPolicy.capacities(of: caller, for: parties).intersection(Acquaintance.partyCapacities))
        }
        return sees(a) && sees(b)
    }

    /// Whether a followed parcel links two people (`Acquaintance.parcelShareLinks`): one owns it and
    /// shared it with the other, who took it up (is `asking` now, or opened the conversation before).
    public static func linksDirectly(parcelOwner owner: UserID, sharedWith: Set<UserID>, _ pair: DirectPair,
                                     asking: UserID?, conversationOpened: Bool) -> Bool {
        Acquaintance.parcelShareLinks(owner: owner, sharedWith: sharedWith, pair, asking: asking, conversationOpened: conversationOpened)
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
/// Linear in the text's length, with no backtracking expression (security audit 2, finding 7):
/// a message's 4,000 characters cost a few tens of thousands of steps, whatever they are.
public enum ContactMasking {
    public static let mask = "•••"

    public static func masked(_ text: String) -> String {
        var work = 0
        return masked(text, work: &work)
    }

    /// `masked(_:)`, adding to `work` one step per character looked at (the tests bound it by a
    /// small multiple of the text's length).
    static func masked(_ text: String, work: inout Int) -> String {
        var result = maskEmails(text, work: &work)
        result = maskPhones(result, work: &work)
        return result
    }

    /// `name@domain.tld`, and the usual disguises (`name at domain dot com`, `name (at) domain`,
    /// `nom arobase domaine point fr`): what the expressions
    /// `[A-Za-z0-9._%+\-]+@[A-Za-z0-9.\-]+\.[A-Za-z]{2,}` and then
    /// `[A-Za-z0-9._%+\-]+\s*[\(\[]?\s*(?:at|AT|arobase)\s*[\)\]]?\s*[A-Za-z0-9\-]+\s*[\(\[]?\s*(?:dot|DOT|point)\s*[\)\]]?\s*[A-Za-z]{2,}`
    /// replaced, found by `EmailScan` without backtracking (those expressions took seconds on a long
    /// word or a long run of spaces; the tests compare both on random text).
    static func maskEmails(_ text: String, work: inout Int) -> String {
        var plain = EmailScan(Array(text.unicodeScalars), work: &work)
        var spelled = EmailScan(plain.replacingAll(spelled: false, work: &work), work: &work)
        var out = String.UnicodeScalarView()
        out.append(contentsOf: spelled.replacingAll(spelled: true, work: &work))
        return String(out)
    }

    /// Runs of at least 9 digits (a date's 8 stay), allowing spaces, dots, dashes, slashes and brackets between them
    /// and a leading `+` or `00` (Swiss, French and international forms).
    static func maskPhones(_ text: String, work: inout Int) -> String {
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
                    work += 1
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
            work += 1
        }
        return String(out)
    }
}

/// The two email forms of `ContactMasking.maskEmails`, each found left to right as a regular
/// expression's "replace all" finds them, without backtracking.
///
/// A match starts where a run of local-part characters (`[A-Za-z0-9._%+-]`) starts: one starting
/// inside the run would match from the run's start too, and the leftmost wins. The local part takes
/// as much of the run as leaves a match (the expression's greedy `+`); in the spelled form the
/// domain label likewise. Whether a given end of the local part (or of the label) leaves a match
/// depends only on what follows it, so the last such end of a run is worked out once per run
/// (`localEnds`, `labelEnds`) and every character is looked at a bounded number of times.
struct EmailScan {
    let s: [Unicode.Scalar]
    /// For each index, where the run of local-part characters starting there ends (itself when
    /// none); the same for domain labels `[A-Za-z0-9-]` and host names `[A-Za-z0-9.-]`.
    let localEnd: [Int], labelEnd: [Int], hostEnd: [Int]
    /// By run end: the last end of a local part (of a label) that leaves a match, and that
    /// match's end; absent until asked, `none` when there is none.
    var localEnds: [Int: (at: Int, end: Int)] = [:]
    var labelEnds: [Int: (at: Int, end: Int)] = [:]
    static let none = (at: -1, end: -1)

    init(_ s: [Unicode.Scalar], work: inout Int) {
        self.s = s
        func runEnds(_ member: (Unicode.Scalar) -> Bool) -> [Int] {
            var ends = [Int](repeating: s.count, count: s.count + 1)
            var i = s.count - 1
            while i >= 0 {
                ends[i] = member(s[i]) ? ends[i + 1] : i
                i -= 1
            }
            return ends
        }
        localEnd = runEnds(Self.isLocal)
        labelEnd = runEnds(Self.isLabel)
        hostEnd = runEnds { Self.isLabel($0) || $0 == "." }
        work += 3 * s.count
    }

    static func isLetter(_ c: Unicode.Scalar) -> Bool { ("a"..."z").contains(c) || ("A"..."Z").contains(c) }
    static func isLabel(_ c: Unicode.Scalar) -> Bool { isLetter(c) || ("0"..."9").contains(c) || c == "-" }
    static func isLocal(_ c: Unicode.Scalar) -> Bool { isLabel(c) || c == "." || c == "_" || c == "%" || c == "+" }
    /// `\s` as the expressions read it (ICU): Unicode's White_Space characters.
    static func isSpace(_ c: Unicode.Scalar) -> Bool { c.properties.isWhitespace }

    /// The text with every match of one form replaced by the mask.
    mutating func replacingAll(spelled: Bool, work: inout Int) -> [Unicode.Scalar] {
        var out: [Unicode.Scalar] = []
        out.reserveCapacity(s.count)
        var i = 0
        while i < s.count {
            work += 1
            guard Self.isLocal(s[i]) else {
                out.append(s[i])
                i += 1
                continue
            }
            let runEnd = localEnd[i]
            if let end = spelled ? spelledMatch(from: i, runEnd: runEnd, work: &work) : plainMatch(runEnd: runEnd, work: &work) {
                out.append(contentsOf: ContactMasking.mask.unicodeScalars)
                i = end
            } else {
                out.append(contentsOf: s[i..<runEnd])
                work += runEnd - i
                i = runEnd
            }
        }
        return out
    }

    /// `local@host.tld`: the local part is the whole run (`@` is not in it); the host then takes
    /// as much as leaves `.` and two letters or more, which take every letter that follows.
    func plainMatch(runEnd at: Int, work: inout Int) -> Int? {
        guard at < s.count, s[at] == "@" else { return nil }
        let hostEnd = hostEnd[at + 1]
        var dot = hostEnd - 1
        while dot >= at + 2 {
            work += 1
            if s[dot] == ".", dot + 2 < hostEnd, Self.isLetter(s[dot + 1]), Self.isLetter(s[dot + 2]) {
                return lettersEnd(from: dot + 1, work: &work)
            }
            dot -= 1
        }
        return nil
    }

    /// `local at label dot tld` with its spaces and brackets, the local part starting at `start`.
    mutating func spelledMatch(from start: Int, runEnd: Int, work: inout Int) -> Int? {
        if localEnds[runEnd] == nil {
            // Scanned down to this first start: later starts in the same run are further right.
            var found = Self.none
            var end = runEnd
            while end > start {
                work += 1
                if let matchEnd = afterLocal(end, work: &work) {
                    found = (end, matchEnd)
                    break
                }
                end -= 1
            }
            localEnds[runEnd] = found
        }
        guard let found = localEnds[runEnd], found.at > start else { return nil }
        return found.end
    }

    /// The match's end when the local part ends at `end`: (spaces, `(` or `[`, spaces) `at`, `AT`
    /// or `arobase` (spaces, `)` or `]`, spaces), a domain label, and what `afterLabel` wants.
    mutating func afterLocal(_ end: Int, work: inout Int) -> Int? {
        let keyword = skip(from: end, brackets: ["(", "["], work: &work)
        guard let length = Self.keyword(in: s, at: keyword, ["at", "AT", "arobase"]) else { return nil }
        let label = skip(from: keyword + length, brackets: [")", "]"], work: &work)
        guard label < s.count, Self.isLabel(s[label]) else { return nil }
        let runEnd = labelEnd[label]
        if labelEnds[runEnd] == nil {
            // The last end of the label run that leaves a match, whatever the label's start.
            var found = Self.none
            var end = runEnd
            while end > 0, Self.isLabel(s[end - 1]) {
                work += 1
                if let matchEnd = afterLabel(end, work: &work) {
                    found = (end, matchEnd)
                    break
                }
                end -= 1
            }
            labelEnds[runEnd] = found
        }
        guard let found = labelEnds[runEnd], found.at > label else { return nil }
        return found.end
    }

    /// The match's end when the label ends at `end`: (spaces, `(` or `[`, spaces) `dot`, `DOT` or
    /// `point` (spaces, `)` or `]`, spaces), then two letters or more, taking every letter there is.
    func afterLabel(_ end: Int, work: inout Int) -> Int? {
        let keyword = skip(from: end, brackets: ["(", "["], work: &work)
        guard let length = Self.keyword(in: s, at: keyword, ["dot", "DOT", "point"]) else { return nil }
        let tld = skip(from: keyword + length, brackets: [")", "]"], work: &work)
        guard tld + 1 < s.count, Self.isLetter(s[tld]), Self.isLetter(s[tld + 1]) else { return nil }
        return lettersEnd(from: tld, work: &work)
    }

    /// `\s*[…]?\s*`: past the spaces, one of the brackets if there, and the spaces after it.
    func skip(from start: Int, brackets: [Unicode.Scalar], work: inout Int) -> Int {
        var i = start
        while i < s.count, Self.isSpace(s[i]) { i += 1 }
        if i < s.count, brackets.contains(s[i]) {
            i += 1
            while i < s.count, Self.isSpace(s[i]) { i += 1 }
        }
        work += i - start
        return i
    }

    func lettersEnd(from start: Int, work: inout Int) -> Int {
        var i = start
        while i < s.count, Self.isLetter(s[i]) { i += 1 }
        work += i - start
        return i
    }

    /// The length of the first of `words` written at `index`, if any.
    static func keyword(in s: [Unicode.Scalar], at index: Int, _ words: [String]) -> Int? {
        for word in words {
            let scalars = word.unicodeScalars
            guard index + scalars.count <= s.count else { continue }
            if zip(scalars, s[index...]).allSatisfy({ $0 == $1 }) { return scalars.count }
        }
        return nil
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
