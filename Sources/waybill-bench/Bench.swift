// The load generators of scripts/bench-live (this file) and scripts/bench-chat (Chat.swift). bench-live's: WebSocket subscribers watching orders (and the fleet)
// while drivers report one position a second each; it measures the delay from a position's
// sending to its receipt by every subscriber, and counts what was lost.
//
//     waybill-bench plan.json
//
// scripts/bench-live prepares the accounts and orders, starts the server and writes the plan:
// {"host", "port", "managerToken", "drivers": [{"id", "token", "orderId", "latitude", "longitude"}],
//  "subscribers", "fleetSubscribers", "seconds", "warmupSeconds", "graceSeconds", "connectConcurrency"}.
// Progress goes to stdout as `PHASE …` lines (the script samples the server's CPU between
// `PHASE run-start` and `PHASE run-end`); the last line is `RESULT {json}`.
import AsyncHTTPClient
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import WaybillCore
import WebSocketKit

struct Plan: Decodable, Sendable {
    struct Driver: Decodable, Sendable {
        var id: UUID
        var token: String
        var orderId: UUID
        var latitude: Double
        var longitude: Double
    }

    var host: String
    var port: Int
    var managerToken: String
    var drivers: [Driver]
    /// On order topics, spread evenly over the drivers' orders.
    var subscribers: Int
    /// On `fleet` (every driver's position), in addition.
    var fleetSubscribers: Int
    var seconds: Int
    var warmupSeconds: Double
    var graceSeconds: Double
    var connectConcurrency: Int
    /// "http" (`POST /drivers/me/locations`, the default) or "socket" (a `report` command on each
    /// driver's own live connection).
    var reportOver: String?
}

/// Wall-clock Unix milliseconds: the server keeps `recordedAt` as sent, so the subscriber's clock
/// and the driver's are the same one.
func nowMillis() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME, &ts)
    return Double(ts.tv_sec) * 1000 + Double(ts.tv_nsec) / 1_000_000
}

func iso8601(millis: Int64) -> String {
    var seconds = time_t(millis / 1000)
    var parts = tm()
    gmtime_r(&seconds, &parts)
    return String(format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", Int32(parts.tm_year + 1900), Int32(parts.tm_mon + 1),
                  Int32(parts.tm_mday), Int32(parts.tm_hour), Int32(parts.tm_min), Int32(parts.tm_sec), Int32(millis % 1000))
}

