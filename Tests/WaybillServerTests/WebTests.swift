import Fluent
import Crypto
import Foundation
import Testing
import Vapor
import VaporTesting
@testable import WaybillServer
import WaybillCore

/// A browser without JavaScript: it keeps cookies, reads the form token from pages and posts forms.
final class TestBrowser: @unchecked Sendable {
    let server: TestServer
    var cookies: [String: String] = [:]
    var acceptLanguage = "en"

    init(_ server: TestServer) { self.server = server }

    struct Page {
        var status: HTTPResponseStatus
        var headers: HTTPHeaders
        var html: String
        var location: String? { headers.first(name: .location) }
        var csrf: String? {
            guard let range = html.range(of: #"name="csrf-token" content=""#) else { return nil }
            return String(html[range.upperBound...].prefix { $0 != "\"" })
        }
    }

    private func send(_ method: HTTPMethod, _ path: String, body: ByteBuffer? = nil, contentType: String? = nil) async throws -> Page {
        var headers = HTTPHeaders()
        if !cookies.isEmpty { headers.replaceOrAdd(name: .cookie, value: cookies.map { "\($0.key)=\($0.value)" }.joined(separator: "; ")) }
        headers.replaceOrAdd(name: .acceptLanguage, value: acceptLanguage)
        if let contentType { headers.replaceOrAdd(name: .contentType, value: contentType) }
        let response = try await server.app.testing().sendRequest(method, path, headers: headers, body: body)
        for value in response.headers[.setCookie] {
            let pair = value.split(separator: ";")[0].split(separator: "=", maxSplits: 1)
            guard pair.count == 2 else { continue }
            if value.contains("Max-Age=0") || pair[1].isEmpty { cookies[String(pair[0])] = nil } else { cookies[String(pair[0])] = String(pair[1]) }
        }
        return Page(status: response.status, headers: response.headers, html: response.body.string)
    }

    func get(_ path: String) async throws -> Page { try await send(.GET, path) }

    /// Posts a form as the page at `from` would, with its token unless `withToken` is false.
    func post(_ path: String, _ fields: [String: String], from: String, withToken: Bool = true) async throws -> Page {
        var fields = fields
        if withToken { fields["_csrf"] = try await get(from).csrf }
        let body = fields.map { "\($0.key.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)=\($0.value.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)" }
            .joined(separator: "&")
        return try await send(.POST, path, body: ByteBuffer(string: body), contentType: "application/x-www-form-urlencoded")
    }

    /// What an island sends: JSON with the page's token in `X-CSRF-Token`.
    func postJSON(_ path: String, _ json: [String: Any], from: String, withToken: Bool = true) async throws -> Page {
        var headers = HTTPHeaders()
        if withToken, let token = try await get(from).csrf { headers.replaceOrAdd(name: "X-CSRF-Token", value: token) }
        if !cookies.isEmpty { headers.replaceOrAdd(name: .cookie, value: cookies.map { "\($0.key)=\($0.value)" }.joined(separator: "; ")) }
        headers.contentType = .json
        let response = try await server.app.testing().sendRequest(.POST, path, headers: headers,
                                                                  body: ByteBuffer(data: try JSONSerialization.data(withJSONObject: json)))
        return Page(status: response.status, headers: response.headers, html: response.body.string)
    }

    /// Posts a multipart form with one file, as a page's upload form would (with its token).
    func postFile(_ path: String, field: String, bytes: [UInt8], filename: String, from: String, fields: [String: String] = [:]) async throws -> Page {
        let token = try await get(from).csrf ?? ""
        let boundary = "----waybill-test-\(UUID().uuidString)"
        var body = ByteBuffer()
        body.writeString("--\(boundary)\r\nContent-Disposition: form-data; name=\"_csrf\"\r\n\r\n\(token)\r\n")
        for (name, value) in fields.sorted(by: { $0.key < $1.key }) {
            body.writeString("--\(boundary)\r\nContent-Disposition: form-data; name=\"\(name)\"\r\n\r\n\(value)\r\n")
        }
        body.writeString("--\(boundary)\r\nContent-Disposition: form-data; name=\"\(field)\"; filename=\"\(filename)\"\r\nContent-Type: application/octet-stream\r\n\r\n")
        body.writeBytes(bytes)
        body.writeString("\r\n--\(boundary)--\r\n")
        return try await send(.POST, path, body: body, contentType: "multipart/form-data; boundary=\(boundary)")
    }

