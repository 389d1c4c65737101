import Crypto
import Fluent
import Foundation
import SQLKit
import Vapor
import WaybillCore

extension WaybillError {
    static func invalidTransition(_ status: OrderStatus, _ action: OrderAction) -> WaybillError {
        var error = WaybillError(.conflict, .invalidTransition,
                                 "This order is \(status.rawValue); it cannot be \(action.pastTense) now.")
        error.currentStatus = status.rawValue
        return error
    }
}

extension OrderAction {
    var pastTense: String {
        switch self {
        case .confirmPayment: "confirmed as paid"
        case .assign: "assigned"
        case .reassign: "reassigned"
        case .accept: "accepted"
        case .pickup: "picked up"
        case .deliver: "delivered"
        case .fail: "marked failed"
        case .cancel: "cancelled"
        }
    }
}

/// An order with the people and records its views need.
struct OrderRecord: Sendable {
    let order: Order
    let customer: User
    let driver: User?
    var files: [OrderFile] = []
    var events: [(OrderEvent, User?)] = []
    var capacities: Set<OrderCapacity>
    /// The delivery under way and the tracking link (detail only).
    var tracking: OrderTracking?
}

/// Everything about orders: tariff, quotes, ordering, payment, dispatch, the driver's steps, proof
/// and history. The API (and later the web app) call this; the rules themselves are in WaybillCore.
struct Orders {
    let app: Application
    let db: any Database
    let logger: Logger

    init(app: Application, db: any Database, logger: Logger) {
        self.app = app
        self.db = db
        self.logger = logger
    }

    init(request: Request) { self.init(app: request.application, db: request.db, logger: request.logger) }

    var services: WaybillServices { app.waybill }

    func transaction<T: Sendable>(_ body: @escaping @Sendable (any Database) async throws -> T) async throws -> T {
        let result = try await db.writeTransaction(app, body)
        services.outbox.poke()
        return result
    }

    // MARK: Tariff and quotes

    /// The tariff as a manager reads it to change it.
    func tariff(for principal: Principal) async throws -> TariffRecord {
        try principal.require(.manageTariff)
        return try await currentTariff()
    }

    func currentTariff(on db: (any Database)? = nil) async throws -> TariffRecord {
        guard let record = try await TariffRecord.query(on: db ?? self.db).sort(\.$id, .descending).first() else {
            throw WaybillError(.serviceUnavailable, .noTariff, "No tariff is set.")
        }
        return record
    }

