import AsyncHTTPClient
import AsyncKit
import Fluent
import Foundation
import SQLKit
import Testing
import Vapor
import WaybillCore
@testable import WaybillServer

/// The outside audit's findings (shared/research/security-audit.md), each as a behaviour.
@Suite("Hostile input")
struct HardeningTests {
    @Test("A Stripe webhook whose timestamp is at either end of Int64 is refused with 400, and the server keeps answering",
          arguments: TestDatabase.available)
    func webhookTimestampOverflow(db: TestDatabase) async throws {
        try await PaymentTests.withStripe(db) { server, _ in
            for t in ["-9223372036854775808", "9223372036854775807", "99999999999999999999", "-1"] {
                let reply = try await server.send(.POST, "/payments/stripe/webhook", rawBody: "{}",
                                                  headers: [("Stripe-Signature", "t=\(t),v1=00")])
                #expect(reply.status == .badRequest, "t=\(t): \(reply)")
                #expect(reply.errorCode == "invalid_signature")
            }
            #expect(try await server.send(.GET, "/me").status == .unauthorized)
        }
    }

    @Test("Forty sign-in guesses sent at once: at most the free allowance is checked, the rest wait (429, Retry-After)",
          arguments: TestDatabase.both)
    func parallelGuesses(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            try await server.registerCustomer("target@example.com")
            // Over real connections, all at once, as an attacker would send them.
            try await server.serving { port in
                // One connection per guess, and patience for a loaded machine: the whole suite runs in
                // parallel on two cores, where a burst of forty has waited more than a minute for answers.
                // The counts below are what matter, and they allow for however long the burst took.
                var configuration = HTTPClient.Configuration(timeout: .init(connect: .seconds(300), read: .seconds(300)))
                configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: 40)
                let client = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: configuration)
                defer { _ = client.shutdown() }
                let started = ContinuousClock.now
                let replies = try await withThrowingTaskGroup(of: (Int, String?).self) { group in
                    for index in 0..<40 {
                        group.addTask {
                            let answer = try await server.postOverHTTP(port: port, "/auth/login",
                                json: #"{"email":"target@example.com","password":"wrong-\#(index)-password"}"#, client: client,
                                timeout: .seconds(300))
                            return (answer.status, answer.headers.first(name: "Retry-After"))
                        }
                    }
                    return try await group.reduce(into: [(Int, String?)]()) { $0.append($1) }
                }
                let elapsed = ContinuousClock.now - started
                let checked = replies.filter { $0.0 == 401 }.count
                // 429: told to wait. 503: on a machine so loaded that no database connection came free
                // in time, refused unheard (also with Retry-After). Either way the password was not compared.
                let waiting = replies.filter { $0.0 == 429 || $0.0 == 503 }
                // The free attempts at once, then each further one only after the policy's wait: a
                // burst that took T seconds (a loaded machine) may fairly have had those waits pass.
                let policy = LoginThrottlePolicy.perAccount
                var allowance = policy.freeFailures, waited: Int64 = 0
                while true {
                    waited += policy.delay(afterFailures: allowance)
                    guard Double(waited) < Double(elapsed.components.seconds) + 1 else { break }
                    allowance += 1
                }
                #expect(checked <= allowance, "\(checked) guesses were checked in \(elapsed)")
                #expect(checked >= 1)
                #expect(checked + waiting.count == 40, "other answers: \(replies.filter { $0.0 != 401 && $0.0 != 429 })")
                #expect(waiting.allSatisfy { $0.1.flatMap(Int.init).map { $0 >= 1 } == true })
            }
        }
    }

    @Test("A customer's orders beyond the hourly budget are refused with 429 too_many_orders", arguments: TestDatabase.available)
    func orderBudget(db: TestDatabase) async throws {
        try await TestServer.run(db, adjust: { $0.ordersPerCustomerPerHour = 2 }) { server in
            let cast = try await server.cast()
            for _ in 0..<2 { _ = try await server.placeOrder(cast.customer.access) }
            let third = try await server.send(.POST, "/orders", json: TestServer.orderBody(), token: cast.customer.access)
            #expect(third.status == .tooManyRequests, "\(third)")
            #expect(third.errorCode == "too_many_orders")
            #expect(third.headers.first(name: .retryAfter) != nil)
            // Another customer's budget is their own.
            _ = try await server.placeOrder(cast.otherCustomer.access)
        }
    }

    @Test("An hourly budget counts while it has room, refuses with the seconds left, and starts over when its window ends",
          arguments: TestDatabase.both)
    func budgetWindows(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let throttle = try Throttle(server.db)
            let start: Int64 = 1_800_000_000
            #expect(try await throttle.take("budget:a", limit: 2, window: 3600, now: start) == nil)
            #expect(try await throttle.take("budget:a", limit: 2, window: 3600, now: start + 10) == nil)
            #expect(try await throttle.take("budget:a", limit: 2, window: 3600, now: start + 600) == 3000)
            #expect(try await throttle.take("budget:a", limit: 2, window: 3600, now: start + 3599) == 1)
            #expect(try await throttle.take("budget:b", limit: 2, window: 3600, now: start + 600) == nil)  // its own
            // A refusal is not counted: the next window has its whole budget.
            #expect(try await throttle.take("budget:a", limit: 2, window: 3600, now: start + 3600) == nil)
            #expect(try await throttle.take("budget:a", limit: 2, window: 3600, now: start + 3601) == nil)
            #expect(try await throttle.take("budget:a", limit: 2, window: 3600, now: start + 3602) == 3598)
        }
    }

    @Test("Photos of a checkout left unpaid for a day are deleted, rows and files", arguments: TestDatabase.available)
    func abandonedPhotos(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let created = try await server.send(.POST, "/orders", json: TestServer.orderBody(payment: "card"), token: cast.customer.access)
            let id = try #require(created.json["order"]["id"].string)
            #expect(try await server.upload("/orders/\(id)/photos", parts: [.file("photo", SampleImages.photoJPEG, type: "image/jpeg")],
                                            token: cast.customer.access).status == .created)
            let orders = Orders(services: server.app.waybill, db: server.app.db, logger: server.app.logger)
            #expect(try await orders.deleteAbandonedPhotos() == 0, "a fresh checkout keeps its photo")
            let file = try #require(try await OrderFile.query(on: server.db).first())
            #expect(try await orders.deleteAbandonedPhotos(now: UnixTime.nowMillis + Orders.abandonedPhotoMillis + 60_000) == 1)
            #expect(try await OrderFile.query(on: server.db).count() == 0)
            await #expect(throws: (any Error).self) { _ = try await server.app.waybill.files.read(file.storageName) }
        }
    }

    @Test("Live subscriptions with `since` outside 0…2^53-1 get invalid_since, and the connection goes on",
          arguments: TestDatabase.available)
    func liveSinceOutOfRange(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let id = try await server.placeOrder(cast.customer.access)
            let token = try await server.trackingToken(id, customer: cast.customer.access)
            try await server.serving { port in
                let customer = try await server.live(port: port, token: cast.customer.access)
                let viewer = try await server.live(port: port, trackingToken: token)
                for since in [Int64.max, .min, -1] {
                    for (client, topic) in [(customer, "notifications"), (customer, "order:\(id)"), (viewer, "tracking:\(token)")] {
                        let reply = try await client.subscribe(topic, since: since)
                        #expect(reply["type"].string == "error" && reply["code"].string == "invalid_since", "\(topic) since \(since): \(reply)")
                        client.clear()
                    }
                }
                #expect(try await customer.subscribe("order:\(id)", since: 0)["type"].string == "subscribed")
                await customer.close()
                await viewer.close()
            }
        }
    }

    @Test("A manager demoted while connected: the socket closes, and the new one sees nothing of the fleet",
          arguments: TestDatabase.available)
    func demotedManagerLosesTheFleet(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let promoted = try await server.send(.PATCH, "/users/\(cast.otherDriver.userID)", json: ["role": "manager"], token: cast.manager.access)
            try #require(promoted.status == .ok, "\(promoted)")
            try await server.serving { port in
                let socket = try await server.live(port: port, token: cast.otherDriver.access)
                #expect(try await socket.subscribe("fleet")["type"].string == "subscribed")
                try #require(try await server.send(.PATCH, "/users/\(cast.otherDriver.userID)", json: ["role": "driver"],
                                                   token: cast.manager.access).status == .ok)
                try await socket.next { $0["code"].string == "access_changed" }
                try await socket.socket.onClose.get()
                let again = try await server.live(port: port, token: cast.otherDriver.access)
                #expect(try await again.subscribe("fleet")["code"].string == "forbidden")
                await again.close()
            }
        }
    }
}

