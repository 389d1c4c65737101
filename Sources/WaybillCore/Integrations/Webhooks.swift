import Crypto
import Foundation

/// What an integrator's endpoint can be told about. The names and payloads are documented in
/// openapi.yaml (`webhooks:`); a payload's shape only changes with `WebhookPayload.version`.
public enum WebhookEvent: String, Sendable, Codable, CaseIterable {
    case shipmentPlaced = "shipment.placed"
    case shipmentAssigned = "shipment.assigned"
    case shipmentAccepted = "shipment.accepted"
    /// A hand-over: the carrier took the parcel from the sender.
    case shipmentPickedUp = "shipment.picked_up"
    /// A hand-over: the receiver took it (signed, and the code checked when asked).
    case shipmentDelivered = "shipment.delivered"
    case shipmentFailed = "shipment.failed"
    case shipmentCancelled = "shipment.cancelled"
    case shipmentReceiptConfirmed = "shipment.receipt_confirmed"
    /// A hand-over: a reception counter checked the parcel in (from its sender, or for its receiver to collect).
    case shipmentAtCounter = "shipment.at_counter"
    case paymentRefunded = "payment.refunded"
    /// Money went to whoever carried the shipment.
    case payoutSent = "payout.sent"
    case tripRequestCreated = "trip_request.created"
    case tripRequestAccepted = "trip_request.accepted"
    case tripRequestDeclined = "trip_request.declined"
    case tripRequestCancelled = "trip_request.cancelled"
    case tripRequestExpired = "trip_request.expired"
    /// A parcel of another carrier changed status.
    case parcelUpdated = "parcel.updated"
    /// Sent by hand from the endpoint's page to see that it answers; never subscribed to.
    case ping

    /// What the event is about: deliveries to one endpoint about one subject keep their order.
    public enum Subject: String, Sendable { case shipment, tripRequest = "trip_request", parcel, endpoint }

    public var subject: Subject {
        switch self {
        case .parcelUpdated: .parcel
        case .tripRequestCreated, .tripRequestAccepted, .tripRequestDeclined, .tripRequestCancelled, .tripRequestExpired: .tripRequest
        case .ping: .endpoint
        default: .shipment
        }
    }

    /// The events an endpoint may subscribe to.
    public static let subscribable: [WebhookEvent] = allCases.filter { $0 != .ping }
}

/// Whose events an endpoint receives.
public enum WebhookScope: String, Sendable, Codable, CaseIterable {
    /// The owner's own: shipments they sent, trip requests they made or received, parcels they follow.
    case own
    /// Every shipment of the company (dispatchers only); not people's private parcels or trip requests.
    case company
}

/// The rules of webhooks, in one place: who registers what, which endpoint hears which event,
/// which addresses are acceptable, how long deliveries are retried.
public enum WebhookPolicy {
    public static let maxEndpointsPerAccount = 10
    public static let maxURLLength = 2048
    public static let maxDescriptionLength = 120

    /// Whether `caller` may register (or keep managing) an endpoint of `scope`.
    public static func mayRegister(_ scope: WebhookScope, by caller: Caller) -> Bool {
        switch scope {
        case .own: caller.may(.placeOrders)
        case .company: caller.may(.dispatch)
        }
    }

    public static func maySee(owner: UserID, by caller: Caller) -> Bool { owner == caller.id }

    /// Whether an endpoint of `scope` hears `event` about a shipment in which its owner stands in
    /// `capacities`. A payout is told to the company and to whoever was paid, not to the sender.
    public static func receivesShipment(_ scope: WebhookScope, event: WebhookEvent, ownerCapacities capacities: Set<OrderCapacity>,
                                        ownerIsPayee: Bool) -> Bool {
        switch scope {
        case .company: capacities.contains(.manager)
        case .own: event == .payoutSent ? ownerIsPayee : capacities.contains(.owner)
        }
    }

    /// Whether an endpoint of `scope` hears about a trip request its owner sent or received, or a
    /// parcel its owner follows (company endpoints never: those are people's own).
    public static func receivesPersonal(_ scope: WebhookScope) -> Bool { scope == .own }

    /// Checks an endpoint's address and events. `allowInsecure` (development only,
    /// `WEBHOOKS_ALLOW_PRIVATE`) also accepts `http://`.
    public static func validate(url: String?, events: [String]?, description: String?, allowInsecure: Bool) -> FieldErrors {
        var errors = FieldErrors()
        if let url {
            if let problem = urlProblem(url, allowInsecure: allowInsecure) { errors.add("url", problem) }
        }
        if let events {
            if events.isEmpty { errors.add("events", "required") }
            else if events.contains(where: { WebhookEvent(rawValue: $0).map { !subscribable.contains($0) } ?? true }) {
                errors.add("events", "unknown_event")
            }
        }
        if let description, description.count > maxDescriptionLength { errors.add("description", "too_long") }
        return errors
    }

