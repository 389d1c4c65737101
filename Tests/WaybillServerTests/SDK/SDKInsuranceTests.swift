import Foundation
import Testing
import Vapor
import WaybillClient
import WaybillCore
@testable import WaybillServer

/// Insurance through the Swift SDK and `waybill-client claims` (issue 19, item 1).
@Suite("Insurance through the SDK and the command line")
struct SDKInsuranceTests {
    @Test("Through the SDK a sender insures a parcel, claims its loss with a photo; two managers approve; an admin changes the premium table",
          arguments: TestDatabase.available)
    func insuranceThroughSDK(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            try await server.serving { port in
                let cast = try await server.cast()
                let ada = server.sdk(port: port)
                try await ada.signIn(email: "ada@example.com", password: TestServer.password)
                let delivery = Delivery(dropoff: Address(street: "Bundesplatz 3", postalCode: "3005", city: "Bern"), declaredValue: 80_000)
                let quote = try await ada.quote(delivery)
                #expect(quote.insurance?.premium.amount == 1_200 && quote.breakdown.contains { $0.kind == .insurance }, "1.5 % of CHF 800")
                let placed = try await ada.placeOrder(NewOrder(delivery: delivery, paymentMethod: .cash, recipient: Recipient(name: "Bea Beispiel")))
                let id = try #require(OrderID(uuidString: placed.order.id))
                try await server.advance(placed.order.id, to: .failed, cast: cast)
                // Failed before pickup: nothing was lost.
                do throws(WaybillClient.WaybillError) {
                    _ = try await ada.fileClaim(id, kind: .lost, amount: 60_000, description: "Never arrived")
                    Issue.record("not lost before pickup")
                } catch { #expect(error.code == "claim_too_early") }

                let other = try await server.placeOrder(cast.customer.access, extra: ["declaredValue": 80_000])
                try await server.advance(other, to: .inTransit, cast: cast)
                #expect(try await server.send(.POST, "/orders/\(other)/fail", json: ["reason": "other"], token: cast.driver.access).status == .ok)
                let claim = try await ada.fileClaim(try #require(OrderID(uuidString: other)), kind: .lost, amount: 60_000, description: "Never arrived",
                                                    photos: [Data(SampleImages.photoJPEG)])
                #expect(claim.status == .submitted && claim.photos.count == 1)
                let claimID = try #require(ClaimID(uuidString: claim.id))

                let boss = server.sdk(port: port)
                try await boss.signIn(email: "boss@courier.example", password: TestServer.password)
                #expect(try await boss.claims(status: .submitted).map(\.id) == [claim.id])
                #expect(try await boss.approve(claim: claimID, amount: 60_000).status == .awaitingSecondApproval)
                _ = try await InsuranceTests.secondManager(server)
                let ann = server.sdk(port: port)
                try await ann.signIn(email: "ann@courier.example", password: TestServer.password)
                let approved = try await ann.approve(claim: claimID, amount: 60_000)
                #expect(approved.status == .approved && approved.approved?.amount == 60_000)
                #expect(try await ada.claim(claimID).paymentNote?.contains("Set up payouts") == true, "a cash shipment: the compensation is a transfer")

                _ = try await server.makeAdmin(cast.otherDriver)
                let mia = server.sdk(port: port)
                try await mia.signIn(email: "mia@courier.example", password: TestServer.password)
                let table = try await mia.setInsuranceTable(InsuranceTable(currency: "CHF", bands: [.init(upTo: 100_000, rateBasisPoints: 100, minimumPremium: 500)],
                                                                           claimWindowDays: 10, secondApprovalAbove: 30_000))
                #expect(table.value2.version == 2 && table.value2.maxInsurableValue == 100_000)
                #expect(try await ada.insuranceTable().value1.claimWindowDays == 10)
                do throws(WaybillClient.WaybillError) {
                    _ = try await ada.setInsuranceTable(.initial)
                    Issue.record("a customer does not set premiums")
                } catch { #expect(error.code == "forbidden") }
            }
        }
    }

    @Test("waybill-client: quote and order with --insure, claims file with a photo, staff list and decline it, the premium table")
    func insuranceThroughCLI() async throws {
        try await TestServer.run(.sqlite) { server in
            try await server.serving { port in
                let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("waybill-cli-\(UUID().uuidString)")
                try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
                defer { try? FileManager.default.removeItem(at: scratch) }
                let cast = try await server.cast()
                let photo = scratch.appendingPathComponent("damage.jpg")
                try Data(SampleImages.photoJPEG).write(to: photo)
                let ada = CLI(server: "http://127.0.0.1:\(port)", sessionFile: scratch.appendingPathComponent("ada.json").path)
                #expect(try await ada.run("login", "--email", "ada@example.com", "--password", TestServer.password).status == 0)
                let quote = try await ada.run("quote", "--to-street", "Bundesplatz 3", "--to-postal-code", "3005", "--to-city", "Bern", "--insure", "300")
                #expect(quote.status == 0 && quote.stdout.contains("Insurance") && quote.stdout.contains("CHF 6.00"), "\(quote)")
                let order = try await server.placeOrder(cast.customer.access, extra: ["declaredValue": 30_000])
                try await server.advance(order, to: .delivered, cast: cast)
                let filed = try await ada.run("claims", "file", order, "--kind", "damaged", "--amount", "120.50", "--description", "Glass broken",
                                              "--photo", photo.path)
                #expect(filed.status == 0 && filed.stdout.contains("CHF 120.50"), "\(filed)")
                let boss = CLI(server: "http://127.0.0.1:\(port)", sessionFile: scratch.appendingPathComponent("boss.json").path)
                #expect(try await boss.run("login", "--email", "boss@courier.example", "--password", TestServer.password).status == 0)
                let list = try await boss.run("claims", "list", "--status", "submitted")
                #expect(list.status == 0 && list.stdout.contains("damaged") && list.stdout.contains("CHF 120.50"), "\(list)")
                let claim = try #require(list.stdout.split(separator: " ").first.map(String.init))
                let declined = try await boss.run("claims", "decline", claim, "--reason", "No damage on the photo")
                #expect(declined.status == 0 && declined.stdout.contains("declined"), "\(declined)")
                let table = try await ada.run("claims", "table")
                #expect(table.status == 0 && table.stdout.contains("up to CHF 500.00: 2.0 %"), "\(table)")
                #expect(try await ada.run("claims", "table", "--claim-window-days", "5").status != 0, "customers do not set premiums")
            }
        }
    }
}
