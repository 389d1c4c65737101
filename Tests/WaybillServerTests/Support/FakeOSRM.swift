import Foundation
import NIOConcurrencyHelpers
import Vapor
import WaybillRouting

/// A local HTTP server speaking OSRM's table service (`GET /table/v1/{profile}/{lon,lat;…}` with
/// `sources`, `destinations`, `annotations`): road distance = great circle × 1.4, at 10 m/s. Like
/// OSRM it refuses more coordinates than its `--max-table-size` (400 `TooBig`) and answers `null` for
/// a place off the network (here: north of latitude 80).
final class FakeOSRM: @unchecked Sendable {
    let app: Application
    let port: Int
    let maxTableSize: Int
    private let counter = NIOLockedValueBox(0)
    var baseURL: String { "http://127.0.0.1:\(port)" }
    var requests: Int { counter.withLockedValue { $0 } }

    static func road(_ a: GeoPoint, _ b: GeoPoint) -> (metres: Double, seconds: Double) {
        let m = a.distance(to: b) * 1.4
        return (m, m / 10)
    }

    private init(app: Application, port: Int, maxTableSize: Int) { self.app = app; self.port = port; self.maxTableSize = maxTableSize }

    static func start(maxTableSize: Int = 10) async throws -> FakeOSRM {
        let app = try await Application.make(.testing)
        let box = NIOLockedValueBox<FakeOSRM?>(nil)
        app.get("table", "v1", ":profile", ":coordinates") { req async throws -> Response in
            try box.withLockedValue { $0! }.table(req)
        }
        try await app.server.start(address: .hostname("127.0.0.1", port: 0))
        guard let port = app.http.server.shared.localAddress?.port else { throw Abort(.internalServerError) }
        let fake = FakeOSRM(app: app, port: port, maxTableSize: maxTableSize)
        box.withLockedValue { $0 = fake }
        return fake
    }

    func stop() async {
        await app.server.shutdown()
        try? await app.asyncShutdown()
    }

    private func answer(_ status: HTTPStatus, _ body: [String: Any]) throws -> Response {
        let data = try JSONSerialization.data(withJSONObject: body)
        return Response(status: status, headers: ["Content-Type": "application/json"], body: .init(data: data))
    }

    func table(_ req: Request) throws -> Response {
        counter.withLockedValue { $0 += 1 }
        let raw = req.parameters.get("coordinates") ?? ""
        let points: [GeoPoint] = raw.split(separator: ";").compactMap {
            let parts = $0.split(separator: ",").compactMap { Double($0) }
            return parts.count == 2 ? GeoPoint(latitude: parts[1], longitude: parts[0]) : nil
        }
        guard points.count == raw.split(separator: ";").count, points.count >= 1 else {
            return try answer(.badRequest, ["code": "InvalidQuery", "message": "Query string malformed"])
        }
        guard points.count <= maxTableSize else {
            return try answer(.badRequest, ["code": "TooBig", "message": "Too many table coordinates"])
        }
        func indices(_ name: String) -> [Int]? {
            guard let text = req.query[String.self, at: name] else { return Array(points.indices) }
            let list = text.split(separator: ";").compactMap { Int($0) }
            return list.allSatisfy { points.indices.contains($0) } ? list : nil
        }
        guard let sources = indices("sources"), let destinations = indices("destinations") else {
            return try answer(.badRequest, ["code": "InvalidOptions", "message": "Index out of range"])
        }
        var distances: [[Any]] = [], durations: [[Any]] = []
        for s in sources {
            var d: [Any] = [], t: [Any] = []
            for e in destinations {
                if s == e { d.append(0.0); t.append(0.0); continue }
                if points[s].latitude > 80 || points[e].latitude > 80 { d.append(NSNull()); t.append(NSNull()); continue }
                let (m, sec) = Self.road(points[s], points[e])
                d.append(m); t.append(sec)
            }
            distances.append(d); durations.append(t)
        }
        return try answer(.ok, ["code": "Ok", "distances": distances, "durations": durations,
                                "sources": sources.map { _ in ["location": [0, 0]] }, "destinations": destinations.map { _ in ["location": [0, 0]] }])
    }
}
