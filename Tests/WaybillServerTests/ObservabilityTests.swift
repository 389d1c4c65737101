import Foundation
import Logging
import SQLKit
import Testing
import Vapor
@testable import WaybillServer
import WaybillCore

@Suite("Observability: metrics for Prometheus, request ids, JSON logs")
struct ObservabilityTests {
    static let token = "metrics-secret-0123456789"

    /// The value of the sample named exactly `name` (labels included) in a scrape.
    static func value(_ name: String, in text: String) -> Double? {
        text.split(separator: "\n").first { $0.hasPrefix(name + " ") }.flatMap { Double($0.split(separator: " ").last ?? "") }
    }

    func scrape(_ server: TestServer, token: String?) async throws -> (HTTPResponseStatus, String) {
        var headers = HTTPHeaders()
        if let token { headers.bearerAuthorization = BearerAuthorization(token: token) }
        let response = try await server.app.testing().sendRequest(.GET, "/metrics", headers: headers)
        return (response.status, response.body.string)
    }

    @Test("/metrics counts requests by route pattern and status, shows the outbox and live gauges, and only to the token's holder",
          arguments: TestDatabase.available)
    func metrics(db: TestDatabase) async throws {
        try await TestServer.run(db, adjust: { $0.metricsToken = Self.token }) { server in
            let cast = try await server.cast()
            let order = try await server.placeOrder(cast.customer.access)
            _ = try await server.send(.GET, "/orders/\(UUID().uuidString)", token: cast.customer.access)
            for _ in 0..<3 { #expect(try await server.send(.GET, "/orders/\(order)", token: cast.customer.access).status == .ok) }
            let anonymous = try await scrape(server, token: nil).0, wrong = try await scrape(server, token: "metrics-secret-wrong-000000").0
            #expect(anonymous == .notFound && wrong == .notFound)
            try await server.goOnDuty(cast.driver.access)
            #expect(try await server.report(cast.driver.access, [(47.0, 8.0)], at: Date().addingTimeInterval(-5)).status == .ok)
            let (status, text) = try await scrape(server, token: Self.token)
            #expect(status == .ok)
            #expect(Self.value("waybill_position_transactions_total", in: text) == 1 && Self.value("waybill_position_reports_written_total", in: text) == 1)
            #expect(text.contains(#"waybill_http_requests_total{route="/api/v1/orders",method="POST",status="201"} 1"#), "\(text.prefix(2000))")
            #expect(text.contains(#"waybill_http_requests_total{route="/api/v1/orders/:orderId",method="GET",status="404"} 1"#), "ids never become labels")
            #expect(text.contains("waybill_http_request_duration_seconds_bucket{route=\"/api/v1/orders\",method=\"POST\""))
            #expect(text.contains(#"waybill_outbox_pending{kind="mail"}"#) && text.contains("waybill_outbox_oldest_pending_seconds"))
            #expect(text.contains("waybill_webhook_deliveries_pending 0") && text.contains("waybill_live_connections 0"))
            // The unknown id and the order's first read were misses; the order was then kept.
            let hits = Self.value(#"waybill_read_cache_lookups_total{cache="orders",result="hit"}"#, in: text) ?? 0
            let misses = Self.value(#"waybill_read_cache_lookups_total{cache="orders",result="miss"}"#, in: text) ?? 0
            #expect(hits >= 1 && misses >= 2 && hits + misses == 4, "\(hits) hits, \(misses) misses")
            #expect(Self.value(#"waybill_read_cache_entries{cache="orders"}"#, in: text) == 1)
            #expect(Self.value(#"waybill_read_cache_lookups_total{cache="sessions",result="hit"}"#, in: text) ?? 0 >= 1)

            // The database: SQLite's writer queue, PostgreSQL's connections against its limit.
            #expect(text.contains("waybill_db_write_transactions 0"), "none under way between requests")
            #expect(Self.value("waybill_http_requests_in_flight", in: text) == 1, "the scrape itself")
            if case .postgres = db {
                #expect(text.contains(#"waybill_db_connections{state="active"}"#) && text.contains("waybill_db_max_connections "))
            } else {
                #expect(Self.value("waybill_db_write_lock_wait_seconds_count", in: text) ?? 0 >= 1, "the order's transaction waited its turn")
                let held = Self.value("waybill_db_write_lock_held_seconds_count", in: text) ?? 0
                #expect(held >= 1 && Self.value("waybill_db_write_lock_held_seconds_sum", in: text) ?? 0 > 0, "and then held the writer")
                // Waybill's own SQLite connections: the readers kept after the requests' reads, none reading now.
                #expect(Self.value(#"waybill_sqlite_reader_connections{state="reading"}"#, in: text) == 0)
                #expect(Self.value(#"waybill_sqlite_reader_connections{state="idle"}"#, in: text) ?? 0 >= 1)
                #expect(Self.value("waybill_sqlite_busy_retries_total", in: text) == 0, "nothing else wrote beside the writer")
                // Each commit holds one or more writes (several when they queue behind one another).
                let commits = Self.value("waybill_sqlite_commits_total", in: text) ?? 0
                #expect(commits >= 1 && commits <= held)
            }

            // With the live feed running (as `waybill serve` runs it), an order's live event reaches this
            // process's hub and the fan-out lag is counted.
            // The feed counts the lag before it hands events to the sockets, so once the manager hears
            // of the new order the count is in: the test waits for that message, not for time to pass.
            try await server.serving { port in
                let manager = try await server.live(port: port, token: cast.manager.access)
                try await manager.subscribe("notifications")
                _ = try await server.placeOrder(cast.customer.access)
                try await manager.event("notification", topic: "notifications")
                await manager.close()
            }
            let lag = try await scrape(server, token: Self.token).1
            #expect(Self.value("waybill_live_fanout_lag_seconds_bucket{le=\"5.0\"}", in: lag) ?? 0 >= 1, "\(lag.prefix(3000))")

            // Carriers' budgets: DHL's used today and blocked after a 429.
            let sql = try #require(server.db as? any SQLDatabase)
            let today = String(ISO8601DateFormatter().string(from: Date()).prefix(10))
            let until = Int64(Date().timeIntervalSince1970 * 1000) + 60_000
            try await sql.raw("INSERT INTO carrier_budgets (carrier, day, used, blocked_until) VALUES ('dhl', \(bind: today), 7, \(bind: until))").run()
            try await sql.raw("INSERT INTO carrier_budgets (carrier, day, used) VALUES ('la_poste', '2020-01-01', 40)").run()
            let budgets = try await scrape(server, token: Self.token).1
            #expect(budgets.contains(#"waybill_carrier_budget_used{carrier="dhl"} 7"#) && budgets.contains(#"waybill_carrier_budget_limit{carrier="dhl"} 250"#),
                    "\(budgets)")
            #expect(budgets.contains(#"waybill_carrier_budget_used{carrier="la_poste"} 0"#), "yesterday's count is not today's")
            let blocked = budgets.split(separator: "\n").first { $0.hasPrefix(#"waybill_carrier_blocked_seconds{carrier="dhl"}"#) }
            #expect(blocked.flatMap { Double($0.split(separator: " ").last ?? "") }.map { $0 > 50 && $0 <= 60 } == true, "\(String(describing: blocked))")
        }
    }

    @Test("/metrics is off without METRICS_TOKEN", arguments: TestDatabase.available)
    func metricsOff(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let status = try await scrape(server, token: Self.token).0
            #expect(status == .notFound)
        }
    }

    @Test("Every answer names its request; an error body carries the same id", arguments: TestDatabase.available)
    func requestIDs(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let error = try await server.send(.GET, "/orders", token: "not-a-token")
            let id = try #require(error.headers.first(name: "X-Request-Id"))
            #expect(!id.isEmpty && error.json["error"]["requestId"].string == id, "\(error)")
            let fine = try await server.send(.GET, "/health")
            #expect(fine.headers.first(name: "X-Request-Id").map { !$0.isEmpty && $0 != id } == true)
        }
    }

    @Test("A JSON log line is one JSON object with time, level, message, source and metadata")
    func jsonLines() throws {
        var handler = JSONLogHandler(label: "waybill", level: .info)
        handler[metadataKey: "request-id"] = "abc-123"
        let line = handler.render(level: .warning, message: "Quote \"this\"\nand that", metadata: ["order": "WB-1"], file: "/x/Orders.swift",
                                  line: 42, at: Date(timeIntervalSince1970: 1_800_000_000))
        #expect(line.hasSuffix("}\n") && line.filter { $0 == "\n" }.count == 1)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String])
        #expect(object["msg"] == "Quote \"this\"\nand that" && object["level"] == "warning" && object["request-id"] == "abc-123")
        #expect(object["order"] == "WB-1" && object["source"] == "Orders.swift:42" && object["ts"]?.hasPrefix("2027-01-15T08:00:00") == true)
    }
}
