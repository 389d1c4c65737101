import Fluent
import SQLKit
import Vapor
import WaybillCore

/// A followed parcel as one person sees it: theirs or shared with them.
struct ParcelView: Sendable {
    var record: ParcelRecord
    var relation: ParcelRelation
    /// The owner's first name, on a parcel shared with the caller.
    var sharedBy: String?
    /// The caller's own setting for this parcel (nil: their account's).
    var alerts: ParcelAlerts?
    /// For its owner: the people it is shared with (id, name), and its public link.
    var sharedWith: [(id: UserID, name: String)] = []
    var shareURL: String?
}

/// Parcels of other carriers a person follows: added by number with the carrier suggested
/// (`ParcelDraft`, `CarrierDetection`), named, corrected, shared, removed. Who may do what is
/// `ParcelPolicy`: the owner, and less for the people it is shared with.
struct Parcels: WaybillService {
    let services: WaybillServices
    let db: any Database
    let logger: Logger

    init(services: WaybillServices, db: any Database, logger: Logger) {
        self.services = services
        self.db = db
        self.logger = logger
    }

    func add(_ draft: ParcelDraft, by me: Principal) async throws -> ParcelRecord {
        guard ParcelPolicy.allows(.change, as: .owner, by: me.caller) else {
            throw me.user.restriction != nil ? WaybillError.accountSuspended : WaybillError.forbidden
        }
        let accepted = try draft.validated(detection: CarrierDetection.standard).orValidationError()
        let now = UnixTime.nowMillis
        let record = ParcelRecord()
        record.id = .random()
        record.ownerID = me.userID
        record.number = accepted.number
        record.carrier = accepted.carrier
        record.format = accepted.format
        record.pinned = accepted.pinned
        record.name = accepted.name
        record.notes = accepted.notes
        record.status = .pending
        record.createdAt = now
        record.updatedAt = now
        record.checkFailures = 0
        // Asked at once by the poller (when the carrier's adapter is configured).
        record.nextCheckAt = now
        do {
            try await db.writeTransaction(services) { db in
                let count = try await ParcelRecord.query(on: db).filter(\.$ownerID == me.userID).count()
                guard count < ParcelPolicy.maxPerAccount else {
                    throw WaybillError(.conflict, .conflict, "You follow \(ParcelPolicy.maxPerAccount) parcels already; remove delivered ones first.")
                }
                try await record.create(on: db)
            }
        } catch let error as any DatabaseError where error.isConstraintFailure {
            throw WaybillError(.conflict, .conflict, "You already follow \(accepted.number).", fields: ["number": "duplicate"])
        }
        return record
    }

    /// The caller's parcels and those shared with them, newest first.
    func list(for me: Principal, status: ParcelStatus? = nil) async throws -> [ParcelView] {
        var owned = ParcelRecord.query(on: db).filter(\.$ownerID == me.userID)
        if let status { owned = owned.filter(\.$status == status) }
        var views = try await owned.sort(\.$createdAt, .descending).limit(ParcelPolicy.maxPerAccount).all()
            .map { ParcelView(record: $0, relation: .owner, alerts: $0.alerts) }
        let shares = try await ParcelShares(db: db).of(user: me.userID)
        if !shares.isEmpty {
            var shared = ParcelRecord.query(on: db).filter(\.$id ~~ shares.map(\.parcel))
            if let status { shared = shared.filter(\.$status == status) }
            let records = try await shared.limit(ParcelPolicy.maxPerAccount).all()
            let owners = try await ownerNames(Set(records.map(\.ownerID)))
            let alerts = Dictionary(shares.map { ($0.parcel, $0.alerts) }, uniquingKeysWith: { a, _ in a })
            views += try records.map { record in
                let id = try record.storedID
                return ParcelView(record: record, relation: .shared, sharedBy: owners[record.ownerID], alerts: alerts[id] ?? nil)
            }
            views.sort { $0.record.createdAt > $1.record.createdAt }
        }
        return views
    }

    private func ownerNames(_ ids: Set<UserID>) async throws -> [UserID: String] {
        guard !ids.isEmpty else { return [:] }
        return Dictionary(try await User.query(on: db).filter(\.$id ~~ Array(ids)).all().map { (try $0.storedID, $0.firstName) }, uniquingKeysWith: { a, _ in a })
    }

    /// The parcel and how the caller stands to it; 404 for anyone else, as if it did not exist.
    func access(_ id: ParcelID, for me: Principal, to action: ParcelAction = .see) async throws -> (record: ParcelRecord, relation: ParcelRelation, share: ParcelShares.Row?) {
        guard let record = try await ParcelRecord.find(id, on: db) else { throw WaybillError.notFound }
        let share = record.ownerID == me.userID ? nil : try await ParcelShares(db: db).row(parcel: id, user: me.userID)
        guard let relation = ParcelPolicy.relation(owner: record.ownerID, sharedWith: share.map { [$0.user] } ?? [], caller: me.caller),
              ParcelPolicy.allows(.see, as: relation, by: me.caller) else { throw WaybillError.notFound }
        guard ParcelPolicy.allows(action, as: relation, by: me.caller) else {
            throw me.user.restriction != nil && relation == .owner ? WaybillError.accountSuspended : WaybillError.forbidden
        }
        return (record, relation, share)
    }

    func parcel(_ id: ParcelID, for me: Principal) async throws -> ParcelRecord {
        try await access(id, for: me).record
    }

