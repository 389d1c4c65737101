import Fluent
import Foundation
import Testing
import Vapor
@testable import WaybillServer
import WaybillCore

/// The HTML of every main page, for each role, in English and in French, compared with the copy
/// kept under `__Snapshots__/PageSnapshotTests/`. What changes from run to run (ids, references,
/// times, form tokens, asset hashes, link tokens) is replaced by placeholders first. A page that
/// changes on purpose is re-recorded with `SNAPSHOT_RECORD=1 scripts/build test --filter PageSnapshot`;
/// the diff of the snapshot files is then the review of what people will see.
@Suite("Page snapshots: every main page in both languages")
struct PageSnapshotTests {
    /// In the clone the tests were started from (`WAYBILL_CLONE`, set by scripts/build and scripts/test,
    /// which build from a copy in the build cache), so a recording lands where it is committed.
    static let directory = (ProcessInfo.processInfo.environment["WAYBILL_CLONE"].map {
        URL(fileURLWithPath: $0).appendingPathComponent("Tests/WaybillServerTests")
    } ?? URL(fileURLWithPath: #filePath).deletingLastPathComponent())
        .appendingPathComponent("__Snapshots__/PageSnapshotTests")

    static let replacements: [(String, String)] = [
        (#"[0-9A-Fa-f]{8}(-|%2D)[0-9A-Fa-f]{4}(-|%2D)[0-9A-Fa-f]{4}(-|%2D)[0-9A-Fa-f]{4}(-|%2D)[0-9A-Fa-f]{12}"#, "<uuid>"),
        (#"WB-[0-9A-Z]{8}"#, "WB-<ref>"),
        (#"(name="csrf-token" content=|name="_csrf" value=)"[^"]*""#, "$1\"<csrf>\""),
        (#"name="live-since" content="\d+""#, "name=\"live-since\" content=\"<event>\""),
        (#"\?v=[A-Za-z0-9_-]+"#, "?v=<hash>"),
        (#"/t/[A-Za-z0-9_-]{24}"#, "/t/<token>"),
        (#"data-token="[^"]*""#, "data-token=\"<token>\""),
        (#"datetime="[^"]*""#, "datetime=\"<time>\""),
        (#"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z"#, "<iso-time>"),
        (#"\d{2}\.\d{2}\.\d{4}"#, "<date>"),
        (#"\b\d{1,2}:\d{2}\b"#, "<hh:mm>"),
        (#"value="\d{4}-\d{2}""#, "value=\"<month>\""),
    ]

    /// The paths of a page's own links, form actions and images (query and fragment left off).
    static func localTargets(_ html: String) -> Set<String> {
        let pattern = try! NSRegularExpression(pattern: #"(?:href|action|src|formaction)="(/[^"?#]*)"#)
        let range = NSRange(html.startIndex..., in: html)
        return Set(pattern.matches(in: html, range: range).compactMap { Range($0.range(at: 1), in: html).map { String(html[$0]) } })
    }

    static func normalize(_ html: String) -> String {
        var text = html
        for (pattern, template) in replacements {
            text = text.replacingOccurrences(of: pattern, with: template, options: .regularExpression)
        }
        return text
    }

    /// What a page shows when Swift described a value instead of the page writing it: a string
    /// literal that type inference made an `SQLQueryString` (SQLKit's `joined(separator:)` on an
    /// array of them), an interpolated optional, a typed id. A snapshot recorded with one of these
    /// once went unnoticed; no snapshot may hold one.
    static let debugDescriptions = ["SQLQueryString(", "SQLKit.", "Optional(", "Tagged(", "WaybillCore.", "WaybillServer."]

    /// Compares `html` with the stored snapshot `name`; records it when missing or asked to.
    static func check(_ html: String, named name: String) throws -> String? {
        if let leaked = debugDescriptions.first(where: { html.contains($0) }) {
            return "\(name) shows a Swift debug description (\(leaked)) instead of its text"
        }
        let normalized = normalize(html)
        let file = directory.appendingPathComponent(name + ".html")
        let record = ProcessInfo.processInfo.environment["SNAPSHOT_RECORD"] != nil
        if record || !FileManager.default.fileExists(atPath: file.path) {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try normalized.write(to: file, atomically: true, encoding: .utf8)
            return record ? nil : "\(name): no snapshot yet; recorded it, run again"
        }
        let stored = try String(contentsOf: file, encoding: .utf8)
        guard stored != normalized else { return nil }
        let old = stored.split(separator: "\n", omittingEmptySubsequences: false)
        let new = normalized.split(separator: "\n", omittingEmptySubsequences: false)
        let line = Array(zip(old, new)).firstIndex { $0 != $1 } ?? min(old.count, new.count)
        return "\(name) differs from its snapshot at line \(line + 1):\n- \(line < old.count ? old[line] : "")\n+ \(line < new.count ? new[line] : "")"
    }

    @Test("Each main page renders as its snapshot, in English and French", arguments: TestDatabase.available)
    func pages(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            try await server.registerCustomer("bea@example.com")  // the orders' recipient, with an account
            let accepted = try await server.placeOrder(cast.customer.access)
            try await server.advance(accepted, to: .accepted, cast: cast)
            _ = try await server.placeOrder(cast.customer.access, extra: ["dropoff": ["street": "Rue du Rhône 42", "postalCode": "1204", "city": "Genève"] as [String: any Sendable]])
            let token = try await server.trackingToken(accepted, customer: cast.customer.access)
            let admin = try await server.makeAdmin(cast.otherDriver)
            try #require(try await server.send(.POST, "/plans", json: SubscriptionTests.pro, token: admin).status == .created)
            let pages: [(name: String, path: String, as: String?)] = [
                ("login", "/login", nil), ("register", "/register", nil),
                ("customer-orders", "/orders", "ada@example.com"), ("customer-new-order", "/orders/new", "ada@example.com"),
                ("customer-order", "/orders/\(accepted)", "ada@example.com"), ("customer-account", "/account", "ada@example.com"),
                ("customer-notifications", "/notifications", "ada@example.com"),
                ("driver-day", "/driver", "luca@courier.example"), ("driver-order", "/orders/\(accepted)", "luca@courier.example"),
                ("manager-dispatch", "/dispatch", "boss@courier.example"), ("manager-fleet", "/fleet", "boss@courier.example"),
                ("manager-users", "/users", "boss@courier.example"), ("manager-tariff", "/tariff", "boss@courier.example"),
                ("manager-orders", "/orders", "boss@courier.example"), ("manager-order", "/orders/\(accepted)", "boss@courier.example"),
                ("public-tracking", "/t/\(token)", nil),
                ("receiver-incoming", "/incoming", "bea@example.com"), ("receiver-order", "/orders/\(accepted)", "bea@example.com"),
                ("admin-reports", "/admin", "mia@courier.example"), ("admin-audit", "/admin/audit", "mia@courier.example"),
                ("customer-plan", "/plan", "ada@example.com"), ("admin-plans", "/admin/plans", "mia@courier.example"),
                ("admin-subscribers", "/admin/plans/subscribers", "mia@courier.example"),
            ]
            var problems: [String] = []
            var links = Set<String>()
            for language in ["en", "fr"] {
                var browsers: [String: TestBrowser] = [:]
                for page in pages {
                    let html: String
                    if let email = page.as {
                        let browser: TestBrowser
                        if let known = browsers[email] { browser = known } else {
                            browser = TestBrowser(server)
                            browser.acceptLanguage = language
                            _ = try await browser.signIn(email)
                            browsers[email] = browser
                        }
                        let reply = try await browser.get(page.path)
                        #expect(reply.status == .ok, "\(page.path) as \(email)")
                        html = reply.html
                    } else {
                        let browser = TestBrowser(server)
                        browser.acceptLanguage = language
                        html = try await browser.get(page.path).html
                    }
                    if let problem = try Self.check(html, named: "\(page.name).\(language)") { problems.append(problem) }
                    links.formUnion(Self.localTargets(html))
                }
            }
            #expect(problems.isEmpty, "\(problems.joined(separator: "\n\n"))")
            // Every link and form target on these pages reaches a route (paths come from `WebRoutes`).
            let routes = server.app.routes.all.map { $0.path.map(\.description) }
            let unrouted = links.filter { link in
                let parts = link.split(separator: "/").map(String.init)
                return !routes.contains { route in
                    route.count == parts.count && zip(route, parts).allSatisfy { $0.hasPrefix(":") || $0 == $1 }
                        || (route.last == "**" && parts.starts(with: route.dropLast()))
                }
            }
            #expect(links.count > 20 && unrouted.isEmpty, "no route for \(unrouted.sorted())")
        }
    }
}
