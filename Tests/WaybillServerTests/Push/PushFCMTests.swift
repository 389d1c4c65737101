import _CryptoExtras
import AsyncHTTPClient
import Crypto
import Foundation
import Testing
import Vapor
@testable import WaybillServer

@Suite("Push: Firebase Cloud Messaging HTTP v1 against a local server")
struct PushFCMTests {
    static let deviceToken = "fGcm-test-token:APA91bHun4MxP5egoKMwt2KZFBaFUH-1RYqx"

    static func sender(_ server: FakePushServer, _ client: HTTPClient, clock: TestClock, key: _RSA.Signing.PrivateKey) -> FCMSender {
        let settings = FCMSettings(projectID: "waybill-test", clientEmail: "push@waybill-test.iam.gserviceaccount.com",
                                   privateKey: key, tokenURI: server.baseURL + "/token", baseURL: server.baseURL)
        return FCMSender(settings: settings, httpClient: client, logger: Logger(label: "test.fcm"), now: clock.function)
    }

    static let rsaKey: _RSA.Signing.PrivateKey = {
        do { return try _RSA.Signing.PrivateKey(keySize: .bits2048) } catch { fatalError("RSA key generation failed: \(error)") }
    }()

    @Test("The signed assertion is exchanged for an access token, which then authorizes messages:send, and is reused until it nears expiry")
    func tokenExchangeAndSend() async throws {
        try await FakePushServer.with { server, client in
            let clock = TestClock.fixed()
            let key = Self.rsaKey
            let fcm = Self.sender(server, client, clock: clock, key: key)
            let message = PushMessage(title: "Delivered", body: "Your parcel was left at the door", data: ["orderId": "o-9"],
                                      collapseKey: "order-o-9")
            #expect(await fcm.send(message, to: Self.deviceToken) == .delivered)
            clock.advance(minutes: 30)
            #expect(await fcm.send(message, to: Self.deviceToken) == .delivered)

            let paths = server.requests.map(\.path)
            #expect(paths == ["/token", "/v1/projects/waybill-test/messages:send", "/v1/projects/waybill-test/messages:send"])
            #expect(server.requests.allSatisfy { $0.httpMajorVersion == 2 })

            // The token exchange.
            let exchange = try #require(server.requests.first)
            #expect(exchange.headers.first(name: "content-type") == "application/x-www-form-urlencoded")
            let form = exchange.form
            #expect(Set(form.keys) == ["grant_type", "assertion"])
            #expect(form["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer")
            let assertionText = try #require(form["assertion"])
            let assertion = try #require(DecodedJWT(assertionText))
            #expect(assertion.header["alg"] as? String == "RS256")
            let signature = _RSA.Signing.RSASignature(rawRepresentation: assertion.signature)
            #expect(key.publicKey.isValidSignature(signature, for: assertion.signingInput, padding: .insecurePKCS1v1_5))
            let otherKey = try _RSA.Signing.PrivateKey(keySize: .bits2048)
            #expect(!otherKey.publicKey.isValidSignature(signature, for: assertion.signingInput, padding: .insecurePKCS1v1_5))
            #expect(assertion.claims["iss"] as? String == "push@waybill-test.iam.gserviceaccount.com")
            #expect(assertion.claims["scope"] as? String == "https://www.googleapis.com/auth/firebase.messaging")
            #expect(assertion.claims["aud"] as? String == server.baseURL + "/token")
            let iat = try #require(assertion.int("iat"))
            #expect(iat == Int64(clock.now.timeIntervalSince1970) - 30 * 60)
            #expect(assertion.int("exp") == iat + 3600)

            // The send.
            let send = server.requests[1]
            #expect(send.headers.first(name: "authorization") == "Bearer ya29.fake-1")
            #expect(server.requests[2].headers.first(name: "authorization") == "Bearer ya29.fake-1")
            let body = try #require(send.json["message"] as? [String: Any])
            #expect(body["token"] as? String == Self.deviceToken)
            #expect(body["notification"] as? [String: String] == ["title": "Delivered", "body": "Your parcel was left at the door"])
            #expect(body["data"] as? [String: String] == ["orderId": "o-9"])
            let android = try #require(body["android"] as? [String: String])
            #expect(android["priority"] == "high")
            #expect(android["collapse_key"] == "order-o-9")

            // 3599 s lifetime, renewed 5 minutes early: at 56 minutes a new token is fetched.
            clock.advance(minutes: 26)
            #expect(await fcm.send(message, to: Self.deviceToken) == .delivered)
            #expect(server.requests(under: "/token").count == 2)
            #expect(server.requests.last?.headers.first(name: "authorization") == "Bearer ya29.fake-2")
        }
    }

    @Test("UNREGISTERED means gone, 503 and 429 retry, INVALID_ARGUMENT is final, 401 fetches a new access token and resends")
    func answers() async throws {
        try await FakePushServer.with { server, client in
            let clock = TestClock.fixed()
            let fcm = Self.sender(server, client, clock: clock, key: Self.rsaKey)
            let message = PushMessage(title: "t", body: "b")
            let send = "/v1/projects/"

            server.reply(to: send, status: 404, json: #"""
                {"error":{"code":404,"message":"Requested entity was not found.","status":"NOT_FOUND",
                 "details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"UNREGISTERED"}]}}
                """#)
            #expect(await fcm.send(message, to: Self.deviceToken) == .gone)
            server.reply(to: send, status: 400, json: #"""
                {"error":{"code":400,"status":"INVALID_ARGUMENT","details":[{"errorCode":"UNREGISTERED"}]}}
                """#)
            #expect(await fcm.send(message, to: Self.deviceToken) == .gone)
            server.reply(to: send, status: 503, json: #"{"error":{"code":503,"status":"UNAVAILABLE"}}"#)
            #expect(await fcm.send(message, to: Self.deviceToken) == .retry("UNAVAILABLE"))
            server.reply(to: send, status: 429, json: #"{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","details":[{"errorCode":"QUOTA_EXCEEDED"}]}}"#)
            #expect(await fcm.send(message, to: Self.deviceToken) == .retry("QUOTA_EXCEEDED"))
            server.reply(to: send, status: 400, json: #"{"error":{"code":400,"status":"INVALID_ARGUMENT","details":[{"errorCode":"INVALID_ARGUMENT"}]}}"#)
            #expect(await fcm.send(message, to: Self.deviceToken) == .rejected("INVALID_ARGUMENT"))
            #expect(server.requests(under: "/token").count == 1)

            server.reply(to: send, status: 401, json: #"{"error":{"code":401,"status":"UNAUTHENTICATED"}}"#)
            #expect(await fcm.send(message, to: Self.deviceToken) == .delivered)
            #expect(server.requests(under: "/token").count == 2)
            let sends = server.requests(under: send)
            #expect(sends.suffix(2).map { $0.headers.first(name: "authorization") } == ["Bearer ya29.fake-1", "Bearer ya29.fake-2"])

            // The token endpoint refusing the assertion: try later, and send nothing.
            clock.advance(minutes: 60)
            server.reply(to: "/token", status: 400, json: #"{"error":"invalid_grant","error_description":"Invalid JWT Signature."}"#)
            guard case .retry = await fcm.send(message, to: Self.deviceToken) else {
                Issue.record("expected retry when the token endpoint refuses")
                return
            }
            #expect(server.requests(under: send).count == sends.count)
        }
    }
}
