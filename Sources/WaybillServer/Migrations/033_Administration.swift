import Fluent
import SQLKit

/// The administration: an append-only audit log of staff actions (the database itself refuses to
/// change or delete a line), when a session last proved its password (admin actions need a recent
/// one), the decisions on reports, which may now be about a review as well as a message, and
/// content the administration hid: trips, messages, reviews and profile pictures.
struct CreateAdministration: AsyncMigration {
    var name: String { "033_administration" }

    func prepare(on database: any Database) async throws {
        try await database.transaction { db in
            guard let sql = db as? any SQLDatabase else { throw MigrationNeedsSQL() }
            try await db.schema("audit_log")
                .field("id", .int64, .identifier(auto: true))
                .field("at", .int64, .required)
                .field("actor_id", .uuid)
                .field("action", .string, .required)
                .field("target_kind", .string, .required)
                .field("target_id", .string, .required)
                .field("before", .string)
                .field("after", .string)
                .field("reason", .string)
                .field("request_id", .string)
                .field("address", .string)
                .create()
            try await sql.create(index: "audit_log_at").on("audit_log").column("at").run()
            try await sql.create(index: "audit_log_actor").on("audit_log").column("actor_id").column("id").run()
            try await sql.create(index: "audit_log_target").on("audit_log").column("target_id").column("id").run()
            if sql.dialect.name == "postgresql" {
                try await sql.raw("""
                    CREATE FUNCTION audit_log_append_only() RETURNS trigger AS $$
                    BEGIN RAISE EXCEPTION 'audit_log is append-only'; END; $$ LANGUAGE plpgsql
                    """).run()
                try await sql.raw("CREATE TRIGGER audit_log_no_update BEFORE UPDATE OR DELETE ON audit_log FOR EACH ROW EXECUTE FUNCTION audit_log_append_only()").run()
            } else {
                try await sql.raw("CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END").run()
                try await sql.raw("CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END").run()
            }
            try await db.schema("sessions").field("reauthenticated_at", .int64).update()
            try await db.schema("reports").field("rating_id", .uuid).update()
            try await db.schema("reports").field("decision_note", .string).update()
            // Content the administration hid (and may show again): when, and the reason its author is shown.
            for table in ["trips", "messages", "ratings", "profile_pictures"] {
                // One column per statement: SQLite adds one at a time.
                try await db.schema(table).field("hidden_at", .int64).update()
                try await db.schema(table).field("hidden_reason", .string).update()
            }
        }
    }

    func revert(on database: any Database) async throws {
        guard let sql = database as? any SQLDatabase else { throw MigrationNeedsSQL() }
        if sql.dialect.name == "postgresql" {
            try await sql.raw("DROP TRIGGER IF EXISTS audit_log_no_update ON audit_log").run()
            try await sql.raw("DROP FUNCTION IF EXISTS audit_log_append_only()").run()
        }
        try await database.schema("audit_log").delete()
        try await database.schema("sessions").deleteField("reauthenticated_at").update()
        try await database.schema("reports").deleteField("rating_id").update()
        try await database.schema("reports").deleteField("decision_note").update()
        for table in ["trips", "messages", "ratings", "profile_pictures"] {
            try await database.schema(table).deleteField("hidden_at").update()
            try await database.schema(table).deleteField("hidden_reason").update()
        }
    }
}
