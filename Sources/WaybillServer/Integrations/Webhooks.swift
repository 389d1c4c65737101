import Fluent
import Foundation
import NIOConcurrencyHelpers
import SQLKit
import Vapor
import WaybillAPI
import WaybillCore

/// An integrator's endpoint.
final class WebhookEndpointRecord: Model, @unchecked Sendable {
    static let schema = "webhook_endpoints"

    @ID(custom: .id, generatedBy: .user) var id: WebhookEndpointID?
    @Field(key: "owner_id") var ownerID: UserID
    @Field(key: "scope") var scope: WebhookScope
    @Field(key: "url") var url: String
    /// The events subscribed to, as `,a,b,` (so one `LIKE '%,a,%'` finds the endpoints of an event).
    @Field(key: "events") var eventList: String
    @OptionalField(key: "description") var about: String?
    /// The signing secret, sealed (AES-GCM, bound to the endpoint): the database alone does not reveal it.
    @Field(key: "secret_sealed") var secretSealed: String
    @Field(key: "enabled") var enabled: Bool
    @OptionalField(key: "disabled_reason") var disabledReason: String?
    /// Since when every attempt has failed (nil: the last one succeeded).
    @OptionalField(key: "failing_since") var failingSince: Int64?
    @Field(key: "version") var version: String
    @Field(key: "created_at") var createdAt: Int64

    var properties: [any AnyProperty] {
        [$id, $ownerID, $scope, $url, $eventList, $about, $secretSealed, $enabled, $disabledReason, $failingSince, $version, $createdAt]
    }

    init() {}

    var events: [WebhookEvent] {
        get { eventList.split(separator: ",").compactMap { WebhookEvent(rawValue: String($0)) } }
        set { eventList = "," + newValue.map(\.rawValue).joined(separator: ",") + "," }
    }

    var sealContext: String { get throws { "webhook|\(try storedID.uuidString)" } }
}

/// One event queued for one endpoint: the webhooks' outbox, written in the event's transaction.
final class WebhookDeliveryRecord: Model, @unchecked Sendable {
    static let schema = "webhook_deliveries"

    enum Status: String, Codable, Sendable, CaseIterable { case pending, delivered, failed }

    @ID(custom: .id, generatedBy: .user) var id: WebhookDeliveryID?
    @Field(key: "endpoint_id") var endpointID: WebhookEndpointID
    /// The event's id: the same in every delivery of it (a redelivery too), for receivers to keep one.
    @Field(key: "event_id") var eventID: WebhookEventID
    @Field(key: "event_type") var eventType: String
    /// `shipment:<id>`, `parcel:<id>`…: deliveries about one subject reach an endpoint in order.
    @Field(key: "subject") var subject: String
    @Field(key: "sequence") var sequence: Int64
    @Field(key: "payload") var payload: String
    @Field(key: "status") var status: Status
    @Field(key: "attempts") var attempts: Int
    /// Unix milliseconds; also the lease while a worker is sending.
    @Field(key: "next_attempt_at") var nextAttemptAt: Int64
    @OptionalField(key: "last_status_code") var lastStatusCode: Int?
    @OptionalField(key: "last_error") var lastError: String?
    @Field(key: "created_at") var createdAt: Int64
    @OptionalField(key: "delivered_at") var deliveredAt: Int64?

    var properties: [any AnyProperty] {
        [$id, $endpointID, $eventID, $eventType, $subject, $sequence, $payload, $status, $attempts, $nextAttemptAt,
         $lastStatusCode, $lastError, $createdAt, $deliveredAt]
    }

    init() {}
}

/// One try at sending a delivery: the delivery log.
final class WebhookAttemptRecord: Model, @unchecked Sendable {
    static let schema = "webhook_attempts"

    @ID(custom: .id, generatedBy: .database) var id: Int64?
    @Field(key: "delivery_id") var deliveryID: WebhookDeliveryID
    @Field(key: "at") var at: Int64
    @OptionalField(key: "status_code") var statusCode: Int?
    @Field(key: "duration_ms") var durationMillis: Int
    @OptionalField(key: "error") var error: String?

    var properties: [any AnyProperty] { [$id, $deliveryID, $at, $statusCode, $durationMillis, $error] }

    init() {}
}

/// Integrators' endpoints (issue "Integrations", item 1): registered by an account for its own
/// events, or by a dispatcher for the company's shipments (`WebhookPolicy`); each event queued in
/// its transaction (`enqueue`) and sent, signed, by `WebhookWorker`.
struct Webhooks: WaybillService {
    let services: WaybillServices
    let db: any Database
    let logger: Logger

