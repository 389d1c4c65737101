import Foundation

// Insurance (issue 19, item 1), the pure part: the premium table an admin edits, the premium of a
// declared value, when a claim may be filed, and how staff decide one (two of them above a
// threshold, ASVS 2.3.5). Amounts are minor units of the table's currency; nothing here traps.

/// The premium table: bands of declared value, each a percentage with a minimum premium; values
/// above the last band cannot be insured.
public struct InsuranceTable: Sendable, Equatable, Codable {
    public struct Band: Sendable, Equatable, Codable {
        /// Declared values up to this amount (inclusive) fall in the band.
        public var upTo: Int
        /// The premium as basis points of the declared value (150 = 1.5 %).
        public var rateBasisPoints: Int
        /// The least premium of the band.
        public var minimumPremium: Int

        public init(upTo: Int, rateBasisPoints: Int, minimumPremium: Int) {
            self.upTo = upTo
            self.rateBasisPoints = rateBasisPoints
            self.minimumPremium = minimumPremium
        }
    }

    public var currency: String
    /// Ascending by `upTo`; the last band's `upTo` is the highest value that can be insured.
    public var bands: [Band]
    /// Days after delivery (or after the loss) during which a claim may be filed.
    public var claimWindowDays: Int
    /// Claims approved for more than this need a second staff member's approval.
    public var secondApprovalAbove: Int

    public init(currency: String, bands: [Band], claimWindowDays: Int, secondApprovalAbove: Int) {
        self.currency = currency
        self.bands = bands
        self.claimWindowDays = claimWindowDays
        self.secondApprovalAbove = secondApprovalAbove
    }

    /// What a new installation starts with: 2 % (at least 2.00) up to 500, 1.5 % (at least 10.00) up
    /// to 2,000, 1.2 % (at least 30.00) up to 5,000; 30 days to claim; two approvals above 500.
    public static let initial = InsuranceTable(
        currency: "CHF",
        bands: [Band(upTo: 50_000, rateBasisPoints: 200, minimumPremium: 200),
                Band(upTo: 200_000, rateBasisPoints: 150, minimumPremium: 1_000),
                Band(upTo: 500_000, rateBasisPoints: 120, minimumPremium: 3_000)],
        claimWindowDays: 30,
        secondApprovalAbove: 50_000)

    public var maxInsurableValue: Int { bands.last?.upTo ?? 0 }

    public static let maxBands = 10
    public static let claimWindowRange = 1...365

    /// Every problem with the table, keyed by field (`bands.1.upTo`, `claimWindowDays`, …).
    public func validated() -> Result<InsuranceTable, FieldErrorsError> {
        var errors = FieldErrors()
        var clean = self
        clean.currency = currency.uppercased()
        if !Money.isValidCurrency(clean.currency) { errors.add("currency", "invalid") }
        if bands.isEmpty || bands.count > Self.maxBands { errors.add("bands", bands.isEmpty ? "required" : "too_many") }
        var previous = 0
        for (index, band) in bands.enumerated() {
            if !(1...Tariff.maxAmount).contains(band.upTo) || band.upTo <= previous {
                errors.add("bands.\(index).upTo", band.upTo <= previous ? "not_ascending" : "out_of_range")
            }
            previous = max(previous, band.upTo)
            if !(0...10_000).contains(band.rateBasisPoints) { errors.add("bands.\(index).rateBasisPoints", "out_of_range") }
            if !(0...Tariff.maxAmount).contains(band.minimumPremium) { errors.add("bands.\(index).minimumPremium", "out_of_range") }
        }
        if !Self.claimWindowRange.contains(claimWindowDays) { errors.add("claimWindowDays", "out_of_range") }
        if !(0...Tariff.maxAmount).contains(secondApprovalAbove) { errors.add("secondApprovalAbove", "out_of_range") }
        return errors.isEmpty ? .success(clean) : .failure(FieldErrorsError(errors))
    }
}

/// A declared value and what insuring it costs.
public struct InsuranceCover: Sendable, Equatable, Codable {
    public var declaredValue: Int
    public var premium: Int

    public init(declaredValue: Int, premium: Int) {
        self.declaredValue = declaredValue
        self.premium = premium
    }
}

