import Foundation

public struct RoutingOptions: Sendable {
    /// Stop after this long (the usual budget). With only `iterations`, the search is the same for the
    /// same seed on any machine.
    public var seconds: Double?
    public var iterations: Int?
    public var seed: UInt64
    /// Independent searches run side by side (one per core asked); the best plan wins.
    public var threads: Int
    /// Annealing temperatures, as multiples of the average edge of the first plan.
    public var startTemperature: Double
    public var endTemperature: Double
    /// The share of the budget spent first on using fewer vehicles (0: none). Vehicles first is the
    /// benchmarks' second convention, and what a fleet that pays per driver wants.
    public var fleetMinimisation: Double = 0

    public init(seconds: Double? = 2, iterations: Int? = nil, seed: UInt64 = 1, threads: Int = 1,
                startTemperature: Double = 10, endTemperature: Double = 0.1) {
        self.seconds = seconds; self.iterations = iterations; self.seed = seed; self.threads = threads
        self.startTemperature = startTemperature; self.endTemperature = endTemperature
    }
}

/// A search under way: stop it early, and read the best plan found so far while it runs.
public final class RoutingRun: @unchecked Sendable {
    private let lock = NSLock()
    private var cancelled = false
    private var latest: RoutingSolution?

    public init() {}

    private var ended = false
    private var waiting: [CheckedContinuation<RoutingSolution?, Never>] = []

    public func cancel() { lock.lock(); cancelled = true; lock.unlock() }
    public var isCancelled: Bool { lock.lock(); defer { lock.unlock() }; return cancelled }
    /// The best plan found so far by any of the searches (nil before the first).
    public var bestSoFar: RoutingSolution? { lock.lock(); defer { lock.unlock() }; return latest }

    /// The first plan as soon as a search has one (a screen can show it while the search goes on);
    /// nil when the search ended without any (its input was refused).
    public func firstPlan() async -> RoutingSolution? {
        await withCheckedContinuation { (continuation: CheckedContinuation<RoutingSolution?, Never>) in
            lock.lock()
            if latest != nil || ended {
                let now = latest
                lock.unlock()
                continuation.resume(returning: now)
                return
            }
            waiting.append(continuation)
            lock.unlock()
        }
    }

    func offer(_ solution: RoutingSolution) {
        lock.lock()
        if let latest, latest.cost <= solution.cost { lock.unlock(); return }
        latest = solution
        let woken = waiting
        waiting = []
        lock.unlock()
        for waiter in woken { waiter.resume(returning: solution) }
    }

    /// The search returned or threw: nobody waits for a first plan any more.
    func end() {
        lock.lock()
        ended = true
        let woken = waiting, now = latest
        waiting = []
        lock.unlock()
        for waiter in woken { waiter.resume(returning: now) }
    }
}

public enum RoutingSolver {
    /// Plans routes. Throws `RoutingInputErrors` when the problem is malformed; requests that cannot be
    /// served come back in `unassigned` with the reason.
    public static func solve(_ problem: RoutingProblem, options: RoutingOptions = .init(),
                             run: RoutingRun? = nil) throws -> RoutingSolution {
        defer { run?.end() }
        let errors = problem.validationErrors()
        if !errors.isEmpty { throw RoutingInputErrors(errors: errors) }
        let inst = Instance(problem)
        let threads = max(1, min(options.threads, 64))
        let started = DispatchTime.now().uptimeNanoseconds
        let results = ResultBox(count: threads)
        DispatchQueue.concurrentPerform(iterations: threads) { i in
            let outcome = chain(inst, options: options, seed: options.seed &+ UInt64(i), started: started, run: run)
            results.set(i, outcome)
        }
        let outcomes = results.values.compactMap { $0 }
        var best = outcomes[0]
        for o in outcomes.dropFirst() where o.plan.cost < best.plan.cost { best = o }
        let iterations = outcomes.reduce(0) { $0 + $1.iterations }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
        let solution = export(inst, best.plan, iterations: iterations, seconds: seconds)
        run?.offer(solution)
        return solution
    }

    struct Outcome { var plan: Plan; var iterations: Int }

    final class ResultBox: @unchecked Sendable {
        private let lock = NSLock()
        private(set) var values: [Outcome?]
        init(count: Int) { values = .init(repeating: nil, count: count) }
        func set(_ i: Int, _ o: Outcome) { lock.lock(); values[i] = o; lock.unlock() }
    }

