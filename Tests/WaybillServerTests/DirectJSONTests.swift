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

    @Test("An order's detail and a manager's list, at every step, as the API answers them", arguments: TestDatabase.available)
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
            let html = try await server.send(.GET, "/orders/\(id)", token: cast.customer.access, headers: [("Accept", "text/html")])
            #expect(html.status == .notAcceptable && html.errorCode == "bad_request")
            #expect(try await server.send(.GET, "/orders", token: cast.customer.access, headers: [("Accept", "application/json, */*;q=0.1")]).status == .ok)
            // A deprecated route still says so.
            #expect(try await server.send(.GET, "/orders", token: cast.customer.access).headers.first(name: "Deprecation") != nil)
        }
    }
}
