import Foundation
import Vapor
import WaybillCore

extension WebRoutes {
    static let statistics = WebPath("/statistics")
    static let statisticsExport = WebPath("/statistics/export")
}

/// Operations statistics in the web app (dispatchers): the period's figures, a chart per measure drawn
/// as SVG on the server with its table beside it, per driver, per area and per failure reason, and the
/// CSV. The service is `OperationsStats`; the rules `OperationsStatistics`.
struct StatisticsPages {
    func register(_ routes: any RoutesBuilder) {
        routes.get(WebRoutes.statistics, use: show)
        routes.get(WebRoutes.statisticsExport, use: export)
    }

    func query(_ req: Request) -> (from: String?, to: String?, period: OperationsStatistics.Period) {
        func value(_ name: String) -> String? { req.query[String.self, at: name].flatMap { $0.isEmpty ? nil : $0 } }
        return (value("from"), value("to"), value("period").flatMap(OperationsStatistics.Period.init(rawValue:)) ?? .day)
    }

    func show(_ req: Request) async throws -> Response {
        let (ctx, me) = try WebAuth.require(req, .dispatch)
        let q = query(req)
        let result = try await OperationsStats(request: req).report(from: q.from, to: q.to, period: q.period, by: me)
        return try StatisticsPage(result: result).response(ctx)
    }

    func export(_ req: Request) async throws -> Response {
        let (_, me) = try WebAuth.require(req, .dispatch)
        let q = query(req)
        let result = try await OperationsStats(request: req).report(from: q.from, to: q.to, period: q.period, by: me)
        var headers = HTTPHeaders()
        headers.replaceOrAdd(name: .contentType, value: "text/csv; charset=utf-8")
        headers.replaceOrAdd(name: .contentDisposition, value: "attachment; filename=\"waybill-statistics.csv\"")
        return Response(status: .ok, headers: headers, body: .init(string: OperationsStats.csv(result)))
    }
}

/// Bar charts as SVG, drawn on the server: no script, readable by screen readers through the table
/// each one stands beside (the chart itself is one labelled image).
enum SVGChart {
    struct Series {
        var name: String
        var cssClass: String
        var values: [Double]
    }

    /// Stacked bars, one per label.
    static func bars(id: String, title: String, labels: [String], series: [Series], maxValue: Double? = nil, percent: Bool = false) -> String {
        let width = 640.0, height = 220.0, left = 40.0, bottom = 30.0, top = 10.0
        let count = max(labels.count, 1)
        let totals = (0..<labels.count).map { i in series.reduce(0) { $0 + ($1.values.indices.contains(i) ? $1.values[i] : 0) } }
        let top1 = max(maxValue ?? (totals.max() ?? 0), 1)
        let slot = (width - left) / Double(count)
        let barWidth = max(1, slot * 0.7)
        var shapes = ""
        for i in 0..<labels.count {
            var y = height - bottom
            for s in series {
                let v = s.values.indices.contains(i) ? s.values[i] : 0
                let h = (height - bottom - top) * v / top1
                guard h > 0 else { continue }
                y -= h
                shapes += "<rect class=\"\(s.cssClass)\" x=\"\(fmt(left + Double(i) * slot + (slot - barWidth) / 2))\" y=\"\(fmt(y))\" width=\"\(fmt(barWidth))\" height=\"\(fmt(h))\"></rect>"
            }
        }
        // A label under the first, the middle and the last bar; the axis' top value.
        var axis = ""
        for i in Set([0, labels.count / 2, labels.count - 1]).sorted() where labels.indices.contains(i) {
            axis += "<text x=\"\(fmt(left + Double(i) * slot + slot / 2))\" y=\"\(fmt(height - 8))\" text-anchor=\"middle\">\(h(labels[i]))</text>"
        }
        let topLabel = percent ? "\(Int((top1 * 100).rounded())) %" : String(Int(top1.rounded()))
        axis += "<text x=\"\(fmt(left - 4))\" y=\"\(fmt(top + 10))\" text-anchor=\"end\">\(h(topLabel))</text>"
        axis += "<line x1=\"\(fmt(left))\" y1=\"\(fmt(height - bottom))\" x2=\"\(fmt(width))\" y2=\"\(fmt(height - bottom))\" class=\"axis\"></line>"
        return """
            <svg class="chart" id="\(id)" viewBox="0 0 \(Int(width)) \(Int(height))" role="img" aria-labelledby="\(id)-title">
            <title id="\(id)-title">\(h(title))</title>\(shapes)\(axis)</svg>
            """
    }

