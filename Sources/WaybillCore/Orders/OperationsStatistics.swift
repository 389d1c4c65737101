import Foundation

// Operations statistics for managers (issue "Conversations, ratings and delivery statistics",
// item 6), the pure part: what "on time" means for each service, how orders are grouped (per day,
// week or month in the company's time zone, per driver, per postal-code area, per failure reason),
// and the figures of each group. The server reads the orders; this decides what they add up to.

/// One order as the statistics read it.
public struct OperationsSample: Sendable, Equatable {
    /// When it reached dispatch: paid, or placed when paid later (cash, invoice).
    public var placedAt: Int64
    public var status: OrderStatus
    public var service: ServiceLevel
    public var deliveredAt: Int64?
    public var driver: UserID?
    /// The drop-off's postal code.
    public var postalCode: String?
    /// Its price in minor units.
    public var amount: Int
    public var failureReason: FailureReason?

    public init(placedAt: Int64, status: OrderStatus, service: ServiceLevel, deliveredAt: Int64? = nil, driver: UserID? = nil,
                postalCode: String? = nil, amount: Int = 0, failureReason: FailureReason? = nil) {
        self.placedAt = placedAt
        self.status = status
        self.service = service
        self.deliveredAt = deliveredAt
        self.driver = driver
        self.postalCode = postalCode
        self.amount = amount
        self.failureReason = failureReason
    }
}

/// What each service promises: express within four hours of the order reaching dispatch, standard
/// by the end of the next day in the company's time zone.
public enum ServicePromise {
    public static let expressMillis: Int64 = 4 * 3_600_000

    /// When a delivery is due (Unix milliseconds).
    public static func due(_ service: ServiceLevel, placedAt: Int64, timeZone: TimeZone) -> Int64 {
        switch service {
        case .express:
            let (due, overflow) = placedAt.addingReportingOverflow(expressMillis)
            return overflow ? .max : due
        case .standard:
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = timeZone
            let day = calendar.startOfDay(for: Date(timeIntervalSince1970: Double(placedAt) / 1000))
            // Two calendar days on, whatever their length (a day around a clock change has 23 or 25 hours).
            guard let end = calendar.date(byAdding: .day, value: 2, to: day) else { return .max }
            return Int64((end.timeIntervalSince1970 * 1000).rounded())
        }
    }

    public static func onTime(_ sample: OperationsSample, timeZone: TimeZone) -> Bool {
        guard let delivered = sample.deliveredAt else { return false }
        return delivered <= due(sample.service, placedAt: sample.placedAt, timeZone: timeZone)
    }
}

public enum OperationsStatistics {
    public enum Period: String, Sendable, Hashable, Codable, CaseIterable {
        case day, week, month
    }

    /// The figures of a group of orders.
    public struct Figures: Sendable, Equatable {
        /// Orders that reached dispatch in the group.
        public var placed = 0
        public var delivered = 0
        public var failed = 0
        public var cancelled = 0
        /// Delivered within their service's promise (`ServicePromise`).
        public var onTime = 0
        /// What was billed (every order but a cancelled one), in minor units.
        public var revenue = 0
        /// Minutes from dispatch to delivery, of each delivered order.
        public var minutes: [Int] = []

        public init() {}

        /// 0…1; nil with nothing delivered.
        public var onTimeRate: Double? { delivered == 0 ? nil : Double(onTime) / Double(delivered) }
        public var medianMinutes: Int? { percentile(0.5) }
        public var p90Minutes: Int? { percentile(0.9) }

        func percentile(_ p: Double) -> Int? {
            guard !minutes.isEmpty else { return nil }
            return Int(DeliveryStatistics.percentile(minutes.sorted().map(Double.init), p))
        }

        mutating func add(_ sample: OperationsSample, timeZone: TimeZone) {
            placed += 1
            switch sample.status {
            case .delivered:
                delivered += 1
                if ServicePromise.onTime(sample, timeZone: timeZone) { onTime += 1 }
                if let at = sample.deliveredAt {
                    let (span, overflow) = at.subtractingReportingOverflow(sample.placedAt)
                    if !overflow, span >= 0 { minutes.append(Int(span / 60_000)) }
                }
            case .failed: failed += 1
            case .cancelled: cancelled += 1
            case .awaitingPayment, .pending, .assigned, .accepted, .inTransit: break
            }
            if sample.status.billed {
                let (sum, overflow) = revenue.addingReportingOverflow(sample.amount)
                revenue = overflow ? .max : sum
            }
        }
    }

    public struct Bucket: Sendable, Equatable {
        /// `2026-11-26`, `2026-W48` (ISO week) or `2026-11`.
        public var label: String
        public var start: Int64
        public var figures: Figures
    }

