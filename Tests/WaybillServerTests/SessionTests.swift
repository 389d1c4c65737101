import Fluent
import Foundation
import Testing
import Vapor
@testable import WaybillServer
import WaybillCore

@Suite("Sign-in, tokens and sessions")
struct SessionTests {
    @Test("Wrong email and wrong password get the same 401", arguments: TestDatabase.available)
    func wrongCredentials(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            try await server.registerCustomer("real@example.com")
            let wrongPassword = try await server.send(.POST, "/auth/login", json: ["email": "real@example.com", "password": "not-the-password"])
            let wrongEmail = try await server.send(.POST, "/auth/login", json: ["email": "ghost@example.com", "password": TestServer.password])
            #expect(wrongPassword.status == .unauthorized)
            #expect(wrongEmail.status == .unauthorized)
            #expect(wrongPassword.textWithoutRequestID == wrongEmail.textWithoutRequestID)
            #expect(wrongPassword.errorCode == "invalid_credentials")
        }
    }

    @Test("Sign-in stores the device's push token", arguments: TestDatabase.available)
    func loginStoresDevice(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            try await server.registerCustomer("phone@example.com")
            let reply = try await server.send(.POST, "/auth/login", json: [
                "email": "phone@example.com", "password": TestServer.password,
                "device": ["platform": "ios", "pushToken": "apns-token-1"] as [String: any Sendable],
            ])
            #expect(reply.status == .ok)
            let devices = try await Device.query(on: server.db).all()
            #expect(devices.count == 1)
            #expect(devices.first?.pushToken == "apns-token-1")
            #expect(devices.first?.platform == .ios)

            // Registering another device afterwards works too, and the same token is not duplicated.
            let token = try #require(reply.json["accessToken"].string)
            let added = try await server.send(.POST, "/me/devices", json: ["platform": "android", "pushToken": "fcm-token-2"], token: token)
            #expect(added.status == .created)
            #expect(added.json["platform"].string == "android")
            _ = try await server.send(.POST, "/me/devices", json: ["platform": "android", "pushToken": "fcm-token-2"], token: token)
            #expect(try await Device.query(on: server.db).count() == 2)

            let badPlatform = try await server.send(.POST, "/me/devices", json: ["platform": "symbian", "pushToken": "x"], token: token)
            #expect(badPlatform.status == .unprocessableEntity)
            #expect(badPlatform.json["error"]["fields"]["platform"].string == "invalid")
        }
    }

    @Test("Refreshing gives a new pair; reusing a retired refresh token ends the whole session", arguments: TestDatabase.available)
    func refreshRotationAndReuse(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            try await server.registerCustomer("rotate@example.com")
            let first = try await server.login("rotate@example.com")

            let refreshed = try await server.send(.POST, "/auth/refresh", json: ["refreshToken": first.refresh])
            #expect(refreshed.status == .ok)
            let secondRefresh = try #require(refreshed.json["refreshToken"].string)
            let secondAccess = try #require(refreshed.json["accessToken"].string)
            #expect(secondRefresh != first.refresh)
            #expect(try await server.send(.GET, "/me", token: secondAccess).status == .ok)

            // An attacker replays the stolen, already used token…
            let replay = try await server.send(.POST, "/auth/refresh", json: ["refreshToken": first.refresh])
            #expect(replay.status == .unauthorized)
            #expect(replay.errorCode == "session_revoked")

            // …and the whole family is gone: the legitimate newer token and its access token too.
            let legit = try await server.send(.POST, "/auth/refresh", json: ["refreshToken": secondRefresh])
            #expect(legit.status == .unauthorized)
            let me = try await server.send(.GET, "/me", token: secondAccess)
            #expect(me.status == .unauthorized)
            #expect(me.errorCode == "session_revoked")

            // Other sessions of the same person are untouched.
            let other = try await server.login("rotate@example.com")
            #expect(try await server.send(.GET, "/me", token: other.access).status == .ok)
        }
    }

    @Test("Refresh tokens are random, long and stored only hashed", arguments: TestDatabase.available)
    func refreshTokensStoredHashed(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            try await server.registerCustomer("hash@example.com")
            let tokens = try await server.login("hash@example.com")
            #expect(Data(base64URLEncoded: tokens.refresh)?.count == 32)
            let stored = try await RefreshToken.query(on: server.db).all()
            #expect(stored.count == 1)
            #expect(stored.allSatisfy { $0.tokenHash != tokens.refresh && $0.tokenHash.count == 64 })
        }
    }

    @Test("Logout ends that session only, at once though it was checked a moment before", arguments: TestDatabase.available)
    func logout(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            try await server.registerCustomer("bye@example.com")
            let phone = try await server.login("bye@example.com")
            let laptop = try await server.login("bye@example.com")
            #expect(try await server.send(.GET, "/me", token: phone.access).status == .ok)  // kept for a second
            let reply = try await server.send(.POST, "/auth/logout", json: ["refreshToken": phone.refresh])
            #expect(reply.status == .noContent)
            #expect(try await server.send(.GET, "/me", token: phone.access).status == .unauthorized)
            #expect(try await server.send(.POST, "/auth/refresh", json: ["refreshToken": phone.refresh]).status == .unauthorized)
            #expect(try await server.send(.GET, "/me", token: laptop.access).status == .ok)
            // Logging out twice, or with nonsense, is not an error.
            #expect(try await server.send(.POST, "/auth/logout", json: ["refreshToken": phone.refresh]).status == .noContent)
        }
    }

    @Test("Access tokens are checked: signature, type, audience, expiry", arguments: TestDatabase.available)
    func accessTokenChecks(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            try await server.registerCustomer("jwt@example.com")
            let tokens = try await server.login("jwt@example.com")
            let userID = try #require(UserID(uuidString: tokens.userID))
            let session = try #require(try await Session.query(on: server.db).first()?.id)

            #expect(try await server.send(.GET, "/me").errorCode == "unauthenticated")
            #expect(try await server.send(.GET, "/me", token: "garbage").errorCode == "invalid_token")

            // A refresh token is not an access token.
            #expect(try await server.send(.GET, "/me", token: tokens.refresh).status == .unauthorized)

            // Expired: issued 16 minutes ago.
            let expired = try await server.app.waybill.tokens.accessToken(
                userID: userID, role: .customer, sessionID: session, now: Date().addingTimeInterval(-16 * 60))
            let reply = try await server.send(.GET, "/me", token: expired)
            #expect(reply.status == .unauthorized)
            #expect(reply.errorCode == "token_expired")

            // Signed with another key.
            let foreign = await TokenService.make(secret: Array("another-secret-that-is-long-enough-for-hs256!!".utf8))
            let forged = try await foreign.accessToken(userID: userID, role: .manager, sessionID: session)
            #expect(try await server.send(.GET, "/me", token: forged).errorCode == "invalid_token")

            // Right key, wrong audience or type.
            for (aud, typ) in [("someone-else", "access"), (AccessClaims.audience, "refresh")] {
                let claims = AccessClaims(sub: .init(value: userID.uuidString), aud: .init(value: [aud]),
                                          exp: .init(value: Date().addingTimeInterval(600)), iat: .init(value: Date()),
                                          typ: typ, sid: session.uuidString, role: "customer")
                let token = try await server.app.waybill.tokens.keys.sign(claims)
                #expect(try await server.send(.GET, "/me", token: token).errorCode == "invalid_token")
            }
        }
    }

    @Test("Repeated failed sign-ins make the next attempt wait (429 with Retry-After)", arguments: TestDatabase.available)
    func loginThrottled(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            try await server.registerCustomer("target@example.com")
            let policy = LoginThrottlePolicy.perAccount
            for _ in 0..<policy.freeFailures {
                let reply = try await server.send(.POST, "/auth/login", json: ["email": "target@example.com", "password": "wrong-password"])
                #expect(reply.status == .unauthorized)
            }
            // The last failure was just now, and enough of them for a wait of several seconds: a slow
            // machine may take longer than the first one-second delay between two requests.
            try await server.sql.update("throttles").set("last_at", to: UnixTime.nowSeconds)
                .where("key", .like, "login:acct:%").set("count", to: policy.freeFailures + 4).run()
            // Even the right password waits now: the delay is not a guess oracle.
            let blocked = try await server.send(.POST, "/auth/login", json: ["email": "target@example.com", "password": TestServer.password])
            #expect(blocked.status == .tooManyRequests)
            #expect(blocked.errorCode == "rate_limited")
            let retryAfter = try #require(blocked.headers.first(name: .retryAfter).flatMap(Int.init))
            #expect(retryAfter >= 1 && retryAfter <= Int(policy.maxDelay))

            // Once the wait is over, the right password works and clears the account's count.
            try await server.sql.update("throttles").set("last_at", to: UnixTime.nowSeconds - 60).run()
            #expect(try await server.send(.POST, "/auth/login", json: ["email": "target@example.com", "password": TestServer.password]).status == .ok)
        }
    }

    @Test("At most 100 failures an hour per account, then no attempt is heard until the hour ends", arguments: TestDatabase.both)
    func hourlyCap(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            try await server.registerCustomer("capped@example.com")
            let key = Throttle.key("login:acct", "capped@example.com")
            let now = UnixTime.nowSeconds
            try await server.sql.raw("INSERT INTO throttles (key, window_start, count, last_at) VALUES (\(bind: key), \(bind: now - 600), 100, \(bind: now - 300))").run()
            let reply = try await server.send(.POST, "/auth/login", json: ["email": "capped@example.com", "password": TestServer.password])
            #expect(reply.status == .tooManyRequests)
            let retryAfter = try #require(reply.headers.first(name: .retryAfter).flatMap(Int.init))
            #expect(retryAfter > 2900 && retryAfter <= 3000)
        }
    }
}
