import Fluent
import Foundation
import Testing
import Vapor
import WaybillCore
@testable import WaybillServer

@Suite("Operations statistics for dispatchers: figures, per period, driver and area, as JSON, CSV and a page with charts")
struct StatisticsTests {
    @Test("A manager reads the period's figures; a failed and a cancelled order count as such; others are refused; bad periods are 400",
          arguments: TestDatabase.both)
    func figures(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let delivered = try await server.placeOrder(cast.customer.access)
            try await server.advance(delivered, to: .delivered, cast: cast)
            let failed = try await server.placeOrder(cast.customer.access)
            try await server.advance(failed, to: .failed, cast: cast)
            let cancelled = try await server.placeOrder(cast.customer.access)
            try await server.advance(cancelled, to: .cancelled, cast: cast)

            let reply = try await server.send(.GET, "/statistics/operations?period=day", token: cast.manager.access)
            #expect(reply.status == .ok, "\(reply)")
            let t = reply.json["totals"]
            #expect(t["placed"].int == 3 && t["delivered"].int == 1 && t["failed"].int == 1 && t["cancelled"].int == 1, "\(t)")
            #expect(t["onTimeRate"].double == 1 && t["medianMinutes"].int == 0)
            let price = try await server.price(of: delivered)
            #expect(t["revenue"].int == price * 2, "the cancelled order is not billed")
            #expect(reply.json["buckets"].array.count == 30 && reply.json["buckets"].array.last?["figures"]["placed"].int == 3)
            #expect(reply.json["drivers"][0]["driverId"].string == cast.driver.userID && reply.json["drivers"][0]["figures"]["delivered"].int == 1)
            #expect(reply.json["areas"][0]["area"].string == "30xx" && reply.json["failures"][0]["reason"].string == "recipient_absent")
            #expect(reply.json["timeZone"].string == "Europe/Zurich" && reply.json["currency"].string == "CHF")

            let csv = try await server.send(.GET, "/statistics/operations/export?period=month", token: cast.manager.access)
            #expect(csv.status == .ok && csv.headers.contentType?.description.hasPrefix("text/csv") == true)
            let lines = csv.body.string.split(separator: "\r\n").map(String.init)
            #expect(lines.first?.hasPrefix("group,key,placed,delivered") == true && lines.contains { $0.hasPrefix("total,,3,1,1,1,1,1.000,0,0,") })
            #expect(lines.contains { $0.hasPrefix("failure,recipient_absent,,,1") }, "\(lines)")

            for token in [cast.customer.access, cast.driver.access] {
                #expect(try await server.send(.GET, "/statistics/operations", token: token).status == .forbidden)
            }
            for query in ["from=2026-02-30", "from=2026-11-20&to=2026-11-10", "from=2020-01-01&to=2026-01-01", "to=yesterday", "period=year"] {
                let bad = try await server.send(.GET, "/statistics/operations?\(query)", token: cast.manager.access)
                #expect(bad.status == .badRequest, "\(query): \(bad)")
            }
        }
    }

    @Test("The statistics page draws its charts as SVG beside their tables, in both languages, with the CSV a click away",
          arguments: TestDatabase.available)
    func page(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let order = try await server.placeOrder(cast.customer.access)
            try await server.advance(order, to: .delivered, cast: cast)
            let boss = TestBrowser(server)
            _ = try await boss.signIn("boss@courier.example")
            let page = try await boss.get("/statistics?period=week")
            #expect(page.status == .ok && page.html.contains("<svg class=\"chart\" id=\"chart-volume\"") && page.html.contains("role=\"img\""))
            #expect(page.html.contains("id=\"table-periods\"") && page.html.contains("id=\"table-drivers\"") && page.html.contains("Luca"))
            #expect(page.html.contains("href=\"/statistics\""), "in the manager's menu")
            let link = try #require(page.html.range(of: #"id="statistics-csv""#).flatMap { _ in
                page.html.range(of: #"href="/statistics/export?"#).map { String(page.html[page.html.index($0.lowerBound, offsetBy: 6)...].prefix { $0 != "\"" }) } })
            let csv = try await boss.get(link.replacingOccurrences(of: "&amp;", with: "&"))
            #expect(csv.status == .ok && csv.html.hasPrefix("group,key"))
            boss.acceptLanguage = "fr"
            #expect(try await boss.get("/statistics").html.contains("Livraisons par période"))
            let ada = TestBrowser(server)
            _ = try await ada.signIn("ada@example.com")
            #expect(try await ada.get("/statistics").status == .forbidden)
        }
    }
}
