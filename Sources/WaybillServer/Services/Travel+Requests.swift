import Crypto
import Fluent
import SQLKit
import Vapor
import WaybillCore

/// Requests for a place on a trip (issue "Travellers", items 4–6). Once the traveller accepts, the
/// request becomes a shipment: an order with one traveller leg, its carrier the traveller
/// (`driver_id`), the receiver's code required at delivery. From there the shipment's own machinery
/// takes over: the sender pays through the same checkout as courier orders, the traveller picks up
/// and delivers (`Orders.pickup`, `Orders.deliverWithCode`), cancellation refunds, and the ledger
/// records the money. Subscribers keep the request and the trip's room in step with the shipment.
extension Travel {
    var orders: Orders { Orders(services: services, db: db, logger: logger) }

    /// A request with what its answers need: the trip and the people.
    struct RequestView: Sendable {
        let request: TripRequestRecord
        let trip: TripRecord
        let shipment: Order?
    }

    // MARK: sending

    func sendRequest(_ draft: TripRequestDraft, by me: Principal) async throws -> TripRequestRecord {
        try me.require(.placeOrders)
        try await sweep()
        // Each request tells a traveller (mail, push): a budget per sender and hour.
        let limit = services.config.ordersPerCustomerPerHour
        if let wait = try await db.writeTransaction(services, { db in
            try await Throttle(db).take("trip-requests:" + me.userID.uuidString, limit: limit, window: 3600)
        }) {
            throw WaybillError(.tooManyRequests, .tooManyOrders, "You have sent \(limit) requests in the last hour; try again later.",
                               retryAfter: Int(clamping: wait))
        }
        let tariff = try await tariff()
        let attestation = String(decoding: try JSONEncoder.sorted.encode(tariff.prohibitedItems), as: UTF8.self)
        let answerHours = services.config.tripRequestAnswerHours
        return try await transaction { db in
            try await Self.lockTrip(draft.trip, on: db)
            guard let trip = try await TripRecord.find(draft.trip, on: db),
                  TripPolicy.maySee(traveller: trip.travellerID, status: trip.status(at: UnixTime.nowMillis), hidden: trip.hiddenAt != nil, by: me.caller) else {
                throw WaybillError.notFound
            }
            let now = UnixTime.nowMillis
            let (clean, price): (TripRequestDraft, TravelPrice)
            switch draft.validated(trip: try trip.candidate, tripStatus: trip.status(at: now), by: me.userID, tariff: tariff) {
            case .success(let ok): (clean, price) = ok
            case .failure(.fields(let e)): throw WaybillError.validation(e.errors)
            case .failure(.refused(let refusal)): throw Self.refusal(refusal)
            }
            let tripID = try trip.storedID
            let open = try await TripRequestRecord.query(on: db).filter(\.$tripID == tripID).filter(\.$senderID == me.userID)
                .filter(\.$status == .requested).count()
            if open > 0 { throw WaybillError(.conflict, .conflict, "You already have a request waiting on this trip.") }
            let r = TripRequestRecord()
            r.id = .random()
            r.tripID = tripID
            r.senderID = me.userID
            r.travellerID = trip.travellerID
            r.status = .requested
            r.category = clean.category
            r.grams = clean.grams
            r.declaredValue = clean.declaredValue
            r.description = clean.description
            r.receiverName = clean.receiver.name
            r.receiverEmail = clean.receiver.email
            r.receiverPhone = clean.receiver.phone
            r.paymentMethod = clean.paymentMethod
            r.priceTotal = price.total.amount
            r.travellerShare = price.travellerShare.amount
            r.platformFee = price.platformFee.amount
            r.currency = price.total.currency
            r.attestation = attestation
            r.attestedAt = now
            r.answerBy = TripRequestDeadlines.answerBy(sentAt: now, hours: answerHours, departsFrom: trip.departsFrom)
            r.createdAt = now
            r.updatedAt = now
            try await r.create(on: db)
            try await services.events.record(.tripRequestChanged(try TripRequestFacts(r), .created), on: db)
            try await Self.notify(r.travellerID, .tripRequested,
                                  body: "\(me.user.firstName) asks you to carry \(Self.grams(r.grams)) (\(r.category)) on your trip of \(trip.departureDate), for \(Money(r.travellerShare, r.currency)).",
                                  on: db)
            return r
        }
    }

