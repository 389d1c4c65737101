import AsyncHTTPClient
import Crypto
import Foundation
import JWTKit
import Testing
import Vapor
@testable import WaybillServer

@Suite("Push: APNs against a local HTTP/2 server")
struct PushAPNsTests {
    static let deviceToken = "5c2e0f1a9b8d7c6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c3d2e"

    static func sender(_ server: FakePushServer, _ client: HTTPClient, clock: TestClock, key: P256.Signing.PrivateKey = .init()) -> APNsSender {
        let settings = APNsSettings(keyID: "KEY4567890", teamID: "TEAM567890", privateKey: key, topic: "ch.waybill.app", baseURL: server.baseURL)
        return APNsSender(settings: settings, httpClient: client, logger: Logger(label: "test.apns"), now: clock.function)
    }

    static func bearer(_ request: FakePushServer.Recorded) -> String? {
        guard let value = request.headers.first(name: "authorization"), value.hasPrefix("bearer ") else { return nil }
        return String(value.dropFirst("bearer ".count))
    }

    struct ProviderClaims: JWTPayload {
        var iss: IssuerClaim
        var iat: IssuedAtClaim
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    @Test("A push is POSTed over HTTP/2 to /3/device/<token> with Apple's headers, an ES256 provider token and the aps payload")
    func request() async throws {
        try await FakePushServer.with { server, client in
            let key = P256.Signing.PrivateKey()
            let clock = TestClock.fixed()
            let apns = Self.sender(server, client, clock: clock, key: key)
            let message = PushMessage(title: "Parcel picked up", body: "Anna is on her way", data: ["orderId": "o-17", "aps": "ignored"],
                                      collapseKey: "order-o-17", badge: 3)
            #expect(await apns.send(message, to: Self.deviceToken.uppercased()) == .delivered)

            let request = try #require(server.requests.first)
            #expect(server.requests.count == 1)
            #expect(request.httpMajorVersion == 2)
            #expect(request.path == "/3/device/\(Self.deviceToken)")
            #expect(request.headers.first(name: "apns-topic") == "ch.waybill.app")
            #expect(request.headers.first(name: "apns-push-type") == "alert")
            #expect(request.headers.first(name: "apns-priority") == "10")
            #expect(request.headers.first(name: "apns-expiration") == String(Int64(clock.now.timeIntervalSince1970) + 86400))
            #expect(request.headers.first(name: "apns-collapse-id") == "order-o-17")

            let token = try #require(Self.bearer(request))
            let jwt = try #require(DecodedJWT(token))
            #expect(jwt.header.count == 2)
            #expect(jwt.header["alg"] as? String == "ES256")
            #expect(jwt.header["kid"] as? String == "KEY4567890")
            #expect(jwt.claims.count == 2)
            #expect(jwt.claims["iss"] as? String == "TEAM567890")
            #expect(jwt.int("iat") == Int64(clock.now.timeIntervalSince1970))
            #expect(jwt.verifies(with: key.publicKey))
            #expect(!jwt.verifies(with: P256.Signing.PrivateKey().publicKey))
            // And a second implementation agrees: JWTKit finds the key by kid and accepts the signature.
            let keys = JWTKeyCollection()
            await keys.add(ecdsa: try ES256PublicKey(backing: key.publicKey), kid: JWKIdentifier(string: "KEY4567890"))
            let claims = try await keys.verify(token, as: ProviderClaims.self)
            #expect(claims.iss.value == "TEAM567890")

            let payload = request.json
            let aps = try #require(payload["aps"] as? [String: Any])
            #expect(aps["alert"] as? [String: String] == ["title": "Parcel picked up", "body": "Anna is on her way"])
            #expect(aps["sound"] as? String == "default")
            #expect(aps["badge"] as? Int == 3)
            #expect(payload["orderId"] as? String == "o-17")
            #expect(Set(payload.keys) == ["aps", "orderId"])
        }
    }

