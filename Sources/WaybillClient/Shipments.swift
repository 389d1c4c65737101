import Foundation
import OpenAPIRuntime
import WaybillCore

/// A shipment as the caller sees it: its legs, hand-overs with their proof, and its parties, with
/// what the caller's `roles` let them see (a receiver sees no price).
public typealias Shipment = Components.Schemas.Shipment
/// A page of one of the caller's boxes, and which boxes they have.
public typealias ShipmentPage = Components.Schemas.ShipmentPage

extension WaybillSession {
    // MARK: Shipments (sender, receiver, carrier, dispatch)

    /// One of the caller's boxes, newest first: what they sent, what is addressed to their
    /// verified email (`incoming`), what they carry, or everything (dispatch). Without a box, the
    /// caller's usual list. `page.boxes` says which boxes the account has.
    public func shipments(box: ShipmentBox? = nil, status: [OrderStatus] = [], cursor: String? = nil,
                          limit: Int? = nil) async throws(WaybillError) -> ShipmentPage {
        try await call { client in
            try await client.listShipments(query: .init(
                box: box.map { .init(rawValue: $0.rawValue)! },
                status: status.isEmpty ? nil : status.map(\.rawValue).joined(separator: ","),
                cursor: cursor, limit: limit)).ok.body.json
        }
    }

    /// One shipment with its legs, hand-overs and proofs.
    public func shipment(_ id: OrderID) async throws(WaybillError) -> Shipment {
        try await call { try await $0.getShipment(path: .init(shipmentId: id.uuidString.lowercased())).ok.body.json }
    }

    /// The receiver confirms the parcel reached them, with a photo (JPEG or PNG) if they took one,
    /// and the parcel's label if they scanned it (`scannedCode`, kept as the receipt's proof).
    @discardableResult
    public func confirmReceipt(_ id: OrderID, photo: Data? = nil, scannedCode: String? = nil) async throws(WaybillError) -> Shipment {
        try await call { client in
            let body: Operations.ConfirmReceipt.Input.Body = photo.map {
                var parts: [Operations.ConfirmReceipt.Input.Body.MultipartFormPayload] = [.photo(.init(payload: .init(body: HTTPBody($0)), filename: "photo"))]
                if let scannedCode { parts.append(.scannedCode(.init(payload: .init(body: HTTPBody(scannedCode))))) }
                return .multipartForm(MultipartBody(parts))
            } ?? .json(.init(scannedCode: scannedCode))
            return try await client.confirmReceipt(path: .init(shipmentId: id.uuidString.lowercased()), body: body).ok.body.json
        }
    }
}

extension Shipment {
    /// The shipment's id, typed.
    public var shipmentID: OrderID? { OrderID(uuidString: id) }
}
