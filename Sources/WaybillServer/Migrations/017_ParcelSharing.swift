import Fluent
import SQLKit

/// Sharing followed parcels (with accounts, and by a revocable link), when to tell people about
/// them (per account and per parcel), and the incident reason of an event.
struct CreateParcelSharing: AsyncMigration {
    var name: String { "017_parcel_sharing" }

    func prepare(on database: any Database) async throws {
        try await database.transaction { db in
            guard let sql = db as? any SQLDatabase else { throw MigrationNeedsSQL() }
            try await sql.raw("ALTER TABLE parcel_events ADD COLUMN reason VARCHAR(40)").run()
            try await sql.raw("ALTER TABLE parcels ADD COLUMN share_token VARCHAR(40)").run()
            try await sql.raw("ALTER TABLE parcels ADD COLUMN alerts VARCHAR(20)").run()
            try await sql.create(index: "parcels_share_token").unique().on("parcels").column("share_token").run()
            try await db.schema("parcel_shares")
                .field("parcel_id", .uuid, .required, .references("parcels", "id", onDelete: .cascade))
                .field("user_id", .uuid, .required, .references("users", "id", onDelete: .cascade))
                .field("alerts", .string)
                .field("created_at", .int64, .required)
                .unique(on: "parcel_id", "user_id")
                .create()
            try await sql.create(index: "parcel_shares_user").on("parcel_shares").column("user_id").run()
            try await db.schema("parcel_settings")
                .field("user_id", .uuid, .identifier(auto: false), .references("users", "id", onDelete: .cascade))
                .field("alerts", .string, .required)
                .field("mail", .bool, .required)
                .field("push", .bool, .required)
                .create()
        }
    }

    func revert(on database: any Database) async throws {
        try await database.schema("parcel_settings").delete()
        try await database.schema("parcel_shares").delete()
    }
}
