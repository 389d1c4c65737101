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
            }

            // Sixty a minute per address: the rest wait.
            var limited: Reply?
            for _ in 0..<70 {
                let reply = try await server.send(.GET, "/carriers/detect?number=1Z999AA10123456784")
                if reply.status == .tooManyRequests { limited = reply; break }
            }
            #expect(limited?.headers.first(name: .retryAfter) != nil, "\(String(describing: limited))")
        }
    }
}
