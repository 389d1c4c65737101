import Fluent
import Foundation
import Testing
import Vapor
import WaybillCore
@testable import WaybillServer

@Suite("Ratings both ways: after delivery, hidden until both are in or the window closes")
struct RatingTests {
    /// A delivered order of Ada's, carried by Luca.
    static func delivered(_ server: TestServer, _ cast: Cast) async throws -> String {
        let order = try await server.placeOrder(cast.customer.access)
        try await server.advance(order, to: .delivered, cast: cast)
        return order
    }

    @Test("Customer and driver rate each other after delivery; each rating stays hidden until both are in; the rated person answers once",
          arguments: TestDatabase.available)
    func bothWays(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let early = try await server.placeOrder(cast.customer.access)
            let tooEarly = try await server.send(.POST, "/shipments/\(early)/ratings", json: ["stars": 5], token: cast.customer.access)
            #expect(tooEarly.status == .conflict, "only once delivered: \(tooEarly)")

            let order = try await Self.delivered(server, cast)
            let mine = try await server.send(.GET, "/shipments/\(order)/ratings", token: cast.customer.access)
            #expect(mine.json["window"].string == "open" && mine.json["open"].array.map { $0["direction"].string } == ["sender_to_carrier"])
            #expect(mine.json["open"][0]["rateeId"].string == cast.driver.userID && mine.json["open"][0]["tags"].array.count == 8)

            let given = try await server.send(.POST, "/shipments/\(order)/ratings",
                                              json: ["stars": 5, "tags": ["on_time", "friendly"], "comment": "Quick and kind", "privateNote": "Thanks Luca"],
                                              token: cast.customer.access)
            #expect(given.status == .created && given.json["status"].string == "pending" && given.json["privateNote"].string == "Thanks Luca", "\(given)")
            // Blind: the driver does not see it, nor does it count anywhere yet.
            let asDriver = try await server.send(.GET, "/shipments/\(order)/ratings", token: cast.driver.access)
            #expect(asDriver.json["ratings"].array.isEmpty && asDriver.json["open"][0]["direction"].string == "carrier_to_sender", "\(asDriver)")
            #expect(try await server.send(.GET, "/users/\(cast.driver.userID)/ratings", token: cast.otherCustomer.access).json["count"].int == 0)
            #expect(try await server.send(.POST, "/shipments/\(order)/ratings", json: ["stars": 4], token: cast.customer.access).status == .conflict,
                    "one rating per party")

            // The driver's rating completes the pair: both are published together.
            let back = try await server.send(.POST, "/shipments/\(order)/ratings", json: ["stars": 4, "tags": ["ready_on_time"], "privateNote": "Bigger box next time"],
                                             token: cast.driver.access)
            #expect(back.status == .created && back.json["status"].string == "published", "\(back)")
            let both = try await server.send(.GET, "/shipments/\(order)/ratings", token: cast.driver.access).json["ratings"].array
            #expect(both.count == 2 && both.allSatisfy { $0["status"].string == "published" })
            let aboutLuca = try #require(both.first { $0["rateeId"].string == cast.driver.userID })
            #expect(aboutLuca["privateNote"].string == "Thanks Luca" && aboutLuca["comment"].string == "Quick and kind" && aboutLuca["reviewerName"].string == "Ada")
            #expect(try await server.send(.GET, "/shipments/\(order)/ratings", token: cast.otherCustomer.access).status == .notFound)
            #expect(try await server.send(.POST, "/shipments/\(order)/ratings", json: ["stars": 1], token: cast.manager.access).status == .forbidden)
            // The average shows from three ratings (RATINGS_MIN_COUNT): one is counted, not shown.
            let profile = try await server.send(.GET, "/users/\(cast.driver.userID)/ratings", token: cast.otherCustomer.access)
            #expect(profile.json["count"].int == 1 && profile.json["average"].exists == false && profile.json["items"].array.isEmpty, "\(profile)")

