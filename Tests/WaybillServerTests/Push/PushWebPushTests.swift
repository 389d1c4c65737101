import AsyncHTTPClient
import Crypto
import Foundation
import Testing
import Vapor
import WaybillCore
@testable import WaybillServer

@Suite("Push: Web Push against a local push service")
struct PushWebPushTests {
    /// A browser's subscription: the private half stays with the test, which decrypts like the browser.
    struct Browser {
        let key = P256.KeyAgreement.PrivateKey()
        let auth = WebPushEncryption.randomSalt()

        func subscription(endpoint: String) -> String {
            let object: [String: Any] = ["endpoint": endpoint, "expirationTime": NSNull(),
                                         "keys": ["p256dh": key.publicKey.x963Representation.base64URLEncodedString(),
                                                  "auth": Data(auth).base64URLEncodedString()]]
            return String(decoding: try! JSONSerialization.data(withJSONObject: object), as: UTF8.self)
        }
    }

    static func sender(_ client: HTTPClient, clock: TestClock = TestClock.fixed()) -> (WebPushSender, VAPIDSettings) {
        let settings = VAPIDSettings(privateKey: .init(), subject: "mailto:ops@waybill.example")
        return (WebPushSender(settings: settings, httpClient: client, logger: Logger(label: "test.webpush"), now: clock.function,
                              addressGuard: nil), settings)
    }

    @Test("A subscription whose host resolves to a private, loopback or link-local address gets no request, and is dropped")
    func privateAddressesRefused() async throws {
        try await FakePushServer.with { server, client in
            let settings = VAPIDSettings(privateKey: .init(), subject: "mailto:ops@waybill.example")
            // The names look public; what they resolve to does not (as with 169.254.169.254.nip.io).
            let answers: [String: [String]] = [
                "metadata.example.com": ["169.254.169.254"], "intranet.example.com": ["93.184.216.34", "10.0.0.5"],
                "loop.example.com": ["::1"], "mapped.example.com": ["::ffff:127.0.0.1"], "none.example.com": [],
            ]
            var check = PushAddressGuard(configuration: PushService.clientConfiguration)
            check.resolve = { host in (answers[host] ?? []).compactMap(IPAddress.init) }
            let webPush = WebPushSender(settings: settings, httpClient: client, logger: Logger(label: "test.webpush"), addressGuard: check)
            for host in answers.keys.sorted() {
                let subscription = Browser().subscription(endpoint: "https://\(host)/wp/x")
                #expect(await webPush.send(PushMessage(title: "t", body: "b"), to: subscription) == .gone, "\(host)")
            }
            #expect(server.requests.isEmpty)
            let literal = Browser().subscription(endpoint: "https://[fe80::1]/wp/x")
            #expect(await webPush.send(PushMessage(title: "t", body: "b"), to: literal) == .gone)
            #expect(server.requests.isEmpty)
        }
    }

    @Test("The push carries VAPID authorization, aes128gcm, TTL, Urgency and Topic, and its body decrypts to the message JSON")
    func request() async throws {
        try await FakePushServer.with { server, client in
            let clock = TestClock.fixed()
            let (webPush, vapid) = Self.sender(client, clock: clock)
            let browser = Browser()
            let subscription = browser.subscription(endpoint: server.baseURL + "/wp/sub-1")
            let message = PushMessage(title: "Driver arriving", body: "About 5 minutes", data: ["orderId": "o-3"], collapseKey: "order-o-3")
            #expect(await webPush.send(message, to: subscription) == .delivered)

            let request = try #require(server.requests.first)
            #expect(request.path == "/wp/sub-1")
            #expect(request.httpMajorVersion == 2)
            #expect(request.headers.first(name: "content-encoding") == "aes128gcm")
            #expect(request.headers.first(name: "ttl") == "86400")
            #expect(request.headers.first(name: "urgency") == "high")
            #expect(request.headers.first(name: "topic") == "order-o-3")

            let authorization = try #require(request.headers.first(name: "authorization"))
            let match = try #require(authorization.wholeMatch(of: /vapid t=([^,]+), k=(.+)/))
            #expect(String(match.2) == vapid.publicKeyBase64URL)
            let jwt = try #require(DecodedJWT(String(match.1)))
            #expect(jwt.verifies(with: vapid.privateKey.publicKey))
            #expect(jwt.claims["aud"] as? String == server.baseURL)
            #expect(jwt.claims["sub"] as? String == "mailto:ops@waybill.example")
            let exp = try #require(jwt.int("exp"))
            #expect(exp - Int64(clock.now.timeIntervalSince1970) <= 24 * 3600)

            let plaintext = try PushEncryptionTests.decrypt(Array(request.body), receiver: browser.key, authSecret: browser.auth)
            let json = try #require(try JSONSerialization.jsonObject(with: Data(plaintext)) as? [String: Any])
            #expect(json["title"] as? String == "Driver arriving")
            #expect(json["body"] as? String == "About 5 minutes")
            #expect(json["data"] as? [String: String] == ["orderId": "o-3"])
            #expect(json.count == 3)
        }
    }

