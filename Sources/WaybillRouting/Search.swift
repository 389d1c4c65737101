/// A small, fast, seedable generator (xoshiro256**), so a search is the same for the same seed.
struct Random {
    private var s0: UInt64, s1: UInt64, s2: UInt64, s3: UInt64
    init(seed: UInt64) {
        var x = seed &+ 0x9E37_79B9_7F4A_7C15
        func next() -> UInt64 {
            x = x &+ 0x9E37_79B9_7F4A_7C15
            var z = x
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        s0 = next(); s1 = next(); s2 = next(); s3 = next()
    }
    @inline(__always) mutating func next() -> UInt64 {
        let result = ((s1 &* 5) << 7 | (s1 &* 5) >> 57) &* 9
        let t = s1 << 17
        s2 ^= s0; s3 ^= s1; s1 ^= s2; s0 ^= s3; s2 ^= t
        s3 = (s3 << 45) | (s3 >> 19)
        return result
    }
    /// Uniform in [0, 1).
    @inline(__always) mutating func unit() -> Double { Double(next() >> 11) * 0x1.0p-53 }
    /// Uniform in 0..<n (n > 0).
    @inline(__always) mutating func below(_ n: Int) -> Int { Int(truncatingIfNeeded: next() % UInt64(n)) }
}

/// One vehicle's route with what insertion checks need in O(1): service start times, the latest start
/// that keeps the rest on time, and the load after each position (position 0 is the start, 1...n the
/// stops, n+1 the end).
struct Route {
    var vehicle: Int
    var nodes: [Int] = []
    var start: [Double] = []
    var latest: [Double] = []
    var load: [Int] = []      // (n + 1) * dims: after the start and after each stop
    var prefixMax: [Int] = [] // max load over positions 0...i
    var suffixMax: [Int] = [] // max load over positions i...n
    var distance: Double = 0

    init(vehicle: Int) { self.vehicle = vehicle }
}

struct Plan {
    var routes: [Route]
    var routeOf: [Int]       // per task, -1 when not planned
    var positionOf: [Int]    // per task, 1-based position in its route
    var unassigned: [Int]    // requests
    var cost: Double = 0

    mutating func copyRoutes(_ rs: [Int], from other: Plan) {
        for r in rs {
            routes[r] = other.routes[r]
            for (i, t) in routes[r].nodes.enumerated() { routeOf[t] = r; positionOf[t] = i + 1 }
        }
        unassigned = other.unassigned
        cost = other.cost
    }

    /// Tasks of requests left out point nowhere (a copy of routes may have dropped them).
    mutating func clearUnassigned(_ inst: Instance) {
        for rq in unassigned {
            let f = inst.firstTask[rq]
            routeOf[f] = -1
            if inst.requestKind[rq] == .pair { routeOf[f + 1] = -1 }
        }
    }
}

/// Slack induction by string removals (Christiaens & Vanden Berghe, 2020) under simulated annealing:
/// remove strings of nearby stops from a few routes, put them back in the best places (with "blinks"
/// that skip a place now and then), accept by the annealing rule.
struct Search {
    let inst: Instance
    var rng: Random
    var plan: Plan
    // Parameters of the ruin.
    var averageRemoved = 10.0
    var maxString = 10.0
    var blinkRate = 0.01
    /// At most this many routes in use (the fleet-minimisation phase lowers it).
    var maxRoutes = Int.max

    init(_ inst: Instance, seed: UInt64) {
        self.inst = inst
        rng = Random(seed: seed)
        plan = Plan(routes: (0..<inst.vehicleCount).map { Route(vehicle: $0) },
                    routeOf: .init(repeating: -1, count: inst.taskCount),
                    positionOf: .init(repeating: 0, count: inst.taskCount),
                    unassigned: [])
        for r in 0..<plan.routes.count { update(route: r) }
    }

    // MARK: route bookkeeping

