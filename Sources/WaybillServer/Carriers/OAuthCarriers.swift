import Foundation
import Vapor
import WaybillCore

/// A carrier API's OAuth 2 client credentials (UPS, FedEx, USPS, GLS), from the environment.
public struct CarrierCredentials: Sendable, Equatable {
    public var clientID: String
    public var clientSecret: String
    /// Without a trailing slash (`https://onlinetools.ups.com`).
    public var base: String

    public init(clientID: String, clientSecret: String, base: String) {
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.base = base
    }
}

/// An OAuth 2 access token obtained with the client-credentials grant, cached until a minute before
/// it expires, shared by every poll of the process; one request at a time refreshes it (callers
/// waiting meanwhile get the same token). A 401 from the carrier drops it so the next call asks again.
actor OAuthTokenCache {
    enum Style: Sendable {
        /// `Authorization: Basic base64(id:secret)`, form body `grant_type=client_credentials` (UPS, GLS).
        case basic
        /// Form body `grant_type=client_credentials&client_id=…&client_secret=…` (FedEx, USPS).
        case formFields
    }

    private let url: String
    private let credentials: CarrierCredentials
    private let style: Style
    private let client: @Sendable () -> any Client
    private let now: @Sendable () -> Date
    private var token: (value: String, expires: Date)?
    private var refreshing: Task<(value: String, expires: Date), any Error>?
    /// Token requests made (for the tests: a cached token asks no more).
    private(set) var requests = 0

    init(url: String, credentials: CarrierCredentials, style: Style, client: @escaping @Sendable () -> any Client,
         now: @escaping @Sendable () -> Date = { Date() }) {
        self.url = url
        self.credentials = credentials
        self.style = style
        self.client = client
        self.now = now
    }

    func bearer() async throws -> String {
        if let token, token.expires > now() { return token.value }
        if let refreshing { return try await refreshing.value.value }
        requests += 1
        let task = Task { [url, credentials, style, client, now] in try await Self.fetch(url: url, credentials: credentials, style: style, client: client, now: now) }
        refreshing = task
        defer { refreshing = nil }
        let fresh = try await task.value
        token = fresh
        return fresh.value
    }

    func invalidate() { token = nil }

    private static func fetch(url: String, credentials: CarrierCredentials, style: Style, client: @Sendable () -> any Client,
                              now: @Sendable () -> Date) async throws -> (value: String, expires: Date) {
        var headers = HTTPHeaders()
        headers.contentType = .urlEncodedForm
        headers.replaceOrAdd(name: .accept, value: "application/json")
        var form = "grant_type=client_credentials"
        switch style {
        case .basic:
            let pair = Data("\(credentials.clientID):\(credentials.clientSecret)".utf8).base64EncodedString()
            headers.replaceOrAdd(name: .authorization, value: "Basic \(pair)")
        case .formFields:
            let allowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-._~"))
            form += "&client_id=\(credentials.clientID.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")"
            form += "&client_secret=\(credentials.clientSecret.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")"
        }
        let response: ClientResponse
        do {
            response = try await client().post(URI(string: url), headers: headers) { $0.body = ByteBuffer(string: form) }
        } catch {
            throw CarrierTrackingError.unavailable("token endpoint unreachable")
        }
        if response.status == .tooManyRequests { throw CarrierTrackingError.rateLimited(retryAfter: nil) }
        let data = response.body.map { Data(buffer: $0) } ?? Data()
        guard response.status == .ok, data.count < 100_000,
              let body = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let value = body["access_token"] as? String, !value.isEmpty else {
            // Never the body: it may echo the credentials.
            throw CarrierTrackingError.unavailable("token refused (\(response.status.code))")
        }
        // UPS writes `expires_in` as a string, the others as a number.
        let seconds = (body["expires_in"] as? NSNumber)?.intValue ?? (body["expires_in"] as? String).flatMap { Int($0) } ?? 3_600
        let lifetime = TimeInterval(min(max(seconds - 60, 30), 86_400))
        return (value, now().addingTimeInterval(lifetime))
    }
}

/// Sends one request with the cached bearer token; on 401 drops the token and tries once more.
struct OAuthHTTP: Sendable {
    let tokens: OAuthTokenCache
    let client: @Sendable () -> any Client

    /// A carrier's API at `credentials.base`, its token endpoint at `tokenPath`.
    init(_ credentials: CarrierCredentials, tokenPath: String, style: OAuthTokenCache.Style, client: @escaping @Sendable () -> any Client) {
        tokens = OAuthTokenCache(url: credentials.base + tokenPath, credentials: credentials, style: style, client: client)
        self.client = client
    }

