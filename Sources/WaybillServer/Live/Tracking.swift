import Fluent
import Foundation
import SQLKit
import Vapor
import WaybillCore

/// A driver's duty and last known position.
struct DriverState: Sendable {
    var driverID: UserID
    var onDuty: Bool
    var dutyChangedAt: Int64
    var position: PositionReport?

    static let columns = ["driver_id", "on_duty", "duty_changed_at", "latitude", "longitude", "accuracy", "heading", "speed", "recorded_at"]

    init(driverID: UserID, onDuty: Bool, dutyChangedAt: Int64, position: PositionReport?) {
        self.driverID = driverID
        self.onDuty = onDuty
        self.dutyChangedAt = dutyChangedAt
        self.position = position
    }

    init(row: any SQLRow) throws {
        driverID = UserID(rawValue: try row.decode(column: "driver_id", as: UUID.self))
        onDuty = try row.decode(column: "on_duty", as: Bool.self)
        dutyChangedAt = try row.decode(column: "duty_changed_at", as: Int64.self)
        func double(_ column: String) throws -> Double? { try row.decodeNil(column: column) ? nil : try row.decode(column: column, as: Double.self) }
        if let latitude = try double("latitude"), let longitude = try double("longitude"), !(try row.decodeNil(column: "recorded_at")) {
            position = PositionReport(latitude: latitude, longitude: longitude, accuracy: try double("accuracy"),
                                      heading: try double("heading"), speed: try double("speed"),
                                      recordedAt: try row.decode(column: "recorded_at", as: Int64.self))
        }
    }

    static func find(_ driverID: UserID, on db: any Database) async throws -> DriverState? {
        guard let sql = db.tracedSQL else { return nil }
        return try await sql.select().columns(columns.map { SQLIdentifier($0) }).from("driver_states")
            .where("driver_id", .equal, SQLBind(driverID)).first().map(DriverState.init(row:))
    }
}

/// What an order's page shows of its delivery under way.
struct OrderTracking: Sendable {
    var position: PositionReport?
    var eta: ArrivalEstimate?
    /// `PUBLIC_URL/t/{token}`, for the order's customer and managers.
    var trackingURL: String?
}

/// What a position report needs of an order its driver heads for (`Tracking.headingStatuses`):
/// read with one plain statement, not as a whole `Order` (filling Fluent's model, fifty columns,
/// for each order of each report was 8 % of the server's time at a thousand reports a second).
struct HeadingOrder: Sendable {
    var id: OrderID
    var driverID: UserID
    var status: OrderStatus
    var pickup: Coordinate?
    var dropoff: Coordinate?

    static func all(of drivers: [UserID], on sql: any SQLDatabase) async throws -> [HeadingOrder] {
        guard !drivers.isEmpty else { return [] }
        let rows = try await sql.select()
            .columns("id", "driver_id", "status", "pickup_latitude", "pickup_longitude", "dropoff_latitude", "dropoff_longitude")
            .from(Order.schema)
            .where("driver_id", .in, SQLBind.group(drivers))
            .where("status", .in, SQLBind.group(Tracking.headingStatuses.map(\.rawValue)))
            .orderBy("created_at").orderBy("id")
            .all()
        return try rows.compactMap { row in
            func coordinate(_ prefix: String) throws -> Coordinate? {
                guard !(try row.decodeNil(column: prefix + "_latitude")), !(try row.decodeNil(column: prefix + "_longitude")) else { return nil }
                return Coordinate(latitude: try row.decode(column: prefix + "_latitude", as: Double.self),
                                  longitude: try row.decode(column: prefix + "_longitude", as: Double.self))
            }
            guard let status = OrderStatus(rawValue: try row.decode(column: "status", as: String.self)) else { return nil }
            return HeadingOrder(id: OrderID(rawValue: try row.decode(column: "id", as: UUID.self)),
                                driverID: UserID(rawValue: try row.decode(column: "driver_id", as: UUID.self)),
                                status: status, pickup: try coordinate("pickup"), dropoff: try coordinate("dropoff"))
        }
    }
}

extension HeadingOrder {
    /// An order with a driver, heading for a stop or not.
    init?(_ order: Order) {
        guard let id = order.id else { return nil }
        self.init(id: id, order)
    }

