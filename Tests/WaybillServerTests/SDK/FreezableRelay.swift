import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import WaybillClient

/// A TCP relay on a local port in front of the server, whose connections can be frozen: every byte
/// in either direction is then dropped while the connection stays open (no FIN, no RST), as when a
/// phone's network path dies silently. Connections made after freezing pass normally.
final class FreezableRelay: Sendable {
    let port: Int
    private let channel: any Channel
    /// One flag per relayed connection (frozen or not), and every channel, to close them at the end.
    private let connections: NIOLockedValueBox<[NIOLockedValueBox<Bool>]>
    private let channels: NIOLockedValueBox<[any Channel]>

    private init(port: Int, channel: any Channel, connections: NIOLockedValueBox<[NIOLockedValueBox<Bool>]>,
                 channels: NIOLockedValueBox<[any Channel]>) {
        self.port = port
        self.channel = channel
        self.connections = connections
        self.channels = channels
    }

    static func start(to target: Int) async throws -> FreezableRelay {
        let connections = NIOLockedValueBox<[NIOLockedValueBox<Bool>]>([])
        let channels = NIOLockedValueBox<[any Channel]>([])
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { inbound in
                let frozen = NIOLockedValueBox(false)
                connections.withLockedValue { $0.append(frozen) }
                let toClient = Pump(frozen: frozen, partner: inbound)
                return ClientBootstrap(group: inbound.eventLoop)
                    .channelInitializer { outbound in outbound.pipeline.addHandler(toClient) }
                    .connect(host: "127.0.0.1", port: target)
                    .flatMap { outbound in
                        channels.withLockedValue { $0 += [inbound, outbound] }
                        return inbound.pipeline.addHandler(Pump(frozen: frozen, partner: outbound))
                    }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return FreezableRelay(port: server.localAddress!.port!, channel: server, connections: connections, channels: channels)
    }

    /// Silences every connection open now.
    func freezeOpenConnections() {
        for frozen in connections.withLockedValue({ $0 }) { frozen.withLockedValue { $0 = true } }
    }

    /// Stops listening and closes every relayed connection (frozen ones too).
    func stop() async {
        try? await channel.close()
        for relayed in channels.withLockedValue({ $0 }) { try? await relayed.close() }
    }

    /// Copies what one side reads to the other, unless frozen.
    final class Pump: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        let frozen: NIOLockedValueBox<Bool>
        let partner: any Channel

        init(frozen: NIOLockedValueBox<Bool>, partner: any Channel) {
            self.frozen = frozen
            self.partner = partner
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let bytes = unwrapInboundIn(data)
            if frozen.withLockedValue({ $0 }) { return }
            partner.writeAndFlush(bytes, promise: nil)
        }

        func channelInactive(context: ChannelHandlerContext) {
            if !frozen.withLockedValue({ $0 }) { partner.close(promise: nil) }
            context.fireChannelInactive()
        }
    }
}

/// The platform's WebSocket, opened through the relay instead of directly (HTTP calls go direct).
struct LiveSocketsThroughRelay: LiveSocketFactory {
    let relayPort: Int

    func connect(to url: URL, heartbeat: Duration?) async throws -> any LiveSocket {
        var components = URLComponents(url: url, resolvingAgainstBaseURL: false)!
        components.port = relayPort
        return try await platformLiveSocketFactory().connect(to: components.url!, heartbeat: heartbeat)
    }
}
