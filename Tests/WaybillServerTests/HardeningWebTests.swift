import AsyncHTTPClient
import Fluent
import Foundation
import SQLKit
import Testing
import Vapor
import VaporTesting
import WaybillCore
@testable import WaybillServer

/// The audit's smaller findings, as behaviours of the web app, the API and the configuration.
@Suite("Hostile input: sessions, redirects, parties, proxies")
struct HardeningWebTests {
    @Test("Under https every answer carries HSTS and the cookies take the __Host- prefix", arguments: [TestDatabase.sqlite])
    func httpsHeadersAndCookies(db: TestDatabase) async throws {
        try await TestServer.run(db, adjust: { $0.publicURL = "https://waybill.example"; $0.liveAllowedOrigins = ["https://waybill.example"] }) { server in
            try await server.registerCustomer("secure@example.com")
            let browser = TestBrowser(server)
            let login = try await browser.get("/login")
            #expect(login.headers.first(name: "Strict-Transport-Security") == "max-age=31536000; includeSubDomains")
            #expect(login.headers[.setCookie].contains { $0.hasPrefix("__Host-wb_anon=") && $0.contains("Secure") && $0.contains("Path=/") })
            let signedIn = try await browser.signIn("secure@example.com")
            #expect(signedIn.headers[.setCookie].contains { $0.hasPrefix("__Host-wb_session=") && $0.contains("Secure") })
            #expect(try await browser.get("/orders").status == .ok)
            #expect(try await server.send(.GET, "/me").headers.first(name: "Strict-Transport-Security") != nil)
        }
        // Plain http (development): no HSTS, cookies without the prefix (browsers would refuse it).
        try await TestServer.run(db) { server in
            let page = try await TestBrowser(server).get("/login")
            #expect(page.headers.first(name: "Strict-Transport-Security") == nil)
            #expect(page.headers[.setCookie].contains { $0.hasPrefix("wb_anon=") })
        }
    }

