import Foundation
import Testing
@testable import WaybillCore

@Suite("Operations statistics: on time, delivery times, volume, revenue, failures, per day, week, month, driver and area")
struct OperationsStatisticsTests {
    static let zurich = TimeZone(identifier: "Europe/Zurich")!

    /// Unix milliseconds of a local time in Zürich.
    static func at(_ text: String) -> Int64 {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = zurich
        f.dateFormat = "yyyy-MM-dd HH:mm"
        return Int64(f.date(from: text)!.timeIntervalSince1970 * 1000)
    }

    @Test("Express is due four hours after dispatch; standard by the end of the next day, also across a clock change")
    func promises() {
        #expect(ServicePromise.due(.express, placedAt: Self.at("2026-11-26 10:00"), timeZone: Self.zurich) == Self.at("2026-11-26 14:00"))
        #expect(ServicePromise.due(.standard, placedAt: Self.at("2026-11-26 10:00"), timeZone: Self.zurich) == Self.at("2026-11-28 00:00"))
        #expect(ServicePromise.due(.standard, placedAt: Self.at("2026-11-26 23:59"), timeZone: Self.zurich) == Self.at("2026-11-28 00:00"))
        // Spring forward (29 March 2026) and fall back (25 October 2026) in Zürich: still midnight, local.
        #expect(ServicePromise.due(.standard, placedAt: Self.at("2026-03-28 10:00"), timeZone: Self.zurich) == Self.at("2026-03-30 00:00"))
        #expect(ServicePromise.due(.standard, placedAt: Self.at("2026-10-24 10:00"), timeZone: Self.zurich) == Self.at("2026-10-26 00:00"))
        #expect(ServicePromise.due(.express, placedAt: .max - 10, timeZone: Self.zurich) == .max, "no overflow")
        let late = OperationsSample(placedAt: Self.at("2026-11-26 10:00"), status: .delivered, service: .express, deliveredAt: Self.at("2026-11-26 14:01"))
        #expect(!ServicePromise.onTime(late, timeZone: Self.zurich))
        #expect(ServicePromise.onTime(OperationsSample(placedAt: late.placedAt, status: .delivered, service: .standard, deliveredAt: late.deliveredAt),
                                      timeZone: Self.zurich))
    }

    @Test("A week of orders: figures in total, per day (empty days too), per driver, per area and per failure reason")
    func week() {
        let luca = UserID(UUID()), mia = UserID(UUID())
        let samples = [
            OperationsSample(placedAt: Self.at("2026-11-23 09:00"), status: .delivered, service: .express, deliveredAt: Self.at("2026-11-23 10:00"),
                             driver: luca, postalCode: "3005", amount: 2000),
            OperationsSample(placedAt: Self.at("2026-11-23 11:00"), status: .delivered, service: .express, deliveredAt: Self.at("2026-11-23 16:00"),
                             driver: luca, postalCode: "3011", amount: 3000),
            OperationsSample(placedAt: Self.at("2026-11-25 08:00"), status: .delivered, service: .standard, deliveredAt: Self.at("2026-11-26 12:00"),
                             driver: mia, postalCode: "8001", amount: 1500),
            OperationsSample(placedAt: Self.at("2026-11-25 09:00"), status: .failed, service: .standard, driver: mia, postalCode: "8001",
                             amount: 1500, failureReason: .recipientAbsent),
            OperationsSample(placedAt: Self.at("2026-11-26 09:00"), status: .cancelled, service: .standard, postalCode: "FR-75001", amount: 900),
            // Outside the period: counted nowhere.
            OperationsSample(placedAt: Self.at("2026-11-30 09:00"), status: .delivered, service: .standard, deliveredAt: Self.at("2026-11-30 10:00")),
        ]
        let report = OperationsStatistics.report(samples, from: Self.at("2026-11-23 00:00"), to: Self.at("2026-11-30 00:00"), period: .day,
                                                 timeZone: Self.zurich)
        let t = report.totals
        #expect(t.placed == 5 && t.delivered == 3 && t.failed == 1 && t.cancelled == 1)
        #expect(t.onTime == 2 && t.onTimeRate == 2.0 / 3.0, "the second express was 5 hours")
        #expect(t.revenue == 8000, "everything but the cancelled order")
        #expect(t.medianMinutes == 300 && t.p90Minutes == 28 * 60, "60, 300 and 1,680 minutes")
        #expect(report.buckets.map(\.label) == ["2026-11-23", "2026-11-24", "2026-11-25", "2026-11-26", "2026-11-27", "2026-11-28", "2026-11-29"])
        #expect(report.buckets.map(\.figures.placed) == [2, 0, 2, 1, 0, 0, 0])
        #expect(report.drivers.map(\.driver) == [luca, mia] && report.drivers[1].figures.failed == 1)
        #expect(report.areas.map(\.area) == ["30xx", "80xx", "other"])
        #expect(report.failures.map(\.reason) == [.recipientAbsent] && report.failures[0].count == 1)

        let weeks = OperationsStatistics.report(samples, from: Self.at("2026-11-01 00:00"), to: Self.at("2026-12-01 00:00"), period: .week,
                                                timeZone: Self.zurich)
        #expect(weeks.buckets.first?.label == "2026-W44" && weeks.buckets.contains { $0.label == "2026-W48" && $0.figures.placed == 5 })
        #expect(weeks.buckets.first { $0.label == "2026-W49" }?.figures.placed == 1)
        let months = OperationsStatistics.report(samples, from: Self.at("2026-01-01 00:00"), to: Self.at("2027-01-01 00:00"), period: .month,
                                                 timeZone: Self.zurich)
        #expect(months.buckets.count == 12 && months.buckets[10].label == "2026-11" && months.buckets[10].figures.placed == 6)
    }

    @Test("Days are local days: the clock-change days of Europe/Zurich are one bucket each; periods are bounded")
    func clockChanges() {
        let spring = OperationsStatistics.report([], from: Self.at("2026-03-28 00:00"), to: Self.at("2026-03-31 00:00"), period: .day, timeZone: Self.zurich)
        #expect(spring.buckets.map(\.label) == ["2026-03-28", "2026-03-29", "2026-03-30"])
        #expect(spring.buckets[2].start - spring.buckets[1].start == 23 * 3_600_000)
        let autumn = OperationsStatistics.report([], from: Self.at("2026-10-24 00:00"), to: Self.at("2026-10-27 00:00"), period: .day, timeZone: Self.zurich)
        #expect(autumn.buckets[2].start - autumn.buckets[1].start == 25 * 3_600_000)
        #expect(!OperationsStatistics.validPeriod(from: 10, to: 10) && !OperationsStatistics.validPeriod(from: 0, to: 367 * 86_400_000))
        #expect(!OperationsStatistics.validPeriod(from: .min, to: .max), "no overflow")
        #expect(OperationsStatistics.report([], from: 0, to: 400 * 86_400_000, period: .day, timeZone: Self.zurich).buckets.isEmpty)
        #expect(OperationsStatistics.area(of: "1204") == "12xx" && OperationsStatistics.area(of: "AB12") == nil && OperationsStatistics.area(of: nil) == nil)
    }
}
