import AsyncHTTPClient
import Fluent
import Foundation
import NIOCore
import NIOPosix
import Testing
import Vapor
import WaybillCore
@testable import WaybillServer

/// Timeslots (issue "Counters, timeslots and QR hand-overs", item 2) through the API: dispatch's
/// weekly templates, slots as people see them, holds, bookings that never sell a seat twice, moving
/// and cancelling, approval, and visits marked done.
@Suite("Timeslots: book a pickup or delivery slot with limited seats")
struct TimeslotTests {
    static let zurich = TimeZone(identifier: "Europe/Zurich")!

    /// A local date `days` from today in Zurich, at the server's clock.
    static func day(_ server: TestServer, in days: Int) -> LocalDate {
        LocalDate.at(Int64(server.clock.now.timeIntervalSince1970 * 1000), in: zurich).adding(days: days)!
    }

    /// A template of `kind` on the weekday `days` from today, 10:00–12:00, for Bern's 30xx; answers its id.
    static func template(_ server: TestServer, _ cast: Cast, kind: String = "delivery", capacity: Int = 5, in days: Int = 2,
                         approval: Bool = false, zone: String = "30") async throws -> String {
        let reply = try await server.send(.POST, "/slot-templates", json: [
            "kind": kind, "zone": zone, "weekday": day(server, in: days).weekday.rawValue, "start": "10:00", "end": "12:00",
            "capacity": capacity, "requiresApproval": approval,
        ], token: cast.manager.access)
        try #require(reply.status == .created, "template: \(reply)")
        return try #require(reply.json["id"].string)
    }

    /// The one slot of a template `days` from today, as `token` sees it.
    static func slot(_ server: TestServer, _ token: String, kind: String = "delivery", postalCode: String = "3005", in days: Int = 2) async throws -> Reply {
        let list = try await server.send(.GET, "/slots?kind=\(kind)&postalCode=\(postalCode)&from=\(day(server, in: days))&days=1", token: token)
        try #require(list.status == .ok && list.json["items"].array.count == 1, "slots: \(list)")
        return list
    }

