import Foundation
import Testing
import Vapor
import WaybillClient
import WaybillCore
@testable import WaybillServer

@Suite("The Swift SDK against a real server")
struct ClientSDKTests {
    @Test("Register, verify, sign in, read the profile and sign out through WaybillSession", arguments: TestDatabase.available)
    func accountJourney(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            try await server.app.server.start(address: .hostname("127.0.0.1", port: 0))
            defer { Task { await server.app.server.shutdown() } }
            let port = try #require(server.app.http.server.shared.localAddress?.port)
            let session = server.sdk(port: port)

            try await session.register(Registration(
                firstName: "Sia", lastName: "Dk", address: "Quai 1", postalCode: "1204", city: "Genève",
                email: "sia@example.com", password: TestServer.password, isCompany: false))

            // Errors arrive as the server's code and fields.
            do throws(WaybillClient.WaybillError) {
                try await session.signIn(email: "sia@example.com", password: TestServer.password)
                Issue.record("signed in before confirming the address")
            } catch .server(let problem) {
                #expect(problem.status == 403)
                #expect(problem.code == "email_not_verified")
            }
            do throws(WaybillClient.WaybillError) {
                try await session.register(Registration(firstName: "", lastName: "x", address: "x", postalCode: "1",
                                                        city: "x", email: "bad", password: "x", isCompany: false))
                Issue.record("an invalid form was accepted")
            } catch .server(let problem) {
                #expect(problem.status == 422)
                #expect(problem.fields["firstName"] == "required")
            }

            try await session.verifyEmail("sia@example.com", code: try await server.code(for: "sia@example.com"))
            let account = try await session.signIn(email: "sia@example.com", password: TestServer.password, device: (.ios, "tok"))
            #expect(account.role == .customer)
            #expect(try await session.me().city == "Genève")
            try await session.signOut()
            let signedOut = await session.tokens
            #expect(signedOut == nil)
        }
    }
}
