import Fluent
import Foundation
import NIOConcurrencyHelpers
import Testing
@testable import WaybillServer
import WaybillCore

/// The shipment's one write path, called directly (no HTTP): what `ShipmentStore.apply` writes when
/// the decision allows a command, that a refusal writes nothing, and that of two changes made from
/// the same version one lands.
@Suite("The shipment store: the one write path")
struct ShipmentStoreTests {
    /// A domain-event log for one test: the store records the effect's event after the shipment is saved.
    final class Heard: Sendable {
        let events = NIOLockedValueBox<[(String, OrderStatus?)]>([])
    }

    static let manager = ShipmentActor([.manager])

    /// The cast of a delivery and a cash order its customer placed, waiting for dispatch.
    static func placed(on server: TestServer) async throws -> (Cast, OrderID) {
        let cast = try await server.cast()
        return (cast, try #require(OrderID(uuidString: try await server.placeOrder(cast.customer.access))))
    }

    @Test("Assigning writes the fleet leg's driver, the order's driver column, the status and the version, and records the event with the shipment as saved",
          arguments: TestDatabase.both)
    func assignWritesOnce(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let (cast, id) = try await Self.placed(on: server)
            let driver = try #require(UserID(uuidString: cast.driver.userID))
            let events = DomainEvents()
            let heard = Heard()
            events.subscribe("test") { event, _ in heard.events.withLockedValue { $0.append((event.fact?.name ?? "-", event.order?.status)) } }
            let before = try #require(try await Order.find(id, on: server.db))

            let order = try await server.db.writeTransaction(server.app.waybill) { db in
                try await ShipmentStore.apply(.assign(driver: driver), to: id, by: nil, actor: { _ in Self.manager },
                                              events: events, on: db) { order, decision, _ in
                    #expect(decision.events.contains(.assigned(leg: 0, to: driver, previous: nil)))
                    #expect(order.status == .assigned, "the effect sees the status the decision derived")
                    return .placed
                }
            }
            #expect(order.status == .assigned && order.driverID == driver && order.version == before.version + 1)
            let stored = try #require(try await Order.find(id, on: server.db))
            #expect(stored.status == .assigned && stored.driverID == driver && stored.version == before.version + 1)
            let legs = try await Leg.query(on: server.db).filter(\.$orderID == id).all()
            #expect(legs.map(\.status) == [.assigned] && legs.map(\.assigneeID) == [driver])
            #expect(heard.events.withLockedValue { $0.map(\.0) } == ["placed"])
            #expect(heard.events.withLockedValue { $0.map(\.1) } == [.assigned], "subscribers read the shipment as saved")
        }
    }

    @Test("A refused command writes nothing and runs no effect: the status, version, legs and hand-overs stay as they were",
          arguments: TestDatabase.available)
    func refusalWritesNothing(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let (cast, id) = try await Self.placed(on: server)
            let before = try #require(try await Order.find(id, on: server.db))
            let ran = NIOLockedValueBox(false)
            let refused = await #expect(throws: ShipmentStore.Refused.self) {
                try await server.db.writeTransaction(server.app.waybill) { db in
                    // Nobody has accepted it: a pickup is not possible while it waits for dispatch.
                    try await ShipmentStore.apply(.pickUp, to: id, by: nil, actor: { _ in ShipmentActor([.assignee]) },
                                                  proof: HandOverProof(qrCode: "x"), events: DomainEvents(), on: db) { order, _, _ in
                        ran.withLockedValue { $0 = true }
                        return nil
                    }
                }
            }
            #expect(refused?.refusal == .wrongStatus(.pending))
            #expect(!ran.withLockedValue { $0 })
            let after = try #require(try await Order.find(id, on: server.db))
            #expect(after.status == before.status && after.version == before.version)
            #expect(try await Leg.query(on: server.db).filter(\.$orderID == id).all().map(\.status) == [.open])
            #expect(try await HandOver.query(on: server.db).filter(\.$orderID == id).count() == 0)

            let stranger = await #expect(throws: ShipmentStore.Refused.self) {
                try await server.db.writeTransaction(server.app.waybill) { db in
                    try await ShipmentStore.apply(.cancel, to: id, by: nil, actor: { _ in ShipmentActor([]) }, events: DomainEvents(), on: db) { _, _, _ in nil }
                }
            }
            #expect(stranger?.refusal == .notFound, "someone with no part in a shipment does not learn it exists")
        }
    }

    @Test("Two changes decided on the same version: one lands, the other is refused with the status the shipment now has",
          arguments: TestDatabase.both)
    func versionClaim(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let (cast, id) = try await Self.placed(on: server)
            let first = try #require(UserID(uuidString: cast.driver.userID))
            let second = try #require(UserID(uuidString: cast.otherDriver.userID))
            let services = server.app.waybill
            // Both start from version 1. Whichever comes second finds the shipment assigned: on SQLite
            // its transaction waits for the first and reads it so; on PostgreSQL its version claim
            // waits for the first to commit and then matches no row.
            let results = try await withThrowingTaskGroup(of: Result<UserID, ShipmentStore.Refused>.self) { group in
                for driver in [first, second] {
                    group.addTask {
                        do {
                            let order = try await server.db.writeTransaction(services) { db in
                                try await ShipmentStore.apply(.assign(driver: driver), to: id, by: nil, actor: { _ in Self.manager },
                                                              events: DomainEvents(), on: db) { _, _, _ in nil }
                            }
                            return .success(try #require(order.driverID))
                        } catch let refused as ShipmentStore.Refused {
                            return .failure(refused)
                        }
                    }
                }
                var results: [Result<UserID, ShipmentStore.Refused>] = []
                for try await result in group { results.append(result) }
                return results
            }
            let landed = results.compactMap { try? $0.get() }
            #expect(landed.count == 1, "\(results)")
            let refusals = results.compactMap { result -> ShipmentRefusal? in if case .failure(let r) = result { r.refusal } else { nil } }
            #expect(refusals == [.wrongStatus(.assigned)])
            let stored = try #require(try await Order.find(id, on: server.db))
            #expect(stored.driverID == landed.first && stored.version == 2)
            #expect(try await Leg.query(on: server.db).filter(\.$orderID == id).all().map(\.assigneeID) == [landed.first])
        }
    }

    @Test("A delivery through the store keeps who signed and when, makes the hand-over with its proof, and lets the receiver's copy of the code go",
          arguments: TestDatabase.available)
    func deliveryFacts(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let (cast, id) = try await Self.placed(on: server)
            try await server.advance(id.uuidString, to: .inTransit, cast: cast)
            let order = try await server.db.writeTransaction(server.app.waybill) { db in
                try await ShipmentStore.apply(.deliver, to: id, by: UserID(uuidString: cast.driver.userID), actor: { _ in ShipmentActor([.assignee]) },
                                              proof: HandOverProof(signatureFileID: .generated(), signedBy: "Bea", codeChecked: true),
                                              events: DomainEvents(), on: db) { _, _, _ in nil }
            }
            #expect(order.status == .delivered && order.signedBy == "Bea" && order.deliveredAt == order.updatedAt)
            #expect(order.recipientCodeSealed == nil)
            let handOvers = try await HandOver.query(on: server.db).filter(\.$orderID == id).sort(\.$at).all()
            #expect(handOvers.map(\.kind) == [.pickup, .delivery])
            #expect(handOvers.last?.signedBy == "Bea" && handOvers.last?.codeChecked == true && handOvers.last?.at == order.deliveredAt)
        }
    }
}
