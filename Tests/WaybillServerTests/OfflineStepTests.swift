import Fluent
import Foundation
import Testing
import Vapor
@testable import WaybillServer
import WaybillCore

/// A driver's steps sent again (a retry after a lost answer, the web app's offline queue) are done
/// once: the idempotency key is kept with the step in its transaction.
@Suite("A driver's steps sent twice are done once (idempotency keys, the web app's offline queue)")
struct OfflineStepTests {
    func events(_ server: TestServer, _ id: String, _ type: String) async throws -> Int {
        try await OrderEvent.query(on: server.db).filter(\.$orderID == OrderID(uuidString: id)!).filter(\.$type == type).count()
    }

    @Test("Accept, pick up and deliver sent twice with the same key through the API are each done once; a key reused for another step is refused",
          arguments: TestDatabase.both)
    func apiStepsOnce(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let id = try await server.placeOrder(cast.customer.access)
            try await server.advance(id, to: .assigned, cast: cast)
            let driver = cast.driver.access
            for _ in 0..<2 {
                let accepted = try await server.send(.POST, "/orders/\(id)/accept", token: driver, headers: [("Idempotency-Key", "accept-1")])
                #expect(accepted.status == .ok)
                #expect(accepted.json["status"].string == "accepted")
            }
            #expect(try await events(server, id, "accepted") == 1)
            // Without the key the same step again is what it always was: 409.
            #expect(try await server.send(.POST, "/orders/\(id)/accept", token: driver).status == .conflict)
            // The key of the acceptance cannot stand for the pickup.
            let reused = try await server.send(.POST, "/orders/\(id)/pickup", json: TestServer.cash(try await server.price(of: id)), token: driver,
                                               headers: [("Idempotency-Key", "accept-1")])
            #expect(reused.status == .unprocessableEntity)
            #expect(reused.json["error"]["fields"]["Idempotency-Key"].string == "reused")
            for _ in 0..<2 {
                let picked = try await server.send(.POST, "/orders/\(id)/pickup", json: TestServer.cash(try await server.price(of: id)), token: driver,
                                                   headers: [("Idempotency-Key", "pickup-1")])
                #expect(picked.status == .ok)
            }
            #expect(try await events(server, id, "picked_up") == 1)
            for _ in 0..<2 {
                #expect(try await server.deliver(id, token: driver, idempotencyKey: "deliver-1").status == .ok)
            }
            #expect(try await events(server, id, "delivered") == 1)
            #expect(try await OrderFile.query(on: server.db).filter(\.$orderID == OrderID(uuidString: id)!).filter(\.$kind == .signature).count() == 1)
            // Keys are each person's own: another driver's same key is theirs, and refused here as any stranger is.
            #expect(try await server.send(.POST, "/orders/\(id)/accept", token: cast.otherDriver.access, headers: [("Idempotency-Key", "accept-1")]).status == .notFound)
            // A key that cannot be one.
            let long = String(repeating: "k", count: 201)
            #expect(try await server.send(.POST, "/orders/\(id)/accept", token: driver, headers: [("Idempotency-Key", long)]).status == .unprocessableEntity)
        }
    }

    @Test("The web app's queue sends a step kept offline with its form's key: done once, and a step the order no longer allows comes back with the reason in the driver's language",
          arguments: TestDatabase.available)
    func queuedSteps(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let id = try await server.placeOrder(cast.customer.access)
            try await server.advance(id, to: .assigned, cast: cast)
            let browser = TestBrowser(server)
            _ = try await browser.signIn("luca@courier.example")
            let page = try await browser.get("/orders/\(id)")
            // The step's form names where the queue sends it, and carries a key drawn for the page.
            #expect(page.html.lowercased().contains("data-outbox=\"/app/orders/\(id.lowercased())/steps/accept\""))
            let key = try #require(page.html.range(of: #"name="idempotencyKey" value=""#).map { String(page.html[$0.upperBound...].prefix(36)) })
            #expect(page.html.contains("id=\"outbox\""))
            for _ in 0..<2 {
                let sent = try await browser.post("/app/orders/\(id)/steps/accept", ["idempotencyKey": key], from: "/driver")
                #expect(sent.status == .ok)
                let answer = JSON(data: Data(sent.html.utf8))
                #expect(answer["status"].string == "accepted")
                #expect(answer["url"].string?.hasSuffix("?done=accepted") == true)
            }
            #expect(try await events(server, id, "accepted") == 1)
            // The same form posted the page's way with the same key (a double tap) changes nothing more.
            let tapped = try await browser.post("/driver/orders/\(id)/accept", ["idempotencyKey": key], from: "/driver")
            #expect(tapped.status == .seeOther)
            #expect(try await events(server, id, "accepted") == 1)

            // Meanwhile dispatch gives the delivery to another driver: the kept pickup is refused, in French.
            _ = try await server.send(.POST, "/orders/\(id)/assign", json: ["driverId": cast.otherDriver.userID, "reassign": true], token: cast.manager.access)
            browser.acceptLanguage = "fr"
            let refused = try await browser.post("/app/orders/\(id)/steps/pickup", ["idempotencyKey": UUID().uuidString, "cash": "10.00"], from: "/driver")
            #expect(refused.status == .notFound)
            let error = JSON(data: Data(refused.html.utf8))["error"]
            #expect(error["code"].string == "not_found", "\(refused.html)")
            #expect(error["message"].string == WaybillError.notFound.code.message(french: true))
            #expect(try await events(server, id, "picked_up") == 0)
            // Not a step at all, or not an order.
            #expect(try await browser.post("/app/orders/\(id)/steps/cancel", [:], from: "/driver").status == .notFound)
            #expect(try await browser.post("/app/orders/not-an-id/steps/accept", [:], from: "/driver").status == .notFound)
        }
    }

    @Test("A delivery kept offline is recorded once with its signature when the queue sends it twice", arguments: TestDatabase.both)
    func queuedDelivery(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let id = try await server.placeOrder(cast.customer.access)
            try await server.advance(id, to: .inTransit, cast: cast)
            let browser = TestBrowser(server)
            _ = try await browser.signIn("luca@courier.example")
            let proof = try await browser.get("/driver/orders/\(id)/deliver")
            #expect(proof.html.contains("/steps/deliver\""))
            let signature = "data:image/png;base64," + Data(SampleImages.signaturePNG).base64EncodedString()
            let key = UUID().uuidString
            for _ in 0..<2 {
                let sent = try await browser.post("/app/orders/\(id)/steps/deliver", ["signature": signature, "recipientName": "Bea Beispiel", "idempotencyKey": key],
                                                  from: "/driver/orders/\(id)/deliver")
                #expect(sent.status == .ok, "\(sent.html)")
            }
            #expect(try await events(server, id, "delivered") == 1)
            #expect(try await server.status(of: id) == "delivered")
            // A proof without its signature is a 422 the queue shows, not a crash.
            let other = try await server.placeOrder(cast.customer.access)
            try await server.advance(other, to: .inTransit, cast: cast)
            let unsigned = try await browser.post("/app/orders/\(other)/steps/deliver", ["recipientName": "Bea", "idempotencyKey": UUID().uuidString],
                                                  from: "/driver/orders/\(other)/deliver")
            #expect(unsigned.status == .unprocessableEntity)
            #expect(JSON(data: Data(unsigned.html.utf8))["error"]["fields"]["signature"].string == "required")
        }
    }
}

