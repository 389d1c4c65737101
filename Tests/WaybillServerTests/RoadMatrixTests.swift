import Foundation
import Testing
import Vapor
import WaybillRouting
@testable import WaybillServer

@Suite("Road distances for route planning")
struct RoadMatrixTests {
    /// Places around Zürich, about a kilometre apart.
    static func places(_ n: Int) -> [GeoPoint] {
        (0..<n).map { GeoPoint(latitude: 47.35 + Double($0 % 5) * 0.01, longitude: 8.50 + Double($0 / 5) * 0.013) }
    }

    func withClient(_ body: (@escaping @Sendable () -> any Client, Logger) async throws -> Void) async throws {
        let app = try await Application.make(.testing)
        do { try await body({ app.client }, app.logger) } catch { try await app.asyncShutdown(); throw error }
        try await app.asyncShutdown()
    }

    @Test("Distances and durations come from the OSRM table, asked in blocks the server accepts")
    func osrmTableInBlocks() async throws {
        let osrm = try await FakeOSRM.start(maxTableSize: 10)
        defer { Task { await osrm.stop() } }
        try await withClient { client, logger in
            var settings = RoutingSettings(matrixURL: osrm.baseURL)
            settings.maxLocationsPerRequest = 10
            let points = Self.places(23)
            let result = await RoutingMatrices(settings: settings, client: client).matrix(for: points, logger: logger)
            #expect(result.source == "OSRM table service at \(osrm.baseURL)")
            #expect(result.unroutable == 0)
            // 23 places in blocks of 5 × 5: 5 × 5 = 25 requests of at most 10 coordinates.
            #expect(osrm.requests == 25)
            for i in 0..<23 {
                for j in 0..<23 {
                    let expected = i == j ? (metres: 0.0, seconds: 0.0) : FakeOSRM.road(points[i], points[j])
                    #expect(abs(result.matrix.distances[i * 23 + j] - expected.metres) < 1e-3, "\(i)→\(j)")
                    #expect(abs(result.matrix.durations[i * 23 + j] - expected.seconds) < 1e-3, "\(i)→\(j)")
                }
            }
        }
    }

    @Test("A place the road network cannot reach gets the straight-line estimate, and is counted")
    func unreachablePlaces() async throws {
        let osrm = try await FakeOSRM.start(maxTableSize: 100)
        defer { Task { await osrm.stop() } }
        try await withClient { client, logger in
            var points = Self.places(4)
            points.append(GeoPoint(latitude: 81, longitude: 8.5))
            let settings = RoutingSettings(matrixURL: osrm.baseURL)
            let result = await RoutingMatrices(settings: settings, client: client).matrix(for: points, logger: logger)
            #expect(result.unroutable == 8)
            let straight = settings.straightLine.distance(points[0], points[4])
            #expect(abs(result.matrix.distances[0 * 5 + 4] - straight.metres) < 1e-6)
            #expect(abs(result.matrix.distances[0 * 5 + 1] - FakeOSRM.road(points[0], points[1]).metres) < 1e-3)
        }
    }

    @Test("Without a road network, or when it does not answer, plans use straight lines and say so")
    func straightLinesOtherwise() async throws {
        try await withClient { client, logger in
            let zurich = GeoPoint(latitude: 47.3769, longitude: 8.5417), bern = GeoPoint(latitude: 46.9480, longitude: 7.4474)
            var settings = RoutingSettings()
            settings.detourFactor = 1.25
            settings.speedKmh = 50
            let plain = await RoutingMatrices(settings: settings, client: client).matrix(for: [zurich, bern], logger: logger)
            #expect(plain.source == "straight line × 1.25 at 50.0 km/h")
            // Zürich–Bern is 95.5 km as the crow flies.
            #expect(abs(plain.matrix.distances[1] / 1.25 - 95_500) < 500)
            #expect(abs(plain.matrix.durations[1] - plain.matrix.distances[1] / (50 / 3.6)) < 1e-6)
            // A port nobody listens on.
            settings.matrixURL = "http://127.0.0.1:9"
            let down = await RoutingMatrices(settings: settings, client: client).matrix(for: [zurich, bern], logger: logger)
            #expect(down.source.hasSuffix("(OSRM unavailable)"))
            #expect(down.matrix.distances == plain.matrix.distances)
        }
    }

    @Test("The routing settings are read from the environment and refused when malformed")
    func settingsFromEnvironment() throws {
        let logger = Logger(label: "test")
        let base = ["JWT_SECRET": String(repeating: "k", count: 40), "STORAGE_PATH": NSTemporaryDirectory()]
        var env = base
        env["ROUTING_MATRIX_URL"] = "http://osrm:5000/"
        env["ROUTING_DETOUR_FACTOR"] = "1.4"
        env["ROUTING_SPEED_KMH"] = "42"
        env["ROUTING_MATRIX_MAX_LOCATIONS"] = "500"
        let config = try WaybillConfig.fromEnvironment(env, isProduction: false, logger: logger)
        #expect(config.routing.matrixURL == "http://osrm:5000")
        #expect(config.routing.detourFactor == 1.4 && config.routing.speedKmh == 42 && config.routing.maxLocationsPerRequest == 500)
        for (name, bad) in [("ROUTING_MATRIX_URL", "osrm"), ("ROUTING_DETOUR_FACTOR", "0.5"), ("ROUTING_SPEED_KMH", "fast"),
                            ("ROUTING_MATRIX_MAX_LOCATIONS", "1"), ("ROUTING_MATRIX_PROFILE", "car/../x")] {
            var wrong = base
            wrong[name] = bad
            #expect(throws: (any Error).self, "\(name)=\(bad)") { try WaybillConfig.fromEnvironment(wrong, isProduction: false, logger: logger) }
        }
    }
}