    @Test("410 and 404 mean gone, 429 and 503 retry, 413 and 400 are final; an unreadable subscription is gone without a request")
    func answers() async throws {
        try await FakePushServer.with { server, client in
            let (webPush, _) = Self.sender(client)
            let subscription = Browser().subscription(endpoint: server.baseURL + "/wp/sub-2")
            let message = PushMessage(title: "t", body: "b")
            let expected: [(Int, PushOutcome)] = [
                (410, .gone), (404, .gone), (429, .retry("HTTP 429")), (503, .retry("HTTP 503")),
                (413, .rejected("payload too large")), (400, .rejected("HTTP 400")), (202, .delivered),
            ]
            for (status, outcome) in expected {
                server.reply(to: "/wp/", status: status)
                #expect(await webPush.send(message, to: subscription) == outcome, "HTTP \(status)")
            }
            #expect(server.requests.count == expected.count)
            #expect(await webPush.send(message, to: #"{"endpoint":"https://push.example.com/x"}"#) == .gone)
            #expect(await webPush.send(message, to: "not json") == .gone)
            #expect(server.requests.count == expected.count)

            let huge = PushMessage(title: "t", body: String(repeating: "x", count: 4000))
            guard case .rejected = await webPush.send(huge, to: subscription) else {
                Issue.record("a payload over 4 KB should be refused before sending")
                return
            }
            #expect(server.requests.count == expected.count)
        }
    }

    @Test("A subscription is accepted only with an https endpoint on a public host, a P-256 point and a 16-byte auth secret")
    func subscriptionValidation() {
        let browser = Browser()
        let good = browser.subscription(endpoint: "https://fcm.googleapis.com/fcm/send/dGVzdA:APA91b")
        #expect(PushService.validateWebPushSubscription(good))
        #expect(PushService.validateWebPushSubscription(browser.subscription(endpoint: "https://updates.push.services.mozilla.com/wpush/v2/gAAAA")))
        #expect(PushService.validateWebPushSubscription(browser.subscription(endpoint: "https://web.push.apple.com/QGuQyavXutnMH")))

        for endpoint in ["http://fcm.googleapis.com/fcm/send/x", "https://localhost/x", "https://127.0.0.1/x", "https://[::1]/x",
                         "https://10.0.0.7:8443/x", "https://intranet/x", "https://user:pw@push.example.com/x", "ftp://push.example.com/x",
                         "https://db.internal/x", "not a url"] {
            #expect(!PushService.validateWebPushSubscription(browser.subscription(endpoint: endpoint)), "\(endpoint)")
        }
        let p256dh = browser.key.publicKey.x963Representation.base64URLEncodedString()
        let auth = Data(browser.auth).base64URLEncodedString()
        func json(_ p256dh: String, _ auth: String) -> String {
            #"{"endpoint":"https://push.example.com/x","keys":{"p256dh":"\#(p256dh)","auth":"\#(auth)"}}"#
        }
        #expect(PushService.validateWebPushSubscription(json(p256dh, auth)))
        #expect(!PushService.validateWebPushSubscription(json(String(p256dh.dropLast(4)), auth)), "short key")
        #expect(!PushService.validateWebPushSubscription(json(browser.key.publicKey.compressedRepresentation.base64URLEncodedString(), auth)), "compressed point")
        #expect(!PushService.validateWebPushSubscription(json("B" + String(repeating: "A", count: 86), auth)), "not on the curve")
        #expect(!PushService.validateWebPushSubscription(json(p256dh, Data(repeating: 1, count: 15).base64URLEncodedString())), "short auth")
        #expect(!PushService.validateWebPushSubscription(json(p256dh, "")))
        #expect(!PushService.validateWebPushSubscription(#"{"endpoint":"https://push.example.com/x"}"#))
        #expect(!PushService.validateWebPushSubscription("[]"))
        #expect(!PushService.validateWebPushSubscription(""))
    }
}
