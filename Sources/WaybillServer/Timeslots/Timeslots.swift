import Fluent
import Foundation
import SQLKit
import Vapor
import WaybillCore

/// A weekly rule of slots (`SlotTemplate` in WaybillCore), for a zone.
final class SlotTemplateRecord: Model, @unchecked Sendable {
    static let schema = "slot_templates"

    @ID(custom: "id", generatedBy: .user) var id: SlotTemplateID?
    @Field(key: "kind") var kind: SlotKind
    /// A postal-code prefix; empty: everywhere.
    @Field(key: "zone") var zone: String
    @Field(key: "weekday") var weekday: Int
    @Field(key: "start_minute") var startMinute: Int
    @Field(key: "end_minute") var endMinute: Int
    @Field(key: "capacity") var capacity: Int
    @Field(key: "cutoff_minutes") var cutoffMinutes: Int
    @Field(key: "horizon_days") var horizonDays: Int
    @Field(key: "time_zone") var timeZone: String
    @Field(key: "requires_approval") var requiresApproval: Bool
    @Field(key: "active") var active: Bool
    @OptionalField(key: "created_by") var createdBy: UserID?
    @Field(key: "created_at") var createdAt: Int64
    /// A drop-off template's counter (its slots close when the counter does).
    @OptionalField(key: "counter_id") var counterID: CounterID?

    var properties: [any AnyProperty] {
        [$id, $kind, $zone, $weekday, $startMinute, $endMinute, $capacity, $cutoffMinutes, $horizonDays, $timeZone, $requiresApproval,
         $active, $createdBy, $createdAt, $counterID]
    }

    init() {}

    var template: SlotTemplate {
        SlotTemplate(kind: kind, weekday: Weekday(rawValue: weekday) ?? .monday, startMinute: startMinute, endMinute: endMinute,
                     capacity: capacity, cutoffMinutes: cutoffMinutes, horizonDays: horizonDays, timeZone: timeZone,
                     requiresApproval: requiresApproval)
    }
}

/// One slot on one local date: its seats and how many are booked.
final class SlotRecord: Model, @unchecked Sendable {
    static let schema = "slots"

    @ID(custom: "id", generatedBy: .user) var id: SlotID?
    @Field(key: "template_id") var templateID: SlotTemplateID
    @Field(key: "local_date") var localDate: String
    @Field(key: "starts_at") var startsAt: Int64
    @Field(key: "ends_at") var endsAt: Int64
    @Field(key: "capacity") var capacity: Int
    /// Seats taken by bookings that are pending or booked (changed only by conditional updates).
    @Field(key: "booked") var booked: Int
    @Field(key: "closed") var closed: Bool

    var properties: [any AnyProperty] { [$id, $templateID, $localDate, $startsAt, $endsAt, $capacity, $booked, $closed] }

    init() {}
}

/// A shipment's pickup or delivery in a slot.
final class SlotBookingRecord: Model, @unchecked Sendable {
    static let schema = "slot_bookings"

    @ID(custom: "id", generatedBy: .user) var id: SlotBookingID?
    @Field(key: "slot_id") var slotID: SlotID
    @Field(key: "order_id") var orderID: OrderID
    @Field(key: "kind") var kind: SlotKind
    @Field(key: "status") var status: SlotBookingStatus
    @Field(key: "booked_by") var bookedBy: UserID
    /// Why staff declined it, or why the visit failed.
    @OptionalField(key: "reason") var reason: String?
    @OptionalField(key: "decided_by") var decidedBy: UserID?
    @OptionalField(key: "decided_at") var decidedAt: Int64?
    @Field(key: "created_at") var createdAt: Int64
    @Field(key: "updated_at") var updatedAt: Int64

    var properties: [any AnyProperty] {
        [$id, $slotID, $orderID, $kind, $status, $bookedBy, $reason, $decidedBy, $decidedAt, $createdAt, $updatedAt]
    }

    init() {}
}

/// A slot as someone choosing one sees it.
struct SlotView: Sendable {
    var slot: SlotRecord
    var template: SlotTemplateRecord
    var availability: SlotAvailability
    /// The caller's own hold on it, until when.
    var heldUntil: Int64?
}

/// A booking with its slot, for the shipment's people and staff.
struct SlotBookingView: Sendable {
    var booking: SlotBookingRecord
    var slot: SlotRecord
    var template: SlotTemplateRecord
    var reference: String?
}

