import Fluent
import Foundation
import SQLKit
import Vapor
import WaybillCore
import WaybillRouting

/// A plan of the day's routes: who drives which stops in which order, when they arrive, and what is
/// left out and why. Stored as JSON with its stops also as rows (the driver's list and the next run
/// read those).
struct RoutePlan: Sendable, Codable, Equatable {
    struct Stop: Sendable, Codable, Equatable {
        enum Kind: String, Sendable, Codable { case pickup, delivery }
        var orderID: OrderID
        var reference: String
        var kind: Kind
        var latitude: Double
        var longitude: Double
        /// Unix milliseconds.
        var arrival: Int64
        var departure: Int64
    }

    struct Route: Sendable, Codable, Equatable {
        var driverID: UserID
        var driverName: String
        var start: GeoPoint?
        var stops: [Stop]
        var distanceMeters: Double
        var durationSeconds: Double
    }

    struct Unplanned: Sendable, Codable, Equatable {
        var orderID: OrderID
        var reference: String
        var reason: RoutePlanningPolicy.Unplanned
    }

    var routes: [Route]
    var unplanned: [Unplanned]
    /// Each planned order's version when planned: applying skips an order changed since.
    var orderVersions: [OrderID: Int]
    var matrixSource: String
    var distanceMeters: Double
    var searchSeconds: Double
    var iterations: Int
    var plannedAt: Int64
}

struct RoutePlanRecord: Sendable {
    typealias Status = RoutePlanStatus
    var id: RoutePlanID
    var version: Int
    var status: Status
    var createdBy: UserID
    var createdAt: Int64
    var appliedAt: Int64?
    var plan: RoutePlan
}

/// What a manager asks of a plan.
struct RoutePlanRequest: Sendable {
    var seconds = RoutePlanningPolicy.defaultSeconds
    var capacity = RoutePlanningPolicy.defaultCapacity
    var serviceMinutes = RoutePlanningPolicy.defaultServiceMinutes
    /// Fewest drivers first, then distance (the default is shortest distance).
    var fewestDrivers = false
    var apply = false
    /// Auto-dispatch: orders a previous plan gave a driver stay with that driver too (only new orders move in).
    var keepAssignments = false
    /// Made by auto-dispatch, not a person: not counted against anyone's plans per minute.
    var automatic = false

    func validated() throws -> RoutePlanRequest {
        var errors = FieldErrors()
        if !seconds.isFinite || !RoutePlanningPolicy.secondsRange.contains(seconds) { errors.add("seconds", "out_of_range") }
        if !RoutePlanningPolicy.capacityRange.contains(capacity) { errors.add("capacity", "out_of_range") }
        if !RoutePlanningPolicy.serviceMinutesRange.contains(serviceMinutes) { errors.add("serviceMinutes", "out_of_range") }
        if !errors.isEmpty { throw WaybillError.validation(errors) }
        return self
    }
}

/// The outcome of applying a plan, per order.
struct RoutePlanApplication: Sendable {
    struct Result: Sendable {
        var orderID: OrderID
        var reference: String
        enum Outcome: String, Sendable { case assigned, reassigned, unchanged, skipped }
        var driverID: UserID
        /// skipped: with the error.
        var outcome: Outcome
        var error: WaybillError?
    }
    var record: RoutePlanRecord
    var results: [Result]
}

/// Route planning for managers: a plan of open orders over the drivers on duty, stored and versioned;
/// applying it gives each order to its planned driver through the order state machine.
struct RoutePlans: WaybillService {
    let services: WaybillServices
    let db: any Database
    let logger: Logger

    init(services: WaybillServices, db: any Database, logger: Logger) {
        self.services = services
        self.db = db
        self.logger = logger
    }

    private var sql: any SQLDatabase {
        get throws { guard let sql = db.tracedSQL else { throw Abort(.internalServerError) }; return sql }
    }

    // MARK: Planning

