import Fluent
import Foundation
import SQLKit
import Vapor
import WaybillCore

/// A parcel as a counter's staff see it at their desk.
struct CounterParcel: Sendable {
    enum Stage: String, Sendable, CaseIterable {
        /// The sender will bring it (booked drop-off slot or not).
        case dropOffExpected = "drop_off_expected"
        /// A driver is bringing it for the receiver to collect.
        case arriving
        /// Here, waiting for the driver who takes it on.
        case waitingForDriver = "waiting_for_driver"
        /// Here, waiting for its receiver.
        case waitingForReceiver = "waiting_for_receiver"
        /// It left the counter (collected by the driver or the receiver).
        case done
    }

    var order: Order
    var stage: Stage
    /// The booked drop-off slot, when there is one: its start and end (Unix ms).
    var slot: (start: Int64, end: Int64, status: SlotBookingStatus)?
    /// That booking (its conversation is between the customer and the counter's staff).
    var bookingID: SlotBookingID?
    /// When it came in, if it did.
    var checkedInAt: Int64?
}

/// A counter's day: the booked drop-offs of a local date in time order, then what is here or on
/// its way.
struct CounterDay: Sendable {
    var counter: CounterRecord
    var date: LocalDate
    var booked: [CounterParcel]
    var here: [CounterParcel]
    var expected: [CounterParcel]
    /// The viewer works at this counter (admins and dispatch only look).
    var atDesk = false
}

/// Counters' desks (issue "Counters, timeslots and QR hand-overs", item 1): the staff check a parcel
/// in by scanning its label or typing its reference (with a photo if they take one): dropped off by
/// its sender, or brought by a driver for its receiver; and hand it to its receiver against the
/// receiver's code. The rules are `CounterDesk` and `ShipmentRoute` in WaybillCore.
struct CounterDesks: WaybillService {
    let services: WaybillServices
    let db: any Database
    let logger: Logger

    /// The counter if the caller is its staff (others: 403; no such counter: 404).
    func counter(_ id: CounterID, for me: Principal) async throws -> CounterRecord {
        try await counter(id, for: me, seeing: false).record
    }

    /// The counter if the caller may work at it, or with `seeing` only look at its day (admins and
    /// dispatch too), and whether they work there.
    private func counter(_ id: CounterID, for me: Principal, seeing: Bool) async throws -> (record: CounterRecord, atDesk: Bool) {
        guard let record = try await CounterRecord.find(id, on: db) else { throw WaybillError.notFound }
        let named = try await Self.isNamed(me.userID, for: id, on: db)
        let atDesk = CounterDesk.mayWorkAt(me.caller, namedFor: named)
        guard atDesk || seeing && CounterDesk.maySeeDay(me.caller, namedFor: named) else { throw WaybillError.forbidden }
        return (record, atDesk)
    }

    static func isNamed(_ user: UserID, for counter: CounterID, on db: any Database) async throws -> Bool {
        guard let sql = db.tracedSQL else { return false }
        return try await sql.select().column("user_id").from("counter_staff")
            .where("counter_id", .equal, SQLBind(counter)).where("user_id", .equal, SQLBind(user)).first() != nil
    }

    /// The counters someone works at, by name.
    func myCounters(_ me: Principal) async throws -> [CounterRecord] {
        guard me.caller.may(.receiveAtCounter), let sql = db.tracedSQL else { return [] }
        let ids = try await sql.select().column("counter_id").from("counter_staff").where("user_id", .equal, SQLBind(me.userID)).all()
            .map { try $0.decode(column: "counter_id", as: CounterID.self) }
        guard !ids.isEmpty else { return [] }
        return try await CounterRecord.query(on: db).filter(\.$id ~~ ids).sort(\.$name).all()
    }

    /// The caller's counter where a scanned label's parcel is expected or held now (a phone's camera
    /// opened the label: their desk opens on it); nil when they work at none of its counters.
    func desk(for scanned: String, by me: Principal) async throws -> CounterID? {
        guard me.caller.may(.receiveAtCounter), let token = HandOverPolicy.token(fromScan: scanned),
              let order = try await Order.query(on: db).filter(\.$handoverToken == token).first() else { return nil }
        let mine = Set(try await myCounters(me).compactMap { $0.id?.uuidString })
        let orderID = try order.storedID
        let legs = try await Leg.query(on: db).filter(\.$orderID == orderID).filter(\.$kind == .counter).sort(\.$position).all()
        return legs.first { !$0.status.isFinal && mine.contains($0.counterID ?? "") }
            .flatMap { $0.counterID.flatMap(UUID.init(uuidString:)) }.map(CounterID.init(rawValue:))
    }