/// Timeslots (issue "Counters, timeslots and QR hand-overs", item 2): dispatch sets weekly templates
/// per zone; people see each local date's slots as available, nearly full, full or unavailable,
/// hold one while they finish, and book it for a shipment's pickup or delivery in one conditional
/// update of the slot's seats (the last seat cannot be sold twice); staff approve or decline what
/// waits, and mark visits completed or failed; moving or cancelling frees the seat. The rules are
/// `SlotPolicy` and `SlotBookingMachine` in WaybillCore.
struct Timeslots: WaybillService {
    let services: WaybillServices
    let db: any Database
    let logger: Logger

    // MARK: templates

    func createTemplate(_ template: SlotTemplate, zone: String, counter: CounterID? = nil, by me: Principal) async throws -> SlotTemplateRecord {
        guard SlotPolicy.isStaff(me.caller) else { throw WaybillError.forbidden }
        var template = template
        var errors = template.validate()
        var cleanZone = SlotPolicy.cleanZone(zone)
        if cleanZone == nil { errors.add("zone", "invalid") }
        // A counter's drop-offs follow the counter's time zone; pickups and deliveries have no counter.
        if template.kind == .dropOff {
            if let counter, let record = try await CounterRecord.find(counter, on: db) {
                template.timeZone = record.timeZone
                cleanZone = ""
            } else {
                errors.add("counterId", counter == nil ? "required" : "not_found")
            }
        } else if counter != nil {
            errors.add("counterId", "only_for_drop_off")
        }
        guard errors.isEmpty else { throw WaybillError.validation(errors) }
        let record = SlotTemplateRecord()
        record.id = .generated()
        record.kind = template.kind
        record.zone = cleanZone ?? ""
        record.weekday = template.weekday.rawValue
        record.startMinute = template.startMinute
        record.endMinute = template.endMinute
        record.capacity = template.capacity
        record.cutoffMinutes = template.cutoffMinutes
        record.horizonDays = template.horizonDays
        record.timeZone = template.timeZone
        record.requiresApproval = template.requiresApproval
        record.active = true
        record.createdBy = me.userID
        record.createdAt = UnixTime.nowMillis
        record.counterID = template.kind == .dropOff ? counter : nil
        try await db.writeTransaction(services) { db in try await record.create(on: db) }
        return record
    }

    func templates(by me: Principal) async throws -> [SlotTemplateRecord] {
        guard SlotPolicy.isStaff(me.caller) else { throw WaybillError.forbidden }
        return try await SlotTemplateRecord.query(on: db).sort(\.$kind).sort(\.$weekday).sort(\.$startMinute).all()
    }

    /// Changes seats, approval or whether it runs. New seats reach the slots still to come; fewer
    /// never unbook anyone (a slot then shows full until enough cancel).
    func updateTemplate(_ id: SlotTemplateID, capacity: Int?, requiresApproval: Bool?, active: Bool?, by me: Principal) async throws -> SlotTemplateRecord {
        guard SlotPolicy.isStaff(me.caller) else { throw WaybillError.forbidden }
        guard let record = try await SlotTemplateRecord.find(id, on: db) else { throw WaybillError.notFound }
        if let capacity, !SlotTemplate.capacityRange.contains(capacity) { throw WaybillError.validation("capacity", "out_of_range") }
        if let capacity { record.capacity = capacity }
        if let requiresApproval { record.requiresApproval = requiresApproval }
        if let active { record.active = active }
        let now = UnixTime.nowMillis
        try await db.writeTransaction(services) { db in
            try await record.save(on: db)
            if let capacity {
                try await SlotRecord.query(on: db).filter(\.$templateID == id).filter(\.$startsAt > now).set(\.$capacity, to: capacity).update()
            }
        }
        return record
    }

    // MARK: slots

