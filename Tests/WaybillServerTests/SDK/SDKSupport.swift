import Foundation
import Testing
import Vapor
import WaybillClient
@testable import WaybillServer

extension TestServer {
    /// The API's base URL when serving on `port`.
    static func apiURL(port: Int) -> URL { URL(string: "http://127.0.0.1:\(port)/api/v1")! }

    /// A WaybillSession against this server on `port`, as an app would make one.
    func sdk(port: Int, store: any TokenStore = InMemoryTokenStore(), refreshLeeway: TimeInterval = 60) -> WaybillSession {
        WaybillSession(serverURL: Self.apiURL(port: port), tokenStore: store, refreshLeeway: refreshLeeway)
    }

    /// Stops serving HTTP: every open connection (live sockets included) is closed and the port
    /// refuses connections, as when the server process stops. The database and in-memory calls
    /// (`send`) go on working.
    func stopHTTP() async {
        app.waybill.live.closeAll()
        await app.server.shutdown()
    }

    /// Serves HTTP again on the same port.
    func startHTTP(port: Int) async throws {
        try await app.server.start(address: .hostname("127.0.0.1", port: port))
    }

    /// An access token for the same session as `token` that expired an hour ago, as a device whose
    /// app slept past the token's lifetime would hold.
    func expiredCopy(of token: String) async throws -> String {
        let claims = try await app.waybill.tokens.verifyAccessToken(token)
        return try await app.waybill.tokens.accessToken(
            userID: UserID(uuidString: claims.sub.value)!, role: Role(rawValue: claims.role)!,
            sessionID: SignInID(uuidString: claims.sid)!, now: Date().addingTimeInterval(-3600))
    }

    /// How many refresh tokens the server issued for the session `token` belongs to (one at
    /// sign-in, one per refresh).
    func refreshTokensIssued(forSessionOf token: String) async throws -> Int {
        let claims = try await app.waybill.tokens.verifyAccessToken(token)
        let session = SignInID(uuidString: claims.sid)!
        return try await RefreshToken.query(on: db).all().filter { $0.$session.id == session }.count
    }
}

/// Collects what a live stream delivers, so a test can wait for what it expects.
actor LiveRecorder {
    private(set) var updates: [LiveUpdate] = []
    private(set) var failure: (any Error)?
    private(set) var finished = false
    private var task: Task<Void, Never>?

    func start(_ stream: AsyncThrowingStream<LiveUpdate, any Error>) {
        task = Task {
            do {
                for try await update in stream { self.append(update) }
                self.finish(nil)
            } catch {
                self.finish(error)
            }
        }
    }

    private func append(_ update: LiveUpdate) { updates.append(update) }
    private func finish(_ error: (any Error)?) {
        failure = error
        finished = true
    }

    func stop() { task?.cancel() }

    var events: [LiveEvent] { updates.compactMap { if case .event(let event) = $0 { event } else { nil } } }
    var statuses: [String] { events.compactMap { if case .status(let change) = $0.payload { change.status } else { nil } } }
    var connections: Int { updates.filter { $0 == .connected }.count }
    var disconnections: Int { updates.filter { if case .disconnected = $0 { true } else { false } }.count }

    /// Waits until `condition` holds (the test's time limit bounds the wait).
    func wait(for what: String, _ condition: @Sendable (LiveRecorder) async -> Bool) async throws {
        while !(await condition(self)) {
            if finished { throw LiveRecorderEnded(what: what, failure: failure.map { String(describing: $0) }) }
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}

struct LiveRecorderEnded: Error, CustomStringConvertible {
    var what: String
    var failure: String?
    var description: String { "the live stream ended before \(what): \(failure ?? "finished")" }
}

/// Waits until `condition` holds, checking every 20 ms; fails after `seconds` (a hung test is the worst failure).
func eventually(within seconds: Int = 60, _ condition: () async throws -> Bool,
                sourceLocation: SourceLocation = #_sourceLocation) async throws {
    let deadline = ContinuousClock.now + .seconds(seconds)
    while !(try await condition()) {
        guard ContinuousClock.now < deadline else { throw ConditionNeverHeld(seconds: seconds, sourceLocation: sourceLocation) }
        try await Task.sleep(for: .milliseconds(20))
    }
}

struct ConditionNeverHeld: Error, CustomStringConvertible {
    var seconds: Int
    var sourceLocation: SourceLocation
    var description: String { "the condition waited for at \(sourceLocation) did not hold within \(seconds) s" }
}
