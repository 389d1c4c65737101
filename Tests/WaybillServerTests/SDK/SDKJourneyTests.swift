import Foundation
import Testing
import Vapor
import WaybillClient
import WaybillCore
@testable import WaybillServer

@Suite("The Swift SDK drives a whole delivery against a real server")
struct SDKJourneyTests {
    static let bern = Address(street: "Bundesplatz 3", postalCode: "3005", city: "Bern",
                              coordinate: Coordinate(latitude: 46.9466, longitude: 7.4441))

    @Test("A customer signs up, orders and pays by card; a manager invites a driver and assigns; the driver delivers with a signature; the customer follows it live",
          arguments: TestDatabase.available)
    func customerManagerDriverJourney(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            try await server.serving { port in
                // The customer signs up in the app.
                let customer = server.sdk(port: port)
                try await customer.register(Registration(
                    firstName: "Ada", lastName: "Muster", address: "Bahnhofstrasse 1", postalCode: "8001", city: "Zürich",
                    email: "ada@example.com", password: TestServer.password, isCompany: false))
                try await customer.verifyEmail("ada@example.com", code: try await server.code(for: "ada@example.com"))
                let ada = try await customer.signIn(email: "ada@example.com", password: TestServer.password, device: (.ios, "apns-token-ada"))
                #expect(ada.role == .customer)

                // The manager (made with `waybill user create`) invites a driver, who sets a password.
                try await server.createAccount("boss@courier.example", role: .manager)
                let manager = server.sdk(port: port)
                try await manager.signIn(email: "boss@courier.example", password: TestServer.password)
                let invited = try await manager.createUser(role: .driver, firstName: "Luca", lastName: "Bernasconi", email: "luca@courier.example")
                #expect(invited.role == .driver)
                let driver = server.sdk(port: port)
                let inviteCode = try await server.code(for: "luca@courier.example")
                try await driver.verifyPasswordResetCode("luca@courier.example", code: inviteCode)
                try await driver.completePasswordReset("luca@courier.example", code: inviteCode, newPassword: "a-long-driver-passphrase")
                let luca = try await driver.signIn(email: "luca@courier.example", password: "a-long-driver-passphrase")
                #expect(luca.role == .driver)

                // A quote, then the order, paid by card on the sandbox page.
                let delivery = Delivery(pickup: .accountAddress(Coordinate(latitude: 47.3779, longitude: 8.5403)), dropoff: Self.bern,
                                        weightClass: .small, service: .standard)
                let quote = try await customer.quote(delivery)
                #expect(quote.price.amount > 0)
                #expect(quote.distanceKm != nil)
                let created = try await customer.placeOrder(NewOrder(
                    delivery: delivery, paymentMethod: .card, recipient: Recipient(name: "Bea Beispiel", email: "bea@example.com")))
                #expect(created.order.price == quote.price)
                #expect(created.order.status == .awaitingPayment)
                #expect(created.next.action == .pay)
                #expect(created.next.sandbox == true)
                let orderID = created.order.orderID
                let paymentURL = try #require(created.next.paymentUrl.flatMap(URL.init(string:)))
                let paid = try await server.page(.POST, paymentURL.path + "/pay")
                #expect(paid.status == .seeOther || paid.status == .found || paid.status == .ok)
                #expect(try await customer.confirmPayment(orderID).status == .pending)

                // The customer's app follows the order live from here on.
                let live = LiveRecorder()
                await live.start(customer.liveUpdates([.order(orderID)]))
                try await live.wait(for: "subscribed") { await $0.connections == 1 }

                // The manager finds the driver and assigns the order.
                let drivers = try await manager.users(role: .driver)
                let lucaID = try #require(drivers.items.first { $0.email == "luca@courier.example" }.flatMap { UserID(uuidString: $0.id) })
                #expect(try await manager.shipments(status: [.pending]).items.map(\.shipmentID).contains(orderID))
                let assigned = try await manager.assign(orderID, to: lucaID)
                #expect(assigned.status == .assigned)

                // The driver goes on duty, accepts, drives with positions, picks up and delivers.
                #expect(try await driver.shipments(box: .carrying).items.map(\.shipmentID) == [orderID])
                try await driver.setDuty(true)
                // Accepting kept by an app while offline and sent twice with its key: done once.
                #expect(try await driver.accept(orderID, idempotencyKey: "accept-\(orderID)").status == .accepted)
                #expect(try await driver.accept(orderID, idempotencyKey: "accept-\(orderID)").status == .accepted)
                let now = Int64(Date().timeIntervalSince1970) * 1000
                let receipt = try await driver.reportPositions([
                    PositionReport(latitude: 47.3780, longitude: 8.5404, accuracy: 5, recordedAt: now - 2000),
                    PositionReport(latitude: 47.3781, longitude: 8.5405, accuracy: 5, recordedAt: now - 1000),
                ])
                #expect(receipt.accepted == 2)
                #expect(try await manager.fleet(near: orderID).drivers.first { UserID(uuidString: $0.driver.id) == lucaID }?.onDuty == true)
                #expect(try await driver.pickUp(orderID).status == .inTransit)
                let delivered = try await driver.deliver(orderID, signaturePNG: Data(SampleImages.signaturePNG), recipientName: "Bea Beispiel")
                #expect(delivered.status == .delivered)

                // The customer saw every step live, once each and in order, and can see the proof.
                try await live.wait(for: "delivered") { await $0.statuses.last == "delivered" }
                #expect(await live.statuses == ["assigned", "accepted", "in_transit", "delivered"])
                let ids = await live.events.map(\.id)
                #expect(ids == ids.sorted() && Set(ids).count == ids.count)
                #expect(await live.events.contains { if case .location = $0.payload { true } else { false } })

                let final = try await customer.shipment(orderID)
                #expect(final.status == .delivered)
                let handedOver = try #require(final.handOvers?.last)
                #expect(handedOver.kind == .delivery && handedOver.proof.signedBy == "Bea Beispiel")
                let signatureURL = try #require(handedOver.proof.signature?.url)
                let fileID = String(signatureURL.split(separator: "/").last!)
                let png = try await customer.file(of: orderID, fileId: fileID)
                #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47]))
                #expect(try await customer.trail(of: orderID).points.count == 2)
                #expect(try await customer.shipments(box: .sent).items.first?.status == .delivered)

                // Signing out ends the session for good, and the live stream with it.
                let events = customer.events()
                try await customer.signOut()
                var iterator = events.makeAsyncIterator()
                #expect(await iterator.next() == .ended(reason: "signed_out"))
                try await live.untilFinished()
                let ended = try #require(await live.failure as? WaybillClient.WaybillError)
                guard case .sessionEnded(let code) = ended else { Issue.record("the live stream ended with \(ended)"); return }
                #expect(code == "signed_out")
                #expect(await customer.tokens == nil)
                await #expect(throws: WaybillClient.WaybillError.self) { try await customer.me() }
            }
        }
    }

    @Test("The server's refusals arrive as WaybillError with its code, field errors and current status", arguments: TestDatabase.available)
    func errorsCarryCodesAndFields(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            try await server.serving { port in
                let session = server.sdk(port: port)
                do throws(WaybillClient.WaybillError) {
                    try await session.register(Registration(firstName: "", lastName: "x", address: "x", postalCode: "1",
                                                            city: "x", email: "bad", password: "x", isCompany: false))
                    Issue.record("an invalid form was accepted")
                } catch .server(let problem) {
                    #expect(problem.status == 422)
                    #expect(problem.fields["firstName"] == "required")
                    #expect(problem.fields["email"] != nil)
                }
                do throws(WaybillClient.WaybillError) {
                    try await session.signIn(email: "nobody@example.com", password: TestServer.password)
                    Issue.record("signed in as nobody")
                } catch {
                    #expect(error.code == "invalid_credentials")
                }
                do throws(WaybillClient.WaybillError) {
                    _ = try await session.shipments()
                    Issue.record("listed orders signed out")
                } catch {
                    guard case .notSignedIn = error else { Issue.record("expected notSignedIn, got \(error)"); return }
                }

                try await server.registerCustomer("ada@example.com")
                try await session.signIn(email: "ada@example.com", password: TestServer.password)
                let created = try await session.placeOrder(NewOrder(
                    delivery: Delivery(dropoff: Self.bern), paymentMethod: .cash, recipient: Recipient(name: "Bea")))
                try await session.cancel(created.order.orderID, reason: "changed my mind")
                do throws(WaybillClient.WaybillError) {
                    try await session.cancel(created.order.orderID, reason: "again")
                    Issue.record("cancelled twice")
                } catch .server(let problem) {
                    #expect(problem.status == 409)
                    #expect(problem.code == "invalid_transition")
                    #expect(problem.currentStatus == "cancelled")
                }
                do throws(WaybillClient.WaybillError) {
                    _ = try await session.shipment(.random())
                    Issue.record("found an order that does not exist")
                } catch {
                    #expect(error.code == "not_found")
                }
            }
        }
    }
}
