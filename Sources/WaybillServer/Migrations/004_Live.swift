import Fluent
import SQLKit

/// Driver positions and duty, order trails, the live event log, live tickets, tracking links.
struct CreateLive: AsyncMigration {
    var name: String { "004_create_live" }

    func prepare(on database: any Database) async throws {
        // One row per driver: on duty or not, and the last position (kept while off duty, shown to nobody).
        try await database.schema("driver_states")
            .field("driver_id", .uuid, .identifier(auto: false), .references("users", "id", onDelete: .cascade))
            .field("on_duty", .bool, .required)
            .field("duty_changed_at", .int64, .required)
            .field("latitude", .double)
            .field("longitude", .double)
            .field("accuracy", .double)
            .field("heading", .double)
            .field("speed", .double)
            .field("recorded_at", .int64)
            .create()
        // The route a driver took for an order while it was accepted or in transit.
        try await database.schema("order_positions")
            .field("id", .int64, .identifier(auto: true))
            .field("order_id", .uuid, .required, .references("orders", "id", onDelete: .cascade))
            .field("latitude", .double, .required)
            .field("longitude", .double, .required)
            .field("recorded_at", .int64, .required)
            .create()
        // Every live event, so a client that reconnects gets what it missed. Pruned after a day.
        try await database.schema("live_events")
            .field("id", .int64, .identifier(auto: true))
            .field("topic", .string, .required)
            .field("type", .string, .required)
            .field("data", .string, .required)
            .field("at", .int64, .required)
            .create()
        // Single-use tickets for opening the live channel (the token never goes in a URL).
        try await database.schema("live_tickets")
            .field("ticket_hash", .string, .identifier(auto: false))
            .field("user_id", .uuid)
            .field("session_id", .uuid)
            .field("tracking_token", .string)
            .field("expires_at", .int64, .required)
            .create()
        try await database.schema("orders").field("tracking_token", .string).update()
        if let sql = database as? any SQLDatabase {
            try await sql.create(index: "order_positions_order").on("order_positions").column("order_id").column("recorded_at").run()
            try await sql.create(index: "live_events_topic").on("live_events").column("topic").column("id").run()
            try await sql.create(index: "live_events_at").on("live_events").column("at").run()
            try await sql.create(index: "live_tickets_expires").on("live_tickets").column("expires_at").run()
            try await sql.create(index: "orders_tracking_token").unique().on("orders").column("tracking_token").run()
            // The driver's current orders are looked up with every position.
            try await sql.create(index: "orders_driver_status").on("orders").column("driver_id").column("status").run()
        }
    }

    func revert(on database: any Database) async throws {
        if let sql = database as? any SQLDatabase {
            try await sql.drop(index: "orders_driver_status").run()
            try await sql.drop(index: "orders_tracking_token").run()
        }
        try await database.schema("orders").deleteField("tracking_token").update()
        for table in ["live_tickets", "live_events", "order_positions", "driver_states"] {
            try await database.schema(table).delete()
        }
    }
}
