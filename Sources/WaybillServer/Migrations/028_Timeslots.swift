import Fluent
import SQLKit

/// Timeslots: weekly templates per zone (a postal-code prefix), the slots they make on each local
/// date (made when first looked at, one row per template and date), short holds while someone
/// finishes an order, and bookings of a shipment's pickup or delivery. A seat is taken by one
/// conditional update of the slot's `booked` in the shipment's transaction.
struct CreateTimeslots: AsyncMigration {
    var name: String { "028_timeslots" }

    func prepare(on database: any Database) async throws {
        try await database.transaction { db in
            guard let sql = db as? any SQLDatabase else { throw MigrationNeedsSQL() }
            try await db.schema("slot_templates")
                .field("id", .uuid, .identifier(auto: false))
                .field("kind", .string, .required)
                // A postal-code prefix ("30", "3005"); empty: everywhere.
                .field("zone", .string, .required)
                .field("weekday", .int, .required)
                .field("start_minute", .int, .required)
                .field("end_minute", .int, .required)
                .field("capacity", .int, .required)
                .field("cutoff_minutes", .int, .required)
                .field("horizon_days", .int, .required)
                .field("time_zone", .string, .required)
                .field("requires_approval", .bool, .required)
                .field("active", .bool, .required)
                .field("created_by", .uuid, .references("users", "id"))
                .field("created_at", .int64, .required)
                .create()
            try await db.schema("slots")
                .field("id", .uuid, .identifier(auto: false))
                .field("template_id", .uuid, .required, .references("slot_templates", "id"))
                .field("local_date", .string, .required)
                .field("starts_at", .int64, .required)
                .field("ends_at", .int64, .required)
                .field("capacity", .int, .required)
                .field("booked", .int, .required)
                .field("closed", .bool, .required)
                .unique(on: "template_id", "local_date")
                .create()
            try await sql.create(index: "slots_starts_at").on("slots").column("starts_at").run()
            try await db.schema("slot_holds")
                .field("slot_id", .uuid, .required, .references("slots", "id"))
                .field("holder_id", .uuid, .required, .references("users", "id"))
                .field("expires_at", .int64, .required)
                .unique(on: "slot_id", "holder_id")
                .create()
            try await db.schema("slot_bookings")
                .field("id", .uuid, .identifier(auto: false))
                .field("slot_id", .uuid, .required, .references("slots", "id"))
                .field("order_id", .uuid, .required, .references("orders", "id"))
                .field("kind", .string, .required)
                .field("status", .string, .required)
                .field("booked_by", .uuid, .required, .references("users", "id"))
                .field("reason", .string)
                .field("decided_by", .uuid, .references("users", "id"))
                .field("decided_at", .int64)
                .field("created_at", .int64, .required)
                .field("updated_at", .int64, .required)
                .create()
            // One live booking per shipment and kind, whatever its state (pending or booked): the
            // unique key Cal.com's pending bookings escaped through NULLs.
            try await sql.raw("CREATE UNIQUE INDEX slot_bookings_live ON slot_bookings (order_id, kind) WHERE status IN ('pending', 'booked')").run()
            try await sql.create(index: "slot_bookings_slot").on("slot_bookings").column("slot_id").run()
        }
    }

    func revert(on database: any Database) async throws {
        try await database.schema("slot_bookings").delete()
        try await database.schema("slot_holds").delete()
        try await database.schema("slots").delete()
        try await database.schema("slot_templates").delete()
    }
}
