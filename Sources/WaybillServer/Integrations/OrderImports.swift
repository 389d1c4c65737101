import Fluent
import Foundation
import SQLKit
import Vapor
import WaybillCore

/// An uploaded delivery file, checked, waiting for its owner to confirm it (or confirmed).
final class OrderImportRecord: Model, @unchecked Sendable {
    static let schema = "order_imports"

    enum Status: String, Codable, Sendable { case ready, rejected, committed }

    @ID(custom: .id, generatedBy: .user) var id: OrderImportID?
    @Field(key: "owner_id") var ownerID: UserID
    @Field(key: "file_name") var fileName: String
    @Field(key: "format") var format: String
    /// The file as uploaded, until it is confirmed or expires: confirming checks it again.
    @OptionalField(key: "content") var content: Data?
    @Field(key: "status") var status: Status
    @Field(key: "row_count") var rowCount: Int
    @Field(key: "valid_count") var validCount: Int
    @Field(key: "invalid_count") var invalidCount: Int
    @Field(key: "already_count") var alreadyCount: Int
    @Field(key: "problem_count") var problemCount: Int
    /// The first `OrderImportPolicy.maxProblemsListed` problems, as JSON.
    @Field(key: "problems") var problemsJSON: String
    @Field(key: "total_amount") var totalAmount: Int64
    @Field(key: "currency") var currency: String
    @OptionalField(key: "created_count") var createdCount: Int?
    @Field(key: "created_at") var createdAt: Int64
    @Field(key: "expires_at") var expiresAt: Int64
    @OptionalField(key: "committed_at") var committedAt: Int64?

    var properties: [any AnyProperty] {
        [$id, $ownerID, $fileName, $format, $content, $status, $rowCount, $validCount, $invalidCount, $alreadyCount, $problemCount,
         $problemsJSON, $totalAmount, $currency, $createdCount, $createdAt, $expiresAt, $committedAt]
    }

    init() {}

    var problems: [ImportProblem] { (try? JSONDecoder().decode([ImportProblem].self, from: Data(problemsJSON.utf8))) ?? [] }
    var isExpired: Bool { status == .ready && expiresAt <= UnixTime.nowMillis }
    var mayCommit: Bool { status == .ready && !isExpired && validCount > 0 }

    /// What the API and the pages show as the status: `expired` once a ready file waited too long.
    var shownStatus: String { isExpired ? "expired" : status.rawValue }
}

/// The delivery import (issue "Integrations", item 3): a dispatcher, or a company customer for
/// themself, uploads a CSV or XLSX file; every row is checked (`ImportSheet.check`) and the problems
/// shown per row and column before anything is created; confirming places every valid row in one
/// transaction, each order as if placed alone (its leg, its timeline, `orderPlaced` for webhooks,
/// the ledger and the board), idempotent by the outside reference. Managers hear of an import once,
/// not once per row.
struct OrderImports: WaybillService {
    let services: WaybillServices
    let db: any Database
    let logger: Logger

    private var subscriptions: Subscriptions { Subscriptions(services: services, db: db, logger: logger) }

    static let uploadsPerHour = 30

    func importer(_ me: Principal) throws -> OrderImportPolicy.Importer {
        if let importer = OrderImportPolicy.importer(me.caller, isCompany: me.user.isCompany) { return importer }
        if OrderImportPolicy.importer(Caller(id: me.userID, capabilities: me.user.capabilities), isCompany: me.user.isCompany) != nil {
            throw WaybillError.accountSuspended
        }
        if OrderImportPolicy.awaitsVetting(me.caller, isCompany: me.user.isCompany) {
            throw WaybillError(.forbidden, .companyNotVetted, "Imports are for company accounts our staff have vetted; contact us to have yours checked.")
        }
        throw WaybillError(.forbidden, .forbidden, "Imports are for dispatchers and company accounts.")
    }

    // MARK: Upload

