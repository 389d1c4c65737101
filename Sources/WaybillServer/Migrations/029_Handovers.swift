import Fluent
import SQLKit

/// Shipping labels and scans: each shipment's hand-over token (what its label's QR code carries),
/// and every scan of one, accepted or refused, for the record.
struct AddHandoverTokens: AsyncMigration {
    var name: String { "029_handover_tokens" }

    func prepare(on database: any Database) async throws {
        try await database.transaction { db in
            guard let sql = db as? any SQLDatabase else { throw MigrationNeedsSQL() }
            try await sql.raw("ALTER TABLE orders ADD COLUMN handover_token TEXT").run()
            try await sql.create(index: "orders_handover_token").unique().on("orders").column("handover_token").run()
            try await db.schema("handover_scans")
                .field("id", .uuid, .identifier(auto: false))
                .field("order_id", .uuid, .references("orders", "id"))
                .field("scanned_by", .uuid, .required, .references("users", "id"))
                // What the scan was for (the step), and how it went: accepted, wrong_token, replayed, not_allowed.
                .field("step", .string, .required)
                .field("outcome", .string, .required)
                .field("created_at", .int64, .required)
                .create()
            try await sql.create(index: "handover_scans_order").on("handover_scans").column("order_id").run()
        }
    }

    func revert(on database: any Database) async throws {
        try await database.schema("handover_scans").delete()
        guard let sql = database as? any SQLDatabase else { throw MigrationNeedsSQL() }
        try await sql.raw("DROP INDEX orders_handover_token").run()
        try await sql.raw("ALTER TABLE orders DROP COLUMN handover_token").run()
    }
}