    /// The shipment a scanned label or a typed reference names (404, logged, when none).
    private func find(code: String?, reference: String?, by me: Principal, step: String) async throws -> (Order, token: String?, typed: String?) {
        if let wait = services.scanLimiter.take(me.userID.uuidString) { throw WaybillError.tooManyRequests(retryAfter: wait) }
        let handovers = Handovers(services: services, db: db, logger: logger)
        if let code = code?.trimmingCharacters(in: .whitespacesAndNewlines), !code.isEmpty {
            guard let token = HandOverPolicy.token(fromScan: code),
                  let order = try await Order.query(on: db).filter(\.$handoverToken == token).first() else {
                try await handovers.record(nil, step: step, .wrongToken, by: me)
                throw WaybillError.notFound
            }
            return (order, token, nil)
        }
        guard let reference, !reference.trimmingCharacters(in: .whitespaces).isEmpty else { throw WaybillError.validation("code", "required") }
        guard reference.count <= 40, let typed = OrderReference.normalized(reference) else { throw WaybillError.validation("reference", "invalid") }
        guard let order = try await Order.query(on: db).filter(\.$reference == typed).first() else {
            try await handovers.record(nil, step: step, .wrongToken, by: me)
            throw WaybillError.notFound
        }
        return (order, nil, typed)
    }

    /// A refused desk step as the person's error; a scan of a parcel that is not for this counter,
    /// or a second scan of one, is kept in the hand-over log.
    private func refusal(_ refused: ShipmentStore.Refused, order: OrderID, step: String, by me: Principal) async throws -> WaybillError {
        let handovers = Handovers(services: services, db: db, logger: logger)
        let delivery = step == HandOverKind.delivery.rawValue
        switch refused.refusal {
        case .desk(.notHere):
            try await handovers.record(order, step: step, .notAllowed, by: me)
            return WaybillError(.conflict, .notForThisCounter, ErrorCode.notForThisCounter.english)
        case .desk(.alreadyDone):
            try await handovers.record(order, step: step, .replayed, by: me)
            return WaybillError(.conflict, .invalidTransition, delivery ? "This parcel was handed out already." : "This parcel is checked in already.")
        case .desk(.notArrived):
            return WaybillError(.conflict, .notAtCounter, delivery
                ? "This parcel is not at the counter yet." : "The driver bringing this parcel has not picked it up yet.")
        case .desk(.notPaid):
            return WaybillError(.conflict, .invalidTransition, "This shipment is not paid yet: it cannot be checked in.")
        case .desk(.cancelled):
            return WaybillError(.conflict, .invalidTransition, "This shipment was cancelled.")
        case .wrongStatus:
            return WaybillError(.conflict, .invalidTransition, "This parcel changed meanwhile; scan it again.")
        case .missingProof(let kind):
            return WaybillError.validation("code", "missing_\(kind.rawValue)")
        case .counterWait(let wait):
            return WaybillError.counterWait(wait)
        case .notFound:
            return WaybillError.notFound
        case .forbidden:
            return WaybillError.forbidden
        }
    }

    /// Checks a parcel in at the counter: dropped off by its sender (its drop-off slot completed), or
    /// brought by a driver (their leg ends here; the receiver is told where to collect it, with their
    /// code). One transaction; a second scan of the same parcel is refused as a replay.
    func checkIn(at counterID: CounterID, code: String?, reference: String?, photo: Orders.Upload?, by me: Principal) async throws -> CounterParcel {
        let counter = try await counter(counterID, for: me)
        let step = "counter_check_in"
        let (found, token, typed) = try await find(code: code, reference: reference, by: me, step: step)
        let id = try found.storedID
        let orders = Orders(services: services, db: db, logger: logger)
        let image = try await photo.asyncMap {
            try await orders.sanitize($0, allowed: [.png, .jpeg], maxBytes: UploadLimits.photoBytes, maxPixels: UploadLimits.photoPixels)
        }
        let store = services.files
        let name = try await image.asyncMap { try await store.save($0.bytes, extension: $0.format.fileExtension) }
        let events = services.events
        let codes = services.codes
        let actor = me.userID
        let here = counterID.rawValue.uuidString
        let file = image.flatMap { image in name.map { Orders.fileRecord(of: id, kind: .counterPhoto, image: image, name: $0, by: actor) } }
        let proof = HandOverProof(photoFileID: file?.id, qrCode: token, typedReference: typed)
        do {
            return try await desk(order: id, at: counterID, step: step, by: me) {
                try await db.writeTransaction(services) { db in
                    try await ShipmentStore.apply(.checkIn(counter: here), to: id, by: actor, actor: { _ in ShipmentActor([], counters: [here]) },
                                                  proof: proof, events: events, on: db) { order, decision, db in
                        try await file?.create(on: db)
                        try await OrderEvent(orderID: id, type: "counter_check_in", status: nil, actorID: actor, note: counter.name,
                                             at: order.updatedAt).insert(on: db)
                        // Collected here: the receiver learns where, with their code (sealed since the pickup).
                        let collection = decision.handOver?.leg == decision.next.legs.count - 1
                        if collection, let email = order.recipient.email,
                           let sealed = order.recipientCodeSealed, let receiverCode = codes.unsealRecipientCode(sealed, orderID: id) {
                            try await Outbox.enqueue(MailTemplates.readyAtCounter(to: MailAddress(name: order.recipient.name, address: email),
                                                                                 reference: order.reference, counter: counter, code: receiverCode), on: db)
                        }
                        return .atCounter(counter: counter.name, collection: collection)
                    }
                }
            }
        } catch {
            // A refusal lets the photo go, with every other failure.
            if let name { await store.delete(name) }
            throw error
        }
    }

