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

@Suite("Reading a forwarded mail: recipients, subject, text parts decoded")
struct MailTextTests {
    @Test("Quoted-printable and base64 parts, HTML without its tags, folded headers, odd input")
    func read() {
        let html = Data("<p>Tracking:&nbsp;<b>1Z999AA10123456784</b></p><script>var x = 'RB000000000CH';</script>".utf8).base64EncodedString()
        let raw = "To: Someone <PARCELS+abc@In.Example>,\r\n other@example.com\r\nSubject: Shipped\r\nContent-Type: multipart/mixed; boundary=\"zz\"\r\n\r\n--zz\r\nContent-Type: text/plain; charset=iso-8859-1\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\nCaf=E9 =\r\nLX123456785FR\r\n--zz\r\nContent-Type: text/html\r\nContent-Transfer-Encoding: base64\r\n\r\n\(html)\r\n--zz--\r\n"
        let m = MailText.read(raw)
        #expect(m.recipients == ["parcels+abc@in.example", "other@example.com"] && m.subject == "Shipped")
        #expect(m.text.contains("Café LX123456785FR") && m.text.contains("1Z999AA10123456784") && !m.text.contains("<b>") && !m.text.contains("RB000000000CH"), "\(m.text)")
        #expect(MailText.read("").text.isEmpty)
        #expect(MailText.read("Content-Type: multipart/mixed; boundary=\"\"\r\n\r\n--\r\n--").recipients.isEmpty)
        for _ in 0..<200 {
            let noise = String((0..<Int.random(in: 0..<400)).map { _ in Character(UnicodeScalar(UInt8.random(in: 0...127))) })
            _ = MailText.read("Content-Type: multipart/mixed; boundary=x\n\n--x\n" + noise)
        }
    }
}