    /// The parcel's photo (JPEG or PNG, sanitized), by its sender until pickup.
    func setRequestPhoto(_ id: TripRequestID, _ upload: Orders.Upload, by me: Principal) async throws -> TripRequestRecord {
        let view = try await request(id, for: me)
        guard view.request.senderID == me.userID else { throw WaybillError.forbidden }
        guard view.request.status == .requested || view.request.status == .accepted && (view.shipment?.status.parcelWithSender ?? false) else {
            throw WaybillError(.conflict, .invalidTransition, "The photo can be changed until the parcel is picked up.")
        }
        let image = try await orders.sanitize(upload, allowed: [.png, .jpeg], maxBytes: UploadLimits.photoBytes, maxPixels: UploadLimits.photoPixels)
        let name = try await services.files.save(image.bytes, extension: image.format.fileExtension)
        let previous = view.request.photoName
        do {
            let saved = try await transaction { db -> TripRequestRecord in
                guard let r = try await TripRequestRecord.find(id, on: db) else { throw WaybillError.notFound }
                r.photoName = name
                r.photoType = image.format.contentType
                r.photoWidth = image.width
                r.photoHeight = image.height
                r.photoBytes = image.bytes.count
                r.updatedAt = UnixTime.nowMillis
                try await r.save(on: db)
                return r
            }
            if let previous { await services.files.delete(previous) }
            return saved
        } catch {
            await services.files.delete(name)
            throw error
        }
    }

    func requestPhoto(_ id: TripRequestID, for me: Principal) async throws -> (bytes: [UInt8], contentType: String) {
        let view = try await request(id, for: me)
        guard let name = view.request.photoName, let type = view.request.photoType else { throw WaybillError.notFound }
        guard let data = try? await services.files.read(name) else { throw WaybillError.notFound }
        return (Array(data), type)
    }

    // MARK: reading

    /// The request if the caller is its sender or traveller, or staff; else 404.
    func request(_ id: TripRequestID, for me: Principal) async throws -> RequestView {
        try await sweep()
        guard let r = try await TripRequestRecord.find(id, on: db),
              r.senderID == me.userID || r.travellerID == me.userID || me.caller.may(.dispatch) || me.caller.capabilities.contains(.admin),
              let trip = try await TripRecord.find(r.tripID, on: db) else {
            throw WaybillError.notFound
        }
        let shipment = try await r.shipmentID.asyncMap { try await Order.find($0, on: db) } ?? nil
        return RequestView(request: r, trip: trip, shipment: shipment)
    }

    /// What the ledger says the traveller was paid for the request's shipment, for those who may see
    /// it (`TripPolicy.maySeePayouts`: the traveller and dispatch); nil before any payout.
    func paidOut(_ view: RequestView, for me: Principal) async throws -> Money? {
        guard let shipment = view.request.shipmentID, TripPolicy.maySeePayouts(traveller: view.request.travellerID, by: me.caller) else { return nil }
        let entries = try await LedgerRecord.query(on: db).filter(\.$shipmentID == shipment).filter(\.$kind == .payout).all()
        return entries.isEmpty ? nil : Money(entries.reduce(0) { $0 + $1.amount }, view.request.currency)
    }

