import Crypto
import Foundation
import Testing
@testable import WaybillServer

@Suite("Push: Web Push encryption (RFC 8291) and VAPID (RFC 8292)")
struct PushEncryptionTests {
    /// RFC 8291, section 5 and appendix A.
    enum RFC8291 {
        static let plaintext = "When I grow up, I want to be a watermelon"
        static let asPrivate = "yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw"
        static let asPublic = "BP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A8"
        static let uaPrivate = "q1dXpw3UpT5VOmu_cf_v6ih07Aems3njxI-JWgLcM94"
        static let uaPublic = "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"
        static let authSecret = "BTBZMqHH6r4Tts7J_aSIgg"
        static let salt = "DGv6ra1nlYgDCS1FRnbzlw"
        static let message = "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A_yl95bQpu6cVPTpK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN"
    }

    static func bytes(_ base64url: String) throws -> [UInt8] { Array(try #require(Data(base64URLEncoded: base64url))) }

    @Test("The RFC 8291 example message is reproduced byte for byte from its keys, auth secret and salt")
    func rfcExample() throws {
        let sender = try P256.KeyAgreement.PrivateKey(rawRepresentation: Self.bytes(RFC8291.asPrivate))
        let receiver = try P256.KeyAgreement.PrivateKey(rawRepresentation: Self.bytes(RFC8291.uaPrivate))
        #expect(Array(sender.publicKey.x963Representation) == (try Self.bytes(RFC8291.asPublic)))
        #expect(Array(receiver.publicKey.x963Representation) == (try Self.bytes(RFC8291.uaPublic)))

        let encrypted = try WebPushEncryption.encrypt(
            Array(RFC8291.plaintext.utf8), receiverKey: receiver.publicKey, authSecret: Self.bytes(RFC8291.authSecret),
            senderKey: sender, salt: Self.bytes(RFC8291.salt))
        #expect(Data(encrypted).base64URLEncodedString() == RFC8291.message)
        #expect(try Self.decrypt(encrypted, receiver: receiver, authSecret: Self.bytes(RFC8291.authSecret)) == Array(RFC8291.plaintext.utf8))
    }

    @Test("A message encrypted with a fresh sender key and salt decrypts with the receiver's private key, and not with another")
    func roundTrip() throws {
        let receiver = P256.KeyAgreement.PrivateKey()
        let auth = WebPushEncryption.randomSalt()
        let plaintext = Array(#"{"title":"Your parcel is on its way","body":"Arriving around 14:30"}"#.utf8)
        let first = try WebPushEncryption.encrypt(plaintext, receiverKey: receiver.publicKey, authSecret: auth)
        let second = try WebPushEncryption.encrypt(plaintext, receiverKey: receiver.publicKey, authSecret: auth)
        #expect(first != second, "each message has its own key pair and salt")
        #expect(first.count == 86 + plaintext.count + 1 + 16)
        #expect(Array(first[16..<21]) == [0, 0, 0x10, 0, 65])
        #expect(try Self.decrypt(first, receiver: receiver, authSecret: auth) == plaintext)
        #expect(try Self.decrypt(second, receiver: receiver, authSecret: auth) == plaintext)
        #expect(throws: (any Error).self) { try Self.decrypt(first, receiver: P256.KeyAgreement.PrivateKey(), authSecret: auth) }
        #expect(throws: (any Error).self) { try Self.decrypt(first, receiver: receiver, authSecret: WebPushEncryption.randomSalt()) }

        let tooLong = [UInt8](repeating: 0x61, count: WebPushEncryption.maxPlaintext + 1)
        #expect(throws: WebPushEncryption.Failure.self) {
            try WebPushEncryption.encrypt(tooLong, receiverKey: receiver.publicKey, authSecret: auth)
        }
        let longest = try WebPushEncryption.encrypt(Array(tooLong.dropLast()), receiverKey: receiver.publicKey, authSecret: auth)
        #expect(longest.count == 4096)
    }

    @Test("VAPID: `vapid t=<JWT>, k=<key>`, the JWT signed by the key in k, for the endpoint's origin, expiring within 24 hours")
    func vapidHeader() throws {
        let key = P256.Signing.PrivateKey()
        let settings = VAPIDSettings(privateKey: key, subject: "mailto:ops@waybill.example")
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let endpoint = try #require(URL(string: "https://updates.push.services.mozilla.com/wpush/v2/gAAAAABk?x=1"))
        let header = try VAPID.authorization(endpoint: endpoint, settings: settings, now: now)

        let match = try #require(header.wholeMatch(of: /vapid t=([A-Za-z0-9_\-.]+), k=([A-Za-z0-9_\-]+)/))
        let k = String(match.2)
        #expect(k == settings.publicKeyBase64URL)
        #expect(try Self.bytes(k).count == 65)
        let publicKey = try P256.Signing.PublicKey(x963Representation: Self.bytes(k))
        let jwt = try #require(DecodedJWT(String(match.1)))
        #expect(jwt.verifies(with: publicKey))
        #expect(!jwt.verifies(with: P256.Signing.PrivateKey().publicKey))
        #expect(jwt.header["alg"] as? String == "ES256")
        #expect(jwt.claims["aud"] as? String == "https://updates.push.services.mozilla.com")
        #expect(jwt.claims["sub"] as? String == "mailto:ops@waybill.example")
        let exp = try #require(jwt.int("exp"))
        #expect(exp > Int64(now.timeIntervalSince1970) && exp <= Int64(now.timeIntervalSince1970) + 24 * 3600)

        #expect(VAPID.origin(of: URL(string: "https://Push.Example.com:443/a/b")!) == "https://push.example.com")
        #expect(VAPID.origin(of: URL(string: "https://localhost:8443/wp/1")!) == "https://localhost:8443")
    }

    @Test("Topic: a short base64url key is kept; anything else becomes 32 base64url characters, distinct per key")
    func topic() {
        #expect(WebPushSender.topic("order-42_status") == "order-42_status")
        let long = WebPushSender.topic("order 0f8e2c5a-7d1b-4c39-9a57-3f0e6b8d2a11 status")
        #expect(long.count == 32)
        #expect(long.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
        #expect(long != WebPushSender.topic("order 0f8e2c5a-7d1b-4c39-9a57-3f0e6b8d2a12 status"))
        #expect(WebPushSender.topic("ü").count == 32)
    }

    /// What a browser does with the body (RFC 8188 and 8291), written out here independently of the
    /// sender: HKDF by hand with HMAC, then AES-128-GCM, then the padding delimiter removed.
    static func decrypt(_ body: [UInt8], receiver: P256.KeyAgreement.PrivateKey, authSecret: [UInt8]) throws -> [UInt8] {
        struct Malformed: Error {}
        guard body.count > 21 else { throw Malformed() }
        let salt = Array(body[0..<16])
        let recordSize = body[16..<20].reduce(0) { $0 << 8 | Int($1) }
        let idLength = Int(body[20])
        guard body.count >= 21 + idLength + 17, recordSize >= body.count - 21 - idLength else { throw Malformed() }
        let senderPublic = Array(body[21..<(21 + idLength)])
        let record = Array(body[(21 + idLength)...])

        let shared = try receiver.sharedSecretFromKeyAgreement(with: P256.KeyAgreement.PublicKey(x963Representation: senderPublic))
        let ecdhSecret = shared.withUnsafeBytes { Array($0) }
        func hmac(_ key: [UInt8], _ data: [UInt8]) -> [UInt8] {
            Array(HMAC<SHA256>.authenticationCode(for: data, using: SymmetricKey(data: key)))
        }
        // HKDF-Expand for at most one block: T(1) = HMAC(PRK, info || 0x01).
        func expand(_ prk: [UInt8], _ info: [UInt8], _ length: Int) -> [UInt8] { Array(hmac(prk, info + [1]).prefix(length)) }
        let receiverPublic = Array(receiver.publicKey.x963Representation)
        let ikm = expand(hmac(authSecret, ecdhSecret), Array("WebPush: info".utf8) + [0] + receiverPublic + senderPublic, 32)
        let prk = hmac(salt, ikm)
        let cek = expand(prk, Array("Content-Encoding: aes128gcm".utf8) + [0], 16)
        let nonce = expand(prk, Array("Content-Encoding: nonce".utf8) + [0], 12)

        let box = try AES.GCM.SealedBox(nonce: AES.GCM.Nonce(data: nonce), ciphertext: record.dropLast(16), tag: record.suffix(16))
        var padded = Array(try AES.GCM.open(box, using: SymmetricKey(data: cek)))
        while padded.last == 0 { padded.removeLast() }
        guard padded.last == 0x02 else { throw Malformed() }
        padded.removeLast()
        return padded
    }
}
