import Fluent
import SQLKit

/// A driver's step sent with an idempotency key (from the app, or queued by the web app while
/// offline) is kept with its key, in the step's own transaction: sent again, it is answered, not
/// done twice.
struct CreateStepReceipts: AsyncMigration {
    var name: String { "032_step_receipts" }

    func prepare(on database: any Database) async throws {
        try await database.transaction { db in
            guard let sql = db as? any SQLDatabase else { throw MigrationNeedsSQL() }
            try await db.schema("step_receipts")
                .field("id", .uuid, .identifier(auto: false))
                .field("user_id", .uuid, .required, .references("users", "id"))
                .field("idempotency_key", .string, .required)
                .field("order_id", .uuid, .required, .references("orders", "id"))
                .field("action", .string, .required)
                .field("created_at", .int64, .required)
                .create()
            try await sql.create(index: "step_receipts_user_key").unique().on("step_receipts").column("user_id").column("idempotency_key").run()
        }
    }

    func revert(on database: any Database) async throws {
        try await database.schema("step_receipts").delete()
    }
}