func say(_ line: String) {
    // Unbuffered: the script reacts to each line as it comes.
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A ticket for the live channel, as an app gets one (`POST /live/ticket`).
func liveTicket(host: String, port: Int, token: String, http: HTTPClient) async throws -> String {
    var request = HTTPClientRequest(url: "http://\(host):\(port)/api/v1/live/ticket")
    request.method = .POST
    request.headers.add(name: "Authorization", value: "Bearer \(token)")
    request.headers.add(name: "Content-Type", value: "application/json")
    request.body = .bytes(ByteBuffer(string: "{}"))
    let response = try await http.execute(request, timeout: .seconds(30))
    let body = try await response.body.collect(upTo: 64 * 1024)
    guard response.status == .created else {
        throw BenchError("ticket: HTTP \(response.status.code) \(String(buffer: body))")
    }
    struct Ticket: Decodable { var ticket: String }
    return try JSONDecoder().decode(Ticket.self, from: Data(body.readableBytesView)).ticket
}

/// Opens `count` connections, `concurrency` at a time (each ticket is a write on the server),
/// saying how far it got every 500; answers the seconds it took.
func connectAll(_ count: Int, concurrency: Int, _ open: @escaping @Sendable (Int) async throws -> Void) async throws -> Double {
    let start = nowMillis()
    try await withThrowingTaskGroup(of: Void.self) { tasks in
        var next = 0
        func addOne() {
            let index = next
            next += 1
            tasks.addTask { try await open(index) }
        }
        while next < min(concurrency, count) { addOne() }
        var done = 0
        while try await tasks.next() != nil {
            done += 1
            if done % 500 == 0 { say("PHASE connected \(done)/\(count)") }
            if next < count { addOne() }
        }
    }
    let seconds = (nowMillis() - start) / 1000
    say("PHASE subscribed \(count) in \(String(format: "%.1f", seconds)) s")
    return seconds
}

/// One position as the subscribers should see it: whose, and when it was taken.
struct PositionKey: Hashable, Sendable {
    var driver: Int
    var recordedAt: Int64
}

/// One WebSocket connection subscribed to one topic.
final class Subscriber: Sendable {
    enum Watch: Sendable {
        case order(driver: Int, orderID: UUID)
        case fleet
    }

    struct Receipt {
        var count: Int
        /// Of the first receipt, in milliseconds.
        var delay: Double
    }

    struct State {
        var socket: WebSocket?
        var subscribed: EventLoopPromise<Void>?
        var receipts: [PositionKey: Receipt] = [:]
        var events = 0
        /// Location events that name a driver or order this subscriber should not see.
        var foreign = 0
        var errors: [String] = []
        var closing = false
        var droppedByServer = false
    }

    let watch: Watch
    let topic: String
    let driverIndex: [UUID: Int]
    let state = NIOLockedValueBox(State())

    init(watch: Watch, driverIndex: [UUID: Int]) {
        self.watch = watch
        self.driverIndex = driverIndex
        switch watch {
        case .order(_, let orderID): topic = LiveTopic.order(OrderID(rawValue: orderID)).name
        case .fleet: topic = LiveTopic.fleet.name
        }
    }

    /// Ticket, connection, subscription; returns once the server said `subscribed`.
    func open(plan: Plan, http: HTTPClient, group: any EventLoopGroup) async throws {
        let ticket = try await Self.ticket(plan: plan, http: http)
        let subscribed = group.any().makePromise(of: Void.self)
        state.withLockedValue { $0.subscribed = subscribed }
        let command = String(decoding: try JSONEncoder().encode(LiveCommand.subscribe(topic: topic, since: nil)), as: UTF8.self)
        try await WebSocket.connect(scheme: "ws", host: plan.host, port: plan.port, path: "/api/v1/live", query: "ticket=\(ticket)",
                                    on: group) { socket in
            self.state.withLockedValue { $0.socket = socket }
            socket.onText { _, text in self.receive(text) }
            socket.onClose.whenComplete { _ in self.closed() }
            socket.send(command)
        }.get()
        let timeout = subscribed.futureResult.eventLoop.scheduleTask(in: .seconds(30)) {
            self.settle(.failure(BenchError("no answer to subscribe within 30 s")))
        }
        defer { timeout.cancel() }
        try await subscribed.futureResult.get()
    }

    static func ticket(plan: Plan, http: HTTPClient, token: String? = nil) async throws -> String {
        try await liveTicket(host: plan.host, port: plan.port, token: token ?? plan.managerToken, http: http)
    }

    private func settle(_ result: Result<Void, any Error>) {
        guard let promise = state.withLockedValue({ state -> EventLoopPromise<Void>? in
            defer { state.subscribed = nil }
            return state.subscribed
        }) else { return }
        promise.completeWith(result)
    }

    private func receive(_ text: String) {
        let now = nowMillis()
        let message: LiveServerMessage
        do {
            message = try JSONDecoder().decode(LiveServerMessage.self, from: Data(text.utf8))
        } catch {
            state.withLockedValue { $0.errors.append("undecodable message: \(text.prefix(200))") }
            return
        }
        switch message {
        case .reply(.subscribed(let topic, _, _)) where topic == self.topic:
            settle(.success(()))
        case .reply(.error(let code, let text, let topic)):
            state.withLockedValue { $0.errors.append("server error \(code) on \(topic ?? "-"): \(text)") }
            settle(.failure(BenchError("subscribe \(self.topic): \(code) \(text)")))
        case .reply:
            break
        case .event(let event):
            guard case .location(let location) = event.payload else {
                state.withLockedValue { $0.events += 1 }
                return
            }
            let driver = location.driverId.flatMap { driverIndex[$0.rawValue] }
            var mine = driver != nil
            if case .order(let expected, let orderID) = watch { mine = mine && driver == expected && location.orderId?.rawValue == orderID }
            state.withLockedValue { state in
                state.events += 1
                guard mine, let driver else { state.foreign += 1; return }
                let key = PositionKey(driver: driver, recordedAt: location.recordedAt)
                if state.receipts[key] != nil {
                    state.receipts[key]!.count += 1
                } else {
                    state.receipts[key] = Receipt(count: 1, delay: now - Double(location.recordedAt))
                }
            }
        }
    }

    private func closed() {
        state.withLockedValue { state in
            if !state.closing { state.droppedByServer = true }
        }
        settle(.failure(BenchError("connection closed before subscribing")))
    }

    func close() async {
        guard let socket = state.withLockedValue({ state -> WebSocket? in
            state.closing = true
            return state.socket
        }) else { return }
        try? await socket.close(code: .goingAway).get()
    }
}

/// A driver's own live connection, for positions sent as `report` commands.
final class DriverSocket: Sendable {
    private struct State {
        var socket: WebSocket?
        var waiting: [String: CheckedContinuation<LiveReportReceipt, any Error>] = [:]
        var closed = false
    }

    private let state = NIOLockedValueBox(State())

    func open(plan: Plan, token: String, http: HTTPClient, group: any EventLoopGroup) async throws {
        let ticket = try await Subscriber.ticket(plan: plan, http: http, token: token)
        try await WebSocket.connect(scheme: "ws", host: plan.host, port: plan.port, path: "/api/v1/live", query: "ticket=\(ticket)",
                                    on: group) { socket in
            self.state.withLockedValue { $0.socket = socket }
            socket.onText { _, text in self.receive(text) }
            socket.onClose.whenComplete { _ in self.failAll() }
        }.get()
    }

    /// Sends one report and waits for its answer (30 s at most).
    func report(ref: String, _ position: PositionReport) async throws -> LiveReportReceipt {
        let text = String(decoding: try JSONEncoder().encode(LiveCommand.report(ref: ref, positions: [position])), as: UTF8.self)
        return try await withCheckedThrowingContinuation { continuation in
            let socket = state.withLockedValue { state -> WebSocket? in
                guard !state.closed, let socket = state.socket else { return nil }
                state.waiting[ref] = continuation
                return socket
            }
            guard let socket else { return continuation.resume(throwing: BenchError("the driver's connection is closed")) }
            socket.eventLoop.scheduleTask(in: .seconds(30)) { self.fail(ref, BenchError("no answer to report \(ref) within 30 s")) }
            socket.send(text)
        }
    }

    private func receive(_ text: String) {
        guard case .reply(.reported(let receipt))? = try? JSONDecoder().decode(LiveServerMessage.self, from: Data(text.utf8)),
              let ref = receipt.ref,
              let waiting = state.withLockedValue({ $0.waiting.removeValue(forKey: ref) }) else { return }
        waiting.resume(returning: receipt)
    }

    private func fail(_ ref: String, _ error: any Error) {
        state.withLockedValue { $0.waiting.removeValue(forKey: ref) }?.resume(throwing: error)
    }

    private func failAll() {
        let waiting = state.withLockedValue { state in
            state.closed = true
            defer { state.waiting = [:] }
            return Array(state.waiting.values)
        }
        for continuation in waiting { continuation.resume(throwing: BenchError("the driver's connection closed")) }
    }

    func close() async {
        guard let socket = state.withLockedValue({ $0.socket }) else { return }
        try? await socket.close(code: .goingAway).get()
    }
}

/// What one driver sent and what the server answered.
struct DriverLog: Sendable {
    /// `recordedAt` of each position the server took (200 with `accepted` ≥ 1).
    var accepted: [Int64] = []
    var sent = 0
    var ignored = 0
    /// Requests that failed: HTTP status (0 for a transport error) → count.
    var failures: [Int: Int] = [:]
    var firstFailure: String?
    /// Milliseconds from sending the request to its answer.
    var requestMillis: [Double] = []
    /// Sends more than 250 ms behind their second (the previous request took too long).
    var late = 0
}

func runDriver(_ index: Int, plan: Plan, http: HTTPClient, socket: DriverSocket?, start: ContinuousClock.Instant) async -> DriverLog {
    let driver = plan.drivers[index]
    var log = DriverLog()
    // Spread over the second so that the load is even, not 200 requests at once.
    let offset = Duration.milliseconds(1000 * index / max(plan.drivers.count, 1))
    struct Answer: Decodable { var accepted: Int; var ignored: Int; var orders: Int }
    for second in 0..<plan.seconds {
        let due = start + offset + .seconds(second)
        try? await Task.sleep(until: due, clock: .continuous)
        if ContinuousClock.now - due > .milliseconds(250) { log.late += 1 }
        // About 3.3 m a second to the north-east: a courier in town.
        let latitude = driver.latitude + Double(second) * 0.00003
        let longitude = driver.longitude + Double(second) * 0.00003
        let sentAt = nowMillis()
        let recordedAt = Int64(sentAt.rounded())
        log.sent += 1
        if let socket {
            do {
                let receipt = try await socket.report(ref: String(second), PositionReport(latitude: latitude, longitude: longitude,
                                                                                         accuracy: 5, recordedAt: recordedAt))
                log.requestMillis.append(nowMillis() - sentAt)
                if let error = receipt.error {
                    log.failures[error.code == "rate_limited" ? 429 : 422, default: 0] += 1
                    if log.firstFailure == nil { log.firstFailure = "report: \(error.code) \(error.message)" }
                } else {
                    log.ignored += receipt.ignored
                    if receipt.accepted >= 1 { log.accepted.append(recordedAt) }
                }
            } catch {
                log.failures[0, default: 0] += 1
                if log.firstFailure == nil { log.firstFailure = String(describing: error) }
            }
            continue
        }
        var request = HTTPClientRequest(url: "http://\(plan.host):\(plan.port)/api/v1/drivers/me/locations")
        request.method = .POST
        request.headers.add(name: "Authorization", value: "Bearer \(driver.token)")
        request.headers.add(name: "Content-Type", value: "application/json")
        let body = #"{"positions":[{"latitude":\#(String(format: "%.7f", latitude)),"longitude":\#(String(format: "%.7f", longitude)),"#
            + #""accuracy":5,"recordedAt":"\#(iso8601(millis: recordedAt))"}]}"#
        request.body = .bytes(ByteBuffer(string: body))
        do {
            let response = try await http.execute(request, timeout: .seconds(30))
            let data = try await response.body.collect(upTo: 64 * 1024)
            log.requestMillis.append(nowMillis() - sentAt)
            if response.status == .ok, let answer = try? JSONDecoder().decode(Answer.self, from: Data(data.readableBytesView)) {
                log.ignored += answer.ignored
                if answer.accepted >= 1 { log.accepted.append(recordedAt) }
            } else {
                log.failures[Int(response.status.code), default: 0] += 1
                if log.firstFailure == nil { log.firstFailure = "HTTP \(response.status.code): \(String(buffer: data).prefix(300))" }
            }
        } catch {
            log.failures[0, default: 0] += 1
            if log.firstFailure == nil { log.firstFailure = String(describing: error) }
        }
    }
    return log
}

struct Summary: Encodable {
    var count: Int
    var p50: Double
    var p99: Double
    var max: Double
    var mean: Double

    init(_ samples: [Double]) {
        let sorted = samples.sorted()
        count = sorted.count
        // Nearest rank: the smallest sample with at least p % of them at or below it.
        func rank(_ p: Double) -> Double {
            guard !sorted.isEmpty else { return 0 }
            let index = Int((p / 100 * Double(sorted.count)).rounded(.up)) - 1
            return sorted[Swift.max(0, Swift.min(sorted.count - 1, index))]
        }
        p50 = rank(50)
        p99 = rank(99)
        max = sorted.last ?? 0
        mean = sorted.isEmpty ? 0 : sorted.reduce(0, +) / Double(sorted.count)
    }
}

struct Report: Encodable {
    var subscribers: Int
    var fleetSubscribers: Int
    var drivers: Int
    var seconds: Int
    var connectSeconds: Double
    var runSeconds: Double
    var drainSeconds: Double
    var positionsSent: Int
    var positionsAccepted: Int
    var positionsIgnored: Int
    var failedRequests: [String: Int]
    var lateSends: Int
    var request: Summary
    var delay: Summary
    var events: Int
    var eventsPerSecond: Double
    var positionsPerSecond: Double
    var expected: Int
    var received: Int
    var lost: Int
    var duplicates: Int
    var unexpected: Int
    var droppedConnections: Int
    var errors: [String]
}

@main
enum Bench {
    static func main() async throws {
        if CommandLine.arguments.count == 3, CommandLine.arguments[1] == "chat" {
            return try await ChatBench.run(planPath: CommandLine.arguments[2])
        }
        guard CommandLine.arguments.count == 2 else {
            FileHandle.standardError.write(Data("usage: waybill-bench plan.json (scripts/bench-live) | waybill-bench chat plan.json (scripts/bench-chat)\n".utf8))
            exit(2)
        }
        let plan = try JSONDecoder().decode(Plan.self, from: try Data(contentsOf: URL(fileURLWithPath: CommandLine.arguments[1])))
        let group = MultiThreadedEventLoopGroup(numberOfThreads: System.coreCount)
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(idleTimeout: .seconds(120),
                                             concurrentHTTP1ConnectionsPerHostSoftLimit: plan.drivers.count + plan.connectConcurrency + 8)
        let http = HTTPClient(eventLoopGroup: group, configuration: configuration)
        let driverIndex = Dictionary(uniqueKeysWithValues: plan.drivers.enumerated().map { ($0.element.id, $0.offset) })

        var subscribers: [Subscriber] = []
        if !plan.drivers.isEmpty {
            for n in 0..<plan.subscribers {
                let driver = n % plan.drivers.count
                subscribers.append(Subscriber(watch: .order(driver: driver, orderID: plan.drivers[driver].orderId), driverIndex: driverIndex))
            }
        }
        for _ in 0..<plan.fleetSubscribers { subscribers.append(Subscriber(watch: .fleet, driverIndex: driverIndex)) }

        // Connect everyone, a bounded number at a time.
        let all = subscribers
        let connectSeconds = try await connectAll(all.count, concurrency: plan.connectConcurrency) { index in
            try await all[index].open(plan: plan, http: http, group: group)
        }
        try await Task.sleep(for: .milliseconds(500))

        // Drivers who report over the live channel open their own connection first.
        var driverSockets: [DriverSocket?] = Array(repeating: nil, count: plan.drivers.count)
        if plan.reportOver == "socket" {
            try await withThrowingTaskGroup(of: (Int, DriverSocket).self) { tasks in
                var next = 0
                func addOne() {
                    let index = next
                    next += 1
                    tasks.addTask {
                        let socket = DriverSocket()
                        try await socket.open(plan: plan, token: plan.drivers[index].token, http: http, group: group)
                        return (index, socket)
                    }
                }
                while next < min(plan.connectConcurrency, plan.drivers.count) { addOne() }
                while let (index, socket) = try await tasks.next() {
                    driverSockets[index] = socket
                    if next < plan.drivers.count { addOne() }
                }
            }
            say("PHASE drivers connected \(plan.drivers.count)")
        }
        let sockets = driverSockets

        // Drive.
        let eventsBefore = subscribers.reduce(0) { $0 + $1.state.withLockedValue { $0.events } }
        let runStart = nowMillis()
        let start = ContinuousClock.now
        say("PHASE run-start")
        let logs = await withTaskGroup(of: (Int, DriverLog).self) { tasks in
            for index in plan.drivers.indices {
                tasks.addTask { (index, await runDriver(index, plan: plan, http: http, socket: sockets[index], start: start)) }
            }
            var logs = [DriverLog](repeating: DriverLog(), count: plan.drivers.count)
            for await (index, log) in tasks { logs[index] = log }
            return logs
        }
        let runEnd = nowMillis()
        let eventsAfter = subscribers.reduce(0) { $0 + $1.state.withLockedValue { $0.events } }
        say("PHASE run-end")

        // What every subscriber should have: each accepted position of its driver (all drivers on fleet).
        let accepted = logs.enumerated().map { index, log in Set(log.accepted.map { PositionKey(driver: index, recordedAt: $0) }) }
        let allAccepted = accepted.reduce(into: Set<PositionKey>()) { $0.formUnion($1) }
        func expected(_ subscriber: Subscriber) -> Set<PositionKey> {
            switch subscriber.watch {
            case .order(let driver, _): accepted[driver]
            case .fleet: allAccepted
            }
        }
        let expectedTotal = subscribers.reduce(0) { $0 + expected($1).count }
        func receivedTotal() -> Int {
            subscribers.reduce(0) { total, subscriber in
                let wanted = expected(subscriber)
                return total + subscriber.state.withLockedValue { $0.receipts.keys.filter(wanted.contains).count }
            }
        }
        // Grace: stop as soon as everything arrived.
        let graceEnd = ContinuousClock.now + .milliseconds(Int(plan.graceSeconds * 1000))
        while receivedTotal() < expectedTotal, ContinuousClock.now < graceEnd {
            try await Task.sleep(for: .milliseconds(50))
        }
        let drainSeconds = (nowMillis() - runEnd) / 1000

        let measureFrom = Int64(runStart + plan.warmupSeconds * 1000)
        var delays: [Double] = []
        var received = 0, duplicates = 0, unexpected = 0, dropped = 0
        var errors: [String] = []
        for subscriber in subscribers {
            let wanted = expected(subscriber)
            subscriber.state.withLockedValue { state in
                for (key, receipt) in state.receipts {
                    if wanted.contains(key) { received += 1 } else { unexpected += 1 }
                    duplicates += receipt.count - 1
                    if key.recordedAt >= measureFrom { delays.append(receipt.delay) }
                }
                unexpected += state.foreign
                if state.droppedByServer { dropped += 1 }
                errors += state.errors
            }
        }
        for log in logs { if let failure = log.firstFailure { errors.append("driver: \(failure)") } }
        var failures: [String: Int] = [:]
        for log in logs { for (status, count) in log.failures { failures[status == 0 ? "transport" : "HTTP \(status)", default: 0] += count } }

        let runSeconds = (runEnd - runStart) / 1000
        let positionsAccepted = logs.reduce(0) { $0 + $1.accepted.count }
        let report = Report(
            subscribers: plan.drivers.isEmpty ? 0 : plan.subscribers, fleetSubscribers: plan.fleetSubscribers, drivers: plan.drivers.count,
            seconds: plan.seconds, connectSeconds: connectSeconds, runSeconds: runSeconds, drainSeconds: drainSeconds,
            positionsSent: logs.reduce(0) { $0 + $1.sent }, positionsAccepted: positionsAccepted,
            positionsIgnored: logs.reduce(0) { $0 + $1.ignored }, failedRequests: failures, lateSends: logs.reduce(0) { $0 + $1.late },
            request: Summary(logs.flatMap(\.requestMillis)), delay: Summary(delays),
            events: eventsAfter - eventsBefore, eventsPerSecond: Double(eventsAfter - eventsBefore) / runSeconds,
            positionsPerSecond: Double(positionsAccepted) / runSeconds,
            expected: expectedTotal, received: received, lost: expectedTotal - received, duplicates: duplicates, unexpected: unexpected,
            droppedConnections: dropped, errors: Array(errors.prefix(20)))

        await withTaskGroup(of: Void.self) { tasks in
            for subscriber in subscribers { tasks.addTask { await subscriber.close() } }
            for socket in sockets.compactMap({ $0 }) { tasks.addTask { await socket.close() } }
        }
        try await http.shutdown()
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        say("RESULT " + String(decoding: try encoder.encode(report), as: UTF8.self))
        try? await group.shutdownGracefully()
    }
}
