import Fluent
import Foundation
import SQLKit

/// Paying by invoice, and importing deliveries, now need a company that staff have vetted: the
/// `invoice` capability (second audit, finding 8). Company accounts that already worked that way
/// (an order paid by invoice, or an import placed) keep doing so: they are granted `invoice` here,
/// as by the operator (no granting account). Other company accounts wait for staff to vet them.
/// Plain SQL on what the tables held at migration 037.
struct VetExistingCompanies: AsyncMigration {
    var name: String { "038_vetted_companies" }

    struct Row: Decodable {
        let id: UUID
        let capabilities: String
    }

    func prepare(on database: any Database) async throws {
        try await database.transaction { db in
            guard let sql = db as? any SQLDatabase else { throw MigrationNeedsSQL() }
            let rows = try await sql.raw("""
                SELECT id, capabilities FROM users WHERE is_company = \(bind: true) AND (
                  id IN (SELECT customer_id FROM orders WHERE payment_method = 'invoice')
                  OR id IN (SELECT owner_id FROM order_imports WHERE status = 'committed'))
                """).all(decoding: Row.self)
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            for row in rows {
                // `users.capabilities` is a sorted, comma-separated list (`Capability.storedList`).
                var held = Set(row.capabilities.split(separator: ",").map(String.init))
                guard held.insert("invoice").inserted else { continue }
                try await sql.raw("UPDATE users SET capabilities = \(bind: held.sorted().joined(separator: ",")) WHERE id = \(bind: row.id)").run()
                try await sql.raw("""
                    INSERT INTO capability_grants (user_id, capability, granted_at) VALUES (\(bind: row.id), 'invoice', \(bind: now))
                    """).run()
            }
        }
    }

    func revert(on database: any Database) async throws {
        try await database.transaction { db in
            guard let sql = db as? any SQLDatabase else { throw MigrationNeedsSQL() }
            let rows = try await sql.raw("SELECT id, capabilities FROM users WHERE capabilities LIKE '%invoice%'").all(decoding: Row.self)
            for row in rows {
                let kept = row.capabilities.split(separator: ",").filter { $0 != "invoice" }.joined(separator: ",")
                try await sql.raw("UPDATE users SET capabilities = \(bind: kept) WHERE id = \(bind: row.id)").run()
            }
            try await sql.raw("DELETE FROM capability_grants WHERE capability = 'invoice'").run()
        }
    }
}
