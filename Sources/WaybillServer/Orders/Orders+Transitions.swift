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
    ///
    /// The action moves the shipment's current leg through its own state machine, records the
    /// hand-over it amounts to (a pickup, a delivery) with `proof`, and the shipment's status (the
    /// order's `status` column) becomes `ShipmentStatus.derive` of its legs. `receipt`, the step's
    /// idempotency key (`once`), lands in the same transaction.
    @discardableResult
    func transition(_ id: OrderID, _ action: OrderAction, by principal: Principal?, proof: HandOverProof = HandOverProof(),
                    receipt: StepReceipt? = nil,
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
                let awaitingPayment = order.paymentStatus == .awaiting
                order.status = next
                order.updatedAt = UnixTime.nowMillis
                let event = try await change(order, db)
                try await Self.moveLegs(of: order, action, by: principal, capacities: capacities, awaitingPayment: awaitingPayment,
                                        proof: proof, on: db)
                // The receiver's copy of their code lives only while the parcel is on its way.
                if order.status != .inTransit { order.recipientCodeSealed = nil }
                try await order.save(on: db)
                try await receipt?.create(on: db)
                try await events.record(event, on: db)
            }
            return order
        }
    }

    /// Moves the leg the order action is for (`ShipmentRoute.actingLeg`: the carrier's leg, or for
    /// cancelling the first unfinished one), records the hand-over with its proof, and derives the
    /// shipment's status from its legs. A pickup from a counter ends the counter's leg too.
    /// `awaitingPayment`: whether it awaited payment before the action.
    static func moveLegs(of order: Order, _ action: OrderAction, by principal: Principal?, capacities: Set<OrderCapacity>,
                         awaitingPayment: Bool, proof: HandOverProof, on db: any Database) async throws {
        let orderID = try order.storedID
        let legs = try await Leg.query(on: db).filter(\.$orderID == orderID).sort(\.$position).all()
        guard !legs.isEmpty else { throw Abort(.internalServerError, reason: "shipment \(orderID) has no legs") }
        let states = legs.map(\.state)
        let index = action.legAction.flatMap { ShipmentRoute.actingLeg(for: $0, in: states) }
            ?? legs.firstIndex { !$0.status.isFinal } ?? legs.count - 1
        let leg = legs[index]
        if let legAction = action.legAction {
            if let wait = ShipmentRoute.counterWait(legAction, at: index, in: states) {
                throw WaybillError.counterWait(wait)
            }
            let decision = ShipmentStatus.decide(legAction, leg: leg.state, awaitingPayment: awaitingPayment,
                                                 as: Set(capacities.map(\.legCapacity)))
            guard case .allowed(let status) = decision else {
                throw WaybillError.invalidTransition(order.status, action)
            }
            leg.status = status
            if legAction == .pickUp, let left = ShipmentRoute.counterLeft(byPickUpAt: index, in: states) {
                legs[left].status = .handedOver
                legs[left].updatedAt = order.updatedAt
                try await legs[left].save(on: db)
            }
            // A cancelled shipment's later legs will not happen either.
            if legAction == .cancel {
                for later in legs[(index + 1)...] where !later.status.isFinal {
                    later.status = .cancelled
                    later.updatedAt = order.updatedAt
                    try await later.save(on: db)
                }
            }
            if let kind = HandOverPolicy.kind(of: legAction, legKind: leg.kind, index: index, count: legs.count) {
                let missing = HandOverPolicy.required(kind, carriedBy: leg.kind, recipientCode: order.requireRecipientCode).subtracting(proof.kinds)
                if let first = missing.map(\.rawValue).sorted().first { throw WaybillError.validation("proof", "missing_\(first)") }
                let handOver = HandOver(orderID: orderID, legPosition: leg.position, kind: kind, actorID: principal?.userID, at: order.updatedAt)
                proof.apply(to: handOver)
                try await handOver.create(on: db)
            }
        }
        if leg.kind == .fleet { leg.assigneeID = order.driverID }
        leg.updatedAt = order.updatedAt
        try await leg.save(on: db)
        order.status = ShipmentStatus.derive(awaitingPayment: order.paymentStatus == .awaiting, legs: legs.map(\.state))
    }

    /// Compare-and-set on the version: fails with 409 if another change landed first.
    static func claim(_ order: Order, action: OrderAction, on db: any Database) async throws {
        guard let sql = db.tracedSQL else { throw Abort(.internalServerError) }
        let orderID = try order.storedID
        let rows = try await sql.update(Order.schema)
            .set("version", to: SQLBind(order.version + 1))
            .where("id", .equal, SQLBind(orderID))
            .where("version", .equal, SQLBind(order.version))
            .returning("id")
            .all()
        guard !rows.isEmpty else {
            let now = try await Order.find(orderID, on: db)
            throw WaybillError.invalidTransition(now?.status ?? order.status, action)
        }
        WrittenChanges.note(order: order.id, caches: nil)  // in the transition's transaction
        order.version += 1
    }

    func cancel(_ id: OrderID, reason: String, by principal: Principal) async throws -> Order {
        let reason = reason.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !reason.isEmpty else { throw WaybillError.validation("reason", "required") }
        return try await cancel(id, reason: reason, actor: principal)
    }

    /// The platform withdraws a shipment before pickup, as its owner could cancel it (a ban,
    /// `BanWithdrawal`): refunded if paid.
    func withdraw(_ id: OrderID, reason: String) async throws -> Order {
        try await cancel(id, reason: reason, actor: nil)
    }

    private func cancel(_ id: OrderID, reason: String, actor principal: Principal?) async throws -> Order {
        let order = try await transition(id, .cancel, by: principal) { order, db in
            order.cancellationReason = reason
            // Nothing paid (a plan's included delivery): nothing to refund.
            if order.paymentStatus == .paid { order.paymentStatus = order.priceAmount > 0 ? .refundPending : .void }
            else if order.paymentStatus == .awaiting || order.paymentStatus == .dueOnPickup || order.paymentStatus == .invoiced {
                order.paymentStatus = .void
            }
            try await OrderEvent(orderID: id, type: "cancelled", status: .cancelled, actorID: principal?.userID, note: reason).insert(on: db)
            // Staff cancelling someone else's order is audited (a ban's withdrawals are the ban's line).
            if let principal, principal.userID != order.customerID {
                try await AuditLog.record(.orderCancelled, by: principal.userID, target: .order, id.uuidString,
                                          after: ["status": "cancelled", "payment": order.paymentStatus.rawValue, "customer": order.customerID.uuidString],
                                          reason: reason, on: db)
            }
            if order.paymentStatus == .refundPending {
                try await Outbox.enqueueJob(kind: Outbox.refundKind, payload: id.uuidString, on: db)
            }
            return .orderCancelled(order, actor: principal?.userID, reason: reason)
        }
        if order.paymentStatus == .refundPending {
            // Try at once so the answer usually shows the refund; the outbox retries if this fails.
            try? await refundNow(id)
            return try await Order.find(id, on: db) ?? order
        }
        return order
    }
}
