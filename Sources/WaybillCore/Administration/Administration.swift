import Foundation

// The administration (issue "Insurance, subscription plans, loyalty points, and an administration
// that keeps the platform safe", item 4): the pure rules of the audit log, the reports queue, the
// recent re-authentication admin actions need, and what a ban withdraws.

/// A staff action the audit log records. Every change staff make to someone else's account, to
/// content or to the platform's settings is one of these, written in the change's own transaction.
public enum AuditAction: String, Sendable, Hashable, Codable, CaseIterable {
    case capabilityGranted = "capability.granted"
    case capabilityRevoked = "capability.revoked"
    case accountCreated = "account.created"
    /// Sessions ended and a password-reset code mailed: staff never set a password.
    case passwordResetSent = "account.password_reset"
    case accountSuspended = "account.suspended"
    case accountBanned = "account.banned"
    case restrictionLifted = "account.restriction_lifted"
    case reportDecided = "report.decided"
    /// Staff cancelled someone's order, or refunded a delivered one (money goes back).
    case orderCancelled = "order.cancelled"
    case orderRefunded = "order.refunded"
    /// Staff unpublished someone's trip (its waiting requests end with it).
    case tripRemoved = "trip.removed"
    /// Content hidden from everyone but its author and the administration, or shown again.
    case contentHidden = "content.hidden"
    case contentRestored = "content.restored"
    case tariffChanged = "tariff.changed"
    /// Where travellers go between, and the reception counters: set up by admins.
    case areaChanged = "area.changed"
    case areaDeleted = "area.deleted"
    case counterChanged = "counter.changed"
    case counterStaffChanged = "counter.staff_changed"
    case travelTariffChanged = "travel_tariff.changed"
    /// The insurance premium table changed.
    case insuranceChanged = "insurance.changed"
    /// A claim approved (or approved once, waiting for a second approval), or declined.
    case claimApproved = "claim.approved"
    case claimDeclined = "claim.declined"
    /// The loyalty points' rules changed.
    case loyaltyChanged = "loyalty.changed"
    /// A subscription plan offered, changed or withdrawn.
    case planChanged = "plan.changed"
}

/// What an audit entry is about.
public enum AuditTargetKind: String, Sendable, Hashable, Codable, CaseIterable {
    case user, report, tariff, trip, message, review, picture, order, area, counter, claim, plan
}

/// One line of the audit log, as it is read back.
public struct AuditEntry: Sendable, Hashable, Codable {
    public var id: Int64
    /// When, Unix ms (UTC).
    public var at: Int64
    /// Who acted; nil for the operator's command line.
    public var actor: UserID?
    public var action: AuditAction
    public var targetKind: AuditTargetKind
    public var targetID: String
    /// The target's state before and after, as compact JSON objects of the fields that matter.
    public var before: String?
    public var after: String?
    public var reason: String?
    public var requestID: String?
    public var address: String?

    public init(id: Int64, at: Int64, actor: UserID?, action: AuditAction, targetKind: AuditTargetKind, targetID: String,
                before: String?, after: String?, reason: String?, requestID: String?, address: String?) {
        self.id = id
        self.at = at
        self.actor = actor
        self.action = action
        self.targetKind = targetKind
        self.targetID = targetID
        self.before = before
        self.after = after
        self.reason = reason
        self.requestID = requestID
        self.address = address
    }

    /// The state snapshot an entry keeps: the given fields as a JSON object, keys sorted, nil values left out.
    public static func snapshot(_ fields: [String: String?]) -> String {
        let kept = fields.compactMapValues { $0 }
        let body = kept.sorted(by: { $0.key < $1.key }).map { "\(JSONText.quote($0.key)):\(JSONText.quote($0.value))" }.joined(separator: ",")
        return "{\(body)}"
    }

    /// The columns of the log's CSV export, in order.
    public static let csvHeader = ["id", "at_utc", "actor", "action", "target_kind", "target_id", "before", "after", "reason", "request_id", "address"]