/// The installed app: its shortcuts, its version, and an update offered when a new one is deployed.
@Suite("The installed web app: shortcuts per role, the worker's version")
struct InstalledAppTests {
    @Test("Each person's pages link a manifest whose shortcuts are their tabs, named in their language", arguments: TestDatabase.available)
    func shortcuts(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            _ = try await server.createAccount("luca@courier.example", role: .driver)
            let browser = TestBrowser(server)
            browser.acceptLanguage = "fr"
            _ = try await browser.signIn("luca@courier.example")
            let page = try await browser.get("/driver")
            let link = try #require(page.html.range(of: #"<link rel="manifest" href=""#).map { String(page.html[$0.upperBound...].prefix { $0 != "\"" }) })
            #expect(link == "/manifest.webmanifest?lang=fr&amp;tabs=today,map,messages,account")
            let manifest = try await browser.get(link.replacingOccurrences(of: "&amp;", with: "&"))
            #expect(manifest.headers.contentType?.description.hasPrefix("application/manifest+json") == true)
            let shortcuts = JSON(data: Data(manifest.html.utf8))["shortcuts"]
            #expect(shortcuts[0]["name"].string == "Aujourd’hui")
            #expect(shortcuts[0]["url"].string == "/driver")
            #expect(shortcuts[1]["url"].string == "/driver/map")
            #expect(shortcuts[3]["name"].string == "Compte")
            // A visitor's manifest has none; tabs that do not exist are ignored.
            #expect(!(try await TestBrowser(server).get("/login").html.contains("manifest.webmanifest?")))
            let odd = JSON(data: Data(try await browser.get("/manifest.webmanifest?tabs=nope,send,../x").html.utf8))
            #expect(odd["shortcuts"][0]["url"].string == "/orders/new")
            #expect(odd["shortcuts"][1]["url"].string == nil)
            #expect(JSON(data: Data(try await browser.get("/manifest.webmanifest").html.utf8))["shortcuts"][0]["url"].string == nil)
        }
    }

    @Test("The service worker carries the app's version, so a deployment that changes the app installs a new worker")
    func workerVersion() async throws {
        try await TestServer.run(.sqlite) { server in
            let worker = try await TestBrowser(server).get("/sw.js")
            #expect(worker.html.contains(#"const VERSION = "\#(WebAssets.version)";"#))
            #expect(!worker.html.contains(#"const VERSION = "dev";"#))
            #expect(worker.headers.first(name: .cacheControl) == "no-cache")
            #expect(worker.html.contains(#"importScripts("/assets/js/outbox-core.js")"#))
        }
    }
}
