import Fluent
import SQLKit

/// Conversations: one per subject (a shipment or a traveller request), its members' read markers,
/// its messages numbered in the write transaction, people's chat settings, and reports for moderation.
struct CreateConversations: AsyncMigration {
    var name: String { "025_conversations" }

    func prepare(on database: any Database) async throws {
        try await database.transaction { db in
            guard let sql = db as? any SQLDatabase else { throw MigrationNeedsSQL() }
            try await db.schema("conversations")
                .field("id", .uuid, .identifier(auto: false))
                .field("subject_kind", .string, .required)
                .field("subject_id", .uuid, .required)
                .field("last_seq", .int64, .required)
                .field("last_message_at", .int64)
                .field("created_at", .int64, .required)
                .unique(on: "subject_kind", "subject_id")
                .create()
            // Who took part (and staff who joined): the read and delivered markers, and the list of a
            // person's conversations. Rights are never read from here: they follow the subject.
            try await db.schema("conversation_members")
                .field("conversation_id", .uuid, .required, .references("conversations", "id", onDelete: .cascade))
                .field("user_id", .uuid, .required, .references("users", "id"))
                .field("role", .string, .required)
                .field("last_read_seq", .int64, .required)
                .field("last_delivered_seq", .int64, .required)
                .field("joined_at", .int64, .required)
                .unique(on: "conversation_id", "user_id")
                .create()
            try await sql.create(index: "conversation_members_user").on("conversation_members").column("user_id").run()
            try await db.schema("messages")
                .field("id", .uuid, .identifier(auto: false))
                .field("conversation_id", .uuid, .required, .references("conversations", "id", onDelete: .cascade))
                .field("seq", .int64, .required)
                .field("sender_id", .uuid)
                .field("kind", .string, .required)
                .field("body", .string, .required)
                .field("shared_order_id", .uuid)
                .field("image_name", .string)
                .field("image_type", .string)
                .field("image_width", .int)
                .field("image_height", .int)
                .field("client_message_id", .string)
                .field("created_at", .int64, .required)
                .field("edited_at", .int64)
                .field("deleted_at", .int64)
                .unique(on: "conversation_id", "seq")
                .unique(on: "conversation_id", "sender_id", "client_message_id")
                .create()
            try await db.schema("chat_settings")
                .field("user_id", .uuid, .identifier(auto: false), .references("users", "id"))
                .field("previews", .bool, .required)
                .create()
            try await db.schema("reports")
                .field("id", .uuid, .identifier(auto: false))
                .field("reporter_id", .uuid, .required, .references("users", "id"))
                .field("reported_user_id", .uuid, .required, .references("users", "id"))
                .field("message_id", .uuid)
                .field("conversation_id", .uuid)
                .field("reason", .string, .required)
                .field("note", .string)
                .field("status", .string, .required)
                .field("created_at", .int64, .required)
                .field("reviewed_by", .uuid)
                .field("reviewed_at", .int64)
                .create()
            try await sql.create(index: "reports_status").on("reports").column("status").column("created_at").run()
        }
    }

    func revert(on database: any Database) async throws {
        for table in ["reports", "chat_settings", "messages", "conversation_members", "conversations"] {
            try await database.schema(table).delete()
        }
    }
}
