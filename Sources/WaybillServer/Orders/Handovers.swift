import Crypto
import Fluent
import Foundation
import SQLKit
import Vapor
import WaybillCore

/// Scans of parcels' labels (issue "Counters, timeslots and QR hand-overs", item 3): looking a
/// scanned label up, and checking the code a driver or receiver scanned as the proof of a
/// hand-over. Every scan is kept with its outcome; a wrong or replayed code is refused and logged
/// (without the code). The rules are `HandOverPolicy` in WaybillCore.
struct Handovers: WaybillService {
    let services: WaybillServices
    let db: any Database
    let logger: Logger

    /// The shipment a scanned label belongs to, for someone who handles or receives it (or
    /// dispatch), and the hand-over the scan would prove for them now. Anyone else, and a code
    /// that is no parcel's, get 404 (logged).
    func lookup(_ scanned: String, by me: Principal) async throws -> (order: Order, step: HandOverKind?) {
        if let wait = services.scanLimiter.take(me.userID.uuidString) { throw WaybillError.tooManyRequests(retryAfter: wait) }
        guard let token = HandOverPolicy.token(fromScan: scanned),
              let order = try await Order.query(on: db).filter(\.$handoverToken == token).first() else {
            try await record(nil, step: "lookup", .wrongToken, by: me)
            throw WaybillError.notFound
        }
        let capacities = Orders(services: services, db: db, logger: logger).capacities(of: me, for: order)
        guard HandOverPolicy.mayLookUp(as: capacities), OrderPolicy.allows(.see, status: order.status, as: capacities) else {
            try await record(order.id, step: "lookup", .notAllowed, by: me)
            throw WaybillError.notFound
        }
        let step = HandOverPolicy.scanStep(as: capacities, status: order.status)
        try await record(order.id, step: "lookup", .accepted, by: me)
        return (order, step)
    }

    /// The proof for a hand-over of `order`: nil when nothing was scanned, the code when it is this
    /// parcel's; a wrong code is 422 (`scannedCode`: `wrong`), kept and logged.
    func proof(_ scanned: String?, for order: Order, step: HandOverKind, by me: Principal) async throws -> String? {
        guard let scanned else { return nil }
        guard let token = HandOverPolicy.token(fromScan: scanned), let expected = order.handoverToken,
              Self.same(token, expected) else {
            try await record(order.id, step: step.rawValue, .wrongToken, by: me)
            throw WaybillError.validation("scannedCode", "wrong")
        }
        return token
    }

    /// Runs a hand-over with a scanned proof: records it as accepted, or (refused as already done)
    /// as replayed.
    func scanned<T: Sendable>(_ code: String?, order id: OrderID, step: HandOverKind, by me: Principal, _ body: () async throws -> T) async throws -> T {
        do {
            let result = try await body()
            if code != nil { try await record(id, step: step.rawValue, .accepted, by: me) }
            return result
        } catch let error as WaybillError where code != nil && error.status == .conflict {
            try await record(id, step: step.rawValue, .replayed, by: me)
            throw error
        }
    }

    /// Keeps the scan (its own small transaction: a refusal is kept although the change was not made).
    func record(_ order: OrderID?, step: String, _ outcome: ScanOutcome, by me: Principal) async throws {
        if outcome != .accepted {
            logger.warning("label scan refused", metadata: ["outcome": .string(outcome.rawValue), "step": .string(step),
                                                           "user": .string(me.userID.uuidString), "order": .string(order?.uuidString ?? "-")])
        }
        try await db.writeTransaction(services) { db in
            guard let sql = db.tracedSQL else { return }
            try await sql.insert(into: "handover_scans").columns("id", "order_id", "scanned_by", "step", "outcome", "created_at")
                .values(SQLBind(Randomness.uuid()), SQLBind(order), SQLBind(me.userID), SQLBind(step), SQLBind(outcome.rawValue), SQLBind(UnixTime.nowMillis))
                .run()
        }
    }

    /// Compares two codes in time independent of where they differ.
    static func same(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        guard x.count == y.count else { return false }
        return zip(x, y).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }
}