    init?(id: OrderID, _ order: some OrderColumns) {
        guard let driver = order.driverID else { return nil }
        self.init(id: id, driverID: driver, status: order.status, pickup: order.pickup.coordinate, dropoff: order.dropoff.coordinate)
    }

    /// When the applied route plans have each order's driver at the order's next stop (orders
    /// without a plan are absent): one statement for a whole group of reports.
    static func plannedArrivals(of orders: [HeadingOrder], on sql: any SQLDatabase) async throws -> [OrderID: Int64] {
        guard !orders.isEmpty else { return [:] }
        let byID = Dictionary(orders.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        let rows = try await sql.raw("""
            SELECT s.order_id, s.driver_id, s.kind, s.arrival FROM route_plan_stops s JOIN route_plans p ON p.id = s.plan_id
            WHERE p.status = 'applied' AND s.order_id IN \(SQLBind.group(orders.map(\.id)))
            ORDER BY p.version DESC
            """).all()
        var arrivals: [OrderID: Int64] = [:]
        for row in rows {
            let id = OrderID(rawValue: try row.decode(column: "order_id", as: UUID.self))
            guard arrivals[id] == nil, let order = byID[id], let stop = order.status.nextStop,
                  try row.decode(column: "driver_id", as: UUID.self) == order.driverID.rawValue,
                  try row.decode(column: "kind", as: String.self) == (stop == .pickup ? "pickup" : "delivery") else { continue }
            arrivals[id] = try row.decode(column: "arrival", as: Int64.self)
        }
        return arrivals
    }
}

/// Positions, duty, the fleet, arrival estimates, trails and tracking links.
struct Tracking: WaybillService {
    let services: WaybillServices
    let db: any Database
    let logger: Logger

    init(services: WaybillServices, db: any Database, logger: Logger) {
        self.services = services
        self.db = db
        self.logger = logger
    }

    static let policy = PositionPolicy()
    /// Statuses in which the driver heads for a stop (`OrderStatus.nextStop`): their positions
    /// join the order's trail and its watchers see them.
    static let headingStatuses = OrderStatus.allCases.filter { $0.nextStop != nil }

    // MARK: Duty

    /// The caller's own duty and last position (nil if they never went on duty).
    func duty(of principal: Principal) async throws -> DriverState? {
        try principal.require(.drive)
        return try await DriverState.find(principal.userID, on: db)
    }

    func setDuty(_ onDuty: Bool, by principal: Principal) async throws -> DriverState {
        try principal.require(.drive)
        let driverID = principal.userID
        let now = UnixTime.nowMillis
        return try await db.writeTransaction(services) { db in
            guard let sql = db.tracedSQL else { throw Abort(.internalServerError) }
            let existing = try await DriverState.find(driverID, on: db)
            if let existing, existing.onDuty == onDuty { return existing }
            try await sql.raw("""
                INSERT INTO driver_states (driver_id, on_duty, duty_changed_at) VALUES (\(bind: driverID), \(bind: onDuty), \(bind: now))
                ON CONFLICT (driver_id) DO UPDATE SET on_duty = \(bind: onDuty), duty_changed_at = \(bind: now)
                """).run()
            try await LiveLog.publish(.duty(LiveDuty(driverId: driverID, onDuty: onDuty, at: now)), to: [LiveLog.fleetTopic], on: db)
            return DriverState(driverID: driverID, onDuty: onDuty, dutyChangedAt: now, position: existing?.position)
        }
    }

    // MARK: Positions

    struct Reported: Sendable {
        var accepted: Int
        var ignored: Int
        var orders: Int
    }

    /// Stores a batch of positions: the last one becomes the driver's position; all of them join the
    /// trail of each order the driver has accepted or is carrying; the newest goes live with a new
    /// ETA. Off duty, nothing is stored (409), so nobody can be followed off the clock. Drivers'
    /// reports arriving together are written in one transaction (`PositionCommits`); this returns
    /// once the one holding this report has committed.
    func report(_ batch: [PositionReport], by principal: Principal) async throws -> Reported {
        let mode = PositionSharing.mode(for: principal.caller)
        if mode == nil { try principal.require(.drive) }
        let driverID = principal.userID
        if let wait = services.positionLimiter.take(driverID.uuidString) {
            throw WaybillError.tooManyRequests(retryAfter: wait, "Positions arrive faster than a few a second; send them in batches.")
        }
        if mode == .ownShipments { return try await reportCarried(batch, by: principal) }
        let services = self.services, db = services.appDatabase()
        return try await services.positionCommits.submit(.init(driverID: driverID, firstName: principal.user.firstName, batch: batch)) { jobs in
            try await Self.commit(jobs, services: services, db: db)
        }
    }

