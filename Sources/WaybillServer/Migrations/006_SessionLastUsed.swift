import Fluent

/// When a web session was last used (Unix ms), so that one left unused ends (`WEB_SESSION_IDLE_MINUTES`).
/// Null for sessions older than this column: they count from their creation.
struct AddSessionLastUsed: AsyncMigration {
    var name: String { "006_session_last_used" }

    func prepare(on database: any Database) async throws {
        try await database.schema("sessions").field("last_used_at", .int64).update()
    }

    func revert(on database: any Database) async throws {
        try await database.schema("sessions").deleteField("last_used_at").update()
    }
}
