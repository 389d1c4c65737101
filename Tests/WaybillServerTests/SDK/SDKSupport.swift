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

    /// Who waits for the next update (`wait(for:)`), woken by it: no looking again every few milliseconds.
    fileprivate var waiters: [CheckedContinuation<Void, Never>] = []

    private func append(_ update: LiveUpdate) {
        updates.append(update)
        wake()
    }
    private func finish(_ error: (any Error)?) {
        failure = error
        finished = true
        wake()
    }
    fileprivate func wake() {
        let woken = waiters
        waiters = []
        for waiter in woken { waiter.resume() }
    }

    func stop() { task?.cancel() }

    var events: [LiveEvent] { updates.compactMap { if case .event(let event) = $0 { event } else { nil } } }
    var statuses: [String] { events.compactMap { if case .status(let change) = $0.payload { change.status } else { nil } } }
    var connections: Int { updates.filter { $0 == .connected }.count }
    var disconnections: Int { updates.filter { if case .disconnected = $0 { true } else { false } }.count }

    /// Waits until `condition` holds, looking again after each update (the test's time limit bounds
    /// the wait: its cancellation ends it).
    func wait(for what: String, _ condition: @Sendable (LiveRecorder) async -> Bool) async throws {
        while !(await condition(self)) {
            if finished { throw LiveRecorderEnded(what: what, failure: failure.map { String(describing: $0) }) }
            try Task.checkCancellation()
            await withTaskCancellationHandler {
                await withCheckedContinuation { waiters.append($0) }
            } onCancel: {
                Task { await self.wake() }
            }
        }
    }
}

extension LiveRecorder {
    /// Waits for the stream to end, woken by its end (the test's time limit bounds the wait).
    func untilFinished() async throws {
        while !finished {
            try Task.checkCancellation()
            await withTaskCancellationHandler {
                await withCheckedContinuation { waiters.append($0) }
            } onCancel: {
                Task { await self.wake() }
            }
        }
    }
}

struct LiveRecorderEnded: Error, CustomStringConvertible {
    var what: String
    var failure: String?
    var description: String { "the live stream ended before \(what): \(failure ?? "finished")" }
}

extension PositionUploader {
    /// Waits until the uploader's progress satisfies `condition`, woken by each change it reports
    /// (`progressUpdates()`); the test's time limit bounds the wait.
    func until(_ what: String, _ condition: @Sendable (Progress) -> Bool) async throws {
        for await progress in progressUpdates() where condition(progress) { return }
        throw UploaderNeverReached(what: what, last: progress)
    }
}

struct UploaderNeverReached: Error, CustomStringConvertible {
    var what: String
    var last: PositionUploader.Progress
    var description: String { "the uploader never reached \(what) (last: \(last))" }
}
