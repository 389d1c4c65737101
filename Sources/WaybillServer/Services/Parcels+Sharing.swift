import Fluent
import SQLKit
import Vapor
import WaybillCore

/// `parcel_shares`: who a parcel is shared with, and each one's own alert setting for it.
struct ParcelShares {
    let db: any Database

    struct Row: Sendable {
        var parcel: ParcelID
        var user: UserID
        var alerts: ParcelAlerts?
    }

    private var sql: any SQLDatabase {
        get throws {
            guard let sql = db.tracedSQL else { throw WaybillError(.internalServerError, .internalError, "SQL database required") }
            return sql
        }
    }

    private func rows(_ query: SQLSelectBuilder) async throws -> [Row] {
        try await query.all().map { row in
            Row(parcel: ParcelID(try row.decode(column: "parcel_id", as: UUID.self)), user: UserID(try row.decode(column: "user_id", as: UUID.self)),
                alerts: try row.decodeNil(column: "alerts") ? nil : ParcelAlerts(rawValue: try row.decode(column: "alerts", as: String.self)))
        }
    }

    private func select() throws -> SQLSelectBuilder {
        try sql.select().columns("parcel_id", "user_id", "alerts").from("parcel_shares")
    }

    func of(user: UserID) async throws -> [Row] {
        try await rows(try select().where("user_id", .equal, SQLBind(user)).limit(ParcelPolicy.maxPerAccount))
    }

    func of(parcel: ParcelID) async throws -> [Row] {
        try await rows(try select().where("parcel_id", .equal, SQLBind(parcel)).limit(ParcelPolicy.maxSharesPerParcel + 1))
    }

    func row(parcel: ParcelID, user: UserID) async throws -> Row? {
        try await rows(try select().where("parcel_id", .equal, SQLBind(parcel)).where("user_id", .equal, SQLBind(user))).first
    }

    /// Adds the share; false if it was there already (also when a parallel request added it first:
    /// the unique key decides, not a 500).
    func add(parcel: ParcelID, user: UserID) async throws -> Bool {
        guard try await row(parcel: parcel, user: user) == nil else { return false }
        do {
            try await sql.insert(into: "parcel_shares").columns("parcel_id", "user_id", "created_at")
                .values(SQLBind(parcel), SQLBind(user), SQLBind(UnixTime.nowMillis)).run()
        } catch let error as any DatabaseError where error.isConstraintFailure {
            return false
        }
        return true
    }

    func remove(parcel: ParcelID, user: UserID) async throws {
        try await sql.delete(from: "parcel_shares").where("parcel_id", .equal, SQLBind(parcel)).where("user_id", .equal, SQLBind(user)).run()
    }

    func setAlerts(_ alerts: ParcelAlerts?, parcel: ParcelID, user: UserID) async throws {
        try await sql.update("parcel_shares").set("alerts", to: alerts.map { SQLBind($0.rawValue) as any SQLExpression } ?? SQLLiteral.null)
            .where("parcel_id", .equal, SQLBind(parcel)).where("user_id", .equal, SQLBind(user)).run()
    }
}

extension Parcels {
    /// Shares the parcel with the account behind `email` (verified, not the owner): they see it in
    /// their list and are told of its news. Thirty a day per person (an address book is not guessed).
    func share(_ id: ParcelID, with email: String, by me: Principal) async throws -> ParcelView {
        let record = try await access(id, for: me, to: .share).record
        let address = email.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
        guard address.count <= 254, address.contains("@") else { throw WaybillError.validation("email", "invalid") }
        if let wait = services.parcelShareLimiter.take(me.userID.uuidString) {
            throw WaybillError.tooManyRequests(retryAfter: wait, "You shared many parcels today; try again tomorrow.")
        }
        guard let friend = try await User.query(on: db).filter(\.$email == address).filter(\.$emailVerifiedAt != nil).first(),
              let friendID = friend.id, !friend.isBanned else {
            throw WaybillError(.unprocessableEntity, .validationFailed, "No Waybill account uses this address; ask them to sign up first.",
                               fields: ["email": "no_account"])
        }
        guard friendID != record.ownerID else { throw WaybillError.validation("email", "yourself") }
        try await db.writeTransaction(services) { db in
            let shares = ParcelShares(db: db)
            guard try await shares.of(parcel: id).count < ParcelPolicy.maxSharesPerParcel else {
                throw WaybillError(.conflict, .conflict, "This parcel is shared with \(ParcelPolicy.maxSharesPerParcel) people already.")
            }
            if try await shares.add(parcel: id, user: friendID) {
                try await Notifier.notify([friend], .parcelShared, order: nil, reference: record.name ?? record.number,
                                          body: "\(me.user.firstName) shares the parcel \(record.name ?? record.number) (\(record.number)) with you: it is in your list of parcels.",
                                          on: db)
            }
        }
        services.outbox.poke()
        return try await view(id, for: me)
    }