    func send(_ method: HTTPMethod, _ url: String, headers: HTTPHeaders = [:], json: Any? = nil) async throws -> (status: UInt, json: Any?) {
        for attempt in 0..<2 {
            var headers = headers
            headers.replaceOrAdd(name: .authorization, value: "Bearer \(try await tokens.bearer())")
            headers.replaceOrAdd(name: .accept, value: "application/json")
            let body = try json.map { try JSONSerialization.data(withJSONObject: $0) }
            if body != nil { headers.contentType = .json }
            let answer = try await CarrierHTTP(client: client).send(method, url, headers: headers, body: body)
            if answer.status == 401, attempt == 0 {
                await tokens.invalidate()
                continue
            }
            return answer
        }
        throw CarrierTrackingError.unavailable("unauthorised")
    }
}

private func encoded(_ number: String) -> String {
    number.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? number
}

private func place(_ parts: [Any?]) -> String? {
    let text = parts.compactMap { $0 as? String }.filter { !$0.isEmpty }.joined(separator: ", ")
    return text.isEmpty ? nil : String(text.prefix(200))
}

/// UPS Tracking API: OAuth (`POST /security/v1/oauth/token`, Basic), then
/// `GET /api/track/v1/details/{number}` with `transId` and `transactionSrc`. One number per call.
/// Times come as `date` YYYYMMDD and `time` HHMMSS without a zone: kept as written, zone unknown.
struct UPSTracker: CarrierTracker {
    let http: OAuthHTTP
    let base: String
    var carriers: Set<String> { ["ups"] }
    var batchSize: Int { 1 }

    init(credentials: CarrierCredentials, client: @escaping @Sendable () -> any Client) {
        base = credentials.base
        http = OAuthHTTP(credentials, tokenPath: "/security/v1/oauth/token", style: .basic, client: client)
    }

    func track(_ numbers: [String]) async throws -> [String: CarrierAnswer] {
        var answers: [String: CarrierAnswer] = [:]
        for number in numbers {
            var headers = HTTPHeaders()
            headers.replaceOrAdd(name: "transId", value: UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased())
            headers.replaceOrAdd(name: "transactionSrc", value: "waybill")
            let (status, json) = try await http.send(.GET, "\(base)/api/track/v1/details/\(encoded(number))?locale=en_US", headers: headers)
            if status == 404 { answers[number] = .notFound; continue }
            guard status == 200, let body = json as? [String: Any], let response = body["trackResponse"] as? [String: Any] else {
                throw CarrierTrackingError.unavailable("UPS answered \(status)")
            }
            let shipment = (response["shipment"] as? [[String: Any]])?.first
            guard let package = (shipment?["package"] as? [[String: Any]])?.first else {
                answers[number] = .notFound // `warnings: [{code: TW0001, message: Tracking Information Not Found}]`
                continue
            }
            answers[number] = .found(Self.report(number, package))
        }
        return answers
    }

    static func report(_ number: String, _ package: [String: Any]) -> CarrierReport {
        let raw = (package["activity"] as? [[String: Any]]) ?? []
        let events: [ParcelEvent] = raw.prefix(500).compactMap { a in
            guard let date = a["date"] as? String, let time = a["time"] as? String, let at = upsTime(date, time) else { return nil }
            let status = a["status"] as? [String: Any]
            let type = (status?["type"] as? String) ?? "?"
            let code = "\(type)/\((status?["code"] as? String) ?? "")"
            let address = (a["location"] as? [String: Any])?["address"] as? [String: Any]
            return ParcelEvent(at: at, timeZoneKnown: false, localTime: "\(date) \(time)", rawCode: String(code.prefix(40)),
                               status: ParcelTracking.status(carrier: "ups", code: code),
                               description: String(((status?["description"] as? String) ?? code).prefix(500)),
                               location: place([address?["city"], address?["stateProvince"], address?["countryCode"]]),
                               reason: ParcelTracking.reason(carrier: "ups", code: code))
        }
        let current = ((package["currentStatus"] as? [String: Any])?["type"] as? String)
        let dates = (package["deliveryDate"] as? [[String: Any]]) ?? []
        let estimated = dates.first { ($0["type"] as? String) == "SDD" || ($0["type"] as? String) == "RDD" }
            .flatMap { $0["date"] as? String }.flatMap { upsTime($0, "120000") }
        let signed = (package["deliveryInformation"] as? [String: Any])?["receivedBy"] as? String
        return CarrierReport(number: number, events: events, delivered: current == "D" || events.contains { $0.status == .delivered },
                             estimatedDelivery: estimated, signedBy: signed.map { String($0.prefix(100)) })
    }

