import Foundation

/// A text WebSocket: the little of one the live channel needs. The SDK brings one for each platform
/// (`URLSessionWebSocketTask` on Apple platforms, SwiftNIO's websocket-kit on Linux); tests or apps
/// with their own networking can supply another through ``WaybillSession/init(serverURL:tokenStore:transport:refreshLeeway:liveSockets:)``.
public protocol LiveSocket: Sendable {
    /// Every text message received, in order; finishes when the connection closes.
    var messages: AsyncThrowingStream<String, any Error> { get }
    func send(_ text: String) async throws
    func close() async
}

/// Opens ``LiveSocket``s.
public protocol LiveSocketFactory: Sendable {
    /// Opens a WebSocket to `url`. With a `heartbeat`, the socket pings the server at that interval
    /// and closes itself when a ping goes unanswered for as long, so a connection that died silently
    /// (a phone changing networks, a router forgetting it) ends and can be replaced.
    func connect(to url: URL, heartbeat: Duration?) async throws -> any LiveSocket
}

/// The platform's WebSocket: `URLSessionWebSocketTask` on Apple platforms, websocket-kit on Linux.
/// (For wrapping, say to log; ``WaybillSession`` uses it unless given another factory.)
public func platformLiveSocketFactory() -> any LiveSocketFactory {
    #if canImport(Darwin)
    URLSessionLiveSocketFactory()
    #else
    NIOLiveSocketFactory()
    #endif
}

#if canImport(Darwin)
/// `URLSessionWebSocketTask`, on Apple platforms.
struct URLSessionLiveSocketFactory: LiveSocketFactory {
    func connect(to url: URL, heartbeat: Duration?) async throws -> any LiveSocket {
        let task = URLSession.shared.webSocketTask(with: url)
        task.maximumMessageSize = 1 << 20
        task.resume()
        return URLSessionLiveSocket(task: task, heartbeat: heartbeat)
    }
}

final class URLSessionLiveSocket: LiveSocket, @unchecked Sendable {
    let task: URLSessionWebSocketTask
    let messages: AsyncThrowingStream<String, any Error>
    let heartbeat: Task<Void, Never>?

    init(task: URLSessionWebSocketTask, heartbeat interval: Duration?) {
        self.task = task
        heartbeat = interval.map { interval in
            Task { [task] in
                // Ping; no pong within the interval: the connection is dead, cancel it (receive fails).
                while !Task.isCancelled {
                    try? await Task.sleep(for: interval)
                    let answered = PongFlag()
                    task.sendPing { error in if error == nil { answered.set() } }
                    try? await Task.sleep(for: interval)
                    if Task.isCancelled { return }
                    if !answered.isSet {
                        task.cancel(with: .goingAway, reason: nil)
                        return
                    }
                }
            }
        }
        messages = AsyncThrowingStream { continuation in
            let reader = Task {
                do {
                    while !Task.isCancelled {
                        switch try await task.receive() {
                        case .string(let text): continuation.yield(text)
                        case .data(let data): continuation.yield(String(decoding: data, as: UTF8.self))
                        @unknown default: break
                        }
                    }
                    continuation.finish()
                } catch {
                    // A close by either side ends the stream; the caller reconnects.
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in reader.cancel() }
        }
    }

    func send(_ text: String) async throws { try await task.send(.string(text)) }

    func close() async {
        heartbeat?.cancel()
        task.cancel(with: .goingAway, reason: nil)
    }
}

final class PongFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    func set() { lock.lock(); value = true; lock.unlock() }
    var isSet: Bool { lock.lock(); defer { lock.unlock() }; return value }
}
#else
import NIOCore
import NIOPosix
import NIOHTTP1
import WebSocketKit

/// SwiftNIO's WebSocket client (websocket-kit, no Vapor), on Linux.
struct NIOLiveSocketFactory: LiveSocketFactory {
    func connect(to url: URL, heartbeat: Duration?) async throws -> any LiveSocket {
        // websocket-kit pings at this interval and, when a pong is missing, closes the channel itself.
        let pingInterval = heartbeat.map { TimeAmount.nanoseconds(Int64($0.components.seconds) * 1_000_000_000 + $0.components.attoseconds / 1_000_000_000) }
        let (stream, continuation) = AsyncThrowingStream<String, any Error>.makeStream(bufferingPolicy: .unbounded)
        let group = MultiThreadedEventLoopGroup.singleton
        // The upgrade callback may run after the connect future completes: wait for the socket itself.
        let upgraded = group.any().makePromise(of: WebSocket.self)
        let scheme = url.scheme ?? "ws"
        do {
            try await WebSocket.connect(
                scheme: scheme, host: url.host ?? "localhost", port: url.port ?? (scheme == "wss" ? 443 : 80),
                path: url.path, query: url.query, configuration: .init(maxFrameSize: 1 << 20), on: group
            ) { socket in
                socket.pingInterval = pingInterval
                socket.onText { _, text in continuation.yield(text) }
                socket.onClose.whenComplete { _ in continuation.finish() }
                upgraded.succeed(socket)
            }.get()
        } catch {
            upgraded.fail(error)
            throw error
        }
        return NIOLiveSocket(socket: try await upgraded.futureResult.get(), messages: stream)
    }
}

struct NIOLiveSocket: LiveSocket {
    let socket: WebSocket
    let messages: AsyncThrowingStream<String, any Error>

    func send(_ text: String) async throws { try await socket.send(text) }

    func close() async { try? await socket.close(code: .goingAway).get() }
}
#endif
