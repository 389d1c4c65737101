import Foundation
import Testing
import Vapor
import WaybillClient
import WaybillCore
@testable import WaybillServer

@Suite("The Swift SDK speaks shipments: boxes, legs, hand-overs and the receiver's confirmation")
struct SDKShipmentTests {
    @Test("Through the SDK the receiver finds the parcel under Incoming, reads its legs and hand-overs without a price, and confirms receipt with a photo",
          arguments: TestDatabase.available)
    func receiverThroughSDK(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            try await server.serving { port in
                let cast = try await server.cast()
                try await server.registerCustomer("bea@example.com")
                let id = try #require(OrderID(uuidString: try await server.placeOrder(cast.customer.access)))
                try await server.advance(id.uuidString, to: .delivered, cast: cast)

                let bea = server.sdk(port: port)
                try await bea.signIn(email: "bea@example.com", password: TestServer.password)
                let incoming = try await bea.shipments(box: .incoming)
                #expect(incoming.items.map(\.shipmentID) == [id])
                #expect(incoming.boxes == [.sent, .incoming])
                let shipment = try await bea.shipment(id)
                #expect(shipment.roles == [.receiver] && shipment.price == nil)
                #expect(shipment.legs?.map(\.kind) == [.fleet] && shipment.handOvers?.map(\.kind) == [.pickup, .delivery])
                #expect(shipment.availableActions == [.confirmReceipt])
                let confirmed = try await bea.confirmReceipt(id, photo: Data(SampleImages.photoJPEG))
                #expect(confirmed.handOvers?.last?.kind == .receipt && confirmed.handOvers?.last?.proof.kinds == [.photo])
                let again: Result<Shipment, WaybillClient.WaybillError>
                do throws(WaybillClient.WaybillError) { again = .success(try await bea.confirmReceipt(id)) } catch { again = .failure(error) }
                guard case .failure(.server(let problem)) = again else { Issue.record("confirmed twice: \(again)"); return }
                #expect(problem.status == 409 && problem.code == "already_confirmed")
            }
        }
    }
}
