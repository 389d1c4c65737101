import Fluent
import Foundation
import Testing
import Vapor
@testable import WaybillServer
import WaybillCore

@Suite("Order transitions through the API")
struct OrderTransitionTests {
    enum Who: String, CaseIterable { case owner, otherCustomer, driver, otherDriver, manager }

    /// What the API must answer when `who` tries `action` on an order in `status`: the order's
    /// strangers get 404; otherwise the state machine's answer (200, 403 or 409).
    static func expected(_ action: OrderAction, _ status: OrderStatus, _ who: Who, assigned: Bool) -> HTTPResponseStatus {
        let capacities: Set<OrderCapacity>
        switch who {
        case .owner: capacities = [.owner]
        case .manager: capacities = [.manager]
        case .driver: capacities = assigned ? [.assignee] : []
        case .otherCustomer, .otherDriver: capacities = []
        }
        // Assigning is a manager's endpoint: anyone else is refused before the order is looked up.
        if (action == .assign || action == .reassign) && who != .manager { return .forbidden }
        if capacities.isEmpty { return .notFound }
        switch OrderStateMachine.decide(action, from: status, as: capacities) {
        case .allowed: return .ok
        case .forbidden: return .forbidden
        case .wrongStatus: return .conflict
        }
    }

    @Test("Every action by every role on an order in every status: allowed, 403, 404 or 409 with the status", arguments: TestDatabase.available)
    func everyTransitionByRole(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let statuses: [OrderStatus] = [.pending, .assigned, .accepted, .inTransit, .delivered, .cancelled, .failed]
            let actions: [OrderAction] = [.assign, .reassign, .accept, .pickup, .deliver, .fail, .cancel]
            var cells = 0
            for status in statuses {
                for action in actions {
                    for who in Who.allCases {
                        // A fresh order in `status` for each attempt, so a success does not spoil the next cell.
                        let id = try await server.placeOrder(cast.customer.access)
                        try await server.advance(id, to: status, cast: cast)
                        let token = switch who {
                        case .owner: cast.customer.access
                        case .otherCustomer: cast.otherCustomer.access
                        case .driver: cast.driver.access
                        case .otherDriver: cast.otherDriver.access
                        case .manager: cast.manager.access
                        }
                        let assigned = ![.pending, .cancelled].contains(status)
                        let reply: Reply = switch action {
                        case .assign: try await server.send(.POST, "/orders/\(id)/assign", json: ["driverId": cast.driver.userID], token: token)
                        case .reassign: try await server.send(.POST, "/orders/\(id)/assign", json: ["driverId": cast.otherDriver.userID, "reassign": true], token: token)
                        case .accept: try await server.send(.POST, "/orders/\(id)/accept", token: token)
                        case .pickup: try await server.send(.POST, "/orders/\(id)/pickup", json: TestServer.cash(try await server.price(of: id)), token: token)
                        case .deliver: try await server.deliver(id, token: token)
                        case .fail: try await server.send(.POST, "/orders/\(id)/fail", json: ["reason": "refused"], token: token)
                        case .cancel: try await server.send(.POST, "/orders/\(id)/cancel", json: ["reason": "changed my mind"], token: token)
                        case .confirmPayment: fatalError()
                        }
                        let want = Self.expected(action, status, who, assigned: assigned)
                        #expect(reply.status == want, "\(who) \(action) on \(status): \(reply)")
                        if want == .conflict {
                            #expect(reply.errorCode == "invalid_transition")
                            #expect(reply.json["error"]["currentStatus"].string == status.rawValue)
                        }
                        if want != .ok {
                            #expect(try await server.status(of: id) == status.rawValue, "a refused \(action) changed the order")
                        }
                        cells += 1
                    }
                }
            }
            #expect(cells == 7 * 7 * 5)
        }
    }

    @Test("Two managers assigning the same order at once: one wins, the other gets 409", arguments: TestDatabase.both)
    func concurrentAssign(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let second = try await server.createAccount("deputy@courier.example", role: .manager)
            for _ in 0..<5 {
                let id = try await server.placeOrder(cast.customer.access)
                async let a = server.send(.POST, "/orders/\(id)/assign", json: ["driverId": cast.driver.userID], token: cast.manager.access)
                async let b = server.send(.POST, "/orders/\(id)/assign", json: ["driverId": cast.otherDriver.userID], token: second.access)
                let replies = try await [a, b]
                #expect(Set(replies.map(\.status.code)) == [200, 409], "\(replies)")
                let winner = try #require(replies.first { $0.status == .ok })
                let order = try #require(try await Order.find(OrderID(uuidString: id)!, on: server.db))
                #expect(order.driverID?.uuidString == winner.json["driver"]["id"].string)
                let assignedEvents = try await OrderEvent.query(on: server.db).filter(\.$orderID == order.id!).filter(\.$type == "assigned").count()
                #expect(assignedEvents == 1)
            }
        }
    }

    @Test("Cancelling: the customer until pickup, a manager until delivery; the driver is told", arguments: TestDatabase.available)
    func cancelling(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let early = try await server.placeOrder(cast.customer.access)
            try await server.advance(early, to: .accepted, cast: cast)
            let byCustomer = try await server.send(.POST, "/orders/\(early)/cancel", json: ["reason": "No longer needed"], token: cast.customer.access)
            #expect(byCustomer.json["status"].string == "cancelled")
            #expect(byCustomer.json["payment"]["status"].string == "void")
            let driverInbox = try await server.send(.GET, "/notifications", token: cast.driver.access)
            #expect(driverInbox.json["items"][0]["kind"].string == "order_cancelled")
            #expect(try await server.send(.POST, "/orders/\(early)/cancel", json: ["reason": ""], token: cast.manager.access).status == .unprocessableEntity)

            let late = try await server.placeOrder(cast.customer.access)
            try await server.advance(late, to: .inTransit, cast: cast)
            let refused = try await server.send(.POST, "/orders/\(late)/cancel", json: ["reason": "too late?"], token: cast.customer.access)
            #expect(refused.status == .conflict)
            #expect(refused.json["error"]["currentStatus"].string == "in_transit")
            #expect(try await server.send(.POST, "/orders/\(late)/cancel", json: ["reason": "Parcel damaged at depot"], token: cast.manager.access).status == .ok)
        }
    }
}
