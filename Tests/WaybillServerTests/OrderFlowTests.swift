import Fluent
import Foundation
import Testing
import Vapor
@testable import WaybillServer
import WaybillCore

@Suite("Orders from quote to proof of delivery")
struct OrderFlowTests {
    @Test("A cash delivery end to end: quote, order, managers told, assign, accept, pickup with cash, signature, history", arguments: TestDatabase.available)
    func cashDeliveryEndToEnd(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()

            // The price first: with coordinates at both ends, by distance.
            let quote = try await server.send(.POST, "/quotes", json: [
                "pickup": ["useAccountAddress": true, "latitude": 47.3779, "longitude": 8.5403] as [String: any Sendable],
                "dropoff": TestServer.bern, "weightClass": "small", "service": "standard",
            ], token: cast.customer.access)
            #expect(quote.status == .ok, "\(quote)")
            #expect(quote.json["price"]["currency"].string == "CHF")
            let distanceKm = try #require(quote.json["distanceKm"].value as? Double)
            #expect(distanceKm > 90 && distanceKm < 100)
            let lines = quote.json["breakdown"].array.compactMap { $0["amount"].int }
            #expect(lines.reduce(0, +) == quote.json["price"]["amount"].int)

            let created = try await server.send(.POST, "/orders", json: TestServer.orderBody(extra: ["notes": "Ring twice"]), token: cast.customer.access)
            #expect(created.status == .created, "\(created)")
            #expect(created.json["order"]["status"].string == "pending")
            #expect(created.json["next"]["action"].string == "none")
            #expect(created.json["order"]["payment"]["status"].string == "due_on_pickup")
            #expect(created.json["order"]["pickup"]["street"].string == "Bahnhofstrasse 1")
            #expect(created.json["order"]["reference"].string?.hasPrefix("WB-") == true)
            let id = try #require(created.json["order"]["id"].string)
            let price = try #require(created.json["order"]["price"]["amount"].int)
            // Nothing to pay online: no checkout was opened for it.
            let stored = try #require(try await Order.find(OrderID(uuidString: id), on: server.app.db))
            #expect(stored.checkoutSessionID == nil && stored.checkoutURL == nil)

            // Managers hear of it, in the app and by mail.
            let managerInbox = try await server.send(.GET, "/notifications", token: cast.manager.access)
            #expect(managerInbox.json["items"][0]["kind"].string == "order_pending")
            #expect(managerInbox.json["unreadCount"].int == 1)
            try await server.deliverMail()
            #expect(server.mailer.messages.contains { $0.to.address == "boss@courier.example" && $0.subject.contains("New order") })

            // Assign: the driver is told.
            let assigned = try await server.send(.POST, "/orders/\(id)/assign", json: ["driverId": cast.driver.userID], token: cast.manager.access)
            #expect(assigned.status == .ok, "\(assigned)")
            #expect(assigned.json["driver"]["id"].string == cast.driver.userID)
            let driverInbox = try await server.send(.GET, "/notifications", token: cast.driver.access)
            #expect(driverInbox.json["items"][0]["kind"].string == "order_assigned")
            let driverList = try await server.send(.GET, "/orders", token: cast.driver.access)
            #expect(driverList.json["items"].array.map { $0["id"].string } == [id])
            #expect(driverList.json["items"][0]["availableActions"].array.compactMap(\.string) == ["accept", "fail"])

            #expect(try await server.send(.POST, "/orders/\(id)/accept", token: cast.driver.access).status == .ok)
            // Cash orders need the amount collected.
            let noCash = try await server.send(.POST, "/orders/\(id)/pickup", json: [:], token: cast.driver.access)
            #expect(noCash.status == .unprocessableEntity, "\(noCash)")
            #expect(noCash.json["error"]["fields"]["cashCollected"].string == "required_for_cash")
            let pickedUp = try await server.send(.POST, "/orders/\(id)/pickup", json: TestServer.cash(price), token: cast.driver.access)
            #expect(pickedUp.status == .ok, "\(pickedUp)")
            #expect(pickedUp.json["status"].string == "in_transit")
            #expect(pickedUp.json["payment"]["status"].string == "collected")
            #expect(pickedUp.json["payment"]["cashCollected"]["amount"].int == price)

            let delivered = try await server.deliver(id, token: cast.driver.access, photo: SampleImages.photoJPEG)
            #expect(delivered.status == .ok, "\(delivered)")
            #expect(delivered.json["status"].string == "delivered")
            #expect(delivered.json["proof"]["recipientName"].string == "Bea Beispiel")
            let signatureURL = try #require(delivered.json["proof"]["signature"]["url"].string)
            let photoURL = try #require(delivered.json["proof"]["photo"]["url"].string)

            // The customer's inbox tells the story.
            let inbox = try await server.send(.GET, "/notifications", token: cast.customer.access)
            #expect(inbox.json["items"].array.compactMap { $0["kind"].string } == ["order_delivered", "order_picked_up", "order_accepted"])

            // The full record, for the manager: every stage with who and when, the proof.
            let record = try await server.send(.GET, "/orders/\(id)", token: cast.manager.access)
            #expect(record.json["events"].array.compactMap { $0["type"].string } == ["created", "assigned", "accepted", "picked_up", "delivered"])
            #expect(record.json["events"][1]["actor"]["id"].string == cast.manager.userID)
            #expect(record.json["events"][4]["actor"]["id"].string == cast.driver.userID)
            #expect(record.json["customer"]["email"].string == "ada@example.com")
            #expect(record.json["notes"].string == "Ring twice")
            #expect(record.json["availableActions"].array.isEmpty)

            // The signature and photo: for the order's people only, metadata gone.
            let signature = try await server.send(.GET, String(signatureURL.dropFirst("/api/v1".count)), token: cast.customer.access)
            #expect(signature.status == .ok)
            #expect(signature.headers.contentType?.description.hasPrefix("image/png") == true)
            #expect(!signature.text.contains("secret-author"))
            let photo = try await server.send(.GET, String(photoURL.dropFirst("/api/v1".count)), token: cast.manager.access)
            #expect(photo.status == .ok)
            #expect(Array(photo.body.readableBytesView.prefix(2)) == [0xFF, 0xD8])
            #expect(!photo.text.contains("SecretCam"))
            for stranger in [cast.otherCustomer.access, cast.otherDriver.access] {
                #expect(try await server.send(.GET, String(signatureURL.dropFirst("/api/v1".count)), token: stranger).status == .notFound)
                #expect(try await server.send(.GET, "/orders/\(id)", token: stranger).status == .notFound)
            }
            #expect(try await server.send(.GET, String(signatureURL.dropFirst("/api/v1".count))).status == .unauthorized)
        }
    }

    @Test("Customers see their own orders, drivers theirs, managers all, with filters and cursor paging", arguments: TestDatabase.both)
    func listing(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            var mine: [String] = []
            for _ in 0..<5 { mine.append(try await server.placeOrder(cast.customer.access)) }
            let theirs = try await server.placeOrder(cast.otherCustomer.access)
            try await server.advance(mine[0], to: .assigned, cast: cast)

            let own = try await server.send(.GET, "/orders?limit=2", token: cast.customer.access)
            #expect(own.json["items"].array.count == 2)
            var seen = own.json["items"].array.compactMap { $0["id"].string }
            var cursor = own.json["nextCursor"].string
            while let next = cursor {
                let page = try await server.send(.GET, "/orders?limit=2&cursor=\(next)", token: cast.customer.access)
                seen += page.json["items"].array.compactMap { $0["id"].string }
                cursor = page.json["nextCursor"].string
            }
            #expect(seen == mine.reversed(), "newest first, each once")

            let all = try await server.send(.GET, "/orders", token: cast.manager.access)
            #expect(all.json["items"].array.count == 6)
            let byCustomer = try await server.send(.GET, "/orders?customerId=\(cast.otherCustomer.userID)", token: cast.manager.access)
            #expect(byCustomer.json["items"].array.compactMap { $0["id"].string } == [theirs])
            let assigned = try await server.send(.GET, "/orders?status=assigned,accepted", token: cast.manager.access)
            #expect(assigned.json["items"].array.compactMap { $0["id"].string } == [mine[0]])
            let byDriver = try await server.send(.GET, "/orders?driverId=\(cast.driver.userID)", token: cast.manager.access)
            #expect(byDriver.json["items"].array.count == 1)
            let future = try await server.send(.GET, "/orders?from=2999-01-01T00:00:00Z", token: cast.manager.access)
            #expect(future.json["items"].array.isEmpty)
            #expect(try await server.send(.GET, "/orders", token: cast.otherDriver.access).json["items"].array.isEmpty)

            let badStatus = try await server.send(.GET, "/orders?status=lost", token: cast.manager.access)
            #expect(badStatus.status == .badRequest)
            #expect(badStatus.json["error"]["fields"]["status"].string == "invalid")
            #expect(try await server.send(.GET, "/orders?cursor=nonsense", token: cast.manager.access).errorCode == "invalid_parameter")
            // A path the API has, with a method it does not take.
            let wrongMethod = try await server.send(.PUT, "/orders", token: cast.manager.access)
            #expect(wrongMethod.status == .methodNotAllowed)
            #expect(wrongMethod.headers.first(name: .allow) == "GET, POST")
            for bad in ["limit=abc", "from=yesterday"] {
                let reply = try await server.send(.GET, "/orders?\(bad)", token: cast.manager.access)
                #expect(reply.status == .badRequest && reply.errorCode == "invalid_parameter", "\(bad): \(reply)")
            }
        }
    }

    @Test("Order input: every problem listed at once; invoice only for companies", arguments: TestDatabase.available)
    func orderValidation(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let bad = try await server.send(.POST, "/orders", json: [
                "pickup": ["street": "", "postalCode": "8001"], "dropoff": ["street": "X", "postalCode": "??", "city": "Bern"],
                "weightClass": "small", "service": "standard", "paymentMethod": "invoice", "recipient": ["name": " ", "email": "not-mail"],
            ], token: cast.customer.access)
            #expect(bad.status == .unprocessableEntity)
            #expect(bad.json["error"]["fields"].keys == ["pickup.street", "pickup.city", "dropoff.postalCode", "recipient.name", "recipient.email", "paymentMethod"])
            let missing = try await server.send(.POST, "/orders", json: ["pickup": ["useAccountAddress": true]], token: cast.customer.access)
            #expect(missing.status == .unprocessableEntity)
            #expect(missing.json["error"]["fields"].keys.isSuperset(of: ["weightClass", "service", "paymentMethod", "recipient"]))
            // The drop-off may be a counter instead (`collectionCounterId`): without either, its address is missing.
            var noDropoff = TestServer.orderBody()
            noDropoff["dropoff"] = nil
            #expect(try await server.send(.POST, "/orders", json: noDropoff, token: cast.customer.access).json["error"]["fields"]["dropoff.street"].string == "required")
            // Staff send too, but a pickup "at my address" needs an address of one's own; nothing was stored.
            let noAddress = try await server.send(.POST, "/orders", json: TestServer.orderBody(), token: cast.driver.access)
            #expect(noAddress.status == .unprocessableEntity, "\(noAddress)")
            #expect(try await Order.query(on: server.db).count() == 0)

            // A company account may pay by invoice and gets a monthly statement.
            try await server.registerCustomer("max@acme.example", isCompany: true)
            let company = try await server.login("max@acme.example")
            let first = try await server.placeOrder(company.access, payment: "invoice")
            _ = try await server.placeOrder(company.access, payment: "invoice")
            let cancelled = try await server.placeOrder(company.access, payment: "invoice")
            try await server.advance(cancelled, to: .cancelled, cast: cast)
            let statements = try await server.send(.GET, "/invoices", token: company.access)
            #expect(statements.status == .ok, "\(statements)")
            let statement = statements.json["items"][0]
            #expect(statement["orders"].array.count == 2)
            #expect(statement["total"]["amount"].int == 2 * (try await server.price(of: first)))
            let pageURL = try #require(statement["pageUrl"].string)
            let page = try await server.page(.GET, String(pageURL.dropFirst("http://localhost:8080".count)))
            #expect(page.status == .ok)
            #expect(page.text.contains("Acme SA") && page.text.contains("Total"))
            #expect(try await server.page(.GET, "/statements/forged.token").status == .notFound)
            // Managers see every company's; a private customer has none; drivers none at all.
            let all = try await server.send(.GET, "/invoices?month=\(Orders.currentMonth(in: server.app.waybill.config.displayTimeZone))", token: cast.manager.access)
            #expect(all.json["items"].array.count == 1)
            #expect(try await server.send(.GET, "/invoices", token: cast.customer.access).status == .forbidden)
            #expect(try await server.send(.GET, "/invoices", token: cast.driver.access).status == .forbidden)
            #expect(try await server.send(.GET, "/invoices?month=2026-13", token: cast.manager.access).status == .badRequest)
        }
    }

    @Test("The same Idempotency-Key gives back the same order instead of a second one", arguments: TestDatabase.both)
    func idempotentCreate(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let key = [("Idempotency-Key", "retry-123")]
            let first = try await server.send(.POST, "/orders", json: TestServer.orderBody(), token: cast.customer.access, headers: key)
            let second = try await server.send(.POST, "/orders", json: TestServer.orderBody(), token: cast.customer.access, headers: key)
            #expect(first.status == .created && second.status == .created)
            #expect(first.json["order"]["id"].string == second.json["order"]["id"].string)
            #expect(try await Order.query(on: server.db).count() == 1)
            // Another customer's identical key is theirs alone.
            _ = try await server.send(.POST, "/orders", json: TestServer.orderBody(), token: cast.otherCustomer.access, headers: key)
            #expect(try await Order.query(on: server.db).count() == 2)
        }
    }

    @Test("Tariff: managers change it, quotes follow, existing orders keep their price", arguments: TestDatabase.available)
    func tariffChanges(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let flatQuote: [String: any Sendable] = ["pickup": ["useAccountAddress": true],
                                                     "dropoff": ["street": "Bundesplatz 3", "postalCode": "3005", "city": "Bern"],
                                                     "weightClass": "medium", "service": "express"]
            let before = try await server.send(.POST, "/quotes", json: flatQuote, token: cast.customer.access)
            #expect(before.json["price"]["amount"].int == 3000)  // flat 20.00 × 150 %
            #expect(before.json["distanceKm"].exists == false)
            let order = try await server.placeOrder(cast.customer.access)
            let priceBefore = try await server.price(of: order)

            var tariff = try await server.send(.GET, "/tariff", token: cast.manager.access).json.value as! [String: Any]
            #expect(tariff["version"] as? Int == 1)
            tariff["expressMultiplierPercent"] = 200
            tariff["medium"] = ["baseFee": 1000, "perKm": 100, "flatFee": 2500]
            tariff["small"] = ["baseFee": 1, "perKm": 1, "flatFee": 9999]
            let put = try await server.send(.PUT, "/tariff", rawBody: String(decoding: try JSONSerialization.data(withJSONObject: tariff), as: UTF8.self), token: cast.manager.access)
            #expect(put.status == .ok, "\(put)")
            #expect(put.json["version"].int == 2)
            let after = try await server.send(.POST, "/quotes", json: flatQuote, token: cast.customer.access)
            #expect(after.json["price"]["amount"].int == 5000)
            #expect(try await server.price(of: order) == priceBefore)
            #expect(try await server.send(.PUT, "/tariff", rawBody: String(decoding: try JSONSerialization.data(withJSONObject: tariff), as: UTF8.self), token: cast.driver.access).status == .forbidden)
            let detail = try await server.send(.GET, "/orders/\(order)", token: cast.customer.access)
            #expect(detail.json["price"]["amount"].int == priceBefore)

            tariff["expressMultiplierPercent"] = 50
            tariff["currency"] = "francs"
            let bad = try await server.send(.PUT, "/tariff", rawBody: String(decoding: try JSONSerialization.data(withJSONObject: tariff), as: UTF8.self), token: cast.manager.access)
            #expect(bad.status == .unprocessableEntity)
            #expect(bad.json["error"]["fields"].keys == ["expressMultiplierPercent", "currency"])
            #expect(try await server.send(.GET, "/tariff", token: cast.customer.access).status == .forbidden)
        }
    }

    @Test("A recipient code is mailed at pickup; delivery needs it, and five wrong tries lock it", arguments: TestDatabase.available)
    func recipientCode(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let noEmail = try await server.send(.POST, "/orders", json: TestServer.orderBody(extra: [
                "requireRecipientCode": true, "recipient": ["name": "Bea"]]), token: cast.customer.access)
            #expect(noEmail.json["error"]["fields"]["recipient.email"].string == "required_for_recipient_code")

            let id = try await server.placeOrder(cast.customer.access, extra: ["requireRecipientCode": true])
            try await server.advance(id, to: .inTransit, cast: cast)
            let code = try await server.code(for: "bea@example.com")
            let without = try await server.deliver(id, token: cast.driver.access)
            #expect(without.json["error"]["fields"]["code"].string == "required")
            let wrong = code == "000000" ? "111111" : "000000"
            for _ in 0..<5 {
                let reply = try await server.deliver(id, token: cast.driver.access, code: wrong)
                #expect(reply.errorCode == "invalid_recipient_code")
            }
            let locked = try await server.deliver(id, token: cast.driver.access, code: code)
            #expect(locked.errorCode == "recipient_code_locked")
            #expect(try await server.status(of: id) == "in_transit")

            let second = try await server.placeOrder(cast.customer.access, extra: ["requireRecipientCode": true])
            try await server.advance(second, to: .inTransit, cast: cast)
            let secondCode = try await server.code(for: "bea@example.com")
            let ok = try await server.deliver(second, token: cast.driver.access, code: secondCode)
            #expect(ok.status == .ok, "\(ok)")
            #expect(ok.json["proof"]["recipientCodeVerified"].bool == true)
        }
    }

    @Test("Failed deliveries go back to managers; notifications can be read, only by their owner", arguments: TestDatabase.available)
    func failAndNotifications(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let id = try await server.placeOrder(cast.customer.access)
            try await server.advance(id, to: .accepted, cast: cast)
            let badReason = try await server.send(.POST, "/orders/\(id)/fail", json: ["reason": "lazy"], token: cast.driver.access)
            #expect(badReason.status == .unprocessableEntity)
            let failed = try await server.send(.POST, "/orders/\(id)/fail", json: ["reason": "address_wrong", "note": "No such house"], token: cast.driver.access)
            #expect(failed.json["status"].string == "failed")
            #expect(failed.json["failure"]["reason"].string == "address_wrong")
            let inbox = try await server.send(.GET, "/notifications?unread=true", token: cast.manager.access)
            let note = try #require(inbox.json["items"].array.first { $0["kind"].string == "order_failed" })
            let noteID = try #require(note["id"].string)
            // Reassign to another driver; the old one loses sight of it.
            let reassigned = try await server.send(.POST, "/orders/\(id)/assign", json: ["driverId": cast.otherDriver.userID], token: cast.manager.access)
            #expect(reassigned.status == .ok)
            #expect(try await server.send(.GET, "/orders/\(id)", token: cast.driver.access).status == .notFound)
            #expect(try await server.send(.GET, "/orders/\(id)", token: cast.otherDriver.access).status == .ok)
            // A manager may take it themself.
            #expect(try await server.send(.POST, "/orders/\(id)/fail", json: ["reason": "other"], token: cast.otherDriver.access).status == .ok)
            #expect(try await server.send(.POST, "/orders/\(id)/assign", json: ["driverId": cast.manager.userID], token: cast.manager.access).status == .ok)
            #expect(try await server.send(.POST, "/orders/\(id)/accept", token: cast.manager.access).status == .ok)
            // Taking an accepted order from its driver needs an explicit reassign; the driver is told.
            let taken = try await server.placeOrder(cast.customer.access)
            try await server.advance(taken, to: .accepted, cast: cast)
            let plain = try await server.send(.POST, "/orders/\(taken)/assign", json: ["driverId": cast.otherDriver.userID], token: cast.manager.access)
            #expect(plain.status == .conflict && plain.json["error"]["currentStatus"].string == "accepted")
            let moved = try await server.send(.POST, "/orders/\(taken)/assign", json: ["driverId": cast.otherDriver.userID, "reassign": true], token: cast.manager.access)
            #expect(moved.json["status"].string == "assigned" && moved.json["driver"]["id"].string == cast.otherDriver.userID, "\(moved)")
            let told = try await server.send(.GET, "/notifications", token: cast.driver.access)
            #expect(told.json["items"][0]["kind"].string == "order_unassigned")
            #expect(try await server.send(.GET, "/orders/\(taken)", token: cast.driver.access).status == .notFound)
            // Only active drivers (or oneself) can be assigned.
            let other = try await server.placeOrder(cast.customer.access)
            let toCustomer = try await server.send(.POST, "/orders/\(other)/assign", json: ["driverId": cast.customer.userID], token: cast.manager.access)
            #expect(toCustomer.json["error"]["fields"]["driverId"].string == "not_an_active_driver")

            #expect(try await server.send(.POST, "/notifications/\(noteID)/read", token: cast.customer.access).status == .notFound)
            let read = try await server.send(.POST, "/notifications/\(noteID)/read", token: cast.manager.access)
            #expect(read.json["read"].bool == true)
            let after = try await server.send(.GET, "/notifications?unread=true", token: cast.manager.access)
            #expect(!after.json["items"].array.contains { $0["id"].string == noteID })
        }
    }
}
