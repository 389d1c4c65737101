import Fluent
import Foundation
import SQLKit

/// Travellers, second part (issue "Travellers", items 4–6): senders' requests for a place on a
/// trip. An accepted request points to its shipment (an order with one traveller leg).
struct CreateTripRequests: AsyncMigration {
    var name: String { "012_trip_requests" }

    func prepare(on database: any Database) async throws {
        try await database.transaction { db in
            try await db.schema("trip_requests")
                .field("id", .uuid, .identifier(auto: false))
                .field("trip_id", .uuid, .required, .references("trips", "id"))
                .field("sender_id", .uuid, .required, .references("users", "id"))
                .field("traveller_id", .uuid, .required, .references("users", "id"))
                .field("status", .string, .required)
                .field("category", .string, .required)
                .field("grams", .int, .required)
                .field("declared_value", .int, .required)
                .field("description", .string, .required)
                .field("receiver_name", .string, .required)
                .field("receiver_email", .string)
                .field("receiver_phone", .string)
                .field("payment_method", .string, .required)
                // The price when sent: what the sender pays, the traveller's share, the platform's fee.
                .field("price_total", .int, .required)
                .field("traveller_share", .int, .required)
                .field("platform_fee", .int, .required)
                .field("currency", .string, .required)
                // The prohibited-items list the sender attested against, as shown (JSON), and when.
                .field("attestation", .string, .required)
                .field("attested_at", .int64, .required)
                // The parcel's photo (sanitized), stored with the files.
                .field("photo_name", .string)
                .field("photo_type", .string)
                .field("photo_width", .int)
                .field("photo_height", .int)
                .field("photo_bytes", .int)
                .field("shipment_id", .uuid, .references("orders", "id"))
                .field("answer_by", .int64, .required)
                .field("pay_by", .int64)
                .field("created_at", .int64, .required)
                .field("updated_at", .int64, .required)
                .field("reason", .string)
                .create()
            guard let sql = db as? any SQLDatabase else { throw MigrationNeedsSQL() }
            try await sql.create(index: "trip_requests_trip").on("trip_requests").column("trip_id").column("status").run()
            try await sql.create(index: "trip_requests_sender").on("trip_requests").column("sender_id").column("created_at").run()
            try await sql.create(index: "trip_requests_traveller").on("trip_requests").column("traveller_id").column("created_at").run()
            try await sql.create(index: "trip_requests_shipment").on("trip_requests").column("shipment_id").run()
            try await sql.create(index: "trip_requests_answer_by").on("trip_requests").column("status").column("answer_by").run()
            // Where each traveller is paid: a connected account with the payment provider (Stripe
            // Connect), or a sandbox one in development.
            try await sql.raw("ALTER TABLE users ADD COLUMN payout_account TEXT").run()
        }
    }

    func revert(on database: any Database) async throws {
        try await database.schema("trip_requests").delete()
    }
}