    @inline(__always) func locAt(_ route: Route, _ pos: Int) -> Int {
        pos == 0 ? inst.startLoc[route.vehicle] : (pos > route.nodes.count ? inst.endLoc[route.vehicle] : inst.loc[route.nodes[pos - 1]])
    }

    mutating func update(route r: Int) {
        let inst = self.inst
        let D = inst.dims
        let v = plan.routes[r].vehicle
        let nodes = plan.routes[r].nodes
        let n = nodes.count
        var start = [Double](repeating: 0, count: n + 2)
        var latest = [Double](repeating: 0, count: n + 2)
        var load = [Int](repeating: 0, count: (n + 1) * D)
        var distance = 0.0
        start[0] = inst.shiftStart[v]
        var at = inst.startLoc[v]
        var now = inst.shiftStart[v]
        for (i, task) in nodes.enumerated() {
            let l = inst.loc[task]
            distance += inst.d(at, l)
            now = max(inst.early[task], now + inst.t(at, l))
            start[i + 1] = now
            now += inst.service[task]
            at = l
            plan.routeOf[task] = r
            plan.positionOf[task] = i + 1
        }
        if n > 0 {
            distance += inst.d(at, inst.endLoc[v])
            start[n + 1] = now + inst.t(at, inst.endLoc[v])
        } else {
            start[1] = inst.shiftStart[v]
        }
        latest[n + 1] = inst.shiftEnd[v]
        var next = inst.endLoc[v]
        if n > 0 {
            for i in stride(from: n, through: 1, by: -1) {
                let task = nodes[i - 1]
                let l = inst.loc[task]
                latest[i] = min(inst.late[task], latest[i + 1] - inst.service[task] - inst.t(l, next))
                next = l
            }
        }
        latest[0] = latest[min(1, n + 1)] - inst.t(inst.startLoc[v], next)
        if D > 0 {
            // Deliveries of single jobs are on board from the start.
            for task in nodes where inst.partner[task] < 0 {
                let rq = inst.requestOf[task]
                if inst.requestKind[rq] == .delivery { for k in 0..<D { load[k] += inst.amount[rq * D + k] } }
            }
            for (i, task) in nodes.enumerated() {
                let rq = inst.requestOf[task]
                let sign: Int
                switch inst.requestKind[rq] {
                case .delivery: sign = -1
                case .pickup: sign = 1
                case .pair: sign = inst.partner[task] > task ? 1 : -1
                }
                for k in 0..<D { load[(i + 1) * D + k] = load[i * D + k] + sign * inst.amount[rq * D + k] }
            }
            var pre = load, suf = load
            if n > 0 {
                for i in 1...n { for k in 0..<D { pre[i * D + k] = max(pre[(i - 1) * D + k], load[i * D + k]) } }
                for i in stride(from: n - 1, through: 0, by: -1) {
                    for k in 0..<D { suf[i * D + k] = max(suf[(i + 1) * D + k], load[i * D + k]) }
                }
            }
            plan.routes[r].prefixMax = pre
            plan.routes[r].suffixMax = suf
        }
        plan.routes[r].start = start
        plan.routes[r].latest = latest
        plan.routes[r].load = load
        plan.routes[r].distance = distance
    }

    func routeCost(_ route: Route) -> Double {
        route.nodes.isEmpty ? 0 : route.distance + inst.fixedCost[route.vehicle]
    }

    mutating func recomputeCost() {
        var c = 0.0
        for route in plan.routes { c += routeCost(route) }
        for rq in plan.unassigned { c += inst.penalty[rq] }
        plan.cost = c
    }

    // MARK: insertion

    struct Insertion {
        var cost = Double.infinity
        var route = -1
        var first = 0   // insert after this position
        var second = 0  // for a pair: the delivery after this position of the original route (>= first)
    }

