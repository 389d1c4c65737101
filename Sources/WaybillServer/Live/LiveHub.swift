import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOWebSocket
import Vapor
import WaybillCore

/// What part of an order's events a subscription may see.
enum LiveAudience: Hashable, Sendable {
    /// Managers, the order's customer, a notification or fleet topic's owner: everything.
    case full
    /// The order's driver: everything while the order stays theirs.
    case assignee(UserID)
    /// Someone with the tracking link: status, ETA and, in transit only, the position; no ids or names
    /// beyond the driver's first name.
    case publicLink(String)
    /// The receiver in their own app: what a tracking link shows (`OrderPolicy.LiveFeedKind.receiver`).
    case receiver
}

/// The connections of this process and what each subscribed to. Events arrive from `LiveFeed`
/// (after their transaction committed) and leave as text frames, rendered once per kind of viewer.
final class LiveHub: Sendable {
    private let topics = NIOLockedValueBox<[String: [ObjectIdentifier: LiveConnection]]>([:])
    private let connections = NIOLockedValueBox<[ObjectIdentifier: LiveConnection]>([:])
    /// Open sockets in this process (`/metrics`).
    var connectionCount: Int { connections.withLockedValue { $0.count } }
    /// Signalled whenever a connection is added or removed.
    let connectionChanges = ChangeSignal()

    /// Returns true once at most `count` sockets are open in this process (false after `guard`):
    /// a closed connection is forgotten when its socket's close handler has run, a moment after the
    /// client saw it close.
    func untilConnections(atMost count: Int, guard timeout: Duration = .seconds(60)) async throws -> Bool {
        try await connectionChanges.wait(guard: timeout) { self.connectionCount <= count ? true : nil } ?? false
    }
    let logger: Logger
    /// Sessions and accounts another process ended or changed are forgotten here too.
    let caches: ReadCaches

    init(logger: Logger, caches: ReadCaches) {
        self.logger = logger
        self.caches = caches
    }

    /// Open connections allowed in this process per account and per client address.
    struct Limits: Sendable {
        var perAccount: Int
        var perAddress: Int
    }

    /// Whether one more connection for this account and address stays within `limits`.
    func hasRoom(account: UserID?, address: String, _ limits: Limits) -> Bool {
        connections.withLockedValue { Self.hasRoom(in: $0, account: account, address: address, limits) }
    }

    private static func hasRoom(in connections: [ObjectIdentifier: LiveConnection], account: UserID?, address: String, _ limits: Limits) -> Bool {
        var sameAccount = 0, sameAddress = 0
        for connection in connections.values {
            if account != nil, connection.identity.userID == account { sameAccount += 1 }
            if connection.clientAddress == address { sameAddress += 1 }
        }
        return sameAccount < limits.perAccount && sameAddress < limits.perAddress
    }

    /// Adds a connection if it stays within `limits` (checked and added under one lock).
    func add(_ connection: LiveConnection, _ limits: Limits? = nil) -> Bool {
        let added = connections.withLockedValue { connections in
            if let limits, !Self.hasRoom(in: connections, account: connection.identity.userID, address: connection.clientAddress, limits) {
                return false
            }
            connections[ObjectIdentifier(connection)] = connection
            return true
        }
        if added { connectionChanges.signal() }
        return added
    }

    func remove(_ connection: LiveConnection) {
        let key = ObjectIdentifier(connection)
        connections.withLockedValue { _ = $0.removeValue(forKey: key) }
        connectionChanges.signal()
        let subscribed = connection.storedTopics
        topics.withLockedValue { topics in
            for topic in subscribed {
                topics[topic]?.removeValue(forKey: key)
                if topics[topic]?.isEmpty == true { topics.removeValue(forKey: topic) }
            }
        }
    }

    /// Closes every connection (the process is stopping; clients reconnect elsewhere).
    func closeAll() {
        let all = connections.withLockedValue { Array($0.values) }
        for connection in all { connection.close(code: .goingAway, reason: "server_stopping") }
    }

    func subscribe(_ connection: LiveConnection, to topic: String) {
        topics.withLockedValue { $0[topic, default: [:]][ObjectIdentifier(connection)] = connection }
    }

    func unsubscribe(_ connection: LiveConnection, from topic: String) {
        topics.withLockedValue { topics in
            topics[topic]?.removeValue(forKey: ObjectIdentifier(connection))
            if topics[topic]?.isEmpty == true { topics.removeValue(forKey: topic) }
        }
    }

