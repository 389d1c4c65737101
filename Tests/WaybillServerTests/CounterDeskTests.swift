import Fluent
import Foundation
import Testing
import Vapor
import WaybillCore
@testable import WaybillServer

/// Counters' desks (issue "Counters, timeslots and QR hand-overs", item 1): dropping a parcel at a
/// counter, checking it in, a driver taking it on from there, and collecting it at a counter.
@Suite("Counter desks: drop a parcel at a counter, check it in by scan or reference, collect it at a counter with the receiver's code")
struct CounterDeskTests {
    /// Two counters open every day, with Bob (`otherCustomer`) named staff of both; answers their ids.
    static func counters(_ server: TestServer, _ cast: Cast) async throws -> (lausanne: String, bern: String, admin: String) {
        let admin = try await server.makeAdmin(cast.manager)
        let lausanne = try #require(try await server.send(.POST, "/counters", json: CounterTests.body(name: "Guichet Gare"), token: admin).json["id"].string)
        var bernBody = CounterTests.body(name: "Schalter Bern")
        bernBody["address"] = TestServer.bern
        let bern = try #require(try await server.send(.POST, "/counters", json: bernBody, token: admin).json["id"].string)
        for counter in [lausanne, bern] {
            try #require(try await server.send(.PUT, "/counters/\(counter)/staff/\(cast.otherCustomer.userID)", token: admin).status == .ok)
        }
        return (lausanne, bern, admin)
    }

    /// Pays a card order in the sandbox, as its customer coming back from the checkout.
    static func pay(_ server: TestServer, _ order: String, _ cast: Cast) async throws {
        let checkout = try #require(try await Order.find(OrderID(uuidString: order)!, on: server.db)?.checkoutSessionID)
        #expect(try await (server.app.waybill.payments as! SandboxPayments).markPaid(id: checkout))
        try #require(try await server.send(.POST, "/orders/\(order)/payment/confirm", token: cast.customer.access).status == .ok)
    }

    static func checkIn(_ server: TestServer, _ counter: String, code: String? = nil, reference: String? = nil, photo: [UInt8]? = nil,
                        token: String) async throws -> Reply {
        var parts: [TestServer.Part] = []
        if let code { parts.append(.text("code", code)) }
        if let reference { parts.append(.text("reference", reference)) }
        if let photo { parts.append(.file("photo", photo, type: "image/jpeg", filename: "parcel.jpg")) }
        return try await server.upload("/counters/\(counter)/check-ins", parts: parts, token: token)
    }