    struct Draft: Sendable {
        var url: String
        var events: [String]
        var scope: WebhookScope = .own
        var description: String?
    }

    /// Registers an endpoint; answers it with its signing secret (shown this once).
    func create(_ draft: Draft, by me: Principal) async throws -> (WebhookEndpointRecord, String) {
        try check(draft.scope, me)
        let errors = WebhookPolicy.validate(url: draft.url, events: draft.events, description: draft.description,
                                            allowInsecure: services.config.webhooksAllowPrivate)
        guard errors.isEmpty else { throw WaybillError.validation(errors) }
        let endpoint = WebhookEndpointRecord()
        endpoint.id = .generated()
        endpoint.ownerID = me.userID
        endpoint.scope = draft.scope
        endpoint.url = draft.url
        endpoint.events = Self.ordered(draft.events)
        endpoint.about = Self.cleanDescription(draft.description)
        endpoint.enabled = true
        endpoint.version = WebhookPayload.version
        endpoint.createdAt = UnixTime.nowMillis
        let secret = Self.newSecret()
        endpoint.secretSealed = try seal(secret, endpoint)
        try await db.writeTransaction(services) { db in
            guard try await WebhookEndpointRecord.query(on: db).filter(\.$ownerID == me.userID).count() < WebhookPolicy.maxEndpointsPerAccount else {
                throw WaybillError(.conflict, .conflict, "An account registers at most \(WebhookPolicy.maxEndpointsPerAccount) webhook endpoints.")
            }
            try await endpoint.create(on: db)
        }
        return (endpoint, secret)
    }

    func list(for me: Principal) async throws -> [WebhookEndpointRecord] {
        try await WebhookEndpointRecord.query(on: db).filter(\.$ownerID == me.userID).sort(\.$createdAt).all()
    }

    /// The caller's endpoint, or 404 (nobody learns which ids exist).
    func endpoint(_ id: WebhookEndpointID, for me: Principal) async throws -> WebhookEndpointRecord {
        guard let endpoint = try await WebhookEndpointRecord.find(id, on: db), WebhookPolicy.maySee(owner: endpoint.ownerID, by: me.caller) else {
            throw WaybillError.notFound
        }
        return endpoint
    }

    struct Change: Sendable {
        var url: String?
        var events: [String]?
        var description: String??
        var enabled: Bool?
    }

    func update(_ id: WebhookEndpointID, _ change: Change, by me: Principal) async throws -> WebhookEndpointRecord {
        let endpoint = try await endpoint(id, for: me)
        // Turning an endpoint off, or deleting it, only reduces what is sent: allowed to anyone who owns it.
        if change.url != nil || change.events != nil || change.enabled == true { try check(endpoint.scope, me) }
        let errors = WebhookPolicy.validate(url: change.url, events: change.events, description: change.description ?? nil,
                                            allowInsecure: services.config.webhooksAllowPrivate)
        guard errors.isEmpty else { throw WaybillError.validation(errors) }
        if let url = change.url { endpoint.url = url }
        if let events = change.events { endpoint.events = Self.ordered(events) }
        if let description = change.description { endpoint.about = Self.cleanDescription(description) }
        if let enabled = change.enabled, enabled != endpoint.enabled {
            endpoint.enabled = enabled
            endpoint.disabledReason = enabled ? nil : "by_owner"
            endpoint.failingSince = nil
        }
        try await db.writeTransaction(services) { db in try await endpoint.save(on: db) }
        return endpoint
    }

    /// A new signing secret; the old one stops at once.
    func rotateSecret(_ id: WebhookEndpointID, by me: Principal) async throws -> (WebhookEndpointRecord, String) {
        let endpoint = try await endpoint(id, for: me)
        try check(endpoint.scope, me)
        let secret = Self.newSecret()
        endpoint.secretSealed = try seal(secret, endpoint)
        try await db.writeTransaction(services) { db in try await endpoint.save(on: db) }
        return (endpoint, secret)
    }

    func delete(_ id: WebhookEndpointID, by me: Principal) async throws {
        let endpoint = try await endpoint(id, for: me)
        try await db.writeTransaction(services) { db in try await endpoint.delete(on: db) }
    }