    func signIn(_ email: String, password: String = TestServer.password) async throws -> Page {
        try await post("/login", ["email": email, "password": password], from: "/login")
    }
}

@Suite("The web app without a browser: sessions, CSRF, authorization, language")
struct WebTests {
    @Test("A signed-out visitor is sent to sign in and comes back to the page they wanted", arguments: TestDatabase.available)
    func signInAndBack(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            try await server.registerCustomer("web@example.com")
            let browser = TestBrowser(server)
            let orders = try await browser.get("/orders")
            #expect(orders.status == .seeOther)
            #expect(orders.location == "/login?next=%2Forders")
            let wrong = try await browser.signIn("web@example.com", password: "not-the-password")
            #expect(wrong.status == .unauthorized)
            #expect(wrong.html.contains("The email or password is wrong."))
            let signedIn = try await browser.post("/login", ["email": "web@example.com", "password": TestServer.password, "next": "/orders"], from: "/login")
            #expect(signedIn.status == .seeOther)
            #expect(signedIn.location == "/orders")
            let cookie = try #require(signedIn.headers[.setCookie].first { $0.hasPrefix("wb_session=") })
            #expect(cookie.contains("HttpOnly"))
            #expect(cookie.contains("SameSite=Lax"))
            #expect(try await browser.get("/orders").html.contains("My deliveries"))
            // Never to another site.
            let away = try await TestBrowser(server).post("/login", ["email": "web@example.com", "password": TestServer.password, "next": "//evil.example"], from: "/login")
            #expect(away.location == "/")
        }
    }

