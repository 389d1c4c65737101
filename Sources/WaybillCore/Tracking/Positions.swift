/// A position a driver's device reported. Times are Unix milliseconds.
public struct PositionReport: Sendable, Hashable, Codable {
    public var latitude: Double
    public var longitude: Double
    /// Metres (radius of 68 % confidence, as phones report it).
    public var accuracy: Double?
    /// Degrees clockwise from true north, 0 ..< 360.
    public var heading: Double?
    /// Metres per second.
    public var speed: Double?
    public var recordedAt: Int64

    public init(latitude: Double, longitude: Double, accuracy: Double? = nil, heading: Double? = nil,
                speed: Double? = nil, recordedAt: Int64) {
        self.latitude = latitude
        self.longitude = longitude
        self.accuracy = accuracy
        self.heading = heading
        self.speed = speed
        self.recordedAt = recordedAt
    }

    public var coordinate: Coordinate { Coordinate(latitude: latitude, longitude: longitude) }
}

/// What the server accepts from a driver's device, and how a batch is cleaned.
///
/// A batch is checked as a whole: one impossible value refuses it (422, every problem named by its
/// index), so an app learns at once that it sends nonsense rather than having parts silently lost.
/// Points the server already has (a retried batch) or that follow the previous one too closely are
/// not errors: they are ignored and counted, so resending a buffer is always safe.
public struct PositionPolicy: Sendable, Equatable {
    /// Points in one request (an app offline for a while sends what it buffered, in chunks).
    public var maxBatch = 500
    /// A clock a little ahead is tolerated; more is a broken clock.
    public var maxFutureMillis: Int64 = 60_000
    /// Older points are of no use to anybody watching and would only rewrite the past.
    public var maxAgeMillis: Int64 = 24 * 3_600_000
    /// 70 m/s = 252 km/h: faster than any courier, slower than a GPS glitch across town.
    public var maxSpeedMetersPerSecond = 70.0
    /// Jumps shorter than this are never called impossible (GPS noise between close readings).
    public var jumpToleranceMeters = 1_000.0
    /// Points closer in time than this to the previous kept one are dropped: at most a few a second.
    public var minIntervalMillis: Int64 = 250
    public var maxAccuracy = 100_000.0
    public var maxSpeedValue = 100.0

    public init() {}

    public struct Cleaned: Sendable, Equatable {
        /// In time order, each at least `minIntervalMillis` after the one before.
        public var accepted: [PositionReport]
        /// Duplicates, points older than what the server has, and points too close together.
        public var ignored: Int
    }

    /// Checks `batch` against the driver's `previous` position (if any) and the time `now`.
    public func clean(_ batch: [PositionReport], previous: PositionReport?, now: Int64) -> Result<Cleaned, FieldErrorsError> {
        var errors = FieldErrors()
        if batch.isEmpty { errors.add("positions", "empty") }
        if batch.count > maxBatch { errors.add("positions", "too_many") }
        if !errors.isEmpty { return .failure(FieldErrorsError(errors)) }
        for (index, point) in batch.enumerated() {
            let field = "positions[\(index)]"
            if !(point.latitude.isFinite && (-90...90).contains(point.latitude)) { errors.add("\(field).latitude", "out_of_range") }
            if !(point.longitude.isFinite && (-180...180).contains(point.longitude)) { errors.add("\(field).longitude", "out_of_range") }
            if let accuracy = point.accuracy, !(accuracy.isFinite && accuracy >= 0 && accuracy <= maxAccuracy) {
                errors.add("\(field).accuracy", "out_of_range")
            }
            if let heading = point.heading, !(heading.isFinite && heading >= 0 && heading < 360) { errors.add("\(field).heading", "out_of_range") }
            if let speed = point.speed, !(speed.isFinite && speed >= 0 && speed <= maxSpeedValue) { errors.add("\(field).speed", "out_of_range") }
            if point.recordedAt > now + maxFutureMillis { errors.add("\(field).recordedAt", "in_future") }
            else if point.recordedAt < now - maxAgeMillis { errors.add("\(field).recordedAt", "too_old") }
        }
        if !errors.isEmpty { return .failure(FieldErrorsError(errors)) }

        // In time order; the original index names the point in an error.
        let ordered = batch.enumerated().sorted { ($0.element.recordedAt, $0.offset) < ($1.element.recordedAt, $1.offset) }
        var last = previous
        var accepted: [PositionReport] = []
        var ignored = 0
        for (index, point) in ordered {
            if let last {
                if point.recordedAt < last.recordedAt + minIntervalMillis { ignored += 1; continue }
                if isImpossibleJump(from: last, to: point) {
                    errors.add("positions[\(index)]", "impossible_jump")
                    continue
                }
            }
            accepted.append(point)
            last = point
        }
        if !errors.isEmpty { return .failure(FieldErrorsError(errors)) }
        return .success(Cleaned(accepted: accepted, ignored: ignored))
    }

    /// Further than a vehicle could have gone in the time between the two readings.
    public func isImpossibleJump(from a: PositionReport, to b: PositionReport) -> Bool {
        let meters = a.coordinate.distance(to: b.coordinate)
        guard meters > jumpToleranceMeters else { return false }
        let seconds = Double(max(b.recordedAt - a.recordedAt, 1)) / 1000
        return meters / seconds > maxSpeedMetersPerSecond
    }
}

/// When the driver should reach the order's next stop.
public struct ArrivalEstimate: Sendable, Hashable, Codable {
    public enum Stop: String, Sendable, Codable { case pickup, dropoff }
    public var stop: Stop
    /// Unix milliseconds.
    public var arrivesAt: Int64
    public var distanceMeters: Int

    public init(stop: Stop, arrivesAt: Int64, distanceMeters: Int) {
        self.stop = stop
        self.arrivesAt = arrivesAt
        self.distanceMeters = distanceMeters
    }

    /// With an applied route plan: a driver with other stops before this one cannot arrive before the
    /// plan has them there, so the later of the live estimate and the planned arrival.
    public static func respectingPlan(_ live: ArrivalEstimate?, plannedArrival: Int64?) -> ArrivalEstimate? {
        guard var live else { return nil }
        if let planned = plannedArrival, planned > live.arrivesAt { live.arrivesAt = planned }
        return live
    }

    /// Straight-line distance at an average speed that stands for the whole trip, detours and
    /// stops included (configurable: a bicycle courier in a city centre and a van differ).
    public static func estimate(from position: PositionReport, to target: Coordinate, stop: Stop,
                                averageSpeedKmh: Double) -> ArrivalEstimate? {
        guard target.isValid, averageSpeedKmh > 0 else { return nil }
        let meters = position.coordinate.distance(to: target)
        let millis = meters / (averageSpeedKmh / 3.6) * 1000
        return ArrivalEstimate(stop: stop, arrivesAt: position.recordedAt + Int64(millis.rounded()),
                               distanceMeters: Int(meters.rounded()))
    }
}