    /// The parcel as the caller sees it: for its owner, with whom it is shared and its link.
    func view(_ id: ParcelID, for me: Principal) async throws -> ParcelView {
        let (record, relation, share) = try await access(id, for: me)
        guard relation == .owner else {
            return ParcelView(record: record, relation: .shared, sharedBy: try await ownerNames([record.ownerID])[record.ownerID], alerts: share?.alerts)
        }
        let rows = try await ParcelShares(db: db).of(parcel: id)
        let names = try await User.query(on: db).filter(\.$id ~~ rows.map(\.user)).all()
        return ParcelView(record: record, relation: .owner, alerts: record.alerts,
                          sharedWith: try names.map { (try $0.storedID, $0.displayName) }.sorted { $0.1 < $1.1 },
                          shareURL: record.shareToken.map { services.config.publicURL + WebRoutes.sharedParcel($0) })
    }

    /// Renames, annotates, corrects the carrier (then pinned) or the tracking number. nil leaves a
    /// field as it is; an empty name or notes clears it. A corrected number is another parcel at
    /// the carrier: its carrier is suggested again (unless one is given with it), the old number's
    /// events and status go, and the carrier is asked at once; a number the owner already follows
    /// is 409. `alerts` (".some(nil)": back to the account's setting) is the caller's own: the
    /// owner's on the parcel, a person it is shared with on their share.
    func update(_ id: ParcelID, number: String? = nil, name: String?, notes: String?, carrier: String?, alerts: ParcelAlerts?? = nil,
                by me: Principal) async throws -> ParcelRecord {
        let onlyAlerts = number == nil && name == nil && notes == nil && carrier == nil
        let (record, relation, _) = try await access(id, for: me, to: onlyAlerts ? .setAlerts : .change)
        if relation == .shared {
            if let alerts { try await db.writeTransaction(services) { db in try await ParcelShares(db: db).setAlerts(alerts, parcel: id, user: me.userID) } }
            return record
        }
        if let alerts { record.alerts = alerts }
        // A new number (as carriers read it) has its carrier suggested again, unless one comes with it.
        let corrected = number.map { CarrierDetection.normalized($0) != record.number } ?? false
        let draft = ParcelDraft(number: number ?? record.number, carrier: carrier ?? (corrected ? nil : record.carrier),
                                name: name ?? record.name, notes: notes ?? record.notes)
        let accepted = try draft.validated(detection: CarrierDetection.standard).orValidationError()
        let now = UnixTime.nowMillis
        if carrier != nil || corrected {
            record.carrier = accepted.carrier
            record.format = accepted.format
            record.pinned = accepted.pinned
        }
        if corrected {
            // Another parcel at the carrier: nothing of the old number's history is its.
            record.number = accepted.number
            record.status = .pending
            record.estimatedDelivery = nil
            record.checkFailures = 0
            record.lastCheckedAt = nil
            record.nextCheckAt = now
        }
        // The draft's validation trims, and turns an empty name or notes into none.
        record.name = accepted.name
        record.notes = accepted.notes
        record.updatedAt = now
        do {
            try await db.writeTransaction(services) { db in
                if corrected { try await ParcelEventRecord.query(on: db).filter(\.$parcelID == id).delete() }
                try await record.save(on: db)
            }
        } catch let error as any DatabaseError where error.isConstraintFailure {
            throw WaybillError(.conflict, .conflict, "You already follow \(accepted.number).", fields: ["number": "duplicate"])
        }
        return record
    }

    /// The parcel's events at its carrier, newest first.
    func events(of id: ParcelID) async throws -> [ParcelEvent] {
        try await ParcelEventRecord.query(on: db).filter(\.$parcelID == id).sort(\.$at, .descending).limit(500).all().map(\.event)
    }

    /// Asks the carrier now (once every five minutes per parcel): 409 if no adapter follows this carrier.
    func refresh(_ id: ParcelID, by me: Principal) async throws -> ParcelRecord {
        let record = try await access(id, for: me, to: .refresh).record
        guard let tracker = services.carrierTrackers.first(where: { $0.carriers.contains(record.carrier) }) else {
            throw WaybillError(.conflict, .conflict, "Waybill does not ask \(record.carrier) about parcels on this server yet; open the carrier's own page.")
        }
        if let wait = services.parcelRefreshLimiter.take(id.uuidString) {
            throw WaybillError.tooManyRequests(retryAfter: wait, "This parcel was asked about moments ago; try again in a few minutes.")
        }
        try await db.writeTransaction(services) { db in
            guard let sql = db.tracedSQL else { return }
            try await sql.update("parcels").set("next_check_at", to: SQLBind(UnixTime.nowMillis)).where("id", .equal, SQLBind(id)).run()
        }
        let poller = ParcelPoller(services: services, db: db, logger: logger)
        if let fresh = try await ParcelRecord.find(id, on: db) {
            _ = try await poller.pollOne(fresh, with: tracker)
        }
        return try await parcel(id, for: me)
    }

    /// Its owner stops following it (for everyone it was shared with too); someone it was shared
    /// with leaves it instead.
    func remove(_ id: ParcelID, by me: Principal) async throws {
        let (record, relation, _) = try await access(id, for: me)
        if relation == .shared { return try await unshare(id, user: me.userID, by: me) }
        guard ParcelPolicy.allows(.remove, as: relation, by: me.caller) else { throw WaybillError.forbidden }
        try await db.writeTransaction(services) { db in try await record.delete(on: db) }
    }
}
