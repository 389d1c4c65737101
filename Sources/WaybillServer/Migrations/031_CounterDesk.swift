import Fluent
import SQLKit

/// Counters' desks: a hand-over at a counter may be proven by the label's reference typed from
/// the parcel in hand (kept here), and a counter's day reads its legs by counter and status.
struct CreateCounterDesk: AsyncMigration {
    var name: String { "031_counter_desk" }

    func prepare(on database: any Database) async throws {
        try await database.schema("hand_overs").field("typed_reference", .string).update()
        guard let sql = database as? any SQLDatabase else { throw MigrationNeedsSQL() }
        try await sql.create(index: "legs_counter_status").on("legs").column("counter_id").column("status").run()
    }

    func revert(on database: any Database) async throws {
        guard let sql = database as? any SQLDatabase else { throw MigrationNeedsSQL() }
        try await sql.drop(index: "legs_counter_status").run()
        try await database.schema("hand_overs").deleteField("typed_reference").update()
    }
}
