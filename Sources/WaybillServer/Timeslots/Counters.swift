import Fluent
import Foundation
import SQLKit
import Vapor
import WaybillCore

/// A reception counter: where it is, its time zone and opening hours (`CounterHours`, as JSON).
final class CounterRecord: Model, @unchecked Sendable {
    static let schema = "counters"

    @ID(custom: "id", generatedBy: .user) var id: CounterID?
    @Field(key: "name") var name: String
    @Field(key: "street") var street: String
    @Field(key: "postal_code") var postalCode: String
    @Field(key: "city") var city: String
    @Field(key: "country") var country: String
    @OptionalField(key: "latitude") var latitude: Double?
    @OptionalField(key: "longitude") var longitude: Double?
    @Field(key: "time_zone") var timeZone: String
    @Field(key: "hours") var hoursJSON: String
    @Field(key: "active") var active: Bool
    @Field(key: "created_at") var createdAt: Int64
    @Field(key: "updated_at") var updatedAt: Int64

    var properties: [any AnyProperty] {
        [$id, $name, $street, $postalCode, $city, $country, $latitude, $longitude, $timeZone, $hoursJSON, $active, $createdAt, $updatedAt]
    }

    init() {}

    var hours: CounterHours { (try? JSONDecoder().decode(CounterHours.self, from: Data(hoursJSON.utf8))) ?? CounterHours() }
    var zone: TimeZone { TimeZone(identifier: timeZone) ?? TimeZone(identifier: "Europe/Zurich") ?? .gmt }  // as `WaybillConfig.displayTimeZone`
    var address: Address {
        Address(street: street, postalCode: postalCode, city: city, country: country,
                coordinate: latitude.flatMap { lat in longitude.map { Coordinate(latitude: lat, longitude: $0) } })
    }

    func apply(_ draft: CounterDraft) {
        name = draft.cleanName
        street = draft.address.street.trimmingCharacters(in: .whitespaces)
        postalCode = draft.address.postalCode.trimmingCharacters(in: .whitespaces)
        city = draft.address.city.trimmingCharacters(in: .whitespaces)
        country = draft.address.country
        latitude = draft.address.coordinate?.latitude
        longitude = draft.address.coordinate?.longitude
        timeZone = draft.timeZone
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        hoursJSON = String(decoding: (try? encoder.encode(draft.hours)) ?? Data("{}".utf8), as: UTF8.self)
    }
}

/// A counter with its staff, as admins and staff see it.
struct CounterView: Sendable {
    var record: CounterRecord
    var staff: [User]
}

/// Reception counters (issue "Counters, timeslots and QR hand-overs", item 1): admins create them
/// with their address, time zone and opening hours (per weekday, with holidays and exceptional
/// days) and name their staff, who get the `counter` capability; everyone signed in lists the
/// active ones with whether they are open now. Drop-off slot templates belong to a counter and close
/// when it does. The rules are `CounterPolicy` and `CounterHours` in WaybillCore.
struct Counters: WaybillService {
    let services: WaybillServices
    let db: any Database
    let logger: Logger

    func create(_ draft: CounterDraft, by me: Principal) async throws -> CounterView {
        guard CounterPolicy.mayManage(me.caller) else { throw WaybillError.forbidden }
        let errors = draft.validate()
        guard errors.isEmpty else { throw WaybillError.validation(errors) }
        let record = CounterRecord()
        record.id = .generated()
        record.apply(draft)
        record.active = true
        record.createdAt = UnixTime.nowMillis
        record.updatedAt = record.createdAt
        let actor = me.userID
        try await db.writeTransaction(services) { db in
            try await record.create(on: db)
            try await AuditLog.record(.counterChanged, by: actor, target: .counter, try record.storedID.uuidString,
                                      after: ["name": record.name, "active": "true"], on: db)
        }
        return CounterView(record: record, staff: [])
    }

    func update(_ id: CounterID, _ draft: CounterDraft?, active: Bool?, by me: Principal) async throws -> CounterView {
        guard CounterPolicy.mayManage(me.caller) else { throw WaybillError.forbidden }
        guard let record = try await CounterRecord.find(id, on: db) else { throw WaybillError.notFound }
        let before: [String: String?] = ["name": record.name, "active": String(record.active)]
        if let draft {
            let errors = draft.validate()
            guard errors.isEmpty else { throw WaybillError.validation(errors) }
            record.apply(draft)
        }
        if let active { record.active = active }
        record.updatedAt = UnixTime.nowMillis
        let actor = me.userID
        try await db.writeTransaction(services) { db in
            try await record.save(on: db)
            try await AuditLog.record(.counterChanged, by: actor, target: .counter, id.uuidString, before: before,
                                      after: ["name": record.name, "active": String(record.active)], on: db)
        }
        return try await view(record)
    }

    /// Active counters for everyone signed in (all of them for admins), by name.
    func list(by me: Principal) async throws -> [CounterView] {
        try me.require(.placeOrders)
        var query = CounterRecord.query(on: db)
        let admin = CounterPolicy.mayManage(me.caller)
        if !admin { query = query.filter(\.$active == true) }
        let records = try await query.sort(\.$name).limit(500).all()
        guard admin else { return records.map { CounterView(record: $0, staff: []) } }
        let staff = try await Self.staff(of: records.compactMap(\.id), on: db)
        return try records.map { CounterView(record: $0, staff: staff[try $0.storedID] ?? []) }
    }

    /// The active counters, by name, for a customer to choose from (and dispatch, for drop-off templates).
    func active(by me: Principal) async throws -> [CounterRecord] {
        try me.require(.placeOrders)
        return try await CounterRecord.query(on: db).filter(\.$active == true).sort(\.$name).limit(500).all()
    }

