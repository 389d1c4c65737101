import Fluent
import Foundation
import WaybillCore

/// A plan an admin offers (`PlanTerms`), priced in the tariff's currency.
final class PlanRecord: Model, @unchecked Sendable {
    static let schema = "plans"

    @ID(custom: .id, generatedBy: .random) var id: PlanID?
    @Field(key: "name") var name: String
    @Field(key: "monthly_price") var monthlyPrice: Int
    @Field(key: "currency") var currency: String
    @Field(key: "included_deliveries") var includedDeliveries: Int
    @Field(key: "discount_percent") var discountPercent: Int
    @Field(key: "express_included") var expressIncluded: Bool
    /// Offered to new subscribers.
    @Field(key: "active") var active: Bool
    @OptionalField(key: "created_by") var createdBy: UserID?
    @Field(key: "created_at") var createdAt: Int64
    @Field(key: "updated_at") var updatedAt: Int64

    var properties: [any AnyProperty] {
        [$id, $name, $monthlyPrice, $currency, $includedDeliveries, $discountPercent, $expressIncluded, $active, $createdBy, $createdAt, $updatedAt]
    }

    init() {}

    var terms: PlanTerms {
        get { PlanTerms(name: name, monthlyPrice: monthlyPrice, includedDeliveries: includedDeliveries, discountPercent: discountPercent,
                        expressIncluded: expressIncluded) }
        set {
            name = newValue.name
            monthlyPrice = newValue.monthlyPrice
            includedDeliveries = newValue.includedDeliveries
            discountPercent = newValue.discountPercent
            expressIncluded = newValue.expressIncluded
        }
    }
}

extension SubscriptionStatus: TextColumn {}

/// A customer's subscription to a plan, as the payment provider last reported it.
final class SubscriptionRecord: Model, @unchecked Sendable {
    static let schema = "subscriptions"

    @ID(custom: .id, generatedBy: .random) var id: SubscriptionID?
    @Field(key: "account_id") var accountID: UserID
    @Field(key: "plan_id") var planID: PlanID
    /// The plan's terms when subscribed (JSON `PlanTerms`).
    @Field(key: "terms") var termsJSON: String
    @Field(key: "currency") var currency: String
    @Field(key: "status") var status: SubscriptionStatus
    /// The provider's subscription (`sub_…`), once the checkout is paid.
    @OptionalField(key: "provider_id") var providerID: String?
    @OptionalField(key: "checkout_id") var checkoutID: String?
    @OptionalField(key: "checkout_url") var checkoutURL: String?
    @OptionalField(key: "period_start") var periodStart: Int64?
    @OptionalField(key: "period_end") var periodEnd: Int64?
    @Field(key: "cancel_at_period_end") var cancelAtPeriodEnd: Bool
    @OptionalField(key: "grace_ends_at") var graceEndsAt: Int64?
    @Field(key: "included_used") var includedUsed: Int
    @Field(key: "sandbox") var sandbox: Bool
    @Field(key: "created_at") var createdAt: Int64
    @Field(key: "updated_at") var updatedAt: Int64

    var properties: [any AnyProperty] {
        [$id, $accountID, $planID, $termsJSON, $currency, $status, $providerID, $checkoutID, $checkoutURL, $periodStart, $periodEnd,
         $cancelAtPeriodEnd, $graceEndsAt, $includedUsed, $sandbox, $createdAt, $updatedAt]
    }

    init() {}

    var terms: PlanTerms {
        get throws { try Order.decoder.decode(PlanTerms.self, from: Data(termsJSON.utf8)) }
    }

    var term: SubscriptionTerm {
        SubscriptionTerm(status: status, periodStart: periodStart, periodEnd: periodEnd, graceEndsAt: graceEndsAt,
                         cancelAtPeriodEnd: cancelAtPeriodEnd, includedUsed: includedUsed)
    }
}

/// An invoice of a subscription as the provider reported it (paid, or a payment that failed).
final class SubscriptionInvoiceRecord: Model, @unchecked Sendable {
    static let schema = "subscription_invoices"

    @ID(custom: "id", generatedBy: .user) var id: String?
    @Field(key: "subscription_id") var subscriptionID: SubscriptionID
    @Field(key: "amount") var amount: Int
    @Field(key: "currency") var currency: String
    @Field(key: "status") var status: InvoiceStatus
    @Field(key: "at") var at: Int64

    var properties: [any AnyProperty] { [$id, $subscriptionID, $amount, $currency, $status, $at] }

    init() {}
}

/// The sandbox's stand-in for a Stripe Billing subscription: no money moves.
final class SandboxSubscription: Model, @unchecked Sendable {
    static let schema = "sandbox_subscriptions"

    @ID(custom: "id", generatedBy: .user) var id: String?
    @Field(key: "checkout_id") var checkoutID: String
    @Field(key: "subscription_id") var subscriptionID: SubscriptionID
    @Field(key: "amount") var amount: Int
    @Field(key: "currency") var currency: String
    /// open (checkout not paid), active, past_due, canceled, expired (checkout abandoned).
    @Field(key: "status") var status: String
    @OptionalField(key: "period_start") var periodStart: Int64?
    @OptionalField(key: "period_end") var periodEnd: Int64?
    @Field(key: "cancel_at_period_end") var cancelAtPeriodEnd: Bool
    @Field(key: "created_at") var createdAt: Int64

    var properties: [any AnyProperty] {
        [$id, $checkoutID, $subscriptionID, $amount, $currency, $status, $periodStart, $periodEnd, $cancelAtPeriodEnd, $createdAt]
    }

    init() {}
}
