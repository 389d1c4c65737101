import Fluent
import Foundation
import Vapor
import WaybillCore

/// Demo accounts for trying every role at once (`waybill serve --demo`). Passwords are random,
/// made on first start and kept in the data folder, then printed at each start.
enum DemoData {
    static let accounts: [(role: Role, email: String, firstName: String, lastName: String)] = [
        (.manager, "manager@demo.waybill.example", "Maria", "Manager"),
        (.driver, "driver@demo.waybill.example", "Dario", "Driver"),
        (.customer, "customer@demo.waybill.example", "Carla", "Customer"),
    ]

    static func seed(_ app: Application) async throws {
        let storage = app.waybill.config.storagePath
        try FileManager.default.createDirectory(atPath: storage, withIntermediateDirectories: true)
        let path = storage + "/demo-accounts.txt"
        var known = [String: String]()
        if let text = try? String(contentsOfFile: path, encoding: .utf8) {
            for line in text.split(separator: "\n") {
                let parts = line.split(separator: " ")
                if parts.count >= 3 { known[String(parts[1])] = String(parts[2]) }
            }
        }
        var lines: [String] = []
        for account in accounts {
            let existing = try await User.query(on: app.db).filter(\.$email == account.email).first()
            var password = known[account.email]
            if existing == nil || password == nil {
                let fresh = "demo-" + Data((0..<9).map { _ in UInt8.random(in: 0...255) }).base64URLEncodedString()
                let hash = try await app.waybill.passwords.hash(fresh)
                if let existing {
                    existing.passwordHash = hash
                    try await existing.save(on: app.db)
                } else {
                    try await User(role: account.role, email: account.email, passwordHash: hash,
                                   firstName: account.firstName, lastName: account.lastName,
                                   address: account.role == .customer ? "Bahnhofstrasse 1" : nil,
                                   postalCode: account.role == .customer ? "8001" : nil,
                                   city: account.role == .customer ? "Zürich" : nil,
                                   emailVerifiedAt: Date()).create(on: app.db)
                }
                password = fresh
            }
            lines.append("\(account.role.rawValue) \(account.email) \(password!)")
        }
        FileManager.default.createFile(atPath: path, contents: Data((lines.joined(separator: "\n") + "\n").utf8),
                                       attributes: [.posixPermissions: 0o600])
        print("""

            Demo accounts (role, email, password), kept in \(path):
            \(lines.map { "  " + $0 }.joined(separator: "\n"))

            """)
    }
}
