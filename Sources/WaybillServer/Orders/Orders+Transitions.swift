import Crypto
import Fluent
import Foundation
import SQLKit
import Vapor
import WaybillCore

/// Changing orders: the one way through the state machine, and cancelling.
extension Orders {
    // MARK: Changing orders

    /// Applies `action` through the state machine in one transaction: the caller must see the
    /// order (else 404), have a capacity allowed to act (else 403) and find it in a status that
    /// allows it (else 409 with the current status). The change lands only if nobody changed the
    /// order since it was read (a version check), so of two managers assigning at once one wins.
    /// `change` applies the action and returns the one `DomainEvent` it amounts to, which is
    /// recorded in the same transaction (its subscribers tell people and the live channel).
    @discardableResult
    func transition(_ id: OrderID, _ action: OrderAction, by principal: Principal?,
                    change: @escaping @Sendable (Order, any Database) async throws -> DomainEvent) async throws -> Order {
        let orders = self
        let events = services.events
        return try await transaction { db in
            guard let order = try await Order.find(id, on: db) else { throw WaybillError.notFound }
            let capacities: Set<OrderCapacity> = principal.map { orders.capacities(of: $0, for: order) } ?? [.system]
            if capacities.isEmpty { throw WaybillError.notFound }
            switch OrderStateMachine.decide(action, from: order.status, as: capacities) {
            case .forbidden:
                throw WaybillError.forbidden
            case .wrongStatus(let status):
                throw WaybillError.invalidTransition(status, action)
            case .allowed(let next):
                try await Self.claim(order, action: action, on: db)
                order.status = next
                order.updatedAt = UnixTime.nowMillis
                let event = try await change(order, db)
                try await order.save(on: db)
                try await events.record(event, on: db)
            }
            return order
        }
    }

    /// Compare-and-set on the version: fails with 409 if another change landed first.
    static func claim(_ order: Order, action: OrderAction, on db: any Database) async throws {
        guard let sql = db as? any SQLDatabase else { throw Abort(.internalServerError) }
        let rows = try await sql.update(Order.schema)
            .set("version", to: SQLBind(order.version + 1))
            .where("id", .equal, SQLBind(order.id!))
            .where("version", .equal, SQLBind(order.version))
            .returning("id")
            .all()
        guard !rows.isEmpty else {
            let now = try await Order.find(order.id!, on: db)
            throw WaybillError.invalidTransition(now?.status ?? order.status, action)
        }
        order.version += 1
    }

    func cancel(_ id: OrderID, reason: String, by principal: Principal) async throws -> Order {
        let reason = reason.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !reason.isEmpty else { throw WaybillError.validation("reason", "required") }
        let order = try await transition(id, .cancel, by: principal) { order, db in
            order.cancellationReason = reason
            if order.paymentStatus == .paid { order.paymentStatus = .refundPending }
            else if order.paymentStatus == .awaiting || order.paymentStatus == .dueOnPickup || order.paymentStatus == .invoiced {
                order.paymentStatus = .void
            }
            try await OrderEvent(orderID: order.id!, type: "cancelled", status: .cancelled, actorID: principal.userID, note: reason).create(on: db)
            if order.paymentStatus == .refundPending {
                try await Outbox.enqueueJob(kind: Outbox.refundKind, payload: order.id!.uuidString, on: db)
            }
            return .orderCancelled(order, actor: principal.userID, reason: reason)
        }
        if order.paymentStatus == .refundPending {
            // Try at once so the answer usually shows the refund; the outbox retries if this fails.
            try? await refundNow(id)
            return try await Order.find(id, on: db) ?? order
        }
        return order
    }
}
