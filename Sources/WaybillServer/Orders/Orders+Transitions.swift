import Crypto
import Fluent
import Foundation
import SQLKit
import Vapor
import WaybillCore

/// Changing orders: the one way through the state machine, and cancelling.
extension Orders {
    // MARK: Changing orders

    /// Applies `action` in one transaction through the shipment's one write path
    /// (`ShipmentStore.apply`), as the shipment's one decision (`ShipmentRules.decide`) answers it:
    /// the caller must see the order (else 404), have a capacity allowed to act (else 403) and find
    /// it in a status that allows it (else 409 with the current status), a counter beside the leg
    /// must be ready (409), and the hand-over must carry its proof (422). The change lands only if
    /// nobody changed the order since it was read (a version check), so of two managers assigning at
    /// once one wins. `change` writes what the action means beyond the shipment's legs and status
    /// (its timeline line, payment fields, mails) and returns what happened (`ShipmentFact`), recorded
    /// as one domain event in the same transaction (its subscribers tell people and the live channel).
    /// `receipt`, the step's idempotency key (`once`), lands in the same transaction.
    @discardableResult
    func transition(_ id: OrderID, _ action: OrderAction, by principal: Principal?, proof: HandOverProof = HandOverProof(),
                    receipt: StepReceipt? = nil,
                    change: @escaping @Sendable (Order, any Database) async throws -> ShipmentFact) async throws -> Order {
        try await apply(ShipmentCommand(action, driver: ShipmentCommand.anyDriver), to: id, by: principal, proof: proof, receipt: receipt) { order, _, db in
            try await change(order, db)
        }
    }

    /// `transition` with the shipment's command itself (an assignment names its driver), the
    /// decision given to `change`.
    @discardableResult
    func apply(_ command: ShipmentCommand, to id: OrderID, by principal: Principal?, proof: HandOverProof = HandOverProof(),
               receipt: StepReceipt? = nil,
               change: @escaping @Sendable (Order, ShipmentDecision, any Database) async throws -> ShipmentFact) async throws -> Order {
        let orders = self
        let events = services.events
        do {
            return try await transaction { db in
                try await ShipmentStore.apply(command, to: id, by: principal?.userID, actor: { order in
                    ShipmentActor(principal.map { orders.capacities(of: $0, for: order) } ?? [.system])
                }, proof: proof, events: events, on: db) { order, decision, db in
                    let event = try await change(order, decision, db)
                    try await receipt?.create(on: db)
                    return event
                }
            }
        } catch let refused as ShipmentStore.Refused {
            throw Self.error(refused, command.orderAction ?? .pickup)
        }
    }

    /// A refused command as the API's error.
    static func error(_ refused: ShipmentStore.Refused, _ action: OrderAction) -> WaybillError {
        switch refused.refusal {
        case .notFound: WaybillError.notFound
        case .forbidden: WaybillError.forbidden
        case .wrongStatus(let status): WaybillError.invalidTransition(status, action)
        case .counterWait(let wait): WaybillError.counterWait(wait)
        case .missingProof(let kind): WaybillError.validation("proof", "missing_\(kind.rawValue)")
        case .desk: WaybillError.invalidTransition(refused.status, action)
        }
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
            return .cancelled(actor: principal?.userID, reason: reason)
        }
        if order.paymentStatus == .refundPending {
            // Try at once so the answer usually shows the refund; the outbox retries if this fails.
            try? await refundNow(id)
            return try await Order.find(id, on: db) ?? order
        }
        return order
    }
}
