import AsyncHTTPClient
import Foundation
import NIOCore
import NIOPosix
import WaybillCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Web Push endpoints come from browsers, so anyone can name any host. Before a push is sent the
/// host is resolved here; if any of its addresses is private, loopback, link-local or otherwise not
/// public, nothing is sent. The connection then goes to the address that was checked (the name is
/// still used for TLS), so a DNS answer that changes between the check and the connection cannot
/// steer it elsewhere.
struct PushAddressGuard: Sendable {
    /// The client configuration pushes use (redirects refused, timeouts); `dnsOverride` is added per push.
    var configuration: HTTPClient.Configuration
    var resolve: @Sendable (String) async throws -> [IPAddress] = PushAddressGuard.systemResolve
    /// Which addresses may be pushed to (tests allow loopback for their local push service).
    var isAllowed: @Sendable (IPAddress) -> Bool = { $0.isPublic }

    enum Refusal: Error, Equatable { case unresolved, notPublic(String) }

    /// The address to connect to for `host`, or why not.
    func checkedAddress(for host: String) async throws -> IPAddress {
        if let literal = IPAddress(host) {
            guard isAllowed(literal) else { throw Refusal.notPublic(literal.description) }
            return literal
        }
        let addresses = try await resolve(host)
        guard let first = addresses.first else { throw Refusal.unresolved }
        if let bad = addresses.first(where: { !isAllowed($0) }) { throw Refusal.notPublic(bad.description) }
        return first
    }

    /// A client that connects to `address` whatever `host` resolves to meanwhile. Shut it down after use.
    func client(for host: String, address: IPAddress, group: any EventLoopGroup) -> HTTPClient {
        var configuration = self.configuration
        configuration.dnsOverride = [host: address.description]
        return HTTPClient(eventLoopGroup: group, configuration: configuration)
    }

    /// The system resolver (getaddrinfo), off the event loops.
    @Sendable static func systemResolve(_ host: String) async throws -> [IPAddress] {
        try await NIOThreadPool.singleton.runIfActive {
            var hints = addrinfo()
            hints.ai_family = AF_UNSPEC
            #if canImport(Glibc)
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
            #else
            hints.ai_socktype = SOCK_STREAM
            #endif
            var result: UnsafeMutablePointer<addrinfo>?
            guard getaddrinfo(host, nil, &hints, &result) == 0, let first = result else { return [] }
            defer { freeaddrinfo(first) }
            var addresses: [IPAddress] = []
            var cursor: UnsafeMutablePointer<addrinfo>? = first
            while let info = cursor {
                if let sockaddr = info.pointee.ai_addr {
                    switch Int32(sockaddr.pointee.sa_family) {
                    case AF_INET:
                        let bytes = sockaddr.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { pointer in
                            withUnsafeBytes(of: pointer.pointee.sin_addr) { Array($0) }
                        }
                        if let address = IPAddress(bytes: bytes) { addresses.append(address) }
                    case AF_INET6:
                        let bytes = sockaddr.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { pointer in
                            withUnsafeBytes(of: pointer.pointee.sin6_addr) { Array($0) }
                        }
                        if let address = IPAddress(bytes: bytes) { addresses.append(address) }
                    default: break
                    }
                }
                cursor = info.pointee.ai_next
            }
            return addresses
        }
    }
}
