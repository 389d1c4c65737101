import Fluent
import Foundation
import SQLKit
import Vapor
import NIOCore
import NIOHTTP1
import NIOWebSocket
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

    static func issue(for principal: Principal?, trackingToken: String?, clientAddress: String, app: Application,
                      db: any Database) async throws -> Issued {
        if principal == nil {
            // Without an account, only the viewer of a tracking link that works gets a ticket: a few
            // a minute per address (each is a write), and unknown links count as guesses.
            guard let token = trackingToken else { throw WaybillError.unauthenticated }
            let services = app.waybill
            if let wait = services.publicTicketLimiter.take(clientAddress) {
                throw WaybillError.tooManyRequests(retryAfter: wait)
            }
            _ = try await Tracking.lookUp(token: token, clientAddress: clientAddress, services: services, db: db)
        }
        let ticket = TokenService.newRefreshToken()
        let expiresAt = UnixTime.nowMillis + lifetimeMillis
        guard let sql = db.tracedSQL else { throw Abort(.internalServerError) }
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
        guard !ticket.isEmpty, ticket.count <= 100, let sql = db.tracedSQL else { return nil }
        let row = try await sql.select().column("expires_at").from("live_tickets")
            .where("ticket_hash", .equal, SQLBind(TokenService.hash(ticket))).first()
        guard let row, try row.decode(column: "expires_at", as: Int64.self) > UnixTime.nowMillis else { return nil }
        return LiveIdentity()
    }

    /// The identity behind a ticket, which is used up. Nil if unknown, used or expired.
    static func redeem(_ ticket: String, app: Application, db: any Database) async throws -> LiveIdentity? {
        guard !ticket.isEmpty, ticket.count <= 100, let sql = db.tracedSQL else { return nil }
        let rows = try await app.writeLock.withLock {
            try await sql.delete(from: "live_tickets").where("ticket_hash", .equal, SQLBind(TokenService.hash(ticket)))
                .returning("user_id", "session_id", "tracking_token", "expires_at").all()
        }
        guard let row = rows.first, try row.decode(column: "expires_at", as: Int64.self) > UnixTime.nowMillis else { return nil }
        if !(try row.decodeNil(column: "tracking_token")) {
            return LiveIdentity(trackingToken: try row.decode(column: "tracking_token", as: String.self))
        }
        let userID = UserID(rawValue: try row.decode(column: "user_id", as: UUID.self))
        let sessionID = SignInID(rawValue: try row.decode(column: "session_id", as: UUID.self))
        // The account and the session must still be good now, not only when the ticket was made.
        guard let user = try await User.find(userID, on: db), !user.isBanned,
              let session = try await Session.find(sessionID, on: db), session.revokedAt == nil else { return nil }
        return LiveIdentity(userID: userID, sessionID: sessionID, caller: user.caller(id: userID), user: user)
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
                    throw WaybillError(.forbidden, .originNotAllowed, "This origin may not open the live channel.")
                }
            }
            guard let ticket = req.query[String.self, at: "ticket"] else {
                throw WaybillError(.unauthorized, .ticketRequired, "Open the live channel with a ticket from POST /api/v1/live/ticket.")
            }
            let upgrading = req.headers.first(name: .upgrade)?.lowercased() == "websocket"
            // A plain GET does not use the ticket up.
            guard let identity = upgrading ? try await LiveTickets.redeem(ticket, app: req.application, db: req.db)
                                           : try await LiveTickets.peek(ticket, db: req.db) else {
                throw WaybillError(.unauthorized, .invalidTicket, "The ticket is unknown, used or expired; ask for a new one.")
            }
            guard upgrading else {
                throw WaybillError(.badRequest, .websocketRequired, "This endpoint speaks WebSocket only.")
            }
            let app = req.application
            let hub = app.waybill.live
            // Open connections per account and per address are limited: refused before the upgrade,
            // and checked again as the connection joins the hub (two upgrades may race past the first).
            let address = req.clientAddress
            let limits = LiveHub.Limits(perAccount: config.liveMaxSocketsPerAccount, perAddress: config.liveMaxSocketsPerAddress)
            guard hub.hasRoom(account: identity.userID, address: address, limits) else {
                throw WaybillError.tooManyConnections
            }
            let pingSeconds = Int64(max(1, min(25, config.httpIdleTimeoutSeconds / 2)))
            let response = Response(status: .switchingProtocols)
            response.upgrader = BoundedWebSocketUpgrader { socket in
                // On the socket's event loop: handlers are in place before the first frame is read.
                let connection = LiveConnection(identity: identity, socket: socket, clientAddress: address)
                guard hub.add(connection, limits) else {
                    connection.close(code: .policyViolation, reason: "too_many_connections")
                    return
                }
                // Pings keep a quiet connection inside the server's idle timeout.
                socket.pingInterval = .seconds(pingSeconds)
                let (commands, input) = AsyncStream.makeStream(of: String.self, bufferingPolicy: .bufferingNewest(64))
                socket.onText { _, text in input.yield(text) }
                socket.onBinary { _, _ in input.yield("") }
                socket.onClose.whenComplete { _ in input.finish() }
                Task { await serve(commands, connection: connection, app: app) }
            }
            return response
        }
    }

    /// The live channel's limits on what a client sends: 16 KB a frame and 64 KB a message, however
    /// many continuation frames it is cut into (past that the connection closes with 1009 and what
    /// was gathered is freed). Vapor's own upgrader gathers messages without a bound.
    static let maxFrameSize = 16 * 1024
    static let maxMessageSize = 64 * 1024

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
            connection.reply(.error(code: ErrorCode.invalidCommand.rawValue, message: #"Send {"type": "subscribe", "topic": …}, "unsubscribe", "ping" or "report"."#, topic: nil))
            return
        }
        switch command {
        case .ping:
            connection.reply(.pong)
        case .report(let ref, let positions):
            connection.reply(.reported(await report(ref: ref, positions)))
        case .unsubscribe(let label):
            if let topic = try? await resolve(label) {
                hub.unsubscribe(connection, from: topic.stored)
                connection.end(topic: topic.stored)
            }
            connection.reply(.unsubscribed(topic: label))
        case .subscribe(let label, let since):
            do {
                guard LiveCommand.isValidSince(since) else {
                    throw WaybillError(.badRequest, .invalidSince, "since is the id of an event you received: a whole number from 0 to 2^53-1.")
                }
                let topic = try await resolve(label)
                if !connection.isSubscribed(topic.stored), connection.subscriptionCount >= LiveConnection.maxSubscriptions {
                    throw WaybillError(.tooManyRequests, .tooManySubscriptions, "At most \(LiveConnection.maxSubscriptions) topics per connection.")
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
                connection.reply(.error(code: error.code.rawValue, message: error.message, topic: label))
            } catch {
                app.logger.warning("Live subscription failed: \(String(describing: error))")
                connection.reply(.error(code: ErrorCode.unavailable.rawValue, message: "Try again shortly.", topic: label))
            }
        }
    }

    /// Positions over the socket: what `POST /drivers/me/locations` does, for the account the
    /// connection was opened for (it closes when that session ends or the account's access changes),
    /// without an HTTP request and a session check for each report.
    func report(ref: String?, _ positions: [PositionReport]) async -> LiveReportReceipt {
        guard (ref?.utf8.count ?? 0) <= 100 else {
            return LiveReportReceipt(ref: nil, error: .init(code: ErrorCode.invalidCommand.rawValue, message: "ref is at most 100 bytes."))
        }
        guard let user = connection.identity.user, let session = connection.identity.sessionID else {
            return LiveReportReceipt(ref: ref, error: .init(code: ErrorCode.forbidden.rawValue, message: "Only a signed-in driver reports positions."))
        }
        let services = app.waybill, db = app.db, logger = app.logger
        do {
            let reported = try await services.run {
                try await Tracking(services: services, db: db, logger: logger).report(positions, by: Principal(user: user, sessionID: session))
            }
            return LiveReportReceipt(ref: ref, accepted: reported.accepted, ignored: reported.ignored, orders: reported.orders)
        } catch let error as WaybillError {
            return LiveReportReceipt(ref: ref, error: .init(code: error.code.rawValue, message: error.message, fields: error.fields))
        } catch {
            logger.warning("Live position report failed: \(String(describing: error))")
            return LiveReportReceipt(ref: ref, error: .init(code: ErrorCode.unavailable.rawValue, message: "Try again shortly."))
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
            throw WaybillError(.badRequest, .invalidTopic, "Topics are order:<id>, fleet, notifications, tracking:<token> and conversation:<id>.")
        }
        let identity = connection.identity
        let db = app.db
        switch topic {
        case .tracking(let token):
            if let allowed = identity.trackingToken, allowed != token { throw WaybillError.notFound }
            // Guesses over the socket count against the address like guesses over HTTP.
            let order = try await Tracking.lookUp(token: token, clientAddress: connection.clientAddress, services: app.waybill, db: db)
            return Resolved(stored: LiveLog.orderTopic(try order.storedID), audience: .publicLink(token))
        case .order(let id):
            guard let caller = identity.caller, let order = try await Order.find(id, on: db) else { throw WaybillError.notFound }
            switch OrderPolicy.liveFeed(for: OrderPolicy.capacities(of: caller, for: order.parties)) {
            case .full: return Resolved(stored: LiveLog.orderTopic(id), audience: .full)
            case .assignee: return Resolved(stored: LiveLog.orderTopic(id), audience: .assignee(caller.id))
            case .receiver: return Resolved(stored: LiveLog.orderTopic(id), audience: .receiver)
            case nil: throw WaybillError.notFound
            }
        case .fleet:
            guard identity.caller?.may(.dispatch) == true else { throw WaybillError.forbidden }
            return Resolved(stored: LiveLog.fleetTopic, audience: .full)
        case .notifications:
            guard let userID = identity.userID else { throw WaybillError.forbidden }
            return Resolved(stored: LiveLog.userTopic(userID), audience: .full)
        case .conversation(let id):
            // Its participants and staff, as `GET /conversations/{id}` (404 otherwise).
            guard let caller = identity.caller else { throw WaybillError.notFound }
            _ = try await Conversations(services: app.waybill, db: db, logger: app.logger).load(id, for: caller)
            return Resolved(stored: LiveTopic.conversation(id).name, audience: .full)
        }
    }
}

