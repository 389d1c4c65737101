import Fluent
import Foundation
import Testing
import Vapor
import WaybillCore
@testable import WaybillServer

@Suite("Conversations: the parties of a delivery write to each other")
struct ConversationTests {
    /// Opens the shipment's conversation as `token`; answers its id.
    static func open(_ server: TestServer, order: String, _ token: String) async throws -> String {
        let opened = try await server.send(.POST, "/conversations", json: ["subject": ["kind": "shipment", "id": order]], token: token)
        try #require(opened.status == .ok, "open: \(opened)")
        return try #require(opened.json["id"].string)
    }

    static func say(_ server: TestServer, _ conversation: String, _ text: String, id: String, _ token: String,
                    extra: [String: any Sendable] = [:]) async throws -> Reply {
        var body: [String: any Sendable] = ["text": text, "clientMessageId": id]
        for (k, v) in extra { body[k] = v }
        return try await server.send(.POST, "/conversations/\(conversation)/messages", json: body, token: token)
    }

    @Test("Customer and driver write to each other about a delivery; a retry is stored once; strangers see nothing; unread counts follow the read markers",
          arguments: TestDatabase.both)
    func customerAndDriverTalk(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let order = try await server.placeOrder(cast.customer.access)
            try await server.advance(order, to: .accepted, cast: cast)
            let id = try await Self.open(server, order: order, cast.customer.access)
            #expect(try await Self.open(server, order: order, cast.driver.access) == id, "one conversation per shipment")
            // Strangers: as if it did not exist.
            #expect(try await server.send(.POST, "/conversations", json: ["subject": ["kind": "shipment", "id": order]], token: cast.otherCustomer.access).status == .notFound)
            #expect(try await server.send(.GET, "/conversations/\(id)", token: cast.otherDriver.access).status == .notFound)
            #expect(try await server.send(.GET, "/conversations/\(id)/messages", token: cast.otherCustomer.access).status == .notFound)
            #expect(try await Self.say(server, id, "Hi", id: "x1", cast.otherCustomer.access).status == .notFound)

            // The sender is the session, whatever the body says.
            let sent = try await Self.say(server, id, "  Ring twice, please.\r\n", id: "c-1", cast.customer.access, extra: ["senderId": cast.driver.userID])
            #expect(sent.status == .created, "\(sent)")
            #expect(sent.json["seq"].int == 1 && sent.json["text"].string == "Ring twice, please." && sent.json["mine"].bool == true)
            #expect(sent.json["senderId"].string == cast.customer.userID)
            // A retry (the answer was lost): the same message, not a second one.
            let retry = try await Self.say(server, id, "Ring twice, please.", id: "c-1", cast.customer.access)
            #expect(retry.status == .ok && retry.json["id"].string == sent.json["id"].string && retry.json["seq"].int == 1)

            // The driver has one unread message, reads it, answers.
            let list = try await server.send(.GET, "/conversations", token: cast.driver.access)
            #expect(list.json["totalUnread"].int == 1 && list.json["items"][0]["id"].string == id && list.json["items"][0]["reference"].exists)
            let messages = try await server.send(.GET, "/conversations/\(id)/messages?after=0", token: cast.driver.access)
            #expect(messages.json["items"].array.map { $0["text"].string } == ["Ring twice, please."])
            #expect(messages.json["items"][0]["mine"].bool == false && messages.json["items"][0]["senderName"].string == "Ada")
            #expect(messages.json["items"][0]["clientMessageId"].exists == false, "the sender's own ids stay theirs")
            let marked = try await server.send(.POST, "/conversations/\(id)/markers", json: ["read": 99], token: cast.driver.access)
            #expect(marked.status == .ok && marked.json["lastReadSeq"].int == 1 && marked.json["unread"].int == 0, "never past the last message")
            #expect(try await server.send(.POST, "/conversations/\(id)/markers", json: ["read": 0], token: cast.driver.access).json["lastReadSeq"].int == 1,
                    "markers never go back")
            #expect(try await Self.say(server, id, "OK, see you at 3", id: "d-1", cast.driver.access).json["seq"].int == 2)
            let customerView = try await server.send(.GET, "/conversations/\(id)", token: cast.customer.access)
            #expect(customerView.json["unread"].int == 1 && customerView.json["lastSeq"].int == 2)
            let readSeqs = Dictionary(uniqueKeysWithValues: customerView.json["participants"].array.map { ($0["role"].string ?? "", $0["readSeq"].int ?? -1) })
            #expect(readSeqs == ["sender": 1, "carrier": 2], "\(customerView)")
            #expect(try await server.send(.GET, "/conversations", token: cast.customer.access).json["totalUnread"].int == 1)

