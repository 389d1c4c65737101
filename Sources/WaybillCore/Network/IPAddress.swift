import Foundation

/// An IPv4 or IPv6 address, parsed from text without the platform's resolver (so that the same
/// rules hold on every platform and in tests).
public struct IPAddress: Hashable, Sendable, CustomStringConvertible {
    /// 4 bytes for IPv4, 16 for IPv6.
    public let bytes: [UInt8]

    public var isV4: Bool { bytes.count == 4 }

    public init?(bytes: [UInt8]) {
        guard bytes.count == 4 || bytes.count == 16 else { return nil }
        self.bytes = bytes
    }

    /// Parses `192.0.2.1`, `2001:db8::1`, `[2001:db8::1]`, `::ffff:192.0.2.1`. Zone ids (`fe80::1%eth0`),
    /// leading zeros in IPv4 parts (ambiguous: octal to some parsers) and anything else are refused.
    public init?(_ raw: String) {
        var text = Substring(raw)
        if text.hasPrefix("["), text.hasSuffix("]") { text = text.dropFirst().dropLast() }
        guard !text.isEmpty, text.utf8.count <= 64 else { return nil }
        if text.contains(":") {
            guard let bytes = Self.parseV6(text) else { return nil }
            self.bytes = bytes
        } else {
            guard let bytes = Self.parseV4(text) else { return nil }
            self.bytes = bytes
        }
    }

    private static func parseV4(_ text: Substring) -> [UInt8]? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var bytes: [UInt8] = []
        for part in parts {
            guard !part.isEmpty, part.count <= 3, part.allSatisfy({ $0.isASCII && $0.isNumber }),
                  part == "0" || !part.hasPrefix("0"), let value = UInt8(part) else { return nil }
            bytes.append(value)
        }
        return bytes
    }

    private static func parseV6(_ text: Substring) -> [UInt8]? {
        // At most one "::", which stands for as many zero groups as are missing.
        let halves = text.components(separatedBy: "::")
        guard halves.count <= 2 else { return nil }
        func groups(_ part: String, allowV4Tail: Bool) -> [UInt8]? {
            if part.isEmpty { return [] }
            let items = part.split(separator: ":", omittingEmptySubsequences: false)
            var bytes: [UInt8] = []
            for (index, item) in items.enumerated() {
                if allowV4Tail, index == items.count - 1, item.contains(".") {
                    guard let v4 = parseV4(item) else { return nil }
                    bytes += v4
                    continue
                }
                guard (1...4).contains(item.count), item.allSatisfy(\.isHexDigit), let value = UInt16(item, radix: 16) else { return nil }
                bytes += [UInt8(value >> 8), UInt8(value & 0xff)]
            }
            return bytes
        }
        if halves.count == 1 {
            guard let bytes = groups(halves[0], allowV4Tail: true), bytes.count == 16 else { return nil }
            return bytes
        }
        guard let head = groups(halves[0], allowV4Tail: false), let tail = groups(halves[1], allowV4Tail: true),
              head.count + tail.count <= 14 else { return nil }
        return head + [UInt8](repeating: 0, count: 16 - head.count - tail.count) + tail
    }

    /// The IPv4 address inside an IPv4-mapped (`::ffff:a.b.c.d`) or NAT64 (`64:ff9b::a.b.c.d`) IPv6 address.
    public var embeddedV4: IPAddress? {
        guard !isV4 else { return nil }
        let mapped = bytes[0..<10].allSatisfy { $0 == 0 } && bytes[10] == 0xff && bytes[11] == 0xff
        let nat64 = bytes[0..<12] == [0x00, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0]
        return mapped || nat64 ? IPAddress(bytes: Array(bytes[12..<16])) : nil
    }

    /// False for loopback, private, link-local, shared (CGNAT), unspecified, multicast, reserved and
    /// documentation ranges: addresses a server must never be steered to by someone else's input.
    public var isPublic: Bool {
        if let v4 = embeddedV4 { return v4.isPublic }
        return !Self.nonPublic.contains { $0.contains(self) }
    }

    /// Each literal parses (`HostileInputTests.publicness` tries an address in every one).
    private static let nonPublic: [CIDR] = [
        "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
        "192.0.0.0/24", "192.0.2.0/24", "192.88.99.0/24", "192.168.0.0/16", "198.18.0.0/15", "198.51.100.0/24",
        "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4",
        "::/127", "100::/64", "2001::/23", "2001:db8::/32", "2002::/16", "fc00::/7", "fe80::/10", "fec0::/10", "ff00::/8",
    ].compactMap { CIDR($0) }

    public var description: String {
        if isV4 { return bytes.map(String.init).joined(separator: ".") }
        var groups: [String] = []
        for index in stride(from: 0, to: 16, by: 2) {
            groups.append(String(UInt16(bytes[index]) << 8 | UInt16(bytes[index + 1]), radix: 16))
        }
        // The longest run of two or more zero groups becomes "::".
        var best = (start: -1, length: 0), current = (start: -1, length: 0)
        for (index, group) in groups.enumerated() {
            if group == "0" {
                current = current.start < 0 ? (index, 1) : (current.start, current.length + 1)
                if current.length > best.length { best = current }
            } else {
                current = (-1, 0)
            }
        }
        guard best.length >= 2 else { return groups.joined(separator: ":") }
        let head = groups[..<best.start].joined(separator: ":")
        let tail = groups[(best.start + best.length)...].joined(separator: ":")
        return head + "::" + tail
    }
}