    /// Hands a parcel to its receiver at the counter: the label scanned (or its reference typed) and
    /// the receiver's code (five tries, then locked), with the name of who collected it. The shipment
    /// is delivered.
    func handOut(at counterID: CounterID, code: String?, reference: String?, receiverCode: String, collectedBy name: String,
                 by me: Principal) async throws -> CounterParcel {
        let counter = try await counter(counterID, for: me)
        let step = HandOverKind.delivery.rawValue
        let (found, token, typed) = try await find(code: code, reference: reference, by: me, step: step)
        let id = try found.storedID
        let collector = name.trimmingCharacters(in: .whitespacesAndNewlines)
        var errors = FieldErrors()
        Validation.text(collector, field: "collectedBy", maxLength: Validation.maxNameLength, into: &errors)
        if !errors.isEmpty { throw WaybillError.validation(errors) }
        let here = counterID.rawValue.uuidString
        let actor = ShipmentActor([], counters: [here])
        let proof = HandOverProof(signedBy: collector, codeChecked: true, qrCode: token, typedReference: typed)
        // Asked before the receiver's code is tried, so a parcel that is not here spends none of its tries.
        let legs = try await Leg.query(on: db).filter(\.$orderID == id).sort(\.$position).all()
        if case .failure(let refusal) = ShipmentRules.decide(.handOut(counter: here), on: ShipmentStore.state(of: found, id: id, legs: legs.map(\.rule)), by: actor,
                                                             proof: proof.kinds) {
            throw try await self.refusal(ShipmentStore.Refused(refusal: refusal, status: found.status), order: id, step: step, by: me)
        }
        let orders = Orders(services: services, db: db, logger: logger)
        try await orders.checkRecipientCode(HandOverCodePolicy.normalized(receiverCode) ?? receiverCode, order: found)
        let events = services.events
        let person = me.userID
        return try await desk(order: id, at: counterID, step: step, by: me) {
            try await db.writeTransaction(services) { db in
                try await ShipmentStore.apply(.handOut(counter: here), to: id, by: person, actor: { _ in actor },
                                              proof: proof, events: events, on: db) { order, _, db in
                    try await OrderEvent(orderID: id, type: "delivered", status: .delivered, actorID: person,
                                         note: "Collected at \(counter.name) by \(collector)", at: order.updatedAt).insert(on: db)
                    return .delivered(signedBy: collector)
                }
            }
        }
    }

    /// A desk's step (its transaction, `step`): the scan kept as accepted and the parcel as the desk
    /// now sees it, or the shipment's refusal (kept and logged when it is one) as the person's error.
    private func desk(order id: OrderID, at counterID: CounterID, step: String, by me: Principal,
                      _ body: () async throws -> Order) async throws -> CounterParcel {
        let order: Order
        do {
            order = try await body()
        } catch let refused as ShipmentStore.Refused {
            throw try await refusal(refused, order: id, step: step, by: me)
        }
        try await Handovers(services: services, db: db, logger: logger).record(id, step: step, .accepted, by: me)
        return try await parcel(order, at: counterID)
    }

    /// One parcel as the desk sees it.
    func parcel(_ order: Order, at counterID: CounterID) async throws -> CounterParcel {
        try await parcels([order], at: counterID).first ?? CounterParcel(order: order, stage: .done)
    }