    /// The delivery log: newest first, with every attempt.
    func deliveries(_ id: WebhookEndpointID, for me: Principal, limit: Int = 50, before: Int64? = nil)
        async throws -> [(WebhookDeliveryRecord, [WebhookAttemptRecord])] {
        let endpoint = try await endpoint(id, for: me)
        let endpointID = try endpoint.storedID
        var query = WebhookDeliveryRecord.query(on: db).filter(\.$endpointID == endpointID)
        if let before { query = query.filter(\.$sequence < before) }
        let deliveries = try await query.sort(\.$sequence, .descending).limit(min(max(limit, 1), 100)).all()
        guard !deliveries.isEmpty else { return [] }
        let ids = try deliveries.map { try $0.storedID }
        let attempts = try await WebhookAttemptRecord.query(on: db).filter(\.$deliveryID ~~ ids).sort(\.$id).all()
        let byDelivery = Dictionary(grouping: attempts, by: \.deliveryID)
        return zip(deliveries, ids).map { ($0, byDelivery[$1] ?? []) }
    }

    /// Sends a delivery's event again, now, as a new delivery of the same event (same event id).
    func redeliver(_ id: WebhookEndpointID, delivery deliveryID: WebhookDeliveryID, by me: Principal) async throws -> WebhookDeliveryRecord {
        let endpoint = try await endpoint(id, for: me)
        try check(endpoint.scope, me)
        guard endpoint.enabled else {
            throw WaybillError(.conflict, .conflict, "This endpoint is disabled: enable it first.")
        }
        guard let original = try await WebhookDeliveryRecord.find(deliveryID, on: db), original.endpointID == endpoint.id else {
            throw WaybillError.notFound
        }
        try limitManual(me)
        let copy = Self.delivery(endpoint: try endpoint.storedID, eventID: original.eventID, type: original.eventType,
                                 subject: original.subject, payload: original.payload)
        try await db.writeTransaction(services) { db in try await copy.create(on: db) }
        services.webhookWorker.poke()
        return copy
    }

    /// A `ping` event, to see that the endpoint answers and checks signatures.
    func ping(_ id: WebhookEndpointID, by me: Principal) async throws -> WebhookDeliveryRecord {
        let endpoint = try await endpoint(id, for: me)
        try check(endpoint.scope, me)
        guard endpoint.enabled else { throw WaybillError(.conflict, .conflict, "This endpoint is disabled: enable it first.") }
        try limitManual(me)
        let eventID = WebhookEventID.generated(), endpointID = try endpoint.storedID
        let payload = try Self.envelope(id: eventID, type: .ping, data: PingData(endpointId: endpointID.uuidString.lowercased()))
        let delivery = Self.delivery(endpoint: endpointID, eventID: eventID, type: WebhookEvent.ping.rawValue,
                                     subject: "endpoint:\(endpointID.uuidString.lowercased())", payload: payload)
        try await db.writeTransaction(services) { db in try await delivery.create(on: db) }
        services.webhookWorker.poke()
        return delivery
    }

    // MARK: Queueing events

    /// Queues `event` for every enabled endpoint that subscribed to it and may hear it, in the
    /// transaction that recorded the event (`db`): it is sent if and only if the change commits.
    static func enqueue(_ event: DomainEvent, services: WaybillServices, on db: any Database) async throws {
        guard let type = webhookEvent(for: event) else { return }
        // Plain SQL: every event asks, inside its transaction (docs/performance.md). The pattern is
        // written into the text (an event type is one of a few fixed names), not bound: SQLite
        // prepares a statement again each time a LIKE's bound pattern is bound anew, 3 % of placing
        // an order under the write lock.
        guard let sql = db.tracedSQL else { return }
        let endpoints = try await sql.raw("""
            SELECT * FROM "webhook_endpoints" WHERE "enabled" = \(bind: true) AND "events" LIKE \(literal: "%,\(type.rawValue),%")
            """).all().map(WebhookEndpointRecord.init(row:))
        guard !endpoints.isEmpty else { return }
        let owners = Dictionary(uniqueKeysWithValues: try await User.query(on: db).filter(\.$id ~~ Array(Set(endpoints.map(\.ownerID)))).all()
            .map { (try $0.storedID, $0) })
        let eventID = WebhookEventID.generated()
        // One owner's endpoints of one scope share the payload (one load of the shipment, not one per endpoint).
        var payloads: [String: (subject: String, payload: String)?] = [:]
        for endpoint in endpoints {
            guard let owner = owners[endpoint.ownerID], !owner.isBanned,
                  WebhookPolicy.mayRegister(endpoint.scope, by: owner.caller(id: endpoint.ownerID)) else { continue }
            let key = "\(endpoint.ownerID.uuidString)|\(endpoint.scope.rawValue)"
            let built: (subject: String, payload: String)?
            do {
                if let known = payloads[key] {
                    built = known
                } else {
                    built = try await payload(of: event, type: type, eventID: eventID, for: owner, scope: endpoint.scope, services: services, on: db)
                    payloads[key] = .some(built)
                }
            } catch {
                if error is any DatabaseError { throw error }
                // An integrator's payload must never undo the change itself: the event is logged and skipped.
                Logger(label: "waybill.webhooks").error("Webhook payload for endpoint \(endpoint.id?.uuidString ?? "") not built: \(String(describing: error))")
                continue
            }
            guard let (subject, payload) = built else { continue }
            try await delivery(endpoint: try endpoint.storedID, eventID: eventID, type: type.rawValue, subject: subject, payload: payload).create(on: db)
        }
    }