    @Test("A web session left unused longer than the idle limit ends", arguments: TestDatabase.available)
    func idleWebSession(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            try await server.registerCustomer("idle@example.com")
            let browser = TestBrowser(server)
            _ = try await browser.signIn("idle@example.com")
            #expect(try await browser.get("/orders").status == .ok)
            // Time passes on the server's clock; nobody waits.
            server.clock.advance(by: TimeInterval(server.app.waybill.config.webSessionIdleMinutes * 60 - 60))
            #expect(try await browser.get("/orders").status == .ok, "a minute short of the limit, and used again")
            server.clock.advance(by: TimeInterval(server.app.waybill.config.webSessionIdleMinutes * 60 + 60))
            let after = try await browser.get("/orders")
            #expect(after.status == .seeOther)
            #expect(after.location?.hasPrefix("/login") == true)
            #expect(try await Session.query(on: server.db).filter(\.$revokeReason == "idle").count() == 1)
        }
    }

    @Test("After sign-in and language changes the browser only goes back to a plain path on this site", arguments: [TestDatabase.sqlite])
    func redirectTargets(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            try await server.registerCustomer("away@example.com")
            let hostile = ["/%09/evil.example/", "/%0a/evil.example", "%5C%5Cevil.example", "/%5Cevil.example", "https:evil.example",
                           "//evil.example", "/%E2%80%8B/evil.example", "https%3A%2F%2Fevil.example"]
            for target in hostile {
                let language = try await server.app.testing().sendRequest(.GET, "/lang/fr?back=\(target)")
                #expect(language.headers.first(name: .location) == "/", "back=\(target)")
                let browser = TestBrowser(server)
                _ = try await browser.signIn("away@example.com")
                let page = try await browser.get("/login?next=\(target)")
                #expect(page.location == "/", "next=\(target)")
            }
            let fine = try await server.app.testing().sendRequest(.GET, "/lang/fr?back=%2Forders%3Fstatus%3Ddelivered")
            #expect(fine.headers.first(name: .location) == "/orders?status=delivered")
        }
    }

    @Test("An upload without a session, or sent from another site, is refused from its headers", arguments: [TestDatabase.sqlite])
    func uploadsRefusedEarly(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            try await server.registerCustomer("up@example.com")
            var headers = HTTPHeaders()
            headers.replaceOrAdd(name: .contentType, value: "multipart/form-data; boundary=x")
            let body = ByteBuffer(string: "--x\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nb\r\n--x--\r\n")
            let anonymous = try await server.app.testing().sendRequest(.POST, "/orders/new", headers: headers, body: body)
            #expect(anonymous.status == .forbidden)
            #expect(anonymous.headers.first(name: .connection) == "close")
            let browser = TestBrowser(server)
            _ = try await browser.signIn("up@example.com")
            headers.replaceOrAdd(name: .cookie, value: browser.cookies.map { "\($0.key)=\($0.value)" }.joined(separator: "; "))
            // Refused from the headers (Connection: close says so), not by the CSRF check after reading the body.
            headers.replaceOrAdd(name: .origin, value: "https://evil.example")
            let foreign = try await server.app.testing().sendRequest(.POST, "/orders/new", headers: headers, body: body)
            #expect(foreign.status == .forbidden && foreign.headers.first(name: .connection) == "close")
            headers.remove(name: .origin)
            headers.replaceOrAdd(name: "Sec-Fetch-Site", value: "cross-site")
            let crossSite = try await server.app.testing().sendRequest(.POST, "/orders/new", headers: headers, body: body)
            #expect(crossSite.status == .forbidden && crossSite.headers.first(name: .connection) == "close")
            // The same upload from this site, signed in, gets past the headers (then fails its form token).
            headers.replaceOrAdd(name: "Sec-Fetch-Site", value: "same-origin")
            headers.replaceOrAdd(name: .origin, value: "null")
            let ours = try await server.app.testing().sendRequest(.POST, "/orders/new", headers: headers, body: body)
            #expect(ours.headers.first(name: .connection) != "close")
        }
    }

    @Test("The driver sees the recipient's name and phone but nobody's email, in the API and the web alike", arguments: TestDatabase.available)
    func partyDetailsAgree(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let id = try await server.placeOrder(cast.customer.access, extra: [
                "recipient": ["name": "Bea Beispiel", "email": "bea@example.com", "phone": "+41 79 123 45 67"]])
            try await server.advance(id, to: .assigned, cast: cast)
            let asDriver = try await server.send(.GET, "/orders/\(id)", token: cast.driver.access)
            #expect(asDriver.json["recipient"]["name"].string == "Bea Beispiel")
            #expect(asDriver.json["recipient"]["phone"].string == "+41 79 123 45 67")
            #expect(!asDriver.json["recipient"]["email"].exists)
            #expect(!asDriver.json["customer"]["email"].exists)
            let asCustomer = try await server.send(.GET, "/orders/\(id)", token: cast.customer.access)
            #expect(asCustomer.json["recipient"]["email"].string == "bea@example.com")
            let asManager = try await server.send(.GET, "/orders/\(id)", token: cast.manager.access)
            #expect(asManager.json["customer"]["email"].string == "ada@example.com")
            #expect(asManager.json["recipient"]["email"].string == "bea@example.com")

            let driverEmail = try #require(try await User.find(UserID(uuidString: cast.driver.userID)!, on: server.db)?.email)
            let browser = TestBrowser(server)
            _ = try await browser.signIn(driverEmail)
            let page = try await browser.get("/orders/\(id)")
            #expect(page.status == .ok)
            #expect(page.html.contains("+41 79 123 45 67"))
            #expect(!page.html.contains("bea@example.com"))
            #expect(!page.html.contains("ada@example.com"))
        }
    }

    @Test("Ten photos uploaded at once still leave at most five on the order", arguments: TestDatabase.both)
    func parallelPhotos(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let id = try await server.placeOrder(cast.customer.access)
            let statuses = try await withThrowingTaskGroup(of: HTTPResponseStatus.self) { group in
                for _ in 0..<10 {
                    group.addTask {
                        try await server.upload("/orders/\(id)/photos", parts: [.file("photo", SampleImages.signaturePNG)], token: cast.customer.access).status
                    }
                }
                return try await group.reduce(into: [HTTPResponseStatus]()) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == .created }.count == UploadLimits.photosPerOrder)
            #expect(statuses.filter { $0 == .conflict }.count == 10 - UploadLimits.photosPerOrder)
            #expect(try await OrderFile.query(on: server.db).filter(\.$kind == .parcelPhoto).count() == UploadLimits.photosPerOrder)
        }
    }

    @Test("A driver assigned after another replays the order from the start and is not cut off", arguments: TestDatabase.available)
    func newDriverReplay(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let id = try await server.placeOrder(cast.customer.access)
            try await server.advance(id, to: .assigned, cast: cast)
            #expect(try await server.send(.POST, "/orders/\(id)/assign", json: ["driverId": cast.otherDriver.userID, "reassign": true],
                                          token: cast.manager.access).status == .ok)
            try await server.serving { port in
                let driver = try await server.live(port: port, token: cast.otherDriver.access)
                let reply = try await driver.subscribe("order:\(id)", since: 0)
                #expect(reply["type"].string == "subscribed", "\(reply)")
                // Everything the server had for this socket has arrived once a ping's pong has.
                _ = try await driver.settle()
                #expect(!driver.messages.contains { $0["code"].string == "forbidden" })
                // It sees its own assignment, not the earlier driver's period.
                let statuses = driver.events.filter { $0["type"].string == "status" }
                #expect(statuses.last?["data"]["driverId"].string?.lowercased() == cast.otherDriver.userID.lowercased())
                #expect(!statuses.contains { $0["data"]["driverId"].string?.lowercased() == cast.driver.userID.lowercased() })
                #expect(!driver.rawMessages.contains { $0.contains("_tracking_changed") || $0.contains("\"_") })
                await driver.close()
            }
        }
    }

    @Test("Production refuses to start without SMTP_URL unless MAIL_TO_LOG=1 says mail may go to the log")
    func productionNeedsMail() throws {
        let base = ["JWT_SECRET": String(repeating: "k", count: 48), "DATABASE_URL": "sqlite:///tmp/x.sqlite"]
        let logger = Logger(label: "test")
        #expect(throws: ConfigurationError.self) { try WaybillConfig.fromEnvironment(base, isProduction: true, logger: logger) }
        #expect(throws: Never.self) { try WaybillConfig.fromEnvironment(base.merging(["MAIL_TO_LOG": "1"]) { $1 }, isProduction: true, logger: logger) }
        #expect(throws: Never.self) { try WaybillConfig.fromEnvironment(base.merging(["SMTP_URL": "smtp://127.0.0.1:25"]) { $1 }, isProduction: true, logger: logger) }
        #expect(throws: ConfigurationError.self) {
            try WaybillConfig.fromEnvironment(base.merging(["MAIL_TO_LOG": "1", "TRUSTED_PROXIES": "10.0.0.0/8,proxy.local"]) { $1 }, isProduction: true, logger: logger)
        }
    }

    @Test("Statement months follow the display time zone: 00:30 on the 1st in Zurich is that month")
    func statementMonths() throws {
        let zurich = try #require(TimeZone(identifier: "Europe/Zurich"))
        let (start, end) = try #require(Orders.monthBounds("2026-03", in: zurich))
        #expect(start == 1_772_319_600_000)  // 2026-02-28T23:00:00Z
        #expect(end == 1_774_994_400_000)    // 2026-03-31T22:00:00Z (summer time began on the 29th)
    }

    @Test("Behind a trusted proxy each client has its own limits; a forged X-Forwarded-For from anyone else changes nothing",
          arguments: [TestDatabase.sqlite])
    func trustedProxies(db: TestDatabase) async throws {
        for trusted in [true, false] {
            try await TestServer.run(db, adjust: { config in
                config.livePublicTicketsPerMinute = 2
                if trusted { config.trustedProxies = [CIDR("127.0.0.1")!] }
            }) { server in
                let cast = try await server.cast()
                let id = try await server.placeOrder(cast.customer.access)
                let token = try await server.trackingToken(id, customer: cast.customer.access)
                try await server.serving { port in
                    let client = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton)
                    defer { _ = client.shutdown() }
                    func ticket(from address: String) async throws -> Int {
                        try await server.postOverHTTP(port: port, "/live/ticket", json: #"{"trackingToken":"\#(token)"}"#,
                                                      headers: [("X-Forwarded-For", address)], client: client).status
                    }
                    var answers: [Int] = []
                    for address in ["198.51.100.1", "198.51.100.1", "198.51.100.1", "198.51.100.2"] {
                        answers.append(try await ticket(from: address))
                    }
                    // Another client behind the proxy has its own budget; without trust, the header is nobody's word.
                    #expect(answers == [201, 201, 429, trusted ? 201 : 429], "trusted: \(trusted)")
                }
            }
        }
    }
}