    /// Hands committed events to their subscribers, in id order. Each connection's frames from all
    /// of `rows` go to its socket together, in one hop to its event loop (a fleet map hears dozens
    /// of drivers from one group commit).
    func deliver(_ rows: [LiveRow]) {
        var touched: [ObjectIdentifier: LiveConnection] = [:]
        func send() {
            for connection in touched.values { connection.drain() }
            touched.removeAll(keepingCapacity: true)
        }
        // An order's changes (status, driver, steps) are said on its topic by whichever process
        // made them: what this process kept of the order is read again (`ReadCaches.orders`).
        var changedOrders: [OrderID] = []
        for row in rows where row.topic.hasPrefix("order:") && row.type != "location" && row.type != "eta" {
            if case .order(let id)? = LiveTopic(row.topic) { changedOrders.append(id) }
        }
        caches.forget(orders: changedOrders)
        for row in rows {
            if row.isControl {
                send()  // what came before a closing connection goes out first
                control(row)
                continue
            }
            guard let subscribers = topics.withLockedValue({ $0[row.topic].map { Array($0.values) } }), !subscribers.isEmpty else { continue }
            let renderer = LiveRenderer(row: row)
            for connection in subscribers where connection.enqueue(row, renderer: renderer, hub: self) {
                touched[ObjectIdentifier(connection)] = connection
            }
        }
        send()
    }

    /// Events the hub acts on itself: sessions that ended, tracking links that changed.
    private func control(_ row: LiveRow) {
        guard let data = try? JSONDecoder().decode([String: String].self, from: Data(row.data.utf8)) else { return }
        switch row.type {
        case LiveRow.sessionEnded:
            guard let user = data["user"].flatMap(UserID.init(uuidString:)) else { return }
            caches.forget(accounts: [user])
            let session = data["session"].flatMap(SignInID.init(uuidString:))
            let except = data["except"].flatMap(SignInID.init(uuidString:))
            let ended = connections.withLockedValue { $0.values.filter { connection in
                guard connection.identity.userID == user else { return false }
                if let session { return connection.identity.sessionID == session }
                return connection.identity.sessionID != except
            } }
            for connection in ended { connection.close(code: .policyViolation, reason: "session_ended") }
        case LiveRow.accessChanged:
            guard let user = data["user"].flatMap(UserID.init(uuidString:)) else { return }
            caches.forget(accounts: [user])
            let changed = connections.withLockedValue { $0.values.filter { $0.identity.userID == user } }
            for connection in changed { connection.close(code: .policyViolation, reason: "access_changed") }
        case LiveRow.trackingChanged:
            let current = data["token"] ?? ""
            let subscribers = topics.withLockedValue { $0[row.topic].map { Array($0.values) } } ?? []
            for connection in subscribers { connection.dropPublic(topic: row.topic, unless: current, hub: self) }
        default:
            break
        }
    }
}

/// Renders one event for each kind of viewer at most once, however many subscribers see it.
final class LiveRenderer {
    let row: LiveRow
    private var cache: [String: String?] = [:]
    private lazy var payload: LivePayload? = LiveRenderer.decode(row)

    init(row: LiveRow) { self.row = row }

    enum Outcome { case send(String), skip, revoke }

    /// The driver a status event assigns the order to, if it is one that names a driver.
    var assignedDriver: UserID? {
        if case .status(let status)? = payload { return status.driverId }
        return nil
    }

    func render(label: String, audience: LiveAudience) -> Outcome {
        switch audience {
        case .full:
            return .send(cached(label, "full") { row.data })
        case .assignee(let driver):
            if case .status(let status)? = payload, let assigned = status.driverId, assigned != driver { return .revoke }
            return .send(cached(label, "full") { row.data })
        case .publicLink, .receiver:
            guard let text = cached(label, "public", publicData) else { return .skip }
            return .send(text)
        }
    }

