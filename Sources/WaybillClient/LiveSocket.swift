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
    func connect(to url: URL) async throws -> any LiveSocket
}

func defaultLiveSocketFactory() -> any LiveSocketFactory {
    #if canImport(Darwin)
    URLSessionLiveSocketFactory()
    #else
    NIOLiveSocketFactory()
    #endif
}

#if canImport(Darwin)
/// `URLSessionWebSocketTask`, on Apple platforms.
struct URLSessionLiveSocketFactory: LiveSocketFactory {
    func connect(to url: URL) async throws -> any LiveSocket {
        let task = URLSession.shared.webSocketTask(with: url)
        task.maximumMessageSize = 1 << 20
        task.resume()
        return URLSessionLiveSocket(task: task)
    }
}

final class URLSessionLiveSocket: LiveSocket, @unchecked Sendable {
    let task: URLSessionWebSocketTask
    let messages: AsyncThrowingStream<String, any Error>

    init(task: URLSessionWebSocketTask) {
        self.task = task
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

    func close() async { task.cancel(with: .goingAway, reason: nil) }
}
#else
import NIOCore
import NIOPosix
import NIOHTTP1
import WebSocketKit

/// SwiftNIO's WebSocket client (websocket-kit, no Vapor), on Linux.
struct NIOLiveSocketFactory: LiveSocketFactory {
    func connect(to url: URL) async throws -> any LiveSocket {
        let (stream, continuation) = AsyncThrowingStream<String, any Error>.makeStream(bufferingPolicy: .unbounded)
        let box = SocketBox()
        let scheme = url.scheme ?? "ws"
        try await WebSocket.connect(
            scheme: scheme, host: url.host ?? "localhost", port: url.port ?? (scheme == "wss" ? 443 : 80),
            path: url.path, query: url.query, configuration: .init(maxFrameSize: 1 << 20),
            on: MultiThreadedEventLoopGroup.singleton
        ) { socket in
            box.set(socket)
            socket.onText { _, text in continuation.yield(text) }
            socket.onClose.whenComplete { _ in continuation.finish() }
        }.get()
        guard let socket = box.get() else { throw WaybillError.transport("the live channel did not open") }
        return NIOLiveSocket(socket: socket, messages: stream)
    }
}

final class SocketBox: @unchecked Sendable {
    private let lock = NSLock()
    private var socket: WebSocket?
    func set(_ socket: WebSocket) { lock.withLock { self.socket = socket } }
    func get() -> WebSocket? { lock.withLock { socket } }
}

struct NIOLiveSocket: LiveSocket {
    let socket: WebSocket
    let messages: AsyncThrowingStream<String, any Error>

    func send(_ text: String) async throws { try await socket.send(text) }

    func close() async { try? await socket.close(code: .goingAway).get() }
}
#endif