    /// `20261120` + `140300` read as UTC (UPS gives no offset).
    static func upsTime(_ date: String, _ time: String) -> Int64? {
        guard date.count == 8, time.count >= 4, date.allSatisfy(\.isASCII), time.allSatisfy(\.isASCII) else { return nil }
        let d = Array(date), t = Array(time)
        let text = "\(String(d[0..<4]))-\(String(d[4..<6]))-\(String(d[6..<8]))T\(String(t[0..<2])):\(String(t[2..<4])):\(t.count >= 6 ? String(t[4..<6]) : "00")Z"
        return CarrierTime.parse(text)?.at
    }
}

/// FedEx Track API: OAuth (`POST /oauth/token`, client id and secret in the form), then
/// `POST /track/v1/trackingnumbers` with up to 30 numbers; each result may carry its own error
/// (`TRACKING.TRACKINGNUMBER.NOTFOUND`) beside the others' answers.
struct FedExTracker: CarrierTracker {
    let http: OAuthHTTP
    let base: String
    var carriers: Set<String> { ["fedex"] }
    var batchSize: Int { 30 }

    init(credentials: CarrierCredentials, client: @escaping @Sendable () -> any Client) {
        base = credentials.base
        http = OAuthHTTP(credentials, tokenPath: "/oauth/token", style: .formFields, client: client)
    }

    func track(_ numbers: [String]) async throws -> [String: CarrierAnswer] {
        guard !numbers.isEmpty else { return [:] }
        let body: [String: Any] = [
            "includeDetailedScans": true,
            "trackingInfo": numbers.prefix(30).map { ["trackingNumberInfo": ["trackingNumber": $0]] },
        ]
        let (status, json) = try await http.send(.POST, "\(base)/track/v1/trackingnumbers", json: body)
        guard status == 200, let output = (json as? [String: Any])?["output"] as? [String: Any],
              let complete = output["completeTrackResults"] as? [[String: Any]] else {
            throw CarrierTrackingError.unavailable("FedEx answered \(status)")
        }
        var answers: [String: CarrierAnswer] = [:]
        for number in numbers { answers[number] = .notFound }
        for item in complete {
            guard let number = (item["trackingNumber"] as? String)?.uppercased(), answers[number] != nil,
                  let result = (item["trackResults"] as? [[String: Any]])?.first, result["error"] == nil else { continue }
            answers[number] = .found(Self.report(number, result))
        }
        return answers
    }

    static func report(_ number: String, _ result: [String: Any]) -> CarrierReport {
        let raw = (result["scanEvents"] as? [[String: Any]]) ?? []
        let events: [ParcelEvent] = raw.prefix(500).compactMap { e in
            guard let stamp = e["date"] as? String, let time = CarrierTime.parse(stamp) else { return nil }
            let code = (e["derivedStatusCode"] as? String).flatMap { $0.isEmpty ? nil : $0 } ?? (e["eventType"] as? String) ?? "?"
            let location = e["scanLocation"] as? [String: Any]
            var description = (e["eventDescription"] as? String) ?? code
            if let exception = e["exceptionDescription"] as? String, !exception.isEmpty { description += " — \(exception)" }
            return ParcelEvent(at: time.at, timeZoneKnown: time.zoneKnown, localTime: stamp, rawCode: String(code.prefix(40)),
                               status: ParcelTracking.status(carrier: "fedex", code: code),
                               description: String(description.prefix(500)),
                               location: place([location?["city"], location?["stateOrProvinceCode"], location?["countryCode"]]),
                               reason: (e["exceptionCode"] as? String).flatMap { ParcelTracking.reason(carrier: "fedex", code: $0) })
        }
        let latest = (result["latestStatusDetail"] as? [String: Any])?["derivedCode"] as? String
        let dates = (result["dateAndTimes"] as? [[String: Any]]) ?? []
        let estimated = dates.first { ($0["type"] as? String) == "ESTIMATED_DELIVERY" }.flatMap { $0["dateTime"] as? String }
            .flatMap(CarrierTime.parse)?.at
        let signed = (result["deliveryDetails"] as? [String: Any])?["receivedByName"] as? String
        return CarrierReport(number: number, events: events, delivered: latest == "DL", estimatedDelivery: estimated,
                             signedBy: signed.map { String($0.prefix(100)) })
    }
}

/// USPS Tracking v3: OAuth (`POST /oauth2/v3/token`, client id and secret in the form), then
/// `GET /tracking/v3/tracking/{number}?expand=DETAIL`. One number per call; events carry a local
/// time and `GMTTimestamp`, so the zone is known.
struct USPSTracker: CarrierTracker {
    let http: OAuthHTTP
    let base: String
    var carriers: Set<String> { ["usps"] }
    var batchSize: Int { 1 }

