import Foundation
import Testing
import Vapor
import WaybillClient
import WaybillCore
@testable import WaybillServer

/// What an app needs so that it keeps no rule of its own, through the SDK against a served server:
/// the payment methods to offer, the driver's day, the fleet ranked for an order, marking
/// everything read, and error messages in the person's language.
@Suite("The SDK asks the server for the rules")
struct SDKRulesTests {
    @Test("Payment options, the driver's day, the ranked fleet, read-all and French error messages", arguments: [TestDatabase.sqlite])
    func rulesFromTheServer(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let id = try await server.placeOrder(cast.customer.access, extra: ["pickup": TestServer.bern])
            try await server.advance(id, to: .accepted, cast: cast)
            try await server.serving { port in
                let customer = server.sdk(port: port)
                try await customer.signIn(email: "ada@example.com", password: TestServer.password)
                let options = try await customer.paymentOptions()
                #expect(options.methods.map(\.rawValue) == ["card", "twint", "cash"] && options.currency == "CHF")
                #expect(try await customer.notifications().unreadCount > 0)
                try await customer.markAllNotificationsRead()
                #expect(try await customer.notifications().unreadCount == 0)

                let driver = server.sdk(port: port)
                try await driver.signIn(email: "luca@courier.example", password: TestServer.password)
                let day = try await driver.driverDay()
                #expect(day.todo.map(\.id).map { $0.lowercased() } == [id.lowercased()])
                // A driver asking for the fleet is refused, and the message reads in French.
                do {
                    _ = try await driver.fleet()
                    Issue.record("a driver got the fleet")
                } catch let error as WaybillClient.WaybillError {
                    #expect(error.errorCode == .forbidden)
                    #expect(error.message(french: true) == ErrorCode.forbidden.french)
                }

                let manager = server.sdk(port: port)
                try await manager.signIn(email: "boss@courier.example", password: TestServer.password)
                let fleet = try await manager.fleet(near: OrderID(uuidString: id)!)
                // Both off duty, so no distance: the lighter load first (Luca carries this order).
                #expect(fleet.drivers.map(\.driver.firstName).prefix(2) == ["Mia", "Luca"])
            }
        }
    }
}
