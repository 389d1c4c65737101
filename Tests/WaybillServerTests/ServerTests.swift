import Foundation
import Testing
import Vapor
import VaporTesting
@testable import WaybillServer

@Suite("Server basics and configuration")
struct ServerTests {
    @Test("Health answers without authentication; the spec is served as written")
    func healthAndSpec() async throws {
        try await TestServer.run(.sqlite) { server in
            let health = try await server.app.testing().sendRequest(.GET, "/health")
            #expect(health.status == .ok)
            #expect(String(buffer: health.body).contains("ok"))

            let spec = try await server.send(.GET, "/openapi.yaml")
            #expect(spec.status == .ok)
            #expect(spec.headers.first(name: .contentType)?.contains("yaml") == true)
            let onDisk = try String(contentsOfFile: #filePath.replacingOccurrences(of: "Tests/WaybillServerTests/ServerTests.swift", with: "openapi.yaml"), encoding: .utf8)
            #expect(spec.text == onDisk)
        }
    }

    @Test("Configuration comes from the environment, with safe defaults and loud failures")
    func configuration() throws {
        let logger = Logger(label: "test")
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("wb-config-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: dir) }

        let defaults = try WaybillConfig.fromEnvironment(["STORAGE_PATH": dir], isProduction: false, logger: logger)
        #expect(defaults.database == .sqlite(path: "waybill.sqlite"))
        #expect(defaults.publicURL == "http://localhost:8080")
        #expect(defaults.smtp == nil)
        #expect(defaults.bcryptCost == 12)
        #expect(defaults.jwtSecret.count == 32)
        // The development key is made once and kept.
        let again = try WaybillConfig.fromEnvironment(["STORAGE_PATH": dir], isProduction: false, logger: logger)
        #expect(again.jwtSecret == defaults.jwtSecret)
        let attributes = try FileManager.default.attributesOfItem(atPath: dir + "/jwt-secret")
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)

        let custom = try WaybillConfig.fromEnvironment([
            "STORAGE_PATH": dir, "DATABASE_URL": "postgres://u:p@db:5432/waybill", "PUBLIC_URL": "https://go.example/",
            "JWT_SECRET": String(repeating: "k", count: 40), "SMTP_URL": "smtps://u:p@mail.example",
            "MAIL_FROM": "Courier <hello@courier.example>",
        ], isProduction: true, logger: logger)
        #expect(custom.database == .postgres(url: "postgres://u:p@db:5432/waybill"))
        #expect(custom.publicURL == "https://go.example")
        #expect(custom.mailFrom == MailAddress(name: "Courier", address: "hello@courier.example"))
        #expect(try WaybillConfig.fromEnvironment(["STORAGE_PATH": dir, "DATABASE_URL": "sqlite:///var/lib/waybill/db.sqlite"], isProduction: false, logger: logger).database == .sqlite(path: "/var/lib/waybill/db.sqlite"))
        #expect(try WaybillConfig.fromEnvironment(["STORAGE_PATH": dir, "DATABASE_URL": "sqlite://local.sqlite"], isProduction: false, logger: logger).database == .sqlite(path: "local.sqlite"))

        #expect(throws: ConfigurationError.self) { try WaybillConfig.fromEnvironment(["STORAGE_PATH": dir], isProduction: true, logger: logger) }
        #expect(throws: ConfigurationError.self) { try WaybillConfig.fromEnvironment(["STORAGE_PATH": dir, "JWT_SECRET": "short"], isProduction: false, logger: logger) }
        #expect(throws: ConfigurationError.self) { try WaybillConfig.fromEnvironment(["STORAGE_PATH": dir, "DATABASE_URL": "mysql://x"], isProduction: false, logger: logger) }
        #expect(throws: ConfigurationError.self) { try WaybillConfig.fromEnvironment(["STORAGE_PATH": dir, "BCRYPT_COST": "4"], isProduction: false, logger: logger) }

        // Carriers with OAuth: both id and secret, or neither; the default API base unless told.
        let carriers = try WaybillConfig.fromEnvironment(["STORAGE_PATH": dir, "UPS_CLIENT_ID": "id", "UPS_CLIENT_SECRET": "secret",
                                                          "GLS_CLIENT_ID": "g", "GLS_CLIENT_SECRET": "s", "GLS_API_BASE": "https://gls.test/"],
                                                         isProduction: false, logger: logger).carriers
        #expect(carriers.ups == CarrierCredentials(clientID: "id", clientSecret: "secret", base: "https://onlinetools.ups.com"))
        #expect(carriers.gls?.base == "https://gls.test" && carriers.fedex == nil && carriers.usps == nil)
        #expect(throws: ConfigurationError.self) { try WaybillConfig.fromEnvironment(["STORAGE_PATH": dir, "FEDEX_CLIENT_ID": "only-the-id"], isProduction: false, logger: logger) }
        #expect(throws: ConfigurationError.self) {
            try WaybillConfig.fromEnvironment(["STORAGE_PATH": dir, "USPS_CLIENT_ID": "i", "USPS_CLIENT_SECRET": "s", "USPS_API_BASE": "apis.usps.com"], isProduction: false, logger: logger)
        }
    }

    @Test("Concurrent registrations of one email create one account", arguments: TestDatabase.both)
    func concurrentRegistration(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let statuses = try await withThrowingTaskGroup(of: UInt.self) { group in
                for _ in 0..<6 {
                    group.addTask {
                        try await server.register("race@example.com").status.code
                    }
                }
                return try await group.reduce(into: [UInt]()) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == 201 }.count == 1)
            #expect(statuses.filter { $0 == 409 }.count == 5)
            #expect(try await User.query(on: server.db).count() == 1)
        }
    }
}
