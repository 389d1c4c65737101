import Foundation
import Vapor
import WaybillRouting

/// Where route planning gets its distances (`ROUTING_MATRIX_*`, `ROUTING_DETOUR_FACTOR`, `ROUTING_SPEED_KMH`).
public struct RoutingSettings: Sendable, Equatable {
    /// An OSRM server (`http://osrm:5000`); nil: straight lines.
    public var matrixURL: String?
    public var profile = "driving"
    /// The server's `--max-table-size`: at most this many coordinates in one request (OSRM's default 100).
    public var maxLocationsPerRequest = 100
    public var detourFactor = 1.3
    public var speedKmh = 30.0

    public init(matrixURL: String? = nil) { self.matrixURL = matrixURL }

    var straightLine: StraightLineMatrix { StraightLineMatrix(detourFactor: detourFactor, speedKmh: speedKmh) }
}

enum RoadMatrixError: Error, Equatable, CustomStringConvertible {
    case unavailable(String)
    var description: String { switch self { case .unavailable(let why): why } }
}

/// OSRM's table service (`GET /table/v1/{profile}/{lon,lat;…}?sources=…&destinations=…&annotations=duration,distance`),
/// asked in blocks no larger than the server accepts. A pair the road network cannot join (OSRM's
/// `null`) gets the straight-line estimate and is counted in `lastUnroutable`.
struct OSRMTableMatrix: TravelMatrixProvider {
    let base: String
    let profile: String
    let maxLocations: Int
    let fallback: StraightLineMatrix
    let client: @Sendable () -> any Client
    /// Blocks asked at once.
    var concurrency = 4

    var description: String { "OSRM table service at \(base)" }

    func matrix(for points: [GeoPoint]) async throws -> TravelMatrix {
        try await matrixCountingUnroutable(for: points).matrix
    }

    func matrixCountingUnroutable(for points: [GeoPoint]) async throws -> (matrix: TravelMatrix, unroutable: Int) {
        let n = points.count
        var distances = [Double](repeating: 0, count: n * n), durations = distances
        var unroutable = 0
        guard n > 1 else { return (TravelMatrix(count: n, distances: distances, durations: durations), 0) }
        // Blocks of sources × destinations whose coordinates together fit in one request.
        let side = max(1, maxLocations / 2)
        let chunks = stride(from: 0, to: n, by: side).map { Array($0..<min(n, $0 + side)) }
        var blocks: [(sources: [Int], destinations: [Int])] = []
        for s in chunks { for d in chunks { blocks.append((s, d)) } }
        try await withThrowingTaskGroup(of: (sources: [Int], destinations: [Int], d: [[Double?]], t: [[Double?]]).self) { group in
            var next = 0
            func add() {
                let block = blocks[next]
                next += 1
                group.addTask { try await self.ask(points, block.sources, block.destinations) }
            }
            while next < min(concurrency, blocks.count) { add() }
            while let answer = try await group.next() {
                for (si, s) in answer.sources.enumerated() {
                    for (di, d) in answer.destinations.enumerated() where s != d {
                        if let m = answer.d[si][di], let sec = answer.t[si][di], m.isFinite, sec.isFinite, m >= 0, sec >= 0 {
                            distances[s * n + d] = m; durations[s * n + d] = sec
                        } else {
                            let estimate = fallback.distance(points[s], points[d])
                            distances[s * n + d] = estimate.metres; durations[s * n + d] = estimate.seconds
                            unroutable += 1
                        }
                    }
                }
                if next < blocks.count { add() }
            }
        }
        return (TravelMatrix(count: n, distances: distances, durations: durations), unroutable)
    }

    private func ask(_ points: [GeoPoint], _ sources: [Int], _ destinations: [Int])
        async throws -> (sources: [Int], destinations: [Int], d: [[Double?]], t: [[Double?]]) {
        // The request's coordinates: the sources, then the destinations not among them.
        var coordinates = sources
        var index: [Int: Int] = [:]
        for (i, p) in sources.enumerated() { index[p] = i }
        for p in destinations where index[p] == nil { index[p] = coordinates.count; coordinates.append(p) }
        // Each source's and destination's place in `coordinates` (every one was given one just above).
        let sourceAt = sources.compactMap { index[$0] }, destinationAt = destinations.compactMap { index[$0] }
        let path = coordinates.map { String(format: "%.6f,%.6f", points[$0].longitude, points[$0].latitude) }.joined(separator: ";")
        let query = "sources=" + sourceAt.map(String.init).joined(separator: ";")
            + "&destinations=" + destinationAt.map(String.init).joined(separator: ";")
            + "&annotations=duration,distance"
        let url = "\(base)/table/v1/\(profile)/\(path)?\(query)"
        let response: ClientResponse
        do {
            response = try await client().get(URI(string: url)) { $0.timeout = .seconds(30) }
        } catch {
            throw RoadMatrixError.unavailable("OSRM did not answer: \(error)")
        }
        struct Table: Decodable {
            var code: String
            var message: String?
            var durations: [[Double?]]?
            var distances: [[Double?]]?
        }
        guard let body = response.body, let table = try? JSONDecoder().decode(Table.self, from: Data(buffer: body)) else {
            throw RoadMatrixError.unavailable("OSRM answered \(response.status.code) without a table")
        }
        guard response.status == .ok, table.code == "Ok", let d = table.distances, let t = table.durations,
              d.count == sources.count, t.count == sources.count,
              d.allSatisfy({ $0.count == destinations.count }), t.allSatisfy({ $0.count == destinations.count }) else {
            throw RoadMatrixError.unavailable("OSRM answered \(response.status.code) \(table.code): \(table.message ?? "no table")")
        }
        return (sources, destinations, d, t)
    }
}

/// The matrix for a plan: the road network when configured and answering, straight lines otherwise;
/// the plan records which it used.
struct RoutingMatrices: Sendable {
    let settings: RoutingSettings
    /// nil: no HTTP (straight lines only).
    let client: (@Sendable () -> any Client)?

    struct Result: Sendable {
        var matrix: TravelMatrix
        /// "OSRM table service at …" or "straight line × 1.3 at 30 km/h", with why when it fell back.
        var source: String
        var unroutable: Int
    }

    func matrix(for points: [GeoPoint], logger: Logger) async -> Result {
        let straight = settings.straightLine
        if let url = settings.matrixURL, let client {
            let osrm = OSRMTableMatrix(base: url, profile: settings.profile, maxLocations: settings.maxLocationsPerRequest,
                                       fallback: straight, client: client)
            do {
                let (matrix, unroutable) = try await osrm.matrixCountingUnroutable(for: points)
                return Result(matrix: matrix, source: osrm.description, unroutable: unroutable)
            } catch {
                logger.warning("routing: the road network is unavailable, planning on straight lines", metadata: ["error": "\(error)"])
                return Result(matrix: straight.straightMatrix(for: points), source: straight.description + " (OSRM unavailable)", unroutable: 0)
            }
        }
        return Result(matrix: straight.straightMatrix(for: points), source: straight.description, unroutable: 0)
    }
}
