import Fluent
import Foundation
import Testing
import Vapor
@testable import WaybillServer
import WaybillCore

@Suite("Bulk import and bulk actions in the web app")
struct OrderImportWebTests {
    @Test("A company uploads its file, reads the problems per row in French, creates the valid deliveries; the upload form refuses other people",
          arguments: TestDatabase.available)
    func importPages(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            _ = try await server.cast()
            try await server.registerCustomer("shop@acme.example", isCompany: true)
            let shop = TestBrowser(server)
            shop.acceptLanguage = "fr"
            _ = try await shop.signIn("shop@acme.example")
            #expect(try await shop.get("/orders").html.contains("href=\"/imports\""), "a company finds the import beside “new delivery”")
            let page = try await shop.get("/imports")
            #expect(page.status == .ok && page.html.contains("Importer des livraisons") && page.html.contains("order-import-template?lang=fr&amp;format=xlsx")
                    || page.html.contains("order-import-template?lang=fr&format=xlsx"))

            let uploaded = try await shop.postFile("/imports", field: "file", bytes: Array(OrderImportTests.frenchFile.utf8), filename: "juin.csv", from: "/imports")
            let location = try #require(uploaded.location, "\(uploaded.status) \(uploaded.html.prefix(400))")
            let checked = try await shop.get(location)
            #expect(checked.html.contains("data-code=\"duplicate_in_file\"") && checked.html.contains("Cette référence externe apparaît deux fois"))
            #expect(checked.html.contains("livraison_rue"), "columns are named in the reader's language")
            #expect(checked.html.contains("Créer 2 livraisons"))
            #expect(try await Order.query(on: server.db).count() == 0)

            let done = try await shop.post(location + "/commit", [:], from: location)
            #expect(done.location == location)
            let after = try await shop.get(location)
            #expect(after.html.contains("data-import-created=\"2\"") && after.html.contains("2 livraisons créées."))
            #expect(try await Order.query(on: server.db).count() == 2)
            #expect(try await shop.get("/imports").html.contains("juin.csv"))

            // Without a token, or as someone who may not import: refused.
            let ada = TestBrowser(server)
            _ = try await ada.signIn("ada@example.com")
            #expect(try await ada.get("/imports").status == .forbidden)
            #expect(try await ada.get(location).status == .forbidden)
        }
    }

    @Test("On the board a dispatcher ticks orders and assigns them at once, cancels others, and prints their labels", arguments: TestDatabase.available)
    func boardBulk(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let ids = [try await server.placeOrder(cast.customer.access), try await server.placeOrder(cast.customer.access),
                       try await server.placeOrder(cast.customer.access)]
            let boss = TestBrowser(server)
            _ = try await boss.signIn("boss@courier.example")
            let board = try await boss.get("/dispatch")
            #expect(board.html.contains("id=\"bulk-form\"") && board.html.contains("name=\"order_\(ids[0].uppercased())\""))
            let luca = try #require(try await User.query(on: server.db).filter(\.$email == "luca@courier.example").first())

            let assigned = try await boss.post("/dispatch/bulk", ["action": "assign", "driverId": luca.id!.uuidString,
                                                                  "order_\(ids[0].uppercased())": "on", "order_\(ids[1].uppercased())": "on"], from: "/dispatch")
            #expect(assigned.location == "/dispatch?bulk=2,0", "\(assigned.status) \(assigned.location ?? "")")
            #expect(try await boss.get(assigned.location!).html.contains("2 done, 0 not possible."))
            let first = try await server.status(of: ids[0]), second = try await server.status(of: ids[1])
            #expect(first == "assigned" && second == "assigned")

            let noReason = try await boss.post("/dispatch/bulk", ["action": "cancel", "order_\(ids[2].uppercased())": "on"], from: "/dispatch")
            #expect(noReason.status == .ok && noReason.html.contains("class=\"alert error\""))
            let cancelled = try await boss.post("/dispatch/bulk", ["action": "cancel", "reason": "Road closed", "order_\(ids[2].uppercased())": "on",
                                                                   "order_\(ids[0].uppercased())": "on"], from: "/dispatch")
            #expect(cancelled.location == "/dispatch?bulk=2,0")
            let nothing = try await boss.post("/dispatch/bulk", ["action": "cancel", "reason": "x"], from: "/dispatch")
            #expect(nothing.html.contains("Select at least one order."))

            let labels = try await boss.post("/dispatch/labels", ["order_\(ids[0].uppercased())": "on", "order_\(ids[1].uppercased())": "on"], from: "/dispatch")
            #expect(labels.status == .ok && labels.html.components(separatedBy: "<article class=\"shipping-label\"").count == 3, "\(labels.html)")
            #expect(labels.html.contains("Bundesplatz 3") && labels.html.contains("data-print"))

            let ada = TestBrowser(server)
            _ = try await ada.signIn("ada@example.com")
            #expect(try await ada.post("/dispatch/labels", ["order_\(ids[0].uppercased())": "on"], from: "/orders").status == .forbidden)
            #expect(try await ada.post("/dispatch/bulk", ["action": "cancel", "reason": "x", "order_\(ids[1].uppercased())": "on"], from: "/orders").status == .forbidden)
        }
    }
}