    @Test("One provider token serves every push for 40 minutes; after that a new one is signed")
    func tokenReuse() async throws {
        try await FakePushServer.with { server, client in
            let clock = TestClock.fixed()
            let apns = Self.sender(server, client, clock: clock)
            let message = PushMessage(title: "t", body: "b")
            let start = Int64(clock.now.timeIntervalSince1970)
            #expect(await apns.send(message, to: Self.deviceToken) == .delivered)
            clock.advance(minutes: 10)
            #expect(await apns.send(message, to: Self.deviceToken) == .delivered)
            clock.advance(minutes: 29)
            #expect(await apns.send(message, to: Self.deviceToken) == .delivered)
            clock.advance(minutes: 2)  // 41 minutes after the first
            #expect(await apns.send(message, to: Self.deviceToken) == .delivered)

            let tokens = server.requests.compactMap(Self.bearer)
            #expect(tokens.count == 4)
            #expect(Set(tokens[0..<3]).count == 1)
            #expect(tokens[3] != tokens[0])
            #expect(DecodedJWT(tokens[0])?.int("iat") == start)
            #expect(DecodedJWT(tokens[3])?.int("iat") == start + 41 * 60)
        }
    }

    @Test("410 and BadDeviceToken mean gone, 429 and 500 retry, other refusals are final, a refused provider token is replaced and the push resent")
    func answers() async throws {
        try await FakePushServer.with { server, client in
            let clock = TestClock.fixed()
            let apns = Self.sender(server, client, clock: clock)
            let message = PushMessage(title: "t", body: "b")

            server.reply(to: "/3/device/", status: 410, json: #"{"reason":"Unregistered","timestamp":1800000000000}"#)
            #expect(await apns.send(message, to: Self.deviceToken) == .gone)
            server.reply(to: "/3/device/", status: 400, json: #"{"reason":"BadDeviceToken"}"#)
            #expect(await apns.send(message, to: Self.deviceToken) == .gone)
            server.reply(to: "/3/device/", status: 500, json: #"{"reason":"InternalServerError"}"#)
            #expect(await apns.send(message, to: Self.deviceToken) == .retry("InternalServerError"))
            server.reply(to: "/3/device/", status: 429, json: #"{"reason":"TooManyRequests"}"#)
            #expect(await apns.send(message, to: Self.deviceToken) == .retry("TooManyRequests"))
            server.reply(to: "/3/device/", status: 413, json: #"{"reason":"PayloadTooLarge"}"#)
            #expect(await apns.send(message, to: Self.deviceToken) == .rejected("PayloadTooLarge"))
            #expect(server.requests.count == 5)

            // Not hex: Apple never issued it, so no request is made.
            #expect(await apns.send(message, to: "not-a-device-token") == .gone)
            #expect(server.requests.count == 5)

            clock.advance(minutes: 1)
            server.reply(to: "/3/device/", status: 403, json: #"{"reason":"ExpiredProviderToken"}"#)
            #expect(await apns.send(message, to: Self.deviceToken) == .delivered)
            #expect(await apns.send(message, to: Self.deviceToken) == .delivered)
            let tokens = server.requests.compactMap(Self.bearer)
            #expect(tokens.count == 8)
            #expect(Set(tokens[0..<6]).count == 1, "the first token served every push until refused")
            #expect(tokens[6] != tokens[5], "a new token after ExpiredProviderToken")
            #expect(tokens[7] == tokens[6], "and the new token is kept")
            #expect(DecodedJWT(tokens[6])?.int("iat") == Int64(clock.now.timeIntervalSince1970))

            // Refused twice in a row: give up for now rather than loop.
            server.reply(to: "/3/device/", status: 403, json: #"{"reason":"InvalidProviderToken"}"#)
            server.reply(to: "/3/device/", status: 403, json: #"{"reason":"InvalidProviderToken"}"#)
            #expect(await apns.send(message, to: Self.deviceToken) == .retry("InvalidProviderToken"))
            #expect(server.requests.count == 10)
        }
    }

    @Test("Unreachable APNs is a retry, not an error")
    func unreachable() async throws {
        // A short connect timeout: the client's pool otherwise keeps trying for its default 10 seconds.
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(timeout: .init(connect: .seconds(1))))
        let settings = APNsSettings(keyID: "KEY4567890", teamID: "TEAM567890", privateKey: .init(), topic: "ch.waybill.app",
                                    baseURL: "http://127.0.0.1:9")
        let apns = APNsSender(settings: settings, httpClient: client, logger: Logger(label: "test.apns"))
        let outcome = await apns.send(PushMessage(title: "t", body: "b"), to: Self.deviceToken)
        try await client.shutdown()
        guard case .retry = outcome else {
            Issue.record("expected retry, got \(outcome)")
            return
        }
    }
}
