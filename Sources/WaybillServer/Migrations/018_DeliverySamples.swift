import Fluent
import SQLKit

/// One row per delivered parcel or shipment, written when it is delivered, for the delivery-speed
/// statistics per carrier (`DeliveryStatistics`).
struct CreateDeliverySamples: AsyncMigration {
    var name: String { "018_delivery_samples" }

    func prepare(on database: any Database) async throws {
        try await database.transaction { db in
            guard let sql = db as? any SQLDatabase else { throw MigrationNeedsSQL() }
            try await db.schema("delivery_samples")
                .field("subject_id", .uuid, .identifier(auto: false))
                .field("kind", .string, .required)
                .field("owner_id", .uuid, .required)
                .field("carrier", .string, .required)
                .field("origin", .string)
                .field("destination", .string)
                .field("first_scan_at", .int64, .required)
                .field("delivered_at", .int64, .required)
                .field("first_attempt", .bool, .required)
                .create()
            try await sql.create(index: "delivery_samples_delivered").on("delivery_samples").column("delivered_at").run()
            try await sql.create(index: "delivery_samples_owner").on("delivery_samples").column("owner_id").run()
        }
    }

    func revert(on database: any Database) async throws {
        try await database.schema("delivery_samples").delete()
    }
}
