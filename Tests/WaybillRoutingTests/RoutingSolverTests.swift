import Foundation
import Testing
@testable import WaybillRouting

/// A plan as this test reads it, checked and costed here rather than by the solver.
private enum Stop: Hashable { case job(Int), pickup(Int), delivery(Int) }

private func points(_ p: [(Double, Double)]) -> TravelMatrix { TravelMatrix.euclidean(p.map { (x: $0.0, y: $0.1) }) }

/// The cost of routes (one list of stops per vehicle), or nil when any rule is broken.
private func evaluate(_ problem: RoutingProblem, _ routes: [[Stop]]) -> Double? {
    let n = problem.matrix.count
    func d(_ a: Int, _ b: Int) -> Double { problem.matrix.distances[a * n + b] }
    func t(_ a: Int, _ b: Int) -> Double { problem.matrix.durations[a * n + b] }
    var total = 0.0
    for (v, stops) in routes.enumerated() where !stops.isEmpty {
        let vehicle = problem.vehicles[v]
        let dims = problem.dimensions
        func amount(_ a: [Int], _ k: Int) -> Int { k < a.count ? a[k] : 0 }
        func cap(_ k: Int) -> Int { k < vehicle.capacity.count ? vehicle.capacity[k] : .max }
        if let m = vehicle.maxStops, stops.count > m { return nil }
        var load = (0..<dims).map { k in
            stops.reduce(0) { sum, s in
                if case .job(let j) = s, problem.jobs[j].kind == .delivery { return sum + amount(problem.jobs[j].amount, k) }
                return sum
            }
        }
        // Deliveries are all on board when the vehicle leaves.
        if (0..<dims).contains(where: { load[$0] > cap($0) }) { return nil }
        var now = vehicle.shift.start, at = vehicle.start!
        var picked = Set<Int>()
        for stop in stops {
            let visit: Visit
            var skills: Set<String>
            switch stop {
            case .job(let j):
                visit = problem.jobs[j].visit; skills = problem.jobs[j].skills
                for k in 0..<dims { load[k] += (problem.jobs[j].kind == .delivery ? -1 : 1) * amount(problem.jobs[j].amount, k) }
            case .pickup(let s):
                visit = problem.shipments[s].pickup; skills = problem.shipments[s].skills
                picked.insert(s)
                for k in 0..<dims { load[k] += amount(problem.shipments[s].amount, k) }
            case .delivery(let s):
                visit = problem.shipments[s].delivery; skills = problem.shipments[s].skills
                if !picked.contains(s) { return nil }
                for k in 0..<dims { load[k] -= amount(problem.shipments[s].amount, k) }
            }
            if !skills.isSubset(of: vehicle.skills) { return nil }
            if (0..<dims).contains(where: { load[$0] > cap($0) }) { return nil }
            total += d(at, visit.location)
            now = max(now + t(at, visit.location), visit.window.start)
            if now > visit.window.end + 1e-9 { return nil }
            now += visit.service
            at = visit.location
        }
        if (0..<dims).contains(where: { k in load[k] > cap(k) }) { return nil }
        total += d(at, vehicle.end!)
        if now + t(at, vehicle.end!) > vehicle.shift.end + 1e-9 { return nil }
        total += vehicle.fixedCost
    }
    return total
}

/// The best plan by trying every order of every stop split between two vehicles.
private func bruteForce(_ problem: RoutingProblem) -> Double? {
    var stops: [Stop] = problem.jobs.indices.map { .job($0) }
    for s in problem.shipments.indices { stops += [.pickup(s), .delivery(s)] }
    var best: Double?
    func permute(_ k: Int) {
        if k == stops.count {
            for split in 0...stops.count {
                if let c = evaluate(problem, [Array(stops[..<split]), Array(stops[split...])]), best.map({ c < $0 - 1e-9 }) ?? true { best = c }
            }
            return
        }
        for i in k..<stops.count {
            stops.swapAt(k, i); permute(k + 1); stops.swapAt(k, i)
        }
    }
    permute(0)
    return best
}

/// Turns the solver's plan into this test's stops, per vehicle.
private func routes(of solution: RoutingSolution, in problem: RoutingProblem) -> [[Stop]] {
    var result = [[Stop]](repeating: [], count: problem.vehicles.count)
    let jobIndex = Dictionary(uniqueKeysWithValues: problem.jobs.enumerated().map { ($1.id, $0) })
    let shipmentIndex = Dictionary(uniqueKeysWithValues: problem.shipments.enumerated().map { ($1.id, $0) })
    for route in solution.routes {
        result[route.vehicleIndex] = route.stops.map { stop in
            if let j = jobIndex[stop.id] { return .job(j) }
            return stop.kind == .pickup ? .pickup(shipmentIndex[stop.id]!) : .delivery(shipmentIndex[stop.id]!)
        }
    }
    return result
}