    /// The slots of `kind` for a postal code (pickups, deliveries) or a counter (drop-offs) from a
    /// local date for some days, made on first look.
    func slots(kind: SlotKind, postalCode: String?, counter: CounterID? = nil, from: LocalDate?, days: Int, for me: Principal) async throws -> [SlotView] {
        try me.require(.placeOrders)
        guard (1...31).contains(days) else { throw WaybillError.invalidParameter("days", "out_of_range") }
        let now = UnixTime.nowMillis
        var query = SlotTemplateRecord.query(on: db).filter(\.$kind == kind).filter(\.$active == true)
        var counters: [CounterID: CounterRecord] = [:]
        if kind == .dropOff {
            guard let counter else { throw WaybillError.invalidParameter("counterId", "required") }
            guard let record = try await CounterRecord.find(counter, on: db), record.active else { return [] }
            counters[counter] = record
            query = query.filter(\.$counterID == counter)
        } else {
            guard let postalCode, (1...16).contains(postalCode.count) else { throw WaybillError.invalidParameter("postalCode", "required") }
            query = query.filter(\.$counterID == nil)
        }
        let templates = try await query.all().filter { kind == .dropOff || SlotPolicy.covers(zone: $0.zone, postalCode: postalCode ?? "") }
        let slots = try await materialize(templates, from: from, days: days, now: now)
        return try await views(slots, templates: templates, counters: counters, for: me.userID, now: now)
    }

    /// The template's slots in the window, as rows (inserted when missing; an existing row stays).
    private func materialize(_ templates: [SlotTemplateRecord], from: LocalDate?, days: Int, now: Int64) async throws -> [SlotRecord] {
        guard let sql = db.tracedSQL else { return [] }
        var wanted: [(id: SlotTemplateID, record: SlotTemplateRecord, occurrence: SlotOccurrence)] = []
        for record in templates {
            let id = try record.storedID
            let template = record.template
            guard let zone = template.zone else { continue }
            let today = LocalDate.at(now, in: zone)
            let start = max(from ?? today, today)
            guard let horizonEnd = today.adding(days: template.horizonDays) else { continue }
            let span = min(days, max(0, horizonEnd.dayNumber - start.dayNumber))
            for occurrence in SlotCalendar.occurrences(of: template, from: start, days: span) where occurrence.endsAt > now {
                wanted.append((id, record, occurrence))
            }
        }
        guard !wanted.isEmpty else { return [] }
        for chunk in stride(from: 0, to: wanted.count, by: 200) {
            var insert = sql.insert(into: "slots").columns("id", "template_id", "local_date", "starts_at", "ends_at", "capacity", "booked", "closed")
            for (id, record, occurrence) in wanted[chunk..<min(chunk + 200, wanted.count)] {
                insert = insert.values(SQLBind(Randomness.uuid()), SQLBind(id), SQLBind(occurrence.date.description), SQLBind(occurrence.startsAt),
                                       SQLBind(occurrence.endsAt), SQLBind(record.capacity), SQLBind(0), SQLBind(false))
            }
            try await insert.ignoringConflicts(with: ["template_id", "local_date"]).run()
        }
        let ids = Array(Set(wanted.map(\.id)))
        let dates = Array(Set(wanted.map { $0.occurrence.date.description }))
        let keys = Set(wanted.map { "\($0.id.uuidString)/\($0.occurrence.date.description)" })
        return try await SlotRecord.query(on: db).filter(\.$templateID ~~ ids).filter(\.$localDate ~~ dates).all()
            .filter { keys.contains("\($0.templateID.uuidString)/\($0.localDate)") }
            .sorted { ($0.startsAt, $0.endsAt) < ($1.startsAt, $1.endsAt) }
    }

    private func views(_ slots: [SlotRecord], templates: [SlotTemplateRecord], counters: [CounterID: CounterRecord] = [:], for userID: UserID,
                       now: Int64) async throws -> [SlotView] {
        guard !slots.isEmpty else { return [] }
        let byTemplate = Dictionary(uniqueKeysWithValues: try templates.map { (try $0.storedID, $0) })
        let ids = try slots.map { try $0.storedID }
        let (others, mine) = try await holds(on: ids, for: userID, now: now)
        return zip(ids, slots).compactMap { id, slot in
            guard let template = byTemplate[slot.templateID] else { return nil }
            let availability = SlotPolicy.availability(capacity: slot.capacity, booked: slot.booked, held: others[id] ?? 0,
                                                       startsAt: slot.startsAt, cutoffMinutes: template.cutoffMinutes,
                                                       closed: Self.closed(slot, template, counter: template.counterID.flatMap { counters[$0] }), now: now)
            return SlotView(slot: slot, template: template, availability: availability, heldUntil: mine[id])
        }
    }