    /// Requests the caller sent, or received on their trips (newest first, up to 100).
    func requests(received: Bool, trip: TripID? = nil, for me: Principal) async throws -> [RequestView] {
        try await sweep()
        var query = TripRequestRecord.query(on: db)
        query = received ? query.filter(\.$travellerID == me.userID) : query.filter(\.$senderID == me.userID)
        if let trip { query = query.filter(\.$tripID == trip) }
        let list = try await query.sort(\.$createdAt, .descending).limit(100).all()
        let trips = try await TripRecord.query(on: db).filter(\.$id ~~ Array(Set(list.map(\.tripID)))).all()
        let shipmentIDs = list.compactMap(\.shipmentID)
        let shipments = shipmentIDs.isEmpty ? [] : try await Order.query(on: db).filter(\.$id ~~ shipmentIDs).all()
        let tripByID = Dictionary(uniqueKeysWithValues: try trips.map { (try $0.storedID, $0) })
        let shipmentByID = Dictionary(uniqueKeysWithValues: try shipments.map { (try $0.storedID, $0) })
        return list.compactMap { r in tripByID[r.tripID].map { RequestView(request: r, trip: $0, shipment: r.shipmentID.flatMap { shipmentByID[$0] }) } }
    }

    // MARK: answering

    /// The traveller accepts (the room is taken at once, under the trip's lock; the shipment is
    /// created with its checkout) or rejects.
    func answer(_ id: TripRequestID, accept: Bool, reason: String?, by me: Principal) async throws -> RequestView {
        try await sweep()
        guard let existing = try await TripRequestRecord.find(id, on: db),
              existing.senderID == me.userID || existing.travellerID == me.userID else { throw WaybillError.notFound }
        let roles = TripRequestMachine.roles(of: me.userID, sender: existing.senderID, traveller: existing.travellerID)
        if case .forbidden = TripRequestMachine.decide(accept ? .accept : .reject, from: existing.status, as: roles) { throw WaybillError.forbidden }
        guard TripPolicy.mayPost(me.caller) else { throw me.user.restriction != nil ? WaybillError.accountSuspended : WaybillError.forbidden }
        let reason = reason?.trimmingCharacters(in: .whitespacesAndNewlines).prefix(500).description
        if accept, !TripPolicy.mayAcceptPaid(price: existing.priceTotal, payouts: me.user.payoutStatus) {
            throw WaybillError(.conflict, .payoutsNotReady,
                               "Set up your payouts (\(me.user.payoutStatus.rawValue) now) before accepting paid parcels: the sender pays when you accept.")
        }
        if !accept {
            return try await transition(id, .reject, roles: roles, announcing: .declined) { r, _, db in
                r.reason = reason?.isEmpty == false ? reason : nil
                try await Self.notify(r.senderID, .tripRequestRejected,
                                      body: "Your request was declined\(r.reason.map { ": \($0)" } ?? ""). Other trips may still take your parcel.", on: db)
            }
        }
        // Accepting: the shipment's checkout is opened before anything is written (if the provider
        // fails nothing changes; if the room is gone meanwhile, the unused checkout expires).
        guard let sender = try await User.find(existing.senderID, on: db), let trip = try await TripRecord.find(existing.tripID, on: db) else {
            throw WaybillError.notFound
        }
        let index = try await areas()
        let from = index[AreaID(trip.fromAreaID)], to = index[AreaID(trip.toAreaID)]
        let order = Self.shipment(for: existing, trip: trip, from: from, to: to, sandbox: services.payments.isSandbox)
        let leg = try Self.travellerLeg(for: order, trip: trip, from: from, to: to)
        ShipmentStore.place(order, legs: [leg])
        let orderID = try order.storedID
        let checkout = try await services.payments.createCheckout(CheckoutRequest(
            orderID: orderID, reference: order.reference, price: order.price, method: existing.paymentMethod, customerEmail: sender.email,
            successURL: services.config.publicURL + WebRoutes.paymentReturn(query: "session_id={CHECKOUT_SESSION_ID}"),
            cancelURL: services.config.publicURL + WebRoutes.paymentReturn(query: "order=\(orderID.uuidString)&cancelled=1")))
        order.checkoutSessionID = checkout.id
        order.checkoutURL = checkout.url
        let payMinutes = services.config.tripRequestPayMinutes
        return try await transition(id, .accept, roles: roles, announcing: .accepted) { r, trip, db in
            guard trip.status(at: UnixTime.nowMillis) == .open else { throw Self.refusal(.tripNotOpen(trip.status(at: UnixTime.nowMillis))) }
            // Two accepts cannot oversell: the trip's row is held, and the room is checked again here.
            guard trip.capacityGrams - trip.bookedGrams >= r.grams, trip.capacityParcels - trip.bookedParcels >= 1 else {
                throw Self.refusal(.noRoom)
            }
            trip.bookedGrams += r.grams
            trip.bookedParcels += 1
            trip.updatedAt = UnixTime.nowMillis
            try await trip.save(on: db)
            try await order.create(on: db)
            try await leg.create(on: db)
            try await OrderEvent(orderID: orderID, type: "created", status: order.status, actorID: me.userID,
                                 note: "Accepted by the traveller on their trip of \(trip.departureDate)").insert(on: db)
            if let name = r.photoName, let type = r.photoType {
                let file = OrderFile()
                file.id = .generated()
                file.orderID = orderID
                file.kind = .parcelPhoto
                file.contentType = type
                file.storageName = name
                file.byteCount = r.photoBytes ?? 0
                file.width = r.photoWidth ?? 0
                file.height = r.photoHeight ?? 0
                file.uploadedBy = r.senderID
                file.createdAt = UnixTime.nowMillis
                try await file.create(on: db)
            }
            r.shipmentID = order.id
            r.payBy = TripRequestDeadlines.payBy(acceptedAt: UnixTime.nowMillis, minutes: payMinutes, departsUntil: trip.departsUntil)
            try await Self.notify(r.senderID, .tripRequestAccepted, order: order,
                                  body: "\(me.user.firstName) will carry your parcel on \(trip.departureDate). Pay \(order.price) to confirm.", on: db)
        }
    }