    func plan(_ request: RoutePlanRequest, by principal: Principal) async throws -> RoutePlanApplication {
        try principal.require(.dispatch)
        let request = try request.validated()
        if !request.automatic, let wait = services.routePlanLimiter.take(principal.userID.uuidString) {
            throw WaybillError.tooManyRequests(retryAfter: wait, "Plans are costly: at most \(RoutePlanningPolicy.plansPerMinute) a minute.")
        }
        let now = UnixTime.nowMillis
        let orders = try await Order.query(on: db).filter(\.$status ~~ RoutePlanningPolicy.plannedStatuses)
            .sort(\.$createdAt).limit(RoutePlanningPolicy.maxOrders + 1).all()
        guard orders.count <= RoutePlanningPolicy.maxOrders else {
            throw WaybillError(.unprocessableEntity, .validationFailed, "At most \(RoutePlanningPolicy.maxOrders) open orders can be planned at once.")
        }
        // The applied plan, read once: who it gave each order to (an order's driver since then by hand is
        // an override), and the stop each driver is on the way to.
        let applied = try await appliedStops()
        var plannedDriver: [OrderID: UserID] = [:]
        for (driver, stops) in applied { for stop in stops { plannedDriver[stop.orderID] = driver } }
        let underWay = Self.underWayStops(applied, orders: Dictionary(uniqueKeysWithValues: try orders.map { (try $0.storedID, $0) }))
        let fleet = try await Tracking(services: services, db: db, logger: logger).fleet(nearOrder: nil, by: principal)
            .filter { $0.state?.onDuty == true
                && DispatchPolicy.mayCarry(assignee: $0.driver.caller(id: $0.driverID), disabled: $0.driver.isBanned, assignedBy: principal.caller) }

        // The problem: places (drivers' positions, then each order's ends), shipments, vehicles.
        var points: [GeoPoint] = []
        var vehicles: [Vehicle] = []
        /// Each vehicle's driver, by the vehicle's index.
        var drivers: [(id: UserID, name: String)] = []
        let shiftEnd = Orders.startOfToday(services.config.displayTimeZone) + 86_400_000
        let horizon = Double(max(3_600_000, shiftEnd - now)) / 1000
        // A stop under way stays first: the driver's route starts there, after getting there.
        var fixed: [Int: (stop: RoutePlan.Stop, position: Int?, point: Int)] = [:]
        for entry in fleet {
            var start: Int?
            if let p = entry.state?.position {
                start = points.count
                points.append(GeoPoint(latitude: p.latitude, longitude: p.longitude))
            }
            if let stop = underWay[entry.driverID] {
                fixed[vehicles.count] = (stop, start, points.count)
                points.append(GeoPoint(latitude: stop.latitude, longitude: stop.longitude))
            }
            vehicles.append(Vehicle(id: entry.driverID.uuidString, start: start, end: nil, shift: TimeWindow(start: 0, end: horizon),
                                    capacity: [request.capacity], skills: ["driver:\(entry.driverID.uuidString)"]))
            drivers.append((entry.driverID, entry.driver.displayName))
        }
        let fixedOrders = Dictionary(fixed.values.map { ($0.stop.orderID, $0.stop.kind) }, uniquingKeysWith: { a, _ in a })
        let onDuty = Set(fleet.map(\.driverID))
        var unplanned: [RoutePlan.Unplanned] = []
        var shipments: [WaybillRouting.Shipment] = [], jobs: [Job] = []
        var byID: [OrderID: Order] = [:]
        let service = Double(request.serviceMinutes * 60)
        // Booked timeslots are the stops' time windows.
        let slots = try await Timeslots.live(for: orders.compactMap(\.id), on: db)
        // Parcels their senders drop at a counter: whether the counter holds each yet.
        let dropOffCounters = Dictionary(try await Leg.query(on: db).filter(\.$orderID ~~ orders.compactMap(\.id)).filter(\.$position == 0)
            .filter(\.$kind == .counter).all().map { ($0.orderID, $0.status == .held) }, uniquingKeysWith: { a, _ in a })
        var withSlot: Set<OrderID> = []
        /// The stop's window from its booked slot (`.always` without one); nil when the slot ended.
        func window(_ order: OrderID, _ kind: SlotKind) -> TimeWindow? {
            guard let booking = slots[order]?.first(where: { $0.booking.kind == kind && $0.booking.status == .booked }) else { return .always }
            withSlot.insert(order)
            return RoutePlanningPolicy.window(slotStart: booking.slot.startsAt, slotEnd: booking.slot.endsAt, now: now).map { TimeWindow(start: $0.start, end: $0.end) }
        }
        for order in orders {
            let id = try order.storedID
            byID[id] = order
            // Every status read (`plannedStatuses`) has a role.
            guard var role = RoutePlanningPolicy.role(of: order.status, assignedByPlan: !request.keepAssignments && order.driverID != nil
                                                      && plannedDriver[id] == order.driverID) else { continue }
            switch fixedOrders[id] {
            case .delivery?: continue  // its last stop is the one under way
            case .pickup?: role = .onBoard  // picked up at the route's start
            case nil: break
            }
            func out(_ reason: RoutePlanningPolicy.Unplanned) { unplanned.append(.init(orderID: id, reference: order.reference, reason: reason)) }
            // Where it is picked up: nil for one on board (delivered only).
            let pick: Coordinate?
            if role == .onBoard { pick = nil } else if let coordinate = order.pickup.coordinate { pick = coordinate } else { out(.noCoordinates); continue }
            guard let drop = order.dropoff.coordinate else { out(.noCoordinates); continue }
            // A timeslot booked on a later day keeps the order for that day's plan.
            let remaining: Set<SlotKind> = role == .onBoard ? [.delivery] : [.pickup, .delivery]
            if slots[id]?.contains(where: { remaining.contains($0.booking.kind) && $0.booking.status == .booked && $0.slot.startsAt >= shiftEnd }) == true {
                out(.slotLater); continue
            }
            guard let deliveryWindow = window(id, .delivery), var pickupWindow = role == .onBoard ? Optional(TimeWindow.always) : window(id, .pickup) else {
                out(.slotMissed); continue
            }
            // A parcel dropped at a counter: collected once it is there.
            if role != .onBoard, let held = dropOffCounters[id] {
                let dropOff = slots[id]?.first { $0.booking.kind == .dropOff && $0.booking.status == .booked }?.slot.endsAt
                switch RoutePlanningPolicy.counterPickup(held: held, dropOffSlotEnd: dropOff, now: now) {
                case .now: break
                case .from(let end) where end >= shiftEnd: out(.slotLater); continue
                case .from(let end): pickupWindow = TimeWindow(start: Double(end - now) / 1000, end: horizon)
                case .notYet: out(.notAtCounter); continue
                }
            }
            // One its driver keeps goes on their route only, while they are on duty (and such a status has a driver).
            var skills: Set<String> = []
            if role != .open {
                guard let driver = order.driverID, onDuty.contains(driver) else { out(.driverOffDuty); continue }
                skills = ["driver:\(driver.uuidString)"]
            }
            if vehicles.isEmpty { out(.noDriverOnDuty); continue }
            let amount = [RoutePlanningPolicy.load(order.weightClass)]
            let priority = RoutePlanningPolicy.priority(order.service)
            let delivery = Visit(location: points.count, service: service, window: deliveryWindow)
            points.append(GeoPoint(latitude: drop.latitude, longitude: drop.longitude))
            if let pick {
                let pickup = Visit(location: points.count, service: service, window: pickupWindow)
                points.append(GeoPoint(latitude: pick.latitude, longitude: pick.longitude))
                shipments.append(WaybillRouting.Shipment(id: id.uuidString, pickup: pickup, delivery: delivery, amount: amount, skills: skills, priority: priority))
            } else {
                jobs.append(Job(id: id.uuidString, kind: .delivery, visit: delivery, amount: amount, skills: skills, priority: priority))
            }
        }

        var routes: [RoutePlan.Route] = []
        var versions: [OrderID: Int] = [:]
        var matrixSource = "none"
        var distance = 0.0, seconds = 0.0, iterations = 0
        if !(jobs.isEmpty && shipments.isEmpty && fixed.isEmpty) {
            let matrix = await services.routing.matrix(for: points, logger: logger)
            matrixSource = matrix.source
            if matrix.unroutable > 0 {
                logger.notice("route plan: the road network cannot join some places; straight lines stand in", metadata: ["pairs": "\(matrix.unroutable)"])
            }
            func travel(_ from: Int?, _ to: Int) -> (metres: Double, seconds: Double) {
                guard let from else { return (0, 0) }
                return (matrix.matrix.distances[from * matrix.matrix.count + to], matrix.matrix.durations[from * matrix.matrix.count + to])
            }
            for (v, f) in fixed {
                vehicles[v].start = f.point
                vehicles[v].shift.start = min(horizon, travel(f.position, f.point).seconds + service)
            }
            /// The stop under way goes first, reached from the driver's position; the route starts there.
            func placeFirst(_ f: (stop: RoutePlan.Stop, position: Int?, point: Int), in route: inout RoutePlan.Route) {
                let leg = travel(f.position, f.point)
                var stop = f.stop
                stop.arrival = now + Int64(leg.seconds * 1000)
                stop.departure = stop.arrival + Int64(service * 1000)
                versions[stop.orderID] = byID[stop.orderID]?.version
                route.stops.insert(stop, at: 0)
                route.distanceMeters += leg.metres
                route.durationSeconds += leg.seconds + service
                route.start = f.position.map { points[$0] }
            }
            let problem = RoutingProblem(matrix: matrix.matrix, jobs: jobs, shipments: shipments, vehicles: vehicles)
            var options = RoutingOptions(seconds: request.seconds, seed: 1, threads: 1)
            if request.fewestDrivers {
                options.fleetMinimisation = 0.5
            }
            let chosen = options
            let solution = try await services.threadPool.runIfActive { try RoutingSolver.solve(problem, options: chosen) }
            distance = solution.distance; seconds = solution.seconds; iterations = solution.iterations
            for route in solution.routes {
                let vehicle = problem.vehicles[route.vehicleIndex]
                let stops = route.stops.compactMap { stop -> RoutePlan.Stop? in
                    guard let id = OrderID(uuidString: stop.id), let order = byID[id] else { return nil }
                    versions[id] = order.version
                    let place = points[stop.location]
                    return RoutePlan.Stop(orderID: id, reference: order.reference, kind: stop.kind == .pickup ? .pickup : .delivery,
                                          latitude: place.latitude, longitude: place.longitude,
                                          arrival: now + Int64(stop.serviceStart * 1000), departure: now + Int64(stop.departure * 1000))
                }
                let driver = drivers[route.vehicleIndex]
                var planned = RoutePlan.Route(driverID: driver.id, driverName: driver.name,
                                              start: vehicle.start.map { points[$0] }, stops: stops,
                                              distanceMeters: route.distance, durationSeconds: route.duration)
                if let f = fixed[route.vehicleIndex] { placeFirst(f, in: &planned) }
                routes.append(planned)
            }
            // A driver whose only stop is the one under way.
            for (v, f) in fixed where !solution.routes.contains(where: { $0.vehicleIndex == v }) {
                var planned = RoutePlan.Route(driverID: drivers[v].id, driverName: drivers[v].name,
                                              start: nil, stops: [], distanceMeters: 0, durationSeconds: 0)
                placeFirst(f, in: &planned)
                routes.append(planned)
            }
            for out in solution.unassigned {
                guard let id = OrderID(uuidString: out.id), let order = byID[id] else { continue }
                let reason: RoutePlanningPolicy.Unplanned = switch out.reason {
                case .noVehicleWithSkills: .driverOffDuty
                case .capacity: .tooLarge
                case .timeWindow: withSlot.contains(id) ? .slotMissed : .outOfShift
                case .noRoom, .notWorthIt: .noRoom
                }
                unplanned.append(.init(orderID: id, reference: order.reference, reason: reason))
            }
        }
        // Drivers on duty with nothing to do are in the plan too, with an empty route.
        for entry in fleet where !routes.contains(where: { $0.driverID == entry.driverID }) {
            routes.append(RoutePlan.Route(driverID: entry.driverID, driverName: entry.driver.displayName,
                                          start: entry.state?.position.map { GeoPoint(latitude: $0.latitude, longitude: $0.longitude) },
                                          stops: [], distanceMeters: 0, durationSeconds: 0))
        }
        let plan = RoutePlan(routes: routes, unplanned: unplanned, orderVersions: versions, matrixSource: matrixSource,
                             distanceMeters: distance, searchSeconds: seconds, iterations: iterations, plannedAt: now)
        let record = try await store(plan, by: principal)
        logger.info("route plan made", metadata: ["plan": "\(record.version)", "orders": "\(orders.count)", "drivers": "\(fleet.count)",
                                                  "unplanned": "\(unplanned.count)", "matrix": "\(matrixSource)"])
        if request.apply { return try await apply(record.id, by: principal) }
        return RoutePlanApplication(record: record, results: [])
    }

