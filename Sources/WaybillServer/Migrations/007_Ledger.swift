import Fluent
import Foundation
import SQLKit
import WaybillCore

/// The money ledger (`ledger_entries`), filled for the orders already there from what each order
/// records: the charge, the invoice line (and its credit if cancelled), the cash collected, the refund.
struct CreateLedger: AsyncMigration {
    var name: String { "007_ledger" }

    func prepare(on database: any Database) async throws {
        try await database.schema(LedgerRecord.schema)
            .field("id", .int64, .identifier(auto: true))
            .field("kind", .string, .required)
            .field("amount", .int64, .required)
            .field("currency", .string, .required)
            .field("shipment_id", .uuid, .references("orders", "id"))
            .field("account_id", .uuid, .references("users", "id"))
            .field("at", .int64, .required)
            .field("reference", .string)
            .create()
        if let sql = database as? any SQLDatabase {
            try await sql.create(index: "ledger_entries_shipment").on(LedgerRecord.schema).column("shipment_id").run()
            try await sql.create(index: "ledger_entries_account_at").on(LedgerRecord.schema).column("account_id").column("at").run()
        }
        // Orders made before the ledger, a page at a time (newest creation time and id last seen).
        var cursor: (at: Int64, id: OrderID)?
        while true {
            // Only the columns the orders table had at this migration (later ones reshape it).
            let query = Order.query(on: database)
                .field(\.$id).field(\.$customerID).field(\.$status).field(\.$createdAt).field(\.$updatedAt)
                .field(\.$priceAmount).field(\.$currency).field(\.$paymentMethod).field(\.$paymentStatus)
                .field(\.$paymentIntentID).field(\.$paidAt).field(\.$refundID).field(\.$refundedAt).field(\.$cashCollected)
                .sort(\.$createdAt).sort(\.$id).limit(500)
            if let cursor {
                query.group(.or) { or in
                    or.filter(\.$createdAt > cursor.at)
                    or.group(.and) { $0.filter(\.$createdAt == cursor.at).filter(\.$id > cursor.id) }
                }
            }
            let batch = try await query.all()
            guard let last = batch.last, let lastID = last.id else { break }
            let pickups = try await OrderEvent.query(on: database).filter(\.$orderID ~~ batch.compactMap(\.id)).filter(\.$type == "picked_up").all()
            let pickedUp = Dictionary(pickups.map { ($0.orderID, $0.at) }, uniquingKeysWith: { first, _ in first })
            for order in batch {
                for entry in LedgerRecorder.entries(replaying: order, pickedUpAt: order.id.flatMap { pickedUp[$0] }) {
                    try await LedgerRecord(entry).create(on: database)
                }
            }
            cursor = (last.createdAt, lastID)
        }
    }

    func revert(on database: any Database) async throws {
        try await database.schema(LedgerRecord.schema).delete()
    }
}
