import Fluent
import Foundation
import Testing
import Vapor
@testable import WaybillServer
import WaybillCore

/// Sharing followed parcels with other accounts and by link, and who is told what when a parcel's
/// status changes at its carrier (issue "Parcels of every carrier", items 6 and 7).
@Suite("Sharing parcels with people and by link; each person told of the news by their own settings")
struct ParcelSharingTests {
    static func mails(to address: String, _ server: TestServer) async throws -> Int {
        try await OutboxMessage.query(on: server.db).filter(\.$kind == Outbox.mailKind).all()
            .filter { ($0.payload ?? "").contains(address) && ($0.payload ?? "").contains("news from the carrier") }.count
    }

    static func news(_ token: String, _ server: TestServer) async throws -> [String] {
        try await server.send(.GET, "/notifications", token: token).json["items"].array.compactMap { $0["kind"].string }.filter { $0 == "parcel_update" }
    }

    @Test("Shared with Bob: he sees it live in his list without the notes, may not rename it, chooses his own alerts, and may leave",
          arguments: TestDatabase.available)
    func shareWithAccount(db: TestDatabase) async throws {
        try await ParcelPollingTests.withCarriers(db) { server, fake in
            let cast = try await server.cast()
            let number = "00340434292135100124"
            let added = try await server.send(.POST, "/parcels", json: ["number": number, "name": "Shoes", "notes": "gift for Bob"], token: cast.customer.access)
            let id = try #require(added.json["id"].string)
            #expect(added.json["relation"].string == "owner")

            // Nobody by that address, oneself, and a stranger's attempt.
            let nobody = try await server.send(.POST, "/parcels/\(id)/shares", json: ["email": "nobody@example.com"], token: cast.customer.access)
            #expect(nobody.status == .unprocessableEntity && nobody.json["error"]["fields"]["email"].string == "no_account", "\(nobody)")
            #expect(try await server.send(.POST, "/parcels/\(id)/shares", json: ["email": "ada@example.com"], token: cast.customer.access).status == .unprocessableEntity)
            #expect(try await server.send(.POST, "/parcels/\(id)/shares", json: ["email": "ada@example.com"], token: cast.otherCustomer.access).status == .notFound)

            let shared = try await server.send(.POST, "/parcels/\(id)/shares", json: ["email": "Bob@Example.com "], token: cast.customer.access)
            #expect(shared.status == .ok && shared.json["sharedWith"][0]["name"].string?.isEmpty == false, "\(shared)")
            let bobID = try #require(shared.json["sharedWith"][0]["userId"].string)
            let bobInbox = try await server.send(.GET, "/notifications", token: cast.otherCustomer.access)
            #expect(bobInbox.json["items"].array.contains { $0["kind"].string == "parcel_shared" }, "\(bobInbox)")

            let list = try await server.send(.GET, "/parcels", token: cast.otherCustomer.access)
            let seen = try #require(list.json["items"].array.first { $0["id"].string == id }, "\(list)")
            #expect(seen["relation"].string == "shared" && seen["sharedBy"].exists && seen["notes"].exists == false && seen["name"].string == "Shoes")
            let single = try await server.send(.GET, "/parcels/\(id)", token: cast.otherCustomer.access)
            #expect(single.status == .ok && single.json["sharedWith"].exists == false && single.json["notes"].exists == false)
            #expect(try await server.send(.PATCH, "/parcels/\(id)", json: ["name": "Mine now"], token: cast.otherCustomer.access).status == .forbidden)
            #expect(try await server.send(.POST, "/parcels/\(id)/link", token: cast.otherCustomer.access).status == .forbidden)
            #expect(try await server.send(.DELETE, "/parcels/\(id)/shares/\(UUID().uuidString)", token: cast.otherCustomer.access).status == .forbidden)
            #expect(try await server.send(.GET, "/parcels/\(id)", token: cast.driver.access).status == .notFound)

            // Bob only wants important news; Ada every change, without mail.
            let bobAlerts = try await server.send(.PATCH, "/parcels/\(id)", json: ["alerts": "important"], token: cast.otherCustomer.access)
            #expect(bobAlerts.status == .ok && bobAlerts.json["alerts"].string == "important", "\(bobAlerts)")
            #expect(try await server.send(.GET, "/parcels/\(id)", token: cast.customer.access).json["alerts"].exists == false, "Bob's choice is his")
            let adaSettings = try await server.send(.PUT, "/me/parcel-alerts", json: ["alerts": "all", "mail": false, "push": true], token: cast.customer.access)
            #expect(adaSettings.json["mail"].bool == false)

            fake.setDHL(number, status: "transit", events: [("2026-11-20T18:40:00+01:00", "transit", "Processed in the parcel center", "Köln")])
            #expect(try await ParcelPollingTests.poll(server) == 1)
            #expect(try await Self.news(cast.customer.access, server).count == 1)
            #expect(try await Self.news(cast.otherCustomer.access, server).isEmpty, "in transit is not important")
            fake.setDHL(number, status: "delivered", events: [
                ("2026-11-20T18:40:00+01:00", "transit", "Processed in the parcel center", "Köln"),
                ("2026-11-21T11:02:00+01:00", "delivered", "Delivered", "Berlin"),
            ])
            server.clock.advance(minutes: 121)
            #expect(try await ParcelPollingTests.poll(server) == 1)
            #expect(try await Self.news(cast.customer.access, server).count == 2)
            #expect(try await Self.news(cast.otherCustomer.access, server).count == 1, "delivered is")
            #expect(try await Self.mails(to: "ada@example.com", server) == 0, "Ada turned mail off")
            #expect(try await Self.mails(to: "bob@example.com", server) == 1)

            // Bob leaves; Ada keeps it.
            #expect(try await server.send(.DELETE, "/parcels/\(id)/shares/\(bobID)", token: cast.otherCustomer.access).status == .noContent)
            #expect(try await server.send(.GET, "/parcels/\(id)", token: cast.otherCustomer.access).status == .notFound)
            #expect(try await server.send(.GET, "/parcels/\(id)", token: cast.customer.access).status == .ok)
            // Shared again, then removed by Ada: gone for both.
            _ = try await server.send(.POST, "/parcels/\(id)/shares", json: ["email": "bob@example.com"], token: cast.customer.access)
            #expect(try await server.send(.DELETE, "/parcels/\(id)", token: cast.otherCustomer.access).status == .noContent, "leaving through delete")
            #expect(try await server.send(.GET, "/parcels/\(id)", token: cast.customer.access).status == .ok)
            _ = try await server.send(.POST, "/parcels/\(id)/shares", json: ["email": "bob@example.com"], token: cast.customer.access)
            #expect(try await server.send(.DELETE, "/parcels/\(id)", token: cast.customer.access).status == .noContent)
            #expect(try await server.send(.GET, "/parcels", token: cast.otherCustomer.access).json["items"].array.isEmpty)
        }
    }

