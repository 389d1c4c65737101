import Fluent
import Foundation
import SQLKit

/// Travellers, first part (issue "Travellers", items 1–3): the area hierarchy with a revision every
/// server compares before trusting its in-memory index, the travel price table, and trips.
struct CreateTravel: AsyncMigration {
    var name: String { "011_travel" }

    func prepare(on database: any Database) async throws {
        try await database.transaction { db in
            try await db.schema("areas")
                .field("id", .string, .identifier(auto: false))
                .field("parent_id", .string)
                .field("level", .string, .required)
                .field("name", .string, .required)
                // {"fr": "Genève", …}
                .field("names", .string, .required)
                .field("latitude", .double)
                .field("longitude", .double)
                // "1000|1001|…"
                .field("keywords", .string, .required)
                .field("updated_at", .int64, .required)
                .create()
            guard let sql = db as? any SQLDatabase else { throw MigrationNeedsSQL() }
            try await sql.create(index: "areas_parent").on("areas").column("parent_id").run()
            // One row: bumped in the transaction of every change of the areas, so each server
            // process knows when its in-memory index is stale.
            try await db.schema("area_revision")
                .field("id", .int, .identifier(auto: false))
                .field("revision", .int64, .required)
                .create()
            try await sql.raw("INSERT INTO area_revision (id, revision) VALUES (1, 0)").run()
            // One row: the admin's price table for travellers (JSON of WaybillCore's TravelTariff).
            try await db.schema("travel_tariff")
                .field("id", .int, .identifier(auto: false))
                .field("document", .string, .required)
                .field("updated_by", .uuid, .references("users", "id"))
                .field("updated_at", .int64, .required)
                .create()
            try await db.schema("trips")
                .field("id", .uuid, .identifier(auto: false))
                .field("traveller_id", .uuid, .required, .references("users", "id"))
                .field("from_area_id", .string, .required)
                .field("to_area_id", .string, .required)
                .field("from_latitude", .double)
                .field("from_longitude", .double)
                .field("to_latitude", .double)
                .field("to_longitude", .double)
                .field("departure_date", .string, .required)
                .field("earliest", .string, .required)
                .field("latest", .string, .required)
                .field("time_zone", .string, .required)
                .field("departs_from", .int64, .required)
                .field("departs_until", .int64, .required)
                .field("capacity_grams", .int, .required)
                .field("capacity_parcels", .int, .required)
                // What accepted and paid requests hold (decremented and incremented under the row's lock).
                .field("booked_grams", .int, .required)
                .field("booked_parcels", .int, .required)
                .field("categories", .string, .required)
                .field("minimum_reward", .int)
                .field("currency", .string, .required)
                .field("notes", .string)
                .field("cancelled_at", .int64)
                .field("created_at", .int64, .required)
                .field("updated_at", .int64, .required)
                .create()
            try await sql.create(index: "trips_departure").on("trips").column("departs_until").run()
            try await sql.create(index: "trips_traveller").on("trips").column("traveller_id").column("departs_from").run()
        }
    }

    func revert(on database: any Database) async throws {
        for table in ["trips", "travel_tariff", "area_revision", "areas"] { try await database.schema(table).delete() }
    }
}