public enum Insurance {
    public enum Problem: Error, Sendable, Equatable {
        /// Zero, negative.
        case invalidValue
        /// Above the table's last band.
        case aboveMaximum(Int)
        /// The table is in another currency than the prices.
        case otherCurrency
    }

    /// The premium of insuring `declaredValue` (minor units of `currency`): the band's rate, at
    /// least its minimum, rounded half up to the minor unit.
    public static func cover(_ declaredValue: Int, table: InsuranceTable, currency: String) -> Result<InsuranceCover, Problem> {
        guard table.currency == currency else { return .failure(.otherCurrency) }
        guard declaredValue > 0, declaredValue <= Tariff.maxAmount else { return .failure(.invalidValue) }
        guard let band = table.bands.first(where: { declaredValue <= $0.upTo }) else { return .failure(.aboveMaximum(table.maxInsurableValue)) }
        // Both factors are bounded (`Tariff.maxAmount`, 10,000 basis points): the product fits.
        let premium = max(band.minimumPremium, declaredValue.scaled(by: band.rateBasisPoints, over: 10_000))
        return .success(InsuranceCover(declaredValue: declaredValue, premium: premium))
    }

    /// The field error for a declared value that cannot be insured.
    public static func fieldError(_ problem: Problem) -> String {
        switch problem {
        case .invalidValue: "out_of_range"
        case .aboveMaximum: "above_maximum"
        case .otherCurrency: "unavailable"
        }
    }
}

/// What happened to an insured parcel.
public enum ClaimKind: String, Sendable, Hashable, Codable, CaseIterable {
    case damaged, lost
}

/// Where a claim is.
public enum ClaimStatus: String, Sendable, Hashable, Codable, CaseIterable {
    /// Filed, waiting for staff.
    case submitted
    /// One staff member approved an amount above the threshold; a second must confirm it.
    case awaitingSecondApproval = "awaiting_second_approval"
    /// Approved: the compensation is being paid.
    case approved
    /// The compensation reached the customer.
    case paid
    case declined

    /// Whether staff still have to decide.
    public var isUndecided: Bool { self == .submitted || self == .awaitingSecondApproval }
}

/// What staff may do with an undecided claim.
public enum ClaimAction: String, Sendable, Hashable, Codable, CaseIterable {
    case approve
    case decline
}

/// When a claim may be filed, and how staff decide it.
public enum ClaimPolicy {
    /// A parcel still on its way this long after pickup counts as lost.
    public static let overdueMillis: Int64 = 2 * 86_400_000
    public static let descriptionLimit = 2_000
    public static let reasonLimit = 500
    public static let photosPerClaim = 5

    /// Whether a claim of `kind` may be filed now about a shipment.
    public enum Filing: Sendable, Equatable {
        /// Yes, until `deadline` (Unix ms).
        case allowed(deadline: Int64)
        case notInsured
        /// Damage is claimed once delivered; a loss once the parcel failed, was cancelled after
        /// pickup, or is overdue.
        case notYet
        case windowClosed
    }

    /// The moment a shipment was lost, if it was: failed or cancelled after its pickup, or still
    /// in transit `overdueMillis` after it.
    public static func lostAt(status: OrderStatus, pickedUpAt: Int64?, changedAt: Int64) -> Int64? {
        guard let pickedUpAt else { return nil }
        switch status {
        case .failed, .cancelled: return changedAt
        case .inTransit:
            let (overdue, overflow) = pickedUpAt.addingReportingOverflow(overdueMillis)
            return overflow ? nil : overdue
        case .awaitingPayment, .pending, .assigned, .accepted, .delivered: return nil
        }
    }

    public static func filing(_ kind: ClaimKind, insured: Bool, status: OrderStatus, pickedUpAt: Int64?, deliveredAt: Int64?,
                              changedAt: Int64, windowDays: Int, now: Int64) -> Filing {
        guard insured else { return .notInsured }
        let start: Int64?
        switch kind {
        case .damaged: start = status == .delivered ? deliveredAt ?? changedAt : nil
        case .lost: start = lostAt(status: status, pickedUpAt: pickedUpAt, changedAt: changedAt)
        }
        guard let start, start <= now else { return .notYet }
        let (deadline, overflow) = start.addingReportingOverflow(Int64(max(0, windowDays)) * 86_400_000)
        if overflow { return .allowed(deadline: .max) }
        return now <= deadline ? .allowed(deadline: deadline) : .windowClosed
    }

