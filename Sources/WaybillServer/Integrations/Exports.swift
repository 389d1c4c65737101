import Fluent
import Foundation
import SQLKit
import Vapor
import WaybillCore

/// A CSV file produced a page at a time as the client reads it: the next page is read from the
/// database only when the previous one has been sent (the HTTP body pulls), so memory holds one
/// page whatever the number of rows.
struct CSVPages: AsyncSequence, Sendable {
    typealias Element = ArraySlice<UInt8>
    /// Where the next page starts: the sort key of the last row sent.
    struct Cursor: Sendable { var at: Int64; var id: String }
    typealias Page = @Sendable (Cursor?) async throws -> (text: String, next: Cursor?)

    let header: [String]
    let page: Page

    func makeAsyncIterator() -> Iterator { Iterator(header: header, page: page) }

    struct Iterator: AsyncIteratorProtocol {
        var header: [String]?
        let page: Page
        var cursor: Cursor?
        var done = false

        init(header: [String], page: @escaping Page) {
            self.header = header
            self.page = page
        }

        mutating func next() async throws -> ArraySlice<UInt8>? {
            if let header {
                self.header = nil
                // A byte order mark: Excel then reads the file as UTF-8.
                return ArraySlice(Array(("\u{FEFF}" + CSVText.line(header)).utf8))
            }
            while !done {
                let (text, next) = try await page(cursor)
                cursor = next
                done = next == nil
                if !text.isEmpty { return ArraySlice(Array(text.utf8)) }
            }
            return nil
        }
    }
}

/// CSV exports for a period (issue "Integrations", item 4): shipments as the caller's list shows
/// them, the ledger, and the statements' lines. `ExportPolicy` says who gets which rows; this reads
/// them in pages of `ExportPolicy.pageSize` on the sort key, so an export of a million rows needs the
/// memory of one page.
struct Exports: WaybillService {
    let services: WaybillServices
    let db: any Database
    let logger: Logger

    struct Export: Sendable {
        let fileName: String
        let body: CSVPages
    }

    func export(_ kind: ExportKind, from: String?, to: String?, box: ShipmentBox? = nil, by me: Principal) async throws -> Export {
        let (start, end) = try ExportPolicy.period(from: from, to: to, in: services.config.displayTimeZone).orValidationError()
        let body: CSVPages
        switch kind {
        case .shipments:
            guard let scope = ExportPolicy.shipmentScope(me.caller, box: box) else { throw WaybillError.forbidden }
            body = shipments(scope, start: start, end: end)
        case .ledger, .statements:
            guard let scope = ExportPolicy.ledgerScope(me.caller, isCompany: me.user.isCompany) else {
                throw WaybillError(.forbidden, .notACompany, "The ledger and statements are for company accounts and managers.")
            }
            body = kind == .ledger ? ledger(scope, start: start, end: end) : statementLines(scope, start: start, end: end)
        }
        let budget = "exports:" + me.userID.uuidString
        if let wait = try await db.writeStatement(services, { db in try await Throttle(db).take(budget, limit: ExportPolicy.perHour, window: 3600) }) {
            throw WaybillError(.tooManyRequests, .rateLimited, "You have started \(ExportPolicy.perHour) exports in the last hour; try again later.",
                               retryAfter: Int(clamping: wait))
        }
        let period = [from, to].compactMap { $0?.isEmpty == false ? $0 : nil }.joined(separator: "_")
        logger.info("Export \(kind.rawValue) by \(me.userID.uuidString)")
        return Export(fileName: "waybill-\(kind.rawValue)\(period.isEmpty ? "" : "-" + period).csv", body: body)
    }

    private var sql: any SQLDatabase {
        get throws {
            guard let sql = db.tracedSQL else { throw Abort(.internalServerError) }
            return sql
        }
    }

    // MARK: Shipments

