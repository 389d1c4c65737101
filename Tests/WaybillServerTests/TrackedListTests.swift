import Foundation
import Testing
import Vapor
@testable import WaybillServer
import WaybillCore

/// One list of everything a person follows: other carriers' parcels and Waybill's own shipments
/// (issue "Parcels of every carrier", item 4).
@Suite("Everything one follows in one list: other carriers' parcels beside Waybill shipments, sent and incoming, filtered by status")
struct TrackedListTests {
    @Test("A DHL parcel, a shipment Ada sent and one coming to Bob: each in the right lists, with the same statuses",
          arguments: TestDatabase.available)
    func oneList(db: TestDatabase) async throws {
        try await ParcelPollingTests.withCarriers(db) { server, fake in
            let cast = try await server.cast()
            let number = "00340434292135100124"
            fake.setDHL(number, status: "delivered", events: [("2026-11-21T11:02:00+01:00", "delivered", "Delivered", "Berlin")])
            let parcel = try #require(try await server.send(.POST, "/parcels", json: ["number": number, "name": "Shoes"], token: cast.customer.access).json["id"].string)
            let shipment = try await server.placeOrder(cast.customer.access, extra: ["recipient": ["name": "Bob", "email": "bob@example.com"]])

            var active = try await server.send(.GET, "/tracked", token: cast.customer.access)
            #expect(Set(active.json["items"].array.compactMap { $0["id"].string }) == [parcel, shipment], "\(active)")
            let sent = try #require(active.json["items"].array.first { $0["kind"].string == "shipment" })
            #expect(sent["carrier"].string == "waybill" && sent["direction"].string == "sent" && sent["status"].string == "pending" && sent["place"].exists)

            // Delivered at DHL: out of the active list, into the delivered one.
            #expect(try await ParcelPollingTests.poll(server) == 1)
            active = try await server.send(.GET, "/tracked", token: cast.customer.access)
            #expect(active.json["items"].array.compactMap { $0["id"].string } == [shipment])
            let delivered = try await server.send(.GET, "/tracked?filter=delivered", token: cast.customer.access)
            #expect(delivered.json["items"].array.compactMap { $0["id"].string } == [parcel])
            #expect(delivered.json["items"][0]["name"].string == "Shoes" && delivered.json["items"][0]["carrierName"].string == "DHL")
            #expect(try await server.send(.GET, "/tracked?filter=all", token: cast.customer.access).json["items"].array.count == 2)
            #expect(try await server.send(.GET, "/tracked?filter=attention", token: cast.customer.access).json["items"].array.isEmpty)
            #expect(try await server.send(.GET, "/tracked?filter=nonsense", token: cast.customer.access).status == .badRequest)

            // Bob: the shipment is coming to him; Ada's parcel is not his.
            let bob = try await server.send(.GET, "/tracked?filter=all", token: cast.otherCustomer.access)
            #expect(bob.json["items"].array.count == 1 && bob.json["items"][0]["direction"].string == "incoming", "\(bob)")

            // Failed: it needs someone's attention.
            try await server.advance(shipment, to: .failed, cast: cast)
            let attention = try await server.send(.GET, "/tracked?filter=attention", token: cast.customer.access)
            #expect(attention.json["items"].array.compactMap { $0["id"].string } == [shipment], "\(attention)")
            #expect(attention.json["items"][0]["status"].string == "delivery_failed")

            // The web app's list, and the command line's.
            let ada = TestBrowser(server)
            _ = try await ada.signIn("ada@example.com")
            let page = try await ada.get("/parcels?filter=all")
            #expect(page.html.contains("href=\"/orders/\(shipment)\"") && page.html.contains("href=\"/parcels/\(parcel)\""), "\(page.html.prefix(3000))")
            #expect(page.html.contains("aria-current=\"page\">All"))
            let onTheWay = try await ada.get("/parcels")
            #expect(!onTheWay.html.contains("href=\"/parcels/\(parcel)\"") && onTheWay.html.contains("href=\"/orders/\(shipment)\""), "failed is not over")
            try await server.serving { port in
                let cli = CLI(server: "http://127.0.0.1:\(port)", sessionFile: NSTemporaryDirectory() + "/wb-cli-\(UUID().uuidString).json")
                _ = try await cli.run(["login", "--email", "ada@example.com", "--password", TestServer.password])
                let listed = try await cli.run(["parcel", "list", "--filter", "all"])
                #expect(listed.status == 0 && listed.stdout.contains("Shoes") && listed.stdout.contains("shipment"), "\(listed)")
                let sdk = server.sdk(port: port)
                try await sdk.signIn(email: "ada@example.com", password: TestServer.password)
                #expect(try await sdk.tracked(.delivered).map(\.id) == [parcel])
            }
        }
    }
}

@Suite("A pasted shipping confirmation: every number in it followed, those already followed skipped")
struct PasteConfirmationTests {
    static let confirmation = """
        Thank you for your order #100234567! Call us on +41 79 123 45 67.
        Your parcels: UPS 1Z 999 AA1 01 2345 6784 and Swiss Post RB123456785CH.
        """

    @Test("Through the API, the web app and the command line", arguments: TestDatabase.available)
    func paste(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let first = try await server.send(.POST, "/parcel-imports", json: ["text": Self.confirmation, "name": "Shoe shop"], token: cast.customer.access)
            #expect(first.status == .ok && first.json["added"].array.compactMap { $0["carrier"].string } == ["ups", "swiss_post"], "\(first)")
            #expect(first.json["added"][0]["name"].string == "Shoe shop" && first.json["added"][0]["pinned"].bool == false)
            let again = try await server.send(.POST, "/parcel-imports", json: ["text": Self.confirmation], token: cast.customer.access)
            #expect(again.json["added"].array.isEmpty && again.json["skipped"].array.count == 2)
            let none = try await server.send(.POST, "/parcel-imports", json: ["text": "Hello, no parcel here: order 123."], token: cast.customer.access)
            #expect(none.status == .unprocessableEntity && none.json["error"]["fields"]["text"].string == "no_tracking_number")

            let bob = TestBrowser(server)
            _ = try await bob.signIn("bob@example.com")
            #expect(try await bob.get("/parcels").html.contains("Paste a shipping confirmation"))
            let pasted = try await bob.post("/parcels/from-text", ["text": Self.confirmation, "name": ""], from: "/parcels")
            #expect(pasted.location == "/parcels?imported=2&skipped=0", "\(pasted.status)")
            #expect(try await bob.get(try #require(pasted.location)).html.contains("data-imported=\"2\""))
            let empty = try await bob.post("/parcels/from-text", ["text": "nothing", "name": ""], from: "/parcels")
            #expect(empty.status == .unprocessableEntity && empty.html.contains("No tracking number was found"))

            try await server.serving { port in
                let cli = CLI(server: "http://127.0.0.1:\(port)", sessionFile: NSTemporaryDirectory() + "/wb-cli-\(UUID().uuidString).json")
                _ = try await cli.run(["login", "--email", "boss@courier.example", "--password", TestServer.password])
                let imported = try await cli.run(["parcel", "import", "--name", "Office"], input: Self.confirmation)
                #expect(imported.status == 0 && imported.stdout.contains("1Z999AA10123456784") && imported.stdout.contains("RB123456785CH"), "\(imported)")
            }
        }
    }
}
