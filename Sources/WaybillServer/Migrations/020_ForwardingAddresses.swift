import Fluent
import SQLKit

/// Each account's personal forwarding address for shipping confirmations (`parcels+TOKEN@domain`).
struct CreateForwardingAddresses: AsyncMigration {
    var name: String { "020_forwarding_addresses" }

    func prepare(on database: any Database) async throws {
        try await database.transaction { db in
            guard let sql = db as? any SQLDatabase else { throw MigrationNeedsSQL() }
            try await db.schema("forwarding_addresses")
                .field("user_id", .uuid, .identifier(auto: false), .references("users", "id", onDelete: .cascade))
                .field("token", .string, .required)
                .field("created_at", .int64, .required)
                .create()
            try await sql.create(index: "forwarding_addresses_token").unique().on("forwarding_addresses").column("token").run()
        }
    }

    func revert(on database: any Database) async throws {
        try await database.schema("forwarding_addresses").delete()
    }
}
