import Crypto
import Fluent
import Foundation
import SQLKit
import Vapor
import WaybillCore

extension WaybillError {
    /// 409 for something the caller may do to an order, but not in its current status.
    static func wrongStatus(_ status: OrderStatus, _ message: String) -> WaybillError {
        var error = WaybillError(.conflict, .invalidTransition, message)
        error.currentStatus = status.rawValue
        return error
    }

    static func invalidTransition(_ status: OrderStatus, _ action: OrderAction) -> WaybillError {
        wrongStatus(status, "This order is \(status.rawValue); it cannot be \(action.pastTense) now.")
    }

    /// 403 or 409 for a refused decision of the state machine or `OrderPolicy`.
    static func refused(_ decision: OrderDecision, _ message: (OrderStatus) -> String) -> WaybillError? {
        switch decision {
        case .allowed: nil
        case .forbidden: .forbidden
        case .wrongStatus(let status): wrongStatus(status, message(status))
        }
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
    let order: OrderRow
    let customer: PersonRow
    let driver: PersonRow?
    var files: [OrderFile] = []
    var events: [(OrderEvent, PersonRow?)] = []
    var capacities: Set<OrderCapacity>
    /// The delivery under way and the tracking link (detail only).
    var tracking: OrderTracking?
    /// The code to give at the hand-over: only for the receiver, while in transit (detail only).
    var recipientCode: String?
    /// Its legs, as its rules see them.
    var legs: [ShipmentState.Leg] = []

    /// The shipment as its rules see it.
    var shipment: ShipmentState { ShipmentStore.state(of: order, id: order.id, legs: legs) }

    /// What the viewer may do now: the shipment's one list (`ShipmentRules.actions`), which the API,
    /// the web pages and the driver's day all read.
    var actions: [OrderAction] { ShipmentRules.actions(on: shipment, for: ShipmentActor(capacities)) }
}

/// The orders service: this file holds what every capability shares (seeing an order, lists);
/// each capability has its own file: `+Ordering` (tariff, quotes, placing), `+Transitions` (the state
/// machine, cancelling), `+Dispatch`, `+DriverSteps`, `+DriverDay`, `+Payment`, `+Proof`, `+Inbox`,
/// `+Statements`. The API and the web app call it; the rules it asks are in WaybillCore/Policies.
struct Orders: WaybillService {
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
        services.webhookWorker.poke()
        return result
    }

    // MARK: Seeing orders

    func capacities(of principal: Principal, for order: some OrderColumns) -> Set<OrderCapacity> {
        OrderPolicy.capacities(of: principal.caller, for: order.parties)
    }

    /// 403 or 409 unless `OrderPolicy` lets the caller do `action` to the order now.
    func check(_ action: OrderSideAction, on order: some OrderColumns, by principal: Principal,
               message: @escaping (OrderStatus) -> String = { "This order is \($0.rawValue); that cannot be done now." }) throws {
        let decision = OrderPolicy.decide(action, status: order.status, as: capacities(of: principal, for: order))
        if let refusal = WaybillError.refused(decision, message) { throw refusal }
    }

    /// The order if the caller may see it: its customer, its driver, or a manager. Otherwise 404,
    /// so nobody learns which ids exist.
    func visibleOrder(_ id: OrderID, to principal: Principal, on db: (any Database)? = nil) async throws -> Order {
        guard let order = try await Order.find(id, on: db ?? self.db),
              OrderPolicy.allows(.see, status: order.status, as: capacities(of: principal, for: order)) else {
            throw WaybillError.notFound
        }
        return order
    }

    /// The order as its customer, driver or a manager sees it; 404 for anyone else. What it reads
    /// is kept for a second (`ReadCaches.orders`, forgotten by every change to the order): an order
    /// followed by its customer, driver and managers is asked for again and again while nothing
    /// changes. Who may see it, its tracking and the receiver's code are worked out every time.
    func detail(_ id: OrderID, for principal: Principal) async throws -> OrderRecord {
        // Inside a transaction the reads could see what it has not committed yet: never kept.
        let cache = services.caches.orders, keeping = !db.inTransaction
        if keeping, let kept = cache.value(id) { return try await record(of: kept, for: principal) }
        guard let sql = db.tracedSQL else { throw Abort(.internalServerError) }
        let generation = cache.generation
        let select = OrderRow.select(on: sql, listed: false).where("id", .equal, SQLBind(id)).limit(1)
        guard let order = try await OrderRow.read(select, on: sql).first else { throw WaybillError.notFound }
        guard OrderPolicy.allows(.see, status: order.status, as: capacities(of: principal, for: order)) else { throw WaybillError.notFound }
        let kept = try await read(order)
        if keeping { cache.keep(kept, for: id, readAt: generation) }
        return try await record(of: kept, for: principal)
    }

