import Foundation
import Testing
import Vapor
import WaybillClient
import WaybillCore
@testable import WaybillServer

@Suite("Live updates and positions through the SDK survive the server going away")
struct SDKLiveTests {
    /// An order accepted by Luca, who is signed in through the SDK and on duty; his uploader retries quickly.
    static func driverWithAnOrder(_ server: TestServer, port: Int, overLiveChannel: Bool) async throws -> (orderID: String, uploader: PositionUploader) {
        let cast = try await server.cast()
        let id = try await server.placeOrder(cast.customer.access)
        try await server.advance(id, to: .accepted, cast: cast)
        let driver = server.sdk(port: port)
        try await driver.signIn(email: "luca@courier.example", password: TestServer.password)
        try await driver.setDuty(true)
        return (id, PositionUploader(session: driver, initialBackoff: .milliseconds(50), maxBackoff: .milliseconds(500),
                                     overLiveChannel: overLiveChannel))
    }

    @Test("The live stream reconnects after the server restarts and delivers what happened meanwhile, once each and in order",
          arguments: TestDatabase.available)
    func liveStreamSurvivesRestart(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            try await server.serving { port in
                let cast = try await server.cast()
                let id = try await server.placeOrder(cast.customer.access)
                let customer = server.sdk(port: port)
                try await customer.signIn(email: "ada@example.com", password: TestServer.password)

                let live = LiveRecorder()
                await live.start(customer.liveUpdates([.order(OrderID(uuidString: id)!)],
                                                      options: LiveOptions(initialBackoff: .milliseconds(50), maxBackoff: .milliseconds(500))))
                try await live.wait(for: "subscribed") { await $0.connections == 1 }
                try await server.advance(id, to: .assigned, cast: cast)
                try await live.wait(for: "assigned") { await $0.statuses == ["assigned"] }

                // The server stops: the socket closes and the port refuses connections.
                await server.stopHTTP()
                try await live.wait(for: "the disconnect") { await $0.disconnections >= 1 }
                // Meanwhile the driver accepts and picks up (recorded by the server's database).
                let accepted = try await server.send(.POST, "/orders/\(id)/accept", token: cast.driver.access)
                #expect(accepted.status == .ok)
                let picked = try await server.send(.POST, "/orders/\(id)/pickup", json: TestServer.cash(try await server.price(of: id)),
                                                   token: cast.driver.access)
                #expect(picked.status == .ok)
                // A few failed attempts to reconnect while the server is down.
                try await live.wait(for: "failed reconnects") { await $0.disconnections >= 3 }
                #expect(await live.connections == 1)

                // The server is back: the stream reconnects by itself and replays what it missed.
                try await server.startHTTP(port: port)
                try await live.wait(for: "the missed events") { await $0.statuses.count >= 3 }
                #expect(await live.connections >= 2)
                try await server.deliver(id, token: cast.driver.access)
                try await live.wait(for: "delivered") { await $0.statuses.last == "delivered" }

                #expect(await live.statuses == ["assigned", "accepted", "in_transit", "delivered"])
                let ids = await live.events.map(\.id)
                #expect(ids == ids.sorted())
                #expect(Set(ids).count == ids.count)
                #expect(await live.failure == nil)
                await live.stop()
            }
        }
    }

    @Test("Positions recorded while offline reach the server once it is back, in order, each once, in batches of at most 500",
          arguments: TestDatabase.available)
    func offlinePositionsArriveInOrder(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            try await server.serving { port in
                let (id, uploader) = try await Self.driverWithAnOrder(server, port: port, overLiveChannel: false)
                let running = Task { await uploader.run() }
                defer { running.cancel() }

                // One point a second along a street, starting 20 minutes ago.
                let start = (Int64(Date().timeIntervalSince1970) - 1200) * 1000
                let points = (0..<1100).map { index in
                    PositionReport(latitude: 47.3700 + Double(index) * 0.00005, longitude: 8.5400, accuracy: 5,
                                   recordedAt: start + Int64(index) * 1000)
                }
                for point in points.prefix(5) { await uploader.record(point) }
                try await uploader.until("5 accepted") { $0.accepted == 5 }

                // The network goes away; the driver keeps moving.
                await server.stopHTTP()
                for point in points.dropFirst(5) { await uploader.record(point) }
                await uploader.record(points[700])  // a repeat the device produced: left out
                try await uploader.until("waiting to retry") { if case .waiting = $0.state { true } else { false } }
                #expect(await uploader.pending.count == 1095)

                // The network comes back; the uploader notices by itself on its next try.
                try await server.startHTTP(port: port)
                try await uploader.until("nothing pending") { $0.pending == 0 }
                #expect(await uploader.accepted == 1100)
                #expect(await uploader.ignored == 0)
                #expect(await uploader.rejected.isEmpty)

                // The order's trail holds every point, in the order they were taken.
                let customer = server.sdk(port: port)
                try await customer.signIn(email: "ada@example.com", password: TestServer.password)
                let trail = try await customer.trail(of: OrderID(uuidString: id)!).points
                #expect(trail.count == 1100)
                #expect(trail.map { Int64($0.recordedAt.timeIntervalSince1970 * 1000) } == points.map(\.recordedAt))
                #expect(trail.map(\.latitude) == points.map(\.latitude))
            }
        }
    }

    @Test("Over the live channel: recorded positions reach the server in order, each once, across a server restart; a point the server calls impossible is dropped",
          arguments: TestDatabase.available)
    func positionsOverTheLiveChannel(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            try await server.serving { port in
                let (id, uploader) = try await Self.driverWithAnOrder(server, port: port, overLiveChannel: true)
                let running = Task { await uploader.run() }
                defer { running.cancel() }

                let start = (Int64(Date().timeIntervalSince1970) - 600) * 1000
                let points = (0..<60).map { index in
                    PositionReport(latitude: 47.3700 + Double(index) * 0.00005, longitude: 8.5400, accuracy: 5, recordedAt: start + Int64(index) * 1000)
                }
                for point in points.prefix(30) { await uploader.record(point) }
                try await uploader.until("30 accepted") { $0.accepted == 30 }
                // The server goes away and comes back: the uploader's connection is replaced.
                await server.stopHTTP()
                for point in points.dropFirst(30) { await uploader.record(point) }
                try await server.startHTTP(port: port)
                try await uploader.until("nothing pending") { $0.pending == 0 }
                #expect(await uploader.accepted == 60)
                #expect(await uploader.ignored == 0)
                // 500 km in a second: the server names the point, the uploader drops it.
                await uploader.record(PositionReport(latitude: 52.5, longitude: 13.4, recordedAt: start + 61_000))
                try await uploader.until("one rejected") { $0.rejected == 1 }
                #expect(await uploader.pending.isEmpty)

                let customer = server.sdk(port: port)
                try await customer.signIn(email: "ada@example.com", password: TestServer.password)
                let trail = try await customer.trail(of: OrderID(uuidString: id)!).points
                #expect(trail.map { Int64($0.recordedAt.timeIntervalSince1970 * 1000) } == points.map(\.recordedAt))
            }
        }
    }

    @Test("Positions kept in a file while offline survive the app being killed and reach the server after the relaunch",
          arguments: TestDatabase.available)
    func bufferedPositionsSurviveRelaunch(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            try await server.serving { port in
                try await server.createAccount("luca@courier.example", role: .driver)
                let file = FileManager.default.temporaryDirectory.appendingPathComponent("waybill-positions-\(UUID().uuidString).json")
                defer { try? FileManager.default.removeItem(at: file) }
                let start = (Int64(Date().timeIntervalSince1970) - 60) * 1000
                let points = (0..<20).map { PositionReport(latitude: 46.9466 + Double($0) * 0.0001, longitude: 7.4441, recordedAt: start + Int64($0) * 1000) }

                // Offline: the app records, then is killed before it could send anything.
                let driver = server.sdk(port: port)
                try await driver.signIn(email: "luca@courier.example", password: TestServer.password)
                try await driver.setDuty(true)
                await server.stopHTTP()
                let first = PositionUploader(session: driver, buffer: FilePositionBuffer(url: file))
                for point in points { await first.record(point) }
                await #expect(throws: WaybillClient.WaybillError.self) { try await first.flush() }

                // Relaunched with the network back: a new uploader on the same file sends them all, in order.
                try await server.startHTTP(port: port)
                let second = PositionUploader(session: driver, buffer: FilePositionBuffer(url: file))
                try await second.flush()
                #expect(await second.accepted == 20)
                #expect(await second.pending.isEmpty)
                #expect(try await FilePositionBuffer(url: file).load().isEmpty)
                let duty = try await driver.duty()
                #expect(duty.position.map { Int64($0.recordedAt.timeIntervalSince1970 * 1000) } == points.last?.recordedAt)
            }
        }
    }
}

