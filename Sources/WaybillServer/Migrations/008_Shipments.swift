import Fluent
import Foundation
import SQLKit

/// Shipments with legs (issue "Shipments with legs, parties and a money ledger"): every order
/// becomes a shipment with one fleet leg, its pickup and delivery become hand-over records with
/// their proof, and addresses and the recipient move from JSON into columns. Plain SQL on what
/// the tables held at migration 007, never the live models, which will change again.
struct CreateShipments: AsyncMigration {
    var name: String { "008_shipments" }

    /// Where a fleet leg is for each status an order could have at migration 007.
    static let legStatus: [(order: String, leg: String)] = [
        ("awaiting_payment", "open"), ("pending", "open"), ("assigned", "assigned"), ("accepted", "accepted"),
        ("in_transit", "in_transit"), ("delivered", "handed_over"), ("cancelled", "cancelled"), ("failed", "failed"),
    ]

    static let placeParts: [(column: String, type: String, json: String)] = [
        ("street", "TEXT NOT NULL DEFAULT ''", "street"), ("postal_code", "TEXT NOT NULL DEFAULT ''", "postalCode"),
        ("city", "TEXT NOT NULL DEFAULT ''", "city"), ("country", "TEXT NOT NULL DEFAULT 'CH'", "country"),
        ("latitude", "DOUBLE PRECISION", "coordinate.latitude"), ("longitude", "DOUBLE PRECISION", "coordinate.longitude"),
        ("area_id", "TEXT", ""),
    ]

    /// In one transaction: an interrupted migration leaves the orders as they were.
    func prepare(on database: any Database) async throws {
        try await database.transaction { try await migrate($0) }
    }

    private func migrate(_ database: any Database) async throws {
        guard let sql = database as? any SQLDatabase else { throw MigrationNeedsSQL() }
        let postgres = sql.dialect.name == "postgresql"
        /// A JSON member of a text column, as text (or a number).
        func json(_ column: String, _ path: String, number: Bool = false) -> String {
            let parts = path.split(separator: ".").map(String.init)
            if postgres {
                let head = parts.dropLast().map { "->'\($0)'" }.joined()
                let text = "(\(column)::json\(head)->>'\(parts.last ?? "")')"
                return number ? "\(text)::double precision" : text
            }
            return "json_extract(\(column), '$.\(path)')"
        }

        // Places and the recipient as columns.
        for place in ["pickup", "dropoff"] {
            for part in Self.placeParts {
                try await sql.raw("ALTER TABLE orders ADD COLUMN \(unsafeRaw: place)_\(unsafeRaw: part.column) \(unsafeRaw: part.type)").run()
            }
            let sets = Self.placeParts.filter { !$0.json.isEmpty }
                .map { "\(place)_\($0.column) = \(json(place, $0.json, number: $0.column == "latitude" || $0.column == "longitude"))" }
            try await sql.raw("UPDATE orders SET \(unsafeRaw: sets.joined(separator: ", "))").run()
            try await sql.raw("ALTER TABLE orders DROP COLUMN \(unsafeRaw: place)").run()
        }
        try await sql.raw("ALTER TABLE orders ADD COLUMN recipient_name TEXT NOT NULL DEFAULT ''").run()
        try await sql.raw("ALTER TABLE orders ADD COLUMN recipient_email TEXT").run()
        try await sql.raw("ALTER TABLE orders ADD COLUMN recipient_phone TEXT").run()
        try await sql.raw("""
            UPDATE orders SET recipient_name = \(unsafeRaw: json("recipient", "name")),
                recipient_email = lower(\(unsafeRaw: json("recipient", "email"))),
                recipient_phone = \(unsafeRaw: json("recipient", "phone"))
            """).run()
        try await sql.raw("ALTER TABLE orders DROP COLUMN recipient").run()
        // "Incoming": the shipments addressed to a receiver's verified email, newest first.
        try await sql.create(index: "orders_recipient_email_created").on("orders")
            .column("recipient_email").column("created_at").column("id").run()

        // Legs: one fleet leg per order, from its pickup to its drop-off, carried by its driver.
        var legs = database.schema("legs")
            .field("id", .int64, .identifier(auto: true))
            .field("order_id", .uuid, .required, .references("orders", "id", onDelete: .cascade))
            .field("position", .int, .required)
            .field("kind", .string, .required)
            .field("status", .string, .required)
        for end in ["from", "to"] {
            legs = legs.field(.string("\(end)_street"), .string, .required)
                .field(.string("\(end)_postal_code"), .string, .required)
                .field(.string("\(end)_city"), .string, .required)
                .field(.string("\(end)_country"), .string, .required)
                .field(.string("\(end)_latitude"), .double)
                .field(.string("\(end)_longitude"), .double)
                .field(.string("\(end)_area_id"), .string)
        }
        try await legs
            .field("window_start", .int64)
            .field("window_end", .int64)
            .field("slot_id", .string)
            .field("carrier_code", .string)
            .field("tracking_number", .string)
            .field("assignee_id", .uuid, .references("users", "id"))
            .field("counter_id", .string)
            .field("created_at", .int64, .required)
            .field("updated_at", .int64, .required)
            .unique(on: "order_id", "position")
            .create()
        try await sql.create(index: "legs_assignee_status").on("legs").column("assignee_id").column("status").run()
        let statusCase = "CASE status " + Self.legStatus.map { "WHEN '\($0.order)' THEN '\($0.leg)'" }.joined(separator: " ") + " END"
        let ends = ["street", "postal_code", "city", "country", "latitude", "longitude", "area_id"]
        try await sql.raw("""
            INSERT INTO legs (order_id, position, kind, status, \(unsafeRaw: ends.map { "from_\($0)" }.joined(separator: ", ")),
                \(unsafeRaw: ends.map { "to_\($0)" }.joined(separator: ", ")), assignee_id, created_at, updated_at)
            SELECT id, 0, 'fleet', \(unsafeRaw: statusCase), \(unsafeRaw: ends.map { "pickup_\($0)" }.joined(separator: ", ")),
                \(unsafeRaw: ends.map { "dropoff_\($0)" }.joined(separator: ", ")), driver_id, created_at, updated_at
            FROM orders
            """).run()

        // Hand-overs, with their proof: each pickup, and each delivery with its signature, photo,
        // the name signed and whether the recipient's code was checked.
        try await database.schema("hand_overs")
            .field("id", .int64, .identifier(auto: true))
            .field("order_id", .uuid, .required, .references("orders", "id", onDelete: .cascade))
            .field("leg_position", .int, .required)
            .field("kind", .string, .required)
            .field("actor_id", .uuid)
            .field("at", .int64, .required)
            .field("signature_file_id", .uuid)
            .field("photo_file_id", .uuid)
            .field("signed_by", .string)
            .field("code_checked", .bool, .required)
            .field("qr_code", .string)
            .field("carrier_event", .string)
            .create()
        try await sql.create(index: "hand_overs_order").on("hand_overs").column("order_id").column("id").run()
        let no = postgres ? "false" : "0"
        try await sql.raw("""
            INSERT INTO hand_overs (order_id, leg_position, kind, actor_id, at, code_checked)
            SELECT order_id, 0, 'pickup', actor_id, at, \(unsafeRaw: no) FROM order_events WHERE type = 'picked_up' ORDER BY id
            """).run()
        func file(_ kind: String) -> String {
            "(SELECT f.id FROM order_files f WHERE f.order_id = e.order_id AND f.kind = '\(kind)' ORDER BY f.created_at LIMIT 1)"
        }
        try await sql.raw("""
            INSERT INTO hand_overs (order_id, leg_position, kind, actor_id, at, signature_file_id, photo_file_id, signed_by, code_checked)
            SELECT e.order_id, 0, 'delivery', e.actor_id, e.at, \(unsafeRaw: file("signature")), \(unsafeRaw: file("delivery_photo")),
                o.signed_by, o.require_recipient_code
            FROM order_events e JOIN orders o ON o.id = e.order_id WHERE e.type = 'delivered' ORDER BY e.id
            """).run()
    }

