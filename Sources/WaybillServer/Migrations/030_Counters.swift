import Fluent
import SQLKit

/// Reception counters (their address, time zone and opening hours as JSON), the staff named for
/// each, and drop-off slot templates tied to a counter.
struct CreateCounters: AsyncMigration {
    var name: String { "030_counters" }

    func prepare(on database: any Database) async throws {
        try await database.transaction { db in
            try await db.schema("counters")
                .field("id", .uuid, .identifier(auto: false))
                .field("name", .string, .required)
                .field("street", .string, .required)
                .field("postal_code", .string, .required)
                .field("city", .string, .required)
                .field("country", .string, .required)
                .field("latitude", .double)
                .field("longitude", .double)
                .field("time_zone", .string, .required)
                .field("hours", .string, .required)
                .field("active", .bool, .required)
                .field("created_at", .int64, .required)
                .field("updated_at", .int64, .required)
                .create()
            try await db.schema("counter_staff")
                .field("counter_id", .uuid, .required, .references("counters", "id", onDelete: .cascade))
                .field("user_id", .uuid, .required, .references("users", "id"))
                .field("added_by", .uuid, .references("users", "id"))
                .field("added_at", .int64, .required)
                .unique(on: "counter_id", "user_id")
                .create()
        }
        try await database.schema("slot_templates").field("counter_id", .uuid).update()
    }

    func revert(on database: any Database) async throws {
        try await database.schema("slot_templates").deleteField("counter_id").update()
        try await database.schema("counter_staff").delete()
        try await database.schema("counters").delete()
    }
}