    /// Live holds per slot: how many others hold each, and until when the caller holds theirs.
    private func holds(on slots: [SlotID], for userID: UserID, now: Int64) async throws -> (others: [SlotID: Int], mine: [SlotID: Int64]) {
        guard let sql = db.tracedSQL, !slots.isEmpty else { return ([:], [:]) }
        var others: [SlotID: Int] = [:], mine: [SlotID: Int64] = [:]
        for row in try await sql.select().columns("slot_id", "holder_id", "expires_at").from("slot_holds")
            .where("slot_id", .in, SQLBind.group(slots)).where("expires_at", .greaterThan, SQLBind(now)).all() {
            let slot = try row.decode(column: "slot_id", as: SlotID.self)
            if try row.decode(column: "holder_id", as: UserID.self) == userID {
                mine[slot] = try row.decode(column: "expires_at", as: Int64.self)
            } else {
                others[slot, default: 0] += 1
            }
        }
        return (others, mine)
    }

    /// Whether a slot is closed: by hand, its template switched off, or (a drop-off) its counter
    /// closed then, outside its hours or on a holiday.
    static func closed(_ slot: SlotRecord, _ template: SlotTemplateRecord, counter: CounterRecord?) -> Bool {
        if slot.closed || !template.active { return true }
        guard let counter else { return false }
        return !counter.active || !(LocalDate(slot.localDate).map { counter.hours.covers($0, from: template.startMinute, to: template.endMinute) } ?? false)
    }

    /// The slot and its template (`field`: the input naming it, else 404), if it may still be chosen
    /// (409 `slot_unavailable`: closed or past its cutoff).
    private func bookable(_ id: SlotID, field: String? = nil, now: Int64) async throws -> (SlotRecord, SlotTemplateRecord) {
        guard let slot = try await SlotRecord.find(id, on: db), let template = try await SlotTemplateRecord.find(slot.templateID, on: db) else {
            throw field.map { WaybillError.validation($0, "not_found") } ?? WaybillError.notFound
        }
        let counter = try await template.counterID.asyncMap { try await CounterRecord.find($0, on: db) } ?? nil
        if Self.closed(slot, template, counter: counter)
            || SlotPolicy.isPastCutoff(startsAt: slot.startsAt, cutoffMinutes: template.cutoffMinutes, now: now) {
            throw WaybillError(.conflict, .slotUnavailable, ErrorCode.slotUnavailable.english)
        }
        return (slot, template)
    }

    /// Keeps a seat for the caller for `SlotPolicy.holdMillis` while they finish their order;
    /// choosing another slot of the same kind lets the first one go. 409 `slot_full` when every
    /// seat is booked or held by others.
    func hold(_ id: SlotID, by me: Principal) async throws -> SlotView {
        try me.require(.placeOrders)
        if let wait = services.slotHoldLimiter.take(me.userID.uuidString) { throw WaybillError.tooManyRequests(retryAfter: wait) }
        let now = UnixTime.nowMillis
        let (slot, template) = try await bookable(id, now: now)
        let userID = me.userID
        let expires = now + SlotPolicy.holdMillis
        // How the slot looks to the holder: others' holds and the bookings count, their own does not.
        let availability = try await db.writeTransaction(services) { db -> SlotAvailability in
            guard let sql = db.tracedSQL else { throw WaybillError.notFound }
            // The slot's row is locked until commit: holds and bookings of this slot wait their turn.
            guard let locked = try await sql.update("slots").set(SQLIdentifier("booked"), to: SQLIdentifier("booked"))
                .where("id", .equal, SQLBind(id)).returning("booked", "capacity").first() else { throw WaybillError.notFound }
            let booked = try locked.decode(column: "booked", as: Int.self), capacity = try locked.decode(column: "capacity", as: Int.self)
            try await sql.delete(from: "slot_holds").where("slot_id", .equal, SQLBind(id)).where("expires_at", .lessThanOrEqual, SQLBind(now)).run()
            let others = try await sql.select().column(SQLFunction("count", args: SQLLiteral.all), as: "n").from("slot_holds")
                .where("slot_id", .equal, SQLBind(id)).where("holder_id", .notEqual, SQLBind(userID)).first()?.decode(column: "n", as: Int.self) ?? 0
            guard SlotPolicy.free(capacity: capacity, booked: booked, held: others) > 0 else {
                throw WaybillError(.conflict, .slotFull, ErrorCode.slotFull.english)
            }
            // One hold per kind of slot: the person's earlier choice goes (their own few holds are read).
            let held = try await sql.select().column("slot_id").from("slot_holds").where("holder_id", .equal, SQLBind(userID)).all()
                .map { try $0.decode(column: "slot_id", as: SlotID.self) }
            if !held.isEmpty {
                let sameKind = try await SlotRecord.query(on: db).filter(\.$id ~~ held)
                    .join(SlotTemplateRecord.self, on: \SlotRecord.$templateID == \SlotTemplateRecord.$id)
                    .filter(SlotTemplateRecord.self, \.$kind == template.kind).all().compactMap(\.id)
                if !sameKind.isEmpty {
                    try await sql.delete(from: "slot_holds").where("holder_id", .equal, SQLBind(userID)).where("slot_id", .in, SQLBind.group(sameKind)).run()
                }
            }
            try await sql.insert(into: "slot_holds").columns("slot_id", "holder_id", "expires_at")
                .values(SQLBind(id), SQLBind(userID), SQLBind(expires)).run()
            return SlotPolicy.availability(capacity: capacity, booked: booked, held: others, startsAt: slot.startsAt,
                                           cutoffMinutes: template.cutoffMinutes, closed: false, now: now)
        }
        return SlotView(slot: slot, template: template, availability: availability, heldUntil: expires)
    }

