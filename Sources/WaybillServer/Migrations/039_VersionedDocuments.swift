import Fluent
import Foundation
import SQLKit

/// The travel tariff becomes a versioned document like the tariff, the insurance table and the
/// loyalty rules (`VersionedDocument`): its one row of `travel_tariff` is version 1 of
/// `travel_tariffs`, and a change now writes the next version instead of overwriting it. Plain SQL
/// on what the table held at migration 038.
struct VersionTheTravelTariff: AsyncMigration {
    var name: String { "039_versioned_documents" }

    func prepare(on database: any Database) async throws {
        try await database.transaction { db in
            guard let sql = db as? any SQLDatabase else { throw MigrationNeedsSQL() }
            try await db.schema("travel_tariffs")
                .field("version", .int, .identifier(auto: false))
                .field("data", .string, .required)
                .field("created_by", .uuid, .references("users", "id"))
                .field("created_at", .int64, .required)
                .create()
            try await sql.raw("""
                INSERT INTO travel_tariffs (version, data, created_by, created_at)
                SELECT 1, document, updated_by, updated_at FROM travel_tariff WHERE id = 1
                """).run()
            try await db.schema("travel_tariff").delete()
        }
    }

    func revert(on database: any Database) async throws {
        try await database.transaction { db in
            guard let sql = db as? any SQLDatabase else { throw MigrationNeedsSQL() }
            try await db.schema("travel_tariff")
                .field("id", .int, .identifier(auto: false))
                .field("document", .string, .required)
                .field("updated_by", .uuid, .references("users", "id"))
                .field("updated_at", .int64, .required)
                .create()
            try await sql.raw("""
                INSERT INTO travel_tariff (id, document, updated_by, updated_at)
                SELECT 1, data, created_by, created_at FROM travel_tariffs ORDER BY version DESC LIMIT 1
                """).run()
            try await db.schema("travel_tariffs").delete()
        }
    }
}