    /// Writes several drivers' reports in one transaction, in the order they came: each driver's
    /// position, the trail points of the orders they head for, and the live events (the newest
    /// position on the fleet map and on each order, with a new ETA). A fixed number of statements
    /// whatever the number of reports. A report from a driver off duty, or one whose points are all
    /// refused, is answered on its own; it does not fail the rest.
    static func commit(_ jobs: [PositionCommits.Job], services: WaybillServices, db: any Database) async throws -> [Result<Reported, any Error>] {
        let speed = services.config.etaAverageSpeedKmh
        return try await db.writeTransaction(services) { db in
            guard let sql = db.tracedSQL else { throw Abort(.internalServerError) }
            let now = UnixTime.nowMillis
            let drivers = Array(Set(jobs.map(\.driverID)))
            var states: [UserID: DriverState] = [:]
            for row in try await sql.select().columns(DriverState.columns.map { SQLIdentifier($0) }).from("driver_states")
                .where("driver_id", .in, SQLBind.group(drivers)).all() {
                let state = try DriverState(row: row)
                states[state.driverID] = state
            }
            var results: [Result<Reported, any Error>] = []
            /// Per job kept: its points and its first name (the index is the result's).
            var kept: [(index: Int, job: PositionCommits.Job, points: [PositionReport])] = []
            for job in jobs {
                guard var state = states[job.driverID], state.onDuty else {
                    results.append(.failure(WaybillError(.conflict, .offDuty, "Go on duty before sharing your position.")))
                    continue
                }
                switch Self.policy.clean(job.batch, previous: state.position, now: now) {
                case .failure(let error):
                    results.append(.failure(error.apiError))
                case .success(let cleaned):
                    results.append(.success(Reported(accepted: cleaned.accepted.count, ignored: cleaned.ignored, orders: 0)))
                    guard let last = cleaned.accepted.last else { continue }
                    state.position = last
                    states[job.driverID] = state
                    kept.append((results.count - 1, job, cleaned.accepted))
                }
            }
            guard !kept.isEmpty else { return results }
            // Each driver's newest position, one statement for all (the row exists: they are on duty).
            let moved = Array(Set(kept.map(\.job.driverID)))
            var upsert = sql.insert(into: "driver_states").columns(DriverState.columns)
            for driverID in moved {
                // Each one was kept with its newest position, just above.
                guard let state = states[driverID], let position = state.position else { continue }
                upsert = upsert.values(SQLBind(driverID), SQLBind(true), SQLBind(state.dutyChangedAt), SQLBind(position.latitude),
                                       SQLBind(position.longitude), SQLBind(position.accuracy), SQLBind(position.heading),
                                       SQLBind(position.speed), SQLBind(position.recordedAt))
            }
            try await upsert.onConflict(with: ["driver_id"]) { conflict in
                conflict.set(excludedValueOf: "latitude").set(excludedValueOf: "longitude").set(excludedValueOf: "accuracy")
                    .set(excludedValueOf: "heading").set(excludedValueOf: "speed").set(excludedValueOf: "recorded_at")
            }.run()

            let heading = try await HeadingOrder.all(of: moved, on: sql)
            let planned = try await HeadingOrder.plannedArrivals(of: heading, on: sql)
            let ordersByDriver = Dictionary(grouping: heading) { $0.driverID }
            var trail: [(order: HeadingOrder, points: [PositionReport])] = []
            var events: [(payload: LivePayload, topic: String)] = []
            for (index, job, points) in kept {
                let orders = ordersByDriver[job.driverID] ?? []
                if case .success(var reported) = results[index] {
                    reported.orders = orders.count
                    results[index] = .success(reported)
                }
                trail += orders.map { ($0, points) }
                guard let newest = points.last else { continue }  // kept only with a point
                events += Self.liveEvents(orders, newest: newest, carrier: job.driverID, firstName: job.firstName, speedKmh: speed,
                                          planned: planned)
                events.append((.location(LiveLocation(driverId: job.driverID, driverFirstName: job.firstName, orderId: nil, position: newest)),
                               LiveLog.fleetTopic))
            }
            try await Self.addToTrails(trail, on: sql)
            try await LiveLog.publish(events, at: now, on: db)
            return results
        }
    }

