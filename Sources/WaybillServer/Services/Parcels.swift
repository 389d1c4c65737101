import Fluent
import SQLKit
import Vapor
import WaybillCore

/// Parcels of other carriers a person follows: added by number with the carrier suggested
/// (`ParcelDraft`, `CarrierDetection`), named, corrected, removed. Only their owner sees them
/// (`ParcelPolicy`). Following them at the carriers comes with the carrier adapters.
struct Parcels {
    let services: WaybillServices
    let db: any Database
    let logger: Logger

    init(services: WaybillServices, db: any Database, logger: Logger) {
        self.services = services
        self.db = db
        self.logger = logger
    }

    init(request: Request) {
        self.init(services: request.application.waybill, db: request.db, logger: request.logger)
    }

    func add(_ draft: ParcelDraft, by me: Principal) async throws -> ParcelRecord {
        guard ParcelPolicy.mayChange(owner: me.userID, by: me.caller) else {
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

    func list(for me: Principal, status: ParcelStatus? = nil) async throws -> [ParcelRecord] {
        var query = ParcelRecord.query(on: db).filter(\.$ownerID == me.userID)
        if let status { query = query.filter(\.$status == status) }
        return try await query.sort(\.$createdAt, .descending).limit(ParcelPolicy.maxPerAccount).all()
    }

    /// The parcel if the caller may see it; 404 otherwise, as if it did not exist.
    func parcel(_ id: ParcelID, for me: Principal) async throws -> ParcelRecord {
        guard let record = try await ParcelRecord.find(id, on: db), ParcelPolicy.maySee(owner: record.ownerID, by: me.caller) else {
            throw WaybillError.notFound
        }
        return record
    }

    /// Renames, annotates, or corrects the carrier (then pinned). nil leaves a field as it is; an
    /// empty name or notes clears it.
    func update(_ id: ParcelID, name: String?, notes: String?, carrier: String?, by me: Principal) async throws -> ParcelRecord {
        let record = try await parcel(id, for: me)
        guard ParcelPolicy.mayChange(owner: record.ownerID, by: me.caller) else { throw WaybillError.forbidden }
        let draft = ParcelDraft(number: record.number, carrier: carrier ?? record.carrier, name: name ?? record.name, notes: notes ?? record.notes)
        let accepted = try draft.validated(detection: CarrierDetection.standard).orValidationError()
        if carrier != nil {
            record.carrier = accepted.carrier
            record.format = accepted.format
            record.pinned = true
        }
        // The draft's validation trims, and turns an empty name or notes into none.
        record.name = accepted.name
        record.notes = accepted.notes
        record.updatedAt = UnixTime.nowMillis
        try await db.writeTransaction(services) { db in try await record.save(on: db) }
        return record
    }

    /// The parcel's events at its carrier, newest first.
    func events(of id: ParcelID) async throws -> [ParcelEvent] {
        try await ParcelEventRecord.query(on: db).filter(\.$parcelID == id).sort(\.$at, .descending).limit(500).all().map(\.event)
    }

    /// Asks the carrier now (once every five minutes per parcel): 409 if no adapter follows this carrier.
    func refresh(_ id: ParcelID, by me: Principal) async throws -> ParcelRecord {
        let record = try await parcel(id, for: me)
        guard let tracker = services.carrierTrackers.first(where: { $0.carriers.contains(record.carrier) }) else {
            throw WaybillError(.conflict, .conflict, "Waybill does not ask \(record.carrier) about parcels on this server yet; open the carrier's own page.")
        }
        if let wait = services.parcelRefreshLimiter.take(id.uuidString) {
            throw WaybillError.tooManyRequests(retryAfter: wait, "This parcel was asked about moments ago; try again in a few minutes.")
        }
        try await db.writeTransaction(services) { db in
            guard let sql = db as? any SQLDatabase else { return }
            try await sql.update("parcels").set("next_check_at", to: SQLBind(UnixTime.nowMillis)).where("id", .equal, SQLBind(id)).run()
        }
        let poller = ParcelPoller(services: services, db: db, logger: logger)
        if let fresh = try await ParcelRecord.find(id, on: db) {
            _ = try await poller.pollOne(fresh, with: tracker)
        }
        return try await parcel(id, for: me)
    }

    func remove(_ id: ParcelID, by me: Principal) async throws {
        // Removing one's own parcel is always allowed (a suspended account too): it only reduces what is kept.
        let record = try await parcel(id, for: me)
        try await db.writeTransaction(services) { db in try await record.delete(on: db) }
    }
}