    /// The sender withdraws a request not yet answered; an accepted one is cancelled with its
    /// shipment (refunded if paid), and the room goes back to the trip.
    func cancelRequest(_ id: TripRequestID, reason: String?, by me: Principal) async throws -> RequestView {
        let view = try await request(id, for: me)
        let r = view.request
        guard r.senderID == me.userID || r.travellerID == me.userID else { throw WaybillError.forbidden }
        if r.status == .accepted, let shipment = r.shipmentID {
            // Through the shipment: its state machine decides (the sender until pickup), the
            // refund follows, and the subscriber below frees the room.
            _ = try await orders.cancel(shipment, reason: reason ?? "Cancelled by the sender", by: me)
            return try await request(id, for: me)
        }
        let roles = TripRequestMachine.roles(of: me.userID, sender: r.senderID, traveller: r.travellerID)
        return try await transition(id, .cancel, roles: roles, announcing: .cancelled) { r, _, db in
            r.reason = reason
            try await Self.notify(r.travellerID, .tripRequestCancelled, body: "A sender withdrew their request for your trip.", on: db)
        }
    }

    // MARK: deadlines

    /// Requests nobody answered in time expire; accepted ones nobody paid in time lapse (their
    /// shipment is cancelled, which frees the room). Run before reading or changing requests, by
    /// any process: each change is a compare-and-set on the status, so two sweeps do it once.
    /// At most `limit` of each a sweep.
    func sweep(limit: Int = 100) async throws {
        let now = UnixTime.nowMillis
        let overdue = try await TripRequestRecord.query(on: db).filter(\.$status == .requested).filter(\.$answerBy <= now).limit(limit).all()
        for r in overdue {
            _ = try? await transition(try r.storedID, .expire, roles: [.system], announcing: .expired) { r, _, db in
                try await Self.notify(r.senderID, .tripRequestExpired, body: "Your request got no answer in time. Other trips may still take your parcel.", on: db)
            }
        }
        // Paid requests stay `accepted` with their `pay_by` passed for ever: only those whose shipment
        // still awaits its payment are asked for, in SQL, so however many paid ones exist the unpaid
        // ones lapse, and a sweep reads nothing it does not change (second audit, finding 6).
        guard let sql = db.tracedSQL else { return }
        let unpaid = try await sql.raw("""
            SELECT r.shipment_id FROM trip_requests r JOIN orders o ON o.id = r.shipment_id
            WHERE r.status = \(bind: TripRequestStatus.accepted.rawValue) AND r.pay_by <= \(bind: now)
              AND o.status = \(bind: OrderStatus.awaitingPayment.rawValue)
            ORDER BY r.pay_by LIMIT \(bind: limit)
            """).all().map { try $0.decode(column: "shipment_id", as: OrderID.self) }
        for shipment in unpaid {
            // Read again: paid or cancelled meanwhile, it is left alone.
            guard let order = try await Order.find(shipment, on: db), order.status == .awaitingPayment else { continue }
            do { _ = try await orders.transition(shipment, .cancel, by: nil) { order, db in
                order.cancellationReason = "Not paid in time"
                order.paymentStatus = .void
                try await OrderEvent(orderID: shipment, type: "cancelled", status: .cancelled, actorID: nil, note: order.cancellationReason).insert(on: db)
                return .checkoutExpired
            } } catch { logger.warning("LAPSE \(error)") }
        }
    }

