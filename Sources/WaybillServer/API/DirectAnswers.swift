import Foundation
import HTTPTypes
@_spi(Generated) import OpenAPIRuntime
import OpenAPIVapor
import Vapor
import WaybillAPI

/// The generated server's transport, except for the two reads that answer with many orders at a
/// time (`GET /orders` and `GET /orders/{orderId}`) and placing an order (`POST /orders`): those
/// are served by the same handler methods with the same input, read by the runtime's own
/// converter, but their answer is written by `DirectJSON` instead of the runtime's `JSONEncoder`,
/// which swift-openapi-runtime 1.x offers no way to replace and which took half of a list's time
/// and a tenth of an order's (docs/performance.md). The contract checks stay where they are for every route
/// (`SpecValidationMiddleware`: token present, query parameters well-formed and in range), and
/// errors leave through `APIErrorMiddleware` as for every route.
extension WaybillError {
    /// 406: the request's `Accept` allows no JSON, and the API answers only in JSON.
    static var onlyJSON: WaybillError {
        WaybillError(.notAcceptable, .badRequest, "This API answers only in JSON (application/json); the Accept header allows none.")
    }
}

struct DirectAnswers: ServerTransport {
    let base: VaporTransport
    let routes: any RoutesBuilder

    init(routes: any RoutesBuilder) {
        self.base = VaporTransport(routesBuilder: routes)
        self.routes = routes
    }

    func register(_ handler: @Sendable @escaping (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?),
                  method: HTTPRequest.Method, path: String) throws {
        switch (method, path) {
        case (.get, APIHandler.basePath + "/orders"):
            routes.get(Self.components("/orders"), use: Self.listOrders)
        case (.get, APIHandler.basePath + "/orders/{orderId}"):
            routes.get(Self.components("/orders/{orderId}"), use: Self.getOrder)
        case (.post, APIHandler.basePath + "/orders"):
            routes.post(Self.components("/orders"), use: Self.createOrder)
        default:
            try base.register(handler, method: method, path: path)
        }
    }

    static func components(_ path: String) -> [PathComponent] {
        (APIHandler.basePath + path).split(separator: "/").map { part in
            part.hasPrefix("{") ? .parameter(String(part.dropFirst().dropLast())) : .constant(String(part))
        }
    }

    @Sendable static func listOrders(_ req: Request) async throws -> Response {
        try acceptsJSON(req)
        let query = Query(req)
        let input = Operations.ListOrders.Input(query: .init(
            status: query["status"], customerId: query["customerId"], driverId: query["driverId"],
            from: try query.date("from"), to: try query.date("to"), cursor: query["cursor"], limit: try query.int("limit")))
        guard case .ok(let ok) = try await APIHandler().listOrders(input), case .json(let page) = ok.body else {
            throw Abort(.internalServerError, reason: "listOrders answered other than 200")
        }
        return try answer(page)
    }

    @Sendable static func getOrder(_ req: Request) async throws -> Response {
        try acceptsJSON(req)
        guard let id = req.parameters.get("orderId") else { throw WaybillError.notFound }
        guard case .ok(let ok) = try await APIHandler().getOrder(.init(path: .init(orderId: id))), case .json(let order) = ok.body else {
            throw Abort(.internalServerError, reason: "getOrder answered other than 200")
        }
        return try answer(order)
    }

    /// The runtime's converter with Waybill's settings, made once (it holds a JSON encoder, a
    /// decoder and a date transcoder).
    static let converter = Converter(configuration: .waybill)

    @Sendable static func createOrder(_ req: Request) async throws -> Response {
        try acceptsJSON(req)
        // Read as the generated server reads it (`SpecValidationMiddleware` has collected the body
        // and checked it and its media type against the spec).
        let input: Operations.CreateOrder.Input
        do {
            var fields = HTTPFields()
            if let key = req.headers.first(name: "Idempotency-Key"), let name = HTTPField.Name("Idempotency-Key") { fields[name] = key }
            let idempotencyKey = try converter.getOptionalHeaderFieldAsURI(in: fields, name: "Idempotency-Key", as: String.self)
            let body = req.body.data.map { HTTPBody($0.readableBytesView) }
            input = Operations.CreateOrder.Input(headers: .init(idempotencyKey: idempotencyKey), body: try await converter.getRequiredRequestBodyAsJSON(
                Components.Schemas.OrderRequest.self, from: body, transforming: { .json($0) }))
        } catch let error as DecodingError {
            throw error
        } catch {
            throw WaybillError(.badRequest, .badRequest, "The request is malformed: \(error).")
        }
        guard case .created(let created) = try await APIHandler().createOrder(input), case .json(let order) = created.body else {
            throw Abort(.internalServerError, reason: "createOrder answered other than 201")
        }
        return try answer(order, status: .created)
    }

    static func answer<T: Encodable>(_ value: T, status: HTTPResponseStatus = .ok) throws -> Response {
        var headers = HTTPHeaders()
        headers.replaceOrAdd(name: .contentType, value: "application/json; charset=utf-8")
        let bytes = try DirectJSON.encode(value)
        var buffer = ByteBufferAllocator().buffer(capacity: bytes.count)
        buffer.writeBytes(bytes)
        return Response(status: status, headers: headers, body: .init(buffer: buffer))
    }

    /// As the generated server: an `Accept` header must allow JSON (`*/*`, `application/*`, or
    /// `application/json`, parameters aside); no header allows anything.
    static func acceptsJSON(_ req: Request) throws {
        let ranges = req.headers[.accept].flatMap { $0.split(separator: ",") }
            .map { $0.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? "" }
        guard !ranges.isEmpty, !ranges.contains(where: { ["*/*", "application/*", "application/json", ""].contains($0) }) else { return }
        throw WaybillError.onlyJSON
    }

    /// The query's parameters (the first of each name), read as `SpecValidationMiddleware` checked them.
    struct Query {
        let items: [String: String]

        init(_ req: Request) {
            var items: [String: String] = [:]
            for (name, value) in req.url.query.map(SpecValidationMiddleware.queryItems) ?? [] where items[name] == nil { items[name] = value }
            self.items = items
        }

        subscript(_ name: String) -> String? { items[name] }

        func int(_ name: String) throws -> Int? {
            try items[name].map { guard let value = Int($0) else { throw WaybillError.invalidParameter(name) }; return value }
        }

        func date(_ name: String) throws -> Date? {
            try items[name].map { text in
                guard let date = try? DirectJSON.dates.decode(text) else { throw WaybillError.invalidParameter(name) }
                return date
            }
        }
    }
}
