import Foundation

/// CSV exports for a period (issue "Integrations", item 4): shipments, the ledger and monthly
/// statements. Who gets which rows is decided here; the server streams them a page at a time, so
/// an export of a million rows holds one page in memory, never the file.
public enum ExportKind: String, Sendable, CaseIterable {
    case shipments, ledger, statements
}

public enum ExportPolicy {
    /// Rows read from the database at a time.
    public static let pageSize = 1000
    /// Exports an account may start in an hour (each reads the whole period).
    public static let perHour = 30

    public enum LedgerScope: Sendable, Equatable {
        case all
        case account(UserID)
    }

    /// The ledger and statements: every account for those who read every statement (managers);
    /// a company's own; nobody else (nil).
    public static func ledgerScope(_ caller: Caller, isCompany: Bool) -> LedgerScope? {
        if caller.may(.readAllStatements) { return .all }
        if caller.may(.placeOrders), PaymentOptions.hasStatements(isCompany: isCompany) { return .account(caller.id) }
        return nil
    }

    /// Shipments: exactly those of the caller's list (`OrderPolicy.listScope`), in one of their boxes.
    public static func shipmentScope(_ caller: Caller, box: ShipmentBox?) -> OrderPolicy.ListScope? {
        OrderPolicy.listScope(for: caller, box: box)
    }

    /// The header of each export, its columns in order.
    public static func columns(_ kind: ExportKind) -> [String] {
        switch kind {
        case .shipments:
            ["reference", "external_reference", "created_at", "status", "customer_email", "customer_company", "pickup_street",
             "pickup_postal_code", "pickup_city", "pickup_country", "dropoff_street", "dropoff_postal_code", "dropoff_city", "dropoff_country",
             "recipient_name", "recipient_email", "recipient_phone", "weight_class", "service", "distance_km", "price", "currency",
             "payment_method", "payment_status", "driver_email", "delivered_at", "signed_by", "cancellation_reason"]
        case .ledger:
            ["id", "at", "kind", "amount", "currency", "shipment_reference", "account_email", "reference"]
        case .statements:
            ["month", "company", "customer_email", "shipment_reference", "external_reference", "ordered_at", "amount", "currency"]
        }
    }

    /// The period `[from, to]` of two days (`YYYY-MM-DD`, in `zone`; `to` included) as Unix
    /// milliseconds `[start, end)`. Either may be absent (open). Field errors name the bad one.
    public static func period(from: String?, to: String?, in zone: TimeZone) -> Result<(start: Int64?, end: Int64?), FieldErrorsError> {
        var errors = FieldErrors()
        func day(_ text: String?, _ field: String, next: Bool) -> Int64? {
            guard let text, !text.isEmpty else { return nil }
            let parts = text.split(separator: "-")
            guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
                  let y = Int(parts[0]), let m = Int(parts[1]), let d = Int(parts[2]), (2000...9999).contains(y) else {
                errors.add(field, "invalid"); return nil
            }
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = zone
            let components = DateComponents(year: y, month: m, day: d)
            guard components.isValidDate(in: calendar), let date = calendar.date(from: components),
                  let bound = next ? calendar.date(byAdding: .day, value: 1, to: date) : date else {
                errors.add(field, "invalid"); return nil
            }
            return Int64(bound.timeIntervalSince1970 * 1000)
        }
        let start = day(from, "from", next: false), end = day(to, "to", next: true)
        if let start, let end, end <= start { errors.add("to", "before_from") }
        return errors.isEmpty ? .success((start, end)) : .failure(FieldErrorsError(errors))
    }

    /// The first and last day (`YYYY-MM-DD`) of a month `YYYY-MM`, for an export of that month.
    public static func monthDays(_ month: String) -> (first: String, last: String)? {
        let parts = month.split(separator: "-")
        guard parts.count == 2, let y = Int(parts[0]), let m = Int(parts[1]), (2000...9999).contains(y), (1...12).contains(m) else { return nil }
        let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
        let days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1]
        let mm = m < 10 ? "0\(m)" : "\(m)"
        return ("\(y)-\(mm)-01", "\(y)-\(mm)-\(days)")
    }

    /// An amount in minor units as a spreadsheet reads it: "15.00", "-2.50".
    public static func decimal(_ minor: Int) -> String {
        let sign = minor < 0 ? "-" : ""
        let units = minor.magnitude / 100, cents = minor.magnitude % 100
        return "\(sign)\(units).\(cents < 10 ? "0" : "")\(cents)"
    }

    /// A moment as ISO 8601 in UTC, to the second ("2026-11-24T08:30:00Z").
    public static func timestamp(_ millis: Int64?) -> String {
        guard let millis else { return "" }
        let seconds = Int64(clamping: millis / 1000)
        let days = seconds >= 0 ? seconds / 86400 : (seconds - 86399) / 86400
        let rest = seconds - days * 86400
        // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm): no Foundation formatter per row.
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        let y = yoe + era * 400 + (m <= 2 ? 1 : 0)
        func two(_ v: Int64) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return "\(y)-\(two(m))-\(two(d))T\(two(rest / 3600)):\(two(rest % 3600 / 60)):\(two(rest % 60))Z"
    }
}
