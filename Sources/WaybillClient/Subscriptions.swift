import Foundation
import OpenAPIRuntime
import WaybillCore

/// A subscription plan on offer.
public typealias PlanInfo = Components.Schemas.Plan
/// A customer's subscription: its plan as subscribed, status, period, included deliveries used, invoices.
public typealias SubscriptionInfo = Components.Schemas.Subscription
/// A subscription with its account, as admins list them.
public typealias SubscriberInfo = Components.Schemas.Subscriber

/// Subscription plans: customers subscribe (paying on ``SubscriptionInfo/checkoutUrl``), cancel at
/// the period's end or keep it; admins offer, change and withdraw plans. Quotes and orders apply
/// the plan by themselves (their `plan`).
extension WaybillSession {
    /// The plans on offer, cheapest first; `all` (admins) includes withdrawn ones.
    public func plans(all: Bool = false) async throws(WaybillError) -> [PlanInfo] {
        try await call { try await $0.listPlans(query: .init(all: all ? true : nil)).ok.body.json.plans }
    }

    /// Offers a plan (admins; audited).
    @discardableResult
    public func createPlan(_ terms: PlanTerms, active: Bool = true) async throws(WaybillError) -> PlanInfo {
        try await call { try await $0.createPlan(body: .json(Self.planInput(terms, active: active))).created.body.json }
    }

    /// Changes a plan, or withdraws it with `active: false` (admins; audited). Subscribers keep their terms.
    @discardableResult
    public func updatePlan(_ id: UUID, _ terms: PlanTerms, active: Bool) async throws(WaybillError) -> PlanInfo {
        try await call { try await $0.updatePlan(path: .init(planId: id.uuidString), body: .json(Self.planInput(terms, active: active))).ok.body.json }
    }

    /// The caller's newest subscription; nil if they never subscribed.
    public func subscription() async throws(WaybillError) -> SubscriptionInfo? {
        do {
            return try await call { try await $0.getSubscription().ok.body.json }
        } catch where error.errorCode == .notFound {
            return nil
        }
    }

    /// Subscribes to a plan: the answer is `incomplete`; open its `checkoutUrl` to pay.
    public func subscribe(to plan: UUID) async throws(WaybillError) -> SubscriptionInfo {
        try await call { try await $0.subscribe(body: .json(.init(planId: plan.uuidString))).created.body.json }
    }

    /// Stops the renewal: the plan stays until the end of the paid period.
    @discardableResult
    public func cancelSubscription() async throws(WaybillError) -> SubscriptionInfo {
        try await call { try await $0.cancelSubscription().ok.body.json }
    }

    /// Keeps a subscription that was set to end.
    @discardableResult
    public func resumeSubscription() async throws(WaybillError) -> SubscriptionInfo {
        try await call { try await $0.resumeSubscription().ok.body.json }
    }

    /// Who subscribes, newest first (admins): those paid for (active or past due) unless `status`
    /// says which; `plan` for one plan's. Pass the answer's `nextCursor` as `cursor` for the next page.
    public func subscribers(plan: UUID? = nil, status: SubscriptionStatus? = nil, cursor: String? = nil,
                            limit: Int? = nil) async throws(WaybillError) -> (items: [SubscriberInfo], nextCursor: String?) {
        let page = try await call {
            try await $0.listSubscribers(query: .init(planId: plan?.uuidString, status: status.flatMap { .init(rawValue: $0.rawValue) },
                                                      cursor: cursor, limit: limit)).ok.body.json
        }
        return (page.items, page.nextCursor)
    }

    private static func planInput(_ t: PlanTerms, active: Bool) -> Components.Schemas.PlanInput {
        .init(name: t.name, monthlyPrice: t.monthlyPrice, includedDeliveries: t.includedDeliveries, discountPercent: t.discountPercent,
              expressIncluded: t.expressIncluded, active: active)
    }
}