    /// A traveller's positions: to the trails and live channels of the shipments they carry now,
    /// nothing else stored (no duty, no fleet map). Nothing carried: nothing stored.
    private func reportCarried(_ batch: [PositionReport], by principal: Principal) async throws -> Reported {
        let carrierID = principal.userID
        let firstName = principal.user.firstName
        let speed = services.config.etaAverageSpeedKmh
        return try await db.writeTransaction(services) { db in
            guard let sql = db.tracedSQL else { throw Abort(.internalServerError) }
            let active = try await HeadingOrder.all(of: [carrierID], on: sql)
            guard let first = active.first else { return Reported(accepted: 0, ignored: batch.count, orders: 0) }
            // The trail's last point stands for the previous report (jumps are checked against it).
            let previous = try await Self.lastTrailPoint(first.id, since: nil, on: sql)
            let now = UnixTime.nowMillis
            let cleaned = try Self.policy.clean(batch, previous: previous, now: now).orValidationError()
            guard !cleaned.accepted.isEmpty else { return Reported(accepted: 0, ignored: cleaned.ignored, orders: 0) }
            let events = try await Self.follow(active, cleaned.accepted, carrier: carrierID, firstName: firstName, speedKmh: speed, on: sql)
            try await LiveLog.publish(events, at: now, on: db)
            return Reported(accepted: cleaned.accepted.count, ignored: cleaned.ignored, orders: active.count)
        }
    }

    /// Adds `points` to the trails of the orders carried, and the live events for them (the newest
    /// position and a new ETA), for drivers and travellers alike.
    private static func follow(_ orders: [HeadingOrder], _ points: [PositionReport], carrier: UserID, firstName: String, speedKmh: Double,
                               on sql: any SQLDatabase) async throws -> [(payload: LivePayload, topic: String)] {
        guard let last = points.last, !orders.isEmpty else { return [] }
        try await addToTrails(orders.map { ($0, points) }, on: sql)
        return liveEvents(orders, newest: last, carrier: carrier, firstName: firstName, speedKmh: speedKmh)
    }

    /// Trail points, in statements of at most 2,000 rows (8,000 parameters: under both databases' limits).
    private static func addToTrails(_ trails: [(order: HeadingOrder, points: [PositionReport])], on sql: any SQLDatabase) async throws {
        let rows = trails.flatMap { trail in trail.points.map { (trail.order.id, $0) } }
        var start = 0
        while start < rows.count {
            let end = min(rows.count, start + 2_000)
            var insert = sql.insert(into: "order_positions").columns("order_id", "latitude", "longitude", "recorded_at")
            for (orderID, point) in rows[start..<end] {
                insert = insert.values(SQLBind(orderID), SQLBind(point.latitude), SQLBind(point.longitude), SQLBind(point.recordedAt))
            }
            try await insert.run()
            start = end
        }
    }

    /// What the watchers of each order hear of a new position: it, and the new ETA.
    /// The ETA respects the applied route plan (`planned`: the planned arrival at each order's next
    /// stop), as the order's page does: a driver with other stops first arrives no earlier than planned.
    private static func liveEvents(_ orders: [HeadingOrder], newest last: PositionReport, carrier: UserID, firstName: String,
                                   speedKmh: Double, planned: [OrderID: Int64] = [:]) -> [(payload: LivePayload, topic: String)] {
        var events: [(payload: LivePayload, topic: String)] = []
        for order in orders {
            let topic = LiveLog.orderTopic(order.id)
            events.append((.location(LiveLocation(driverId: carrier, driverFirstName: firstName, orderId: order.id,
                                                  orderStatus: order.status.rawValue, position: last)), topic))
            if let eta = ArrivalEstimate.respectingPlan(
                estimate(status: order.status, pickup: order.pickup, dropoff: order.dropoff, from: last, speedKmh: speedKmh),
                plannedArrival: planned[order.id]) {
                events.append((.eta(LiveETA(orderId: order.id, estimate: eta)), topic))
            }
        }
        return events
    }

