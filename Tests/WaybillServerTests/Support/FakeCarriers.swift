import Foundation
import NIOConcurrencyHelpers
import Vapor
@testable import WaybillServer

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
        /// UPS package, FedEx track result, USPS body, GLS parcel, per number.
        var oauth: [String: [String: [String: Any]]] = [:]
        var tokenRequests: [String: Int] = [:]
        var validTokens: Set<String> = []
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
        app.post("security", "v1", "oauth", "token") { req async throws -> Response in box.withLockedValue { $0! }.token(req, carrier: "ups") }
        app.post("oauth", "token") { req async throws -> Response in box.withLockedValue { $0! }.token(req, carrier: "fedex") }
        app.post("oauth2", "v3", "token") { req async throws -> Response in box.withLockedValue { $0! }.token(req, carrier: "usps") }
        app.post("oauth2", "v2", "token") { req async throws -> Response in box.withLockedValue { $0! }.token(req, carrier: "gls") }
        app.get("api", "track", "v1", "details", ":number") { req async throws -> Response in box.withLockedValue { $0! }.ups(req) }
        app.post("track", "v1", "trackingnumbers") { req async throws -> Response in box.withLockedValue { $0! }.fedex(req) }
        app.get("tracking", "v3", "tracking", ":number") { req async throws -> Response in box.withLockedValue { $0! }.usps(req) }
        app.get("tracking", "simple", "trackids", ":ids") { req async throws -> Response in box.withLockedValue { $0! }.gls(req) }
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

    // MARK: OAuth carriers (UPS, FedEx, USPS, GLS)

    static let clientID = "waybill-client"
    static let clientSecret = "s3cret/+="

    static func credentials(_ fake: FakeCarriers) -> CarrierCredentials {
        CarrierCredentials(clientID: clientID, clientSecret: clientSecret, base: fake.baseURL)
    }

    func tokenRequests(_ carrier: String) -> Int { state.withLockedValue { $0.tokenRequests[carrier] ?? 0 } }
    /// Forgets every token handed out: the next tracking call answers 401.
    func revokeTokens() { state.withLockedValue { $0.validTokens = [] } }

    func setOAuth(_ carrier: String, _ number: String, _ body: [String: Any]) {
        state.withLockedValue { $0.oauth[carrier, default: [:]][number] = body }
    }

    private func token(_ req: Request, carrier: String) -> Response {
        if let early = note(req) { return early }
        let form = req.body.string ?? ""
        let fields = Dictionary(form.split(separator: "&").map { pair -> (String, String) in
            let kv = pair.split(separator: "=", maxSplits: 1).map { String($0).removingPercentEncoding ?? "" }
            return (kv[0], kv.count > 1 ? kv[1] : "")
        }, uniquingKeysWith: { a, _ in a })
        let basic = req.headers.basicAuthorization
        let (id, secret) = basic.map { ($0.username, $0.password) } ?? (fields["client_id"] ?? "", fields["client_secret"] ?? "")
        guard fields["grant_type"] == "client_credentials", id == Self.clientID, secret == Self.clientSecret else {
            return Self.json(["error": "invalid_client"], status: .unauthorized)
        }
        let token = "\(carrier)-\(UUID().uuidString)"
        state.withLockedValue { s in
            s.tokenRequests[carrier, default: 0] += 1
            s.validTokens.insert(token)
        }
        // UPS writes expires_in as a string.
        return Self.json(["access_token": token, "token_type": "Bearer", "expires_in": carrier == "ups" ? "14399" as Any : 3599 as Any])
    }

    private func authorised(_ req: Request, _ carrier: String) -> Response? {
        if let early = note(req) { return early }
        guard let bearer = req.headers.bearerAuthorization?.token, bearer.hasPrefix("\(carrier)-"),
              state.withLockedValue({ $0.validTokens.contains(bearer) }) else {
            return Self.json(["response": ["errors": [["code": "250002", "message": "Invalid Authentication Information."]]]], status: .unauthorized)
        }
        return nil
    }

    private func stored(_ carrier: String, _ number: String) -> [String: Any]? {
        state.withLockedValue { $0.oauth[carrier]?[number] }
    }

    private func ups(_ req: Request) -> Response {
        if let early = authorised(req, "ups") { return early }
        guard req.headers.first(name: "transId") != nil, req.headers.first(name: "transactionSrc") != nil else {
            return Self.json(["response": ["errors": [["code": "TV0001", "message": "Missing transId"]]]], status: .badRequest)
        }
        let number = req.parameters.get("number") ?? ""
        guard let package = stored("ups", number) else {
            return Self.json(["response": ["errors": [["code": "151018", "message": "Invalid tracking number"]]]], status: .notFound)
        }
        return Self.json(["trackResponse": ["shipment": [["inquiryNumber": number, "package": [package]]]]])
    }

    private func fedex(_ req: Request) -> Response {
        if let early = authorised(req, "fedex") { return early }
        guard let data = req.body.data, let body = try? JSONSerialization.jsonObject(with: Data(buffer: data)) as? [String: Any],
              let info = body["trackingInfo"] as? [[String: Any]] else {
            return Self.json(["errors": [["code": "INVALID.INPUT.EXCEPTION", "message": "Invalid field value in the input"]]], status: .badRequest)
        }
        let numbers = info.compactMap { ($0["trackingNumberInfo"] as? [String: Any])?["trackingNumber"] as? String }
        let results: [[String: Any]] = numbers.map { number in
            if let result = stored("fedex", number) { return ["trackingNumber": number, "trackResults": [result]] }
            return ["trackingNumber": number, "trackResults": [[
                "trackingNumberInfo": ["trackingNumber": number],
                "error": ["code": "TRACKING.TRACKINGNUMBER.NOTFOUND", "message": "Tracking number cannot be found. Please correct the tracking number and try again."],
            ]]]
        }
        return Self.json(["transactionId": UUID().uuidString, "output": ["completeTrackResults": results]])
    }

    private func usps(_ req: Request) -> Response {
        if let early = authorised(req, "usps") { return early }
        guard req.query[String.self, at: "expand"] == "DETAIL", let number = req.parameters.get("number"),
              let body = stored("usps", number) else {
            return Self.json(["apiVersion": "v3", "error": ["code": "404", "message": "Tracking number not found"]], status: .notFound)
        }
        return Self.json(body)
    }

    private func gls(_ req: Request) -> Response {
        if let early = authorised(req, "gls") { return early }
        let ids = (req.parameters.get("ids") ?? "").split(separator: ",").map(String.init)
        let parcels: [[String: Any]] = ids.compactMap { id in stored("gls", id).map { $0.merging(["requested": id]) { a, _ in a } } }
        return Self.json(["parcels": parcels])
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
