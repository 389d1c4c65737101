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
    static func record(_ sample: DeliverySample, subject: DeliverySubject, owner: UserID, on db: any Database) async throws {
        guard try await DeliverySampleRecord.find(subject.uuid, on: db) == nil else { return }
        let row = DeliverySampleRecord()
        row.id = subject.uuid
        row.kind = subject.kind
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
            let parcelID = parcel.id
            let events = try await ParcelEventRecord.query(on: db).filter(\.$parcelID == parcelID).all().map(\.event)
            guard let sample = DeliverySample.from(carrier: parcel.carrier, events: events) else { return }
            try await DeliverySampleRecord.record(sample, subject: .parcel(parcelID), owner: parcel.ownerID, on: db)
        case .shipment(let order, .delivered):
            let orderID = order.id
            let events = try await OrderEvent.query(on: db).filter(\.$orderID == orderID).sort(\.$at).all()
            let delivered = events.last { $0.status == .delivered }?.at ?? UnixTime.nowMillis
            // The first scan of Waybill's own fleet: the pickup.
            guard let pickedUp = events.first(where: { $0.status == .inTransit })?.at, pickedUp <= delivered else { return }
            let sample = DeliverySample(carrier: "waybill", origin: order.pickup.country, destination: order.dropoff.country,
                                        firstScanAt: pickedUp, deliveredAt: delivered, firstAttempt: !events.contains { $0.status == .failed })
            try await DeliverySampleRecord.record(sample, subject: .shipment(orderID), owner: order.customerID, on: db)
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
        try await services.statisticsBoard.board(for: nil) {
            try await DeliveryStats(db: services.appDatabase()).board()
        }
    }

    /// A person's own board (`GET /me/statistics/carriers`, the page signed in): worked out at most
    /// once a minute per person (`BoardCache.ownFreshnessMillis`), so asking again costs nothing.
    static func ownBoard(_ owner: UserID, _ services: WaybillServices) async throws -> Board {
        try await services.statisticsBoard.board(for: owner) {
            try await DeliveryStats(db: services.appDatabase()).board(for: owner)
        }
    }

    /// The samples of the last 365 days (the newest 50,000), everyone's or one owner's, grouped.
    /// Read as plain rows: filling a Fluent model per sample was most of the cost.
    func board(for owner: UserID? = nil) async throws -> Board {
        guard let sql = db as? any SQLDatabase else { throw WaybillError.inconsistent("the database does not speak SQL") }
        var select = sql.select()
            .columns(SQLColumn("carrier"), SQLColumn("origin"), SQLColumn("destination"), SQLColumn("first_scan_at"),
                     SQLColumn("delivered_at"), SQLColumn("first_attempt"))
            .from(DeliverySampleRecord.schema)
            .where("delivered_at", .greaterThanOrEqual, SQLBind(UnixTime.nowMillis - 365 * 86_400_000))
        if let owner { select = select.where("owner_id", .equal, SQLBind(owner.rawValue)) }
        select = select.orderBy("delivered_at", .descending).limit(50_000)
        var rows = try await PlainRows.read(select, sql: sql)
        var samples: [DeliverySample] = []
        samples.reserveCapacity(rows.count)
        for index in rows.indices {
            samples.append(DeliverySample(carrier: try rows[index].string(), origin: try rows[index].optional { try $0.string() },
                                          destination: try rows[index].optional { try $0.string() }, firstScanAt: try rows[index].int64(),
                                          deliveredAt: try rows[index].int64(), firstAttempt: try rows[index].bool()))
        }
        let minimum = owner == nil ? Self.publicMinimum : 1
        return (DeliveryStatistics.rows(samples, by: .carrier, minimumCount: minimum),
                DeliveryStatistics.rows(samples, by: .route, minimumCount: minimum))
    }
}

/// Boards of delivery statistics, kept per process: the public one for five minutes, each person's
/// own for one. Loading and grouping up to 50,000 samples costs up to a quarter of a second, and the
/// public board is the same for everyone, so anonymous requests share one computation instead of
/// paying for one each (second audit, finding 4), and a person asking again within the minute gets
/// the board worked out for them. Requests that arrive while one is being worked out wait for that
/// one computation; a failed one is not kept. At most `maxKept` people's boards are kept (the oldest
/// go first). The age is read on the application's clock (`UnixTime`).
final class BoardCache: Sendable {
    static let freshnessMillis: Int64 = 5 * 60_000
    static let ownFreshnessMillis: Int64 = 60_000
    static let maxKept = 10_000

    private struct State {
        var kept: [UserID?: (board: DeliveryStats.Board, at: Int64)] = [:]
        var running: [UserID?: Task<DeliveryStats.Board, any Error>] = [:]
        var computations = 0
    }
    private let state = NIOLockedValueBox(State())

    /// How many times a board was worked out in this process (the tests count them).
    var computations: Int { state.withLockedValue { $0.computations } }

    /// The board of `owner` (nil: the public board), worked out by `compute` unless one fresh enough is kept.
    func board(for owner: UserID?, _ compute: @escaping @Sendable () async throws -> DeliveryStats.Board) async throws -> DeliveryStats.Board {
        let now = UnixTime.nowMillis
        let freshness = owner == nil ? Self.freshnessMillis : Self.ownFreshnessMillis
        enum Found { case kept(DeliveryStats.Board), running(Task<DeliveryStats.Board, any Error>) }
        let found: Found = state.withLockedValue { state in
            // A clock set back counts as stale, never as fresh for ever.
            if let kept = state.kept[owner], now >= kept.at, now - kept.at < freshness { return .kept(kept.board) }
            if let running = state.running[owner] { return .running(running) }
            let task = Task { try await compute() }
            state.running[owner] = task
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
                    if state.running[owner] == task {
                        state.running[owner] = nil
                        if state.kept.count >= Self.maxKept, state.kept[owner] == nil {
                            // Full: the stale ones go, or else the oldest.
                            state.kept = state.kept.filter { key, value in now >= value.at && now - value.at < (key == nil ? Self.freshnessMillis : Self.ownFreshnessMillis) }
                            if state.kept.count >= Self.maxKept, let oldest = state.kept.min(by: { $0.value.at < $1.value.at })?.key {
                                state.kept[oldest] = nil
                            }
                        }
                        state.kept[owner] = (board, now)
                    }
                }
                return board
            } catch {
                state.withLockedValue { state in if state.running[owner] == task { state.running[owner] = nil } }
                throw error
            }
        }
    }
}
