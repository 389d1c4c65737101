import Fluent
import SQLKit

/// Integrators' webhook endpoints, the deliveries queued for them in the transaction of each
/// event (the webhooks' outbox), and every attempt made (the delivery log).
struct CreateWebhooks: AsyncMigration {
    var name: String { "021_webhooks" }

    func prepare(on database: any Database) async throws {
        try await database.transaction { db in
            guard let sql = db as? any SQLDatabase else { throw MigrationNeedsSQL() }
            try await db.schema("webhook_endpoints")
                .field("id", .uuid, .identifier(auto: false))
                .field("owner_id", .uuid, .required, .references("users", "id", onDelete: .cascade))
                .field("scope", .string, .required)
                .field("url", .string, .required)
                .field("events", .string, .required)
                .field("description", .string)
                .field("secret_sealed", .string, .required)
                .field("enabled", .bool, .required)
                .field("disabled_reason", .string)
                .field("failing_since", .int64)
                .field("version", .string, .required)
                .field("created_at", .int64, .required)
                .create()
            try await sql.create(index: "webhook_endpoints_owner").on("webhook_endpoints").column("owner_id").run()
            try await db.schema("webhook_deliveries")
                .field("id", .uuid, .identifier(auto: false))
                .field("endpoint_id", .uuid, .required, .references("webhook_endpoints", "id", onDelete: .cascade))
                .field("event_id", .uuid, .required)
                .field("event_type", .string, .required)
                .field("subject", .string, .required)
                .field("sequence", .int64, .required)
                .field("payload", .string, .required)
                .field("status", .string, .required)
                .field("attempts", .int, .required)
                .field("next_attempt_at", .int64, .required)
                .field("last_status_code", .int)
                .field("last_error", .string)
                .field("created_at", .int64, .required)
                .field("delivered_at", .int64)
                .create()
            try await sql.create(index: "webhook_deliveries_due").on("webhook_deliveries").column("status").column("next_attempt_at").run()
            try await sql.create(index: "webhook_deliveries_subject").on("webhook_deliveries").column("endpoint_id").column("subject").column("sequence").run()
            // The log reads an endpoint's deliveries newest first (by sequence).
            try await sql.create(index: "webhook_deliveries_log").on("webhook_deliveries").column("endpoint_id").column("sequence").run()
            try await db.schema("webhook_attempts")
                .field("id", .int64, .identifier(auto: true))
                .field("delivery_id", .uuid, .required, .references("webhook_deliveries", "id", onDelete: .cascade))
                .field("at", .int64, .required)
                .field("status_code", .int)
                .field("duration_ms", .int, .required)
                .field("error", .string)
                .create()
            try await sql.create(index: "webhook_attempts_delivery").on("webhook_attempts").column("delivery_id").run()
        }
    }

    func revert(on database: any Database) async throws {
        try await database.schema("webhook_attempts").delete()
        try await database.schema("webhook_deliveries").delete()
        try await database.schema("webhook_endpoints").delete()
    }
}
