import Fluent
import Foundation
import Testing
import Vapor
@testable import WaybillServer
import WaybillCore

@Suite("The travel pages: a traveller posts, a sender finds and requests, pays, and the code completes it")
struct TravelWebTests {
    @Test("Through the web app: become a traveller, post a trip, find it, request, accept, pay in the sandbox, pick up, deliver with the code",
          arguments: TestDatabase.available)
    func journey(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            _ = try await server.cast()
            try await TravelTests.importAreas(server)
            let ada = TestBrowser(server), bob = TestBrowser(server)
            _ = try await ada.signIn("ada@example.com")
            _ = try await bob.signIn("bob@example.com")

            let hub = try await ada.get("/travel")
            #expect(hub.status == .ok && hub.html.contains("Carry parcels on your trips"))
            let became = try await ada.post("/travel/become", ["acceptTerms": "on"], from: "/travel")
            #expect(became.location == "/travel/trips/new", "\(became.status)")
            // Payouts: the hub offers the setup; the sandbox's test page stands in for Stripe's.
            let setup = try await ada.get("/travel")
            #expect(setup.html.contains("data-payout-status=\"none\"") && setup.html.contains("Set up payouts"))
            let toStripe = try await ada.post("/travel/payouts", [:], from: "/travel")
            let onboarding = try #require(toStripe.location, "\(toStripe.status) \(toStripe.html.prefix(800))")
            #expect(onboarding.hasPrefix("http://localhost:8080/sandbox/connect/acct_sandbox_"), "\(onboarding)")
            let parts = String(onboarding.dropFirst("http://localhost:8080".count)).components(separatedBy: "?")
            #expect(try await ada.get(parts[0] + "?" + parts[1]).html.contains("Complete the setup (test)"))
            let completed = try await ada.post(parts[0] + "/complete?" + parts[1], [:], from: parts[0] + "?" + parts[1])
            #expect(completed.location == "/travel/payouts/return", "\(completed.status)")
            let back = try await ada.get("/travel/payouts/return")
            #expect(back.location == "/travel?payouts=1")
            #expect(try await ada.get("/travel?payouts=1").html.contains("data-payout-status=\"active\""))
            // Areas typed by name, in any language: "Lausanne" and the German "Zürich" list entry.
            let posted = try await ada.post("/travel/trips/new", [
                "from": "lausanne", "to": "Zürich (municipality, Zürich)", "date": TravelTests.date(inDays: 3), "earliest": "07:00",
                "latest": "09:00", "timeZone": "Europe/Zurich", "kg": "5", "parcels": "2", "cat_small_parcel": "on"], from: "/travel/trips/new")
            let tripPath = try #require(posted.location, "\(posted.status) \(posted.html.prefix(2000))")
            #expect(tripPath.hasPrefix("/travel/trips/"))
            let refused = try await ada.post("/travel/trips/new", ["from": "nowhere-at-all", "to": "", "kg": "x"], from: "/travel/trips/new")
            #expect(refused.status == .unprocessableEntity)

            // Bob finds it from Vaud to Zürich, with the price.
            let found = try await bob.get("/travel/find?from=Waadt&to=CH-ZH&category=small_parcel&kg=1.8")
            #expect(found.html.contains(tripPath) && found.html.contains("CHF 23.00"), "\(found.html.suffix(1500))")
            let tripPage = try await bob.get(tripPath)
            #expect(tripPage.html.contains("Ask to send a parcel on this trip") && tripPage.html.contains("Weapons"))
            let noAttest = try await bob.post(tripPath + "/requests", [
                "category": "small_parcel", "kg": "1.8", "description": "Two books", "receiverName": "Bea Beispiel",
                "receiverEmail": "bea@example.com", "paymentMethod": "twint"], from: tripPath)
            #expect(noAttest.status == .unprocessableEntity)
            let requested = try await bob.post(tripPath + "/requests", [
                "category": "small_parcel", "kg": "1.8", "description": "Two books", "receiverName": "Bea Beispiel",
                "receiverEmail": "bea@example.com", "paymentMethod": "twint", "attest": "on"], from: tripPath)
            let requestPath = try #require(requested.location, "\(requested.status) \(requested.html.prefix(1500))")

            // Ada accepts from her trip's page; Bob pays on the sandbox page.
            #expect(try await ada.get(tripPath).html.contains(requestPath))
            let accepted = try await ada.post(requestPath + "/accept", [:], from: requestPath)
            #expect(accepted.location == requestPath)
            let toPay = try await bob.get(requestPath)
            #expect(toPay.html.contains("Accepted, awaiting payment") && toPay.html.contains("/sandbox/checkout/"))
            let r = try #require(try await TripRequestRecord.query(on: server.db).first())
            let order = try #require(try await Order.find(r.shipmentID!, on: server.db))
            try await TripRequestTests.pay(server, url: try #require(order.checkoutURL))
            #expect(try await bob.get(requestPath).html.contains("Paid, waiting for pickup"))

            // Ada picks up and hands over against the receiver's code; the pickup page offers her to
            // share her position (no duty: travellers have none).
            _ = try await ada.post(requestPath + "/pick_up", [:], from: requestPath)
            let carrying = try await ada.get(requestPath)
            #expect(carrying.html.contains("data-share-position") && carrying.html.contains("data-no-duty"))
            _ = try await server.deliverMail()
            let code = try #require(server.mailer.lastCode(to: "bea@example.com"))
            // Bea, the receiver, opens an account: her app shows the code while the parcel travels.
            try await server.registerCustomer("bea@example.com")
            let bea = TestBrowser(server)
            _ = try await bea.signIn("bea@example.com")
            let incoming = try await bea.get("/orders/\(order.id!.uuidString)")
            #expect(incoming.html.contains("data-recipient-code>\(code)<"), "\(incoming.status) \(incoming.html.prefix(600))")
            #expect(try await bob.get("/orders/\(order.id!.uuidString)").html.contains("data-recipient-code") == false)
            let wrong = try await ada.post(requestPath + "/deliver", ["code": code == "000000" ? "111111" : "000000"], from: requestPath)
            #expect(wrong.status == .unprocessableEntity && wrong.html.contains("alert"))
            let delivered = try await ada.post(requestPath + "/deliver", ["code": code], from: requestPath)
            #expect(delivered.location == requestPath)
            #expect(try await bob.get(requestPath).html.contains(">Delivered<"))
            // French, too.
            _ = try await bob.get("/lang/fr?back=/travel")
            #expect(try await bob.get("/travel").html.contains("Trouver un voyageur"))
        }
    }
}
