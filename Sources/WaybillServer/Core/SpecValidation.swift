import Foundation
import NIOConcurrencyHelpers
import Vapor
import Yams

/// Checks each JSON request body against the schema `openapi.yaml` gives its operation, before the
/// generated code decodes it, so a client learns about every missing or mistyped field at once
/// (422 with `fields`), not only the first one a decoder happens to meet. The spec stays the one
/// source of the rules: nothing here is written per operation.
struct SpecValidator: Sendable {
    /// A schema node reduced to what the checks need.
    indirect enum Schema: Sendable {
        case object(properties: [String: Schema], required: [String])
        case string(minLength: Int?, maxLength: Int?, allowed: [String]?)
        case integer(minimum: Int?, maximum: Int?)
        case number
        case boolean
        case array(items: Schema?)
        case any
    }

    struct Operation: Sendable {
        var method: String
        var segments: [String]  // "{param}" matches any one segment
        var body: Schema?
        /// `x-waybill-max-body-bytes`: a larger limit for uploads.
        var maxBodySize: Int?
        var bodyRequired: Bool = true
        /// Whether the operation needs a bearer token (its `security` is not empty).
        var needsToken: Bool = true
        /// Query parameters by name.
        var query: [String: Schema] = [:]
        /// A `deprecated` operation's replacement (`x-waybill-successor`, a path under the API with
        /// the same `{parameters}`): answers carry `Deprecation` and a `Link` to it.
        var successor: String?
        /// The body may also come as something other than JSON (an upload form): only JSON is checked here.
        var acceptsOtherBodies = false
        /// The contract's `operationId`.
        var operationID: String?

        /// The successor's path for a request to `path` (parameters filled in).
        func successorPath(for path: [String]) -> String? {
            guard var successor else { return nil }
            for (segment, value) in zip(segments, path) where segment.hasPrefix("{") {
                successor = successor.replacingOccurrences(of: segment, with: value)
            }
            return successor
        }
    }

    /// When the deprecated operations were deprecated (RFC 9745: `Deprecation: @<Unix seconds>`).
    static let deprecatedSince = "@1795392000"  // 2026-11-23

    let operations: [Operation]

    /// The last spec parsed and what it gave. Parsing openapi.yaml with Yams takes most of a second in a
    /// debug build, and every test server configures anew: about half of the test suite's time went to
    /// parsing the same text.
    private static let lastParsed = NIOLockedValueBox<(yaml: String, validator: SpecValidator)?>(nil)

    /// The validator for `yaml`, parsed once per process for the same text.
    static func parsed(yaml: String) throws -> SpecValidator {
        if let last = lastParsed.withLockedValue({ $0 }), last.yaml == yaml { return last.validator }
        let validator = try SpecValidator(yaml: yaml)
        lastParsed.withLockedValue { $0 = (yaml, validator) }
        return validator
    }

