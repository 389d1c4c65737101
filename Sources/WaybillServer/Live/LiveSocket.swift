import Fluent
import Foundation
import SQLKit
import Vapor
import WaybillCore

/// Single-use tickets that open the live channel. An app asks for one with its access token over
/// HTTPS and presents it in the WebSocket URL within 30 seconds; the token itself never appears in
/// a URL (where proxies and logs would keep it).
enum LiveTickets {
    static let lifetimeMillis: Int64 = 30_000

    struct Issued: Sendable {
        var ticket: String
        var expiresAt: Int64
    }

    static func issue(for principal: Principal?, trackingToken: String?, app: Application, db: any Database) async throws -> Issued {
        if principal == nil {
            // Without an account, only the viewer of a tracking link that works gets a ticket.
            guard let token = trackingToken, Tracking.isWellFormedToken(token),
                  try await Order.query(on: db).filter(\.$trackingToken == token).count() == 1 else {
                throw trackingToken == nil ? WaybillError.unauthenticated : WaybillError.notFound
            }
        }
        let ticket = TokenService.newRefreshToken()
        let expiresAt = UnixTime.nowMillis + lifetimeMillis
        guard let sql = db as? any SQLDatabase else { throw Abort(.internalServerError) }
        try await app.writeLock.withLock {
            try await sql.insert(into: "live_tickets").columns("ticket_hash", "user_id", "session_id", "tracking_token", "expires_at")
                .values(SQLBind(TokenService.hash(ticket)), SQLBind(principal?.userID), SQLBind(principal?.sessionID),
                        SQLBind(principal == nil ? trackingToken : nil), SQLBind(expiresAt))
                .run()
        }
        return Issued(ticket: ticket, expiresAt: expiresAt)
    }

    /// Whether a ticket is good, without using it up.
    static func peek(_ ticket: String, db: any Database) async throws -> LiveIdentity? {
        guard !ticket.isEmpty, ticket.count <= 100, let sql = db as? any SQLDatabase else { return nil }
        let row = try await sql.select().column("expires_at").from("live_tickets")
            .where("ticket_hash", .equal, SQLBind(TokenService.hash(ticket))).first()
        guard let row, try row.decode(column: "expires_at", as: Int64.self) > UnixTime.nowMillis else { return nil }
        return LiveIdentity()
    }

    /// The identity behind a ticket, which is used up. Nil if unknown, used or expired.
    static func redeem(_ ticket: String, app: Application, db: any Database) async throws -> LiveIdentity? {
        guard !ticket.isEmpty, ticket.count <= 100, let sql = db as? any SQLDatabase else { return nil }
        let rows = try await app.writeLock.withLock {
            try await sql.delete(from: "live_tickets").where("ticket_hash", .equal, SQLBind(TokenService.hash(ticket)))
                .returning("user_id", "session_id", "tracking_token", "expires_at").all()
        }
        guard let row = rows.first, try row.decode(column: "expires_at", as: Int64.self) > UnixTime.nowMillis else { return nil }
        if !(try row.decodeNil(column: "tracking_token")) {
            return LiveIdentity(trackingToken: try row.decode(column: "tracking_token", as: String.self))
        }
        let userID = try row.decode(column: "user_id", as: UUID.self)
        let sessionID = try row.decode(column: "session_id", as: UUID.self)
        // The account and the session must still be good now, not only when the ticket was made.
        guard let user = try await User.find(userID, on: db), !user.isDisabled,
              let session = try await Session.find(sessionID, on: db), session.revokedAt == nil else { return nil }
        return LiveIdentity(userID: userID, sessionID: sessionID, role: user.role)
    }
}

/// `GET /api/v1/live`: the WebSocket endpoint. See docs/live.md for the protocol.
enum LiveSocket {
    static let path: [PathComponent] = ["api", "v1", "live"]

    static func register(_ app: Application) {
        app.on(.GET, path) { req async throws -> Response in
            let config = req.application.waybill.config
            // Browsers always send Origin; a page elsewhere must not ride on a user's ticket.
            if let origin = req.headers.first(name: .origin) {
                guard config.liveAllowedOrigins.contains(origin.lowercased()) else {
                    throw WaybillError(.forbidden, "origin_not_allowed", "This origin may not open the live channel.")
                }
            }
            guard let ticket = req.query[String.self, at: "ticket"] else {
                throw WaybillError(.unauthorized, "ticket_required", "Open the live channel with a ticket from POST /api/v1/live/ticket.")
            }
            let upgrading = req.headers.first(name: .upgrade)?.lowercased() == "websocket"
            // A plain GET does not use the ticket up.
            guard let identity = upgrading ? try await LiveTickets.redeem(ticket, app: req.application, db: req.db)
                                           : try await LiveTickets.peek(ticket, db: req.db) else {
                throw WaybillError(.unauthorized, "invalid_ticket", "The ticket is unknown, used or expired; ask for a new one.")
            }
            guard upgrading else {
                throw WaybillError(.badRequest, "websocket_required", "This endpoint speaks WebSocket only.")
            }
            let app = req.application
            let shouldUpgrade: @Sendable (Request) -> EventLoopFuture<HTTPHeaders?> = { $0.eventLoop.makeSucceededFuture([:]) }
            return req.webSocket(maxFrameSize: WebSocketMaxFrameSize(integerLiteral: 16 * 1024), shouldUpgrade: shouldUpgrade) { _, socket in
                // On the socket's event loop: handlers are in place before the first frame is read.
                let hub = app.waybill.live
                let connection = LiveConnection(identity: identity, socket: socket)
                hub.add(connection)
                socket.pingInterval = .seconds(25)
                let (commands, input) = AsyncStream.makeStream(of: String.self, bufferingPolicy: .bufferingNewest(64))
                socket.onText { _, text in input.yield(text) }
                socket.onBinary { _, _ in input.yield("") }
                socket.onClose.whenComplete { _ in input.finish() }
                Task { await serve(commands, connection: connection, app: app) }
            }
        }
    }

