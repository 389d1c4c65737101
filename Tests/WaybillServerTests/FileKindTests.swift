import Testing
import WaybillAPI
import WaybillCore

/// Issue 50, item 2: a counter's check-in photo made every read of its shipment trap, because the
/// server stored a kind of file the API's schema did not list. The kinds are now one list in
/// WaybillCore, and this compares it with the schema's, both ways.
@Suite("The kinds of file a shipment keeps are the API's kinds")
struct FileKindTests {
    @Test("Every kind of file the server stores with a shipment is a case of OrderFile.kind in openapi.yaml, and nothing else is")
    func sameKinds() {
        let stored = Set(ShipmentFileKind.allCases.map(\.rawValue))
        let listed = Set(Components.Schemas.OrderFile.KindPayload.allCases.map(\.rawValue))
        #expect(stored == listed, "stored but not in the schema: \(stored.subtracting(listed)); in the schema only: \(listed.subtracting(stored))")
    }

    @Test("A claim's photos are shown with the claim, every other file with the shipment")
    func shownWithShipment() {
        #expect(ShipmentFileKind.allCases.filter { !$0.shownWithShipment } == [.claimPhoto])
    }
}
