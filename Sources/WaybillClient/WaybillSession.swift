import Foundation
import HTTPTypes
import OpenAPIRuntime
@_exported import WaybillAPI
import WaybillAPIClient
@_exported import WaybillCore
#if canImport(Darwin)
import OpenAPIURLSession
#else
import AsyncHTTPClient
import OpenAPIAsyncHTTPClient
#endif

/// An account as the server describes it.
public typealias Account = Components.Schemas.User

/// What happened to the session, for an app that shows the sign-in screen when it ends.
public enum SessionEvent: Sendable, Equatable {
    case signedIn(userId: UserID, role: Role)
    /// A new token pair replaced the old one (before expiry, or after the server refused the old one).
    case refreshed
    /// The session is over: `signed_out`, or the server's reason (`session_revoked`,
    /// `invalid_refresh_token`, `account_disabled`…). The token store is empty now.
    case ended(reason: String)
}

/// A person's session with a Waybill server: signs in, keeps the tokens fresh, and calls the API on
/// their behalf.
///
/// ```swift
/// let session = WaybillSession(serverURL: URL(string: "https://waybill.example.com/api/v1")!,
///                              tokenStore: KeychainTokenStore())
/// try await session.signIn(email: email, password: password)
/// let orders = try await session.orders()
/// ```
///
/// Tokens live in the ``TokenStore`` the app supplies. The access token is refreshed shortly before
/// it expires and, once, after the server refuses it with 401; however many requests are waiting,
/// only one refresh is made (single flight). When the refresh token is refused (reused, revoked,
/// the account disabled), the store is cleared, ``events()`` reports ``SessionEvent/ended(reason:)``
/// and calls throw ``WaybillError/sessionEnded(code:)``.
public final class WaybillSession: Sendable {
    /// The API's base, such as `https://waybill.example.com/api/v1`.
    public let serverURL: URL
    /// The generated client, authenticated by this session, for anything the facade does not wrap.
    public let client: Client
    let authenticator: Authenticator
    let socketFactory: any LiveSocketFactory

    /// - Parameters:
    ///   - serverURL: the API's base, such as `https://waybill.example.com/api/v1`.
    ///   - tokenStore: where the tokens are kept; an app that remembers its user across launches
    ///     passes a persistent one (`KeychainTokenStore` on Apple platforms).
    ///   - transport: how HTTP requests are sent; by default URLSession on Apple platforms and
    ///     async-http-client on Linux.
    ///   - refreshLeeway: how long before the access token expires it is refreshed.
    ///   - liveSockets: how the live channel's WebSocket is opened; by default `URLSessionWebSocketTask`
    ///     on Apple platforms and websocket-kit (SwiftNIO) on Linux.
    public init(serverURL: URL, tokenStore: any TokenStore = InMemoryTokenStore(),
                transport: (any ClientTransport)? = nil, refreshLeeway: TimeInterval = 60,
                liveSockets: (any LiveSocketFactory)? = nil) {
        let transport = transport ?? Self.defaultTransport()
        self.serverURL = serverURL
        let plain = Client(serverURL: serverURL, configuration: .waybill, transport: transport, middlewares: [ErrorMiddleware()])
        let authenticator = Authenticator(store: tokenStore, leeway: refreshLeeway) { refreshToken in
            do {
                let output = try await plain.refreshSession(body: .json(.init(refreshToken: refreshToken)))
                return try output.ok.body.json
            } catch {
                throw WaybillError.from(error)
            }
        }
        self.authenticator = authenticator
        client = Client(serverURL: serverURL, configuration: .waybill, transport: transport,
                        middlewares: [ErrorMiddleware(), AuthMiddleware(authenticator: authenticator)])
        socketFactory = liveSockets ?? platformLiveSocketFactory()
    }

    static func defaultTransport() -> any ClientTransport {
        #if canImport(Darwin)
        URLSessionTransport()
        #else
        AsyncHTTPClientTransport(configuration: .init(client: sharedHTTPClient, timeout: .seconds(60)))
        #endif
    }

    #if !canImport(Darwin)
    /// One client for every session of the process. Unlike `HTTPClient.shared`, a refused or failed
    /// connection fails the request at once (as URLSession does when offline) instead of being
    /// retried until the request times out: the SDK's own callers (the live stream, the position
    /// uploader) retry with backoff, and an app wants to know it is offline.
    /// The connect timeout also bounds a request's wait for a free connection of the pool (8 per
    /// server): 30 s, so that a burst of calls on a slow link or to a busy server waits its turn
    /// within the 60 s a request may take, as URLSession lets it, instead of failing at 10 s.
    static let sharedHTTPClient: HTTPClient = {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.timeout.connect = .seconds(30)
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }()
    #endif