    init(credentials: CarrierCredentials, client: @escaping @Sendable () -> any Client) {
        base = credentials.base
        http = OAuthHTTP(credentials, tokenPath: "/oauth2/v3/token", style: .formFields, client: client)
    }

    func track(_ numbers: [String]) async throws -> [String: CarrierAnswer] {
        var answers: [String: CarrierAnswer] = [:]
        for number in numbers {
            let (status, json) = try await http.send(.GET, "\(base)/tracking/v3/tracking/\(encoded(number))?expand=DETAIL")
            if status == 404 { answers[number] = .notFound; continue }
            guard status == 200, let body = json as? [String: Any] else { throw CarrierTrackingError.unavailable("USPS answered \(status)") }
            answers[number] = .found(Self.report(number, body))
        }
        return answers
    }

    static func report(_ number: String, _ body: [String: Any]) -> CarrierReport {
        let raw = (body["trackingEvents"] as? [[String: Any]]) ?? []
        let events: [ParcelEvent] = raw.prefix(500).compactMap { e in
            let local = (e["eventTimestamp"] as? String) ?? ""
            let utc = (e["GMTTimestamp"] as? String).flatMap(CarrierTime.parse)
            guard let time = utc ?? CarrierTime.parse(local) else { return nil }
            let code = (e["eventCode"] as? String) ?? "?"
            return ParcelEvent(at: time.at, timeZoneKnown: utc?.zoneKnown ?? false, localTime: local.isEmpty ? ((e["GMTTimestamp"] as? String) ?? "") : local,
                               rawCode: String(code.prefix(40)), status: ParcelTracking.status(carrier: "usps", code: code),
                               description: String(((e["eventType"] as? String) ?? code).prefix(500)),
                               location: place([e["eventCity"], e["eventState"], e["eventCountry"] ?? "US"]),
                               reason: ParcelTracking.reason(carrier: "usps", code: code))
        }
        let estimated = (body["expectedDeliveryDate"] as? String).flatMap { CarrierTime.parse($0.count == 10 ? "\($0)T12:00:00" : $0) }?.at
        return CarrierReport(number: number, events: events, delivered: events.contains { $0.status == .delivered }, estimatedDelivery: estimated)
    }
}

/// GLS Track and Trace: OAuth (`POST /oauth2/v2/token`, Basic), then
/// `GET /tracking/simple/trackids/{up to 10 ids, comma separated}`; numbers GLS does not know are
/// missing from `parcels` or marked `NOT_FOUND`.
struct GLSTracker: CarrierTracker {
    let http: OAuthHTTP
    let base: String
    var carriers: Set<String> { ["gls"] }
    var batchSize: Int { 10 }

    init(credentials: CarrierCredentials, client: @escaping @Sendable () -> any Client) {
        base = credentials.base
        http = OAuthHTTP(credentials, tokenPath: "/oauth2/v2/token", style: .basic, client: client)
    }

    func track(_ numbers: [String]) async throws -> [String: CarrierAnswer] {
        guard !numbers.isEmpty else { return [:] }
        let ids = numbers.prefix(10).map(encoded).joined(separator: ",")
        let (status, json) = try await http.send(.GET, "\(base)/tracking/simple/trackids/\(ids)")
        var answers: [String: CarrierAnswer] = [:]
        for number in numbers { answers[number] = .notFound }
        if status == 404 { return answers }
        guard status == 200 || status == 207, let parcels = (json as? [String: Any])?["parcels"] as? [[String: Any]] else {
            throw CarrierTrackingError.unavailable("GLS answered \(status)")
        }
        for parcel in parcels {
            let number = ((parcel["requested"] as? String) ?? (parcel["unitno"] as? String) ?? "").uppercased()
            guard answers[number] != nil, (parcel["status"] as? String) != "NOT_FOUND" else { continue }
            answers[number] = .found(Self.report(number, parcel))
        }
        return answers
    }

    static func report(_ number: String, _ parcel: [String: Any]) -> CarrierReport {
        let raw = (parcel["events"] as? [[String: Any]]) ?? []
        let events: [ParcelEvent] = raw.prefix(500).compactMap { e in
            guard let stamp = e["eventDateTime"] as? String, let time = CarrierTime.parse(stamp) else { return nil }
            let code = (e["code"] as? String) ?? "?"
            return ParcelEvent(at: time.at, timeZoneKnown: time.zoneKnown, localTime: stamp, rawCode: String(code.prefix(40)),
                               status: ParcelTracking.status(carrier: "gls", code: code),
                               description: String(((e["description"] as? String) ?? code).prefix(500)),
                               location: place([e["city"], e["country"]]))
        }
        let status = parcel["status"] as? String
        return CarrierReport(number: number, events: events, delivered: status == "DELIVERED" || status == "DELIVEREDPS")
    }
}
