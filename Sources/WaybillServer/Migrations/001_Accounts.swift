import Fluent
import SQLKit

// Migrations are never edited once shipped. Each has an explicit, stable name and its own file
// (NNN_What.swift), one change each; they write rows with SQL, never through the live models.

/// Accounts, sessions and refresh tokens.
struct CreateAccounts: AsyncMigration {
    var name: String { "001_create_accounts" }

    func prepare(on database: any Database) async throws {
        try await database.schema("users")
            .id()
            .field("role", .string, .required)
            .field("email", .string, .required)
            .field("password_hash", .string)
            .field("first_name", .string, .required)
            .field("last_name", .string, .required)
            .field("address", .string)
            .field("postal_code", .string)
            .field("city", .string)
            .field("is_company", .bool, .required)
            .field("company_name", .string)
            .field("email_verified_at", .datetime)
            .field("disabled_at", .datetime)
            .field("created_at", .datetime)
            .field("updated_at", .datetime)
            .unique(on: "email")
            .create()
        try await database.schema("sessions")
            .id()
            .field("user_id", .uuid, .required, .references("users", "id", onDelete: .cascade))
            .field("revoked_at", .datetime)
            .field("revoke_reason", .string)
            .field("created_at", .datetime)
            .create()
        try await database.schema("refresh_tokens")
            .id()
            .field("session_id", .uuid, .required, .references("sessions", "id", onDelete: .cascade))
            .field("token_hash", .string, .required)
            .field("expires_at", .datetime, .required)
            .field("retired_at", .datetime)
            .field("created_at", .datetime)
            .unique(on: "token_hash")
            .create()
        if let sql = database as? any SQLDatabase {
            try await sql.create(index: "users_role_email").on("users").column("role").column("email").run()
            try await sql.create(index: "sessions_user").on("sessions").column("user_id").run()
            try await sql.create(index: "refresh_tokens_session").on("refresh_tokens").column("session_id").run()
        }
    }

    func revert(on database: any Database) async throws {
        try await database.schema("refresh_tokens").delete()
        try await database.schema("sessions").delete()
        try await database.schema("users").delete()
    }
}