            // Resuming from a sequence number; the newest page.
            #expect(try await server.send(.GET, "/conversations/\(id)/messages?after=1", token: cast.customer.access).json["items"].array.map { $0["seq"].int } == [2])
            #expect(try await server.send(.GET, "/conversations/\(id)/messages?limit=1", token: cast.customer.access).json["items"].array.map { $0["seq"].int } == [2])
            #expect(try await server.send(.GET, "/conversations/\(id)/messages?before=2", token: cast.customer.access).json["items"].array.map { $0["seq"].int } == [1])

            // A manager reads as an observer, and takes part once they write.
            let asManager = try await server.send(.GET, "/conversations/\(id)", token: cast.manager.access)
            #expect(asManager.status == .ok && asManager.json["observer"].bool == true && asManager.json["roles"].array.map(\.string) == ["staff"])
            #expect(try await Self.say(server, id, "I am watching this one.", id: "m-1", cast.manager.access).status == .created)
            let joined = try await server.send(.GET, "/conversations/\(id)", token: cast.manager.access)
            #expect(joined.json["observer"].bool == false && joined.json["participants"].array.contains { $0["role"].string == "staff" })
        }
    }

    @Test("Bad messages get a clear error and store nothing", arguments: TestDatabase.available)
    func badMessages(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let order = try await server.placeOrder(cast.customer.access)
            let id = try await Self.open(server, order: order, cast.customer.access)
            let cases: [([String: any Sendable], String, String)] = [
                (["text": "   ", "clientMessageId": "a"], "text", "required"),
                (["text": String(repeating: "x", count: 4001), "clientMessageId": "a"], "text", "too_long"),
                (["text": "bell \u{07}", "clientMessageId": "a"], "text", "invalid_character"),
                (["text": "hello", "clientMessageId": "no spaces please"], "clientMessageId", "invalid"),
                (["text": "look", "clientMessageId": "b", "sharedShipmentId": UUID().uuidString], "sharedShipmentId", "not_found"),
            ]
            for (body, field, reason) in cases {
                let reply = try await server.send(.POST, "/conversations/\(id)/messages", json: body, token: cast.customer.access)
                #expect(reply.status == .unprocessableEntity || reply.status == .badRequest, "\(body): \(reply)")
                if reply.status == .unprocessableEntity { #expect(reply.json["error"]["fields"][field].string == reason, "\(reply)") }
            }
            #expect(try await server.send(.GET, "/conversations/not-an-id", token: cast.customer.access).status == .badRequest)
            #expect(try await server.send(.GET, "/conversations/\(UUID().uuidString)", token: cast.customer.access).status == .notFound)
            #expect(try await server.send(.GET, "/conversations/\(id)/messages?limit=500", token: cast.customer.access).status == .badRequest)
            #expect(try await server.send(.POST, "/conversations", json: ["subject": ["kind": "parcel", "id": order]], token: cast.customer.access).status.code / 100 == 4)
            #expect(try await MessageRecord.query(on: server.db).count() == 0)
            // A shipment the sender may see can be shared as a card.
            let other = try await server.placeOrder(cast.customer.access)
            let card = try await server.send(.POST, "/conversations/\(id)/messages", json: ["clientMessageId": "s-1", "sharedShipmentId": other], token: cast.customer.access)
            #expect(card.status == .created && card.json["kind"].string == "shipment" && card.json["sharedShipment"]["reference"].exists, "\(card)")
            // Not someone else's.
            let theirs = try await server.placeOrder(cast.otherCustomer.access)
            let refused = try await server.send(.POST, "/conversations/\(id)/messages", json: ["clientMessageId": "s-2", "sharedShipmentId": theirs], token: cast.customer.access)
            #expect(refused.status == .unprocessableEntity && refused.json["error"]["fields"]["sharedShipmentId"].string == "not_found")
        }
    }

    @Test("Authors change or delete their messages for five minutes; deletion leaves a tombstone; status changes appear; the conversation closes after delivery",
          arguments: TestDatabase.available)
    func editsStatusAndClosing(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let order = try await server.placeOrder(cast.customer.access)
            try await server.advance(order, to: .assigned, cast: cast)
            let id = try await Self.open(server, order: order, cast.customer.access)
            let first = try #require(try await Self.say(server, id, "Gate code 4411", id: "c-1", cast.customer.access).json["id"].string)
            let second = try #require(try await Self.say(server, id, "Oops", id: "c-2", cast.customer.access).json["id"].string)
            #expect(try await server.send(.PATCH, "/conversations/\(id)/messages/\(first)", json: ["text": "Mine now"], token: cast.driver.access).status == .forbidden)
            let edited = try await server.send(.PATCH, "/conversations/\(id)/messages/\(first)", json: ["text": "Gate code 4412"], token: cast.customer.access)
            #expect(edited.status == .ok && edited.json["text"].string == "Gate code 4412" && edited.json["editedAt"].exists)
            let deleted = try await server.send(.DELETE, "/conversations/\(id)/messages/\(second)", token: cast.customer.access)
            #expect(deleted.status == .ok && deleted.json["text"].string == "" && deleted.json["deletedAt"].exists)
            let seen = try await server.send(.GET, "/conversations/\(id)/messages", token: cast.driver.access).json["items"].array
            #expect(seen.map { $0["seq"].int } == [1, 2] && seen[1]["deletedAt"].exists && seen[1]["text"].string == "", "the tombstone keeps its place")
            server.clock.advance(by: 6 * 60)
            let late = try await server.send(.PATCH, "/conversations/\(id)/messages/\(first)", json: ["text": "again"], token: cast.customer.access)
            #expect(late.status == .conflict && late.errorCode == "edit_window_passed")
            #expect(try await server.send(.DELETE, "/conversations/\(id)/messages/\(first)", token: cast.customer.access).errorCode == "edit_window_passed")

            // The driver's steps appear as system messages, numbered with the rest.
            try await server.advance(order, to: .delivered, cast: cast, from: .assigned)
            let all = try await server.send(.GET, "/conversations/\(id)/messages?after=2", token: cast.customer.access).json["items"].array
            #expect(all.filter { $0["kind"].string == "system" }.compactMap { $0["text"].string } == ["accepted", "in_transit", "delivered"], "\(all)")
            // Still open for a while after delivery (a forgotten detail, a thank-you), then read-only.
            #expect(try await Self.say(server, id, "Thanks!", id: "c-3", cast.customer.access).status == .created)
            server.clock.advance(by: Double(ConversationPolicy.defaultCloseAfterDays + 1) * 86_400)
            let closed = try await Self.say(server, id, "Still there?", id: "c-4", cast.customer.access)
            #expect(closed.status == .conflict && closed.errorCode == "conversation_closed")
            #expect(try await server.send(.GET, "/conversations/\(id)", token: cast.customer.access).json["closed"].bool == true)
            #expect(try await server.send(.GET, "/conversations/\(id)/messages", token: cast.driver.access).json["items"].array.count >= 6, "closed is still readable")

            // After the retention, the housekeeping deletes the messages.
            server.clock.advance(by: Double(ConversationPolicy.defaultRetentionDays + 1) * 86_400)
            try await server.app.waybill.run { try await Conversations(services: server.app.waybill, db: server.db, logger: server.app.logger).deleteExpired() }
            #expect(try await MessageRecord.query(on: server.db).count() == 0)
        }
    }

    @Test("A driver given another order leaves its conversation; the receiver with an account takes part", arguments: TestDatabase.available)
    func membershipFollowsTheShipment(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            try await server.registerCustomer("bea@example.com")
            let bea = try await server.login("bea@example.com")
            let order = try await server.placeOrder(cast.customer.access)
            try await server.advance(order, to: .assigned, cast: cast)
            let id = try await Self.open(server, order: order, cast.customer.access)
            #expect(try await Self.say(server, id, "Hello Luca", id: "c-1", cast.customer.access).status == .created)
            #expect(try await server.send(.GET, "/conversations", token: cast.driver.access).json["totalUnread"].int == 1)
            let asReceiver = try await server.send(.GET, "/conversations/\(id)", token: bea.access)
            #expect(asReceiver.status == .ok && asReceiver.json["roles"].array.map(\.string) == ["receiver"], "\(asReceiver)")
            #expect(try await Self.say(server, id, "I am home after 5", id: "b-1", bea.access).status == .created)

            let reassigned = try await server.send(.POST, "/orders/\(order)/assign", json: ["driverId": cast.otherDriver.userID, "reassign": true], token: cast.manager.access)
            #expect(reassigned.status == .ok, "\(reassigned)")
            #expect(try await server.send(.GET, "/conversations/\(id)", token: cast.driver.access).status == .notFound)
            let driverList = try await server.send(.GET, "/conversations", token: cast.driver.access)
            #expect(driverList.json["items"].array.isEmpty && driverList.json["totalUnread"].int == 0)
            let mia = try await server.send(.GET, "/conversations", token: cast.otherDriver.access)
            #expect(mia.json["items"].array.count == 1 && mia.json["totalUnread"].int == 2, "the new driver reads what was said: \(mia)")
        }
    }

    @Test("Before a traveller's parcel is paid, phone numbers and emails are masked; then shown", arguments: TestDatabase.available)
    func masking(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let (cast, trip) = try await TripRequestTests.setUp(server)
            let ada = cast.customer, bob = cast.otherCustomer
            let request = try #require(try await server.send(.POST, "/trips/\(trip)/requests", json: TripRequestTests.request(), token: bob.access).json["id"].string)
            let opened = try await server.send(.POST, "/conversations", json: ["subject": ["kind": "request", "id": request]], token: ada.access)
            #expect(opened.status == .ok && opened.json["masked"].bool == true, "\(opened)")
            let id = try #require(opened.json["id"].string)
            #expect(try await server.send(.POST, "/conversations", json: ["subject": ["kind": "request", "id": request]], token: cast.driver.access).status == .notFound)
            let sent = try await Self.say(server, id, "Call me on +41 79 123 45 67 or write to bob@example.com", id: "b-1", bob.access)
            #expect(sent.json["text"].string == "Call me on ••• or write to •••", "\(sent)")
            // Accepted and paid: the shipment talks in the same conversation, unmasked.
            #expect(try await server.send(.POST, "/trip-requests/\(request)/accept", token: ada.access).status == .ok)
            let asSender = try await server.send(.GET, "/trip-requests/\(request)", token: bob.access)
            try await TripRequestTests.pay(server, url: try #require(asSender.json["shipment"]["paymentUrl"].string))
            let shipment = try #require(asSender.json["shipment"]["id"].string)
            #expect(try await Self.open(server, order: shipment, ada.access) == id)
            // Ada's list: the request's conversation (now with its shipment) and a courier delivery's, newest first.
            let courier = try await server.placeOrder(ada.access)
            let second = try await Self.open(server, order: courier, ada.access)
            _ = try await Self.say(server, second, "A courier parcel too", id: "a-2", ada.access)
            let list = try await server.send(.GET, "/conversations", token: ada.access).json["items"].array
            #expect(list.map { $0["id"].string } == [second, id], "\(list)")
            #expect(list[1]["subject"]["kind"].string == "request" && list[1]["shipmentId"].string == shipment && list[1]["masked"].bool == false)
            #expect(list[0]["subject"]["kind"].string == "shipment" && list[0]["lastMessage"]["text"].string == "A courier parcel too")
            #expect(list[1]["unread"].int == 1 && list[1]["lastMessage"]["text"].string == "Call me on +41 79 123 45 67 or write to bob@example.com")
            let after = try await server.send(.GET, "/conversations/\(id)/messages", token: ada.access)
            #expect(after.json["masked"].bool == false)
            #expect(after.json["items"].array.first?["text"].string == "Call me on +41 79 123 45 67 or write to bob@example.com")
        }
    }

    static func direct(_ server: TestServer, with person: String, _ token: String) async throws -> Reply {
        try await server.send(.POST, "/conversations", json: ["subject": ["kind": "direct", "id": person]], token: token)
    }

    @Test("Two people who share a delivery write to each other directly: one conversation per pair, only the two read it; nobody opens one with a stranger or with themselves; it turns read-only when they share nothing any more",
          arguments: TestDatabase.available)
    func directConversations(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            try await server.registerCustomer("bea@example.com")
            let bea = try await server.login("bea@example.com")
            let order = try await server.placeOrder(cast.customer.access)
            try await server.advance(order, to: .assigned, cast: cast)
            // Being named as its receiver links Bea to nobody before the parcel is picked up.
            #expect(try await Self.direct(server, with: bea.userID, cast.customer.access).status == .notFound)
            #expect(try await Self.direct(server, with: cast.customer.userID, bea.access).status == .notFound)

            // The driver and the customer are; once the order goes to another driver, they share nothing:
            // the conversation stays readable but takes no more messages.
            let withDriver = try #require(try await Self.direct(server, with: cast.customer.userID, cast.driver.access).json["id"].string)
            #expect(try await Self.say(server, withDriver, "I ring at 3", id: "l-1", cast.driver.access).status == .created)
            let reassigned = try await server.send(.POST, "/orders/\(order)/assign", json: ["driverId": cast.otherDriver.userID, "reassign": true], token: cast.manager.access)
            #expect(reassigned.status == .ok)
            let after = try await server.send(.GET, "/conversations/\(withDriver)", token: cast.driver.access)
            #expect(after.status == .ok && after.json["closed"].bool == true, "\(after)")
            #expect(try await server.send(.GET, "/conversations/\(withDriver)/messages", token: cast.customer.access).json["items"].array.count == 1)
            let late = try await Self.say(server, withDriver, "Still there?", id: "a-2", cast.customer.access)
            #expect(late.status == .conflict && late.errorCode == "conversation_closed", "\(late)")
            #expect(try await Self.direct(server, with: cast.customer.userID, cast.driver.access).json["id"].string == withDriver, "found again, read-only")

            // The new driver picks the parcel up: now the sender and the receiver, privately: one
            // conversation whoever opens it, named by the other person.
            #expect(try await server.send(.POST, "/orders/\(order)/accept", token: cast.otherDriver.access).status == .ok)
            let picked = try await server.send(.POST, "/orders/\(order)/pickup", json: TestServer.cash(try await server.price(of: order)), token: cast.otherDriver.access)
            #expect(picked.status == .ok, "\(picked)")
            let opened = try await Self.direct(server, with: bea.userID, cast.customer.access)
            #expect(opened.status == .ok && opened.json["subject"]["kind"].string == "direct" && opened.json["subject"]["id"].string == bea.userID, "\(opened)")
            #expect(opened.json["roles"].array.map(\.string) == ["peer"] && opened.json["closed"].bool == false && opened.json["reference"].exists == false)
            let id = try #require(opened.json["id"].string)
            let fromBea = try await Self.direct(server, with: cast.customer.userID.lowercased(), bea.access)
            #expect(fromBea.json["id"].string == id && fromBea.json["subject"]["id"].string == cast.customer.userID)
            #expect(try await Self.say(server, id, "The code is on the box's side", id: "a-1", cast.customer.access).status == .created)
            let beaList = try await server.send(.GET, "/conversations", token: bea.access)
            #expect(beaList.json["totalUnread"].int == 1 && beaList.json["items"][0]["id"].string == id, "\(beaList)")

            // Only the two: not the driver of the same delivery, not staff, not a stranger.
            for token in [cast.otherDriver.access, cast.manager.access, cast.otherCustomer.access] {
                #expect(try await server.send(.GET, "/conversations/\(id)", token: token).status == .notFound)
                #expect(try await server.send(.GET, "/conversations/\(id)/messages", token: token).status == .notFound)
                #expect(try await Self.say(server, id, "Hello", id: "x", token).status == .notFound)
            }
            // Nobody with a stranger, an unknown id, or themselves.
            #expect(try await Self.direct(server, with: cast.customer.userID, cast.otherCustomer.access).status == .notFound)
            #expect(try await Self.direct(server, with: cast.otherCustomer.userID, cast.customer.access).status == .notFound)
            #expect(try await Self.direct(server, with: UUID().uuidString, cast.customer.access).status == .notFound)
            let selfish = try await Self.direct(server, with: cast.customer.userID, cast.customer.access)
            #expect(selfish.status == .unprocessableEntity && selfish.json["error"]["fields"]["subject.id"].string == "self", "\(selfish)")
            // The new driver may write to the sender and the receiver.
            #expect(try await Self.direct(server, with: bea.userID, cast.otherDriver.access).status == .ok)
        }
    }

    @Test("Naming someone's address as an order's receiver shows nobody their picture nor opens a conversation with them, before pickup or once cancelled; once picked up, it does",
          arguments: TestDatabase.available)
    func receiverLinksOnlyOncePickedUp(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            try await server.registerCustomer("bea@example.com")
            let bea = try await server.login("bea@example.com")
            let set = try await server.upload(.PUT, "/me/picture", parts: [.file("photo", SampleImages.squarePNG, type: "image/png", filename: "p.png")], token: bea.access)
            #expect(set.status == .noContent, "\(set)")
            let bob = cast.otherCustomer
            /// What Bob gets for Bea's picture and for a direct conversation with her, and Bea for one with Bob.
            func asked() async throws -> [UInt] {
                let picture = try await server.send(.GET, "/users/\(bea.userID)/picture", token: bob.access).status.code
                let direct = try await Self.direct(server, with: bea.userID, bob.access).status.code
                let fromBea = try await Self.direct(server, with: bob.userID, bea.access).status.code
                return [picture, direct, fromBea]
            }
            #expect(try await asked() == [404, 404, 404], "strangers")

            // A cash order naming Bea's address: placed at once, and still nothing.
            let first = try await server.placeOrder(bob.access)
            #expect(try await asked() == [404, 404, 404], "placed, not picked up")
            try await server.advance(first, to: .accepted, cast: cast)
            #expect(try await asked() == [404, 404, 404], "a driver on the way to pick it up")
            // Cancelled: nothing either, and the driver and the sender no longer share it.
            try await server.advance(first, to: .cancelled, cast: cast)
            #expect(try await asked() == [404, 404, 404], "cancelled")
            #expect(try await Self.direct(server, with: bob.userID, cast.driver.access).status == .notFound, "a cancelled order links nobody")

            // A parcel really on its way to her: then they know each other.
            let second = try await server.placeOrder(bob.access)
            try await server.advance(second, to: .inTransit, cast: cast)
            #expect(try await asked() == [200, 200, 200])
        }
    }

    @Test("A traveller and a sender write directly only once the parcel is paid; a parcel shared with a friend links them until it is unshared",
          arguments: TestDatabase.available)
    func directLinks(db: TestDatabase) async throws {
        try await ParcelPollingTests.withCarriers(db) { server, _ in
            let (cast, trip) = try await TripRequestTests.setUp(server)
            let ada = cast.customer, bob = cast.otherCustomer
            let request = try #require(try await server.send(.POST, "/trips/\(trip)/requests", json: TripRequestTests.request(), token: bob.access).json["id"].string)
            #expect(try await Self.direct(server, with: ada.userID, bob.access).status == .notFound, "masked until paid: no way around it")
            #expect(try await server.send(.POST, "/trip-requests/\(request)/accept", token: ada.access).status == .ok)
            #expect(try await Self.direct(server, with: bob.userID, ada.access).status == .notFound, "accepted, not paid")
            let asSender = try await server.send(.GET, "/trip-requests/\(request)", token: bob.access)
            try await TripRequestTests.pay(server, url: try #require(asSender.json["shipment"]["paymentUrl"].string))
            let paid = try await Self.direct(server, with: ada.userID, bob.access)
            #expect(paid.status == .ok && paid.json["masked"].bool == false, "\(paid)")

            // A parcel Ada follows, shared with Mia (a driver who shares nothing else with her).
            let mia = cast.otherDriver
            #expect(try await Self.direct(server, with: mia.userID, ada.access).status == .notFound)
            let parcel = try #require(try await server.send(.POST, "/parcels", json: ["number": "00340434292135100124"], token: ada.access).json["id"].string)
            #expect(try await server.send(.POST, "/parcels/\(parcel)/shares", json: ["email": "mia@courier.example"], token: ada.access).status == .ok)
            // Sharing it does not let Ada write to Mia first (nor see her picture); Mia may, then both.
            #expect(try await Self.direct(server, with: mia.userID, ada.access).status == .notFound)
            let shared = try await Self.direct(server, with: ada.userID, mia.access)
            #expect(shared.status == .ok, "\(shared)")
            let id = try #require(shared.json["id"].string)
            #expect(try await Self.direct(server, with: mia.userID, ada.access).json["id"].string == id)
            #expect(try await Self.say(server, id, "Is it the shoes?", id: "m-1", mia.access).status == .created)
            #expect(try await server.send(.DELETE, "/parcels/\(parcel)/shares/\(mia.userID)", token: ada.access).status == .noContent)
            let unshared = try await server.send(.GET, "/conversations/\(id)", token: mia.access)
            #expect(unshared.status == .ok && unshared.json["closed"].bool == true)
            #expect(try await Self.say(server, id, "Hello?", id: "m-2", mia.access).errorCode == "conversation_closed")
        }
    }

    @Test("A message or a person is reported to the moderators, never oneself; pushes carry text only for those who allow previews",
          arguments: TestDatabase.available)
    func reportsAndPushes(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let order = try await server.placeOrder(cast.customer.access)
            try await server.advance(order, to: .accepted, cast: cast)
            let id = try await Self.open(server, order: order, cast.customer.access)
            #expect(try await server.send(.POST, "/me/devices", json: ["platform": "android", "pushToken": "fcm-driver"], token: cast.driver.access).status == .created)
            #expect(try await server.send(.POST, "/me/devices", json: ["platform": "android", "pushToken": "fcm-customer"], token: cast.customer.access).status == .created)
            #expect(try await server.send(.PUT, "/me/chat-settings", json: ["previews": true], token: cast.customer.access).json["previews"].bool == true)
            #expect(try await server.send(.GET, "/me/chat-settings", token: cast.driver.access).json["previews"].bool == false)
            _ = try await Self.say(server, id, "Secret gate code 4411", id: "c-1", cast.customer.access)
            let rude = try #require(try await Self.say(server, id, "Rude words", id: "d-1", cast.driver.access).json["id"].string)
            let pushes = try await OutboxMessage.query(on: server.db).filter(\.$kind == Outbox.pushKind).all().compactMap(\.payload)
            #expect(pushes.count == 2, "\(pushes)")
            #expect(pushes.contains { !$0.contains("4411") && $0.contains("Open Waybill to read it.") }, "the driver did not allow previews")
            #expect(pushes.contains { $0.contains("Rude words") }, "the customer did")

            let report = try await server.send(.POST, "/conversations/\(id)/reports", json: ["messageId": rude, "reason": "harassment", "note": "Not nice"], token: cast.customer.access)
            #expect(report.status == .created && report.json["reportedUserId"].string == cast.driver.userID && report.json["status"].string == "pending", "\(report)")
            let own = try await server.send(.POST, "/conversations/\(id)/reports", json: ["userId": cast.customer.userID, "reason": "spam"], token: cast.customer.access)
            #expect(own.status == .unprocessableEntity && own.json["error"]["fields"]["userId"].string == "self")
            let bogus = try await server.send(.POST, "/conversations/\(id)/reports", json: ["userId": cast.customer.userID, "reason": "boredom"], token: cast.driver.access)
            #expect(bogus.status == .badRequest || bogus.status == .unprocessableEntity)
            #expect(try await server.send(.POST, "/conversations/\(id)/reports", json: ["userId": cast.customer.userID, "reason": "spam"], token: cast.otherCustomer.access).status == .notFound)
            #expect(try await server.send(.GET, "/reports", token: cast.customer.access).status == .forbidden)
            // The queue is the administration's (admins).
            #expect(try await server.send(.GET, "/reports", token: cast.manager.access).status == .forbidden)
            let queue = try await server.send(.GET, "/reports?status=pending", token: try await server.makeAdmin(cast.manager))
            #expect(queue.status == .ok && queue.json["items"].array.count == 1 && queue.json["items"][0]["reason"].string == "harassment", "\(queue)")
        }
    }

    @Test("Live: a new message reaches the other party's open app with their unread count; a stranger cannot listen; reconnecting replays what was missed",
          arguments: TestDatabase.available)
    func live(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let order = try await server.placeOrder(cast.customer.access)
            try await server.advance(order, to: .accepted, cast: cast)
            let id = try await Self.open(server, order: order, cast.customer.access)
            try await server.serving { port in
                let driver = try await server.live(port: port, token: cast.driver.access)
                try await driver.send(.subscribe(topic: "conversation:\(id)", since: nil))
                try await driver.next { $0["type"].string == "subscribed" }
                try await driver.send(.subscribe(topic: "notifications", since: nil))
                try await driver.next { $0["type"].string == "subscribed" }
                let stranger = try await server.live(port: port, token: cast.otherCustomer.access)
                try await stranger.send(.subscribe(topic: "conversation:\(id)", since: nil))
                let refused = try await stranger.next { $0["type"].string == "error" }
                #expect(refused["code"].string == "not_found")

                _ = try await Self.say(server, id, "Are you close?", id: "c-1", cast.customer.access)
                let message = try await driver.event("message", topic: "conversation:\(id)")
                #expect(message["data"]["text"].string == "Are you close?" && message["data"]["seq"].int == 1 && message["data"]["senderName"].string == "Ada")
                let unread = try await driver.event("unread", topic: "notifications")
                #expect(unread["data"]["unread"].int == 1 && unread["data"]["total"].int == 1)
                _ = try await server.send(.POST, "/conversations/\(id)/markers", json: ["read": 1], token: cast.driver.access)
                let marker = try await driver.event("marker", topic: "conversation:\(id)")
                #expect(marker["data"]["readSeq"].int == 1 && marker["data"]["userId"].string == cast.driver.userID)
                let lastID = try #require(marker["id"].int)
                await driver.close()

                // Offline meanwhile: two messages; the app resumes from the last event id.
                _ = try await Self.say(server, id, "Hello?", id: "c-2", cast.customer.access)
                _ = try await Self.say(server, id, "Door code 12", id: "c-3", cast.customer.access)
                let again = try await server.live(port: port, token: cast.driver.access)
                try await again.send(.subscribe(topic: "conversation:\(id)", since: Int64(lastID)))
                let resumed = try await again.next { $0["type"].string == "subscribed" }
                #expect(resumed["replayed"].int == 2)
                await again.close()
                await stranger.close()
            }
        }
    }

    @Test("In the web app: the customer opens Messages from the delivery, writes; the driver sees the badge, reads and answers; in French too",
          arguments: TestDatabase.available)
    func webPages(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let order = try await server.placeOrder(cast.customer.access)
            try await server.advance(order, to: .accepted, cast: cast)
            let ada = TestBrowser(server)
            _ = try await ada.signIn("ada@example.com")
            let orderPage = try await ada.get("/orders/\(order)")
            #expect(orderPage.html.contains("id=\"open-conversation\""))
            let opened = try await ada.post("/messages/open", ["kind": "shipment", "id": order], from: "/orders/\(order)")
            #expect(opened.status == .seeOther)
            let path = try #require(opened.location)
            let page = try await ada.get(path)
            #expect(page.status == .ok && page.html.contains("conversation:") && page.html.contains("id=\"chat-form\""), "\(page.html.prefix(300))")
            let clientID = try #require(page.html.range(of: #"name="clientMessageId" value=""#).map { String(page.html[$0.upperBound...].prefix(36)) })
            let sent = try await ada.post(path, ["text": "Please ring twice <b>loudly</b>", "clientMessageId": clientID], from: path)
            #expect(sent.status == .seeOther)
            // A double click sends the same form again: one message.
            _ = try await ada.post(path, ["text": "Please ring twice <b>loudly</b>", "clientMessageId": clientID], from: path)
            #expect(try await MessageRecord.query(on: server.db).count() == 1)
            let mine = try await ada.get(path)
            #expect(mine.html.contains("Please ring twice &lt;b&gt;loudly&lt;/b&gt;"), "escaped")
            // An empty message is refused on the page itself.
            let empty = try await ada.post(path, ["text": "  ", "clientMessageId": UUID().uuidString], from: path)
            #expect(empty.status == .unprocessableEntity && empty.html.contains("role=\"alert\""))

            let luca = TestBrowser(server)
            luca.acceptLanguage = "fr"
            _ = try await luca.signIn("luca@courier.example")
            let home = try await luca.get("/messages")
            let badge = home.html.range(of: "data-messages-unread").map { String(home.html[$0.upperBound...].prefix { $0 != "<" }) }
            #expect(badge?.hasSuffix(">1") == true && badge?.contains("hidden") == false, "the Messages badge: \(badge ?? "none")")
            #expect(home.html.contains("1 non lus") && home.html.contains("Livraison"), "\(home.html)")
            let read = try await luca.get(path)
            #expect(read.html.contains("Votre message") && read.html.contains("Signaler"))
            #expect(try await server.send(.GET, "/conversations", token: cast.driver.access).json["totalUnread"].int == 0, "looking at it reads it")
            _ = try await luca.post(path, ["text": "J’arrive dans 10 minutes", "clientMessageId": UUID().uuidString], from: path)
            let answered = try await ada.get(path)
            #expect(answered.html.contains("J’arrive dans 10 minutes") && answered.html.contains("read-marker"), "Ada's message shows it was read")
            // A stranger's browser: as if it did not exist.
            let bob = TestBrowser(server)
            _ = try await bob.signIn("bob@example.com")
            #expect(try await bob.get(path).status == .notFound)

            // Luca writes to Ada privately from the delivery's conversation: their own conversation, named after her.
            #expect(answered.html.contains("data-direct=\"\(cast.driver.userID)\"") && answered.html.contains("Write to Luca privately"))
            let direct = try await luca.post("/messages/open", ["kind": "direct", "id": cast.customer.userID], from: path)
            let directPath = try #require(direct.location)
            #expect(directPath != path)
            _ = try await luca.post(directPath, ["text": "Votre interphone ne marche pas", "clientMessageId": UUID().uuidString], from: directPath)
            let private_ = try await ada.get(directPath)
            #expect(private_.html.contains("Conversation with Luca") && private_.html.contains("Votre interphone ne marche pas"), "\(private_.html.prefix(400))")
            #expect(!private_.html.contains("data-direct="), "no private conversation from a private one")
            #expect(try await bob.get(directPath).status == .notFound)
            #expect(try await bob.post("/messages/open", ["kind": "direct", "id": cast.customer.userID], from: "/messages").status == .notFound)
        }
    }

    @Test("A photo is a message too: sanitized, seen by the parties only, gone with its message; in the web app as well",
          arguments: TestDatabase.available)
    func photos(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let order = try await server.placeOrder(cast.customer.access)
            try await server.advance(order, to: .accepted, cast: cast)
            let id = try await Self.open(server, order: order, cast.customer.access)
            let sent = try await server.upload("/conversations/\(id)/images", parts: [.file("photo", SampleImages.photoJPEG, type: "image/jpeg", filename: "door.jpg"),
                                                                                    .text("clientMessageId", "p-1"), .text("text", "The blue door")], token: cast.customer.access)
            #expect(sent.status == .created && sent.json["kind"].string == "image" && sent.json["text"].string == "The blue door", "\(sent)")
            let url = try #require(sent.json["image"]["url"].string)
            #expect(sent.json["image"]["width"].int ?? 0 > 0)
            let again = try await server.upload("/conversations/\(id)/images", parts: [.file("photo", SampleImages.photoJPEG, type: "image/jpeg", filename: "door.jpg"),
                                                                                     .text("clientMessageId", "p-1")], token: cast.customer.access)
            #expect(again.status == .ok && again.json["id"].string == sent.json["id"].string, "a retry stores one photo")
            let seen = try await server.send(.GET, url, token: cast.driver.access)
            #expect(seen.status == .ok && seen.headers.contentType?.description.hasPrefix("image/jpeg") == true && seen.body.readableBytes > 100)
            #expect(try await server.send(.GET, url, token: cast.otherCustomer.access).status == .notFound)
            // Not an image: refused, nothing stored.
            let bogus = try await server.upload("/conversations/\(id)/images", parts: [.file("photo", Array("not a picture".utf8), type: "image/jpeg", filename: "x.jpg"),
                                                                                     .text("clientMessageId", "p-2")], token: cast.customer.access)
            #expect(bogus.status.code >= 400 && bogus.status.code < 500, "\(bogus)")
            #expect(try await MessageRecord.query(on: server.db).count() == 1)
            let missing = try await server.upload("/conversations/\(id)/images", parts: [.text("clientMessageId", "p-3")], token: cast.customer.access)
            #expect(missing.status == .unprocessableEntity || missing.status == .badRequest)
            // Deleted: the photo goes with it.
            #expect(try await server.send(.DELETE, "/conversations/\(id)/messages/\(sent.json["id"].string ?? "")", token: cast.customer.access).status == .ok)
            #expect(try await server.send(.GET, url, token: cast.driver.access).status == .notFound)

            // In the web app: the same form takes a photo.
            let ada = TestBrowser(server)
            _ = try await ada.signIn("ada@example.com")
            let path = "/messages/\(id)"
            let posted = try await ada.postFile(path, field: "photo", bytes: SampleImages.photoJPEG, filename: "gate.jpg", from: path,
                                                fields: ["clientMessageId": UUID().uuidString, "text": "Gate"])
            #expect(posted.status == .seeOther, "\(posted.status)")
            let page = try await ada.get(path)
            let src = try #require(page.html.range(of: #"<img src=""#).map { String(page.html[$0.upperBound...].prefix { $0 != "\"" }) })
            #expect(src.hasPrefix("/messages/\(id)/files/"))
            #expect(try await ada.get(src).status == .ok)
            let bob = TestBrowser(server)
            _ = try await bob.signIn("bob@example.com")
            #expect(try await bob.get(src).status == .notFound)
        }
    }
}
