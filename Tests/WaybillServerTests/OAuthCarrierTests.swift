import Fluent
import Foundation
import Testing
import Vapor
@testable import WaybillServer
import WaybillCore

/// UPS, FedEx, USPS and GLS against a local server speaking their documented APIs: OAuth client
/// credentials (the token asked once and reused, asked again after a 401), their answer shapes,
/// unknown numbers, partial answers and 429.
@Suite("Following parcels at UPS, FedEx, USPS and GLS: OAuth tokens cached, answers mapped, unknown numbers and 429")
struct OAuthCarrierTests {
    typealias Poll = ParcelPollingTests

    static func add(_ server: TestServer, _ token: String, _ number: String, carrier: String? = nil) async throws -> String {
        var body = ["number": number]
        body["carrier"] = carrier
        let added = try await server.send(.POST, "/parcels", json: body, token: token)
        return try #require(added.json["id"].string, "\(added)")
    }

    @Test("UPS: times without a zone are kept as written and marked unknown; the token is asked once and again after a 401",
          arguments: TestDatabase.available)
    func ups(db: TestDatabase) async throws {
        try await Poll.withCarriers(db, oauth: true) { server, fake in
            let cast = try await server.cast()
            let number = "1Z879E930346834440"
            fake.setOAuth("ups", number, [
                "trackingNumber": number,
                "currentStatus": ["type": "I", "code": "OT", "description": "Out For Delivery Today"],
                "deliveryDate": [["type": "SDD", "date": "20261121"]],
                "activity": [
                    ["location": ["address": ["city": "Zürich", "countryCode": "CH"]], "status": ["type": "I", "code": "OT", "description": "Out For Delivery Today"],
                     "date": "20261121", "time": "074500"],
                    ["location": ["address": ["city": "Köln", "countryCode": "DE"]], "status": ["type": "I", "code": "AR", "description": "Arrived at Facility"],
                     "date": "20261120", "time": "221000"],
                    ["location": ["address": ["countryCode": "DE"]], "status": ["type": "M", "code": "MP", "description": "Shipper created a label"],
                     "date": "20261119", "time": "101500"],
                ],
            ])
            let id = try await Self.add(server, cast.customer.access, number)
            #expect(try await Poll.poll(server) == 1)
            let parcel = try await server.send(.GET, "/parcels/\(id)", token: cast.customer.access)
            #expect(parcel.json["carrier"].string == "ups" && parcel.json["status"].string == "out_for_delivery", "\(parcel)")
            #expect(parcel.json["events"].array.count == 3)
            #expect(parcel.json["events"][0]["code"].string == "I/OT" && parcel.json["events"][0]["timeZoneKnown"].bool == false)
            #expect(parcel.json["events"][0]["localTime"].string == "20261121 074500" && parcel.json["events"][0]["location"].string == "Zürich, CH")
            #expect(parcel.json["events"][2]["status"].string == "pending" && parcel.json["estimatedDelivery"].exists)
            #expect(fake.tokenRequests("ups") == 1)

            // The cached token serves the next poll; once the carrier forgets it, one new token.
            server.clock.advance(minutes: 40)
            #expect(try await Poll.poll(server) == 1)
            #expect(fake.tokenRequests("ups") == 1, "the token is reused")
            fake.revokeTokens()
            server.clock.advance(minutes: 40)
            #expect(try await Poll.poll(server) == 1)
            #expect(fake.tokenRequests("ups") == 2, "a 401 asks for a new token once")
            #expect(fake.requests.allSatisfy { !$0.contains(FakeCarriers.clientSecret) }, "the secret never travels in a URL")

            // UPS does not know this one: 404, the parcel stays pending.
            let unknown = try await Self.add(server, cast.customer.access, "1Z8V92A70367203024")
            #expect(try await Poll.poll(server) == 1)
            #expect(try await server.send(.GET, "/parcels/\(unknown)", token: cast.customer.access).json["status"].string == "pending")
        }
    }

    @Test("FedEx: several numbers in one call, one of them unknown beside the others; delivered with the receiver's name",
          arguments: TestDatabase.available)
    func fedex(db: TestDatabase) async throws {
        try await Poll.withCarriers(db, oauth: true) { server, fake in
            let cast = try await server.cast()
            fake.setOAuth("fedex", "986578788855", [
                "trackingNumberInfo": ["trackingNumber": "986578788855"],
                "latestStatusDetail": ["code": "DL", "derivedCode": "DL", "description": "Delivered"],
                "deliveryDetails": ["receivedByName": "M.DUPONT"],
                "scanEvents": [
                    ["date": "2026-11-21T10:02:00-05:00", "eventType": "DL", "derivedStatusCode": "DL", "eventDescription": "Delivered",
                     "scanLocation": ["city": "MEMPHIS", "stateOrProvinceCode": "TN", "countryCode": "US"]],
                    ["date": "2026-11-20T08:00:00-05:00", "eventType": "DE", "derivedStatusCode": "DE", "eventDescription": "Delivery exception",
                     "exceptionCode": "08", "exceptionDescription": "Customer not available or business closed",
                     "scanLocation": ["city": "MEMPHIS", "countryCode": "US"]],
                    ["date": "2026-11-19T18:00:00-05:00", "eventType": "PU", "derivedStatusCode": "PU", "eventDescription": "Picked up"],
                ],
            ])
            let delivered = try await Self.add(server, cast.customer.access, "986578788855")
            let unknown = try await Self.add(server, cast.customer.access, "799531274483")
            #expect(try await Poll.poll(server) == 2)
            #expect(fake.requests.filter { $0.contains("/track/v1/trackingnumbers") }.count == 1, "one call for both")
            let parcel = try await server.send(.GET, "/parcels/\(delivered)", token: cast.customer.access)
            #expect(parcel.json["status"].string == "delivered" && parcel.json["events"].array.count == 3, "\(parcel)")
            #expect(parcel.json["events"][1]["status"].string == "delivery_failed")
            #expect(parcel.json["events"][1]["description"].string == "Delivery exception — Customer not available or business closed")
            #expect(parcel.json["events"][0]["timeZoneKnown"].bool == true)
            #expect(try await server.send(.GET, "/parcels/\(unknown)", token: cast.customer.access).json["status"].string == "pending")
        }
    }

