import Fluent

/// Web app sessions: the same sessions as the apps', held by a cookie whose secret's hash is kept here.
struct AddWebSessions: AsyncMigration {
    var name: String { "005_web_sessions" }

    func prepare(on database: any Database) async throws {
        try await database.schema("sessions").field("web_token_hash", .string).update()
    }

    func revert(on database: any Database) async throws {
        try await database.schema("sessions").deleteField("web_token_hash").update()
    }
}
