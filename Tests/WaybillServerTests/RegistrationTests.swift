import Fluent
import Foundation
import Testing
import Vapor
@testable import WaybillServer
import WaybillCore

@Suite("Registration and email verification")
struct RegistrationTests {
    @Test("A customer registers, confirms the mailed code, then signs in", arguments: TestDatabase.available)
    func registerVerifyLogin(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let form: [String: any Sendable] = [
                "firstName": "Ada", "lastName": "Muster", "address": "Bahnhofstrasse 1", "postalCode": "8001",
                "city": "Zürich", "email": "Ada@Example.com ", "password": TestServer.password, "isCompany": false,
                "nickname": "unknown fields are ignored", "role": "manager",
            ]
            let registered = try await server.send(.POST, "/auth/register", json: form)
            #expect(registered.status == .created)
            #expect(registered.json["status"].string == "SUCCESS")
            #expect(!registered.json["accessToken"].exists, "registration must not sign in")

            // Not yet confirmed: the password is right, but sign-in is refused with its own code.
            let early = try await server.send(.POST, "/auth/login", json: ["email": "ada@example.com", "password": TestServer.password])
            #expect(early.status == .forbidden)
            #expect(early.errorCode == "email_not_verified")

            let code = try await server.code(for: "ada@example.com")
            #expect(code.count == 6)
            let verified = try await server.send(.POST, "/auth/verify-email", json: ["email": "ada@example.com", "code": code])
            #expect(verified.status == .ok)

            let login = try await server.send(.POST, "/auth/login", json: ["email": "ADA@example.com", "password": TestServer.password])
            #expect(login.status == .ok)
            #expect(login.json["role"].string == "customer", "nobody registers themselves as a manager")
            #expect(login.json["tokenType"].string == "Bearer")
            #expect(login.json["expiresIn"].int == 900)
            #expect(login.json["user"]["email"].string == "ada@example.com")
            #expect(login.json["user"]["city"].string == "Zürich")
            #expect(login.json["user"]["emailVerified"].bool == true)
            #expect(!login.json["user"]["passwordHash"].exists)

            let me = try await server.send(.GET, "/me", token: try #require(login.json["accessToken"].string))
            #expect(me.status == .ok)
            #expect(me.json["firstName"].string == "Ada")

            // A used code does not work twice.
            let again = try await server.send(.POST, "/auth/verify-email", json: ["email": "ada@example.com", "code": code])
            #expect(again.status == .badRequest)
        }
    }