    /// Runs a generated-client call and turns whatever it throws into a ``WaybillError``.
    func call<T: Sendable>(_ body: (Client) async throws -> T) async throws(WaybillError) -> T {
        do {
            return try await body(client)
        } catch {
            throw WaybillError.from(error)
        }
    }

    // MARK: Session state

    /// A new stream of what happens to the session (sign-in, refresh, end). Each call gets its own
    /// stream; it ends when the caller stops iterating.
    public func events() -> AsyncStream<SessionEvent> { authenticator.hub.stream() }

    /// Whether tokens are stored (the session may still turn out to be revoked on the next call).
    public var isSignedIn: Bool {
        get async { (try? await authenticator.current()) != nil }
    }

    /// The stored tokens, if any.
    public var tokens: SessionTokens? {
        get async { try? await authenticator.current() }
    }

    /// How many times this session exchanged its refresh token.
    public var refreshCount: Int {
        get async { await authenticator.refreshCount }
    }

    // MARK: Account

    /// Creates a customer account; the server mails a code to confirm the address.
    public func register(_ form: Registration) async throws(WaybillError) {
        _ = try await call { client in
            try await client.register(body: .json(.init(
                firstName: form.firstName, lastName: form.lastName, address: form.address, postalCode: form.postalCode,
                city: form.city, email: form.email, password: form.password, isCompany: form.isCompany,
                companyName: form.companyName))).created
        }
    }

    /// Confirms the address with the mailed code.
    public func verifyEmail(_ email: String, code: String) async throws(WaybillError) {
        _ = try await call { try await $0.verifyEmail(body: .json(.init(email: email, code: code))).ok }
    }

    /// Mails a new confirmation code.
    public func resendVerification(_ email: String) async throws(WaybillError) {
        _ = try await call { try await $0.resendVerification(body: .json(.init(email: email))).accepted }
    }

    /// Signs in and stores the tokens. Pass the device's push token to receive notifications.
    @discardableResult
    public func signIn(email: String, password: String, device: (platform: DevicePlatform, pushToken: String)? = nil)
        async throws(WaybillError) -> Account {
        let auth = try await call { client in
            try await client.login(body: .json(.init(
                email: email, password: password,
                device: device.map { .init(platform: .init(rawValue: $0.platform.rawValue)!, pushToken: $0.pushToken) }))).ok.body.json
        }
        try await authenticator.signedIn(auth)
        return auth.user
    }

    /// Ends the session on the server and clears the token store. Reports ``SessionEvent/ended(reason:)``
    /// with `signed_out`.
    public func signOut() async throws(WaybillError) {
        guard let tokens = try? await authenticator.current() else { return }
        _ = try await call { try await $0.logout(body: .json(.init(refreshToken: tokens.refreshToken))).noContent }
        await authenticator.end(reason: "signed_out")
    }

    /// Mails a code for setting a new password (also how invited drivers and managers start).
    public func requestPasswordReset(_ email: String) async throws(WaybillError) {
        _ = try await call { try await $0.requestPasswordReset(body: .json(.init(email: email))).accepted }
    }

    /// Checks a password-reset code before asking for the new password.
    public func verifyPasswordResetCode(_ email: String, code: String) async throws(WaybillError) {
        _ = try await call { try await $0.verifyPasswordResetCode(body: .json(.init(email: email, code: code))).ok }
    }

    /// Sets a new password with the mailed code. Every session of the account ends.
    public func completePasswordReset(_ email: String, code: String, newPassword: String) async throws(WaybillError) {
        _ = try await call {
            try await $0.completePasswordReset(body: .json(.init(email: email, code: code, newPassword: newPassword))).ok
        }
    }

    /// The signed-in person's account.
    public func me() async throws(WaybillError) -> Account {
        try await call { try await $0.getMe().ok.body.json }
    }

    /// Changes the fields given (the others stay as they are).
    public func updateMe(firstName: String? = nil, lastName: String? = nil, address: String? = nil, postalCode: String? = nil,
                         city: String? = nil, companyName: String? = nil) async throws(WaybillError) -> Account {
        try await call {
            try await $0.updateMe(body: .json(.init(firstName: firstName, lastName: lastName, address: address,
                                                    postalCode: postalCode, city: city, companyName: companyName))).ok.body.json
        }
    }

    /// Changes the password; the account's other sessions end, this one continues.
    public func changePassword(current: String, new: String) async throws(WaybillError) {
        _ = try await call { try await $0.changePassword(body: .json(.init(currentPassword: current, newPassword: new))).ok }
    }

    /// Registers this device for push notifications.
    @discardableResult
    public func registerDevice(platform: DevicePlatform, pushToken: String) async throws(WaybillError) -> Components.Schemas.Device {
        try await call {
            try await $0.registerDevice(body: .json(.init(platform: .init(rawValue: platform.rawValue)!, pushToken: pushToken)))
                .created.body.json
        }
    }

