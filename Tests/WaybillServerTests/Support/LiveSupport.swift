import Foundation
import NIOConcurrencyHelpers
import NIOPosix
import Testing
import Vapor
@testable import WaybillServer
import WaybillCore

extension TestServer {
    /// Serves on a random local port with the live feed running, as `waybill serve` does.
    func serving(_ body: (Int) async throws -> Void) async throws {
        try await app.server.start(address: .hostname("127.0.0.1", port: 0))
        let port = try #require(app.http.server.shared.localAddress?.port)
        let feed = app.waybill.liveFeed
        let running = Task { await feed.run() }
        func stop() async {
            running.cancel()
            await running.value
            app.waybill.live.closeAll()
            await app.server.shutdown()
        }
        do {
            // LISTEN must be in place before the test publishes anything (PostgreSQL); the feed says
            // when it is. The test's own time limit guards against a listener that never starts.
            try await feed.untilListening()
            if case .postgres = database { try #require(feed.isListening, "the PostgreSQL listener did not start") }
            try await body(port)
        } catch {
            await stop()
            throw error
        }
        await stop()
    }

    /// A ticket for the live channel: as a signed-in person, or for a tracking link.
    func liveTicket(token: String? = nil, trackingToken: String? = nil) async throws -> String {
        let reply = try await send(.POST, "/live/ticket", json: trackingToken.map { ["trackingToken": $0] } ?? [:], token: token)
        try #require(reply.status == .created, "ticket: \(reply)")
        return try #require(reply.json["ticket"].string)
    }

    /// Opens the live channel as a client would.
    func live(port: Int, token: String? = nil, trackingToken: String? = nil) async throws -> LiveTestClient {
        try await LiveTestClient.connect(port: port, ticket: try await liveTicket(token: token, trackingToken: trackingToken))
    }

    /// Reports positions as the driver's app does.
    @discardableResult
    /// Reports positions recorded from `start` on (by default the server's clock, which a test may have moved).
    func report(_ token: String, _ points: [(Double, Double)], at start: Date? = nil, spacing: TimeInterval = 1) async throws -> Reply {
        let start = start ?? clock.now
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let positions: [[String: any Sendable]] = points.enumerated().map { index, point in
            ["latitude": point.0, "longitude": point.1, "accuracy": 5.0,
             "recordedAt": formatter.string(from: start.addingTimeInterval(Double(index) * spacing))]
        }
        return try await send(.POST, "/drivers/me/locations", json: ["positions": positions], token: token)
    }

    func goOnDuty(_ token: String, _ onDuty: Bool = true) async throws {
        let reply = try await send(.PUT, "/drivers/me/duty", json: ["onDuty": onDuty], token: token)
        try #require(reply.status == .ok, "duty: \(reply)")
    }
}

/// A live-channel client that records every message it receives. A test waiting for a message is
/// woken by its arrival (`Arrivals`), not by looking again every few milliseconds.
final class LiveTestClient: Sendable {
    let socket: WebSocket
    private let received = NIOLockedValueBox<[String]>([])
    private let arrivals = Arrivals()

    private init(socket: WebSocket) { self.socket = socket }

    static func connect(port: Int, ticket: String, headers: HTTPHeaders = [:]) async throws -> LiveTestClient {
        let group = MultiThreadedEventLoopGroup.singleton
        let upgraded = group.any().makePromise(of: LiveTestClient.self)
        do {
            try await WebSocket.connect(scheme: "ws", host: "127.0.0.1", port: port, path: "/api/v1/live", query: "ticket=\(ticket)",
                                        headers: headers, on: group) { socket in
                let client = LiveTestClient(socket: socket)
                socket.onText { _, text in
                    client.received.withLockedValue { $0.append(text) }
                    client.arrivals.signal()
                }
                socket.onClose.whenComplete { _ in client.arrivals.signal() }
                upgraded.succeed(client)
            }.get()
        } catch {
            upgraded.fail(error)
            throw error
        }
        return try await upgraded.futureResult.get()
    }

    var messages: [JSON] { received.withLockedValue { $0 }.map { JSON(data: Data($0.utf8)) } }
    var rawMessages: [String] { received.withLockedValue { $0 } }
    /// Events only (not replies), in order.
    var events: [JSON] { messages.filter { $0["id"].int != nil } }

    func send(_ command: LiveCommand) async throws {
        let data = try JSONEncoder().encode(command)
        try await socket.send(String(decoding: data, as: UTF8.self))
    }

    /// Subscribes and waits for the answer (`subscribed` or `error`).
    @discardableResult
    func subscribe(_ topic: String, since: Int64? = nil) async throws -> JSON {
        try await send(.subscribe(topic: topic, since: since))
        return try await next { ($0["type"].string == "subscribed" || $0["type"].string == "error") && $0["topic"].string == topic }
    }

    /// Waits for a message matching `predicate`, woken by each arrival. The minute is a guard against
    /// a hang, not a wait: a message that arrives ends it at once.
    @discardableResult
    func next(timeout: Duration = .seconds(60), _ predicate: @Sendable (JSON) -> Bool) async throws -> JSON {
        if let hit = try await arrivals.wait(guard: timeout, until: { self.messages.first(where: predicate) }) { return hit }
        Issue.record("no matching live message within \(timeout); got \(rawMessages)")
        throw TestSkipped()
    }

    /// Waits for the `n`-th event (1-based) of a type on a topic.
    @discardableResult
    func event(_ type: String, topic: String, count: Int = 1, timeout: Duration = .seconds(60)) async throws -> JSON {
        let found = try await arrivals.wait(guard: timeout) {
            let hits = self.events.filter { $0["type"].string == type && $0["topic"].string == topic }
            return hits.count >= count ? hits[count - 1] : nil
        }
        if let found { return found }
        Issue.record("no \(type) #\(count) on \(topic) within \(timeout); got \(rawMessages)")
        throw TestSkipped()
    }

    /// Everything received once the server has sent all it had for this connection: a `ping` goes
    /// after whatever the server wrote before it, so its `pong` closes the record. (The caller has
    /// already waited for the last event it expects; this shows that nothing else came with it.)
    func settle() async throws -> [JSON] {
        let pongs = messages.filter { $0["type"].string == "pong" }.count
        try await send(.ping)
        _ = try await arrivals.wait(guard: .seconds(60)) {
            self.messages.filter { $0["type"].string == "pong" }.count > pongs ? true : nil
        }
        var seen = 0
        return messages.filter { message in
            guard message["type"].string == "pong" else { return true }
            seen += 1
            return seen <= pongs
        }
    }

    func close() async { try? await socket.close() }

    /// Forgets what was received so far (the next `next` looks at new messages only).
    func clear() { received.withLockedValue { $0.removeAll() } }
}

/// The tests wait on the server's own change signal type.
typealias Arrivals = ChangeSignal