    /// An order's newest trail point, recorded at `since` or later.
    static func lastTrailPoint(_ orderID: OrderID, since: Int64?, on sql: any SQLDatabase) async throws -> PositionReport? {
        try await sql.raw("""
            SELECT latitude, longitude, recorded_at FROM order_positions WHERE order_id = \(bind: orderID) AND recorded_at >= \(bind: since ?? Int64.min)
            ORDER BY recorded_at DESC LIMIT 1
            """).first().map { row in
                PositionReport(latitude: try row.decode(column: "latitude", as: Double.self), longitude: try row.decode(column: "longitude", as: Double.self),
                               recordedAt: try row.decode(column: "recorded_at", as: Int64.self))
            }
    }

    /// From the driver's position to the pickup (accepted) or the drop-off (in transit).
    static func estimate(for order: some OrderColumns, from position: PositionReport, speedKmh: Double) -> ArrivalEstimate? {
        estimate(status: order.status, pickup: order.pickup.coordinate, dropoff: order.dropoff.coordinate, from: position, speedKmh: speedKmh)
    }

    static func estimate(status: OrderStatus, pickup: Coordinate?, dropoff: Coordinate?, from position: PositionReport,
                         speedKmh: Double) -> ArrivalEstimate? {
        guard let stop = status.nextStop else { return nil }
        let target = switch stop {
        case .pickup: pickup
        case .dropoff: dropoff
        }
        guard let target else { return nil }
        return ArrivalEstimate.estimate(from: position, to: target, stop: stop, averageSpeedKmh: speedKmh)
    }

    // MARK: Status changes

    /// Tells the order's watchers and the dispatch board about a new status, in the transaction
    /// that made it; when the driver sets off towards a stop, with an ETA from their position.
    static func publishStatus(_ order: some OrderColumns, speedKmh: Double, on db: any Database) async throws {
        let id = try order.orderID
        let now = UnixTime.nowMillis
        try await LiveLog.publish(.status(LiveStatus(orderId: id, reference: order.reference, status: order.status.rawValue,
                                                     driverId: order.driverID, at: now)),
                                  to: [LiveLog.orderTopic(id), LiveLog.fleetTopic], at: now, on: db)
        if order.status.nextStop != nil, let driverID = order.driverID,
           let state = try await DriverState.find(driverID, on: db), state.onDuty, let position = state.position,
           let eta = estimate(for: order, from: position, speedKmh: speedKmh) {
            try await LiveLog.publish(.eta(LiveETA(orderId: id, estimate: eta)), to: [LiveLog.orderTopic(id)], at: now, on: db)
        }
    }

    // MARK: Reading

    /// The live part of an order's page: the driver's position and ETA while the order is accepted
    /// or in transit and the driver on duty; the tracking link for its customer and managers.
    func view(of order: OrderRow, capacities: Set<OrderCapacity>) async throws -> OrderTracking {
        var tracking = OrderTracking()
        if OrderPolicy.allows(.seeTrackingLink, status: order.status, as: capacities) { tracking.trackingURL = order.trackingToken.map(trackingURL) }
        guard order.status.nextStop != nil, let driverID = order.driverID else { return tracking }
        let found: PositionReport?
        if let state = try await DriverState.find(driverID, on: db) {
            found = state.onDuty ? state.position : nil
        } else {
            // A traveller has no duty: what they shared for this shipment in the last quarter hour.
            guard let sql = db.tracedSQL else { return tracking }
            found = try await Self.lastTrailPoint(order.id, since: UnixTime.nowMillis - 15 * 60_000, on: sql)
        }
        guard let position = found else { return tracking }
        tracking.position = position
        tracking.eta = ArrivalEstimate.respectingPlan(Self.estimate(for: order, from: position, speedKmh: services.config.etaAverageSpeedKmh),
                                                      plannedArrival: try await plannedArrival(of: HeadingOrder(id: order.id, order)))
        return tracking
    }

    /// When the applied route plan has the order's driver at its next stop (nil without a plan).
    func plannedArrival(of heading: HeadingOrder?) async throws -> Int64? {
        guard let heading, let sql = db.tracedSQL else { return nil }
        return try await HeadingOrder.plannedArrivals(of: [heading], on: sql)[heading.id]
    }