    /// Lets one's hold go.
    func release(_ id: SlotID, by me: Principal) async throws {
        try me.require(.placeOrders)
        let userID = me.userID
        try await db.writeTransaction(services) { db in
            guard let sql = db.tracedSQL else { return }
            try await sql.delete(from: "slot_holds").where("slot_id", .equal, SQLBind(id)).where("holder_id", .equal, SQLBind(userID)).run()
        }
    }

    // MARK: bookings

    /// Books a slot for a shipment's pickup or delivery (the slot's kind), or moves its booking of
    /// that kind there: the old seat is freed and the new one taken in one transaction, by a
    /// conditional update that fails when no seat is left (409 `slot_full`, nothing changed).
    func book(order orderID: OrderID, slot slotID: SlotID, by me: Principal) async throws -> (SlotBookingView, created: Bool) {
        let orders = Orders(services: services, db: db, logger: logger)
        let order = try await orders.visibleOrder(orderID, to: me)
        let now = UnixTime.nowMillis
        let (slot, template) = try await bookable(slotID, field: "slotId", now: now)
        let capacities = orders.capacities(of: me, for: order)
        let legs = try await Self.legKinds(of: orderID, on: db)
        let legKind = legs.for(template.kind)
        guard SlotPolicy.mayBook(template.kind, as: capacities, status: order.status, legKind: legKind) else {
            throw SlotPolicy.mayBook(template.kind, as: capacities, status: .pending, legKind: legKind)
                ? WaybillError.wrongStatus(order.status, "This order is \(order.status.rawValue): its \(template.kind.rawValue) timeslot cannot change now.")
                : WaybillError.forbidden
        }
        if template.kind == .dropOff {
            // A drop-off slot is the shipment's own counter's.
            guard legs.dropOffCounter == template.counterID else { throw WaybillError.validation("slotId", "wrong_counter") }
        } else {
            let place = template.kind == .pickup ? order.pickup : order.dropoff
            guard SlotPolicy.covers(zone: template.zone, postalCode: place.postalCode) else { throw WaybillError.validation("slotId", "wrong_zone") }
        }
        let userID = me.userID
        let kind = template.kind
        do {
            // The booking, and whether it is new (false: the shipment had this slot already).
            let (booking, isNew) = try await db.writeTransaction(services) { db -> (SlotBookingRecord, Bool) in
                let live = try await SlotBookingRecord.query(on: db).filter(\.$orderID == orderID).filter(\.$kind == kind)
                    .filter(\.$status ~~ SlotBookingStatus.live).first()
                if let live, live.slotID == slotID { return (live, false) }
                if let live { try await Self.setStatus(live, .cancelled, by: userID, reason: nil, on: db) }
                return (try await Self.bookWithin(order, slot: slot, template: template, by: userID, now: now, on: db), true)
            }
            if !isNew { return (try await view(booking), false) }
            return (SlotBookingView(booking: booking, slot: slot, template: template, reference: order.reference), true)
        } catch where Conversations.isUniqueViolation(error) {
            // Two bookings of the same shipment's slot at once: the other one won.
            throw WaybillError(.conflict, .conflict, "This shipment's timeslot changed meanwhile; look again.")
        }
    }