    /// What a staff member decides.
    public enum Decision: Sendable, Equatable {
        case approve(amount: Int)
        case decline(reason: String)
    }

    public enum Outcome: Sendable, Equatable {
        case approved(amount: Int)
        /// Approved by a first staff member; waits for a second.
        case awaitingSecondApproval(amount: Int)
        case declined(reason: String)
    }

    public enum Refusal: Error, Sendable, Equatable {
        /// Already decided.
        case decided
        /// Nobody decides a claim of their own.
        case ownClaim
        /// The second approval comes from someone else than the first.
        case sameApprover
        /// More than the declared value or than claimed, or not positive.
        case amountOutOfRange
        /// A second approval confirms the amount the first approved.
        case amountDiffers
        case reasonRequired
    }

    /// The decision `decision` by `decider` on a claim in `status`, filed by `claimant` for
    /// `claimed` on a parcel insured for `insured`; `firstApprover` and `proposed` when one staff
    /// member has approved already. Approvals above `threshold` need two different staff members.
    public static func decide(_ decision: Decision, status: ClaimStatus, claimant: UserID, claimed: Int, insured: Int,
                              firstApprover: UserID?, proposed: Int?, threshold: Int, by decider: UserID) -> Result<Outcome, Refusal> {
        guard status.isUndecided else { return .failure(.decided) }
        guard decider != claimant else { return .failure(.ownClaim) }
        switch decision {
        case .decline(let reason):
            let reason = reason.trimmingCharacters(in: .whitespacesAndNewlines)
            guard !reason.isEmpty, reason.count <= reasonLimit else { return .failure(.reasonRequired) }
            return .success(.declined(reason: reason))
        case .approve(let amount):
            if status == .awaitingSecondApproval {
                guard let firstApprover, decider != firstApprover else { return .failure(.sameApprover) }
                guard amount == proposed else { return .failure(.amountDiffers) }
                return .success(.approved(amount: amount))
            }
            guard amount > 0, amount <= min(claimed, insured) else { return .failure(.amountOutOfRange) }
            return .success(amount > threshold ? .awaitingSecondApproval(amount: amount) : .approved(amount: amount))
        }
    }

    /// What `caller` may do with a claim now, the list the claim's page and the API's
    /// `availableActions` read: staff who decide claims, on an undecided claim not their own. The
    /// first approver of an amount above the threshold may still decline it, never confirm it
    /// (`decide` refuses them: `sameApprover`).
    public static func actions(status: ClaimStatus, claimant: UserID, firstApprover: UserID?, by caller: Caller) -> [ClaimAction] {
        guard caller.may(.decideClaims), status.isUndecided, caller.id != claimant else { return [] }
        if status == .awaitingSecondApproval, firstApprover == nil || firstApprover == caller.id { return [.decline] }
        return [.approve, .decline]
    }

    /// The amount a first approver proposed, shown only while the claim waits for its second approval.
    public static func shownProposal(status: ClaimStatus, proposed: Int?) -> Int? {
        status == .awaitingSecondApproval ? proposed : nil
    }

    /// Whether `caller` may read a claim filed by `claimant`: its claimant, and staff who decide claims.
    public static func maySee(claimant: UserID, by caller: Caller) -> Bool {
        caller.id == claimant || caller.may(.decideClaims)
    }

    /// How an approved amount is paid: first as a refund of what the customer paid online for
    /// the shipment and has not had back, the rest to the customer's payout account.
    public static func split(_ amount: Int, refundable: Int) -> (refund: Int, payout: Int) {
        let refund = max(0, min(amount, refundable))
        return (refund, amount - refund)
    }

    /// Whether a claim keeps staff from refunding the shipment's whole payment after delivery: the
    /// claim decides what goes back while it is open (filed, awaiting its second approval, or
    /// approved and being paid), and once it has refunded part of the payment. Checked with the
    /// shipment's row held, as the claim's payment decides its split, so the two never both
    /// give the payment back (security-audit-2, finding 9).
    public static func blocksRefundAfterDelivery(status: ClaimStatus, refunded: Int?) -> Bool {
        switch status {
        case .submitted, .awaitingSecondApproval, .approved: true
        case .paid: (refunded ?? 0) > 0
        case .declined: false
        }
    }
}
