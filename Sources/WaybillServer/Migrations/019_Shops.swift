import Fluent
import SQLKit

/// Shops connected to an account (Shopify, WooCommerce): their orders' tracking numbers arrive by
/// signed webhooks; each delivery is handled once.
struct CreateShops: AsyncMigration {
    var name: String { "019_shops" }

    func prepare(on database: any Database) async throws {
        try await database.transaction { db in
            guard let sql = db as? any SQLDatabase else { throw MigrationNeedsSQL() }
            try await db.schema("shops")
                .field("id", .uuid, .identifier(auto: false))
                .field("owner_id", .uuid, .required, .references("users", "id", onDelete: .cascade))
                .field("platform", .string, .required)
                .field("name", .string, .required)
                .field("secret_sealed", .string, .required)
                .field("created_at", .int64, .required)
                .field("last_delivery_at", .int64)
                .field("numbers_received", .int, .required)
                .create()
            try await sql.create(index: "shops_owner").on("shops").column("owner_id").run()
            try await db.schema("shop_deliveries")
                .field("shop_id", .uuid, .required, .references("shops", "id", onDelete: .cascade))
                .field("delivery_id", .string, .required)
                .field("received_at", .int64, .required)
                .unique(on: "shop_id", "delivery_id")
                .create()
        }
    }

    func revert(on database: any Database) async throws {
        try await database.schema("shop_deliveries").delete()
        try await database.schema("shops").delete()
    }
}
