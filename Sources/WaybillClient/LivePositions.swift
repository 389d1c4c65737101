import Foundation

/// A driver's positions over the live channel: `report` commands on a connection of this
/// channel's own, opened when first needed and again after it drops.
///
/// The server stores them as it stores ``WaybillSession/reportPositions(_:)``'s, with the same
/// rules and limits, but without an HTTP request and a session check for each report: for an app
/// that reports every second all day. ``PositionUploader`` uses one when made with
/// `overLiveChannel: true`. Times travel to the millisecond.
public actor LivePositionChannel {
    public let session: WaybillSession
    let heartbeat: Duration?
    private var socket: (any LiveSocket)?
    private var reader: Task<Void, Never>?
    private var waiting: [String: CheckedContinuation<LiveReportReceipt, any Error>] = [:]
    private var counter = 0
    /// Counts connections, so that a connection that ended forgets itself only if it is the current one.
    private var generation = 0

    public init(session: WaybillSession, heartbeat: Duration? = .seconds(20)) {
        self.session = session
        self.heartbeat = heartbeat
    }

    /// Sends positions (at most 500) and returns what the server stored. A refusal throws
    /// ``WaybillError/server(_:)`` with the status, code and fields the HTTP call would have had
    /// (409 `off_duty`, 422 `validation_failed` naming each point, 429 `rate_limited`, 403…); a lost
    /// connection throws ``WaybillError/transport(_:)``, and the next call opens a new one.
    public func report(_ positions: [PositionReport]) async throws(WaybillError) -> LiveReportReceipt {
        let receipt: LiveReportReceipt
        do {
            let socket = try await connected()
            counter += 1
            let ref = "p\(counter)"
            let text = String(decoding: try JSONEncoder().encode(LiveCommand.report(ref: ref, positions: positions)), as: UTF8.self)
            receipt = try await withCheckedThrowingContinuation { continuation in
                waiting[ref] = continuation
                Task {
                    do { try await socket.send(text) } catch { self.fail(ref, error) }
                }
            }
        } catch {
            throw WaybillError.from(error)
        }
        if let refusal = receipt.error {
            throw WaybillError.server(ServerProblem(status: Self.status(of: refusal.code), code: refusal.code, message: refusal.message,
                                                    fields: refusal.fields ?? [:]))
        }
        return receipt
    }

    /// Closes the connection (answers still awaited fail).
    public func close() async {
        reader?.cancel()
        reader = nil
        let socket = self.socket
        self.socket = nil
        failAll("closed")
        await socket?.close()
    }

    /// The HTTP status `POST /drivers/me/locations` answers with for an error code.
    static func status(of code: String) -> Int {
        switch code {
        case "validation_failed": 422
        case "off_duty": 409
        case "rate_limited": 429
        case "forbidden", "account_suspended": 403
        case "unavailable": 503
        default: 400
        }
    }

    private func connected() async throws -> any LiveSocket {
        if let socket { return socket }
        try await session.authenticator.requireSignedIn()
        let ticket = try await session.call { client in
            try await client.createLiveTicket(body: .json(.init(trackingToken: nil))).created.body.json
        }
        let socket = try await session.socketFactory.connect(to: session.liveURL(ticket: ticket.ticket), heartbeat: heartbeat)
        self.socket = socket
        generation += 1
        let mine = generation
        reader = Task { await self.read(socket, generation: mine) }
        return socket
    }

    private func read(_ socket: any LiveSocket, generation mine: Int) async {
        do {
            for try await text in socket.messages {
                guard case .reply(let reply)? = try? JSONDecoder().decode(LiveServerMessage.self, from: Data(text.utf8)) else { continue }
                switch reply {
                case .reported(let receipt):
                    if let ref = receipt.ref { waiting.removeValue(forKey: ref)?.resume(returning: receipt) }
                case .error(let code, _, nil):
                    // The connection is ending (`session_ended`, `server_stopping`…).
                    failAll(code)
                default:
                    break
                }
            }
        } catch {}
        guard generation == mine else { return }
        self.socket = nil
        failAll("the live connection closed")
    }

    private func fail(_ ref: String, _ error: any Error) {
        waiting.removeValue(forKey: ref)?.resume(throwing: error)
    }

    private func failAll(_ reason: String) {
        let all = waiting
        waiting = [:]
        for continuation in all.values { continuation.resume(throwing: WaybillError.transport(reason)) }
    }
}
