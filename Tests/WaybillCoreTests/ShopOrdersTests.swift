import Foundation
import Testing
import WaybillCore

@Suite("Tracking numbers in shops' webhooks: Shopify fulfilments and orders, WooCommerce's Shipment Tracking items")
struct ShopOrdersTests {
    @Test("A Shopify fulfilment: its numbers with the carrier it names, and the order's name")
    func shopifyFulfillment() {
        let json: [String: Any] = [
            "id": 255858046, "order_id": 450789469, "status": "success", "name": "#1001.1", "tracking_company": "UPS",
            "tracking_number": "1Z999AA10123456784", "tracking_numbers": ["1Z999AA10123456784", "1z 2345"],
        ]
        let found = ShopOrders.trackingNumbers(.shopify, json)
        #expect(found == [ShopTrackingNumber(number: "1Z999AA10123456784", carrier: "ups", order: "#1001"),
                          ShopTrackingNumber(number: "1Z2345", carrier: "ups", order: "#1001")])
    }

    @Test("A Shopify order with fulfilments; WooCommerce's tracking items; nothing from unknown shapes")
    func ordersAndWooCommerce() {
        let order: [String: Any] = ["name": "#1002", "fulfillments": [
            ["tracking_company": "DHL Express", "tracking_numbers": ["JJD000390007661234"]],
            ["tracking_company": "Swiss Post", "tracking_numbers": ["99.60.123456.12345678"]],
        ]]
        #expect(ShopOrders.trackingNumbers(.shopify, order).map(\.carrier) == ["dhl", "swiss_post"])
        #expect(ShopOrders.trackingNumbers(.shopify, order).map(\.order) == ["#1002", "#1002"])
        let woo: [String: Any] = ["id": 727, "number": "727", "status": "completed", "meta_data": [
            ["id": 1, "key": "_billing_phone", "value": "+41 79 123 45 67"],
            ["id": 2, "key": "_wc_shipment_tracking_items", "value": [
                ["tracking_provider": "", "custom_tracking_provider": "Colissimo", "tracking_number": "6A12345678901"],
                ["tracking_provider": "fedex", "tracking_number": "986578788855"],
            ]],
        ]]
        let found = ShopOrders.trackingNumbers(.woocommerce, woo)
        #expect(found.map(\.number) == ["6A12345678901", "986578788855"] && found.map(\.carrier) == ["la_poste", "fedex"])
        #expect(found.first?.order == "#727")
        #expect(ShopOrders.trackingNumbers(.woocommerce, ["meta_data": "nonsense"]).isEmpty)
        #expect(ShopOrders.trackingNumbers(.shopify, ["hello": 1]).isEmpty)
    }

    @Test("Carriers by the names shops give them")
    func names() {
        let d = CarrierDetection.standard
        #expect(d.carrier(named: "UPS") == "ups" && d.carrier(named: "Federal Express") == "fedex" && d.carrier(named: "dhl-express") == "dhl")
        #expect(d.carrier(named: "La Poste / Colissimo") == "la_poste" && d.carrier(named: "Die Post") == "swiss_post")
        #expect(d.carrier(named: "Royal Mail") == "royal_mail" && d.carrier(named: "Pigeon Post") == nil && d.carrier(named: "") == nil)
    }
}