    /// The cheapest feasible place for a request in one route, skipping each place with the blink rate.
    @inline(__always)
    mutating func bestInsertion(of rq: Int, into r: Int, best: inout Insertion) {
        let inst = self.inst
        let route = plan.routes[r]
        let v = route.vehicle
        let n = route.nodes.count
        let D = inst.dims
        let kind = inst.requestKind[rq]
        if n + (kind == .pair ? 2 : 1) > inst.maxStops[v] { return }
        let emptyExtra = n == 0 ? inst.fixedCost[v] + inst.d(inst.startLoc[v], inst.endLoc[v]) : 0
        let u = inst.firstTask[rq]
        let lu = inst.loc[u]
        let eu = inst.early[u], lateU = inst.late[u], su = inst.service[u]
        let blink = blinkRate

        // Capacity of a single job is checked per place from the prefix or suffix maxima.
        switch kind {
        case .delivery, .pickup:
            for i in 0...n {
                if blink > 0 && rng.unit() < blink { continue }
                let a = locAt(route, i), b = locAt(route, i + 1)
                let delta = inst.d(a, lu) + inst.d(lu, b) - inst.d(a, b) + emptyExtra
                if delta >= best.cost { continue }
                let arrU = route.start[i] + (i == 0 ? 0 : inst.service[route.nodes[i - 1]]) + inst.t(a, lu)
                let sU = max(eu, arrU)
                if sU > lateU { continue }
                if sU + su + inst.t(lu, b) > route.latest[i + 1] { continue }
                if D > 0 {
                    var fits = true
                    for k in 0..<D {
                        let cap = inst.capacity[v * D + k], amt = inst.amount[rq * D + k]
                        let peak = kind == .delivery ? route.prefixMax[i * D + k] : route.suffixMax[i * D + k]
                        if peak + amt > cap { fits = false; break }
                    }
                    if !fits { continue }
                }
                best = Insertion(cost: delta, route: r, first: i, second: i)
            }
        case .pair:
            let dTask = u + 1
            let ld = inst.loc[dTask]
            let ed = inst.early[dTask], lateD = inst.late[dTask], sd = inst.service[dTask]
            for i in 0...n {
                let a = locAt(route, i), b = locAt(route, i + 1)
                let arrP = route.start[i] + (i == 0 ? 0 : inst.service[route.nodes[i - 1]]) + inst.t(a, lu)
                let sP = max(eu, arrP)
                if sP > lateU { continue }
                var fits = true
                for k in 0..<D where route.load[i * D + k] + inst.amount[rq * D + k] > inst.capacity[v * D + k] { fits = false }
                if !fits { continue }
                let dP = inst.d(a, lu) + inst.d(lu, b) - inst.d(a, b) + emptyExtra
                if dP >= best.cost { continue }
                // Delivery right after the pickup.
                if !(blink > 0 && rng.unit() < blink) {
                    let delta = inst.d(a, lu) + inst.d(lu, ld) + inst.d(ld, b) - inst.d(a, b) + emptyExtra
                    if delta < best.cost {
                        let sD = max(ed, sP + su + inst.t(lu, ld))
                        if sD <= lateD && sD + sd + inst.t(ld, b) <= route.latest[i + 1] {
                            best = Insertion(cost: delta, route: r, first: i, second: i)
                        }
                    }
                }
                // Delivery later: push the times forward stop by stop.
                var arrival = sP + su + inst.t(lu, b)
                if arrival > route.latest[i + 1] || i == n { continue }
                var k = i + 1
                while k <= n {
                    let task = route.nodes[k - 1]
                    let s = max(inst.early[task], arrival)
                    if s > inst.late[task] { break }
                    var ok = true
                    for q in 0..<D where route.load[k * D + q] + inst.amount[rq * D + q] > inst.capacity[v * D + q] { ok = false }
                    if !ok { break }
                    let lk = inst.loc[task], ln = locAt(route, k + 1)
                    if !(blink > 0 && rng.unit() < blink) {
                        let delta = dP + inst.d(lk, ld) + inst.d(ld, ln) - inst.d(lk, ln)
                        if delta < best.cost {
                            let sD = max(ed, s + inst.service[task] + inst.t(lk, ld))
                            if sD <= lateD && sD + sd + inst.t(ld, ln) <= route.latest[k + 1] {
                                best = Insertion(cost: delta, route: r, first: i, second: k)
                            }
                        }
                    }
                    arrival = s + inst.service[task] + inst.t(lk, ln)
                    if s == route.start[k] { /* unchanged from here on: still scan for later places */ }
                    k += 1
                }
            }
        }
    }

