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
              DispatchPolicy.mayCarry(assignee: driver.caller(id: driverID), disabled: driver.isBanned, assignedBy: principal.caller) else {
            throw WaybillError.validation("driverId", "not_an_active_driver")
        }
        return try await apply(reassign ? .reassign(driver: driverID) : .assign(driver: driverID), to: id, by: principal) { order, decision, db in
            let previous = decision.events.lazy.compactMap { event -> UserID?? in
                if case .assigned(_, _, let previous) = event { previous } else { nil }
            }.first ?? nil
            order.failureReason = nil
            order.failureNote = nil
            try await OrderEvent(orderID: id, type: reassign ? "reassigned" : "assigned", status: .assigned,
                                 // The timeline is read by the customer too, who knows the driver by first name.
                                 actorID: principal.userID, note: driver.firstName).insert(on: db)
            return .assigned(driver: try PersonRow(driver), previousDriverID: previous, actor: principal.userID)
        }
    }
}

extension Orders {
    /// The dispatch board: every order in one of its columns (`DispatchColumn`), oldest first, with
    /// the people its cards name. Dispatchers only.
    /// Each card's actions are the shipment's rules (`actions`): a traveller's shipment is never
    /// offered to a driver.
    func dispatchBoard(by principal: Principal) async throws -> (orders: [Order], people: [UserID: PersonRow], actions: [OrderID: [OrderAction]]) {
        try principal.require(.dispatch)
        let open = try await Order.query(on: db).filter(\.$status ~~ DispatchColumn.allCases.flatMap(\.statuses)).sort(\.$createdAt).all()
        var ids = Set(open.map(\.customerID))
        for order in open { if let driver = order.driverID { ids.insert(driver) } }
        guard let sql = db.tracedSQL else { throw Abort(.internalServerError) }
        let legs = try await Self.legs(of: open.compactMap(\.id), on: sql)
        var actions: [OrderID: [OrderAction]] = [:]
        for order in open {
            let id = try order.storedID
            actions[id] = ShipmentRules.actions(on: ShipmentStore.state(of: order, id: id, legs: legs[id] ?? []),
                                                for: ShipmentActor(capacities(of: principal, for: order)))
        }
        return (open, try await Self.people(Array(ids), on: sql), actions)
    }
}

/// Bulk actions on the board: each order changed on its own by the same rules as one at a time,
/// each in its own transaction, and a result per order (done, or why not).
extension Orders {
    enum BulkAction: Sendable {
        case assign(driver: UserID)
        case cancel(reason: String)
    }

    struct BulkResult: Sendable {
        let id: OrderID
        var order: Order?
        var error: WaybillError?
        var ok: Bool { error == nil }
    }

    func bulk(_ action: BulkAction, _ ids: [OrderID], by principal: Principal) async throws -> [BulkResult] {
        try principal.require(.dispatch)
        var unique: [OrderID] = []
        var seen = Set<OrderID>()
        for id in ids where seen.insert(id).inserted { unique.append(id) }
        guard !unique.isEmpty else { throw WaybillError.validation("orderIds", "required") }
        guard unique.count <= DispatchPolicy.maxBulkOrders else { throw WaybillError.validation("orderIds", "too_many") }
        switch action {
        case .assign(let driver):
            guard let person = try await User.find(driver, on: db),
                  DispatchPolicy.mayCarry(assignee: person.caller(id: driver), disabled: person.isBanned, assignedBy: principal.caller) else {
                throw WaybillError.validation("driverId", "not_an_active_driver")
            }
        case .cancel(let reason):
            guard !reason.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else { throw WaybillError.validation("reason", "required") }
        }
        var results: [BulkResult] = []
        for id in unique {
            do {
                let order: Order
                switch action {
                case .assign(let driver):
                    guard let current = try await Order.find(id, on: db) else { throw WaybillError.notFound }
                    let reassign = DispatchPolicy.assignAction(for: current.status) == .reassign
                    order = try await assign(id, to: driver, reassign: reassign, by: principal)
                case .cancel(let reason):
                    order = try await cancel(id, reason: reason, by: principal)
                }
                results.append(BulkResult(id: id, order: order))
            } catch let error as WaybillError {
                results.append(BulkResult(id: id, order: try? await Order.find(id, on: db), error: error))
            }
        }
        return results
    }
}

extension Orders {
    /// Orders to print labels for, in the order given, with their customers (dispatchers only).
    func labels(_ ids: [OrderID], by principal: Principal) async throws -> [(order: Order, customer: PersonRow?)] {
        try principal.require(.dispatch)
        guard ids.count <= DispatchPolicy.maxBulkOrders else { throw WaybillError.validation("orderIds", "too_many") }
        guard !ids.isEmpty, let sql = db.tracedSQL else { return [] }
        let found = Dictionary(uniqueKeysWithValues: try await Order.query(on: db).filter(\.$id ~~ ids).all().map { (try $0.storedID, $0) })
        let people = try await Self.people(Array(Set(found.values.map(\.customerID))), on: sql)
        return ids.compactMap { found[$0] }.map { ($0, people[$0.customerID]) }
    }
}
