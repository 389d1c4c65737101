import Foundation
import Testing
@testable import WaybillCore

@Suite("Addresses: parsing, blocks, what is public")
struct IPAddressTests {
    @Test("IPv4 and IPv6 parse in their usual spellings; ambiguous or foreign ones do not")
    func parsing() {
        #expect(IPAddress("192.0.2.1")?.bytes == [192, 0, 2, 1])
        #expect(IPAddress("2001:db8::1")?.description == "2001:db8::1")
        #expect(IPAddress("[::1]")?.description == "::1")
        #expect(IPAddress("::ffff:127.0.0.1")?.embeddedV4 == IPAddress("127.0.0.1"))
        for bad in ["", "1.2.3", "1.2.3.4.5", "256.1.1.1", "01.2.3.4", "0x7f.0.0.1", "fe80::1%eth0", "1::2::3", "example.com", " 1.2.3.4"] {
            #expect(IPAddress(bad) == nil, "\(bad)")
        }
    }

    @Test("Loopback, private, link-local, shared and mapped spellings of them are not public")
    func publicness() {
        for address in ["127.0.0.1", "10.0.0.5", "172.16.3.4", "192.168.1.1", "169.254.169.254", "100.64.0.1", "0.0.0.0",
                        "::1", "::", "fe80::1", "fc00::7", "::ffff:10.0.0.5", "64:ff9b::a00:5", "224.0.0.1", "255.255.255.255",
                        // one in each of the other non-public blocks
                        "192.0.0.8", "192.0.2.1", "192.88.99.1", "198.19.0.1", "198.51.100.7", "203.0.113.9", "240.0.0.1",
                        "100::1", "2001::1", "2001:db8::1", "2002::1", "fec0::1", "ff02::1"] {
            #expect(IPAddress(address)?.isPublic == false, "\(address)")
        }
        for address in ["93.184.216.34", "142.250.74.100", "2a00:1450:4001:82a::200e"] {
            #expect(IPAddress(address)?.isPublic == true, "\(address)")
        }
    }

    @Test("CIDR blocks hold their addresses, and an IPv4 block holds their mapped spelling")
    func blocks() {
        let block = CIDR("10.0.0.0/8")!
        #expect(block.contains(IPAddress("10.200.1.1")!))
        #expect(!block.contains(IPAddress("11.0.0.1")!))
        #expect(block.contains(IPAddress("::ffff:10.1.2.3")!))
        #expect(CIDR("2001:db8::/32")!.contains(IPAddress("2001:db8:ffff::1")!))
        #expect(CIDR("10.0.0.0/33") == nil)
        #expect(CIDR.parseList("10.0.0.0/8, ::1") == .success([CIDR("10.0.0.0/8")!, CIDR("::1")!]))
        #expect(CIDR.parseList("10.0.0.0/8,nonsense") == .failure(CIDR.BadEntry(text: "nonsense")))
    }
}

@Suite("The client's address behind reverse proxies")
struct ClientAddressTests {
    let proxies = [CIDR("10.0.0.0/8")!, CIDR("::1")!]

    @Test("Without a trusted peer, forwarding headers are ignored")
    func untrustedPeer() {
        #expect(ClientAddressPolicy.resolve(peer: "203.0.113.9", forwarded: [], forwardedFor: ["1.2.3.4"], trusted: proxies) == "203.0.113.9")
        #expect(ClientAddressPolicy.resolve(peer: "203.0.113.9", forwarded: [], forwardedFor: ["1.2.3.4"], trusted: []) == "203.0.113.9")
    }

    @Test("Behind trusted proxies the nearest untrusted hop is the client; what the client wrote further left is ignored")
    func trustedChain() {
        #expect(ClientAddressPolicy.resolve(peer: "10.0.0.2", forwarded: [], forwardedFor: ["6.6.6.6, 198.51.100.7, 10.0.0.3"],
                                            trusted: proxies) == "198.51.100.7")
        #expect(ClientAddressPolicy.resolve(peer: "::1", forwarded: [#"for="[2001:db8::9]:4711";proto=https"#], forwardedFor: ["6.6.6.6"],
                                            trusted: proxies) == "2001:db8::9")
        #expect(ClientAddressPolicy.resolve(peer: "10.0.0.2", forwarded: ["for=192.0.2.60:8080, for=10.0.0.9"], forwardedFor: [],
                                            trusted: proxies) == "192.0.2.60")
        // Garbage where the client should be: the proxy itself, never the garbage.
        #expect(ClientAddressPolicy.resolve(peer: "10.0.0.2", forwarded: [], forwardedFor: ["<script>"], trusted: proxies) == "10.0.0.2")
    }
}

@Suite("Redirect targets after sign-in and language changes")
struct RedirectPolicyTests {
    @Test("Only plain paths on this site are accepted")
    func localPaths() {
        #expect(RedirectPolicy.safeLocalPath("/orders/12?x=1") == "/orders/12?x=1")
        for bad in ["//evil.example", "/\\evil.example", "\\\\evil.example", "/\t/evil.example/", "/\n/evil.example",
                    "https:evil.example", "https://evil.example", "evil.example", "/a\\b", "/\u{200B}/evil.example", "", nil] {
            #expect(RedirectPolicy.safeLocalPath(bad) == nil, "\(String(describing: bad))")
        }
    }
}

@Suite("Numbers from outside never trap")
struct NumbersFromOutsideTests {
    @Test("Live subscriptions accept `since` from 0 to 2^53-1 only")
    func since() {
        #expect(LiveCommand.isValidSince(nil))
        #expect(LiveCommand.isValidSince(0))
        #expect(LiveCommand.isValidSince(9_007_199_254_740_991))
        #expect(!LiveCommand.isValidSince(.max))
        #expect(!LiveCommand.isValidSince(.min))
        #expect(!LiveCommand.isValidSince(-1))
    }

    @Test("Typed amounts are rounded to the cent, never truncated, and refused out of range")
    func typedAmounts() {
        #expect(Money.minorUnits(fromText: "12.5", maximum: 1000) == 1250)
        #expect(Money.minorUnits(fromText: "12,345", maximum: 1000) == 1235)
        #expect(Money.minorUnits(fromText: "0.29", maximum: 1000) == 29)
        #expect(Money.minorUnits(fromText: "0.005", maximum: 1000) == 1)
        for bad in ["", "-1", "1e400", "1001", "12.5.1", "NaN", "99999999999999999999999999999"] {
            #expect(Money.minorUnits(fromText: bad, maximum: 1000) == nil, "\(bad)")
        }
        #expect(Money(.min, "CHF").description.contains("-92233720368547758.08"))
    }

    @Test("A throttle row at the end of Int64 saturates instead of trapping")
    func throttleSaturates() {
        let policy = LoginThrottlePolicy.perAccount
        #expect(policy.nextAttemptAllowed(failures: 50, windowStart: 0, lastFailure: .max, now: 10) == policy.window)
    }
}

@Suite("Distances between any two valid points")
struct AntipodalDistanceTests {
    @Test("Points on opposite sides of the Earth are half its circumference apart, never NaN")
    func antipodes() {
        for latitude in stride(from: -90.0, through: 90.0, by: 1) {
            let here = Coordinate(latitude: latitude, longitude: 0), there = Coordinate(latitude: -latitude, longitude: 180)
            let distance = here.distance(to: there)
            #expect(distance.isFinite && abs(distance - 20_015_114) < 2_000, "\(latitude): \(distance)")
        }
        #expect(Coordinate(latitude: 8, longitude: 0).distance(to: Coordinate(latitude: -8, longitude: 180)).isFinite)
    }
}
