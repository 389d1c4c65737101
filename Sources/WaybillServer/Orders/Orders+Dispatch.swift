import Crypto
import Fluent
import Foundation
import SQLKit
import Vapor
import WaybillCore

/// Dispatch: giving an order to a driver, or taking it from one for another.
extension Orders {
    func assign(_ id: OrderID, to driverID: UserID, reassign: Bool = false, by principal: Principal) async throws -> Order {
        try principal.require(.dispatch)
        guard let driver = try await User.find(driverID, on: db),
              DispatchPolicy.mayCarry(assignee: driver.caller, disabled: driver.isBanned, assignedBy: principal.caller) else {
            throw WaybillError.validation("driverId", "not_an_active_driver")
        }
        return try await transition(id, reassign ? .reassign : .assign, by: principal) { order, db in
            let previous = order.driverID
            order.driverID = driverID
            order.failureReason = nil
            order.failureNote = nil
            try await OrderEvent(orderID: order.id!, type: reassign ? "reassigned" : "assigned", status: .assigned,
                                 // The timeline is read by the customer too, who knows the driver by first name.
                                 actorID: principal.userID, note: driver.firstName).create(on: db)
            return .orderAssigned(order, driver: driver, previousDriverID: previous, actor: principal.userID)
        }
    }
}

extension Orders {
    /// The dispatch board: every order in one of its columns (`DispatchColumn`), oldest first, with
    /// the people its cards name. Dispatchers only.
    func dispatchBoard(by principal: Principal) async throws -> (orders: [Order], people: [UserID: User]) {
        try principal.require(.dispatch)
        let open = try await Order.query(on: db).filter(\.$status ~~ DispatchColumn.allCases.flatMap(\.statuses)).sort(\.$createdAt).all()
        var ids = Set(open.map(\.customerID))
        for order in open { if let driver = order.driverID { ids.insert(driver) } }
        guard let sql = db as? any SQLDatabase else { throw Abort(.internalServerError) }
        return (open, try await Self.people(Array(ids), on: sql))
    }
}