    private func shipments(_ scope: OrderPolicy.ListScope, start: Int64?, end: Int64?) -> CSVPages {
        let db = self.db
        return CSVPages(header: ExportPolicy.columns(.shipments)) { cursor in
            guard let sql = db.tracedSQL else { throw Abort(.internalServerError) }
            let query = sql.select().columns(Order.listColumns).from(Order.schema)
            Orders.restrict(query, to: scope)
            if let start { query.where("created_at", .greaterThanOrEqual, SQLBind(start)) }
            if let end { query.where("created_at", .lessThan, SQLBind(end)) }
            if let cursor, let id = OrderID(uuidString: cursor.id) { query.where(Orders.keyset(cursor.at, id, before: false)) }
            query.orderBy("created_at", .ascending).orderBy("id", .ascending).limit(ExportPolicy.pageSize)
            let orders = try await ListRows.outputs(query, sql: sql).map { try Order(reading: $0) }
            var ids = Set(orders.map(\.customerID))
            for order in orders { if let driver = order.driverID { ids.insert(driver) } }
            let people = try await Orders.people(Array(ids), on: sql)
            var text = ""
            text.reserveCapacity(orders.count * 300)
            for o in orders {
                let customer = people[o.customerID]
                text += CSVText.line([
                    o.reference, CSVText.text(o.externalReference ?? ""), ExportPolicy.timestamp(o.createdAt), o.status.rawValue,
                    CSVText.text(customer?.email ?? ""), CSVText.text(customer?.companyName ?? ""),
                    CSVText.text(o.pickup.street), CSVText.text(o.pickup.postalCode), CSVText.text(o.pickup.city), o.pickup.country,
                    CSVText.text(o.dropoff.street), CSVText.text(o.dropoff.postalCode), CSVText.text(o.dropoff.city), o.dropoff.country,
                    CSVText.text(o.recipient.name), CSVText.text(o.recipient.email ?? ""), CSVText.text(o.recipient.phone ?? ""),
                    o.weightClass.rawValue, o.service.rawValue, o.distanceMeters.map { String(format: "%.1f", Double($0) / 1000) } ?? "",
                    ExportPolicy.decimal(o.priceAmount), o.currency, o.paymentMethod.rawValue, o.paymentStatus.rawValue,
                    CSVText.text(o.driverID.flatMap { people[$0]?.email } ?? ""), ExportPolicy.timestamp(o.deliveredAt), CSVText.text(o.signedBy ?? ""),
                    CSVText.text(o.cancellationReason ?? ""),
                ])
            }
            let next = try orders.count == ExportPolicy.pageSize ? orders.last.map { CSVPages.Cursor(at: $0.createdAt, id: try $0.storedID.uuidString) } : nil
            return (text, next)
        }
    }

    // MARK: Ledger

    private func ledgerQuery(_ scope: ExportPolicy.LedgerScope, start: Int64?, end: Int64?, after: CSVPages.Cursor?,
                             kind: LedgerEntryKind? = nil) throws -> SQLSelectBuilder {
        let query = try sql.select().columns("id", "kind", "amount", "currency", "shipment_id", "account_id", "at", "reference").from(LedgerRecord.schema)
        if case .account(let account) = scope { query.where("account_id", .equal, SQLBind(account)) }
        if let kind { query.where("kind", .equal, SQLBind(kind.rawValue)) }
        if let start { query.where("at", .greaterThanOrEqual, SQLBind(start)) }
        if let end { query.where("at", .lessThan, SQLBind(end)) }
        if let after { query.where("id", .greaterThan, SQLBind(after.at)) }
        return query.orderBy("id", .ascending).limit(ExportPolicy.pageSize)
    }

    struct LedgerRow: Decodable {
        let id: Int
        let kind: String
        let amount: Int
        let currency: String
        let shipment_id: UUID?
        let account_id: UUID?
        let at: Int64
        let reference: String?
    }

    private func references(_ shipments: [OrderID]) async throws -> [OrderID: (reference: String, external: String?, createdAt: Int64, customer: UserID)] {
        guard !shipments.isEmpty else { return [:] }
        struct Row: Decodable { let id: UUID; let reference: String; let external_reference: String?; let created_at: Int64; let customer_id: UUID }
        let rows = try await sql.select().columns("id", "reference", "external_reference", "created_at", "customer_id").from(Order.schema)
            .where("id", .in, SQLBind.group(shipments)).all(decoding: Row.self)
        return Dictionary(rows.map { (OrderID($0.id), ($0.reference, $0.external_reference, $0.created_at, UserID($0.customer_id))) }, uniquingKeysWith: { a, _ in a })
    }