    public struct Report: Sendable, Equatable {
        public var totals = Figures()
        /// Every day, week or month of the period, empty ones too, in order.
        public var buckets: [Bucket] = []
        /// Per driver, most deliveries first.
        public var drivers: [(driver: UserID, figures: Figures)] = []
        /// Per postal-code area (the first two digits: `30xx`), most orders first.
        public var areas: [(area: String, figures: Figures)] = []
        /// Failed deliveries per reason, most first.
        public var failures: [(reason: FailureReason, count: Int)] = []

        public static func == (a: Report, b: Report) -> Bool {
            a.totals == b.totals && a.buckets == b.buckets && a.drivers.map(\.driver) == b.drivers.map(\.driver)
                && a.areas.map(\.area) == b.areas.map(\.area) && a.failures.map(\.reason) == b.failures.map(\.reason)
        }
    }

    /// The longest period one report covers.
    public static let maxDays = 366

    /// Whether [from, to) is a period a report may cover.
    public static func validPeriod(from: Int64, to: Int64) -> Bool {
        let (span, overflow) = to.subtractingReportingOverflow(from)
        return !overflow && span > 0 && span <= Int64(maxDays) * 86_400_000
    }

    /// The postal-code area of a drop-off: its first two digits, or nil.
    public static func area(of postalCode: String?) -> String? {
        guard let code = postalCode?.trimmingCharacters(in: .whitespaces), code.count >= 4,
              code.prefix(2).allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return code.prefix(2) + "xx"
    }

    /// The figures of the orders that reached dispatch in [from, to), grouped.
    public static func report(_ samples: [OperationsSample], from: Int64, to: Int64, period: Period, timeZone: TimeZone) -> Report {
        var report = Report()
        var calendar = Calendar(identifier: .iso8601)
        calendar.timeZone = timeZone
        report.buckets = buckets(from: from, to: to, period: period, calendar: calendar)
        var drivers: [UserID: Figures] = [:]
        var areas: [String: Figures] = [:]
        var failures: [FailureReason: Int] = [:]
        for sample in samples where sample.placedAt >= from && sample.placedAt < to {
            report.totals.add(sample, timeZone: timeZone)
            // The bucket: the last one starting at or before the order.
            if let index = report.buckets.lastIndex(where: { $0.start <= sample.placedAt }) {
                report.buckets[index].figures.add(sample, timeZone: timeZone)
            }
            if let driver = sample.driver { drivers[driver, default: Figures()].add(sample, timeZone: timeZone) }
            areas[area(of: sample.postalCode) ?? "other", default: Figures()].add(sample, timeZone: timeZone)
            if sample.status == .failed { failures[sample.failureReason ?? .other, default: 0] += 1 }
        }
        report.drivers = drivers.map { ($0.key, $0.value) }
            .sorted { ($0.figures.delivered, $1.driver.uuidString) > ($1.figures.delivered, $0.driver.uuidString) }
        report.areas = areas.map { ($0.key, $0.value) }.sorted { ($0.figures.placed, $1.area) > ($1.figures.placed, $0.area) }
        report.failures = failures.map { ($0.key, $0.value) }.sorted { ($0.count, $1.reason.rawValue) > ($1.count, $0.reason.rawValue) }
        return report
    }

    /// The days, weeks or months that [from, to) touches, each from its local start.
    static func buckets(from: Int64, to: Int64, period: Period, calendar: Calendar) -> [Bucket] {
        guard validPeriod(from: from, to: to) else { return [] }
        let component: Calendar.Component = switch period {
        case .day: .day
        case .week: .weekOfYear
        case .month: .month
        }
        let first = Date(timeIntervalSince1970: Double(from) / 1000)
        guard var start = calendar.dateInterval(of: component, for: first)?.start else { return [] }
        var result: [Bucket] = []
        let end = Date(timeIntervalSince1970: Double(to) / 1000)
        while start < end, result.count <= maxDays + 1 {
            result.append(Bucket(label: label(start, period: period, calendar: calendar), start: Int64((start.timeIntervalSince1970 * 1000).rounded()),
                                 figures: Figures()))
            guard let next = calendar.date(byAdding: component, value: 1, to: start) else { break }
            start = next
        }
        return result
    }

    static func label(_ date: Date, period: Period, calendar: Calendar) -> String {
        let c = calendar.dateComponents([.year, .month, .day, .weekOfYear, .yearForWeekOfYear], from: date)
        switch period {
        case .day: return String(format: "%04d-%02d-%02d", c.year ?? 0, c.month ?? 0, c.day ?? 0)
        case .week: return String(format: "%04d-W%02d", c.yearForWeekOfYear ?? 0, c.weekOfYear ?? 0)
        case .month: return String(format: "%04d-%02d", c.year ?? 0, c.month ?? 0)
        }
    }
}