    static func fmt(_ v: Double) -> String { String(format: "%.1f", v) }
}

struct StatisticsPage: PageView {
    var result: OperationsStats.Result

    func page(_ ctx: WebContext) -> WebPage {
        let r = result.report
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = result.timeZone
        let f = DateFormatter()
        f.calendar = calendar
        f.timeZone = result.timeZone
        f.dateFormat = "yyyy-MM-dd"
        let fromText = f.string(from: Date(timeIntervalSince1970: Double(result.from) / 1000))
        let toText = f.string(from: Date(timeIntervalSince1970: Double(result.to) / 1000 - 1))
        let query = "from=\(fromText)&to=\(toText)&period=\(result.period.rawValue)"
        func rate(_ x: Double?) -> String { x.map { "\(Int(($0 * 100).rounded())) %" } ?? "–" }
        func minutes(_ m: Int?) -> String {
            guard let m else { return "–" }
            return m < 120 ? ctx.t(.statMinutes, String(m)) : ctx.t(.statHours, String(format: "%.1f", Double(m) / 60))
        }
        func money(_ minor: Int) -> String { ctx.money(Money(minor, result.currency)) }
        func row(_ key: String, _ x: OperationsStatistics.Figures) -> String {
            "<tr><th scope=\"row\">\(h(key))</th><td>\(x.placed)</td><td>\(x.delivered)</td><td>\(x.failed)</td><td>\(rate(x.onTimeRate))</td><td>\(h(minutes(x.medianMinutes)))</td><td>\(h(minutes(x.p90Minutes)))</td><td>\(money(x.revenue))</td></tr>"
        }
        let head = "<tr><th scope=\"col\">\(h(ctx.t(.statGroup)))</th><th scope=\"col\">\(h(ctx.t(.statPlaced)))</th><th scope=\"col\">\(h(ctx.t(.statDelivered)))</th><th scope=\"col\">\(h(ctx.t(.statFailed)))</th><th scope=\"col\">\(h(ctx.t(.statOnTime)))</th><th scope=\"col\">\(h(ctx.t(.statMedian)))</th><th scope=\"col\">\(h(ctx.t(.statP90)))</th><th scope=\"col\">\(h(ctx.t(.statRevenue)))</th></tr>"
        func table(_ id: String, _ caption: String, _ rows: [String]) -> String {
            "<div class=\"table-wrap\" role=\"region\" tabindex=\"0\" aria-labelledby=\"\(id)-caption\"><table class=\"stats\" id=\"\(id)\"><caption id=\"\(id)-caption\">\(h(caption))</caption><thead>\(head)</thead><tbody>\(rows.joined())</tbody></table></div>"
        }
        let labels = r.buckets.map(\.label)
        let volume = SVGChart.bars(id: "chart-volume", title: ctx.t(.statVolumeChart), labels: labels, series: [
            .init(name: ctx.t(.statDelivered), cssClass: "bar-ok", values: r.buckets.map { Double($0.figures.delivered) }),
            .init(name: ctx.t(.statFailed), cssClass: "bar-bad", values: r.buckets.map { Double($0.figures.failed) }),
        ])
        let onTime = SVGChart.bars(id: "chart-on-time", title: ctx.t(.statOnTimeChart), labels: labels, series: [
            .init(name: ctx.t(.statOnTime), cssClass: "bar-ok", values: r.buckets.map { $0.figures.onTimeRate ?? 0 }),
        ], maxValue: 1, percent: true)
        let periods = OperationsStatistics.Period.allCases.map { p in
            "<option value=\"\(p.rawValue)\"\(p == result.period ? " selected" : "")>\(h(ctx.t(p == .day ? .statPerDay : p == .week ? .statPerWeek : .statPerMonth)))</option>"
        }.joined()
        let t = r.totals
        let failures = r.failures.map { "<tr><th scope=\"row\">\(h(ctx.failure($0.reason)))</th><td>\($0.count)</td></tr>" }.joined()
        return WebPage(title: ctx.t(.statistics), body: """
            <h1>\(h(ctx.t(.statistics)))</h1>
            <form method="get" action="\(WebRoutes.statistics())" class="inline-form" id="statistics-form">
            <div class="field"><label for="s-from">\(h(ctx.t(.statFrom)))</label><input id="s-from" type="date" name="from" value="\(fromText)"></div>
            <div class="field"><label for="s-to">\(h(ctx.t(.statTo)))</label><input id="s-to" type="date" name="to" value="\(toText)"></div>
            <div class="field"><label for="s-period">\(h(ctx.t(.statBy)))</label><select id="s-period" name="period">\(periods)</select></div>
            <button type="submit" class="secondary">\(h(ctx.t(.statShow)))</button>
            <a class="button secondary" href="\(WebRoutes.statisticsExport(query: query))" id="statistics-csv">\(h(ctx.t(.statCSV)))</a>
            </form>
            <p class="hint">\(h(ctx.t(.statExplained)))</p>
            <dl class="summary" id="statistics-totals">
            <dt>\(h(ctx.t(.statPlaced)))</dt><dd>\(t.placed)</dd>
            <dt>\(h(ctx.t(.statDelivered)))</dt><dd>\(t.delivered)</dd>
            <dt>\(h(ctx.t(.statOnTime)))</dt><dd>\(rate(t.onTimeRate))</dd>
            <dt>\(h(ctx.t(.statMedian))) / \(h(ctx.t(.statP90)))</dt><dd>\(h(minutes(t.medianMinutes))) / \(h(minutes(t.p90Minutes)))</dd>
            <dt>\(h(ctx.t(.statFailed)))</dt><dd>\(t.failed)</dd>
            <dt>\(h(ctx.t(.statRevenue)))</dt><dd>\(money(t.revenue))</dd>
            </dl>
            <section><h2>\(h(ctx.t(.statVolumeChart)))</h2><div class="chart-pair">\(volume)
            <p class="legend"><span class="key bar-ok"></span> \(h(ctx.t(.statDelivered))) <span class="key bar-bad"></span> \(h(ctx.t(.statFailed)))</p>
            \(table("table-periods", ctx.t(.statPerPeriod), r.buckets.map { row($0.label, $0.figures) }))</div></section>
            <section><h2>\(h(ctx.t(.statOnTimeChart)))</h2><div class="chart-pair">\(onTime)</div></section>
            <section><h2>\(h(ctx.t(.statPerDriver)))</h2>\(table("table-drivers", ctx.t(.statPerDriver), r.drivers.map { row(result.names[$0.driver] ?? "", $0.figures) }))</section>
            <section><h2>\(h(ctx.t(.statPerArea)))</h2>\(table("table-areas", ctx.t(.statPerArea), r.areas.map { row($0.area == "other" ? ctx.t(.statOtherArea) : $0.area, $0.figures) }))</section>
            <section><h2>\(h(ctx.t(.statFailures)))</h2>
            \(failures.isEmpty ? "<p>\(h(ctx.t(.statNoFailures)))</p>" : "<table class=\"stats\" id=\"table-failures\"><caption>\(h(ctx.t(.statFailures)))</caption><thead><tr><th scope=\"col\">\(h(ctx.t(.reason)))</th><th scope=\"col\">\(h(ctx.t(.statFailed)))</th></tr></thead><tbody>\(failures)</tbody></table>")</section>
            """, wide: true)
    }
}
