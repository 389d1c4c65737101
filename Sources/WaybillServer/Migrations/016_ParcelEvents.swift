import Fluent
import SQLKit

/// Following parcels at their carriers: their events, when to ask again, and each carrier's
/// request budget (kept in the database so it survives restarts and is shared by every process).
struct CreateParcelEvents: AsyncMigration {
    var name: String { "016_parcel_events" }

    func prepare(on database: any Database) async throws {
        try await database.transaction { db in
            guard let sql = db as? any SQLDatabase else { throw MigrationNeedsSQL() }
            try await sql.raw("ALTER TABLE parcels ADD COLUMN next_check_at BIGINT").run()
            try await sql.raw("ALTER TABLE parcels ADD COLUMN last_checked_at BIGINT").run()
            try await sql.raw("ALTER TABLE parcels ADD COLUMN estimated_delivery BIGINT").run()
            try await sql.raw("ALTER TABLE parcels ADD COLUMN check_failures INTEGER NOT NULL DEFAULT 0").run()
            try await sql.create(index: "parcels_due").on("parcels").column("carrier").column("next_check_at").run()
            try await db.schema("parcel_events")
                .field("id", .int64, .identifier(auto: true))
                .field("parcel_id", .uuid, .required, .references("parcels", "id", onDelete: .cascade))
                .field("identity", .string, .required)
                .field("at", .int64, .required)
                .field("time_zone_known", .bool, .required)
                .field("local_time", .string, .required)
                .field("raw_code", .string, .required)
                .field("status", .string)
                .field("description", .string, .required)
                .field("location", .string)
                .field("latitude", .double)
                .field("longitude", .double)
                .unique(on: "parcel_id", "identity")
                .create()
            try await sql.create(index: "parcel_events_parcel").on("parcel_events").column("parcel_id").column("at").run()
            try await db.schema("carrier_budgets")
                .field("carrier", .string, .identifier(auto: false))
                .field("day", .string, .required)
                .field("used", .int, .required)
                .field("blocked_until", .int64)
                .create()
        }
    }

    func revert(on database: any Database) async throws {
        try await database.schema("carrier_budgets").delete()
        try await database.schema("parcel_events").delete()
    }
}
