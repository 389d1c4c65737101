import Foundation
import Testing
@testable import WaybillServer
import WaybillCore

@Suite("Shipments: boxes, parties, legs and hand-overs")
struct ShipmentTests {
    @Test("A receiver with an account finds the parcel under Incoming once it is paid, is told when it is on its way, sees no price, and confirms receipt with a photo once",
          arguments: TestDatabase.available)
    func receiverConfirmsReceipt(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            try await server.registerCustomer("bea@example.com")
            let bea = try await server.login("bea@example.com")
            // Addressed to Bea (the order body's recipient), in another case than she registered.
            let recipient: [String: any Sendable] = ["name": "Bea Beispiel", "email": "Bea@Example.com", "phone": "+41 79 000 00 00"]
            let unpaid = try await server.placeOrder(cast.customer.access, payment: "card", extra: ["recipient": recipient])
            let id = try await server.placeOrder(cast.customer.access, extra: ["recipient": recipient])

            let incoming = try await server.send(.GET, "/shipments?box=incoming", token: bea.access)
            #expect(incoming.status == .ok)
            #expect(incoming.json["items"].array.map { $0["id"].string } == [id], "an unpaid checkout is nobody's incoming parcel")
            #expect(incoming.json["boxes"].array.compactMap(\.string) == ["sent", "incoming"])
            #expect(try await server.send(.GET, "/shipments/\(unpaid)", token: bea.access).status == .notFound)

            try await server.advance(id, to: .inTransit, cast: cast)
            _ = try await server.deliverMail()
            let told = try await server.send(.GET, "/notifications", token: bea.access)
            #expect(told.json["items"].array.map { $0["kind"].string } == ["parcel_coming"])

            let seen = try await server.send(.GET, "/shipments/\(id)", token: bea.access)
            #expect(seen.status == .ok)
            #expect(seen.json["roles"].array.compactMap(\.string) == ["receiver"])
            #expect(seen.json["price"].string == nil && seen.json["payment"]["method"].string == nil, "a present stays a present")
            #expect(seen.json["money"]["paid"]["amount"].int == nil)
            #expect(seen.json["sender"]["firstName"].string != nil && seen.json["sender"]["email"].string == nil)
            #expect(seen.json["legs"].array.map { $0["kind"].string } == ["fleet"])
            #expect(seen.json["legs"][0]["status"].string == "in_transit")
            #expect(seen.json["handOvers"].array.map { $0["kind"].string } == ["pickup"])
            #expect(!seen.json["events"].array.contains { $0["note"].string != nil }, "no event note (the cash collected) for the receiver")
            #expect(seen.json["availableActions"].array.isEmpty)
            // The old shape always has the price: not for the receiver.
            #expect(try await server.send(.GET, "/orders/\(id)", token: bea.access).status == .notFound)

            let early = try await server.upload("/shipments/\(id)/receipt", parts: [], token: bea.access)
            #expect(early.status == .conflict && early.errorCode == "invalid_transition", "\(early)")
            try await server.deliver(id, token: cast.driver.access)
            #expect(try await server.send(.GET, "/shipments/\(id)", token: bea.access).json["availableActions"].array.compactMap(\.string) == ["confirm_receipt"])
            #expect(try await server.upload("/shipments/\(id)/receipt", parts: [], token: cast.customer.access).status == .forbidden)
            #expect(try await server.upload("/shipments/\(id)/receipt", parts: [], token: cast.otherCustomer.access).status == .notFound)

            let confirmed = try await server.upload("/shipments/\(id)/receipt",
                                                    parts: [.file("photo", SampleImages.photoJPEG, type: "image/jpeg", filename: "p.jpg")],
                                                    token: bea.access)
            #expect(confirmed.status == .ok, "\(confirmed)")
            let receipt = confirmed.json["handOvers"].array.last
            #expect(receipt?["kind"].string == "receipt" && receipt?["proof"]["kinds"].array.compactMap(\.string) == ["photo"])
            #expect(receipt?["by"]["firstName"].string != nil)
            let photoURL = try #require(receipt?["proof"]["photo"]["url"].string)
            let photo = try await server.send(.GET, String(photoURL.dropFirst("/api/v1".count)), token: cast.customer.access)
            #expect(photo.status == .ok && photo.headers.contentType?.subType == "jpeg", "the sender sees the receiver's photo")
            #expect(confirmed.json["availableActions"].array.isEmpty)
            let again = try await server.upload("/shipments/\(id)/receipt", parts: [], token: bea.access)
            #expect(again.status == .conflict && again.errorCode == "already_confirmed")
            _ = try await server.deliverMail()
            let senderTold = try await server.send(.GET, "/notifications", token: cast.customer.access)
            #expect(senderTold.json["items"][0]["kind"].string == "receipt_confirmed")
        }
    }

    @Test("The sender's shipment shows its one fleet leg and each hand-over with its proof; the old order endpoints say they are deprecated and where to go",
          arguments: TestDatabase.available)
    func senderSeesLegsAndHandOvers(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let id = try await server.placeOrder(cast.customer.access)
            try await server.advance(id, to: .delivered, cast: cast)
            let shipment = try await server.send(.GET, "/shipments/\(id)", token: cast.customer.access)
            #expect(shipment.status == .ok)
            #expect(shipment.json["roles"].array.compactMap(\.string) == ["sender"])
            let price = try await server.price(of: id)
            #expect(shipment.json["price"]["amount"].int == price)
            #expect(shipment.json["money"]["paid"]["amount"].int == price, "the cash collected, from the ledger")
            #expect(shipment.json["money"]["entries"].array.map { $0["kind"].string } == ["cash_collected"])
            #expect(shipment.json["money"]["paidOut"]["amount"].int == nil, "payouts are for staff")
            let leg = shipment.json["legs"][0]
            #expect(leg["kind"].string == "fleet" && leg["status"].string == "handed_over" && leg["to"]["city"].string == "Bern")
            #expect(leg["assignee"]["lastName"].string == nil, "the sender knows the driver by first name")
            #expect(shipment.json["handOvers"].array.map { $0["kind"].string } == ["pickup", "delivery"])
            let delivery = shipment.json["handOvers"][1]
            #expect(delivery["proof"]["kinds"].array.compactMap(\.string) == ["signature"])
            #expect(delivery["proof"]["signedBy"].string == "Bea Beispiel" && delivery["proof"]["signature"]["url"].string != nil)

            let manager = try await server.send(.GET, "/shipments/\(id)", token: cast.manager.access)
            #expect(manager.json["roles"].array.compactMap(\.string) == ["manager"])
            #expect(manager.json["money"]["paidOut"]["amount"].int == 0)
            #expect(manager.json["legs"][0]["assignee"]["email"].string != nil)
            let driver = try await server.send(.GET, "/shipments/\(id)", token: cast.driver.access)
            #expect(driver.json["roles"].array.compactMap(\.string) == ["carrier"])
            #expect(driver.json["price"].string == nil && driver.json["payment"]["method"].string == "cash", "the carrier sees what is due, not the price")
            #expect(try await server.send(.GET, "/shipments/\(id)", token: cast.otherDriver.access).status == .notFound)

            let old = try await server.send(.GET, "/orders/\(id)", token: cast.customer.access)
            #expect(old.status == .ok && old.headers.first(name: "Deprecation") == "@1795392000")
            #expect(old.headers.first(name: "Link") == "</api/v1/shipments/\(id)>; rel=\"successor-version\"")
            let list = try await server.send(.GET, "/orders", token: cast.customer.access)
            #expect(list.headers.first(name: "Link") == "</api/v1/shipments>; rel=\"successor-version\"")
            #expect(try await server.send(.GET, "/shipments/\(id)", token: cast.customer.access).headers.first(name: "Deprecation") == nil)
        }
    }

    @Test("Each person has the boxes their account allows: sent and incoming for a customer, carrying for a driver, all for dispatch; another box is 403",
          arguments: TestDatabase.available)
    func boxes(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let id = try await server.placeOrder(cast.customer.access)
            try await server.advance(id, to: .assigned, cast: cast)
            func box(_ name: String?, _ token: String) async throws -> Reply {
                try await server.send(.GET, "/shipments" + (name.map { "?box=\($0)" } ?? ""), token: token)
            }
            #expect(try await box(nil, cast.customer.access).json["items"].array.map { $0["id"].string } == [id])
            #expect(try await box("sent", cast.customer.access).json["items"].array.count == 1)
            #expect(try await box("incoming", cast.customer.access).json["items"].array.isEmpty)
            #expect(try await box("carrying", cast.customer.access).status == .forbidden)
            #expect(try await box("all", cast.customer.access).status == .forbidden)
            let carrying = try await box("carrying", cast.driver.access)
            #expect(carrying.json["items"].array.map { $0["id"].string } == [id])
            #expect(carrying.json["boxes"].array.compactMap(\.string) == ["sent", "incoming", "carrying"], "a driver sends too")
            #expect(carrying.json["items"][0]["legs"].array.isEmpty, "a list has no legs")
            #expect(try await box("carrying", cast.otherDriver.access).json["items"].array.isEmpty)
            #expect(try await box("all", cast.manager.access).json["items"].array.count == 1)
            #expect(try await box("nonsense", cast.manager.access).status == .badRequest)
        }
    }

    @Test("The manager's lists read every kind of row: a failed order's reason, a delivered one's driver, a cancelled one's reason, on both databases",
          arguments: TestDatabase.both)
    func listsReadEveryRow(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let failed = try await server.placeOrder(cast.customer.access)
            try await server.advance(failed, to: .inTransit, cast: cast)
            #expect(try await server.send(.POST, "/orders/\(failed)/fail", json: ["reason": "recipient_absent", "note": "Nobody home"],
                                          token: cast.driver.access).status == .ok)
            let delivered = try await server.placeOrder(cast.customer.access)
            try await server.advance(delivered, to: .delivered, cast: cast)
            let cancelled = try await server.placeOrder(cast.otherCustomer.access)
            #expect(try await server.send(.POST, "/orders/\(cancelled)/cancel", json: ["reason": "Changed my mind"],
                                          token: cast.otherCustomer.access).status == .ok)
            for path in ["/orders", "/orders?status=failed,delivered", "/shipments?box=all"] {
                let list = try await server.send(.GET, path, token: cast.manager.access)
                #expect(list.status == .ok, "\(path): \(list)")
            }
            let items = try await server.send(.GET, "/orders", token: cast.manager.access).json["items"].array
            let byID = Dictionary(uniqueKeysWithValues: items.map { ($0["id"].string ?? "", $0) })
            #expect(byID[failed]?["failure"]["reason"].string == "recipient_absent" && byID[failed]?["failure"]["note"].string == "Nobody home")
            #expect(byID[delivered]?["status"].string == "delivered" && byID[delivered]?["driver"]["firstName"].string != nil)
            #expect(byID[cancelled]?["cancellationReason"].string == "Changed my mind")
        }
    }

    @Test("In the web app the receiver has an Incoming page, sees the parcel without its price, and confirms receipt from its page",
          arguments: TestDatabase.available)
    func receiverInTheWebApp(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            try await server.registerCustomer("bea@example.com")
            let id = try await server.placeOrder(cast.customer.access)
            try await server.advance(id, to: .inTransit, cast: cast)
            let bea = TestBrowser(server)
            _ = try await bea.signIn("bea@example.com")
            let incoming = try await bea.get("/incoming")
            #expect(incoming.status == .ok && incoming.html.contains("/orders/\(id)"))
            let before = try await bea.get("/orders/\(id)")
            // A price reads "CHF 12.50"; the bare letters can turn up inside the page's random form tokens.
            #expect(before.status == .ok && !before.html.contains(/CHF -?\d/) && !before.html.contains("/receipt"))
            try await server.deliver(id, token: cast.driver.access)
            let delivered = try await bea.get("/orders/\(id)")
            #expect(delivered.html.contains("action=\"/orders/\(id)/receipt\""))
            let confirmed = try await bea.post("/orders/\(id)/receipt", [:], from: "/orders/\(id)")
            #expect(confirmed.status == .seeOther && confirmed.location == "/orders/\(id)?receipt=1", "\(confirmed.status)")
            let after = try await bea.get("/orders/\(id)?receipt=1")
            #expect(after.html.contains("Receipt confirmed") && !after.html.contains("action=\"/orders/\(id)/receipt\""))
            // Not for someone else, and not without the page's token.
            let other = TestBrowser(server)
            _ = try await other.signIn("bob@example.com")
            #expect(try await other.post("/orders/\(id)/receipt", [:], from: "/incoming").status == .notFound)
        }
    }
}