    func upload(_ bytes: [UInt8], fileName: String?, by me: Principal) async throws -> OrderImportRecord {
        let importer = try importer(me)
        guard bytes.count <= OrderImportPolicy.maxBytes else {
            throw WaybillError(.payloadTooLarge, .payloadTooLarge, "The file is larger than \(OrderImportPolicy.maxBytes / 1_048_576) MB.", fields: ["file": "too_large"])
        }
        guard !bytes.isEmpty else { throw WaybillError.validation("file", "required") }
        let budget = "imports:" + me.userID.uuidString
        if let wait = try await db.writeStatement(services, { db in try await Throttle(db).take(budget, limit: Self.uploadsPerHour, window: 3600) }) {
            throw WaybillError(.tooManyRequests, .rateLimited, "You have uploaded \(Self.uploadsPerHour) files in the last hour; try again later.",
                               retryAfter: Int(clamping: wait))
        }
        let record = OrderImportRecord()
        record.id = .generated()
        record.ownerID = me.userID
        record.fileName = Self.cleanFileName(fileName)
        record.format = XLSX.looksLikeWorkbook(bytes) ? "xlsx" : "csv"
        record.createdAt = UnixTime.nowMillis
        record.expiresAt = record.createdAt + OrderImportPolicy.keepSeconds * 1000
        record.createdCount = nil
        let checked = try await check(bytes, importer: importer, me: me)
        // A file beyond the reader's bounds is refused whole, and not kept.
        if case .rejected(let problems) = checked.outcome, let bound = problems.first(where: { ImportProblem.boundCodes.contains($0.code) }) {
            logger.info("Import by \(me.userID.uuidString) refused: \(bound.code)")
            throw WaybillError(.unprocessableEntity, .validationFailed, ImportText.message(bound.code).en, fields: ["file": bound.code])
        }
        record.currency = checked.currency
        record.rowCount = checked.rowCount
        switch checked.outcome {
        case .rejected(let problems):
            record.status = .rejected
            record.content = nil
            fill(record, problems: problems, valid: 0, invalid: 0, already: 0, total: 0)
        case .checked(let check, let quotes):
            record.status = .ready
            record.content = check.rows.isEmpty ? nil : Data(bytes)
            let total = quotes.reduce(Int64(0)) { $0 &+ Int64($1.price.amount) }
            fill(record, problems: check.problems, valid: check.rows.count, invalid: check.invalidRows, already: check.alreadyImported.count, total: total)
        }
        try await db.writeTransaction(services) { db in try await record.create(on: db) }
        logger.info("Import \(record.id?.uuidString ?? "") by \(me.userID.uuidString): \(record.rowCount) rows, \(record.validCount) valid")
        return record
    }

    private func fill(_ record: OrderImportRecord, problems: [ImportProblem], valid: Int, invalid: Int, already: Int, total: Int64) {
        record.validCount = valid
        record.invalidCount = invalid
        record.alreadyCount = already
        record.problemCount = problems.count
        record.totalAmount = total
        let listed = Array(problems.prefix(OrderImportPolicy.maxProblemsListed))
        record.problemsJSON = String(decoding: (try? JSONEncoder().encode(listed)) ?? Data("[]".utf8), as: UTF8.self)
    }