    /// What an order's detail shows whoever asks: its history, the people it names, its files.
    private func read(_ order: OrderRow) async throws -> ReadCaches.KeptOrder {
        guard let sql = db.tracedSQL else { throw Abort(.internalServerError) }
        let events = try await ListRows.outputs(sql.select().column(SQLLiteral.all).from(OrderEvent.schema)
            .where("order_id", .equal, SQLBind(order.id)).orderBy("id"), sql: sql).map(OrderEvent.init(reading:))
        var ids = Set([order.customerID])
        if let driver = order.driverID { ids.insert(driver) }
        for event in events { if let actor = event.actorID { ids.insert(actor) } }
        let people = try await Self.people(ids, on: sql)
        // A claim's photos are the claim's (its claimant and staff who decide see them there).
        let files = try await ListRows.outputs(sql.select().column(SQLLiteral.all).from(OrderFile.schema)
            .where("order_id", .equal, SQLBind(order.id)).where("kind", .notEqual, SQLBind(OrderFile.Kind.claimPhoto.rawValue))
            .orderBy("created_at"), sql: sql).map(OrderFile.init(reading:))
        let legs = try await Self.legs(of: [order.id], on: sql)[order.id] ?? []
        return .init(order: order, events: events, people: people, files: files, legs: legs)
    }

    /// The legs of these shipments as their rules see them, in order, read at once.
    static func legs(of ids: some Collection<OrderID>, on sql: any SQLDatabase) async throws -> [OrderID: [ShipmentState.Leg]] {
        guard !ids.isEmpty else { return [:] }
        let rows = try await sql.select().columns("order_id", "kind", "status", "assignee_id", "counter_id").from(Leg.schema)
            .where("order_id", .in, SQLBind.group(Array(ids))).orderBy("order_id").orderBy("position").all()
        var legs: [OrderID: [ShipmentState.Leg]] = [:]
        for row in rows {
            let order = try row.decode(column: "order_id", as: OrderID.self)
            legs[order, default: []].append(ShipmentState.Leg(
                try row.decode(column: "kind", as: LegKind.self), try row.decode(column: "status", as: LegStatus.self),
                assignee: try row.decode(column: "assignee_id", as: UserID?.self), counter: try row.decode(column: "counter_id", as: String?.self)))
        }
        return legs
    }

    /// The detail of an order read (or kept) for `principal`: 404 unless they may see it.
    private func record(of kept: ReadCaches.KeptOrder, for principal: Principal) async throws -> OrderRecord {
        let capacities = capacities(of: principal, for: kept.order)
        guard OrderPolicy.allows(.see, status: kept.order.status, as: capacities) else { throw WaybillError.notFound }
        return try await record(of: kept, capacities: capacities)
    }

    func record(of kept: ReadCaches.KeptOrder, capacities: Set<OrderCapacity>) async throws -> OrderRecord {
        let order = kept.order, users = kept.people
        guard let customer = users[order.customerID] else { throw WaybillError.notFound }
        var record = OrderRecord(order: order, customer: customer, driver: order.driverID.flatMap { users[$0] }, capacities: capacities)
        record.legs = kept.legs
        record.files = kept.files
        record.events = kept.events.map { ($0, $0.actorID.flatMap { users[$0] }) }
        try await complete(&record)
        return record
    }

    /// What a detail works out for its viewer on every read: the tracking and the receiver's code.
    private func complete(_ record: inout OrderRecord) async throws {
        let order = record.order, capacities = record.capacities
        record.tracking = try await Tracking(services: services, db: db, logger: logger).view(of: order, capacities: capacities)
        if OrderPolicy.allows(.seeRecipientCode, status: order.status, as: capacities), let sealed = order.recipientCodeSealed {
            record.recipientCode = services.codes.unsealRecipientCode(sealed, orderID: order.id)
        }
    }

    /// The order as a write left it, with its people, history, files and tracking.
    func load(_ order: Order, capacities: Set<OrderCapacity>, full: Bool = true) async throws -> OrderRecord {
        try await load(OrderRow(order), capacities: capacities, full: full)
    }

