import Fluent
import Foundation
import SQLKit
import SQLiteNIO
import Vapor

/// `waybill backup FILE`: a consistent copy of the SQLite database while Waybill runs (docs/deploy.md).
///
/// `VACUUM INTO` reads the database inside one read transaction, so writers (WAL mode) go on and the
/// copy is one point in time. It is written beside its destination under a temporary name, checked
/// with `PRAGMA integrity_check` on a connection of its own, then renamed: a file at the destination
/// is always a whole, checked backup. PostgreSQL has `pg_dump` for this.
struct BackupCommand: AsyncCommand {
    struct Signature: CommandSignature {
        @Argument(name: "file", help: "Where to write the copy (a new file).")
        var file: String
        init() {}
    }

    var help: String { "Write a consistent, checked copy of the SQLite database while Waybill runs (PostgreSQL: use pg_dump)." }

    func run(using context: CommandContext, signature: Signature) async throws {
        let started = Date()
        let made = try await Self.backup(context.application, to: URL(fileURLWithPath: signature.file))
        context.console.info("Backed up to \(made.path): \(made.bytes / 1024) KiB, \(made.accounts) accounts, \(made.shipments) shipments, "
            + "integrity checked, in \(String(format: "%.1f", Date().timeIntervalSince(started))) s.")
    }

    struct Made: Sendable {
        var path: String
        var bytes: Int
        var accounts: Int
        var shipments: Int
    }

    static func backup(_ app: Application, to file: URL) async throws -> Made {
        guard case .sqlite = app.waybill.config.database else {
            throw CommandError("waybill backup copies a SQLite database; for PostgreSQL use pg_dump (docs/deploy.md).")
        }
        let destination = file.standardizedFileURL
        let files = FileManager.default
        guard !files.fileExists(atPath: destination.path) else {
            throw CommandError("\(destination.path) exists already; a backup never overwrites a file.")
        }
        let folder = destination.deletingLastPathComponent()
        var isDirectory: ObjCBool = false
        guard files.fileExists(atPath: folder.path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw CommandError("The folder \(folder.path) does not exist.")
        }
        let partial = folder.appendingPathComponent(".\(destination.lastPathComponent).partial-\(UUID().uuidString.prefix(8))")
        defer { try? files.removeItem(at: partial) }
        guard let sql = app.db.tracedSQL else { throw CommandError("The database does not speak SQL.") }
        try await sql.raw("VACUUM INTO \(bind: partial.path)").run()

        let copy = try await SQLiteConnection.open(storage: .file(path: partial.path), threadPool: app.threadPool,
                                                   logger: app.logger, on: app.eventLoopGroup.any()).get()
        let verdict: [String], accounts: Int, shipments: Int
        do {
            verdict = try await copy.query("PRAGMA integrity_check").get().compactMap { $0.column("integrity_check")?.string }
            accounts = try await copy.query("SELECT count(*) AS n FROM users").get().first?.column("n")?.integer ?? 0
            shipments = try await copy.query("SELECT count(*) AS n FROM orders").get().first?.column("n")?.integer ?? 0
            try await copy.close().get()
        } catch {
            try? await copy.close().get()
            throw error
        }
        guard verdict == ["ok"] else {
            throw CommandError("The copy failed SQLite's integrity check (\(verdict.prefix(3).joined(separator: "; "))); nothing was written.")
        }
        try files.moveItem(at: partial, to: destination)
        let bytes = (try? files.attributesOfItem(atPath: destination.path)[.size] as? Int) ?? 0
        return Made(path: destination.path, bytes: bytes, accounts: accounts, shipments: shipments)
    }
}
