import Crypto
import Foundation
import Testing
import Vapor
@testable import WaybillServer
import WaybillCore

/// Shops connected to an account (issue "Parcels of every carrier", item 8): Shopify's and
/// WooCommerce's webhooks, signed as they document it, become followed parcels.
@Suite("Connected shops: Shopify and WooCommerce webhooks verified by their HMAC, each delivery once, numbers followed")
struct ShopWebhookTests {
    static func sign(_ body: String, _ secret: String) -> String {
        Data(HMAC<SHA256>.authenticationCode(for: Data(body.utf8), using: SymmetricKey(data: Data(secret.utf8)))).base64EncodedString()
    }

    static let fulfillment = """
        {"id":255858046,"order_id":450789469,"status":"success","name":"#1001.1","tracking_company":"UPS",\
        "tracking_number":"1Z999AA10123456784","tracking_numbers":["1Z999AA10123456784"],"tracking_urls":["https://www.ups.com/track?tracknum=1Z999AA10123456784"]}
        """

    @Test("Shopify: signed fulfilments become parcels once; a wrong signature is 401; a disconnected shop 404", arguments: TestDatabase.available)
    func shopify(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let secret = "shpss_0123456789abcdef0123456789"
            let connected = try await server.send(.POST, "/me/shops", json: ["platform": "shopify", "name": "Shoe shop", "secret": secret], token: cast.customer.access)
            #expect(connected.status == .created && connected.json["secret"].string == secret, "\(connected)")
            let id = try #require(connected.json["id"].string)
            let url = try #require(connected.json["webhookUrl"].string)
            #expect(url.hasSuffix("/api/v1/shops/\(id.lowercased())/webhook"))
            #expect(try await server.send(.GET, "/me/shops", token: cast.customer.access).json["items"][0]["secret"].exists == false)
            #expect(try await server.send(.POST, "/me/shops", json: ["platform": "shopify", "name": "Weak", "secret": "short"], token: cast.customer.access).status == .unprocessableEntity)

            let hook = "/shops/\(id)/webhook"
            let signed: [(String, String)] = [("X-Shopify-Hmac-Sha256", Self.sign(Self.fulfillment, secret)), ("X-Shopify-Webhook-Id", "b54557e4-bdd9-4b37-8a5f-bf7d70bcd043"),
                                              ("X-Shopify-Topic", "fulfillments/create")]
            let first = try await server.send(.POST, hook, rawBody: Self.fulfillment, headers: signed)
            #expect(first.status == .ok && first.json["followed"].int == 1, "\(first)")
            let parcels = try await server.send(.GET, "/parcels", token: cast.customer.access)
            #expect(parcels.json["items"][0]["carrier"].string == "ups" && parcels.json["items"][0]["name"].string == "#1001 · Shoe shop", "\(parcels)")
            // Shopify retries with the same id: once. Another delivery with the same number: already followed.
            #expect(try await server.send(.POST, hook, rawBody: Self.fulfillment, headers: signed).json["followed"].int == 0)
            var other = signed
            other[1] = ("X-Shopify-Webhook-Id", "another-delivery")
            #expect(try await server.send(.POST, hook, rawBody: Self.fulfillment, headers: other).json["followed"].int == 0)
            #expect(try await server.send(.GET, "/parcels", token: cast.customer.access).json["items"].array.count == 1)

            // Tampered body, missing or wrong signature: 401; nothing added.
            let tampered = Self.fulfillment.replacingOccurrences(of: "1Z999AA10123456784", with: "1Z999AA10123456785")
            #expect(try await server.send(.POST, hook, rawBody: tampered, headers: signed).status == .unauthorized)
            #expect(try await server.send(.POST, hook, rawBody: Self.fulfillment).status == .unauthorized)
            #expect(try await server.send(.POST, "/shops/\(UUID().uuidString)/webhook", rawBody: Self.fulfillment, headers: signed).status == .notFound)
            let notJSON = "[1,2"
            #expect(try await server.send(.POST, hook, rawBody: notJSON, headers: [("X-Shopify-Hmac-Sha256", Self.sign(notJSON, secret))]).status == .badRequest)

            #expect(try await server.send(.DELETE, "/me/shops/\(id)", token: cast.otherCustomer.access).status == .notFound)
            #expect(try await server.send(.DELETE, "/me/shops/\(id)", token: cast.customer.access).status == .noContent)
            #expect(try await server.send(.POST, hook, rawBody: Self.fulfillment, headers: signed).status == .notFound)
        }
    }

    @Test("WooCommerce: the ping when the webhook is saved, then an order with Shipment Tracking items", arguments: TestDatabase.available)
    func wooCommerce(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let connected = try await server.send(.POST, "/me/shops", json: ["platform": "woocommerce", "name": "Fromagerie"], token: cast.customer.access)
            let id = try #require(connected.json["id"].string)
            let secret = try #require(connected.json["secret"].string, "a secret is made when none is given")
            #expect(secret.count >= 32)

            var headers = HTTPHeaders()
            headers.contentType = .urlEncodedForm
            let ping = try await server.app.testing().sendRequest(.POST, "/api/v1/shops/\(id)/webhook", headers: headers, body: ByteBuffer(string: "webhook_id=12"))
            #expect(ping.status == .ok, "\(ping.body.string)")

            let order = """
                {"id":727,"number":"727","status":"completed","meta_data":[{"id":13,"key":"_wc_shipment_tracking_items","value":[\
                {"tracking_provider":"","custom_tracking_provider":"Colissimo","tracking_number":"6A12345678901","date_shipped":"1732060800"}]}]}
                """
            let delivered = try await server.send(.POST, "/shops/\(id)/webhook", rawBody: order, headers: [
                ("X-WC-Webhook-Signature", Self.sign(order, secret)), ("X-WC-Webhook-Delivery-ID", "9c1f"), ("X-WC-Webhook-Topic", "order.updated")])
            #expect(delivered.json["followed"].int == 1, "\(delivered)")
            let parcels = try await server.send(.GET, "/parcels", token: cast.customer.access)
            #expect(parcels.json["items"][0]["carrier"].string == "la_poste" && parcels.json["items"][0]["name"].string == "#727 · Fromagerie")
            let shops = try await server.send(.GET, "/me/shops", token: cast.customer.access)
            #expect(shops.json["items"][0]["numbersReceived"].int == 1 && shops.json["items"][0]["lastDeliveryAt"].exists)
        }
    }
}