    /// The order with its people, and with `full` its history, files and tracking. Every statement
    /// plain SQL filled through `RowOutput`: Fluent's queries spent a fifth of an order's reading
    /// writing and escaping each column's alias (docs/performance.md).
    func load(_ order: OrderRow, capacities: Set<OrderCapacity>, full: Bool = true) async throws -> OrderRecord {
        guard let sql = db.tracedSQL else { throw Abort(.internalServerError) }
        guard full else {
            var ids = Set([order.customerID])
            if let driver = order.driverID { ids.insert(driver) }
            let users = try await Self.people(ids, on: sql)
            guard let customer = users[order.customerID] else { throw WaybillError.notFound }
            var record = OrderRecord(order: order, customer: customer, driver: order.driverID.flatMap { users[$0] }, capacities: capacities)
            record.legs = try await Self.legs(of: [order.id], on: sql)[order.id] ?? []
            return record
        }
        return try await record(of: read(order), capacities: capacities)
    }

    struct ListFilter: Sendable {
        var statuses: [OrderStatus] = []
        var customerID: UserID?
        var driverID: UserID?
        var from: Date?
        var to: Date?
        var cursor: String?
        var limit: Int = 50
        /// One of the caller's boxes (sent, incoming, carrying, all); nil: their usual list.
        var box: ShipmentBox?
    }

    /// Newest first, paged on (created_at, id). Read with SQLKit and filled through `RowOutput`
    /// (the model's own column mapping, read fast): Fluent's query path cost about 0.2 ms per row,
    /// most of a page's time (scripts/bench).
    func list(_ filter: ListFilter, for principal: Principal) async throws -> (records: [OrderRecord], nextCursor: String?) {
        guard let scope = OrderPolicy.listScope(for: principal.caller, box: filter.box) else { throw WaybillError.forbidden }
        // The page of a scope is kept for a second (`ReadCaches.lists`); what each viewer may see of
        // it, and do, is worked out on every request.
        let key = ReadCaches.ListKey(scope: scope, customerID: filter.customerID, driverID: filter.driverID, statuses: filter.statuses,
                                     from: filter.from, to: filter.to, cursor: filter.cursor, limit: filter.limit)
        let cache = services.caches.lists, keeping = !db.inTransaction
        let kept: ReadCaches.KeptList
        if keeping, let found = cache.value(key) {
            kept = found
        } else {
            let generation = cache.generation
            kept = try await read(filter, scope: scope)
            if keeping { cache.keep(kept, for: key, readAt: generation) }
        }
        let page = Array(kept.orders.prefix(filter.limit))
        let records = summaries(page, people: kept.people, legs: kept.legs, for: principal)
        let next = kept.orders.count > filter.limit ? page.last.map { Self.encodeCursor($0.createdAt, $0.id) } : nil
        return (records, next)
    }

    /// A page of a list scope's orders (one more than asked, to know whether there is a next), with the people it names.
    private func read(_ filter: ListFilter, scope: OrderPolicy.ListScope) async throws -> ReadCaches.KeptList {
        guard let sql = db.tracedSQL else { throw Abort(.internalServerError) }
        let query = OrderRow.select(on: sql, listed: true)
        Self.restrict(query, to: scope)
        if let customer = filter.customerID { query.where("customer_id", .equal, SQLBind(customer)) }
        if let driver = filter.driverID { query.where("driver_id", .equal, SQLBind(driver)) }
        if filter.statuses.count == 1 { query.where("status", .equal, SQLBind(filter.statuses[0].rawValue)) }
        else if !filter.statuses.isEmpty { query.where("status", .in, SQLBind.group(filter.statuses.map(\.rawValue))) }
        if let from = filter.from { query.where("created_at", .greaterThanOrEqual, SQLBind(UnixTime.clampedMillis(from))) }
        if let to = filter.to { query.where("created_at", .lessThan, SQLBind(UnixTime.clampedMillis(to))) }
        if let raw = filter.cursor {
            guard let (at, id): (Int64, OrderID) = Self.decodeCursor(raw) else { throw WaybillError.invalidParameter("cursor") }
            query.where(Self.keyset(at, id, before: true))
        }
        query.orderBy("created_at", .descending).orderBy("id", .descending).limit(filter.limit + 1)
        let orders = try await OrderRow.read(query, on: sql)
        let page = orders.prefix(filter.limit)
        return .init(orders: orders, people: try await Self.people(of: page, on: sql), legs: try await Self.legs(of: page.map(\.id), on: sql))
    }

