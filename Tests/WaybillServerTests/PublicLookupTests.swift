import Foundation
import Testing
import Vapor
@testable import WaybillServer
import WaybillCore

/// Trying it without an account (issue "Parcels of every carrier", item 5): the carrier's word on
/// a number, from a short cache, within the carrier's budget and a limit per address.
@Suite("Looking a number up without an account: the carrier's status, cached a few minutes, limited, nothing stored")
struct PublicLookupTests {
    @Test("DHL's status and events for a number, asked once for two lookups; unknown at the carrier; no adapter; too many",
          arguments: TestDatabase.available)
    func lookUp(db: TestDatabase) async throws {
        try await ParcelPollingTests.withCarriers(db) { server, fake in
            let number = "00340434292135100124"
            fake.setDHL(number, status: "transit", events: [
                ("2026-11-20T09:12:00+01:00", "pre-transit", "The shipment data was sent", "Bonn"),
                ("2026-11-20T18:40:00+01:00", "transit", "Processed in the parcel center", "Köln"),
            ])
            let first = try await server.send(.GET, "/carriers/track?number=0034%200434%202921%203510%200124")
            #expect(first.status == .ok && first.json["carrier"].string == "dhl" && first.json["status"].string == "in_transit", "\(first)")
            #expect(first.json["events"].array.count == 2 && first.json["events"][0]["location"].string == "Köln, DE")
            #expect(first.json["candidates"][0]["carrier"].string == "dhl")
            let asked = fake.requests.count
            let again = try await server.send(.GET, "/carriers/track?number=\(number)")
            #expect(again.json["status"].string == "in_transit" && fake.requests.count == asked, "the second lookup comes from the cache")
            #expect(try await ParcelRecord.query(on: server.db).count() == 0, "nothing stored")

            let unknown = try await server.send(.GET, "/carriers/track?number=3318810025&carrier=dhl")
            #expect(unknown.json["unknownAtCarrier"].bool == true && unknown.json["status"].exists == false, "\(unknown)")
            let swiss = try await server.send(.GET, "/carriers/track?number=RB123456785CH")
            #expect(swiss.json["notAsked"].string == "no_adapter" && swiss.json["carrier"].string == "swiss_post", "\(swiss)")
            #expect(try await server.send(.GET, "/carriers/track?number=RB123456785CH&carrier=pigeon").status == .badRequest)

            // Ten carrier requests a minute per address: once they are spent (here at once, not by
            // racing the clock), the lookup still answers, without the carrier's word.
            let live = server.app.waybill.carrierLiveLimiter
            live.exhaustAll()
            let before = fake.requests.count
            let busy = try await server.send(.GET, "/carriers/track?number=JJD000000000000000001&carrier=dhl")
            #expect(busy.status == .ok && busy.json["notAsked"].string == "busy" && busy.json["candidates"].exists, "\(busy)")
            #expect(fake.requests.count == before, "the carrier is not asked")

            // The web page shows the carrier's word.
            let page = try await TestBrowser(server).get("/track-parcel?number=\(number)")
            #expect(page.html.contains("data-parcel-status=\"in_transit\"") && page.html.contains("Processed in the parcel center"), "\(page.html.prefix(2000))")

            try await server.serving { port in
                let sdk = server.sdk(port: port)
                let looked = try await sdk.lookUpNumber(number)
                #expect(looked.status == .inTransit && looked.carrier == "dhl")
            }
        }
    }
}