    init(yaml: String) throws {
        guard let root = try Yams.load(yaml: yaml) as? [String: Any] else {
            throw ConfigurationError("openapi.yaml is not a mapping.")
        }
        let components = (root["components"] as? [String: Any])?["schemas"] as? [String: Any] ?? [:]
        func resolve(_ node: Any?, depth: Int = 0) -> Schema {
            guard depth < 32, var dict = node as? [String: Any] else { return .any }
            if let ref = dict["$ref"] as? String, ref.hasPrefix("#/components/schemas/") {
                let name = String(ref.dropFirst("#/components/schemas/".count))
                dict = components[name] as? [String: Any] ?? [:]
                return resolve(dict, depth: depth + 1)
            }
            switch dict["type"] as? String {
            case "object":
                let props = (dict["properties"] as? [String: Any] ?? [:]).mapValues { resolve($0, depth: depth + 1) }
                return .object(properties: props, required: dict["required"] as? [String] ?? [])
            case "string":
                return .string(minLength: dict["minLength"] as? Int, maxLength: dict["maxLength"] as? Int,
                               allowed: (dict["enum"] as? [Any])?.compactMap { $0 as? String })
            case "integer":
                return .integer(minimum: dict["minimum"] as? Int, maximum: dict["maximum"] as? Int)
            case "number": return .number
            case "boolean": return .boolean
            case "array": return .array(items: dict["items"].map { resolve($0, depth: depth + 1) })
            default: return .any
            }
        }
        let sharedParameters = (root["components"] as? [String: Any])?["parameters"] as? [String: Any] ?? [:]
        func queryParameters(_ list: Any?) -> [String: Schema] {
            var result: [String: Schema] = [:]
            for entry in list as? [Any] ?? [] {
                guard var parameter = entry as? [String: Any] else { continue }
                if let ref = parameter["$ref"] as? String, ref.hasPrefix("#/components/parameters/") {
                    parameter = sharedParameters[String(ref.dropFirst("#/components/parameters/".count))] as? [String: Any] ?? [:]
                }
                guard parameter["in"] as? String == "query", let name = parameter["name"] as? String else { continue }
                result[name] = resolve(parameter["schema"])
            }
            return result
        }
        var operations: [Operation] = []
        for (path, item) in root["paths"] as? [String: Any] ?? [:] {
            guard let item = item as? [String: Any] else { continue }
            for method in ["get", "put", "post", "patch", "delete"] {
                guard let op = item[method] as? [String: Any] else { continue }
                let schema = ((op["requestBody"] as? [String: Any])?["content"] as? [String: Any])?["application/json"]
                    .flatMap { ($0 as? [String: Any])?["schema"] }
                operations.append(Operation(
                    method: method.uppercased(),
                    segments: path.split(separator: "/").map(String.init),
                    body: schema.map { resolve($0) },
                    maxBodySize: op["x-waybill-max-body-bytes"] as? Int,
                    bodyRequired: (op["requestBody"] as? [String: Any])?["required"] as? Bool ?? false,
                    needsToken: Self.needsToken(op["security"] as? [Any] ?? root["security"] as? [Any] ?? []),
                    query: queryParameters(item["parameters"]).merging(queryParameters(op["parameters"])) { _, op in op },
                    successor: op["deprecated"] as? Bool == true ? op["x-waybill-successor"] as? String : nil,
                    acceptsOtherBodies: (((op["requestBody"] as? [String: Any])?["content"] as? [String: Any])?.keys
                        .contains { $0 != "application/json" }) ?? false,
                    operationID: op["operationId"] as? String
                ))
            }
        }
        self.operations = operations
    }

    /// A token is needed unless the requirements are empty or one of them is `{}` (optional).
    static func needsToken(_ security: [Any]) -> Bool {
        !security.isEmpty && !security.contains { ($0 as? [String: Any])?.isEmpty == true }
    }

    /// Whether some operation has this path (with any method): a wrong method is then 405, not 404.
    func methods(path: [String]) -> [String] {
        operations.filter { op in
            op.segments.count == path.count && zip(op.segments, path).allSatisfy { $0.hasPrefix("{") || $0 == $1 }
        }.map(\.method)
    }

    /// Problems with the query string: values that do not parse (`invalid_type`) and values outside
    /// the parameter's constraints. Unknown parameters are ignored.
    func queryProblems(_ operation: Operation, _ items: [(String, String)]) -> [String: String] {
        var found: [String: String] = [:]
        for (name, raw) in items {
            guard let schema = operation.query[name] else { continue }
            let value: JSONValue
            switch schema {
            case .integer:
                guard let n = Int(raw) else { found[name] = "invalid_type"; continue }
                value = .number(Double(n))
            case .number:
                guard let n = Double(raw) else { found[name] = "invalid_type"; continue }
                value = .number(n)
            case .boolean:
                guard raw == "true" || raw == "false" else { found[name] = "invalid_type"; continue }
                value = .bool(raw == "true")
            default:
                value = .string(raw)
            }
            found.merge(Self.problems(value, against: schema, at: name)) { a, _ in a }
        }
        return found
    }

    func operation(method: String, path: [String]) -> Operation? {
        operations.first { op in
            op.method == method && op.segments.count == path.count
                && zip(op.segments, path).allSatisfy { $0.hasPrefix("{") || $0 == $1 }
        }
    }