    @Test("Dispatch sets a weekly template; people see its slots for their postal code on the local calendar; nobody else sets templates; bad input is a clear 422",
          arguments: TestDatabase.available)
    func templatesAndSlots(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let id = try await Self.template(server, cast)
            let week = try await server.send(.GET, "/slots?kind=delivery&postalCode=3005&days=14", token: cast.customer.access)
            #expect(week.status == .ok && week.json["items"].array.count == 2, "two weeks, one weekday: \(week)")
            let first = week.json["items"][0]
            #expect(first["date"].string == Self.day(server, in: 2).description && first["start"].string == "10:00" && first["end"].string == "12:00")
            #expect(first["availability"].string == "available" && first["templateId"].string == id && first["timeZone"].string == "Europe/Zurich")
            // 10:00 in Zurich, whatever the season.
            let startsAt = try #require(first["startsAt"].string.flatMap { ISO8601DateFormatter().date(from: $0) })
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = Self.zurich
            #expect(calendar.component(.hour, from: startsAt) == 10)
            // Another zone sees none; the list is the same when asked again (slots are made once).
            #expect(try await server.send(.GET, "/slots?kind=delivery&postalCode=1200&days=14", token: cast.customer.access).json["items"].array.isEmpty)
            let again = try await server.send(.GET, "/slots?kind=delivery&postalCode=3005&days=14", token: cast.otherCustomer.access)
            #expect(again.json["items"].array.map { $0["id"].string } == week.json["items"].array.map { $0["id"].string })
            #expect(try await SlotRecord.query(on: server.db).count() == 2)

            // Only dispatch sets templates.
            #expect(try await server.send(.GET, "/slot-templates", token: cast.customer.access).status == .forbidden)
            #expect(try await server.send(.POST, "/slot-templates", json: ["kind": "pickup", "weekday": 1, "start": "08:00", "end": "09:00", "capacity": 2],
                                          token: cast.driver.access).status == .forbidden)
            let bad = try await server.send(.POST, "/slot-templates", json: [
                "kind": "pickup", "weekday": 8, "start": "25:00", "end": "09:00", "capacity": 0, "timeZone": "Mars/Olympus", "zone": "3-0",
            ], token: cast.manager.access)
            #expect(bad.status == .unprocessableEntity && bad.json["error"]["fields"]["weekday"].string == "too_large", "\(bad)")
            let reversed = try await server.send(.POST, "/slot-templates", json: [
                "kind": "pickup", "weekday": 1, "start": "10:00", "end": "09:00", "capacity": 3, "timeZone": "Mars/Olympus", "zone": "3-0",
            ], token: cast.manager.access)
            let fields = reversed.json["error"]["fields"]
            #expect(fields["end"].string == "before_start" && fields["timeZone"].string == "invalid"
                    && fields["zone"].string == "invalid", "\(reversed)")
            #expect(try await server.send(.GET, "/slots?kind=delivery&postalCode=3005&days=99", token: cast.customer.access).status == .badRequest)
            #expect(try await server.send(.GET, "/slots?kind=delivery&postalCode=3005&from=2026-02-30", token: cast.customer.access).status == .badRequest)

            // Switched off: its slots show as unavailable and take no bookings.
            let off = try await server.send(.PATCH, "/slot-templates/\(id)", json: ["active": false], token: cast.manager.access)
            #expect(off.status == .ok && off.json["active"].bool == false)
            #expect(try await server.send(.GET, "/slot-templates", token: cast.manager.access).json["items"].array.count == 1)
            #expect(try await server.send(.GET, "/slots?kind=delivery&postalCode=3005&days=14", token: cast.customer.access).json["items"].array.isEmpty)
        }
    }

    @Test("Fifty people book the last five seats at once: exactly five get one, the rest hear the slot is full", arguments: TestDatabase.both)
    func lastSeatsOnce(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            _ = try await Self.template(server, cast, capacity: 5)
            let slot = try #require(try await Self.slot(server, cast.customer.access).json["items"][0]["id"].string)
            var orders: [String] = []
            for _ in 0..<50 { orders.append(try await server.placeOrder(cast.customer.access)) }
            try await server.serving { port in
                var configuration = HTTPClient.Configuration(timeout: .init(connect: .seconds(60), read: .seconds(60)))
                configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: 50)
                let client = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: configuration)
                defer { _ = client.shutdown() }
                let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                    for order in orders {
                        group.addTask {
                            try await server.postOverHTTP(port: port, "/orders/\(order)/slots", json: #"{"slotId":"\#(slot)"}"#,
                                                          headers: [("Authorization", "Bearer \(cast.customer.access)")], client: client).status
                        }
                    }
                    return try await group.reduce(into: [Int]()) { $0.append($1) }
                }
                #expect(statuses.filter { $0 == 201 }.count == 5, "\(statuses.sorted())")
                #expect(statuses.filter { $0 == 409 }.count == 45, "\(statuses.sorted())")
            }
            let stored = try #require(try await SlotRecord.find(SlotID(uuidString: slot)!, on: server.db))
            #expect(stored.booked == 5)
            #expect(try await SlotBookingRecord.query(on: server.db).filter(\.$status == .booked).count() == 5)
            #expect(try await Self.slot(server, cast.otherCustomer.access).json["items"][0]["availability"].string == "full")
            // A full slot says so.
            let late = try await server.send(.POST, "/orders/\(try await server.placeOrder(cast.customer.access))/slots", json: ["slotId": slot], token: cast.customer.access)
            #expect(late.status == .conflict && late.errorCode == "slot_full", "\(late)")
        }
    }

    @Test("A hold keeps a seat for ten minutes: others see the slot full and cannot take it, then can; choosing another slot lets the first go",
          arguments: TestDatabase.both)
    func holds(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            _ = try await Self.template(server, cast, capacity: 1)
            let slot = try #require(try await Self.slot(server, cast.customer.access).json["items"][0]["id"].string)
            let held = try await server.send(.POST, "/slots/\(slot)/hold", token: cast.otherCustomer.access)
            #expect(held.status == .ok && held.json["heldUntil"].exists && held.json["availability"].string == "available", "\(held)")
            #expect(try await Self.slot(server, cast.otherCustomer.access).json["items"][0]["heldUntil"].exists, "Bob sees his own hold")
            #expect(try await Self.slot(server, cast.customer.access).json["items"][0]["availability"].string == "full")
            #expect(try await server.send(.POST, "/slots/\(slot)/hold", token: cast.customer.access).errorCode == "slot_full")
            let order = try await server.placeOrder(cast.customer.access)
            #expect(try await server.send(.POST, "/orders/\(order)/slots", json: ["slotId": slot], token: cast.customer.access).errorCode == "slot_full")
            // Bob's hold runs out.
            server.clock.advance(minutes: 11)
            #expect(try await Self.slot(server, cast.customer.access).json["items"][0]["availability"].string == "available")
            #expect(try await server.send(.POST, "/orders/\(order)/slots", json: ["slotId": slot], token: cast.customer.access).status == .created)
            #expect(try await server.send(.POST, "/slots/\(slot)/hold", token: cast.otherCustomer.access).errorCode == "slot_full")

            // Holding a second slot of the same kind lets the first one go.
            _ = try await Self.template(server, cast, capacity: 1, in: 3)
            let other = try #require(try await Self.slot(server, cast.customer.access, in: 3).json["items"][0]["id"].string)
            _ = try await Self.template(server, cast, capacity: 1, in: 4)
            let third = try #require(try await Self.slot(server, cast.customer.access, in: 4).json["items"][0]["id"].string)
            #expect(try await server.send(.POST, "/slots/\(other)/hold", token: cast.otherCustomer.access).status == .ok)
            #expect(try await server.send(.POST, "/slots/\(third)/hold", token: cast.otherCustomer.access).status == .ok)
            #expect(try await Self.slot(server, cast.customer.access, in: 3).json["items"][0]["availability"].string == "available")
            let released = try await server.send(.DELETE, "/slots/\(third)/hold", token: cast.otherCustomer.access)
            #expect(released.status == .noContent, "\(released)")
            #expect(try await Self.slot(server, cast.customer.access, in: 4).json["items"][0]["availability"].string == "available")
            #expect(try await server.send(.POST, "/slots/\(UUID().uuidString)/hold", token: cast.otherCustomer.access).status == .notFound)
        }
    }

    @Test("Moving a booking frees the old seat; cancelling or cancelling the order frees it; a slot outside the address's zone or past its cutoff is refused",
          arguments: TestDatabase.available)
    func moveAndCancel(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            _ = try await Self.template(server, cast, capacity: 1, in: 2)
            _ = try await Self.template(server, cast, capacity: 1, in: 3)
            let first = try #require(try await Self.slot(server, cast.customer.access, in: 2).json["items"][0]["id"].string)
            let second = try #require(try await Self.slot(server, cast.customer.access, in: 3).json["items"][0]["id"].string)
            let order = try await server.placeOrder(cast.customer.access)
            let booked = try await server.send(.POST, "/orders/\(order)/slots", json: ["slotId": first], token: cast.customer.access)
            #expect(booked.status == .created && booked.json["status"].string == "booked" && booked.json["kind"].string == "delivery", "\(booked)")
            let same = try await server.send(.POST, "/orders/\(order)/slots", json: ["slotId": first], token: cast.customer.access)
            #expect(same.status == .ok, "the same slot again: \(same)")
            let moved = try await server.send(.POST, "/orders/\(order)/slots", json: ["slotId": second], token: cast.customer.access)
            #expect(moved.status == .created)
            #expect(try await Self.slot(server, cast.otherCustomer.access, in: 2).json["items"][0]["availability"].string == "available", "the first seat is free again")
            let history = try await server.send(.GET, "/orders/\(order)/slots", token: cast.customer.access).json["items"].array
            #expect(history.map { $0["status"].string } == ["cancelled", "booked"])
            #expect(try await server.send(.GET, "/orders/\(order)/slots", token: cast.otherCustomer.access).status == .notFound)
            #expect(try await server.send(.POST, "/orders/\(order)/slots", json: ["slotId": first], token: cast.otherCustomer.access).status == .notFound)

            // The customer cancels the booking; then a second order takes the seat, and cancelling that order frees it.
            let bookingID = try #require(moved.json["id"].string)
            let cancelled = try await server.send(.POST, "/slot-bookings/\(bookingID)/decision", json: ["action": "cancel"], token: cast.customer.access)
            #expect(cancelled.status == .ok && cancelled.json["status"].string == "cancelled")
            let another = try await server.placeOrder(cast.customer.access)
            #expect(try await server.send(.POST, "/orders/\(another)/slots", json: ["slotId": second], token: cast.customer.access).status == .created)
            #expect(try await server.send(.POST, "/orders/\(another)/cancel", json: ["reason": "changed my mind"], token: cast.customer.access).status == .ok)
            #expect(try await SlotRecord.find(SlotID(uuidString: second)!, on: server.db)?.booked == 0)
            #expect(try await server.send(.GET, "/orders/\(another)/slots", token: cast.customer.access).json["items"][0]["status"].string == "cancelled")

            // Outside the zone: a template for Geneva's 12xx.
            _ = try await Self.template(server, cast, in: 5, zone: "12")
            let geneva = try #require(try await Self.slot(server, cast.customer.access, postalCode: "1204", in: 5).json["items"][0]["id"].string)
            let wrong = try await server.send(.POST, "/orders/\(order)/slots", json: ["slotId": geneva], token: cast.customer.access)
            #expect(wrong.status == .unprocessableEntity && wrong.json["error"]["fields"]["slotId"].string == "wrong_zone")
            // Four days on, the second slot (three days ahead, 10:00–12:00) is past its cutoff, whatever the hour now.
            server.clock.advance(by: 4 * 86_400)
            let past = try await server.send(.POST, "/orders/\(order)/slots", json: ["slotId": second], token: cast.customer.access)
            #expect(past.status == .conflict && past.errorCode == "slot_unavailable", "\(past)")
        }
    }

    @Test("With approval required the booking waits; staff decline it with a reason or approve it, the customer is told; staff mark the visit done or failed",
          arguments: TestDatabase.available)
    func approvals(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            _ = try await Self.template(server, cast, capacity: 2, approval: true)
            let slot = try #require(try await Self.slot(server, cast.customer.access).json["items"][0]["id"].string)
            let order = try await server.placeOrder(cast.customer.access)
            let pending = try await server.send(.POST, "/orders/\(order)/slots", json: ["slotId": slot], token: cast.customer.access)
            #expect(pending.status == .created && pending.json["status"].string == "pending", "\(pending)")
            let id = try #require(pending.json["id"].string)
            let waiting = try await server.send(.GET, "/slot-bookings?status=pending", token: cast.manager.access)
            #expect(waiting.json["items"].array.map { $0["id"].string } == [id])
            #expect(try await server.send(.GET, "/slot-bookings", token: cast.customer.access).status == .forbidden)
            #expect(try await server.send(.POST, "/slot-bookings/\(id)/decision", json: ["action": "approve"], token: cast.customer.access).status == .forbidden)
            let noReason = try await server.send(.POST, "/slot-bookings/\(id)/decision", json: ["action": "decline"], token: cast.manager.access)
            #expect(noReason.status == .unprocessableEntity && noReason.json["error"]["fields"]["reason"].string == "required")
            let declined = try await server.send(.POST, "/slot-bookings/\(id)/decision", json: ["action": "decline", "reason": "No van that morning"],
                                                 token: cast.manager.access)
            #expect(declined.json["status"].string == "declined" && declined.json["reason"].string == "No van that morning")
            let inbox = try await server.send(.GET, "/notifications", token: cast.customer.access).json["items"].array
            #expect(inbox.contains { $0["kind"].string == "slot_declined" && ($0["body"].string ?? "").contains("No van that morning") })
            #expect(try await SlotRecord.find(SlotID(uuidString: slot)!, on: server.db)?.booked == 0, "declining frees the seat")

            let again = try #require(try await server.send(.POST, "/orders/\(order)/slots", json: ["slotId": slot], token: cast.customer.access).json["id"].string)
            #expect(try await server.send(.POST, "/slot-bookings/\(again)/decision", json: ["action": "complete"], token: cast.manager.access).status == .conflict,
                    "not before it is approved")
            #expect(try await server.send(.POST, "/slot-bookings/\(again)/decision", json: ["action": "approve"], token: cast.manager.access).json["status"].string == "booked")
            #expect(try await server.send(.GET, "/notifications", token: cast.customer.access).json["items"].array.contains { $0["kind"].string == "slot_approved" })
            let failed = try await server.send(.POST, "/slot-bookings/\(again)/decision", json: ["action": "fail", "reason": "Nobody at the door"], token: cast.manager.access)
            #expect(failed.json["status"].string == "failed")
            #expect(try await SlotRecord.find(SlotID(uuidString: slot)!, on: server.db)?.booked == 1, "a visit that happened keeps its seat")
            #expect(try await server.send(.POST, "/slot-bookings/\(UUID().uuidString)/decision", json: ["action": "cancel"], token: cast.manager.access).status == .notFound)
        }
    }

    @Test("A delivered shipment completes its delivery booking by itself", arguments: TestDatabase.available)
    func completedByTheShipment(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            _ = try await Self.template(server, cast)
            let slot = try #require(try await Self.slot(server, cast.customer.access).json["items"][0]["id"].string)
            let order = try await server.placeOrder(cast.customer.access)
            #expect(try await server.send(.POST, "/orders/\(order)/slots", json: ["slotId": slot], token: cast.customer.access).status == .created)
            try await server.advance(order, to: .delivered, cast: cast)
            #expect(try await server.send(.GET, "/orders/\(order)/slots", token: cast.customer.access).json["items"][0]["status"].string == "completed")
            let late = try await server.send(.POST, "/orders/\(order)/slots", json: ["slotId": slot], token: cast.customer.access)
            #expect(late.status == .conflict, "a delivered shipment's slot no longer changes: \(late)")
        }
    }

    @Test("In the web app: dispatch adds a template that needs approval; the customer books from the delivery's page; dispatch approves; the customer cancels; in French too",
          arguments: TestDatabase.available)
    func webPages(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let order = try await server.placeOrder(cast.customer.access)
            let boss = TestBrowser(server)
            _ = try await boss.signIn("boss@courier.example")
            #expect(try await boss.get("/timeslots").status == .ok)
            let weekday = String(Self.day(server, in: 2).weekday.rawValue)
            let bad = try await boss.post("/timeslots/templates", ["kind": "delivery", "weekday": weekday, "start": "12:00", "end": "10:00", "capacity": "2", "zone": "30"],
                                          from: "/timeslots")
            #expect(bad.status == .unprocessableEntity && bad.html.contains("role=\"alert\""))
            let added = try await boss.post("/timeslots/templates", ["kind": "delivery", "weekday": weekday, "start": "10:00", "end": "12:00", "capacity": "2",
                                                                    "zone": "30", "requiresApproval": "on"], from: "/timeslots")
            #expect(added.status == .seeOther)
            #expect(try await boss.get("/timeslots").html.contains("data-template="))

            let ada = TestBrowser(server)
            ada.acceptLanguage = "fr"
            _ = try await ada.signIn("ada@example.com")
            let page = try await ada.get("/orders/\(order)")
            #expect(page.html.contains("id=\"timeslots\"") && page.html.contains("Choisir un créneau") && page.html.contains("disponible"), "\(page.html.prefix(300))")
            let slot = try #require(try await Self.slot(server, cast.customer.access).json["items"][0]["id"].string)
            let booked = try await ada.post("/orders/\(order)/slots", ["slotId": slot], from: "/orders/\(order)")
            #expect(booked.location?.contains("slot=booked") == true)
            #expect(try await ada.get(try #require(booked.location)).html.contains("en attente d’approbation"))

            let waiting = try await boss.get("/timeslots")
            let booking = try #require(try await SlotBookingRecord.query(on: server.db).first()?.id?.uuidString)
            #expect(waiting.html.contains("data-booking=\"\(booking)\""))
            #expect(try await boss.post("/slot-bookings/\(booking)/approve", [:], from: "/timeslots").status == .seeOther)
            #expect(try await ada.get("/orders/\(order)").html.contains("réservé"))
            let cancelled = try await ada.post("/slot-bookings/\(booking)/cancel", [:], from: "/orders/\(order)")
            #expect(cancelled.location?.contains("/orders/\(order)") == true)
            #expect(try await SlotBookingRecord.find(SlotBookingID(uuidString: booking)!, on: server.db)?.status == .cancelled)
            // A stranger cannot book on Ada's shipment.
            let bob = TestBrowser(server)
            _ = try await bob.signIn("bob@example.com")
            #expect(try await bob.post("/orders/\(order)/slots", ["slotId": slot], from: "/orders").status == .notFound)
            #expect(try await bob.get("/timeslots").status == .forbidden)
        }
    }

    @Test("In the web app the Scan page finds a parcel by its label's code and carries the scan along; a code that is not one's parcel says so",
          arguments: TestDatabase.available)
    func scanPage(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let order = try await server.placeOrder(cast.customer.access)
            try await server.advance(order, to: .accepted, cast: cast)
            let token = try await LabelScanTests.token(server, order)
            let luca = TestBrowser(server)
            _ = try await luca.signIn("luca@courier.example")
            let page = try await luca.get("/scan")
            #expect(page.status == .ok && page.html.contains("id=\"scan-form\"") && page.html.contains("data-scanner"))
            let found = try await luca.post("/scan", ["code": "http://localhost:8080/h/\(token)"], from: "/scan")
            #expect(found.location?.contains("/orders/\(order)?scan=\(token)") == true, "\(String(describing: found.location))")
            let typed = try await luca.post("/scan", ["code": " \(token) "], from: "/scan")
            #expect(typed.location?.contains("scan=\(token)") == true)
            let wrong = try await luca.post("/scan", ["code": "WB-NOTHING"], from: "/scan")
            #expect(wrong.status == .notFound && wrong.html.contains("role=\"alert\""))
        }
    }

    @Test("The driver's day lists the booked timeslots in time order and each card its window; the board shows the windows and warns when a visit will miss its slot",
          arguments: TestDatabase.available)
    func dayAndBoard(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            _ = try await Self.template(server, cast, in: 2)
            _ = try await Self.template(server, cast, in: 3)
            let later = try #require(try await Self.slot(server, cast.customer.access, in: 3).json["items"][0]["id"].string)
            let sooner = try #require(try await Self.slot(server, cast.customer.access, in: 2).json["items"][0]["id"].string)
            let first = try await server.placeOrder(cast.customer.access), second = try await server.placeOrder(cast.customer.access)
            #expect(try await server.send(.POST, "/orders/\(first)/slots", json: ["slotId": later], token: cast.customer.access).status == .created)
            #expect(try await server.send(.POST, "/orders/\(second)/slots", json: ["slotId": sooner], token: cast.customer.access).status == .created)
            try await server.advance(first, to: .accepted, cast: cast)
            try await server.advance(second, to: .accepted, cast: cast)
            let references = try await [first, second].asyncMap { try #require(try await Order.find(OrderID(uuidString: $0)!, on: server.db)?.reference) }

            let luca = TestBrowser(server)
            _ = try await luca.signIn("luca@courier.example")
            let day = try await luca.get("/driver").html
            let list = try #require(day.components(separatedBy: "id=\"day-slots\"").dropFirst().first)
            let a = try #require(list.range(of: references[1])), b = try #require(list.range(of: references[0]))
            #expect(a.lowerBound < b.lowerBound, "the sooner slot first")
            #expect(day.components(separatedBy: "data-slot-window=\"delivery\"").count == 3)

            let boss = TestBrowser(server)
            _ = try await boss.signIn("boss@courier.example")
            let board = try await boss.get("/dispatch").html
            #expect(board.contains("data-slot-window=\"delivery\"") && !board.contains("data-slot-late"))
            // Four days on, both slots ended without their deliveries: the board warns.
            server.clock.advance(by: 4 * 86_400)
            let again = TestBrowser(server)
            _ = try await again.signIn("boss@courier.example")
            let warned = try await again.get("/dispatch")
            #expect(warned.html.components(separatedBy: "data-slot-late").count == 3, "\(warned.status)")
        }
    }

    @Test("A timeslot chosen with a new order is booked in the order's own transaction: the last seat taken, no seat means no order; a slot of the wrong kind or zone is refused",
          arguments: TestDatabase.both)
    func slotWithTheOrder(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            _ = try await Self.template(server, cast, capacity: 1)
            let slot = try #require(try await Self.slot(server, cast.customer.access).json["items"][0]["id"].string)
            let placed = try await server.send(.POST, "/orders", json: TestServer.orderBody(extra: ["deliverySlotId": slot]), token: cast.customer.access)
            #expect(placed.status == .created, "\(placed)")
            let order = try #require(placed.json["order"]["id"].string)
            #expect(try await server.send(.GET, "/orders/\(order)/slots", token: cast.customer.access).json["items"][0]["status"].string == "booked")
            // The seat is gone: Bob's order with the same slot is not made at all.
            let before = try await Order.query(on: server.db).count()
            let full = try await server.send(.POST, "/orders", json: TestServer.orderBody(extra: ["deliverySlotId": slot]), token: cast.otherCustomer.access)
            #expect(full.status == .conflict && full.errorCode == "slot_full", "\(full)")
            #expect(try await Order.query(on: server.db).count() == before, "nothing half-written")
            let wrongKind = try await server.send(.POST, "/orders", json: TestServer.orderBody(extra: ["pickupSlotId": slot]), token: cast.otherCustomer.access)
            #expect(wrongKind.status == .unprocessableEntity && wrongKind.json["error"]["fields"]["pickupSlotId"].string == "wrong_kind")
            _ = try await Self.template(server, cast, in: 3, zone: "12")
            let geneva = try #require(try await Self.slot(server, cast.customer.access, postalCode: "1204", in: 3).json["items"][0]["id"].string)
            let wrongZone = try await server.send(.POST, "/orders", json: TestServer.orderBody(extra: ["deliverySlotId": geneva]), token: cast.otherCustomer.access)
            #expect(wrongZone.status == .unprocessableEntity && wrongZone.json["error"]["fields"]["deliverySlotId"].string == "wrong_zone")
            let unknown = try await server.send(.POST, "/orders", json: TestServer.orderBody(extra: ["deliverySlotId": UUID().uuidString]), token: cast.otherCustomer.access)
            #expect(unknown.json["error"]["fields"]["deliverySlotId"].string == "not_found")
        }
    }
}
