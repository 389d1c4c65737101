import Foundation
import Vapor
import WaybillCore

/// What a carrier answered for one number.
enum CarrierAnswer: Sendable, Equatable {
    case found(CarrierReport)
    /// The carrier does not know the number (yet).
    case notFound
}

/// A carrier's API refused or failed; the poller backs off.
enum CarrierTrackingError: Error, Equatable {
    /// 429: wait this many seconds (the carrier's `Retry-After`, or the poller's backoff).
    case rateLimited(retryAfter: Int?)
    case unavailable(String)
}

/// Asks one carrier about tracking numbers (issue "Parcels of every carrier", item 2). Each
/// implementation is a real HTTP client of the carrier's documented API; without its keys it is
/// not configured at all (and the log says so at start).
protocol CarrierTracker: Sendable {
    /// The Waybill carrier codes it answers for (`dhl`, `la_poste`).
    var carriers: Set<String> { get }
    /// How many numbers one call may carry.
    var batchSize: Int { get }
    func track(_ numbers: [String]) async throws -> [String: CarrierAnswer]
}

/// Carrier API keys, from the environment: an adapter without its key is off.
public struct CarrierSettings: Sendable, Equatable {
    public var dhlAPIKey: String?
    public var dhlAPIBase = "https://api-eu.dhl.com"
    public var laPosteAPIKey: String?
    public var laPosteAPIBase = "https://api.laposte.fr"
    /// OAuth client credentials; nil: that adapter is off.
    public var ups: CarrierCredentials?
    public var fedex: CarrierCredentials?
    public var usps: CarrierCredentials?
    public var gls: CarrierCredentials?

    public init(dhlAPIKey: String? = nil, dhlAPIBase: String = "https://api-eu.dhl.com", laPosteAPIKey: String? = nil,
                laPosteAPIBase: String = "https://api.laposte.fr", ups: CarrierCredentials? = nil, fedex: CarrierCredentials? = nil,
                usps: CarrierCredentials? = nil, gls: CarrierCredentials? = nil) {
        self.dhlAPIKey = dhlAPIKey
        self.dhlAPIBase = dhlAPIBase
        self.laPosteAPIKey = laPosteAPIKey
        self.laPosteAPIBase = laPosteAPIBase
        self.ups = ups
        self.fedex = fedex
        self.usps = usps
        self.gls = gls
    }

    /// The OAuth carriers: environment prefix, default API base, name.
    static let oauthCarriers: [(prefix: String, base: String, name: String)] = [
        ("UPS", "https://onlinetools.ups.com", "UPS"), ("FEDEX", "https://apis.fedex.com", "FedEx"),
        ("USPS", "https://apis.usps.com", "USPS"), ("GLS", "https://api.gls-group.net", "GLS"),
    ]

    /// The adapters with keys, and a sentence for each one that is off.
    func trackers(client: @escaping @Sendable () -> any Client) -> (trackers: [any CarrierTracker], off: [String]) {
        var trackers: [any CarrierTracker] = []
        var off: [String] = []
        if let key = dhlAPIKey { trackers.append(DHLTracker(apiKey: key, base: dhlAPIBase, client: client)) }
        else { off.append("DHL (set DHL_API_KEY)") }
        if let key = laPosteAPIKey { trackers.append(LaPosteTracker(apiKey: key, base: laPosteAPIBase, client: client)) }
        else { off.append("La Poste (set LAPOSTE_API_KEY)") }
        if let ups { trackers.append(UPSTracker(credentials: ups, client: client)) } else { off.append("UPS (set UPS_CLIENT_ID and UPS_CLIENT_SECRET)") }
        if let fedex { trackers.append(FedExTracker(credentials: fedex, client: client)) } else { off.append("FedEx (set FEDEX_CLIENT_ID and FEDEX_CLIENT_SECRET)") }
        if let usps { trackers.append(USPSTracker(credentials: usps, client: client)) } else { off.append("USPS (set USPS_CLIENT_ID and USPS_CLIENT_SECRET)") }
        if let gls { trackers.append(GLSTracker(credentials: gls, client: client)) } else { off.append("GLS (set GLS_CLIENT_ID and GLS_CLIENT_SECRET)") }
        return (trackers, off)
    }
}