    @Test("A form posted without its token, or with another visitor's, is refused and changes nothing", arguments: TestDatabase.available)
    func csrf(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            try await server.registerCustomer("csrf@example.com")
            let browser = TestBrowser(server)
            _ = try await browser.signIn("csrf@example.com")
            let refused = try await browser.post("/account", ["firstName": "Mallory", "lastName": "X"], from: "/account", withToken: false)
            #expect(refused.status == .forbidden)
            #expect(refused.html.contains("The form has expired"))
            let stranger = TestBrowser(server)
            let strangersToken = try await stranger.get("/login").csrf ?? ""
            let forged = try await browser.post("/account", ["firstName": "Mallory", "lastName": "X", "_csrf": strangersToken], from: "/account", withToken: false)
            #expect(forged.status == .forbidden)
            #expect(try await User.query(on: server.db).filter(\.$email == "csrf@example.com").first()?.firstName == "Ada")
            // Each page masks the token afresh (pages are compressed: a constant secret beside chosen
            // text could be read from the size); an earlier page's token still works.
            let earlier = try #require(try await browser.get("/account").csrf)
            let later = try #require(try await browser.get("/account").csrf)
            #expect(earlier != later)
            let saved = try await browser.post("/account", ["firstName": "Adele", "lastName": "Muster", "address": "Quai 1", "postalCode": "1204", "city": "Genève", "_csrf": earlier], from: "/account", withToken: false)
            #expect(saved.status == .seeOther)
            #expect(try await User.query(on: server.db).filter(\.$email == "csrf@example.com").first()?.firstName == "Adele")
            // A token that is not a masked one, or is tampered with, is refused.
            var tampered = Array(later)
            tampered[tampered.count - 2] = tampered[tampered.count - 2] == "A" ? "B" : "A"
            for token in [String(tampered), "x", String(later.prefix(later.count / 2))] {
                let refusedToken = try await browser.post("/account", ["firstName": "Eve", "lastName": "X", "_csrf": token], from: "/account", withToken: false)
                #expect(refusedToken.status == .forbidden)
            }
            #expect(try await User.query(on: server.db).filter(\.$email == "csrf@example.com").first()?.firstName == "Adele")
        }
    }

    @Test("Signing out, a password changed in the app, or a disabled account ends the web session at once", arguments: TestDatabase.available)
    func sessionsEnd(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            try await server.registerCustomer("ends@example.com")
            let first = TestBrowser(server), second = TestBrowser(server)
            _ = try await first.signIn("ends@example.com")
            _ = try await second.signIn("ends@example.com")
            let copied = first.cookies
            let out = try await first.post("/logout", [:], from: "/orders")
            #expect(out.location == "/login")
            // The old cookie, replayed, no longer works.
            first.cookies = copied
            #expect(try await first.get("/orders").status == .seeOther)
            #expect(try await second.get("/orders").status == .ok)

            // A password change through the API ends every other session, web ones included.
            let tokens = try await server.login("ends@example.com")
            let changed = try await server.send(.POST, "/me/password", json: ["currentPassword": TestServer.password, "newPassword": "another-long-passphrase"],
                                                token: tokens.access)
            #expect(changed.status == .ok || changed.status == .noContent)
            #expect(try await second.get("/orders").location?.hasPrefix("/login") == true)

            // An admin disabling the account ends a fresh session too.
            let third = TestBrowser(server)
            #expect(try await third.signIn("ends@example.com", password: "another-long-passphrase").status == .seeOther)
            #expect(try await third.get("/orders").status == .ok)
            let manager = try await server.createAccount("boss@courier.example", role: .manager)
            _ = try await server.makeAdmin(manager)
            let userID = try #require(try await User.query(on: server.db).filter(\.$email == "ends@example.com").first()?.id)
            let disabled = try await server.send(.PATCH, "/users/\(userID.uuidString)", json: ["disabled": true], token: manager.access)
            #expect(disabled.status == .ok)
            #expect(try await third.get("/orders").location?.hasPrefix("/login") == true)
        }
    }

    @Test("A customer cannot open another customer's delivery, its files, or act on it", arguments: TestDatabase.available)
    func objectLevelAuthorization(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            try await server.registerCustomer("owner@example.com")
            try await server.registerCustomer("other@example.com")
            let tokens = try await server.login("owner@example.com")
            let id = try await server.placeOrder(tokens.access)
            let reference = try #require(try await Order.find(OrderID(uuidString: id)!, on: server.db)?.reference)
            let owner = TestBrowser(server), other = TestBrowser(server)
            _ = try await owner.signIn("owner@example.com")
            _ = try await other.signIn("other@example.com")
            #expect(try await owner.get("/orders/\(id)").status == .ok)
            let refused = try await other.get("/orders/\(id)")
            #expect(refused.status == .notFound)
            #expect(!refused.html.contains(reference))
            let cancel = try await other.post("/orders/\(id)/cancel", ["reason": "mine now"], from: "/orders")
            #expect(cancel.status == .notFound)
            #expect(try await owner.get("/orders/\(id)").html.contains("Order received"))
            // Drivers and managers' pages are not for customers.
            #expect(try await other.get("/dispatch").status == .forbidden)
            #expect(try await other.get("/users").status == .forbidden)
        }
    }

    @Test("The islands' JSON calls need the page's token: duty, positions and a browser's push subscription", arguments: TestDatabase.available)
    func islandEndpoints(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            _ = try await server.createAccount("luca@courier.example", role: .driver)
            let browser = TestBrowser(server)
            _ = try await browser.signIn("luca@courier.example")
            let forged = try await browser.postJSON("/app/duty", ["onDuty": true], from: "/driver", withToken: false)
            #expect(forged.status == .forbidden)
            #expect(forged.html.contains("csrf_failed"))
            #expect(try await browser.postJSON("/app/duty", ["onDuty": true], from: "/driver").status == .ok)
            let now = ISO8601DateFormatter().string(from: Date())
            let reported = try await browser.postJSON("/app/positions", ["positions": [["latitude": 47.37, "longitude": 8.54, "accuracy": 8, "recordedAt": now]]], from: "/driver")
            #expect(reported.status == .ok)
            #expect(reported.html.contains("\"accepted\":1"))
            let impossible = try await browser.postJSON("/app/positions", ["positions": [["latitude": 147.0, "longitude": 8.54, "recordedAt": now]]], from: "/driver")
            #expect(impossible.status == .unprocessableEntity)
            #expect(try await DriverState.find(try #require(try await User.query(on: server.db).filter(\.$email == "luca@courier.example").first()?.id), on: server.db)?.position?.latitude == 47.37)
            let ticket = try await browser.postJSON("/app/live-ticket", [:], from: "/driver")
            #expect(ticket.status == .created)
            #expect(ticket.html.contains("/api/v1/live?ticket="))

            let key = P256.KeyAgreement.PrivateKey().publicKey.x963Representation.base64URLEncodedString()
            let auth = Data(Array(repeating: UInt8(9), count: 16)).base64URLEncodedString()
            let subscribed = try await browser.postJSON("/app/devices", ["subscription": ["endpoint": "https://fcm.googleapis.com/fcm/send/abc123", "keys": ["p256dh": key, "auth": auth]]], from: "/account")
            #expect(subscribed.status == .created)
            #expect(try await Device.query(on: server.db).filter(\.$platform == .web).count() == 1)
            let local = try await browser.postJSON("/app/devices", ["subscription": ["endpoint": "https://127.0.0.1/push", "keys": ["p256dh": key, "auth": auth]]], from: "/account")
            #expect(local.status == .unprocessableEntity)
            // Signed out, the calls are refused.
            #expect(try await TestBrowser(server).postJSON("/app/live-ticket", [:], from: "/login").status == .unauthorized)
        }
    }

    @Test("A NUL character is refused with a clear error, in the API and in the web app, never a 500", arguments: TestDatabase.both)
    func nulCharacters(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let api = try await server.send(.POST, "/auth/password-reset", json: ["email": "a\u{0}@example.com"])
            #expect(api.status == .unprocessableEntity)
            #expect(api.json["error"]["fields"]["email"].string == "invalid_character")
            try await server.registerCustomer("nul@example.com")
            let browser = TestBrowser(server)
            _ = try await browser.signIn("nul@example.com")
            let page = try await browser.post("/account", ["firstName": "A\u{0}B", "lastName": "Muster"], from: "/account")
            #expect(page.status == .badRequest)
            #expect(try await User.query(on: server.db).filter(\.$email == "nul@example.com").first()?.firstName == "Ada")
            let manager = try await server.createAccount("boss@courier.example", role: .manager)
            _ = manager
            let staff = TestBrowser(server)
            _ = try await staff.signIn("boss@courier.example")
            #expect(try await staff.get("/users?q=a%00b").status == .ok)
        }
    }

    @Test("Mark all as read clears the unread notifications in one step", arguments: TestDatabase.available)
    func markAllRead(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            _ = try await server.placeOrder(cast.customer.access)
            let browser = TestBrowser(server)
            _ = try await browser.signIn("boss@courier.example")
            let unread = { try await Notification.query(on: server.db).filter(\.$readAt == nil).count() }
            let before = try await unread()
            #expect(try await browser.get("/notifications").html.contains("Mark all as read"))
            #expect(try await browser.post("/notifications/read-all", [:], from: "/notifications").status == .seeOther)
            let managerID = try #require(try await User.query(on: server.db).filter(\.$email == "boss@courier.example").first()?.id)
            #expect(try await Notification.query(on: server.db).filter(\.$userID == managerID).filter(\.$readAt == nil).count() == 0)
            #expect(before > 0)
            #expect(try await unread() == before - (try await Notification.query(on: server.db).filter(\.$userID == managerID).count()))
        }
    }

    @Test("Pages speak French to a French browser, and the choice can be switched")
    func french() async throws {
        try await TestServer.run(.sqlite) { server in
            let browser = TestBrowser(server)
            browser.acceptLanguage = "fr-CH, fr;q=0.9, en;q=0.8"
            let login = try await browser.get("/login")
            #expect(login.html.contains("<html lang=\"fr\""))
            #expect(login.html.contains("Se connecter"))
            let switched = try await browser.get("/lang/en?back=/register")
            #expect(switched.location == "/register")
            #expect(try await browser.get("/register").html.contains("Create an account"))
            #expect(try await browser.get("/lang/en?back=https://evil.example").location == "/")
        }
    }

    @Test("Every catalogue entry has an English and a French text, with the same placeholders")
    func catalogue() throws {
        for text in CatalogueIndex.all {
            #expect(!text.en.isEmpty && !text.fr.isEmpty)
            #expect(text.en.components(separatedBy: "%@").count == text.fr.components(separatedBy: "%@").count, "\(text.en)")
        }
        #expect(CatalogueIndex.all.count > 200)
    }

    @Test("Pages carry a strict Content-Security-Policy and are never cached")
    func headers() async throws {
        try await TestServer.run(.sqlite) { server in
            let page = try await TestBrowser(server).get("/login")
            let csp = try #require(page.headers.first(name: "Content-Security-Policy"))
            #expect(csp.contains("script-src 'self'"))
            #expect(!csp.contains("unsafe-inline"))
            #expect(csp.contains("frame-ancestors 'none'"))
            #expect(page.headers.first(name: .cacheControl) == "no-store")
            let worker = try await server.app.testing().sendRequest(.GET, "/sw.js")
            #expect(worker.status == .ok)
            #expect(worker.headers.first(name: .contentType)?.hasPrefix("text/javascript") == true)
            let manifest = try await server.app.testing().sendRequest(.GET, "/manifest.webmanifest")
            #expect(manifest.headers.first(name: .contentType) == "application/manifest+json")
        }
    }
}
