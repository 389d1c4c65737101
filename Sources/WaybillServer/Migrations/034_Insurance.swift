import Fluent
import Foundation
import SQLKit

/// Insurance: the premium table admins edit (versioned like the tariff), the declared value and
/// premium of an insured order, and claims with their decisions and payment.
struct CreateInsurance: AsyncMigration {
    var name: String { "034_insurance" }

    func prepare(on database: any Database) async throws {
        try await database.transaction { db in
            guard let sql = db as? any SQLDatabase else { throw MigrationNeedsSQL() }
            try await db.schema("insurance_tables")
                .field("version", .int, .identifier(auto: false))
                .field("data", .string, .required)
                .field("created_by", .uuid)
                .field("created_at", .int64, .required)
                .create()
            // The first table as this migration shipped it, as a plain row (not `InsuranceTable.initial`, which may change).
            let initial = #"{"bands":[{"minimumPremium":200,"rateBasisPoints":200,"upTo":50000},{"minimumPremium":1000,"rateBasisPoints":150,"upTo":200000},{"minimumPremium":3000,"rateBasisPoints":120,"upTo":500000}],"claimWindowDays":30,"currency":"CHF","secondApprovalAbove":50000}"#
            try await sql.insert(into: "insurance_tables").columns("version", "data", "created_by", "created_at")
                .values(SQLBind(1), SQLBind(initial), SQLLiteral.null, SQLBind(Int64(Date().timeIntervalSince1970 * 1000))).run()
            // One column per statement: SQLite adds one at a time.
            try await db.schema("orders").field("declared_value", .int64).update()
            try await db.schema("orders").field("insurance_premium", .int64).update()
            try await db.schema("claims")
                .id()
                .field("order_id", .uuid, .required, .references("orders", "id"))
                .field("claimant_id", .uuid, .required, .references("users", "id"))
                .field("kind", .string, .required)
                .field("description", .string, .required)
                .field("claimed_amount", .int64, .required)
                .field("currency", .string, .required)
                .field("status", .string, .required)
                .field("proposed_amount", .int64)
                .field("first_approver_id", .uuid)
                .field("first_approved_at", .int64)
                .field("decided_by", .uuid)
                .field("decided_at", .int64)
                .field("decline_reason", .string)
                .field("approved_amount", .int64)
                .field("refund_id", .string)
                .field("refunded_amount", .int64)
                .field("transfer_id", .string)
                .field("paid_at", .int64)
                .field("payment_note", .string)
                .field("created_at", .int64, .required)
                .field("updated_at", .int64, .required)
                // One claim per shipment: a second one is the first one's business.
                .unique(on: "order_id")
                .create()
            try await sql.create(index: "claims_status").on("claims").column("status").column("created_at").run()
            try await sql.create(index: "claims_claimant").on("claims").column("claimant_id").column("created_at").run()
        }
    }

    func revert(on database: any Database) async throws {
        try await database.schema("claims").delete()
        try await database.schema("orders").deleteField("declared_value").update()
        try await database.schema("orders").deleteField("insurance_premium").update()
        try await database.schema("insurance_tables").delete()
    }
}