    /// The applied plan's stops, per driver in their order (one driver's only, when given), from the stop
    /// rows: the plan's JSON is not read.
    private func appliedStops(driver: UserID? = nil) async throws -> [UserID: [RoutePlan.Stop]] {
        let select = "SELECT s.driver_id, s.order_id, s.kind, s.reference, s.latitude, s.longitude, s.arrival, s.departure "
            + "FROM route_plan_stops s JOIN route_plans p ON p.id = s.plan_id WHERE p.status = 'applied'"
        let rows = if let driver {
            try await sql.raw("\(unsafeRaw: select) AND s.driver_id = \(bind: driver) ORDER BY s.seq").all()
        } else {
            try await sql.raw("\(unsafeRaw: select) ORDER BY s.driver_id, s.seq").all()
        }
        var result: [UserID: [RoutePlan.Stop]] = [:]
        for row in rows {
            let stop = RoutePlan.Stop(orderID: try row.decode(column: "order_id", as: OrderID.self), reference: try row.decode(column: "reference", as: String.self),
                                      kind: try row.decode(column: "kind", as: String.self) == "pickup" ? .pickup : .delivery,
                                      latitude: try row.decode(column: "latitude", as: Double.self), longitude: try row.decode(column: "longitude", as: Double.self),
                                      arrival: try row.decode(column: "arrival", as: Int64.self), departure: try row.decode(column: "departure", as: Int64.self))
            result[try row.decode(column: "driver_id", as: UserID.self), default: []].append(stop)
        }
        return result
    }

