import Crypto
import Fluent
import Foundation
import SQLKit
import Vapor
import WaybillCore

/// Changing orders: the one way through the state machine, and cancelling.
extension Orders {
    // MARK: Changing orders

    /// Applies `action` in one transaction, as the shipment's one decision (`ShipmentRules.decide`)
    /// answers it: the caller must see the order (else 404), have a capacity allowed to act (else 403)
    /// and find it in a status that allows it (else 409 with the current status), a counter beside the
    /// leg must be ready (409), and the hand-over must carry its proof (422). The change lands only if
    /// nobody changed the order since it was read (a version check), so of two managers assigning at
    /// once one wins. `change` applies the action to the order's own fields and returns the one
    /// `DomainEvent` it amounts to, which is recorded in the same transaction (its subscribers tell
    /// people and the live channel).
    ///
    /// The decision's events are written here: each leg it moved, the hand-over it made with
    /// `proof`, and the shipment's status (the order's `status` column), derived from the legs.
    /// `receipt`, the step's idempotency key (`once`), lands in the same transaction.
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
            let orderID = try order.storedID
            let legs = try await Leg.query(on: db).filter(\.$orderID == orderID).sort(\.$position).all()
            guard !legs.isEmpty else { throw Abort(.internalServerError, reason: "shipment \(orderID) has no legs") }
            let decision = try Self.decide(action, on: Self.shipment(order, legs), by: ShipmentActor(capacities), proof: proof.kinds)
            try await Self.claim(order, action: action, on: db)
            order.status = decision.next.status
            order.updatedAt = UnixTime.nowMillis
            let event = try await change(order, db)
            try await Self.write(decision, of: order, legs: legs, by: principal, proof: proof, on: db)
            // The receiver's copy of their code lives only while the parcel is on its way.
            if order.status != .inTransit { order.recipientCodeSealed = nil }
            try await order.save(on: db)
            try await receipt?.create(on: db)
            try await events.record(event, on: db)
            return order
        }
    }

    /// The shipment as its rules see it, from the order row and its legs.
    static func shipment(_ order: Order, _ legs: [Leg]) throws -> ShipmentState {
        ShipmentState(id: try order.storedID, awaitingPayment: order.paymentStatus == .awaiting,
                 legs: legs.map { ShipmentState.Leg($0.kind, $0.status, assignee: $0.assigneeID, counter: $0.counterID) },
                 requireRecipientCode: order.requireRecipientCode)
    }

    /// `ShipmentRules.decide` for an order action, its refusal as the API's error. Assigning names
    /// its driver in `change` (the order's `driverID`), which `write` gives the fleet leg.
    static func decide(_ action: OrderAction, on shipment: ShipmentState, by actor: ShipmentActor, proof: Set<ProofKind>) throws -> ShipmentDecision {
        switch ShipmentRules.decide(ShipmentCommand(action, driver: ShipmentCommand.anyDriver), on: shipment, by: actor, proof: proof) {
        case .success(let decision): return decision
        case .failure(.notFound): throw WaybillError.notFound
        case .failure(.forbidden): throw WaybillError.forbidden
        case .failure(.wrongStatus(let status)): throw WaybillError.invalidTransition(status, action)
        case .failure(.counterWait(let wait)): throw WaybillError.counterWait(wait)
        case .failure(.missingProof(let kind)): throw WaybillError.validation("proof", "missing_\(kind.rawValue)")
        case .failure(.desk): throw WaybillError.invalidTransition(shipment.status, action)
        }
    }

    /// Writes what `decision` did: the legs it moved, the fleet leg's driver (the order's), the
    /// hand-over it made with `proof`; and the order's status, derived from the legs.
    static func write(_ decision: ShipmentDecision, of order: Order, legs: [Leg], by principal: Principal?, proof: HandOverProof,
                      on db: any Database) async throws {
        let orderID = try order.storedID
        var touched = Set<Int>()
        for case .legMoved(let index, _, let to) in decision.events {
            legs[index].status = to
            touched.insert(index)
        }
        // The leg the action was on: the first one it moved or assigned (a reassignment moves none;
        // the counter a pickup leaves comes after the driver's leg).
        let acting = decision.events.lazy.compactMap { event -> Int? in
            switch event {
            case .legMoved(let index, _, _), .assigned(let index, _, _): index
            default: nil
            }
        }.first
        if let acting, legs[acting].kind == .fleet, legs[acting].assigneeID != order.driverID {
            legs[acting].assigneeID = order.driverID
            touched.insert(acting)
        }
        for index in touched.sorted() {
            legs[index].updatedAt = order.updatedAt
            try await legs[index].save(on: db)
        }
        if let (kind, index) = decision.handOver {
            let handOver = HandOver(orderID: orderID, legPosition: legs[index].position, kind: kind, actorID: principal?.userID, at: order.updatedAt)
            proof.apply(to: handOver)
            try await handOver.create(on: db)
        }
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
