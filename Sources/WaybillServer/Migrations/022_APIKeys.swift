import Fluent
import SQLKit

/// API keys for server-to-server clients: only a hash of each is kept.
struct CreateAPIKeys: AsyncMigration {
    var name: String { "022_api_keys" }

    func prepare(on database: any Database) async throws {
        try await database.transaction { db in
            guard let sql = db as? any SQLDatabase else { throw MigrationNeedsSQL() }
            try await db.schema("api_keys")
                .field("id", .uuid, .identifier(auto: false))
                .field("owner_id", .uuid, .required, .references("users", "id", onDelete: .cascade))
                .field("name", .string, .required)
                .field("hint", .string, .required)
                .field("token_hash", .string, .required)
                .field("scopes", .string, .required)
                .field("created_at", .int64, .required)
                .field("expires_at", .int64)
                .field("revoked_at", .int64)
                .field("last_used_at", .int64)
                .create()
            try await sql.create(index: "api_keys_token").unique().on("api_keys").column("token_hash").run()
            try await sql.create(index: "api_keys_owner").on("api_keys").column("owner_id").run()
        }
    }

    func revert(on database: any Database) async throws {
        try await database.schema("api_keys").delete()
    }
}
