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
}
