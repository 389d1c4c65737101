import Foundation
import Testing
import Vapor
@testable import WaybillServer

@Suite("waybill backup: a consistent copy of a running SQLite database")
struct BackupTests {
    @Test("A backup taken while orders are being placed opens as a working Waybill with every order committed before it")
    func backupWhileWriting() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("waybill-backup-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("copy.sqlite")
        var before: [String] = []
        try await TestServer.run(.sqlite) { server in
            let cast = try await server.cast()
            for _ in 0..<5 { before.append(try await server.placeOrder(cast.customer.access)) }
            // Orders keep coming while the copy is taken: the server is not stopped for a backup.
            let writing = Task {
                var placed = 0
                for _ in 0..<20 { if (try? await server.placeOrder(cast.customer.access)) != nil { placed += 1 } }
                return placed
            }
            let made = try await BackupCommand.backup(server.app, to: file)
            #expect(await writing.value == 20, "writers were never blocked into failing")
            #expect(made.accounts == 5 && made.shipments >= 5 && made.shipments <= 25, "\(made)")
            #expect(FileManager.default.fileExists(atPath: file.path))
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["copy.sqlite"], "no partial file left")

            // A second backup never overwrites the first.
            await #expect(throws: WaybillServer.CommandError.self) { try await BackupCommand.backup(server.app, to: file) }
            await #expect(throws: WaybillServer.CommandError.self) {
                try await BackupCommand.backup(server.app, to: folder.appendingPathComponent("missing/copy.sqlite"))
            }
        }
        // The copy is a database Waybill starts on, with the customer and the orders of before.
        try await TestServer.run(.sqlite, sqliteFile: file) { restored in
            let ada = try await restored.login("ada@example.com")
            for id in before {
                let order = try await restored.send(.GET, "/orders/\(id)", token: ada.access)
                #expect(order.status == .ok && order.json["status"].string == "pending", "\(order)")
            }
        }
    }

    @Test("On PostgreSQL the command says to use pg_dump")
    func postgresIsPgDump() async throws {
        guard TestDatabase.available.contains(.postgres) else { return }
        try await TestServer.run(.postgres) { server in
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("waybill-\(UUID().uuidString).sqlite")
            do {
                _ = try await BackupCommand.backup(server.app, to: file)
                Issue.record("a PostgreSQL database was 'backed up'")
            } catch let error as WaybillServer.CommandError {
                #expect(error.description.contains("pg_dump"))
            }
            #expect(!FileManager.default.fileExists(atPath: file.path))
        }
    }
}
