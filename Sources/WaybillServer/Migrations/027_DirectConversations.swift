import Fluent

/// Direct conversations between two people who share a shipment or a followed parcel: the pair is
/// kept with the conversation (its subject id is derived from it), so that rights follow the two
/// people, checked on every read and write.
struct AddDirectConversations: AsyncMigration {
    var name: String { "027_direct_conversations" }

    func prepare(on database: any Database) async throws {
        // One column per statement: SQLite adds one at a time.
        try await database.schema("conversations").field("peer_low", .uuid).update()
        try await database.schema("conversations").field("peer_high", .uuid).update()
    }

    func revert(on database: any Database) async throws {
        try await database.schema("conversations").deleteField("peer_high").update()
        try await database.schema("conversations").deleteField("peer_low").update()
    }
}