extension HardeningTests {
    @Test("Positions and list filters with times beyond any calendar are refused or match nothing, never a crash",
          arguments: TestDatabase.both)
    func farTimes(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            try await server.goOnDuty(cast.driver.access)
            for time in ["292278994-08-17T07:12:55Z", "99999999999-01-01T00:00:00Z", "-099999-01-01T00:00:00Z"] {
                let point: [String: any Sendable] = ["latitude": 46.9, "longitude": 7.4, "recordedAt": time]
                let reply = try await server.send(.POST, "/drivers/me/locations", json: ["positions": [point]], token: cast.driver.access)
                #expect(reply.status.code >= 400 && reply.status.code < 500, "\(time): \(reply)")
                let list = try await server.send(.GET, "/orders?from=\(time)&to=\(time)", token: cast.manager.access)
                #expect(list.status.code < 500, "\(time): \(list)")
            }
            #expect(try await server.send(.GET, "/orders", token: cast.manager.access).status == .ok)
        }
    }
}

extension HardeningTests {
    @Test("A token bucket with no refill at all answers a day's wait instead of trapping on infinity")
    func bucketWithoutRate() {
        let buckets = TokenBuckets(ratePerSecond: 0, burst: 1)
        #expect(buckets.take("a", now: 0) == nil)
        #expect(buckets.take("a", now: 1) == 86_400)
        let slow = TokenBuckets(ratePerSecond: 1e-300, burst: 1)
        #expect(slow.take("b", now: 0) == nil)
        #expect(slow.take("b", now: 0) == 86_400)
    }
}

