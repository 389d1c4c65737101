import _CryptoExtras
import AsyncHTTPClient
import Crypto
import Foundation
import Logging
import NIOConcurrencyHelpers
import Testing
@testable import WaybillServer

@Suite("Push: settings from the environment, and the service")
struct PushSettingsTests {
    static let apnsKey = P256.Signing.PrivateKey()
    static let vapidKey = P256.Signing.PrivateKey()
    static let rsaKey: _RSA.Signing.PrivateKey = {
        do { return try _RSA.Signing.PrivateKey(keySize: .bits2048) } catch { fatalError("RSA key generation failed: \(error)") }
    }()

    static func serviceAccount(tokenURI: String? = "https://oauth2.googleapis.com/token") -> String {
        var object: [String: Any] = ["type": "service_account", "project_id": "waybill-test", "private_key_id": "abc",
                                     "private_key": rsaKey.pemRepresentation, "client_email": "push@waybill-test.iam.gserviceaccount.com"]
        if let tokenURI { object["token_uri"] = tokenURI }
        return String(decoding: try! JSONSerialization.data(withJSONObject: object), as: UTF8.self)
    }

    static var complete: [String: String] {
        [
            "APNS_KEY_ID": "KEY4567890", "APNS_TEAM_ID": "TEAM567890", "APNS_PRIVATE_KEY": apnsKey.pemRepresentation,
            "APNS_TOPIC": "ch.waybill.app",
            "FCM_SERVICE_ACCOUNT": serviceAccount(),
            "VAPID_PUBLIC_KEY": vapidKey.publicKey.x963Representation.base64URLEncodedString(),
            "VAPID_PRIVATE_KEY": vapidKey.rawRepresentation.base64URLEncodedString(),
            "VAPID_SUBJECT": "mailto:ops@waybill.example",
        ]
    }

    static func settings(_ env: [String: String], files: [String: String] = [:]) throws -> PushSettings {
        try PushSettings.fromEnvironment(env, readFile: { files[$0].map { Data($0.utf8) } })
    }

    @Test("Nothing set: every service is off")
    func nothingSet() throws {
        let settings = try Self.settings(["DATABASE_URL": "sqlite://x.sqlite", "APNS_TOPIC": "  "])
        #expect(settings == PushSettings(apns: nil, fcm: nil, vapid: nil))
    }

    @Test("Every service configured: keys parsed, production APNs by default, sandbox on request, files read from _PATH")
    func complete() throws {
        let settings = try Self.settings(Self.complete)
        let apns = try #require(settings.apns)
        #expect(apns.keyID == "KEY4567890" && apns.teamID == "TEAM567890" && apns.topic == "ch.waybill.app")
        #expect(apns.baseURL == "https://api.push.apple.com")
        #expect(apns.privateKey.rawRepresentation == Self.apnsKey.rawRepresentation)
        let fcm = try #require(settings.fcm)
        #expect(fcm.projectID == "waybill-test" && fcm.clientEmail == "push@waybill-test.iam.gserviceaccount.com")
        #expect(fcm.tokenURI == "https://oauth2.googleapis.com/token" && fcm.baseURL == "https://fcm.googleapis.com")
        #expect(fcm.privateKey.derRepresentation == Self.rsaKey.derRepresentation)
        let vapid = try #require(settings.vapid)
        #expect(vapid.publicKeyBase64URL == Self.complete["VAPID_PUBLIC_KEY"])
        #expect(vapid.subject == "mailto:ops@waybill.example")

        var env = Self.complete
        env["APNS_ENVIRONMENT"] = "sandbox"
        env["APNS_PRIVATE_KEY"] = Self.apnsKey.pemRepresentation.replacingOccurrences(of: "\n", with: "\\n")
        env["FCM_BASE_URL"] = "https://127.0.0.1:8443/"
        #expect(try Self.settings(env).apns?.baseURL == "https://api.sandbox.push.apple.com")
        #expect(try Self.settings(env).apns?.privateKey.rawRepresentation == Self.apnsKey.rawRepresentation)
        #expect(try Self.settings(env).fcm?.baseURL == "https://127.0.0.1:8443")
        env["APNS_BASE_URL"] = "https://localhost:9443"
        #expect(try Self.settings(env).apns?.baseURL == "https://localhost:9443")

        var paths = Self.complete
        paths["APNS_PRIVATE_KEY"] = nil
        paths["APNS_PRIVATE_KEY_PATH"] = "/secrets/AuthKey.p8"
        paths["FCM_SERVICE_ACCOUNT"] = nil
        paths["FCM_SERVICE_ACCOUNT_PATH"] = "/secrets/firebase.json"
        let fromFiles = try Self.settings(paths, files: ["/secrets/AuthKey.p8": Self.apnsKey.pemRepresentation,
                                                          "/secrets/firebase.json": Self.serviceAccount(tokenURI: nil)])
        #expect(fromFiles.apns == settings.apns)
        #expect(fromFiles.fcm == settings.fcm, "token_uri defaults to Google's")
    }

