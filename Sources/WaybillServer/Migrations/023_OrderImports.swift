import Fluent
import SQLKit

/// Delivery imports: the uploaded file waits here until its owner confirms it; imported orders keep
/// their outside reference (one per customer) and the import they came from.
struct CreateOrderImports: AsyncMigration {
    var name: String { "023_order_imports" }

    func prepare(on database: any Database) async throws {
        try await database.transaction { db in
            guard let sql = db as? any SQLDatabase else { throw MigrationNeedsSQL() }
            try await db.schema("order_imports")
                .field("id", .uuid, .identifier(auto: false))
                .field("owner_id", .uuid, .required, .references("users", "id", onDelete: .cascade))
                .field("file_name", .string, .required)
                .field("format", .string, .required)
                .field("content", .data)
                .field("status", .string, .required)
                .field("row_count", .int, .required)
                .field("valid_count", .int, .required)
                .field("invalid_count", .int, .required)
                .field("already_count", .int, .required)
                .field("problem_count", .int, .required)
                .field("problems", .string, .required)
                .field("total_amount", .int64, .required)
                .field("currency", .string, .required)
                .field("created_count", .int)
                .field("created_at", .int64, .required)
                .field("expires_at", .int64, .required)
                .field("committed_at", .int64)
                .create()
            try await sql.create(index: "order_imports_owner").on("order_imports").column("owner_id").column("created_at").run()
            try await db.schema("orders").field("external_reference", .string).update()
            try await db.schema("orders").field("import_id", .uuid).update()
            try await sql.create(index: "orders_external_reference").unique().on("orders").column("customer_id").column("external_reference").run()
        }
    }

    func revert(on database: any Database) async throws {
        guard let sql = database as? any SQLDatabase else { throw MigrationNeedsSQL() }
        try await sql.drop(index: "orders_external_reference").run()
        try await database.schema("order_imports").delete()
    }
}
