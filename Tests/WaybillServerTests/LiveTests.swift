import Foundation
import Testing
import Vapor
@testable import WaybillServer
import WaybillCore

@Suite("Live tracking: positions, the live channel, tracking links")
struct LiveTests {
    static let zurich: [String: any Sendable] = ["street": "Bahnhofplatz 1", "postalCode": "8001", "city": "Zürich",
                                                 "latitude": 47.3779, "longitude": 8.5403]

    /// An order from Zürich (with coordinates) to Bern, assigned to the cast's driver and accepted.
    func acceptedOrder(_ server: TestServer, _ cast: Cast) async throws -> String {
        let id = try await server.placeOrder(cast.customer.access, extra: ["pickup": Self.zurich])
        try await server.advance(id, to: .accepted, cast: cast)
        return id
    }

    @Test("A customer, a manager and a public-link viewer watch one order while the driver moves, each seeing only what they may",
          arguments: TestDatabase.available)
    func threeWatchers(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            try await server.goOnDuty(cast.driver.access)
            let id = try await acceptedOrder(server, cast)
            let detail = try await server.send(.GET, "/orders/\(id)", token: cast.customer.access)
            let link = try #require(detail.json["tracking"]["trackingUrl"].string)
            let token = String(link.split(separator: "/").last!)
            #expect(link == "http://localhost:8080/t/\(token)")
            #expect(token.count >= 22)  // ≥ 128 random bits in base64url
            #expect(!link.contains(id))

            try await server.serving { port in
                let customer = try await server.live(port: port, token: cast.customer.access)
                let manager = try await server.live(port: port, token: cast.manager.access)
                let viewer = try await server.live(port: port, trackingToken: token)
                let stranger = try await server.live(port: port, token: cast.otherCustomer.access)
                let orderTopic = "order:\(id)"
                #expect(try await customer.subscribe(orderTopic)["type"].string == "subscribed")
                #expect(try await manager.subscribe(orderTopic)["type"].string == "subscribed")
                #expect(try await manager.subscribe("fleet")["type"].string == "subscribed")
                #expect(try await viewer.subscribe("tracking:\(token)")["type"].string == "subscribed")
                // What they may not see.
                #expect(try await stranger.subscribe(orderTopic)["code"].string == "not_found")
                #expect(try await stranger.subscribe("fleet")["code"].string == "forbidden")
                #expect(try await viewer.subscribe(orderTopic)["code"].string == "not_found")
                #expect(try await customer.subscribe("fleet")["code"].string == "forbidden")

                // Accepted: the driver heads for the pickup in Zürich.
                let first = try await server.report(cast.driver.access, [(47.3600, 8.5300)])
                #expect(first.status == .ok, "\(first)")
                let seen = try await customer.event("location", topic: orderTopic)
                #expect(seen["data"]["driverId"].string == cast.driver.userID)
                #expect(seen["data"]["driverFirstName"].string == "Test")
                #expect(seen["data"]["latitude"].double == 47.36)
                let eta = try await customer.event("eta", topic: orderTopic)
                #expect(eta["data"]["stop"].string == "pickup")
                #expect((1_000...3_000).contains(eta["data"]["distanceMeters"].int ?? 0))
                try await manager.event("location", topic: orderTopic)
                let fleet = try await manager.event("location", topic: "fleet")
                #expect(fleet["data"]["driverId"].string == cast.driver.userID)
                // The public sees the ETA, not where the driver is before pickup.
                let publicETA = try await viewer.event("eta", topic: "tracking:\(token)")
                #expect(publicETA["data"]["orderId"].exists == false)

                // Picked up: everyone hears of it; the public without ids or names.
                try #require(try await server.send(.POST, "/orders/\(id)/pickup", json: TestServer.cash(try await server.price(of: id)),
                                                   token: cast.driver.access).status == .ok)
                #expect(try await customer.event("status", topic: orderTopic)["data"]["status"].string == "in_transit")
                let publicStatus = try await viewer.event("status", topic: "tracking:\(token)")
                #expect(publicStatus["data"]["status"].string == "in_transit")
                #expect(publicStatus["data"].keys == ["status", "at"])
                try await manager.event("status", topic: "fleet")

                // In transit: now the public sees the position too, with the driver's first name only.
                #expect(try await server.report(cast.driver.access, [(47.3610, 8.5305)], at: Date().addingTimeInterval(2)).status == .ok)
                let publicLocation = try await viewer.event("location", topic: "tracking:\(token)")
                #expect(publicLocation["data"]["driverFirstName"].string == "Test")
                #expect(publicLocation["data"]["driverId"].exists == false)
                #expect(publicLocation["data"]["orderId"].exists == false)
                #expect(try await customer.event("eta", topic: orderTopic, count: 2)["data"]["stop"].string == "dropoff")

                // Delivered: the order's watchers stop getting positions; the fleet still sees the driver.
                try #require(try await server.deliver(id, token: cast.driver.access).status == .ok)
                try await customer.event("status", topic: orderTopic, count: 2)
                #expect(try await server.report(cast.driver.access, [(47.3620, 8.5310)], at: Date().addingTimeInterval(4)).status == .ok)
                try await manager.event("location", topic: "fleet", count: 3)

                let customerSaw = try await customer.settle().filter { $0["id"].exists }
                #expect(customerSaw.map { $0["type"].string ?? "" } == ["location", "eta", "status", "eta", "location", "eta", "status"])
                let publicSaw = viewer.events.map { $0["type"].string ?? "" }
                #expect(publicSaw == ["eta", "status", "eta", "location", "eta", "status"])
                for event in viewer.events {
                    #expect(!event["data"].keys.contains("driverId") && !event["data"].keys.contains("orderId") && !event["data"].keys.contains("reference"))
                }
                #expect(stranger.events.isEmpty)
                // The public page and API say the same, without personal details.
                let page = try await server.send(.GET, "/public/tracking/\(token)")
                #expect(page.status == .ok)
                #expect(page.json["status"].string == "delivered")
                #expect(page.json.keys.isSubset(of: ["status", "timeline", "driverFirstName", "eta", "driverPosition"]))
                #expect(!page.text.contains("Ada") && !page.text.contains("Bea") && !page.text.contains(cast.driver.userID))
                for client in [customer, manager, viewer, stranger] { await client.close() }
            }
        }
    }
}
