import Foundation

/// A shop an account connects so its orders' tracking numbers arrive by themselves (issue "Parcels
/// of every carrier", item 8).
public enum ShopPlatform: String, Sendable, Codable, CaseIterable {
    case shopify
    case woocommerce
}

/// A tracking number a shop's webhook carried, with the carrier the shop named and its order.
public struct ShopTrackingNumber: Sendable, Equatable {
    public var number: String
    /// The carrier's code when the shop's name for it is known (`tracking_company: "UPS"`).
    public var carrier: String?
    /// The shop's order name (`#1001`).
    public var order: String?

    public init(number: String, carrier: String?, order: String?) {
        self.number = number
        self.carrier = carrier
        self.order = order
    }
}

public enum ShopOrders {
    /// The tracking numbers in a webhook's JSON, as each platform documents it:
    /// - Shopify: a Fulfillment (`fulfillments/create`, `fulfillments/update`: `tracking_numbers`,
    ///   `tracking_number`, `tracking_company`, `name` "#1001.1") or an Order (`orders/fulfilled`,
    ///   `orders/updated`: `name`, `fulfillments[]` of those);
    /// - WooCommerce: an order (`order.created`, `order.updated`: `number`, and the Shipment Tracking
    ///   extension's `meta_data` item `_wc_shipment_tracking_items`: `[{tracking_provider,
    ///   custom_tracking_provider, tracking_number}]`).
    /// Numbers are normalised; at most 50 per delivery; unknown shapes give none.
    public static func trackingNumbers(_ platform: ShopPlatform, _ json: [String: Any], detection: CarrierDetection = .standard) -> [ShopTrackingNumber] {
        var found: [ShopTrackingNumber] = []
        func add(_ raw: Any?, carrier: Any?, order: String?) {
            guard let raw = raw as? String else { return }
            let number = CarrierDetection.normalized(raw)
            guard number.count >= 4, number.count <= 60, !found.contains(where: { $0.number == number }) else { return }
            found.append(ShopTrackingNumber(number: number, carrier: (carrier as? String).flatMap(detection.carrier(named:)), order: order))
        }
        switch platform {
        case .shopify:
            func fulfillment(_ f: [String: Any], order: String?) {
                let name = order ?? (f["name"] as? String).map { String($0.split(separator: ".").first ?? "") }
                for number in (f["tracking_numbers"] as? [Any]) ?? [] { add(number, carrier: f["tracking_company"], order: name) }
                add(f["tracking_number"], carrier: f["tracking_company"], order: name)
            }
            if let fulfillments = json["fulfillments"] as? [[String: Any]] {
                for f in fulfillments.prefix(50) { fulfillment(f, order: json["name"] as? String) }
            } else {
                fulfillment(json, order: nil)
            }
        case .woocommerce:
            let order = (json["number"] as? String) ?? (json["number"] as? NSNumber)?.stringValue ?? (json["id"] as? NSNumber)?.stringValue
            let meta = (json["meta_data"] as? [[String: Any]]) ?? []
            for item in meta where (item["key"] as? String) == "_wc_shipment_tracking_items" {
                for tracking in ((item["value"] as? [[String: Any]]) ?? []).prefix(50) {
                    let provider = (tracking["tracking_provider"] as? String).flatMap { $0.isEmpty ? nil : $0 } ?? tracking["custom_tracking_provider"]
                    add(tracking["tracking_number"], carrier: provider, order: order.map { "#\($0)" })
                }
            }
        }
        return Array(found.prefix(50))
    }
}

/// Who may connect and see shops: an account for itself (not while suspended), up to ten.
public enum ShopPolicy {
    public static let maxPerAccount = 10

    public static func mayConnect(_ caller: Caller) -> Bool { caller.may(.placeOrders) }
    public static func maySee(owner: UserID, by caller: Caller) -> Bool { caller.id == owner }

    /// A shop's name and, when given, its signing secret (Shopify shows its own; WooCommerce takes
    /// the one Waybill makes unless given one).
    public static func validate(name: String, secret: String?) -> FieldErrors {
        var errors = FieldErrors()
        let trimmed = name.trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed.isEmpty { errors.add("name", "required") } else if trimmed.count > 80 { errors.add("name", "too_long") }
        if let secret, secret.count < 16 || secret.count > 200 || !secret.allSatisfy({ $0.isASCII && !$0.isWhitespace }) {
            errors.add("secret", "invalid")
        }
        return errors
    }
}
