import Foundation
import Testing
import Vapor
@testable import WaybillServer
import WaybillClient
import WaybillCore

@Suite("Carrier lookups through the API: no sign-in, limited per address")
struct CarrierLookupTests {
    @Test("A number gets its carriers, best first; pasted text gets its numbers; nonsense gets nothing; too many lookups are slowed down",
          arguments: [TestDatabase.sqlite])
    func lookups(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let dhl = try await server.send(.GET, "/carriers/detect?number=0034%200434%202921%203510%200124")
            #expect(dhl.status == .ok, "\(dhl)")
            #expect(dhl.json["items"][0]["carrier"].string == "dhl" && dhl.json["items"][0]["format"].string == "dhl_paket_sscc")
            #expect(dhl.json["items"][0]["reason"].string == "check_digit_valid" && dhl.json["items"][0]["number"].string == "00340434292135100124")
            let swiss = try await server.send(.GET, "/carriers/detect?number=RB123456785CH")
            #expect(swiss.json["items"][0]["carrier"].string == "swiss_post" && swiss.json["items"][0]["country"].string == "CH", "\(swiss)")
            #expect(try await server.send(.GET, "/carriers/detect?number=hello").json["items"].array.isEmpty)
            #expect(try await server.send(.GET, "/carriers/detect?number=").status == .badRequest)
            #expect(try await server.send(.GET, "/carriers/detect?number=" + String(repeating: "1", count: 101)).status == .badRequest)

            let pasted = try await server.send(.POST, "/carriers/find-numbers", json: [
                "text": "Order #100234567, call +41 79 123 45 67. UPS: 1Z 999 AA1 01 2345 6784 and RB123456785CH."])
            #expect(pasted.json["items"].array.compactMap { $0["number"].string } == ["1Z999AA10123456784", "RB123456785CH"], "\(pasted)")
            let long = try await server.send(.POST, "/carriers/find-numbers", json: ["text": String(repeating: "x", count: 20_001)])
            #expect(long.status == .unprocessableEntity || long.status == .badRequest, "\(long)")
            // The audit's text (security audit 2, finding 2): 20,000 characters that cost minutes before;
            // now no format admits it (the work bound itself is counted in CarrierDetectionTests).
            let audit = try await server.send(.POST, "/carriers/find-numbers", json: ["text": String(repeating: "Q 1 ", count: 5_000)])
            #expect(audit.status == .ok && audit.json["items"].array.isEmpty, "\(audit)")

            // The SDK asks the same; the command-line client answers offline too.
            try await server.serving { port in
                let sdk = server.sdk(port: port)
                #expect(try await sdk.detectCarrier("LX123456785FR").map(\.format) == ["s10", "dhl_ecommerce"])
                #expect(try await sdk.findTrackingNumbers(in: "DHL 00340434292135100124, thanks").map(\.carrier) == ["dhl"])
                let cli = CLI(server: "http://127.0.0.1:\(port)", sessionFile: NSTemporaryDirectory() + "/wb-cli-\(UUID().uuidString).json")
                let online = try await cli.run(["parcel", "detect", "RB123456785GB", "--json"])
                #expect(online.json[0]["carrier"].string == "royal_mail", "\(online)")
                let offline = try await CLI(server: "http://127.0.0.1:9", sessionFile: "/nonexistent/s.json").run(["parcel", "detect", "--offline", "1Z999AA10123456784"])
                #expect(offline.status == 0 && offline.stdout.contains("UPS"), "\(offline)")

                // Following parcels through the SDK and the command line.
                _ = try await server.cast()
                try await sdk.signIn(email: "ada@example.com", password: TestServer.password)
                let added = try await sdk.addParcel(ParcelDraft(number: "RB123456785CH", name: "Books"))
                #expect(added.carrier == "swiss_post" && added.pinned == false && added.status == .pending)
                let parcelID = try #require(ParcelID(uuidString: added.id))
                #expect(try await sdk.updateParcel(parcelID, carrier: "la_poste").pinned)
                #expect(try await sdk.parcels().map(\.id) == [added.id])
                _ = try await cli.run(["login", "--email", "bob@example.com", "--password", TestServer.password])
                let viaCLI = try await cli.run(["parcel", "add", "1Z999AA10123456784", "--name", "Lamp", "--json"])
                #expect(viaCLI.json["carrier"].string == "ups", "\(viaCLI)")
                #expect(try await cli.run(["parcel", "list"]).stdout.contains("Lamp"))
                try await sdk.removeParcel(parcelID)
                #expect(try await sdk.parcels().isEmpty)
            }

            // Sixty a minute per address: the rest wait. The budget is spent here at once (not by
            // racing the clock, which a loaded machine loses).
            let limiter = server.app.waybill.carrierLookupLimiter
            limiter.exhaustAll()
            let limited = try await server.send(.GET, "/carriers/detect?number=1Z999AA10123456784")
            #expect(limited.status == .tooManyRequests && limited.headers.first(name: .retryAfter) != nil, "\(limited)")
        }
    }
}

