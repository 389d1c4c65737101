import Fluent
import Foundation
import Vapor
import WaybillCore

/// A driver's day: duty, the orders still to do in the order to do them, and those finished today.
struct DriverDay: Sendable {
    var state: DriverState?
    var todo: [OrderRecord]
    var done: [OrderRecord]
    /// Per order, when the applied route plan has the driver at its next stop (Unix milliseconds).
    var plannedArrival: [OrderID: Int64] = [:]
    /// Per order, its booked (or waiting) timeslots, in time order.
    var slots: [OrderID: [SlotBookingView]] = [:]
}

extension Orders {
    /// The caller's own day; "today" starts at midnight in the display time zone.
    func driverDay(for principal: Principal) async throws -> DriverDay {
        try principal.require(.drive)
        let startOfDay = Self.startOfToday(services.config.displayTimeZone)
        let open = try await Order.query(on: db).filter(\.$driverID == principal.userID)
            .filter(\.$status ~~ OrderStatus.driverListStatuses).all()
        let finished = try await Order.query(on: db).filter(\.$driverID == principal.userID)
            .filter(\.$status ~~ OrderStatus.allCases.filter(\.endsDriversWork)).filter(\.$updatedAt >= startOfDay)
            .sort(\.$updatedAt, .descending).all()
        // The applied plan's order, where there is one; its arrival at each order's next stop.
        let stops = try await RoutePlans(services: services, db: db, logger: logger).driverRoute(for: principal)
        var arrival: [OrderID: Int64] = [:]
        for stop in stops where arrival[stop.orderID] == nil { arrival[stop.orderID] = stop.arrival }
        let sorted = try DriverDayPolicy.sorted(open, status: \.status, createdAt: \.createdAt).map { (order: $0, id: try $0.storedID) }
        let ordered = DriverDayPolicy.followingPlan(sorted, plannedOrder: stops.map(\.orderID), id: \.id).map(\.order)
        return DriverDay(state: try await DriverState.find(principal.userID, on: db),
                         todo: try await summaries(ordered.map(OrderRow.init), for: principal),
                         done: try await summaries(finished.map(OrderRow.init), for: principal), plannedArrival: arrival,
                         slots: try await Timeslots.live(for: open.compactMap(\.id), on: db))
    }

    static func startOfToday(_ zone: TimeZone) -> Int64 {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        return Int64(calendar.startOfDay(for: UnixTime.now).timeIntervalSince1970 * 1000)
    }
}
