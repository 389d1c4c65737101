import AsyncHTTPClient
import Crypto
import Foundation
import Vapor

/// Web Push (RFC 8030): the payload encrypted for the browser (RFC 8291) and the request signed
/// with the server's VAPID key (RFC 8292), POSTed to the endpoint the browser's push service gave.
struct WebPushSender: PushSender {
    let settings: VAPIDSettings
    let httpClient: HTTPClient
    let logger: Logger
    let now: @Sendable () -> Date
    /// Resolves and checks each endpoint's host, and connects to the checked address. Nil only in
    /// tests that push to a local service through `httpClient`.
    let addressGuard: PushAddressGuard?

    init(settings: VAPIDSettings, httpClient: HTTPClient, logger: Logger, now: @escaping @Sendable () -> Date = { Date() },
         addressGuard: PushAddressGuard?) {
        self.settings = settings
        self.httpClient = httpClient
        self.logger = logger
        self.now = now
        self.addressGuard = addressGuard
    }

    /// `token` is the browser's `PushSubscription` as JSON.
    func send(_ message: PushMessage, to token: String) async -> PushOutcome {
        // A subscription that does not parse can never be delivered to: the device row is useless.
        guard let subscription = WebPushSubscription(json: token) else { return .gone }
        let body: [UInt8]
        let authorization: String
        do {
            let plaintext = try Self.payload(message)
            body = try WebPushEncryption.encrypt(plaintext, receiverKey: subscription.p256dh, authSecret: subscription.auth)
            authorization = try VAPID.authorization(endpoint: subscription.endpoint, settings: settings, now: now())
        } catch let error as WebPushEncryption.Failure {
            return .rejected(error.description)
        } catch {
            return .rejected("could not encrypt or sign: \(error)")
        }
        var headers = [
            ("Authorization", authorization),
            ("Content-Encoding", "aes128gcm"),
            ("Content-Type", "application/octet-stream"),
            ("TTL", String(PushTTL.seconds)),
            ("Urgency", "high"),
        ]
        if let key = message.collapseKey { headers.append(("Topic", Self.topic(key))) }
        // The endpoint URL is itself a capability; only its host goes to the log.
        let host = subscription.endpoint.host ?? "?"
        let response: PushHTTP.Response
        do {
            var client = httpClient
            var ownClient: HTTPClient?
            if let addressGuard {
                do {
                    let address = try await addressGuard.checkedAddress(for: host)
                    client = addressGuard.client(for: host, address: address, group: httpClient.eventLoopGroup)
                    ownClient = client
                } catch let refusal as PushAddressGuard.Refusal {
                    // Never deliverable: the device row goes.
                    logger.warning("Web Push endpoint refused: \(host) resolves to \(refusal)")
                    return .gone
                }
            }
            do {
                response = try await PushHTTP.post(client, url: subscription.endpoint.absoluteString, headers: headers,
                                                    body: Data(body), logger: logger)
            } catch {
                try? await ownClient?.shutdown()
                throw error
            }
            try? await ownClient?.shutdown()
        } catch {
            logger.warning("Web Push to \(host) failed: \(error)")
            return .retry("network: \(error)")
        }
        let outcome = Self.outcome(status: response.status)
        if case .rejected(let why) = outcome { logger.warning("Web Push service \(host) rejected a push: \(why)") }
        return outcome
    }

    /// The JSON the service worker receives: `{"title","body","data"}`.
    static func payload(_ message: PushMessage) throws -> [UInt8] {
        let object: [String: Any] = ["title": message.title, "body": message.body, "data": message.data]
        return Array(try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]))
    }

    /// RFC 8030 allows at most 32 characters of the base64url alphabet in `Topic`. A key that
    /// already fits is kept (readable in the push service's logs); any other is replaced by the
    /// first 32 characters of its SHA-256 in base64url, so distinct keys stay distinct.
    static func topic(_ key: String) -> String {
        let alphabet = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        if !key.isEmpty, key.count <= 32, key.allSatisfy(alphabet.contains) { return key }
        return String(Data(SHA256.hash(data: Data(key.utf8))).base64URLEncodedString().prefix(32))
    }

    static func outcome(status: Int) -> PushOutcome {
        switch status {
        case 200, 201, 202: return .delivered
        case 404, 410: return .gone
        case 429, 500...599: return .retry("HTTP \(status)")
        case 413: return .rejected("payload too large")
        default: return .rejected("HTTP \(status)")
        }
    }
}