    static func webhookEvent(for event: DomainEvent) -> WebhookEvent? {
        switch event {
        case .shipment(_, let fact):
            switch fact {
            case .placed: .shipmentPlaced
            case .assigned: .shipmentAssigned
            case .accepted: .shipmentAccepted
            case .pickedUp: .shipmentPickedUp
            case .delivered: .shipmentDelivered
            case .failed: .shipmentFailed
            case .cancelled, .checkoutExpired: .shipmentCancelled
            case .paymentRefunded: .paymentRefunded
            case .receiptConfirmed: .shipmentReceiptConfirmed
            case .atCounter: .shipmentAtCounter
            case .paidOut: .payoutSent
            }
        case .parcelChanged: .parcelUpdated
        case .ordersImported: nil  // each order placed is its own shipment.placed
        case .tripRequestChanged(_, let change):
            switch change {
            case .created: .tripRequestCreated
            case .accepted: .tripRequestAccepted
            case .declined: .tripRequestDeclined
            case .cancelled: .tripRequestCancelled
            case .expired: .tripRequestExpired
            }
        }
    }

    /// The event as `owner` may see it through an endpoint of `scope`, or nil if it is not theirs to hear.
    private static func payload(of event: DomainEvent, type: WebhookEvent, eventID: WebhookEventID, for owner: User, scope: WebhookScope,
                                services: WaybillServices, on db: any Database) async throws -> (subject: String, payload: String)? {
        let caller = try owner.caller
        if case .shipment(let order, let fact) = event {
            let capacities = OrderPolicy.capacities(of: caller, for: order.parties)
            var payee = false
            if case .paidOut(let entry) = fact { payee = entry.account == owner.id }
            // Seen as its owner sees it: someone with no part in the shipment hears nothing.
            guard !capacities.isEmpty,
                  WebhookPolicy.receivesShipment(scope, event: type, ownerCapacities: capacities, ownerIsPayee: payee) else { return nil }
            let record = try await Orders(services: services, db: db, logger: Logger(label: "waybill.webhooks"))
                .load(order, capacities: capacities, full: true)
            var data = ShipmentData(shipment: try APIHandler.order(record))
            switch fact {
            case .paidOut(let entry): data.payout = .init(amount: APIHandler.money(Money(entry.amount, entry.currency)))
            case .cancelled(_, let reason): data.reason = reason
            case .checkoutExpired: data.reason = "checkout_expired"
            default: break
            }
            return ("shipment:\(order.id.uuidString.lowercased())", try envelope(id: eventID, type: type, data: data))
        }
        switch event {
        case .parcelChanged(let facts, let old, let newEvents):
            guard WebhookPolicy.receivesPersonal(scope), facts.ownerID == owner.id,
                  let parcel = try await ParcelRecord.find(facts.id, on: db) else { return nil }
            let view = ParcelView(record: parcel, relation: .owner, alerts: parcel.alerts)
            let data = ParcelData(parcel: try APIHandler.parcel(view, candidates: false), previousStatus: old.rawValue,
                                  newEvents: try newEvents.map(APIHandler.parcelEvent))
            return ("parcel:\(facts.id.uuidString.lowercased())", try envelope(id: eventID, type: type, data: data))
        case .tripRequestChanged(let facts, _):
            guard WebhookPolicy.receivesPersonal(scope), facts.senderID == owner.id || facts.travellerID == owner.id,
                  let request = try await TripRequestRecord.find(facts.id, on: db) else { return nil }
            guard let trip = try await TripRecord.find(request.tripID, on: db) else { return nil }
            let shipment = try await request.shipmentID.asyncMap { try await Order.find($0, on: db) } ?? nil
            let travel = Travel(services: services, db: db, logger: Logger(label: "waybill.webhooks"))
            let view = Travel.RequestView(request: request, trip: trip, shipment: shipment)
            let data = TripRequestData(tripRequest: try await APIHandler.tripRequest(view, travel: travel, me: try Principal(user: owner, sessionID: SignInID())))
            return ("trip_request:\(try request.storedID.uuidString.lowercased())", try envelope(id: eventID, type: type, data: data))
        default:
            return nil
        }
    }

