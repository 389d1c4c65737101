import Crypto
import Fluent
import Foundation
import SQLKit
import Vapor
import WaybillCore

/// Ordering: the tariff, quotes, payment options and placing an order.
extension Orders {
    // MARK: Tariff and quotes

    /// The tariff as a manager reads it to change it.
    func tariff(for principal: Principal) async throws -> TariffRecord {
        try principal.require(.manageTariff)
        return try await currentTariff()
    }

    func currentTariff(on db: (any Database)? = nil) async throws -> TariffRecord {
        // Every quote and order reads it: plain SQL, not Fluent's query builder, and kept for a
        // second (`ReadCaches.tariff`) unless asked for inside a transaction (docs/performance.md).
        let cache = services.caches.tariff
        if db == nil, let kept = cache.value(0) { return try TariffRecord(row: kept) }
        guard let sql = (db ?? self.db).tracedSQL else { throw Abort(.internalServerError) }
        let generation = cache.generation
        guard let row = try await sql.raw(#"SELECT "version", "data", "created_by", "created_at" FROM "tariffs" ORDER BY "version" DESC LIMIT 1"#).first()
        else {
            throw WaybillError(.serviceUnavailable, .noTariff, "No tariff is set.")
        }
        if db == nil { cache.keep(row, for: 0, readAt: generation) }
        return try TariffRecord(row: row)
    }

    func replaceTariff(_ tariff: Tariff, by principal: Principal) async throws -> TariffRecord {
        try principal.require(.manageTariff)
        let clean = try tariff.validated().orValidationError()
        do {
            // In force from now on in this process (the model's middleware forgets it before the
            // commit too, but a read between the two would keep the old one).
            defer { services.caches.tariff.forgetAll() }
            return try await transaction { db in
                let (record, current) = try await TariffRecord.replace(with: clean, by: principal.userID, on: db)
                try await AuditLog.record(.tariffChanged, by: principal.userID, target: .tariff, "courier",
                                          before: ["version": current.map { String($0.version) }], after: ["version": String(record.version)], on: db)
                return record
            }
        } catch let error as any DatabaseError where error.isConstraintFailure {
            throw WaybillError(.conflict, .conflict, "Another manager changed the tariff at the same moment; reload it and try again.")
        }
    }

    /// The ways the caller may pay for a new order (`PaymentOptions`), in the order to offer them.
    func paymentOptions(for principal: Principal) async throws -> (methods: [PaymentMethod], currency: String) {
        try principal.require(.placeOrders)
        let currency = try await currentTariff().tariff.currency
        return (PaymentOptions.available(isCompany: principal.user.isCompany, vetted: PaymentOptions.vetted(principal.caller.capabilities),
                                         currency: currency), currency)
    }

    func quote(_ request: QuoteRequest, for principal: Principal) async throws -> Quote {
        var errors = FieldErrors()
        var request = request
        request.counters = try await Counters(services: services, db: db, logger: logger).choice(request.counters)
        let (pickup, dropoff) = request.validatedAddresses(accountAddress: principal.user.accountAddress, into: &errors)
        let tariff = try await currentTariff().tariff
        let insurance = request.insurance(table: try await insuranceTableIfAsked(request), currency: tariff.currency, into: &errors)
        if !errors.isEmpty { throw WaybillError.validation(errors) }
        let plan = try await subscriptions.benefit(for: principal.userID, kept: true)
        let quote = Pricing.quote(tariff: tariff, weightClass: request.weightClass, service: request.service,
                                  pickup: pickup.coordinate, dropoff: dropoff.coordinate, insurance: insurance, plan: plan?.benefit)
        return quote.applying(try await loyalty.redemption(request.redeemPoints, price: quote.price.amount, for: principal.userID))
    }

    private var loyalty: Loyalty { Loyalty(services: services, db: db, logger: logger) }
    private var subscriptions: Subscriptions { Subscriptions(services: services, db: db, logger: logger) }

    /// The premium table, read only when the request insures something.
    private func insuranceTableIfAsked(_ request: QuoteRequest) async throws -> InsuranceTable? {
        guard request.declaredValue != nil else { return nil }
        return try await Claims(services: services, db: db, logger: logger).currentTable().table
    }

    // MARK: Ordering

    struct Created: Sendable {
        let record: OrderRecord
        let paymentURL: String?
        let sandbox: Bool
    }

    func create(_ request: OrderRequest, slots: [(field: String, kind: SlotKind, id: SlotID)] = [], by principal: Principal,
                idempotencyKey: String?) async throws -> Created {
        try principal.require(.placeOrders)
        let customer = principal.user
        let key = try idempotencyKey.map { raw -> String in
            guard let key = IdempotencyKey.normalized(raw) else { throw WaybillError.validation("Idempotency-Key", "invalid") }
            return "\(principal.userID.uuidString):\(key)"
        }
        if let key, let existing = try await Order.query(on: db).filter(\.$idempotencyKey == key).first() {
            return try await created(existing)
        }
        // Each order mails every manager and may open a checkout: a budget per customer and hour,
        // taken before the checkout opens. On SQLite, whose writes take turns anyway, an order
        // without a checkout takes it in its own transaction: a turn at the write lock less. On
        // PostgreSQL it is a statement of its own, so the customer's budget row is not held locked
        // while the order is written (a customer placing many orders at once would queue on it).
        let budgetKey = "orders:cust:" + principal.userID.uuidString
        let limit = services.config.ordersPerCustomerPerHour
        @Sendable func takeBudget(on db: any Database) async throws {
            if let wait = try await Throttle(db).take(budgetKey, limit: limit, window: 3600) {
                throw WaybillError(.tooManyRequests, .tooManyOrders,
                                   "You have placed \(limit) orders in the last hour; try again later or ask us to raise your limit.",
                                   retryAfter: Int(clamping: wait))
            }
        }
        let tariffRecord = try await currentTariff()
        let tariff = try tariffRecord.tariff
        var request = request
        request.quote.counters = try await Counters(services: services, db: db, logger: logger).choice(request.quote.counters)
        let valid = try request.validated(accountAddress: customer.accountAddress, isCompany: customer.isCompany,
                                          vetted: PaymentOptions.vetted(principal.caller.capabilities),
                                          currency: tariff.currency).orValidationError()
        var insuranceErrors = FieldErrors()
        let insurance = request.quote.insurance(table: try await insuranceTableIfAsked(request.quote), currency: tariff.currency,
                                                into: &insuranceErrors)
        if !insuranceErrors.isEmpty { throw WaybillError.validation(insuranceErrors) }
        // The plan's benefit: an included delivery is taken in the order's transaction below.
        let plan = try await subscriptions.benefit(for: principal.userID)
        var quote = Pricing.quote(tariff: tariff, weightClass: valid.weightClass, service: valid.service,
                                  pickup: valid.pickup.coordinate, dropoff: valid.dropoff.coordinate, insurance: insurance, plan: plan?.benefit)
        // Points are checked now and spent in the order's transaction, under the account's lock.
        let redemption = try await loyalty.redemption(request.quote.redeemPoints, price: quote.price.amount, for: principal.userID)
        quote = quote.applying(redemption)
        let order = Order.new(valid, quote: quote, customerID: principal.userID, tariffVersion: tariffRecord.id ?? 0,
                              sandbox: services.payments.isSandbox, subscription: quote.plan == nil ? nil : plan?.subscription)
        order.idempotencyKey = key
        let route = try Leg.route(for: order, counters: valid.counters)
        ShipmentStore.place(order, legs: route)
        // Timeslots chosen with the order: checked now, booked in its transaction below.
        let chosen = try await Timeslots(services: services, db: db, logger: logger).chosen(slots, for: order, counters: valid.counters)

        // The checkout is opened before the order is stored: if the provider fails, nothing is
        // written; if storing fails, the unused checkout simply expires. Nothing to pay (a plan's
        // included delivery): no checkout.
        let budgetTaken = order.status == .awaitingPayment || !services.writeLock.enabled
        if budgetTaken { try await db.writeStatement(services) { db in try await takeBudget(on: db) } }
        let orderID = try order.storedID
        if order.status == .awaitingPayment {
            let checkout = try await services.payments.createCheckout(CheckoutRequest(
                orderID: orderID, reference: order.reference, price: quote.price, method: valid.paymentMethod,
                customerEmail: customer.email,
                successURL: services.config.publicURL + WebRoutes.paymentReturn(query: "session_id={CHECKOUT_SESSION_ID}"),
                cancelURL: services.config.publicURL + WebRoutes.paymentReturn(query: "order=\(orderID.uuidString)&cancelled=1")))
            order.checkoutSessionID = checkout.id
            order.checkoutURL = checkout.url
        }
        let events = services.events
        let takesIncluded = quote.plan?.included == true
        var attempts = 0
        var createdEvent: OrderEvent
        while true {
            let event = OrderEvent(orderID: orderID, type: "created", status: order.status, actorID: principal.userID)
            createdEvent = event
            // Made before the write lock is taken: the order's legs, and on SQLite its stored values.
            let values = try services.writeLock.enabled ? order.storedValues : nil, legs = try Leg.route(for: order, counters: valid.counters)
            do {
                try await transaction { db in
                    if !budgetTaken { try await takeBudget(on: db) }
                    // The account's points are held first, before the order refers to the account.
                    if redemption != nil { try await Loyalty.lockAccount(order.customerID, on: db) }
                    if let plan, takesIncluded {
                        try await Subscriptions.useIncluded(plan.subscription, of: principal.userID, limit: plan.benefit.terms.includedDeliveries,
                                                            periodStart: plan.periodStart, on: db)
                    }
                    try await order.insert(on: db, values: values)
                    if let redemption { try await Loyalty.spend(redemption, on: order, on: db) }
                    for leg in legs { try await leg.insert(on: db) }
                    for (slot, template) in chosen {
                        try await Timeslots.bookWithin(order, slot: slot, template: template, by: principal.userID, now: UnixTime.nowMillis, on: db)
                    }
                    try await event.insert(on: db)
                    if order.status == .pending {
                        try await events.record(.shipment(try OrderRow(order), .placed), on: db)
                    }
                }
                break
            } catch {
                guard let dbError = error as? any DatabaseError, dbError.isConstraintFailure else { throw error }
                // The same idempotency key raced in twice: answer with the order that won.
                if let key, let existing = try await Order.query(on: db).filter(\.$idempotencyKey == key).first() {
                    return try await created(existing)
                }
                // Otherwise the random reference (40 bits) repeated one already taken: draw again.
                attempts += 1
                guard attempts < 3, try await Order.query(on: db).filter(\.$reference == order.reference).count() > 0 else { throw error }
                order.reference = Self.newReference()
            }
        }
        logger.info("Order \(order.reference) created (\(order.paymentMethod.rawValue))")
        // Answered from what was just written, not read back: a new order has its one event,
        // its customer and no files.
        let written = ReadCaches.KeptOrder(order: try OrderRow(order), events: [createdEvent],
                                           people: [principal.userID: try PersonRow(customer)], files: [], legs: route.map(\.rule))
        return try await created(order, record: record(of: written, capacities: [.owner]))
    }

    func created(_ order: Order, record: OrderRecord? = nil) async throws -> Created {
        let record = if let record { record } else { try await load(order, capacities: [.owner]) }
        let awaiting = order.status == .awaitingPayment
        return Created(record: record, paymentURL: awaiting ? order.checkoutURL : nil, sandbox: order.sandbox)
    }

    /// "WB-" and 8 characters of Crockford's base 32 (40 random bits): easy to read out on the phone.
    static func newReference() -> String {
        // Five bits a character from one number drawn (the alphabet has 32 of them).
        var bits = Randomness.current.next()
        var text = "WB-"
        for _ in 0..<8 {
            text.append(OrderReference.alphabet[Int(bits & 31)])
            bits >>= 5
        }
        return text
    }
}

extension Order {
    /// A new order as placing it makes it: priced by `quote`, with a fresh reference and tracking
    /// link. Not yet stored, and without its status until `ShipmentStore.place` gives it its legs
    /// (waiting for its payment online, or for dispatch).
    static func new(_ valid: ValidOrder, quote: Quote, customerID: UserID, tariffVersion: Int, sandbox: Bool,
                    subscription: SubscriptionID? = nil, at now: Int64 = UnixTime.nowMillis) -> Order {
        // A price of nothing (a plan's included delivery) has nothing to pay online.
        let payOnline = valid.paymentMethod.isOnline && quote.price.amount > 0
        let order = Order()
        order.id = .generated()
        order.reference = Orders.newReference()
        order.customerID = customerID
        order.version = 1
        order.createdAt = now
        order.updatedAt = now
        order.pickup = valid.pickup
        order.dropoff = valid.dropoff
        order.weightClass = valid.weightClass
        order.service = valid.service
        order.recipient = valid.recipient
        order.notes = valid.notes
        order.priceAmount = quote.price.amount
        order.currency = quote.price.currency
        order.distanceMeters = quote.distanceMeters
        order.declaredValue = quote.insurance?.declaredValue
        order.insurancePremium = quote.insurance?.premium
        order.pointsRedeemed = quote.points?.points
        order.pointsDiscount = quote.points?.discount
        order.planSubscriptionID = subscription
        order.planIncluded = quote.plan?.included
        order.planDiscount = quote.plan?.discount
        order.planName = quote.plan?.name
        order.breakdownJSON = Order.json(quote.breakdown)
        order.tariffVersion = tariffVersion
        order.paymentMethod = valid.paymentMethod
        order.paymentStatus = switch valid.paymentMethod {
        case .card, .twint: payOnline ? .awaiting : .paid
        case .cash: .dueOnPickup
        case .invoice: .invoiced
        }
        order.sandbox = sandbox && payOnline
        if valid.paymentMethod.isOnline, !payOnline { order.paidAt = now }
        order.requireRecipientCode = valid.requireRecipientCode
        order.recipientCodeAttempts = 0
        order.trackingToken = Tracking.newTrackingToken()
        order.handoverToken = Tracking.newTrackingToken()
        return order
    }
}
