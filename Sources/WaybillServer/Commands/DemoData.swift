import Fluent
import Foundation
import SQLKit
import Vapor
import WaybillCore

/// Demo accounts for trying every role at once (`waybill serve --demo`). Passwords are random,
/// made on first start and kept in the data folder, then printed at each start.
enum DemoData {
    static let accounts: [(role: Role, email: String, firstName: String, lastName: String)] = [
        (.manager, "manager@demo.waybill.example", "Maria", "Manager"),
        (.driver, "driver@demo.waybill.example", "Dario", "Driver"),
        (.customer, "customer@demo.waybill.example", "Carla", "Customer"),
        // Staff of the demo counter (a customer account with the `counter` capability).
        (.customer, "counter@demo.waybill.example", "Cora", "Counter"),
        // The administration (an account with the `admin` capability): bans, reports, the audit log.
        (.customer, "admin@demo.waybill.example", "Alma", "Admin"),
    ]

    /// What demo-accounts.txt calls each account: its role, or "counter" and "admin" for those capabilities.
    static func label(_ email: String, _ role: Role) -> String {
        email.hasPrefix("counter@") ? "counter" : email.hasPrefix("admin@") ? "admin" : role.rawValue
    }

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
            let password: String
            if existing != nil, let kept = known[account.email] {
                password = kept
            } else {
                let fresh = "demo-" + Data((0..<9).map { _ in UInt8.random(in: 0...255) }).base64URLEncodedString()
                let hash = try await app.waybill.passwords.hash(fresh)
                if let existing {
                    existing.passwordHash = hash
                    try await existing.save(on: app.db)
                } else {
                    let user = User(role: account.role, email: account.email, passwordHash: hash,
                                    firstName: account.firstName, lastName: account.lastName,
                                    address: account.role == .customer ? "Bahnhofstrasse 1" : nil,
                                    postalCode: account.role == .customer ? "8001" : nil,
                                    city: account.role == .customer ? "Zürich" : nil,
                                    emailVerifiedAt: Date())
                    try await app.db.transaction { db in
                        try await user.create(on: db)
                        try await Accounts.recordGrants(of: user, by: nil, on: db)
                    }
                }
                password = fresh
            }
            lines.append("\(label(account.email, account.role)) \(account.email) \(password)")
        }
        try await seedOrders(app)
        try await seedCounter(app)
        if let admin = try await User.query(on: app.db).filter(\.$email == "admin@demo.waybill.example").first(), !admin.capabilities.contains(.admin) {
            try await app.db.transaction { try await Accounts.setStaffCapabilities(admin, to: [.admin], by: nil, on: $0) }
        }
        try await seedPlan(app)
        // Somewhere to travel between (an admin edits areas; `waybill user grant --capability admin` makes one).
        if try await AreaRecord.query(on: app.db).count() == 0 {
            _ = try await Travel.importAreas(try AreaCommands.switzerland(), services: app.waybill, on: app.db)
        }
        _ = FileManager.default.createFile(atPath: path, contents: Data((lines.joined(separator: "\n") + "\n").utf8),
                                       attributes: [.posixPermissions: 0o600])
        print("""

            Demo accounts (role, email, password), kept in \(path):
            \(lines.map { "  " + $0 }.joined(separator: "\n"))

            """)
    }

    /// Two orders for the demo customer on first start: one waiting for dispatch, one already with
    /// the demo driver, so every role has something to look at.
    static func seedOrders(_ app: Application) async throws {
        guard let customer = try await User.query(on: app.db).filter(\.$email == accounts[2].email).first(),
              let driver = try await User.query(on: app.db).filter(\.$email == accounts[1].email).first(),
              let manager = try await User.query(on: app.db).filter(\.$email == accounts[0].email).first(),
              try await Order.query(on: app.db).filter(\.$customerID == (try customer.storedID)).count() == 0 else { return }
        let orders = Orders(services: app.waybill, db: app.db, logger: app.logger)
        let asCustomer = try Principal(user: customer, sessionID: SignInID())
        let pickup = PickupInput(useAccountAddress: true, address: AddressInput(latitude: 47.3779, longitude: 8.5403))
        _ = try await orders.create(OrderRequest(
            quote: QuoteRequest(pickup: pickup, dropoff: AddressInput(street: "Bundesplatz 3", postalCode: "3005", city: "Bern",
                                                                      latitude: 46.9466, longitude: 7.4441),
                                weightClass: .small, service: .standard),
            paymentMethod: .cash, recipientName: "Bea Beispiel", notes: "Demo order: waiting for a manager to assign it."),
            by: asCustomer, idempotencyKey: "demo-1")
        let second = try await orders.create(OrderRequest(
            quote: QuoteRequest(pickup: pickup, dropoff: AddressInput(street: "Place de la Gare 1", postalCode: "1003", city: "Lausanne",
                                                                      latitude: 46.5167, longitude: 6.6291),
                                weightClass: .medium, service: .express),
            paymentMethod: .cash, recipientName: "Louis Exemple", notes: "Demo order: assigned to the demo driver."),
            by: asCustomer, idempotencyKey: "demo-2")
        _ = try await orders.assign(second.record.order.id, to: try driver.storedID, by: try Principal(user: manager, sessionID: SignInID()))
    }

    /// A subscription plan on offer, on first start (when no plan was ever offered), offered by the
    /// demo admin and so in the audit log: the customer can subscribe on the sandbox's page.
    static func seedPlan(_ app: Application) async throws {
        guard try await PlanRecord.query(on: app.db).count() == 0,
              let admin = try await User.query(on: app.db).filter(\.$email == accounts[4].email).first(), admin.capabilities.contains(.admin) else { return }
        let subscriptions = Subscriptions(services: app.waybill, db: app.db, logger: app.logger)
        _ = try await subscriptions.createPlan(PlanTerms(name: "Demo Plus", monthlyPrice: 2_900, includedDeliveries: 3, discountPercent: 10,
                                                         expressIncluded: false),
                                               active: true, by: try Principal(user: admin, sessionID: SignInID()))
    }

    /// A reception counter at Geneva's station, open every day 07:00–20:00, with the demo counter
    /// staff named for it (on first start: when there is no counter yet).
    static func seedCounter(_ app: Application) async throws {
        guard try await CounterRecord.query(on: app.db).count() == 0,
              let staff = try await User.query(on: app.db).filter(\.$email == accounts[3].email).first() else { return }
        let record = CounterRecord()
        record.id = .generated()
        record.apply(CounterDraft(name: "Guichet Cornavin",
                                  address: Address(street: "Place de Cornavin 7", postalCode: "1201", city: "Genève",
                                                   coordinate: Coordinate(latitude: 46.2102, longitude: 6.1424)),
                                  hours: CounterHours(weekly: Array(repeating: [OpeningInterval(start: 7 * 60, end: 20 * 60)], count: 7))))
        record.active = true
        record.createdAt = UnixTime.nowMillis
        record.updatedAt = record.createdAt
        try await app.db.transaction { db in
            try await record.create(on: db)
            guard let sql = db.tracedSQL else { return }
            try await sql.insert(into: "counter_staff").columns("counter_id", "user_id", "added_at")
                .values(SQLBind(try record.storedID), SQLBind(try staff.storedID), SQLBind(record.createdAt)).run()
            try await Accounts.setStaffCapabilities(staff, to: [.counter], by: nil, on: db)
        }
    }
}
