import Vapor
import OpenAPIRuntime
import FluentKit
import WaybillCore

/// Turns every error into the one JSON error shape with the right status. Nothing escapes as an
/// HTML page or a bare 500: client mistakes become 4xx with a stable code, and only genuine server
/// faults become 500 (logged, with no detail sent to the client).
struct APIErrorMiddleware: AsyncMiddleware {
    /// The spec's paths, to tell a wrong method (405) from a wrong path (404).
    var validator: SpecValidator? = nil

    func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        let response = await answer(request, next)
        // Every answer names its request, as the server's log lines do (`request-id`).
        response.headers.replaceOrAdd(name: "X-Request-Id", value: request.id)
        return response
    }

    private func answer(_ request: Request, _ next: any AsyncResponder) async -> Response {
        do {
            return try await next.respond(to: request)
        } catch {
            let hasBody = request.body.data.map { $0.readableBytes > 0 } ?? (request.headers.first(name: .contentLength).flatMap(Int.init) ?? 0 > 0)
            var apiError = Self.map(error, logger: request.logger, requestHasBody: hasBody)
            // A path the API has, with a method it does not: 405 and the methods it does take.
            if apiError.status == .notFound, let validator, request.url.path.hasPrefix("/api/v1/") {
                let path = request.url.path.split(separator: "/").dropFirst(2).map(String.init)
                let allowed = validator.methods(path: path)
                if !allowed.isEmpty, !allowed.contains(request.method.rawValue) {
                    apiError = WaybillError(.methodNotAllowed, .methodNotAllowed, "Use \(allowed.sorted().joined(separator: ", ")) here.")
                    let response = Self.response(for: apiError, requestID: request.id)
                    response.headers.replaceOrAdd(name: .allow, value: allowed.sorted().joined(separator: ", "))
                    return response
                }
            }
            return Self.response(for: apiError, requestID: request.id)
        }
    }

    static func response(for error: WaybillError, requestID: String? = nil) -> Response {
        var headers = HTTPHeaders()
        headers.contentType = .json
        headers.replaceOrAdd(name: .cacheControl, value: "no-store")
        if let retryAfter = error.retryAfter { headers.replaceOrAdd(name: .retryAfter, value: String(retryAfter)) }
        let body = ErrorBody(error: .init(code: error.code.rawValue, message: error.message, fields: error.fields,
                                          currentStatus: error.currentStatus, requestId: requestID))
        let data = (try? encoder.encode(body)) ?? Data(#"{"error":{"code":"internal_error","message":"Internal error."}}"#.utf8)
        return Response(status: error.status, headers: headers, body: .init(data: data))
    }

    /// Sorted keys: the same error is the same bytes, so responses reveal nothing by their shape.
    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }()

    static func map(_ error: any Error, logger: Logger, requestHasBody: Bool = true) -> WaybillError {
        switch error {
        case let error as WaybillError:
            return error
        case let error as FieldErrorsError:
            return error.apiError
        case let error as ServerError:
            // Errors a handler threw come wrapped; unwrap them.
            if error.underlyingError is WaybillError || error.underlyingError is FieldErrorsError {
                return map(error.underlyingError, logger: logger)
            }
            // An Accept header that allows no JSON: the runtime refuses it after the handler ran
            // (it used to leave as a 500).
            if error.httpStatus.code == 406 { return .onlyJSON }
            if error.operationInput == nil {
                // The request could not be turned into the operation's input: the client's fault.
                if let decoding = error.underlyingError as? DecodingError {
                    if !requestHasBody {
                        // No body: a path or query parameter did not parse.
                        return WaybillError(.badRequest, .invalidParameter, "A parameter is malformed (\(error.causeDescription)).")
                    }
                    return decodingError(decoding)
                }
                let status = error.httpStatus.code
                if status == 415 {
                    return WaybillError(.unsupportedMediaType, .unsupportedMediaType, "The request is malformed: \(error.causeDescription).")
                }
                if (400..<500).contains(status) {
                    return WaybillError(HTTPResponseStatus(statusCode: status), .badRequest, "The request is malformed: \(error.causeDescription).")
                }
                return WaybillError(.badRequest, .badRequest, "The request is malformed: \(error.causeDescription).")
            }
            return map(error.underlyingError, logger: logger)
        case let error as DecodingError:
            return decodingError(error)
        case let error as any AbortError:
            return abortError(error)
        case is ConnectionPoolTimeoutError:
            // Every database connection stayed busy past the pool's wait (a flood, a slow disk): the
            // request was not served, and may simply be sent again.
            logger.warning("No database connection became free in time")
            return WaybillError(.serviceUnavailable, .unavailable, "The server is busy; try again in a moment.", retryAfter: 1)
        case let error as any DatabaseError where error.isConstraintFailure:
            logger.warning("Constraint failure reached the error middleware: \(String(reflecting: error))")
            return WaybillError(.conflict, .conflict, "The change conflicts with existing data.")
        default:
            logger.error("Unhandled error: \(String(reflecting: error))")
            return WaybillError(.internalServerError, .internalError, "Something went wrong on our side. Please try again.")
        }
    }

    static func decodingError(_ error: DecodingError) -> WaybillError {
        func path(_ codingPath: [any CodingKey], _ key: (any CodingKey)? = nil) -> String {
            let keys = codingPath + (key.map { [$0] } ?? [])
            let names = keys.map { $0.intValue.map(String.init) ?? $0.stringValue }.filter { !$0.isEmpty }
            return names.isEmpty ? "body" : names.joined(separator: ".")
        }
        switch error {
        case .keyNotFound(let key, let context):
            return .validation(path(context.codingPath, key), "required")
        case .valueNotFound(_, let context):
            return .validation(path(context.codingPath), "required")
        case .typeMismatch(_, let context):
            return .validation(path(context.codingPath), "invalid_type")
        case .dataCorrupted(let context):
            if context.codingPath.isEmpty {
                return WaybillError(.badRequest, .invalidJSON, "The body is not valid JSON.")
            }
            return .validation(path(context.codingPath), "invalid")
        @unknown default:
            return WaybillError(.badRequest, .badRequest, "The request is malformed.")
        }
    }

    static func abortError(_ error: any AbortError) -> WaybillError {
        let status = error.status
        let code: ErrorCode
        switch status {
        case .notFound: code = .notFound
        case .methodNotAllowed: code = .methodNotAllowed
        case .payloadTooLarge: code = .payloadTooLarge
        case .unsupportedMediaType: code = .unsupportedMediaType
        case .unauthorized: code = .unauthenticated
        case .forbidden: code = .forbidden
        case .tooManyRequests: code = .rateLimited
        default: code = status.code >= 500 ? .internalError : .badRequest
        }
        let message = status.code >= 500 ? "Something went wrong on our side. Please try again." : error.reason
        return WaybillError(status, code, message)
    }

    struct ErrorBody: Encodable {
        struct Detail: Encodable {
            var code: String
            var message: String
            var fields: [String: String]?
            var currentStatus: String?
            var requestId: String?
        }
        var error: Detail
    }
}