    /// The person's notifications, newest first.
    public func notifications(unreadOnly: Bool = false, cursor: String? = nil, limit: Int? = nil)
        async throws(WaybillError) -> Components.Schemas.NotificationPage {
        try await call {
            try await $0.listNotifications(query: .init(unread: unreadOnly ? true : nil, cursor: cursor, limit: limit)).ok.body.json
        }
    }

    @discardableResult
    public func markNotificationRead(_ id: NotificationID) async throws(WaybillError) -> Components.Schemas.Notification {
        try await call { try await $0.markNotificationRead(path: .init(notificationId: id.uuidString.lowercased())).ok.body.json }
    }

    /// Marks every notification read.
    public func markAllNotificationsRead() async throws(WaybillError) {
        _ = try await call { try await $0.markAllNotificationsRead().ok }
    }

    /// The ways this customer may pay for a new order, in the order to offer them (the server
    /// refuses any other with the same rule).
    public func paymentOptions() async throws(WaybillError) -> Components.Schemas.PaymentOptions {
        try await call { try await $0.getPaymentOptions().ok.body.json }
    }
}

// MARK: - Tokens

/// Publishes session events to every open ``WaybillSession/events()`` stream.
final class SessionEventHub: @unchecked Sendable {
    private let lock = NSLock()
    private var continuations: [UUID: AsyncStream<SessionEvent>.Continuation] = [:]

    func stream() -> AsyncStream<SessionEvent> {
        let id = UUID()
        let (stream, continuation) = AsyncStream<SessionEvent>.makeStream(bufferingPolicy: .unbounded)
        continuation.onTermination = { [weak self] _ in self?.locked { _ = $0.removeValue(forKey: id) } }
        locked { $0[id] = continuation }
        return stream
    }

    func publish(_ event: SessionEvent) {
        for continuation in locked({ Array($0.values) }) { continuation.yield(event) }
    }

    /// `NSLock.withLock` needs macOS 14 / iOS 17; the SDK supports macOS 13 / iOS 16.
    private func locked<T>(_ body: (inout [UUID: AsyncStream<SessionEvent>.Continuation]) -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body(&continuations)
    }
}

/// Owns the tokens: hands out a valid access token, and refreshes at most one at a time.
actor Authenticator {
    typealias Refresher = @Sendable (String) async throws -> Components.Schemas.AuthResponse

    let store: any TokenStore
    let leeway: TimeInterval
    let refresher: Refresher
    nonisolated let hub = SessionEventHub()
    private var cached: SessionTokens?
    private var loaded = false
    private var refreshing: Task<SessionTokens, any Error>?
    private(set) var refreshCount = 0
    /// Why the session last ended, until the next sign-in.
    private(set) var endedReason: String?

    init(store: any TokenStore, leeway: TimeInterval, refresher: @escaping Refresher) {
        self.store = store
        self.leeway = leeway
        self.refresher = refresher
    }

    func current() async throws -> SessionTokens? {
        if !loaded {
            cached = try await store.load()
            loaded = true
        }
        return cached
    }

    static func tokens(from auth: Components.Schemas.AuthResponse) -> SessionTokens {
        SessionTokens(accessToken: auth.accessToken, refreshToken: auth.refreshToken,
                      expiresAt: Date().addingTimeInterval(TimeInterval(auth.expiresIn)),
                      userId: UserID(uuidString: auth.user.id), role: Role(rawValue: auth.role.rawValue))
    }

    func signedIn(_ auth: Components.Schemas.AuthResponse) async throws(WaybillError) {
        let tokens = Self.tokens(from: auth)
        do { try await store.save(tokens) } catch { throw .unexpectedResponse("could not store the tokens: \(error)") }
        cached = tokens
        loaded = true
        endedReason = nil
        if let id = tokens.userId, let role = tokens.role { hub.publish(.signedIn(userId: id, role: role)) }
    }

    /// A token to send now: refreshed first if it expires within the leeway. `nil` when signed out
    /// and `required` is false.
    func accessToken(required: Bool) async throws -> String? {
        if let refreshing { return try await refreshing.value.accessToken }
        guard let tokens = try await current() else {
            if required { throw WaybillError.notSignedIn }
            return nil
        }
        if tokens.expiresAt.timeIntervalSinceNow < leeway { return try await refresh(tokens).accessToken }
        return tokens.accessToken
    }

    /// The server refused `token` with 401: refresh, unless someone already did.
    func refreshAfterRejection(of token: String) async throws -> String {
        if let refreshing { return try await refreshing.value.accessToken }
        guard let tokens = try await current() else { throw WaybillError.sessionEnded(code: "signed_out") }
        if tokens.accessToken != token { return tokens.accessToken }
        return try await refresh(tokens).accessToken
    }

    private func refresh(_ tokens: SessionTokens) async throws -> SessionTokens {
        if let refreshing { return try await refreshing.value }
        let task = Task { try await self.exchange(tokens) }
        refreshing = task
        defer { refreshing = nil }
        return try await task.value
    }

    private func exchange(_ tokens: SessionTokens) async throws -> SessionTokens {
        let auth: Components.Schemas.AuthResponse
        do {
            auth = try await refresher(tokens.refreshToken)
        } catch let error as WaybillError {
            // The server refused the refresh token itself: the session is over. Anything else (no
            // network, a server error) leaves the tokens in place for the next try.
            if case .server(let problem) = error, [400, 401, 403, 404, 422].contains(problem.status) {
                await end(reason: problem.code)
                throw WaybillError.sessionEnded(code: problem.code)
            }
            throw error
        }
        var fresh = Self.tokens(from: auth)
        fresh.userId = fresh.userId ?? tokens.userId
        try await store.save(fresh)
        cached = fresh
        refreshCount += 1
        hub.publish(.refreshed)
        return fresh
    }

    /// Throws unless someone is signed in: ``WaybillError/sessionEnded(code:)`` if the session ended
    /// while this object watched, else ``WaybillError/notSignedIn``.
    func requireSignedIn() async throws(WaybillError) {
        let tokens: SessionTokens?
        do { tokens = try await current() } catch { throw .unexpectedResponse("could not read the tokens: \(error)") }
        guard tokens == nil else { return }
        if let endedReason { throw .sessionEnded(code: endedReason) }
        throw .notSignedIn
    }

    func end(reason: String) async {
        endedReason = reason
        cached = nil
        loaded = true
        try? await store.clear()
        hub.publish(.ended(reason: reason))
    }
}