private func randomProblem(seed: UInt64) -> RoutingProblem {
    var rng = SystemRandomNumberGeneratorSeeded(seed)
    let depotA = (50.0, 50.0), depotB = (20.0, 80.0)
    var p: [(Double, Double)] = [depotA, depotB]
    for _ in 0..<6 { p.append((rng.next(100), rng.next(100))) }
    func window() -> TimeWindow {
        let s = rng.next(150)
        return TimeWindow(start: s, end: s + 40 + rng.next(120))
    }
    let jobs = (0..<4).map { i in
        Job(id: "j\(i)", kind: i == 3 ? .pickup : .delivery, visit: Visit(location: 2 + i, service: 5, window: window()),
            amount: [1 + Int(rng.next(4)), 1])
    }
    let shipment = Shipment(id: "s0", pickup: Visit(location: 6, service: 5, window: TimeWindow(start: 0, end: 200)),
                            delivery: Visit(location: 7, service: 5, window: TimeWindow(start: 0, end: 300)), amount: [3, 1])
    let vehicles = [
        Vehicle(id: "a", start: 0, end: 0, shift: TimeWindow(start: 0, end: 400), capacity: [6, 3], fixedCost: 10),
        Vehicle(id: "b", start: 1, end: 0, shift: TimeWindow(start: 20, end: 350), capacity: [8, 2], fixedCost: 25),
    ]
    return RoutingProblem(matrix: points(p), jobs: jobs, shipments: [shipment], vehicles: vehicles)
}

/// A seeded generator for the test's random instances (the solver has its own).
private struct SystemRandomNumberGeneratorSeeded {
    var state: UInt64
    init(_ seed: UInt64) { state = seed &* 6364136223846793005 &+ 1442695040888963407 }
    mutating func next(_ upTo: Double) -> Double {
        state = state &* 6364136223846793005 &+ 1442695040888963407
        return Double(state >> 11) / Double(1 << 53) * upTo
    }
}

@Suite("Route planning")
struct RoutingSolverTests {
    @Test("On small instances the plan is the optimum found by trying every order")
    func smallInstancesReachTheOptimum() throws {
        var compared = 0
        for seed in UInt64(1)...30 {
            let problem = randomProblem(seed: seed)
            guard let optimum = bruteForce(problem) else { continue }
            let solution = try RoutingSolver.solve(problem, options: RoutingOptions(seconds: nil, iterations: 3_000, seed: seed))
            #expect(solution.unassigned.isEmpty, "seed \(seed)")
            let cost = try #require(evaluate(problem, routes(of: solution, in: problem)), "seed \(seed): the plan breaks a rule")
            #expect(abs(cost - optimum) < 1e-6, "seed \(seed): \(cost) against the optimum \(optimum)")
            #expect(abs(solution.cost - cost) < 1e-6, "seed \(seed): the solver's own cost is wrong")
            compared += 1
        }
        #expect(compared >= 10, "too few random instances had a plan serving everything")
    }

    @Test("The same seed and iteration budget give the same plan")
    func deterministicForASeed() throws {
        let problem = SyntheticInstance.make(stops: 60, seed: 3)
        let options = RoutingOptions(seconds: nil, iterations: 400, seed: 9)
        let a = try RoutingSolver.solve(problem, options: options), b = try RoutingSolver.solve(problem, options: options)
        #expect(a.routes.map { $0.stops.map(\.id) } == b.routes.map { $0.stops.map(\.id) })
        #expect(a.cost == b.cost)
        // Two searches side by side: still the same for the same seed.
        var two = options; two.threads = 2
        let c = try RoutingSolver.solve(problem, options: two), d = try RoutingSolver.solve(problem, options: two)
        #expect(c.cost == d.cost && c.cost <= a.cost + 1e-9)
    }

