import Fluent
import Foundation
import Testing
import WaybillCore
@testable import WaybillServer

/// A tracking number typed wrong is corrected in place (M-Track's seed; issue 53): the parcel keeps
/// its name, notes and shares, and becomes the new number's parcel at its carrier.
@Suite("Correcting a followed parcel's tracking number")
struct ParcelNumberTests {
    @Test("A corrected number gets its carrier suggested again and loses the old number's events and status; a number already followed is 409, a malformed one 422, someone else's parcel 404",
          arguments: TestDatabase.available)
    func correctNumber(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            func principal(_ id: String) async throws -> Principal {
                try Principal(user: try #require(try await User.find(UserID(uuidString: id), on: server.db)), sessionID: .random())
            }
            let ada = try await principal(cast.customer.userID), bob = try await principal(cast.otherCustomer.userID)
            let parcels = Parcels(services: server.app.waybill, db: server.db, logger: server.app.logger)
            let typo = try await parcels.add(ParcelDraft(number: "00340434292135100124", name: "Shoes", notes: "size 38"), by: ada)
            let id = try typo.storedID
            #expect(typo.carrier == "dhl")
            // What the carrier said about the wrong number.
            try await ParcelEventRecord(parcel: id, ParcelEvent(at: 1_700_000_000_000, timeZoneKnown: true, localTime: "2023-11-14T23:13",
                                                                rawCode: "transit", status: .inTransit, description: "Someone else's parcel"))
                .create(on: server.db)
            typo.status = .inTransit
            try await typo.save(on: server.db)

            let fixed = try await parcels.update(id, number: "rb 123 456 785 ch", name: nil, notes: nil, carrier: nil, by: ada)
            #expect(fixed.number == "RB123456785CH" && fixed.carrier == "swiss_post" && !fixed.pinned, "S10 of Switzerland: Swiss Post")
            #expect(fixed.status == .pending && fixed.nextCheckAt != nil && fixed.lastCheckedAt == nil)
            #expect(fixed.name == "Shoes" && fixed.notes == "size 38", "what the owner wrote stays")
            #expect(try await parcels.events(of: id).isEmpty, "the old number's events are not this parcel's")
            let stored = try #require(try await ParcelRecord.find(id, on: server.db))
            #expect(stored.number == "RB123456785CH" && stored.status == .pending)

            // With a carrier given, it is the one chosen (pinned).
            let pinned = try await parcels.update(id, number: "RB123456785CH", name: nil, notes: nil, carrier: "swiss_post", by: ada)
            #expect(pinned.carrier == "swiss_post" && pinned.pinned)

            let other = try await parcels.add(ParcelDraft(number: "1Z999AA10123456784"), by: ada)
            do {
                _ = try await parcels.update(try other.storedID, number: "RB123456785CH", name: nil, notes: nil, carrier: nil, by: ada)
                Issue.record("a number already followed was taken")
            } catch let error as WaybillError {
                #expect(error.status == .conflict && error.fields?["number"] == "duplicate")
            }
            #expect(try await ParcelRecord.find(try other.storedID, on: server.db)?.number == "1Z999AA10123456784", "nothing written")
            do {
                _ = try await parcels.update(id, number: "!!", name: nil, notes: nil, carrier: nil, by: ada)
                Issue.record("a malformed number was taken")
            } catch let error as WaybillError {
                #expect(error.status == .unprocessableEntity && error.fields?["number"] != nil)
            }
            do {
                _ = try await parcels.update(id, number: "1Z999AA10123456784", name: nil, notes: nil, carrier: nil, by: bob)
                Issue.record("someone else corrected the number")
            } catch let error as WaybillError {
                #expect(error.status == .notFound)
            }

            // Over HTTP, as the apps send it.
            let answered = try await server.send(.PATCH, "/parcels/\(id.uuidString)", json: ["number": "00340434292135100124"], token: cast.customer.access)
            #expect(answered.status == .ok && answered.json["number"].string == "00340434292135100124" && answered.json["carrier"].string == "dhl", "\(answered)")
        }
    }
}
