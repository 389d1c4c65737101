import Fluent
import NIOConcurrencyHelpers
import SQLKit
import Vapor
import WaybillCore

/// Each process's copy of the area hierarchy as a search index, rebuilt when the stored revision
/// moves (another process, or this one, changed the areas). A search costs one read of one row.
final class AreaCatalog: Sendable {
    private let state = NIOLockedValueBox<(revision: Int64, index: AreaIndex)?>(nil)

    func index(on db: any Database) async throws -> AreaIndex {
        guard let sql = db.tracedSQL else { throw MigrationNeedsSQL() }
        let revision = try await sql.raw("SELECT revision FROM area_revision WHERE id = 1").first()?
            .decode(column: "revision", as: Int64.self) ?? 0
        if let cached = state.withLockedValue({ $0 }), cached.revision == revision { return cached.index }
        // Read after the revision: the areas are at least as new as it says.
        let index = AreaIndex(try await AreaRecord.query(on: db).all().map(\.area))
        state.withLockedValue { current in
            if (current?.revision ?? -1) < revision { current = (revision, index) }
        }
        return index
    }

    /// Bumps the revision, in the transaction that changed the areas.
    static func bump(on db: any Database) async throws {
        guard let sql = db.tracedSQL else { throw MigrationNeedsSQL() }
        try await sql.raw("UPDATE area_revision SET revision = revision + 1 WHERE id = 1").run()
    }
}

/// Travellers: areas, the travel price table, traveller profiles and trips. The API, the web app
/// and the command line call this; the rules are WaybillCore's (`AreaRules`, `TripDraft`,
/// `TripPolicy`, `TripMatching`).
struct Travel: WaybillService {
    let services: WaybillServices
    let db: any Database
    let logger: Logger

    init(services: WaybillServices, db: any Database, logger: Logger) {
        self.services = services
        self.db = db
        self.logger = logger
    }

    func transaction<T: Sendable>(_ body: @escaping @Sendable (any Database) async throws -> T) async throws -> T {
        let result = try await db.writeTransaction(services, body)
        services.outbox.poke()
        return result
    }

    // MARK: areas

    func areas() async throws -> AreaIndex { try await services.areas.index(on: db) }

    /// Up to `limit` areas whose name, in any language, or a word of it starts with `query`.
    func searchAreas(_ query: String, limit: Int, within: AreaID?) async throws -> (AreaIndex, [AreaMatch]) {
        let text = query.trimmingCharacters(in: .whitespaces)
        guard !text.isEmpty, text.count <= 100 else { throw WaybillError.invalidParameter("q", text.isEmpty ? "required" : "too_long") }
        guard (1...50).contains(limit) else { throw WaybillError.invalidParameter("limit", "out_of_range") }
        let index = try await areas()
        if let within, index[within] == nil { throw WaybillError.invalidParameter("within", "unknown_area") }
        return (index, index.search(text, limit: limit, within: within))
    }

    func area(_ id: AreaID) async throws -> (AreaIndex, Area) {
        let index = try await areas()
        guard let area = index[id] else { throw WaybillError.notFound }
        return (index, area)
    }

    /// Creates or replaces one area (admins). The hierarchy is checked with the change applied.
    @discardableResult
    func saveArea(_ area: Area, creating: Bool, by me: Principal) async throws -> Area {
        try me.require(.manageTravel)
        let clean: Area
        switch AreaRules.validated(area) {
        case .success(let a): clean = a
        case .failure(let e): throw WaybillError.validation(e.errors)
        }
        try await transaction { db in
            let existing = try await AreaRecord.find(clean.id.rawValue, on: db)
            if creating, existing != nil { throw WaybillError(.conflict, .conflict, "An area already has this id.", fields: ["id": "in_use"]) }
            if !creating, existing == nil { throw WaybillError.notFound }
            let all = try await AreaRecord.query(on: db).all().map(\.area)
            let problems = AreaCSV.checkHierarchy([clean], existing: all)
            if !problems.isEmpty { throw WaybillError(.unprocessableEntity, .validationFailed, problems[0], fields: ["parentId": "invalid"]) }
            let before = existing.map { ["name": $0.name, "parent": $0.parentID, "level": $0.level] }
            if let existing { existing.set(clean); existing.updatedAt = UnixTime.nowMillis; try await existing.save(on: db) }
            else { try await AreaRecord(clean, at: UnixTime.nowMillis).create(on: db) }
            try await AreaCatalog.bump(on: db)
            try await AuditLog.record(.areaChanged, by: me.userID, target: .area, clean.id.rawValue, before: before,
                                      after: ["name": clean.name, "parent": clean.parent?.rawValue, "level": clean.level], on: db)
        }
        return clean
    }

