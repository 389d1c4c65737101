import Fluent
import Foundation
import SQLKit
import Testing
@testable import WaybillServer
import WaybillCore

/// Migration 008 on a database filled by the release before it (`Fixtures/make-migration-fixture.py`,
/// run with the binary of 2a5c47d): every order becomes a shipment with one fleet leg, its pickups
/// and deliveries hand-overs with their proof, and nothing else changes.
@Suite("Orders made before shipments, migrated")
struct ShipmentMigrationTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")

    /// Every row of every table, each value as text: what the database holds, compared field by field.
    typealias Snapshot = [String: [[String: String]]]

    static func snapshot(_ sql: any SQLDatabase) async throws -> Snapshot {
        let postgres = sql.dialect.name == "postgresql"
        let tables = try await sql.raw(postgres
            ? "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema()"
            : "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").all()
            .map { try $0.decode(column: "name", as: String.self) }
        var snapshot: Snapshot = [:]
        for table in tables where table != "_fluent_migrations" {
            let columns = try await sql.raw(postgres
                ? "SELECT column_name AS name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = \(bind: table) ORDER BY ordinal_position"
                : "SELECT name FROM pragma_table_info(\(bind: table))").all()
                .map { try $0.decode(column: "name", as: String.self) }
            let select = columns.map { "CAST(\"\($0)\" AS TEXT) AS \"\($0)\"" }.joined(separator: ", ")
            let rows = try await sql.raw("SELECT \(unsafeRaw: select) FROM \(ident: table)").all()
            snapshot[table] = try rows.map { row in
                var values: [String: String] = [:]
                for column in columns { values[column] = try row.decode(column: column, as: String?.self) ?? "NULL" }
                return values
            }
        }
        return snapshot
    }

    /// The statements of an SQL dump: split at semicolons outside quoted text, comment lines dropped.
    static func statements(of dump: String) -> [String] {
        let text = dump.split(separator: "\n", omittingEmptySubsequences: false).filter { !$0.hasPrefix("--") }.joined(separator: "\n")
        var statements: [String] = [], current = "", quoted = false
        for character in text {
            if character == "'" { quoted.toggle() }
            if character == ";" && !quoted {
                let statement = current.trimmingCharacters(in: .whitespacesAndNewlines)
                if !statement.isEmpty { statements.append(statement) }
                current = ""
            } else {
                current.append(character)
            }
        }
        return statements
    }

    final class Box: @unchecked Sendable { var before: Snapshot = [:] }

    @Test("Every order of the previous release is a shipment with one fleet leg, its hand-overs and proofs; every other field is as it was",
          arguments: TestDatabase.both)
    func migratesEveryField(db: TestDatabase) async throws {
        let box = Box()
        let kind = db == .sqlite ? "sqlite" : "pg"
        let made = try JSONDecoder().decode([String: String].self,
                                            from: Data(contentsOf: Self.fixtures.appendingPathComponent("before-shipments.\(kind).orders.json")))
        try await TestServer.run(db, sqliteFile: db == .sqlite ? Self.fixtures.appendingPathComponent("before-shipments.sqlite") : nil,
                                 beforeMigrating: { server in
            if db == .postgres {
                let dump = try String(contentsOf: Self.fixtures.appendingPathComponent("before-shipments.pg.sql"), encoding: .utf8)
                for statement in Self.statements(of: dump) { try await server.sql.raw("\(unsafeRaw: statement)").run() }
            }
            box.before = try await Self.snapshot(server.sql)
        }) { server in
            let before = box.before, after = try await Self.snapshot(server.sql)
            #expect(before["orders"]?.count == 13, "the fixture's orders were loaded")

            // Every table but orders and users is untouched; they keep every other column. (Later
            // migrations may add columns: those there before keep their values.)
            for (table, rows) in before where table != "orders" && table != "users" {
                let sorted = { (rows: [[String: String]]) in rows.map { $0.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: "|") }.sorted() }
                let columns = Set(rows.first?.keys.map { $0 } ?? [])
                #expect(sorted(rows) == sorted((after[table] ?? []).map { $0.filter { columns.contains($0.key) } }), "table \(table)")
            }
            let afterOrders = Dictionary(uniqueKeysWithValues: (after["orders"] ?? []).map { ($0["id"]!, $0) })
            let legs = Dictionary(grouping: after["legs"] ?? []) { $0["order_id"]! }
            let handOvers = Dictionary(grouping: after["hand_overs"] ?? []) { $0["order_id"]! }
            let events = Dictionary(grouping: before["order_events"] ?? []) { $0["order_id"]! }
            let files = Dictionary(grouping: before["order_files"] ?? []) { $0["order_id"]! }
            func number(_ text: String?) -> Double? { text.flatMap { $0 == "NULL" ? nil : Double($0) } }
            for old in before["orders"] ?? [] {
                let id = old["id"]!
                let new = try #require(afterOrders[id], "order \(id) is still there")
                for (column, value) in old where !["pickup", "dropoff", "recipient"].contains(column) {
                    #expect(new[column] == value, "\(id).\(column)")
                }
                for place in ["pickup", "dropoff"] {
                    let address = try JSONDecoder().decode(Address.self, from: Data(old[place]!.utf8))
                    #expect(new["\(place)_street"] == address.street && new["\(place)_postal_code"] == address.postalCode, "\(id).\(place)")
                    #expect(new["\(place)_city"] == address.city && new["\(place)_country"] == address.country, "\(id).\(place)")
                    #expect(number(new["\(place)_latitude"]) == address.coordinate?.latitude, "\(id).\(place)")
                    #expect(number(new["\(place)_longitude"]) == address.coordinate?.longitude, "\(id).\(place)")
                }
                let recipient = try JSONDecoder().decode(Recipient.self, from: Data(old["recipient"]!.utf8))
                #expect(new["recipient_name"] == recipient.name && new["recipient_phone"] == (recipient.phone ?? "NULL"), "\(id).recipient")
                #expect(new["recipient_email"] == (recipient.email?.lowercased() ?? "NULL"), "\(id).recipient")

                // One fleet leg, where the order was, carried by its driver, from pickup to drop-off.
                let leg = try #require(legs[id]?.count == 1 ? legs[id]?.first : nil, "order \(id) has one leg")
                let status = try #require(OrderStatus(rawValue: old["status"]!))
                #expect(leg["kind"] == "fleet" && leg["position"] == "0" && leg["status"] == status.asFleetLeg.leg.rawValue, "\(id) leg")
                #expect(leg["assignee_id"] == old["driver_id"], "\(id) leg")
                #expect(leg["from_street"] == new["pickup_street"] && leg["to_city"] == new["dropoff_city"], "\(id) leg")
                #expect(leg["created_at"] == old["created_at"] && leg["updated_at"] == old["updated_at"], "\(id) leg")

                // A hand-over for each pickup, and the delivery with its proof.
                let mine = handOvers[id] ?? []
                let pickups = (events[id] ?? []).filter { $0["type"] == "picked_up" }
                #expect(mine.filter { $0["kind"] == "pickup" }.map { $0["at"]! }.sorted() == pickups.map { $0["at"]! }.sorted(), "\(id) pickups")
                #expect(mine.filter { $0["kind"] == "pickup" }.allSatisfy { $0["actor_id"] == old["driver_id"] }, "\(id) pickups")
                let delivered = (events[id] ?? []).first { $0["type"] == "delivered" }
                let deliveries = mine.filter { $0["kind"] == "delivery" }
                #expect(deliveries.count == (delivered == nil ? 0 : 1), "\(id) delivery")
                if let delivered, let delivery = deliveries.first {
                    #expect(delivery["at"] == delivered["at"] && delivery["actor_id"] == delivered["actor_id"])
                    #expect(delivery["signature_file_id"] == (files[id] ?? []).first { $0["kind"] == "signature" }?["id"])
                    #expect(delivery["photo_file_id"] == ((files[id] ?? []).first { $0["kind"] == "delivery_photo" }?["id"] ?? "NULL"))
                    #expect(delivery["signed_by"] == old["signed_by"])
                }
            }
            // Migration 010: roles become capabilities, granted by nobody known, and a disabled
            // account a ban; every other field of an account is as it was.
            let afterUsers = Dictionary(uniqueKeysWithValues: (after["users"] ?? []).map { ($0["id"]!, $0) })
            let grants = Dictionary(grouping: after["capability_grants"] ?? []) { $0["user_id"]! }
            #expect((before["users"] ?? []).count >= 3 && (before["users"] ?? []).count == afterUsers.count)
            for old in before["users"] ?? [] {
                let id = old["id"]!
                let new = try #require(afterUsers[id])
                for (column, value) in old where column != "disabled_at" { #expect(new[column] == value, "user \(id).\(column)") }
                #expect(new["disabled_at"] == nil)
                var held = old["role"] == "manager" ? ["driver", "manager"] : old["role"] == "driver" ? ["driver"] : []
                // Migration 038: a company that already paid by invoice is vetted (the `invoice` capability).
                if ["1", "t", "true"].contains(old["is_company"] ?? ""),
                   (before["orders"] ?? []).contains(where: { $0["customer_id"] == id && $0["payment_method"] == "invoice" }) {
                    held.append("invoice")
                }
                let expected = held.sorted().joined(separator: ",")
                #expect(new["capabilities"] == expected, "user \(id)")
                #expect((grants[id] ?? []).map { $0["capability"]! }.sorted().joined(separator: ",") == expected, "user \(id) grants")
                #expect((grants[id] ?? []).allSatisfy { $0["granted_by"] == "NULL" && $0["granted_at"] != "0" })
                #expect(new["restricted_kind"] == (old["disabled_at"] == "NULL" ? "NULL" : "banned"), "user \(id)")
            }

            let statuses = Set((before["orders"] ?? []).map { $0["status"]! })
            #expect(statuses == Set(OrderStatus.allCases.map(\.rawValue)), "the fixture has an order in every status")
            #expect((after["hand_overs"] ?? []).contains { $0["photo_file_id"] != "NULL" }, "a delivery photo was carried over")

            // The migrated shipments go on: the accepted one is picked up and delivered.
            let orders = Orders(services: server.app.waybill, db: server.db, logger: server.app.logger)
            let accepted = try #require(made["accepted"].flatMap(OrderID.init(uuidString:)))
            let order = try #require(try await Order.find(accepted, on: server.db))
            let driver = try #require(try await User.find(order.driverID, on: server.db))
            let asDriver = try Principal(user: driver, sessionID: SignInID())
            _ = try await orders.pickup(accepted, cashCollected: order.price, by: asDriver)
            let done = try await orders.deliver(accepted, signature: .init(bytes: SampleImages.signaturePNG, field: "signature"), photo: nil,
                                                recipientName: "Carl Ohne", code: nil, by: asDriver)
            #expect(done.status == .delivered && done.recipient.name == "Carl Ohne")
            let leg = try #require(try await Leg.query(on: server.db).filter(\.$orderID == accepted).first())
            #expect(leg.status == .handedOver && leg.assigneeID == driver.id)
            let recorded = try await HandOver.query(on: server.db).filter(\.$orderID == accepted).sort(\.$id).all()
            #expect(recorded.map(\.kind) == [.pickup, .delivery])
            #expect(recorded.last?.proof.kinds == [.signature] && recorded.last?.signedBy == "Carl Ohne")
        }
    }
}
