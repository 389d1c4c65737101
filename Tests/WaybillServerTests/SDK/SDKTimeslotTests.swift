import Foundation
import Testing
import Vapor
import WaybillClient
import WaybillCore
@testable import WaybillServer

@Suite("The Swift SDK books timeslots, prints labels and scans them")
struct SDKTimeslotTests {
    @Test("Through the SDK dispatch adds a template, the customer holds and books a delivery slot, the driver prints the label, scans it and picks up with it as proof",
          arguments: TestDatabase.available)
    func slotsLabelsScans(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            try await server.serving { port in
                let cast = try await server.cast()
                let order = try #require(OrderID(uuidString: try await server.placeOrder(cast.customer.access)))
                try await server.advance(order.uuidString, to: .accepted, cast: cast)
                let boss = server.sdk(port: port), ada = server.sdk(port: port), luca = server.sdk(port: port)
                try await boss.signIn(email: "boss@courier.example", password: TestServer.password)
                try await ada.signIn(email: "ada@example.com", password: TestServer.password)
                try await luca.signIn(email: "luca@courier.example", password: TestServer.password)

                let day = TimeslotTests.day(server, in: 2)
                let template = try await boss.createSlotTemplate(kind: .delivery, weekday: day.weekday, start: "14:00", end: "16:00", capacity: 3, zone: "30")
                #expect(try await boss.slotTemplates().map(\.id) == [template.id])
                let slots = try await ada.slots(.delivery, postalCode: "3005", from: day.description, days: 1)
                let slot = try #require(slots.first)
                #expect(slots.count == 1 && slot.start == "14:00" && slot.availability == .available)
                let slotID = try #require(SlotID(uuidString: slot.id))
                #expect(try await ada.hold(slot: slotID).heldUntil != nil)
                let booking = try await ada.book(slot: slotID, for: order)
                #expect(booking.status == .booked && booking.kind == .delivery)
                #expect(try await ada.slotBookings(of: order).map(\.id) == [booking.id])
                // A second order takes a seat of the same slot as it is placed.
                let placed = try await ada.placeOrder(NewOrder(
                    delivery: Delivery(dropoff: Address(street: "Bundesplatz 3", postalCode: "3005", city: "Bern", coordinate: Coordinate(latitude: 46.9466, longitude: 7.4441))),
                    paymentMethod: .cash, recipient: Recipient(name: "Bea Beispiel"), deliverySlot: slotID))
                let second = try #require(OrderID(uuidString: placed.order.id))
                #expect(try await ada.slotBookings(of: second).first?.slot.id == slot.id)
                #expect(try await boss.slotBookings(status: .booked).count == 2)
                do throws(WaybillClient.WaybillError) {
                    _ = try await ada.slotBookings(status: .booked)
                    Issue.record("a customer read dispatch's list")
                } catch .server(let problem) {
                    #expect(problem.status == 403)
                } catch {
                    Issue.record("\(error)")
                }

                let pdf = try await luca.label(of: order)
                #expect(pdf.starts(with: Data("%PDF-".utf8)))
                let codes = try LabelScanTests.decode(Array(pdf))
                let link = try #require(codes.first { $0.hasPrefix("QR-Code:") }.map { String($0.dropFirst("QR-Code:".count)) })
                let scanned = try await luca.scan(link)
                #expect(scanned.shipmentId == order.uuidString && scanned.step == .pickup)
                let picked = try await luca.pickUp(order, cashCollected: Money(try await server.price(of: order.uuidString), "CHF"), scannedCode: link)
                #expect(picked.status == .inTransit)

                // Counters: an admin adds one; customers see it.
                _ = try await server.makeAdmin(cast.manager)
                let counter = try await boss.createCounter(.init(
                    name: "Guichet Gare", address: .init(street: "Place de la Gare 1", postalCode: "1003", city: "Lausanne"),
                    hours: .init(weekly: ["08:00-18:00", "08:00-18:00", "08:00-18:00", "08:00-18:00", "08:00-18:00", "", ""])))
                #expect(try await ada.counters().map(\.id) == [counter.id])
                let counterID = try #require(CounterID(uuidString: counter.id))
                #expect(try await boss.addStaff(try #require(UserID(uuidString: cast.driver.userID)), to: counterID).staff?.count == 1)
                #expect(try await ada.dropOffSlots(at: counterID).isEmpty, "no drop-off template yet")
            }
        }
    }

    @Test("Through the SDK a customer sends a parcel from a counter to another, counter staff check it in and hand it out against the receiver's code",
          arguments: TestDatabase.available)
    func counterDesk(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            try await server.serving { port in
                let cast = try await server.cast()
                let (lausanne, bern, _) = try await CounterDeskTests.counters(server, cast)
                let ada = server.sdk(port: port), bob = server.sdk(port: port), luca = server.sdk(port: port)
                try await ada.signIn(email: "ada@example.com", password: TestServer.password)
                try await bob.signIn(email: "bob@example.com", password: TestServer.password)
                try await luca.signIn(email: "luca@courier.example", password: TestServer.password)
                let from = try #require(CounterID(uuidString: lausanne)), to = try #require(CounterID(uuidString: bern))
                let bobs = try await bob.myCounters(), adas = try await ada.myCounters()
                #expect(Set(bobs.map(\.id)) == [lausanne, bern] && adas.isEmpty)

                let delivery = Delivery(pickup: .counter(from), collectAt: to)
                #expect(try await ada.quote(delivery).distanceKm ?? 0 > 50)
                let placed = try await ada.placeOrder(NewOrder(delivery: delivery, paymentMethod: .card,
                                                               recipient: Recipient(name: "Bea Beispiel", email: "bea@example.com")))
                #expect(placed.order.pickup.city == "Lausanne" && placed.order.dropoff.city == "Bern")
                let order = placed.order.id
                try await CounterDeskTests.pay(server, order, cast)
                let checked = try await bob.checkIn(at: from, reference: placed.order.reference, photo: Data(SampleImages.photoJPEG))
                #expect(checked.stage == .waitingForDriver)
                #expect(try await bob.counterDay(from).here.map(\.reference) == [placed.order.reference])

                try await server.advance(order, to: .accepted, cast: cast)
                let token = try await LabelScanTests.token(server, order)
                let id = try #require(OrderID(uuidString: order))
                _ = try await luca.pickUp(id, scannedCode: token)
                // The code mailed at pickup (its subject carries the code alone).
                let code = try await server.code(for: "bea@example.com")
                let arrived = try await bob.checkIn(at: to, code: token)
                #expect(arrived.stage == .waitingForReceiver)
                let out = try await bob.handOut(at: to, code: token, receiverCode: code, collectedBy: "Bea Beispiel")
                #expect(out.status == .delivered && out.stage == .done)
                do throws(WaybillClient.WaybillError) {
                    _ = try await ada.checkIn(at: from, code: token)
                    Issue.record("a customer checked a parcel in")
                } catch .server(let problem) {
                    #expect(problem.status == 403)
                } catch {
                    Issue.record("\(error)")
                }
            }
        }
    }
}
