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
                #expect(seen["data"]["driverFirstName"].string == "Luca")
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
                #expect(publicLocation["data"]["driverFirstName"].string == "Luca")
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

    @Test("Positions: only on duty, impossible values refused by index, a retried batch ignored, a flood limited",
          arguments: TestDatabase.both)
    func positionRules(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            // A customer is not a driver.
            #expect(try await server.report(cast.customer.access, [(47, 8)]).status == .forbidden)
            // Off duty: nothing is stored.
            let offDuty = try await server.report(cast.driver.access, [(47, 8)])
            #expect(offDuty.status == .conflict)
            #expect(offDuty.errorCode == "off_duty")
            try await server.goOnDuty(cast.driver.access)
            let duty = try await server.send(.GET, "/drivers/me/duty", token: cast.driver.access)
            #expect(duty.json["onDuty"].bool == true)

            let bad = try await server.send(.POST, "/drivers/me/locations", json: ["positions": [
                ["latitude": 47.0, "longitude": 8.0, "recordedAt": "2026-11-22T10:00:00Z"],
                ["latitude": 95.0, "longitude": 8.0, "recordedAt": ISO8601DateFormatter().string(from: Date())],
            ] as [[String: any Sendable]]], token: cast.driver.access)
            #expect(bad.status == .unprocessableEntity)
            #expect(bad.json["error"]["fields"]["positions[1].latitude"].string == "out_of_range")
            // Missing and mistyped fields are caught by the contract, each named.
            let malformed = try await server.send(.POST, "/drivers/me/locations", json: ["positions": [["latitude": "north"]]],
                                                  token: cast.driver.access)
            #expect(malformed.status == .unprocessableEntity)

            let start = Date().addingTimeInterval(-30)
            let batch = try await server.report(cast.driver.access, [(47.0, 8.0), (47.0001, 8.0), (47.0002, 8.0)], at: start)
            #expect(batch.status == .ok)
            #expect(batch.json["accepted"].int == 3)
            // The app did not get the answer and sends the same batch again: nothing new.
            let again = try await server.report(cast.driver.access, [(47.0, 8.0), (47.0001, 8.0), (47.0002, 8.0)], at: start)
            #expect(again.status == .ok)
            #expect(again.json["accepted"].int == 0)
            #expect(again.json["ignored"].int == 3)
            // A teleport from the last known position.
            let teleport = try await server.report(cast.driver.access, [(46.0, 7.0)], at: start.addingTimeInterval(3))
            #expect(teleport.json["error"]["fields"]["positions[0]"].string == "impossible_jump")

            // Off duty again: the manager's fleet no longer shows where the driver is.
            let fleetOn = try await server.send(.GET, "/fleet", token: cast.manager.access)
            let entry = try #require(fleetOn.json["drivers"].array.first { $0["driver"]["id"].string == cast.driver.userID })
            #expect(entry["position"]["latitude"].double == 47.0002)
            #expect(entry["onDuty"].bool == true)
            try await server.goOnDuty(cast.driver.access, false)
            let fleetOff = try await server.send(.GET, "/fleet", token: cast.manager.access)
            let offEntry = try #require(fleetOff.json["drivers"].array.first { $0["driver"]["id"].string == cast.driver.userID })
            #expect(offEntry["position"].exists == false)
            #expect(try await server.send(.GET, "/fleet", token: cast.customer.access).status == .forbidden)
            #expect(try await server.send(.GET, "/fleet", token: cast.driver.access).status == .forbidden)
        }
    }

    @Test("Drivers reporting at the same moment are each answered once their own position is stored; one off duty or one teleporting is refused without failing the others",
          arguments: TestDatabase.both)
    func positionsTogether(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let id = try await server.placeOrder(cast.customer.access)
            try await server.advance(id, to: .accepted, cast: cast)
            var drivers = [cast.driver, cast.otherDriver]
            for n in 0..<8 { drivers.append(try await server.createAccount("driver\(n)@courier.example", role: .driver)) }
            let offDuty = drivers.count - 1, teleporting = 1
            for driver in drivers.dropLast() { try await server.goOnDuty(driver.access) }
            let start = Date().addingTimeInterval(-60)
            #expect(try await server.report(drivers[teleporting].access, [(47.0, 8.0)], at: start).status == .ok)
            let all = drivers
            let replies = try await withThrowingTaskGroup(of: (Int, Reply).self) { group in
                for (index, driver) in all.enumerated() {
                    group.addTask {
                        // The teleporting driver claims 140 km in ten seconds.
                        let point = index == teleporting ? (48.0, 9.0) : (47.0 + Double(index) / 1000, 8.0)
                        return (index, try await server.report(driver.access, [point], at: start.addingTimeInterval(10)))
                    }
                }
                var replies: [Int: Reply] = [:]
                for try await (index, reply) in group { replies[index] = reply }
                return replies
            }
            #expect(replies[teleporting]?.status == .unprocessableEntity)
            #expect(replies[teleporting]?.json["error"]["fields"]["positions[0]"].string == "impossible_jump")
            #expect(replies[offDuty]?.errorCode == "off_duty")
            let fleet = try await server.send(.GET, "/fleet", token: cast.manager.access)
            for (index, driver) in drivers.enumerated() where index != teleporting && index != offDuty {
                #expect(replies[index]?.status == .ok && replies[index]?.json["accepted"].int == 1, "\(index): \(String(describing: replies[index]))")
                let entry = fleet.json["drivers"].array.first { $0["driver"]["id"].string == driver.userID }
                #expect(entry?["position"]["latitude"].double == 47.0 + Double(index) / 1000, "every answered position is stored")
            }
            #expect(replies[0]?.json["orders"].int == 1, "the driver with the accepted order adds to its trail")
            let teleported = fleet.json["drivers"].array.first { $0["driver"]["id"].string == drivers[teleporting].userID }
            #expect(teleported?["position"]["latitude"].double == 47.0, "the refused report changed nothing")
            let trail = try await server.send(.GET, "/orders/\(id)/trail", token: cast.customer.access)
            #expect(trail.json["points"].array.map { $0["latitude"].double ?? 0 } == [47.0])
        }
    }

    @Test("A driver's app reports positions over its live connection: stored and answered with its ref; off duty, malformed or not a driver is refused in the answer",
          arguments: TestDatabase.available)
    func positionsOverTheSocket(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            try await server.serving { port in
                let cast = try await server.cast()
                let driver = try await server.live(port: port, token: cast.driver.access)
                let customer = try await server.live(port: port, token: cast.customer.access)
                let now = Int64(Date().timeIntervalSince1970 * 1000)
                func report(_ client: LiveTestClient, _ ref: String, _ latitude: Double, at: Int64) async throws -> JSON {
                    try await client.send(.report(ref: ref, positions: [PositionReport(latitude: latitude, longitude: 8.5, recordedAt: at)]))
                    return try await client.next { $0["type"].string == "reported" && $0["ref"].string == ref }
                }
                #expect(try await report(driver, "a", 47.0, at: now - 9_000)["error"]["code"].string == "off_duty")
                #expect(try await report(customer, "b", 47.0, at: now - 9_000)["error"]["code"].string == "forbidden")
                try await server.goOnDuty(cast.driver.access)
                let stored = try await report(driver, "c", 47.0, at: now - 8_000)
                #expect(stored["accepted"].int == 1 && stored["ignored"].int == 0 && stored["error"].exists == false, "\(stored)")
                let again = try await report(driver, "d", 47.0, at: now - 8_000)
                #expect(again["accepted"].int == 0 && again["ignored"].int == 1, "a resent position is ignored, as over HTTP")
                let teleport = try await report(driver, "e", 40.0, at: now - 7_000)
                #expect(teleport["error"]["code"].string == "validation_failed" && teleport["error"]["fields"]["positions[0]"].string == "impossible_jump")
                let fleet = try await server.send(.GET, "/fleet", token: cast.manager.access)
                let entry = fleet.json["drivers"].array.first { $0["driver"]["id"].string == cast.driver.userID }
                #expect(entry?["position"]["latitude"].double == 47.0)
                // A reference longer than 100 bytes is not echoed.
                try await driver.send(.report(ref: String(repeating: "x", count: 101), positions: [PositionReport(latitude: 47, longitude: 8.5, recordedAt: now)]))
                #expect(try await driver.next { $0["type"].string == "reported" && $0["ref"].exists == false }["error"]["code"].string == "invalid_command")
                await driver.close()
                await customer.close()
            }
        }
    }

    @Test("A driver's app that sends faster than a few times a second is told to wait", arguments: [TestDatabase.sqlite])
    func positionFlood(db: TestDatabase) async throws {
        // A burst of one and nearly no refill, so the second report is refused however slow the
        // machine is (at one token every two seconds, a loaded CI machine once earned it back).
        try await TestServer.run(db, adjust: { $0.positionReportsPerSecond = 0.001; $0.positionReportBurst = 1 }) { server in
            let cast = try await server.cast()
            try await server.goOnDuty(cast.driver.access)
            #expect(try await server.report(cast.driver.access, [(47.0, 8.0)], at: Date().addingTimeInterval(-10)).status == .ok)
            let limited = try await server.report(cast.driver.access, [(47.0, 8.0)], at: Date().addingTimeInterval(-5))
            #expect(limited.status == .tooManyRequests)
            #expect(limited.errorCode == "rate_limited")
            #expect(limited.headers.first(name: .retryAfter).flatMap(Int.init) ?? 0 >= 1)
            // Another driver is not held up by the first.
            try await server.goOnDuty(cast.otherDriver.access)
            #expect(try await server.report(cast.otherDriver.access, [(47.0, 8.0)], at: Date().addingTimeInterval(-10)).status == .ok)
        }
    }

    @Test("The order shows the driver's position and ETA only while accepted or in transit; the trail stays afterwards",
          arguments: TestDatabase.available)
    func orderTrackingAndTrail(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            try await server.goOnDuty(cast.driver.access)
            let id = try await server.placeOrder(cast.customer.access, extra: ["pickup": Self.zurich])
            try await server.advance(id, to: .assigned, cast: cast)
            // Assigned, not yet accepted: positions do not belong to the order.
            try #require(try await server.report(cast.driver.access, [(47.30, 8.50)], at: Date().addingTimeInterval(-50)).status == .ok)
            var detail = try await server.send(.GET, "/orders/\(id)", token: cast.customer.access)
            #expect(detail.json["tracking"]["driverPosition"].exists == false)
            try #require(try await server.send(.POST, "/orders/\(id)/accept", token: cast.driver.access).status == .ok)
            try #require(try await server.report(cast.driver.access, [(47.301, 8.50), (47.302, 8.50)], at: Date().addingTimeInterval(-40)).status == .ok)
            detail = try await server.send(.GET, "/orders/\(id)", token: cast.customer.access)
            #expect(detail.json["tracking"]["driverPosition"]["latitude"].double == 47.302)
            #expect(detail.json["tracking"]["eta"]["stop"].string == "pickup")
            #expect(detail.json["tracking"]["eta"]["arrivesAt"].string != nil)
            // The other customer sees neither the order nor its trail.
            #expect(try await server.send(.GET, "/orders/\(id)/trail", token: cast.otherCustomer.access).status == .notFound)
            #expect(try await server.send(.GET, "/orders/\(id)/trail", token: cast.otherDriver.access).status == .notFound)

            try #require(try await server.send(.POST, "/orders/\(id)/pickup", json: TestServer.cash(try await server.price(of: id)),
                                               token: cast.driver.access).status == .ok)
            try #require(try await server.deliver(id, token: cast.driver.access).status == .ok)
            try #require(try await server.report(cast.driver.access, [(47.303, 8.50)], at: Date().addingTimeInterval(-20)).status == .ok)
            detail = try await server.send(.GET, "/orders/\(id)", token: cast.customer.access)
            #expect(detail.json["tracking"]["driverPosition"].exists == false)
            let trail = try await server.send(.GET, "/orders/\(id)/trail", token: cast.customer.access)
            #expect(trail.json["points"].array.map { $0["latitude"].double ?? 0 } == [47.301, 47.302])
            #expect(try await server.send(.GET, "/orders/\(id)/trail", token: cast.manager.access).json["points"].array.count == 2)
        }
    }

    @Test("Tickets work once, briefly, and only from allowed origins; without one the channel stays shut",
          arguments: TestDatabase.available)
    func tickets(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            try await server.serving { port in
                // No ticket, a made-up one, an anonymous request without a tracking link.
                #expect(try await server.send(.GET, "/live").errorCode == "ticket_required")
                #expect(try await server.send(.GET, "/live?ticket=made-up").errorCode == "invalid_ticket")
                let anonymous = try await server.send(.POST, "/live/ticket")
                #expect(anonymous.status == .unauthorized, "\(anonymous)")
                #expect(try await server.send(.POST, "/live/ticket", json: ["trackingToken": "AAAAAAAAAAAAAAAAAAAAAAAA"]).status == .notFound)
                let badToken = try await server.send(.POST, "/live/ticket", token: "not-a-jwt")
                #expect(badToken.status == .unauthorized, "\(badToken)")

                let ticket = try await server.liveTicket(token: cast.customer.access)
                // A plain GET is told to speak WebSocket and does not use the ticket up.
                #expect(try await server.send(.GET, "/live?ticket=\(ticket)").errorCode == "websocket_required")
                let client = try await LiveTestClient.connect(port: port, ticket: ticket)
                #expect(try await client.subscribe("notifications")["type"].string == "subscribed")
                await client.close()
                // Used once: the same ticket no longer opens anything.
                await #expect(throws: (any Error).self) { try await LiveTestClient.connect(port: port, ticket: ticket) }
                // Expired.
                let old = try await server.liveTicket(token: cast.customer.access)
                try await server.sql.update("live_tickets").set("expires_at", to: UnixTime.nowMillis - 1).run()
                await #expect(throws: (any Error).self) { try await LiveTestClient.connect(port: port, ticket: old) }
                // A page on another site cannot ride on a ticket; the app's own origin can.
                let foreign = try await server.liveTicket(token: cast.customer.access)
                let refused = try await server.send(.GET, "/live?ticket=\(foreign)", headers: [("Origin", "https://evil.example")])
                #expect(refused.status == .forbidden)
                #expect(refused.errorCode == "origin_not_allowed")
                let own = try await server.liveTicket(token: cast.customer.access)
                var headers = HTTPHeaders()
                headers.add(name: .origin, value: "http://localhost:8080")
                let browser = try await LiveTestClient.connect(port: port, ticket: own, headers: headers)
                try await browser.send(.ping)
                try await browser.next { $0["type"].string == "pong" }
                await browser.close()
            }
        }
    }

    @Test("A client that reconnects gets what it missed since its last event id", arguments: TestDatabase.both)
    func replayAfterReconnect(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            try await server.goOnDuty(cast.driver.access)
            let id = try await acceptedOrder(server, cast)
            let topic = "order:\(id)"
            try await server.serving { port in
                let first = try await server.live(port: port, token: cast.customer.access)
                try await first.subscribe(topic)
                try #require(try await server.report(cast.driver.access, [(47.36, 8.53)], at: Date().addingTimeInterval(-30)).status == .ok)
                let last = try await first.event("eta", topic: topic)
                await first.close()
                // Offline meanwhile: two more positions and the pickup.
                try #require(try await server.report(cast.driver.access, [(47.361, 8.53)], at: Date().addingTimeInterval(-20)).status == .ok)
                try #require(try await server.send(.POST, "/orders/\(id)/pickup", json: TestServer.cash(try await server.price(of: id)),
                                                   token: cast.driver.access).status == .ok)
                let again = try await server.live(port: port, token: cast.customer.access)
                let reply = try await again.subscribe(topic, since: Int64(try #require(last["id"].int)))
                #expect(reply["replayed"].int == 4)
                #expect(reply["complete"].bool == true)
                #expect(again.events.map { $0["type"].string ?? "" } == ["location", "eta", "status", "eta"])
                let ids = again.events.compactMap { $0["id"].int }
                #expect(ids == ids.sorted() && ids.first! > last["id"].int!)
                // Another process's notifications can reach this one after the replay read the
                // rows they announce (CI saw it in a rolling restart): those events are not sent twice.
                let since = Int64(try #require(last["id"].int))
                server.app.waybill.live.deliver(try await LiveFeed.replay(topic: topic, since: since, on: server.app.db).rows)
                // And live events keep coming after the replay.
                try #require(try await server.report(cast.driver.access, [(47.362, 8.53)], at: Date().addingTimeInterval(-10)).status == .ok)
                try await again.event("location", topic: topic, count: 2)
                let all = try await again.settle().filter { $0["id"].int != nil }.compactMap { $0["id"].int }
                #expect(all == Array(Set(all)).sorted(), "each event once, in order: \(all)")
                await again.close()
            }
        }
    }

    @Test("Notifications arrive live; signing out or being disabled closes the connection at once", arguments: TestDatabase.available)
    func notificationsAndSessionEnd(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            try await server.serving { port in
                let driver = try await server.live(port: port, token: cast.driver.access)
                try await driver.subscribe("notifications")
                let id = try await server.placeOrder(cast.customer.access)
                try await server.advance(id, to: .assigned, cast: cast)
                let note = try await driver.event("notification", topic: "notifications")
                #expect(note["data"]["kind"].string == "order_assigned")
                #expect(note["data"]["orderId"].string == id)

                // The driver's account is disabled by an admin: the socket closes.
                _ = try await server.makeAdmin(cast.manager)
                try #require(try await server.send(.PATCH, "/users/\(cast.driver.userID)", json: ["disabled": true], token: cast.manager.access).status == .ok)
                try await driver.next { $0["code"].string == "session_ended" }
                try await driver.socket.onClose.get()

                // Signing out ends that session's connection.
                let customer = try await server.live(port: port, token: cast.customer.access)
                try await customer.subscribe("notifications")
                try #require(try await server.send(.POST, "/auth/logout", json: ["refreshToken": cast.customer.refresh]).status == .noContent)
                try await customer.socket.onClose.get()
            }
        }
    }

    @Test("Revoking a tracking link stops it at once, for the page, the API and open connections", arguments: TestDatabase.available)
    func revokeLink(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let id = try await server.placeOrder(cast.customer.access)
            let token = try await server.trackingToken(id, customer: cast.customer.access)
            #expect(try await server.page(.GET, "/t/\(token)").status == .ok)
            // Only its customer and managers may change the link.
            #expect(try await server.send(.DELETE, "/orders/\(id)/tracking-link", token: cast.otherCustomer.access).status == .notFound)
            try await server.serving { port in
                let viewer = try await server.live(port: port, trackingToken: token)
                try await viewer.subscribe("tracking:\(token)")
                #expect(try await server.send(.DELETE, "/orders/\(id)/tracking-link", token: cast.customer.access).status == .noContent)
                try await viewer.next { $0["code"].string == "link_revoked" }
                await viewer.close()
            }
            #expect(try await server.send(.GET, "/public/tracking/\(token)").status == .notFound)
            #expect(try await server.page(.GET, "/t/\(token)").status == .notFound)
            #expect(try await server.send(.GET, "/orders/\(id)", token: cast.customer.access).json["tracking"]["trackingUrl"].exists == false)
            // A new link works; the old one stays dead.
            let renewed = try await server.send(.POST, "/orders/\(id)/tracking-link", token: cast.customer.access)
            let fresh = try #require(renewed.json["token"].string)
            #expect(fresh != token)
            #expect(try await server.send(.GET, "/public/tracking/\(fresh)").json["status"].string == "pending")
            #expect(try await server.send(.GET, "/public/tracking/\(token)").status == .notFound)
        }
    }

    @Test("Guessing tracking links from one address is slowed down", arguments: [TestDatabase.sqlite])
    func trackingGuessesLimited(db: TestDatabase) async throws {
        // Nearly no refill, so a slow machine cannot earn tokens back while the test runs.
        try await TestServer.run(db, adjust: { $0.trackingMissesPerSecond = 0.001 }) { server in
            var statuses: [HTTPResponseStatus] = []
            for i in 0..<40 {
                statuses.append(try await server.send(.GET, "/public/tracking/guess\(String(format: "%019d", i))").status)
            }
            #expect(statuses.prefix(30).allSatisfy { $0 == .notFound })
            #expect(statuses.last == .tooManyRequests)
        }
    }

    @Test("A driver who loses the order stops seeing its events", arguments: TestDatabase.available)
    func reassignedDriverDropped(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let id = try await server.placeOrder(cast.customer.access)
            try await server.advance(id, to: .assigned, cast: cast)
            try await server.serving { port in
                let driver = try await server.live(port: port, token: cast.driver.access)
                #expect(try await driver.subscribe("order:\(id)")["type"].string == "subscribed")
                #expect(try await server.send(.POST, "/orders/\(id)/assign", json: ["driverId": cast.otherDriver.userID, "reassign": true],
                                              token: cast.manager.access).status == .ok)
                try await driver.next { $0["code"].string == "forbidden" && $0["topic"].string == "order:\(id)" }
                #expect(driver.events.isEmpty)
                await driver.close()
            }
        }
    }
}