    /// The owner stops sharing with `user`, or `user` leaves a parcel shared with them.
    func unshare(_ id: ParcelID, user: UserID, by me: Principal) async throws {
        let relation = try await access(id, for: me).relation
        switch relation {
        case .owner: break
        case .shared: guard user == me.userID, ParcelPolicy.allows(.leave, as: .shared, by: me.caller) else { throw WaybillError.forbidden }
        }
        try await db.writeTransaction(services) { db in try await ParcelShares(db: db).remove(parcel: id, user: user) }
    }

    /// A new public link (the old one stops working), or none.
    func setLink(_ id: ParcelID, on: Bool, by me: Principal) async throws -> ParcelView {
        let record = try await access(id, for: me, to: on ? .share : .change).record
        record.shareToken = on ? Tracking.newTrackingToken() : nil
        try await db.writeTransaction(services) { db in try await record.save(on: db) }
        return try await view(id, for: me)
    }

    /// The parcel behind a public link, for anyone holding it: its number, carrier, status and
    /// events, never its notes or owner. Misses spend the address's budget (as order links do).
    static func shared(token: String, clientAddress: String, services: WaybillServices, db: any Database) async throws -> (ParcelRecord, [ParcelEvent]) {
        if let wait = services.trackingMissLimiter.take(clientAddress) { throw WaybillError.tooManyRequests(retryAfter: wait) }
        guard Tracking.isWellFormedToken(token), let record = try await ParcelRecord.query(on: db).filter(\.$shareToken == token).first() else {
            throw WaybillError.notFound
        }
        services.trackingMissLimiter.giveBack(clientAddress)
        let parcelID = try record.storedID
        let events = try await ParcelEventRecord.query(on: db).filter(\.$parcelID == parcelID).sort(\.$at, .descending).limit(500).all().map(\.event)
        return (record, events)
    }

    /// When the caller is told about their parcels' news, and how.
    func settings(for me: Principal) async throws -> ParcelSettingsRecord {
        try await ParcelSettingsRecord.of(me.userID, on: db)
    }

    func setSettings(alerts: ParcelAlerts, mail: Bool, push: Bool, by me: Principal) async throws -> ParcelSettingsRecord {
        let record = ParcelSettingsRecord.defaults(me.userID)
        record.alerts = alerts
        record.mail = mail
        record.push = push
        try await db.writeTransaction(services) { db in
            if let existing = try await ParcelSettingsRecord.find(me.userID, on: db) {
                existing.alerts = alerts
                existing.mail = mail
                existing.push = push
                try await existing.save(on: db)
            } else {
                try await record.create(on: db)
            }
        }
        return record
    }
}

/// Tells the owner of a parcel and the people it is shared with about a change of status, each
/// by their own settings (`ParcelAlerts.tells`): in the app, and by push and mail unless turned off.
enum ParcelNews {
    static func tell(_ parcel: ParcelFacts, from old: ParcelStatus, on db: any Database) async throws {
        var audience: [(user: UserID, alerts: ParcelAlerts?)] = [(parcel.ownerID, parcel.alerts)]
        audience += try await ParcelShares(db: db).of(parcel: parcel.id).map { ($0.user, $0.alerts) }
        let title = parcel.name ?? parcel.number
        let body = "\(title) (\(parcel.number)) is now \(parcel.status.rawValue.replacingOccurrences(of: "_", with: " "))."
        for (userID, alerts) in audience {
            let settings = try await ParcelSettingsRecord.of(userID, on: db)
            guard ParcelAlerts.tells(parcel: alerts, account: settings.alerts, from: old, to: parcel.status),
                  let user = try await User.find(userID, on: db) else { continue }
            try await Notifier.notify([user], .parcelUpdate, order: nil, reference: title, body: body, push: settings.push, mail: settings.mail, on: db)
        }
    }
}

extension Parcels {
    /// Follows every tracking number found in pasted text (a shop's shipping confirmation), each with
    /// its likeliest carrier; numbers already followed are skipped. At most 20 a time.
    func addAll(from text: String, name: String?, by me: Principal) async throws -> (added: [ParcelRecord], skipped: [String]) {
        guard text.count <= CarrierDetection.maxTextLength else { throw WaybillError.validation("text", "too_long") }
        // Bounded work (at most `CarrierDetection.maxChecks` checks), done on the thread pool, not an event loop.
        let found = try await services.threadPool.runIfActive { CarrierDetection.standard.scan(text, maxNumbers: 20).numbers }
        guard !found.isEmpty else { throw WaybillError.validation("text", "no_tracking_number") }
        var added: [ParcelRecord] = []
        var skipped: [String] = []
        for candidate in found {
            do {
                added.append(try await add(ParcelDraft(number: candidate.number, name: name), by: me))
            } catch let error as WaybillError where error.status == .conflict && error.fields?["number"] == "duplicate" {
                skipped.append(candidate.number)
            }
        }
        return (added, skipped)
    }
}