    /// A shipment's legs as slots and counters need them, read once: each leg's kind and counter, in
    /// order. A slot is for the first leg (a pickup, a drop-off) or the last (a delivery).
    struct LegKinds: Sendable {
        var kinds: [LegKind]
        var counters: [String?]
        func `for`(_ kind: SlotKind) -> LegKind { SlotPolicy.leg(for: kind, in: kinds) ?? .fleet }
        /// The counter the sender drops the parcel at, if the first leg is one.
        var dropOffCounter: CounterID? {
            guard kinds.first == .counter else { return nil }
            return counters.first.flatMap { $0.flatMap(UUID.init(uuidString:)) }.map(CounterID.init(rawValue:))
        }
    }

    static func legKinds(of order: OrderID, on db: any Database) async throws -> LegKinds {
        let legs = try await Leg.query(on: db).filter(\.$orderID == order).sort(\.$position).all()
        return LegKinds(kinds: legs.map(\.kind), counters: legs.map(\.counterID))
    }

    /// The slots chosen with a new order, checked before it is stored (the order's addresses in
    /// their zones, not past their cutoff), to be booked in its transaction (`bookWithin`).
    func chosen(_ choices: [(field: String, kind: SlotKind, id: SlotID)], for order: Order, counters: CounterChoice) async throws -> [(SlotRecord, SlotTemplateRecord)] {
        let now = UnixTime.nowMillis
        var result: [(SlotRecord, SlotTemplateRecord)] = []
        for choice in choices {
            let (slot, template) = try await bookable(choice.id, field: choice.field, now: now)
            guard template.kind == choice.kind else { throw WaybillError.validation(choice.field, "wrong_kind") }
            // Pickups and deliveries are the fleet's, in the address's zone; a drop-off is at the chosen counter.
            guard SlotPolicy.leg(for: choice.kind, in: counters.legKinds) == SlotPolicy.legKind(of: choice.kind) else {
                throw WaybillError.validation(choice.field, "not_for_this_shipment")
            }
            if choice.kind == .dropOff {
                guard template.counterID?.rawValue.uuidString == counters.dropOffID else { throw WaybillError.validation(choice.field, "wrong_counter") }
            } else {
                let place = choice.kind == .pickup ? order.pickup : order.dropoff
                guard SlotPolicy.covers(zone: template.zone, postalCode: place.postalCode) else { throw WaybillError.validation(choice.field, "wrong_zone") }
            }
            result.append((slot, template))
        }
        return result
    }

    /// Books a slot for an order inside the caller's transaction: one conditional update of its seats
    /// (409 `slot_full`, the transaction rolls back), the booking, the booker's hold let go, and dispatch
    /// told when it waits for approval.
    @discardableResult
    static func bookWithin(_ order: Order, slot: SlotRecord, template: SlotTemplateRecord, by userID: UserID, now: Int64,
                           on db: any Database) async throws -> SlotBookingRecord {
        let slotID = try slot.storedID
        guard try await takeSeat(slotID, for: userID, now: now, on: db) else {
            throw WaybillError(.conflict, .slotFull, ErrorCode.slotFull.english)
        }
        if let sql = db.tracedSQL {
            try await sql.delete(from: "slot_holds").where("slot_id", .equal, SQLBind(slotID)).where("holder_id", .equal, SQLBind(userID)).run()
        }
        let booking = SlotBookingRecord()
        booking.id = .generated()
        booking.slotID = slotID
        booking.orderID = try order.storedID
        booking.kind = template.kind
        booking.status = template.requiresApproval ? .pending : .booked
        booking.bookedBy = userID
        booking.createdAt = now
        booking.updatedAt = now
        try await booking.create(on: db)
        if booking.status == .pending {
            try await Notifier.notify(try await Notifier.managers(on: db), .slotPending, order: order,
                                      body: "\(order.reference): a \(template.kind.rawValue) on \(slot.localDate) waits for your approval.", mail: false, on: db)
        }
        return booking
    }

