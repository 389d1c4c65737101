import Vapor

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

extension Request {
    /// The client's address as the socket saw it. `X-Forwarded-For` is ignored: anyone can send it.
    var clientAddress: String {
        remoteAddress?.ipAddress ?? "unknown"
    }
}
