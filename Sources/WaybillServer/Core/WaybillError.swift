import Vapor
import WaybillCore

/// Every error a client sees: a status, a stable code, a message for people and, where input
/// fields are at fault, a reason for each. Rendered by `APIErrorMiddleware` as
/// `{"error": {"code": …, "message": …, "fields": {…}}}`.
public struct WaybillError: Error, Sendable {
    public var status: HTTPResponseStatus
    public var code: ErrorCode
    public var message: String
    public var fields: [String: String]?
    public var retryAfter: Int?
    /// With `invalid_transition`: the order's status now.
    public var currentStatus: String?

    public init(_ status: HTTPResponseStatus, _ code: ErrorCode, _ message: String,
                fields: [String: String]? = nil, retryAfter: Int? = nil) {
        self.status = status
        self.code = code
        self.message = message
        self.fields = fields
        self.retryAfter = retryAfter
    }

    public static func validation(_ errors: FieldErrors) -> WaybillError {
        WaybillError(.unprocessableEntity, .validationFailed, "Some fields are missing or invalid.", fields: errors.fields)
    }

    public static func validation(_ field: String, _ reason: String) -> WaybillError {
        validation(FieldErrors([field: reason]))
    }

    public static let unauthenticated = WaybillError(.unauthorized, .unauthenticated, "Sign in to continue.")
    public static let invalidToken = WaybillError(.unauthorized, .invalidToken, "The access token is not valid.")
    public static let tokenExpired = WaybillError(.unauthorized, .tokenExpired, "The access token has expired; refresh it.")
    public static let sessionRevoked = WaybillError(.unauthorized, .sessionRevoked, "This session has ended; sign in again.")
    public static let invalidCredentials = WaybillError(.unauthorized, .invalidCredentials, "The email or password is wrong.")
    public static let invalidRefreshToken = WaybillError(.unauthorized, .invalidRefreshToken, "The refresh token is not valid; sign in again.")
    public static let emailNotVerified = WaybillError(.forbidden, .emailNotVerified, "Confirm your email address with the code we sent before signing in.")
    public static let accountDisabled = WaybillError(.forbidden, .accountDisabled, "This account has been disabled.")
    public static let forbidden = WaybillError(.forbidden, .forbidden, "Your role does not allow this.")
    public static let accountSuspended = WaybillError(.forbidden, .accountSuspended, ErrorCode.accountSuspended.english)
    public static let reauthenticationRequired = WaybillError(.forbidden, .reauthenticationRequired, ErrorCode.reauthenticationRequired.english)
    public static let notFound = WaybillError(.notFound, .notFound, "Not found.")
    public static let emailInUse = WaybillError(.conflict, .emailInUse, "An account already uses this email address.", fields: ["email": "in_use"])
    public static let invalidCode = WaybillError(.badRequest, .invalidCode, "The code is wrong or has expired. Ask for a new one.")
    public static let codeLocked = WaybillError(.badRequest, .codeLocked, "Too many wrong tries. Ask for a new code.")

    /// A query parameter that parses but makes no sense (an unknown cursor, a month that is not one).
    public static func invalidParameter(_ field: String, _ reason: String = "invalid") -> WaybillError {
        WaybillError(.badRequest, .invalidParameter, "A query parameter is malformed or out of range.", fields: [field: reason])
    }

    static let tooManyConnections = WaybillError(.tooManyRequests, .tooManyConnections,
                                                 "Too many live connections are open for this account or address; close one first.", retryAfter: 5)

    public static func tooManyRequests(retryAfter seconds: Int, _ message: String = "Too many attempts. Try again later.") -> WaybillError {
        WaybillError(.tooManyRequests, .rateLimited, message, retryAfter: max(1, seconds))
    }
}

extension FieldErrorsError {
    var apiError: WaybillError { .validation(errors) }
}

extension Result where Failure == FieldErrorsError {
    /// The value, or a 422 listing each field at fault.
    func orValidationError() throws -> Success {
        switch self {
        case .success(let value): return value
        case .failure(let error): throw error.apiError
        }
    }
}
