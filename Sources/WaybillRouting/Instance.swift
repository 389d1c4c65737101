/// The problem flattened for the search: every job is one task, every shipment two (pickup, delivery);
/// a "request" is what is assigned or left out as a whole.
struct Instance: Sendable {
    enum RequestKind: UInt8 { case delivery, pickup, pair }

    let problem: RoutingProblem
    let locationCount: Int
    let dist: [Double]
    let time: [Double]
    let dims: Int

    // Per task.
    let taskCount: Int
    let loc: [Int]
    let service: [Double]
    let early: [Double]
    let late: [Double]
    let requestOf: [Int]
    /// The other task of a shipment, or -1.
    let partner: [Int]

    // Per request.
    let requestCount: Int
    let requestKind: [RequestKind]
    /// First task (the pickup of a pair).
    let firstTask: [Int]
    let amount: [Int]       // requestCount * dims
    let penalty: [Double]
    let optional: [Bool]
    let requestID: [String]
    let size: [Int]         // sum of amounts, for ordering

    // Per vehicle.
    let vehicleCount: Int
    let startLoc: [Int]
    let endLoc: [Int]
    let shiftStart: [Double]
    let shiftEnd: [Double]
    let capacity: [Int]     // vehicleCount * dims
    let fixedCost: [Double]
    let maxStops: [Int]
    let vehicleType: [Int]
    /// compatible[request * vehicleCount + vehicle]: the vehicle has every skill the request needs.
    let compatible: [Bool]
    /// The nearest other tasks of each task, nearest first.
    let neighbours: [[Int]]
    let maxDistance: Double

