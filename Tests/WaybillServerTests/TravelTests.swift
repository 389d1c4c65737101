import Fluent
import Foundation
import Testing
import Vapor
@testable import WaybillServer
import WaybillCore

/// Areas, the travel tariff and trips through the API (issue "Travellers", items 1–3).
@Suite("Travellers: areas, trips and finding them")
struct TravelTests {
    /// A few Swiss areas, in the import format.
    static let areasCSV = """
    id,parent_id,level,name,name_fr,name_de,name_en,latitude,longitude,keywords
    CH,,country,Schweiz,Suisse,Schweiz,Switzerland,46.8,8.2,CH
    CH-GE,CH,canton,Genève,Genève,Genf,Geneva,46.2,6.1,GE
    CH-M6621,CH-GE,municipality,Genève,,Genf,Geneva,46.2,6.14,1201|1202
    CH-VD,CH,canton,Vaud,Vaud,Waadt,Vaud,46.6,6.6,VD
    CH-M5586,CH-VD,municipality,Lausanne,,,,46.52,6.63,1000|1003
    CH-ZH,CH,canton,Zürich,Zurich,Zürich,Zurich,47.4,8.6,ZH
    CH-M261,CH-ZH,municipality,Zürich,Zurich,,,47.37,8.54,8001
    """

    static func importAreas(_ server: TestServer) async throws {
        guard case .success(let areas) = AreaCSV.parse(areasCSV) else { throw CommandError("sample areas") }
        _ = try await Travel.importAreas(areas, services: server.app.waybill, on: server.db)
    }

