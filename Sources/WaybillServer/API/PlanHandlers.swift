import Foundation
import OpenAPIRuntime
import WaybillAPI
import WaybillCore

/// Subscription plans: translation only (`Subscriptions`, `PlanTerms` and `SubscriptionPolicy` decide).
extension APIHandler {
    var subscriptions: Subscriptions { get throws { Subscriptions(request: try request) } }

    func listPlans(_ input: Operations.ListPlans.Input) async throws -> Operations.ListPlans.Output {
        let me = try await principal()
        let plans = try await subscriptions.plans(all: input.query.all ?? false, for: me)
        return .ok(.init(body: .json(S.PlanList(plans: try plans.map(Self.plan)))))
    }

    func createPlan(_ input: Operations.CreatePlan.Input) async throws -> Operations.CreatePlan.Output {
        let me = try await principal()
        guard case .json(let body) = input.body else { throw WaybillError.unsupportedBody }
        let plan = try await subscriptions.createPlan(Self.terms(body), active: body.active ?? true, by: me)
        return .created(.init(body: .json(try Self.plan(plan))))
    }

    func updatePlan(_ input: Operations.UpdatePlan.Input) async throws -> Operations.UpdatePlan.Output {
        let me = try await principal()
        guard let id = PlanID(uuidString: input.path.planId) else { throw WaybillError.invalidParameter("planId") }
        guard case .json(let body) = input.body else { throw WaybillError.unsupportedBody }
        let plan = try await subscriptions.updatePlan(id, Self.terms(body), active: body.active ?? true, by: me)
        return .ok(.init(body: .json(try Self.plan(plan))))
    }

    func getSubscription(_ input: Operations.GetSubscription.Input) async throws -> Operations.GetSubscription.Output {
        let me = try await principal()
        guard let view = try await subscriptions.current(for: me) else {
            throw WaybillError(.notFound, .notFound, "You have no subscription.")
        }
        return .ok(.init(body: .json(try Self.subscription(view))))
    }

    func subscribe(_ input: Operations.Subscribe.Input) async throws -> Operations.Subscribe.Output {
        let me = try await principal()
        guard case .json(let body) = input.body else { throw WaybillError.unsupportedBody }
        guard let planID = PlanID(uuidString: body.planId) else { throw WaybillError.validation("planId", "invalid") }
        return .created(.init(body: .json(try Self.subscription(try await subscriptions.subscribe(to: planID, by: me)))))
    }

    func cancelSubscription(_ input: Operations.CancelSubscription.Input) async throws -> Operations.CancelSubscription.Output {
        .ok(.init(body: .json(try Self.subscription(try await subscriptions.cancel(by: try await principal())))))
    }

    func resumeSubscription(_ input: Operations.ResumeSubscription.Input) async throws -> Operations.ResumeSubscription.Output {
        .ok(.init(body: .json(try Self.subscription(try await subscriptions.resume(by: try await principal())))))
    }

    func listSubscribers(_ input: Operations.ListSubscribers.Input) async throws -> Operations.ListSubscribers.Output {
        let me = try await principal()
        let q = input.query
        let plan = try q.planId.map { raw -> PlanID in
            guard let id = PlanID(uuidString: raw) else { throw WaybillError.invalidParameter("planId") }
            return id
        }
        let status = q.status.flatMap { SubscriptionStatus(rawValue: $0.rawValue) }
        let page = try await subscriptions.subscribers(plan: plan, status: status, cursor: q.cursor, limit: q.limit ?? 50, for: me)
        return .ok(.init(body: .json(S.SubscriberPage(items: try page.items.map(Self.subscriber), nextCursor: page.nextCursor))))
    }

    /// Admins see the account with its email, and the subscription without its invoices or its checkout.
    static func subscriber(_ s: Subscriptions.Subscriber) throws -> S.Subscriber {
        var subscription = try subscription(s.view)
        subscription.invoices = nil
        subscription.checkoutUrl = nil
        return S.Subscriber(account: person(s.account, withEmail: true), subscription: subscription)
    }

    static func terms(_ body: S.PlanInput) -> PlanTerms {
        PlanTerms(name: body.name, monthlyPrice: body.monthlyPrice, includedDeliveries: body.includedDeliveries,
                  discountPercent: body.discountPercent, expressIncluded: body.expressIncluded)
    }

    static func plan(_ p: PlanRecord) throws -> S.Plan {
        plan(p.terms, id: try p.storedID, currency: p.currency, active: p.active, createdAt: p.createdAt)
    }

    static func plan(_ t: PlanTerms, id: PlanID, currency: String, active: Bool, createdAt: Int64) -> S.Plan {
        S.Plan(id: id.uuidString, name: t.name, monthlyPrice: money(Money(t.monthlyPrice, currency)), includedDeliveries: t.includedDeliveries,
               discountPercent: t.discountPercent, expressIncluded: t.expressIncluded, active: active, createdAt: date(createdAt))
    }

    static func subscription(_ view: Subscriptions.View) throws -> S.Subscription {
        let r = view.record
        return S.Subscription(
            id: try r.storedID.uuidString,
            plan: plan(view.terms, id: r.planID, currency: r.currency, active: true, createdAt: r.createdAt),
            status: try wire(r.status),
            currentPeriodStart: r.periodStart.map(date), currentPeriodEnd: r.periodEnd.map(date),
            cancelAtPeriodEnd: r.cancelAtPeriodEnd, graceEndsAt: SubscriptionPolicy.graceEnds(r.status, at: r.graceEndsAt).map(date),
            includedUsed: r.includedUsed, benefitApplies: view.benefitApplies, sandbox: r.sandbox,
            checkoutUrl: SubscriptionPolicy.checkoutLink(r.status, r.checkoutURL),
            invoices: try view.invoices.map { S.SubscriptionInvoice(id: $0.id ?? "", amount: money(Money($0.amount, $0.currency)),
                                                                 status: try wire($0.status), at: date($0.at)) },
            createdAt: date(r.createdAt))
    }
}
