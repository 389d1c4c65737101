import Foundation
import Testing
import Vapor
import WaybillAPI
import WaybillCore
@testable import WaybillServer

/// Other teams generate the live channel's message types from openapi.yaml: what the server sends
/// must fit them.
@Suite("openapi.yaml describes the live channel's messages")
struct LiveContractTests {
    @Test("Every message the live channel sends during a delivery decodes as openapi.yaml's LiveMessage, and commands as LiveCommand",
          arguments: TestDatabase.available)
    func liveMessagesMatchTheSpec(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            try await server.serving { port in
                let cast = try await server.cast()
                let id = try await server.placeOrder(cast.customer.access)
                let customer = try await server.live(port: port, token: cast.customer.access)
                let manager = try await server.live(port: port, token: cast.manager.access)
                try await customer.subscribe("order:\(id)")
                try await customer.subscribe("notifications")
                try await customer.subscribe("fleet")  // refused: an error message
                try await manager.subscribe("fleet")
                try await server.goOnDuty(cast.driver.access)
                try await server.advance(id, to: .accepted, cast: cast)
                try await server.report(cast.driver.access, [(47.3769, 8.5417), (47.3771, 8.5425)], at: Date().addingTimeInterval(-10))
                let picked = try await server.send(.POST, "/orders/\(id)/pickup", json: TestServer.cash(try await server.price(of: id)),
                                                   token: cast.driver.access)
                #expect(picked.status == .ok)
                #expect(try await server.deliver(id, token: cast.driver.access).status == .ok)
                try await customer.event("status", topic: "order:\(id)", count: 4)
                try await customer.event("notification", topic: "notifications")
                try await manager.event("duty", topic: "fleet")
                // A driver's app sends a position over its own connection, and one that is refused.
                let driver = try await server.live(port: port, token: cast.driver.access)
                let now = Int64(Date().timeIntervalSince1970 * 1000)
                try await driver.send(.report(ref: "r1", positions: [PositionReport(latitude: 47.3773, longitude: 8.5430, recordedAt: now - 5_000)]))
                let reported = try await driver.next { $0["type"].string == "reported" && $0["ref"].string == "r1" }
                #expect(reported["accepted"].int == 1 && reported["orders"].int == 0, "the order is delivered: no trail to join; \(reported)")
                try await driver.send(.report(ref: "r2", positions: [PositionReport(latitude: 95, longitude: 8.5, recordedAt: now - 4_000)]))
                let refused = try await driver.next { $0["type"].string == "reported" && $0["ref"].string == "r2" }
                #expect(refused["error"]["fields"]["positions[0].latitude"].string == "out_of_range", "\(refused)")
                // A conversation: a message, a read marker, and the unread counts.
                let conversation = try await ConversationTests.open(server, order: id, cast.customer.access)
                try await customer.subscribe("conversation:\(conversation)")
                try await driver.subscribe("notifications")
                _ = try await ConversationTests.say(server, conversation, "Thanks!", id: "c-1", cast.customer.access)
                try await customer.event("message", topic: "conversation:\(conversation)")
                try await driver.event("unread", topic: "notifications")
                _ = try await server.send(.POST, "/conversations/\(conversation)/markers", json: ["read": 1], token: cast.driver.access)
                try await customer.event("marker", topic: "conversation:\(conversation)")
                try await customer.send(.ping)
                try await customer.next { $0["type"].string == "pong" }
                try await customer.send(.unsubscribe(topic: "notifications"))
                try await customer.next { $0["type"].string == "unsubscribed" }

                let raw = customer.rawMessages + manager.rawMessages + driver.rawMessages
                var seen: Set<String> = []
                for text in raw {
                    let message = try JSONDecoder().decode(Components.Schemas.LiveMessage.self, from: Data(text.utf8))
                    seen.insert(message._type.rawValue)
                    if let data = message.data {
                        // The data decodes as the variant its type names.
                        switch message._type {
                        case .location: #expect(data.value1 != nil, "\(text)")
                        case .eta: #expect(data.value2 != nil, "\(text)")
                        case .status: #expect(data.value3 != nil, "\(text)")
                        case .notification: #expect(data.value4 != nil, "\(text)")
                        case .duty: #expect(data.value5 != nil, "\(text)")
                        case .message: #expect(data.value6 != nil, "\(text)")
                        case .marker: #expect(data.value7 != nil, "\(text)")
                        case .unread: #expect(data.value8 != nil, "\(text)")
                        default: Issue.record("a reply with data: \(text)")
                        }
                        #expect(message.id != nil && message.at != nil && message.topic != nil, "\(text)")
                    }
                }
                #expect(seen.isSuperset(of: ["subscribed", "unsubscribed", "error", "pong", "reported", "location", "eta", "status", "notification", "duty",
                                             "message", "marker", "unread"]),
                        "not every kind of message was seen: \(seen)")

                for command in [LiveCommand.subscribe(topic: "order:\(id)", since: 42), .unsubscribe(topic: "fleet"), .ping,
                                .report(ref: "r3", positions: [PositionReport(latitude: 47, longitude: 8, accuracy: 5, recordedAt: now)])] {
                    let decoded = try JSONDecoder().decode(Components.Schemas.LiveCommand.self, from: JSONEncoder().encode(command))
                    #expect(["subscribe", "unsubscribe", "ping", "report"].contains(decoded._type.rawValue))
                }
                await customer.close()
                await driver.close()
                await manager.close()
            }
        }
    }
}