    struct TrailPoint: Sendable {
        var latitude: Double
        var longitude: Double
        var recordedAt: Int64
    }

    /// The route the driver took for an order, at most `limit` points spread evenly over it.
    func trail(_ orderID: OrderID, for principal: Principal, limit: Int = 2_000) async throws -> [TrailPoint] {
        _ = try await Orders(services: services, db: db, logger: logger).visibleOrder(orderID, to: principal)
        guard let sql = db.tracedSQL else { return [] }
        let rows = try await sql.select().columns("latitude", "longitude", "recorded_at").from("order_positions")
            .where("order_id", .equal, SQLBind(orderID)).orderBy("recorded_at").all()
        let points = try rows.map { row in
            TrailPoint(latitude: try row.decode(column: "latitude", as: Double.self), longitude: try row.decode(column: "longitude", as: Double.self),
                       recordedAt: try row.decode(column: "recorded_at", as: Int64.self))
        }
        guard points.count > limit else { return points }
        let step = Double(points.count - 1) / Double(limit - 1)
        return (0..<limit).map { points[Int((Double($0) * step).rounded())] }
    }

    struct FleetEntry: Sendable {
        var driver: User
        /// The driver's id (`driver`'s, read once).
        var driverID: UserID
        var state: DriverState?
        /// Orders assigned, accepted or in transit.
        var load: Int
        var distanceToPickupMeters: Int?
    }

    /// Every active driver with duty, position (on duty only), load and, given an order, the
    /// distance to its pickup: what a dispatcher needs to choose.
    func fleet(nearOrder orderID: OrderID?, by principal: Principal) async throws -> [FleetEntry] {
        try principal.require(.dispatch)
        guard let sql = db.tracedSQL else { return [] }
        var pickup: Coordinate?
        if let orderID {
            guard let order = try await Order.find(orderID, on: db) else { throw WaybillError.invalidParameter("orderId", "not_found") }
            pickup = order.pickup.coordinate
        }
        // The fleet: accounts whose primary role is driver (a manager's is manager), able to drive now.
        let drivers = try await User.query(on: db).filter(\.$role == .driver).sort(\.$firstName).all()
            .filter { try $0.caller.may(.drive) }
        let states = try await sql.select().columns(DriverState.columns.map { SQLIdentifier($0) }).from("driver_states").all()
            .map(DriverState.init(row:))
        var byDriver = Dictionary(uniqueKeysWithValues: states.map { ($0.driverID, $0) })
        let loads = try await sql.select().column("driver_id").column(SQLFunction("COUNT", args: SQLLiteral.all), as: "n").from("orders")
            .where("status", .in, OrderStatus.driverListStatuses.map(\.rawValue))
            .where("driver_id", .isNot, SQLLiteral.null).groupBy("driver_id").all()
        var loadByDriver: [UserID: Int] = [:]
        for row in loads { loadByDriver[UserID(rawValue: try row.decode(column: "driver_id", as: UUID.self))] = Int(try row.decode(column: "n", as: Int64.self)) }
        // Managers on duty drive too.
        let onDutyManagers = states.filter(\.onDuty).map(\.driverID)
        var people = drivers
        if !onDutyManagers.isEmpty {
            people += try await User.query(on: db).filter(\.$role == .manager).filter(\.$id ~~ onDutyManagers).all()
                .filter { try $0.caller.may(.drive) }
        }
        let entries = try people.map { driver in
            let id = try driver.storedID
            var state = byDriver.removeValue(forKey: id)
            if state?.onDuty == false { state?.position = nil }
            return FleetEntry(driver: driver, driverID: id, state: state, load: loadByDriver[id] ?? 0, distanceToPickupMeters: nil)
        }
        return Self.ranked(entries, pickup: pickup)
    }

    /// The fleet with each driver's distance to `pickup`, in `DispatchPolicy`'s order: the list a
    /// dispatcher chooses from, the same in the API and on the board.
    static func ranked(_ entries: [FleetEntry], pickup: Coordinate?) -> [FleetEntry] {
        var byID: [UserID: FleetEntry] = [:]
        let candidates = entries.map { entry -> DriverCandidate in
            var entry = entry
            entry.distanceToPickupMeters = nil
            if let position = entry.state?.position, let pickup {
                entry.distanceToPickupMeters = Int(position.coordinate.distance(to: pickup).rounded())
            }
            byID[entry.driverID] = entry
            return DriverCandidate(id: entry.driverID, name: entry.driver.displayName, onDuty: entry.state?.onDuty == true,
                                   load: entry.load, distanceToPickupMeters: entry.distanceToPickupMeters)
        }
        return DispatchPolicy.rank(candidates).compactMap { byID[$0.id] }
    }

