import Crypto
import Fluent
import Foundation
import SQLKit
import Vapor
import WaybillCore

extension WaybillError {
    static func invalidTransition(_ status: OrderStatus, _ action: OrderAction) -> WaybillError {
        var error = WaybillError(.conflict, "invalid_transition",
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

    private func transaction<T: Sendable>(_ body: @escaping @Sendable (any Database) async throws -> T) async throws -> T {
        let result = try await db.writeTransaction(app, body)
        services.outbox.poke()
        return result
    }

    // MARK: Tariff and quotes

    func currentTariff(on db: (any Database)? = nil) async throws -> TariffRecord {
        guard let record = try await TariffRecord.query(on: db ?? self.db).sort(\.$id, .descending).first() else {
            throw WaybillError(.serviceUnavailable, "no_tariff", "No tariff is set.")
        }
        return record
    }

    func replaceTariff(_ tariff: Tariff, by principal: Principal) async throws -> TariffRecord {
        let clean = try tariff.validated().orValidationError()
        do {
            return try await transaction { db in
                let current = try await TariffRecord.query(on: db).sort(\.$id, .descending).first()
                let record = TariffRecord(version: (current?.id ?? 0) + 1, tariff: clean, createdBy: principal.userID)
                try await record.create(on: db)
                return record
            }
        } catch let error as any DatabaseError where error.isConstraintFailure {
            throw WaybillError(.conflict, "conflict", "Another manager changed the tariff at the same moment; reload it and try again.")
        }
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
        try principal.require(.customer)
        let customer = principal.user
        let key = try idempotencyKey.map { raw -> String in
            let trimmed = raw.trimmingCharacters(in: .whitespaces)
            guard !trimmed.isEmpty, trimmed.count <= 200 else { throw WaybillError.validation("Idempotency-Key", "invalid") }
            return "\(principal.userID.uuidString):\(trimmed)"
        }
        if let key, let existing = try await Order.query(on: db).filter(\.$idempotencyKey == key).first() {
            return try await created(existing)
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
        do {
            try await transaction { db in
                try await order.create(on: db)
                try await OrderEvent(orderID: order.id!, type: "created", status: order.status, actorID: principal.userID).create(on: db)
                if order.status == .pending {
                    try await Self.announceNew(order, on: db)
                }
            }
        } catch {
            // The same idempotency key raced in twice: answer with the order that won.
            if let dbError = error as? any DatabaseError, dbError.isConstraintFailure, let key,
               let existing = try await Order.query(on: db).filter(\.$idempotencyKey == key).first() {
                return try await created(existing)
            }
            throw error
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
        var result: Set<OrderCapacity> = []
        if order.customerID == principal.userID { result.insert(.owner) }
        if order.driverID == principal.userID { result.insert(.assignee) }
        if principal.user.role == .manager { result.insert(.manager) }
        return result
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
        switch principal.user.role {
        case .customer:
            query.where("customer_id", .equal, SQLBind(principal.userID))
                .where("status", .notEqual, SQLBind(OrderStatus.awaitingPayment.rawValue))
        case .driver:
            query.where("driver_id", .equal, SQLBind(principal.userID))
        case .manager:
            break
        }
        if let customer = filter.customerID { query.where("customer_id", .equal, SQLBind(customer)) }
        if let driver = filter.driverID { query.where("driver_id", .equal, SQLBind(driver)) }
        if filter.statuses.count == 1 { query.where("status", .equal, SQLBind(filter.statuses[0].rawValue)) }
        else if !filter.statuses.isEmpty { query.where("status", .in, SQLBind.group(filter.statuses.map(\.rawValue))) }
        if let from = filter.from { query.where("created_at", .greaterThanOrEqual, SQLBind(Int64(from.timeIntervalSince1970 * 1000))) }
        if let to = filter.to { query.where("created_at", .lessThan, SQLBind(Int64(to.timeIntervalSince1970 * 1000))) }
        if let raw = filter.cursor {
            guard let (at, id) = Self.decodeCursor(raw) else { throw WaybillError.validation("cursor", "invalid") }
            query.where { group in
                group.where("created_at", .lessThan, SQLBind(at))
                    .orWhere { $0.where("created_at", .equal, SQLBind(at)).where("id", .lessThan, SQLBind(id)) }
            }
        }
        let rows = try await query.orderBy("created_at", .descending).orderBy("id", .descending).limit(filter.limit + 1).all()
        let orders = try rows.map(Order.init(listRow:))
        let page = Array(orders.prefix(filter.limit))
        var ids = Set(page.map(\.customerID))
        for order in page { if let driver = order.driverID { ids.insert(driver) } }
        let users = try await Self.people(Array(ids), on: sql)
        let records = page.compactMap { order -> OrderRecord? in
            guard let customer = users[order.customerID] else { return nil }
            return OrderRecord(order: order, customer: customer, driver: order.driverID.flatMap { users[$0] },
                               capacities: capacities(of: principal, for: order))
        }
        let next = orders.count > filter.limit ? page.last.map { Self.encodeCursor($0.createdAt, $0.id!) } : nil
        return (records, next)
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
        StatementLinks.base64url(Data("\(at):\(id.uuidString)".utf8))
    }

    static func decodeCursor(_ raw: String) -> (Int64, UUID)? {
        guard let data = StatementLinks.unbase64url(raw), let text = String(data: data, encoding: .utf8) else { return nil }
        let parts = text.split(separator: ":", maxSplits: 1)
        guard parts.count == 2, let at = Int64(parts[0]), let id = UUID(uuidString: String(parts[1])) else { return nil }
        return (at, id)
    }

    // MARK: Changing orders

    /// Applies `action` through the state machine in one transaction: the caller must see the
    /// order (else 404), have a capacity allowed to act (else 403) and find it in a status that
    /// allows it (else 409 with the current status). The change lands only if nobody changed the
    /// order since it was read (a version check), so of two managers assigning at once one wins.
    @discardableResult
    func transition(_ id: UUID, _ action: OrderAction, by principal: Principal?,
                    change: @escaping @Sendable (Order, any Database) async throws -> Void = { _, _ in }) async throws -> Order {
        let orders = self
        return try await transaction { db in
            guard let order = try await Order.find(id, on: db) else { throw WaybillError.notFound }
            let capacities: Set<OrderCapacity> = principal.map { orders.capacities(of: $0, for: order) } ?? [.system]
            if capacities.isEmpty { throw WaybillError.notFound }
            switch OrderStateMachine.decide(action, from: order.status, as: capacities) {
            case .forbidden:
                throw WaybillError.forbidden
            case .wrongStatus(let status):
                throw WaybillError.invalidTransition(status, action)
            case .allowed(let next):
                try await Self.claim(order, action: action, on: db)
                order.status = next
                order.updatedAt = UnixTime.nowMillis
                try await change(order, db)
                try await order.save(on: db)
            }
            return order
        }
    }

    /// Compare-and-set on the version: fails with 409 if another change landed first.
    static func claim(_ order: Order, action: OrderAction, on db: any Database) async throws {
        guard let sql = db as? any SQLDatabase else { throw Abort(.internalServerError) }
        let rows = try await sql.update(Order.schema)
            .set("version", to: SQLBind(order.version + 1))
            .where("id", .equal, SQLBind(order.id!))
            .where("version", .equal, SQLBind(order.version))
            .returning("id")
            .all()
        guard !rows.isEmpty else {
            let now = try await Order.find(order.id!, on: db)
            throw WaybillError.invalidTransition(now?.status ?? order.status, action)
        }
        order.version += 1
    }

    func cancel(_ id: UUID, reason: String, by principal: Principal) async throws -> Order {
        let reason = reason.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !reason.isEmpty else { throw WaybillError.validation("reason", "required") }
        let order = try await transition(id, .cancel, by: principal) { order, db in
            order.cancellationReason = reason
            if order.paymentStatus == .paid { order.paymentStatus = .refundPending }
            else if order.paymentStatus == .awaiting || order.paymentStatus == .dueOnPickup || order.paymentStatus == .invoiced {
                order.paymentStatus = .void
            }
            try await OrderEvent(orderID: order.id!, type: "cancelled", status: .cancelled, actorID: principal.userID, note: reason).create(on: db)
            try await Self.notifyCancelled(order, by: principal.userID, reason: reason, on: db)
            if order.paymentStatus == .refundPending {
                try await Outbox.enqueueJob(kind: Outbox.refundKind, payload: order.id!.uuidString, on: db)
            }
        }
        if order.paymentStatus == .refundPending {
            // Try at once so the answer usually shows the refund; the outbox retries if this fails.
            try? await refundNow(id)
            return try await Order.find(id, on: db) ?? order
        }
        return order
    }

    static func notifyCancelled(_ order: Order, by actor: UUID?, reason: String, on db: any Database) async throws {
        var people: [User] = []
        if let customer = try await User.find(order.customerID, on: db), customer.id != actor { people.append(customer) }
        if let driverID = order.driverID, driverID != actor, let driver = try await User.find(driverID, on: db) { people.append(driver) }
        try await Notifier.notify(people, .orderCancelled, order: order, body: "Order \(order.reference) was cancelled: \(reason)", on: db)
    }

    /// Refunds a cancelled, paid order in full. Run from the outbox (with retries) and right after
    /// the cancellation. Does nothing if the refund already happened.
    func refundNow(_ id: UUID) async throws {
        guard let order = try await Order.find(id, on: db), order.paymentStatus == .refundPending,
              let session = order.checkoutSessionID else { return }
        let state = try await services.payments.checkout(id: session)
        let refundID = try await services.payments.refund(checkout: state, idempotencyKey: "refund-\(id.uuidString)")
        try await transaction { db in
            guard let sql = db as? any SQLDatabase else { return }
            let rows = try await sql.update(Order.schema)
                .set("payment_status", to: SQLBind(Order.PaymentStatus.refunded.rawValue))
                .set("refund_id", to: SQLBind(refundID))
                .set("refunded_at", to: SQLBind(UnixTime.nowMillis))
                .where("id", .equal, SQLBind(id))
                .where("payment_status", .equal, SQLBind(Order.PaymentStatus.refundPending.rawValue))
                .returning("id").all()
            guard !rows.isEmpty else { return }
            try await OrderEvent(orderID: id, type: "refunded", status: nil, actorID: nil, note: refundID).create(on: db)
            if let customer = try await User.find(order.customerID, on: db) {
                try await Notifier.notify([customer], .paymentRefunded, order: order,
                                          body: "\(order.price) for order \(order.reference) has been refunded to your \(order.paymentMethod.rawValue).", on: db)
            }
        }
    }

    func assign(_ id: UUID, to driverID: UUID, by principal: Principal) async throws -> Order {
        try principal.require(.manager)
        guard let driver = try await User.find(driverID, on: db),
              driver.role == .driver || driver.id == principal.userID, !driver.isDisabled else {
            throw WaybillError.validation("driverId", "not_an_active_driver")
        }
        return try await transition(id, .assign, by: principal) { order, db in
            order.driverID = driverID
            order.failureReason = nil
            order.failureNote = nil
            try await OrderEvent(orderID: order.id!, type: "assigned", status: .assigned, actorID: principal.userID,
                                 note: driver.displayName).create(on: db)
            if driverID != principal.userID {
                try await Notifier.notify([driver], .orderAssigned, order: order,
                                          body: "Pick up at \((try? order.pickup.singleLine) ?? "") and deliver to \((try? order.dropoff.singleLine) ?? "").",
                                          on: db)
            }
        }
    }

    func accept(_ id: UUID, by principal: Principal) async throws -> Order {
        try await transition(id, .accept, by: principal) { order, db in
            try await OrderEvent(orderID: order.id!, type: "accepted", status: .accepted, actorID: principal.userID).create(on: db)
            if let customer = try await User.find(order.customerID, on: db) {
                try await Notifier.notify([customer], .orderAccepted, order: order,
                                          body: "\(principal.user.firstName) will pick up your parcel \(order.reference) at \((try? order.pickup.singleLine) ?? "").",
                                          on: db)
            }
        }
    }

    func pickup(_ id: UUID, cashCollected: Money?, by principal: Principal) async throws -> Order {
        let existing = try await visibleOrder(id, to: principal)
        if existing.paymentMethod == .cash {
            guard let cash = cashCollected else { throw WaybillError.validation("cashCollected", "required_for_cash") }
            var errors = FieldErrors()
            if cash.currency.uppercased() != existing.currency { errors.add("cashCollected.currency", "must_be_\(existing.currency)") }
            if cash.amount < 0 { errors.add("cashCollected.amount", "out_of_range") }
            if !errors.isEmpty { throw WaybillError.validation(errors) }
        } else if cashCollected != nil {
            throw WaybillError.validation("cashCollected", "not_a_cash_order")
        }
        let codes = services.codes
        let order = try await transition(id, .pickup, by: principal) { order, db in
            var note: String?
            if order.paymentMethod == .cash, let cash = cashCollected {
                order.cashCollected = cash.amount
                order.paymentStatus = .collected
                note = "Cash collected: \(Money(cash.amount, order.currency))"
                if cash.amount != order.priceAmount {
                    try await Notifier.notify(try await Notifier.managers(on: db), .cashDiscrepancy, order: order,
                                              body: "\(principal.user.displayName) collected \(Money(cash.amount, order.currency)) for \(order.reference); the price is \(order.price).",
                                              on: db)
                }
            }
            try await OrderEvent(orderID: order.id!, type: "picked_up", status: .inTransit, actorID: principal.userID, note: note).create(on: db)
            if let customer = try await User.find(order.customerID, on: db) {
                try await Notifier.notify([customer], .orderPickedUp, order: order,
                                          body: "Delivery in progress: your parcel \(order.reference) is on its way to \((try? order.dropoff.singleLine) ?? "").",
                                          on: db)
            }
            if order.requireRecipientCode, let email = try order.recipient.email {
                let code = OneTimeCodes.randomCode()
                order.recipientCodeHash = codes.hashRecipientCode(code, orderID: order.id!)
                order.recipientCodeAttempts = 0
                try await Outbox.enqueue(MailTemplates.recipientCode(to: MailAddress(name: try order.recipient.name, address: email),
                                                                    reference: order.reference, code: code), on: db)
                try await OrderEvent(orderID: order.id!, type: "recipient_code_sent", status: nil, actorID: nil).create(on: db)
            }
        }
        return order
    }

    func fail(_ id: UUID, reason: FailureReason, note: String?, by principal: Principal) async throws -> Order {
        let note = note?.trimmingCharacters(in: .whitespacesAndNewlines)
        return try await transition(id, .fail, by: principal) { order, db in
            order.failureReason = reason
            order.failureNote = (note?.isEmpty ?? true) ? nil : note
            try await OrderEvent(orderID: order.id!, type: "failed", status: .failed, actorID: principal.userID,
                                 note: [reason.rawValue, order.failureNote].compactMap { $0 }.joined(separator: ": ")).create(on: db)
            try await Notifier.notify(try await Notifier.managers(on: db), .orderFailed, order: order,
                                      body: "\(principal.user.displayName) could not deliver \(order.reference) (\(reason.rawValue)). Reassign or cancel it.",
                                      on: db)
        }
    }

    // MARK: Payment

    /// Asks the provider about the order's checkout and, if it is paid, moves the order on.
    func confirmPayment(_ id: UUID, by principal: Principal) async throws -> OrderRecord {
        let order = try await visibleOrder(id, to: principal)
        let capacities = capacities(of: principal, for: order)
        guard capacities.contains(.owner) || capacities.contains(.manager) else { throw WaybillError.forbidden }
        guard order.paymentMethod.isOnline else {
            throw WaybillError(.conflict, "not_an_online_payment", "This order is paid \(order.paymentMethod.rawValue == "cash" ? "in cash" : "by invoice").")
        }
        if order.status == .awaitingPayment, let session = order.checkoutSessionID {
            let state = try await services.payments.checkout(id: session)
            try await settleCheckout(state)
        }
        return try await detail(id, for: principal)
    }

    /// The one place a paid checkout moves an order on; called by confirm, the webhook, the
    /// return page and the sandbox page. Idempotent. A checkout paid after the order was
    /// cancelled is refunded.
    func settleCheckout(_ state: CheckoutState) async throws {
        guard let orderID = state.orderID.flatMap(UUID.init(uuidString:)),
              let order = try await Order.find(orderID, on: db), order.checkoutSessionID == state.id else { return }
        if state.expired, order.status == .awaitingPayment {
            _ = try? await transition(orderID, .cancel, by: nil) { order, db in
                order.cancellationReason = "Checkout expired without payment"
                order.paymentStatus = .void
                try await OrderEvent(orderID: orderID, type: "cancelled", status: .cancelled, actorID: nil, note: order.cancellationReason).create(on: db)
            }
            return
        }
        guard state.paid else { return }
        guard state.amount == nil || (state.amount == order.priceAmount && state.currency == order.currency) else {
            logger.error("Checkout \(state.id) paid an amount that differs from order \(order.reference); not confirmed")
            return
        }
        if order.status == .cancelled, order.paymentStatus == .void || order.paymentStatus == .awaiting {
            // Paid after the order was cancelled: give the money back.
            try await transaction { db in
                guard let sql = db as? any SQLDatabase else { return }
                let rows = try await sql.update(Order.schema)
                    .set("payment_status", to: SQLBind(Order.PaymentStatus.refundPending.rawValue))
                    .set("payment_intent_id", to: SQLBind(state.paymentIntent))
                    .where("id", .equal, SQLBind(orderID))
                    .where("payment_status", .in, SQLBind.group([Order.PaymentStatus.void.rawValue, Order.PaymentStatus.awaiting.rawValue]))
                    .returning("id").all()
                if !rows.isEmpty { try await Outbox.enqueueJob(kind: Outbox.refundKind, payload: orderID.uuidString, on: db) }
            }
            try? await refundNow(orderID)
            return
        }
        guard order.status == .awaitingPayment else { return }  // already confirmed: nothing to do
        do {
            try await transition(orderID, .confirmPayment, by: nil) { order, db in
                order.paymentStatus = .paid
                order.paidAt = UnixTime.nowMillis
                order.paymentIntentID = state.paymentIntent
                try await OrderEvent(orderID: orderID, type: "payment_confirmed", status: .pending, actorID: nil,
                                     note: order.sandbox ? "Sandbox payment (test, no money moved)" : nil).create(on: db)
                try await Self.announceNew(order, on: db)
            }
        } catch let error as WaybillError where error.code == "invalid_transition" {
            return  // a concurrent confirmation won; the order is confirmed either way
        }
    }

    /// Handles one verified Stripe event, once per event id.
    func handleStripeEvent(_ json: [String: Any]) async throws {
        guard let eventID = json["id"] as? String, let type = json["type"] as? String else {
            throw WaybillError(.badRequest, "invalid_event", "The event has no id or type.")
        }
        let handled = ["checkout.session.completed", "checkout.session.async_payment_succeeded", "checkout.session.expired"]
        guard handled.contains(type),
              let object = (json["data"] as? [String: Any])?["object"] as? [String: Any] else { return }
        // Record the event first; a second delivery of the same id stops here.
        do {
            try await transaction { db in
                let row = StripeEvent()
                row.id = eventID
                row.type = type
                row.receivedAt = UnixTime.nowMillis
                try await row.create(on: db)
            }
        } catch let error as any DatabaseError where error.isConstraintFailure {
            logger.info("Stripe event \(eventID) already handled")
            return
        }
        do {
            try await settleCheckout(StripePayments.state(from: object))
        } catch {
            // Let Stripe redeliver: forget the event id so the retry is handled.
            _ = try? await transaction { db in try await StripeEvent.query(on: db).filter(\.$id == eventID).delete() }
            throw error
        }
    }

    // MARK: Proof and photos

    struct Upload: Sendable {
        var bytes: [UInt8]
        var field: String
    }

    func deliver(_ id: UUID, signature: Upload, photo: Upload?, recipientName: String, code: String?,
                 by principal: Principal) async throws -> Order {
        let name = recipientName.trimmingCharacters(in: .whitespacesAndNewlines)
        var errors = FieldErrors()
        Validation.text(name, field: "recipientName", maxLength: Validation.maxNameLength, into: &errors)
        if !errors.isEmpty { throw WaybillError.validation(errors) }
        // Check the state before doing any work with the files.
        let current = try await visibleOrder(id, to: principal)
        switch OrderStateMachine.decide(.deliver, from: current.status, as: capacities(of: principal, for: current)) {
        case .forbidden: throw WaybillError.forbidden
        case .wrongStatus(let status): throw WaybillError.invalidTransition(status, .deliver)
        case .allowed: break
        }
        if current.requireRecipientCode {
            try await checkRecipientCode(code, order: current)
        }
        let signatureImage = try await sanitize(signature, allowed: [.png], maxBytes: UploadLimits.signatureBytes,
                                                maxPixels: UploadLimits.signaturePixels)
        let photoImage = try await photo.asyncMap {
            try await sanitize($0, allowed: [.png, .jpeg], maxBytes: UploadLimits.photoBytes, maxPixels: UploadLimits.photoPixels)
        }
        let store = services.files
        let signatureName = try await store.save(signatureImage.bytes, extension: signatureImage.format.fileExtension)
        let photoName = try await photoImage.asyncMap { try await store.save($0.bytes, extension: $0.format.fileExtension) }
        do {
            return try await transition(id, .deliver, by: principal) { order, db in
                let now = UnixTime.nowMillis
                order.signedBy = name
                order.deliveredAt = now
                try await Self.fileRecord(order: order, kind: .signature, image: signatureImage, name: signatureName, by: principal.userID).create(on: db)
                if let photoImage, let photoName {
                    try await Self.fileRecord(order: order, kind: .deliveryPhoto, image: photoImage, name: photoName, by: principal.userID).create(on: db)
                }
                try await OrderEvent(orderID: order.id!, type: "delivered", status: .delivered, actorID: principal.userID,
                                     note: "Signed by \(name)").create(on: db)
                if let customer = try await User.find(order.customerID, on: db) {
                    try await Notifier.notify([customer], .orderDelivered, order: order,
                                              body: "Your parcel \(order.reference) was delivered and signed for by \(name).", on: db)
                }
            }
        } catch {
            await store.delete(signatureName)
            if let photoName { await store.delete(photoName) }
            throw error
        }
    }

    /// Five tries per code, counted even when the delivery is not completed.
    private func checkRecipientCode(_ code: String?, order: Order) async throws {
        guard let code = code?.trimmingCharacters(in: .whitespaces), !code.isEmpty else {
            throw WaybillError.validation("code", "required")
        }
        guard let expected = order.recipientCodeHash, let sql = db as? any SQLDatabase else {
            throw WaybillError(.conflict, "no_recipient_code", "No recipient code was sent for this order.")
        }
        let counted = try await app.writeLock.withLock {
            try await sql.update(Order.schema)
                .set("recipient_code_attempts", to: SQLRaw("recipient_code_attempts + 1"))
                .where("id", .equal, SQLBind(order.id!))
                .where("recipient_code_attempts", .lessThan, SQLBind(OneTimeCodePolicy.maxAttempts))
                .returning("id").all()
        }
        guard !counted.isEmpty else {
            throw WaybillError(.unprocessableEntity, "recipient_code_locked",
                               "Too many wrong codes. Mark the delivery failed or ask a manager.", fields: ["code": "locked"])
        }
        let given = services.codes.hashRecipientCode(code, orderID: order.id!)
        guard constantTimeEquals(Data(given.utf8), Data(expected.utf8)) else {
            throw WaybillError(.unprocessableEntity, "invalid_recipient_code", "The recipient's code is wrong.", fields: ["code": "invalid"])
        }
    }

    private func sanitize(_ upload: Upload, allowed: Set<ImageFormat>, maxBytes: Int, maxPixels: Int) async throws -> SanitizedImage {
        guard upload.bytes.count <= maxBytes else {
            throw WaybillError(.payloadTooLarge, "payload_too_large", "\(upload.field) is larger than \(maxBytes / 1024) KB.",
                               fields: [upload.field: "too_large"])
        }
        let result = try await app.threadPool.runIfActive {
            Result { () throws(ImageProblem) -> SanitizedImage in
                try ImageSanitizer.sanitize(upload.bytes, allowed: allowed, maxWidth: maxPixels, maxHeight: maxPixels)
            }
        }
        switch result {
        case .success(let image): return image
        case .failure(let problem): throw problem.apiError(field: upload.field)
        }
    }

    static func fileRecord(order: Order, kind: OrderFile.Kind, image: SanitizedImage, name: String, by user: UUID) -> OrderFile {
        let file = OrderFile()
        file.id = UUID()
        file.orderID = order.id!
        file.kind = kind
        file.contentType = image.format.contentType
        file.storageName = name
        file.byteCount = image.bytes.count
        file.width = image.width
        file.height = image.height
        file.uploadedBy = user
        file.createdAt = UnixTime.nowMillis
        return file
    }

    /// The customer's photo of the parcel or document, before pickup.
    func addPhoto(_ id: UUID, _ upload: Upload, by principal: Principal) async throws -> OrderFile {
        let order = try await visibleOrder(id, to: principal)
        guard capacities(of: principal, for: order).contains(.owner) else { throw WaybillError.forbidden }
        guard [.awaitingPayment, .pending, .assigned, .accepted].contains(order.status) else {
            throw WaybillError.invalidTransition(order.status, .pickup)
                .with(message: "Photos can be added until the parcel is picked up; this order is \(order.status.rawValue).")
        }
        let image = try await sanitize(upload, allowed: [.png, .jpeg], maxBytes: UploadLimits.photoBytes, maxPixels: UploadLimits.photoPixels)
        let store = services.files
        let name = try await store.save(image.bytes, extension: image.format.fileExtension)
        do {
            return try await transaction { db in
                let count = try await OrderFile.query(on: db).filter(\.$orderID == id).filter(\.$kind == .parcelPhoto).count()
                guard count < UploadLimits.photosPerOrder else {
                    throw WaybillError(.conflict, "too_many_photos", "An order has at most \(UploadLimits.photosPerOrder) photos.")
                }
                let file = Self.fileRecord(order: order, kind: .parcelPhoto, image: image, name: name, by: principal.userID)
                try await file.create(on: db)
                try await OrderEvent(orderID: id, type: "photo_added", status: nil, actorID: principal.userID).create(on: db)
                return file
            }
        } catch {
            await store.delete(name)
            throw error
        }
    }

    func file(orderID: UUID, fileID: UUID, for principal: Principal) async throws -> (OrderFile, Data) {
        _ = try await visibleOrder(orderID, to: principal)
        guard let file = try await OrderFile.query(on: db).filter(\.$id == fileID).filter(\.$orderID == orderID).first() else {
            throw WaybillError.notFound
        }
        return (file, try await services.files.read(file.storageName))
    }
}

final class StripeEvent: Model, @unchecked Sendable {
    static let schema = "stripe_events"
    @ID(custom: "id", generatedBy: .user) var id: String?
    @Field(key: "type") var type: String
    @Field(key: "received_at") var receivedAt: Int64
    init() {}
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
