import Foundation
import OpenAPIRuntime
import Vapor
import WaybillAPI
import WaybillCore

/// Operations statistics: translation only (`OperationsStats` and `OperationsStatistics` decide).
extension APIHandler {
    func getOperationsStatistics(_ input: Operations.GetOperationsStatistics.Input) async throws -> Operations.GetOperationsStatistics.Output {
        let me = try await principal()
        let q = input.query
        let period = OperationsStatistics.Period(rawValue: q.period?.rawValue ?? "day") ?? .day
        let r = try await OperationsStats(request: try request).report(from: q.from, to: q.to, period: period, by: me)
        return .ok(.init(body: .json(.init(
            currency: r.currency, from: Self.date(r.from), to: Self.date(r.to), period: try wire(period),
            timeZone: OperationsStats.zoneName(r), totals: Self.figures(r.report.totals),
            buckets: r.report.buckets.map { .init(label: $0.label, start: Self.date($0.start), figures: Self.figures($0.figures)) },
            drivers: r.report.drivers.map { .init(driverId: $0.driver.uuidString, name: r.names[$0.driver] ?? "", figures: Self.figures($0.figures)) },
            areas: r.report.areas.map { .init(area: $0.area, figures: Self.figures($0.figures)) },
            failures: r.report.failures.map { .init(reason: $0.reason.rawValue, count: $0.count) }))))
    }

    func exportOperationsStatistics(_ input: Operations.ExportOperationsStatistics.Input) async throws -> Operations.ExportOperationsStatistics.Output {
        let me = try await principal()
        let q = input.query
        let period = OperationsStatistics.Period(rawValue: q.period?.rawValue ?? "day") ?? .day
        let r = try await OperationsStats(request: try request).report(from: q.from, to: q.to, period: period, by: me)
        try request.storage[DownloadNameKey.self] = "waybill-statistics.csv"
        return .ok(.init(body: .csv(HTTPBody(OperationsStats.csv(r)))))
    }

    static func figures(_ f: OperationsStatistics.Figures) -> S.OperationsFigures {
        S.OperationsFigures(placed: f.placed, delivered: f.delivered, failed: f.failed, cancelled: f.cancelled, onTime: f.onTime,
                            onTimeRate: f.onTimeRate, medianMinutes: f.medianMinutes, p90Minutes: f.p90Minutes, revenue: Int64(f.revenue))
    }
}

extension OperationsStats {
    static func zoneName(_ r: Result) -> String { r.timeZone.identifier }
}
