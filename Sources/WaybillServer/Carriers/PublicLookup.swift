import Fluent
import Foundation
import NIOConcurrencyHelpers
import Vapor
import WaybillCore

/// What the carrier said about a number lately, kept in memory for a few minutes so the public
/// lookup page (reloaded, shared, asked by many) does not spend the carrier's budget twice. Nothing
/// is written to the database.
final class CarrierAnswerCache: Sendable {
    let seconds: Double
    let capacity: Int
    private let entries = NIOLockedValueBox<[String: (at: Double, answer: CarrierAnswer)]>([:])

    init(seconds: Double = 600, capacity: Int = 5_000) {
        self.seconds = seconds
        self.capacity = capacity
    }

    func get(_ key: String, now: Double = Double(UnixTime.nowMillis) / 1000) -> CarrierAnswer? {
        entries.withLockedValue { entries in
            guard let entry = entries[key], now - entry.at < seconds else { return nil }
            return entry.answer
        }
    }

    func put(_ key: String, _ answer: CarrierAnswer, now: Double = Double(UnixTime.nowMillis) / 1000) {
        entries.withLockedValue { entries in
            if entries.count >= capacity { entries = entries.filter { now - $0.value.at < seconds } }
            if entries.count >= capacity, let oldest = entries.min(by: { $0.value.at < $1.value.at })?.key { entries[oldest] = nil }
            entries[key] = (now, answer)
        }
    }
}

/// Looking a number up without an account (issue "Parcels of every carrier", item 5): the carriers
/// it may belong to, and — when this server has the likeliest carrier's adapter — what that
/// carrier says now, from a ten-minute cache or one request within the carrier's daily budget.
/// Limited per client address (the lookups' sixty a minute, and ten carrier requests a minute and
/// thirty a day), and out of its own share of the carrier's budget (a tenth: `ParcelPoller.publicShare`).
struct PublicLookup {
    let services: WaybillServices
    let db: any Database
    let logger: Logger

    struct Result: Sendable {
        var number: String
        var candidates: [CarrierCandidate]
        /// The carrier asked (the person's choice, or the likeliest candidate with an adapter).
        var carrier: String?
        var report: CarrierReport?
        /// The carrier was asked and does not know the number (yet).
        var unknownAtCarrier = false
        /// Why the carrier was not asked: `no_adapter`, `busy` (the carrier's budget or our limit).
        var notAsked: String?
    }

    func lookUp(_ raw: String, carrier chosen: String?, clientAddress: String) async throws -> Result {
        let number = CarrierDetection.normalized(raw)
        guard !number.isEmpty, number.count <= 60 else { throw WaybillError.invalidParameter("number") }
        let candidates = CarrierDetection.standard.candidates(for: number)
        let known = CarrierDetection.standard.carrierNames
        if let chosen, known[chosen] == nil { throw WaybillError.invalidParameter("carrier") }
        var result = Result(number: number, candidates: candidates)
        // The person's choice, else the likeliest candidate this server can ask.
        let order = chosen.map { [$0] } ?? candidates.map(\.carrier)
        guard let (carrier, tracker) = order.lazy.compactMap({ code in
            services.carrierTrackers.first { $0.carriers.contains(code) }.map { (code, $0) }
        }).first else {
            result.carrier = chosen ?? candidates.first?.carrier
            result.notAsked = "no_adapter"
            return result
        }
        result.carrier = carrier
        let key = "\(carrier)|\(number)"
        let answer: CarrierAnswer
        if let cached = services.carrierAnswerCache.get(key) {
            answer = cached
        } else {
            let poller = ParcelPoller(services: services, db: db, logger: logger)
            // Per address, on the application's clock: ten a minute, and thirty a day.
            let now = Double(UnixTime.nowMillis) / 1000
            guard services.carrierLiveLimiter.take(clientAddress, now: now) == nil else {
                result.notAsked = "busy"
                return result
            }
            guard services.carrierLiveDailyLimiter.take(clientAddress, now: now) == nil else {
                result.notAsked = "busy"
                return result
            }
            // Out of the anonymous share of the carrier's budget, never the poller's.
            guard try await poller.takeBudget(carrier, anonymous: true) else {
                result.notAsked = "busy"
                return result
            }
            do {
                answer = try await tracker.track([number])[number] ?? .notFound
                services.carrierAnswerCache.put(key, answer)
            } catch let error as CarrierTrackingError {
                if case .rateLimited(let retryAfter) = error { try await poller.block(carrier, seconds: retryAfter ?? 900) }
                logger.notice("Public lookup at \(carrier) failed: \(String(describing: error))")
                result.notAsked = "busy"
                return result
            }
        }
        switch answer {
        case .found(let report): result.report = report
        case .notFound: result.unknownAtCarrier = true
        }
        return result
    }
}
