import Foundation
import Testing
@testable import WaybillCore

@Suite("Loyalty rules: points earned per franc, spent within limits, expiring oldest first, never negative")
struct LoyaltyRulesTests {
    let rules = LoyaltyRules.initial
    let day: Int64 = 86_400_000

    @Test("A delivery earns per whole franc paid; points are worth their value; at most the rules' share of a price; never traps")
    func earningAndValue() {
        #expect(rules.earned(forPaid: 2_390) == 23, "CHF 23.90 earns for 23 francs")
        #expect(rules.earned(forPaid: 99) == 0 && rules.earned(forPaid: -500) == 0)
        #expect(LoyaltyRules(pointsPerUnit: 1_000, pointValue: 1, validityDays: 1, minimumRedemption: 1, maxDiscountPercent: 50)
            .earned(forPaid: Int.max) == Int.max, "clamped, not trapped")
        #expect(rules.value(of: 100) == 500 && rules.value(of: Int.max) == nil && rules.value(of: -1) == nil)
        #expect(rules.maxPoints(forPrice: 2_000) == 200, "half of CHF 20 is 200 points of 5 centimes")
        #expect(rules.maxPoints(forPrice: Int.max) >= 0 && rules.maxPoints(forPrice: 0) == 0)
        #expect(LoyaltyPolicy.earningBasis(price: 2_600, insurancePremium: 600) == 2_000, "the premium earns nothing")
        #expect(LoyaltyPolicy.earningBasis(price: 100, insurancePremium: 600) == 0)
        let quote = Pricing.quote(tariff: .initial, weightClass: .small, service: .standard, pickup: nil, dropoff: nil)
            .applying(LoyaltyRedemption(points: 100, discount: 500))
        #expect(quote.price.amount == 1_500 - 500 && quote.breakdown.last?.kind == .points && quote.breakdown.last?.amount == -500)
        #expect(quote.breakdown.reduce(0) { $0 + $1.amount } == quote.price.amount, "the lines add up to the price")
    }

    @Test("Spending: at least the minimum, at most the share of the price, at most what is held")
    func redeeming() {
        #expect(LoyaltyPolicy.redeem(150, price: 2_000, balance: 1_000, rules: rules) == .success(LoyaltyRedemption(points: 150, discount: 750)))
        #expect(LoyaltyPolicy.redeem(99, price: 2_000, balance: 1_000, rules: rules) == .failure(.belowMinimum(100)))
        #expect(LoyaltyPolicy.redeem(201, price: 2_000, balance: 1_000, rules: rules) == .failure(.aboveMaximum(200)))
        #expect(LoyaltyPolicy.redeem(150, price: 2_000, balance: 149, rules: rules) == .failure(.notEnoughPoints(balance: 149)))
        #expect(LoyaltyPolicy.redeem(Int.max, price: Int.max, balance: Int.max, rules: rules).isFailure, "never traps")
    }

    @Test("Rules are checked field by field")
    func validation() {
        let bad = LoyaltyRules(pointsPerUnit: -1, pointValue: 0, validityDays: 0, minimumRedemption: 0, maxDiscountPercent: 100)
        guard case .failure(let error) = bad.validated() else { Issue.record("accepted"); return }
        #expect(Set(error.errors.fields.keys) == ["pointsPerUnit", "pointValue", "validityDays", "minimumRedemption", "maxDiscountPercent"])
        #expect((try? rules.validated().get()) == rules)
    }

    @Test("The balance replays the history: spending and expiry take the oldest points first; a debit beyond what is held stops at zero")
    func replay() {
        let t0: Int64 = 1_700_000_000_000
        var entries = [
            LoyaltyEntry(kind: .earned, points: 300, at: t0, expiresAt: t0 + 30 * day),
            LoyaltyEntry(kind: .earned, points: 200, at: t0 + 10 * day, expiresAt: t0 + 40 * day),
            LoyaltyEntry(kind: .redeemed, points: 100, at: t0 + 11 * day, expiresAt: t0 + 30 * day),
        ]
        var balance = LoyaltyBalance.replay(entries, now: t0 + 12 * day)
        #expect(balance.points == 400 && balance.nextExpiry == .init(points: 200, expiresAt: t0 + 30 * day) && balance.due.isEmpty)
        #expect(balance.expiryOfOldest(250) == t0 + 30 * day)
        // Past the first lot's expiry: what is left of it is due.
        balance = LoyaltyBalance.replay(entries, now: t0 + 31 * day)
        #expect(balance.points == 200 && balance.due == [.init(points: 200, expiresAt: t0 + 30 * day)])
        entries.append(LoyaltyEntry(kind: .expired, points: 200, at: t0 + 31 * day))
        balance = LoyaltyBalance.replay(entries, now: t0 + 31 * day)
        #expect(balance.points == 200 && balance.due.isEmpty && balance.nextExpiry?.expiresAt == t0 + 40 * day)
        // A revocation larger than what is left: zero, not negative.
        entries.append(LoyaltyEntry(kind: .revoked, points: 1_000, at: t0 + 32 * day))
        #expect(LoyaltyBalance.replay(entries, now: t0 + 32 * day).points == 0)
        // Points given back keep the expiry of the oldest they came from.
        let restored = LoyaltyBalance.replay([
            LoyaltyEntry(kind: .restored, points: 100, at: t0, expiresAt: t0 + day),
            LoyaltyEntry(kind: .earned, points: 50, at: t0, expiresAt: t0 + 5 * day),
        ], now: t0 + 2 * day)
        #expect(restored.points == 50 && restored.due == [.init(points: 100, expiresAt: t0 + day)])
    }
}

private extension Result {
    var isFailure: Bool { if case .failure = self { true } else { false } }
}