    static func chain(_ inst: Instance, options: RoutingOptions, seed: UInt64, started: UInt64,
                      run: RoutingRun?) -> Outcome {
        var search = Search(inst, seed: seed)
        var touched = [Bool](repeating: false, count: inst.vehicleCount)
        var servable: [Int] = []
        for rq in 0..<inst.requestCount {
            if inst.aloneReason(rq) == nil { servable.append(rq) }
        }
        // The first plan: everything inserted greedily, without blinks.
        let blink = search.blinkRate
        search.blinkRate = 0
        search.recreate(servable, touched: &touched)
        search.blinkRate = blink
        search.plan.clearUnassigned(inst)
        search.recomputeCost()
        let budget = options.seconds.map { UInt64(max(0, $0) * 1e9) }
        let maxIterations = options.iterations ?? (budget == nil ? 10_000 : Int.max)
        var iteration = 0
        var touchedList: [Int] = []
        touchedList.reserveCapacity(inst.vehicleCount)

        // Fleet minimisation (SISR, section 6): take a route away, then ruin and recreate with no more
        // routes than are left, accepting a plan with fewer requests out or out less often before; when
        // everything fits again, that is the new best fleet and another route goes.
        let fleetShare = min(max(options.fleetMinimisation, 0), 1)
        let fleetEnd = budget.map { UInt64(Double($0) * fleetShare) } ?? 0
        let fleetIterations = budget == nil ? Int(Double(maxIterations) * fleetShare) : Int.max
        if fleetShare > 0 && search.plan.unassigned.isEmpty && !servable.isEmpty {
            var fleetBest = search.plan
            var absences = [Int](repeating: 0, count: inst.requestCount)
            func absent(_ plan: Plan) -> (count: Int, weight: Int) {
                (plan.unassigned.count, plan.unassigned.reduce(0) { $0 + absences[$1] })
            }
            _ = search.dropSmallestRoute()
            search.maxRoutes = search.plan.routes.filter { !$0.nodes.isEmpty }.count
            var current = search.plan
            while iteration < fleetIterations && iteration < maxIterations {
                if iteration & 63 == 0 {
                    if let budget, DispatchTime.now().uptimeNanoseconds - started >= min(fleetEnd, budget) { break }
                    if run?.isCancelled == true { break }
                }
                iteration += 1
                search.ruinAndRecreate(touched: &touched, touchedList: &touchedList)
                let now = absent(search.plan), before = absent(current)
                if now.count < before.count || now.weight < before.weight {
                    current.copyRoutes(touchedList, from: search.plan)
                    current.clearUnassigned(inst)
                } else {
                    search.plan.copyRoutes(touchedList, from: current)
                    search.plan.clearUnassigned(inst)
                }
                for rq in search.plan.unassigned { absences[rq] += 1 }
                if search.plan.unassigned.isEmpty {
                    fleetBest = search.plan
                    guard search.maxRoutes > 1 else { break }
                    _ = search.dropSmallestRoute()
                    search.maxRoutes -= 1
                    current = search.plan
                }
            }
            search.plan = fleetBest
            search.maxRoutes = fleetBest.routes.filter { !$0.nodes.isEmpty }.count
            search.recomputeCost()
        }
        let annealFrom = iteration
        let annealStart = budget == nil ? started : DispatchTime.now().uptimeNanoseconds
        var current = search.plan
        var best = search.plan

        var edges = 0, distance = 0.0
        for route in search.plan.routes where !route.nodes.isEmpty { edges += route.nodes.count + 1; distance += route.distance }
        let averageEdge = edges > 0 ? max(distance / Double(edges), 1e-9) : 1
        let t0 = options.startTemperature * averageEdge, tf = options.endTemperature * averageEdge
        var progress = 0.0
        var lastOffer: UInt64 = 0
        if servable.isEmpty { return Outcome(plan: best, iterations: 0) }
        while iteration < maxIterations {
            if iteration & 63 == 0 {
                let now = DispatchTime.now().uptimeNanoseconds
                if let budget {
                    let elapsed = now - started
                    if elapsed >= budget { break }
                    let span = budget - min(budget, annealStart - started)
                    progress = span == 0 ? 1 : Double(now - annealStart) / Double(span)
                }
                if let run {
                    if run.isCancelled { break }
                    if now - lastOffer > 100_000_000 {
                        lastOffer = now
                        run.offer(export(inst, best, iterations: iteration, seconds: Double(now - started) / 1e9))
                    }
                }
            }
            if budget == nil { progress = Double(iteration - annealFrom) / Double(max(1, maxIterations - annealFrom)) }
            iteration += 1
            search.ruinAndRecreate(touched: &touched, touchedList: &touchedList)
            search.recomputeCost()
            let temperature = t0 * pow(tf / t0, progress)
            if search.plan.cost < current.cost - temperature * log(search.rng.unit() + 1e-300) {
                current.copyRoutes(touchedList, from: search.plan)
                current.clearUnassigned(inst)
                if search.plan.cost < best.cost - 1e-9 { best = search.plan }
            } else {
                search.plan.copyRoutes(touchedList, from: current)
                search.plan.clearUnassigned(inst)
            }
        }
        return Outcome(plan: best, iterations: iteration)
    }