    @Test("Missing fields are all listed in one 422", arguments: TestDatabase.available)
    func missingFieldsListed(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let reply = try await server.send(.POST, "/auth/register", json: ["email": "x@example.com", "unknownField": 42])
            #expect(reply.status == .unprocessableEntity)
            #expect(reply.errorCode == "validation_failed")
            #expect(reply.json["error"]["fields"].keys == ["firstName", "lastName", "address", "postalCode", "city", "password", "isCompany"])
            #expect(reply.json["error"]["message"].string?.isEmpty == false)
        }
    }

    @Test("Invalid values are each named: email, password, postal code, company name", arguments: TestDatabase.available)
    func invalidValuesListed(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let reply = try await server.send(.POST, "/auth/register", json: [
                "firstName": "  ", "lastName": "Muster", "address": "Bahnhofstrasse 1", "postalCode": "80<01",
                "city": "Zürich", "email": "not-an-email", "password": "password123", "isCompany": true,
            ])
            #expect(reply.status == .unprocessableEntity)
            let fields = reply.json["error"]["fields"]
            #expect(fields["firstName"].string == "required")
            #expect(fields["email"].string == "invalid_email")
            #expect(fields["password"].string == "too_common")
            #expect(fields["postalCode"].string == "invalid")
            #expect(fields["companyName"].string == "required")
        }
    }

    @Test("Wrong types give 422, broken JSON 400, oversize bodies 413, never 500", arguments: TestDatabase.available)
    func malformedBodies(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let typed = try await server.send(.POST, "/auth/register", json: [
                "firstName": 1, "lastName": ["x"], "address": "a", "postalCode": "8001", "city": "c",
                "email": "t@example.com", "password": TestServer.password, "isCompany": "yes",
            ])
            #expect(typed.status == .unprocessableEntity)
            #expect(typed.json["error"]["fields"]["firstName"].string == "invalid_type")
            #expect(typed.json["error"]["fields"]["lastName"].string == "invalid_type")
            #expect(typed.json["error"]["fields"]["isCompany"].string == "invalid_type")

            let broken = try await server.send(.POST, "/auth/register", rawBody: #"{"firstName": "#)
            #expect(broken.status == .badRequest)
            #expect(broken.errorCode == "invalid_json")

            let array = try await server.send(.POST, "/auth/login", rawBody: "[1,2]")
            #expect(array.status == .unprocessableEntity)

            let empty = try await server.send(.POST, "/auth/login")
            #expect(empty.status == .badRequest)

            let huge = String(repeating: "a", count: 100_000)
            let oversize = try await server.send(.POST, "/auth/login", rawBody: #"{"email":"\#(huge)"}"#)
            #expect(oversize.status == .payloadTooLarge)
            #expect(oversize.errorCode == "payload_too_large")

            let unknownRoute = try await server.send(.GET, "/no-such-thing")
            #expect(unknownRoute.status == .notFound)
            #expect(unknownRoute.errorCode == "not_found")
        }
    }

    @Test("An email already in use gets 409, whatever its case", arguments: TestDatabase.available)
    func duplicateEmail(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            try await server.registerCustomer("taken@example.com")
            let reply = try await server.register("TAKEN@example.com")
            #expect(reply.status == .conflict)
            #expect(reply.errorCode == "email_in_use")
            let count = try await User.query(on: server.db).count()
            #expect(count == 1)
        }
    }

    @Test("A company registers with its company name", arguments: TestDatabase.available)
    func companyRegistration(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            try await server.registerCustomer("billing@acme.example", isCompany: true)
            let tokens = try await server.login("billing@acme.example")
            let me = try await server.send(.GET, "/me", token: tokens.access)
            #expect(me.json["isCompany"].bool == true)
            #expect(me.json["companyName"].string == "Acme SA")
        }
    }

    @Test("Passwords over bcrypt's 72 bytes are refused, not truncated", arguments: TestDatabase.available)
    func longPasswordRefused(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let long = String(repeating: "é", count: 37)  // 74 bytes, 37 characters
            let reply = try await server.send(.POST, "/auth/register", json: [
                "firstName": "A", "lastName": "B", "address": "a 1", "postalCode": "1000", "city": "Bern",
                "email": "long@example.com", "password": long, "isCompany": false,
            ])
            #expect(reply.status == .unprocessableEntity)
            #expect(reply.json["error"]["fields"]["password"].string == "too_long")
        }
    }

    @Test("Resending a verification code answers the same for unknown addresses", arguments: TestDatabase.available)
    func resendVerification(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            try await server.register("slow@example.com")
            let first = try await server.code(for: "slow@example.com")
            // The per-account pause between codes applies; move the first code back in time.
            try await OneTimeCode.query(on: server.db).set(\.$createdAt, to: Date().addingTimeInterval(-120)).update()

            let known = try await server.send(.POST, "/auth/resend-verification", json: ["email": "slow@example.com"])
            let unknown = try await server.send(.POST, "/auth/resend-verification", json: ["email": "nobody@example.com"])
            #expect(known.status == .accepted)
            #expect(unknown.status == .accepted)
            #expect(known.textWithoutRequestID == unknown.textWithoutRequestID)

            let second = try await server.code(for: "slow@example.com")
            // The new code replaces the old one.
            let old = try await server.send(.POST, "/auth/verify-email", json: ["email": "slow@example.com", "code": first])
            #expect(first == second || old.status == .badRequest)
            let ok = try await server.send(.POST, "/auth/verify-email", json: ["email": "slow@example.com", "code": second])
            #expect(ok.status == .ok)
        }
    }

    @Test("Codes are rate-limited per account: a burst of resends mails one code", arguments: TestDatabase.both)
    func resendIsRateLimited(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            try await server.register("burst@example.com")
            for _ in 0..<5 {
                let reply = try await server.send(.POST, "/auth/resend-verification", json: ["email": "burst@example.com"])
                #expect(reply.status == .accepted)
            }
            try await server.deliverMail()
            #expect(server.mailer.messages.filter { $0.to.address == "burst@example.com" }.count == 1)
        }
    }
}