    @Test("Vehicles first: the plan uses as few vehicles as the loads allow")
    func fleetMinimisation() throws {
        // 24 parcels of 5 around a depot, vans of 20: four stops a van, so six vans at least. Tight
        // windows spread over the day make a greedy plan open more.
        var p: [(Double, Double)] = [(50, 50)]
        var jobs: [Job] = []
        for i in 0..<24 {
            let angle = Double(i) * 2 * Double.pi / 24
            p.append((50 + 40 * cos(angle), 50 + 40 * sin(angle)))
            let open = Double((i * 7) % 24) * 20
            jobs.append(Job(id: "j\(i)", visit: Visit(location: i + 1, service: 5, window: TimeWindow(start: open, end: open + 150)),
                            amount: [5]))
        }
        var problem = RoutingProblem(matrix: points(p), jobs: jobs, vehicles: (0..<24).map {
            Vehicle(id: "v\($0)", start: 0, end: 0, shift: TimeWindow(start: 0, end: 1_000), capacity: [20], fixedCost: 10_000)
        })
        var options = RoutingOptions(seconds: nil, iterations: 4_000, seed: 2)
        options.fleetMinimisation = 0.5
        let solution = try RoutingSolver.solve(problem, options: options)
        #expect(solution.unassigned.isEmpty)
        #expect(solution.routes.count == 6)
        // Without a cost per vehicle, the shortest plan here takes seven vans; the fleet phase still
        // brings it to six, at some more distance.
        var free = problem
        free.vehicles = free.vehicles.map { var v = $0; v.fixedCost = 0; return v }
        let fewest = try RoutingSolver.solve(free, options: options)
        options.fleetMinimisation = 0
        let shortest = try RoutingSolver.solve(free, options: options)
        #expect(fewest.routes.count == 6 && shortest.routes.count > 6 && shortest.distance < fewest.distance)
        problem.vehicles = problem.vehicles.map { var v = $0; v.fixedCost = 0; return v }
        let cost = try #require(evaluate(problem, routes(of: solution, in: problem)))
        #expect(abs(cost - solution.distance) < 1e-6)
    }

    @Test("What cannot be served comes back with the reason")
    func impossibleRequestsAreExplained() throws {
        let m = points([(0, 0), (10, 0), (0, 10), (100, 0), (5, 5)])
        let problem = RoutingProblem(matrix: m, jobs: [
            Job(id: "fits", visit: Visit(location: 1, window: TimeWindow(start: 0, end: 100)), amount: [5]),
            Job(id: "too-heavy", visit: Visit(location: 2), amount: [50]),
            // 100 away, but its window closes at 50.
            Job(id: "too-late", visit: Visit(location: 3, window: TimeWindow(start: 0, end: 50)), amount: [1]),
            Job(id: "needs-a-fridge", visit: Visit(location: 4), amount: [1], skills: ["fridge"]),
            // Only 10 of capacity: with "fits" aboard, one of these two cannot come.
            Job(id: "a", visit: Visit(location: 4), amount: [4]),
            Job(id: "b", visit: Visit(location: 4), amount: [4]),
        ], shipments: [
            // Delivered before it can have been picked up.
            Shipment(id: "backwards", pickup: Visit(location: 3, window: TimeWindow(start: 100, end: 200)),
                     delivery: Visit(location: 1, window: TimeWindow(start: 0, end: 150)), amount: [1]),
        ], vehicles: [Vehicle(id: "van", start: 0, end: 0, shift: TimeWindow(start: 0, end: 1_000), capacity: [10])])
        let solution = try RoutingSolver.solve(problem, options: RoutingOptions(seconds: nil, iterations: 200))
        let reasons = Dictionary(uniqueKeysWithValues: solution.unassigned.map { ($0.id, $0.reason) })
        #expect(reasons["too-heavy"] == .capacity)
        #expect(reasons["too-late"] == .timeWindow)
        #expect(reasons["needs-a-fridge"] == .noVehicleWithSkills)
        #expect(reasons["backwards"] == .timeWindow)
        // 5 + 4 + 4 > 10: exactly one of the three stays behind for lack of room.
        #expect(["fits", "a", "b"].filter { reasons[$0] == .noRoom }.count == 1)
        #expect(["fits", "a", "b"].filter { reasons[$0] == nil }.count == 2)
        #expect(solution.unassigned.count == 5)
    }

    @Test("An optional stop is left out when it costs more than its penalty, and priorities decide who gets the last seat")
    func optionalJobsAndPriorities() throws {
        let m = points([(0, 0), (1, 0), (500, 0), (0, 1), (0, 2)])
        let problem = RoutingProblem(matrix: m, jobs: [
            Job(id: "near", visit: Visit(location: 1), amount: [1], unassignedPenalty: 100),
            Job(id: "far", visit: Visit(location: 2), amount: [1], unassignedPenalty: 100),
            Job(id: "low", visit: Visit(location: 3), amount: [5]),
            Job(id: "high", visit: Visit(location: 4), amount: [5], priority: 3),
        ], vehicles: [Vehicle(id: "van", start: 0, end: 0, capacity: [7])])
        let solution = try RoutingSolver.solve(problem, options: RoutingOptions(seconds: nil, iterations: 300))
        let reasons = Dictionary(uniqueKeysWithValues: solution.unassigned.map { ($0.id, $0.reason) })
        #expect(reasons == ["far": .notWorthIt, "low": .noRoom])
    }