/// Upgrades to a WebSocket whose messages are bounded (see `LiveSocket.maxMessageSize`).
struct BoundedWebSocketUpgrader: Upgrader {
    let onUpgrade: @Sendable (WebSocket) -> Void

    init(onUpgrade: @escaping @Sendable (WebSocket) -> Void) {
        self.onUpgrade = onUpgrade
    }

    func applyUpgrade(req: Request, res: Response) -> any HTTPServerProtocolUpgrader {
        var configuration = WebSocket.Configuration()
        configuration.maxAccumulatedFrameSize = LiveSocket.maxMessageSize
        configuration.maxAccumulatedFrameCount = LiveSocket.maxMessageSize / 64
        // Fragments smaller than this (but the last) are a way to burn CPU, not to send a command.
        configuration.minNonFinalFragmentSize = 64
        let onUpgrade = self.onUpgrade, settings = configuration
        return NIOWebSocketServerUpgrader(maxFrameSize: LiveSocket.maxFrameSize, automaticErrorHandling: true,
                                          shouldUpgrade: { channel, _ in channel.eventLoop.makeSucceededFuture([:]) },
                                          upgradePipelineHandler: { channel, _ in
            // Nearer the socket than WebSocket's own handlers: each frame is written and flushed
            // on its own, and this makes the frames of one batch leave in one system call.
            do { try channel.pipeline.syncOperations.addHandler(FlushCoalescingHandler()) } catch {
                return channel.eventLoop.makeFailedFuture(error)
            }
            return WebSocket.server(on: channel, config: settings, onUpgrade: onUpgrade)
        })
    }
}

/// Turns the flushes asked for while the event loop runs one task into a single flush right after
/// it. A live socket's frames are handed over in batches (`LiveConnection.drain`: a position and
/// its ETA, or a fleet map's dozens of drivers), each frame written and flushed by WebSocketKit;
/// one `writev` for the batch instead of one per frame was a quarter of the server's time at ten
/// thousand subscribers. Netty's `FlushConsolidationHandler` does the same.
final class FlushCoalescingHandler: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = NIOAny
    typealias OutboundOut = NIOAny

    private var flushPending = false

    init() {}

    func flush(context: ChannelHandlerContext) {
        guard !flushPending else { return }
        flushPending = true
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        context.eventLoop.execute {
            let (handler, context) = bound.value
            handler.flushNow(context: context)
        }
    }

    /// Whatever waits goes out before the socket closes.
    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        flushNow(context: context)
        context.close(mode: mode, promise: promise)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        flushNow(context: context)
    }

    private func flushNow(context: ChannelHandlerContext) {
        guard flushPending else { return }
        flushPending = false
        context.flush()
    }
}