    @Test("USPS: the event's UTC time is used, its code mapped; 429 pauses USPS in the database",
          arguments: TestDatabase.available)
    func usps(db: TestDatabase) async throws {
        try await Poll.withCarriers(db, oauth: true) { server, fake in
            let cast = try await server.cast()
            let number = "9400111206206406260787"
            fake.setOAuth("usps", number, [
                "trackingNumber": number, "statusCategory": "In Transit", "expectedDeliveryDate": "2026-11-24",
                "trackingEvents": [
                    ["eventType": "Arrived at USPS Regional Facility", "eventTimestamp": "2026-11-21T06:10:00", "GMTTimestamp": "2026-11-21T11:10:00Z",
                     "GMTOffset": "-05:00", "eventCity": "CHICAGO IL DISTRIBUTION CENTER", "eventState": "IL", "eventZIP": "60666", "eventCountry": "", "eventCode": "10"],
                    ["eventType": "USPS in possession of item", "eventTimestamp": "2026-11-20T15:00:00", "GMTTimestamp": "2026-11-20T20:00:00Z",
                     "GMTOffset": "-05:00", "eventCity": "NEW YORK", "eventState": "NY", "eventCode": "03"],
                ],
            ])
            let id = try await Self.add(server, cast.customer.access, number)
            #expect(try await Poll.poll(server) == 1)
            let parcel = try await server.send(.GET, "/parcels/\(id)", token: cast.customer.access)
            #expect(parcel.json["status"].string == "in_transit" && parcel.json["events"].array.count == 2, "\(parcel)")
            #expect(parcel.json["events"][0]["localTime"].string == "2026-11-21T06:10:00" && parcel.json["events"][0]["timeZoneKnown"].bool == true)
            #expect(parcel.json["events"][0]["at"].string?.hasPrefix("2026-11-21T11:10:00") == true, "\(parcel.json["events"][0])")

            server.clock.advance(minutes: 121)
            fake.rateLimitNextRequest()
            #expect(try await Poll.poll(server) == 0)
            let budget = try await server.db.query(CarrierBudgetRow.self).filter(\.$id == "usps").first()
            #expect(budget?.blockedUntil != nil)
        }
    }

    @Test("GLS: ten numbers a call, the unknown one left out of the answer; a parcel-shop delivery counts as delivered",
          arguments: TestDatabase.available)
    func gls(db: TestDatabase) async throws {
        try await Poll.withCarriers(db, oauth: true) { server, fake in
            let cast = try await server.cast()
            fake.setOAuth("gls", "ZK8X3F4P", [
                "unitno": "ZK8X3F4P", "status": "DELIVEREDPS",
                "events": [
                    ["code": "DELIVEREDPS", "description": "The parcel has been delivered at the ParcelShop", "city": "Lausanne", "country": "CH",
                     "eventDateTime": "2026-11-21T16:20:00+01:00"],
                    ["code": "INWAREHOUSE", "description": "The parcel has reached the parcel center", "city": "Oftringen", "country": "CH",
                     "eventDateTime": "2026-11-20T05:00:00+01:00"],
                ],
            ])
            let known = try await Self.add(server, cast.customer.access, "ZK8X3F4P", carrier: "gls")
            let unknown = try await Self.add(server, cast.customer.access, "ZZ000000", carrier: "gls")
            #expect(try await Poll.poll(server) == 2)
            #expect(fake.requests.filter { $0.contains("/tracking/simple/trackids/") }.count == 1)
            let parcel = try await server.send(.GET, "/parcels/\(known)", token: cast.customer.access)
            #expect(parcel.json["status"].string == "delivered" && parcel.json["events"][0]["location"].string == "Lausanne, CH", "\(parcel)")
            #expect(try await server.send(.GET, "/parcels/\(unknown)", token: cast.customer.access).json["status"].string == "pending")
        }
    }

    @Test("A wrong client secret: no token, and the tracking API is never asked")
    func wrongSecret() async throws {
        try await Poll.withCarriers(.sqlite) { server, fake in
            let bad = CarrierCredentials(clientID: FakeCarriers.clientID, clientSecret: "wrong", base: fake.baseURL)
            let app = server.app
            let tracker = UPSTracker(credentials: bad, client: { app.client })
            await #expect(throws: CarrierTrackingError.unavailable("token refused (401)")) { try await tracker.track(["1Z879E930346834440"]) }
            #expect(fake.requests.allSatisfy { !$0.contains("/api/track/") })
        }
    }
}
