import AsyncHTTPClient
import NIOCore
import Foundation
import Testing
import Vapor
@testable import WaybillServer
import WaybillCore

/// The people of a delivery: two customers, two drivers and a manager, all signed in.
struct Cast: Sendable {
    let customer: Tokens
    let otherCustomer: Tokens
    let driver: Tokens
    let otherDriver: Tokens
    let manager: Tokens
}

extension TestServer {
    func cast() async throws -> Cast {
        try await registerCustomer("ada@example.com")
        try await registerCustomer("bob@example.com")
        return Cast(
            customer: try await login("ada@example.com"),
            otherCustomer: try await login("bob@example.com"),
            driver: try await createAccount("luca@courier.example", role: .driver),
            otherDriver: try await createAccount("mia@courier.example", role: .driver),
            manager: try await createAccount("boss@courier.example", role: .manager))
    }

    /// Moves the clock on to 08:00 tomorrow in Zurich (`TestClock.advanceToMorning`), for tests about a
    /// working day, and signs everyone in again (the tokens of the evening before have expired).
    func startWorkingDay(_ cast: Cast) async throws -> Cast {
        clock.advanceToMorning()
        return Cast(customer: try await login("ada@example.com"), otherCustomer: try await login("bob@example.com"),
                    driver: try await login("luca@courier.example"), otherDriver: try await login("mia@courier.example"),
                    manager: try await login("boss@courier.example"))
    }

    static let bern: [String: any Sendable] = ["street": "Bundesplatz 3", "postalCode": "3005", "city": "Bern",
                                                "latitude": 46.9466, "longitude": 7.4441]

    static func orderBody(payment: String = "cash", extra: [String: any Sendable] = [:]) -> [String: any Sendable] {
        var body: [String: any Sendable] = [
            "pickup": ["useAccountAddress": true], "dropoff": bern, "weightClass": "small", "service": "standard",
            "paymentMethod": payment, "recipient": ["name": "Bea Beispiel", "email": "bea@example.com"],
        ]
        for (key, value) in extra { body[key] = value }
        return body
    }

    /// The token of an order's tracking link, as its customer sees it.
    func trackingToken(_ orderID: String, customer token: String) async throws -> String {
        let link = try #require(try await send(.GET, "/orders/\(orderID)", token: token).json["tracking"]["trackingUrl"].string)
        return String(link.split(separator: "/").last!)
    }

    /// Posts JSON over a real connection to a server started with `serving` (status and headers).
    func postOverHTTP(port: Int, _ path: String, json: String, headers: [(String, String)] = [],
                      client: HTTPClient, timeout: NIOCore.TimeAmount = .seconds(60)) async throws -> (status: Int, headers: HTTPHeaders) {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/api/v1\(path)")
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        request.body = .bytes(ByteBuffer(string: json))
        let response = try await client.execute(request, timeout: timeout)
        _ = try await response.body.collect(upTo: 1 << 16)
        return (Int(response.status.code), response.headers)
    }

    /// Places an order and returns its id.
    func placeOrder(_ token: String, payment: String = "cash", extra: [String: any Sendable] = [:]) async throws -> String {
        let reply = try await send(.POST, "/orders", json: Self.orderBody(payment: payment, extra: extra), token: token)
        try #require(reply.status == .created, "create order: \(reply)")
        return try #require(reply.json["order"]["id"].string)
    }

    func status(of id: String) async throws -> String? {
        try await Order.find(OrderID(uuidString: id)!, on: db)?.status.rawValue
    }

    /// Drives an order forward to `target` through the API, the way the people would; `from` says
    /// where it already is (its steps so far are skipped).
    func advance(_ id: String, to target: OrderStatus, cast: Cast, from: OrderStatus? = nil) async throws {
        let steps: [(OrderStatus, () async throws -> Reply)] = [
            (.assigned, { try await self.send(.POST, "/orders/\(id)/assign", json: ["driverId": cast.driver.userID], token: cast.manager.access) }),
            (.accepted, { try await self.send(.POST, "/orders/\(id)/accept", token: cast.driver.access) }),
            (.inTransit, { try await self.send(.POST, "/orders/\(id)/pickup", json: TestServer.cash(try await self.price(of: id)), token: cast.driver.access) }),
            (.delivered, { try await self.deliver(id, token: cast.driver.access) }),
        ]
        switch target {
        case .pending: return
        case .cancelled:
            try #require(try await send(.POST, "/orders/\(id)/cancel", json: ["reason": "test"], token: cast.manager.access).status == .ok)
            return
        case .failed:
            try await advance(id, to: .assigned, cast: cast)
            try #require(try await send(.POST, "/orders/\(id)/fail", json: ["reason": "recipient_absent"], token: cast.driver.access).status == .ok)
            return
        default: break
        }
        var skipping = from != nil
        for (status, step) in steps {
            if skipping {
                if status == from { skipping = false }
                continue
            }
            let reply = try await step()
            try #require(reply.status == .ok, "to \(status): \(reply)")
            if status == target { return }
        }
    }

    static func cash(_ amount: Int) -> [String: any Sendable] {
        let money: [String: any Sendable] = ["amount": amount, "currency": "CHF"]
        return ["cashCollected": money]
    }

    func price(of id: String) async throws -> Int {
        try await Order.find(OrderID(uuidString: id)!, on: db)!.priceAmount
    }

    @discardableResult
    func deliver(_ id: String, token: String, signature: [UInt8] = SampleImages.signaturePNG, photo: [UInt8]? = nil,
                 name: String = "Bea Beispiel", code: String? = nil, idempotencyKey: String? = nil) async throws -> Reply {
        var parts: [Part] = [.file("signature", signature, type: "image/png", filename: "signature.png"), .text("recipientName", name)]
        if let photo { parts.append(.file("photo", photo, type: "image/jpeg", filename: "photo.jpg")) }
        if let code { parts.append(.text("code", code)) }
        return try await upload("/orders/\(id)/deliver", parts: parts, token: token, headers: idempotencyKey.map { [("Idempotency-Key", $0)] } ?? [])
    }
}
