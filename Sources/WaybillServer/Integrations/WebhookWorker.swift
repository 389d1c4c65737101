import AsyncHTTPClient
import Fluent
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOSSL
import SQLKit
import Vapor
import WaybillCore

/// Sends what `webhook_deliveries` holds: signed (`WebhookSignature`), at least once, in order per
/// subject for each endpoint, retried for three days (`WebhookRetry`), each attempt logged. One
/// runs in each `waybill serve` process; several processes on one PostgreSQL share the work, each
/// delivery claimed with a conditional update (as the outbox's messages are).
///
/// Integrators name the addresses, so before each attempt the host is resolved and refused if any
/// address is private, loopback or link-local; the connection then goes to the address checked
/// (`PushAddressGuard`). Redirects are never followed: a 3xx is a failed attempt.
final class WebhookWorker: Sendable {
    let db: @Sendable () -> any Database
    /// The application's services (for write transactions and notifications); set once configured.
    let services: @Sendable () -> WaybillServices?
    let writeLock: WriteLock
    let codes: OneTimeCodes
    let logger: Logger
    let group: any EventLoopGroup
    let timeoutSeconds: Int
    /// Development only (`WEBHOOKS_ALLOW_PRIVATE`): any address, plain HTTP too.
    let allowPrivate: Bool
    let interval: Duration
    private let wakeup = Wakeup()
    /// Certificates trusted besides the system's roots: none, except in tests (their local receiver).
    private let extraRoots = NIOLockedValueBox<[NIOSSLCertificate]>([])

    init(db: @escaping @Sendable () -> any Database, services: @escaping @Sendable () -> WaybillServices?, writeLock: WriteLock, codes: OneTimeCodes, logger: Logger, group: any EventLoopGroup,
         timeoutSeconds: Int, allowPrivate: Bool, interval: Duration = .seconds(1)) {
        self.db = db
        self.services = services
        self.writeLock = writeLock
        self.codes = codes
        self.logger = logger
        self.group = group
        self.timeoutSeconds = timeoutSeconds
        self.allowPrivate = allowPrivate
        self.interval = interval
    }

    /// Tests: trust a local receiver's self-signed certificate (and only it, with the system's roots gone).
    func trust(_ certificates: [NIOSSLCertificate]) { extraRoots.withLockedValue { $0 = certificates } }

    func poke() { wakeup.poke() }

    /// Runs until the task is cancelled.
    func run() async {
        while !Task.isCancelled {
            do {
                _ = try await runOnce()
            } catch {
                logger.warning("Webhook pass failed: \(String(describing: error))")
            }
            await wakeup.wait(timeout: interval)
        }
    }

    /// One pass: tries every delivery that is due. Returns how many were delivered.
    @discardableResult
    func runOnce(limit: Int = 50) async throws -> Int {
        let db = self.db()
        let due = try await WebhookDeliveryRecord.query(on: db)
            .filter(\.$status == .pending)
            .filter(\.$nextAttemptAt <= UnixTime.nowMillis)
            .sort(\.$sequence)
            .limit(limit)
            .all()
        guard !due.isEmpty else { return 0 }
        var byEndpoint: [WebhookEndpointID: [WebhookDeliveryRecord]] = [:]
        var endpointOrder: [WebhookEndpointID] = []
        for delivery in due {
            if byEndpoint[delivery.endpointID] == nil { endpointOrder.append(delivery.endpointID) }
            byEndpoint[delivery.endpointID, default: []].append(delivery)
        }
        // Endpoints in parallel (a slow one does not hold the others up); each one's deliveries in order.
        let clock = UnixTime.clock, random = Randomness.current
        return await withTaskGroup(of: Int.self) { tasks in
            for id in endpointOrder {
                guard let deliveries = byEndpoint[id] else { continue }  // each one has its list, made above
                tasks.addTask {
                    await withApplicationContext(clock: clock, random: random) {
                        do {
                            return try await self.process(endpoint: id, deliveries, on: db)
                        } catch {
                            self.logger.warning("Webhook deliveries to endpoint \(id) failed: \(String(describing: error))")
                            return 0
                        }
                    }
                }
            }
            return await tasks.reduce(0, +)
        }
    }

