import Foundation
import HTTPTypes
import OpenAPIAsyncHTTPClient
import OpenAPIRuntime
@_exported import WaybillAPI
import WaybillCore

/// An account as the server describes it.
public typealias Account = Components.Schemas.User

/// An error the server reported, with its stable code and, for invalid input, a reason per field.
public struct WaybillServerError: Error, Sendable, Equatable, CustomStringConvertible {
    public var status: Int
    public var code: String
    public var message: String
    public var fields: [String: String]

    public var description: String { "\(status) \(code): \(message)" }
}

/// Signs in to a Waybill server and calls it on the person's behalf.
///
/// This first version covers the account side (register, verify, sign in, profile, sign out). It
/// keeps the tokens in memory and attaches the access token to every request.
public actor WaybillSession {
    public struct Tokens: Sendable, Equatable {
        public var accessToken: String
        public var refreshToken: String
        public var expiresAt: Date
    }

    public private(set) var tokens: Tokens?
    /// The generated client, for operations the facade does not wrap yet.
    public nonisolated let client: Client
    private let tokenBox: TokenBox

    /// - Parameter serverURL: the API's base, such as `https://waybill.example.com/api/v1`.
    public init(serverURL: URL, transport: any ClientTransport = AsyncHTTPClientTransport()) {
        let box = TokenBox()
        tokenBox = box
        client = Client(serverURL: serverURL, configuration: .waybill, transport: transport, middlewares: [BearerMiddleware(tokens: box)])
    }

    public func register(_ form: Registration) async throws {
        let output = try await client.register(body: .json(.init(
            firstName: form.firstName, lastName: form.lastName, address: form.address, postalCode: form.postalCode,
            city: form.city, email: form.email, password: form.password, isCompany: form.isCompany,
            companyName: form.companyName)))
        guard case .created = output else { throw Self.error(output) }
    }

    public func verifyEmail(_ email: String, code: String) async throws {
        let output = try await client.verifyEmail(body: .json(.init(email: email, code: code)))
        guard case .ok = output else { throw Self.error(output) }
    }

    @discardableResult
    public func signIn(email: String, password: String, device: (DevicePlatform, String)? = nil) async throws -> Account {
        let output = try await client.login(body: .json(.init(
            email: email, password: password,
            device: device.map { .init(platform: .init(rawValue: $0.0.rawValue)!, pushToken: $0.1) })))
        guard case .ok(let ok) = output else { throw Self.error(output) }
        let auth = try ok.body.json
        let tokens = Tokens(accessToken: auth.accessToken, refreshToken: auth.refreshToken,
                            expiresAt: Date().addingTimeInterval(TimeInterval(auth.expiresIn)))
        self.tokens = tokens
        tokenBox.set(tokens.accessToken)
        return auth.user
    }

    public func me() async throws -> Account {
        let output = try await client.getMe()
        guard case .ok(let ok) = output else { throw Self.error(output) }
        return try ok.body.json
    }

    /// Ends this session on the server and forgets the tokens.
    public func signOut() async throws {
        guard let tokens else { return }
        let output = try await client.logout(body: .json(.init(refreshToken: tokens.refreshToken)))
        guard case .noContent = output else { throw Self.error(output) }
        self.tokens = nil
        tokenBox.set(nil)
    }

    /// Turns any non-success output into the server's error. Every error response of the spec
    /// carries the same `ErrorResponse` body, so this reads it generically.
    static func error(_ output: some Sendable) -> any Error {
        let mirror = Mirror(reflecting: output)
        guard let (label, value) = mirror.children.first.map({ ($0.label ?? "", $0.value) }) else {
            return WaybillServerError(status: 0, code: "unexpected_response", message: "\(output)", fields: [:])
        }
        if label == "undocumented" {
            // .undocumented(statusCode: Int, UndocumentedPayload)
            let code = Mirror(reflecting: value).children.first?.value as? Int ?? 0
            return WaybillServerError(status: code, code: "undocumented_response",
                                      message: "The server answered \(code).", fields: [:])
        }
        // `.badRequest(Components.Responses.BadRequest)` → body → .json(ErrorResponse)
        func find(_ any: Any) -> Components.Schemas.ErrorResponse? {
            if let body = any as? Components.Schemas.ErrorResponse { return body }
            for child in Mirror(reflecting: any).children {
                if let found = find(child.value) { return found }
            }
            return nil
        }
        let status = statusCodes[label] ?? 0
        guard let body = find(value) else {
            return WaybillServerError(status: status, code: "unexpected_response", message: label, fields: [:])
        }
        return WaybillServerError(status: status, code: body.error.code, message: body.error.message,
                                  fields: body.error.fields?.additionalProperties ?? [:])
    }

    static let statusCodes = [
        "badRequest": 400, "unauthorized": 401, "forbidden": 403, "notFound": 404, "conflict": 409,
        "contentTooLarge": 413, "unprocessableContent": 422, "tooManyRequests": 429,
    ]
}

/// Holds the current access token for the middleware, outside the actor so requests need no hop.
final class TokenBox: @unchecked Sendable {
    private let lock = NSLock()
    private var token: String?
    func set(_ token: String?) { lock.withLock { self.token = token } }
    func get() -> String? { lock.withLock { token } }
}

struct BearerMiddleware: ClientMiddleware {
    let tokens: TokenBox

    func intercept(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
                   next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)) async throws
        -> (HTTPResponse, HTTPBody?) {
        var request = request
        if let token = tokens.get() { request.headerFields[.authorization] = "Bearer \(token)" }
        return try await next(request, body, baseURL)
    }
}