    /// A local date `days` from now in Zurich ("2026-12-04").
    static func date(inDays days: Int) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "Europe/Zurich")!
        let day = calendar.date(byAdding: .day, value: days, to: Date())!
        let c = calendar.dateComponents([.year, .month, .day], from: day)
        return String(format: "%04d-%02d-%02d", c.year!, c.month!, c.day!)
    }

    static func trip(inDays days: Int = 3, from: String = "CH-M5586", to: String = "CH-M261", extra: [String: any Sendable] = [:]) -> [String: any Sendable] {
        var body: [String: any Sendable] = ["from": from, "to": to, "date": date(inDays: days), "earliest": "07:00", "latest": "09:00",
                                            "timeZone": "Europe/Zurich", "capacityGrams": 5000, "capacityParcels": 2,
                                            "categories": ["small_parcel", "documents"]]
        for (k, v) in extra { body[k] = v }
        return body
    }

    @Test("Areas are found by the start of any of their names, accents ignored, with the areas above them; admins edit them, nobody else",
          arguments: TestDatabase.both)
    func areas(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            try await Self.importAreas(server)
            let found = try await server.send(.GET, "/areas?q=GENF&lang=fr", token: cast.customer.access)
            #expect(found.status == .ok)
            #expect(found.json["items"].array.compactMap { $0["id"].string } == ["CH-GE", "CH-M6621"])
            #expect(found.json["items"][1]["name"].string == "Genève" && found.json["items"][1]["matchedName"].string == "Genf")
            #expect(found.json["items"][1]["path"].array.compactMap { $0["name"].string } == ["Genève", "Suisse"])
            #expect(try await server.send(.GET, "/areas?q=zur&within=CH-ZH", token: cast.customer.access).json["items"].array.count == 2)
            #expect(try await server.send(.GET, "/areas?q=1003", token: cast.customer.access).json["items"][0]["id"].string == "CH-M5586")
            let top = try await server.send(.GET, "/areas", token: cast.customer.access)
            #expect(top.json["items"].array.compactMap { $0["id"].string } == ["CH"])
            let vaud = try await server.send(.GET, "/areas/CH-VD?lang=en", token: cast.customer.access)
            #expect(vaud.json["children"].array.compactMap { $0["id"].string } == ["CH-M5586"] && vaud.json["names"]["de"].string == "Waadt")
            #expect(try await server.send(.GET, "/areas/NOPE", token: cast.customer.access).status == .notFound)
            #expect(try await server.send(.GET, "/areas?q=a", token: nil).status == .unauthorized)
            for bad in ["/areas?q=a&limit=0", "/areas?q=a&within=NOPE", "/areas?q=a&lang=1"] {
                let reply = try await server.send(.GET, bad, token: cast.customer.access)
                #expect(reply.status == .badRequest, "\(bad)")
            }

            // Editing: an admin only.
            let nyon: [String: any Sendable] = ["id": "CH-M5724", "parentId": "CH-VD", "level": "municipality", "name": "Nyon", "keywords": ["1260"]]
            #expect(try await server.send(.POST, "/areas", json: nyon, token: cast.manager.access).status == .forbidden)
            let admin = try await server.makeAdmin(cast.manager)
            let created = try await server.send(.POST, "/areas", json: nyon, token: admin)
            #expect(created.status == .created, "\(created)")
            // Every process sees the change at its next search (the revision moved).
            #expect(try await server.send(.GET, "/areas?q=nyo", token: cast.customer.access).json["items"][0]["id"].string == "CH-M5724")
            #expect(try await server.send(.POST, "/areas", json: nyon, token: admin).status == .conflict)
            var loop = nyon
            loop["id"] = "CH-VD"
            loop["parentId"] = "CH-M5586"
            loop["level"] = "canton"
            loop["name"] = "Vaud"
            let looped = try await server.send(.PUT, "/areas/CH-VD", json: loop, token: admin)
            #expect(looped.status == .unprocessableEntity && looped.json["error"]["fields"]["parentId"].string == "invalid")
            var orphan = nyon
            orphan["parentId"] = "CH-XX"
            #expect(try await server.send(.PUT, "/areas/CH-M5724", json: orphan, token: admin).status == .unprocessableEntity)
            var renamed = nyon
            renamed["names"] = ["de": "Neuss"]
            let put = try await server.send(.PUT, "/areas/CH-M5724", json: renamed, token: admin)
            #expect(put.status == .ok && put.json["names"]["de"].string == "Neuss")
            #expect(try await server.send(.PUT, "/areas/CH-M5586", json: renamed, token: admin).status == .unprocessableEntity)
            // An area with areas inside it, or trips, stays.
            #expect(try await server.send(.DELETE, "/areas/CH-VD", token: admin).status == .conflict)
            #expect(try await server.send(.DELETE, "/areas/CH-M5724", token: admin).status == .noContent)
            #expect(try await server.send(.GET, "/areas?q=nyo", token: cast.customer.access).json["items"].array.isEmpty)
            #expect(try await server.send(.DELETE, "/areas/CH-M5724", token: admin).status == .notFound)
        }
    }

    @Test("A person becomes a traveller, posts a trip in their time zone, edits and cancels it; senders find it with its price",
          arguments: TestDatabase.available)
    func trips(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            try await Self.importAreas(server)
            let ada = cast.customer, bob = cast.otherCustomer
            let refused = try await server.send(.POST, "/trips", json: Self.trip(), token: ada.access)
            #expect(refused.status == .forbidden && refused.errorCode == "not_a_traveller")
            #expect(try await server.send(.POST, "/me/traveller", json: ["acceptTerms": false], token: ada.access).status == .unprocessableEntity)
            let became = try await server.send(.POST, "/me/traveller", json: ["acceptTerms": true], token: ada.access)
            #expect(became.json["capabilities"].array.compactMap(\.string).contains("traveller"))

            let posted = try await server.send(.POST, "/trips", json: Self.trip(extra: ["minimumReward": 1500, "notes": "  Train IC1  "]), token: ada.access)
            #expect(posted.status == .created, "\(posted)")
            let id = try #require(posted.json["id"].string)
            #expect(posted.json["status"].string == "open" && posted.json["mine"].bool == true)
            #expect(posted.json["categories"].array.compactMap(\.string) == ["documents", "small_parcel"])
            #expect(posted.json["from"]["name"].string == "Lausanne" && posted.json["notes"].string == "Train IC1")
            #expect(posted.json["minimumReward"]["amount"].int == 1500 && posted.json["traveller"]["name"].string == "Ada M.")

            // Bob searches from Vaud (Lausanne lies inside it) to Zürich, for a 2 kg parcel.
            let search = "/travel/search?from=CH-VD&to=CH-ZH&category=small_parcel&grams=2000"
            let found = try await server.send(.GET, search, token: bob.access)
            #expect(found.status == .ok, "\(found)")
            #expect(found.json["items"].array.compactMap { $0["trip"]["id"].string } == [id])
            #expect(found.json["items"][0]["price"]["total"]["amount"].int == 2300)
            #expect(found.json["items"][0]["price"]["travellerShare"]["amount"].int == 1955)
            // What the traveller asks is not shown to senders; the traveller's own trips are not offered to them.
            #expect(found.json["items"][0]["trip"]["minimumReward"].exists == false && found.json["items"][0]["trip"]["mine"].bool == false)
            #expect(try await server.send(.GET, search, token: ada.access).json["items"].array.isEmpty)
            // Not from Geneva, not for a category the trip does not take, not above its room, not
            // when the share is below what the traveller asks (documents: 15.00 less 15 % < 15.00).
            for miss in ["/travel/search?from=CH-GE&to=CH-ZH&category=small_parcel&grams=2000",
                         "/travel/search?from=CH-VD&to=CH-ZH&category=clothing&grams=2000",
                         "/travel/search?from=CH-VD&to=CH-ZH&category=documents&grams=500"] {
                #expect(try await server.send(.GET, miss, token: bob.access).json["items"].array.isEmpty, "\(miss)")
            }
            for bad in ["/travel/search?from=CH-VD&to=CH-ZH&category=small_parcel&grams=9000",
                        "/travel/search?from=XX&to=CH-ZH&category=small_parcel&grams=1",
                        "/travel/search?from=CH-VD&to=CH-ZH&category=pianos&grams=1"] {
                #expect(try await server.send(.GET, bad, token: bob.access).status == .unprocessableEntity, "\(bad)")
            }
            #expect(try await server.send(.GET, search + "&pickupLatitude=46.5", token: bob.access).status == .badRequest)

            // Edits: the traveller only, with validation.
            #expect(try await server.send(.PATCH, "/trips/\(id)", json: ["capacityParcels": 3], token: bob.access).status == .notFound)
            let edited = try await server.send(.PATCH, "/trips/\(id)", json: ["capacityParcels": 3, "latest": "10:30"], token: ada.access)
            #expect(edited.status == .ok && edited.json["capacityParcels"].int == 3 && edited.json["latest"].string == "10:30")
            let badEdit = try await server.send(.PATCH, "/trips/\(id)", json: ["latest": "06:00"], token: ada.access)
            #expect(badEdit.status == .unprocessableEntity && badEdit.json["error"]["fields"]["latest"].string == "before_earliest")
            #expect(try await server.send(.GET, "/trips/\(id)", token: ada.access).json["latest"].string == "10:30")

            // Bad trips: past, impossible, too much, to itself, unknown areas.
            let bads: [[String: any Sendable]] = [
                Self.trip(inDays: -2), Self.trip(extra: ["date": "2026-02-30"]), Self.trip(extra: ["capacityGrams": 90_000]),
                Self.trip(to: "CH-M5586"), Self.trip(from: "XX"), Self.trip(extra: ["timeZone": "Mars/Base"]),
                Self.trip(extra: ["categories": ["pianos"]]), Self.trip(extra: ["fromPoint": ["latitude": 120, "longitude": 0]]),
            ]
            for body in bads {
                let reply = try await server.send(.POST, "/trips", json: body, token: ada.access)
                #expect(reply.status == .unprocessableEntity || reply.status == .badRequest, "\(body): \(reply)")
            }
            #expect(try await TripRecord.query(on: server.db).count() == 1)

            // Cancelled: gone from searches, still the traveller's, not cancellable twice.
            #expect(try await server.send(.POST, "/trips/\(id)/cancel", token: bob.access).status == .forbidden)
            let cancelled = try await server.send(.POST, "/trips/\(id)/cancel", token: ada.access)
            #expect(cancelled.json["status"].string == "cancelled")
            #expect(try await server.send(.POST, "/trips/\(id)/cancel", token: ada.access).status == .conflict)
            #expect(try await server.send(.GET, search, token: bob.access).json["items"].array.isEmpty)
            #expect(try await server.send(.GET, "/trips/\(id)", token: bob.access).status == .notFound)
            #expect(try await server.send(.GET, "/trips", token: ada.access).json["items"][0]["status"].string == "cancelled")
        }
    }

    @Test("A trip closes by itself once its departure window has passed", arguments: TestDatabase.available)
    func pastTripsClose(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            try await Self.importAreas(server)
            _ = try await server.send(.POST, "/me/traveller", json: ["acceptTerms": true], token: cast.customer.access)
            let id = try #require(try await server.send(.POST, "/trips", json: Self.trip(inDays: 1), token: cast.customer.access).json["id"].string)
            let search = "/travel/search?from=CH&to=CH&category=documents&grams=100"
            #expect(try await server.send(.GET, search, token: cast.otherCustomer.access).json["items"].array.count == 1)
            server.clock.advance(by: 3 * 86_400)
            #expect(try await server.send(.GET, "/trips/\(id)", token: cast.customer.access).json["status"].string == "departed")
            #expect(try await server.send(.GET, search, token: cast.otherCustomer.access).json["items"].array.isEmpty)
            let edit = try await server.send(.PATCH, "/trips/\(id)", json: ["capacityParcels": 1], token: cast.customer.access)
            #expect(edit.status == .conflict || edit.status == .unprocessableEntity)
            #expect(try await server.send(.POST, "/trips/\(id)/cancel", token: cast.customer.access).status == .conflict)
        }
    }

    @Test("The travel tariff: everyone reads it, an admin replaces it, and matching prices follow", arguments: TestDatabase.available)
    func tariff(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let read = try await server.send(.GET, "/travel/tariff", token: cast.customer.access)
            #expect(read.status == .ok && read.json["platformFeePercent"].int == 15)
            #expect(read.json["prohibitedItems"]["fr"].array.count > 3)
            let body: [String: any Sendable] = [
                "currency": "CHF", "platformFeePercent": 10, "prohibitedItems": ["en": ["Weapons"]],
                "categories": [["id": "documents", "names": ["en": "Documents"], "basePrice": 1000, "pricePerKg": 0, "maxGrams": 500] as [String: any Sendable]],
            ]
            #expect(try await server.send(.PUT, "/travel/tariff", json: body, token: cast.manager.access).status == .forbidden)
            let admin = try await server.makeAdmin(cast.manager)
            let set = try await server.send(.PUT, "/travel/tariff", json: body, token: admin)
            #expect(set.status == .ok && set.json["categories"].array.count == 1)
            var bad = body
            bad["platformFeePercent"] = 90
            bad["categories"] = [["id": "Bad Id", "names": ["en": ""], "basePrice": -1, "pricePerKg": 0, "maxGrams": 0] as [String: any Sendable]]
            let refused = try await server.send(.PUT, "/travel/tariff", json: bad, token: admin)
            #expect(refused.status == .unprocessableEntity || refused.status == .badRequest)
            #expect(try await server.send(.GET, "/travel/tariff", token: cast.customer.access).json["platformFeePercent"].int == 10)
        }
    }
}