/// A browser's `PushSubscription.toJSON()`: `{"endpoint":"https://…","keys":{"p256dh":…,"auth":…}}`.
struct WebPushSubscription: Sendable, Equatable {
    var endpoint: URL
    /// The browser's ECDH public key, an uncompressed P-256 point (65 bytes).
    var p256dh: P256.KeyAgreement.PublicKey
    /// The browser's 16-byte authentication secret.
    var auth: [UInt8]

    static func == (a: Self, b: Self) -> Bool {
        a.endpoint == b.endpoint && a.auth == b.auth && a.p256dh.x963Representation == b.p256dh.x963Representation
    }

    /// Nil unless every part is there and well formed (the endpoint https, the key a point on the curve).
    init?(json: String) {
        guard json.utf8.count <= 8192,
              let object = (try? JSONSerialization.jsonObject(with: Data(json.utf8))) as? [String: Any],
              let endpointText = object["endpoint"] as? String, endpointText.utf8.count <= 2048,
              let endpoint = URL(string: endpointText), endpoint.scheme == "https",
              let host = endpoint.host, !host.isEmpty, endpoint.user == nil, endpoint.password == nil,
              let keys = object["keys"] as? [String: Any],
              let p256dhText = keys["p256dh"] as? String, let p256dhBytes = Data(base64URLEncoded: p256dhText),
              p256dhBytes.count == 65, p256dhBytes.first == 0x04,
              let p256dh = try? P256.KeyAgreement.PublicKey(x963Representation: p256dhBytes),
              let authText = keys["auth"] as? String, let auth = Data(base64URLEncoded: authText), auth.count == 16
        else { return nil }
        self.endpoint = endpoint
        self.p256dh = p256dh
        self.auth = Array(auth)
    }

    /// Whether the endpoint names a public host: not an IP literal, not `localhost`, not a single
    /// label. Push services are public; anything else would let a client make the server POST
    /// into the private network.
    static func isPublicEndpoint(_ url: URL) -> Bool {
        guard let host = url.host?.lowercased(), !host.isEmpty else { return false }
        if host.contains(":") || host.hasPrefix("[") { return false }  // IPv6 literal
        let labels = host.split(separator: ".", omittingEmptySubsequences: false)
        guard labels.count >= 2, labels.allSatisfy({ !$0.isEmpty }) else { return false }
        if labels.allSatisfy({ $0.allSatisfy(\.isNumber) }) { return false }  // IPv4 literal
        if host == "localhost" || host.hasSuffix(".localhost") || host.hasSuffix(".local") || host.hasSuffix(".internal") { return false }
        // Letters, digits and hyphens only, so no other spelling of a number slips through.
        return host.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == ".") }
            && labels.last.map { !$0.allSatisfy(\.isNumber) } == true
    }
}

