import Fluent
import Foundation
import Testing
import Vapor
@testable import WaybillServer
import WaybillCore

@Suite("User management by managers")
struct UserManagementTests {
    @Test("Customers and drivers get 403 from every manager endpoint", arguments: TestDatabase.available)
    func nonManagersRefused(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            try await server.registerCustomer("cust@example.com")
            let customer = try await server.login("cust@example.com")
            let driver = try await server.createAccount("drv@example.com", role: .driver)
            let someone = customer.userID
            for token in [customer.access, driver.access] {
                let calls: [(HTTPMethod, String, [String: any Sendable]?)] = [
                    (.GET, "/users", nil),
                    (.POST, "/users", ["role": "manager", "firstName": "Evil", "lastName": "Twin", "email": "evil@example.com"]),
                    (.GET, "/users/\(someone)", nil),
                    (.PATCH, "/users/\(someone)", ["role": "manager"]),
                    (.POST, "/users/\(someone)/reset", nil),
                ]
                for (method, path, body) in calls {
                    let reply = try await server.send(method, path, json: body, token: token)
                    #expect(reply.status == .forbidden, "\(method) \(path)")
                    #expect(reply.errorCode == "forbidden")
                }
            }
            // Without a token: 401, not 403.
            #expect(try await server.send(.GET, "/users").status == .unauthorized)
            // Nothing changed.
            #expect(try await User.query(on: server.db).filter(\.$role == .manager).count() == 0)
        }
    }

    @Test("A manager creates a driver, who sets a password with the mailed code and signs in", arguments: TestDatabase.available)
    func inviteDriver(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let manager = try await server.createAccount("boss@example.com", role: .manager)
            let created = try await server.send(.POST, "/users", json: [
                "role": "driver", "firstName": "Luca", "lastName": "Bernasconi", "email": "Luca@Courier.example",
            ], token: manager.access)
            #expect(created.status == .created)
            #expect(created.json["role"].string == "driver")
            #expect(created.json["email"].string == "luca@courier.example")

            // Invited, but no password yet.
            let noPassword = try await server.send(.POST, "/auth/login", json: ["email": "luca@courier.example", "password": "anything-at-all"])
            #expect(noPassword.errorCode == "invalid_credentials")
            let code = try await server.code(for: "luca@courier.example")
            let mail = try #require(server.mailer.messages.last)
            #expect(mail.subject.contains("driver"))
            let set = try await server.send(.POST, "/auth/password-reset/complete", json: [
                "email": "luca@courier.example", "code": code, "newPassword": "drives-all-day-long",
            ])
            #expect(set.status == .ok)
            let login = try await server.send(.POST, "/auth/login", json: ["email": "luca@courier.example", "password": "drives-all-day-long"])
            #expect(login.status == .ok)
            #expect(login.json["role"].string == "driver")
            #expect(login.json["user"]["emailVerified"].bool == true)

            // The same email again: 409. A customer role cannot be created this way: 422.
            let dup = try await server.send(.POST, "/users", json: ["role": "manager", "firstName": "L", "lastName": "B", "email": "luca@courier.example"], token: manager.access)
            #expect(dup.status == .conflict)
            let customer = try await server.send(.POST, "/users", json: ["role": "customer", "firstName": "L", "lastName": "B", "email": "c@courier.example"], token: manager.access)
            #expect(customer.status == .unprocessableEntity)
            #expect(customer.json["error"]["fields"]["role"].string == "invalid")
        }
    }

    @Test("Search by role and text, page by cursor", arguments: TestDatabase.both)
    func searchAndPaging(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let manager = try await server.createAccount("boss@example.com", role: .manager)
            for i in 0..<5 { try await server.createAccount("driver\(i)@fleet.example", role: .driver) }
            try await server.createAccount("100%_weird@example.com", role: .customer)

            var seen: [String] = []
            var cursor: String?
            repeat {
                let query = "/users?role=driver&limit=2" + (cursor.map { "&cursor=\($0)" } ?? "")
                let page = try await server.send(.GET, query, token: manager.access)
                #expect(page.status == .ok)
                #expect(page.json["items"].array.count <= 2)
                seen += page.json["items"].array.compactMap { $0["email"].string }
                cursor = page.json["nextCursor"].string
            } while cursor != nil
            #expect(seen == (0..<5).map { "driver\($0)@fleet.example" })

            let search = try await server.send(.GET, "/users?q=FLEET", token: manager.access)
            #expect(search.json["items"].array.count == 5)
            // LIKE wildcards in the query are taken literally.
            let literal = try await server.send(.GET, "/users?q=%25_", token: manager.access)
            #expect(literal.json["items"].array.compactMap { $0["email"].string } == ["100%_weird@example.com"])

            #expect(try await server.send(.GET, "/users?cursor=!!!", token: manager.access).status == .badRequest)
            let tooMany = try await server.send(.GET, "/users?limit=1000", token: manager.access)
            #expect(tooMany.status == .badRequest)
            #expect(tooMany.json["error"]["fields"]["limit"].string == "too_large")
            // A search longer than the contract allows is refused, not silently run.
            #expect(try await server.send(.GET, "/users?q=\(String(repeating: "x", count: 500))", token: manager.access).status == .badRequest)
            #expect(try await server.send(.GET, "/users?role=pilot", token: manager.access).status.code / 100 == 4)
        }
    }

    @Test("Disabling a user (an admin) refuses their access token at once and ends every session", arguments: TestDatabase.available)
    func disableUser(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let manager = try await server.createAccount("boss@example.com", role: .manager)
            let driver = try await server.createAccount("drv@example.com", role: .driver)
            #expect(try await server.send(.GET, "/me", token: driver.access).status == .ok)
            // Disabling is a ban: the administration's, not a manager's.
            #expect(try await server.send(.PATCH, "/users/\(driver.userID)", json: ["disabled": true], token: manager.access).status == .forbidden)
            _ = try await server.makeAdmin(manager)

            let disabled = try await server.send(.PATCH, "/users/\(driver.userID)", json: ["disabled": true], token: manager.access)
            #expect(disabled.status == .ok)
            #expect(disabled.json["disabled"].bool == true)

            let me = try await server.send(.GET, "/me", token: driver.access)
            #expect(me.status == .forbidden)
            #expect(me.errorCode == "account_disabled")
            #expect(try await server.send(.POST, "/auth/refresh", json: ["refreshToken": driver.refresh]).status.code / 100 == 4)
            let login = try await server.send(.POST, "/auth/login", json: ["email": "drv@example.com", "password": TestServer.password])
            #expect(login.status == .forbidden)
            #expect(login.errorCode == "account_disabled")

            // Enabled again, the person signs in anew (the old sessions stay ended).
            #expect(try await server.send(.PATCH, "/users/\(driver.userID)", json: ["disabled": false], token: manager.access).status == .ok)
            #expect(try await server.send(.GET, "/me", token: driver.access).errorCode == "session_revoked")
            _ = try await server.login("drv@example.com")
        }
    }

    @Test("Managers change roles but cannot demote or disable themselves; unknown ids are 404", arguments: TestDatabase.available)
    func rolesAndSelf(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let manager = try await server.createAccount("boss@example.com", role: .manager)
            let driver = try await server.createAccount("drv@example.com", role: .driver)

            let promoted = try await server.send(.PATCH, "/users/\(driver.userID)", json: ["role": "manager"], token: manager.access)
            #expect(promoted.json["role"].string == "manager")
            // The role counts from the next request, without signing in again.
            #expect(try await server.send(.GET, "/users", token: driver.access).status == .ok)

            let selfDemote = try await server.send(.PATCH, "/users/\(manager.userID)", json: ["role": "driver"], token: manager.access)
            #expect(selfDemote.status == .conflict)
            #expect(selfDemote.errorCode == "cannot_modify_self")
            let selfDisable = try await server.send(.PATCH, "/users/\(manager.userID)", json: ["disabled": true], token: manager.access)
            #expect(selfDisable.status == .conflict)

            #expect(try await server.send(.GET, "/users/\(UUID())", token: manager.access).status == .notFound)
            #expect(try await server.send(.GET, "/users/not-a-uuid", token: manager.access).status == .notFound)
            #expect(try await server.send(.PATCH, "/users/\(UUID())", json: ["role": "driver"], token: manager.access).status == .notFound)
            let fetched = try await server.send(.GET, "/users/\(driver.userID)", token: manager.access)
            #expect(fetched.json["email"].string == "drv@example.com")
        }
    }

    @Test("Resetting a user ends their sessions and mails them a code", arguments: TestDatabase.available)
    func resetUser(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let manager = try await server.createAccount("boss@example.com", role: .manager)
            try await server.registerCustomer("lost@example.com")
            let customer = try await server.login("lost@example.com")
            let before = server.mailer.messages.count

            let reply = try await server.send(.POST, "/users/\(customer.userID)/reset", token: manager.access)
            #expect(reply.status == .accepted)
            #expect(try await server.send(.GET, "/me", token: customer.access).status == .unauthorized)
            let code = try await server.code(for: "lost@example.com")
            #expect(server.mailer.messages.count == before + 1)
            let done = try await server.send(.POST, "/auth/password-reset/complete", json: ["email": "lost@example.com", "code": code, "newPassword": "found-my-way-back"])
            #expect(done.status == .ok)
        }
    }
}
