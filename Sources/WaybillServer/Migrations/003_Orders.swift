import Fluent
import Foundation
import SQLKit
import WaybillCore

/// Orders, their history, files, notifications, the tariff, payments.
struct CreateOrders: AsyncMigration {
    var name: String { "003_create_orders" }

    func prepare(on database: any Database) async throws {
        try await database.schema("tariffs")
            .field("version", .int, .identifier(auto: false))
            .field("data", .string, .required)
            .field("created_by", .uuid)
            .field("created_at", .int64, .required)
            .create()
        // The first tariff as it was when this migration shipped, written as a plain row: a
        // migration must not go through the live model (or `Tariff.initial`), which may change.
        guard let sql = database as? any SQLDatabase else { throw MigrationNeedsSQL() }
        let initial = #"{"currency":"CHF","expressMultiplierPercent":150,"large":{"baseFee":1800,"flatFee":3000,"perKm":250},"medium":{"baseFee":1200,"flatFee":2000,"perKm":180},"roundingIncrement":5,"small":{"baseFee":900,"flatFee":1500,"perKm":150}}"#
        try await sql.insert(into: "tariffs").columns("version", "data", "created_by", "created_at")
            .values(SQLBind(1), SQLBind(initial), SQLLiteral.null, SQLBind(Int64(Date().timeIntervalSince1970 * 1000))).run()
        try await database.schema("orders")
            .id()
            .field("reference", .string, .required)
            .field("customer_id", .uuid, .required, .references("users", "id"))
            .field("driver_id", .uuid, .references("users", "id"))
            .field("status", .string, .required)
            .field("version", .int, .required)
            .field("created_at", .int64, .required)
            .field("updated_at", .int64, .required)
            .field("pickup", .string, .required)
            .field("dropoff", .string, .required)
            .field("weight_class", .string, .required)
            .field("service", .string, .required)
            .field("recipient", .string, .required)
            .field("notes", .string)
            .field("price_amount", .int64, .required)
            .field("currency", .string, .required)
            .field("distance_m", .int64)
            .field("breakdown", .string, .required)
            .field("tariff_version", .int, .required)
            .field("payment_method", .string, .required)
            .field("payment_status", .string, .required)
            .field("sandbox", .bool, .required)
            .field("checkout_session_id", .string)
            .field("checkout_url", .string)
            .field("payment_intent_id", .string)
            .field("paid_at", .int64)
            .field("refund_id", .string)
            .field("refunded_at", .int64)
            .field("cash_collected", .int64)
            .field("idempotency_key", .string)
            .field("require_recipient_code", .bool, .required)
            .field("recipient_code_hash", .string)
            .field("recipient_code_attempts", .int, .required)
            .field("failure_reason", .string)
            .field("failure_note", .string)
            .field("cancellation_reason", .string)
            .field("signed_by", .string)
            .field("delivered_at", .int64)
            .unique(on: "reference")
            .unique(on: "idempotency_key")
            .unique(on: "checkout_session_id")
            .create()
        try await database.schema("order_events")
            .field("id", .int64, .identifier(auto: true))
            .field("order_id", .uuid, .required, .references("orders", "id", onDelete: .cascade))
            .field("type", .string, .required)
            .field("status", .string)
            .field("actor_id", .uuid)
            .field("note", .string)
            .field("at", .int64, .required)
            .create()
        try await database.schema("order_files")
            .id()
            .field("order_id", .uuid, .required, .references("orders", "id", onDelete: .cascade))
            .field("kind", .string, .required)
            .field("content_type", .string, .required)
            .field("storage_name", .string, .required)
            .field("byte_count", .int64, .required)
            .field("width", .int, .required)
            .field("height", .int, .required)
            .field("uploaded_by", .uuid, .required)
            .field("created_at", .int64, .required)
            .create()
        try await database.schema("notifications")
            .id()
            .field("user_id", .uuid, .required, .references("users", "id", onDelete: .cascade))
            .field("order_id", .uuid)
            .field("kind", .string, .required)
            .field("title", .string, .required)
            .field("body", .string, .required)
            .field("read_at", .int64)
            .field("created_at", .int64, .required)
            .create()
        try await database.schema("stripe_events")
            .field("id", .string, .identifier(auto: false))
            .field("type", .string, .required)
            .field("received_at", .int64, .required)
            .create()
        try await database.schema("sandbox_checkouts")
            .field("id", .string, .identifier(auto: false))
            .field("order_id", .uuid, .required)
            .field("amount", .int64, .required)
            .field("currency", .string, .required)
            .field("method", .string, .required)
            .field("status", .string, .required)
            .field("created_at", .int64, .required)
            .create()
        if let sql = database as? any SQLDatabase {
            // The lists page newest first on (created_at, id) within each filter.
            try await sql.create(index: "orders_created").on("orders").column("created_at").column("id").run()
            try await sql.create(index: "orders_status_created").on("orders").column("status").column("created_at").column("id").run()
            try await sql.create(index: "orders_customer_created").on("orders").column("customer_id").column("created_at").column("id").run()
            try await sql.create(index: "orders_driver_created").on("orders").column("driver_id").column("created_at").column("id").run()
            try await sql.create(index: "orders_payment_created").on("orders").column("payment_method").column("created_at").run()
            try await sql.create(index: "order_events_order").on("order_events").column("order_id").column("id").run()
            try await sql.create(index: "order_files_order").on("order_files").column("order_id").run()
            try await sql.create(index: "notifications_user_created").on("notifications").column("user_id").column("created_at").run()
        }
    }

    func revert(on database: any Database) async throws {
        for table in ["sandbox_checkouts", "stripe_events", "notifications", "order_files", "order_events", "orders", "tariffs"] {
            try await database.schema(table).delete()
        }
    }
}

struct MigrationNeedsSQL: Error {}
