import Fluent
import Foundation
import Testing
import Vapor
@testable import WaybillServer
import WaybillCore

/// The carrier adapters and the poller against a local server speaking DHL's and La Poste's APIs.
@Suite("Following parcels at their carriers: DHL and La Poste, events merged once, statuses, budgets, backoff")
struct ParcelPollingTests {
    static func withCarriers(_ db: TestDatabase, oauth: Bool = false, _ body: (TestServer, FakeCarriers) async throws -> Void) async throws {
        let fake = try await FakeCarriers.start()
        do {
            try await TestServer.run(db, adjust: { config in
                config.carriers = CarrierSettings(dhlAPIKey: FakeCarriers.dhlKey, dhlAPIBase: fake.baseURL,
                                                  laPosteAPIKey: FakeCarriers.laPosteKey, laPosteAPIBase: fake.baseURL)
                if oauth {
                    let credentials = FakeCarriers.credentials(fake)
                    config.carriers.ups = credentials
                    config.carriers.fedex = credentials
                    config.carriers.usps = credentials
                    config.carriers.gls = credentials
                }
            }) { server in try await body(server, fake) }
        } catch {
            await fake.stop()
            throw error
        }
        await fake.stop()
    }

    static func poll(_ server: TestServer) async throws -> Int {
        try await server.app.waybill.run {
            try await ParcelPoller(services: server.app.waybill, db: server.db, logger: server.app.logger).runOnce()
        }
    }

    @Test("A DHL parcel: its events arrive, are kept once, give its status and tell its owner; delivered stops the polling",
          arguments: TestDatabase.available)
    func dhl(db: TestDatabase) async throws {
        try await Self.withCarriers(db) { server, fake in
            let cast = try await server.cast()
            let number = "00340434292135100124"
            fake.setDHL(number, status: "transit", events: [
                ("2026-11-20T09:12:00+01:00", "pre-transit", "The shipment data was sent", "Bonn"),
                ("2026-11-20T18:40:00+01:00", "transit", "The shipment has been processed in the parcel center", "Köln"),
            ])
            let added = try await server.send(.POST, "/parcels", json: ["number": number, "name": "Shoes"], token: cast.customer.access)
            let id = try #require(added.json["id"].string, "\(added)")
            #expect(try await Self.poll(server) == 1)
            var parcel = try await server.send(.GET, "/parcels/\(id)", token: cast.customer.access)
            #expect(parcel.json["status"].string == "in_transit" && parcel.json["events"].array.count == 2, "\(parcel)")
            #expect(parcel.json["events"][0]["code"].string == "transit" && parcel.json["events"][0]["location"].string == "Köln, DE")
            #expect(parcel.json["events"][0]["timeZoneKnown"].bool == true && parcel.json["estimatedDelivery"].exists)
            // On the map: Köln found in the offline gazetteer, approximate (the town).
            #expect(parcel.json["events"][0]["placePrecision"].string == "locality", "\(parcel.json["events"][0])")
            #expect(abs((parcel.json["events"][0]["latitude"].double ?? 0) - 50.94) < 0.1 && abs((parcel.json["events"][0]["longitude"].double ?? 0) - 6.96) < 0.1)
            let ada = TestBrowser(server)
            _ = try await ada.signIn("ada@example.com")
            let page = try await ada.get("/parcels/\(id)")
            #expect(page.html.contains("data-map=") && page.html.contains("Köln, DE ≈") && page.html.contains("≈ approximate"), "\(page.html.prefix(3000))")
            let inbox = try await server.send(.GET, "/notifications", token: cast.customer.access)
            #expect(inbox.json["items"][0]["kind"].string == "parcel_update" && inbox.json["items"][0]["title"].string == "Shoes: news from the carrier", "\(inbox)")

            // Not due again for two hours.
            #expect(try await Self.poll(server) == 0)
            server.clock.advance(minutes: 121)
            fake.setDHL(number, status: "delivered", events: [
                ("2026-11-20T09:12:00+01:00", "pre-transit", "The shipment data was sent", "Bonn"),
                ("2026-11-20T18:40:00+01:00", "transit", "The shipment has been processed in the parcel center", "Köln"),
                ("2026-11-21T11:02:00+01:00", "delivered", "The shipment has been delivered", "Berlin"),
            ])
            #expect(try await Self.poll(server) == 1)
            parcel = try await server.send(.GET, "/parcels/\(id)", token: cast.customer.access)
            #expect(parcel.json["status"].string == "delivered" && parcel.json["events"].array.count == 3, "events kept once: \(parcel)")
            #expect(try await ParcelRecord.find(ParcelID(uuidString: id), on: server.db)?.nextCheckAt == nil)
            server.clock.advance(minutes: 600)
            let before = fake.requests.count
            #expect(try await Self.poll(server) == 0 && fake.requests.count == before, "a delivered parcel is not asked about again")
            // An unknown number: still pending, asked again later.
            let unknown = try await server.send(.POST, "/parcels", json: ["number": "3318810025", "carrier": "dhl"], token: cast.customer.access)
            #expect(try await Self.poll(server) == 1)
            let stillPending = try await server.send(.GET, "/parcels/\(try #require(unknown.json["id"].string))", token: cast.customer.access)
            #expect(stillPending.json["status"].string == "pending" && stillPending.json["lastCheckedAt"].exists)
        }
    }

