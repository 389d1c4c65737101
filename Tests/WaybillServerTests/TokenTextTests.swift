import Foundation
import Testing
@testable import WaybillServer
import WaybillCore

/// Tokens written into links and mails: the direct encoders write what Foundation's would.
@Suite struct TokenTextTests {
    @Test("Tokens in links are Foundation's base64 with the URL-safe alphabet and no padding, at every length")
    func base64URLMatchesFoundation() {
        var generator = SystemRandomNumberGenerator()
        for length in 0...70 {
            for _ in 0..<20 {
                let bytes = Data((0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) })
                let foundation = bytes.base64EncodedString().replacingOccurrences(of: "+", with: "-")
                    .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
                #expect(bytes.base64URLEncodedString() == foundation)
                #expect(Data(base64URLEncoded: foundation) == bytes)
            }
        }
        // Every character of the alphabet, including the two that differ from plain base64.
        #expect(Data([0xFB, 0xFF, 0xBF]).base64URLEncodedString() == "-_-_")
        #expect(Tracking.newTrackingToken().count == 24 && Tracking.isWellFormedToken(Tracking.newTrackingToken()))
    }

    @Test("Order references are WB- and eight characters of Crockford's base 32, each of them drawn")
    func references() {
        #expect(OrderReference.alphabet.count == 32)
        var seen = Set<Character>()
        for _ in 0..<2_000 {
            let reference = Orders.newReference()
            #expect(reference.hasPrefix("WB-") && reference.count == 11)
            seen.formUnion(reference.dropFirst(3))
        }
        #expect(seen == Set(OrderReference.alphabet))
        #expect(Randomness.bytes(0).isEmpty && Randomness.bytes(5).count == 5 && Randomness.bytes(18).count == 18)
    }

    @Test("Ids written as hex have two lower-case digits a byte")
    func hexMatchesFormat() {
        let bytes: [UInt8] = Array(0...255)
        #expect(bytes.hexString == bytes.map { String(format: "%02x", $0) }.joined())
        #expect([UInt8]().hexString == "")
    }
}