    static let subscribable = Set(WebhookEvent.subscribable)

    /// Why `text` is no endpoint address (nil: it is one): HTTPS, a host name or address, no
    /// credentials in it, no fragment. Where the name leads is checked when sending.
    public static func urlProblem(_ text: String, allowInsecure: Bool) -> String? {
        guard !text.isEmpty else { return "required" }
        guard text.count <= maxURLLength else { return "too_long" }
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
              let host = components.host, !host.isEmpty else { return "invalid_url" }
        guard scheme == "https" || (allowInsecure && scheme == "http") else { return "https_required" }
        guard components.user == nil, components.password == nil, components.fragment == nil else { return "invalid_url" }
        if let port = components.port, !(1...65_535).contains(port) { return "invalid_url" }
        return nil
    }
}

/// When a delivery is tried again: after 1 min, 5 min, 30 min, 2 h, 5 h, then every 10 h, until
/// three days after the event; an endpoint that has failed for three days running is disabled.
public enum WebhookRetry {
    public static let windowMillis: Int64 = 3 * 86_400_000
    public static let disableAfterMillis: Int64 = 3 * 86_400_000
    static let delaysSeconds: [Int64] = [60, 300, 1800, 7200, 18_000, 36_000]

    /// The time of the next attempt after `attempts` failures, or nil to give up.
    public static func nextAttempt(createdAt: Int64, attempts: Int, now: Int64) -> Int64? {
        let delay = delaysSeconds[min(max(attempts - 1, 0), delaysSeconds.count - 1)] * 1000
        let next = now + delay
        return next - createdAt <= windowMillis ? next : nil
    }

    /// Whether an endpoint failing since `failingSince` should be disabled now: it has failed for
    /// three days running, or a delivery was just given up (`gaveUpOn`: its creation time) after
    /// three days in which the endpoint never answered well.
    public static func shouldDisable(failingSince: Int64?, now: Int64, gaveUpOn createdAt: Int64? = nil) -> Bool {
        guard let failingSince else { return false }
        if let createdAt, failingSince <= createdAt + 10 * 60_000 { return true }
        return now - failingSince >= disableAfterMillis
    }
}

/// The signature on every delivery, as Stripe signs its own: the header
/// `Waybill-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>" under the secret>`.
/// Receivers check the HMAC in constant time and refuse a timestamp more than five minutes old
/// (a replay). While a secret is being rotated, several `v1=` may appear: any one matching will do.
public enum WebhookSignature {
    public static let header = "Waybill-Signature"
    public static let defaultTolerance: TimeInterval = 300

    public static func signature(secret: String, timestamp: Int64, body: [UInt8]) -> String {
        var message = Array("\(timestamp).".utf8)
        message.append(contentsOf: body)
        let code = HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: Data(secret.utf8)))
        return code.map { String(format: "%02x", $0) }.joined()
    }

    /// The header's value for `body` sent at `timestamp`.
    public static func headerValue(secrets: [String], timestamp: Int64, body: [UInt8]) -> String {
        (["t=\(timestamp)"] + secrets.map { "v1=" + signature(secret: $0, timestamp: timestamp, body: body) }).joined(separator: ",")
    }

    public enum Failure: Error, Equatable, Sendable { case malformedHeader, noMatchingSignature, timestampOutsideTolerance }

    /// Checks a delivery as a receiver must: the exact bytes received, the header, the secret.
    public static func verify(body: [UInt8], header: String, secret: String, now: Date = Date(),
                              tolerance: TimeInterval = defaultTolerance) throws(Failure) {
        var timestamp: Int64?
        var signatures: [String] = []
        for part in header.split(separator: ",") {
            let pair = part.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard pair.count == 2 else { continue }
            if pair[0] == "t" { timestamp = Int64(pair[1]) } else if pair[0] == "v1" { signatures.append(pair[1].lowercased()) }
        }
        guard let timestamp, !signatures.isEmpty else { throw .malformedHeader }
        let expected = Array(signature(secret: secret, timestamp: timestamp, body: body).utf8)
        let matches = signatures.contains { candidate in
            let bytes = Array(candidate.utf8)
            return bytes.count == expected.count && zip(bytes, expected).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
        }
        guard matches else { throw .noMatchingSignature }
        guard abs(now.timeIntervalSince1970 - Double(timestamp)) <= tolerance else { throw .timestampOutsideTolerance }
    }
}

/// The envelope of every delivery: `{"id", "type", "version", "createdAt", "data"}`.
public enum WebhookPayload {
    /// Raised only when a payload changes incompatibly; endpoints keep the version they registered with.
    public static let version = "2026-11-23"
}