    /// Every problem with `value` against `schema`, keyed by dotted field path.
    static func problems(_ value: JSONValue, against schema: Schema, at path: String = "") -> [String: String] {
        var found: [String: String] = [:]
        let here = path.isEmpty ? "body" : path
        switch (schema, value) {
        case (.any, _):
            break
        case (.object(let properties, let required), .object(let members)):
            for name in required where members[name] == nil || members[name] == .null {
                found[path.isEmpty ? name : "\(path).\(name)"] = "required"
            }
            for (name, member) in members where member != .null {
                guard let propertySchema = properties[name] else { continue }  // unknown fields are ignored
                found.merge(problems(member, against: propertySchema, at: path.isEmpty ? name : "\(path).\(name)")) { a, _ in a }
            }
        case (.string(let minLength, let maxLength, let allowed), .string(let s)):
            // NUL is valid JSON but no text a person writes, and PostgreSQL cannot store it.
            if s.unicodeScalars.contains("\u{0}") { found[here] = "invalid_character" }
            else if let allowed, !allowed.contains(s) { found[here] = "invalid" }
            else if let maxLength, s.count > maxLength { found[here] = "too_long" }
            else if let minLength, s.count < minLength { found[here] = s.isEmpty ? "required" : "too_short" }
        case (.integer(let minimum, let maximum), .number(let n)):
            if n.rounded() != n { found[here] = "invalid_type" }
            else if let minimum, n < Double(minimum) { found[here] = "too_small" }
            else if let maximum, n > Double(maximum) { found[here] = "too_large" }
        case (.number, .number), (.boolean, .bool):
            break
        case (.array(let items), .array(let elements)):
            if let items {
                for (i, element) in elements.enumerated() {
                    found.merge(problems(element, against: items, at: "\(here).\(i)")) { a, _ in a }
                }
            }
        default:
            found[here] = "invalid_type"
        }
        return found
    }
}

/// Any JSON value, decoded without loss of the difference between a boolean and a number.
enum JSONValue: Decodable, Equatable, Sendable {
    case null, bool(Bool), number(Double), string(String), array([JSONValue]), object([String: JSONValue])

    init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() { self = .null }
        else if let b = try? c.decode(Bool.self) { self = .bool(b) }
        else if let n = try? c.decode(Double.self) { self = .number(n) }
        else if let s = try? c.decode(String.self) { self = .string(s) }
        else if let a = try? c.decode([JSONValue].self) { self = .array(a) }
        else { self = .object(try c.decode([String: JSONValue].self)) }
    }
}

extension JSONValue {
    /// Parses RFC 8259 JSON (UTF-8, nesting up to 256 deep, finite numbers); nil if it is not that.
    /// Every JSON body passes here before the generated code decodes it: `JSONDecoder` with a
    /// `try?` per possible type threw and built an error for each wrong guess (docs/performance.md).
    static func parse(_ bytes: UnsafeRawBufferPointer) -> JSONValue? {
        var parser = JSONParser(bytes: bytes)
        guard let value = parser.value(depth: 0) else { return nil }
        parser.skipSpace()
        return parser.index == bytes.count ? value : nil
    }
}

private struct JSONParser {
    let bytes: UnsafeRawBufferPointer
    var index = 0
    static let maxDepth = 256

