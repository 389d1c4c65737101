import Foundation

// Loyalty points (issue 19, item 3), the pure part: the rules an admin sets, what a paid delivery
// earns, what spending points takes off a price, and an account's balance replayed from its
// entries: points are spent and expire oldest first, and the balance is never negative. Amounts are
// minor units; nothing here traps on numbers that came from outside.

/// How points are earned and spent.
public struct LoyaltyRules: Sendable, Equatable, Codable {
    /// Points earned per whole unit of currency paid in money for a delivery (0: nothing is earned).
    public var pointsPerUnit: Int
    /// What one point takes off a price, in minor units (5: 100 points are worth 5.00).
    public var pointValue: Int
    /// Days points stay valid after they were earned.
    public var validityDays: Int
    /// The fewest points spent on one order.
    public var minimumRedemption: Int
    /// The largest share of a price points may pay, in percent: something is always paid in money.
    public var maxDiscountPercent: Int

    public init(pointsPerUnit: Int, pointValue: Int, validityDays: Int, minimumRedemption: Int, maxDiscountPercent: Int) {
        self.pointsPerUnit = pointsPerUnit
        self.pointValue = pointValue
        self.validityDays = validityDays
        self.minimumRedemption = minimumRedemption
        self.maxDiscountPercent = maxDiscountPercent
    }

    /// What a new installation starts with: a point per franc paid, 100 points are worth 5.00
    /// (5 % back), valid a year, spent 100 at a time, on at most half of a price.
    public static let initial = LoyaltyRules(pointsPerUnit: 1, pointValue: 5, validityDays: 365, minimumRedemption: 100, maxDiscountPercent: 50)

    public static let pointsPerUnitRange = 0...1_000
    public static let pointValueRange = 1...10_000
    public static let validityDaysRange = 1...3_650
    public static let minimumRedemptionRange = 1...1_000_000
    public static let maxDiscountPercentRange = 1...90

    public func validated() -> Result<LoyaltyRules, FieldErrorsError> {
        var errors = FieldErrors()
        if !Self.pointsPerUnitRange.contains(pointsPerUnit) { errors.add("pointsPerUnit", "out_of_range") }
        if !Self.pointValueRange.contains(pointValue) { errors.add("pointValue", "out_of_range") }
        if !Self.validityDaysRange.contains(validityDays) { errors.add("validityDays", "out_of_range") }
        if !Self.minimumRedemptionRange.contains(minimumRedemption) { errors.add("minimumRedemption", "out_of_range") }
        if !Self.maxDiscountPercentRange.contains(maxDiscountPercent) { errors.add("maxDiscountPercent", "out_of_range") }
        return errors.isEmpty ? .success(self) : .failure(FieldErrorsError(errors))
    }

    /// Points earned for `paid` minor units paid in money (whole units only: 12.90 earns for 12).
    public func earned(forPaid paid: Int) -> Int {
        guard paid > 0 else { return 0 }
        let (points, overflow) = (paid / 100).multipliedReportingOverflow(by: pointsPerUnit)
        return overflow ? Int.max : points
    }

    /// What `points` take off a price, in minor units (nil when it does not fit).
    public func value(of points: Int) -> Int? {
        guard points >= 0 else { return nil }
        let (value, overflow) = points.multipliedReportingOverflow(by: pointValue)
        return overflow ? nil : value
    }

    /// The most points that may be spent on a price of `price` minor units.
    public func maxPoints(forPrice price: Int) -> Int {
        guard price > 0, pointValue > 0 else { return 0 }
        // price × percent / 100 cannot overflow for prices under Tariff.maxAmount; clamp anyway.
        let (share, overflow) = price.multipliedReportingOverflow(by: maxDiscountPercent)
        return (overflow ? Int.max : share) / 100 / pointValue
    }

    /// When points earned at `at` (Unix milliseconds) expire.
    public func expiry(ofPointsEarnedAt at: Int64) -> Int64 {
        at.addingReportingOverflow(Int64(validityDays) * 86_400_000).partialValue
    }
}

/// What happened to an account's points.
public enum LoyaltyEntryKind: String, Sendable, Hashable, Codable, CaseIterable {
    /// Earned with a paid delivery.
    case earned
    /// Spent as a discount on an order.
    case redeemed
    /// Given back: the order they were spent on was cancelled or refunded.
    case restored
    /// Past their validity.
    case expired
    /// Taken back: the delivery that earned them was refunded.
    case revoked

    /// +1 adds points, -1 takes them away.
    public var sign: Int {
        switch self {
        case .earned, .restored: 1
        case .redeemed, .expired, .revoked: -1
        }
    }
}

/// One line of an account's points history. `points` is positive; the kind says which way it goes.
public struct LoyaltyEntry: Sendable, Equatable, Codable {
    public var kind: LoyaltyEntryKind
    public var points: Int
    /// Unix milliseconds.
    public var at: Int64
    /// Earned and restored points: when they expire. A redemption: when the oldest points it spent
    /// would have expired (what restoring them gives back).
    public var expiresAt: Int64?
    public var order: OrderID?

