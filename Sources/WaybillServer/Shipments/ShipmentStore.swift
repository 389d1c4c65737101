import Fluent
import Foundation
import SQLKit
import WaybillCore

/// The one write path of a shipment (issue 52): the only code that changes a shipment's legs,
/// hand-overs and status. `place` gives a new shipment its status; `apply` loads a shipment, asks
/// its one decision (`ShipmentRules.decide`), and writes what the decision says, with the caller's
/// own writes (`effect`) and the domain event they amount to, in the caller's transaction. Drivers'
/// steps, dispatch, payments, cancellations, travellers' deliveries and the counter desk all come
/// here; nothing else assigns a shipment's status or moves a leg.
enum ShipmentStore {
    /// A command the shipment's rules refused, with the status the shipment was in. Thrown from
    /// inside the transaction, so nothing of it is written.
    struct Refused: Error {
        let refusal: ShipmentRefusal
        let status: OrderStatus
    }

    /// What the caller writes with an allowed command (its timeline line, a payment's fields, a
    /// mail), given the shipment as the decision left it; what it returns is what happened. It is
    /// recorded last, as a domain event with the shipment as saved (a value), so its subscribers
    /// read the shipment as it now is.
    typealias Effect = @Sendable (Order, ShipmentDecision, any Database) async throws -> ShipmentFact?

    /// A new shipment, not yet stored, with its legs: its status is what the legs and its payment
    /// say (waiting for the payment, or for whoever acts first).
    static func place(_ order: Order, legs: [Leg]) {
        order.status = ShipmentStatus.derive(awaitingPayment: order.paymentStatus == .awaiting, legs: legs.map(\.state))
    }

    /// The shipment `id` as its rules see it, from its order's columns and its legs (`Leg.rule`, or
    /// as a list read them: `Orders.legs(of:)`).
    static func state(of order: some OrderColumns, id: ShipmentID, legs: [ShipmentState.Leg]) -> ShipmentState {
        ShipmentState(id: id, awaitingPayment: order.paymentStatus == .awaiting, legs: legs, requireRecipientCode: order.requireRecipientCode)
    }

    /// Applies `command` to shipment `id` in the caller's transaction `db`:
    /// - loads it (404 as a refusal when there is none) and asks `ShipmentRules.decide` with the
    ///   actor `actor` makes of it and the kinds of `proof`;
    /// - claims its version (of two changes at once, one lands; the other is refused with the
    ///   status it now has);
    /// - sets the status the decision derived, the driver an assignment names, and a delivery's
    ///   facts (who signed, when);
    /// - runs `effect`, then writes the legs that moved and the hand-over with `proof`; the
    ///   receiver's copy of their code goes once the parcel is no longer on its way;
    /// - saves the shipment and records `effect`'s domain event.
    @discardableResult
    static func apply(_ command: ShipmentCommand, to id: ShipmentID, by person: UserID?,
                      actor: @Sendable (Order) -> ShipmentActor, proof: HandOverProof = HandOverProof(),
                      events: DomainEvents, on db: any Database, effect: Effect) async throws -> Order {
        guard let order = try await Order.find(id, on: db) else { throw Refused(refusal: .notFound, status: .cancelled) }
        let legs = try await Leg.query(on: db).filter(\.$orderID == id).sort(\.$position).all()
        // Every shipment is placed with its legs: one without is a fault of the data (500, named).
        guard !legs.isEmpty else { throw ShipmentStoreFault.noLegs(id) }
        let before = order.status
        let decision: ShipmentDecision
        switch ShipmentRules.decide(command, on: state(of: order, id: id, legs: legs.map(\.rule)), by: actor(order), proof: proof.kinds) {
        case .success(let d): decision = d
        case .failure(let refusal): throw Refused(refusal: refusal, status: before)
        }
        guard try await claim(order, on: db) else {
            let now = try await Order.find(id, on: db)?.status ?? before
            throw Refused(refusal: .wrongStatus(now), status: now)
        }
        let now = UnixTime.nowMillis
        order.updatedAt = now
        order.status = decision.next.status
        for case .assigned(let index, let driver, _) in decision.events where legs[index].kind == .fleet {
            // The order's column follows the fleet leg (the lists read it).
            order.driverID = driver
        }
        if decision.handOver?.kind == .delivery { order.signedBy = proof.signedBy }
        if order.status == .delivered, before != .delivered { order.deliveredAt = now }
        let fact = try await effect(order, decision, db)
        try await write(decision, legs: legs, by: person, proof: proof, at: now, on: db)
        // The receiver's copy of their code lives only while the parcel is on its way.
        if order.status != .inTransit { order.recipientCodeSealed = nil }
        try await order.save(on: db)
        if let fact { try await events.record(.shipment(try OrderRow(order), fact), on: db) }
        return order
    }

    /// Writes the legs `decision` moved or gave to someone, and the hand-over it made with `proof`.
    private static func write(_ decision: ShipmentDecision, legs: [Leg], by person: UserID?, proof: HandOverProof, at now: Int64,
                              on db: any Database) async throws {
        var touched = Set<Int>()
        for event in decision.events {
            switch event {
            case .legMoved(let index, _, let to):
                legs[index].status = to
                touched.insert(index)
            case .assigned(let index, let driver, _):
                legs[index].assigneeID = driver
                touched.insert(index)
            default: break
            }
        }
        for index in touched.sorted() {
            legs[index].updatedAt = now
            try await legs[index].save(on: db)
        }
        if let (kind, index) = decision.handOver {
            let handOver = HandOver(orderID: legs[index].orderID, legPosition: legs[index].position, kind: kind, actorID: person, at: now)
            proof.apply(to: handOver)
            try await handOver.create(on: db)
        }
    }

    /// Compare-and-set on the version: false if another change landed first.
    private static func claim(_ order: Order, on db: any Database) async throws -> Bool {
        guard let sql = db.tracedSQL else { throw ShipmentStoreFault.noSQL }
        let orderID = try order.storedID
        let rows = try await sql.update(Order.schema)
            .set("version", to: SQLBind(order.version + 1))
            .where("id", .equal, SQLBind(orderID))
            .where("version", .equal, SQLBind(order.version))
            .returning("id")
            .all()
        guard !rows.isEmpty else { return false }
        WrittenChanges.note(order: order.id, caches: nil)  // in the caller's transaction
        order.version += 1
        return true
    }
}

/// A fault of the data or the set-up, answered 500: a stored shipment with no legs, a database
/// without SQL.
enum ShipmentStoreFault: Error, CustomStringConvertible {
    case noLegs(ShipmentID)
    case noSQL

    var description: String {
        switch self {
        case .noLegs(let id): "shipment \(id) has no legs"
        case .noSQL: "the shipment store needs an SQL database"
        }
    }
}
