import Foundation
import OpenAPIRuntime
import WaybillCore

/// Everything that can go wrong when calling Waybill, as one enum.
public enum WaybillError: Error, Sendable, CustomStringConvertible {
    /// The server refused the request. `code` is stable and machine-readable (`invalid_transition`,
    /// `validation_failed`, `off_duty`, …); `fields` names each input at fault (`"email": "invalid_email"`).
    case server(ServerProblem)
    /// The session is over (the refresh token was refused, reused or revoked, or the person signed
    /// out): show the sign-in screen. `code` is the server's reason, such as `session_revoked`.
    case sessionEnded(code: String)
    /// This call needs a signed-in person and nobody is.
    case notSignedIn
    /// The server could not be reached, or the connection broke.
    case transport(String)
    /// The server answered something this SDK does not understand.
    case unexpectedResponse(String)

    public var description: String {
        switch self {
        case .server(let problem): "\(problem.status) \(problem.code): \(problem.message)"
        case .sessionEnded(let code): "The session has ended (\(code)); sign in again."
        case .notSignedIn: "Not signed in."
        case .transport(let text): "Network error: \(text)"
        case .unexpectedResponse(let text): "Unexpected response: \(text)"
        }
    }

    /// The server's error code, if the server answered with one.
    public var code: String? {
        switch self {
        case .server(let problem): problem.code
        case .sessionEnded(let code): code
        default: nil
        }
    }

    /// The server's error code as the one list the server, the web app and this SDK share (nil
    /// for a code this version does not know, or no answer from the server).
    public var errorCode: ErrorCode? { code.flatMap(ErrorCode.init(rawValue:)) }

    /// What to tell a person, in English or French: the shared message for the code, else this
    /// error's own description.
    public func message(french: Bool) -> String {
        errorCode?.message(french: french) ?? description
    }

    /// The reasons per input field, for showing next to each field of a form.
    public var fields: [String: String] {
        if case .server(let problem) = self { return problem.fields }
        return [:]
    }

    /// Whether trying again later may work (the network, the server being busy or restarting).
    public var isTransient: Bool {
        switch self {
        case .transport: true
        case .server(let problem): problem.status == 429 || problem.status >= 500
        default: false
        }
    }
}

/// An error as the server sent it: `{"error": {"code", "message", "fields", "currentStatus"}}`.
public struct ServerProblem: Sendable, Equatable, CustomStringConvertible {
    public var status: Int
    public var code: String
    public var message: String
    public var fields: [String: String]
    /// With `invalid_transition`: the order's status now.
    public var currentStatus: String?
    /// With 429: how many seconds to wait.
    public var retryAfter: Int?

    public init(status: Int, code: String, message: String, fields: [String: String] = [:], currentStatus: String? = nil,
                retryAfter: Int? = nil) {
        self.status = status
        self.code = code
        self.message = message
        self.fields = fields
        self.currentStatus = currentStatus
        self.retryAfter = retryAfter
    }

    public var description: String { "\(status) \(code): \(message)" }

    struct Body: Decodable {
        struct Inner: Decodable {
            var code: String
            var message: String
            var fields: [String: String]?
            var currentStatus: String?
        }
        var error: Inner
    }

    static func decode(status: Int, data: Data, retryAfter: Int?) -> ServerProblem {
        if let body = try? JSONDecoder().decode(Body.self, from: data) {
            return ServerProblem(status: status, code: body.error.code, message: body.error.message,
                                 fields: body.error.fields ?? [:], currentStatus: body.error.currentStatus, retryAfter: retryAfter)
        }
        return ServerProblem(status: status, code: "http_\(status)", message: String(decoding: data.prefix(200), as: UTF8.self),
                             retryAfter: retryAfter)
    }
}

extension WaybillError {
    /// Unwraps what the generated client threw into a ``WaybillError``.
    static func from(_ error: any Error) -> WaybillError {
        if let error = error as? WaybillError { return error }
        if let error = error as? ClientError { return from(error.underlyingError) }
        if error is CancellationError { return .transport("cancelled") }
        return .transport(String(describing: error))
    }
}