@Suite("Following parcels of other carriers: added by number with the carrier suggested, corrected, named, removed; only their owner (and the people it is shared with) see them")
struct ParcelTests {
    @Test("A person adds a DHL and a Swiss Post number, corrects a suggestion, names one and removes one; others get 404",
          arguments: TestDatabase.available)
    func parcels(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let ada = cast.customer
            let dhl = try await server.send(.POST, "/parcels", json: ["number": "0034 0434 2921 3510 0124", "name": "Shoes"], token: ada.access)
            #expect(dhl.status == .created, "\(dhl)")
            #expect(dhl.json["carrier"].string == "dhl" && dhl.json["format"].string == "dhl_paket_sscc" && dhl.json["pinned"].bool == false)
            #expect(dhl.json["status"].string == "pending" && dhl.json["trackingUrl"].string?.contains("00340434292135100124") == true)
            #expect(dhl.json["candidates"].array.map { $0["format"].string } == ["dhl_paket_sscc", "usps_20"])
            let swiss = try await server.send(.POST, "/parcels", json: ["number": "rb123456785ch"], token: ada.access)
            #expect(swiss.json["carrier"].string == "swiss_post" && swiss.json["number"].string == "RB123456785CH", "\(swiss)")
            // The same number twice, nonsense, an unknown carrier: clear errors, nothing written.
            let twice = try await server.send(.POST, "/parcels", json: ["number": "RB 123 456 785 CH"], token: ada.access)
            #expect(twice.status == .conflict && twice.json["error"]["fields"]["number"].string == "duplicate", "\(twice)")
            let unknown = try await server.send(.POST, "/parcels", json: ["number": "HELLOWORLD"], token: ada.access)
            #expect(unknown.status == .unprocessableEntity && unknown.json["error"]["fields"]["carrier"].string == "not_recognised", "\(unknown)")
            let badCarrier = try await server.send(.POST, "/parcels", json: ["number": "HELLOWORLD", "carrier": "pigeon"], token: ada.access)
            #expect(badCarrier.status == .unprocessableEntity && badCarrier.json["error"]["fields"]["carrier"].string == "unknown_carrier")
            #expect(try await server.send(.POST, "/parcels", json: ["number": "!!"], token: ada.access).status == .unprocessableEntity)
            // A number no format knows is followed once the person names the carrier.
            let chosen = try await server.send(.POST, "/parcels", json: ["number": "HELLOWORLD", "carrier": "la_poste"], token: ada.access)
            #expect(chosen.status == .created && chosen.json["pinned"].bool == true && chosen.json["carrierName"].string == "La Poste / Colissimo", "\(chosen)")

            // Correcting the suggestion pins it; a rename keeps the carrier.
            let id = try #require(dhl.json["id"].string)
            let corrected = try await server.send(.PATCH, "/parcels/\(id)", json: ["carrier": "usps"], token: ada.access)
            #expect(corrected.json["carrier"].string == "usps" && corrected.json["pinned"].bool == true && corrected.json["format"].string == "usps_20", "\(corrected)")
            let renamed = try await server.send(.PATCH, "/parcels/\(id)", json: ["name": "Boots", "notes": "For the winter"], token: ada.access)
            #expect(renamed.json["carrier"].string == "usps" && renamed.json["name"].string == "Boots" && renamed.json["notes"].string == "For the winter")
            let cleared = try await server.send(.PATCH, "/parcels/\(id)", json: ["notes": ""], token: ada.access)
            #expect(cleared.json["notes"].exists == false && cleared.json["name"].string == "Boots")

            let list = try await server.send(.GET, "/parcels", token: ada.access)
            #expect(list.json["items"].array.count == 3 && list.json["items"][0]["candidates"].exists == false)
            #expect(try await server.send(.GET, "/parcels?status=delivered", token: ada.access).json["items"].array.isEmpty)
            // Nobody else sees them, staff included.
            #expect(try await server.send(.GET, "/parcels/\(id)", token: cast.otherCustomer.access).status == .notFound)
            #expect(try await server.send(.GET, "/parcels/\(id)", token: cast.manager.access).status == .notFound)
            #expect(try await server.send(.GET, "/parcels", token: cast.otherCustomer.access).json["items"].array.isEmpty)
            #expect(try await server.send(.DELETE, "/parcels/\(id)", token: cast.otherCustomer.access).status == .notFound)
            #expect(try await server.send(.GET, "/parcels/not-an-id", token: ada.access).status == .notFound)
            #expect(try await server.send(.DELETE, "/parcels/\(id)", token: ada.access).status == .noContent)
            #expect(try await server.send(.GET, "/parcels/\(id)", token: ada.access).status == .notFound)
        }
    }
}