    /// The driver's first stop of `stops` still ahead (`RoutePlanningPolicy.stopIsAhead`), given the orders now.
    private static func firstAhead(_ stops: [RoutePlan.Stop], driver: UserID, orders: [OrderID: Order]) -> RoutePlan.Stop? {
        stops.first { stop in
            guard let order = orders[stop.orderID], order.driverID == driver else { return false }
            return RoutePlanningPolicy.stopIsAhead(stop.kind == .pickup ? .pickup : .delivery, status: order.status)
        }
    }

    /// Per driver, the stop they are on their way to (`RoutePlanningPolicy.isUnderWay`): their first stop
    /// still ahead in the applied plan, if they have started on it.
    private static func underWayStops(_ applied: [UserID: [RoutePlan.Stop]], orders: [OrderID: Order]) -> [UserID: RoutePlan.Stop] {
        var result: [UserID: RoutePlan.Stop] = [:]
        for (driver, stops) in applied {
            if let stop = firstAhead(stops, driver: driver, orders: orders), let order = orders[stop.orderID],
               RoutePlanningPolicy.isUnderWay(stop.kind == .pickup ? .pickup : .delivery, status: order.status) {
                result[driver] = stop
            }
        }
        return result
    }

    private func store(_ plan: RoutePlan, by principal: Principal) async throws -> RoutePlanRecord {
        let id = RoutePlanID.generated()
        let json = Order.json(plan)
        let now = UnixTime.nowMillis
        let by = principal.userID
        for attempt in 0..<3 {
            do {
                return try await db.writeTransaction(services) { db in
                    guard let sql = db.tracedSQL else { throw Abort(.internalServerError) }
                    let last = try await sql.raw("SELECT MAX(version) AS v FROM route_plans").first()
                    let version = (try last.flatMap { try $0.decodeNil(column: "v") ? nil : try $0.decode(column: "v", as: Int.self) } ?? 0) + 1
                    try await sql.raw("""
                        INSERT INTO route_plans (id, version, status, created_by, created_at, plan)
                        VALUES (\(bind: id), \(bind: version), 'proposed', \(bind: by), \(bind: now), \(bind: json))
                        """).run()
                    for route in plan.routes {
                        for (seq, stop) in route.stops.enumerated() {
                            try await sql.raw("""
                                INSERT INTO route_plan_stops (plan_id, driver_id, seq, order_id, kind, reference, latitude, longitude, arrival, departure)
                                VALUES (\(bind: id), \(bind: route.driverID), \(bind: seq), \(bind: stop.orderID), \(bind: stop.kind.rawValue),
                                        \(bind: stop.reference), \(bind: stop.latitude), \(bind: stop.longitude), \(bind: stop.arrival), \(bind: stop.departure))
                                """).run()
                        }
                    }
                    return RoutePlanRecord(id: id, version: version, status: .proposed, createdBy: by, createdAt: now, appliedAt: nil, plan: plan)
                }
            } catch let error as any DatabaseError where error.isConstraintFailure && attempt < 2 {
                continue  // Two managers planned at the same moment: the next version number.
            }
        }
        throw WaybillError(.conflict, .conflict, "Another plan was being made at the same moment; try again.")
    }

