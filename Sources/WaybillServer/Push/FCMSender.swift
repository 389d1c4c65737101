import _CryptoExtras
import AsyncHTTPClient
import Foundation
import Vapor

/// Firebase Cloud Messaging, HTTP v1 API: an OAuth 2 access token obtained with the service
/// account's signed assertion, then one `messages:send` per device.
struct FCMSender: PushSender {
    let settings: FCMSettings
    let httpClient: HTTPClient
    let logger: Logger
    let accessTokens: FCMAccessTokens

    init(settings: FCMSettings, httpClient: HTTPClient, logger: Logger, now: @escaping @Sendable () -> Date = { Date() }) {
        self.settings = settings
        self.httpClient = httpClient
        self.logger = logger
        self.accessTokens = FCMAccessTokens(settings: settings, httpClient: httpClient, logger: logger, now: now)
    }

    func send(_ message: PushMessage, to token: String) async -> PushOutcome {
        guard !token.isEmpty, token.count <= 4096 else { return .gone }
        guard let body = try? Self.payload(message, token: token) else { return .rejected("payload could not be encoded") }
        let url = "\(settings.baseURL)/v1/projects/\(settings.projectID)/messages:send"
        // At most two tries: the second only after FCM refused the access token and a new one was fetched.
        var outcome = PushOutcome.retry("access token refused twice")
        for attempt in 1...2 {
            let accessToken: String
            do {
                accessToken = try await accessTokens.current()
            } catch {
                logger.error("FCM: no access token: \(error)")
                return .retry("access token: \(error)")
            }
            let response: PushHTTP.Response
            do {
                response = try await PushHTTP.post(
                    httpClient, url: url,
                    headers: [("Authorization", "Bearer \(accessToken)"), ("Content-Type", "application/json; charset=UTF-8")],
                    body: body, logger: logger)
            } catch {
                logger.warning("FCM unreachable: \(error)")
                return .retry("network: \(error)")
            }
            switch Self.outcome(status: response.status, json: response.json) {
            case .done(let result):
                if case .rejected(let why) = result { logger.warning("FCM rejected a push: \(why)") }
                return result
            case .renewAccessToken:
                logger.warning("FCM refused the access token; fetching a new one (attempt \(attempt))")
                await accessTokens.invalidate(accessToken)
                outcome = .retry("access token refused")
            }
        }
        return outcome
    }

    /// `{"message":{"token","notification":{"title","body"},"data"?,"android":{"priority":"high","ttl","collapse_key"?}}}`
    static func payload(_ message: PushMessage, token: String) throws -> Data {
        var android: [String: Any] = ["priority": "high", "ttl": "\(PushTTL.seconds)s"]
        if let key = message.collapseKey { android["collapse_key"] = key }
        var body: [String: Any] = [
            "token": token,
            "notification": ["title": message.title, "body": message.body],
            "android": android,
        ]
        if !message.data.isEmpty { body["data"] = message.data }
        return try JSONSerialization.data(withJSONObject: ["message": body], options: [.sortedKeys, .withoutEscapingSlashes])
    }

    enum Decision: Equatable {
        case done(PushOutcome)
        case renewAccessToken
    }

    /// What an FCM answer means (https://firebase.google.com/docs/reference/fcm/rest/v1/ErrorCode).
    /// Errors look like `{"error":{"status":"NOT_FOUND","details":[{"errorCode":"UNREGISTERED"}]}}`.
    static func outcome(status: Int, json: [String: Any]) -> Decision {
        let error = json["error"] as? [String: Any]
        let details = (error?["details"] as? [[String: Any]]) ?? []
        let codes = details.compactMap { $0["errorCode"] as? String } + [(error?["status"] as? String)].compactMap { $0 }
        let reason = codes.first ?? "HTTP \(status)"
        switch status {
        case 200:
            return .done(.delivered)
        case 404:
            return .done(.gone)
        case _ where codes.contains("UNREGISTERED"):
            return .done(.gone)
        case 401:
            return .renewAccessToken
        case 429, 500...599:
            return .done(.retry(reason))
        default:
            return .done(.rejected(reason))
        }
    }
}

/// Google's OAuth access token for the service account, shared by every push and fetched again
/// shortly before it expires. An actor so that concurrent pushes wait for one fetch, not one each.
actor FCMAccessTokens {
    static let scope = "https://www.googleapis.com/auth/firebase.messaging"

    struct TokenError: Error, CustomStringConvertible {
        var description: String
    }

    private let settings: FCMSettings
    private let httpClient: HTTPClient
    private let logger: Logger
    private let now: @Sendable () -> Date
    private var cached: (token: String, renewAt: Date)?
    private var pending: Task<(token: String, renewAt: Date), any Error>?

    init(settings: FCMSettings, httpClient: HTTPClient, logger: Logger, now: @escaping @Sendable () -> Date) {
        self.settings = settings
        self.httpClient = httpClient
        self.logger = logger
        self.now = now
    }

    func current() async throws -> String {
        if let cached, now() < cached.renewAt { return cached.token }
        if let pending { return try await pending.value.token }
        let task = Task { try await fetch() }
        pending = task
        defer { pending = nil }
        let fresh = try await task.value
        cached = fresh
        return fresh.token
    }

    /// Forgets `token` after FCM refused it, unless it has already been replaced.
    func invalidate(_ token: String) {
        if cached?.token == token { cached = nil }
    }

    /// The JWT-bearer grant (RFC 7523) Google documents for service accounts.
    private func fetch() async throws -> (token: String, renewAt: Date) {
        let issuedAt = Int(now().timeIntervalSince1970)
        let assertion = try JWS.rs256(
            header: ["typ": "JWT"],
            claims: ["iss": settings.clientEmail, "scope": Self.scope, "aud": settings.tokenURI,
                     "iat": issuedAt, "exp": issuedAt + 3600],
            key: settings.privateKey)
        let form = StripePayments.formEncode([
            ("grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer"),
            ("assertion", assertion),
        ])
        let response = try await PushHTTP.post(
            httpClient, url: settings.tokenURI,
            headers: [("Content-Type", "application/x-www-form-urlencoded")], body: Data(form.utf8), logger: logger)
        let json = response.json
        guard response.status == 200, let token = json["access_token"] as? String, !token.isEmpty else {
            let reason = (json["error"] as? String) ?? "HTTP \(response.status)"
            throw TokenError(description: "the token endpoint answered \(reason)")
        }
        // Renew five minutes early (or halfway, for a short-lived token) so no push carries an expiring token.
        let lifetime = (json["expires_in"] as? NSNumber)?.doubleValue ?? 3600
        let margin = min(300, lifetime / 2)
        return (token, now().addingTimeInterval(lifetime - margin))
    }
}
