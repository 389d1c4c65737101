import Crypto
import Fluent
import Foundation
import Vapor
import WaybillCore

/// A company's monthly statement: its invoice orders of one month (cancelled ones excluded).
struct Statement: Sendable {
    let customer: User
    let month: String
    let orders: [Order]
    var total: Money { Money(orders.reduce(0) { $0 + $1.priceAmount }, orders.first?.currency ?? "CHF") }
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
        let parts = calendar.dateComponents([.year, .month], from: UnixTime.now)
        return String(format: "%04d-%02d", parts.year!, parts.month!)
    }

    /// Company customers: their own statement. Managers: every company's (or one customer's).
    func statements(month: String?, customerID: UserID?, for principal: Principal) async throws -> [Statement] {
        let zone = services.config.displayTimeZone
        let month = month ?? Self.currentMonth(in: zone)
        guard let (start, end) = Self.monthBounds(month, in: zone) else { throw WaybillError.invalidParameter("month") }
        let query = Order.query(on: db)
            .filter(\.$paymentMethod == .invoice)
            .filter(\.$createdAt >= start).filter(\.$createdAt < end)
            .filter(\.$status ~~ OrderStatus.billedStatuses)
        let all = principal.may(.readAllStatements)
        if all {
            if let customerID { query.filter(\.$customerID == customerID) }
        } else if principal.may(.placeOrders) {
            guard PaymentOptions.paysByInvoice(isCompany: principal.user.isCompany) else {
                throw WaybillError(.forbidden, .notACompany, "Monthly statements are for company accounts.")
            }
            query.filter(\.$customerID == principal.userID)
        } else {
            throw WaybillError.forbidden
        }
        let orders = try await query.sort(\.$createdAt).all()
        let grouped = Dictionary(grouping: orders, by: \.customerID)
        var customers: [UserID: User] = [:]
        if !grouped.isEmpty {
            for user in try await User.query(on: db).filter(\.$id ~~ Array(grouped.keys)).all() { customers[user.id!] = user }
        }
        if !all, grouped.isEmpty {
            return [Statement(customer: principal.user, month: month, orders: [])]
        }
        return grouped.compactMap { id, orders in customers[id].map { Statement(customer: $0, month: month, orders: orders) } }
            .sorted { ($0.customer.companyName ?? $0.customer.email) < ($1.customer.companyName ?? $1.customer.email) }
    }

    func statement(customerID: UserID, month: String) async throws -> Statement {
        guard let customer = try await User.find(customerID, on: db),
              let (start, end) = Self.monthBounds(month, in: services.config.displayTimeZone) else {
            throw WaybillError.notFound
        }
        let orders = try await Order.query(on: db)
            .filter(\.$customerID == customerID).filter(\.$paymentMethod == .invoice)
            .filter(\.$createdAt >= start).filter(\.$createdAt < end).filter(\.$status ~~ OrderStatus.billedStatuses)
            .sort(\.$createdAt).all()
        return Statement(customer: customer, month: month, orders: orders)
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