    /// This entry as a row of the CSV export (time in ISO 8601 UTC), text made safe for spreadsheets.
    public var csvRow: [String] {
        [String(id), utc, actor?.uuidString ?? "operator", action.rawValue, targetKind.rawValue,
                CSVText.text(targetID), CSVText.text(before ?? ""), CSVText.text(after ?? ""), CSVText.text(reason ?? ""),
                CSVText.text(requestID ?? ""), CSVText.text(address ?? "")]
    }

    /// When, as ISO 8601 in UTC with milliseconds ("2026-11-18T11:06:40.123Z").
    public var utc: String {
        // Whole seconds by the formatter, milliseconds by arithmetic (a Double would round them).
        let millis = max(0, at)
        let seconds = Date(timeIntervalSince1970: Double(millis / 1000)).formatted(Date.ISO8601FormatStyle())
        let fraction = String(millis % 1000)
        return seconds.dropLast() + "." + String(repeating: "0", count: 3 - fraction.count) + fraction + "Z"
    }
}

/// A search of the audit log: each filter narrows it; newest first.
public struct AuditSearch: Sendable, Equatable {
    public var actor: UserID?
    public var action: AuditAction?
    public var targetID: String?
    /// From and to, Unix ms, inclusive.
    public var from: Int64?
    public var to: Int64?
    /// Entries older than this id (the next page).
    public var before: Int64?
    public var limit: Int

    public init(actor: UserID? = nil, action: AuditAction? = nil, targetID: String? = nil, from: Int64? = nil, to: Int64? = nil,
                before: Int64? = nil, limit: Int = 50) {
        self.actor = actor
        self.action = action
        self.targetID = targetID
        self.from = from
        self.to = to
        self.before = before
        self.limit = limit
    }

    /// The most one page holds; an export holds up to `maxExport`.
    public static let maxPage = 200
    public static let maxExport = 50_000

    public func validated(maxLimit: Int = maxPage) -> Result<AuditSearch, FieldErrorsError> {
        var errors = FieldErrors()
        var clean = self
        clean.targetID = targetID?.trimmingCharacters(in: .whitespacesAndNewlines)
        if clean.targetID?.isEmpty == true { clean.targetID = nil }
        if let target = clean.targetID, target.count > 100 { errors.add("target", "too_long") }
        if !(1...maxLimit).contains(limit) { errors.add("limit", "out_of_range") }
        if let from, let to, from > to { errors.add("to", "before_from") }
        if let before, before < 1 { errors.add("before", "out_of_range") }
        return errors.isEmpty ? .success(clean) : .failure(FieldErrorsError(errors))
    }
}

/// How a report leaves the queue.
public enum ReportDecisionRule {
    /// Pending reports may be marked reviewed (looked at, kept under watch), dismissed or acted on;
    /// a reviewed one may still be dismissed or acted on. Dismissed and acted-on reports are closed.
    public static func next(from current: ReportStatus, to wanted: ReportStatus) -> Bool {
        switch (current, wanted) {
        case (.pending, .reviewed), (.pending, .dismissed), (.pending, .actionTaken): true
        case (.reviewed, .dismissed), (.reviewed, .actionTaken): true
        default: false
        }
    }

    public static let maxNoteLength = 2000
}

/// Admin actions need the person to have proven their password recently (ASVS 2.3.5's spirit,
/// OWASP's re-authentication for sensitive functions): a stolen session alone does not ban people.
public enum Reauthentication {
    /// How long a sign-in or a re-entered password counts as recent.
    public static let defaultWindowMillis: Int64 = 15 * 60_000

    /// Whether a session whose password was last proven at `provenAt` (Unix ms) is recent at `now`.
    public static func isRecent(provenAt: Int64, now: Int64, window: Int64 = defaultWindowMillis) -> Bool {
        let (age, overflow) = now.subtractingReportingOverflow(provenAt)
        return !overflow && age >= 0 && age <= window
    }
}

