/// Every kind of file the server keeps with a shipment (the `order_files` table): one list, which
/// the API's `OrderFile.kind` schema names case by case (`FileKindTests` compares them), so a step
/// that stores a new kind cannot make a shipment unreadable.
public enum ShipmentFileKind: String, CaseIterable, Codable, Sendable {
    /// The recipient's signature at delivery.
    case signature
    /// The carrier's photo at delivery.
    case deliveryPhoto = "delivery_photo"
    /// The sender's photo of the parcel, with the order.
    case parcelPhoto = "parcel_photo"
    /// The receiver's photo of what reached them.
    case receiptPhoto = "receipt_photo"
    /// Counter staff's photo of the parcel as it was checked in.
    case counterPhoto = "counter_photo"
    /// The sender's photo of the damage, with an insurance claim.
    case claimPhoto = "claim_photo"

    /// Whether a viewer who sees this shipment's proofs (`ShipmentVisibility.proofs`) sees a file of
    /// this kind with the shipment. A claim's photos are the claim's: its claimant and the staff who
    /// decide it see them there (`ClaimPolicy.maySee`), not everyone the shipment is shown to.
    public var shownWithShipment: Bool { self != .claimPhoto }
}
