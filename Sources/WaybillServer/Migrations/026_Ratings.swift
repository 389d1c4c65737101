import Fluent
import SQLKit

/// Ratings: one per reviewer, subject and rated person (or carrier), held back until published; the
/// published aggregates per person and per carrier.
struct CreateRatings: AsyncMigration {
    var name: String { "026_ratings" }

    func prepare(on database: any Database) async throws {
        try await database.transaction { db in
            guard let sql = db as? any SQLDatabase else { throw MigrationNeedsSQL() }
            try await db.schema("ratings")
                .field("id", .uuid, .identifier(auto: false))
                .field("subject_kind", .string, .required)
                .field("subject_id", .uuid, .required)
                .field("direction", .string, .required)
                .field("reviewer_id", .uuid, .required, .references("users", "id"))
                .field("ratee_key", .string, .required)
                .field("ratee_id", .uuid)
                .field("carrier", .string)
                .field("stars", .int, .required)
                .field("tags", .string, .required)
                .field("comment", .string)
                .field("private_note", .string)
                .field("status", .string, .required)
                .field("created_at", .int64, .required)
                .field("window_closes_at", .int64, .required)
                .field("published_at", .int64)
                .field("response", .string)
                .field("responded_at", .int64)
                .unique(on: "subject_kind", "subject_id", "reviewer_id", "ratee_key")
                .create()
            try await sql.create(index: "ratings_ratee").on("ratings").column("ratee_key").column("published_at").run()
            try await sql.create(index: "ratings_pending").on("ratings").column("status").column("window_closes_at").run()
            try await db.schema("rating_aggregates")
                .field("ratee_key", .string, .identifier(auto: false))
                .field("count", .int, .required)
                .field("stars_total", .int, .required)
                .field("updated_at", .int64, .required)
                .create()
        }
    }

    func revert(on database: any Database) async throws {
        try await database.schema("rating_aggregates").delete()
        try await database.schema("ratings").delete()
    }
}
