import Foundation
import NIOConcurrencyHelpers
import Vapor

/// A local HTTP server that speaks the carriers' documented tracking APIs: DHL Shipment Tracking –
/// Unified (`GET /track/shipments?trackingNumber=`, header `DHL-API-Key`; 404 `{title, status,
/// detail}` for an unknown number) and La Poste Suivi v2 (`GET /suivi/v2/idships/{ids}`, header
/// `X-Okapi-Key`; one id answers 200 or 404, several 207 with each item's `returnCode`). Answers are
/// written by the test in the carriers' shapes; 429 with `Retry-After` on demand.
final class FakeCarriers: @unchecked Sendable {
    static let dhlKey = "dhl-test-key"
    static let laPosteKey = "okapi-test-key"

    // [String: Any] is not Sendable; every access goes through the lock.
    struct State: @unchecked Sendable {
        var dhl: [String: [String: Any]] = [:]
        var laPoste: [String: [String: Any]] = [:]
        var requests: [String] = []
        var rateLimitNext = false
    }

    let app: Application
    let port: Int
    private let state = NIOLockedValueBox<State>(State())
    var baseURL: String { "http://127.0.0.1:\(port)" }
    var requests: [String] { state.withLockedValue { $0.requests } }

    private init(app: Application, port: Int) {
        self.app = app
        self.port = port
    }

    static func start() async throws -> FakeCarriers {
        let app = try await Application.make(.testing)
        let box = NIOLockedValueBox<FakeCarriers?>(nil)
        app.get("track", "shipments") { req async throws -> Response in box.withLockedValue { $0! }.dhl(req) }
        app.get("suivi", "v2", "idships", ":ids") { req async throws -> Response in box.withLockedValue { $0! }.laPoste(req) }
        try await app.server.start(address: .hostname("127.0.0.1", port: 0))
        guard let port = app.http.server.shared.localAddress?.port else { throw Abort(.internalServerError) }
        let fake = FakeCarriers(app: app, port: port)
        box.withLockedValue { $0 = fake }
        return fake
    }

    func stop() async {
        await app.server.shutdown()
        try? await app.asyncShutdown()
    }

    /// What DHL answers for `number` (its `shipments[0]`), replacing what it said before.
    func setDHL(_ number: String, status: String, events: [(timestamp: String, code: String, description: String, place: String)]) {
        let shipment: [String: Any] = [
            "id": number, "service": "parcel-de",
            "status": ["statusCode": status, "status": status],
            "estimatedTimeOfDelivery": "2026-11-26T18:00:00+01:00",
            "events": events.reversed().map { e -> [String: Any] in
                ["timestamp": e.timestamp, "statusCode": e.code, "status": e.code, "description": e.description,
                 "location": ["address": ["addressLocality": e.place, "countryCode": "DE"]]]
            },
        ]
        state.withLockedValue { $0.dhl[number] = shipment }
    }

    func setLaPoste(_ number: String, events: [(date: String, code: String, label: String)]) {
        let shipment: [String: Any] = [
            "idShip": number, "holder": 4, "product": "Colissimo", "isFinal": events.contains { $0.code.hasPrefix("DI") },
            "event": events.reversed().map { ["date": $0.date, "code": $0.code, "label": $0.label] },
        ]
        state.withLockedValue { $0.laPoste[number] = shipment }
    }

    func rateLimitNextRequest() { state.withLockedValue { $0.rateLimitNext = true } }

    private func note(_ req: Request) -> Response? {
        let limited = state.withLockedValue { s -> Bool in
            s.requests.append(req.url.string)
            defer { s.rateLimitNext = false }
            return s.rateLimitNext
        }
        if limited {
            var headers = HTTPHeaders()
            headers.replaceOrAdd(name: .retryAfter, value: "120")
            return Self.json(["title": "Too many requests", "status": 429], status: .tooManyRequests, headers: headers)
        }
        return nil
    }

    private func dhl(_ req: Request) -> Response {
        if let early = note(req) { return early }
        guard req.headers.first(name: "DHL-API-Key") == Self.dhlKey else { return Self.json(["title": "Unauthorized", "status": 401], status: .unauthorized) }
        guard let number = req.query[String.self, at: "trackingNumber"], let shipment = state.withLockedValue({ $0.dhl[number] }) else {
            return Self.json(["title": "No shipment with given tracking number found.", "status": 404, "detail": "Not found"], status: .notFound)
        }
        return Self.json(["shipments": [shipment]])
    }

    private func laPoste(_ req: Request) -> Response {
        if let early = note(req) { return early }
        guard req.headers.first(name: "X-Okapi-Key") == Self.laPosteKey else { return Self.json(["code": "UNAUTHORIZED"], status: .unauthorized) }
        let ids = (req.parameters.get("ids") ?? "").split(separator: ",").map(String.init)
        let items: [[String: Any]] = ids.map { id in
            if let shipment = state.withLockedValue({ $0.laPoste[id] }) {
                return ["lang": "fr_FR", "scope": "open", "returnCode": 200, "shipment": shipment]
            }
            return ["lang": "fr_FR", "scope": "open", "returnCode": 104, "returnMessage": "Numéro de suivi inconnu", "idShip": id]
        }
        if ids.count == 1 {
            let item = items[0]
            return Self.json(item, status: (item["returnCode"] as? Int) == 200 ? .ok : .notFound)
        }
        return Self.json(items, status: .multiStatus)
    }

    private static func json(_ object: Any, status: HTTPResponseStatus = .ok, headers: HTTPHeaders = [:]) -> Response {
        var headers = headers
        headers.contentType = .json
        return Response(status: status, headers: headers, body: .init(data: (try? JSONSerialization.data(withJSONObject: object)) ?? Data()))
    }
}