    private func process(endpoint id: WebhookEndpointID, _ deliveries: [WebhookDeliveryRecord], on db: any Database) async throws -> Int {
        guard let endpoint = try await WebhookEndpointRecord.find(id, on: db) else { return 0 }
        var delivered = 0
        for delivery in deliveries {
            // In order per subject: an earlier delivery about the same shipment still pending (waiting
            // for its retry, or being sent by another process) holds this one back.
            let earlier = try await WebhookDeliveryRecord.query(on: db)
                .filter(\.$endpointID == id).filter(\.$subject == delivery.subject)
                .filter(\.$status == .pending).filter(\.$sequence < delivery.sequence)
                .count()
            guard earlier == 0, try await claim(delivery, on: db) else { continue }
            guard endpoint.enabled else {
                delivery.status = .failed
                delivery.lastError = "endpoint disabled"
                try await writeLock.withLock { try await delivery.save(on: db) }
                continue
            }
            let outcome = try await send(delivery, to: endpoint)
            let ok = try await record(outcome, of: delivery, endpoint: endpoint, on: db)
            if ok { delivered += 1 }
            if !endpoint.enabled { break }
        }
        return delivered
    }

    private func claim(_ delivery: WebhookDeliveryRecord, on db: any Database) async throws -> Bool {
        guard let sql = db.tracedSQL else { return false }
        let lease = UnixTime.nowMillis + Int64(timeoutSeconds + 60) * 1000
        let id = try delivery.storedID
        let rows = try await writeLock.withLock {
            try await sql.update(WebhookDeliveryRecord.schema)
                .set("next_attempt_at", to: SQLBind(lease))
                .where("id", .equal, SQLBind(id))
                .where("status", .equal, SQLBind(WebhookDeliveryRecord.Status.pending.rawValue))
                .where("next_attempt_at", .equal, SQLBind(delivery.nextAttemptAt))
                .returning("id")
                .all()
        }
        if !rows.isEmpty { delivery.nextAttemptAt = lease }
        return !rows.isEmpty
    }

    struct Outcome: Sendable {
        var statusCode: Int?
        var error: String?
        var durationMillis: Int
        var succeeded: Bool { error == nil && (200..<300).contains(statusCode ?? 0) }
    }

    /// One attempt: the signed POST and what came back.
    func send(_ delivery: WebhookDeliveryRecord, to endpoint: WebhookEndpointRecord) async throws -> Outcome {
        let deliveryID = try delivery.storedID
        let started = ContinuousClock.now
        func elapsed() -> Int {
            let d = ContinuousClock.now - started
            return Int(d.components.seconds) * 1000 + Int(d.components.attoseconds / 1_000_000_000_000_000)
        }
        guard let secret = codes.unsealSecret(endpoint.secretSealed, context: try endpoint.sealContext) else {
            return Outcome(error: "the endpoint's secret cannot be read", durationMillis: 0)
        }
        guard let url = URLComponents(string: endpoint.url), let host = url.host,
              WebhookPolicy.urlProblem(endpoint.url, allowInsecure: allowPrivate) == nil else {
            return Outcome(error: "the address is not an https URL", durationMillis: 0)
        }
        var configuration = HTTPClient.Configuration(redirectConfiguration: .disallow,
                                                     timeout: .init(connect: .seconds(Int64(timeoutSeconds)), read: .seconds(Int64(timeoutSeconds))))
        let roots = extraRoots.withLockedValue { $0 }
        if !roots.isEmpty {
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .certificates(roots)
            configuration.tlsConfiguration = tls
        }
        let client: HTTPClient
        if allowPrivate {
            client = HTTPClient(eventLoopGroup: group, configuration: configuration)
        } else {
            do {
                let check = PushAddressGuard(configuration: configuration)
                let address = try await check.checkedAddress(for: host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host)
                client = check.client(for: host, address: address, group: group)
            } catch PushAddressGuard.Refusal.notPublic(let address) {
                return Outcome(error: "refused: \(host) resolves to \(address), which is not a public address", durationMillis: elapsed())
            } catch {
                return Outcome(error: "\(host) could not be resolved", durationMillis: elapsed())
            }
        }
        let outcome = await post(delivery, id: deliveryID, secret: secret, url: endpoint.url, with: client, elapsed: elapsed)
        try? await client.shutdown()
        return outcome
    }