    /// Runs one connection: commands are handled one at a time, in the order they came.
    static func serve(_ commands: AsyncStream<String>, connection: LiveConnection, app: Application) async {
        let hub = app.waybill.live
        let session = LiveSession(app: app, connection: connection, hub: hub)
        for await text in commands {
            await session.handle(text)
        }
        hub.remove(connection)
    }
}

/// The commands of one connection.
struct LiveSession {
    let app: Application
    let connection: LiveConnection
    let hub: LiveHub

    func handle(_ text: String) async {
        guard let command = try? JSONDecoder().decode(LiveCommand.self, from: Data(text.utf8)) else {
            connection.reply(.error(code: "invalid_command", message: #"Send {"type": "subscribe", "topic": …}, "unsubscribe" or "ping"."#, topic: nil))
            return
        }
        switch command {
        case .ping:
            connection.reply(.pong)
        case .unsubscribe(let label):
            if let topic = try? await resolve(label) {
                hub.unsubscribe(connection, from: topic.stored)
                connection.end(topic: topic.stored)
            }
            connection.reply(.unsubscribed(topic: label))
        case .subscribe(let label, let since):
            do {
                let topic = try await resolve(label)
                if !connection.isSubscribed(topic.stored), connection.subscriptionCount >= LiveConnection.maxSubscriptions {
                    throw WaybillError(.tooManyRequests, "too_many_subscriptions", "At most \(LiveConnection.maxSubscriptions) topics per connection.")
                }
                connection.begin(topic: topic.stored, label: label, audience: topic.audience, replaying: since != nil)
                hub.subscribe(connection, to: topic.stored)
                var replayed = 0
                var complete = true
                if let since {
                    let stored = try await LiveFeed.replay(topic: topic.stored, since: since, on: app.db)
                    replayed = stored.rows.count
                    complete = stored.complete
                    connection.finishReplay(topic: topic.stored, rows: stored.rows, hub: hub)
                }
                connection.reply(.subscribed(topic: label, replayed: replayed, complete: complete))
            } catch let error as WaybillError {
                connection.reply(.error(code: error.code, message: error.message, topic: label))
            } catch {
                app.logger.warning("Live subscription failed: \(String(describing: error))")
                connection.reply(.error(code: "unavailable", message: "Try again shortly.", topic: label))
            }
        }
    }

    struct Resolved {
        var stored: String
        var audience: LiveAudience
    }

    /// The stored topic behind what the client named, if this connection may see it (else 404 /
    /// 403 as the HTTP API would answer).
    func resolve(_ label: String) async throws -> Resolved {
        guard let topic = LiveTopic(label) else {
            throw WaybillError(.badRequest, "invalid_topic", "Topics are order:<id>, fleet, notifications and tracking:<token>.")
        }
        let identity = connection.identity
        let db = app.db
        switch topic {
        case .tracking(let token):
            if let allowed = identity.trackingToken, allowed != token { throw WaybillError.notFound }
            guard Tracking.isWellFormedToken(token), let order = try await Order.query(on: db).filter(\.$trackingToken == token).first() else {
                throw WaybillError.notFound
            }
            return Resolved(stored: LiveLog.orderTopic(order.id!), audience: .publicLink(token))
        case .order(let id):
            guard let userID = identity.userID, let order = try await Order.find(id, on: db) else { throw WaybillError.notFound }
            if identity.role == .manager || order.customerID == userID { return Resolved(stored: LiveLog.orderTopic(id), audience: .full) }
            if order.driverID == userID { return Resolved(stored: LiveLog.orderTopic(id), audience: .assignee(userID)) }
            throw WaybillError.notFound
        case .fleet:
            guard identity.role == .manager else { throw WaybillError.forbidden }
            return Resolved(stored: LiveLog.fleetTopic, audience: .full)
        case .notifications:
            guard let userID = identity.userID else { throw WaybillError.forbidden }
            return Resolved(stored: LiveLog.userTopic(userID), audience: .full)
        }
    }
}