extension HardeningTests {
    @Test("When no database connection comes free in time the answer is 503 with Retry-After, not a 500")
    func poolTimeoutIsUnavailable() {
        let mapped = APIErrorMiddleware.map(ConnectionPoolTimeoutError.connectionRequestTimeout, logger: Logger(label: "test"))
        #expect(mapped.status == .serviceUnavailable)
        #expect(mapped.code == .unavailable)
        #expect(mapped.retryAfter == 1)
    }
}

extension HardeningTests {
    @Test("One client address holds at most LIVE_MAX_SOCKETS_PER_ADDRESS live connections, whatever the accounts",
          arguments: [TestDatabase.sqlite])
    func socketsPerAddress(db: TestDatabase) async throws {
        try await TestServer.run(db, adjust: { $0.liveMaxSocketsPerAddress = 2 }) { server in
            let cast = try await server.cast()
            try await server.serving { port in
                let first = try await server.live(port: port, token: cast.customer.access)
                let second = try await server.live(port: port, token: cast.driver.access)
                await #expect(throws: (any Error).self) { _ = try await server.live(port: port, token: cast.manager.access) }
                await first.close()
                // The server forgets the first socket when its close handler has run: wait for that.
                #expect(try await server.app.waybill.live.untilConnections(atMost: 1))
                let third = try await server.live(port: port, token: cast.manager.access)
                #expect(try await third.subscribe("fleet")["type"].string == "subscribed")
                await second.close()
                await third.close()
            }
        }
    }
}

extension HardeningTests {
    @Test("Antipodal points in a quote, an order, a driver's position and the fleet never crash the server",
          arguments: TestDatabase.available)
    func antipodes(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let north: [String: any Sendable] = ["street": "A 1", "postalCode": "1000", "city": "North", "latitude": 8.0, "longitude": 0.0]
            let south: [String: any Sendable] = ["street": "B 2", "postalCode": "2000", "city": "South", "latitude": -8.0, "longitude": 180.0]
            let quote = try await server.send(.POST, "/quotes", json: ["pickup": north, "dropoff": south, "weightClass": "small", "service": "standard"],
                                              token: cast.customer.access)
            #expect(quote.status.code < 500, "\(quote)")
            let id = try await server.placeOrder(cast.customer.access, extra: ["pickup": north, "dropoff": south])
            try await server.advance(id, to: .accepted, cast: cast)
            try await server.goOnDuty(cast.driver.access)
            #expect(try await server.report(cast.driver.access, [(-8.0, 180.0)]).status.code < 500)
            #expect(try await server.send(.GET, "/orders/\(id)", token: cast.customer.access).status == .ok)
            #expect(try await server.send(.GET, "/fleet?orderId=\(id)", token: cast.manager.access).status == .ok)
            let token = try await server.trackingToken(id, customer: cast.customer.access)
            #expect(try await server.send(.GET, "/public/tracking/\(token)").status == .ok)
        }
    }
}
