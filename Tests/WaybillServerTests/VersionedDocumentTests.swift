import Fluent
import Foundation
import SQLKit
import Testing
import WaybillCore
@testable import WaybillServer

/// The tariff, the insurance table, the loyalty rules and the travel tariff are one model
/// (`VersionedDocument`): a change writes the next version, the newest is in force, none is lost.
@Suite("Versioned documents")
struct VersionedDocumentTests {
    @Test("The travel tariff of the previous release becomes its version 1; a change writes version 2 and keeps the first",
          arguments: TestDatabase.both)
    func travelTariffVersions(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            // The table as migration 038 left it, with the one row an admin had saved.
            let admin = User(role: .manager, email: "ada@courier.example", passwordHash: nil, firstName: "Ada", lastName: "Admin",
                             emailVerifiedAt: Date())
            try await admin.save(on: server.db)
            try await server.db.transaction { try await Accounts.setStaffCapabilities(admin, to: [.manager, .admin], by: nil, on: $0) }
            let adminID = try admin.storedID
            var saved = TravelTariff.standard
            saved.platformFeePercent = 17
            let document = String(decoding: try JSONEncoder.sorted.encode(saved), as: UTF8.self)
            try await VersionTheTravelTariff().revert(on: server.db)
            try await server.sql.raw("DELETE FROM travel_tariff").run()
            try await server.sql.raw("""
                INSERT INTO travel_tariff (id, document, updated_by, updated_at) VALUES (1, \(bind: document), \(bind: adminID), 1700000000000)
                """).run()

            try await VersionTheTravelTariff().prepare(on: server.db)
            let first = try #require(try await TravelTariffRecord.current(on: server.db))
            #expect(first.version == 1 && first.createdBy == adminID && first.createdAt == 1_700_000_000_000)
            #expect(try first.content == saved)
            #expect(try await Travel.tariff(on: server.db) == saved, "what was in force still is")

            var changed = saved
            changed.platformFeePercent = 12
            let travel = Travel(services: server.app.waybill, db: server.db, logger: server.app.logger)
            _ = try await travel.setTariff(changed, by: try Principal(user: admin, sessionID: .random()))
            let versions = try await TravelTariffRecord.query(on: server.db).sort(\.$id).all()
            #expect(versions.map(\.version) == [1, 2])
            #expect(try versions.map { try $0.content } == [saved, changed], "the first version is kept as it was")
            #expect(try await Travel.tariff(on: server.db) == changed, "the newest is in force")
        }
    }

    @Test("Each kind of document has its own versions: replacing one leaves the others as they are")
    func kindsApart() async throws {
        try await TestServer.run(.sqlite) { server in
            let tariffBefore = try await TariffRecord.current(on: server.db)?.version
            let (record, previous) = try await server.db.transaction { db in
                try await LoyaltyRulesRecord.replace(with: try #require(try await LoyaltyRulesRecord.current(on: db)).content, by: nil, on: db)
            }
            #expect(record.version == (previous?.version ?? 0) + 1)
            #expect(try await TariffRecord.current(on: server.db)?.version == tariffBefore)
            #expect(try await LoyaltyRulesRecord.current(on: server.db)?.version == record.version)
        }
    }
}
