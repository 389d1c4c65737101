import Foundation
import NIOCore
import Testing
import Vapor
@testable import WaybillServer
import WaybillCore

@Suite("What requests read often is kept a moment, and never past a change this process made")
struct ReadCachesTests {
    @Test("A bearer token is read from the Authorization header exactly as Vapor reads it")
    func bearerTokenMatchesVapor() {
        let values = ["Bearer abc.def-ghi", "bearer abc", "BEARER  abc", "Bearer", "Bearer ", "Bearer a b", "Basic abc",
                      "Bearerx abc", "Bearér abc", " Bearer abc ", "Bearer é€😀", "Token abc", ""]
        for value in values {
            var headers = HTTPHeaders()
            headers.add(name: .authorization, value: value)
            #expect(headers.bearerToken == headers.bearerAuthorization?.token, "\(value)")
        }
        #expect(HTTPHeaders().bearerToken == nil)
    }

    @Test("A value read before a change was forgotten is not kept; one read after it is")
    func readsBeforeAForgetAreDropped() {
        let cache = FreshCache<Int, String>(freshness: .seconds(60), capacity: 10)
        let before = cache.generation
        cache.forgetAll()  // a transaction committed while the read was under way
        cache.keep("old", for: 1, readAt: before)
        #expect(cache.value(1) == nil)
        cache.keep("new", for: 1, readAt: cache.generation)
        #expect(cache.value(1) == "new")
    }

    @Test("A kept value lasts its freshness, then is read again")
    func valuesExpire() async throws {
        let cache = FreshCache<Int, String>(freshness: .milliseconds(30), capacity: 10)
        cache.keep("a", for: 1, readAt: cache.generation)
        #expect(cache.value(1) == "a")
        try await Task.sleep(for: .milliseconds(80))
        #expect(cache.value(1) == nil)
    }

    @Test("Forgetting one account leaves the others; a full cache makes room")
    func forgetIsSelectiveAndBounded() {
        let cache = FreshCache<Int, String>(freshness: .seconds(60), capacity: 3)
        for key in 1...3 { cache.keep("v\(key)", for: key, readAt: cache.generation) }
        cache.forget { key, _ in key == 2 }
        #expect(cache.value(1) == "v1" && cache.value(2) == nil && cache.value(3) == "v3")
        cache.keep("v4", for: 4, readAt: cache.generation)
        cache.keep("v5", for: 5, readAt: cache.generation)
        #expect(cache.value(5) == "v5")
    }

    @Test("A changed profile, role or password shows on the very next request of a session just checked",
          arguments: TestDatabase.available)
    func accountChangesShowAtOnce(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let manager = try await server.createAccount("boss@example.com", role: .manager)
            let driver = try await server.createAccount("drv@example.com", role: .driver)
            #expect(try await server.send(.GET, "/me", token: driver.access).json["city"].string != "Basel")
            #expect(try await server.send(.PATCH, "/me", json: ["city": "Basel"], token: driver.access).status == .ok)
            #expect(try await server.send(.GET, "/me", token: driver.access).json["city"].string == "Basel")

            #expect(try await server.send(.GET, "/users", token: driver.access).status == .forbidden)
            #expect(try await server.send(.PATCH, "/users/\(driver.userID)", json: ["role": "manager"], token: manager.access).status == .ok)
            #expect(try await server.send(.GET, "/users", token: driver.access).status == .ok)

            // Changing the password ends the other sessions, at once.
            let other = try await server.login("drv@example.com")
            #expect(try await server.send(.GET, "/me", token: other.access).status == .ok)
            let changed = try await server.send(.POST, "/me/password",
                                                json: ["currentPassword": TestServer.password, "newPassword": "another-long-password-9"],
                                                token: driver.access)
            #expect(changed.status.code / 100 == 2, "\(changed)")
            #expect(try await server.send(.GET, "/me", token: other.access).errorCode == "session_revoked")
            #expect(try await server.send(.GET, "/me", token: driver.access).status == .ok)
        }
    }
}
