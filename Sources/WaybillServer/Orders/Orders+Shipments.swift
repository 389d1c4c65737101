import Fluent
import Foundation
import SQLKit
import Vapor
import WaybillCore

/// A shipment as its parties read it: the order, its legs and hand-overs, and the people they name.
struct ShipmentRecord: Sendable {
    var record: OrderRecord
    var legs: [Leg] = []
    var handOvers: [HandOver] = []
    /// The assignees of its legs and whoever did its hand-overs.
    var people: [UserID: PersonRow] = [:]
    /// Its money, as the ledger records it (detail only).
    var ledger: [LedgerEntry] = []
    /// Read with its legs, hand-overs, history and money (one shipment), not as a list entry.
    var detail = false

    /// In which capacities the caller stands to it (`ShipmentParties`' roles, from the order's).
    var roles: Set<ShipmentRole> { Set(record.capacities.compactMap(\.shipmentRole)) }
    var visibility: ShipmentVisibility { ShipmentVisibility.visible(to: roles) }
    var receiptConfirmed: Bool { handOvers.contains { $0.kind == .receipt } }

    /// What the caller may do now: the order's actions, and confirming receipt once.
    var availableActions: [String] {
        var actions = record.actions.map(\.rawValue)
        if Self.mayConfirmReceipt(record, confirmed: receiptConfirmed) { actions.append(OrderSideAction.confirmReceipt.rawValue) }
        return actions
    }

    /// The receiver may confirm receipt now: delivered, and not confirmed yet.
    static func mayConfirmReceipt(_ record: OrderRecord, confirmed: Bool) -> Bool {
        !confirmed && OrderPolicy.allows(.confirmReceipt, status: record.order.status, as: record.capacities)
    }
}

/// Shipments: one box at a time, and one with its legs and hand-overs.
extension Orders {
    func shipment(_ id: OrderID, for principal: Principal) async throws -> ShipmentRecord {
        try await shipment(try await detail(id, for: principal))
    }

    /// The receiver's confirmation of a shipment, if given.
    func receipt(of id: OrderID) async throws -> HandOver? {
        try await HandOver.query(on: db).filter(\.$orderID == id).filter(\.$kind == .receipt).first()
    }

    func shipment(_ record: OrderRecord) async throws -> ShipmentRecord {
        let id = record.order.id
        let legs = try await Leg.query(on: db).filter(\.$orderID == id).sort(\.$position).all()
        let handOvers = try await HandOver.query(on: db).filter(\.$orderID == id).sort(\.$id).all()
        let ids = Set(legs.compactMap(\.assigneeID) + handOvers.compactMap(\.actorID))
        var people: [UserID: PersonRow] = [:]
        if let sql = db.tracedSQL { people = try await Self.people(Array(ids), on: sql) }
        let ledger = try await LedgerRecord.query(on: db).filter(\.$shipmentID == id).sort(\.$at).sort(\.$id).all().map(\.entry)
        return ShipmentRecord(record: record, legs: legs, handOvers: handOvers, people: people, ledger: ledger, detail: true)
    }
}