    private func ledger(_ scope: ExportPolicy.LedgerScope, start: Int64?, end: Int64?) -> CSVPages {
        let exports = self
        let page: CSVPages.Page = { (cursor: CSVPages.Cursor?) async throws -> (text: String, next: CSVPages.Cursor?) in
            let rows = try await exports.ledgerQuery(scope, start: start, end: end, after: cursor).all(decoding: LedgerRow.self)
            let shipments = try await exports.references(Array(Set(rows.compactMap { $0.shipment_id.map { OrderID($0) } })))
            let people = try await Orders.people(Array(Set(rows.compactMap { $0.account_id.map { UserID($0) } })), on: exports.sql)
            var text = ""
            for row in rows {
                text += CSVText.line([
                    String(row.id), ExportPolicy.timestamp(row.at), row.kind, ExportPolicy.decimal(row.amount), row.currency,
                    row.shipment_id.flatMap { shipments[OrderID($0)]?.reference } ?? "",
                    CSVText.text(row.account_id.flatMap { people[UserID($0)]?.email } ?? ""), CSVText.text(row.reference ?? ""),
                ])
            }
            let next = rows.count == ExportPolicy.pageSize ? rows.last.map { CSVPages.Cursor(at: Int64($0.id), id: "") } : nil
            return (text, next)
        }
        return CSVPages(header: ExportPolicy.columns(.ledger), page: page)
    }

    // MARK: Statements

    /// The statements' lines: each invoice line of the period netted with the credits of its
    /// shipment, as `Orders.invoiceLines` computes a statement, labelled with its month.
    private func statementLines(_ scope: ExportPolicy.LedgerScope, start: Int64?, end: Int64?) -> CSVPages {
        let exports = self
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = services.config.displayTimeZone
        let months = calendar
        let page: CSVPages.Page = { (cursor: CSVPages.Cursor?) async throws -> (text: String, next: CSVPages.Cursor?) in
            let billed = try await exports.ledgerQuery(scope, start: start, end: end, after: cursor, kind: .invoiceLine).all(decoding: LedgerRow.self)
            let ids = Array(Set(billed.compactMap { $0.shipment_id.map { OrderID($0) } }))
            let shipments = try await exports.references(ids)
            var entries: [OrderID: [LedgerEntry]] = [:]
            if !ids.isEmpty {
                let all = try await exports.sql.select().columns("id", "kind", "amount", "currency", "shipment_id", "account_id", "at", "reference")
                    .from(LedgerRecord.schema).where("shipment_id", .in, SQLBind.group(ids)).all(decoding: LedgerRow.self)
                for row in all {
                    guard let kind = LedgerEntryKind(rawValue: row.kind), let raw = row.shipment_id else { continue }
                    let shipment = OrderID(raw)
                    entries[shipment, default: []].append(LedgerEntry(kind: kind, amount: row.amount, currency: row.currency, shipment: shipment,
                                                                     account: row.account_id.map { UserID($0) }, at: row.at, reference: row.reference))
                }
            }
            let people = try await Orders.people(Array(Set(shipments.values.map(\.customer))), on: exports.sql)
            var text = ""
            for row in billed {
                guard let raw = row.shipment_id, let shipment = shipments[OrderID(raw)] else { continue }
                let id = OrderID(raw)
                let mine = (entries[id] ?? []).filter { $0.kind == .invoiceLine || ($0.kind == .refund && $0.account == shipment.customer) }
                guard let balance = try Orders.ledgerBalance(mine), balance.paidByCustomer != 0 else { continue }
                let parts = months.dateComponents([.year, .month], from: Date(timeIntervalSince1970: TimeInterval(row.at) / 1000))
                let customer = people[shipment.customer]
                text += CSVText.line([
                    String(format: "%04d-%02d", parts.year ?? 0, parts.month ?? 0), CSVText.text(customer?.companyName ?? ""), CSVText.text(customer?.email ?? ""),
                    shipment.reference, CSVText.text(shipment.external ?? ""), ExportPolicy.timestamp(shipment.createdAt),
                    ExportPolicy.decimal(balance.paidByCustomer), row.currency,
                ])
            }
            let next = billed.count == ExportPolicy.pageSize ? billed.last.map { CSVPages.Cursor(at: Int64($0.id), id: "") } : nil
            return (text, next)
        }
        return CSVPages(header: ExportPolicy.columns(.statements), page: page)
    }
}
