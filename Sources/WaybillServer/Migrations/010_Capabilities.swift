import Fluent
import Foundation
import SQLKit

/// Capabilities instead of one role, restrictions instead of one "disabled" date (issue "Shipments
/// with legs, parties and a money ledger", item 3). Every staff capability an account holds is a
/// grant with who gave it and when; every suspension or ban is a restriction with its reason and
/// who set it. The account row keeps what every request checks (its staff capabilities, the
/// restriction in force, and `role`, the primary role older clients read), written in the same
/// transaction as the grant or restriction. Plain SQL on what the tables held at migration 009.
struct CreateCapabilities: AsyncMigration {
    var name: String { "010_capabilities" }

    func prepare(on database: any Database) async throws {
        try await database.transaction { try await migrate($0) }
    }

    private func migrate(_ database: any Database) async throws {
        guard let sql = database as? any SQLDatabase else { throw MigrationNeedsSQL() }
        let postgres = sql.dialect.name == "postgresql"
        let millis = { (column: String) in
            // SQLite keeps a date as seconds since 1970, or as text when written by hand.
            "COALESCE(" + (postgres ? "CAST(EXTRACT(EPOCH FROM \(column)) * 1000 AS BIGINT)"
                : "CAST(CASE typeof(\(column)) WHEN 'text' THEN (julianday(\(column)) - 2440587.5) * 86400000 ELSE \(column) * 1000 END AS INTEGER)") + ", 0)"
        }
        try await database.schema("capability_grants")
            .field("id", .int64, .identifier(auto: true))
            .field("user_id", .uuid, .required, .references("users", "id", onDelete: .cascade))
            .field("capability", .string, .required)
            // nil: granted before capabilities existed (by the account's role), or by the operator's command line.
            .field("granted_by", .uuid, .references("users", "id"))
            .field("granted_at", .int64, .required)
            .field("revoked_by", .uuid, .references("users", "id"))
            .field("revoked_at", .int64)
            .create()
        try await sql.create(index: "capability_grants_user").on("capability_grants").column("user_id").column("id").run()
        try await database.schema("restrictions")
            .field("id", .int64, .identifier(auto: true))
            .field("user_id", .uuid, .required, .references("users", "id", onDelete: .cascade))
            .field("kind", .string, .required)
            .field("until", .int64)
            .field("reason", .string, .required)
            .field("set_by", .uuid, .references("users", "id"))
            .field("set_at", .int64, .required)
            .field("lifted_by", .uuid, .references("users", "id"))
            .field("lifted_at", .int64)
            .create()
        try await sql.create(index: "restrictions_user").on("restrictions").column("user_id").column("id").run()

        // Today's roles as grants: a driver drives; a manager manages and drives.
        for (role, capabilities) in [("driver", ["driver"]), ("manager", ["driver", "manager"])] {
            for capability in capabilities {
                try await sql.raw("""
                    INSERT INTO capability_grants (user_id, capability, granted_at)
                    SELECT id, \(bind: capability), \(unsafeRaw: millis("created_at")) FROM users WHERE role = \(bind: role)
                    """).run()
            }
        }
        try await sql.raw("ALTER TABLE users ADD COLUMN capabilities TEXT NOT NULL DEFAULT ''").run()
        try await sql.raw("UPDATE users SET capabilities = 'driver' WHERE role = 'driver'").run()
        try await sql.raw("UPDATE users SET capabilities = 'driver,manager' WHERE role = 'manager'").run()

        // A disabled account was a ban in all but name.
        try await sql.raw("""
            INSERT INTO restrictions (user_id, kind, reason, set_at)
            SELECT id, 'banned', 'Disabled before restrictions existed', \(unsafeRaw: millis("disabled_at"))
            FROM users WHERE disabled_at IS NOT NULL
            """).run()
        try await sql.raw("ALTER TABLE users ADD COLUMN restricted_kind TEXT").run()
        try await sql.raw("ALTER TABLE users ADD COLUMN restricted_until BIGINT").run()
        try await sql.raw("UPDATE users SET restricted_kind = 'banned' WHERE disabled_at IS NOT NULL").run()
        try await sql.raw("ALTER TABLE users DROP COLUMN disabled_at").run()
    }

    func revert(on database: any Database) async throws {
        guard let sql = database as? any SQLDatabase else { throw MigrationNeedsSQL() }
        try await sql.raw("ALTER TABLE users ADD COLUMN disabled_at TIMESTAMP").run()
        try await sql.raw("UPDATE users SET disabled_at = CURRENT_TIMESTAMP WHERE restricted_kind = 'banned'").run()
        for column in ["capabilities", "restricted_kind", "restricted_until"] {
            try await sql.raw("ALTER TABLE users DROP COLUMN \(unsafeRaw: column)").run()
        }
        try await database.schema("restrictions").delete()
        try await database.schema("capability_grants").delete()
    }
}