            // Luca answers Ada's rating of him publicly, once; Ada cannot answer her own. The API says
            // who may (`RatingPolicy.mayAnswer`), as the page offers it.
            let ratingID = try #require(aboutLuca["id"].string)
            #expect(aboutLuca["mayAnswer"].bool == true)
            let adasView = try await server.send(.GET, "/shipments/\(order)/ratings", token: cast.customer.access).json["ratings"].array
            #expect(adasView.filter { $0["mayAnswer"].bool == true }.map { $0["rateeId"].string } == [cast.customer.userID],
                    "Ada may answer Luca's rating of her, not her own of him")
            #expect(try await server.send(.POST, "/ratings/\(ratingID)/response", json: ["text": "Thank you!"], token: cast.customer.access).status == .forbidden)
            let answered = try await server.send(.POST, "/ratings/\(ratingID)/response", json: ["text": " Thank you! "], token: cast.driver.access)
            #expect(answered.status == .ok && answered.json["response"].string == "Thank you!")
            #expect(answered.json["mayAnswer"].bool == false, "answered once")
            #expect(try await server.send(.POST, "/ratings/\(ratingID)/response", json: ["text": "Again"], token: cast.driver.access).status == .conflict)
            #expect(try await server.send(.POST, "/ratings/\(ratingID)/response", json: ["text": "Hi"], token: cast.otherCustomer.access).status == .notFound)

            // Bad ratings: clear errors, nothing stored.
            let another = try await Self.delivered(server, cast)
            for body: [String: any Sendable] in [["stars": 6], ["stars": 0], ["stars": 3, "tags": ["wrong_address"]], ["stars": 3, "tags": ["late", "late"]],
                                                 ["stars": 3, "comment": String(repeating: "x", count: 1001)], ["stars": 3, "rateeId": cast.otherDriver.userID]] {
                let reply = try await server.send(.POST, "/shipments/\(another)/ratings", json: body, token: cast.customer.access)
                #expect(reply.status == .unprocessableEntity || reply.status == .badRequest, "\(body): \(reply)")
            }
            #expect(try await RatingRecord.query(on: server.db).count() == 2)
        }
    }

    @Test("A rating whose counterpart never comes is published when the 14 days pass; the average shows from the minimum count; late ratings are refused",
          arguments: TestDatabase.available)
    func windowAndAverage(db: TestDatabase) async throws {
        try await TestServer.run(db, adjust: { $0.ratingsMinimumCount = 2 }) { server in
            let cast = try await server.cast()
            for stars in [5, 4] {
                let order = try await Self.delivered(server, cast)
                #expect(try await server.send(.POST, "/shipments/\(order)/ratings", json: ["stars": stars, "comment": "Good"], token: cast.customer.access).status == .created)
            }
            #expect(try await server.send(.GET, "/users/\(cast.driver.userID)/ratings", token: cast.manager.access).json["count"].int == 0)
            server.clock.advance(by: Double(RatingPolicy.windowDays) * 86_400 + 60)
            let profile = try await server.send(.GET, "/users/\(cast.driver.userID)/ratings", token: cast.otherCustomer.access)
            #expect(profile.json["count"].int == 2 && profile.json["average"].double == 4.5 && profile.json["items"].array.count == 2, "\(profile)")
            #expect(profile.json["items"][0]["privateNote"].exists == false)
            let order = try #require(try await Order.query(on: server.db).first()?.id?.uuidString)
            let late = try await server.send(.POST, "/shipments/\(order)/ratings", json: ["stars": 1], token: cast.driver.access)
            #expect(late.status == .conflict, "\(late)")
            #expect(try await server.send(.GET, "/shipments/\(order)/ratings", token: cast.driver.access).json["window"].string == "closed")
        }
    }

    @Test("The receiver rates who brought the parcel (published at once); a person rates the carrier of a delivered parcel they follow",
          arguments: TestDatabase.available)
    func receiverAndCarriers(db: TestDatabase) async throws {
        try await TestServer.run(db, adjust: { $0.ratingsMinimumCount = 1 }) { server in
            let cast = try await server.cast()
            try await server.registerCustomer("bea@example.com")
            let bea = try await server.login("bea@example.com")
            let order = try await Self.delivered(server, cast)
            let open = try await server.send(.GET, "/shipments/\(order)/ratings", token: bea.access)
            #expect(open.json["open"].array.map { $0["direction"].string } == ["receiver_to_carrier"], "\(open)")
            let rated = try await server.send(.POST, "/shipments/\(order)/ratings", json: ["stars": 3, "tags": ["late"]], token: bea.access)
            #expect(rated.status == .created && rated.json["status"].string == "published", "\(rated)")

            let parcel = try await server.send(.POST, "/parcels", json: ["number": "RB123456785CH", "carrier": "swiss_post"], token: cast.customer.access)
            let parcelID = try #require(parcel.json["id"].string)
            #expect(try await server.send(.POST, "/parcels/\(parcelID)/rating", json: ["stars": 4], token: cast.customer.access).status == .conflict,
                    "not delivered yet")
            let record = try #require(try await ParcelRecord.find(ParcelID(uuidString: parcelID), on: server.db))
            record.status = .delivered
            record.updatedAt = UnixTime.nowMillis
            try await record.save(on: server.db)
            let byCarrier = try await server.send(.POST, "/parcels/\(parcelID)/rating", json: ["stars": 4, "tags": ["fast"]], token: cast.customer.access)
            #expect(byCarrier.status == .created && byCarrier.json["carrier"].string == "swiss_post" && byCarrier.json["status"].string == "published")
            #expect(try await server.send(.POST, "/parcels/\(parcelID)/rating", json: ["stars": 4], token: cast.otherCustomer.access).status == .notFound)
            let board = try await server.send(.GET, "/carriers/swiss_post/ratings", token: cast.otherCustomer.access)
            #expect(board.json["count"].int == 1 && board.json["average"].double == 4 && board.json["items"][0]["tags"].array.map(\.string) == ["fast"])
        }
    }

    @Test("In the web app: after delivery the customer rates the driver from the delivery's page, the driver rates back in French, then both ratings show",
          arguments: TestDatabase.available)
    func webPages(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let order = try await Self.delivered(server, cast)
            let ada = TestBrowser(server)
            _ = try await ada.signIn("ada@example.com")
            let page = try await ada.get("/orders/\(order)")
            #expect(page.html.contains("id=\"ratings\"") && page.html.contains("Rate Luca") && page.html.contains("Careful with the parcel"), "\(page.html.suffix(3000))")
            let rated = try await ada.post("/orders/\(order)/ratings", ["stars": "5", "rateeId": cast.driver.userID, "tags[]": "on_time",
                                                                       "comment": "Fast <and> kind", "privateNote": ""], from: "/orders/\(order)")
            #expect(rated.status == .seeOther, "\(rated.html.components(separatedBy: "<main").last?.prefix(800) ?? "")")
            let waiting = try await ada.get("/orders/\(order)?rated=1")
            #expect(waiting.html.contains("Thank you: your rating is saved.") && waiting.html.contains("Shown when the other side has rated too"))
            #expect(waiting.html.contains("Fast &lt;and&gt; kind") && !waiting.html.contains("Rate Luca"))

            let luca = TestBrowser(server)
            luca.acceptLanguage = "fr"
            _ = try await luca.signIn("luca@courier.example")
            let driverPage = try await luca.get("/orders/\(order)")
            #expect(driverPage.html.contains("Évaluer Ada") && !driverPage.html.contains("Fast &lt;and&gt; kind"), "blind until both are in")
            _ = try await luca.post("/orders/\(order)/ratings", ["stars": "4", "rateeId": cast.customer.userID, "tags[]": "well_packed"], from: "/orders/\(order)")
            let both = try await luca.get("/orders/\(order)")
            #expect(both.html.contains("Fast &lt;and&gt; kind") && both.html.contains("Bien emballé") && both.html.contains("★★★★★"), "\(both.html.suffix(3000))")
            // Luca answers Ada's rating of him, once: the page offers the answer as the rule allows it.
            let ratingID = try #require(try await RatingRecord.query(on: server.db).filter(\.$rateeID == UserID(uuidString: cast.driver.userID)!).first()?.id)
            let answerForm = "/ratings/\(ratingID.uuidString.lowercased())/response"
            let adasPage = try await ada.get("/orders/\(order)").html.lowercased()
            #expect(both.html.lowercased().contains(answerForm) && !adasPage.contains(answerForm))
            _ = try await luca.post("/orders/\(order)/ratings/\(ratingID.uuidString)/response", ["text": "Merci Ada !"], from: "/orders/\(order)")
            #expect(try await ada.get("/orders/\(order)").html.contains("Merci Ada !"))
            let answeredPage = try await luca.get("/orders/\(order)").html.lowercased()
            #expect(!answeredPage.contains(answerForm), "answered once: no form again")
            let missing = try await ada.post("/orders/\(order)/ratings", ["rateeId": cast.driver.userID], from: "/orders/\(order)")
            #expect(missing.status.code >= 400 && missing.status.code < 500)
        }
    }

    @Test("Every rating tag has its words in English and French")
    func tagsTranslated() {
        for direction in RatingDirection.allCases {
            for tag in direction.tags {
                let text = Text.ratingTag(tag)
                #expect(text.in(.en) != tag && text.in(.fr) != tag, "\(tag)")
            }
        }
    }
}
