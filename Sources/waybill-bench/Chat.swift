// The load generator of scripts/bench-chat: every participant of every conversation has the app
// open (a WebSocket subscribed to `conversation:<id>`), while messages are sent at a steady rate
// over HTTP, each by one of its conversation's two participants in turn; it measures the delay from
// sending a message to its receipt by each participant's socket, and counts what was lost.
//
//     waybill-bench chat plan.json
//
// The plan: {"host", "port", "conversations": [{"id", "participants": [{"token", "userId"}, …]}],
//  "messagesPerSecond", "seconds", "warmupSeconds", "graceSeconds", "connectConcurrency"}.
// Output as for positions: `PHASE …` lines, then `RESULT {json}`.
import AsyncHTTPClient
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import WaybillCore
import WebSocketKit

struct ChatPlan: Decodable, Sendable {
    struct Participant: Decodable, Sendable {
        var token: String
        var userId: UUID
    }

    struct Conversation: Decodable, Sendable {
        var id: UUID
        var participants: [Participant]
    }

    var host: String
    var port: Int
    var conversations: [Conversation]
    var messagesPerSecond: Int
    var seconds: Int
    var warmupSeconds: Double
    var graceSeconds: Double
    var connectConcurrency: Int
}

/// One participant's open app: a socket subscribed to their conversation.
final class ChatSocket: Sendable {
    struct State {
        var socket: WebSocket?
        var subscribed: EventLoopPromise<Void>?
        /// Message number → (receipts, delay of the first in ms).
        var receipts: [Int: (count: Int, delay: Double)] = [:]
        var foreign = 0
        var markers = 0
        var errors: [String] = []
        var closing = false
        var droppedByServer = false
    }

    let conversation: Int
    let topic: String
    let token: String
    let sentAt: NIOLockedValueBox<[Int: Double]>
    let state = NIOLockedValueBox(State())

    init(conversation: Int, id: UUID, token: String, sentAt: NIOLockedValueBox<[Int: Double]>) {
        self.conversation = conversation
        self.topic = LiveTopic.conversation(ConversationID(rawValue: id)).name
        self.token = token
        self.sentAt = sentAt
    }