    /// Removes an area nobody uses: no area inside it, no trip to or from it (409 otherwise).
    func deleteArea(_ id: AreaID, by me: Principal) async throws {
        try me.require(.manageTravel)
        try await transaction { db in
            guard let record = try await AreaRecord.find(id.rawValue, on: db) else { throw WaybillError.notFound }
            if try await AreaRecord.query(on: db).filter(\.$parentID == id.rawValue).count() > 0 {
                throw WaybillError(.conflict, .conflict, "Areas lie inside this one; remove or move them first.")
            }
            let trips = try await TripRecord.query(on: db).group(.or) { $0.filter(\.$fromAreaID == id.rawValue).filter(\.$toAreaID == id.rawValue) }.count()
            if trips > 0 { throw WaybillError(.conflict, .conflict, "Trips go to or from this area.") }
            try await record.delete(on: db)
            try await AreaCatalog.bump(on: db)
            try await AuditLog.record(.areaDeleted, by: me.userID, target: .area, id.rawValue, before: ["name": record.name], on: db)
        }
    }

    /// Adds or replaces every area of a file in one transaction (`waybill areas import`): all of
    /// it or nothing. Returns how many were new and how many replaced.
    static func importAreas(_ areas: [Area], services: WaybillServices, on db: any Database) async throws -> (created: Int, updated: Int) {
        try await db.writeTransaction(services) { db in
            guard let sql = db.tracedSQL else { throw MigrationNeedsSQL() }
            let existing = try await AreaRecord.query(on: db).all().map(\.area)
            let problems = AreaCSV.checkHierarchy(areas, existing: existing)
            guard problems.isEmpty else { throw AreaImportError(problems: problems) }
            let known = Set(existing.map(\.id))
            let now = UnixTime.nowMillis
            let columns = ["id", "parent_id", "level", "name", "names", "latitude", "longitude", "keywords", "updated_at"]
            for batch in stride(from: 0, to: areas.count, by: 200).map({ areas[$0..<min($0 + 200, areas.count)] }) {
                var insert = sql.insert(into: AreaRecord.schema).columns(columns)
                for area in batch {
                    let r = AreaRecord(area, at: now)
                    insert = insert.values([SQLBind(area.id.rawValue), SQLBind(r.parentID), SQLBind(r.level), SQLBind(r.name), SQLBind(r.names),
                                            SQLBind(r.latitude), SQLBind(r.longitude), SQLBind(r.keywords), SQLBind(now)])
                }
                try await insert.onConflict(with: ["id"]) { conflict in
                    var c = conflict
                    for column in columns.dropFirst() { c = c.set(excludedValueOf: column) }
                    return c
                }.run()
            }
            try await AreaCatalog.bump(on: db)
            let created = areas.filter { !known.contains($0.id) }.count
            return (created, areas.count - created)
        }
    }

    // MARK: the travel price table

    func tariff() async throws -> TravelTariff { try await Self.tariff(on: db) }

    static func tariff(on db: any Database) async throws -> TravelTariff {
        guard let record = try await TravelTariffRecord.current(on: db) else { return .standard }
        return (try? record.content) ?? .standard
    }

    func setTariff(_ tariff: TravelTariff, by me: Principal) async throws -> TravelTariff {
        try me.require(.manageTravel)
        let clean: TravelTariff
        switch tariff.validated() {
        case .success(let t): clean = t
        case .failure(let e): throw WaybillError.validation(e.errors)
        }
        do {
            try await transaction { db in
                let (record, current) = try await TravelTariffRecord.replace(with: clean, by: me.userID, on: db)
                try await AuditLog.record(.travelTariffChanged, by: me.userID, target: .tariff, "travel",
                                          before: ["version": current.map { String($0.version) }, "document": current?.data],
                                          after: ["version": String(record.version), "document": record.data], on: db)
            }
        } catch let error as any DatabaseError where error.isConstraintFailure {
            throw WaybillError(.conflict, .conflict, "Another admin changed the travel tariff at the same moment; reload it and try again.")
        }
        return clean
    }

    // MARK: travellers

    /// Takes on the traveller capability: a verified account that accepts the travellers' terms.
    func becomeTraveller(acceptTerms: Bool, by me: Principal) async throws -> User {
        guard acceptTerms else { throw WaybillError.validation("acceptTerms", "required") }
        guard me.caller.may(.placeOrders) else {
            if me.user.restriction != nil { throw WaybillError.accountSuspended }
            throw WaybillError.forbidden
        }
        return try await transaction { db in
            guard let user = try await User.find(me.userID, on: db) else { throw WaybillError.notFound }
            var held = Capability.parseList(user.staffCapabilities)
            if held.insert(.traveller).inserted {
                try await Accounts.setStaffCapabilities(user, to: held, by: me.userID, on: db)
            }
            return user
        }
    }