    static func cleanFileName(_ name: String?) -> String {
        let base = (name ?? "").split(separator: "/").last.map(String.init) ?? ""
        let clean = String(base.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F && $0 != "\\" }.prefix(120))
        return clean.isEmpty ? "deliveries" : clean
    }

    // MARK: Checking

    struct Checked {
        var rowCount: Int
        var currency: String
        var tariffVersion: Int
        var outcome: Outcome
        /// The plans of the rows' customers, as `quotes` applied them.
        var plans: [UserID: Subscriptions.Benefit] = [:]
        /// Each valid row's price, in the file's order (`ImportCheck.quotes`).
        enum Outcome { case rejected([ImportProblem]), checked(ImportCheck, quotes: [Quote]) }
    }

    /// Reads and checks a file against the accounts, references and tariff as they are now.
    func check(_ bytes: [UInt8], importer: OrderImportPolicy.Importer, me: Principal, on db: (any Database)? = nil) async throws -> Checked {
        let db = db ?? self.db
        let tariffRecord = try await Orders(services: services, db: db, logger: logger).currentTariff(on: db)
        let tariff = try tariffRecord.tariff
        var checked = Checked(rowCount: 0, currency: tariff.currency, tariffVersion: tariffRecord.id ?? 0, outcome: .rejected([]))
        let table: [(line: Int, fields: [String])]
        // Parsing is CPU work (up to 10 MB, or a sheet of 64 MiB unpacked): on the thread pool.
        switch try await services.threadPool.runIfActive({ Self.read(bytes) }) {
        case .table(let rows): table = rows
        case .problem(let problem):
            checked.outcome = .rejected([problem])
            return checked
        }
        checked.rowCount = max(0, table.count - 1)
        let sheet: ImportSheet
        switch ImportSheet.read(table) {
        case .failure(let rejection): checked.outcome = .rejected(rejection.problems); return checked
        case .success(let read): sheet = read
        }
        checked.rowCount = sheet.rows.count
        let myself = try Self.customer(me.user)
        var customers: [String: ImportCustomer] = [:]
        if importer == .dispatcher {
            for chunk in Array(sheet.customerEmails).chunked(500) {
                for user in try await User.query(on: db).filter(\.$email ~~ Array(chunk)).all() { customers[user.email.lowercased()] = try Self.customer(user) }
            }
        }
        let owners = Set([myself.id] + customers.values.map(\.id))
        let existing = try await existingReferences(Array(sheet.externalReferences), customers: Array(owners), on: db)
        let check = sheet.check(importer: importer, me: myself, customers: customers, existing: existing, currency: tariff.currency)
        // Priced as the orders will be: each customer's plan (discount, included deliveries) applies.
        checked.plans = try await subscriptions.benefits(for: Array(Set(check.rows.map(\.customer))))
        checked.outcome = .checked(check, quotes: check.quotes(tariff: tariff, plans: checked.plans.mapValues(\.benefit)))
        return checked
    }

    enum Reading: Sendable {
        case table([(line: Int, fields: [String])])
        case problem(ImportProblem)
    }

    /// A file's table, read within `OrderImportPolicy.tableLimits` (the reader stops at the first
    /// row, column or value beyond), or the problem that stops it. CPU work: run it off the event loops.
    static func read(_ bytes: [UInt8]) -> Reading {
        switch table(bytes) {
        // NUL is no text a person types, and PostgreSQL cannot store or compare it: a file whose
        // cells hold one is not a table of deliveries (found by scripts/attack on PostgreSQL).
        case .table(let rows) where rows.contains(where: { $0.fields.contains { $0.utf8.contains(0) } }): return .problem(.unreadable)
        case let reading: return reading
        }
    }

    private static func table(_ bytes: [UInt8]) -> Reading {
        if XLSX.looksLikeWorkbook(bytes) {
            do { return .table(try XLSX.rows(bytes, limits: OrderImportPolicy.tableLimits)) } catch {
                switch error {
                case .notAWorkbook: return .problem(.unreadable)
                case .tooLarge: return .problem(.unpacksTooLarge)
                case .exceeded(let overflow): return .problem(.problem(.exceeded(overflow)))
                }
            }
        }
        switch CSVText.rows(bytes, limits: OrderImportPolicy.tableLimits) {
        case .success(let rows): return .table(rows)
        case .failure(let failure): return .problem(.problem(failure))
        }
    }

    static func customer(_ user: User) throws -> ImportCustomer {
        let id = try user.storedID
        let caller = user.caller(id: id)
        return ImportCustomer(id: id, email: user.email.lowercased(), isCompany: user.isCompany, vetted: PaymentOptions.vetted(caller.capabilities),
                              accountAddress: user.accountAddress, maySend: caller.may(.placeOrders) && !user.isBanned)
    }

    /// The outside references among `references` already placed by any of `customers`.
    func existingReferences(_ references: [String], customers: [UserID], on db: any Database) async throws -> [UserID: Set<String>] {
        guard !references.isEmpty, !customers.isEmpty, let sql = db.tracedSQL else { return [:] }
        struct Row: Decodable { let customer_id: UUID; let external_reference: String }
        var found: [UserID: Set<String>] = [:]
        for chunk in references.chunked(500) {
            let rows = try await sql.select().column("customer_id").column("external_reference").from(Order.schema)
                .where("customer_id", .in, SQLBind.group(customers))
                .where("external_reference", .in, SQLBind.group(Array(chunk)))
                .all(decoding: Row.self)
            for row in rows { found[UserID(row.customer_id), default: []].insert(row.external_reference) }
        }
        return found
    }

    // MARK: Seeing

    func find(_ id: OrderImportID, by me: Principal) async throws -> OrderImportRecord {
        _ = try importer(me)
        guard let record = try await OrderImportRecord.find(id, on: db), record.ownerID == me.userID else { throw WaybillError.notFound }
        return record
    }

    func recent(by me: Principal, limit: Int = 20) async throws -> [OrderImportRecord] {
        _ = try importer(me)
        return try await OrderImportRecord.query(on: db).filter(\.$ownerID == me.userID).sort(\.$createdAt, .descending).limit(limit).all()
    }

    // MARK: Confirming

    /// Places every valid row of a ready import, in one transaction, checking the file again first
    /// (a customer, a reference or the tariff may have changed since the upload). Confirming twice,
    /// or from two tabs at once, places the rows once.
    func commit(_ id: OrderImportID, by me: Principal) async throws -> OrderImportRecord {
        let importer = try importer(me)
        let record = try await find(id, by: me)
        if record.status == .committed { return record }
        guard record.status == .ready else { throw WaybillError(.conflict, .conflict, "This file has problems that stop it being imported; fix them and upload it again.") }
        guard !record.isExpired else { throw WaybillError(.conflict, .linkExpired, "This upload has expired; upload the file again.") }
        guard let content = record.content else { throw WaybillError(.conflict, .conflict, "No row of this file can be imported.") }
        let bytes = [UInt8](content)
        var attempts = 0
        while true {
            attempts += 1
            do {
                return try await place(record, bytes: bytes, importer: importer, by: me)
            } catch let error as any DatabaseError where error.isConstraintFailure && attempts < 3 {
                // Another import placed one of these references meanwhile, or a reference repeated: check again.
                logger.info("Import \(id.uuidString) met a constraint; checking again")
            } catch let error as WaybillError where error.code == .includedDeliveriesUsed && attempts < 3 {
                // An order took one of the plan's included deliveries meanwhile: priced again with what is left.
                logger.info("Import \(id.uuidString): the plan's included deliveries changed; pricing again")
            }
        }
    }

    private func place(_ record: OrderImportRecord, bytes: [UInt8], importer: OrderImportPolicy.Importer, by me: Principal) async throws -> OrderImportRecord {
        let checked = try await check(bytes, importer: importer, me: me)
        guard case .checked(let check, let quotes) = checked.outcome else {
            throw WaybillError(.conflict, .conflict, "The file no longer reads as it did; upload it again.")
        }
        let sandbox = services.payments.isSandbox
        let now = UnixTime.nowMillis
        // Priced by the check just made, with each customer's plan as read then: its discount on every
        // row, its included deliveries to the first rows, taken in the transaction below (all of
        // them, or a 409 and the file checked again).
        let plans = checked.plans
        var counted: [UserID: Int] = [:]
        let orders = try zip(check.rows, quotes).map { row, quote -> Order in
            let plan = quote.plan == nil ? nil : plans[row.customer]
            let order = Order.new(row.order, quote: quote, customerID: row.customer, tariffVersion: checked.tariffVersion, sandbox: sandbox,
                                  subscription: plan?.subscription, at: now)
            if quote.plan?.included == true { counted[row.customer, default: 0] += 1 }
            order.externalReference = row.externalReference
            order.importID = record.id
            ShipmentStore.place(order, legs: [try Leg.fleet(for: order)])
            return order
        }
        let included = counted
        try await drawFreshReferences(orders)
        let events = services.events
        let importID = try record.storedID, actor = me.userID
        let importer = me.user
        let budgetKey = "orders:import:" + me.userID.uuidString, budget = services.config.importedOrdersPerDay
        let placed: Bool = try await db.writeTransaction(services) { db in
            // Claim the import first: a second confirmation waits here, then finds it taken.
            guard let sql = db.tracedSQL else { throw Abort(.internalServerError) }
            let claimed = try await sql.update(OrderImportRecord.schema)
                .set("status", to: OrderImportRecord.Status.committed.rawValue)
                .where("id", .equal, SQLBind(importID)).where("status", .equal, SQLBind(OrderImportRecord.Status.ready.rawValue))
                .returning("id").all()
            guard !claimed.isEmpty else { return false }
            // Imported orders reach dispatch like any other: they count against the importing
            // account's daily budget, every row of the file or none (the claim above is undone).
            if let wait = try await Throttle(db).take(budgetKey, amount: orders.count, limit: budget, window: OrderImportPolicy.importBudgetWindowSeconds) {
                throw WaybillError(.tooManyRequests, .tooManyOrders,
                                   "Imports may place \(budget) orders a day per account; this file's \(orders.count) would pass it. Try again later or ask us to raise your limit.",
                                   retryAfter: Int(clamping: wait))
            }
            for (customer, count) in included {
                guard let plan = plans[customer] else { continue }
                try await Subscriptions.useIncluded(plan.subscription, of: customer, count: count, limit: plan.benefit.terms.includedDeliveries,
                                                    periodStart: plan.periodStart, on: db)
            }
            var perCustomer: [UserID: Int] = [:]
            // The rows go in a hundred at a time (one statement each for orders, legs and timelines):
            // round trips, not rows, are what a transaction of ten thousand orders spends its time on.
            for chunk in orders.chunked(100) {
                try await Array(chunk).create(on: db)
                try await chunk.map { try Leg.fleet(for: $0) }.create(on: db)
                try await chunk.map { OrderEvent(orderID: try $0.storedID, type: "created", status: $0.status, actorID: actor, note: "import") }.create(on: db)
            }
            for order in orders {
                try await events.record(.shipment(try OrderRow(order), .placed), on: db)
                perCustomer[order.customerID, default: 0] += 1
            }
            try await sql.update(OrderImportRecord.schema)
                .set("created_count", to: SQLBind(orders.count))
                .set("committed_at", to: SQLBind(UnixTime.nowMillis))
                .set("content", to: SQLLiteral.null)
                .where("id", .equal, SQLBind(importID)).run()
            try await events.record(.ordersImported(importID: importID, by: try PersonRow(importer), perCustomer: perCustomer), on: db)
            return true
        }
        services.outbox.poke()
        services.webhookWorker.poke()
        if placed { logger.info("Import \(importID.uuidString) placed \(orders.count) orders") }
        guard let fresh = try await OrderImportRecord.find(importID, on: db) else { throw WaybillError.notFound }
        return fresh
    }

    /// References are 40 random bits: among millions of orders a few thousand new ones can meet an
    /// old one. Draw again for those before the transaction (the unique index stays the guard).
    private func drawFreshReferences(_ orders: [Order]) async throws {
        guard let sql = db.tracedSQL else { return }
        struct Row: Decodable { let reference: String }
        for _ in 0..<5 {
            var seen = Set<String>(), clash = Set<String>()
            for order in orders where !seen.insert(order.reference).inserted { clash.insert(order.reference) }
            for chunk in orders.map(\.reference).chunked(500) {
                let rows = try await sql.select().column("reference").from(Order.schema).where("reference", .in, SQLBind.group(Array(chunk))).all(decoding: Row.self)
                clash.formUnion(rows.map(\.reference))
            }
            if clash.isEmpty { return }
            for order in orders where clash.contains(order.reference) { order.reference = Orders.newReference() }
        }
    }

    /// Forgets the files nobody confirmed in time (hourly housekeeping); their summaries stay.
    func deleteExpiredFiles() async throws {
        try await db.writeTransaction(services) { db in
            guard let sql = db.tracedSQL else { return }
            try await sql.update(OrderImportRecord.schema).set("content", to: SQLLiteral.null)
                .where("expires_at", .lessThan, SQLBind(UnixTime.nowMillis)).where("content", .isNot, SQLLiteral.null).run()
        }
    }
}

extension Array {
    func chunked(_ size: Int) -> [ArraySlice<Element>] {
        stride(from: 0, to: count, by: size).map { self[$0..<Swift.min($0 + size, count)] }
    }
}
