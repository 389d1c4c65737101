import Foundation

/// A place on Earth, in degrees (WGS 84).
public struct GeoPoint: Sendable, Hashable, Codable {
    public var latitude: Double
    public var longitude: Double
    public init(latitude: Double, longitude: Double) { self.latitude = latitude; self.longitude = longitude }

    /// Great-circle distance in metres (haversine, mean Earth radius).
    public func distance(to other: GeoPoint) -> Double {
        let r = 6_371_008.8, rad = Double.pi / 180
        let dLat = (other.latitude - latitude) * rad, dLon = (other.longitude - longitude) * rad
        let a = sin(dLat / 2) * sin(dLat / 2) + cos(latitude * rad) * cos(other.latitude * rad) * sin(dLon / 2) * sin(dLon / 2)
        return 2 * r * asin(min(1, a.squareRoot()))
    }
}

/// Where a plan's distances (metres) and durations (seconds) between places come from: a road network
/// (OSRM's table service) where the operator runs one, straight lines otherwise.
public protocol TravelMatrixProvider: Sendable {
    /// For plans and logs: "OSRM at http://…", "straight line × 1.3 at 30 km/h".
    var description: String { get }
    func matrix(for points: [GeoPoint]) async throws -> TravelMatrix
}

/// Straight-line distance times a detour factor, driven at a constant speed. Always available.
public struct StraightLineMatrix: TravelMatrixProvider {
    public var detourFactor: Double
    public var speedKmh: Double

    public init(detourFactor: Double = 1.3, speedKmh: Double = 30) {
        self.detourFactor = detourFactor; self.speedKmh = speedKmh
    }

    public var description: String { "straight line × \(detourFactor) at \(speedKmh) km/h" }

    public func distance(_ a: GeoPoint, _ b: GeoPoint) -> (metres: Double, seconds: Double) {
        let metres = a.distance(to: b) * detourFactor
        return (metres, metres / (speedKmh / 3.6))
    }

    public func straightMatrix(for points: [GeoPoint]) -> TravelMatrix {
        let n = points.count
        var d = [Double](repeating: 0, count: n * n), t = d
        for i in 0..<n {
            for j in 0..<n where i != j {
                let (m, s) = distance(points[i], points[j])
                d[i * n + j] = m; t[i * n + j] = s
            }
        }
        return TravelMatrix(count: n, distances: d, durations: t)
    }

    public func matrix(for points: [GeoPoint]) async throws -> TravelMatrix { straightMatrix(for: points) }
}