    private func cached(_ label: String, _ view: String, _ data: () -> String?) -> String? {
        let key = view + " " + label
        if let hit = cache[key] { return hit }
        let text = data().map { #"{"type":"\#(row.type)","id":\#(row.id),"topic":"\#(label)","at":\#(row.at),"data":\#($0)}"# }
        cache[key] = text
        return text
    }

    private func cached(_ label: String, _ view: String, _ data: () -> String) -> String {
        cached(label, view, { Optional(data()) }) ?? ""
    }

    /// What the public sees of an order's event: never an id, a reference or a name beyond the
    /// driver's first name; the position only while the parcel is on its way.
    private func publicData() -> String? {
        switch payload {
        case .location(var location)?:
            guard let status = location.orderStatus.flatMap(OrderStatus.init(rawValue:)), PublicTrackingView.visible(in: status).position else { return nil }
            location.driverId = nil
            location.orderId = nil
            return try? LiveLog.encodeData(.location(location))
        case .status(var status)?:
            status.orderId = nil
            status.reference = nil
            status.driverId = nil
            return try? LiveLog.encodeData(.status(status))
        case .eta(var eta)?:
            eta.orderId = nil
            return try? LiveLog.encodeData(.eta(eta))
        default:
            return nil
        }
    }
}

extension LiveRenderer {
    static func decode(_ row: LiveRow) -> LivePayload? {
        let data = Data(row.data.utf8)
        let decoder = JSONDecoder()
        switch row.type {
        case "location": return (try? decoder.decode(LiveLocation.self, from: data)).map(LivePayload.location)
        case "status": return (try? decoder.decode(LiveStatus.self, from: data)).map(LivePayload.status)
        case "eta": return (try? decoder.decode(LiveETA.self, from: data)).map(LivePayload.eta)
        case "notification": return (try? decoder.decode(LiveNotification.self, from: data)).map(LivePayload.notification)
        case "duty": return (try? decoder.decode(LiveDuty.self, from: data)).map(LivePayload.duty)
        case "message": return (try? decoder.decode(LiveChatMessage.self, from: data)).map(LivePayload.message)
        case "marker": return (try? decoder.decode(LiveChatMarker.self, from: data)).map(LivePayload.marker)
        case "unread": return (try? decoder.decode(LiveUnread.self, from: data)).map(LivePayload.unread)
        default: return nil
        }
    }
}

/// Who opened a live connection (from the ticket they presented).
struct LiveIdentity: Sendable {
    var userID: UserID?
    var sessionID: SignInID?
    /// A signed-in account as WaybillCore's policies knew it when the connection opened (nil for a
    /// public viewer). A change of capabilities or restriction closes the connection.
    var caller: Caller?
    /// Set for a viewer who opened the channel from a public tracking link.
    var trackingToken: String?
    /// The account as it was when the connection opened, for positions reported over it (`report`).
    var user: User? = nil
}

/// One open WebSocket: its subscriptions and a bounded number of frames in flight.
final class LiveConnection: Sendable {
    let identity: LiveIdentity
    private let socket: WebSocket
    private let state = NIOLockedValueBox(State())

    /// Frames written but not yet flushed to the client. A client that falls this far behind is
    /// disconnected; it reconnects and asks for what it missed (`since`).
    static let maxInFlight = 2_000
    static let maxSubscriptions = 100

    struct Subscription {
        var label: String
        var audience: LiveAudience
        /// While stored events are being replayed, live ones wait here.
        var waiting: [LiveRow]?
        /// Ids the replay sent. The feed may still bring one of them afterwards (its notification
        /// can arrive after the replay read the committed row): it is not sent twice.
        var replayed: Set<Int64> = []
    }

    struct State {
        var subscriptions: [String: Subscription] = [:]
        /// Frames rendered but not yet handed to the socket, in order.
        var queue: [String] = []
        /// Frames handed to the socket and not yet flushed.
        var inFlight = 0
        /// One caller at a time moves the queue to the socket, outside the lock.
        var draining = false
        var closed = false
    }

    /// The client's address when it connected (for per-address limits and guess budgets).
    let clientAddress: String

    init(identity: LiveIdentity, socket: WebSocket, clientAddress: String) {
        self.identity = identity
        self.socket = socket
        self.clientAddress = clientAddress
    }

    var storedTopics: [String] { state.withLockedValue { Array($0.subscriptions.keys) } }
    var subscriptionCount: Int { state.withLockedValue { $0.subscriptions.count } }

    func isSubscribed(_ topic: String) -> Bool { state.withLockedValue { $0.subscriptions[topic] != nil } }

    /// Registers a subscription; with `replaying`, live events are held until `finishReplay`.
    func begin(topic: String, label: String, audience: LiveAudience, replaying: Bool) {
        state.withLockedValue { $0.subscriptions[topic] = Subscription(label: label, audience: audience, waiting: replaying ? [] : nil) }
    }

    /// Sends the stored events, then those that arrived meanwhile, each once: a live event the
    /// replay already held is dropped here or, arriving later, in `enqueue`.
    func finishReplay(topic: String, rows: [LiveRow], hub: LiveHub) {
        var revoked = false
        state.withLockedValue { state in
            guard var subscription = state.subscriptions[topic] else { return }
            var replayed = Set(rows.map(\.id))
            // A driver replaying an order's history sees the periods it was theirs: an earlier
            // driver's assignment hides what followed until the order came back to this one,
            // and only the newest assignment decides whether the subscription stays.
            var foreign = false
            for (index, row) in (rows + (subscription.waiting ?? [])).enumerated() {
                if index >= rows.count, replayed.remove(row.id) != nil { continue }
                // The hub's own control rows (ended sessions, changed tracking links) are never sent.
                if row.isControl { continue }
                let renderer = LiveRenderer(row: row)
                switch renderer.render(label: subscription.label, audience: subscription.audience) {
                case .send(let text):
                    if case .assignee(let driver) = subscription.audience, renderer.assignedDriver == driver { foreign = false }
                    if !foreign { write(text, state: &state) }
                case .skip: break
                case .revoke: foreign = true
                }
            }
            revoked = foreign
            subscription.waiting = nil
            subscription.replayed = replayed
            state.subscriptions[topic] = subscription
        }
        drain()
        if revoked { revoke(topic: topic, hub: hub) }
    }

