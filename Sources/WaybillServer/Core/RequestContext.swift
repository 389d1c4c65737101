import Vapor
import WaybillCore

/// The Vapor request being served. Handlers implement the generated `APIProtocol` and never see
/// Vapor's `Request`; this task-local, set by `ClockMiddleware` around every request, gives them
/// the database, logger and client address, and gives the audit log the request id and address of
/// a staff action made through the API or the web app.
enum RequestContext {
    @TaskLocal static var current: Request?

    static var request: Request {
        get throws {
            guard let current else { throw Abort(.internalServerError, reason: "No request context.") }
            return current
        }
    }
}

/// Binds the application's clock (`UnixTime.clock`), randomness (`Randomness.current`) and the
/// request itself (`RequestContext.current`) around each request.
struct ClockMiddleware: AsyncMiddleware {
    let clock: WaybillClock
    let random: WaybillRandom

    func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        try await RequestContext.$current.withValue(request) {
            try await withApplicationContext(clock: clock, random: random) { try await next.respond(to: request) }
        }
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

extension HTTPHeaders {
    /// The token of `Authorization: Bearer <token>`, as Vapor's `bearerAuthorization` reads it (two
    /// parts between spaces, the scheme in any case), found over the header's bytes: Vapor's getter
    /// splits the whole header into `Character`s, which cost 2 % of a price quote's time, twice per
    /// request (docs/performance.md).
    var bearerToken: String? {
        guard let value = first(name: .authorization) else { return nil }
        let parts = value.utf8.split(separator: UInt8(ascii: " "))
        guard parts.count == 2, parts[0].count == 6,
              zip(parts[0], "bearer".utf8).allSatisfy({ $0 | 0x20 == $1 }) else { return nil }
        return String(Substring(parts[1]))
    }
}