    mutating func insert(_ rq: Int, _ ins: Insertion) {
        let u = inst.firstTask[rq]
        if inst.requestKind[rq] == .pair {
            plan.routes[ins.route].nodes.insert(u + 1, at: ins.second)
            plan.routes[ins.route].nodes.insert(u, at: ins.first)
        } else {
            plan.routes[ins.route].nodes.insert(u, at: ins.first)
        }
        update(route: ins.route)
    }

    /// Puts requests back, each in its cheapest place over all routes (one empty route per vehicle type).
    mutating func recreate(_ requests: [Int], touched: inout [Bool]) {
        var order = requests
        // SISR's orders: random, largest first, farthest from the start, nearest to the start.
        let pick = rng.below(11)
        if pick < 4 {
            for i in stride(from: order.count - 1, to: 0, by: -1) { order.swapAt(i, rng.below(i + 1)) }
        } else {
            for i in stride(from: order.count - 1, to: 0, by: -1) { order.swapAt(i, rng.below(i + 1)) }
            let depot = inst.startLoc[0]
            let inst = self.inst
            if pick < 8 {
                order.sort { inst.size[$0] > inst.size[$1] }
            } else if pick < 10 {
                order.sort { inst.d(depot, inst.loc[inst.firstTask[$0]]) > inst.d(depot, inst.loc[inst.firstTask[$1]]) }
            } else {
                order.sort { inst.d(depot, inst.loc[inst.firstTask[$0]]) < inst.d(depot, inst.loc[inst.firstTask[$1]]) }
            }
        }
        var seenType = [Bool](repeating: false, count: inst.vehicleCount)
        let V = inst.vehicleCount
        var used = 0
        for route in plan.routes where !route.nodes.isEmpty { used += 1 }
        for rq in order {
            var best = Insertion()
            for i in 0..<V { seenType[i] = false }
            for r in 0..<plan.routes.count where inst.compatible[rq * V + plan.routes[r].vehicle] {
                if plan.routes[r].nodes.isEmpty {
                    if used >= maxRoutes { continue }
                    let type = inst.vehicleType[plan.routes[r].vehicle]
                    if seenType[type] { continue }
                    seenType[type] = true
                }
                bestInsertion(of: rq, into: r, best: &best)
            }
            if best.route >= 0 && (!inst.optional[rq] || best.cost < inst.penalty[rq]) {
                if plan.routes[best.route].nodes.isEmpty { used += 1 }
                insert(rq, best)
                touched[best.route] = true
            } else {
                plan.unassigned.append(rq)
            }
        }
    }

    // MARK: ruin

