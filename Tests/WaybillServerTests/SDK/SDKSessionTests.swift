import Foundation
import Testing
import Vapor
import WaybillClient
import WaybillCore
@testable import WaybillServer

@Suite("WaybillSession keeps the tokens fresh and says when the session is over")
struct SDKSessionTests {
    /// Signs Ada in through the SDK and returns what her app stored.
    static func signedIn(_ server: TestServer, port: Int) async throws -> SessionTokens {
        try await server.registerCustomer("ada@example.com")
        let store = InMemoryTokenStore()
        try await server.sdk(port: port, store: store).signIn(email: "ada@example.com", password: TestServer.password)
        return try #require(await store.load())
    }

    @Test("Fifty requests that meet an expired access token cause exactly one refresh, and all of them succeed",
          arguments: TestDatabase.available)
    func fiftyRequestsOneRefreshAfter401(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            try await server.serving { port in
                var tokens = try await Self.signedIn(server, port: port)
                // The app comes back with a token the server no longer takes, though the device's
                // clock says it is still good: every request will be refused with 401 first.
                tokens.accessToken = try await server.expiredCopy(of: tokens.accessToken)
                let session = server.sdk(port: port, store: InMemoryTokenStore(tokens))
                let refusal = try await server.send(.GET, "/me", token: tokens.accessToken)
                #expect(refusal.status == .unauthorized)
                #expect(refusal.errorCode == "token_expired")

                let emails = try await withThrowingTaskGroup(of: String.self) { group in
                    for _ in 0..<50 { group.addTask { try await session.me().email } }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(emails.count == 50)
                #expect(Set(emails) == ["ada@example.com"])
                #expect(await session.refreshCount == 1)
                let now = try #require(await session.tokens)
                #expect(now.refreshToken != tokens.refreshToken)
                // The server issued one refresh token at sign-in and one for the single refresh.
                #expect(try await server.refreshTokensIssued(forSessionOf: now.accessToken) == 2)
            }
        }
    }

    @Test("Fifty requests made just before the access token expires share one refresh made before they go out",
          arguments: TestDatabase.available)
    func fiftyRequestsOneProactiveRefresh(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            try await server.serving { port in
                var tokens = try await Self.signedIn(server, port: port)
                tokens.expiresAt = Date().addingTimeInterval(10)  // within the session's 60 s leeway
                let session = server.sdk(port: port, store: InMemoryTokenStore(tokens))
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for _ in 0..<50 { group.addTask { _ = try await session.shipments() } }
                    try await group.waitForAll()
                }
                #expect(await session.refreshCount == 1)
                let now = try #require(await session.tokens)
                #expect(now.expiresAt > Date().addingTimeInterval(600))
                #expect(try await server.refreshTokensIssued(forSessionOf: now.accessToken) == 2)
            }
        }
    }

    @Test("A refresh token used elsewhere ends the session: the store is emptied, the app is told, and calls say so",
          arguments: TestDatabase.available)
    func reusedRefreshTokenEndsTheSession(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            try await server.serving { port in
                var tokens = try await Self.signedIn(server, port: port)
                // Someone who copied the refresh token uses it first.
                let stolen = try await server.send(.POST, "/auth/refresh", json: ["refreshToken": tokens.refreshToken])
                #expect(stolen.status == .ok)
                // Later the app wakes up with its (now expired) access token and the same refresh token.
                tokens.expiresAt = Date().addingTimeInterval(-1)
                let store = InMemoryTokenStore(tokens)
                let session = server.sdk(port: port, store: store)
                let events = session.events()

                do throws(WaybillClient.WaybillError) {
                    _ = try await session.me()
                    Issue.record("a reused refresh token still worked")
                } catch {
                    guard case .sessionEnded(let code) = error else { Issue.record("expected sessionEnded, got \(error)"); return }
                    #expect(code == "session_revoked")
                }
                var iterator = events.makeAsyncIterator()
                #expect(await iterator.next() == .ended(reason: "session_revoked"))
                #expect(await store.load() == nil)
                #expect(await session.isSignedIn == false)
                // The server ended the whole session: the thief's new tokens are dead too.
                let thief = try await server.send(.POST, "/auth/refresh", json: ["refreshToken": try #require(stolen.json["refreshToken"].string)])
                #expect(thief.status == .unauthorized)
                // Further calls do not reach for tokens that are gone.
                do throws(WaybillClient.WaybillError) {
                    _ = try await session.shipments()
                    Issue.record("a call worked after the session ended")
                } catch {
                    guard case .notSignedIn = error else { Issue.record("expected notSignedIn, got \(error)"); return }
                }
            }
        }
    }

    @Test("Tokens kept in a file survive a relaunch, readable by their owner only", arguments: TestDatabase.available)
    func fileTokenStoreSurvivesRelaunch(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            try await server.serving { port in
                try await server.registerCustomer("ada@example.com")
                let url = FileManager.default.temporaryDirectory.appendingPathComponent("waybill-sdk-\(UUID().uuidString)/session.json")
                defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
                try await server.sdk(port: port, store: FileTokenStore(url: url)).signIn(email: "ada@example.com", password: TestServer.password)
                let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
                #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
                let relaunched = server.sdk(port: port, store: FileTokenStore(url: url))
                #expect(try await relaunched.me().email == "ada@example.com")
            }
        }
    }
}
