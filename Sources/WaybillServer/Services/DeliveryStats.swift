import Fluent
import NIOConcurrencyHelpers
import SQLKit
import Vapor
import WaybillCore

/// `delivery_samples`: one per delivered parcel of another carrier or Waybill shipment.
final class DeliverySampleRecord: Model, @unchecked Sendable {
    static let schema = "delivery_samples"

    @ID(custom: "subject_id", generatedBy: .user) var id: UUID?
    /// `parcel` or `shipment`.
    @Field(key: "kind") var kind: String
    /// Whose parcel (the owner) or shipment (the sender): for their own statistics.
    @Field(key: "owner_id") var ownerID: UserID
    @Field(key: "carrier") var carrier: String
    @OptionalField(key: "origin") var origin: String?
    @OptionalField(key: "destination") var destination: String?
    @Field(key: "first_scan_at") var firstScanAt: Int64
    @Field(key: "delivered_at") var deliveredAt: Int64
    @Field(key: "first_attempt") var firstAttempt: Bool

    var properties: [any AnyProperty] { [$id, $kind, $ownerID, $carrier, $origin, $destination, $firstScanAt, $deliveredAt, $firstAttempt] }

    init() {}

    var sample: DeliverySample {
        DeliverySample(carrier: carrier, origin: origin, destination: destination, firstScanAt: firstScanAt, deliveredAt: deliveredAt,
                       firstAttempt: firstAttempt)
    }

    /// Records it once (a parcel delivered twice at its carrier counts once).
    static func record(_ sample: DeliverySample, subject: UUID, kind: String, owner: UserID, on db: any Database) async throws {
        guard try await DeliverySampleRecord.find(subject, on: db) == nil else { return }
        let row = DeliverySampleRecord()
        row.id = subject
        row.kind = kind
        row.ownerID = owner
        row.carrier = sample.carrier
        row.origin = sample.origin
        row.destination = sample.destination
        row.firstScanAt = sample.firstScanAt
        row.deliveredAt = sample.deliveredAt
        row.firstAttempt = sample.firstAttempt
        try await row.create(on: db)
    }
}

/// Writes a sample when a parcel or a shipment is delivered (a subscriber of the domain events).
enum DeliveryStatsSubscriber {
    static func handle(_ event: DomainEvent, on db: any Database) async throws {
        switch event {
        case .parcelChanged(let parcel, let old, _) where parcel.status == .delivered && old != .delivered:
            let parcelID = try parcel.storedID
            let events = try await ParcelEventRecord.query(on: db).filter(\.$parcelID == parcelID).all().map(\.event)
            guard let sample = DeliverySample.from(carrier: parcel.carrier, events: events) else { return }
            try await DeliverySampleRecord.record(sample, subject: parcelID.rawValue, kind: "parcel", owner: parcel.ownerID, on: db)
        case .orderDelivered(let order, _):
            let orderID = try order.storedID
            let events = try await OrderEvent.query(on: db).filter(\.$orderID == orderID).sort(\.$at).all()
            let delivered = events.last { $0.status == .delivered }?.at ?? UnixTime.nowMillis
            // The first scan of Waybill's own fleet: the pickup.
            guard let pickedUp = events.first(where: { $0.status == .inTransit })?.at, pickedUp <= delivered else { return }
            let sample = DeliverySample(carrier: "waybill", origin: order.pickup.country, destination: order.dropoff.country,
                                        firstScanAt: pickedUp, deliveredAt: delivered, firstAttempt: !events.contains { $0.status == .failed })
            try await DeliverySampleRecord.record(sample, subject: orderID.rawValue, kind: "shipment", owner: order.customerID, on: db)
        default:
            break
        }
    }
}

/// The statistics per carrier: the public board (groups of at least five, the last 365 days) and
/// each person's own (their parcels and shipments).
struct DeliveryStats {
    let db: any Database

    typealias Board = (carriers: [DeliveryStatistics.Row], routes: [DeliveryStatistics.Row])

    /// Groups smaller than this are not on the public board (a group of one is one person's parcel).
    static let publicMinimum = 5

    /// The public board as everyone is shown it (`GET /statistics/carriers`, `/carrier-statistics`):
    /// worked out at most once per `PublicBoardCache.freshnessMillis` in this process, on the
    /// application's database, however many ask (second audit, finding 4).
    static func publicBoard(_ services: WaybillServices) async throws -> Board {
        try await services.statisticsBoard.board {
            try await DeliveryStats(db: services.appDatabase()).board()
        }
    }

    func board(for owner: UserID? = nil) async throws -> Board {
        var query = DeliverySampleRecord.query(on: db).filter(\.$deliveredAt >= UnixTime.nowMillis - 365 * 86_400_000)
        if let owner { query = query.filter(\.$ownerID == owner) }
        let samples = try await query.sort(\.$deliveredAt, .descending).limit(50_000).all().map(\.sample)
        let minimum = owner == nil ? Self.publicMinimum : 1
        return (DeliveryStatistics.rows(samples, by: .carrier, minimumCount: minimum),
                DeliveryStatistics.rows(samples, by: .route, minimumCount: minimum))
    }
}

/// The public board of delivery statistics, kept for five minutes per process: loading and grouping
/// up to 50,000 samples costs up to seconds, and the board is the same for everyone, so anonymous
/// requests share one computation instead of paying for one each (second audit, finding 4). Requests
/// that arrive while it is being worked out wait for that one computation; a failed one is not kept.
/// The age is read on the application's clock (`UnixTime`).
final class PublicBoardCache: Sendable {
    static let freshnessMillis: Int64 = 5 * 60_000

    private struct State {
        var kept: (board: DeliveryStats.Board, at: Int64)?
        var running: Task<DeliveryStats.Board, any Error>?
        var computations = 0
    }
    private let state = NIOLockedValueBox(State())

    /// How many times the board was worked out in this process (the tests count them).
    var computations: Int { state.withLockedValue { $0.computations } }

    func board(_ compute: @escaping @Sendable () async throws -> DeliveryStats.Board) async throws -> DeliveryStats.Board {
        let now = UnixTime.nowMillis
        enum Found { case kept(DeliveryStats.Board), running(Task<DeliveryStats.Board, any Error>) }
        let found: Found = state.withLockedValue { state in
            // A clock set back counts as stale, never as fresh for ever.
            if let kept = state.kept, now >= kept.at, now - kept.at < Self.freshnessMillis { return .kept(kept.board) }
            if let running = state.running { return .running(running) }
            let task = Task { try await compute() }
            state.running = task
            state.computations += 1
            return .running(task)
        }
        switch found {
        case .kept(let board):
            return board
        case .running(let task):
            do {
                let board = try await task.value
                state.withLockedValue { state in
                    if state.running == task {
                        state.kept = (board, now)
                        state.running = nil
                    }
                }
                return board
            } catch {
                state.withLockedValue { state in if state.running == task { state.running = nil } }
                throw error
            }
        }
    }
}
