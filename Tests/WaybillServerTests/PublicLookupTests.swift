import Fluent
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

    /// A lookup without an account from `address`, as `GET /carriers/track` makes it.
    static func lookUp(_ server: TestServer, _ number: String, carrier: String, from address: String) async throws -> PublicLookup.Result {
        let services = server.app.waybill
        return try await services.run {
            try await PublicLookup(services: services, db: server.db, logger: server.app.logger).lookUp(number, carrier: carrier, clientAddress: address)
        }
    }

    @Test("Lookups without an account spend only their own tenth of a carrier's daily budget: once it is gone, followed parcels are still asked about",
          arguments: TestDatabase.available)
    func anonymousShare(db: TestDatabase) async throws {
        try await ParcelPollingTests.withCarriers(db) { server, fake in
            let share = ParcelPoller.publicShare("dhl")
            #expect(share == 25 && ParcelPoller.pollerLimit("dhl") == 225 && ParcelPoller.dailyLimit("dhl") == 250)
            // Many visitors, one new number each (a new number always misses the cache).
            let before = fake.requests.count
            for i in 0..<share {
                let found = try await Self.lookUp(server, "JJD" + String(format: "%018d", i), carrier: "dhl", from: "203.0.113.\(i)")
                #expect(found.notAsked == nil, "\(i): \(String(describing: found.notAsked))")
            }
            #expect(fake.requests.count == before + share)
            // The share is spent: from any address, the carrier is no longer asked for strangers.
            let busy = try await Self.lookUp(server, "JJD" + String(format: "%018d", share), carrier: "dhl", from: "198.51.100.7")
            #expect(busy.notAsked == "busy" && fake.requests.count == before + share, "\(String(describing: busy.notAsked))")

            // The poller's budget is whole: a followed DHL parcel is asked about, and "refresh" too.
            let cast = try await server.cast()
            let number = "00340434292135100124"
            fake.setDHL(number, status: "transit", events: [("2026-11-20T18:40:00+01:00", "transit", "Processed in the parcel center", "Köln")])
            let parcel = try #require(try await server.send(.POST, "/parcels", json: ["number": number], token: cast.customer.access).json["id"].string)
            #expect(try await ParcelPollingTests.poll(server) == 1)
            #expect(try await server.send(.POST, "/parcels/\(parcel)/refresh", token: cast.customer.access).status == .ok)
            let budget = try #require(try await server.db.query(CarrierBudgetRow.self).filter(\.$id == "dhl").first())
            #expect(budget.publicUsed == share && budget.used == 2, "\(budget.publicUsed) \(budget.used)")

            // Even with the poller's part nearly gone, strangers cannot take its last request.
            budget.used = ParcelPoller.pollerLimit("dhl") - 1
            try await budget.save(on: server.db)
            _ = try await Self.lookUp(server, "JJD" + String(format: "%018d", share + 1), carrier: "dhl", from: "198.51.100.8")
            let poller = ParcelPoller(services: server.app.waybill, db: server.db, logger: server.app.logger)
            #expect(try await server.app.waybill.run { try await poller.takeBudget("dhl") })
            #expect(try await server.app.waybill.run { try await poller.takeBudget("dhl") } == false, "and no more than its part")
        }
    }

    @Test("One address asks a carrier at most thirty times a day for lookups without an account, however slowly it asks",
          arguments: TestDatabase.available)
    func perAddressPerDay(db: TestDatabase) async throws {
        try await ParcelPollingTests.withCarriers(db) { server, fake in
            let before = fake.requests.count
            var asked = 0
            // Ten a minute, three minutes running: thirty.
            for minute in 0..<3 {
                for i in 0..<10 {
                    let found = try await Self.lookUp(server, "LP\(minute)X\(i)", carrier: "la_poste", from: "203.0.113.9")
                    if found.notAsked == nil { asked += 1 }
                }
                server.clock.advance(minutes: 1.5)
            }
            #expect(asked == 30 && fake.requests.count == before + 30, "\(asked)")
            // The minute's limit has room again, the day's has not.
            let refused = try await Self.lookUp(server, "LP9X9", carrier: "la_poste", from: "203.0.113.9")
            #expect(refused.notAsked == "busy" && fake.requests.count == before + 30)
            // Another address still may.
            let other = try await Self.lookUp(server, "LP9X8", carrier: "la_poste", from: "203.0.113.10")
            #expect(other.notAsked == nil)
        }
    }
}
