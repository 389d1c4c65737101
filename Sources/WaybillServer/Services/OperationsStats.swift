import Fluent
import Foundation
import SQLKit
import Vapor
import WaybillCore

/// Operations statistics for dispatchers (issue 17, item 6): the orders that reached dispatch in a
/// period, read a column at a time, added up by `OperationsStatistics` per day, week or month of the
/// company's time zone (`DISPLAY_TIME_ZONE`), per driver, per postal-code area and per failure reason.
struct OperationsStats: WaybillService {
    let services: WaybillServices
    let db: any Database
    let logger: Logger

    struct Result: Sendable {
        var report: OperationsStatistics.Report
        var from: Int64
        var to: Int64
        var period: OperationsStatistics.Period
        var names: [UserID: String]
        var currency: String
        var timeZone: TimeZone
    }

    var timeZone: TimeZone { services.config.displayTimeZone }

    /// The period from the local dates `from` (included) and `to` (included); by default the last 30 days.
    func bounds(from: String?, to: String?) throws -> (Int64, Int64) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        func day(_ text: String, _ field: String) throws -> Date {
            let parts = text.split(separator: "-").compactMap { Int($0) }
            guard parts.count == 3, text.count == 10,
                  let date = calendar.date(from: DateComponents(year: parts[0], month: parts[1], day: parts[2])),
                  calendar.component(.day, from: date) == parts[2] else { throw WaybillError.invalidParameter(field, "invalid_date") }
            return date
        }
        let today = calendar.startOfDay(for: Date(timeIntervalSince1970: Double(UnixTime.nowMillis) / 1000))
        let last = try to.map { try day($0, "to") } ?? today
        let first = try from.map { try day($0, "from") } ?? (calendar.date(byAdding: .day, value: -29, to: last) ?? last)
        guard let end = calendar.date(byAdding: .day, value: 1, to: last) else { throw WaybillError.invalidParameter("to", "invalid_date") }
        let (start, stop) = (Int64(first.timeIntervalSince1970 * 1000), Int64(end.timeIntervalSince1970 * 1000))
        guard OperationsStatistics.validPeriod(from: start, to: stop) else {
            throw WaybillError.invalidParameter(stop <= start ? "to" : "from", stop <= start ? "before_from" : "too_long")
        }
        return (start, stop)
    }

    func report(from: String?, to: String?, period: OperationsStatistics.Period, by me: Principal) async throws -> Result {
        try me.require(.dispatch)
        let (start, stop) = try bounds(from: from, to: to)
        guard let sql = db.tracedSQL else { throw WaybillError.notFound }
        // Dispatch time: paid, or placed when paid later. Unpaid checkouts never reached dispatch.
        let placed = SQLFunction("coalesce", args: SQLIdentifier("paid_at"), SQLIdentifier("created_at"))
        let rows = try await sql.select()
            .column(placed, as: "placed_at")
            .columns("status", "service", "delivered_at", "driver_id", "dropoff_postal_code", "price_amount", "failure_reason", "currency")
            .from(Order.schema)
            .where(placed, .greaterThanOrEqual, SQLBind(start)).where(placed, .lessThan, SQLBind(stop))
            .where("status", .notEqual, SQLBind(OrderStatus.awaitingPayment.rawValue))
            .all()
        var samples: [OperationsSample] = []
        samples.reserveCapacity(rows.count)
        var currency = "CHF"
        for row in rows {
            guard let status = OrderStatus(rawValue: try row.decode(column: "status", as: String.self)),
                  let service = ServiceLevel(rawValue: try row.decode(column: "service", as: String.self)) else { continue }
            currency = try row.decode(column: "currency", as: String.self)
            samples.append(OperationsSample(
                placedAt: try row.decode(column: "placed_at", as: Int64.self), status: status, service: service,
                deliveredAt: try row.decode(column: "delivered_at", as: Int64?.self), driver: try row.decode(column: "driver_id", as: UserID?.self),
                postalCode: try row.decode(column: "dropoff_postal_code", as: String?.self), amount: try row.decode(column: "price_amount", as: Int.self),
                failureReason: try row.decode(column: "failure_reason", as: String?.self).flatMap(FailureReason.init(rawValue:))))
        }
        let report = OperationsStatistics.report(samples, from: start, to: stop, period: period, timeZone: timeZone)
        let people = try await Orders.people(report.drivers.map(\.driver), on: sql)
        return Result(report: report, from: start, to: stop, period: period, names: people.mapValues(\.displayName), currency: currency,
                      timeZone: timeZone)
    }

    /// The report as CSV: one line per group (the total, each period, driver and area) and per failure reason.
    static func csv(_ r: Result) -> String {
        var lines = [CSVText.line(["group", "key", "placed", "delivered", "failed", "cancelled", "on_time", "on_time_rate", "median_minutes",
                                   "p90_minutes", "revenue", "currency"])]
        func line(_ group: String, _ key: String, _ f: OperationsStatistics.Figures) -> String {
            CSVText.line([group, key, String(f.placed), String(f.delivered), String(f.failed), String(f.cancelled), String(f.onTime),
                          f.onTimeRate.map { String(format: "%.3f", $0) } ?? "", f.medianMinutes.map(String.init) ?? "",
                          f.p90Minutes.map(String.init) ?? "", String(format: "%.2f", Double(f.revenue) / 100), r.currency])
        }
        lines.append(line("total", "", r.report.totals))
        for b in r.report.buckets { lines.append(line(r.period.rawValue, b.label, b.figures)) }
        // Names and areas come from people (a display name, a postal code): neutralised like every such cell.
        for d in r.report.drivers { lines.append(line("driver", CSVText.text(r.names[d.driver] ?? d.driver.uuidString), d.figures)) }
        for a in r.report.areas { lines.append(line("area", CSVText.text(a.area), a.figures)) }
        for f in r.report.failures { lines.append(CSVText.line(["failure", f.reason.rawValue, "", "", String(f.count), "", "", "", "", "", "", ""])) }
        return lines.joined(separator: "\r\n") + "\r\n"
    }
}
