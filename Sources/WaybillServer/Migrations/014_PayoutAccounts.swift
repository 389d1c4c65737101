import Fluent
import SQLKit

/// Travellers' payout accounts (issue "Travellers", item 7) and the receiver's code in their app
/// (item 6).
struct CreatePayoutAccounts: AsyncMigration {
    var name: String { "014_payout_accounts" }

    func prepare(on database: any Database) async throws {
        try await database.transaction { db in
            guard let sql = db as? any SQLDatabase else { throw MigrationNeedsSQL() }
            // The status last read from the provider (`PayoutAccountStatus`), and the time of the
            // event (or read) it came from, so an older event never overwrites a newer status.
            try await sql.raw("ALTER TABLE users ADD COLUMN payout_status TEXT").run()
            try await sql.raw("ALTER TABLE users ADD COLUMN payout_status_at BIGINT").run()
            // The receiver's code, sealed (AES-GCM under a key derived from the server secret):
            // shown to the receiver in their app while the parcel is on its way, erased at delivery.
            try await sql.raw("ALTER TABLE orders ADD COLUMN recipient_code_sealed TEXT").run()
            // The sandbox's connected accounts: onboarding is a page labelled as a test.
            try await db.schema("sandbox_accounts")
                .field("id", .string, .identifier(auto: false))
                .field("user_id", .uuid, .required, .references("users", "id", onDelete: .cascade))
                .field("details_submitted", .bool, .required)
                .field("transfers", .string, .required)
                .field("created_at", .int64, .required)
                .create()
            // A reversed payout (a refund after the traveller was paid) keeps its reversal's id.
            try await sql.raw("ALTER TABLE sandbox_payouts ADD COLUMN reversed_at BIGINT").run()
        }
    }

    func revert(on database: any Database) async throws {
        try await database.schema("sandbox_accounts").delete()
    }
}
