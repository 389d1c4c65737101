import Fluent
import SQLKit
import Vapor
import WaybillCore

/// `delivery_samples`: one per delivered parcel of another carrier or Waybill shipment.
final class DeliverySampleRecord: Model, @unchecked Sendable {
    static let schema = "delivery_samples"

    @ID(custom: "subject_id", generatedBy: .user) var id: UUID?
    /// `parcel` or `shipment`.
    @Field(key: "kind") var kind: String
    /// Whose parcel (the owner) or shipment (the sender): for their own statistics.
    @Field(key: "owner_id") var ownerID: UserID
    @Field(key: "carrier") var carrier: String
    @OptionalField(key: "origin") var origin: String?
    @OptionalField(key: "destination") var destination: String?
    @Field(key: "first_scan_at") var firstScanAt: Int64
    @Field(key: "delivered_at") var deliveredAt: Int64
    @Field(key: "first_attempt") var firstAttempt: Bool

    var properties: [any AnyProperty] { [$id, $kind, $ownerID, $carrier, $origin, $destination, $firstScanAt, $deliveredAt, $firstAttempt] }

    init() {}

    var sample: DeliverySample {
        DeliverySample(carrier: carrier, origin: origin, destination: destination, firstScanAt: firstScanAt, deliveredAt: deliveredAt,
                       firstAttempt: firstAttempt)
    }

    /// Records it once (a parcel delivered twice at its carrier counts once).
    static func record(_ sample: DeliverySample, subject: UUID, kind: String, owner: UserID, on db: any Database) async throws {
        guard try await DeliverySampleRecord.find(subject, on: db) == nil else { return }
        let row = DeliverySampleRecord()
        row.id = subject
        row.kind = kind
        row.ownerID = owner
        row.carrier = sample.carrier
        row.origin = sample.origin
        row.destination = sample.destination
        row.firstScanAt = sample.firstScanAt
        row.deliveredAt = sample.deliveredAt
        row.firstAttempt = sample.firstAttempt
        try await row.create(on: db)
    }
}

/// Writes a sample when a parcel or a shipment is delivered (a subscriber of the domain events).
enum DeliveryStatsSubscriber {
    static func handle(_ event: DomainEvent, on db: any Database) async throws {
        switch event {
        case .parcelChanged(let parcel, let old, _) where parcel.status == .delivered && old != .delivered:
            let events = try await ParcelEventRecord.query(on: db).filter(\.$parcelID == parcel.id!).all().map(\.event)
            guard let sample = DeliverySample.from(carrier: parcel.carrier, events: events) else { return }
            try await DeliverySampleRecord.record(sample, subject: parcel.id!.rawValue, kind: "parcel", owner: parcel.ownerID, on: db)
        case .orderDelivered(let order, _):
            let events = try await OrderEvent.query(on: db).filter(\.$orderID == order.id!).sort(\.$at).all()
            let delivered = events.last { $0.status == .delivered }?.at ?? UnixTime.nowMillis
            // The first scan of Waybill's own fleet: the pickup.
            guard let pickedUp = events.first(where: { $0.status == .inTransit })?.at, pickedUp <= delivered else { return }
            let sample = DeliverySample(carrier: "waybill", origin: order.pickup.country, destination: order.dropoff.country,
                                        firstScanAt: pickedUp, deliveredAt: delivered, firstAttempt: !events.contains { $0.status == .failed })
            try await DeliverySampleRecord.record(sample, subject: order.id!.rawValue, kind: "shipment", owner: order.customerID, on: db)
        default:
            break
        }
    }
}

/// The statistics per carrier: the public board (groups of at least five, the last 365 days) and
/// each person's own (their parcels and shipments).
struct DeliveryStats {
    let db: any Database

    /// Groups smaller than this are not on the public board (a group of one is one person's parcel).
    static let publicMinimum = 5

    func board(for owner: UserID? = nil) async throws -> (carriers: [DeliveryStatistics.Row], routes: [DeliveryStatistics.Row]) {
        var query = DeliverySampleRecord.query(on: db).filter(\.$deliveredAt >= UnixTime.nowMillis - 365 * 86_400_000)
        if let owner { query = query.filter(\.$ownerID == owner) }
        let samples = try await query.sort(\.$deliveredAt, .descending).limit(50_000).all().map(\.sample)
        let minimum = owner == nil ? Self.publicMinimum : 1
        return (DeliveryStatistics.rows(samples, by: .carrier, minimumCount: minimum),
                DeliveryStatistics.rows(samples, by: .route, minimumCount: minimum))
    }
}
