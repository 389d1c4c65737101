import Foundation
import NIOConcurrencyHelpers
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
        let clock = NIOLockedValueBox(NIODeadline.uptimeNanoseconds(1_000_000_000))
        let cache = FreshCache<Int, String>(freshness: .milliseconds(30), capacity: 10, now: { clock.withLockedValue { $0 } })
        cache.keep("a", for: 1, readAt: cache.generation)
        #expect(cache.value(1) == "a")
        clock.withLockedValue { $0 = $0 + .milliseconds(29) }
        #expect(cache.value(1) == "a", "still fresh just before its freshness ends")
        clock.withLockedValue { $0 = $0 + .milliseconds(1) }
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

    @Test("An order's detail shows each change on the very next read: its status, driver, history, the people's names and its files",
          arguments: TestDatabase.available)
    func orderChangesShowAtOnce(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let id = try await server.placeOrder(cast.customer.access)
            func detail(_ token: String = cast.customer.access) async throws -> JSON {
                let reply = try await server.send(.GET, "/orders/\(id)", token: token)
                try #require(reply.status == .ok, "\(reply)")
                return reply.json
            }
            let placed = try await detail()
            #expect(placed["status"].string == "pending" && placed["driver"]["id"].string == nil)
            #expect(try await detail(cast.manager.access)["status"].string == "pending")

            try await server.advance(id, to: .assigned, cast: cast)
            let assigned = try await detail()
            #expect(assigned["status"].string == "assigned" && assigned["driver"]["id"].string == cast.driver.userID)
            #expect(assigned["events"].array.count == placed["events"].array.count + 1)
            // The driver sees it as a driver now, not as nobody.
            #expect(try await detail(cast.driver.access)["availableActions"].array.compactMap(\.string).contains("accept"))

            // A driver's new name (a write to their account, not to the order).
            #expect(try await server.send(.PATCH, "/me", json: ["firstName": "Lucia"], token: cast.driver.access).status == .ok)
            #expect(try await detail()["driver"]["firstName"].string == "Lucia")

            // A photo: a row of the order's files.
            #expect(try await server.upload("/orders/\(id)/photos", parts: [.file("photo", SampleImages.photoJPEG, type: "image/jpeg")],
                                            token: cast.customer.access).status == .created)
            #expect(try await detail()["photos"].array.count == 1)

            try await server.advance(id, to: .accepted, cast: cast, from: .assigned)
            #expect(try await detail()["status"].string == "accepted")
            #expect(try await server.send(.GET, "/orders/\(id)", token: cast.otherCustomer.access).status == .notFound)
        }
    }

    @Test("A page of orders shows a new order, a new status and a changed name on the very next read, and only what its reader may see",
          arguments: TestDatabase.available)
    func listChangesShowAtOnce(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let first = try await server.placeOrder(cast.customer.access)
            func page(_ token: String, _ query: String = "limit=50") async throws -> [JSON] {
                let reply = try await server.send(.GET, "/orders?\(query)", token: token)
                try #require(reply.status == .ok, "\(reply)")
                return reply.json["items"].array
            }
            #expect(try await page(cast.manager.access).count == 1)
            let second = try await server.placeOrder(cast.otherCustomer.access)
            #expect(try await page(cast.manager.access).map { $0["id"].string } == [second, first])
            #expect(try await page(cast.customer.access).map { $0["id"].string } == [first], "a customer's page is their own")

            try await server.advance(first, to: .assigned, cast: cast)
            let assigned = try await page(cast.manager.access).first { $0["id"].string == first }
            #expect(assigned?["status"].string == "assigned" && assigned?["driver"]["id"].string == cast.driver.userID)
            #expect(try await page(cast.driver.access).map { $0["id"].string } == [first])

            #expect(try await server.send(.PATCH, "/me", json: ["firstName": "Lucia"], token: cast.driver.access).status == .ok)
            #expect(try await page(cast.manager.access).first { $0["id"].string == first }?["driver"]["firstName"].string == "Lucia")

            // Each filter is a page of its own.
            #expect(try await page(cast.manager.access, "limit=1").count == 1)
            try await server.advance(second, to: .cancelled, cast: cast)
            #expect(try await page(cast.manager.access, "limit=50&status=cancelled").map { $0["id"].string } == [second])
        }
    }

    @Test("A live event on an order's topic, from any process, forgets what was kept of it; a driver's position does not")
    func liveEventsForgetKeptOrders() async throws {
        try await TestServer.run(.sqlite) { server in
            let cast = try await server.cast()
            let ids = [try await server.placeOrder(cast.customer.access), try await server.placeOrder(cast.customer.access)]
            for id in ids { #expect(try await server.send(.GET, "/orders/\(id)", token: cast.customer.access).status == .ok) }
            let (order, other) = (OrderID(uuidString: ids[0])!, OrderID(uuidString: ids[1])!)
            let caches = server.app.waybill.caches
            #expect(caches.orders.value(order) != nil && caches.orders.value(other) != nil)
            // What another process's transaction wrote reaches this one's hub like this.
            let hub = LiveHub(logger: server.app.logger, caches: caches)
            func live(_ type: String) -> LiveRow { LiveRow(id: 1, topic: LiveTopic.order(order).name, type: type, data: "{}", at: 0) }
            hub.deliver([live("location"), live("eta")])
            #expect(caches.orders.value(order) != nil)
            hub.deliver([live("status")])
            #expect(caches.orders.value(order) == nil)
            #expect(caches.orders.value(other) != nil)
        }
    }
}