@Suite("Travellers: requests, paying first, the receiver's code, the payout")
struct TripRequestTests {
    static func request(extra: [String: any Sendable] = [:]) -> [String: any Sendable] {
        var body: [String: any Sendable] = [
            "category": "small_parcel", "grams": 1800, "declaredValue": 8000, "description": "Two books for my sister",
            "receiver": ["name": "Bea Beispiel", "email": "bea@example.com"] as [String: any Sendable],
            "attestsAllowedContents": true, "paymentMethod": "twint",
        ]
        for (k, v) in extra { body[k] = v }
        return body
    }

    /// Ada travels (a trip Lausanne → Zürich with room for 5 kg and 2 parcels), her payouts set up
    /// in the sandbox unless `payouts` is false; Bob sends.
    static func setUp(_ server: TestServer, payouts: Bool = true) async throws -> (cast: Cast, trip: String) {
        let cast = try await server.cast()
        try await TravelTests.importAreas(server)
        _ = try await server.send(.POST, "/me/traveller", json: ["acceptTerms": true], token: cast.customer.access)
        if payouts { try await onboardPayouts(server, cast.customer.access) }
        let trip = try await server.send(.POST, "/trips", json: TravelTests.trip(), token: cast.customer.access)
        return (cast, try #require(trip.json["id"].string, "\(trip)"))
    }

    /// Sets up the traveller's payouts on the sandbox's test onboarding page, as its owner signed in
    /// to the web app (the page's form carries the CSRF token).
    static func onboardPayouts(_ server: TestServer, _ token: String) async throws {
        let link = try await server.send(.POST, "/me/payouts/onboarding", token: token)
        let url = try #require(link.json["url"].string, "\(link)")
        let path = String(url.dropFirst("http://localhost:8080".count))
        let parts = path.components(separatedBy: "?")
        let email = try #require(try await server.send(.GET, "/me", token: token).json["email"].string)
        let browser = TestBrowser(server)
        _ = try await browser.signIn(email)
        let done = try await browser.post(parts[0] + "/complete?" + (parts.count > 1 ? parts[1] : ""), [:], from: path)
        try #require(done.status == .seeOther, "\(done.status) \(done.html.prefix(500))")
    }

    /// Pays a shipment's checkout on the sandbox page.
    static func pay(_ server: TestServer, url: String) async throws {
        let path = String(url.dropFirst("http://localhost:8080".count))
        let pay = try await server.page(.POST, path + "/pay")
        #expect(pay.status == .seeOther)
        // The return page settles the checkout, as the browser's redirect would.
        _ = try await server.page(.GET, try #require(pay.headers.first(name: .location)))
    }

    @Test("A sender requests, the traveller accepts, the sender pays first, the traveller picks up, the receiver's code completes it and the traveller is paid",
          arguments: TestDatabase.available)
    func journey(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let (cast, trip) = try await Self.setUp(server)
            let ada = cast.customer, bob = cast.otherCustomer
            let sent = try await server.send(.POST, "/trips/\(trip)/requests", json: Self.request(), token: bob.access)
            #expect(sent.status == .created, "\(sent)")
            let id = try #require(sent.json["id"].string)
            #expect(sent.json["status"].string == "requested" && sent.json["availableActions"].array.compactMap(\.string) == ["cancel"])
            #expect(sent.json["price"]["total"]["amount"].int == 2300 && sent.json["prohibitedItems"].array.count > 3)
            #expect(sent.json["receiver"]["email"].string == "bea@example.com")
            // The sender adds a photo of the parcel; both sides see it.
            let photo = try await server.upload(.PUT, "/trip-requests/\(id)/photo", parts: [.file("photo", SampleImages.photoJPEG, type: "image/jpeg", filename: "p.jpg")], token: bob.access)
            #expect(photo.status == .ok && photo.json["hasPhoto"].bool == true, "\(photo)")
            #expect(try await server.send(.GET, "/trip-requests/\(id)/photo", token: ada.access).status == .ok)
            #expect(try await server.send(.GET, "/trip-requests/\(id)/photo", token: cast.driver.access).status == .notFound)

            // The traveller sees it among the requests received, without the receiver's email.
            let received = try await server.send(.GET, "/trip-requests?box=received", token: ada.access)
            #expect(received.json["items"].array.count == 1 && received.json["items"][0]["receiver"]["email"].exists == false)
            #expect(received.json["items"][0]["availableActions"].array.compactMap(\.string) == ["accept", "reject"])
            #expect(try await server.send(.POST, "/trip-requests/\(id)/accept", token: bob.access).status == .forbidden)
            let accepted = try await server.send(.POST, "/trip-requests/\(id)/accept", token: ada.access)
            #expect(accepted.status == .ok, "\(accepted)")
            #expect(accepted.json["status"].string == "awaiting_payment")
            #expect(try await server.send(.GET, "/trips/\(trip)", token: ada.access).json["gramsLeft"].int == 3200)

            // The sender pays first, on the sandbox page.
            let asSender = try await server.send(.GET, "/trip-requests/\(id)", token: bob.access)
            #expect(asSender.json["availableActions"].array.compactMap(\.string) == ["pay", "cancel"])
            let url = try #require(asSender.json["shipment"]["paymentUrl"].string)
            let shipment = try #require(asSender.json["shipment"]["id"].string)
            try await Self.pay(server, url: url)
            let paid = try await server.send(.GET, "/trip-requests/\(id)", token: ada.access)
            #expect(paid.json["status"].string == "paid" && paid.json["availableActions"].array.compactMap(\.string) == ["pick_up"])
            // The traveller is told it is paid; dispatch is not (the carrier is already chosen).
            let adaInbox = try await server.send(.GET, "/notifications", token: ada.access)
            #expect(adaInbox.json["items"].array.contains { $0["kind"].string == "order_assigned" && ($0["body"].string ?? "").hasPrefix("The sender paid") }, "\(adaInbox)")
            let managerInbox = try await server.send(.GET, "/notifications", token: cast.manager.access)
            #expect(!managerInbox.json["items"].array.contains { $0["kind"].string == "order_pending" }, "\(managerInbox)")
            // It is a shipment with one traveller leg, in the sender's Sent box.
            let s = try await server.send(.GET, "/shipments/\(shipment)", token: bob.access)
            #expect(s.json["legs"][0]["kind"].string == "traveller" && s.json["status"].string == "accepted", "\(s)")
            // Dispatch may cancel it but never give it to a driver: the shipment's rules list no
            // assignment for a traveller's leg, and the API and the page read that list.
            let asDispatch = try await server.send(.GET, "/orders/\(shipment)", token: cast.manager.access)
            #expect(asDispatch.json["availableActions"].array.compactMap(\.string) == ["cancel"], "\(asDispatch)")
            let boss = TestBrowser(server)
            _ = try await boss.signIn("boss@courier.example")
            let page = try await boss.get("/orders/\(shipment)").html
            #expect(!page.contains("name=\"reassign\""), "no assignment form on a traveller's shipment")

            // Pickup mails the receiver a code; a wrong code is refused and logged; the right one completes it.
            let picked = try await server.send(.POST, "/trip-requests/\(id)/pickup", token: ada.access)
            #expect(picked.json["status"].string == "picked_up", "\(picked)")
            _ = try await server.deliverMail()
            let code = try #require(server.mailer.lastCode(to: "bea@example.com"))
            let wrong = code == "000000" ? "111111" : "000000"
            let refused = try await server.send(.POST, "/trip-requests/\(id)/deliver", json: ["code": wrong], token: ada.access)
            #expect(refused.status == .unprocessableEntity && refused.errorCode == "invalid_recipient_code")
            #expect(try await server.send(.POST, "/trip-requests/\(id)/deliver", json: ["code": code], token: bob.access).status == .forbidden)
            let delivered = try await server.send(.POST, "/trip-requests/\(id)/deliver", json: ["code": code], token: ada.access)
            #expect(delivered.json["status"].string == "delivered", "\(delivered)")
            let tries = try await OrderEvent.query(on: server.db).filter(\.$orderID == OrderID(uuidString: shipment)!).filter(\.$type == "code_tried").all()
            #expect(tries.compactMap(\.note).sorted() == ["accepted", "invalid_recipient_code"])
            // A used code does nothing more.
            #expect(try await server.send(.POST, "/trip-requests/\(id)/deliver", json: ["code": code], token: ada.access).status == .conflict)

            // The payout (an outbox job): the traveller's share and the platform's fee, in the ledger.
            _ = try await server.deliverMail()
            let ledger = try await LedgerRecord.query(on: server.db).filter(\.$shipmentID == OrderID(uuidString: shipment)!).all().map(\.entry)
            #expect(ledger.contains { $0.kind == .charge && $0.amount == 2300 })
            #expect(ledger.contains { $0.kind == .payout && $0.amount == 1955 && $0.account?.uuidString == UUID(uuidString: ada.userID)?.uuidString })
            #expect(ledger.contains { $0.kind == .platformFee && $0.amount == 345 })
            _ = try await server.deliverMail()
            #expect(try await LedgerRecord.query(on: server.db).filter(\.$shipmentID == OrderID(uuidString: shipment)!).filter(\.$kind == .payout).count() == 1)
        }
    }

    @Test("Requests that cannot be: one's own trip, too heavy, a category the trip does not take, no attestation, no receiver email, a cancelled trip",
          arguments: TestDatabase.available)
    func badRequests(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let (cast, trip) = try await Self.setUp(server)
            let own = try await server.send(.POST, "/trips/\(trip)/requests", json: Self.request(), token: cast.customer.access)
            #expect(own.status == .conflict && own.errorCode == "own_trip")
            let tooHeavy = try await server.send(.POST, "/trips/\(trip)/requests", json: Self.request(extra: ["grams": 6000]), token: cast.otherCustomer.access)
            #expect(tooHeavy.status == .unprocessableEntity || tooHeavy.status == .conflict, "\(tooHeavy)")
            let fields = try await server.send(.POST, "/trips/\(trip)/requests", json: Self.request(extra: [
                "category": "clothing", "attestsAllowedContents": false, "receiver": ["name": " "] as [String: any Sendable]]), token: cast.otherCustomer.access)
            #expect(fields.status == .unprocessableEntity || fields.status == .badRequest, "\(fields)")
            #expect(try await server.send(.POST, "/trips/\(UUID().uuidString)/requests", json: Self.request(), token: cast.otherCustomer.access).status == .notFound)
            _ = try await server.send(.POST, "/trips/\(trip)/cancel", token: cast.customer.access)
            let cancelled = try await server.send(.POST, "/trips/\(trip)/requests", json: Self.request(), token: cast.otherCustomer.access)
            #expect(cancelled.status == .notFound || cancelled.errorCode == "trip_not_open", "\(cancelled)")
            #expect(try await TripRequestRecord.query(on: server.db).count() == 0)
        }
    }

