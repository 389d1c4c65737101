import Fluent

/// Profile pictures (issue "Travellers", item 8): one per account, the file in the file store.
struct CreateProfilePictures: AsyncMigration {
    var name: String { "013_profile_pictures" }

    func prepare(on database: any Database) async throws {
        try await database.schema("profile_pictures")
            .field("user_id", .uuid, .identifier(auto: false), .references("users", "id", onDelete: .cascade))
            .field("storage_name", .string, .required)
            .field("content_type", .string, .required)
            .field("side", .int, .required)
            .field("byte_count", .int, .required)
            .field("updated_at", .int64, .required)
            .create()
    }

    func revert(on database: any Database) async throws {
        try await database.schema("profile_pictures").delete()
    }
}
