import Vapor
import WaybillCore

/// The Vapor request a generated API handler is serving. Handlers implement the generated
/// `APIProtocol` and never see Vapor's `Request`; this task-local, set by `RequestContextMiddleware`
/// around each API call, gives them the database, logger and client address.
enum RequestContext {
    @TaskLocal static var current: Request?

    static var request: Request {
        get throws {
            guard let current else { throw Abort(.internalServerError, reason: "No request context.") }
            return current
        }
    }
}

struct RequestContextMiddleware: AsyncMiddleware {
    func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        try await RequestContext.$current.withValue(request) {
            try await next.respond(to: request)
        }
    }
}

/// Binds the application's clock (`UnixTime.clock`) and randomness (`Randomness.current`) around
/// each request.
struct ClockMiddleware: AsyncMiddleware {
    let clock: WaybillClock
    let random: WaybillRandom

    func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        try await withApplicationContext(clock: clock, random: random) { try await next.respond(to: request) }
    }
}

extension Request {
    /// The client's address: the socket's peer, or, when that peer is one of `TRUSTED_PROXIES`, the
    /// address the proxies' `Forwarded` / `X-Forwarded-For` name (anyone else's are ignored).
    var clientAddress: String {
        let trusted = application.waybillIfConfigured?.config.trustedProxies ?? []
        let peer = remoteAddress?.ipAddress
        guard !trusted.isEmpty else { return peer ?? "unknown" }
        return ClientAddressPolicy.resolve(peer: peer, forwarded: headers[.forwarded], forwardedFor: headers[.xForwardedFor],
                                           trusted: trusted)
    }
}