    @Test("Two accepts cannot oversell a trip; a rejection, an expiry and an unpaid lapse free the room",
          arguments: TestDatabase.both)
    func room(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let (cast, trip) = try await Self.setUp(server)
            // Room: 5,000 g and 2 parcels. Three senders ask for 3,000 g each.
            try await server.registerCustomer("carl@example.com")
            let carl = try await server.login("carl@example.com")
            var ids: [String] = []
            for sender in [cast.otherCustomer, cast.driver, carl] {
                let r = try await server.send(.POST, "/trips/\(trip)/requests", json: Self.request(extra: ["grams": 3000]), token: sender.access)
                ids.append(try #require(r.json["id"].string, "\(r)"))
            }
            let answers = try await withThrowingTaskGroup(of: UInt.self) { group in
                for id in ids { group.addTask { try await server.send(.POST, "/trip-requests/\(id)/accept", token: cast.customer.access).status.code } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(answers.sorted() == [200, 409, 409], "\(answers)")
            let t = try await server.send(.GET, "/trips/\(trip)", token: cast.customer.access)
            #expect(t.json["gramsLeft"].int == 2000 && t.json["parcelsLeft"].int == 1)
            let winner = try #require(try await TripRequestRecord.query(on: server.db).filter(\.$status == .accepted).first())
            // Not paid in time: it lapses, the shipment is cancelled, the room comes back.
            server.clock.advance(minutes: 121)
            let lapsed = try await server.send(.GET, "/trip-requests/\(winner.id!.uuidString)", token: cast.customer.access)
            #expect(lapsed.json["status"].string == "lapsed", "\(lapsed)")
            #expect(try await server.send(.GET, "/trips/\(trip)", token: cast.customer.access).json["gramsLeft"].int == 5000)
            // The others, never answered, expire after 48 hours.
            server.clock.advance(by: 48 * 3600)
            let left = try await server.send(.GET, "/trip-requests?box=received", token: cast.customer.access)
            #expect(Set(left.json["items"].array.compactMap { $0["status"].string }) == ["lapsed", "expired"], "\(left)")
        }
    }

    @Test("However many paid requests there are (paid ones keep their passed pay-by time), an unpaid one still lapses and frees its room",
          arguments: TestDatabase.both)
    func unpaidLapseAmongManyPaid(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let (cast, trip) = try await Self.setUp(server)
            try await server.registerCustomer("carl@example.com")
            let carl = try await server.login("carl@example.com")
            // One request, accepted and paid.
            let paidID = try #require(try await server.send(.POST, "/trips/\(trip)/requests", json: Self.request(), token: cast.otherCustomer.access).json["id"].string)
            _ = try await server.send(.POST, "/trip-requests/\(paidID)/accept", token: cast.customer.access)
            try await Self.pay(server, url: try #require(try await server.send(.GET, "/trip-requests/\(paidID)", token: cast.otherCustomer.access).json["shipment"]["paymentUrl"].string))
            #expect(try await server.send(.GET, "/trip-requests/\(paidID)", token: cast.otherCustomer.access).json["status"].string == "paid")
            // A hundred more like it, written directly (the platform's other paid requests): more
            // than one sweep takes at once.
            let paid = try #require(try await TripRequestRecord.find(TripRequestID(uuidString: paidID), on: server.db))
            let encoded = try JSONEncoder().encode(paid)
            for _ in 0..<100 {
                let copy = try JSONDecoder().decode(TripRequestRecord.self, from: encoded)
                copy.id = TripRequestID(UUID())
                try await copy.create(on: server.db)
            }
            // Later, Carl's request is accepted and never paid.
            server.clock.advance(minutes: 1)
            let unpaidID = try #require(try await server.send(.POST, "/trips/\(trip)/requests", json: Self.request(), token: carl.access).json["id"].string)
            #expect(try await server.send(.POST, "/trip-requests/\(unpaidID)/accept", token: cast.customer.access).status == .ok)
            #expect(try await server.send(.GET, "/trips/\(trip)", token: cast.customer.access).json["gramsLeft"].int == 1400)

            // Its time to pay passes (and the paid ones' long ago): it lapses, its room comes back.
            server.clock.advance(minutes: 121)
            let lapsed = try await server.send(.GET, "/trip-requests/\(unpaidID)", token: carl.access)
            #expect(lapsed.json["status"].string == "lapsed", "\(lapsed)")
            #expect(try await server.send(.GET, "/trips/\(trip)", token: cast.customer.access).json["gramsLeft"].int == 3200)
            #expect(try await server.send(.GET, "/trip-requests/\(paidID)", token: cast.otherCustomer.access).json["status"].string == "paid")
        }
    }

    @Test("The sender cancels a paid request before pickup: the shipment is refunded and the room comes back",
          arguments: TestDatabase.available)
    func cancelPaid(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let (cast, trip) = try await Self.setUp(server)
            let id = try #require(try await server.send(.POST, "/trips/\(trip)/requests", json: Self.request(), token: cast.otherCustomer.access).json["id"].string)
            let accepted = try await server.send(.POST, "/trip-requests/\(id)/accept", token: cast.customer.access)
            try await Self.pay(server, url: try #require(try await server.send(.GET, "/trip-requests/\(id)", token: cast.otherCustomer.access).json["shipment"]["paymentUrl"].string))
            let shipment = try #require(accepted.json["shipment"]["id"].string)
            let cancelled = try await server.send(.POST, "/trip-requests/\(id)/cancel", json: ["reason": "Plans changed"], token: cast.otherCustomer.access)
            #expect(cancelled.json["status"].string == "cancelled", "\(cancelled)")
            let order = try await server.send(.GET, "/orders/\(shipment)", token: cast.otherCustomer.access)
            #expect(order.json["payment"]["status"].string == "refunded", "\(order)")
            #expect(try await server.send(.GET, "/trips/\(trip)", token: cast.customer.access).json["gramsLeft"].int == 5000)
            #expect(try await server.send(.POST, "/trip-requests/\(id)/pickup", token: cast.customer.access).status == .conflict)

            // A trip with a paid parcel on it cannot be cancelled; one with a request waiting can, and the request ends.
            let second = try #require(try await server.send(.POST, "/trips/\(trip)/requests", json: Self.request(), token: cast.otherCustomer.access).json["id"].string)
            _ = try await server.send(.POST, "/trip-requests/\(second)/accept", token: cast.customer.access)
            try await Self.pay(server, url: try #require(try await server.send(.GET, "/trip-requests/\(second)", token: cast.otherCustomer.access).json["shipment"]["paymentUrl"].string))
            let booked = try await server.send(.POST, "/trips/\(trip)/cancel", token: cast.customer.access)
            #expect(booked.status == .conflict && booked.errorCode == "trip_booked")
            _ = try await server.send(.POST, "/trip-requests/\(second)/cancel", token: cast.otherCustomer.access)
            try await server.registerCustomer("carl@example.com")
            let carl = try await server.login("carl@example.com")
            let waiting = try #require(try await server.send(.POST, "/trips/\(trip)/requests", json: Self.request(), token: carl.access).json["id"].string)
            #expect(try await server.send(.POST, "/trips/\(trip)/cancel", token: cast.customer.access).status == .ok)
            #expect(try await server.send(.GET, "/trip-requests/\(waiting)", token: carl.access).json["status"].string == "cancelled")
        }
    }
}

extension TestServer {
    /// Makes `tokens`' account an admin as `waybill user grant` does; returns a token that now acts as one.
    func makeAdmin(_ tokens: Tokens) async throws -> String {
        let user = try #require(try await User.find(UserID(uuidString: tokens.userID), on: db))
        var held = Capability.parseList(user.staffCapabilities)
        held.insert(.admin)
        try await db.transaction { [held] in try await Accounts.setStaffCapabilities(user, to: held, by: nil, on: $0) }
        return tokens.access
    }
}

@Suite("Profile pictures: square, sanitized, seen only by people who share something with their owner")
struct ProfilePictureTests {
    @Test("A square picture is kept; an oblong one is refused; strangers get 404, a traveller's requesters and staff see it",
          arguments: TestDatabase.available)
    func pictures(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let (cast, trip) = try await TripRequestTests.setUp(server)
            let ada = cast.customer, bob = cast.otherCustomer
            let oblong = try await server.upload(.PUT, "/me/picture", parts: [.file("photo", SampleImages.wideSquareLessPNG, type: "image/png", filename: "p.png")], token: ada.access)
            #expect(oblong.status == .unprocessableEntity && oblong.json["error"]["fields"]["photo"].string == "not_square", "\(oblong)")
            let gif = try await server.upload(.PUT, "/me/picture", parts: [.file("photo", SampleImages.gif, type: "image/gif", filename: "p.gif")], token: ada.access)
            #expect(gif.status == .unsupportedMediaType || gif.status == .unprocessableEntity, "\(gif)")
            let set = try await server.upload(.PUT, "/me/picture", parts: [.file("photo", SampleImages.squarePNG, type: "image/png", filename: "p.png")], token: ada.access)
            #expect(set.status == .noContent, "\(set)")
            #expect(try await server.send(.GET, "/users/\(ada.userID)/picture", token: ada.access).status == .ok)
            // Ada has an open trip: anyone who may send sees who would carry their parcel.
            #expect(try await server.send(.GET, "/users/\(ada.userID)/picture", token: bob.access).status == .ok)
            // Bob's picture: Ada sees it only once Bob asked her to carry something; staff always.
            _ = try await server.upload(.PUT, "/me/picture", parts: [.file("photo", SampleImages.squarePNG, type: "image/png", filename: "p.png")], token: bob.access)
            #expect(try await server.send(.GET, "/users/\(bob.userID)/picture", token: ada.access).status == .notFound)
            #expect(try await server.send(.GET, "/users/\(bob.userID)/picture", token: cast.driver.access).status == .notFound)
            #expect(try await server.send(.GET, "/users/\(bob.userID)/picture", token: cast.manager.access).status == .ok)
            _ = try await server.send(.POST, "/trips/\(trip)/requests", json: TripRequestTests.request(), token: bob.access)
            let seen = try await server.send(.GET, "/users/\(bob.userID)/picture", token: ada.access)
            #expect(seen.status == .ok && seen.headers.first(name: .contentType) == "image/png")
            #expect(try await server.send(.DELETE, "/me/picture", token: bob.access).status == .noContent)
            #expect(try await server.send(.GET, "/users/\(bob.userID)/picture", token: ada.access).status == .notFound)
            #expect(try await server.send(.GET, "/users/not-a-uuid/picture", token: ada.access).status == .notFound)
        }
    }
}
