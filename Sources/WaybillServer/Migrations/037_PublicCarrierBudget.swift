import Fluent
import Foundation
import SQLKit

/// Lookups without an account draw from their own share of each carrier's daily budget
/// (`carrier_budgets.public_used`, `ParcelPoller.publicShare`), never from the poller's, so
/// strangers cannot stop the tracking of followed parcels (second audit, finding 3).
struct AddPublicCarrierBudget: AsyncMigration {
    var name: String { "037_public_carrier_budget" }

    func prepare(on database: any Database) async throws {
        try await database.schema("carrier_budgets")
            .field("public_used", .int, .required, .sql(.default(0)))
            .update()
    }

    func revert(on database: any Database) async throws {
        try await database.schema("carrier_budgets").deleteField("public_used").update()
    }
}
