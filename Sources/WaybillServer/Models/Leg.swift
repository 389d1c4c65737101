import Fluent
import Foundation
import WaybillCore

/// One leg of a shipment: from, to, its window or booked slot, who carries it and where it is.
/// Its status moves only through `LegStateMachine` (WaybillCore); the shipment's status (the
/// order's `status` column, kept for the lists) is `ShipmentStatus.derive` of its legs, written in
/// the same transaction.
final class Leg: Model, @unchecked Sendable {
    static let schema = "legs"

    @ID(custom: "id", generatedBy: .database) var id: Int?
    @Field(key: "order_id") var orderID: OrderID
    /// 0 for the first leg; the legs of a shipment are numbered without gaps.
    @Field(key: "position") var position: Int
    @Field(key: "kind") var kind: LegKind
    @Field(key: "status") var status: LegStatus
    @Group(key: "from") var from: PlaceColumns
    @Group(key: "to") var to: PlaceColumns
    /// When the leg should happen (Unix ms), if agreed.
    @OptionalField(key: "window_start") var windowStart: Int64?
    @OptionalField(key: "window_end") var windowEnd: Int64?
    /// A booked pickup or delivery slot (timeslots), when there is one.
    @OptionalField(key: "slot_id") var slotID: String?
    /// An outside carrier's code (`dhl`, `swiss_post`, …) and its tracking number.
    @OptionalField(key: "carrier_code") var carrierCode: String?
    @OptionalField(key: "tracking_number") var trackingNumber: String?
    /// Who carries it: the fleet driver or the traveller.
    @OptionalField(key: "assignee_id") var assigneeID: UserID?
    /// The reception counter holding the parcel (a counter leg).
    @OptionalField(key: "counter_id") var counterID: String?
    @Field(key: "created_at") var createdAt: Int64
    @Field(key: "updated_at") var updatedAt: Int64

    init() {}

    var databaseFields: [any AnyDatabaseProperty] {
        [$id, $orderID, $position, $kind, $status, $from, $to, $windowStart, $windowEnd, $slotID, $carrierCode,
         $trackingNumber, $assigneeID, $counterID, $createdAt, $updatedAt]
    }

    var properties: [any AnyProperty] { databaseFields }

    var state: LegState { LegState(kind, status) }

    /// The leg as the shipment's rules see it.
    var rule: ShipmentState.Leg { ShipmentState.Leg(kind, status, assignee: assigneeID, counter: counterID) }

    /// The one leg of a new courier order: a fleet driver from its pickup to its drop-off, waiting
    /// for dispatch.
    static func fleet(for order: Order) throws -> Leg {
        let leg = Leg()
        leg.orderID = try order.storedID
        leg.position = 0
        leg.kind = .fleet
        leg.status = .open
        leg.from.address = order.pickup
        leg.to.address = order.dropoff
        leg.assigneeID = order.driverID
        leg.createdAt = order.createdAt
        leg.updatedAt = order.updatedAt
        return leg
    }

    /// A new shipment's legs: its fleet leg, with a counter leg before it when the sender drops the
    /// parcel at a counter and one after it when the receiver collects it at one (the order's pickup
    /// or drop-off is then that counter's address).
    static func route(for order: Order, counters: CounterChoice) throws -> [Leg] {
        var legs: [Leg] = []
        func counter(_ id: String, at place: Address) throws -> Leg {
            let leg = Leg()
            leg.orderID = try order.storedID
            leg.kind = .counter
            leg.status = .open
            leg.from.address = place
            leg.to.address = place
            leg.counterID = id
            leg.createdAt = order.createdAt
            leg.updatedAt = order.updatedAt
            return leg
        }
        if let id = counters.dropOffID { legs.append(try counter(id, at: order.pickup)) }
        legs.append(try fleet(for: order))
        if let id = counters.collectionID { legs.append(try counter(id, at: order.dropoff)) }
        for (position, leg) in legs.enumerated() { leg.position = position }
        return legs
    }
}

/// A hand-over: the parcel changed hands (pickup, counter drop-off, leg to leg, delivery, the
/// receiver's own confirmation), with its proof, who and when. Never changed or deleted.
final class HandOver: Model, @unchecked Sendable {
    static let schema = "hand_overs"

    @ID(custom: "id", generatedBy: .database) var id: Int?
    @Field(key: "order_id") var orderID: OrderID
    /// The leg it ends or starts (its position).
    @Field(key: "leg_position") var legPosition: Int
    @Field(key: "kind") var kind: HandOverKind
    /// Who did it: the driver, the traveller, counter staff, the receiver confirming receipt.
    @OptionalField(key: "actor_id") var actorID: UserID?
    @Field(key: "at") var at: Int64
    // The proof.
    @OptionalField(key: "signature_file_id") var signatureFileID: FileID?
    @OptionalField(key: "photo_file_id") var photoFileID: FileID?
    /// The name the person who signed gave.
    @OptionalField(key: "signed_by") var signedBy: String?
    /// The other side's one-time code was checked.
    @Field(key: "code_checked") var codeChecked: Bool
    /// The parcel's QR label as scanned.
    @OptionalField(key: "qr_code") var qrCode: String?
    /// The outside carrier's event that proves it.
    @OptionalField(key: "carrier_event") var carrierEvent: String?
    /// At a counter: the label's reference as the staff typed it (instead of a scan).
    @OptionalField(key: "typed_reference") var typedReference: String?

    /// Listed so Fluent does not find them by reflection on every save and read.
    var properties: [any AnyProperty] { [$id, $orderID, $legPosition, $kind, $actorID, $at, $signatureFileID, $photoFileID, $signedBy, $codeChecked, $qrCode, $carrierEvent, $typedReference] }

    init() {}

    init(orderID: OrderID, legPosition: Int, kind: HandOverKind, actorID: UserID?, at: Int64 = UnixTime.nowMillis) {
        self.orderID = orderID
        self.legPosition = legPosition
        self.kind = kind
        self.actorID = actorID
        self.at = at
        self.codeChecked = false
    }

    /// Its proof.
    var proof: HandOverProof {
        HandOverProof(signatureFileID: signatureFileID, photoFileID: photoFileID, signedBy: signedBy, codeChecked: codeChecked,
                      qrCode: qrCode, carrierEvent: carrierEvent)
    }
}

/// The proof that comes with a step, known before its transaction (files are stored first).
struct HandOverProof: Sendable {
    var signatureFileID: FileID?
    var photoFileID: FileID?
    var signedBy: String?
    var codeChecked = false
    var qrCode: String?
    var carrierEvent: String?
    /// At a counter's desk: the label's reference typed from the label in the staff's hands
    /// (`CounterDesk.proof`: it stands for a scan).
    var typedReference: String?

    var kinds: Set<ProofKind> {
        var kinds: Set<ProofKind> = []
        if signatureFileID != nil { kinds.insert(.signature) }
        if photoFileID != nil { kinds.insert(.photo) }
        if codeChecked { kinds.insert(.code) }
        if qrCode != nil || typedReference != nil { kinds.insert(.qrScan) }
        if carrierEvent != nil { kinds.insert(.carrierEvent) }
        return kinds
    }

    func apply(to handOver: HandOver) {
        handOver.signatureFileID = signatureFileID
        handOver.photoFileID = photoFileID
        handOver.signedBy = signedBy
        handOver.codeChecked = codeChecked
        handOver.qrCode = qrCode
        handOver.carrierEvent = carrierEvent
        handOver.typedReference = typedReference
    }
}