    // MARK: the traveller's steps

    /// The traveller has the parcel (checked against the sender's photo): the receiver's code is
    /// mailed to them now (`Orders.pickup`).
    func pickUp(_ id: TripRequestID, by me: Principal) async throws -> RequestView {
        let view = try await request(id, for: me)
        guard view.request.travellerID == me.userID, let shipment = view.request.shipmentID else { throw WaybillError.forbidden }
        _ = try await orders.pickup(shipment, cashCollected: nil, by: me)
        return try await request(id, for: me)
    }

    /// The receiver's code completes the delivery; the payout follows (an outbox job).
    func deliver(_ id: TripRequestID, code: String, by me: Principal) async throws -> RequestView {
        let view = try await request(id, for: me)
        guard view.request.travellerID == me.userID, let shipment = view.request.shipmentID else { throw WaybillError.forbidden }
        _ = try await orders.deliverWithCode(shipment, code: code, signedBy: view.request.receiverName, by: me)
        return try await request(id, for: me)
    }

    // MARK: helpers

    /// Moves the request through `TripRequestMachine` under the trip's lock, with `change` in the same transaction.
    private func transition(_ id: TripRequestID, _ action: TripRequestAction, roles: Set<TripRequestRole>, announcing news: TripRequestChange,
                            change: @escaping @Sendable (TripRequestRecord, TripRecord, any Database) async throws -> Void) async throws -> RequestView {
        try await transaction { db in
            guard let tripID = try await TripRequestRecord.find(id, on: db)?.tripID else { throw WaybillError.notFound }
            try await Self.lockTrip(tripID, on: db)
            guard let r = try await TripRequestRecord.find(id, on: db), let trip = try await TripRecord.find(tripID, on: db) else {
                throw WaybillError.notFound
            }
            switch TripRequestMachine.decide(action, from: r.status, as: roles) {
            case .forbidden: throw WaybillError.forbidden
            case .wrongStatus(let status):
                throw WaybillError(.conflict, .invalidTransition, "This request is \(status.rawValue); it cannot be \(action.rawValue)ed now.")
            case .allowed(let next):
                if action == .accept || action == .reject, r.answerBy <= UnixTime.nowMillis {
                    throw WaybillError(.conflict, .invalidTransition, "This request has expired.")
                }
                let before = r.status
                r.status = next
                r.updatedAt = UnixTime.nowMillis
                try await change(r, trip, db)
                // Compare-and-set: of two changes at once, one lands.
                guard let sql = db.tracedSQL else { throw MigrationNeedsSQL() }
                let rows = try await sql.update(TripRequestRecord.schema).set("status", to: SQLBind(next.rawValue))
                    .where("id", .equal, SQLBind(id)).where("status", .equal, SQLBind(before.rawValue)).returning("id").all()
                guard !rows.isEmpty else { throw WaybillError(.conflict, .invalidTransition, "This request changed meanwhile; reload it.") }
                try await r.save(on: db)
                try await services.events.record(.tripRequestChanged(try TripRequestFacts(r), news), on: db)
                let shipment = try await r.shipmentID.asyncMap { try await Order.find($0, on: db) } ?? nil
                return RequestView(request: r, trip: trip, shipment: shipment)
            }
        }
    }

