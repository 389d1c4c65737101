import Foundation

/// What a live subscription reports: events, and the state of the connection behind them.
public enum LiveUpdate: Sendable, Equatable {
    /// An event on one of the topics, each delivered once, in order per topic.
    case event(LiveEvent)
    /// Subscribed to every topic (again, after a reconnect: what was missed has been replayed).
    case connected
    /// The connection was lost; the stream reconnects by itself after a pause.
    case disconnected(reason: String)
    /// Some events of this topic were too old to be replayed after reconnecting: reload its state
    /// over HTTP (for an order, ``WaybillSession/order(_:)``).
    case missedEvents(topic: String)
}

/// How a live subscription reconnects.
public struct LiveOptions: Sendable {
    /// The first pause after losing the connection; doubled after each failed attempt.
    public var initialBackoff: Duration
    /// The longest pause between attempts.
    public var maxBackoff: Duration
    /// Resume after this event id, as if reconnecting (events after it are replayed first).
    ///
    /// Without it, the first connection starts with what happens from then on. After a reconnect,
    /// each topic resumes after the last event it delivered; a topic that had delivered nothing yet
    /// resumes after the newest event of any topic, or, if there was none, replays what the server
    /// keeps of it (up to 24 hours), so nothing that happened while disconnected is lost.
    public var since: Int64?
    /// Follow an order through its public tracking link instead of as a signed-in person.
    public var trackingToken: String?
    /// How often to ping the server; a ping unanswered for as long means the connection died
    /// silently, and the stream reconnects. `nil`: rely on the connection being closed.
    public var heartbeat: Duration?

    public init(initialBackoff: Duration = .milliseconds(250), maxBackoff: Duration = .seconds(30), since: Int64? = nil,
                trackingToken: String? = nil, heartbeat: Duration? = .seconds(20)) {
        self.initialBackoff = initialBackoff
        self.maxBackoff = maxBackoff
        self.since = since
        self.trackingToken = trackingToken
        self.heartbeat = heartbeat
    }
}

extension WaybillSession {
    /// Live events of the given topics, as long as the caller iterates.
    ///
    /// ```swift
    /// for try await event in session.live([.order(order.uuid)]) {
    ///     if case .status(let change) = event.payload { status = change.status }
    /// }
    /// ```
    ///
    /// The stream gets a fresh ticket for every connection, reconnects with exponential backoff and
    /// jitter when the connection drops or the server restarts, and resumes from the last event id
    /// of each topic, so nothing is missed or repeated. It ends with an error only when retrying
    /// cannot help: ``WaybillError/sessionEnded(code:)``, or a topic the person may not see
    /// (``WaybillError/server(_:)`` with `not_found` or `forbidden`).
    public func live(_ topics: [LiveTopic], options: LiveOptions = LiveOptions()) -> AsyncThrowingStream<LiveEvent, any Error> {
        let updates = liveUpdates(topics, options: options)
        return AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    for try await update in updates {
                        if case .event(let event) = update { continuation.yield(event) }
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// Like ``live(_:options:)``, with the connection's state as well: for an app that shows
    /// "reconnecting…" or reloads after ``LiveUpdate/missedEvents(topic:)``.
    public func liveUpdates(_ topics: [LiveTopic], options: LiveOptions = LiveOptions()) -> AsyncThrowingStream<LiveUpdate, any Error> {
        AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    try await LiveLoop(session: self, topics: topics, options: options, continuation: continuation).run()
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// The WebSocket URL for a ticket, on the host this session talks to (the server's own `url`
    /// names its public address, which a device on another network may not reach the same way).
    func liveURL(ticket: String) -> URL {
        var components = URLComponents(url: serverURL, resolvingAgainstBaseURL: false)!
        components.scheme = components.scheme == "https" ? "wss" : "ws"
        components.path = (components.path.hasSuffix("/") ? String(components.path.dropLast()) : components.path) + "/live"
        components.queryItems = [URLQueryItem(name: "ticket", value: ticket)]
        return components.url!
    }
}

/// One live subscription: connect, subscribe, pass events on, reconnect.
struct LiveLoop {
    let session: WaybillSession
    let topics: [LiveTopic]
    let options: LiveOptions
    let continuation: AsyncThrowingStream<LiveUpdate, any Error>.Continuation

    /// Topics that end the stream when the server refuses them.
    static let finalTopicErrors: [String: Int] = ["not_found": 404, "forbidden": 403, "invalid_topic": 400, "link_revoked": 410]

    func run() async throws {
        // The last event id seen per topic: what to resume from.
        var cursors: [String: Int64] = [:]
        if let since = options.since { for topic in topics { cursors[topic.name] = since } }
        var failures = 0
        var connectedBefore = options.since != nil
        while !Task.isCancelled {
            var reason = "closed"
            do {
                // Signed out meanwhile (or the session ended): a ticket would be anonymous and the
                // topics refused; say why instead.
                if options.trackingToken == nil { try await session.authenticator.requireSignedIn() }
                let ticket = try await session.call { client in
                    try await client.createLiveTicket(body: .json(.init(trackingToken: options.trackingToken))).created.body.json
                }
                let socket = try await session.socketFactory.connect(to: session.liveURL(ticket: ticket.ticket), heartbeat: options.heartbeat)
                defer { Task { await socket.close() } }
                var waiting = Set(topics.map(\.name))
                var resumed: Set<String> = []
                for topic in topics {
                    // A topic that had no event yet resumes from the newest id seen on any topic,
                    // or from the start of what the server keeps.
                    let since = cursors[topic.name] ?? (connectedBefore ? (cursors.values.max() ?? 0) : nil)
                    if cursors[topic.name] != nil { resumed.insert(topic.name) }
                    let command = String(decoding: try JSONEncoder().encode(LiveCommand.subscribe(topic: topic.name, since: since)), as: UTF8.self)
                    try await socket.send(command)
                }
                for try await text in socket.messages {
                    guard let message = try? JSONDecoder().decode(LiveServerMessage.self, from: Data(text.utf8)) else { continue }
                    switch message {
                    case .event(let event):
                        if let last = cursors[event.topic], event.id <= last { continue }
                        cursors[event.topic] = event.id
                        continuation.yield(.event(event))
                    case .reply(.subscribed(let topic, _, let complete)):
                        if !complete, resumed.contains(topic) { continuation.yield(.missedEvents(topic: topic)) }
                        waiting.remove(topic)
                        if waiting.isEmpty {
                            failures = 0
                            connectedBefore = true
                            continuation.yield(.connected)
                        }
                    case .reply(.error(let code, let message, let topic)):
                        if topic != nil, let status = Self.finalTopicErrors[code] {
                            throw WaybillError.server(ServerProblem(status: status, code: code, message: message))
                        }
                        // `server_stopping`, `session_ended` (the next ticket tells whether this
                        // session is the one that ended), and anything else: reconnect.
                        reason = code
                    case .reply:
                        break
                    }
                }
            } catch let error as WaybillError where !error.isTransient {
                throw error
            } catch is CancellationError {
                return
            } catch {
                reason = String(describing: WaybillError.from(error))
            }
            if Task.isCancelled { return }
            continuation.yield(.disconnected(reason: reason))
            try await Task.sleep(for: backoff(failures))
            failures += 1
        }
    }

    /// Exponential, capped, with jitter so that clients of a restarted server do not all return at once.
    func backoff(_ failures: Int) -> Duration {
        let base = options.initialBackoff * (1 << min(failures, 16))
        let capped = min(base, options.maxBackoff)
        return capped * Double.random(in: 0.5...1.0)
    }
}
