import Foundation
import Testing
@testable import WaybillCore

@Suite("Subscription plans: what a plan takes off a quote, when it applies, grace after a failed renewal")
struct PlanRulesTests {
    let day: Int64 = 86_400_000
    let pro = PlanTerms(name: "Pro", monthlyPrice: 4_900, includedDeliveries: 5, discountPercent: 20, expressIncluded: true)
    let basic = PlanTerms(name: "Basic", monthlyPrice: 1_900, includedDeliveries: 2, discountPercent: 0, expressIncluded: false)

    func quote(_ service: ServiceLevel, _ plan: PlanBenefit?, insurance: InsuranceCover? = nil) -> Quote {
        Pricing.quote(tariff: .initial, weightClass: .small, service: service, pickup: nil, dropoff: nil, insurance: insurance, plan: plan)
    }

    @Test("An included delivery costs nothing but what the plan leaves out (the express surcharge, the insurance)")
    func includedDelivery() {
        let free = quote(.standard, PlanBenefit(terms: basic, includedLeft: 2))
        #expect(free.price.amount == 0 && free.plan == PlanApplied(name: "Basic", included: true, discount: 1_500))
        #expect(free.breakdown.last?.kind == .plan && free.breakdown.last?.amount == -1_500)
        // Express is not part of Basic: the surcharge (CHF 7.50 on a CHF 15 flat rate) is paid.
        let express = quote(.express, PlanBenefit(terms: basic, includedLeft: 1))
        #expect(express.price.amount == 750)
        // Pro includes express: nothing to pay.
        #expect(quote(.express, PlanBenefit(terms: pro, includedLeft: 1)).price.amount == 0)
        // The insurance premium is never covered.
        let insured = quote(.standard, PlanBenefit(terms: basic, includedLeft: 1), insurance: InsuranceCover(declaredValue: 50_000, premium: 600))
        #expect(insured.price.amount == 600)
        for q in [free, express, insured] { #expect(q.breakdown.reduce(0) { $0 + $1.amount } == q.price.amount, "the lines add up") }
    }

    @Test("Beyond the included deliveries: express included, then the plan's discount on what is left; without a plan, nothing changes")
    func discountBeyondIncluded() {
        let used = quote(.express, PlanBenefit(terms: pro, includedLeft: 0))
        // CHF 15 flat + 7.50 express; express included (−7.50), then 20 % of 15 (−3).
        #expect(used.price.amount == 1_200 && used.plan == PlanApplied(name: "Pro", included: false, discount: 1_050))
        #expect(used.breakdown.filter { $0.kind == .plan }.map(\.amount) == [-750, -300])
        #expect(quote(.standard, PlanBenefit(terms: basic, includedLeft: 0)).plan == nil, "a used-up plan without discount shows nothing")
        #expect(quote(.standard, nil) == Pricing.quote(tariff: .initial, weightClass: .small, service: .standard, pickup: nil, dropoff: nil))
        #expect(PlanBenefit(terms: pro, includedLeft: -3).includedLeft == 0)
        // Points then apply to what the plan left.
        let withPoints = used.applying(LoyaltyRedemption(points: 100, discount: 500))
        #expect(withPoints.price.amount == 700 && withPoints.breakdown.reduce(0) { $0 + $1.amount } == 700)
    }

    @Test("The benefit applies while paid for, an hour past the period's end, and through the grace of a failed renewal")
    func whenItApplies() {
        let now: Int64 = 1_800_000_000_000
        var term = SubscriptionTerm(status: .active, periodStart: now - 10 * day, periodEnd: now + 20 * day, graceEndsAt: nil,
                                    cancelAtPeriodEnd: false, includedUsed: 0)
        #expect(term.benefitApplies(at: now))
        #expect(term.benefitApplies(at: now + 20 * day + 1_000) && !term.benefitApplies(at: now + 21 * day))
        term.cancelAtPeriodEnd = true
        #expect(term.benefitApplies(at: now), "cancelled at period end: the paid month stays")
        term.status = .pastDue
        #expect(!term.benefitApplies(at: now), "past due without a grace deadline gives nothing")
        term.graceEndsAt = SubscriptionPolicy.graceEnd(failedAt: now, days: 7, current: nil)
        #expect(term.benefitApplies(at: now + 6 * day) && !term.benefitApplies(at: now + 7 * day))
        #expect(SubscriptionPolicy.graceEnd(failedAt: now + day, days: 7, current: term.graceEndsAt) == term.graceEndsAt,
                "a second failure keeps the first deadline")
        #expect(SubscriptionPolicy.graceEnd(failedAt: Int64.max, days: 99, current: nil) != 0, "never traps")
        for status in [SubscriptionStatus.incomplete, .canceled] {
            term.status = status
            #expect(!term.benefitApplies(at: now))
        }
    }

    @Test("One current subscription per account; cancel stops the renewal once; a renewal resets the included count")
    func lifecycle() {
        #expect(SubscriptionPolicy.maySubscribe(current: nil, planActive: true).isSuccess)
        #expect(SubscriptionPolicy.maySubscribe(current: .incomplete, planActive: true).isSuccess, "an unpaid request is replaced")
        #expect(SubscriptionPolicy.maySubscribe(current: .active, planActive: true).refusal == .alreadySubscribed)
        #expect(SubscriptionPolicy.maySubscribe(current: .pastDue, planActive: true).refusal == .alreadySubscribed)
        #expect(SubscriptionPolicy.maySubscribe(current: nil, planActive: false).refusal == .planClosed)
        var term = SubscriptionTerm(status: .active, periodStart: 1, periodEnd: 2, graceEndsAt: nil, cancelAtPeriodEnd: false, includedUsed: 3)
        #expect(SubscriptionPolicy.mayCancel(term).isSuccess && SubscriptionPolicy.mayResume(term).refusal == .notResumable)
        term.cancelAtPeriodEnd = true
        #expect(SubscriptionPolicy.mayCancel(term).refusal == .notCancellable && SubscriptionPolicy.mayResume(term).isSuccess)
        #expect(SubscriptionPolicy.includedUsed(after: term, newPeriodStart: 1) == 3)
        #expect(SubscriptionPolicy.includedUsed(after: term, newPeriodStart: 2) == 0)
        #expect(SubscriptionStatus.ofStripe("trialing") == .active && SubscriptionStatus.ofStripe("unpaid") == .pastDue
                && SubscriptionStatus.ofStripe("incomplete_expired") == .canceled && SubscriptionStatus.ofStripe("what") == .canceled)
    }

    @Test("Plans are checked field by field and must give something")
    func validation() {
        let bad = PlanTerms(name: "  ", monthlyPrice: 0, includedDeliveries: -1, discountPercent: 95, expressIncluded: false)
        guard case .failure(let error) = bad.validated() else { Issue.record("accepted"); return }
        #expect(Set(error.errors.fields.keys) == ["name", "monthlyPrice", "includedDeliveries", "discountPercent"])
        let nothing = PlanTerms(name: "Nothing", monthlyPrice: 500, includedDeliveries: 0, discountPercent: 0, expressIncluded: false)
        guard case .failure(let none) = nothing.validated() else { Issue.record("accepted a plan that gives nothing"); return }
        #expect(none.errors.fields["includedDeliveries"] == "plan_gives_nothing")
        #expect((try? PlanTerms(name: " Pro ", monthlyPrice: 4_900, includedDeliveries: 5, discountPercent: 0, expressIncluded: false).validated().get())?.name == "Pro")
    }
}

private extension Result {
    var isSuccess: Bool { if case .success = self { true } else { false } }
    var refusal: Failure? { if case .failure(let f) = self { f } else { nil } }
}