    static func export(_ inst: Instance, _ plan: Plan, iterations: Int, seconds: Double) -> RoutingSolution {
        let D = inst.dims
        var routes: [RoutingSolution.Route] = []
        var distance = 0.0
        for route in plan.routes where !route.nodes.isEmpty {
            let v = route.vehicle
            var stops: [RoutingSolution.Stop] = []
            var at = inst.startLoc[v]
            var now = inst.shiftStart[v]
            for (i, task) in route.nodes.enumerated() {
                let rq = inst.requestOf[task]
                let arrival = now + inst.t(at, inst.loc[task])
                let begin = max(arrival, inst.early[task])
                now = begin + inst.service[task]
                at = inst.loc[task]
                let kind: RoutingSolution.Stop.Kind
                switch inst.requestKind[rq] {
                case .delivery: kind = .delivery
                case .pickup: kind = .pickup
                case .pair: kind = inst.partner[task] > task ? .pickup : .delivery
                }
                stops.append(.init(id: inst.requestID[rq], kind: kind, location: inst.loc[task], arrival: arrival,
                                   serviceStart: begin, departure: now,
                                   load: (0..<D).map { route.load[(i + 1) * D + $0] }))
            }
            let arrival = now + inst.t(at, inst.endLoc[v])
            distance += route.distance
            routes.append(.init(vehicle: inst.problem.vehicles[v].id, vehicleIndex: v, departure: inst.shiftStart[v],
                                stops: stops, arrival: arrival, distance: route.distance,
                                duration: arrival - inst.shiftStart[v]))
        }
        // Why each left-out request is out: alone it cannot be served, or it could but not beside the rest.
        var unassigned: [RoutingSolution.Unassigned] = []
        var planned = [Bool](repeating: false, count: inst.requestCount)
        for route in plan.routes { for t in route.nodes { planned[inst.requestOf[t]] = true } }
        var probe = Search(inst, seed: 0)
        probe.plan = plan
        probe.blinkRate = 0
        for rq in 0..<inst.requestCount where !planned[rq] {
            var reason = inst.aloneReason(rq) ?? .noRoom
            if reason == .noRoom && inst.optional[rq] {
                var best = Search.Insertion()
                for r in 0..<plan.routes.count where inst.compatible[rq * inst.vehicleCount + plan.routes[r].vehicle] {
                    probe.bestInsertion(of: rq, into: r, best: &best)
                }
                if best.route >= 0 { reason = .notWorthIt }
            }
            unassigned.append(.init(id: inst.requestID[rq], reason: reason))
        }
        var cost = distance
        for route in plan.routes where !route.nodes.isEmpty { cost += inst.fixedCost[route.vehicle] }
        for rq in 0..<inst.requestCount where !planned[rq] { cost += inst.penalty[rq] }
        return RoutingSolution(routes: routes, unassigned: unassigned, cost: cost, distance: distance,
                               iterations: iterations, seconds: seconds)
    }
}

public struct RoutingInputErrors: Error, Sendable, CustomStringConvertible {
    public var errors: [RoutingInputError]
    public var description: String { errors.map(\.description).joined(separator: "; ") }
}