    struct ShipmentData: Encodable {
        var shipment: Components.Schemas.Order
        var reason: String?
        var payout: Payout?
        struct Payout: Encodable { var amount: Components.Schemas.Money }
    }

    struct ParcelData: Encodable {
        var parcel: Components.Schemas.Parcel
        var previousStatus: String
        var newEvents: [Components.Schemas.ParcelEvent]
    }

    struct TripRequestData: Encodable {
        var tripRequest: Components.Schemas.TripRequest
    }

    struct PingData: Encodable {
        var endpointId: String
    }

    private struct Envelope<Data: Encodable>: Encodable {
        var id: String
        var type: String
        var version: String
        var createdAt: Date
        var data: Data
    }

    static func envelope<D: Encodable>(id: WebhookEventID, type: WebhookEvent, data: D) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let dates = LenientISO8601DateTranscoder()
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(try dates.encode(date))
        }
        let envelope = Envelope(id: "evt_" + id.uuidString.lowercased().replacingOccurrences(of: "-", with: ""), type: type.rawValue,
                                version: WebhookPayload.version, createdAt: UnixTime.now, data: data)
        return String(decoding: try encoder.encode(envelope), as: UTF8.self)
    }

    private static let counter = NIOLockedValueBox<Int64>(0)

    /// Increasing in this process (milliseconds, then a counter): the order deliveries about one
    /// subject are sent in.
    static func nextSequence() -> Int64 {
        let n = counter.withLockedValue { value -> Int64 in
            value = (value + 1) % 1000
            return value
        }
        return UnixTime.nowMillis * 1000 + n
    }

    static func delivery(endpoint: WebhookEndpointID, eventID: WebhookEventID, type: String, subject: String, payload: String) -> WebhookDeliveryRecord {
        let delivery = WebhookDeliveryRecord()
        delivery.id = .generated()
        delivery.endpointID = endpoint
        delivery.eventID = eventID
        delivery.eventType = type
        delivery.subject = subject
        delivery.sequence = nextSequence()
        delivery.payload = payload
        delivery.status = .pending
        delivery.attempts = 0
        delivery.nextAttemptAt = UnixTime.nowMillis
        delivery.createdAt = UnixTime.nowMillis
        return delivery
    }

    // MARK: Helpers

    private func limitManual(_ me: Principal) throws {
        if let wait = services.webhookManualLimiter.take(me.userID.uuidString) {
            throw WaybillError.tooManyRequests(retryAfter: wait, "Too many test events and redeliveries; try again later.")
        }
    }

    /// Deliveries done with (delivered or given up) are kept in the log for 30 days.
    static let logDays: Int64 = 30

    func deleteOldDeliveries() async throws {
        let before = UnixTime.nowMillis - Self.logDays * 86_400_000
        try await db.writeTransaction(services) { db in
            try await WebhookDeliveryRecord.query(on: db).filter(\.$status != .pending).filter(\.$createdAt < before).delete()
        }
    }

    private func check(_ scope: WebhookScope, _ me: Principal) throws {
        guard WebhookPolicy.mayRegister(scope, by: me.caller) else {
            if WebhookPolicy.mayRegister(scope, by: Caller(id: me.userID, capabilities: me.user.capabilities)) { throw WaybillError.accountSuspended }
            throw WaybillError.forbidden
        }
    }

    private func seal(_ secret: String, _ endpoint: WebhookEndpointRecord) throws -> String {
        guard let sealed = services.codes.sealSecret(secret, context: try endpoint.sealContext) else {
            throw WaybillError(.internalServerError, .internalError, "The secret could not be sealed.")
        }
        return sealed
    }

    /// `whsec_` and 32 random bytes.
    static func newSecret() -> String {
        var generator = Randomness.generator
        return "whsec_" + Data((0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }).base64URLEncodedString()
    }

    static func ordered(_ names: [String]) -> [WebhookEvent] {
        let chosen = Set(names.compactMap(WebhookEvent.init(rawValue:)))
        return WebhookEvent.subscribable.filter(chosen.contains)
    }

    static func cleanDescription(_ text: String?) -> String? {
        guard let trimmed = text?.trimmingCharacters(in: .whitespacesAndNewlines), !trimmed.isEmpty else { return nil }
        return trimmed
    }
}
