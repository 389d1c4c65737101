import Fluent
import Foundation
import SQLKit

/// Payouts to those who carry legs: what the sandbox provider records instead of moving money, and
/// the claims that keep two payouts of one shipment from both passing the "no more than was paid"
/// check while the provider is asked. (Payouts themselves are ledger entries,
/// `ledger_entries.kind = 'payout'`.)
struct CreatePayouts: AsyncMigration {
    var name: String { "009_payouts" }

    func prepare(on database: any Database) async throws {
        try await database.schema("sandbox_payouts")
            .field("id", .string, .identifier(auto: false))
            .field("shipment_id", .uuid, .required, .references("orders", "id"))
            .field("account_id", .uuid, .required, .references("users", "id"))
            .field("destination", .string, .required)
            .field("amount", .int64, .required)
            .field("currency", .string, .required)
            .field("idempotency_key", .string, .required)
            .field("created_at", .int64, .required)
            .unique(on: "idempotency_key")
            .create()
        try await database.schema("payout_claims")
            .field("idempotency_key", .string, .identifier(auto: false))
            .field("shipment_id", .uuid, .required, .references("orders", "id"))
            .field("account_id", .uuid, .required, .references("users", "id"))
            .field("amount", .int64, .required)
            .field("currency", .string, .required)
            .field("claimed_at", .int64, .required)
            .create()
    }

    func revert(on database: any Database) async throws {
        try await database.schema("payout_claims").delete()
        try await database.schema("sandbox_payouts").delete()
    }
}