    /// The desk's view of these shipments at this counter (three queries whatever their number).
    func parcels(_ orders: [Order], at counterID: CounterID) async throws -> [CounterParcel] {
        let ids = orders.compactMap(\.id)
        guard !ids.isEmpty else { return [] }
        let legs = try await Leg.query(on: db).filter(\.$orderID ~~ ids).sort(\.$position).all()
        let byOrder = Dictionary(grouping: legs, by: \.orderID)
        let checkIns = try await HandOver.query(on: db).filter(\.$orderID ~~ ids).filter(\.$kind ~~ [.counterDropOff, .legToLeg]).all()
        let bookings = try await SlotBookingRecord.query(on: db).filter(\.$orderID ~~ ids).filter(\.$kind == .dropOff)
            .filter(\.$status ~~ SlotBookingStatus.atDesk).all()
        let slots = Dictionary(uniqueKeysWithValues: try await SlotRecord.query(on: db).filter(\.$id ~~ bookings.map(\.slotID)).all().map { (try $0.storedID, $0) })
        let here = counterID.rawValue.uuidString
        return try orders.compactMap { order in
            let legs = byOrder[try order.storedID] ?? []
            guard let leg = legs.first(where: { $0.kind == .counter && $0.counterID == here }) else { return nil }
            let last = leg.position == legs.count - 1
            let stage: CounterParcel.Stage = switch leg.status {
            case .open: last ? .arriving : .dropOffExpected
            case .held: last ? .waitingForReceiver : .waitingForDriver
            default: .done
            }
            let booking = bookings.first { $0.orderID == order.id }
            let slot = booking.flatMap { b in slots[b.slotID].map { (start: $0.startsAt, end: $0.endsAt, status: b.status) } }
            let checkedIn = checkIns.first { $0.orderID == order.id && $0.legPosition == leg.position }?.at
            return CounterParcel(order: order, stage: stage, slot: slot, bookingID: booking?.id, checkedInAt: checkedIn)
        }
    }

    /// The counter's day: the drop-offs booked on `date` (its local date) in time order; the parcels
    /// here; the parcels expected (dropped off without a slot that day, or brought by a driver).
    func day(_ counterID: CounterID, date: LocalDate?, for me: Principal) async throws -> CounterDay {
        let (counter, atDesk) = try await counter(counterID, for: me, seeing: true)
        let today = date ?? LocalDate.at(UnixTime.nowMillis, in: counter.zone)
        let open = try await Leg.query(on: db).filter(\.$counterID == counterID.rawValue.uuidString).filter(\.$status ~~ [.open, .held])
            .limit(1000).all()
        let orders = try await Order.query(on: db).filter(\.$id ~~ Set(open.map(\.orderID))).filter(\.$status != .awaitingPayment).all()
        // The day's drop-offs, including those done already (completed bookings).
        let templates = try await SlotTemplateRecord.query(on: db).filter(\.$counterID == counterID).all()
        let daySlots = try await SlotRecord.query(on: db).filter(\.$templateID ~~ templates.compactMap(\.id)).filter(\.$localDate == today.description).all()
        let dayBookings = try await SlotBookingRecord.query(on: db).filter(\.$slotID ~~ daySlots.compactMap(\.id))
            .filter(\.$status ~~ SlotBookingStatus.atDesk).all()
        let missing = Set(dayBookings.map(\.orderID)).subtracting(orders.compactMap(\.id))
        let done = missing.isEmpty ? [] : try await Order.query(on: db).filter(\.$id ~~ missing).all()
        let all = try await parcels(orders + done, at: counterID)
        let bookedIDs = Set(dayBookings.map(\.orderID))
        let booked = try all.filter { bookedIDs.contains(try $0.order.storedID) }.sorted { ($0.slot?.start ?? 0, $0.order.reference) < ($1.slot?.start ?? 0, $1.order.reference) }
        let rest = try all.filter { !bookedIDs.contains(try $0.order.storedID) }
        return CounterDay(counter: counter, date: today,
                          booked: booked,
                          here: rest.filter { $0.stage == .waitingForDriver || $0.stage == .waitingForReceiver }.sorted { ($0.checkedInAt ?? 0) < ($1.checkedInAt ?? 0) },
                          expected: rest.filter { $0.stage == .dropOffExpected || $0.stage == .arriving }.sorted { $0.order.createdAt < $1.order.createdAt },
                          atDesk: atDesk)
    }
}

extension MailTemplates {
    static func readyAtCounter(to recipient: MailAddress, reference: String, counter: CounterRecord, code: String) -> MailMessage {
        let place = "\(counter.name), \(counter.address.singleLine)"
        return MailMessage(to: recipient, subject: "Your parcel \(reference) is ready to collect", text: """
            Hello,

            Your parcel (\(reference)) is waiting for you at \(place). Give the staff this code when you collect it: \(code)

            Bonjour,
            Votre colis (\(reference)) vous attend à \(place). Donnez ce code au personnel pour le retirer : \(code)
            """)
    }
}

extension WaybillError {
    /// A driver's step that waits for a counter (409).
    static func counterWait(_ wait: CounterWait) -> WaybillError {
        switch wait {
        case .notAtCounterYet:
            WaybillError(.conflict, .notAtCounter, "The parcel is not at the counter yet: it can be collected once the counter has checked it in.")
        case .counterChecksIn:
            WaybillError(.conflict, .invalidTransition, "This parcel goes to a counter: its staff check it in when you bring it.")
        }
    }
}