    // MARK: Tracking links

    /// 144 random bits, base64url: the link's only secret, unrelated to the order's id.
    static func newTrackingToken() -> String {
        Base64URL.encode(Randomness.bytes(18))
    }

    static func isWellFormedToken(_ token: String) -> Bool {
        token.count == 24 && token.utf8.allSatisfy { c in
            (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || c == 0x2D || c == 0x5F
        }
    }

    func trackingURL(_ token: String) -> String { services.config.publicURL + WebRoutes.trackingPage(token) }

    /// A new link for the order; the old one stops working at once (viewers are let go).
    func renewLink(_ orderID: OrderID, by principal: Principal) async throws -> Order {
        try await changeLink(orderID, to: Self.newTrackingToken(), by: principal)
    }

    func revokeLink(_ orderID: OrderID, by principal: Principal) async throws -> Order {
        try await changeLink(orderID, to: nil, by: principal)
    }

    private func changeLink(_ orderID: OrderID, to token: String?, by principal: Principal) async throws -> Order {
        let orders = Orders(services: services, db: db, logger: logger)
        return try await db.writeTransaction(services) { db in
            let order = try await orders.visibleOrder(orderID, to: principal, on: db)
            try orders.check(token == nil ? .revokeTrackingLink : .renewTrackingLink, on: order, by: principal)
            order.trackingToken = token
            try await order.save(on: db)
            try await LiveLog.publishControl(LiveRow.trackingChanged, topic: LiveLog.orderTopic(orderID), data: ["token": token ?? ""], on: db)
            return order
        }
    }

    struct PublicView: Sendable {
        var order: Order
        var timeline: [(status: OrderStatus, at: Int64)]
        var driverFirstName: String?
        var position: PositionReport?
        var eta: ArrivalEstimate?
    }

    /// The order behind a tracking link, for someone without an account. Every look-up takes a
    /// token from the address's miss budget *before* the database is asked, and a hit gives it
    /// back: so an address that has guessed too often is refused whatever it asks next, and parallel
    /// guesses cannot outrun the count. 404 for unknown links, 429 once the budget is spent.
    static func lookUp(token: String, clientAddress: String, services: WaybillServices, db: any Database) async throws -> Order {
        if let wait = services.trackingMissLimiter.take(clientAddress) {
            throw WaybillError.tooManyRequests(retryAfter: wait)
        }
        guard isWellFormedToken(token), let order = try await Order.query(on: db).filter(\.$trackingToken == token).first() else {
            throw WaybillError.notFound
        }
        services.trackingMissLimiter.giveBack(clientAddress)
        return order
    }

    /// What anyone holding the link sees: status, the stages with their times, the ETA and, while
    /// the parcel is on its way, where the driver is, with the driver's first name. Nothing else.
    func publicView(token: String, clientAddress: String) async throws -> PublicView {
        let order = try await Self.lookUp(token: token, clientAddress: clientAddress, services: services, db: db)
        let orderID = try order.storedID
        let events = try await OrderEvent.query(on: db).filter(\.$orderID == orderID).sort(\.$id).all()
        var view = PublicView(order: order, timeline: events.compactMap { event in event.status.map { ($0, event.at) } })
        let shown = PublicTrackingView.visible(in: order.status)
        if let driverID = order.driverID {
            if shown.driverFirstName { view.driverFirstName = try await User.find(driverID, on: db)?.firstName }
            if shown.eta || shown.position, let state = try await DriverState.find(driverID, on: db), state.onDuty,
               let position = state.position {
                if shown.position { view.position = position }
                if shown.eta {
                    view.eta = ArrivalEstimate.respectingPlan(Self.estimate(for: order, from: position, speedKmh: services.config.etaAverageSpeedKmh),
                                                              plannedArrival: try await plannedArrival(of: HeadingOrder(order)))
                }
            }
        }
        return view
    }
}
