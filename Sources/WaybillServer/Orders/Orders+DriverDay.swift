import Fluent
import Foundation
import Vapor
import WaybillCore

/// A driver's day: duty, the orders still to do in the order to do them, and those finished today.
struct DriverDay: Sendable {
    var state: DriverState?
    var todo: [OrderRecord]
    var done: [OrderRecord]
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
        return DriverDay(state: try await DriverState.find(principal.userID, on: db),
                         todo: try await summaries(DriverDayPolicy.sorted(open, status: \.status, createdAt: \.createdAt), for: principal),
                         done: try await summaries(finished, for: principal))
    }

    static func startOfToday(_ zone: TimeZone) -> Int64 {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        return Int64(calendar.startOfDay(for: UnixTime.now).timeIntervalSince1970 * 1000)
    }
}