@Suite("The live stream notices a connection that died silently")
struct SDKLiveHeartbeatTests {
    @Test("When the network path to the server goes silent, the live stream's heartbeat notices, reconnects and delivers what it missed",
          arguments: TestDatabase.available)
    func silentConnectionIsReplaced(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            try await server.serving { port in
                let relay = try await FreezableRelay.start(to: port)
                let cast = try await server.cast()
                let id = try await server.placeOrder(cast.customer.access)
                let customer = WaybillSession(serverURL: TestServer.apiURL(port: port),
                                              liveSockets: LiveSocketsThroughRelay(relayPort: relay.port))
                try await customer.signIn(email: "ada@example.com", password: TestServer.password)

                let live = LiveRecorder()
                await live.start(customer.liveUpdates([.order(OrderID(uuidString: id)!)], options: LiveOptions(
                    initialBackoff: .milliseconds(50), maxBackoff: .milliseconds(500), heartbeat: .milliseconds(300))))
                try await live.wait(for: "subscribed") { await $0.connections == 1 }
                try await server.advance(id, to: .assigned, cast: cast)
                try await live.wait(for: "assigned") { await $0.statuses == ["assigned"] }

                // The path goes silent: nothing arrives, nothing is closed.
                let dropsBefore = await live.disconnections
                relay.freezeOpenConnections()
                let accepted = try await server.send(.POST, "/orders/\(id)/accept", token: cast.driver.access)
                #expect(accepted.status == .ok)

                // The unanswered ping ends the dead connection; a new one replays the acceptance.
                try await live.wait(for: "the missed acceptance") { await $0.statuses.count >= 2 }
                #expect(await live.statuses == ["assigned", "accepted"])
                #expect(await live.disconnections > dropsBefore)
                // The acceptance came over a new connection (replayed before it reports `connected`), not the frozen one.
                let updates = await live.updates
                let acceptedAt = try #require(updates.firstIndex { if case .event(let event) = $0, case .status(let change) = event.payload { change.status == "accepted" } else { false } })
                #expect(updates[..<acceptedAt].contains { if case .disconnected = $0 { true } else { false } })
                #expect(updates[acceptedAt...].contains(.connected))
                await live.stop()
                await relay.stop()
            }
        }
    }
}