    // MARK: trips

    func postTrip(_ draft: TripDraft, by me: Principal) async throws -> TripRecord {
        try requireTraveller(me)
        let index = try await areas(), tariff = try await tariff()
        let plan = try draft.validated(now: UnixTime.nowMillis, tariff: tariff, areaExists: { index[$0] != nil }).orValidationError()
        let record = TripRecord(id: .random(), traveller: me.userID, plan: plan, currency: tariff.currency, at: UnixTime.nowMillis)
        try await transaction { db in
            // Nobody posts more than 50 trips still to leave (a list that long is a script).
            let upcoming = try await TripRecord.query(on: db).filter(\.$travellerID == me.userID)
                .filter(\.$cancelledAt == nil).filter(\.$departsUntil > UnixTime.nowMillis).count()
            if upcoming >= 50 { throw WaybillError(.conflict, .conflict, "You already have 50 trips still to leave.") }
            try await record.create(on: db)
        }
        return record
    }

    func trip(_ id: TripID, for me: Principal) async throws -> TripRecord {
        guard let record = try await TripRecord.find(id, on: db),
              TripPolicy.maySee(traveller: record.travellerID, status: record.status(at: UnixTime.nowMillis), hidden: record.hiddenAt != nil, by: me.caller) else {
            throw WaybillError.notFound
        }
        return record
    }

    /// The caller's own trips: those still to leave first (soonest first), then past and
    /// cancelled ones (most recent first), up to 100.
    func myTrips(for me: Principal) async throws -> [TripRecord] {
        let all = try await TripRecord.query(on: db).filter(\.$travellerID == me.userID).sort(\.$departsFrom, .descending).limit(200).all()
        let now = UnixTime.nowMillis
        let upcoming = all.filter { $0.cancelledAt == nil && $0.departsUntil > now }.sorted { $0.departsFrom < $1.departsFrom }
        let past = all.filter { !($0.cancelledAt == nil && $0.departsUntil > now) }
        return Array((upcoming + past).prefix(100))
    }

    /// Applies `change` to the trip's current description and saves it, if `TripPolicy.mayEdit` allows.
    func editTrip(_ id: TripID, by me: Principal, _ change: @escaping @Sendable (inout TripDraft) -> Void) async throws -> TripRecord {
        let index = try await areas(), tariff = try await tariff()
        return try await transaction { db in
            try await Self.lockTrip(id, on: db)
            guard let record = try await TripRecord.find(id, on: db), record.travellerID == me.userID || me.caller.capabilities.contains(.admin) else {
                throw WaybillError.notFound
            }
            var draft = record.draft
            change(&draft)
            let plan = try draft.validated(now: UnixTime.nowMillis, tariff: tariff, areaExists: { index[$0] != nil }).orValidationError()
            let before = record.draft
            let routeOrDate = plan.draft.from != before.from || plan.draft.to != before.to || plan.draft.date != before.date
                || plan.draft.earliest != before.earliest || plan.draft.latest != before.latest || plan.draft.timeZone != before.timeZone
            switch TripPolicy.mayEdit(traveller: record.travellerID, status: record.status(at: UnixTime.nowMillis),
                                      bookedGrams: record.bookedGrams, bookedParcels: record.bookedParcels, changingRouteOrDate: routeOrDate,
                                      newCapacity: (plan.draft.capacityGrams, plan.draft.capacityParcels), by: me.caller) {
            case .allowed: break
            case .forbidden: throw me.caller.capabilities.contains(.traveller) || me.user.restriction == nil ? WaybillError.forbidden : WaybillError.accountSuspended
            case .wrongStatus(let status): throw Self.wrongStatus(status)
            case .booked: throw WaybillError(.conflict, .tripBooked, "Parcels are booked on this trip: its route and date stay, and its room cannot go below what is booked.")
            }
            record.set(plan, at: UnixTime.nowMillis)
            try await record.save(on: db)
            return record
        }
    }

