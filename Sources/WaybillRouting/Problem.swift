// WaybillRouting: plans routes for pickup-and-delivery with time windows, capacities in several
// dimensions, service times, driver shifts with their own start and end places, skills, priorities and
// optional jobs, on a distance/duration matrix. Pure Swift: no Vapor, no Fluent, no Foundation
// networking; the server and the SDK both use it.

/// A time window, in seconds (or any unit the matrix's durations use).
public struct TimeWindow: Sendable, Hashable, Codable {
    public var start: Double
    public var end: Double
    public init(start: Double, end: Double) { self.start = start; self.end = end }
    public static let always = TimeWindow(start: 0, end: 1e15)
}

/// Distances (the cost minimised) and durations (the time windows' clock) between locations,
/// row-major: `distance[from * count + to]`.
public struct TravelMatrix: Sendable, Codable {
    public var count: Int
    public var distances: [Double]
    public var durations: [Double]

    public init(count: Int, distances: [Double], durations: [Double]) {
        self.count = count; self.distances = distances; self.durations = durations
    }

    /// Straight-line distances between points; durations are the same numbers (Solomon's convention)
    /// unless a speed is given.
    public static func euclidean(_ points: [(x: Double, y: Double)], speed: Double = 1) -> TravelMatrix {
        let n = points.count
        var d = [Double](repeating: 0, count: n * n)
        for i in 0..<n {
            for j in 0..<n where i != j {
                let dx = points[i].x - points[j].x, dy = points[i].y - points[j].y
                d[i * n + j] = (dx * dx + dy * dy).squareRoot()
            }
        }
        return TravelMatrix(count: n, distances: d, durations: speed == 1 ? d : d.map { $0 / speed })
    }
}

/// One place to be visited: where, for how long, and when service may start.
public struct Visit: Sendable, Hashable, Codable {
    public var location: Int
    public var service: Double
    public var window: TimeWindow
    public init(location: Int, service: Double = 0, window: TimeWindow = .always) {
        self.location = location; self.service = service; self.window = window
    }
}

/// A single stop: a delivery carried from the vehicle's start, or a pickup brought to its end.
public struct Job: Sendable, Hashable, Codable {
    public enum Kind: String, Sendable, Codable { case delivery, pickup }
    public var id: String
    public var kind: Kind
    public var visit: Visit
    /// Amount per capacity dimension (for example kg, parcels).
    public var amount: [Int]
    public var skills: Set<String>
    /// 0 is normal; higher is served first when not everything fits.
    public var priority: Int
    /// nil: the job must be served if at all possible. A number: the cost of leaving it out.
    public var unassignedPenalty: Double?

    public init(id: String, kind: Kind = .delivery, visit: Visit, amount: [Int] = [], skills: Set<String> = [],
                priority: Int = 0, unassignedPenalty: Double? = nil) {
        self.id = id; self.kind = kind; self.visit = visit; self.amount = amount; self.skills = skills
        self.priority = priority; self.unassignedPenalty = unassignedPenalty
    }
}

/// A pickup and its delivery, served by the same vehicle, pickup first.
public struct Shipment: Sendable, Hashable, Codable {
    public var id: String
    public var pickup: Visit
    public var delivery: Visit
    public var amount: [Int]
    public var skills: Set<String>
    public var priority: Int
    public var unassignedPenalty: Double?

    public init(id: String, pickup: Visit, delivery: Visit, amount: [Int] = [], skills: Set<String> = [],
                priority: Int = 0, unassignedPenalty: Double? = nil) {
        self.id = id; self.pickup = pickup; self.delivery = delivery; self.amount = amount
        self.skills = skills; self.priority = priority; self.unassignedPenalty = unassignedPenalty
    }
}

/// A driver's shift: where it starts and ends (nil: wherever the first or last stop is), when, what it
/// carries and can do.
public struct Vehicle: Sendable, Hashable, Codable {
    public var id: String
    public var start: Int?
    public var end: Int?
    public var shift: TimeWindow
    public var capacity: [Int]
    public var skills: Set<String>
    /// Added to the cost when the vehicle is used at all.
    public var fixedCost: Double
    /// At most this many stops (nil: no limit).
    public var maxStops: Int?

    public init(id: String, start: Int?, end: Int?, shift: TimeWindow = .always, capacity: [Int] = [],
                skills: Set<String> = [], fixedCost: Double = 0, maxStops: Int? = nil) {
        self.id = id; self.start = start; self.end = end; self.shift = shift; self.capacity = capacity
        self.skills = skills; self.fixedCost = fixedCost; self.maxStops = maxStops
    }
}

public struct RoutingProblem: Sendable, Codable {
    public var matrix: TravelMatrix
    public var jobs: [Job]
    public var shipments: [Shipment]
    public var vehicles: [Vehicle]

    public init(matrix: TravelMatrix, jobs: [Job] = [], shipments: [Shipment] = [], vehicles: [Vehicle]) {
        self.matrix = matrix; self.jobs = jobs; self.shipments = shipments; self.vehicles = vehicles
    }

