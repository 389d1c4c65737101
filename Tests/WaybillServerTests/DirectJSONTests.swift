import Foundation
import OpenAPIRuntime
import Testing
@testable import WaybillAPI
@testable import WaybillServer
import WaybillCore

/// The two reads of many orders answer through `DirectJSON` instead of the runtime's `JSONEncoder`;
/// what they write must mean exactly what `JSONEncoder` writes for the same value.
@Suite("Orders written directly as JSON read the same as through JSONEncoder")
struct DirectJSONTests {
    typealias S = Components.Schemas

    /// JSON as the generated server writes it: the runtime's `JSONEncoder`, Waybill's date transcoder.
    static func runtimeJSON<T: Encodable>(_ value: T) throws -> Data {
        let encoder = JSONEncoder()
        let dates = LenientISO8601DateTranscoder()
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(try dates.encode(date))
        }
        return try encoder.encode(value)
    }

    static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        let dates = LenientISO8601DateTranscoder()
        decoder.dateDecodingStrategy = .custom { decoder in try dates.decode(try decoder.singleValueContainer().decode(String.self)) }
        return decoder
    }

    static func sameMeaning<T: Encodable>(_ value: T, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let direct = Data(try DirectJSON.encode(value))
        let runtime = try runtimeJSON(value)
        let a = try JSONSerialization.jsonObject(with: direct, options: [.fragmentsAllowed]) as? NSObject
        let b = try JSONSerialization.jsonObject(with: runtime, options: [.fragmentsAllowed]) as? NSObject
        #expect(a != nil && a == b, "direct \(String(decoding: direct, as: UTF8.self))\nruntime \(String(decoding: runtime, as: UTF8.self))",
                sourceLocation: sourceLocation)
    }

    struct Nested: Codable {
        var text: String
        var number: Int
        var fraction: Double
        var flag: Bool
        var missing: String?
        var present: Int?
        var when: Date
        var list: [Nested]
        var empty: [String]
        var map: [String: Int]
        var inner: Inner?
        var values: [Double?]
        struct Inner: Codable { var a: String? }
    }

    @Test("Live events' data, as stored and sent, means what JSONEncoder wrote for it")
    func liveEventsData() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        struct Wrapper: Encodable {
            let payload: LivePayload
            func encode(to encoder: any Encoder) throws { try payload.encodeData(to: encoder) }
        }
        let order = OrderID.generated(), driver = UserID.generated()
        let payloads: [LivePayload] = [
            .location(LiveLocation(driverId: driver, driverFirstName: "Zoë \"Z\"", orderId: order, orderStatus: "in_transit",
                                   position: PositionReport(latitude: 46.519653, longitude: -6.632273e-3, accuracy: 5, heading: 270.25, recordedAt: 1_800_000_000_000))),
            .location(LiveLocation(driverId: nil, driverFirstName: nil, orderId: nil, position: PositionReport(latitude: 0, longitude: 180, recordedAt: 0))),
            .status(LiveStatus(orderId: order, reference: "WB-ABCD1234", status: "pending", driverId: nil, at: 1_800_000_000_001)),
            .eta(LiveETA(orderId: order, estimate: ArrivalEstimate(stop: .dropoff, arrivesAt: 1_800_000_600_000, distanceMeters: 4_250))),
            .notification(LiveNotification(id: .generated(), kind: "order_pending", title: "New order WB-1/2",
                                           body: "Line one\nline two\t\u{1}, \\ and ✓", orderId: order, createdAt: 1_800_000_000_002)),
            .duty(LiveDuty(driverId: driver, onDuty: true, at: 3)),
        ]
        for payload in payloads {
            let direct = Data(try LiveLog.encodeData(payload).utf8)
            let before = try encoder.encode(Wrapper(payload: payload))
            let a = try JSONSerialization.jsonObject(with: direct) as? NSObject
            let b = try JSONSerialization.jsonObject(with: before) as? NSObject
            #expect(a != nil && a == b, "direct \(String(decoding: direct, as: UTF8.self))\nbefore \(String(decoding: before, as: UTF8.self))")
            // And a client reads it back as what was sent.
            let event = try JSONDecoder().decode(LiveEvent.self, from: Data("{\"type\":\"\(payload.type)\",\"id\":1,\"topic\":\"t\",\"at\":2,\"data\":".utf8) + direct + Data("}".utf8))
            #expect(event.payload == payload)
        }
    }

    @Test("Strings, numbers, dates, arrays, nested and empty values")
    func mixedValues() throws {
        let leaf = Nested(text: "", number: -42, fraction: 0.1, flag: false, missing: nil, present: 7, when: Date(timeIntervalSince1970: 1_800_000_000),
                          list: [], empty: [], map: [:], inner: .init(a: nil), values: [nil, 3, -2.5])
        let value = Nested(text: "quote \" backslash \\ slash / tab \t newline \n nul \u{0} bell \u{7} é 😀 «»", number: Int.max,
                           fraction: 46.9466, flag: true, missing: nil, present: nil, when: Date(timeIntervalSince1970: 0.5),
                           list: [leaf, leaf], empty: [], map: ["b": 2, "a": 1], inner: nil, values: [1e-7, 1e21, 12.0])
        try Self.sameMeaning(value)
        try Self.sameMeaning([value])
        try Self.sameMeaning("just a string")
        try Self.sameMeaning([Int]())
        try Self.sameMeaning(S.OrderStatus.inTransit)
    }

    /// An order with every optional member given a value, and the same with all of them absent.
    static var fullOrder: [String: Any] {
        let money: [String: Any] = ["amount": 1250, "currency": "CHF"]
        let person: [String: Any] = ["id": "p-1", "firstName": "Ada", "lastName": "L\"o/v\\e", "email": "ada@example.com",
                                     "companyName": "Ada & Co", "role": "manager"]
        let address: [String: Any] = ["street": "Bahnhofstrasse 1", "postalCode": "8001", "city": "Zürich", "country": "CH",
                                      "latitude": 47.3769, "longitude": -8.5417]
        let file: [String: Any] = ["id": "f-1", "kind": "signature", "contentType": "image/png", "url": "/files/f-1", "width": 600,
                                   "height": 200, "createdAt": "2026-11-28T10:00:00Z"]
        return [
            "id": "o-1", "reference": "WB-1", "status": "in_transit", "createdAt": "2026-11-28T09:00:00Z", "updatedAt": "2026-11-28T09:30:00.5Z",
            "customer": person, "driver": person, "pickup": address, "dropoff": address, "weightClass": "large", "service": "express",
            "recipient": ["name": "Bea", "email": "bea@example.com", "phone": "+41 79 000 00 00"], "notes": "line\nbreak\ttab",
            "requireRecipientCode": true, "price": money, "distanceKm": 12.3,
            "breakdown": [["kind": "base_fee", "label": "Base", "amount": 900], ["kind": "rounding", "label": "Rounding", "amount": -5]],
            "insurance": ["declaredValue": money, "premium": money], "points": ["points": 100, "discount": money],
            "plan": ["name": "Pro", "included": false, "discount": money],
            "payment": ["method": "card", "status": "paid", "amount": money, "sandbox": false, "paidAt": "2026-11-28T09:01:00Z",
                        "refundedAt": "2026-11-28T09:02:00Z", "cashCollected": money],
            "failure": ["reason": "recipient_absent", "note": "nobody"], "cancellationReason": "changed plans",
            "proof": ["recipientName": "Bea", "deliveredAt": "2026-11-28T11:00:00Z", "signature": file, "photo": file, "recipientCodeVerified": true],
            "photos": [file, file],
            "events": [["id": 1, "type": "created", "status": "pending", "at": "2026-11-28T09:00:00Z", "actor": person, "note": "n"],
                       ["id": 2, "type": "photo_added", "at": "2026-11-28T09:05:00Z"]],
            "availableActions": ["deliver", "fail"],
            "tracking": ["trackingUrl": "https://waybill.example/t/abc", "driverPosition": ["latitude": 47.1, "longitude": 8.2, "accuracy": 5,
                                                                                       "heading": 90, "speed": 12.5, "recordedAt": "2026-11-28T10:59:00Z"],
                         "eta": ["stop": "dropoff", "arrivesAt": "2026-11-28T11:10:00Z", "distanceMeters": 2400]],
        ]
    }

    @Test("An order with every part set, and with every optional part absent, written field by field")
    func everyPartOfAnOrder() throws {
        let full = try Self.decoder().decode(S.Order.self, from: JSONSerialization.data(withJSONObject: Self.fullOrder))
        #expect(full.tracking?.driverPosition != nil && full.proof?.photo != nil && full.events?.count == 2 && full.plan != nil)
        try Self.sameMeaning(full)
        var bare = full
        bare.driver = nil
        bare.notes = nil
        bare.distanceKm = nil
        bare.breakdown = nil
        bare.insurance = nil
        bare.points = nil
        bare.plan = nil
        bare.failure = nil
        bare.cancellationReason = nil
        bare.proof = nil
        bare.photos = nil
        bare.events = nil
        bare.tracking = nil
        bare.availableActions = []
        bare.customer = S.PersonSummary(id: "p-2", firstName: "Bo")
        bare.pickup = S.Address(street: "s", postalCode: "1", city: "c")
        bare.recipient = S.Recipient(name: "R")
        bare.payment = S.Payment(method: .cash, status: .dueOnPickup, amount: bare.price, sandbox: true)
        try Self.sameMeaning(bare)
        try Self.sameMeaning(S.OrderPage(items: [full, bare], nextCursor: "abc"))
        try Self.sameMeaning(S.OrderPage(items: [], nextCursor: nil))
        // Field by field and through the generic path (`encode(to:)`): the same bytes.
        for page in [S.OrderPage(items: [full, bare], nextCursor: "abc"), S.OrderPage(items: [bare], nextCursor: nil)] {
            let generic = DirectJSON.Sink(dates: LenientISO8601DateTranscoder())
            try generic.value(page, level: 0)
            generic.close(to: 0)
            #expect(try DirectJSON.encode(page) == generic.bytes)
        }
    }

    @Test("An order's detail and a manager's list, at every step, as the API answers them", arguments: TestDatabase.both)
    func ordersAsAnswered(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let delivered = try await server.placeOrder(cast.customer.access, extra: ["notes": "Ring \"twice\" / back door"])
            try await server.advance(delivered, to: .delivered, cast: cast)
            let failed = try await server.placeOrder(cast.customer.access)
            try await server.advance(failed, to: .failed, cast: cast)
            let moving = try await server.placeOrder(cast.customer.access)
            try await server.advance(moving, to: .inTransit, cast: cast)

            for id in [delivered, failed, moving] {
                for token in [cast.customer.access, cast.manager.access, cast.driver.access] {
                    let reply = try await server.send(.GET, "/orders/\(id)", token: token)
                    #expect(reply.status == .ok)
                    #expect(reply.headers.first(name: .contentType) == "application/json; charset=utf-8")
                    let order = try Self.decoder().decode(S.Order.self, from: Data(buffer: reply.body))
                    #expect(order.id == id && order.events?.isEmpty == false)
                    try Self.sameMeaning(order)
                    // The bytes sent are DirectJSON's for the decoded value: nothing lost on the way.
                    #expect(Data(try DirectJSON.encode(order)) == Data(buffer: reply.body))
                }
            }
            let list = try await server.send(.GET, "/orders?limit=2", token: cast.manager.access)
            let page = try Self.decoder().decode(S.OrderPage.self, from: Data(buffer: list.body))
            #expect(page.items.count == 2 && page.nextCursor != nil)
            try Self.sameMeaning(page)
            let rest = try await server.send(.GET, "/orders?limit=50&cursor=\(page.nextCursor!)", token: cast.manager.access)
            #expect(try Self.decoder().decode(S.OrderPage.self, from: Data(buffer: rest.body)).items.map(\.id) == [delivered])
            let filtered = try await server.send(.GET, "/orders?status=failed,in_transit&from=2020-01-01T00:00:00Z", token: cast.manager.access)
            #expect(Set(try Self.decoder().decode(S.OrderPage.self, from: Data(buffer: filtered.body)).items.map(\.id)) == [failed, moving])
        }
    }

    @Test("Bad input to the direct reads gets the same JSON errors", arguments: TestDatabase.available)
    func badInput(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let id = try await server.placeOrder(cast.customer.access)
            #expect(try await server.send(.GET, "/orders/\(id)").status == .unauthorized)
            #expect(try await server.send(.GET, "/orders/not-a-uuid", token: cast.customer.access).errorCode == "not_found")
            #expect(try await server.send(.GET, "/orders/\(UUID().uuidString)", token: cast.customer.access).errorCode == "not_found")
            #expect(try await server.send(.GET, "/orders/\(id)", token: cast.otherCustomer.access).errorCode == "not_found")
            for query in ["limit=0", "limit=abc", "from=yesterday", "status=flying", "cursor=%%%", "customerId=nope"] {
                let reply = try await server.send(.GET, "/orders?\(query)", token: cast.manager.access)
                #expect(reply.status == .badRequest && reply.json["error"]["code"].string != nil, "\(query): \(reply)")
            }
            // An Accept that allows no JSON gets 406, on these two and through the generated server alike.
            for path in ["/orders/\(id)", "/orders", "/shipments", "/me"] {
                let html = try await server.send(.GET, path, token: cast.customer.access, headers: [("Accept", "text/html")])
                #expect(html.status == .notAcceptable && html.errorCode == "bad_request", "\(path): \(html)")
            }
            #expect(try await server.send(.GET, "/orders", token: cast.customer.access, headers: [("Accept", "application/json, */*;q=0.1")]).status == .ok)
            // Placing an order, answered directly too: bad input is refused as before, and an Accept
            // that allows no JSON is refused before anything is placed.
            let before = try await server.send(.GET, "/orders?limit=100", token: cast.customer.access).json["items"].array.count
            let html = try await server.send(.POST, "/orders", json: TestServer.orderBody(), token: cast.customer.access, headers: [("Accept", "text/html")])
            #expect(html.status == .notAcceptable && html.errorCode == "bad_request", "\(html)")
            let notJSON = try await server.send(.POST, "/orders", rawBody: "{\"pickup\":", token: cast.customer.access,
                                                headers: [("Content-Type", "application/json")])
            #expect(notJSON.status == .badRequest && notJSON.errorCode == "invalid_json", "\(notJSON)")
            let mistyped = try await server.send(.POST, "/orders", json: TestServer.orderBody(extra: ["weightClass": 3]), token: cast.customer.access)
            #expect(mistyped.status == .unprocessableEntity && mistyped.json["error"]["fields"]["weightClass"].string != nil, "\(mistyped)")
            let badKey = try await server.send(.POST, "/orders", json: TestServer.orderBody(), token: cast.customer.access,
                                               headers: [("Idempotency-Key", String(repeating: "k", count: 300))])
            #expect(badKey.status == .unprocessableEntity && badKey.json["error"]["fields"]["Idempotency-Key"].string != nil, "\(badKey)")
            #expect(try await server.send(.GET, "/orders?limit=100", token: cast.customer.access).json["items"].array.count == before)
            let placed = try await server.send(.POST, "/orders", json: TestServer.orderBody(), token: cast.customer.access,
                                               headers: [("Idempotency-Key", "direct-1")])
            #expect(placed.status == .created && placed.headers.first(name: .contentType)?.hasPrefix("application/json") == true)
            #expect(placed.json["order"]["status"].string == "pending" && placed.json["next"]["action"].string == "none")
            let again = try await server.send(.POST, "/orders", json: TestServer.orderBody(), token: cast.customer.access,
                                              headers: [("Idempotency-Key", "direct-1")])
            #expect(again.json["order"]["id"].string == placed.json["order"]["id"].string)
            // A deprecated route still says so.
            #expect(try await server.send(.GET, "/orders", token: cast.customer.access).headers.first(name: "Deprecation") != nil)
        }
    }
}