    /// Takes one seat if one is free: `booked + others' live holds < capacity`, checked and counted
    /// by the database in one statement.
    static func takeSeat(_ id: SlotID, for userID: UserID, now: Int64, on db: any Database) async throws -> Bool {
        guard let sql = db.tracedSQL else { return false }
        let row = try await sql.raw("""
            UPDATE slots SET booked = booked + 1
            WHERE id = \(bind: id) AND closed = \(bind: false)
              AND booked + (SELECT COUNT(*) FROM slot_holds h WHERE h.slot_id = \(bind: id) AND h.expires_at > \(bind: now) AND h.holder_id <> \(bind: userID)) < capacity
            RETURNING booked
            """).first()
        return row != nil
    }

    /// Moves a booking on; its seat is given back when it leaves a seat-holding status for one that
    /// releases it (`SlotBookingStatus.releasesSeat`).
    static func setStatus(_ booking: SlotBookingRecord, _ status: SlotBookingStatus, by actor: UserID?, reason: String?,
                          on db: any Database) async throws {
        let freesSeat = booking.status.takesSeat && status.releasesSeat
        booking.status = status
        booking.reason = reason ?? booking.reason
        booking.decidedBy = actor
        booking.decidedAt = UnixTime.nowMillis
        booking.updatedAt = UnixTime.nowMillis
        try await booking.save(on: db)
        if freesSeat, let sql = db.tracedSQL {
            try await sql.raw("UPDATE slots SET booked = booked - 1 WHERE id = \(bind: booking.slotID) AND booked > 0").run()
        }
    }

    private func view(_ booking: SlotBookingRecord) async throws -> SlotBookingView {
        guard let view = try await Self.views([booking], references: true, on: db).first else { throw WaybillError.notFound }
        return view
    }

    private func views(_ bookings: [SlotBookingRecord]) async throws -> [SlotBookingView] {
        try await Self.views(bookings, references: true, on: db)
    }

    /// Bookings with their slots and templates (and the shipments' references when asked), a query per kind of row.
    static func views(_ bookings: [SlotBookingRecord], references withReferences: Bool, on db: any Database) async throws -> [SlotBookingView] {
        guard !bookings.isEmpty else { return [] }
        let slots = try await SlotRecord.query(on: db).filter(\.$id ~~ Array(Set(bookings.map(\.slotID)))).all()
        let slotsByID = Dictionary(uniqueKeysWithValues: try slots.map { (try $0.storedID, $0) })
        let templates = try await SlotTemplateRecord.query(on: db).filter(\.$id ~~ Array(Set(slots.map(\.templateID)))).all()
        let templatesByID = Dictionary(uniqueKeysWithValues: try templates.map { (try $0.storedID, $0) })
        var references: [OrderID: String] = [:]
        if withReferences {
            for order in try await Order.query(on: db).filter(\.$id ~~ Array(Set(bookings.map(\.orderID)))).all() { references[try order.storedID] = order.reference }
        }
        return bookings.compactMap { booking in
            guard let slot = slotsByID[booking.slotID], let template = templatesByID[slot.templateID] else { return nil }
            return SlotBookingView(booking: booking, slot: slot, template: template, reference: references[booking.orderID])
        }
    }

    /// The live (pending or booked) bookings of shipments the caller was already allowed to list
    /// (the driver's day, the board), per shipment, in slot order.
    static func live(for orders: [OrderID], on db: any Database) async throws -> [OrderID: [SlotBookingView]] {
        guard !orders.isEmpty else { return [:] }
        let bookings = try await SlotBookingRecord.query(on: db).filter(\.$orderID ~~ orders).filter(\.$status ~~ SlotBookingStatus.live).all()
        return Dictionary(grouping: try await views(bookings, references: false, on: db), by: \.booking.orderID)
            .mapValues { $0.sorted { $0.slot.startsAt < $1.slot.startsAt } }
    }

    /// A shipment's bookings, live and past, for whoever may see the shipment.
    func bookings(of orderID: OrderID, for me: Principal) async throws -> [SlotBookingView] {
        _ = try await Orders(services: services, db: db, logger: logger).visibleOrder(orderID, to: me)
        return try await views(try await SlotBookingRecord.query(on: db).filter(\.$orderID == orderID).sort(\.$createdAt).all())
    }