/// Message encryption for Web Push (RFC 8291) in the `aes128gcm` content coding (RFC 8188), as one
/// record. The sender's key pair and the salt are parameters so the RFC's example can be replayed.
enum WebPushEncryption {
    static let recordSize: UInt32 = 4096
    /// Push services need only accept 4096-byte bodies (RFC 8291 section 4): the 86-byte header, the
    /// plaintext, the 0x02 delimiter and the 16-byte tag, which leaves 3993 bytes of plaintext.
    static let maxPlaintext = 4096 - 86 - 1 - 16

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    static func encrypt(
        _ plaintext: [UInt8],
        receiverKey: P256.KeyAgreement.PublicKey,
        authSecret: [UInt8],
        senderKey: P256.KeyAgreement.PrivateKey = P256.KeyAgreement.PrivateKey(),
        salt: [UInt8] = randomSalt()
    ) throws -> [UInt8] {
        guard plaintext.count <= maxPlaintext else { throw Failure(description: "payload too large (\(plaintext.count) bytes)") }
        guard salt.count == 16, authSecret.count == 16 else { throw Failure(description: "salt and auth secret must be 16 bytes") }
        let keys = try contentKeys(
            sharedSecret: senderKey.sharedSecretFromKeyAgreement(with: receiverKey),
            authSecret: authSecret, receiverPublic: receiverKey.x963Representation,
            senderPublic: senderKey.publicKey.x963Representation, salt: salt)
        let sealed = try AES.GCM.seal(plaintext + [0x02], using: keys.cek, nonce: AES.GCM.Nonce(data: keys.nonce))
        let senderPublic = Array(senderKey.publicKey.x963Representation)
        var out = salt
        out += withUnsafeBytes(of: recordSize.bigEndian, Array.init)
        out.append(UInt8(senderPublic.count))
        out += senderPublic
        out += sealed.ciphertext
        out += sealed.tag
        return out
    }

    /// The content-encryption key and nonce (RFC 8291 section 3.4, RFC 8188 section 2.2); the receiver
    /// derives the same from its private key, which is how a test decrypts.
    static func contentKeys(sharedSecret: SharedSecret, authSecret: [UInt8], receiverPublic: Data, senderPublic: Data,
                            salt: [UInt8]) -> (cek: SymmetricKey, nonce: Data) {
        let keyInfo = Array("WebPush: info\0".utf8) + receiverPublic + senderPublic
        let ikm = sharedSecret.hkdfDerivedSymmetricKey(using: SHA256.self, salt: authSecret, sharedInfo: keyInfo, outputByteCount: 32)
        let prk = HKDF<SHA256>.extract(inputKeyMaterial: ikm, salt: salt)
        let cek = HKDF<SHA256>.expand(pseudoRandomKey: prk, info: Array("Content-Encoding: aes128gcm\0".utf8), outputByteCount: 16)
        let nonce = HKDF<SHA256>.expand(pseudoRandomKey: prk, info: Array("Content-Encoding: nonce\0".utf8), outputByteCount: 12)
        return (cek, nonce.withUnsafeBytes { Data($0) })
    }

    static func randomSalt() -> [UInt8] {
        SymmetricKey(size: .init(bitCount: 128)).withUnsafeBytes { Array($0) }
    }
}

/// VAPID (RFC 8292): proves to the push service that the sender holds the key the browser
/// subscribed with. `Authorization: vapid t=<ES256 JWT>, k=<public key>`.
enum VAPID {
    /// Push services refuse tokens valid for more than 24 hours; 12 leaves room for clock skew.
    static let lifetime = 12 * 3600

    struct Failure: Error {}

    static func authorization(endpoint: URL, settings: VAPIDSettings, now: Date) throws -> String {
        guard let audience = origin(of: endpoint) else { throw Failure() }
        let jwt = try JWS.es256(
            header: ["typ": "JWT"],
            claims: ["aud": audience, "exp": Int(now.timeIntervalSince1970) + lifetime, "sub": settings.subject],
            key: settings.privateKey)
        return "vapid t=\(jwt), k=\(settings.publicKeyBase64URL)"
    }

    /// The endpoint's origin (RFC 6454): scheme, host and a port only when not the default.
    static func origin(of url: URL) -> String? {
        guard let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased(), !host.isEmpty else { return nil }
        let hostPart = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        let defaultPort = scheme == "https" ? 443 : scheme == "http" ? 80 : nil
        if let port = url.port, port != defaultPort { return "\(scheme)://\(hostPart):\(port)" }
        return "\(scheme)://\(hostPart)"
    }
}