    // MARK: Reading

    private static let columns = "id, version, status, created_by, created_at, applied_at, plan"

    private func record(_ row: any SQLRow) throws -> RoutePlanRecord {
        let json = try row.decode(column: "plan", as: String.self)
        return RoutePlanRecord(
            id: try row.decode(column: "id", as: RoutePlanID.self), version: try row.decode(column: "version", as: Int.self),
            status: RoutePlanRecord.Status(rawValue: try row.decode(column: "status", as: String.self)) ?? .superseded,
            createdBy: try row.decode(column: "created_by", as: UserID.self), createdAt: try row.decode(column: "created_at", as: Int64.self),
            appliedAt: try row.decodeNil(column: "applied_at") ? nil : try row.decode(column: "applied_at", as: Int64.self),
            plan: try Order.decoder.decode(RoutePlan.self, from: Data(json.utf8)))
    }

    /// The newest plan (proposed or applied), or nil before the first.
    func latest(by principal: Principal) async throws -> RoutePlanRecord? {
        try principal.require(.dispatch)
        return try await sql.raw("SELECT \(unsafeRaw: Self.columns) FROM route_plans ORDER BY version DESC LIMIT 1").first().map(record)
    }

    func find(_ id: RoutePlanID, by principal: Principal) async throws -> RoutePlanRecord {
        try principal.require(.dispatch)
        guard let row = try await sql.raw("SELECT \(unsafeRaw: Self.columns) FROM route_plans WHERE id = \(bind: id)").first() else {
            throw WaybillError.notFound
        }
        return try record(row)
    }