    /// The shipment an accepted request becomes: the sender its customer, the traveller its
    /// carrier, awaiting payment (its status is `ShipmentStore.place`'s), the receiver's code required.
    static func shipment(for r: TripRequestRecord, trip: TripRecord, from: Area?, to: Area?, sandbox: Bool) -> Order {
        let now = UnixTime.nowMillis
        let order = Order()
        order.id = .generated()
        order.reference = Orders.newReference()
        order.customerID = r.senderID
        order.driverID = r.travellerID
        order.version = 1
        order.createdAt = now
        order.updatedAt = now
        order.pickup = place(from, point: TripRecord.point(trip.fromLatitude, trip.fromLongitude))
        order.pickupPlace.areaID = trip.fromAreaID
        order.dropoff = place(to, point: TripRecord.point(trip.toLatitude, trip.toLongitude))
        order.dropoffPlace.areaID = trip.toAreaID
        order.weightClass = r.grams <= 2000 ? .small : r.grams <= 10000 ? .medium : .large
        order.service = .standard
        order.recipient = r.receiver
        order.notes = r.description
        order.priceAmount = r.priceTotal
        order.currency = r.currency
        order.breakdownJSON = Order.json([PriceLine(kind: .flatRate, label: "Traveller (\(r.category), \(grams(r.grams)))", amount: r.priceTotal)])
        order.tariffVersion = 0
        order.paymentMethod = r.paymentMethod
        order.paymentStatus = .awaiting
        order.sandbox = sandbox
        order.requireRecipientCode = true
        order.recipientCodeAttempts = 0
        order.trackingToken = Tracking.newTrackingToken()
        order.handoverToken = Tracking.newTrackingToken()
        return order
    }

    static func travellerLeg(for order: Order, trip: TripRecord, from: Area?, to: Area?) throws -> Leg {
        let leg = Leg()
        leg.orderID = try order.storedID
        leg.position = 0
        leg.kind = .traveller
        leg.status = .accepted
        leg.from.address = order.pickup
        leg.from.areaID = trip.fromAreaID
        leg.to.address = order.dropoff
        leg.to.areaID = trip.toAreaID
        leg.windowStart = trip.departsFrom
        leg.windowEnd = trip.departsUntil
        leg.assigneeID = trip.travellerID
        leg.createdAt = order.createdAt
        leg.updatedAt = order.updatedAt
        return leg
    }

    static func place(_ area: Area?, point: Coordinate?) -> Address {
        Address(street: "", postalCode: "", city: area?.name ?? "", country: String(area?.id.rawValue.prefix(2) ?? "CH"),
                coordinate: point ?? area?.coordinate)
    }

    static func grams(_ g: Int) -> String { g >= 1000 ? String(format: "%.1f kg", Double(g) / 1000) : "\(g) g" }

    static func refusal(_ refusal: TripRequestDraft.Refusal) -> WaybillError {
        switch refusal {
        case .ownTrip: WaybillError(.conflict, .ownTrip, "You cannot send a parcel on your own trip.")
        case .tripNotOpen(let status): WaybillError(.conflict, .tripNotOpen, "This trip is \(status.rawValue) and takes no requests.")
        case .noRoom: WaybillError(.conflict, .tripFull, "This trip has no room left for this parcel.")
        }
    }

