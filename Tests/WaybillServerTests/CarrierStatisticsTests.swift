import Foundation
import Testing
import Vapor
@testable import WaybillServer
import WaybillCore

/// Delivery-speed statistics per carrier (issue "Parcels of every carrier", item 9), written when
/// parcels and shipments are delivered.
@Suite("Statistics per carrier: delivered parcels and Waybill shipments on a public board (five or more) and in one's own")
struct CarrierStatisticsTests {
    @Test("Five DHL parcels make a public row; Waybill's own delivery shows in the sender's figures; each delivery counts once",
          arguments: TestDatabase.both)
    func board(db: TestDatabase) async throws {
        try await ParcelPollingTests.withCarriers(db) { server, fake in
            let cast = try await server.cast()
            for n in 1...5 {
                let number = "JJD00000000000000\(n)"
                fake.setDHL(number, status: "delivered", events: [
                    ("2026-11-20T08:00:00+01:00", "pre-transit", "Label", "Bonn"),
                    ("2026-11-20T10:00:00+01:00", "transit", "Picked up", "Bonn"),
                    ("2026-11-2\(n)T10:00:00+01:00", "delivered", "Delivered", "Berlin"),
                ])
                let token = n == 1 ? cast.otherCustomer.access : cast.customer.access
                _ = try await server.send(.POST, "/parcels", json: ["number": number, "carrier": "dhl"], token: token)
                if n == 4 {
                    // Four deliveries: not yet on the public board.
                    #expect(try await ParcelPollingTests.poll(server) == 4)
                    #expect(try await server.send(.GET, "/statistics/carriers").json["carriers"].array.isEmpty)
                }
            }
            #expect(try await ParcelPollingTests.poll(server) == 1)
            // The public board is kept five minutes (`BoardCache`).
            server.clock.advance(minutes: 6)
            let board = try await server.send(.GET, "/statistics/carriers")
            let dhl = try #require(board.json["carriers"].array.first { $0["carrier"].string == "dhl" }, "\(board)")
            // Picked up on the 20th at 10:00, delivered on the 21st…25th at 10:00: 24…120 hours.
            #expect(dhl["count"].int == 5 && dhl["medianHours"].double == 72 && dhl["p90Hours"].double == 120 && dhl["firstAttemptShare"].double == 1, "\(dhl)")
            #expect(board.json["routes"][0]["origin"].string == "DE" && board.json["routes"][0]["destination"].string == "DE")

            // Waybill's own fleet: Ada's shipment, picked up and delivered.
            let shipment = try await server.placeOrder(cast.customer.access)
            try await server.advance(shipment, to: .delivered, cast: cast)
            let mine = try await server.send(.GET, "/me/statistics/carriers", token: cast.customer.access)
            #expect(Set(mine.json["carriers"].array.compactMap { $0["carrier"].string }) == ["dhl", "waybill"], "\(mine)")
            #expect(mine.json["carriers"].array.first { $0["carrier"].string == "dhl" }?["count"].int == 4, "Ada's four, not Bob's")
            #expect(try await server.send(.GET, "/me/statistics/carriers").status == .unauthorized)

            // Asked again, a delivered parcel is not counted twice.
            #expect(try await DeliverySampleRecord.query(on: server.db).count() == 6)

            let page = try await TestBrowser(server).get("/carrier-statistics")
            #expect(page.status == .ok && page.html.contains("data-carrier=\"dhl\"") && page.html.contains("3.0 days"), "\(page.html.prefix(3000))")
        }
    }

    @Test("The public board is worked out once for any number of requests, again only after five minutes, and limited per address (429); one's own once a minute",
          arguments: TestDatabase.available)
    func cachedAndLimited(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let cache = server.app.waybill.statisticsBoard
            let before = cache.computations
            #expect(try await server.send(.GET, "/statistics/carriers").status == .ok)
            #expect(try await server.send(.GET, "/statistics/carriers").status == .ok)
            #expect(try await TestBrowser(server).get("/carrier-statistics").status == .ok)
            #expect(cache.computations == before + 1, "one computation for three requests")
            // Five minutes on: once more, for many requests at the same time.
            server.clock.advance(minutes: 6)
            let statuses = try await withThrowingTaskGroup(of: UInt.self) { group in
                for _ in 0..<8 { group.addTask { try await server.send(.GET, "/statistics/carriers").status.code } }
                return try await group.reduce(into: [UInt]()) { $0.append($1) }
            }
            #expect(statuses == Array(repeating: 200, count: 8) && cache.computations == before + 2, "\(statuses) \(cache.computations)")

            // Per client address, like the other public carrier endpoints.
            server.app.waybill.carrierLookupLimiter.exhaustAll()
            let limited = try await server.send(.GET, "/statistics/carriers")
            #expect(limited.status == .tooManyRequests && limited.errorCode != nil && limited.headers.first(name: .retryAfter) != nil, "\(limited)")
            let page = try await TestBrowser(server).get("/carrier-statistics")
            #expect(page.status == .tooManyRequests && page.headers.first(name: .retryAfter) != nil)
            #expect(cache.computations == before + 2)

            // Each person's own board: worked out once a minute per person, whatever they ask.
            let own = cache.computations
            for _ in 0..<3 { #expect(try await server.send(.GET, "/me/statistics/carriers", token: cast.customer.access).status == .ok) }
            #expect(cache.computations == own + 1)
            #expect(try await server.send(.GET, "/me/statistics/carriers", token: cast.otherCustomer.access).status == .ok)
            #expect(cache.computations == own + 2, "another person's board is their own")
            server.clock.advance(minutes: 2)
            #expect(try await server.send(.GET, "/me/statistics/carriers", token: cast.customer.access).status == .ok)
            #expect(cache.computations == own + 3, "a minute on, worked out again")
        }
    }
}