    func replaceTariff(_ tariff: Tariff, by principal: Principal) async throws -> TariffRecord {
        try principal.require(.manageTariff)
        let clean = try tariff.validated().orValidationError()
        do {
            return try await transaction { db in
                let current = try await TariffRecord.query(on: db).sort(\.$id, .descending).first()
                let record = TariffRecord(version: (current?.id ?? 0) + 1, tariff: clean, createdBy: principal.userID)
                try await record.create(on: db)
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
        return (PaymentOptions.available(isCompany: principal.user.isCompany, currency: currency), currency)
    }

    func quote(_ request: QuoteRequest, for principal: Principal) async throws -> Quote {
        var errors = FieldErrors()
        let (pickup, dropoff) = request.validatedAddresses(accountAddress: principal.user.accountAddress, into: &errors)
        if !errors.isEmpty { throw WaybillError.validation(errors) }
        let tariff = try await currentTariff().tariff
        return Pricing.quote(tariff: tariff, weightClass: request.weightClass, service: request.service,
                             pickup: pickup.coordinate, dropoff: dropoff.coordinate)
    }

    // MARK: Ordering

    struct Created: Sendable {
        let record: OrderRecord
        let paymentURL: String?
        let sandbox: Bool
    }

    func create(_ request: OrderRequest, by principal: Principal, idempotencyKey: String?) async throws -> Created {
        try principal.require(.placeOrders)
        let customer = principal.user
        let key = try idempotencyKey.map { raw -> String in
            let trimmed = raw.trimmingCharacters(in: .whitespaces)
            guard !trimmed.isEmpty, trimmed.count <= 200 else { throw WaybillError.validation("Idempotency-Key", "invalid") }
            return "\(principal.userID.uuidString):\(trimmed)"
        }
        if let key, let existing = try await Order.query(on: db).filter(\.$idempotencyKey == key).first() {
            return try await created(existing)
        }
        // Each order mails every manager and may open a checkout: a budget per customer and hour.
        let budgetKey = "orders:cust:" + principal.userID.uuidString
        let limit = services.config.ordersPerCustomerPerHour
        if let wait = try await db.writeTransaction(app, { db in try await Throttle(db).take(budgetKey, limit: limit, window: 3600) }) {
            throw WaybillError(.tooManyRequests, .tooManyOrders,
                               "You have placed \(limit) orders in the last hour; try again later or ask us to raise your limit.",
                               retryAfter: Int(clamping: wait))
        }
        let tariffRecord = try await currentTariff()
        let tariff = try tariffRecord.tariff
        let valid = try request.validated(accountAddress: customer.accountAddress, isCompany: customer.isCompany,
                                          currency: tariff.currency).orValidationError()
        let quote = Pricing.quote(tariff: tariff, weightClass: valid.weightClass, service: valid.service,
                                  pickup: valid.pickup.coordinate, dropoff: valid.dropoff.coordinate)
        let now = UnixTime.nowMillis
        let order = Order()
        order.id = UUID()
        order.reference = Self.newReference()
        order.customerID = principal.userID
        order.status = valid.paymentMethod.isOnline ? .awaitingPayment : .pending
        order.version = 1
        order.createdAt = now
        order.updatedAt = now
        order.pickupJSON = Order.json(valid.pickup)
        order.dropoffJSON = Order.json(valid.dropoff)
        order.weightClass = valid.weightClass
        order.service = valid.service
        order.recipientJSON = Order.json(valid.recipient)
        order.notes = valid.notes
        order.priceAmount = quote.price.amount
        order.currency = quote.price.currency
        order.distanceMeters = quote.distanceMeters
        order.breakdownJSON = Order.json(quote.breakdown)
        order.tariffVersion = tariffRecord.id ?? 0
        order.paymentMethod = valid.paymentMethod
        order.paymentStatus = switch valid.paymentMethod {
        case .card, .twint: .awaiting
        case .cash: .dueOnPickup
        case .invoice: .invoiced
        }
        order.sandbox = services.payments.isSandbox && valid.paymentMethod.isOnline
        order.idempotencyKey = key
        order.requireRecipientCode = valid.requireRecipientCode
        order.recipientCodeAttempts = 0
        order.trackingToken = Tracking.newTrackingToken()

        // The checkout is opened before the order is stored: if the provider fails, nothing is
        // written; if storing fails, the unused checkout simply expires.
        if valid.paymentMethod.isOnline {
            let checkout = try await services.payments.createCheckout(CheckoutRequest(
                orderID: order.id!, reference: order.reference, price: quote.price, method: valid.paymentMethod,
                customerEmail: customer.email,
                successURL: services.config.publicURL + "/payments/return?session_id={CHECKOUT_SESSION_ID}",
                cancelURL: services.config.publicURL + "/payments/return?order=\(order.id!.uuidString)&cancelled=1"))
            order.checkoutSessionID = checkout.id
            order.checkoutURL = checkout.url
        }
        let speed = services.config.etaAverageSpeedKmh
        var attempts = 0
        while true {
            do {
                try await transaction { db in
                    try await order.create(on: db)
                    try await OrderEvent(orderID: order.id!, type: "created", status: order.status, actorID: principal.userID).create(on: db)
                    if order.status == .pending {
                        try await Self.announceNew(order, on: db)
                        try await Tracking.publishStatus(order, speedKmh: speed, on: db)
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
        return try await created(order)
    }

    private func created(_ order: Order) async throws -> Created {
        let record = try await load(order, capacities: [.owner])
        let awaiting = order.status == .awaitingPayment
        return Created(record: record, paymentURL: awaiting ? order.checkoutURL : nil, sandbox: order.sandbox)
    }

    static func announceNew(_ order: Order, on db: any Database) async throws {
        try await Notifier.notify(try await Notifier.managers(on: db), .orderPending, order: order,
                                  body: "A new \(order.service.rawValue) order \(order.reference) (\(order.price), \(order.paymentMethod.rawValue)) is waiting to be assigned.",
                                  on: db)
    }

    /// "WB-" and 8 characters of Crockford's base 32 (40 random bits): easy to read out on the phone.
    static func newReference() -> String {
        let alphabet = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ")
        var generator = SystemRandomNumberGenerator()
        return "WB-" + String((0..<8).map { _ in alphabet[Int.random(in: 0..<32, using: &generator)] })
    }

    // MARK: Seeing orders

    func capacities(of principal: Principal, for order: Order) -> Set<OrderCapacity> {
        OrderPolicy.capacities(of: principal.caller, for: order.parties)
    }

    /// 403 or 409 unless `OrderPolicy` lets the caller do `action` to the order now.
    func check(_ action: OrderSideAction, on order: Order, by principal: Principal) throws {
        switch OrderPolicy.decide(action, status: order.status, as: capacities(of: principal, for: order)) {
        case .allowed: return
        case .forbidden: throw WaybillError.forbidden
        case .wrongStatus(let status):
            var error = WaybillError(.conflict, .invalidTransition, "This order is \(status.rawValue); that cannot be done now.")
            error.currentStatus = status.rawValue
            throw error
        }
    }

    /// The order if the caller may see it: its customer, its driver, or a manager. Otherwise 404,
    /// so nobody learns which ids exist.
    func visibleOrder(_ id: UUID, to principal: Principal, on db: (any Database)? = nil) async throws -> Order {
        guard let order = try await Order.find(id, on: db ?? self.db), !capacities(of: principal, for: order).isEmpty else {
            throw WaybillError.notFound
        }
        return order
    }

    func detail(_ id: UUID, for principal: Principal) async throws -> OrderRecord {
        let order = try await visibleOrder(id, to: principal)
        return try await load(order, capacities: capacities(of: principal, for: order), full: true)
    }

    func load(_ order: Order, capacities: Set<OrderCapacity>, full: Bool = true) async throws -> OrderRecord {
        let events = full ? try await OrderEvent.query(on: db).filter(\.$orderID == order.id!).sort(\.$id).all() : []
        var ids = Set([order.customerID])
        if let driver = order.driverID { ids.insert(driver) }
        for event in events { if let actor = event.actorID { ids.insert(actor) } }
        let users = Dictionary(uniqueKeysWithValues: try await User.query(on: db).filter(\.$id ~~ Array(ids)).all().map { ($0.id!, $0) })
        guard let customer = users[order.customerID] else { throw WaybillError.notFound }
        var record = OrderRecord(order: order, customer: customer, driver: order.driverID.flatMap { users[$0] }, capacities: capacities)
        if full {
            record.files = try await OrderFile.query(on: db).filter(\.$orderID == order.id!).sort(\.$createdAt).all()
            record.events = events.map { ($0, $0.actorID.flatMap { users[$0] }) }
            record.tracking = try await Tracking(app: app, db: db, logger: logger).view(of: order, capacities: capacities, driver: record.driver)
        }
        return record
    }

    struct ListFilter: Sendable {
        var statuses: [OrderStatus] = []
        var customerID: UUID?
        var driverID: UUID?
        var from: Date?
        var to: Date?
        var cursor: String?
        var limit: Int = 50
    }

    /// Newest first, paged on (created_at, id). Read with SQLKit rather than Fluent: hydrating
    /// Fluent models cost about 0.2 ms per row, most of a page's time (scripts/bench-orders).
    func list(_ filter: ListFilter, for principal: Principal) async throws -> (records: [OrderRecord], nextCursor: String?) {
        guard let sql = db as? any SQLDatabase else { throw Abort(.internalServerError) }
        let query = sql.select().columns(Order.listColumns.map { SQLIdentifier($0) }).from(Order.schema)
        switch OrderPolicy.listScope(for: principal.caller) {
        case .placedBy(let customer):
            query.where("customer_id", .equal, SQLBind(customer))
                .where("status", .notIn, SQLBind.group(OrderStatus.allCases.filter { !$0.listedForCustomer }.map(\.rawValue)))
        case .assignedTo(let driver):
            query.where("driver_id", .equal, SQLBind(driver))
        case .all:
            break
        }
        if let customer = filter.customerID { query.where("customer_id", .equal, SQLBind(customer)) }
        if let driver = filter.driverID { query.where("driver_id", .equal, SQLBind(driver)) }
        if filter.statuses.count == 1 { query.where("status", .equal, SQLBind(filter.statuses[0].rawValue)) }
        else if !filter.statuses.isEmpty { query.where("status", .in, SQLBind.group(filter.statuses.map(\.rawValue))) }
        if let from = filter.from { query.where("created_at", .greaterThanOrEqual, SQLBind(UnixTime.clampedMillis(from))) }
        if let to = filter.to { query.where("created_at", .lessThan, SQLBind(UnixTime.clampedMillis(to))) }
        if let raw = filter.cursor {
            guard let (at, id) = Self.decodeCursor(raw) else { throw WaybillError.invalidParameter("cursor") }
            query.where { group in
                group.where("created_at", .lessThan, SQLBind(at))
                    .orWhere { $0.where("created_at", .equal, SQLBind(at)).where("id", .lessThan, SQLBind(id)) }
            }
        }
        let rows = try await query.orderBy("created_at", .descending).orderBy("id", .descending).limit(filter.limit + 1).all()
        let orders = try rows.map(Order.init(listRow:))
        let page = Array(orders.prefix(filter.limit))
        let records = try await summaries(page, for: principal)
        let next = orders.count > filter.limit ? page.last.map { Self.encodeCursor($0.createdAt, $0.id!) } : nil
        return (records, next)
    }

    /// Orders the caller may see, as list entries: with their customer and driver, read at once.
    func summaries(_ orders: [Order], for principal: Principal) async throws -> [OrderRecord] {
        guard let sql = db as? any SQLDatabase else { throw Abort(.internalServerError) }
        var ids = Set(orders.map(\.customerID))
        for order in orders { if let driver = order.driverID { ids.insert(driver) } }
        let users = try await Self.people(Array(ids), on: sql)
        return orders.compactMap { order -> OrderRecord? in
            let capacities = capacities(of: principal, for: order)
            guard !capacities.isEmpty, let customer = users[order.customerID] else { return nil }
            return OrderRecord(order: order, customer: customer, driver: order.driverID.flatMap { users[$0] }, capacities: capacities)
        }
    }

    /// The people a page of orders names, with the fields a summary shows.
    static func people(_ ids: [UUID], on sql: any SQLDatabase) async throws -> [UUID: User] {
        guard !ids.isEmpty else { return [:] }
        let rows = try await sql.select()
            .columns(["id", "role", "email", "first_name", "last_name", "company_name", "is_company", "disabled_at"].map { SQLIdentifier($0) })
            .from(User.schema).where("id", .in, SQLBind.group(ids)).all()
        var users: [UUID: User] = [:]
        for row in rows {
            let user = User()
            let id = try row.decode(column: "id", as: UUID.self)
            user.id = id
            user.role = Role(rawValue: try row.decode(column: "role", as: String.self)) ?? .customer
            user.email = try row.decode(column: "email", as: String.self)
            user.firstName = try row.decode(column: "first_name", as: String.self)
            user.lastName = try row.decode(column: "last_name", as: String.self)
            user.companyName = try row.decodeNil(column: "company_name") ? nil : try row.decode(column: "company_name", as: String.self)
            user.isCompany = try row.decode(column: "is_company", as: Bool.self)
            user.disabledAt = try row.decodeNil(column: "disabled_at") ? nil : try row.decode(column: "disabled_at", as: Date.self)
            users[id] = user
        }
        return users
    }

    static func encodeCursor(_ at: Int64, _ id: UUID) -> String {
        Data("\(at):\(id.uuidString)".utf8).base64URLEncodedString()
    }

    static func decodeCursor(_ raw: String) -> (Int64, UUID)? {
        guard let data = Data(base64URLEncoded: raw), let text = String(data: data, encoding: .utf8) else { return nil }
        let parts = text.split(separator: ":", maxSplits: 1)
        guard parts.count == 2, let at = Int64(parts[0]), let id = UUID(uuidString: String(parts[1])) else { return nil }
        return (at, id)
    }
}

extension WaybillError {
    func with(message: String) -> WaybillError {
        var copy = self
        copy.message = message
        return copy
    }
}

extension Optional {
    func asyncMap<T>(_ transform: (Wrapped) async throws -> T) async rethrows -> T? {
        guard let value = self else { return nil }
        return try await transform(value)
    }
}

extension User {
    /// The customer's own address as an order address (nil if incomplete).
    var accountAddress: Address? {
        guard let address, let postalCode, let city, !address.isEmpty, !postalCode.isEmpty, !city.isEmpty else { return nil }
        return Address(street: address, postalCode: postalCode, city: city)
    }
}

extension OneTimeCodes {
    func hashRecipientCode(_ code: String, orderID: UUID) -> String {
        let message = Data("recipient|\(orderID.uuidString)|\(code)".utf8)
        return Data(HMAC<SHA256>.authenticationCode(for: message, using: key)).base64EncodedString()
    }
}

extension MailTemplates {
    static func recipientCode(to recipient: MailAddress, reference: String, code: String) -> MailMessage {
        MailMessage(to: recipient, subject: "Your delivery code: \(code)", text: """
            Hello,

            A parcel (\(reference)) is on its way to you. Give the driver this code when you receive it: \(code)

            Bonjour,
            Un colis (\(reference)) est en route vers vous. Donnez ce code au livreur à la réception : \(code)
            """)
    }
}