    init(bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    mutating func skipSpace() {
        while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D || bytes[index] == 0x09 { index += 1 }
    }

    mutating func literal(_ word: StaticString, _ value: JSONValue) -> JSONValue? {
        let count = word.utf8CodeUnitCount
        guard bytes.count - index >= count else { return nil }
        for i in 0..<count where bytes[index + i] != word.utf8Start[i] { return nil }
        index += count
        return value
    }

    mutating func value(depth: Int) -> JSONValue? {
        guard depth < Self.maxDepth else { return nil }
        skipSpace()
        guard index < bytes.count else { return nil }
        switch bytes[index] {
        case UInt8(ascii: "{"):
            index += 1
            var members: [String: JSONValue] = [:]
            skipSpace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "}") { index += 1; return .object(members) }
            while true {
                skipSpace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\""), let key = string() else { return nil }
                skipSpace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { return nil }
                index += 1
                guard let member = value(depth: depth + 1) else { return nil }
                // The first of a repeated name counts, as in JSONDecoder, which reads the body next.
                if members[key] == nil { members[key] = member }
                skipSpace()
                guard index < bytes.count else { return nil }
                if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                if bytes[index] == UInt8(ascii: "}") { index += 1; return .object(members) }
                return nil
            }
        case UInt8(ascii: "["):
            index += 1
            var elements: [JSONValue] = []
            skipSpace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "]") { index += 1; return .array(elements) }
            while true {
                guard let element = value(depth: depth + 1) else { return nil }
                elements.append(element)
                skipSpace()
                guard index < bytes.count else { return nil }
                if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                if bytes[index] == UInt8(ascii: "]") { index += 1; return .array(elements) }
                return nil
            }
        case UInt8(ascii: "\""):
            return string().map(JSONValue.string)
        case UInt8(ascii: "t"): return literal("true", .bool(true))
        case UInt8(ascii: "f"): return literal("false", .bool(false))
        case UInt8(ascii: "n"): return literal("null", .null)
        default: return number()
        }
    }

    /// At a `"`: the string's text, escapes resolved; nil for control characters, bad escapes,
    /// lone surrogates or invalid UTF-8.
    mutating func string() -> String? {
        index += 1
        var text: [UInt8] = []
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                return String(validating: text, as: UTF8.self)
            case UInt8(ascii: "\\"):
                guard index < bytes.count else { return nil }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): text.append(escape)
                case UInt8(ascii: "b"): text.append(0x08)
                case UInt8(ascii: "f"): text.append(0x0C)
                case UInt8(ascii: "n"): text.append(0x0A)
                case UInt8(ascii: "r"): text.append(0x0D)
                case UInt8(ascii: "t"): text.append(0x09)
                case UInt8(ascii: "u"):
                    guard var scalar = hex4() else { return nil }
                    if (0xD800...0xDBFF).contains(scalar) {
                        guard bytes.count - index >= 6, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else { return nil }
                        index += 2
                        guard let low = hex4(), (0xDC00...0xDFFF).contains(low) else { return nil }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    } else if (0xDC00...0xDFFF).contains(scalar) {
                        return nil
                    }
                    guard let unicode = Unicode.Scalar(scalar) else { return nil }
                    text.append(contentsOf: Array(String(Character(unicode)).utf8))
                default:
                    return nil
                }
            case 0..<0x20:
                return nil
            default:
                text.append(byte)
            }
        }
        return nil
    }

    mutating func hex4() -> UInt32? {
        guard bytes.count - index >= 4 else { return nil }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            index += 1
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: return nil
            }
            value = value << 4 | UInt32(digit)
        }
        return value
    }

    /// `-?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?`, finite.
    mutating func number() -> JSONValue? {
        let start = index
        func digits(_ parser: inout JSONParser) -> Int {
            let from = parser.index
            while parser.index < parser.bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(parser.bytes[parser.index]) { parser.index += 1 }
            return parser.index - from
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count else { return nil }
        if bytes[index] == UInt8(ascii: "0") { index += 1 } else if digits(&self) == 0 { return nil }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard digits(&self) > 0 else { return nil }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard digits(&self) > 0 else { return nil }
        }
        let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        guard let number = Double(text), number.isFinite else { return nil }
        return .number(number)
    }
}

/// Collects the body (refusing ones over the limit with 413) and checks it against the spec.
struct SpecValidationMiddleware: AsyncMiddleware {
    let validator: SpecValidator
    let pathPrefix: [String]
    let maxBodySize: Int

