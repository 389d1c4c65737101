import Fluent
import Foundation
import Testing
import Vapor
@testable import WaybillServer
import WaybillCore

@Suite("Password reset, codes and password changes")
struct PasswordTests {
    @Test("Reset by code: same answer for unknown addresses, verify, complete, all sessions end", arguments: TestDatabase.available)
    func resetFlow(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            try await server.registerCustomer("forgot@example.com")
            let before = try await server.login("forgot@example.com")

            let known = try await server.send(.POST, "/auth/password-reset", json: ["email": "forgot@example.com"])
            let unknown = try await server.send(.POST, "/auth/password-reset", json: ["email": "nobody@example.com"])
            #expect(known.status == .accepted)
            #expect(known.textWithoutRequestID == unknown.textWithoutRequestID)
            try await server.deliverMail()
            #expect(!server.mailer.messages.contains { $0.to.address == "nobody@example.com" })
            let code = try #require(server.mailer.lastCode(to: "forgot@example.com"))

            let wrong = try await server.send(.POST, "/auth/password-reset/verify", json: ["email": "forgot@example.com", "code": code == "000000" ? "111111" : "000000"])
            #expect(wrong.status == .badRequest)
            #expect(wrong.errorCode == "invalid_code")
            let right = try await server.send(.POST, "/auth/password-reset/verify", json: ["email": "forgot@example.com", "code": code])
            #expect(right.status == .ok)

            let weak = try await server.send(.POST, "/auth/password-reset/complete", json: ["email": "forgot@example.com", "code": code, "newPassword": "12345678"])
            #expect(weak.status == .unprocessableEntity)
            #expect(weak.json["error"]["fields"]["newPassword"].string == "too_common")

            let done = try await server.send(.POST, "/auth/password-reset/complete", json: ["email": "forgot@example.com", "code": code, "newPassword": "a-brand-new-secret"])
            #expect(done.status == .ok)

            // Every earlier session is over; the old password no longer works; the new one does.
            #expect(try await server.send(.GET, "/me", token: before.access).status == .unauthorized)
            #expect(try await server.send(.POST, "/auth/refresh", json: ["refreshToken": before.refresh]).status == .unauthorized)
            #expect(try await server.send(.POST, "/auth/login", json: ["email": "forgot@example.com", "password": TestServer.password]).status == .unauthorized)
            _ = try await server.login("forgot@example.com", password: "a-brand-new-secret")

            // The code is spent.
            let reuse = try await server.send(.POST, "/auth/password-reset/complete", json: ["email": "forgot@example.com", "code": code, "newPassword": "yet-another-secret"])
            #expect(reuse.status == .badRequest)
        }
    }

    @Test("Codes are dead after five wrong tries, even for the right code", arguments: TestDatabase.available)
    func codeLocksAfterFiveTries(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            try await server.register("guess@example.com")
            let code = try await server.code(for: "guess@example.com")
            let wrongCode = String(format: "%06d", (Int(code)! + 1) % 1_000_000)
            for _ in 0..<OneTimeCodePolicy.maxAttempts {
                let reply = try await server.send(.POST, "/auth/verify-email", json: ["email": "guess@example.com", "code": wrongCode])
                #expect(reply.errorCode == "invalid_code")
            }
            let right = try await server.send(.POST, "/auth/verify-email", json: ["email": "guess@example.com", "code": code])
            #expect(right.status == .badRequest)
            #expect(right.errorCode == "invalid_code")
            let user = try #require(try await User.query(on: server.db).first())
            #expect(user.emailVerifiedAt == nil)
        }
    }

    @Test("The sixth wrong reset code answers the same bytes for a real account and an unknown one", arguments: TestDatabase.available)
    func lockedCodeDoesNotRevealTheAccount(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            try await server.registerCustomer("known@example.com")
            _ = try await server.send(.POST, "/auth/password-reset", json: ["email": "known@example.com"])
            _ = try await server.send(.POST, "/auth/password-reset", json: ["email": "unknown@example.com"])
            var last: [String: (HTTPStatus, String)] = [:]
            for email in ["known@example.com", "unknown@example.com"] {
                for _ in 0...OneTimeCodePolicy.maxAttempts {
                    let reply = try await server.send(.POST, "/auth/password-reset/complete",
                                                      json: ["email": email, "code": "000000", "newPassword": "a-brand-new-secret"])
                    last[email] = (reply.status, reply.textWithoutRequestID)
                }
            }
            #expect(last["known@example.com"]?.0 == .badRequest)
            #expect(last["known@example.com"]?.0 == last["unknown@example.com"]?.0)
            #expect(last["known@example.com"]?.1 == last["unknown@example.com"]?.1)
        }
    }

    @Test("Codes expire after ten minutes", arguments: TestDatabase.available)
    func codeExpires(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            try await server.registerCustomer("late@example.com")
            _ = try await server.send(.POST, "/auth/password-reset", json: ["email": "late@example.com"])
            let code = try await server.code(for: "late@example.com")
            let row = try #require(try await OneTimeCode.query(on: server.db).filter(\.$purpose == .passwordReset).first())
            #expect(abs(row.expiresAt.timeIntervalSinceNow - 600) < 30)
            #expect(row.codeHash != code && !row.codeHash.contains(code))
            row.expiresAt = Date().addingTimeInterval(-1)
            try await row.save(on: server.db)
            let reply = try await server.send(.POST, "/auth/password-reset/verify", json: ["email": "late@example.com", "code": code])
            #expect(reply.status == .badRequest)
            #expect(reply.errorCode == "invalid_code")
        }
    }

    @Test("Changing one's password ends the other sessions, keeps this one", arguments: TestDatabase.available)
    func changePassword(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            try await server.registerCustomer("change@example.com")
            let here = try await server.login("change@example.com")
            let elsewhere = try await server.login("change@example.com")

            let wrong = try await server.send(.POST, "/me/password", json: ["currentPassword": "nope-nope-nope", "newPassword": "a-fresh-password"], token: here.access)
            #expect(wrong.status == .unprocessableEntity)
            #expect(wrong.json["error"]["fields"]["currentPassword"].string == "incorrect")

            let ok = try await server.send(.POST, "/me/password", json: ["currentPassword": TestServer.password, "newPassword": "a-fresh-password"], token: here.access)
            #expect(ok.status == .ok)
            #expect(try await server.send(.GET, "/me", token: here.access).status == .ok)
            #expect(try await server.send(.GET, "/me", token: elsewhere.access).status == .unauthorized)
            _ = try await server.login("change@example.com", password: "a-fresh-password")
        }
    }

    @Test("People edit their own details; validation names each bad field", arguments: TestDatabase.available)
    func updateProfile(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            try await server.registerCustomer("edit@example.com")
            let tokens = try await server.login("edit@example.com")
            let ok = try await server.send(.PATCH, "/me", json: ["city": " Genève ", "postalCode": "1204", "role": "manager"], token: tokens.access)
            #expect(ok.status == .ok)
            #expect(ok.json["city"].string == "Genève")
            #expect(ok.json["role"].string == "customer", "role is not editable through /me")
            #expect(ok.json["firstName"].string == "Ada")

            let bad = try await server.send(.PATCH, "/me", json: ["lastName": "", "companyName": "Not A Company"], token: tokens.access)
            #expect(bad.status == .unprocessableEntity)
            #expect(bad.json["error"]["fields"]["companyName"].string == "not_a_company")
            #expect(bad.json["error"]["fields"]["lastName"].string == "required")
        }
    }
}
