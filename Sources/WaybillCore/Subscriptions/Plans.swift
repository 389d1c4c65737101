import Foundation

// Subscription plans (issue 19, item 2), the pure part: what an admin offers, the state of a
// customer's subscription as the payment provider reports it, when its benefit applies (with grace
// after a failed renewal), and what the benefit takes off a quote. Amounts are minor units; nothing
// here traps on numbers that came from outside.

/// What a plan gives for its monthly price.
public struct PlanTerms: Sendable, Equatable, Codable {
    public var name: String
    /// Charged each month, in minor units of the tariff's currency.
    public var monthlyPrice: Int
    /// Deliveries a month whose delivery charge the plan covers (0: none).
    public var includedDeliveries: Int
    /// Taken off the delivery charge of the others, in percent (0: none).
    public var discountPercent: Int
    /// No express surcharge on any delivery.
    public var expressIncluded: Bool

    public init(name: String, monthlyPrice: Int, includedDeliveries: Int, discountPercent: Int, expressIncluded: Bool) {
        self.name = name
        self.monthlyPrice = monthlyPrice
        self.includedDeliveries = includedDeliveries
        self.discountPercent = discountPercent
        self.expressIncluded = expressIncluded
    }

    public static let monthlyPriceRange = 100...1_000_000
    public static let includedDeliveriesRange = 0...1_000
    public static let discountPercentRange = 0...90
    public static let nameLength = 1...60

    /// Every problem, keyed by field. A plan must give something.
    public func validated() -> Result<PlanTerms, FieldErrorsError> {
        var errors = FieldErrors()
        var clean = self
        clean.name = name.trimmingCharacters(in: .whitespacesAndNewlines)
        if !Self.nameLength.contains(clean.name.count) { errors.add("name", clean.name.isEmpty ? "required" : "too_long") }
        if clean.name.unicodeScalars.contains(where: { CharacterSet.controlCharacters.contains($0) }) { errors.add("name", "invalid") }
        if !Self.monthlyPriceRange.contains(monthlyPrice) { errors.add("monthlyPrice", "out_of_range") }
        if !Self.includedDeliveriesRange.contains(includedDeliveries) { errors.add("includedDeliveries", "out_of_range") }
        if !Self.discountPercentRange.contains(discountPercent) { errors.add("discountPercent", "out_of_range") }
        if errors.isEmpty, includedDeliveries == 0, discountPercent == 0, !expressIncluded { errors.add("includedDeliveries", "plan_gives_nothing") }
        return errors.isEmpty ? .success(clean) : .failure(FieldErrorsError(errors))
    }
}

/// Where a customer's subscription stands.
public enum SubscriptionStatus: String, Sendable, Hashable, Codable, CaseIterable {
    /// Asked for; the first payment is not made yet.
    case incomplete
    /// Paid for the current period.
    case active
    /// A renewal failed; the provider retries, and the benefit stays until the grace ends.
    case pastDue = "past_due"
    /// Over: cancelled (at the end of its period, or by the provider after failed renewals), or
    /// never paid.
    case canceled

    /// What Stripe's `status` of a subscription means here.
    public static func ofStripe(_ status: String) -> SubscriptionStatus {
        switch status {
        case "active", "trialing": .active
        case "past_due", "unpaid", "paused": .pastDue
        case "incomplete": .incomplete
        default: .canceled  // canceled, incomplete_expired
        }
    }

    /// Holds the account's one current subscription: asked for, or paid (the migration's
    /// `subscriptions_current` index spells the same list).
    public static let current: [SubscriptionStatus] = [.incomplete, .active, .pastDue]
    /// Paid for: the plan has a period, a renewal to stop or keep, and may apply.
    public static let paid: [SubscriptionStatus] = [.active, .pastDue]

    public var isPaid: Bool { Self.paid.contains(self) }
}

/// A subscription as the server keeps it: enough to decide what it gives now.
public struct SubscriptionTerm: Sendable, Equatable {
    public var status: SubscriptionStatus
    /// The paid period, Unix milliseconds.
    public var periodStart: Int64?
    public var periodEnd: Int64?
    /// Set by a failed renewal: until then the benefit stays.
    public var graceEndsAt: Int64?
    public var cancelAtPeriodEnd: Bool
    /// Included deliveries used in the current period.
    public var includedUsed: Int