    func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        let path = request.url.path.split(separator: "/").map(String.init)
        guard path.starts(with: pathPrefix),
              let operation = validator.operation(method: request.method.rawValue, path: Array(path.dropFirst(pathPrefix.count)))
        else { return try await next.respond(to: request) }
        request.storage[OperationIDKey.self] = operation.operationID
        let response = try await validated(request, operation, next)
        if let successor = operation.successorPath(for: Array(path.dropFirst(pathPrefix.count))) {
            response.headers.replaceOrAdd(name: "Deprecation", value: SpecValidator.deprecatedSince)
            response.headers.add(name: .link, value: "</\(pathPrefix.joined(separator: "/"))\(successor)>; rel=\"successor-version\"")
        }
        // A file to download: the generated runtime would percent-encode the header's quotes and spaces.
        if let name = request.storage[DownloadNameKey.self] {
            response.headers.replaceOrAdd(name: .contentDisposition, value: "attachment; filename=\"\(name)\"")
        }
        return response
    }

    /// A query string's names and values, percent-decoded (`+` a space).
    static func queryItems(_ query: String) -> [(String, String)] {
        query.split(separator: "&").compactMap { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = parts.first.flatMap({ String($0).removingPercentEncoding }) else { return nil }
            let value = parts.count > 1 ? String(parts[1]).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? "" : ""
            return (name, value)
        }
    }

    private func validated(_ request: Request, _ operation: SpecValidator.Operation, _ next: any AsyncResponder) async throws -> Response {
        let maxBodySize = operation.maxBodySize ?? self.maxBodySize
        // Who you are comes before what you sent: no token, no schema hints.
        if operation.needsToken, request.headers.bearerToken == nil {
            throw WaybillError.unauthenticated
        }
        if let query = request.url.query, !operation.query.isEmpty {
            let problems = validator.queryProblems(operation, Self.queryItems(query))
            if !problems.isEmpty {
                throw WaybillError(.badRequest, .invalidParameter, "A query parameter is malformed or out of range.", fields: problems)
            }
        }

        if let length = request.headers.first(name: .contentLength).flatMap(Int.init), length > maxBodySize {
            throw WaybillError(.payloadTooLarge, .payloadTooLarge, "The body is larger than \(maxBodySize) bytes.")
        }
        let buffer: ByteBuffer?
        do {
            buffer = try await request.body.collect(max: maxBodySize).get()
        } catch let error as any AbortError where error.status == .payloadTooLarge {
            throw WaybillError(.payloadTooLarge, .payloadTooLarge, "The body is larger than \(maxBodySize) bytes.")
        }
        guard let schema = operation.body else { return try await next.respond(to: request) }
        guard let buffer, buffer.readableBytes > 0 else {
            if !operation.bodyRequired {
                // The generated handler cannot read "no body" as an absent optional body: hand it
                // an empty object, which every optional body schema here accepts.
                request.headers.remove(name: .contentLength)
                try request.content.encode([String: String](), as: .json)
                return try await next.respond(to: request)
            }
            throw WaybillError(.badRequest, .missingBody, "This operation needs a JSON body.")
        }
        // The declared type, read fast when it is plainly JSON (Vapor's parsing of the header was 3 %
        // of a price quote's time), through Vapor otherwise.
        let declared = request.headers.first(name: .contentType)
        let declaredJSON = declared.map(Self.namesJSON) ?? false
        if declared != nil, !declaredJSON, let type = request.headers.contentType, !(type.type == "application" && type.subType == "json") {
            if operation.acceptsOtherBodies { return try await next.respond(to: request) }
            throw WaybillError(.unsupportedMediaType, .unsupportedMediaType, "Send the body as application/json.")
        }
        guard let value = buffer.withUnsafeReadableBytes({ JSONValue.parse($0) }) else {
            throw WaybillError(.badRequest, .invalidJSON, "The body is not valid JSON.")
        }
        let problems = SpecValidator.problems(value, against: schema)
        if !problems.isEmpty {
            throw WaybillError(.unprocessableEntity, .validationFailed, "Some fields are missing or invalid.", fields: problems)
        }
        if !declaredJSON, request.headers.contentType == nil {
            request.headers.contentType = .json
        }
        return try await next.respond(to: request)
    }

    /// Whether a Content-Type value is plainly `application/json` (lower case, with or without
    /// parameters); any other spelling is left to Vapor's parsing.
    static func namesJSON(_ value: String) -> Bool {
        let type = value.utf8.prefix { $0 != UInt8(ascii: ";") }
        let json = "application/json".utf8
        var trimmed = type[...]
        while let first = trimmed.first, first == 32 || first == 9 { trimmed = trimmed.dropFirst() }
        while let last = trimmed.last, last == 32 || last == 9 { trimmed = trimmed.dropLast() }
        return trimmed.elementsEqual(json)
    }
}

/// The `operationId` a request was matched to (API keys are scoped by operation).
struct OperationIDKey: StorageKey { typealias Value = String }

extension Request {
    var operationID: String? { storage[OperationIDKey.self] }
}