    init(_ problem: RoutingProblem, neighbourCount: Int = 100) {
        self.problem = problem
        let dims = problem.dimensions
        self.dims = dims
        let needsVirtual = problem.vehicles.contains { $0.start == nil || $0.end == nil }
        let n0 = problem.matrix.count
        let n = needsVirtual ? n0 + 1 : n0
        locationCount = n
        if needsVirtual {
            var d = [Double](repeating: 0, count: n * n), t = d
            for i in 0..<n0 {
                for j in 0..<n0 {
                    d[i * n + j] = problem.matrix.distances[i * n0 + j]
                    t[i * n + j] = problem.matrix.durations[i * n0 + j]
                }
            }
            dist = d; time = t
        } else {
            dist = problem.matrix.distances; time = problem.matrix.durations
        }
        maxDistance = dist.max() ?? 0

        var loc: [Int] = [], service: [Double] = [], early: [Double] = [], late: [Double] = []
        var requestOf: [Int] = [], partner: [Int] = []
        var kind: [RequestKind] = [], first: [Int] = [], amount: [Int] = [], ids: [String] = []
        var penalty: [Double] = [], optional: [Bool] = [], size: [Int] = [], skills: [Set<String>] = []
        func add(_ v: Visit, request: Int, partnerTask: Int) {
            loc.append(v.location); service.append(v.service)
            early.append(v.window.start); late.append(v.window.end)
            requestOf.append(request); partner.append(partnerTask)
        }
        func amounts(_ a: [Int]) {
            for k in 0..<dims { amount.append(k < a.count ? a[k] : 0) }
            size.append(a.reduce(0) { $0 &+ $1 })
        }
        for job in problem.jobs {
            let r = kind.count
            first.append(loc.count)
            add(job.visit, request: r, partnerTask: -1)
            kind.append(job.kind == .delivery ? .delivery : .pickup)
            amounts(job.amount); ids.append(job.id); skills.append(job.skills)
            penalty.append(job.unassignedPenalty ?? -Double(job.priority)); optional.append(job.unassignedPenalty != nil)
        }
        for shipment in problem.shipments {
            let r = kind.count
            let p = loc.count
            first.append(p)
            add(shipment.pickup, request: r, partnerTask: p + 1)
            add(shipment.delivery, request: r, partnerTask: p)
            kind.append(.pair)
            amounts(shipment.amount); ids.append(shipment.id); skills.append(shipment.skills)
            penalty.append(shipment.unassignedPenalty ?? -Double(shipment.priority))
            optional.append(shipment.unassignedPenalty != nil)
        }
        taskCount = loc.count
        requestCount = kind.count

        let V = problem.vehicles.count
        vehicleCount = V
        var startLoc: [Int] = [], endLoc: [Int] = [], shiftStart: [Double] = [], shiftEnd: [Double] = []
        var capacity: [Int] = [], fixed: [Double] = [], maxStops: [Int] = [], type: [Int] = []
        struct TypeKey: Hashable { var s: Int; var e: Int; var ws: Double; var we: Double; var c: [Int]; var k: Set<String>; var f: Double; var m: Int }
        var types: [TypeKey: Int] = [:]
        for v in problem.vehicles {
            let s = v.start ?? n0, e = v.end ?? n0
            startLoc.append(s); endLoc.append(e)
            shiftStart.append(v.shift.start); shiftEnd.append(v.shift.end)
            var cap: [Int] = []
            for k in 0..<dims { cap.append(k < v.capacity.count ? v.capacity[k] : Int.max / 4) }
            capacity += cap
            fixed.append(v.fixedCost)
            let m = v.maxStops ?? Int.max / 4
            maxStops.append(m)
            let key = TypeKey(s: s, e: e, ws: v.shift.start, we: v.shift.end, c: cap, k: v.skills, f: v.fixedCost, m: m)
            if let t = types[key] { type.append(t) } else { types[key] = types.count; type.append(types.count - 1) }
        }
        var compatible = [Bool](repeating: false, count: requestCount * V)
        for r in 0..<requestCount {
            for (vi, v) in problem.vehicles.enumerated() { compatible[r * V + vi] = skills[r].isSubset(of: v.skills) }
        }
        // Required requests cost far more to leave out than any route could, so the search never trades
        // one for distance; priorities order them among themselves.
        let maxFixed = fixed.max() ?? 0
        let required = 10 * (2 * (dist.max() ?? 0) * 2 + maxFixed + 1) + 1000
        penalty = penalty.enumerated().map { r, p in optional[r] ? p : required * (1 + max(0, -p)) }

        self.loc = loc; self.service = service; self.early = early; self.late = late
        self.requestOf = requestOf; self.partner = partner
        self.requestKind = kind; self.firstTask = first; self.amount = amount; self.penalty = penalty
        self.optional = optional; self.requestID = ids; self.size = size
        self.startLoc = startLoc; self.endLoc = endLoc; self.shiftStart = shiftStart; self.shiftEnd = shiftEnd
        self.capacity = capacity; self.fixedCost = fixed; self.maxStops = maxStops; self.vehicleType = type
        self.compatible = compatible

        let T = loc.count
        let keep = min(neighbourCount, max(0, T - 1))
        var neighbours: [[Int]] = []
        neighbours.reserveCapacity(T)
        let d = dist
        // The k nearest by keeping a sorted list of k: most candidates are refused at the first comparison.
        var keys: [Double] = [], near: [Int] = []
        keys.reserveCapacity(keep + 1); near.reserveCapacity(keep + 1)
        for t in 0..<T {
            let lt = loc[t]
            keys.removeAll(keepingCapacity: true); near.removeAll(keepingCapacity: true)
            for u in 0..<T where u != t {
                let key = d[lt * n + loc[u]] + d[loc[u] * n + lt]
                if keys.count == keep, let worst = keys.last, key >= worst { continue }
                var lo = 0, hi = keys.count
                while lo < hi { let mid = (lo + hi) / 2; if keys[mid] <= key { lo = mid + 1 } else { hi = mid } }
                keys.insert(key, at: lo); near.insert(u, at: lo)
                if keys.count > keep { keys.removeLast(); near.removeLast() }
            }
            neighbours.append(near)
        }
        self.neighbours = neighbours
    }

    @inline(__always) func d(_ a: Int, _ b: Int) -> Double { dist[a &* locationCount &+ b] }
    @inline(__always) func t(_ a: Int, _ b: Int) -> Double { time[a &* locationCount &+ b] }

    /// Why a request cannot be served even alone, or nil if some vehicle could serve it on its own.
    func aloneReason(_ r: Int) -> RoutingSolution.Reason? {
        var skills = false, fits = false
        for v in 0..<vehicleCount where compatible[r * vehicleCount + v] {
            skills = true
            var ok = true
            for k in 0..<dims where amount[r * dims + k] > capacity[v * dims + k] { ok = false }
            if !ok || maxStops[v] < (requestKind[r] == .pair ? 2 : 1) { continue }
            fits = true
            // Alone: start → task(s) → end within the windows and the shift.
            var now = shiftStart[v]
            var at = startLoc[v]
            var feasible = true
            var task = firstTask[r]
            for _ in 0..<(requestKind[r] == .pair ? 2 : 1) {
                now = max(early[task], now + t(at, loc[task]))
                if now > late[task] { feasible = false; break }
                now += service[task]; at = loc[task]; task += 1
            }
            if feasible && now + t(at, endLoc[v]) <= shiftEnd[v] { return nil }
        }
        return !skills ? .noVehicleWithSkills : (!fits ? .capacity : .timeWindow)
    }
}