/// Attaches the access token, refreshes it once after a 401 and sends the request again.
struct AuthMiddleware: ClientMiddleware {
    let authenticator: Authenticator

    /// Operations that never take a token (`security: []` in the spec).
    static let publicOperations: Set<String> = [
        "register", "verifyEmail", "resendVerification", "login", "refreshSession", "logout", "requestPasswordReset",
        "verifyPasswordResetCode", "completePasswordReset", "stripeWebhook", "stripeConnectWebhook", "getPublicTracking", "getVapidPublicKey",
        "detectCarrier", "findTrackingNumbers", "getSharedParcel", "lookUpNumber", "getCarrierStatistics", "shopWebhook",
    ]
    /// Operations where a token is optional (`[{}, bearerAuth]`).
    static let optionalOperations: Set<String> = ["createLiveTicket"]

    func intercept(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
                   next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)) async throws
        -> (HTTPResponse, HTTPBody?) {
        if Self.publicOperations.contains(operationID) { return try await next(request, body, baseURL) }
        // Kept so the request can be sent a second time after a refresh.
        let bytes: HTTPBody.ByteChunk? = if let body { try await HTTPBody.ByteChunk(collecting: body, upTo: 16 * 1024 * 1024) } else { nil }
        var request = request
        guard let token = try await authenticator.accessToken(required: !Self.optionalOperations.contains(operationID)) else {
            return try await next(request, bytes.map { HTTPBody($0) }, baseURL)
        }
        request.headerFields[.authorization] = "Bearer \(token)"
        let (response, responseBody) = try await next(request, bytes.map { HTTPBody($0) }, baseURL)
        guard response.status.code == 401 else { return (response, responseBody) }
        let fresh = try await authenticator.refreshAfterRejection(of: token)
        request.headerFields[.authorization] = "Bearer \(fresh)"
        return try await next(request, bytes.map { HTTPBody($0) }, baseURL)
    }
}

/// Turns every error response into ``WaybillError/server(_:)`` with the server's code and fields.
struct ErrorMiddleware: ClientMiddleware {
    func intercept(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
                   next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)) async throws
        -> (HTTPResponse, HTTPBody?) {
        let response: HTTPResponse
        let responseBody: HTTPBody?
        do {
            (response, responseBody) = try await next(request, body, baseURL)
        } catch {
            // What the inner middleware threw (the runtime wraps it), or the transport's error.
            throw WaybillError.from(error)
        }
        guard response.status.code >= 400 else { return (response, responseBody) }
        let data: Data = if let responseBody { (try? await Data(collecting: responseBody, upTo: 1024 * 1024)) ?? Data() } else { Data() }
        // A day at most: a huge Retry-After from a server or a proxy must not overflow a sleep.
        let retryAfter = response.headerFields[.retryAfter].flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
            .map { min(max($0, 0), 86_400) }
        throw WaybillError.server(ServerProblem.decode(status: response.status.code, data: data, retryAfter: retryAfter))
    }
}
