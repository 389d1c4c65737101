import Crypto
import Fluent
import Foundation
import Vapor
import WaybillCore

/// A company's monthly statement, read from the ledger: the invoice lines of its orders placed
/// that month, each less what was credited back (a cancelled order nets to nothing and is left
/// out), and their total.
struct Statement: Sendable {
    struct Line: Sendable {
        let order: Order
        /// What the order costs on the statement (minor units): its invoice line less credits.
        let amount: Int
        var money: Money { Money(amount, order.currency) }
    }

    let customer: User
    let month: String
    let lines: [Line]
    let total: Money
}

extension Orders {
    /// `YYYY-MM` → the month's bounds in Unix milliseconds, in `zone` (the display time zone: an
    /// order placed at 00:30 on the 1st in Zurich belongs to that month, as every page shows it).
    static func monthBounds(_ month: String, in zone: TimeZone) -> (Int64, Int64)? {
        let parts = month.split(separator: "-")
        guard parts.count == 2, parts[0].count == 4, parts[1].count == 2,
              let year = Int(parts[0]), let monthNumber = Int(parts[1]), (1...12).contains(monthNumber), (2000...9999).contains(year)
        else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        guard let start = calendar.date(from: DateComponents(year: year, month: monthNumber, day: 1)),
              let end = calendar.date(byAdding: .month, value: 1, to: start) else { return nil }
        return (Int64(start.timeIntervalSince1970 * 1000), Int64(end.timeIntervalSince1970 * 1000))
    }

    static func currentMonth(in zone: TimeZone) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let now = UnixTime.now
        return String(format: "%04d-%02d", calendar.component(.year, from: now), calendar.component(.month, from: now))
    }

    /// Company customers: their own statement. Managers: every company's (or one customer's).
    func statements(month: String?, customerID: UserID?, for principal: Principal) async throws -> [Statement] {
        let zone = services.config.displayTimeZone
        let month = month ?? Self.currentMonth(in: zone)
        guard let (start, end) = Self.monthBounds(month, in: zone) else { throw WaybillError.invalidParameter("month") }
        let all = principal.may(.readAllStatements)
        var account: UserID?
        if all {
            account = customerID
        } else if principal.may(.placeOrders) {
            guard PaymentOptions.hasStatements(isCompany: principal.user.isCompany) else {
                throw WaybillError(.forbidden, .notACompany, "Monthly statements are for company accounts.")
            }
            account = principal.userID
        } else {
            throw WaybillError.forbidden
        }
        let lines = try await invoiceLines(account: account, from: start, to: end)
        let grouped = Dictionary(grouping: lines, by: \.order.customerID)
        var customers: [UserID: User] = [:]
        if !grouped.isEmpty {
            for user in try await User.query(on: db).filter(\.$id ~~ Array(grouped.keys)).all() { customers[try user.storedID] = user }
        }
        if !all, grouped.isEmpty {
            return [Statement(customer: principal.user, month: month, lines: [], total: Money(0, try await currentTariff().tariff.currency))]
        }
        return try grouped.compactMap { id, lines in
            try customers[id].map { Statement(customer: $0, month: month, lines: lines, total: try Self.total(lines)) }
        }.sorted { ($0.customer.companyName ?? $0.customer.email) < ($1.customer.companyName ?? $1.customer.email) }
    }

    /// The invoice lines recorded in `[from, to)` (for one account, or every one), each netted
    /// with the credits of its shipment, through `Ledger.balance`; oldest first.
    func invoiceLines(account: UserID?, from start: Int64, to end: Int64) async throws -> [Statement.Line] {
        let query = LedgerRecord.query(on: db).filter(\.$kind == .invoiceLine).filter(\.$at >= start).filter(\.$at < end)
        if let account { query.filter(\.$accountID == account) }
        let billed = try await query.sort(\.$at).sort(\.$id).all()
        let shipments = billed.compactMap(\.shipmentID)
        guard !shipments.isEmpty else { return [] }
        var entries: [OrderID: [LedgerEntry]] = [:]
        for entry in try await LedgerRecord.query(on: db).filter(\.$shipmentID ~~ shipments).all().map(\.entry) {
            if let shipment = entry.shipment { entries[shipment, default: []].append(entry) }  // each has one: read by it
        }
        let orders = Dictionary(uniqueKeysWithValues: try await Order.query(on: db).filter(\.$id ~~ shipments).all().map { (try $0.storedID, $0) })
        return try shipments.compactMap { id -> Statement.Line? in
            guard let order = orders[id] else { return nil }
            let mine = (entries[id] ?? []).filter { $0.kind == .invoiceLine || ($0.kind == .refund && $0.account == order.customerID) }
            guard let balance = try Self.ledgerBalance(mine), balance.paidByCustomer != 0 else { return nil }
            return Statement.Line(order: order, amount: balance.paidByCustomer)
        }
    }

    static func ledgerBalance(_ entries: [LedgerEntry]) throws -> LedgerBalance? {
        do { return try Ledger.balance(entries) } catch {
            throw WaybillError(.conflict, .ledgerInconsistent, "The ledger of this statement cannot be summed (\(error)).")
        }
    }

    static func total(_ lines: [Statement.Line]) throws -> Money {
        var sum = 0
        for line in lines {
            let (value, overflow) = sum.addingReportingOverflow(line.amount)
            if overflow { throw WaybillError(.conflict, .ledgerInconsistent, "The statement's total does not fit.") }
            sum = value
        }
        return Money(sum, lines.first?.order.currency ?? Tariff.initial.currency)
    }

    func statement(customerID: UserID, month: String) async throws -> Statement {
        guard let customer = try await User.find(customerID, on: db),
              let (start, end) = Self.monthBounds(month, in: services.config.displayTimeZone) else {
            throw WaybillError.notFound
        }
        let lines = try await invoiceLines(account: customerID, from: start, to: end)
        return Statement(customer: customer, month: month, lines: lines, total: try Self.total(lines))
    }
}

/// Links to a printable statement that work without signing in for one hour: the customer id,
/// month and expiry, signed with a key derived from the server secret.
struct StatementLinks: Sendable {
    let key: SymmetricKey

    init(secret: [UInt8]) {
        key = HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: secret),
                                     info: Data("waybill statement links".utf8), outputByteCount: 32)
    }

    func token(customerID: UserID, month: String, lifetime: Int64 = 3600) -> String {
        let payload = "\(customerID.uuidString)|\(month)|\(UnixTime.nowSeconds + lifetime)"
        return Data(payload.utf8).base64URLEncodedString() + "." + Data(HMAC<SHA256>.authenticationCode(for: Data(payload.utf8), using: key)).base64URLEncodedString()
    }

    func verify(_ token: String) -> (UserID, String)? {
        let parts = token.split(separator: ".")
        guard parts.count == 2, let payload = Data(base64URLEncoded: String(parts[0])), let mac = Data(base64URLEncoded: String(parts[1])),
              HMAC<SHA256>.isValidAuthenticationCode(mac, authenticating: payload, using: key),
              let text = String(data: payload, encoding: .utf8) else { return nil }
        let fields = text.split(separator: "|")
        guard fields.count == 3, let id = UserID(uuidString: String(fields[0])), let expiry = Int64(fields[2]),
              expiry >= UnixTime.nowSeconds else { return nil }
        return (id, String(fields[1]))
    }
}