    func counter(_ id: CounterID, by me: Principal) async throws -> CounterView {
        try me.require(.placeOrders)
        guard let record = try await CounterRecord.find(id, on: db), record.active || CounterPolicy.mayManage(me.caller) else { throw WaybillError.notFound }
        return CounterPolicy.mayManage(me.caller) ? try await view(record) : CounterView(record: record, staff: [])
    }

    private func view(_ record: CounterRecord) async throws -> CounterView {
        let id = try record.storedID
        return CounterView(record: record, staff: try await Self.staff(of: [id], on: db)[id] ?? [])
    }

    /// The counters a new shipment chose, with their addresses (422 when one is not an active counter).
    func choice(_ choice: CounterChoice) async throws -> CounterChoice {
        var result = choice
        var errors = FieldErrors()
        for (field, id) in [("dropOffCounterId", choice.dropOffID), ("collectionCounterId", choice.collectionID)] {
            guard let id else { continue }
            guard let uuid = UUID(uuidString: id), let record = try await CounterRecord.find(CounterID(rawValue: uuid), on: db), record.active else {
                errors.add(field, "not_found")
                continue
            }
            if field == "dropOffCounterId" { result.dropOff = record.address; result.dropOffID = uuid.uuidString }
            else { result.collection = record.address; result.collectionID = uuid.uuidString }
        }
        if !errors.isEmpty { throw WaybillError.validation(errors) }
        return result
    }

    /// The staff of counters, by counter (two queries whatever their number).
    static func staff(of counters: [CounterID], on db: any Database) async throws -> [CounterID: [User]] {
        guard !counters.isEmpty, let sql = db.tracedSQL else { return [:] }
        let rows = try await sql.select().columns("counter_id", "user_id").from("counter_staff").where("counter_id", .in, SQLBind.group(counters)).all()
            .map { (try $0.decode(column: "counter_id", as: CounterID.self), try $0.decode(column: "user_id", as: UserID.self)) }
        guard !rows.isEmpty else { return [:] }
        let users = Dictionary(uniqueKeysWithValues: try await User.query(on: db).filter(\.$id ~~ Array(Set(rows.map(\.1)))).sort(\.$lastName).all()
            .map { (try $0.storedID, $0) })
        var result: [CounterID: [User]] = [:]
        for (counter, user) in rows { if let person = users[user] { result[counter, default: []].append(person) } }
        return result.mapValues { $0.sorted { $0.lastName < $1.lastName } }
    }

    /// Names someone staff of a counter, granting them the `counter` capability if they lack it
    /// (one transaction, recorded as a grant like any other).
    func addStaff(_ id: CounterID, user userID: UserID, by me: Principal) async throws -> CounterView {
        guard CounterPolicy.mayManage(me.caller) else { throw WaybillError.forbidden }
        guard let record = try await CounterRecord.find(id, on: db) else { throw WaybillError.notFound }
        guard let user = try await User.find(userID, on: db), !user.isBanned else { throw WaybillError.validation("userId", "not_found") }
        if userID == me.userID, !me.user.capabilities.contains(.counter) {
            throw WaybillError(.conflict, .cannotModifySelf, "You cannot change your own capabilities or restrict your own account.")
        }
        let actor = me.userID
        try await db.writeTransaction(services) { db in
            guard let sql = db.tracedSQL else { return }
            try await sql.insert(into: "counter_staff").columns("counter_id", "user_id", "added_by", "added_at")
                .values(SQLBind(id), SQLBind(userID), SQLBind(actor), SQLBind(UnixTime.nowMillis))
                .ignoringConflicts(with: ["counter_id", "user_id"]).run()
            try await AuditLog.record(.counterStaffChanged, by: actor, target: .counter, id.uuidString, after: ["added": userID.uuidString], on: db)
            var staff = Capability.parseList(user.staffCapabilities)
            if !staff.contains(.counter) {
                staff.insert(.counter)
                try await Accounts.setStaffCapabilities(user, to: staff, by: actor, on: db)
            }
        }
        return try await view(record)
    }

    /// The same, naming the account by its email (the admin page's form).
    func addStaff(_ id: CounterID, email: String, by me: Principal) async throws -> CounterView {
        guard CounterPolicy.mayManage(me.caller) else { throw WaybillError.forbidden }
        let clean = email.trimmingCharacters(in: .whitespaces).lowercased()
        guard !clean.isEmpty, clean.count <= 320, let user = try await User.query(on: db).filter(\.$email == clean).first() else {
            throw WaybillError.validation("email", "no_account")
        }
        return try await addStaff(id, user: try user.storedID, by: me)
    }

    /// Takes someone off a counter's staff (their `counter` capability stays for other counters;
    /// an admin takes it back on the account).
    func removeStaff(_ id: CounterID, user userID: UserID, by me: Principal) async throws -> CounterView {
        guard CounterPolicy.mayManage(me.caller) else { throw WaybillError.forbidden }
        guard let record = try await CounterRecord.find(id, on: db) else { throw WaybillError.notFound }
        let actor = me.userID
        try await db.writeTransaction(services) { db in
            guard let sql = db.tracedSQL else { return }
            try await sql.delete(from: "counter_staff").where("counter_id", .equal, SQLBind(id)).where("user_id", .equal, SQLBind(userID)).run()
            try await AuditLog.record(.counterStaffChanged, by: actor, target: .counter, id.uuidString, after: ["removed": userID.uuidString], on: db)
        }
        return try await view(record)
    }
}