/// What a ban withdraws from the platform, beyond the account's sessions and live connections.
public enum BanWithdrawal {
    /// The banned person's trips that are still to come are unpublished (cancelled).
    public static func unpublishesTrip(cancelled: Bool, departsUntil: Int64, now: Int64) -> Bool {
        !cancelled && departsUntil > now
    }

    /// A request on a banned person's trip, or sent by them, ends: one waiting for an answer is
    /// cancelled, an accepted one has its shipment cancelled (refunded if paid) while the parcel is
    /// not yet with the traveller. A parcel already on its way is left to staff to bring home.
    public enum Outcome: Sendable, Equatable {
        case cancelRequest
        case cancelShipment
        case leave
    }

    public static func outcome(request: TripRequestStatus, shipment: OrderStatus?) -> Outcome {
        switch request {
        case .requested: return .cancelRequest
        case .accepted:
            guard let shipment else { return .cancelRequest }
            return [.awaitingPayment, .pending, .assigned, .accepted].contains(shipment) ? .cancelShipment : .leave
        case .rejected, .expired, .cancelled, .lapsed: return .leave
        }
    }
}

/// What the administration may hide and show again: a trip (kept from searches and from everyone
/// but its traveller and staff), a message (its text and photo blanked for everyone but staff, its
/// place in the conversation kept), a review (out of the ratee's profile and average), a profile
/// picture (shown to nobody but its owner and staff). Nothing is deleted: a restore brings it back.
public enum ModeratedContent: String, Sendable, Hashable, Codable, CaseIterable {
    case trip, message, review, picture

    public var auditTarget: AuditTargetKind {
        switch self {
        case .trip: .trip
        case .message: .message
        case .review: .review
        case .picture: .picture
        }
    }
}

/// One piece of content the administration may hide, by its typed id.
public enum ModeratedItem: Sendable, Hashable {
    case trip(TripID)
    case message(MessageID)
    case review(RatingID)
    /// A person's profile picture.
    case picture(UserID)

    /// The item a path or a form names: its kind, and the id as written there.
    public init(_ kind: ModeratedContent, id: UUID) {
        switch kind {
        case .trip: self = .trip(TripID(rawValue: id))
        case .message: self = .message(MessageID(rawValue: id))
        case .review: self = .review(RatingID(rawValue: id))
        case .picture: self = .picture(UserID(rawValue: id))
        }
    }

    public var kind: ModeratedContent {
        switch self {
        case .trip: .trip
        case .message: .message
        case .review: .review
        case .picture: .picture
        }
    }

    /// The id as a path, an audit line and the API write it.
    public var uuid: UUID {
        switch self {
        case .trip(let id): id.rawValue
        case .message(let id): id.rawValue
        case .review(let id): id.rawValue
        case .picture(let id): id.rawValue
        }
    }
}

public enum ContentModeration {
    public static let maxReasonLength = 500

    public enum Decision: Sendable, Equatable {
        case allowed
        /// Hiding what is hidden, or restoring what is shown: nothing to do (409).
        case unchanged
    }

    /// Whether hiding (`hide`) or restoring content that is `hidden` now changes anything.
    public static func decide(hide: Bool, hidden: Bool) -> Decision { hide == hidden ? .unchanged : .allowed }

    /// The reason given, trimmed; hiding needs one (the author is told), restoring may go without.
    public static func reason(_ raw: String?, hiding: Bool) -> Result<String?, FieldErrorsError> {
        let clean = raw?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        var errors = FieldErrors()
        if clean.isEmpty, hiding { errors.add("reason", "required") }
        if clean.count > maxReasonLength { errors.add("reason", "too_long") }
        return errors.isEmpty ? .success(clean.isEmpty ? nil : clean) : .failure(FieldErrorsError(errors))
    }
}