    /// Orders the caller may see, as list entries: with their customer and driver, read at once.
    func summaries(_ orders: [OrderRow], for principal: Principal) async throws -> [OrderRecord] {
        guard let sql = db.tracedSQL else { throw Abort(.internalServerError) }
        return summaries(orders, people: try await Self.people(of: orders, on: sql), legs: try await Self.legs(of: orders.map(\.id), on: sql),
                         for: principal)
    }

    /// The customers and drivers of `orders`, read at once.
    static func people(of orders: some Collection<OrderRow>, on sql: any SQLDatabase) async throws -> [UserID: PersonRow] {
        var ids = Set(orders.map(\.customerID))
        for order in orders { if let driver = order.driverID { ids.insert(driver) } }
        return try await people(ids, on: sql)
    }

    func summaries(_ orders: [OrderRow], people users: [UserID: PersonRow], legs: [OrderID: [ShipmentState.Leg]],
                   for principal: Principal) -> [OrderRecord] {
        // Worked out once for the page: the caller's capabilities were a tenth of a list's time when
        // asked for per order.
        let caller = principal.caller
        return orders.compactMap { order -> OrderRecord? in
            let capacities = OrderPolicy.capacities(of: caller, for: order.parties)
            guard OrderPolicy.allows(.see, status: order.status, as: capacities), let customer = users[order.customerID] else { return nil }
            var record = OrderRecord(order: order, customer: customer, driver: order.driverID.flatMap { users[$0] }, capacities: capacities)
            record.legs = legs[order.id] ?? []
            return record
        }
    }

    /// The people a page of orders names, read at once.
    static func people(_ ids: some Collection<UserID>, on sql: any SQLDatabase) async throws -> [UserID: PersonRow] {
        try await PersonRow.read(ids, on: sql)
    }

    /// The accounts with these ids, whole but for the password hash (through `RowOutput`), for
    /// those who need more than names (a conversation checks its members' standing).
    static func accounts(_ ids: some Collection<UserID>, on sql: any SQLDatabase) async throws -> [UserID: User] {
        guard !ids.isEmpty else { return [:] }
        let select = sql.select().columns(User.listColumns).from(User.schema).where("id", .in, SQLBind.group(Array(ids)))
        var users: [UserID: User] = [:]
        for row in try await ListRows.outputs(select, sql: sql) {
            let user = try User(reading: row)
            users[try user.storedID] = user
        }
        return users
    }

    /// The orders of a list scope (`OrderPolicy.listScope`), as SQL: the list and the export read the same rows.
    static func restrict(_ query: SQLSelectBuilder, to scope: OrderPolicy.ListScope) {
        let hidden = SQLBind.group(OrderStatus.allCases.filter { !$0.listedForCustomer }.map(\.rawValue))
        switch scope {
        case .placedBy(let customer): query.where("customer_id", .equal, SQLBind(customer)).where("status", .notIn, hidden)
        case .addressedTo(let email): query.where("recipient_email", .equal, SQLBind(email)).where("status", .notIn, hidden)
        case .assignedTo(let driver): query.where("driver_id", .equal, SQLBind(driver))
        case .all: break
        }
    }

    /// Rows after (or before) `(at, id)` in `(created_at, id)` order, as one row-value comparison:
    /// both databases walk the `(…, created_at, id)` index straight to it. (`created_at < ? OR
    /// (created_at = ? AND id < ?)` made SQLite scan the index from its end: a page a million rows
    /// deep cost 40 ms instead of 6.)
    static func keyset(_ at: Int64, _ id: OrderID, before: Bool) -> SQLQueryString {
        "(\(ident: "created_at"), \(ident: "id")) \(unsafeRaw: before ? "<" : ">") (\(bind: at), \(bind: id))"
    }

    static func encodeCursor<Tag>(_ at: Int64, _ id: Tagged<Tag, UUID>) -> String {
        Data("\(at):\(id.uuidString)".utf8).base64URLEncodedString()
    }

    static func decodeCursor<Tag>(_ raw: String) -> (Int64, Tagged<Tag, UUID>)? {
        guard let data = Data(base64URLEncoded: raw), let text = String(data: data, encoding: .utf8) else { return nil }
        let parts = text.split(separator: ":", maxSplits: 1)
        guard parts.count == 2, let at = Int64(parts[0]), let id = Tagged<Tag, UUID>(uuidString: String(parts[1])) else { return nil }
        return (at, id)
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