    public init(kind: LoyaltyEntryKind, points: Int, at: Int64, expiresAt: Int64? = nil, order: OrderID? = nil) {
        self.kind = kind
        self.points = points
        self.at = at
        self.expiresAt = expiresAt
        self.order = order
    }
}

/// An account's points, replayed from its history.
public struct LoyaltyBalance: Sendable, Equatable {
    /// Points that may be spent now.
    public var points: Int
    /// Points still held, each group with when it expires, soonest first.
    public var lots: [Lot]
    /// Groups past their expiry still counted in the history: to be recorded as `expired` entries.
    public var due: [Lot]

    public struct Lot: Sendable, Equatable {
        public var points: Int
        public var expiresAt: Int64
    }

    /// The soonest expiry and how many points it takes.
    public var nextExpiry: Lot? { lots.first }

    /// Replays `entries` in the order they happened: earned and restored points are lots; spent,
    /// revoked and expired points come off the lots that expire soonest. A debit larger than what is
    /// held takes what there is (the balance never goes negative). Lots expired at `now` are `due`.
    public static func replay(_ entries: [LoyaltyEntry], now: Int64) -> LoyaltyBalance {
        var lots: [Lot] = []
        let ordered = entries.enumerated().sorted { a, b in
            if a.element.at != b.element.at { return a.element.at < b.element.at }
            if a.element.kind.sign != b.element.kind.sign { return a.element.kind.sign > b.element.kind.sign }
            return a.offset < b.offset
        }.map(\.element)
        for entry in ordered where entry.points > 0 {
            if entry.kind.sign > 0 {
                let lot = Lot(points: entry.points, expiresAt: entry.expiresAt ?? Int64.max)
                let index = lots.firstIndex { $0.expiresAt > lot.expiresAt } ?? lots.endIndex
                lots.insert(lot, at: index)
            } else {
                _ = take(entry.points, from: &lots)
            }
        }
        let due = lots.filter { $0.expiresAt <= now }
        lots.removeAll { $0.expiresAt <= now }
        let total = lots.reduce(0) { $0.addingReportingOverflow($1.points).partialValue }
        return LoyaltyBalance(points: max(0, total), lots: lots, due: due)
    }

    /// Takes `points` from the lots expiring soonest; returns the expiry of the first lot touched.
    @discardableResult
    static func take(_ points: Int, from lots: inout [Lot]) -> Int64? {
        var left = points
        var first: Int64?
        while left > 0, !lots.isEmpty {
            first = first ?? lots[0].expiresAt
            if lots[0].points > left {
                lots[0].points -= left
                left = 0
            } else {
                left -= lots[0].points
                lots.removeFirst()
            }
        }
        return first
    }

    /// When the oldest of the `points` spent now would have expired (for a redemption's entry).
    public func expiryOfOldest(_ points: Int) -> Int64? {
        var copy = lots
        return Self.take(points, from: &copy)
    }
}

/// Spending points on a price: how many, and what they take off.
public struct LoyaltyRedemption: Sendable, Equatable, Codable {
    public var points: Int
    /// Minor units taken off the price.
    public var discount: Int

    public init(points: Int, discount: Int) {
        self.points = points
        self.discount = discount
    }
}

public enum LoyaltyPolicy {
    public enum Refusal: Error, Equatable, Sendable {
        /// Fewer than the rules' minimum.
        case belowMinimum(Int)
        /// More than the account holds.
        case notEnoughPoints(balance: Int)
        /// More than the share of the price points may pay.
        case aboveMaximum(Int)

        /// The field error of a quote or order asking for these points.
        public var fieldError: String {
            switch self {
            case .belowMinimum: "below_minimum"
            case .notEnoughPoints: "not_enough_points"
            case .aboveMaximum: "above_maximum"
            }
        }
    }

    /// Spending `points` on a price of `price` minor units with `balance` points held.
    public static func redeem(_ points: Int, price: Int, balance: Int, rules: LoyaltyRules) -> Result<LoyaltyRedemption, Refusal> {
        if points < rules.minimumRedemption { return .failure(.belowMinimum(rules.minimumRedemption)) }
        let most = rules.maxPoints(forPrice: price)
        if points > most { return .failure(.aboveMaximum(most)) }
        if points > balance { return .failure(.notEnoughPoints(balance: balance)) }
        guard let discount = rules.value(of: points) else { return .failure(.aboveMaximum(most)) }
        return .success(LoyaltyRedemption(points: points, discount: discount))
    }

    /// The money a delivery earns points on: what was paid for carrying it (its price less the
    /// insurance premium), never the part paid with points.
    public static func earningBasis(price: Int, insurancePremium: Int?) -> Int {
        max(0, price - max(0, insurancePremium ?? 0))
    }
}
