import Foundation
import WaybillCore

/// A map island (`/assets/js/map.js`): its data as JSON in `data-map`, and a text fallback inside
/// that stays when JavaScript or the map library is missing.
struct WebMap {
    struct Marker {
        var id: String
        var latitude: Double
        var longitude: Double
        var label: String
        var kind: String  // pickup, dropoff, driver, pin
    }

    var id: String
    var label: String
    var markers: [Marker] = []
    var trail: [[Double]] = []
    /// Planned routes, each a line through its points ([latitude, longitude]), in the palette's colours.
    var routes: [[[Double]]] = []
    var orderID: OrderID?
    var fleet = false
    /// "pickup" or "dropoff": clicking the map sets that stop's pin.
    var pick: String?
    var fallback: String = ""

    func render(_ ctx: WebContext) -> String {
        let config = ctx.request.application.waybill.config
        var data: [String: Any] = [
            "tiles": config.mapTileURL, "attribution": config.mapAttribution,
            "center": [config.mapCenter.0, config.mapCenter.1], "zoom": markers.isEmpty ? 8 : 13,
            "markers": markers.map { ["id": $0.id, "lat": $0.latitude, "lng": $0.longitude, "label": $0.label, "kind": $0.kind] as [String: Any] },
            "trail": trail, "fleet": fleet,
            // A status change to one of these takes the driver off an order's map (`OrderStatus.endsTheDrive`).
            "ended": OrderStatus.allCases.filter(\.endsTheDrive).map(\.rawValue),
        ]
        data["order"] = orderID?.uuidString ?? NSNull()
        if !routes.isEmpty { data["routes"] = routes }
        let json = (try? JSONSerialization.data(withJSONObject: data, options: [.sortedKeys])).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        let text = fallback.isEmpty ? markers.map { marker -> String in
            "<li>\(h(marker.label)): <a href=\"https://www.openstreetmap.org/?mlat=\(marker.latitude)&amp;mlon=\(marker.longitude)#map=16/\(marker.latitude)/\(marker.longitude)\">\(String(format: "%.5f, %.5f", marker.latitude, marker.longitude))</a></li>"
        }.joined() : fallback
        return """
            <div class="map\(pick == nil ? "" : " pick")" id="\(h(id))" data-map="\(h(json))"\(pick.map { " data-map-pick=\"\($0)\"" } ?? "") role="region" aria-label="\(h(label))">\(text.isEmpty ? "" : (fallback.isEmpty ? "<ul class=\"map-fallback\">\(text)</ul>" : text))</div>
            """
    }

    /// A link that opens the phone's maps app at an address (geo: on Android, Apple Maps on iOS via the web link).
    static func directionsLink(_ address: Address, label: String) -> String {
        let query: String
        if let c = address.coordinate {
            query = "\(c.latitude),\(c.longitude)"
        } else {
            query = "\(address.street), \(address.postalCode) \(address.city)"
        }
        let encoded = query.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        return "<a class=\"button small\" href=\"https://www.google.com/maps/dir/?api=1&amp;destination=\(encoded)\" target=\"_blank\" rel=\"noopener\">\(h(label))</a>"
    }
}
