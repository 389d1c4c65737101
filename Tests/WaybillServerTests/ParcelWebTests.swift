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
            // No adapter on this server: said plainly.
            let asked = try await ada.post(path + "/refresh", [:], from: path)
            #expect(asked.status == .conflict && asked.html.contains("alert error"))
            #expect(try await ada.get("/parcels").html.contains("Cheese"))
            // Someone else: 404.
            let bob = TestBrowser(server)
            _ = try await bob.signIn("bob@example.com")
            #expect(try await bob.get(path).status == .notFound)
            _ = try await ada.get("/lang/fr?back=/parcels")
            #expect(try await ada.get("/parcels").html.contains("Colis suivis"))
            let removed = try await ada.post(path + "/remove", [:], from: path)
            #expect(removed.location == "/parcels?removed=1")
            #expect(try await ada.get(path).status == .notFound)
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
            // Lookups from one address are limited (sixty a minute), like the API's.
            var limited = false
            for _ in 0..<70 where !limited {
                limited = try await visitor.get("/track-parcel?number=RB123456785CH").status == .tooManyRequests
            }
            #expect(limited)
        }
    }
}