    @Test("Malformed or partial values are configuration errors, never a silently disabled service")
    func malformed() throws {
        let changes: [(String, [String: String?])] = [
            ("APNs key not PEM", ["APNS_PRIVATE_KEY": "-----BEGIN PRIVATE KEY-----\nnope\n-----END PRIVATE KEY-----"]),
            ("APNs key is RSA", ["APNS_PRIVATE_KEY": Self.rsaKey.pemRepresentation]),
            ("APNs partial", ["APNS_TEAM_ID": nil]),
            ("APNs key id", ["APNS_KEY_ID": "AuthKey_KEY4567890"]),
            ("APNs topic", ["APNS_TOPIC": "ch.waybill.app/evil"]),
            ("APNs environment", ["APNS_ENVIRONMENT": "staging"]),
            ("APNs key twice", ["APNS_PRIVATE_KEY_PATH": "/secrets/AuthKey.p8"]),
            ("APNs unreadable file", ["APNS_PRIVATE_KEY": nil, "APNS_PRIVATE_KEY_PATH": "/missing.p8"]),
            ("FCM not JSON", ["FCM_SERVICE_ACCOUNT": "{not json"]),
            ("FCM key missing", ["FCM_SERVICE_ACCOUNT": #"{"project_id":"p","client_email":"a@b.c"}"#]),
            ("FCM key not RSA", ["FCM_SERVICE_ACCOUNT": #"{"project_id":"p","client_email":"a@b.c","private_key":"x"}"#]),
            ("FCM project id", ["FCM_SERVICE_ACCOUNT": Self.serviceAccount().replacingOccurrences(of: "waybill-test", with: "a/b")]),
            ("FCM token_uri", ["FCM_SERVICE_ACCOUNT": Self.serviceAccount(tokenURI: "not a url")]),
            ("FCM base without account", ["FCM_SERVICE_ACCOUNT": nil, "FCM_BASE_URL": "https://localhost"]),
            ("VAPID private not base64url", ["VAPID_PRIVATE_KEY": "%%%"]),
            ("VAPID private too short", ["VAPID_PRIVATE_KEY": Data(repeating: 7, count: 31).base64URLEncodedString()]),
            ("VAPID public not a point", ["VAPID_PUBLIC_KEY": Data(repeating: 4, count: 65).base64URLEncodedString()]),
            ("VAPID subject", ["VAPID_SUBJECT": "ops@waybill.example"]),
            ("VAPID partial", ["VAPID_SUBJECT": nil]),
        ]
        for (name, change) in changes {
            var env = Self.complete
            for (key, value) in change { env[key] = value }
            #expect(throws: ConfigurationError.self, "\(name)") { try Self.settings(env) }
        }
    }

    @Test("A VAPID public key that is not the private key's is refused at startup")
    func vapidMismatch() throws {
        var env = Self.complete
        env["VAPID_PUBLIC_KEY"] = P256.Signing.PrivateKey().publicKey.x963Representation.base64URLEncodedString()
        let error = try #require(throws: ConfigurationError.self) { try Self.settings(env) }
        #expect(error.description.contains("VAPID_PUBLIC_KEY"))
    }

    @Test("Device platforms map to push services: ios → APNs, android → FCM, web → Web Push")
    func platforms() {
        #expect(PushPlatform(devicePlatform: "ios") == .apns)
        #expect(PushPlatform(devicePlatform: "android") == .fcm)
        #expect(PushPlatform(devicePlatform: "web") == .webPush)
        #expect(PushPlatform(devicePlatform: "windows") == nil)
    }

    @Test("An unconfigured platform logs one line with the title, never the token, and counts as delivered")
    func developmentLog() async throws {
        let lines = NIOLockedValueBox<[String]>([])
        let logger = Logger(label: "test.push") { _ in CapturingLogHandler(lines: lines) }
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        let service = PushService(settings: PushSettings(apns: nil, fcm: nil, vapid: nil), httpClient: client, logger: logger)
        #expect(service.vapidPublicKey == nil)
        let outcome = await service.send(PushMessage(title: "Parcel delivered", body: "b"), platform: .fcm, token: "secret-device-token")
        try await client.shutdown()
        #expect(outcome == .delivered)
        #expect(lines.withLockedValue { $0 } == ["push (development, fcm not configured): Parcel delivered"])

        let configured = PushService(settings: try Self.settings(Self.complete), httpClient: client, logger: logger)
        #expect(configured.vapidPublicKey == Self.complete["VAPID_PUBLIC_KEY"])
        #expect(Set(configured.senders.keys) == [.apns, .fcm, .webPush])
    }
}

struct CapturingLogHandler: LogHandler {
    let lines: NIOLockedValueBox<[String]>
    var logLevel: Logger.Level = .trace
    var metadata: Logger.Metadata = [:]
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        lines.withLockedValue { $0.append(event.message.description) }
    }
}
