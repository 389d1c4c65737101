/// Large test instances with a known shape: a depot in the middle of a 200 × 200 square, stops half
/// clustered and half scattered, a day of 1,000 time units, windows of 60 to 240, service 10. About 60 %
/// of the stops are deliveries from the depot and 40 % are pickup-and-delivery pairs. Every request can be
/// served alone (windows are drawn where a vehicle can reach them), so a plan that leaves one out failed.
public enum SyntheticInstance {
    public static func make(stops: Int, seed: UInt64 = 1, capacity: Int = 200) -> RoutingProblem {
        makeWithPoints(stops: stops, seed: seed, capacity: capacity).problem
    }

    /// The problem and the points its matrix was made from (location i is points[i]), so a checker can
    /// recompute distances itself.
    public static func makeWithPoints(stops: Int, seed: UInt64 = 1, capacity: Int = 200)
        -> (problem: RoutingProblem, points: [(x: Double, y: Double)]) {
        var rng = Random(seed: seed)
        let horizon = 1_000.0, service = 10.0, side = 200.0
        var points: [(x: Double, y: Double)] = [(side / 2, side / 2)]
        let centres = (0..<max(1, stops / 100)).map { _ in (x: 20 + rng.unit() * (side - 40), y: 20 + rng.unit() * (side - 40)) }
        for i in 0..<stops {
            if i % 2 == 0 {
                let c = centres[rng.below(centres.count)]
                points.append((min(side, max(0, c.x + (rng.unit() - 0.5) * 30)), min(side, max(0, c.y + (rng.unit() - 0.5) * 30))))
            } else {
                points.append((rng.unit() * side, rng.unit() * side))
            }
        }
        let matrix = TravelMatrix.euclidean(points)
        func d(_ a: Int, _ b: Int) -> Double { matrix.distances[a * matrix.count + b] }
        func window(earliest: Double, latest: Double) -> TimeWindow {
            let width = 60 + rng.unit() * 180
            let lo = max(0, earliest), hi = max(lo, latest - width)
            let start = lo + rng.unit() * (hi - lo)
            return TimeWindow(start: start, end: min(latest, start + width))
        }
        let pairStops = (stops * 2 / 5) & ~1
        var jobs: [Job] = [], shipments: [Shipment] = []
        var location = 1
        while location <= stops - pairStops {
            let w = window(earliest: d(0, location), latest: horizon - d(location, 0) - service)
            jobs.append(Job(id: "j\(location)", visit: Visit(location: location, service: service, window: w),
                            amount: [1 + rng.below(20)]))
            location += 1
        }
        while location + 1 <= stops {
            let p = location, q = location + 1
            let latestPickup = horizon - d(q, 0) - d(p, q) - 2 * service
            let wp = window(earliest: d(0, p), latest: max(d(0, p), latestPickup))
            let wq = window(earliest: wp.start + service + d(p, q), latest: horizon - d(q, 0) - service)
            shipments.append(Shipment(id: "s\(p)", pickup: Visit(location: p, service: service, window: wp),
                                      delivery: Visit(location: q, service: service, window: wq), amount: [1 + rng.below(20)]))
            location += 2
        }
        let vehicles = (0..<max(1, stops / 4)).map {
            Vehicle(id: "v\($0 + 1)", start: 0, end: 0, shift: TimeWindow(start: 0, end: horizon), capacity: [capacity])
        }
        return (RoutingProblem(matrix: matrix, jobs: jobs, shipments: shipments, vehicles: vehicles), points)
    }
}