enum CarrierTime {
    /// An ISO 8601 time with its offset (known zone) or without (read as UTC, zone unknown).
    static func parse(_ text: String) -> (at: Int64, zoneKnown: Bool)? {
        let withZone = ISO8601DateFormatter()
        withZone.formatOptions = [.withInternetDateTime]
        let fractional = ISO8601DateFormatter()
        fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = withZone.date(from: text) ?? fractional.date(from: text), let ms = UnixTime.millis(date) { return (ms, true) }
        let local = ISO8601DateFormatter()
        local.formatOptions = [.withFullDate, .withTime, .withColonSeparatorInTime, .withDashSeparatorInDate]
        local.timeZone = TimeZone(identifier: "UTC")
        if let date = local.date(from: String(text.prefix(19))), let ms = UnixTime.millis(date) { return (ms, false) }
        return nil
    }
}

/// Sends one GET and reads JSON; the status decides (404 not found, 429 rate limited, else failure).
struct CarrierHTTP: Sendable {
    let client: @Sendable () -> any Client

    func get(_ url: String, headers: HTTPHeaders) async throws -> (status: UInt, json: Any?) {
        try await send(.GET, url, headers: headers, body: nil)
    }

    func send(_ method: HTTPMethod, _ url: String, headers: HTTPHeaders, body: Data?) async throws -> (status: UInt, json: Any?) {
        let response: ClientResponse
        do {
            response = try await client().send(method, headers: headers, to: URI(string: url)) { request in
                if let body { request.body = ByteBuffer(data: body) }
            }
        } catch {
            throw CarrierTrackingError.unavailable("unreachable")
        }
        let data = response.body.map { Data(buffer: $0) } ?? Data()
        if response.status == .tooManyRequests {
            throw CarrierTrackingError.rateLimited(retryAfter: response.headers.first(name: .retryAfter).flatMap { Int($0) }.map { min(max($0, 1), 86_400) })
        }
        // Carriers answer a few hundred kilobytes at most; anything far larger is not theirs.
        guard data.count <= 2_000_000 else { throw CarrierTrackingError.unavailable("answer too large") }
        return (response.status.code, try? JSONSerialization.jsonObject(with: data))
    }
}

/// DHL Shipment Tracking – Unified: `GET /track/shipments?trackingNumber=…`, header `DHL-API-Key`.
/// One number per call; 404 when DHL does not know it.
struct DHLTracker: CarrierTracker {
    let apiKey: String
    let base: String
    let client: @Sendable () -> any Client
    var carriers: Set<String> { ["dhl"] }
    var batchSize: Int { 1 }

    func track(_ numbers: [String]) async throws -> [String: CarrierAnswer] {
        var answers: [String: CarrierAnswer] = [:]
        for number in numbers {
            var headers = HTTPHeaders()
            headers.replaceOrAdd(name: "DHL-API-Key", value: apiKey)
            headers.replaceOrAdd(name: .accept, value: "application/json")
            let query = number.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? number
            let (status, json) = try await CarrierHTTP(client: client).get("\(base)/track/shipments?trackingNumber=\(query)&language=en", headers: headers)
            if status == 404 { answers[number] = .notFound; continue }
            guard status == 200, let body = json as? [String: Any], let shipments = body["shipments"] as? [[String: Any]] else {
                throw CarrierTrackingError.unavailable("DHL answered \(status)")
            }
            guard let shipment = shipments.first(where: { ($0["id"] as? String)?.uppercased() == number }) ?? shipments.first else {
                answers[number] = .notFound
                continue
            }
            answers[number] = .found(Self.report(number, shipment))
        }
        return answers
    }

