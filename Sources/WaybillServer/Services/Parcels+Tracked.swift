import Fluent
import Vapor
import WaybillCore

/// One line of the list of everything a person follows: a parcel of another carrier (theirs or
/// shared with them) or one of Waybill's own shipments (sent, or addressed to them).
struct TrackedItem: Sendable {
    enum Kind: String, Sendable, CaseIterable { case parcel, shipment }
    enum Direction: String, Sendable, CaseIterable { case sent, incoming }

    var kind: Kind
    var id: UUID
    /// The parcel's name, or nil.
    var name: String?
    /// The tracking number, or the shipment's reference.
    var number: String
    /// The carrier's code; `waybill` for Waybill's own shipments.
    var carrier: String
    var status: ParcelStatus
    var updatedAt: Int64
    var estimatedDelivery: Int64?
    var sharedBy: String?
    /// Shipments: sent by the caller, or coming to them.
    var direction: Direction?
    /// Shipments: where it goes (sent) or comes from (incoming).
    var place: String?
}

extension Parcels {
    /// Everything the caller follows, most recently changed first, through the same services and
    /// policies as each list alone (`Parcels.list`, `Orders.list` with the sent and incoming boxes).
    func tracked(for me: Principal, filter: TrackedFilter) async throws -> [TrackedItem] {
        var items: [TrackedItem] = try await list(for: me).map { v in
            TrackedItem(kind: .parcel, id: try v.record.storedID.rawValue, name: v.record.name, number: v.record.number, carrier: v.record.carrier,
                        status: v.record.status, updatedAt: v.record.updatedAt, estimatedDelivery: v.record.estimatedDelivery, sharedBy: v.sharedBy)
        }
        let orders = Orders(services: services, db: db, logger: logger)
        for box in [ShipmentBox.sent, .incoming] {
            guard OrderPolicy.listScope(for: me.caller, box: box) != nil else { continue }
            let page = try await orders.list(Orders.ListFilter(limit: 100, box: box), for: me).records
            items += page.map { r in
                TrackedItem(kind: .shipment, id: r.order.id.rawValue, number: r.order.reference, carrier: "waybill",
                            status: ParcelStatus(shipment: r.order.status), updatedAt: r.order.updatedAt,
                            direction: box == .sent ? .sent : .incoming, place: box == .sent ? r.order.dropoff.city : r.order.pickup.city)
            }
        }
        // A shipment one sent to oneself is listed once.
        var seen = Set<UUID>()
        return items.filter { filter.includes($0.status) && seen.insert($0.id).inserted }.sorted { $0.updatedAt > $1.updatedAt }
    }
}
