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
          arguments: TestDatabase.available)
    func plainReadMatchesTheModel(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let plain = OrderID(uuidString: try await server.placeOrder(cast.customer.access))!
            let full = OrderID(uuidString: try await server.placeOrder(cast.customer.access))!

            // Every optional column of the second order given a value (the first keeps its empty ones).
            let database = server.app.db
            let order = try #require(try await Order.find(full, on: database))
            order.driverID = try #require(try await User.query(on: database).filter(\.$email == "luca@courier.example").first()?.id)
            order.pickupPlace.areaID = "CH-ZH"
            order.dropoffPlace.areaID = "CH-BE"
            order.dropoffPlace.latitude = -46.25
            order.dropoffPlace.longitude = 7.125
            order.recipient = Recipient(name: "Ada Émile", email: "Ada@Example.com", phone: "+41 79 000 00 00")
            order.notes = "Ring twice: «sonnette»"
            order.distanceMeters = 12_345
            order.checkoutSessionID = "cs_1"
            order.checkoutURL = "https://pay.example/cs_1"
            order.paymentIntentID = "pi_1"
            order.paidAt = 1_800_000_000_123
            order.refundID = "re_1"
            order.refundedAt = 1_800_000_100_000
            order.cashCollected = 2_500
            order.idempotencyKey = "key-1"
            order.requireRecipientCode = true
            order.recipientCodeHash = "hash"
            order.recipientCodeAttempts = 2
            order.failureReason = .recipientAbsent
            order.failureNote = "Nobody home"
            order.cancellationReason = "Changed plans"
            order.signedBy = "A. Émile"
            order.deliveredAt = 1_800_000_200_000
            order.trackingToken = "track"
            order.recipientCodeSealed = "sealed"
            order.externalReference = "SHOP-1"
            order.importID = UUID()
            order.handoverToken = "hand"
            order.declaredValue = 50_000
            order.insurancePremium = 250
            order.pointsRedeemed = 100
            order.pointsDiscount = 100
            order.planSubscriptionID = UUID()
            order.planIncluded = false
            order.planDiscount = 120
            order.planName = "Pro"
            try await order.save(on: database)

            let sql = try #require(database.tracedSQL)
            for id in [plain, full] {
                let model = OrderRow(try #require(try await Order.find(id, on: database)))
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

    @Test("The people an order names read plainly as the account holds them, with or without a company",
          arguments: TestDatabase.available)
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
            for user in users { #expect(people[user.id!] == PersonRow(user)) }
            #expect(people[company.id!]?.displayName == "\(company.firstName) D'Àngelo")
            #expect(people[company.id!]?.companyName == "Ex «Presso» & Co")
            #expect(users.contains { $0.companyName == nil })
            #expect(try await Orders.people([UserID](), on: sql).isEmpty)
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