    // MARK: Applying

    /// Gives each planned order to its driver (assign, or reassign an order a plan gave someone else),
    /// each through the state machine in its own transaction; orders changed since planning are skipped.
    /// Only the newest plan, once.
    func apply(_ id: RoutePlanID, by principal: Principal) async throws -> RoutePlanApplication {
        try principal.require(.dispatch)
        var record = try await find(id, by: principal)
        let newest = try await latest(by: principal)
        guard RoutePlanningPolicy.mayApply(record.status, isNewest: newest?.id == id) else {
            throw WaybillError(.conflict, .planSuperseded, "This plan is not the newest, or it was applied already. Plan again.")
        }
        let orders = Orders(services: services, db: db, logger: logger)
        var results: [RoutePlanApplication.Result] = []
        for route in record.plan.routes {
            var seen = Set<OrderID>()
            for stop in route.stops where seen.insert(stop.orderID).inserted {
                let orderID = stop.orderID
                var result = RoutePlanApplication.Result(orderID: stop.orderID, reference: stop.reference, driverID: route.driverID, outcome: .unchanged)
                do {
                    guard let order = try await Order.find(orderID, on: db) else { throw WaybillError.notFound }
                    guard order.version == record.plan.orderVersions[stop.orderID] else {
                        throw WaybillError(.conflict, .conflict, "The order changed after the plan was made.")
                    }
                    if order.driverID != route.driverID {
                        let action = DispatchPolicy.assignAction(for: order.status)
                        guard let action else { throw WaybillError.invalidTransition(order.status, .assign) }
                        _ = try await orders.assign(orderID, to: route.driverID, reassign: action == .reassign, by: principal)
                        result.outcome = action == .reassign ? .reassigned : .assigned
                    }
                } catch let error as WaybillError {
                    result.outcome = .skipped
                    result.error = error
                }
                results.append(result)
            }
        }
        let now = UnixTime.nowMillis
        try await db.writeTransaction(services) { db in
            guard let sql = db.tracedSQL else { throw Abort(.internalServerError) }
            try await sql.raw("UPDATE route_plans SET status = 'superseded' WHERE status = 'applied'").run()
            try await sql.raw("UPDATE route_plans SET status = 'applied', applied_at = \(bind: now) WHERE id = \(bind: id)").run()
        }
        record.status = .applied
        record.appliedAt = now
        return RoutePlanApplication(record: record, results: results)
    }

    // MARK: The driver's stops

    /// The caller's stops in the applied plan still to do, in order, with the planned arrival.
    func driverRoute(for principal: Principal) async throws -> [RoutePlan.Stop] {
        try principal.require(.drive)
        let me = principal.userID
        guard let stops = try await appliedStops(driver: me)[me], !stops.isEmpty else { return [] }
        let ids = Array(Set(stops.map(\.orderID)))
        let current = Dictionary(uniqueKeysWithValues: try await Order.query(on: db).filter(\.$id ~~ ids).all().map { (try $0.storedID, $0) })
        return stops.filter { stop in
            guard let order = current[stop.orderID], order.driverID == principal.userID else { return false }
            return RoutePlanningPolicy.stopIsAhead(stop.kind == .pickup ? .pickup : .delivery, status: order.status)
        }
    }
}