/// A block of addresses: `10.0.0.0/8`, `2001:db8::/32`, or one address (`192.0.2.7`).
public struct CIDR: Hashable, Sendable {
    public let network: IPAddress
    public let prefix: Int

    public init?(_ raw: String) {
        let parts = raw.trimmingCharacters(in: .whitespaces).split(separator: "/", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), let address = IPAddress(String(parts[0])) else { return nil }
        let maxPrefix = address.bytes.count * 8
        if parts.count == 2 {
            guard parts[1].count <= 3, parts[1].allSatisfy({ $0.isASCII && $0.isNumber }), let prefix = Int(parts[1]),
                  prefix <= maxPrefix else { return nil }
            self.prefix = prefix
        } else {
            self.prefix = maxPrefix
        }
        network = address
    }


    public func contains(_ address: IPAddress) -> Bool {
        // An IPv4 block also holds the IPv4-mapped spelling of its addresses.
        let candidate = network.isV4 && !address.isV4 ? (address.embeddedV4 ?? address) : address
        guard candidate.bytes.count == network.bytes.count else { return false }
        var remaining = prefix
        for index in 0..<network.bytes.count where remaining > 0 {
            let bits = min(8, remaining)
            let mask = UInt8(truncatingIfNeeded: 0xff << (8 - bits))
            if candidate.bytes[index] & mask != network.bytes[index] & mask { return false }
            remaining -= bits
        }
        return true
    }

    /// `TRUSTED_PROXIES`: a comma-separated list. Nil (with the bad entry) if any entry is not a block.
    public static func parseList(_ raw: String) -> Result<[CIDR], BadEntry> {
        var blocks: [CIDR] = []
        for entry in raw.split(separator: ",") where !entry.trimmingCharacters(in: .whitespaces).isEmpty {
            guard let block = CIDR(String(entry)) else { return .failure(BadEntry(text: String(entry))) }
            blocks.append(block)
        }
        return .success(blocks)
    }

    public struct BadEntry: Error, Equatable { public let text: String }
}

/// Who a request came from, when a reverse proxy may stand in between.
///
/// The socket's peer is the client unless it is one of the operator's `trusted` proxies. Then the
/// forwarding headers are read from the right (the hop nearest to us): trusted proxies are skipped,
/// and the first address that is not one is the client. Anything left of it was written by the client
/// and is ignored. `Forwarded` (RFC 7239) is used when present, `X-Forwarded-For` otherwise.
public enum ClientAddressPolicy {
    public static func resolve(peer: String?, forwarded: [String], forwardedFor: [String], trusted: [CIDR]) -> String {
        guard let peer, let peerAddress = IPAddress(peer) else { return peer ?? "unknown" }
        guard isTrusted(peerAddress, trusted) else { return peerAddress.description }
        let hops = forwarded.isEmpty ? forwardedForHops(forwardedFor) : forwardedHops(forwarded)
        var client = peerAddress
        for hop in hops.reversed() {
            guard let address = IPAddress(hop) else { break }  // garbage: keep the last address we could trust
            client = address
            if !isTrusted(address, trusted) { break }
        }
        return client.description
    }

    private static func isTrusted(_ address: IPAddress, _ trusted: [CIDR]) -> Bool {
        trusted.contains { $0.contains(address) }
    }

    static func forwardedForHops(_ headers: [String]) -> [String] {
        headers.flatMap { $0.split(separator: ",") }.map { $0.trimmingCharacters(in: .whitespaces) }.prefix(64).map { $0 }
    }

    /// The `for=` of each element of `Forwarded: for=192.0.2.60;proto=http, for="[2001:db8::1]:4711"`.
    static func forwardedHops(_ headers: [String]) -> [String] {
        var hops: [String] = []
        for element in headers.flatMap({ $0.split(separator: ",") }).prefix(64) {
            var found = "unknown"
            for pair in element.split(separator: ";") {
                let kv = pair.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                guard kv.count == 2, kv[0].lowercased() == "for" else { continue }
                var value = kv[1]
                if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 { value = String(value.dropFirst().dropLast()) }
                if value.hasPrefix("["), let close = value.firstIndex(of: "]") {
                    value = String(value[value.index(after: value.startIndex)..<close])
                } else if value.filter({ $0 == ":" }).count == 1, let colon = value.firstIndex(of: ":") {
                    value = String(value[..<colon])  // IPv4 with a port
                }
                found = value
            }
            hops.append(found)
        }
        return hops
    }
}