    /// Staff's list: bookings by status and local date, in time order (the day's visits).
    func bookings(status: SlotBookingStatus?, date: LocalDate?, by me: Principal) async throws -> [SlotBookingView] {
        guard SlotPolicy.isStaff(me.caller) else { throw WaybillError.forbidden }
        var query = SlotBookingRecord.query(on: db).join(SlotRecord.self, on: \SlotBookingRecord.$slotID == \SlotRecord.$id)
        if let status { query = query.filter(\.$status == status) }
        if let date { query = query.filter(SlotRecord.self, \.$localDate == date.description) }
        let bookings = try await query.sort(SlotRecord.self, \.$startsAt).limit(500).all()
        return try await views(bookings)
    }

    /// Approve, decline, cancel, complete or fail a booking (`SlotBookingMachine`); declining,
    /// cancelling free the seat; the customer is told of staff's answer.
    func decide(_ id: SlotBookingID, _ action: SlotBookingAction, reason: String?, by me: Principal) async throws -> SlotBookingView {
        guard let booking = try await SlotBookingRecord.find(id, on: db) else { throw WaybillError.notFound }
        let orders = Orders(services: services, db: db, logger: logger)
        let order = try await orders.visibleOrder(booking.orderID, to: me)
        guard let slot = try await SlotRecord.find(booking.slotID, on: db) else { throw WaybillError.notFound }
        let capacities = orders.capacities(of: me, for: order)
        let cleanReason = reason?.trimmingCharacters(in: .whitespacesAndNewlines)
        if let cleanReason, cleanReason.count > 500 { throw WaybillError.validation("reason", "too_long") }
        if [.decline, .fail].contains(action), cleanReason?.isEmpty ?? true { throw WaybillError.validation("reason", "required") }
        let owner = SlotPolicy.mayBook(booking.kind, as: capacities.subtracting([.manager]), status: order.status,
                                       legKind: try await Self.legKinds(of: booking.orderID, on: db).for(booking.kind))
        let now = UnixTime.nowMillis
        switch SlotBookingMachine.decide(action, from: booking.status, isStaff: SlotPolicy.isStaff(me.caller), isOwner: owner,
                                         slotStarted: now >= slot.startsAt) {
        case .failure(.forbidden): throw WaybillError.forbidden
        case .failure(.wrongStatus): throw WaybillError(.conflict, .invalidTransition, "This booking is \(booking.status.rawValue): it cannot be changed that way.")
        case .failure(.tooLate): throw WaybillError(.conflict, .slotUnavailable, "This timeslot has started: ask the staff to change it.")
        case .success(let status):
            let userID = me.userID
            try await db.writeTransaction(services) { db in
                try await Self.setStatus(booking, status, by: userID, reason: cleanReason, on: db)
                if action == .approve || action == .decline, let customer = try await User.find(order.customerID, on: db) {
                    let body = action == .approve
                        ? "Your \(booking.kind.rawValue) on \(slot.localDate) is confirmed."
                        : "Your \(booking.kind.rawValue) on \(slot.localDate) was declined: \(cleanReason ?? ""). Choose another timeslot."
                    try await Notifier.notify([customer], action == .approve ? .slotApproved : .slotDeclined, order: order, body: body, on: db)
                }
            }
            return try await view(booking)
        }
    }

    // MARK: following the shipment

    /// A cancelled shipment frees its seats; a pickup or delivery done completes its booking.
    static func handle(_ event: DomainEvent, on db: any Database) async throws {
        guard case .shipment(let order, let fact) = event else { return }
        let orderID = order.id
        let change: (kinds: [SlotKind], to: SlotBookingStatus)
        switch fact {
        case .cancelled, .checkoutExpired: change = ([.pickup, .delivery, .dropOff], .cancelled)
        case .pickedUp: change = ([.pickup], .completed)
        case .atCounter(_, let collection) where !collection: change = ([.dropOff], .completed)
        case .delivered: change = ([.delivery], .completed)
        default: return
        }
        let live = try await SlotBookingRecord.query(on: db).filter(\.$orderID == orderID).filter(\.$kind ~~ change.kinds)
            .filter(\.$status ~~ SlotBookingStatus.live).all()
        for booking in live {
            try await setStatus(booking, change.to, by: nil, reason: nil, on: db)
        }
    }
}
