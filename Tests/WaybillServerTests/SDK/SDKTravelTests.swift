import Foundation
import Testing
import Vapor
import WaybillClient
import WaybillCore
@testable import WaybillServer

@Suite("The Swift SDK speaks travellers: areas, trips, requests, the code and the payout")
struct SDKTravelTests {
    @Test("Through the SDK a traveller posts a trip, a sender finds it, requests and pays, and the receiver's code completes it",
          arguments: TestDatabase.available)
    func travellerThroughSDK(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            try await server.serving { port in
                _ = try await server.cast()
                try await TravelTests.importAreas(server)
                let ada = server.sdk(port: port), bob = server.sdk(port: port)
                try await ada.signIn(email: "ada@example.com", password: TestServer.password)
                try await bob.signIn(email: "bob@example.com", password: TestServer.password)

                #expect(try await bob.searchAreas("genf", language: "fr").map(\.name) == ["Genève", "Genève"])
                #expect(try await bob.area("CH-VD").children.map(\.id) == ["CH-M5586"])
                #expect(try await ada.becomeTraveller().heldCapabilities.contains(.traveller))
                // Payouts first: the onboarding link (the sandbox's test page here), then active.
                #expect(try await ada.payoutAccount().status == .none)
                let link = try await ada.startPayoutOnboarding()
                // The test page is its owner's, signed in to the web app, with the page's form token.
                let browser = TestBrowser(server)
                _ = try await browser.signIn("ada@example.com")
                let page = link.path + "?" + (link.query ?? "")
                #expect(try await browser.post(link.path + "/complete?" + (link.query ?? ""), [:], from: page).status == .seeOther)
                #expect(try await ada.payoutAccount().status == .active)
                let trip = try await ada.postTrip(TripDraft(from: AreaID("CH-M5586"), to: AreaID("CH-M261"), date: TravelTests.date(inDays: 3),
                                                              earliest: "07:00", latest: "09:00", timeZone: "Europe/Zurich",
                                                              capacityGrams: 5000, capacityParcels: 2, categories: ["small_parcel"]))
                let found = try await bob.findTrips(from: "CH-VD", to: "CH", category: "small_parcel", grams: 1000)
                #expect(found.map(\.trip.id) == [trip.id] && found.first?.price.total.money == Money(2000, "CHF"))

                let tripID = try #require(TripID(uuidString: trip.id))
                var request = try await bob.sendRequest(TripRequestDraft(
                    trip: tripID, category: "small_parcel", grams: 1000, declaredValue: 5000, description: "A scarf",
                    receiver: Recipient(name: "Bea", email: "bea@example.com"), attestsAllowedContents: true, paymentMethod: .twint))
                let id = try #require(TripRequestID(uuidString: request.id))
                request = try await bob.setRequestPhoto(id, photo: Data(SampleImages.photoJPEG))
                #expect(request.hasPhoto && request.status == .requested)
                #expect(try await ada.tripRequests(received: true).map(\.id) == [request.id])
                request = try await ada.acceptRequest(id)
                #expect(request.status == .awaitingPayment)
                let url = try #require(try await bob.tripRequest(id).shipment?.paymentUrl)
                try await TripRequestTests.pay(server, url: url)
                #expect(try await ada.pickUpRequest(id).status == .pickedUp)
                _ = try await server.deliverMail()
                let code = try #require(server.mailer.lastCode(to: "bea@example.com"))
                let malformed: Result<TravelRequest, WaybillClient.WaybillError>
                do throws(WaybillClient.WaybillError) { malformed = .success(try await ada.deliverRequest(id, code: "12345")) } catch { malformed = .failure(error) }
                guard case .failure(.server(let problem)) = malformed else { Issue.record("a malformed code was accepted"); return }
                #expect(problem.status == 422 && problem.fields["code"] == "invalid_format")
                #expect(try await ada.deliverRequest(id, code: code).status == .delivered)
                #expect(try await bob.tripRequests().first?.status == .delivered)
            }
        }
    }
}