    @Test("A sender books a drop-off slot at a counter, the counter scans the label in with a photo, a driver takes it on by scanning, and the receiver collects it at another counter with their code",
          arguments: TestDatabase.available)
    func dropOffToCollection(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let (lausanne, bern, _) = try await Self.counters(server, cast)
            let day = TimeslotTests.day(server, in: 1)
            let template = try await server.send(.POST, "/slot-templates", json: [
                "kind": "drop_off", "counterId": lausanne, "weekday": day.weekday.rawValue, "start": "09:00", "end": "11:00", "capacity": 3,
            ], token: cast.manager.access)
            try #require(template.status == .created, "\(template)")
            let slots = try await server.send(.GET, "/slots?kind=drop_off&counterId=\(lausanne)&from=\(day)&days=1", token: cast.customer.access)
            let slot = try #require(slots.json["items"][0]["id"].string, "\(slots)")

            // What a counter asks of the order: not cash (nobody meets a driver), the receiver's email (their code).
            let counterBody: [String: any Sendable] = ["dropOffCounterId": lausanne, "collectionCounterId": bern, "dropOffSlotId": slot]
            var cash = TestServer.orderBody(payment: "cash", extra: counterBody)
            cash["pickup"] = nil
            cash["dropoff"] = nil
            #expect(try await server.send(.POST, "/orders", json: cash, token: cast.customer.access).json["error"]["fields"]["paymentMethod"].string
                    == "not_with_counter_drop_off")
            var noEmail = TestServer.orderBody(payment: "card", extra: counterBody)
            noEmail["recipient"] = ["name": "Bea Beispiel"]
            #expect(try await server.send(.POST, "/orders", json: noEmail, token: cast.customer.access).json["error"]["fields"]["recipient.email"].string
                    == "required_for_counter_collection")
            var unknown = TestServer.orderBody(payment: "card", extra: ["dropOffCounterId": UUID().uuidString])
            unknown["pickup"] = nil
            #expect(try await server.send(.POST, "/orders", json: unknown, token: cast.customer.access).json["error"]["fields"]["dropOffCounterId"].string == "not_found")
            var noDropoff = TestServer.orderBody(payment: "card")
            noDropoff["dropoff"] = nil
            #expect(try await server.send(.POST, "/orders", json: noDropoff, token: cast.customer.access).json["error"]["fields"]["dropoff.street"].string == "required")

            // The quote and the order price the counters' own addresses.
            var body = TestServer.orderBody(payment: "card", extra: counterBody)
            body["pickup"] = nil
            body["dropoff"] = nil
            let quote = try await server.send(.POST, "/quotes", json: ["weightClass": "small", "service": "standard",
                                                                       "dropOffCounterId": lausanne, "collectionCounterId": bern], token: cast.customer.access)
            #expect(quote.status == .ok && (quote.json["distanceKm"].double ?? 0) > 50, "Lausanne to Bern: \(quote)")
            let created = try await server.send(.POST, "/orders", json: body, token: cast.customer.access)
            try #require(created.status == .created, "\(created)")
            let order = try #require(created.json["order"]["id"].string)
            #expect(created.json["order"]["pickup"]["city"].string == "Lausanne" && created.json["order"]["dropoff"]["city"].string == "Bern")
            #expect(created.json["order"]["requireRecipientCode"].bool == true, "collection at a counter always asks for the code")
            let legs = try await Leg.query(on: server.db).filter(\.$orderID == OrderID(uuidString: order)!).sort(\.$position).all()
            #expect(legs.map(\.kind) == [.counter, .fleet, .counter] && legs.map(\.counterID) == [lausanne.uppercased(), nil, bern.uppercased()])
            let token = try await LabelScanTests.token(server, order)
            let reference = try #require(created.json["order"]["reference"].string)

            // Unpaid, it cannot be checked in; staff of another counter or nobody's staff may not.
            #expect(try await Self.checkIn(server, lausanne, code: token, token: cast.otherCustomer.access).status == .conflict)
            try await Self.pay(server, order, cast)
            #expect(try await Self.checkIn(server, lausanne, code: token, token: cast.customer.access).status == .forbidden)
            #expect(try await Self.checkIn(server, bern, code: token, token: cast.otherCustomer.access).status == .conflict,
                    "Bern collects it; it has not been brought there")

            // Dispatch may plan a driver at once; the driver cannot take what the counter has not got.
            try await server.advance(order, to: .accepted, cast: cast)
            let early = try await server.send(.POST, "/orders/\(order)/pickup", json: ["scannedCode": token], token: cast.driver.access)
            #expect(early.errorCode == "not_at_counter", "\(early)")

            // The counter's day shows the booked drop-off in its slot.
            let before = try await server.send(.GET, "/counters/\(lausanne)/day?date=\(day)", token: cast.otherCustomer.access)
            #expect(before.json["booked"].array.map { $0["reference"].string } == [reference] && before.json["booked"][0]["stage"].string == "drop_off_expected",
                    "\(before)")
            #expect(try await server.send(.GET, "/counters/\(lausanne)/day", token: cast.driver.access).status == .forbidden)

            // Checked in by scan, with a photo: the drop-off slot is done, the customer told.
            let wrong = try await Self.checkIn(server, lausanne, code: "https://x/h/AAAAAAAAAAAAAAAAAAAAAAAA", token: cast.otherCustomer.access)
            #expect(wrong.status == .notFound)
            let checked = try await Self.checkIn(server, lausanne, code: "https://waybill.example/h/\(token)", photo: SampleImages.photoJPEG,
                                                 token: cast.otherCustomer.access)
            #expect(checked.status == .ok && checked.json["stage"].string == "waiting_for_driver", "\(checked)")
            #expect(try await Self.checkIn(server, lausanne, reference: reference, token: cast.otherCustomer.access).errorCode == "invalid_transition",
                    "a second check-in is a replay")
            let booking = try #require(try await SlotBookingRecord.query(on: server.db).filter(\.$orderID == OrderID(uuidString: order)!).first())
            #expect(booking.status == .completed)
            #expect(try await server.send(.GET, "/notifications", token: cast.customer.access).json["items"].array.contains { $0["kind"].string == "at_counter" })
            #expect(try await OrderFile.query(on: server.db).filter(\.$orderID == OrderID(uuidString: order)!).filter(\.$kind == .counterPhoto).count() == 1)
            // The sender reads the shipment: the counter's photo is among its files and is its check-in's
            // proof (this read used to trap on the photo's kind and take the server down).
            let read = try await server.send(.GET, "/shipments/\(order)", token: cast.customer.access)
            #expect(read.status == .ok, "\(read)")
            #expect(read.json["files"].array.map { $0["kind"].string } == ["counter_photo"], "\(read)")
            #expect(read.json["handOvers"][0]["proof"]["photo"]["kind"].string == "counter_photo", "\(read)")
            let photoURL = try #require(read.json["files"][0]["url"].string)
            #expect(try await server.send(.GET, String(photoURL.dropFirst("/api/v1".count)), token: cast.customer.access).status == .ok)
            #expect(try await server.status(of: order) == "accepted", "the driver's leg is where the shipment is")

            // The driver takes it on from the counter by scanning the label (a scan is required there).
            let noScan = try await server.send(.POST, "/orders/\(order)/pickup", json: [:], token: cast.driver.access)
            #expect(noScan.json["error"]["fields"]["proof"].string == "missing_qr_scan", "\(noScan)")
            let picked = try await server.send(.POST, "/orders/\(order)/pickup", json: ["scannedCode": token], token: cast.driver.access)
            #expect(picked.status == .ok && picked.json["status"].string == "in_transit", "\(picked)")
            // The driver does not deliver into a counter: the counter checks the parcel in.
            #expect(try await server.deliver(order, token: cast.driver.access).status == .conflict)
            // Nor is it offered to them: what the API lists is the shipment's rule (`ShipmentRules.actions`).
            let driversView = try await server.send(.GET, "/orders/\(order)", token: cast.driver.access)
            #expect(driversView.json["availableActions"].array.compactMap(\.string) == ["fail"], "\(driversView)")
            let arriving = try await server.send(.GET, "/counters/\(bern)/day", token: cast.otherCustomer.access)
            #expect(arriving.json["expected"].array.map { $0["stage"].string } == ["arriving"], "\(arriving)")
            let code = try await server.code(for: "bea@example.com")
            let arrived = try await Self.checkIn(server, bern, reference: reference.lowercased().replacingOccurrences(of: "-", with: " "),
                                                 token: cast.otherCustomer.access)
            #expect(arrived.status == .ok && arrived.json["stage"].string == "waiting_for_receiver", "typed reference: \(arrived)")
            try await server.deliverMail()
            #expect(server.mailer.messages.last { $0.to.address == "bea@example.com" }?.text.contains("Schalter Bern") == true)
            #expect(server.mailer.messages.last { $0.to.address == "bea@example.com" }?.text.contains(code) == true, "the same code as at pickup")

            // Collection: the receiver's code, five tries.
            let bad = try await server.send(.POST, "/counters/\(bern)/hand-outs", json: ["code": token, "receiverCode": code == "000000" ? "111111" : "000000",
                                                                                         "collectedBy": "Bea"], token: cast.otherCustomer.access)
            #expect(bad.errorCode == "invalid_recipient_code")
            let out = try await server.send(.POST, "/counters/\(bern)/hand-outs", json: ["code": token, "receiverCode": code, "collectedBy": "Bea Beispiel"],
                                            token: cast.otherCustomer.access)
            #expect(out.status == .ok && out.json["status"].string == "delivered" && out.json["stage"].string == "done", "\(out)")
            let again = try await server.send(.POST, "/counters/\(bern)/hand-outs", json: ["code": token, "receiverCode": code, "collectedBy": "Bea"],
                                              token: cast.otherCustomer.access)
            #expect(again.status == .conflict)
            let proofs = try await HandOver.query(on: server.db).filter(\.$orderID == OrderID(uuidString: order)!).sort(\.$id).all()
            #expect(proofs.map(\.kind) == [.counterDropOff, .legToLeg, .legToLeg, .delivery], "\(proofs.map(\.kind))")
            #expect(proofs[0].qrCode == token && proofs[0].photoFileID != nil && proofs[2].typedReference == reference && proofs[3].codeChecked)
            let after = try await Leg.query(on: server.db).filter(\.$orderID == OrderID(uuidString: order)!).sort(\.$position).all()
            #expect(after.map(\.status) == [.handedOver, .handedOver, .handedOver])
        }
    }

    @Test("Cancelling a shipment waiting at a counter is dispatch's, and cancels its later legs; the counter's list forgets it", arguments: TestDatabase.available)
    func cancelAtCounter(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let (lausanne, _, _) = try await Self.counters(server, cast)
            var body = TestServer.orderBody(payment: "card", extra: ["dropOffCounterId": lausanne])
            body["pickup"] = nil
            let order = try #require(try await server.send(.POST, "/orders", json: body, token: cast.customer.access).json["order"]["id"].string)
            try await Self.pay(server, order, cast)
            #expect(try await Self.checkIn(server, lausanne, code: try await LabelScanTests.token(server, order), token: cast.otherCustomer.access).status == .ok)
            #expect(try await server.send(.POST, "/orders/\(order)/cancel", json: ["reason": "changed my mind"], token: cast.customer.access).status == .conflict,
                    "the parcel is at the counter: dispatch cancels")
            #expect(try await server.send(.POST, "/orders/\(order)/cancel", json: ["reason": "asked by phone"], token: cast.manager.access).status == .ok)
            let legs = try await Leg.query(on: server.db).filter(\.$orderID == OrderID(uuidString: order)!).sort(\.$position).all()
            #expect(legs.map(\.status) == [.cancelled, .cancelled])
            let day = try await server.send(.GET, "/counters/\(lausanne)/day", token: cast.otherCustomer.access)
            #expect(day.json["here"].array.isEmpty && day.json["expected"].array.isEmpty)
        }
    }

    @Test("In the web app a customer sends from a counter to a counter, and the counter's staff check the parcel in with a photo and hand it out against the code; in French too",
          arguments: TestDatabase.available)
    func webDesk(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let (lausanne, bern, _) = try await Self.counters(server, cast)
            let ada = TestBrowser(server)
            _ = try await ada.signIn("ada@example.com")
            let form = try await ada.get("/orders/new")
            #expect(form.html.contains("I will drop it at a counter") && form.html.contains("Guichet Gare") && form.html.contains("Schalter Bern"))
            let fields = ["pickupMode": "counter", "dropOffCounter": lausanne, "dropoffMode": "counter", "collectionCounter": bern,
                          "weightClass": "small", "service": "standard", "recipientName": "Bea Beispiel", "recipientEmail": "bea@example.com"]
            let review = try await ada.post("/orders/new", fields, from: "/orders/new")
            #expect(review.status == .ok && review.html.contains("At the counter Guichet Gare") && review.html.contains("At the counter Schalter Bern"), "\(review.html.prefix(300))")
            var cash = fields
            cash["paymentMethod"] = "cash"
            cash["idempotencyKey"] = UUID().uuidString
            let refused = try await ada.post("/orders", cash, from: "/orders/new")
            #expect(refused.status == .unprocessableEntity, "no cash at a drop-off counter")
            var card = fields
            card["paymentMethod"] = "card"
            card["idempotencyKey"] = UUID().uuidString
            #expect(try await ada.post("/orders", card, from: "/orders/new").status == .seeOther)
            let order = try #require(try await Order.query(on: server.db).first())
            try await Self.pay(server, order.id!.uuidString, cast)
            let page = try await ada.get("/orders/\(order.id!.uuidString)")
            #expect(page.html.contains("data-counter-hint") && page.html.contains("Bring the parcel with its label to Guichet Gare"))

            // Bob works at both counters: the desk lists them; a wrong reference is a clear 404.
            let bob = TestBrowser(server)
            _ = try await bob.signIn("bob@example.com")
            #expect(try await bob.get("/orders/new").html.contains("href=\"/desk\""), "counter staff see the desk in the menu")
            let desks = try await bob.get("/desk")
            #expect(desks.html.contains("/desk/\(lausanne.uppercased())") && desks.html.contains("/desk/\(bern.uppercased())"))
            let deskPath = "/desk/\(lausanne.uppercased())"
            let day = try await bob.get(deskPath)
            #expect(day.html.contains("data-parcel=\"\(order.reference)\" data-stage=\"drop_off_expected\""))
            let wrong = try await bob.postFile(deskPath + "/check-in", field: "photo", bytes: [], filename: "", from: deskPath, fields: ["code": "WB-00000000"])
            #expect(wrong.status == .notFound && wrong.html.contains("role=\"alert\""))
            let checked = try await bob.postFile(deskPath + "/check-in", field: "photo", bytes: SampleImages.photoJPEG, filename: "parcel.jpg", from: deskPath,
                                                 fields: ["code": order.reference.lowercased()])
            #expect(checked.status == .seeOther, "\(checked.html.prefix(500))")
            let after = try await bob.get(deskPath + "?in=\(order.reference)")
            #expect(after.html.contains("is checked in") && after.html.contains("data-stage=\"waiting_for_driver\""))
            #expect(try await ada.get("/orders/new").html.contains("href=\"/desk\"") == false)
            // A phone's camera opening the label sends the counter's staff to their desk with it filled in.
            let opened = try await bob.get("/h/\(try #require(order.handoverToken))")
            #expect(opened.status == .seeOther && opened.headers.first(name: .location) == "/desk/\(lausanne.uppercased())?code=\(order.handoverToken!)",
                    "\(opened.headers)")
            #expect(try await bob.get("/desk/\(lausanne.uppercased())?code=\(order.handoverToken!)").html.contains("value=\"\(order.handoverToken!)\""))
            #expect(try await ada.get(deskPath).status == .forbidden)
            let boss = TestBrowser(server)
            _ = try await boss.signIn("boss@courier.example")
            let looked = try await boss.get(deskPath)
            #expect(looked.status == .ok && looked.html.contains(order.reference) && !looked.html.contains("id=\"scan-form\""),
                    "dispatch looks at the counter's day; the desk's forms are its staff's")

            // On to Bern with the driver, then collected there.
            try await server.advance(order.id!.uuidString, to: .accepted, cast: cast)
            let token = try #require(order.handoverToken)
            #expect(try await server.send(.POST, "/orders/\(order.id!.uuidString)/pickup", json: ["scannedCode": token], token: cast.driver.access).status == .ok)
            let bernPath = "/desk/\(bern.uppercased())"
            let code = try await server.code(for: "bea@example.com")  // mailed at pickup, alone in its subject
            #expect(try await bob.postFile(bernPath + "/check-in", field: "photo", bytes: [], filename: "", from: bernPath, fields: ["code": token]).status == .seeOther)
            bob.acceptLanguage = "fr"
            let french = try await bob.get(bernPath)
            #expect(french.html.contains("Enregistrer un colis") && french.html.contains("attend son destinataire"))
            let out = try await bob.post(bernPath + "/hand-out", ["outCode": order.reference, "receiverCode": code, "collectedBy": "Bea Beispiel"], from: bernPath)
            #expect(out.status == .seeOther, "\(out.html.prefix(500))")
            #expect(try await server.status(of: order.id!.uuidString) == "delivered")
        }
    }

    @Test("A customer and the counter's staff write to each other about a drop-off booked there; nobody else reads it; it closes with the booking",
          arguments: TestDatabase.available)
    func bookingConversation(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let (lausanne, _, admin) = try await Self.counters(server, cast)
            let day = TimeslotTests.day(server, in: 1)
            try #require(try await server.send(.POST, "/slot-templates", json: [
                "kind": "drop_off", "counterId": lausanne, "weekday": day.weekday.rawValue, "start": "09:00", "end": "11:00", "capacity": 3,
            ], token: cast.manager.access).status == .created)
            let slot = try #require(try await server.send(.GET, "/slots?kind=drop_off&counterId=\(lausanne)&from=\(day)&days=1",
                                                          token: cast.customer.access).json["items"][0]["id"].string)
            var body = TestServer.orderBody(payment: "card", extra: ["dropOffCounterId": lausanne, "dropOffSlotId": slot])
            body["pickup"] = nil
            let order = try #require(try await server.send(.POST, "/orders", json: body, token: cast.customer.access).json["order"]["id"].string)
            try await Self.pay(server, order, cast)
            let booking = try #require(try await server.send(.GET, "/orders/\(order)/slots", token: cast.customer.access).json["items"][0]["id"].string)
            let subject: [String: any Sendable] = ["subject": ["kind": "booking", "id": booking]]

            let opened = try await server.send(.POST, "/conversations", json: subject, token: cast.customer.access)
            #expect(opened.status == .ok && opened.json["roles"].array.map(\.string) == ["sender"], "\(opened)")
            let id = try #require(opened.json["id"].string)
            let roles = Set(opened.json["participants"].array.map { $0["role"].string ?? "" })
            #expect(roles == ["sender", "counter"], "the customer and the counter's staff: \(opened)")
            #expect(try await ConversationTests.say(server, id, "I will be ten minutes late", id: "m1", cast.customer.access).status == .created)
            let staffView = try await server.send(.POST, "/conversations", json: subject, token: cast.otherCustomer.access)
            #expect(staffView.json["id"].string == id && staffView.json["roles"].array.map(\.string) == ["counter"])
            #expect(try await ConversationTests.say(server, id, "No problem, we are open until six", id: "m2", cast.otherCustomer.access).status == .created)
            #expect(try await server.send(.GET, "/conversations/\(id)/messages", token: cast.customer.access).json["items"].array.count == 2)
            // Not the driver, not dispatch, not an admin who is not the counter's staff.
            for stranger in [cast.driver.access, cast.manager.access, admin] {
                #expect(try await server.send(.POST, "/conversations", json: subject, token: stranger).status == .notFound)
                #expect(try await server.send(.GET, "/conversations/\(id)/messages", token: stranger).status == .notFound)
            }
            // A pickup or delivery booking is no counter's.
            #expect(try await server.send(.POST, "/conversations", json: ["subject": ["kind": "booking", "id": UUID().uuidString]],
                                          token: cast.customer.access).status == .notFound)

            // Checked in: the booking is done and the conversation closes some days later.
            #expect(try await Self.checkIn(server, lausanne, code: try await LabelScanTests.token(server, order), token: cast.otherCustomer.access).status == .ok)
            #expect(try await ConversationTests.say(server, id, "Thanks!", id: "m3", cast.customer.access).status == .created, "still open right after")
            server.clock.advance(by: 15 * 86_400)
            let late = try await ConversationTests.say(server, id, "Hello?", id: "m4", try await server.login("ada@example.com").access)
            #expect(late.errorCode == "conversation_closed", "\(late)")
        }
    }

    @Test("Route plans collect a parcel from its counter once the counter holds it, or from the end of its drop-off slot; never before",
          arguments: TestDatabase.available)
    func plansWaitForTheCounter(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.startWorkingDay(try await server.cast())  // a whole shift ahead, whenever the test runs
            let (lausanne, _, _) = try await Self.counters(server, cast)
            try await server.goOnDuty(cast.driver.access)
            #expect(try await server.report(cast.driver.access, [(46.52, 6.63)]).status == .ok)
            var body = TestServer.orderBody(payment: "card", extra: ["dropOffCounterId": lausanne])
            body["pickup"] = nil
            let order = try #require(try await server.send(.POST, "/orders", json: body, token: cast.customer.access).json["order"]["id"].string)
            try await Self.pay(server, order, cast)
            func plan() async throws -> (planned: Set<String>, reasons: [String: String]) {
                let made = try await server.send(.POST, "/route-plans", json: ["seconds": 0.2], token: cast.manager.access)
                try #require(made.status == .created, "\(made)")
                let planned = Set(made.json["plan"]["routes"].array.flatMap { $0["stops"].array.compactMap { $0["orderId"].string } })
                let reasons = Dictionary(uniqueKeysWithValues: made.json["plan"]["unplanned"].array.map { ($0["orderId"].string!, $0["reason"].string!) })
                return (planned, reasons)
            }
            let before = try await plan()
            #expect(before.reasons[order] == "not_at_counter" && !before.planned.contains(order), "\(before)")
            #expect(try await Self.checkIn(server, lausanne, code: try await LabelScanTests.token(server, order), token: cast.otherCustomer.access).status == .ok)
            let after = try await plan()
            #expect(after.planned.contains(order) && after.reasons[order] == nil, "\(after)")
        }
    }
}
