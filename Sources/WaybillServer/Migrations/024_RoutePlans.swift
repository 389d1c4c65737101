import Fluent
import SQLKit

/// Route plans: each a numbered version (one number per plan, so two managers planning at once get
/// two), its JSON, and its stops as rows (what a driver's list and the next run read, without the JSON);
/// auto-dispatch's setting.
struct CreateRoutePlans: AsyncMigration {
    var name: String { "024_route_plans" }

    func prepare(on database: any Database) async throws {
        try await database.transaction { db in
            guard let sql = db as? any SQLDatabase else { throw MigrationNeedsSQL() }
            try await db.schema("route_plans")
                .field("id", .uuid, .identifier(auto: false))
                .field("version", .int, .required)
                .field("status", .string, .required)
                .field("created_by", .uuid, .required, .references("users", "id"))
                .field("created_at", .int64, .required)
                .field("applied_at", .int64)
                .field("plan", .string, .required)
                .unique(on: "version")
                .create()
            try await sql.create(index: "route_plans_status").on("route_plans").column("status").column("version").run()
            try await db.schema("route_plan_stops")
                .field("plan_id", .uuid, .required, .references("route_plans", "id", onDelete: .cascade))
                .field("driver_id", .uuid, .required)
                .field("seq", .int, .required)
                .field("order_id", .uuid, .required)
                .field("kind", .string, .required)
                .field("reference", .string, .required)
                .field("latitude", .double, .required)
                .field("longitude", .double, .required)
                .field("arrival", .int64, .required)
                .field("departure", .int64, .required)
                .unique(on: "plan_id", "driver_id", "seq")
                .create()
            try await sql.create(index: "route_plan_stops_order").on("route_plan_stops").column("order_id").run()
            // One row: auto-dispatch on or off, who switched it on (plans are applied in their name), the
            // van room it plans with, and since when a re-plan is due (set by the events, claimed by a worker).
            try await db.schema("dispatch_settings")
                .field("id", .int, .identifier(auto: false))
                .field("auto_dispatch", .bool, .required)
                .field("enabled_by", .uuid)
                .field("capacity", .int, .required)
                .field("pending_since", .int64)
                .field("updated_at", .int64, .required)
                .create()
        }
    }

    func revert(on database: any Database) async throws {
        try await database.schema("dispatch_settings").delete()
        try await database.schema("route_plan_stops").delete()
        try await database.schema("route_plans").delete()
    }
}