    @Test("La Poste answers several numbers at once (207, one unknown); a 429 pauses the carrier in the database; a refresh by hand is limited",
          arguments: TestDatabase.available)
    func laPosteBatchAndBudget(db: TestDatabase) async throws {
        try await Self.withCarriers(db) { server, fake in
            let cast = try await server.cast()
            fake.setLaPoste("6A12345678901", events: [
                ("2026-11-19T08:00:00+01:00", "DR1", "Votre colis est en cours de préparation"),
                ("2026-11-20T07:30:00+01:00", "MD2", "Votre colis est en cours de livraison"),
                ("2026-11-20T07:45:00+01:00", "XX9", "Un code que Waybill ne connaît pas"),
            ])
            let known = try #require(try await server.send(.POST, "/parcels", json: ["number": "6A12345678901"], token: cast.customer.access).json["id"].string)
            let other = try #require(try await server.send(.POST, "/parcels", json: ["number": "8L98765432109", "carrier": "la_poste"], token: cast.customer.access).json["id"].string)
            #expect(try await Self.poll(server) == 2)
            #expect(fake.requests.filter { $0.contains("/suivi/v2/idships/") }.count == 1, "one call for both: \(fake.requests)")
            let parcel = try await server.send(.GET, "/parcels/\(known)", token: cast.customer.access)
            // The unmapped code is kept raw, without a status; the status comes from the newest mapped one.
            #expect(parcel.json["status"].string == "out_for_delivery", "\(parcel)")
            #expect(parcel.json["events"][0]["code"].string == "XX9" && parcel.json["events"][0]["status"].exists == false)
            #expect(try await server.send(.GET, "/parcels/\(other)", token: cast.customer.access).json["status"].string == "pending")
            // Out for delivery: asked again sooner (a quarter of the pulse).
            let next = try #require(try await ParcelRecord.find(ParcelID(uuidString: known), on: server.db)?.nextCheckAt)
            #expect(next - UnixTime.nowMillis <= 31 * 60_000)

            // 429: La Poste is left alone for its Retry-After, in the database (any process, after a restart).
            server.clock.advance(minutes: 121)
            fake.rateLimitNextRequest()
            let asked = fake.requests.count
            #expect(try await Self.poll(server) == 0)
            #expect(fake.requests.count == asked + 1)
            let budget = try await server.db.query(CarrierBudgetRow.self).filter(\.$id == "la_poste").first()
            // At least the refused call counts (the day may have turned in the 121 minutes: the budget is per UTC day).
            #expect(budget?.blockedUntil != nil && budget!.used >= 1)
            #expect(try await Self.poll(server) == 0 && fake.requests.count == asked + 1, "paused")
            server.clock.advance(minutes: 3)
            #expect(try await Self.poll(server) == 2)

            // By hand: once every five minutes; none for a carrier without an adapter.
            server.clock.advance(minutes: 10)
            let refreshed = try await server.send(.POST, "/parcels/\(known)/refresh", token: cast.customer.access)
            #expect(refreshed.status == .ok && refreshed.json["events"].array.count == 3, "\(refreshed)")
            #expect(try await server.send(.POST, "/parcels/\(known)/refresh", token: cast.customer.access).status == .tooManyRequests)
            #expect(try await server.send(.POST, "/parcels/\(known)/refresh", token: cast.otherCustomer.access).status == .notFound)
            let ups = try #require(try await server.send(.POST, "/parcels", json: ["number": "1Z999AA10123456784"], token: cast.customer.access).json["id"].string)
            #expect(try await server.send(.POST, "/parcels/\(ups)/refresh", token: cast.customer.access).status == .conflict)
        }
    }
}

/// `carrier_budgets`, read by the tests.
final class CarrierBudgetRow: Model, @unchecked Sendable {
    static let schema = "carrier_budgets"
    @ID(custom: "carrier", generatedBy: .user) var id: String?
    @Field(key: "day") var day: String
    @Field(key: "used") var used: Int
    @Field(key: "public_used") var publicUsed: Int
    @OptionalField(key: "blocked_until") var blockedUntil: Int64?
    init() {}
}
