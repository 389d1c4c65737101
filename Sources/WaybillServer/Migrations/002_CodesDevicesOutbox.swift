import Fluent
import SQLKit

/// Mailed codes, push devices, the outbox and rate-limit counters.
struct CreateCodesDevicesOutbox: AsyncMigration {
    var name: String { "002_create_codes_devices_outbox_throttles" }

    func prepare(on database: any Database) async throws {
        try await database.schema("one_time_codes")
            .id()
            .field("user_id", .uuid, .required, .references("users", "id", onDelete: .cascade))
            .field("purpose", .string, .required)
            .field("code_hash", .string, .required)
            .field("attempts", .int, .required)
            .field("expires_at", .datetime, .required)
            .field("consumed_at", .datetime)
            .field("created_at", .datetime)
            .create()
        try await database.schema("devices")
            .id()
            .field("user_id", .uuid, .required, .references("users", "id", onDelete: .cascade))
            .field("platform", .string, .required)
            .field("push_token", .string, .required)
            .field("created_at", .datetime)
            .field("updated_at", .datetime)
            .unique(on: "push_token")
            .create()
        try await database.schema("outbox")
            .id()
            .field("kind", .string, .required)
            .field("payload", .string)
            .field("status", .string, .required)
            .field("attempts", .int, .required)
            .field("next_attempt_at", .int64, .required)
            .field("last_error", .string)
            .field("sent_at", .datetime)
            .field("created_at", .datetime)
            .create()
        try await database.schema("throttles")
            .field("key", .string, .identifier(auto: false))
            .field("window_start", .int64, .required)
            .field("count", .int, .required)
            .field("last_at", .int64, .required)
            .create()
        if let sql = database as? any SQLDatabase {
            try await sql.create(index: "one_time_codes_user_purpose").on("one_time_codes").column("user_id").column("purpose").run()
            try await sql.create(index: "devices_user").on("devices").column("user_id").run()
            try await sql.create(index: "outbox_due").on("outbox").column("status").column("next_attempt_at").run()
        }
    }

    func revert(on database: any Database) async throws {
        try await database.schema("throttles").delete()
        try await database.schema("outbox").delete()
        try await database.schema("devices").delete()
        try await database.schema("one_time_codes").delete()
    }
}
