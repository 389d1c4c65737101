import Foundation
import Testing
import Vapor
@testable import WaybillServer
import WaybillCore

@Suite("The parcel pages: follow a number of any carrier, correct the carrier, stop following")
struct ParcelWebTests {
    @Test("Through the web app: add a number, see the carrier suggested, correct it, ask the carrier, remove it; in French too",
          arguments: TestDatabase.available)
    func parcels(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            _ = try await server.cast()
            let ada = TestBrowser(server)
            _ = try await ada.signIn("ada@example.com")
            let list = try await ada.get("/parcels")
            #expect(list.status == .ok && list.html.contains("href=\"/parcels\"") && list.html.contains("You follow no parcel yet."))

            let bad = try await ada.post("/parcels", ["number": "HELLOWORLD", "carrier": ""], from: "/parcels")
            #expect(bad.status == .unprocessableEntity && bad.html.contains("No carrier is known for this number"), "\(bad.status)")
            let added = try await ada.post("/parcels", ["number": "LX 123 456 785 FR", "carrier": "", "name": "Cheese"], from: "/parcels")
            let path = try #require(added.location?.components(separatedBy: "?").first, "\(added.status) \(added.html.prefix(800))")
            let page = try await ada.get(path + "?added=1")
            #expect(page.html.contains("data-carrier=\"la_poste\"") && page.html.contains("suggested from the number"), "\(page.html.prefix(1500))")
            #expect(page.html.contains("Not this carrier?") && page.html.contains("Nothing from the carrier yet."))
            // The person knows better: DHL. The choice is kept (pinned).
            let corrected = try await ada.post(path + "/carrier", ["carrier": "dhl"], from: path)
            #expect(corrected.location == path)
            let now = try await ada.get(path)
            #expect(now.html.contains("data-carrier=\"dhl\"") && now.html.contains("chosen by you"))
            // A typo in the number: corrected in place, its carrier suggested again.
            #expect(now.html.contains("Wrong number? Correct it") && now.html.contains("name=\"number\" value=\"LX123456785FR\""))
            let renumbered = try await ada.post(path + "/number", ["number": "RB 123 456 785 CH"], from: path)
            #expect(renumbered.location == path, "\(renumbered.status) \(renumbered.html.prefix(600))")
            let fixed = try await ada.get(path)
            #expect(fixed.html.contains("RB123456785CH") && fixed.html.contains("data-carrier=\"swiss_post\""))
            let wrong = try await ada.post(path + "/number", ["number": "!!"], from: path)
            #expect(wrong.status == .unprocessableEntity && wrong.html.contains("alert error"))
            // No adapter on this server: said plainly.
            let asked = try await ada.post(path + "/refresh", [:], from: path)
            #expect(asked.status == .conflict && asked.html.contains("alert error"))
            #expect(try await ada.get("/parcels").html.contains("Cheese"))
            // Someone else: 404.
            let bob = TestBrowser(server)
            _ = try await bob.signIn("bob@example.com")
            #expect(try await bob.get(path).status == .notFound)
            _ = try await ada.get("/lang/fr?back=/parcels")
            #expect(try await ada.get("/parcels").html.contains("Tout ce que vous suivez"))
            let removed = try await ada.post(path + "/remove", [:], from: path)
            #expect(removed.location == "/parcels?removed=1")
            #expect(try await ada.get(path).status == .notFound)
        }
    }

    @Test("Through the web app: share with Bob (he sees it, marked shared, and may leave), make a link and withdraw it, choose when to be told",
          arguments: TestDatabase.available)
    func sharing(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            _ = try await server.cast()
            let ada = TestBrowser(server), bob = TestBrowser(server)
            _ = try await ada.signIn("ada@example.com")
            _ = try await bob.signIn("bob@example.com")
            let added = try await ada.post("/parcels", ["number": "RB123456785CH", "carrier": "", "name": "Passport"], from: "/parcels")
            let path = try #require(added.location?.components(separatedBy: "?").first)
            let nobody = try await ada.post(path + "/share", ["email": "nobody@example.com"], from: path)
            #expect(nobody.status == .unprocessableEntity && nobody.html.contains("No Waybill account uses this address"), "\(nobody.status)")
            #expect(try await ada.post(path + "/share", ["email": "bob@example.com"], from: path).location == path)
            let page = try await ada.get(path)
            #expect(page.html.contains("data-shared-with=") && page.html.contains("Stop sharing"))

            let bobList = try await bob.get("/parcels")
            #expect(bobList.html.contains("Passport") && bobList.html.contains("Shared by"), "\(bobList.html.prefix(2000))")
            let bobPage = try await bob.get(path)
            #expect(bobPage.status == .ok && bobPage.html.contains("Remove it from my list") && !bobPage.html.contains("Make a link"))
            // The parcel links them once Bob takes it up: he writes to Ada about it, in their own
            // conversation; Ada, who shared it, is not offered to write to him first.
            #expect(!page.html.contains("data-direct=") && bobPage.html.contains("data-direct="))
            let adaID = try #require(bobPage.html.components(separatedBy: "name=\"kind\" value=\"direct\"><input type=\"hidden\" name=\"id\" value=\"").dropFirst().first?.prefix(36))
            let chat = try #require(try await bob.post("/messages/open", ["kind": "direct", "id": String(adaID)], from: path).location)
            _ = try await bob.post(chat, ["text": "Is it the new passport?", "clientMessageId": UUID().uuidString], from: chat)
            #expect(try await ada.get(chat).html.contains("Is it the new passport?"))
            #expect(try await bob.post(path + "/alerts", ["alerts": "important"], from: path).location == path)
            #expect(try await bob.post(path + "/link", [:], from: path).status == .forbidden)

            #expect(try await ada.post(path + "/link", [:], from: path).location == path)
            let linked = try await ada.get(path)
            let url = try #require(linked.html.components(separatedBy: "data-share-url").first?.components(separatedBy: "value=\"").last?
                .components(separatedBy: "\"").first, "\(linked.html)")
            let linkPath = try #require(URL(string: url)?.path)
            #expect(try await TestBrowser(server).get(linkPath).html.contains("RB123456785CH"))
            #expect(try await ada.post(path + "/unlink", [:], from: path).location == path)
            #expect(try await TestBrowser(server).get(linkPath).status == .notFound)

            // Every change by default; Ada chooses only the important ones, without mail.
            #expect(try await ada.get("/parcels").html.contains("News about my parcels"))
            #expect(try await ada.post("/parcel-alerts", ["alerts": "important", "push": "on"], from: "/parcels").location == "/parcels?saved=1")
            let settings = try await ParcelSettingsRecord.query(on: server.db).all()
            #expect(settings.count == 1 && settings[0].alerts == .important && settings[0].mail == false && settings[0].push)

            #expect(try await bob.post(path + "/remove", [:], from: path).location == "/parcels?removed=1")
            #expect(try await bob.get(path).status == .notFound)
            #expect(try await ada.get(path).status == .ok)
        }
    }

    @Test("Through the web app: connect a WooCommerce shop (its address and key shown once), see it listed, disconnect it",
          arguments: [TestDatabase.sqlite])
    func shops(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            _ = try await server.cast()
            let ada = TestBrowser(server)
            _ = try await ada.signIn("ada@example.com")
            #expect(try await ada.get("/parcels").html.contains("Connect a shop"))
            let noName = try await ada.post("/shops", ["platform": "woocommerce", "name": "", "secret": ""], from: "/parcels")
            #expect(noName.status == .unprocessableEntity)
            let connected = try await ada.post("/shops", ["platform": "woocommerce", "name": "Fromagerie", "secret": ""], from: "/parcels")
            #expect(connected.status == .ok && connected.html.contains("data-webhook-url") && connected.html.contains("/api/v1/shops/"), "\(connected.status)")
            #expect(connected.html.contains("data-webhook-secret") && connected.html.contains("wbshop_"))
            let list = try await ada.get("/parcels")
            #expect(list.html.contains("Fromagerie") && !list.html.contains("wbshop_"), "the key is shown once")
            let shop = try #require(try await ShopRecord.query(on: server.db).first())
            #expect(try await ada.post("/shops/\(shop.id!.uuidString)/remove", [:], from: "/parcels").location == "/parcels")
            #expect(try await ShopRecord.query(on: server.db).count() == 0)
        }
    }

    @Test("Without an account: a number's carriers with their own pages, and sign in to follow it; signed in, follow it from there",
          arguments: [TestDatabase.sqlite])
    func tryWithoutAccount(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            _ = try await server.cast()
            let visitor = TestBrowser(server)
            #expect(try await visitor.get("/login").html.contains("href=\"/track-parcel\""))
            let page = try await visitor.get("/track-parcel?number=00340434292135100124")
            #expect(page.status == .ok, "\(page.status)")
            #expect(page.html.contains("data-candidate=\"dhl\"") && page.html.contains("its check digit is right"))
            #expect(page.html.contains("dhl.de") && page.html.contains("/login?next=") && !page.html.contains("Follow this parcel"))
            #expect(try await visitor.get("/track-parcel?number=hello").html.contains("No carrier we know"))
            #expect(try await visitor.get("/track-parcel").status == .ok)
            let ada = TestBrowser(server)
            _ = try await ada.signIn("ada@example.com")
            let signedIn = try await ada.get("/track-parcel?number=RB123456785CH")
            #expect(signedIn.html.contains("Follow this parcel") && signedIn.html.contains("data-candidate=\"swiss_post\""))
            let followed = try await ada.post("/parcels", ["number": "RB123456785CH", "carrier": "swiss_post"], from: "/track-parcel?number=RB123456785CH")
            #expect(followed.location?.hasPrefix("/parcels/") == true)
            // Lookups from one address are limited (sixty a minute), like the API's: once this
            // address's budget is spent (here at once, not by racing the clock), 429.
            let limiter = server.app.waybill.carrierLookupLimiter
            limiter.exhaustAll()
            #expect(try await visitor.get("/track-parcel?number=RB123456785CH").status == .tooManyRequests)
        }
    }
}
