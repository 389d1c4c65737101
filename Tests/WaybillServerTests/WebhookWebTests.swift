import Foundation
import Testing
import Vapor
@testable import WaybillServer
import WaybillCore

@Suite("Webhooks in the web app")
struct WebhookWebTests {
    @Test("Add an endpoint (its secret shown once), send a test event, read the log, send again, turn it off; in French too",
          arguments: TestDatabase.available)
    func endpointPages(db: TestDatabase) async throws {
        try await FakeWebhookReceiver.with { receiver in
            try await TestServer.run(db, adjust: WebhookTests.local) { server in
                WebhookTests.connect(server, receiver)
                _ = try await server.cast()
                let ada = TestBrowser(server)
                _ = try await ada.signIn("ada@example.com")
                #expect(try await ada.get("/account").html.contains("href=\"/webhooks\""))
                let empty = try await ada.get("/webhooks")
                #expect(empty.status == .ok && empty.html.contains("No endpoint yet.") && !empty.html.contains("The company’s"), "customers have no company scope")

                let plain = try await ada.post("/webhooks", ["url": "ftp://hooks.example.com", "ev0": "on"], from: "/webhooks")
                #expect(plain.status == .unprocessableEntity && plain.html.contains("Use an https:// address."), "\(plain.status)")
                let none = try await ada.post("/webhooks", ["url": receiver.url("/ada")], from: "/webhooks")
                #expect(none.status == .unprocessableEntity && none.html.contains("Choose at least one event."))

                let placed = WebhookEvent.subscribable.firstIndex(of: .shipmentPlaced)!
                let made = try await ada.post("/webhooks", ["url": receiver.url("/ada"), "description": "Our shop", "ev\(placed)": "on"], from: "/webhooks")
                #expect(made.status == .ok && made.html.contains("shown only once"), "\(made.status) \(made.html.prefix(600))")
                let secret = try #require(made.html.firstMatch(of: /data-webhook-secret value="(whsec_[A-Za-z0-9_-]+)"|value="(whsec_[A-Za-z0-9_-]+)" data-webhook-secret/)
                    .flatMap { String($0.1 ?? $0.2 ?? "") })
                receiver.use(secret: secret, at: "/ada")
                let list = try await ada.get("/webhooks")
                let link = try #require(list.html.firstMatch(of: /href="(\/webhooks\/[0-9A-F-]{36})"/).map { String($0.1) })
                #expect(!(try await ada.get(link)).html.contains(secret), "the secret is shown once")

                let pinged = try await ada.post(link + "/ping", [:], from: link)
                #expect(pinged.location?.hasPrefix(link) == true)
                try await WebhookTests.sendDue(server)
                #expect(receiver.received(at: "/ada").first.map { $0.type == "ping" && $0.verified } == true)
                let page = try await ada.get(link)
                #expect(page.html.contains("data-status=\"delivered\"") && page.html.contains(">ping<"), "\(page.html.prefix(2000))")
                let delivery = try #require(page.html.firstMatch(of: /data-delivery="([0-9A-F-]{36})"/).map { String($0.1) })
                let again = try await ada.post(link + "/deliveries/\(delivery)/redeliver", [:], from: link)
                #expect(again.location?.contains("done=redeliver") == true)
                try await WebhookTests.sendDue(server)
                #expect(receiver.received(at: "/ada").count == 2)

                _ = try await ada.post(link + "/disable", [:], from: link)
                let off = try await ada.get(link)
                #expect(off.html.contains("data-endpoint-state=\"by_owner\"") && off.html.contains("Turn on"))
                _ = try await ada.get("/lang/fr?back=/webhooks")
                let french = try await ada.get(link)
                #expect(french.html.contains("Désactivé") && french.html.contains("Envois"))
                // Someone else's endpoint does not exist for them.
                let bob = TestBrowser(server)
                _ = try await bob.signIn("bob@example.com")
                #expect(try await bob.get(link).status == .notFound)
                let deleted = try await ada.post(link + "/delete", [:], from: link)
                #expect(deleted.location?.contains("deleted=1") == true)
            }
        }
    }

    @Test("Make an API key on the integrations page (shown once), use it, see its last use, revoke it; customers get no dispatch scope",
          arguments: TestDatabase.available)
    func apiKeys(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            _ = try await server.cast()
            let ada = TestBrowser(server)
            _ = try await ada.signIn("ada@example.com")
            let page = try await ada.get("/webhooks")
            #expect(page.html.contains("No key yet.") && !page.html.contains("scope_dispatch"), "customers cannot give keys the dispatch scope")
            let empty = try await ada.post("/api-keys", ["name": "ERP"], from: "/webhooks")
            #expect(empty.status == .unprocessableEntity)
            let made = try await ada.post("/api-keys", ["name": "ERP", "scope_shipments_read": "on", "days": "30"], from: "/webhooks")
            #expect(made.status == .ok && made.html.contains("shown only once"), "\(made.status)")
            let key = try #require(made.html.firstMatch(of: /value="(wb_live_[A-Za-z0-9_-]{43})"/).map { String($0.1) })
            #expect(try await server.send(.GET, "/orders", token: key).status == .ok)
            let listed = try await ada.get("/webhooks")
            #expect(listed.html.contains("ERP") && listed.html.contains("last used") && !listed.html.contains(key), "the key is never shown again")
            let id = try #require(listed.html.firstMatch(of: /data-api-key="([0-9A-F-]{36})"/).map { String($0.1) })
            _ = try await ada.post("/api-keys/\(id)/revoke", [:], from: "/webhooks")
            #expect(try await server.send(.GET, "/orders", token: key).status == .unauthorized)
            #expect(try await ada.get("/webhooks").html.contains("revoked"))
            let manager = TestBrowser(server)
            _ = try await manager.signIn("boss@courier.example")
            #expect(try await manager.get("/webhooks").html.contains("scope_dispatch"))
        }
    }
}
