import Foundation
import Testing
import Vapor
import WaybillClient
import WaybillCore
@testable import WaybillServer

/// The administration through the Swift SDK and `waybill-client admin` (issue 19, item 4).
@Suite("The administration through the SDK and the command line")
struct SDKAdministrationTests {
    @Test("Through the SDK a driver reports a review, an admin confirms their password, decides the report, bans its author, reads the audit log and exports it",
          arguments: TestDatabase.available)
    func administrationThroughSDK(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            try await server.serving { port in
                let cast = try await server.cast()
                let review = try #require(RatingID(uuidString: try await server.ratedDelivery(cast, comment: "Rude").ofDriver))

                let luca = server.sdk(port: port)
                try await luca.signIn(email: "luca@courier.example", password: TestServer.password)
                let filed = try await luca.report(review: review, reason: .harassment, note: "Insults")
                #expect(filed.ratingId?.lowercased() == review.uuidString.lowercased() && filed.status == .pending)
                do throws(WaybillClient.WaybillError) {
                    _ = try await luca.moderationQueue()
                    Issue.record("a driver has no moderation queue")
                } catch { #expect(error.code == "forbidden") }

                _ = try await server.makeAdmin(cast.manager)
                let admin = server.sdk(port: port)
                try await admin.signIn(email: "boss@courier.example", password: TestServer.password)
                do throws(WaybillClient.WaybillError) {
                    try await admin.reauthenticate(password: "wrong-password-here")
                    Issue.record("a wrong password is refused")
                } catch { #expect(error.code == "invalid_credentials") }
                try await admin.reauthenticate(password: TestServer.password)
                let queue = try await admin.moderationQueue()
                #expect(queue.map(\.id) == [filed.id])
                let decided = try await admin.decide(report: try #require(UUID(uuidString: filed.id)), as: .actionTaken, note: "Author banned")
                #expect(decided.status == .actionTaken && decided.decisionNote == "Author banned")
                let ada = try #require(UserID(uuidString: cast.customer.userID))
                let ban = try await admin.ban(ada, reason: "Insulting drivers")
                #expect(ban.kind == .banned)

                let page = try await admin.auditLog(limit: 2)
                #expect(page.items.map(\.action.rawValue) == ["account.banned", "report.decided"] && page.nextBefore != nil, "\(page.items)")
                let older = try await admin.auditLog(before: page.nextBefore, limit: 200)
                #expect(older.items.contains { $0.action.rawValue == "capability.granted" && $0.targetId.lowercased() == cast.manager.userID.lowercased() })
                let bans = try await admin.auditLog(actor: try #require(UserID(uuidString: cast.manager.userID)), action: .accountBanned)
                #expect(bans.items.count == 1 && bans.items[0].reason == "Insulting drivers")
                let csv = String(decoding: try await admin.exportAuditLog(target: ada.uuidString), as: UTF8.self)
                #expect(csv.hasPrefix("id,at_utc,actor,action") && csv.contains("account.banned") && csv.contains("Insulting drivers"), "\(csv)")
            }
        }
    }

    @Test("waybill-client admin: confirm the password, list the reports, decide one, read the audit log and write it as CSV")
    func administrationThroughCLI() async throws {
        try await TestServer.run(.sqlite) { server in
            try await server.serving { port in
                let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("waybill-cli-\(UUID().uuidString)")
                try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
                defer { try? FileManager.default.removeItem(at: scratch) }
                let cast = try await server.cast()
                let review = try await server.ratedDelivery(cast, comment: "Rude").ofDriver
                let report = try #require(try await server.send(.POST, "/ratings/\(review)/reports", json: ["reason": "spam"], token: cast.driver.access).json["id"].string)
                _ = try await server.makeAdmin(cast.manager)

                let boss = CLI(server: "http://127.0.0.1:\(port)", sessionFile: scratch.appendingPathComponent("boss.json").path)
                #expect(try await boss.run("login", "--email", "boss@courier.example", "--password", TestServer.password).status == 0)
                let reauth = try await boss.run("admin", "reauth", "--password", TestServer.password)
                #expect(reauth.status == 0 && reauth.stdout.contains("Confirmed for 15 minutes"), "\(reauth)")
                let queue = try await boss.run("admin", "reports")
                #expect(queue.status == 0 && queue.stdout.contains(report) && queue.stdout.contains("spam") && queue.stdout.contains("review"), "\(queue)")
                let decided = try await boss.run("admin", "decide", report, "--as", "dismissed", "--note", "Not spam")
                #expect(decided.status == 0 && decided.stdout.contains("dismissed"), "\(decided)")
                let again = try await boss.run("admin", "decide", report, "--as", "reviewed", "--json")
                #expect(again.status == 1 && JSON(data: Data(again.stderr.utf8))["error"]["code"].string == "invalid_transition", "\(again)")
                let audit = try await boss.run("admin", "audit", "--action", "report.decided")
                #expect(audit.status == 0 && audit.stdout.contains("report.decided") && audit.stdout.contains("Not spam"), "\(audit)")
                let file = scratch.appendingPathComponent("audit.csv").path
                let written = try await boss.run("admin", "audit", "--csv", file)
                #expect(written.status == 0, "\(written)")
                let csv = try String(contentsOfFile: file, encoding: .utf8)
                #expect(csv.hasPrefix("id,at_utc,actor,action") && csv.contains("report.decided"), "\(csv)")
                #expect(try await boss.run("admin", "audit", "--action", "nothing").status != 0)
            }
        }
    }
}