    func open(plan: ChatPlan, http: HTTPClient, group: any EventLoopGroup) async throws {
        let ticket = try await liveTicket(host: plan.host, port: plan.port, token: token, http: http)
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

    private func settle(_ result: Result<Void, any Error>) {
        guard let promise = state.withLockedValue({ state -> EventLoopPromise<Void>? in
            defer { state.subscribed = nil }
            return state.subscribed
        }) else { return }
        promise.completeWith(result)
    }

    private func receive(_ text: String) {
        let now = nowMillis()
        guard let message = try? JSONDecoder().decode(LiveServerMessage.self, from: Data(text.utf8)) else {
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
            switch event.payload {
            case .message(let chat):
                // The text is "<conversation>:<number>": the number keys the send time.
                let parts = chat.text.split(separator: ":")
                guard parts.count == 2, let from = Int(parts[0]), from == conversation, let number = Int(parts[1]),
                      let sent = sentAt.withLockedValue({ $0[number] }) else {
                    state.withLockedValue { $0.foreign += 1 }
                    return
                }
                state.withLockedValue { state in
                    if let seen = state.receipts[number] { state.receipts[number] = (seen.count + 1, seen.delay) }
                    else { state.receipts[number] = (1, now - sent) }
                }
            case .marker:
                state.withLockedValue { $0.markers += 1 }
            default:
                state.withLockedValue { $0.foreign += 1 }
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

struct ChatReport: Encodable {
    var conversations: Int
    var participants: Int
    var seconds: Int
    var connectSeconds: Double
    var runSeconds: Double
    var drainSeconds: Double
    var messagesSent: Int
    var messagesStored: Int
    var messagesPerSecond: Double
    var failedRequests: [String: Int]
    var lateSends: Int
    var request: Summary
    var delay: Summary
    var expected: Int
    var received: Int
    var lost: Int
    var duplicates: Int
    var unexpected: Int
    var droppedConnections: Int
    var errors: [String]
}

enum ChatBench {
    static func run(planPath: String) async throws {
        let plan = try JSONDecoder().decode(ChatPlan.self, from: try Data(contentsOf: URL(fileURLWithPath: planPath)))
        let group = MultiThreadedEventLoopGroup(numberOfThreads: System.coreCount)
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(idleTimeout: .seconds(120),
                                             concurrentHTTP1ConnectionsPerHostSoftLimit: plan.messagesPerSecond + plan.connectConcurrency + 8)
        let http = HTTPClient(eventLoopGroup: group, configuration: configuration)
        let sentAt = NIOLockedValueBox<[Int: Double]>([:])

        var sockets: [ChatSocket] = []
        var socketsOf: [[Int]] = []
        for (index, conversation) in plan.conversations.enumerated() {
            var mine: [Int] = []
            for participant in conversation.participants {
                mine.append(sockets.count)
                sockets.append(ChatSocket(conversation: index, id: conversation.id, token: participant.token, sentAt: sentAt))
            }
            socketsOf.append(mine)
        }

        let all = sockets
        let connectSeconds = try await connectAll(all.count, concurrency: plan.connectConcurrency) { index in
            try await all[index].open(plan: plan, http: http, group: group)
        }
        try await Task.sleep(for: .milliseconds(500))

        // Send: message n goes to conversation n % C, from its participants in turn, at an even pace.
        let total = plan.messagesPerSecond * plan.seconds
        let interval = 1000.0 / Double(max(plan.messagesPerSecond, 1))
        let start = ContinuousClock.now
        let runStart = nowMillis()
        say("PHASE run-start")
        struct Outcome: Sendable { var number: Int; var stored: Bool; var millis: Double; var failure: String?; var late: Bool }
        let outcomes = await withTaskGroup(of: Outcome.self) { tasks in
            for number in 0..<total {
                let due = start + .milliseconds(Int((Double(number) * interval).rounded()))
                try? await Task.sleep(until: due, clock: .continuous)
                let late = ContinuousClock.now - due > .milliseconds(250)
                let c = number % plan.conversations.count
                let conversation = plan.conversations[c]
                let sender = conversation.participants[(number / plan.conversations.count) % conversation.participants.count]
                tasks.addTask {
                    var request = HTTPClientRequest(url: "http://\(plan.host):\(plan.port)/api/v1/conversations/\(conversation.id.uuidString)/messages")
                    request.method = .POST
                    request.headers.add(name: "Authorization", value: "Bearer \(sender.token)")
                    request.headers.add(name: "Content-Type", value: "application/json")
                    request.body = .bytes(ByteBuffer(string: #"{"clientMessageId":"bench-\#(number)","text":"\#(c):\#(number)"}"#))
                    let sent = nowMillis()
                    sentAt.withLockedValue { $0[number] = sent }
                    do {
                        let response = try await http.execute(request, timeout: .seconds(30))
                        let body = try await response.body.collect(upTo: 64 * 1024)
                        let millis = nowMillis() - sent
                        if response.status == .created { return Outcome(number: number, stored: true, millis: millis, failure: nil, late: late) }
                        return Outcome(number: number, stored: false, millis: millis,
                                       failure: "HTTP \(response.status.code): \(String(buffer: body).prefix(200))", late: late)
                    } catch {
                        return Outcome(number: number, stored: false, millis: nowMillis() - sent, failure: String(describing: error), late: late)
                    }
                }
            }
            var outcomes: [Outcome] = []
            for await outcome in tasks { outcomes.append(outcome) }
            return outcomes
        }
        let runEnd = nowMillis()
        say("PHASE run-end")

        // Every stored message must reach each participant's socket once.
        let stored = outcomes.filter(\.stored).map(\.number)
        var wanted = [Set<Int>](repeating: [], count: sockets.count)
        for number in stored {
            for socket in socketsOf[number % plan.conversations.count] { wanted[socket].insert(number) }
        }
        let expected = wanted.reduce(0) { $0 + $1.count }
        func receivedTotal() -> Int {
            sockets.enumerated().reduce(0) { sum, pair in
                sum + pair.element.state.withLockedValue { $0.receipts.keys.filter(wanted[pair.offset].contains).count }
            }
        }
        let graceEnd = ContinuousClock.now + .milliseconds(Int(plan.graceSeconds * 1000))
        while receivedTotal() < expected, ContinuousClock.now < graceEnd { try await Task.sleep(for: .milliseconds(50)) }
        let drainSeconds = (nowMillis() - runEnd) / 1000

        let measureFrom = Int(Double(plan.messagesPerSecond) * plan.warmupSeconds)
        var delays: [Double] = []
        var received = 0, duplicates = 0, unexpected = 0, dropped = 0
        var errors: [String] = []
        for (index, socket) in sockets.enumerated() {
            socket.state.withLockedValue { state in
                for (number, receipt) in state.receipts {
                    if wanted[index].contains(number) { received += 1 } else { unexpected += 1 }
                    duplicates += receipt.count - 1
                    if number >= measureFrom { delays.append(receipt.delay) }
                }
                unexpected += state.foreign
                if state.droppedByServer { dropped += 1 }
                errors += state.errors
            }
        }
        var failures: [String: Int] = [:]
        for outcome in outcomes where !outcome.stored {
            let key = outcome.failure.map { $0.hasPrefix("HTTP ") ? String($0.prefix(8)) : "transport" } ?? "unknown"
            failures[key, default: 0] += 1
            if errors.count < 20, let failure = outcome.failure { errors.append("send: \(failure)") }
        }
        let runSeconds = (runEnd - runStart) / 1000
        let report = ChatReport(
            conversations: plan.conversations.count, participants: sockets.count, seconds: plan.seconds, connectSeconds: connectSeconds,
            runSeconds: runSeconds, drainSeconds: drainSeconds, messagesSent: total, messagesStored: stored.count,
            messagesPerSecond: Double(stored.count) / runSeconds, failedRequests: failures, lateSends: outcomes.filter(\.late).count,
            request: Summary(outcomes.map(\.millis)), delay: Summary(delays), expected: expected, received: received,
            lost: expected - received, duplicates: duplicates, unexpected: unexpected, droppedConnections: dropped,
            errors: Array(errors.prefix(20)))
        await withTaskGroup(of: Void.self) { tasks in
            for socket in sockets { tasks.addTask { await socket.close() } }
        }
        try await http.shutdown()
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        say("RESULT " + String(decoding: try encoder.encode(report), as: UTF8.self))
        try? await group.shutdownGracefully()
    }
}
