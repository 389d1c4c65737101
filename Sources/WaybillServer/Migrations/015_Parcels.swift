import Fluent
import SQLKit

/// Parcels of other carriers that people follow (issue "Parcels of every carrier in one place").
struct CreateParcels: AsyncMigration {
    var name: String { "015_parcels" }

    func prepare(on database: any Database) async throws {
        try await database.transaction { db in
            try await db.schema("parcels")
                .field("id", .uuid, .identifier(auto: false))
                .field("owner_id", .uuid, .required, .references("users", "id", onDelete: .cascade))
                .field("number", .string, .required)
                .field("carrier", .string, .required)
                .field("format", .string)
                // The person chose the carrier: a later suggestion never changes it.
                .field("pinned", .bool, .required)
                .field("name", .string)
                .field("notes", .string)
                .field("status", .string, .required)
                .field("created_at", .int64, .required)
                .field("updated_at", .int64, .required)
                .unique(on: "owner_id", "number")
                .create()
            guard let sql = db as? any SQLDatabase else { throw MigrationNeedsSQL() }
            try await sql.create(index: "parcels_owner").on("parcels").column("owner_id").column("created_at").run()
        }
    }

    func revert(on database: any Database) async throws {
        try await database.schema("parcels").delete()
    }
}