    static func notify(_ user: UserID, _ kind: Notifier.Kind, order: Order? = nil, body: String, on db: any Database) async throws {
        guard let person = try await User.find(user, on: db) else { return }
        try await Notifier.notify([person], kind, order: order, body: body, on: db)
    }
}

/// What follows a traveller's shipment: when it is cancelled (by a person, or unpaid) the request
/// is too and its room goes back to the trip; when it is delivered, the traveller is paid.
enum TripRequestSubscriber {
    static func handle(_ event: DomainEvent, on db: any Database) async throws {
        guard case .shipment(let order, let fact) = event else { return }
        switch fact {
        case .cancelled, .checkoutExpired:
            guard let sql = db.tracedSQL else { return }
            let orderID = order.id
            let next: TripRequestStatus = if case .checkoutExpired = fact { .lapsed } else { .cancelled }
            let rows = try await sql.update(TripRequestRecord.schema)
                .set("status", to: SQLBind(next.rawValue)).set("updated_at", to: SQLBind(UnixTime.nowMillis))
                .where("shipment_id", .equal, SQLBind(orderID)).where("status", .equal, SQLBind(TripRequestStatus.accepted.rawValue))
                .returning("trip_id", "grams").all()
            for row in rows {
                let trip = try row.decode(column: "trip_id", as: UUID.self), grams = try row.decode(column: "grams", as: Int.self)
                try await sql.raw("""
                    UPDATE trips SET booked_grams = booked_grams - \(bind: grams), booked_parcels = booked_parcels - 1,
                    updated_at = \(bind: UnixTime.nowMillis) WHERE id = \(bind: trip)
                    """).run()
            }
        case .delivered:
            let orderID = order.id
            if try await TripRequestRecord.query(on: db).filter(\.$shipmentID == orderID).first() != nil {
                try await Outbox.enqueueJob(kind: Outbox.travellerPayoutKind, payload: orderID.uuidString, on: db)
            }
        default:
            break
        }
    }
}

extension Outbox {
    static let travellerPayoutKind = "traveller_payout"
}

extension Travel {
    /// Pays the traveller of a delivered shipment their share, and records the platform's fee
    /// (the rest). Run from the outbox, retried until it succeeds; idempotent.
    func payTraveller(shipment id: OrderID) async throws {
        guard let r = try await TripRequestRecord.query(on: db).filter(\.$shipmentID == id).first(),
              let traveller = try await User.find(r.travellerID, on: db),
              let order = try await Order.find(id, on: db), order.status == .delivered else { return }
        // Frozen while the traveller is banned; lifting the ban queues the payout again (`Accounts.resumePayouts`).
        if traveller.isBanned { throw WaybillError(.conflict, .payoutsFrozen, ErrorCode.payoutsFrozen.english) }
        guard let destination = traveller.payoutAccount, traveller.payoutStatus == .active else {
            // Paid once their transfers are active again (the job retries with backoff).
            throw WaybillError(.conflict, .payoutsNotReady, "The traveller's payout account is \(traveller.payoutStatus.rawValue).")
        }
        _ = try await orders.payOut(id, to: r.travellerID, destination: destination, amount: Money(r.travellerShare, r.currency),
                                    paymentIntent: order.paymentIntentID)
        try await transaction { db in
            try await Orders.lockOrderRow(id, on: db)
            let fee = try await LedgerRecord.query(on: db).filter(\.$shipmentID == id).filter(\.$kind == .platformFee).count()
            if fee == 0, r.platformFee > 0 {
                try await LedgerRecord(LedgerEntry(kind: .platformFee, amount: r.platformFee, currency: r.currency, shipment: id,
                                                   account: nil, at: UnixTime.nowMillis)).create(on: db)
            }
        }
    }
}
