import Fluent
import Foundation
import Testing
import Vapor
@testable import WaybillServer
import WaybillClient
import WaybillCore

@Suite("API keys: made once, kept as a hash, scoped, expiring, revocable, limited per key")
struct APIKeyTests {
    static func make(_ server: TestServer, token: String, scopes: [String], days: Int? = nil) async throws -> (id: String, key: String) {
        var body: [String: any Sendable] = ["name": "Shop backend", "scopes": scopes]
        if let days { body["expiresInDays"] = days }
        let reply = try await server.send(.POST, "/api-keys", json: body, token: token)
        try #require(reply.status == .created, "\(reply)")
        return (try #require(reply.json["id"].string), try #require(reply.json["key"].string))
    }

    @Test("A key acts as its maker within its scopes only; it is stored as a hash and its last use is shown",
          arguments: TestDatabase.available)
    func scopes(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let reader = try await Self.make(server, token: cast.customer.access, scopes: ["shipments:read"])
            #expect(reader.key.hasPrefix("wb_live_") && reader.key.count == 51)
            // Only the hash is kept.
            let stored = try #require(try await APIKeyRecord.find(.init(uuidString: reader.id)!, on: server.db))
            #expect(stored.tokenHash != reader.key && !stored.tokenHash.contains("wb_live_") && stored.hint == String(reader.key.prefix(12)))

            let id = try await server.placeOrder(cast.customer.access)
            let read = try await server.send(.GET, "/orders/\(id)", token: reader.key)
            #expect(read.status == .ok && read.json["id"].string == id, "\(read)")
            #expect(try await server.send(.GET, "/me", token: reader.key).json["email"].string == "ada@example.com")
            // Outside its scopes: 403, whatever the account itself may do.
            let write = try await server.send(.POST, "/orders", json: TestServer.orderBody(payment: "cash", extra: [:]), token: reader.key)
            #expect(write.status == .forbidden && write.json["error"]["message"].string?.contains("scopes") == true, "\(write)")
            #expect(try await server.send(.GET, "/parcels", token: reader.key).status == .forbidden)
            // A key never makes keys, changes passwords or opens the live channel.
            #expect(try await server.send(.POST, "/api-keys", json: ["name": "x", "scopes": ["shipments:read"]], token: reader.key).status == .forbidden)
            #expect(try await server.send(.POST, "/me/password", json: ["currentPassword": TestServer.password, "newPassword": "another-long-password-1"],
                                          token: reader.key).status == .forbidden)
            #expect(try await server.send(.POST, "/live/ticket", json: [:], token: reader.key).status == .forbidden)
            // Someone else's order is still not there.
            let bobs = try await server.placeOrder(cast.otherCustomer.access)
            #expect(try await server.send(.GET, "/orders/\(bobs)", token: reader.key).status == .notFound)

            let writer = try await Self.make(server, token: cast.customer.access, scopes: ["shipments:read", "shipments:write", "webhooks"])
            let created = try await server.send(.POST, "/orders", json: TestServer.orderBody(payment: "cash", extra: [:]), token: writer.key)
            #expect(created.status == .created, "\(created)")
            #expect(try await server.send(.GET, "/webhook-endpoints", token: writer.key).status == .ok)