    public init(status: SubscriptionStatus, periodStart: Int64?, periodEnd: Int64?, graceEndsAt: Int64?, cancelAtPeriodEnd: Bool, includedUsed: Int) {
        self.status = status
        self.periodStart = periodStart
        self.periodEnd = periodEnd
        self.graceEndsAt = graceEndsAt
        self.cancelAtPeriodEnd = cancelAtPeriodEnd
        self.includedUsed = includedUsed
    }

    /// Whether the plan's benefit applies to an order placed at `now`: paid for the period (an
    /// hour's leeway past its end while the renewal's event arrives), or a renewal failed and the
    /// grace has not ended.
    public func benefitApplies(at now: Int64) -> Bool {
        switch status {
        case .active:
            guard let periodEnd else { return false }
            return now < periodEnd.addingReportingOverflow(SubscriptionPolicy.renewalLeeway).partialValue
        case .pastDue:
            guard let graceEndsAt else { return false }
            return now < graceEndsAt
        case .incomplete, .canceled:
            return false
        }
    }
}

/// The benefit a quote gets: the plan's terms and how many included deliveries are left.
public struct PlanBenefit: Sendable, Equatable {
    public var terms: PlanTerms
    public var includedLeft: Int

    public init(terms: PlanTerms, includedLeft: Int) {
        self.terms = terms
        self.includedLeft = max(0, includedLeft)
    }
}

/// What a plan took off a quote (shown in its breakdown as `plan` lines).
public struct PlanApplied: Sendable, Equatable, Codable {
    public var name: String
    /// The delivery was one of those the plan includes.
    public var included: Bool
    /// Minor units taken off, in total.
    public var discount: Int

    public init(name: String, included: Bool, discount: Int) {
        self.name = name
        self.included = included
        self.discount = discount
    }
}

/// A plan's monthly invoice: paid, or its payment failed (a failed one may be paid later).
public enum InvoiceStatus: String, Sendable, Hashable, Codable, CaseIterable {
    case paid
    case failed
}

public enum SubscriptionPolicy {
    /// The end of a subscription's grace, shown only while it is past due.
    public static func graceEnds(_ status: SubscriptionStatus, at graceEndsAt: Int64?) -> Int64? {
        status == .pastDue ? graceEndsAt : nil
    }

    /// The link to pay a subscription, offered only while its first payment is missing.
    public static func checkoutLink(_ status: SubscriptionStatus, _ url: String?) -> String? {
        status == .incomplete ? url : nil
    }

    /// Days the benefit stays after a failed renewal, while the provider retries the payment.
    public static let defaultGraceDays = 7
    public static let graceDaysRange = 0...30
    /// How long past the period's end an active subscription still counts, for the renewal's event.
    public static let renewalLeeway: Int64 = 3_600_000

    public enum Refusal: Error, Equatable, Sendable {
        /// The account already has a current subscription (cancel it, or let it end, first).
        case alreadySubscribed
        /// The plan takes no new subscribers.
        case planClosed
        /// Nothing to cancel, or it ends already.
        case notCancellable
        /// Not set to end, or already over.
        case notResumable
    }

    /// Whether an account whose current subscription is `current` may subscribe to a plan.
    /// An unpaid request (`incomplete`) is replaced by the new one.
    public static func maySubscribe(current: SubscriptionStatus?, planActive: Bool) -> Result<Void, Refusal> {
        guard planActive else { return .failure(.planClosed) }
        if let current, current.isPaid { return .failure(.alreadySubscribed) }
        return .success(())
    }

    /// Cancelling stops the renewal: the plan stays until the end of the paid period.
    public static func mayCancel(_ term: SubscriptionTerm) -> Result<Void, Refusal> {
        term.status.isPaid && !term.cancelAtPeriodEnd ? .success(()) : .failure(.notCancellable)
    }

    public static func mayResume(_ term: SubscriptionTerm) -> Result<Void, Refusal> {
        term.status.isPaid && term.cancelAtPeriodEnd ? .success(()) : .failure(.notResumable)
    }

    /// When the grace after a renewal that failed at `failedAt` ends; a later failure in the same
    /// grace keeps the first deadline.
    public static func graceEnd(failedAt: Int64, days: Int, current: Int64?) -> Int64 {
        if let current { return current }
        let clamped = Int64(min(max(days, graceDaysRange.lowerBound), graceDaysRange.upperBound))
        return failedAt.addingReportingOverflow(clamped * 86_400_000).partialValue
    }

    /// A renewal starts a new period: the included deliveries count from zero again.
    public static func includedUsed(after previous: SubscriptionTerm?, newPeriodStart: Int64?) -> Int {
        guard let previous, previous.periodStart == newPeriodStart else { return 0 }
        return previous.includedUsed
    }
}