    func cancelTrip(_ id: TripID, by me: Principal) async throws -> TripRecord {
        try await transaction { db in
            try await Self.lockTrip(id, on: db)
            guard let record = try await TripRecord.find(id, on: db),
                  TripPolicy.maySee(traveller: record.travellerID, status: record.status(at: UnixTime.nowMillis), hidden: record.hiddenAt != nil, by: me.caller) else {
                throw WaybillError.notFound
            }
            switch TripPolicy.mayCancel(traveller: record.travellerID, status: record.status(at: UnixTime.nowMillis),
                                        bookedParcels: record.bookedParcels, by: me.caller) {
            case .allowed: break
            case .forbidden: throw WaybillError.forbidden
            case .booked: throw WaybillError(.conflict, .tripBooked, "Parcels are booked on this trip; their shipments must be cancelled first.")
            case .wrongStatus(let status): throw Self.wrongStatus(status)
            }
            // Someone else's trip: the administration removing it, with a recently proven password.
            if record.travellerID != me.userID { try await Accounts.requireModerator(me, on: db) }
            record.cancelledAt = UnixTime.nowMillis
            record.updatedAt = UnixTime.nowMillis
            try await record.save(on: db)
            if record.travellerID != me.userID {
                try await AuditLog.record(.tripRemoved, by: me.userID, target: .trip, id.uuidString, before: ["status": "open"],
                                          after: ["status": "cancelled", "traveller": record.travellerID.uuidString], on: db)
            }
            // Requests still waiting for an answer end with the trip; their senders are told.
            let waiting = try await TripRequestRecord.query(on: db).filter(\.$tripID == id).filter(\.$status == .requested).all()
            for r in waiting {
                r.status = .cancelled
                r.reason = "The traveller cancelled the trip"
                r.updatedAt = UnixTime.nowMillis
                try await r.save(on: db)
                try await services.events.record(.tripRequestChanged(try TripRequestFacts(r), .cancelled), on: db)
                try await Self.notify(r.senderID, .tripRequestCancelled, body: "The traveller cancelled the trip your request was for.", on: db)
            }
            return record
        }
    }

    /// Open trips matching `search`, best first, with the price (`TripMatching`).
    func searchTrips(_ search: TripSearch, limit: Int, for me: Principal) async throws -> [(TripMatch, TripRecord)] {
        guard me.caller.may(.placeOrders) else { throw WaybillError.forbidden }
        guard (1...50).contains(limit) else { throw WaybillError.invalidParameter("limit", "out_of_range") }
        let index = try await areas(), tariff = try await tariff(), now = UnixTime.nowMillis
        let search = try search.validated(now: now, tariff: tariff, areaExists: { index[$0] != nil }).orValidationError()
        var query = TripRecord.query(on: db).filter(\.$cancelledAt == nil).filter(\.$hiddenAt == nil)
            .filter(\.$departsUntil > max(now, search.earliest ?? now))
        if let latest = search.latest { query = query.filter(\.$departsFrom <= latest) }
        // Only trips from and to the searched areas or areas inside them: by id when that is a
        // short list, else checked in memory.
        let fromIDs = index.descendants(of: search.from), toIDs = index.descendants(of: search.to)
        if fromIDs.count <= 500 { query = query.filter(\.$fromAreaID ~~ fromIDs.map(\.rawValue)) }
        if toIDs.count <= 500 { query = query.filter(\.$toAreaID ~~ toIDs.map(\.rawValue)) }
        let records = try await query.sort(\.$departsFrom).limit(2000).all()
        let byID = Dictionary(uniqueKeysWithValues: try records.map { (try $0.storedID, $0) })
        let ranked = TripMatching.rank(try records.map { try $0.candidate }, for: search, tariff: tariff, areas: index, by: me.userID, now: now)
        return ranked.prefix(limit).compactMap { match in byID[match.trip.id].map { (match, $0) } }
    }

    // MARK: helpers

    func requireTraveller(_ me: Principal) throws {
        guard TripPolicy.mayPost(me.caller) else {
            if me.user.capabilities.contains(.traveller) { throw WaybillError.accountSuspended }
            throw WaybillError(.forbidden, .notATraveller, "Complete your traveller profile to post trips.")
        }
    }

    static func wrongStatus(_ status: TripStatus) -> WaybillError {
        WaybillError(.conflict, .invalidTransition, "This trip is \(status.rawValue.replacingOccurrences(of: "_", with: " ")).")
    }

    /// Holds the trip's row until the transaction ends (PostgreSQL; SQLite's write lock already
    /// serialises writers).
    static func lockTrip(_ id: TripID, on db: any Database) async throws {
        guard let sql = db.tracedSQL, sql.dialect.name == "postgresql" else { return }
        try await sql.raw("SELECT id FROM trips WHERE id = \(bind: id.rawValue) FOR UPDATE").run()
    }
}

struct AreaImportError: Error {
    let problems: [String]
}
