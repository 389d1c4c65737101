import AsyncHTTPClient
import Crypto
import Foundation
import NIOConcurrencyHelpers
import Vapor

/// Apple Push Notification service, token-based: an ES256 provider token instead of a TLS client
/// certificate, over HTTP/2 (AsyncHTTPClient negotiates h2 by ALPN; APNs accepts nothing else).
struct APNsSender: PushSender {
    let settings: APNsSettings
    let httpClient: HTTPClient
    let logger: Logger
    let tokens: APNsProviderTokens
    let now: @Sendable () -> Date

    init(settings: APNsSettings, httpClient: HTTPClient, logger: Logger, now: @escaping @Sendable () -> Date = { Date() }) {
        self.settings = settings
        self.httpClient = httpClient
        self.logger = logger
        self.now = now
        self.tokens = APNsProviderTokens(settings: settings, now: now)
    }

    func send(_ message: PushMessage, to token: String) async -> PushOutcome {
        // A token that is not hex was never issued by Apple; no request could succeed with it.
        guard let deviceToken = Self.deviceToken(token) else { return .gone }
        guard let body = try? Self.payload(message) else { return .rejected("payload could not be encoded") }
        // At most two tries: the second only after APNs refused the provider token and a new one was made.
        var outcome = PushOutcome.retry("provider token refused twice")
        for attempt in 1...2 {
            let jwt: String
            do {
                jwt = try tokens.current()
            } catch {
                logger.error("APNs: could not sign the provider token: \(error)")
                return .retry("provider token could not be signed")
            }
            let response: PushHTTP.Response
            do {
                response = try await PushHTTP.post(
                    httpClient, url: "\(settings.baseURL)/3/device/\(deviceToken)",
                    headers: headers(message, jwt: jwt), body: body, logger: logger)
            } catch {
                logger.warning("APNs unreachable: \(error)")
                return .retry("network: \(error)")
            }
            let reason = response.json["reason"] as? String
            switch Self.outcome(status: response.status, reason: reason) {
            case .done(let result):
                if case .rejected(let why) = result { logger.warning("APNs rejected a push: \(why)") }
                return result
            case .renewProviderToken:
                logger.warning("APNs refused the provider token (\(reason ?? "403")); signing a new one (attempt \(attempt))")
                tokens.invalidate(jwt)
                outcome = .retry(reason ?? "provider token refused")
            }
        }
        return outcome
    }

    func headers(_ message: PushMessage, jwt: String) -> [(String, String)] {
        var headers = [
            ("authorization", "bearer \(jwt)"),
            ("apns-topic", settings.topic),
            ("apns-push-type", "alert"),
            ("apns-priority", "10"),
            ("apns-expiration", String(Int64(now().timeIntervalSince1970) + PushTTL.seconds)),
            ("content-type", "application/json"),
        ]
        if let key = message.collapseKey { headers.append(("apns-collapse-id", Self.collapseID(key))) }
        return headers
    }

    /// `{"aps":{"alert":{"title","body"},"sound":"default","badge"?}, …data}`; a data key named `aps`
    /// is dropped rather than allowed to replace the alert.
    static func payload(_ message: PushMessage) throws -> Data {
        var aps: [String: Any] = ["alert": ["title": message.title, "body": message.body], "sound": "default"]
        if let badge = message.badge { aps["badge"] = badge }
        var object: [String: Any] = message.data.filter { $0.key != "aps" }
        object["aps"] = aps
        return try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
    }

    /// APNs limits `apns-collapse-id` to 64 bytes; a longer key is replaced by its SHA-256 in hex
    /// (64 characters), which keeps distinct keys distinct.
    static func collapseID(_ key: String) -> String {
        key.utf8.count <= 64 ? key : SHA256.hash(data: Data(key.utf8)).hexString
    }

    /// The token lowercased if it is hex of a plausible length (32 bytes today; Apple may lengthen it).
    static func deviceToken(_ token: String) -> String? {
        guard (16...200).contains(token.count), token.count % 2 == 0, token.allSatisfy(\.isHexDigit) else { return nil }
        return token.lowercased()
    }

    enum Decision: Equatable {
        case done(PushOutcome)
        case renewProviderToken
    }

    /// What an APNs answer means (https://developer.apple.com/documentation/usernotifications/handling-notification-responses-from-apns).
    static func outcome(status: Int, reason: String?) -> Decision {
        let reason = reason ?? ""
        switch status {
        case 200:
            return .done(.delivered)
        case 410:
            return .done(.gone)
        case _ where ["BadDeviceToken", "Unregistered", "DeviceTokenNotForTopic"].contains(reason):
            return .done(.gone)
        case 403 where reason == "ExpiredProviderToken" || reason == "InvalidProviderToken":
            return .renewProviderToken
        case 429, 500...599:
            return .done(.retry(reason.isEmpty ? "HTTP \(status)" : reason))
        default:
            return .done(.rejected(reason.isEmpty ? "HTTP \(status)" : reason))
        }
    }
}

/// The provider token, shared by every push. Apple refuses tokens older than an hour and answers
/// `TooManyProviderTokenUpdates` to a new token more often than every 20 minutes, so one token is
/// used for 40 minutes, then replaced. Thread-safe; signing is quick enough to do under the lock.
final class APNsProviderTokens: Sendable {
    static let lifetime: TimeInterval = 40 * 60

    private let settings: APNsSettings
    private let now: @Sendable () -> Date
    private let cached = NIOLockedValueBox<(jwt: String, issuedAt: Date)?>(nil)

    init(settings: APNsSettings, now: @escaping @Sendable () -> Date) {
        self.settings = settings
        self.now = now
    }

    func current() throws -> String {
        try cached.withLockedValue { cached in
            let now = now()
            if let cached, now >= cached.issuedAt, now.timeIntervalSince(cached.issuedAt) < Self.lifetime {
                return cached.jwt
            }
            let jwt = try JWS.es256(
                header: ["kid": settings.keyID],
                claims: ["iss": settings.teamID, "iat": Int(now.timeIntervalSince1970)],
                key: settings.privateKey)
            cached = (jwt, now)
            return jwt
        }
    }

    /// Forgets `jwt` after APNs refused it, unless another push has already replaced it.
    func invalidate(_ jwt: String) {
        cached.withLockedValue { if $0?.jwt == jwt { $0 = nil } }
    }
}