    @Test("Each driver starts and ends at their own place, inside their shift, with their skills")
    func shiftsPlacesAndSkills() throws {
        let m = points([(0, 0), (100, 0), (10, 0), (90, 0), (95, 5)])
        let problem = RoutingProblem(matrix: m, jobs: [
            Job(id: "west", visit: Visit(location: 2)),
            Job(id: "east", visit: Visit(location: 3)),
            Job(id: "cold", visit: Visit(location: 4), skills: ["fridge"]),
        ], vehicles: [
            Vehicle(id: "anna", start: 0, end: 0, shift: TimeWindow(start: 0, end: 100)),
            Vehicle(id: "ben", start: 1, end: 1, shift: TimeWindow(start: 50, end: 200)),
            // The only one with a fridge, and room for one stop only.
            Vehicle(id: "cleo", start: 0, end: 1, shift: TimeWindow(start: 0, end: 300), skills: ["fridge"], fixedCost: 1_000,
                    maxStops: 1),
        ])
        let solution = try RoutingSolver.solve(problem, options: RoutingOptions(seconds: nil, iterations: 300))
        #expect(solution.unassigned.isEmpty)
        let byVehicle = Dictionary(uniqueKeysWithValues: solution.routes.map { ($0.vehicle, $0) })
        #expect(byVehicle["anna"]?.stops.map(\.id) == ["west"])
        #expect(byVehicle["cleo"]?.stops.map(\.id) == ["cold"])
        #expect(byVehicle["ben"]?.stops.map(\.id) == ["east"])
        #expect(byVehicle["ben"]?.departure == 50)
        for route in solution.routes {
            #expect(route.arrival <= problem.vehicles[route.vehicleIndex].shift.end)
            for stop in route.stops { #expect(stop.serviceStart >= stop.arrival && stop.departure >= stop.serviceStart) }
        }
    }

    @Test("Malformed input is refused with every field that is wrong")
    func malformedInputIsRefused() {
        let problem = RoutingProblem(matrix: TravelMatrix(count: 2, distances: [0, 1, 1], durations: [0, 1, 1, .nan]), jobs: [
            Job(id: "x", visit: Visit(location: 7, window: TimeWindow(start: 10, end: 5)), amount: [-1]),
            Job(id: "x", visit: Visit(location: 1)),
        ], vehicles: [Vehicle(id: "v", start: 3, end: 0, capacity: [1])])
        #expect {
            try RoutingSolver.solve(problem)
        } throws: { error in
            let fields = Set((error as? RoutingInputErrors)?.errors.map(\.field) ?? [])
            return fields.isSuperset(of: ["matrix.distances", "matrix.durations", "jobs[0].visit.location", "jobs[0].visit.window",
                                          "jobs[0].amount", "jobs[1].id", "vehicles[0].start"])
        }
    }

    @Test("A search under way gives its best plan so far and stops when cancelled")
    func anytimeAndCancellable() async throws {
        let problem = SyntheticInstance.make(stops: 200, seed: 5)
        let run = RoutingRun()
        let task = Task.detached { try RoutingSolver.solve(problem, options: RoutingOptions(seconds: 600), run: run) }
        let early = try #require(await run.firstPlan())
        #expect(early.unassigned.isEmpty)
        run.cancel()
        let final = try await task.value
        #expect(final.cost <= early.cost)
        #expect(final.unassigned.isEmpty)
    }

    @Test("Benchmark files are read as their authors meant: Solomon's customers, Li & Lim's pairs")
    func benchmarkFormats() throws {
        let solomon = """
        C101

        VEHICLE
        NUMBER     CAPACITY
          25         200

        CUSTOMER
        CUST NO.  XCOORD.   YCOORD.    DEMAND   READY TIME  DUE DATE   SERVICE   TIME

            0      40         50          0          0       1236          0
            1      45         68         10        912        967         90
            2      45         70         30        825        870         90
        """
        let p = try BenchmarkFormat.solomon.parse(solomon)
        #expect(p.vehicles.count == 25 && p.vehicles[0].capacity == [200] && p.vehicles[0].shift == TimeWindow(start: 0, end: 1236))
        #expect(p.jobs.map(\.id) == ["1", "2"] && p.jobs[1].amount == [30] && p.jobs[1].visit.window == TimeWindow(start: 825, end: 870))
        let lilim = """
        25\t200\t1
        0\t40\t50\t0\t0\t1236\t0\t0\t0
        1\t45\t68\t-10\t912\t967\t90\t2\t0
        2\t45\t70\t10\t825\t870\t90\t0\t1
        """
        let q = try BenchmarkFormat.liLim.parse(lilim)
        #expect(q.shipments.count == 1 && q.shipments[0].pickup.location == 2 && q.shipments[0].delivery.location == 1)
        #expect(throws: BenchmarkFormat.ParseError.self) { try BenchmarkFormat.liLim.parse("25 200 1\n0 1 1 0 0 9 0 0 0\n1 2 2 5 0 9 0 0 3\n") }
        let solution = try RoutingSolver.solve(q, options: RoutingOptions(seconds: nil, iterations: 100))
        #expect(solution.unassigned.isEmpty && solution.routes.count == 1)
    }
}