    static func report(_ number: String, _ shipment: [String: Any]) -> CarrierReport {
        let raw = (shipment["events"] as? [[String: Any]]) ?? []
        let events: [ParcelEvent] = raw.prefix(500).compactMap { e in
            guard let stamp = e["timestamp"] as? String, let time = CarrierTime.parse(stamp) else { return nil }
            let code = (e["statusCode"] as? String) ?? "unknown"
            let address = (e["location"] as? [String: Any])?["address"] as? [String: Any]
            let place = [address?["addressLocality"] as? String, address?["countryCode"] as? String].compactMap { $0 }.joined(separator: ", ")
            return ParcelEvent(at: time.at, timeZoneKnown: time.zoneKnown, localTime: stamp, rawCode: code,
                               status: ParcelTracking.status(carrier: "dhl", code: code),
                               description: String(((e["description"] as? String) ?? (e["status"] as? String) ?? code).prefix(500)),
                               location: place.isEmpty ? nil : String(place.prefix(200)))
        }
        let status = (shipment["status"] as? [String: Any])?["statusCode"] as? String
        let estimated = (shipment["estimatedTimeOfDelivery"] as? String).flatMap(CarrierTime.parse)?.at
        return CarrierReport(number: number, events: events, delivered: status == "delivered", estimatedDelivery: estimated)
    }
}

/// La Poste Suivi v2: `GET /suivi/v2/idships/{up to 10 ids}?lang=fr_FR`, header `X-Okapi-Key`. One id
/// answers 200 (or 404); several answer 207 with each item's own `returnCode`.
struct LaPosteTracker: CarrierTracker {
    let apiKey: String
    let base: String
    let client: @Sendable () -> any Client
    var carriers: Set<String> { ["la_poste"] }
    var batchSize: Int { 10 }

    func track(_ numbers: [String]) async throws -> [String: CarrierAnswer] {
        guard !numbers.isEmpty else { return [:] }
        var headers = HTTPHeaders()
        headers.replaceOrAdd(name: "X-Okapi-Key", value: apiKey)
        headers.replaceOrAdd(name: .accept, value: "application/json")
        let ids = numbers.prefix(10).map { $0.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? $0 }.joined(separator: ",")
        let (status, json) = try await CarrierHTTP(client: client).get("\(base)/suivi/v2/idships/\(ids)?lang=fr_FR", headers: headers)
        let items: [[String: Any]]
        switch (status, json) {
        case (200, let one as [String: Any]), (404, let one as [String: Any]): items = [one]
        case (207, let many as [[String: Any]]): items = many
        default: throw CarrierTrackingError.unavailable("La Poste answered \(status)")
        }
        var answers: [String: CarrierAnswer] = [:]
        for number in numbers { answers[number] = .notFound }
        for item in items {
            let code = (item["returnCode"] as? NSNumber)?.intValue ?? Int(status)
            guard code == 200, let shipment = item["shipment"] as? [String: Any], let id = (shipment["idShip"] as? String)?.uppercased(),
                  answers[id] != nil else { continue }
            answers[id] = .found(Self.report(id, shipment))
        }
        return answers
    }

    static func report(_ number: String, _ shipment: [String: Any]) -> CarrierReport {
        let raw = (shipment["event"] as? [[String: Any]]) ?? []
        let events: [ParcelEvent] = raw.prefix(500).compactMap { e in
            guard let stamp = e["date"] as? String, let time = CarrierTime.parse(stamp), let code = e["code"] as? String else { return nil }
            return ParcelEvent(at: time.at, timeZoneKnown: time.zoneKnown, localTime: stamp, rawCode: code,
                               status: ParcelTracking.status(carrier: "la_poste", code: code),
                               description: String(((e["label"] as? String) ?? code).prefix(500)),
                               reason: ParcelTracking.reason(carrier: "la_poste", code: code))
        }
        let delivered = events.contains { $0.status == .delivered }
        let estimated = (shipment["estimDate"] as? String).flatMap(CarrierTime.parse)?.at
        return CarrierReport(number: number, events: events, delivered: delivered, estimatedDelivery: estimated)
    }
}