    func end(topic: String) {
        _ = state.withLockedValue { $0.subscriptions.removeValue(forKey: topic) }
    }

    /// Queues what this connection's subscriber sees of `row`; true if a frame waits for `drain()`.
    func enqueue(_ row: LiveRow, renderer: LiveRenderer, hub: LiveHub) -> Bool {
        var revoked = false
        let queued = state.withLockedValue { state -> Bool in
            guard var subscription = state.subscriptions[row.topic], !state.closed else { return false }
            if subscription.waiting != nil {
                subscription.waiting?.append(row)
                state.subscriptions[row.topic] = subscription
                return false
            }
            if !subscription.replayed.isEmpty, subscription.replayed.remove(row.id) != nil {
                state.subscriptions[row.topic] = subscription
                return false
            }
            switch renderer.render(label: subscription.label, audience: subscription.audience) {
            case .send(let text):
                write(text, state: &state)
                return true
            case .skip: return false
            case .revoke:
                revoked = true
                return false
            }
        }
        // The error reply goes after the frames queued before it (`reply` drains them all).
        if revoked { revoke(topic: row.topic, hub: hub) }
        return queued
    }

    /// The driver lost the order: no more of its events.
    private func revoke(topic: String, hub: LiveHub) {
        guard let label = state.withLockedValue({ $0.subscriptions.removeValue(forKey: topic)?.label }) else { return }
        hub.unsubscribe(self, from: topic)
        reply(.error(code: ErrorCode.forbidden.rawValue, message: "This order is no longer yours.", topic: label))
    }

    /// A tracking link was revoked or replaced: public viewers of the old link are let go.
    func dropPublic(topic: String, unless current: String, hub: LiveHub) {
        let label = state.withLockedValue { state -> String? in
            guard let subscription = state.subscriptions[topic], case .publicLink(let token) = subscription.audience, token != current else { return nil }
            state.subscriptions.removeValue(forKey: topic)
            return subscription.label
        }
        guard let label else { return }
        hub.unsubscribe(self, from: topic)
        reply(.error(code: ErrorCode.linkRevoked.rawValue, message: "This tracking link is no longer valid.", topic: label))
    }

    func reply(_ reply: LiveReply) {
        guard let data = try? JSONEncoder().encode(reply) else { return }
        let text = String(decoding: data, as: UTF8.self)
        state.withLockedValue { state in write(text, state: &state) }
        drain()
    }

    /// Queues a frame (under the lock). A client too far behind is disconnected instead.
    private func write(_ text: String, state: inout State) {
        guard !state.closed else { return }
        if state.inFlight + state.queue.count >= Self.maxInFlight {
            state.closed = true
            state.queue.removeAll()
            let socket = self.socket
            socket.eventLoop.execute { _ = socket.close(code: .unexpectedServerError) }
            return
        }
        state.queue.append(text)
    }

    /// Hands queued frames to the socket in order, all of them in one hop to its event loop, with
    /// one completion for the lot (frames complete in order, so the last one's completion counts
    /// them all). Never called with the lock held: a write's completion may run at once and take
    /// the lock itself.
    func drain() {
        guard state.withLockedValue({ state -> Bool in
            if state.draining { return false }
            state.draining = true
            return true
        }) else { return }
        while true {
            let batch = state.withLockedValue { state -> [String] in
                let batch = state.closed ? [] : state.queue
                state.queue.removeAll(keepingCapacity: true)
                state.inFlight += batch.count
                if batch.isEmpty { state.draining = false }
                return batch
            }
            if batch.isEmpty { return }
            let socket = self.socket, count = batch.count
            let promise = socket.eventLoop.makePromise(of: Void.self)
            promise.futureResult.whenComplete { [state = self.state] _ in state.withLockedValue { $0.inFlight -= count } }
            let send = {
                for (index, text) in batch.enumerated() { socket.send(text, promise: index == count - 1 ? promise : nil) }
            }
            if socket.eventLoop.inEventLoop { send() } else { socket.eventLoop.execute(send) }
        }
    }

    func close(code: WebSocketErrorCode, reason: String) {
        let alreadyClosed = state.withLockedValue { state -> Bool in
            defer { state.closed = true }
            return state.closed
        }
        guard !alreadyClosed else { return }
        let message = ErrorCode(rawValue: reason)?.english ?? "The server is stopping; reconnect."
        if let data = try? JSONEncoder().encode(LiveReply.error(code: reason, message: message, topic: nil)) {
            socket.send(String(decoding: data, as: UTF8.self))
        }
        _ = socket.close(code: code)
    }
}