    /// Removes strings of consecutive stops from routes near a random stop; returns the requests removed.
    mutating func ruin(touched: inout [Bool]) -> [Int] {
        let inst = self.inst
        var used = 0, planned = 0
        for route in plan.routes where !route.nodes.isEmpty { used += 1; planned += route.nodes.count }
        if used == 0 { return [] }
        let lsMax = min(maxString, Double(planned) / Double(used))
        let ksMax = 4 * averageRemoved / (1 + lsMax) - 1
        let ks = Int(rng.unit() * ksMax) + 1
        var seed = rng.below(inst.taskCount)
        var guardCount = 0
        while plan.routeOf[seed] < 0 && guardCount < 4 * inst.taskCount { seed = rng.below(inst.taskCount); guardCount += 1 }
        if plan.routeOf[seed] < 0 { return [] }
        var removedTasks: [Int] = []
        var ruined = 0
        var routeRuined = [Bool](repeating: false, count: plan.routes.count)
        func visit(_ c: Int, _ s: inout Search) {
            let r = s.plan.routeOf[c]
            if r < 0 || routeRuined[r] { return }
            routeRuined[r] = true
            ruined += 1
            let nodes = s.plan.routes[r].nodes
            let len = nodes.count
            let lMax = min(Double(len), lsMax)
            let l = min(len, Int(s.rng.unit() * lMax) + 1)
            let pos = s.plan.positionOf[c] - 1
            var remove: [Int] = []
            if l == len || s.rng.unit() < 0.5 {
                // A string of l stops containing c.
                let lo = max(0, pos - l + 1), hi = min(pos, len - l)
                let from = lo + s.rng.below(hi - lo + 1)
                remove = Array(nodes[from..<(from + l)])
            } else {
                // A string of l + m stops containing c, keeping m consecutive stops inside it.
                var m = 1
                while l + m < len && s.rng.unit() >= 0.01 { m += 1 }
                let total = l + m
                let lo = max(0, pos - total + 1), hi = min(pos, len - total)
                let from = lo + s.rng.below(hi - lo + 1)
                let keepFrom = from + s.rng.below(l + 1)
                for i in from..<(from + total) where i < keepFrom || i >= keepFrom + m { remove.append(nodes[i]) }
            }
            removedTasks += remove
            touched[r] = true
        }
        visit(seed, &self)
        for c in inst.neighbours[seed] where ruined < ks { visit(c, &self) }
        // Whole requests leave: a pair's partner goes with it, from whichever route holds it.
        var requests: [Int] = []
        var drop = [Bool](repeating: false, count: inst.taskCount)
        for t in removedTasks {
            let rq = inst.requestOf[t]
            let f = inst.firstTask[rq]
            if drop[f] { continue }
            drop[f] = true
            if inst.requestKind[rq] == .pair {
                drop[f + 1] = true
                touched[plan.routeOf[f + 1]] = true
                touched[plan.routeOf[f]] = true
            }
            requests.append(rq)
        }
        for r in 0..<plan.routes.count where touched[r] {
            plan.routes[r].nodes.removeAll { drop[$0] }
            update(route: r)
        }
        for (t, d) in drop.enumerated() where d { plan.routeOf[t] = -1 }
        return requests
    }

    /// One step of the search: ruin, then recreate what was removed and what was out before. `touched`
    /// and `touchedList` come back naming the routes changed (what a rejected step must restore).
    mutating func ruinAndRecreate(touched: inout [Bool], touchedList: inout [Int]) {
        for i in 0..<touched.count { touched[i] = false }
        var requests = ruin(touched: &touched)
        requests += plan.unassigned
        plan.unassigned.removeAll(keepingCapacity: true)
        recreate(requests, touched: &touched)
        plan.clearUnassigned(inst)
        touchedList.removeAll(keepingCapacity: true)
        for (r, t) in touched.enumerated() where t { touchedList.append(r) }
    }

    /// Takes the route with the fewest stops out of the plan: its requests become unassigned.
    mutating func dropSmallestRoute() -> Int? {
        var smallest = -1
        for (r, route) in plan.routes.enumerated() where !route.nodes.isEmpty {
            if smallest < 0 || route.nodes.count < plan.routes[smallest].nodes.count { smallest = r }
        }
        guard smallest >= 0 else { return nil }
        for t in plan.routes[smallest].nodes where inst.partner[t] < 0 || inst.partner[t] > t {
            plan.unassigned.append(inst.requestOf[t])
        }
        for t in plan.routes[smallest].nodes { plan.routeOf[t] = -1 }
        plan.routes[smallest].nodes.removeAll()
        update(route: smallest)
        return smallest
    }
}
