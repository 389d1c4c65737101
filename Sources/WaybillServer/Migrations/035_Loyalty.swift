import Fluent
import Foundation
import SQLKit

/// Loyalty points: the rules admins set (versioned like the tariff), each account's history of
/// points (earned, spent, given back, expired, taken back), and what an order spent.
struct CreateLoyalty: AsyncMigration {
    var name: String { "035_loyalty" }

    func prepare(on database: any Database) async throws {
        try await database.transaction { db in
            guard let sql = db as? any SQLDatabase else { throw MigrationNeedsSQL() }
            try await db.schema("loyalty_rules")
                .field("version", .int, .identifier(auto: false))
                .field("data", .string, .required)
                .field("created_by", .uuid)
                .field("created_at", .int64, .required)
                .create()
            // The first rules as this migration shipped them, as a plain row (not `LoyaltyRules.initial`, which may change).
            let initial = #"{"maxDiscountPercent":50,"minimumRedemption":100,"pointValue":5,"pointsPerUnit":1,"validityDays":365}"#
            try await sql.insert(into: "loyalty_rules").columns("version", "data", "created_by", "created_at")
                .values(SQLBind(1), SQLBind(initial), SQLLiteral.null, SQLBind(Int64(Date().timeIntervalSince1970 * 1000))).run()
            try await db.schema("loyalty_entries")
                .id()
                .field("account_id", .uuid, .required, .references("users", "id"))
                .field("kind", .string, .required)
                .field("points", .int64, .required)
                .field("order_id", .uuid, .references("orders", "id"))
                .field("expires_at", .int64)
                .field("created_at", .int64, .required)
                // An order earns, spends, gets back and loses its points once each.
                .unique(on: "order_id", "kind")
                .create()
            try await sql.create(index: "loyalty_entries_account").on("loyalty_entries").column("account_id").column("created_at").run()
            // One column per statement: SQLite adds one at a time.
            try await db.schema("orders").field("points_redeemed", .int64).update()
            try await db.schema("orders").field("points_discount", .int64).update()
        }
    }

    func revert(on database: any Database) async throws {
        try await database.schema("orders").deleteField("points_discount").update()
        try await database.schema("orders").deleteField("points_redeemed").update()
        try await database.schema("loyalty_entries").delete()
        try await database.schema("loyalty_rules").delete()
    }
}