    @Test("A public link shows the number, carrier, status and events, never the notes; a new link ends the old one; withdrawn, 404",
          arguments: TestDatabase.available)
    func shareByLink(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let id = try #require(try await server.send(.POST, "/parcels", json: ["number": "RB123456785CH", "name": "Passport", "notes": "secret"],
                                                        token: cast.customer.access).json["id"].string)
            let linked = try await server.send(.POST, "/parcels/\(id)/link", token: cast.customer.access)
            let url = try #require(linked.json["shareUrl"].string, "\(linked)")
            let token = String(url.split(separator: "/").last!)
            let seen = try await server.send(.GET, "/shared-parcels/\(token)")
            #expect(seen.status == .ok && seen.json["number"].string == "RB123456785CH" && seen.json["carrier"].string == "swiss_post", "\(seen)")
            #expect(seen.json["notes"].exists == false && seen.text.contains("secret") == false)
            let page = try await TestBrowser(server).get("/p/\(token)")
            #expect(page.status == .ok && page.html.contains("RB123456785CH") && !page.html.contains("secret"), "\(page.status)")
            #expect(!page.html.contains("askCarrierNow") && !page.html.contains("/parcels/\(id)/"), "no actions on the public page")

            let renewed = try await server.send(.POST, "/parcels/\(id)/link", token: cast.customer.access)
            #expect(renewed.json["shareUrl"].string != url)
            #expect(try await server.send(.GET, "/shared-parcels/\(token)").status == .notFound)
            #expect(try await server.send(.DELETE, "/parcels/\(id)/link", token: cast.customer.access).json["shareUrl"].exists == false)
            let newToken = String(try #require(renewed.json["shareUrl"].string).split(separator: "/").last!)
            #expect(try await server.send(.GET, "/shared-parcels/\(newToken)").status == .notFound)
            #expect(try await server.send(.GET, "/shared-parcels/not-a-token").status == .notFound)
        }
    }

    @Test("The SDK and the CLI share a parcel and make its link", arguments: TestDatabase.available)
    func sdkAndCLI(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            _ = try await server.cast()
            try await server.serving { port in
                let cli = CLI(server: "http://127.0.0.1:\(port)", sessionFile: NSTemporaryDirectory() + "/wb-cli-\(UUID().uuidString).json")
                _ = try await cli.run(["login", "--email", "ada@example.com", "--password", TestServer.password])
                let added = try await cli.run(["parcel", "add", "RB123456785CH", "--json"])
                let id = try #require(added.json["id"].string, "\(added)")
                let shared = try await cli.run(["parcel", "share", id, "bob@example.com"])
                #expect(shared.status == 0 && shared.stdout.contains("Shared with"), "\(shared)")
                let link = try await cli.run(["parcel", "link", id])
                #expect(link.status == 0 && link.stdout.contains("/p/"), "\(link)")

                let bob = server.sdk(port: port)
                try await bob.signIn(email: "bob@example.com", password: TestServer.password)
                let list = try await bob.parcels()
                #expect(list.first?.relation == .shared && list.first?.number == "RB123456785CH")
                let token = String(try #require(link.stdout.split(separator: "/").last).trimmingCharacters(in: .whitespacesAndNewlines))
                #expect(try await bob.sharedParcel(token: token).carrier == "swiss_post")
                let settings = try await bob.setParcelAlertSettings(.important, mail: false, push: true)
                #expect(settings.alerts == .important && settings.mail == false)
            }
        }
    }
}
