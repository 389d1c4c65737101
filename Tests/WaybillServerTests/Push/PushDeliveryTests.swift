import AsyncHTTPClient
import Crypto
import Fluent
import Foundation
import Testing
import Vapor
@testable import WaybillServer
import WaybillCore

@Suite("Push: notifications reach registered devices through the outbox")
struct PushDeliveryTests {
    static let deviceToken = "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0"

    @Test("A driver's phone gets the assignment by APNs; the outbox retries after a failure; a gone device is removed",
          arguments: TestDatabase.available)
    func throughTheOutbox(db: TestDatabase) async throws {
        try await FakePushServer.with { fake, client in
            let settings = APNsSettings(keyID: "KEY4567890", teamID: "TEAM567890", privateKey: .init(), topic: "ch.waybill.app",
                                        baseURL: fake.baseURL)
            let push = PushService(senders: [.apns: APNsSender(settings: settings, httpClient: client, logger: Logger(label: "test.push"))],
                                   vapidPublicKey: nil, logger: Logger(label: "test.push"))
            try await TestServer.run(db, push: push) { server in
                let cast = try await server.cast()
                let registered = try await server.send(.POST, "/me/devices", json: ["platform": "ios", "pushToken": Self.deviceToken],
                                                       token: cast.driver.access)
                try #require(registered.status == .created || registered.status == .ok, "\(registered)")

                // APNs has a bad moment: the first try fails and the push waits in the outbox.
                fake.reply(to: "/3/device/", status: 500, json: #"{"reason":"InternalServerError"}"#)
                let id = try await server.placeOrder(cast.customer.access)
                try await server.advance(id, to: .assigned, cast: cast)
                try await server.deliverMail()
                #expect(fake.requests(under: "/3/device/").count == 1)
                let waiting = try #require(try await OutboxMessage.query(on: server.db).filter(\.$kind == Outbox.pushKind).first())
                #expect(waiting.status == .pending)
                #expect(waiting.attempts == 1)
                #expect(waiting.nextAttemptAt > UnixTime.nowMillis)

                // Its time comes: delivered, once.
                try await server.sql.update(OutboxMessage.schema).set("next_attempt_at", to: 0).run()
                try await server.deliverMail()
                try await server.deliverMail()
                let sent = fake.requests(under: "/3/device/")
                #expect(sent.count == 2)
                #expect(sent.last?.path == "/3/device/\(Self.deviceToken)")
                #expect(sent.last?.httpMajorVersion == 2)
                let aps = sent.last?.json["aps"] as? [String: Any]
                let alert = aps?["alert"] as? [String: Any]
                #expect((alert?["title"] as? String)?.contains("assigned to you") == true)
                #expect(sent.last?.json["orderId"] as? String == id)
                // The web app's page it is about, which the service worker opens when it is tapped.
                #expect((sent.last?.json["path"] as? String)?.lowercased() == "/orders/\(id)".lowercased())
                #expect(try await OutboxMessage.query(on: server.db).filter(\.$kind == Outbox.pushKind).first()?.status == .sent)

                // The app was deleted from the phone: APNs says so, and the device is forgotten.
                fake.reply(to: "/3/device/", status: 410, json: #"{"reason":"Unregistered"}"#)
                try #require(try await server.send(.POST, "/orders/\(id)/cancel", json: ["reason": "customer changed plans"],
                                                   token: cast.manager.access).status == .ok)
                try await server.deliverMail()
                #expect(fake.requests(under: "/3/device/").count == 3)
                #expect(try await Device.query(on: server.db).count() == 0)
                // Nothing more is sent to it.
                try await server.send(.POST, "/orders/\(try await server.placeOrder(cast.customer.access))/assign",
                                      json: ["driverId": cast.driver.userID], token: cast.manager.access)
                try await server.deliverMail()
                #expect(fake.requests(under: "/3/device/").count == 3)
            }
        }
    }

    @Test("A web device must be a real push subscription; without VAPID keys the public key is 404", arguments: [TestDatabase.sqlite])
    func webSubscriptions(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            for bad in ["not json", #"{"endpoint":"http://push.example.com/x","keys":{"p256dh":"AA","auth":"AA"}}"#,
                        #"{"endpoint":"https://127.0.0.1/x","keys":{"p256dh":"AA","auth":"AA"}}"#] {
                let reply = try await server.send(.POST, "/me/devices", json: ["platform": "web", "pushToken": bad], token: cast.customer.access)
                #expect(reply.status == .unprocessableEntity)
                #expect(reply.json["error"]["fields"]["pushToken"].string == "invalid_subscription")
            }
            let key = P256.KeyAgreement.PrivateKey().publicKey.x963Representation.base64URLEncodedString()
            let auth = Data((0..<16).map { UInt8($0) }).base64URLEncodedString()
            let good = #"{"endpoint":"https://fcm.googleapis.com/fcm/send/abc","keys":{"p256dh":"\#(key)","auth":"\#(auth)"}}"#
            let reply = try await server.send(.POST, "/me/devices", json: ["platform": "web", "pushToken": good], token: cast.customer.access)
            #expect(reply.status == .created || reply.status == .ok)
            let vapid = try await server.send(.GET, "/push/vapid-public-key")
            #expect(vapid.status == .notFound)
            #expect(vapid.errorCode == "push_not_configured")
        }
    }
}
