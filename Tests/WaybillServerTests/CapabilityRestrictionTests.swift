import Fluent
import Foundation
import Testing
import Vapor
@testable import WaybillServer
import WaybillCore

@Suite("Capabilities and restrictions")
struct CapabilityRestrictionTests {
    @Test("A manager makes a customer a driver: the grant names who gave it, the account's role follows, and it now has a carrying box; taking it back undoes both",
          arguments: TestDatabase.available)
    func managerGrantsAndRevokes(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let ada = cast.customer.userID
            #expect(try await server.send(.GET, "/shipments?box=carrying", token: cast.customer.access).status == .forbidden)

            let granted = try await server.send(.PUT, "/users/\(ada)/capabilities/driver", token: cast.manager.access)
            #expect(granted.status == .ok, "\(granted)")
            #expect(granted.json["capabilities"].array.compactMap(\.string) == ["sender", "receiver", "driver"])
            #expect(granted.json["role"].string == "driver")
            let grant = try #require(try await CapabilityGrant.query(on: server.db).filter(\.$userID == UserID(uuidString: ada)!).first())
            #expect(grant.capability == .driver && grant.grantedBy?.uuidString == UUID(uuidString: cast.manager.userID)?.uuidString && grant.revokedAt == nil)
            // Granting again changes nothing.
            #expect(try await server.send(.PUT, "/users/\(ada)/capabilities/driver", token: cast.manager.access).status == .ok)
            #expect(try await CapabilityGrant.query(on: server.db).filter(\.$userID == UserID(uuidString: ada)!).count() == 1)

            // The same token: the account is read afresh on every request.
            let carrying = try await server.send(.GET, "/shipments?box=carrying", token: cast.customer.access)
            #expect(carrying.status == .ok && carrying.json["boxes"].array.compactMap(\.string) == ["sent", "incoming", "carrying"])
            // Dispatch may now give Ada an order.
            let id = try await server.placeOrder(cast.otherCustomer.access)
            #expect(try await server.send(.POST, "/orders/\(id)/assign", json: ["driverId": ada], token: cast.manager.access).status == .ok)

            let revoked = try await server.send(.DELETE, "/users/\(ada)/capabilities/driver", token: cast.manager.access)
            #expect(revoked.status == .ok && revoked.json["role"].string == "customer")
            #expect(revoked.json["capabilities"].array.compactMap(\.string) == ["sender", "receiver"])
            #expect(try await CapabilityGrant.query(on: server.db).filter(\.$userID == UserID(uuidString: ada)!).first()?.revokedAt != nil)
            #expect(try await server.send(.GET, "/shipments?box=carrying", token: cast.customer.access).status == .forbidden)
        }
    }

    @Test("Nobody grants themself a capability; only an admin grants admin; sender, receiver and traveller are nobody's to grant; drivers and customers grant nothing",
          arguments: TestDatabase.available)
    func grantingRules(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let me = try await server.send(.PUT, "/users/\(cast.manager.userID)/capabilities/counter", token: cast.manager.access)
            #expect(me.status == .conflict && me.errorCode == "cannot_modify_self")
            let admin = try await server.send(.PUT, "/users/\(cast.driver.userID)/capabilities/admin", token: cast.manager.access)
            #expect(admin.status == .forbidden)
            for capability in ["sender", "receiver", "traveller"] {
                let reply = try await server.send(.PUT, "/users/\(cast.driver.userID)/capabilities/\(capability)", token: cast.manager.access)
                #expect(reply.status == .unprocessableEntity && reply.errorCode == "not_granted", "\(capability)")
            }
            #expect(try await server.send(.PUT, "/users/\(cast.driver.userID)/capabilities/pilot", token: cast.manager.access).status == .badRequest)
            for token in [cast.driver.access, cast.customer.access] {
                #expect(try await server.send(.PUT, "/users/\(cast.otherDriver.userID)/capabilities/manager", token: token).status == .forbidden)
                #expect(try await server.send(.POST, "/users/\(cast.otherDriver.userID)/restrictions",
                                              json: ["kind": "banned", "reason": "x"], token: token).status == .forbidden)
            }
            // An admin (made at the machine, as `waybill user grant` does) grants admin, and a
            // manager may not restrict an admin.
            let driver = try #require(try await User.find(UserID(uuidString: cast.driver.userID), on: server.db))
            try await server.db.transaction { try await Accounts.setStaffCapabilities(driver, to: [.driver, .admin], by: nil, on: $0) }
            let made = try await server.send(.PUT, "/users/\(cast.otherDriver.userID)/capabilities/admin", token: cast.driver.access)
            #expect(made.status == .ok && made.json["capabilities"].array.compactMap(\.string).contains("admin"))
            let restrictAdmin = try await server.send(.POST, "/users/\(cast.driver.userID)/restrictions",
                                                      json: ["kind": "banned", "reason": "x"], token: cast.manager.access)
            #expect(restrictAdmin.status == .forbidden)
            // The admin manages people (reads accounts) but does not dispatch.
            #expect(try await server.send(.GET, "/users/\(cast.customer.userID)", token: cast.driver.access).status == .ok)
            #expect(try await server.send(.GET, "/fleet", token: cast.driver.access).status == .forbidden)
        }
    }

    @Test("Every verified account sends: a driver and a manager place orders of their own and find them under Sent",
          arguments: TestDatabase.available)
    func staffSend(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            for token in [cast.driver.access, cast.manager.access] {
                let id = try await server.placeOrder(token, extra: ["pickup": TestServer.bern])
                let sent = try await server.send(.GET, "/shipments?box=sent", token: token)
                #expect(sent.json["items"].array.map { $0["id"].string } == [id])
                #expect(try await server.send(.GET, "/shipments/\(id)", token: token).json["roles"].array.compactMap(\.string).contains("sender"))
            }
            // The driver's list still opens on what they carry.
            #expect(try await server.send(.GET, "/shipments", token: cast.driver.access).json["items"].array.isEmpty)
        }
    }

    @Test("A suspended person is told why and until when, follows what is on its way, and starts nothing until the suspension is lifted or over",
          arguments: TestDatabase.available)
    func suspension(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            _ = try await server.makeAdmin(cast.manager)  // suspending is the administration's
            let ada = cast.customer.userID
            let before = try await server.placeOrder(cast.customer.access)
            let until = Date(timeIntervalSince1970: Double(UnixTime.nowMillis) / 1000 + 2 * 86_400)
            let iso = ISO8601DateFormatter().string(from: until)

            for (body, field, reason) in [(["kind": "suspended", "reason": "x"], "until", "required"),
                                          (["kind": "banned", "until": iso, "reason": "x"], "until", "not_allowed"),
                                          (["kind": "suspended", "until": iso, "reason": "  "], "reason", "required"),
                                          (["kind": "suspended", "until": "1970-01-02T00:00:00Z", "reason": "x"], "until", "in_the_past")] {
                let refused = try await server.send(.POST, "/users/\(ada)/restrictions", json: body, token: cast.manager.access)
                #expect(refused.status == .unprocessableEntity && refused.json["error"]["fields"][field].string == reason, "\(body)")
            }
            let suspended = try await server.send(.POST, "/users/\(ada)/restrictions",
                                                  json: ["kind": "suspended", "until": iso, "reason": "Three parcels refused at the door"],
                                                  token: cast.manager.access)
            #expect(suspended.status == .created, "\(suspended)")
            #expect(suspended.json["inForce"].bool == true && suspended.json["setBy"].string?.lowercased() == cast.manager.userID.lowercased())
            let restrictionID = try #require(suspended.json["id"].int)

            let me = try await server.send(.GET, "/me", token: cast.customer.access)
            #expect(me.status == .ok, "a suspended person still signs in")
            #expect(me.json["restriction"]["kind"].string == "suspended")
            #expect(me.json["restriction"]["reason"].string == "Three parcels refused at the door")
            #expect(me.json["disabled"].bool == false)
            #expect(me.json["boxes"].array.compactMap(\.string) == ["incoming"])
            let refused = try await server.send(.POST, "/orders", json: TestServer.orderBody(), token: cast.customer.access)
            #expect(refused.status == .forbidden && refused.errorCode == "account_suspended", "\(refused)")
            #expect(try await server.send(.GET, "/shipments/\(before)", token: cast.customer.access).status == .ok, "what is on its way stays in view")
            #expect(try await server.login("ada@example.com").access.isEmpty == false)
            // The list of restrictions, for account managers and admins.
            let list = try await server.send(.GET, "/users/\(ada)/restrictions", token: cast.manager.access)
            #expect(list.json["items"].array.map { $0["reason"].string } == ["Three parcels refused at the door"])

            // Lifted before its time: everything is back.
            let lifted = try await server.send(.DELETE, "/users/\(ada)/restrictions/\(restrictionID)", token: cast.manager.access)
            #expect(lifted.status == .ok && lifted.json["restriction"]["kind"].string == nil)
            #expect(try await server.send(.POST, "/orders", json: TestServer.orderBody(), token: cast.customer.access).status == .created)
            #expect(try await server.send(.DELETE, "/users/\(ada)/restrictions/\(restrictionID)", token: cast.manager.access).status == .ok)
            #expect(try await server.send(.DELETE, "/users/\(cast.otherCustomer.userID)/restrictions/\(restrictionID)", token: cast.manager.access).status == .notFound,
                    "a restriction belongs to its account")

            // Or over when its time is up.
            _ = try await server.send(.POST, "/users/\(ada)/restrictions",
                                      json: ["kind": "suspended", "until": iso, "reason": "Again"], token: cast.manager.access)
            #expect(try await server.send(.POST, "/orders", json: TestServer.orderBody(), token: cast.customer.access).status == .forbidden)
            server.clock.advance(by: 3 * 86_400)
            let after = try await server.login("ada@example.com")
            #expect(try await server.send(.POST, "/orders", json: TestServer.orderBody(), token: after.access).status == .created)
            #expect(try await server.send(.GET, "/me", token: after.access).json["restriction"]["kind"].string == nil)
        }
    }

    @Test("A ban ends every session at once and refuses sign-in with its own code; the old 'disabled' flag is a ban and lifting it signs the person back in",
          arguments: TestDatabase.available)
    func ban(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            _ = try await server.makeAdmin(cast.manager)  // banning is the administration's
            let bob = cast.otherCustomer
            let banned = try await server.send(.POST, "/users/\(bob.userID)/restrictions", json: ["kind": "banned", "reason": "Fraudulent payments"],
                                               token: cast.manager.access)
            #expect(banned.status == .created)
            let old = try await server.send(.GET, "/me", token: bob.access)
            #expect(old.status == .unauthorized || old.status == .forbidden, "\(old)")
            let signIn = try await server.send(.POST, "/auth/login", json: ["email": "bob@example.com", "password": TestServer.password])
            #expect(signIn.status == .forbidden && signIn.errorCode == "account_disabled")
            let user = try await server.send(.GET, "/users/\(bob.userID)", token: cast.manager.access)
            #expect(user.json["disabled"].bool == true && user.json["restriction"]["reason"].string == "Fraudulent payments")

            // PATCH with disabled: false lifts the ban (kept for one release).
            let enabled = try await server.send(.PATCH, "/users/\(bob.userID)", json: ["disabled": false], token: cast.manager.access)
            #expect(enabled.status == .ok && enabled.json["disabled"].bool == false)
            #expect(try await server.send(.POST, "/auth/login", json: ["email": "bob@example.com", "password": TestServer.password]).status == .ok)
            // And disabled: true is a ban with a reason of its own.
            #expect(try await server.send(.PATCH, "/users/\(bob.userID)", json: ["disabled": true], token: cast.manager.access).status == .ok)
            let records = try await RestrictionRecord.query(on: server.db).filter(\.$userID == UserID(uuidString: bob.userID)!).sort(\.$id).all()
            #expect(records.map(\.kind) == [.banned, .banned])
            #expect(records[0].liftedAt != nil && records[1].liftedAt == nil && records[1].reason == "Disabled by a manager")
            // Nobody restricts themself.
            let me = try await server.send(.POST, "/users/\(cast.manager.userID)/restrictions", json: ["kind": "banned", "reason": "x"],
                                           token: cast.manager.access)
            #expect(me.status == .conflict && me.errorCode == "cannot_modify_self")
        }
    }

    @Test("On the web a manager opens a person and grants a capability with a checkbox; an admin suspends them with a reason, and lifts it",
          arguments: TestDatabase.available)
    func managerInTheWebApp(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let ada = UserID(uuidString: cast.customer.userID)!.uuidString
            let boss = TestBrowser(server)
            _ = try await boss.signIn("boss@courier.example")
            let users = try await boss.get("/users")
            #expect(users.html.contains("href=\"/users/\(ada)\""))
            let person = try await boss.get("/users/\(ada)")
            #expect(person.status == .ok && person.html.contains("name=\"driver\"") && person.html.contains("name=\"admin\" value=\"on\" disabled"))
            let saved = try await boss.post("/users/\(ada)/capabilities", ["driver": "on"], from: "/users/\(ada)")
            #expect(saved.status == .seeOther, "\(saved.status)")
            #expect(try await User.find(UserID(uuidString: ada), on: server.db)?.role == .driver)
            // A manager sees no form to suspend or ban, and cannot post one.
            #expect(!person.html.contains("action=\"/users/\(ada)/restrictions\""))
            #expect(try await boss.post("/users/\(ada)/restrictions", ["kind": "banned", "reason": "x"], from: "/users/\(ada)").status == .forbidden)
            _ = try await server.makeAdmin(cast.manager)

            let day = ISO8601DateFormatter.string(from: Date(timeIntervalSince1970: Double(UnixTime.nowMillis) / 1000 + 3 * 86_400),
                                                  timeZone: .gmt, formatOptions: [.withFullDate])
            let missing = try await boss.post("/users/\(ada)/restrictions", ["kind": "suspended", "until": day, "reason": ""], from: "/users/\(ada)")
            #expect(missing.status == .unprocessableEntity)
            let suspended = try await boss.post("/users/\(ada)/restrictions", ["kind": "suspended", "until": day, "reason": "Late twice"], from: "/users/\(ada)")
            #expect(suspended.status == .seeOther)
            let shown = try await boss.get("/users/\(ada)")
            #expect(shown.html.contains("Late twice") && shown.html.contains("/restrictions/"))
            let record = try #require(try await RestrictionRecord.query(on: server.db).first())
            #expect(record.kind == .suspended && record.until != nil)
            // The person sees the banner.
            let adaBrowser = TestBrowser(server)
            _ = try await adaBrowser.signIn("ada@example.com")
            #expect(try await adaBrowser.get("/notifications").html.contains("Your account is suspended"))
            let lifted = try await boss.post("/users/\(ada)/restrictions/\(record.id!)/lift", [:], from: "/users/\(ada)")
            #expect(lifted.status == .seeOther)
            #expect(try await RestrictionRecord.find(record.id, on: server.db)?.liftedAt != nil)
        }
    }
}
