import FluentKit
import Foundation
import SQLKit
import Testing
@testable import WaybillServer
import WaybillCore

/// Answers, pages and lists read orders as plain `OrderRow`s, column after column, instead of
/// through Fluent's model; what they read must be exactly what the model holds.
@Suite("An order read plainly is the order Fluent reads")
struct OrderRowTests {
    @Test("Every column, set or empty, reads the same as through the model; a list leaves out the secrets",
          arguments: TestDatabase.both)
    func plainReadMatchesTheModel(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let plain = OrderID(uuidString: try await server.placeOrder(cast.customer.access))!
            let full = OrderID(uuidString: try await server.placeOrder(cast.customer.access))!

            // Every optional column of the second order given a value (the first keeps its empty ones).
            let database = server.app.db
            let order = try #require(try await Order.find(full, on: database))
            Self.fill(order, driver: try #require(try await User.query(on: database).filter(\.$email == "luca@courier.example").first()?.id), mark: "1")
            try await order.save(on: database)

            let sql = try #require(database.tracedSQL)
            for id in [plain, full] {
                let model = try OrderRow(try #require(try await Order.find(id, on: database)))
                let read = try await OrderRow.read(OrderRow.select(on: sql, listed: false).where("id", .equal, SQLBind(id)), on: sql)
                #expect(read == [model])
                let listed = try #require(try await OrderRow.read(OrderRow.select(on: sql, listed: true).where("id", .equal, SQLBind(id)), on: sql).first)
                var secretless = model
                secretless.recipientCodeHash = nil
                secretless.checkoutSessionID = nil
                secretless.checkoutURL = nil
                secretless.paymentIntentID = nil
                secretless.refundID = nil
                secretless.idempotencyKey = nil
                secretless.trackingToken = nil
                secretless.recipientCodeSealed = nil
                secretless.handoverToken = nil
                #expect(listed == secretless)
            }
            let full2 = try #require(try await OrderRow.read(OrderRow.select(on: sql, listed: false).where("id", .equal, SQLBind(full)), on: sql).first)
            #expect(full2.planName == "Pro" && full2.dropoff.coordinate?.latitude == -46.25 && full2.failureReason == .recipientAbsent)
        }
    }

    @Test("An order and its leg inserted straight on SQLite's writer store exactly the row Fluent's insert of the model stores")
    func straightInsertsStoreWhatFluentStores() async throws {
        try await TestServer.run(.sqlite) { server in
            let cast = try await server.cast()
            let database = server.app.db
            let customer = try #require(UserID(uuidString: cast.customer.userID))
            let driver = try #require(UserID(uuidString: cast.driver.userID))
            // Once with every optional column empty, once with each of them set.
            for full in [false, true] {
                let straight = Self.order(customer: customer, driver: driver, full: full, mark: full ? "c" : "a")
                let fluent = Self.order(customer: customer, driver: driver, full: full, mark: full ? "d" : "b")
                let legs = (try Leg.fleet(for: straight), try Leg.fleet(for: fluent))
                if full { for leg in [legs.0, legs.1] { leg.windowStart = 1_800_000_000_000; leg.windowEnd = 1_800_000_360_000; leg.slotID = "slot"
                    leg.carrierCode = "dhl"; leg.trackingNumber = "JD0001"; leg.counterID = "counter"; leg.from.areaID = "CH-ZH" } }
                try await database.writeTransaction(server.app) { db in
                    #expect(db is WriterDatabase)
                    try await straight.insert(on: db)
                    try await fluent.create(on: db)
                    try await legs.0.insert(on: db)
                    try await legs.1.create(on: db)
                }
                #expect(straight.$id.exists && legs.0.id != nil && legs.0.id != legs.1.id)
                let sql = try #require(database.tracedSQL)
                func row(_ table: String, _ id: any Encodable & Sendable) async throws -> [String: String] { try await Self.stored(table, id, on: sql) }
                var a = try await row("orders", straight.id!), b = try await row("orders", fluent.id!)
                #expect(a.count == OrderRow.columns.count)
                for unique in ["id", "reference", "tracking_token", "handover_token", "idempotency_key", "external_reference", "checkout_session_id"] { a[unique] = nil; b[unique] = nil }
                #expect(a == b)
                var legA = try await row("legs", legs.0.id!), legB = try await row("legs", legs.1.id!)
                for differing in ["id", "order_id"] { legA[differing] = nil; legB[differing] = nil }
                #expect(legA == legB)
                // And it reads back as the model it was.
                let read = try await OrderRow.read(OrderRow.select(on: sql, listed: false).where("id", .equal, SQLBind(straight.id!)), on: sql)
                #expect(try read == [OrderRow(straight)])
            }
        }
    }

    /// Each column of a stored row: its SQLite type and its value as text.
    static func stored(_ table: String, _ id: any Encodable & Sendable, on sql: any SQLDatabase) async throws -> [String: String] {
        let found = try #require(try await sql.raw("SELECT * FROM \(ident: table) WHERE id = \(bind: id)").first())
        var columns: [String: String] = [:]
        for column in found.allColumns {
            let typed = try await sql.raw("SELECT typeof(\(ident: column)) AS t, CAST(\(ident: column) AS TEXT) AS v FROM \(ident: table) WHERE id = \(bind: id)").first()
            columns[column] = "\(try typed?.decode(column: "t", as: String.self) ?? "?"):\(try typed?.decode(column: "v", as: String?.self) ?? "NULL")"
        }
        return columns
    }

    @Test("An order's event, a notification and a queued mail inserted straight on SQLite's writer store what Fluent's insert stores")
    func straightInsertsOfWhatAnOrderTellsStoreWhatFluentStores() async throws {
        try await TestServer.run(.sqlite) { server in
            let cast = try await server.cast()
            let database = server.app.db
            let customer = try #require(UserID(uuidString: cast.customer.userID))
            let driver = try #require(UserID(uuidString: cast.driver.userID))
            let order = Self.order(customer: customer, driver: driver, full: false, mark: "e")
            let sql = try #require(database.tracedSQL)
            // Once with every optional column empty, once with each of them set.
            for full in [false, true] {
                func event() -> OrderEvent {
                    OrderEvent(orderID: order.id!, type: "created", status: full ? .pending : nil, actorID: full ? customer : nil,
                               note: full ? "a note" : nil, at: 1_800_000_000_123)
                }
                func notification() -> WaybillServer.Notification {
                    let made = WaybillServer.Notification(userID: customer, orderID: full ? order.id : nil, kind: "order_pending", title: "New order", body: "Körper ✓")
                    made.createdAt = 1_800_000_000_456
                    if full { made.readAt = 1_800_000_000_789 }
                    return made
                }
                func message() -> OutboxMessage {
                    let made = OutboxMessage(kind: Outbox.mailKind, payload: "{\"to\":1}", nextAttemptAt: 1_800_000_000_000)
                    if full { made.lastError = "refused"; made.attempts = 3; made.sentAt = Date(timeIntervalSince1970: 1_800_000_000.5) }
                    return made
                }
                let events = (event(), event()), notifications = (notification(), notification()), messages = (message(), message())
                try await database.writeTransaction(server.app) { db in
                    #expect(db is WriterDatabase)
                    if !full { try await order.insert(on: db) }
                    try await events.0.insert(on: db)
                    try await events.1.create(on: db)
                    try await notifications.0.insert(on: db)
                    try await notifications.1.create(on: db)
                    try await messages.0.insert(on: db)
                    try await messages.1.create(on: db)
                }
                #expect(events.0.id != nil && events.0.id != events.1.id && notifications.0.id != nil && messages.0.id != nil)
                #expect(events.0.$id.exists && notifications.0.$id.exists && messages.0.$id.exists)
                func same(_ table: String, _ a: any Encodable & Sendable, _ b: any Encodable & Sendable, differing: [String]) async throws {
                    var one = try await Self.stored(table, a, on: sql), other = try await Self.stored(table, b, on: sql)
                    #expect(one.count > 5)
                    for column in differing {
                        // Both drawn or stamped, so different, but of the same type.
                        #expect(one[column]?.split(separator: ":").first == other[column]?.split(separator: ":").first, "\(table).\(column)")
                        one[column] = nil; other[column] = nil
                    }
                    #expect(one == other, "\(table)")
                }
                try await same("order_events", events.0.id!, events.1.id!, differing: ["id"])
                try await same("notifications", notifications.0.id!, notifications.1.id!, differing: ["id"])
                try await same("outbox", messages.0.id!, messages.1.id!, differing: ["id", "created_at"])
                // The message's stamp is now, as Fluent's.
                let stamped = try #require(try await OutboxMessage.find(messages.0.id, on: database)?.createdAt)
                #expect(abs(stamped.timeIntervalSinceNow) < 60)
            }
        }
    }

    /// A new order with every column set: its optional ones empty, or (`full`) each given a value.
    private static func order(customer: UserID, driver: UserID, full: Bool, mark: String) -> Order {
        let order = Order()
        order.id = .generated()
        order.reference = "WB-TEST000" + mark.uppercased()
        order.customerID = customer
        order.status = .pending
        order.version = 1
        order.createdAt = 1_800_000_000_000
        order.updatedAt = 1_800_000_000_001
        order.pickup = Address(street: "Bahnhofplatz 1", postalCode: "8001", city: "Zürich", coordinate: Coordinate(latitude: 47.3779, longitude: 8.5403))
        order.dropoff = Address(street: "Bundesplatz 3", postalCode: "3005", city: "Bern", coordinate: nil)
        order.weightClass = .small
        order.service = .express
        order.recipient = Recipient(name: "Bea Beispiel", email: nil, phone: nil)
        order.priceAmount = 2_450
        order.currency = "CHF"
        order.breakdownJSON = "[]"
        order.tariffVersion = 3
        order.paymentMethod = .cash
        order.paymentStatus = .dueOnPickup
        order.sandbox = false
        order.requireRecipientCode = false
        order.recipientCodeAttempts = 0
        order.trackingToken = "track-" + mark
        order.handoverToken = "hand-" + mark
        if full { fill(order, driver: driver, mark: mark) }
        return order
    }

    /// Gives every optional column of `order` a value (`mark` makes the unique ones its own).
    private static func fill(_ order: Order, driver: UserID, mark: String) {
        order.driverID = driver
        order.pickupPlace.areaID = "CH-ZH"
        order.dropoffPlace.areaID = "CH-BE"
        order.dropoffPlace.latitude = -46.25
        order.dropoffPlace.longitude = 7.125
        order.recipient = Recipient(name: "Ada Émile", email: "Ada@Example.com", phone: "+41 79 000 00 00")
        order.notes = "Ring twice: «sonnette»"
        order.distanceMeters = 12_345
        order.checkoutSessionID = "cs_" + mark
        order.checkoutURL = "https://pay.example/cs_1"
        order.paymentIntentID = "pi_1"
        order.paidAt = 1_800_000_000_123
        order.refundID = "re_1"
        order.refundedAt = 1_800_000_100_000
        order.cashCollected = 2_500
        order.idempotencyKey = "key-" + mark
        order.requireRecipientCode = true
        order.recipientCodeHash = "hash"
        order.recipientCodeAttempts = 2
        order.failureReason = .recipientAbsent
        order.failureNote = "Nobody home"
        order.cancellationReason = "Changed plans"
        order.signedBy = "A. Émile"
        order.deliveredAt = 1_800_000_200_000
        order.recipientCodeSealed = "sealed"
        order.externalReference = "SHOP-" + mark
        order.importID = .init(uuidString: "9F0C2E5A-2B7D-4C1E-8E8A-1D2C3B4A5F60")
        order.declaredValue = 50_000
        order.insurancePremium = 250
        order.pointsRedeemed = 100
        order.pointsDiscount = 100
        order.planSubscriptionID = .init(uuidString: "1A2B3C4D-5E6F-4A0B-9C8D-7E6F5A4B3C2D")
        order.planIncluded = false
        order.planDiscount = 120
        order.planName = "Pro"
    }

    @Test("The people an order names read plainly as the account holds them, with or without a company",
          arguments: TestDatabase.both)
    func peopleReadAsTheModelHoldsThem(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            _ = try await server.cast()
            let database = server.app.db
            let company = try #require(try await User.query(on: database).filter(\.$email == "luca@courier.example").first())
            company.companyName = "Ex «Presso» & Co"
            company.lastName = "D'Àngelo"
            try await company.save(on: database)
            let users = try await User.query(on: database).all()
            let sql = try #require(database.tracedSQL)
            let people = try await Orders.people(users.map { $0.id! } + [UserID.random()], on: sql)
            #expect(people.count == users.count)
            for user in users { #expect(try people[user.id!] == PersonRow(user)) }
            #expect(people[company.id!]?.displayName == "\(company.firstName) D'Àngelo")
            #expect(people[company.id!]?.companyName == "Ex «Presso» & Co")
            #expect(users.contains { $0.companyName == nil })
            #expect(try await Orders.people([UserID](), on: sql).isEmpty)
        }
    }

    @Test("The managers told of each new order, read plainly, are those the model says may dispatch: banned, suspended and stripped ones left out",
          arguments: TestDatabase.both)
    func managersReadPlainlyAsTheModelJudgesThem(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            _ = try await server.cast()
            let database = server.app.db
            func manager(_ name: String, _ change: (User) -> Void) async throws -> User {
                let user = User(role: .manager, email: "\(name)@managers.example", passwordHash: nil, firstName: name.capitalized, lastName: "Ménager",
                                companyName: name == "plain" ? nil : "Dispatch & Co", emailVerifiedAt: Date())
                change(user)
                try await user.create(on: database)
                return user
            }
            let now = UnixTime.nowMillis
            _ = try await manager("plain") { _ in }
            _ = try await manager("unverified") { $0.emailVerifiedAt = nil }
            _ = try await manager("banned") { $0.restrictedKind = Restriction.Kind.banned.rawValue }
            _ = try await manager("suspended") { $0.restrictedKind = Restriction.Kind.suspended.rawValue; $0.restrictedUntil = now + 3_600_000 }
            _ = try await manager("lapsed") { $0.restrictedKind = Restriction.Kind.suspended.rawValue; $0.restrictedUntil = now - 1 }
            _ = try await manager("stripped") { $0.staffCapabilities = Capability.storedList(Capability.granted(to: .customer)) }
            let all = try await User.query(on: database).filter(\.$role == .manager).all()
            let expected = try all.filter { try $0.caller.may(.dispatch) }
            let read = try await Notifier.managers(on: database)
            #expect(Set(read.map(\.personID)) == Set(expected.map { $0.id! }))
            #expect(read.count == expected.count && expected.count < all.count && expected.count >= 3)
            for person in read {
                let user = try #require(expected.first { $0.id == person.personID })
                #expect(person.role == user.role && person.email == user.email && person.firstName == user.firstName
                        && person.lastName == user.lastName && person.companyName == user.companyName)
                #expect(try person.caller.capabilities == user.caller.capabilities && person.caller.verifiedEmail == user.caller.verifiedEmail)
                #expect(person.isBanned == user.isBanned && person.displayName == user.displayName)
            }
            // Inside a write transaction (on SQLite, the writer's own connection) they read the same.
            let inside = try await database.writeTransaction(server.app) { db in try await Notifier.managers(on: db).map(\.personID) }
            #expect(Set(inside) == Set(expected.map { $0.id! }))
        }
    }

    @Test("A UUID's text is read in either case, and anything else is refused")
    func uuidText() {
        let id = UUID()
        #expect(UUID.parsing(id.uuidString) == id)
        #expect(UUID.parsing(id.uuidString.lowercased()) == id)
        for bad in ["", "not-a-uuid", String(id.uuidString.dropLast()), id.uuidString + "0",
                    id.uuidString.replacingOccurrences(of: "-", with: "_"), String(repeating: "g", count: 36)] {
            #expect(UUID.parsing(bad) == nil, "\(bad)")
        }
    }
}