    private func post(_ delivery: WebhookDeliveryRecord, id deliveryID: WebhookDeliveryID, secret: String, url: String, with client: HTTPClient,
                      elapsed: () -> Int) async -> Outcome {
        let body = Array(delivery.payload.utf8)
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "User-Agent", value: "Waybill-Webhooks/1.0")
        request.headers.add(name: "Waybill-Event", value: delivery.eventType)
        request.headers.add(name: "Waybill-Event-Id", value: "evt_" + delivery.eventID.uuidString.lowercased().replacingOccurrences(of: "-", with: ""))
        request.headers.add(name: "Waybill-Delivery", value: deliveryID.uuidString.lowercased())
        request.headers.add(name: WebhookSignature.header,
                            value: WebhookSignature.headerValue(secrets: [secret], timestamp: UnixTime.nowSeconds, body: body))
        request.body = .bytes(ByteBuffer(bytes: body))
        do {
            let response = try await client.execute(request, timeout: .seconds(Int64(timeoutSeconds)))
            // The answer's body is not kept; at most 64 KiB of it is read.
            _ = try? await response.body.collect(upTo: 1 << 16)
            let code = Int(response.status.code)
            if (300..<400).contains(code) {
                return Outcome(statusCode: code, error: "redirects are not followed", durationMillis: elapsed())
            }
            return Outcome(statusCode: code, error: (200..<300).contains(code) ? nil : "answered \(code)", durationMillis: elapsed())
        } catch let error as HTTPClientError where error == .deadlineExceeded || error == .readTimeout || error == .connectTimeout {
            return Outcome(error: "no answer within \(timeoutSeconds) s", durationMillis: elapsed())
        } catch {
            return Outcome(error: "could not connect: \(String(String(describing: error).prefix(200)))", durationMillis: elapsed())
        }
    }

    /// Writes the attempt, the delivery's new state and the endpoint's health in one transaction.
    /// Returns whether it was delivered.
    private func record(_ outcome: Outcome, of delivery: WebhookDeliveryRecord, endpoint: WebhookEndpointRecord,
                        on db: any Database) async throws -> Bool {
        let now = UnixTime.nowMillis
        let deliveryID = try delivery.storedID, endpointID = try endpoint.storedID
        let attempt = WebhookAttemptRecord()
        attempt.deliveryID = deliveryID
        attempt.at = now
        attempt.statusCode = outcome.statusCode
        attempt.durationMillis = outcome.durationMillis
        attempt.error = outcome.error
        delivery.attempts += 1
        delivery.lastStatusCode = outcome.statusCode
        delivery.lastError = outcome.error
        var disabledNow = false
        let failingBefore = endpoint.failingSince
        if outcome.succeeded {
            delivery.status = .delivered
            delivery.deliveredAt = now
            endpoint.failingSince = nil
        } else {
            if let next = WebhookRetry.nextAttempt(createdAt: delivery.createdAt, attempts: delivery.attempts, now: now) {
                delivery.nextAttemptAt = next
            } else {
                delivery.status = .failed
            }
            endpoint.failingSince = endpoint.failingSince ?? now
            if WebhookRetry.shouldDisable(failingSince: endpoint.failingSince, now: now,
                                          gaveUpOn: delivery.status == .failed ? delivery.createdAt : nil) {
                endpoint.enabled = false
                endpoint.disabledReason = "failing"
                disabledNow = true
            }
            logger.info("Webhook delivery \(deliveryID) to endpoint \(endpointID) failed (attempt \(delivery.attempts)): \(outcome.error ?? "")")
        }
        guard let services = services() else { return false }
        let disable = disabledNow, healthChanged = endpoint.failingSince != failingBefore
        try await db.writeTransaction(services) { db in
            try await attempt.create(on: db)
            try await delivery.save(on: db)
            // Only the health columns: the owner may have changed the endpoint meanwhile.
            guard let sql = db.tracedSQL else { return }
            if disable {
                try await sql.update(WebhookEndpointRecord.schema)
                    .set("enabled", to: SQLBind(false)).set("disabled_reason", to: SQLBind("failing"))
                    .set("failing_since", to: SQLBind(endpoint.failingSince))
                    .where("id", .equal, SQLBind(endpointID)).run()
                try await sql.update(WebhookDeliveryRecord.schema)
                    .set("status", to: SQLBind(WebhookDeliveryRecord.Status.failed.rawValue))
                    .set("last_error", to: SQLBind("endpoint disabled"))
                    .where("endpoint_id", .equal, SQLBind(endpointID))
                    .where("status", .equal, SQLBind(WebhookDeliveryRecord.Status.pending.rawValue)).run()
                if let owner = try await User.find(endpoint.ownerID, on: db) {
                    try await Notifier.notify([owner], .webhookDisabled, order: nil, reference: URLComponents(string: endpoint.url)?.host ?? "",
                                              body: "Every delivery to \(endpoint.url) has failed for three days, so it was turned off. Fix it, turn it on again and redeliver what it missed.",
                                              on: db)
                }
            } else if healthChanged {  // only when it starts or stops failing: not a write per delivery
                try await sql.update(WebhookEndpointRecord.schema)
                    .set("failing_since", to: SQLBind(endpoint.failingSince))
                    .where("id", .equal, SQLBind(endpointID)).run()
            }
        }
        return outcome.succeeded
    }
}