    func revert(on database: any Database) async throws {
        guard let sql = database as? any SQLDatabase else { throw MigrationNeedsSQL() }
        try await database.schema("hand_overs").delete()
        try await database.schema("legs").delete()
        try await sql.raw("DROP INDEX orders_recipient_email_created").run()
        // Back to JSON columns, rebuilt from the columns.
        for place in ["pickup", "dropoff"] {
            try await sql.raw("ALTER TABLE orders ADD COLUMN \(unsafeRaw: place) TEXT NOT NULL DEFAULT '{}'").run()
        }
        try await sql.raw("ALTER TABLE orders ADD COLUMN recipient TEXT NOT NULL DEFAULT '{}'").run()
        let postgres = sql.dialect.name == "postgresql"
        let object = postgres ? "json_build_object" : "json_object"
        for place in ["pickup", "dropoff"] {
            let coordinate = "CASE WHEN \(place)_latitude IS NULL THEN NULL ELSE \(object)('latitude', \(place)_latitude, 'longitude', \(place)_longitude) END"
            let value = "\(object)('street', \(place)_street, 'postalCode', \(place)_postal_code, 'city', \(place)_city, 'country', \(place)_country, 'coordinate', \(coordinate))"
            try await sql.raw("UPDATE orders SET \(unsafeRaw: place) = \(unsafeRaw: value)\(unsafeRaw: postgres ? "::text" : "")").run()
            for part in Self.placeParts {
                try await sql.raw("ALTER TABLE orders DROP COLUMN \(unsafeRaw: place)_\(unsafeRaw: part.column)").run()
            }
        }
        try await sql.raw("""
            UPDATE orders SET recipient = \(unsafeRaw: object)('name', recipient_name, 'email', recipient_email, 'phone', recipient_phone)\(unsafeRaw: postgres ? "::text" : "")
            """).run()
        for column in ["name", "email", "phone"] {
            try await sql.raw("ALTER TABLE orders DROP COLUMN recipient_\(unsafeRaw: column)").run()
        }
    }
}
