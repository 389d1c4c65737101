import Fluent
import Foundation
import SQLKit

/// Subscription plans: what admins offer, each customer's subscription (one current at a time),
/// the provider's invoices for it, the sandbox's stand-in for Stripe Billing, and what a plan took
/// off an order.
struct CreateSubscriptions: AsyncMigration {
    var name: String { "036_subscriptions" }

    func prepare(on database: any Database) async throws {
        try await database.transaction { db in
            guard let sql = db as? any SQLDatabase else { throw MigrationNeedsSQL() }
            try await db.schema("plans")
                .id()
                .field("name", .string, .required)
                .field("monthly_price", .int64, .required)
                .field("currency", .string, .required)
                .field("included_deliveries", .int64, .required)
                .field("discount_percent", .int64, .required)
                .field("express_included", .bool, .required)
                .field("active", .bool, .required)
                .field("created_by", .uuid)
                .field("created_at", .int64, .required)
                .field("updated_at", .int64, .required)
                .create()
            try await db.schema("subscriptions")
                .id()
                .field("account_id", .uuid, .required, .references("users", "id"))
                .field("plan_id", .uuid, .required, .references("plans", "id"))
                // The plan's terms as subscribed (JSON `PlanTerms`) and their currency.
                .field("terms", .string, .required)
                .field("currency", .string, .required)
                .field("status", .string, .required)
                .field("provider_id", .string)
                .field("checkout_id", .string)
                .field("checkout_url", .string)
                .field("period_start", .int64)
                .field("period_end", .int64)
                .field("cancel_at_period_end", .bool, .required)
                .field("grace_ends_at", .int64)
                .field("included_used", .int64, .required)
                .field("sandbox", .bool, .required)
                .field("created_at", .int64, .required)
                .field("updated_at", .int64, .required)
                .unique(on: "provider_id")
                .unique(on: "checkout_id")
                .create()
            // One current subscription per account, whatever races: a partial unique index (both
            // SQLite and PostgreSQL have them).
            try await sql.raw("""
                CREATE UNIQUE INDEX subscriptions_current ON subscriptions (account_id)
                WHERE status IN ('incomplete', 'active', 'past_due')
                """).run()
            // An account's subscriptions, the newest first (its page, its quotes).
            try await sql.create(index: "subscriptions_account").on("subscriptions").column("account_id").column("created_at").run()
            try await db.schema("subscription_invoices")
                .field("id", .string, .identifier(auto: false))
                .field("subscription_id", .uuid, .required, .references("subscriptions", "id"))
                .field("amount", .int64, .required)
                .field("currency", .string, .required)
                .field("status", .string, .required)
                .field("at", .int64, .required)
                .create()
            try await sql.create(index: "subscription_invoices_subscription").on("subscription_invoices").column("subscription_id").run()
            try await db.schema("sandbox_subscriptions")
                .field("id", .string, .identifier(auto: false))
                .field("checkout_id", .string, .required)
                .field("subscription_id", .uuid, .required)
                .field("amount", .int64, .required)
                .field("currency", .string, .required)
                .field("status", .string, .required)
                .field("period_start", .int64)
                .field("period_end", .int64)
                .field("cancel_at_period_end", .bool, .required)
                .field("created_at", .int64, .required)
                .unique(on: "checkout_id")
                .create()
            // One column per statement: SQLite adds one at a time.
            try await db.schema("orders").field("plan_subscription_id", .uuid).update()
            try await db.schema("orders").field("plan_included", .bool).update()
            try await db.schema("orders").field("plan_discount", .int64).update()
            try await db.schema("orders").field("plan_name", .string).update()
        }
    }

    func revert(on database: any Database) async throws {
        try await database.schema("orders").deleteField("plan_name").update()
        try await database.schema("orders").deleteField("plan_discount").update()
        try await database.schema("orders").deleteField("plan_included").update()
        try await database.schema("orders").deleteField("plan_subscription_id").update()
        try await database.schema("sandbox_subscriptions").delete()
        try await database.schema("subscription_invoices").delete()
        try await database.schema("subscriptions").delete()
        try await database.schema("plans").delete()
    }
}