    /// The number of capacity dimensions (the longest amount or capacity given). A missing amount is 0;
    /// a missing capacity is no limit in that dimension.
    public var dimensions: Int {
        max(vehicles.map(\.capacity.count).max() ?? 0, jobs.map(\.amount.count).max() ?? 0,
            shipments.map(\.amount.count).max() ?? 0)
    }
}

/// What is wrong with a problem as given; `field` is a path such as `jobs[3].visit.window`.
public struct RoutingInputError: Error, Sendable, Hashable, CustomStringConvertible {
    public var field: String
    public var message: String
    public var description: String { "\(field): \(message)" }
}

extension RoutingProblem {
    /// Every mistake in the input, not only the first. An empty list means the solver can run.
    /// Amounts and capacities are at most a billion each, so load sums never overflow.
    public static let maxAmount = 1_000_000_000

    public func validationErrors(maxLocations: Int = 5_000, maxTasks: Int = 10_000) -> [RoutingInputError] {
        var errors: [RoutingInputError] = []
        func fail(_ field: String, _ message: String) { errors.append(.init(field: field, message: message)) }
        let n = matrix.count
        if n < 1 || n > maxLocations { fail("matrix.count", "must be between 1 and \(maxLocations)") }
        else {
            let (square, overflow) = n.multipliedReportingOverflow(by: n)
            if overflow || matrix.distances.count != square { fail("matrix.distances", "must hold count × count numbers") }
            if overflow || matrix.durations.count != square { fail("matrix.durations", "must hold count × count numbers") }
            if matrix.distances.contains(where: { !$0.isFinite || $0 < 0 }) {
                fail("matrix.distances", "must be finite and not negative")
            }
            if matrix.durations.contains(where: { !$0.isFinite || $0 < 0 }) {
                fail("matrix.durations", "must be finite and not negative")
            }
        }
        if vehicles.isEmpty { fail("vehicles", "at least one vehicle is needed") }
        if jobs.count + 2 * shipments.count > maxTasks { fail("jobs", "at most \(maxTasks) stops in one plan") }
        func check(_ visit: Visit, _ path: String) {
            if visit.location < 0 || visit.location >= n { fail("\(path).location", "is not a row of the matrix") }
            if !visit.service.isFinite || visit.service < 0 { fail("\(path).service", "must be finite and not negative") }
            check(visit.window, "\(path).window")
        }
        func check(_ window: TimeWindow, _ path: String) {
            if !window.start.isFinite || !window.end.isFinite { fail(path, "must be finite") }
            else if window.start > window.end { fail(path, "ends before it starts") }
        }
        func check(amount: [Int], _ path: String) {
            if amount.contains(where: { $0 < 0 || $0 > Self.maxAmount }) { fail(path, "must be between 0 and \(Self.maxAmount)") }
            if amount.count > 8 { fail(path, "at most 8 dimensions") }
        }
        func check(penalty: Double?, _ path: String) {
            if let p = penalty, !p.isFinite || p < 0 { fail(path, "must be finite and not negative") }
        }
        var ids = Set<String>()
        for (i, job) in jobs.enumerated() {
            if !ids.insert(job.id).inserted { fail("jobs[\(i)].id", "is used twice") }
            check(job.visit, "jobs[\(i)].visit")
            check(amount: job.amount, "jobs[\(i)].amount")
            check(penalty: job.unassignedPenalty, "jobs[\(i)].unassignedPenalty")
        }
        for (i, shipment) in shipments.enumerated() {
            if !ids.insert(shipment.id).inserted { fail("shipments[\(i)].id", "is used twice") }
            check(shipment.pickup, "shipments[\(i)].pickup")
            check(shipment.delivery, "shipments[\(i)].delivery")
            check(amount: shipment.amount, "shipments[\(i)].amount")
            check(penalty: shipment.unassignedPenalty, "shipments[\(i)].unassignedPenalty")
        }
        var vehicleIDs = Set<String>()
        for (i, vehicle) in vehicles.enumerated() {
            if !vehicleIDs.insert(vehicle.id).inserted { fail("vehicles[\(i)].id", "is used twice") }
            if let s = vehicle.start, s < 0 || s >= n { fail("vehicles[\(i)].start", "is not a row of the matrix") }
            if let e = vehicle.end, e < 0 || e >= n { fail("vehicles[\(i)].end", "is not a row of the matrix") }
            check(vehicle.shift, "vehicles[\(i)].shift")
            check(amount: vehicle.capacity, "vehicles[\(i)].capacity")
            if !vehicle.fixedCost.isFinite || vehicle.fixedCost < 0 { fail("vehicles[\(i)].fixedCost", "must be finite and not negative") }
            if let m = vehicle.maxStops, m < 0 { fail("vehicles[\(i)].maxStops", "must not be negative") }
        }
        return errors
    }
}