            let listed = try await server.send(.GET, "/api-keys", token: cast.customer.access)
            let row = try #require(listed.json["items"].array.first { $0["id"].string == reader.id })
            #expect(row["lastUsedAt"].exists && row["key"].exists == false && row["scopes"].array.compactMap(\.string) == ["shipments:read"])
            // Dispatch is for dispatchers' keys.
            let refused = try await server.send(.POST, "/api-keys", json: ["name": "x", "scopes": ["dispatch"]], token: cast.customer.access)
            #expect(refused.status == .forbidden)
            let managers = try await Self.make(server, token: cast.manager.access, scopes: ["dispatch", "shipments:read"])
            #expect(try await server.send(.GET, "/fleet", token: managers.key).status == .ok)
        }
    }

    @Test("A revoked or expired key stops at once; a wrong one is 401; each key has its own rate limit",
          arguments: TestDatabase.available)
    func lifecycle(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let key = try await Self.make(server, token: cast.customer.access, scopes: ["parcels:read"], days: 30)
            #expect(try await server.send(.GET, "/parcels", token: key.key).status == .ok)
            #expect(try await server.send(.GET, "/parcels", token: "wb_live_" + String(repeating: "A", count: 43)).status == .unauthorized)
            #expect(try await server.send(.GET, "/parcels", token: "wb_live_short").status == .unauthorized)
            // Its own limit: spent, this key waits while another goes on.
            let other = try await Self.make(server, token: cast.customer.access, scopes: ["parcels:read"])
            server.app.waybill.apiKeyLimiter.exhaustAll()  // only buckets in use: the other key has none yet
            let limited = try await server.send(.GET, "/parcels", token: key.key)
            #expect(limited.status == .tooManyRequests && limited.headers.first(name: "Retry-After") != nil, "\(limited)")
            #expect(try await server.send(.GET, "/parcels", token: other.key).status == .ok)

            server.clock.advance(by: 31 * 86_400)
            #expect(try await server.send(.GET, "/parcels", token: key.key).status == .unauthorized, "expired")
            #expect(try await server.send(.GET, "/parcels", token: other.key).status == .ok, "no expiry")
            #expect(try await server.send(.DELETE, "/api-keys/\(other.id)", token: cast.otherCustomer.access).status == .notFound)
            #expect(try await server.send(.DELETE, "/api-keys/\(other.id)", token: cast.customer.access).status == .noContent)
            #expect(try await server.send(.GET, "/parcels", token: other.key).status == .unauthorized, "revoked")
            let bad = try await server.send(.POST, "/api-keys", json: ["name": "", "scopes": ["teleport"], "expiresInDays": 9999], token: cast.customer.access)
            #expect(bad.status == .unprocessableEntity || bad.status == .badRequest, "\(bad)")
        }
    }

    @Test("The CLI makes, lists and revokes keys, and runs commands as a key; the SDK opens a session with one",
          arguments: TestDatabase.available)
    func sdkAndCLI(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let id = try await server.placeOrder(cast.customer.access)
            try await server.serving { port in
                let cli = CLI(server: "http://127.0.0.1:\(port)", sessionFile: NSTemporaryDirectory() + "/wb-cli-\(UUID().uuidString).json")
                _ = try await cli.run(["login", "--email", "ada@example.com", "--password", TestServer.password])
                let made = try await cli.run(["apikey", "create", "Shop backend", "--scope", "shipments:read", "--days", "90"])
                #expect(made.status == 0 && made.stdout.contains("Key (shown once): wb_live_"), "\(made)")
                let key = try #require(made.stdout.split(separator: " ").last.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) })
                let machine = CLI(server: cli.server, sessionFile: NSTemporaryDirectory() + "/wb-none-\(UUID().uuidString).json", apiKey: key)
                let shown = try await machine.run(["order", "show", id])
                #expect(shown.status == 0 && shown.stdout.contains(id), "\(shown)")
                let refused = try await machine.run(["apikey", "list"])
                #expect(refused.status != 0, "a key does not list keys: \(refused)")

                let sdk = WaybillSession(serverURL: TestServer.apiURL(port: port), apiKey: key)
                #expect(try await sdk.order(OrderID(uuidString: id)!).id == id)
                #expect(try await sdk.me().email == "ada@example.com")

                let listed = try await cli.run(["apikey", "list"])
                #expect(listed.stdout.contains("Shop backend") && listed.stdout.contains("shipments:read") && !listed.stdout.contains(key), "\(listed)")
                let keyID = try #require(listed.stdout.split(separator: " ").first.map(String.init))
                #expect(try await cli.run(["apikey", "revoke", keyID]).stdout.contains("Revoked."))
                #expect(try await machine.run(["order", "show", id]).status != 0, "revoked")
            }
        }
    }

    @Test("Every operation a scope names is in openapi.yaml and needs a token")
    func scopesNameRealOperations() throws {
        let spec = try String(contentsOfFile: #filePath.replacingOccurrences(of: "Tests/WaybillServerTests/APIKeyTests.swift", with: "openapi.yaml"), encoding: .utf8)
        for operation in Array(APIKeyPolicy.operations.keys) + Array(APIKeyPolicy.anyKey) {
            guard let at = spec.range(of: "operationId: \(operation)\n") else {
                Issue.record("\(operation) is not an operation of openapi.yaml")
                continue
            }
            // The operation's own lines, up to the next one: no `security: []` (public).
            let own = String(spec[at.upperBound...]).components(separatedBy: "operationId:").first ?? ""
            #expect(!own.contains("security: []"), "\(operation) is public: a key adds nothing")
        }
    }
}
