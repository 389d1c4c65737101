import Fluent
import Foundation
import SQLKit
import Testing
import Vapor
@testable import WaybillServer
import WaybillCore

/// The administration (issue "Insurance, subscription plans, loyalty points, and an administration
/// that keeps the platform safe", item 4), through the API on SQLite and PostgreSQL.
@Suite("Administration: bans, the reports queue, the audit log, re-authentication")
struct AdministrationTests {
    @Test("An admin bans a traveller: their sessions end, their coming trip is unpublished, the waiting request ends, the paid one is cancelled and refunded, and the audit log says who, what, before and after",
          arguments: TestDatabase.available)
    func banWithdrawsEverything(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let (cast, trip) = try await TripRequestTests.setUp(server)
            let ada = cast.customer, bob = cast.otherCustomer
            // Bob's request is accepted and paid; Carl's waits for an answer.
            let paidRequest = try #require(try await server.send(.POST, "/trips/\(trip)/requests", json: TripRequestTests.request(), token: bob.access).json["id"].string)
            let accepted = try await server.send(.POST, "/trip-requests/\(paidRequest)/accept", token: ada.access)
            let shipment = try #require(accepted.json["shipment"]["id"].string)
            try await TripRequestTests.pay(server, url: try #require(try await server.send(.GET, "/trip-requests/\(paidRequest)", token: bob.access).json["shipment"]["paymentUrl"].string))
            try await server.registerCustomer("carl@example.com")
            let carl = try await server.login("carl@example.com")
            let waiting = try #require(try await server.send(.POST, "/trips/\(trip)/requests",
                                                             json: TripRequestTests.request(extra: ["grams": 500]), token: carl.access).json["id"].string)

            // A manager runs the operation; banning is the administration's.
            let byManager = try await server.send(.POST, "/users/\(ada.userID)/restrictions", json: ["kind": "banned", "reason": "Fake trips"], token: cast.manager.access)
            #expect(byManager.status == .forbidden)
            let admin = try await server.makeAdmin(cast.manager)
            let banned = try await server.send(.POST, "/users/\(ada.userID)/restrictions",
                                               json: ["kind": "banned", "reason": "Fake trips reported by three senders"], token: admin)
            #expect(banned.status == .created, "\(banned)")
            let me = try await server.send(.GET, "/me", token: ada.access)
            #expect(me.status == .forbidden && me.errorCode == "account_disabled", "\(me)")
            #expect(try await Session.query(on: server.db).filter(\.$user.$id == UserID(uuidString: ada.userID)!).filter(\.$revokedAt == nil).count() == 0,
                    "every session of hers ended")

            // In the ban's transaction: the trip is unpublished, Carl's request ended and Carl told.
            #expect(try await server.send(.GET, "/trip-requests/\(waiting)", token: carl.access).json["status"].string == "cancelled")
            let found = try await server.send(.GET, "/travel/search?from=CH-VD&to=CH-ZH&category=small_parcel&grams=500", token: bob.access)
            #expect(found.json["items"].array.isEmpty, "\(found)")
            let carlInbox = try await server.send(.GET, "/notifications", token: carl.access)
            #expect(carlInbox.json["items"].array.contains { ($0["body"].string ?? "").contains("withdrawn by the platform") }, "\(carlInbox)")
            // Then the job: Bob's paid shipment is cancelled and refunded, the request follows.
            _ = try await server.deliverMail()
            _ = try await server.deliverMail()
            let order = try await server.send(.GET, "/orders/\(shipment)", token: bob.access)
            #expect(order.json["status"].string == "cancelled" && order.json["payment"]["status"].string == "refunded", "\(order)")
            #expect(try await server.send(.GET, "/trip-requests/\(paidRequest)", token: bob.access).json["status"].string == "cancelled")

            // The audit log: the ban, with who, the account before and after, the reason, the request id.
            let log = try await server.send(.GET, "/admin/audit?target=\(ada.userID)", token: admin)
            #expect(log.status == .ok, "\(log)")
            let ban = try #require(log.json["items"].array.first { $0["action"].string == "account.banned" }, "\(log)")
            #expect(ban["actorId"].string == cast.manager.userID && ban["reason"].string == "Fake trips reported by three senders")
            #expect((ban["before"].string ?? "").contains("\"role\":\"customer\"") && !(ban["before"].string ?? "").contains("banned"))
            #expect((ban["after"].string ?? "").contains("\"restriction\":\"banned\""))
            #expect((ban["requestId"].string ?? "").isEmpty == false)
            // Granting admin at the machine is in the log too, as the operator's.
            let grants = try await server.send(.GET, "/admin/audit?action=capability.granted", token: admin)
            #expect(grants.json["items"].array.contains { $0["targetId"].string == cast.manager.userID && $0["actorId"].exists == false }, "\(grants)")
        }
    }

    @Test("Payouts to a banned traveller are frozen, and paid once the ban is lifted", arguments: TestDatabase.available)
    func payoutsFrozenUntilLifted(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let (cast, trip) = try await TripRequestTests.setUp(server)
            let ada = cast.customer, bob = cast.otherCustomer
            let id = try #require(try await server.send(.POST, "/trips/\(trip)/requests", json: TripRequestTests.request(), token: bob.access).json["id"].string)
            let shipment = try #require(try await server.send(.POST, "/trip-requests/\(id)/accept", token: ada.access).json["shipment"]["id"].string)
            try await TripRequestTests.pay(server, url: try #require(try await server.send(.GET, "/trip-requests/\(id)", token: bob.access).json["shipment"]["paymentUrl"].string))
            _ = try await server.send(.POST, "/trip-requests/\(id)/pickup", token: ada.access)
            _ = try await server.deliverMail()
            let code = try #require(server.mailer.lastCode(to: "bea@example.com"))
            // Banned between delivering and being paid: the payout waits.
            let admin = try await server.makeAdmin(cast.manager)
            #expect(try await server.send(.POST, "/trip-requests/\(id)/deliver", json: ["code": code], token: ada.access).json["status"].string == "delivered")
            let banned = try await server.send(.POST, "/users/\(ada.userID)/restrictions", json: ["kind": "banned", "reason": "Under investigation"], token: admin)
            let restriction = try #require(banned.json["id"].int)
            _ = try await server.deliverMail()
            let payouts = { try await LedgerRecord.query(on: server.db).filter(\.$shipmentID == OrderID(uuidString: shipment)!).filter(\.$kind == .payout).count() }
            #expect(try await payouts() == 0)
            let frozen = try await OutboxMessage.query(on: server.db).filter(\.$kind == Outbox.travellerPayoutKind).first()
            #expect(frozen?.lastError?.contains("payouts_frozen") == true || frozen?.lastError?.contains("frozen") == true, "\(String(describing: frozen?.lastError))")
            // Lifted: the payout is queued again and paid once.
            let lifted = try await server.send(.DELETE, "/users/\(ada.userID)/restrictions/\(restriction)", token: admin)
            #expect(lifted.status == .ok, "\(lifted)")
            _ = try await server.deliverMail()
            #expect(try await payouts() == 1)
            let actions = try await server.send(.GET, "/admin/audit?target=\(ada.userID)", token: admin).json["items"].array.compactMap { $0["action"].string }
            #expect(actions.prefix(2) == ["account.restriction_lifted", "account.banned"], "\(actions)")
        }
    }

    @Test("Admin actions need a password proven in the last 15 minutes: after that, 403 until the admin enters it again; a wrong one is 422",
          arguments: TestDatabase.available)
    func recentReauthentication(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            _ = try await server.makeAdmin(cast.manager)
            #expect(try await server.send(.GET, "/admin/audit", token: cast.manager.access).status == .ok)
            server.clock.advance(minutes: 16)
            // The access token has expired too: refreshing keeps the session, not its sign-in's freshness.
            let refreshed = try await server.send(.POST, "/auth/refresh", json: ["refreshToken": cast.manager.refresh])
            let token = try #require(refreshed.json["accessToken"].string, "\(refreshed)")
            let stale = try await server.send(.GET, "/admin/audit", token: token)
            #expect(stale.status == .forbidden && stale.errorCode == "reauthentication_required", "\(stale)")
            let ban = try await server.send(.POST, "/users/\(cast.customer.userID)/restrictions", json: ["kind": "banned", "reason": "x"], token: token)
            #expect(ban.errorCode == "reauthentication_required")
            let wrong = try await server.send(.POST, "/auth/reauthenticate", json: ["password": "not-my-password"], token: token)
            #expect(wrong.status == .unprocessableEntity && wrong.json["error"]["fields"]["password"].string == "invalid", "\(wrong)")
            let right = try await server.send(.POST, "/auth/reauthenticate", json: ["password": TestServer.password], token: token)
            #expect(right.status == .noContent, "\(right)")
            #expect(try await server.send(.GET, "/admin/audit", token: token).status == .ok)
            // Re-authenticating is nobody else's business: a non-admin may do it, and still sees no log.
            #expect(try await server.send(.POST, "/auth/reauthenticate", json: ["password": TestServer.password], token: cast.customer.access).status == .noContent)
            #expect(try await server.send(.GET, "/admin/audit", token: cast.customer.access).status == .forbidden)
        }
    }

    @Test("A review is reported by someone who read it, never by its author; an admin decides it once, never one about themself, and the decision is audited",
          arguments: TestDatabase.available)
    func reportsQueue(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let (_, aboutLuca, aboutAda) = try await server.ratedDelivery(cast, comment: "=HYPERLINK(\"x\") rude driver")

            let own = try await server.send(.POST, "/ratings/\(aboutLuca)/reports", json: ["reason": "other"], token: cast.customer.access)
            #expect(own.status == .unprocessableEntity && own.json["error"]["fields"]["ratingId"].string == "self", "\(own)")
            let filed = try await server.send(.POST, "/ratings/\(aboutLuca)/reports", json: ["reason": "inappropriate_content", "note": "Insulting"], token: cast.driver.access)
            #expect(filed.status == .created && filed.json["ratingId"].string == aboutLuca && filed.json["reportedUserId"].string == cast.customer.userID, "\(filed)")
            let reportID = try #require(filed.json["id"].string)

            // The queue is the administration's, not the managers'.
            #expect(try await server.send(.GET, "/reports", token: cast.manager.access).status == .forbidden)
            let admin = try await server.makeAdmin(cast.otherDriver)
            let queue = try await server.send(.GET, "/reports?status=pending", token: admin)
            #expect(queue.json["items"].array.compactMap { $0["id"].string } == [reportID], "\(queue)")
            let reviewed = try await server.send(.PATCH, "/reports/\(reportID)", json: ["status": "reviewed", "note": "Watching this sender"], token: admin)
            #expect(reviewed.status == .ok && reviewed.json["status"].string == "reviewed" && reviewed.json["decidedBy"].string == cast.otherDriver.userID, "\(reviewed)")
            let acted = try await server.send(.PATCH, "/reports/\(reportID)", json: ["status": "action_taken"], token: admin)
            #expect(acted.json["status"].string == "action_taken")
            let again = try await server.send(.PATCH, "/reports/\(reportID)", json: ["status": "dismissed"], token: admin)
            #expect(again.status == .conflict && again.errorCode == "invalid_transition", "closed reports stay closed")
            #expect(try await server.send(.PATCH, "/reports/\(UUID())", json: ["status": "dismissed"], token: admin).status == .notFound)

            // An admin who is the subject of a report does not decide it.
            let aboutAdmin = try await server.send(.POST, "/ratings/\(aboutAda)/reports", json: ["reason": "harassment"], token: cast.customer.access)
            #expect(aboutAdmin.status == .created, "\(aboutAdmin)")
            let luca = try await server.makeAdmin(cast.driver)
            let selfDecided = try await server.send(.PATCH, "/reports/\(try #require(aboutAdmin.json["id"].string))", json: ["status": "dismissed"], token: luca)
            #expect(selfDecided.status == .conflict && selfDecided.errorCode == "cannot_modify_self", "\(selfDecided)")

            // Every decision is in the log, and the export is CSV a spreadsheet cannot run.
            let decisions = try await server.send(.GET, "/admin/audit?action=report.decided", token: admin).json["items"].array
            #expect(decisions.count == 2 && decisions.allSatisfy { $0["targetId"].string == reportID })
            let csv = try await server.send(.GET, "/admin/audit.csv?action=report.decided", token: admin)
            #expect(csv.status == .ok && csv.headers.contentType?.subType == "csv")
            let lines = csv.text.split(separator: "\r\n")
            #expect(lines.count == 3 && lines[0].hasPrefix("id,at_utc,actor,action"), "\(csv.text)")
            #expect(lines[1].contains("report.decided") && lines[2].contains("Watching this sender"))
        }
    }

    @Test("The audit log is append-only: the database refuses to change or delete a line", arguments: TestDatabase.both)
    func appendOnly(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            _ = try await server.makeAdmin(cast.manager)
            let count = try await AuditRecord.query(on: server.db).count()
            #expect(count >= 1)
            let sql = try #require(server.db as? any SQLDatabase)
            await #expect(throws: (any Error).self) { try await sql.raw("UPDATE audit_log SET reason = 'edited'").run() }
            await #expect(throws: (any Error).self) { try await sql.raw("DELETE FROM audit_log").run() }
            #expect(try await AuditRecord.query(on: server.db).count() == count)
            #expect(try await AuditRecord.query(on: server.db).filter(\.$reason == "edited").count() == 0)
        }
    }

    @Test("Bad audit searches are clear 4xx answers: an unknown action, a reversed period, a limit out of range")
    func badSearches() async throws {
        try await TestServer.run(.sqlite) { server in
            let cast = try await server.cast()
            let admin = try await server.makeAdmin(cast.manager)
            #expect(try await server.send(.GET, "/admin/audit?action=account.deleted", token: admin).status == .badRequest)
            let reversed = try await server.send(.GET, "/admin/audit?from=2026-11-20T00:00:00Z&to=2026-11-01T00:00:00Z", token: admin)
            #expect(reversed.status == .unprocessableEntity && reversed.json["error"]["fields"]["to"].string == "before_from", "\(reversed)")
            #expect(try await server.send(.GET, "/admin/audit?limit=0", token: admin).status == .badRequest)
            #expect(try await server.send(.GET, "/admin/audit?actor=nobody", token: admin).status == .badRequest)
        }
    }

    @Test("On the web an admin decides a report, reads the audit log and downloads it; after 15 minutes the administration asks for the password again and comes back",
          arguments: TestDatabase.available)
    func inTheWebApp(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let review = try await server.ratedDelivery(cast, comment: "Buy cheap watches at spam.example").ofDriver
            let report = try #require(try await server.send(.POST, "/ratings/\(review)/reports", json: ["reason": "spam"], token: cast.driver.access).json["id"].string)

            // A manager has no administration.
            let boss = TestBrowser(server)
            _ = try await boss.signIn("boss@courier.example")
            #expect(try await boss.get("/admin").status == .forbidden)
            #expect(!(try await boss.get("/orders").html.contains("href=\"/admin\"")))

            _ = try await server.makeAdmin(cast.otherDriver)
            let mia = TestBrowser(server)
            _ = try await mia.signIn("mia@courier.example")
            #expect(try await mia.get("/orders").html.contains("href=\"/admin\""), "the menu leads to the administration")
            let queue = try await mia.get("/admin")
            #expect(queue.status == .ok && queue.html.contains("Buy cheap watches at spam.example") && queue.html.contains("data-report=\"\(report.lowercased())\""))
            let decided = try await mia.post("/admin/reports/\(report)", ["status": "dismissed", "note": "An advert, removed by the author", "return": "/admin?status=pending"],
                                             from: "/admin")
            #expect(decided.status == .seeOther && decided.location == "/admin?status=pending", "\(decided.status)")
            #expect(try await mia.get("/admin?status=dismissed").html.contains("An advert, removed by the author"))
            let log = try await mia.get("/admin/audit?action=report.decided")
            #expect(log.status == .ok && log.html.contains("Report decided") && log.html.contains("An advert, removed by the author"))
            let csv = try await mia.get("/admin/audit.csv?action=report.decided")
            #expect(csv.status == .ok && csv.headers.first(name: .contentType)?.hasPrefix("text/csv") == true && csv.html.contains("report.decided"))
            _ = try await mia.get("/lang/fr?back=/admin/audit")
            let french = try await mia.get("/admin/audit")
            #expect(french.html.contains("Journal d’audit") && french.html.contains("Signalement décidé"))
            _ = try await mia.get("/lang/en?back=/admin")

            // Fifteen minutes on: the pages ask for the password again, then come back.
            server.clock.advance(minutes: 16)
            let stale = try await mia.get("/admin/audit?action=report.decided")
            #expect(stale.status == .seeOther && stale.location?.hasPrefix("/confirm-password?next=") == true, "\(stale.status) \(stale.location ?? "")")
            let ask = try await mia.get(try #require(stale.location))
            #expect(ask.status == .ok && ask.html.contains("name=\"password\""))
            let next = "/admin/audit?action=report.decided"
            let wrong = try await mia.post("/confirm-password", ["password": "nope-nope-nope", "next": next], from: "/confirm-password")
            #expect(wrong.status == .unprocessableEntity && wrong.html.contains("That is not your password."))
            let right = try await mia.post("/confirm-password", ["password": TestServer.password, "next": next], from: "/confirm-password")
            #expect(right.status == .seeOther && right.location == next)
            #expect(try await mia.get(next).status == .ok)
            // A form sent once the password is stale comes back to the page it was on.
            server.clock.advance(minutes: 16)
            let late = try await mia.post("/users/\(cast.customer.userID)/restrictions", ["kind": "banned", "reason": "x", "return": "/users/\(cast.customer.userID)"],
                                          from: "/confirm-password")
            #expect(late.status == .seeOther && late.location?.contains("next=%2Fusers%2F") == true, "\(late.status) \(late.location ?? "") \(late.headers) \(late.html)")
            #expect(try await RestrictionRecord.query(on: server.db).count() == 0, "nothing was done")
        }
    }

    @Test("An admin hides a message, a review, a trip and a profile picture from everyone but their author, with a reason, and shows each again; every step is audited",
          arguments: TestDatabase.available)
    func hideAndRestore(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let (cast, trip) = try await TripRequestTests.setUp(server)
            let ada = cast.customer, bob = cast.otherCustomer
            let admin = try await server.makeAdmin(cast.otherDriver)
            // A request puts Ada and Bob in a conversation; Ada's message is the one hidden.
            let request = try #require(try await server.send(.POST, "/trips/\(trip)/requests", json: TripRequestTests.request(), token: bob.access).json["id"].string)
            let conversation = try #require(try await server.send(.POST, "/conversations", json: ["subject": ["kind": "request", "id": request]], token: ada.access).json["id"].string)
            let message = try #require(try await server.send(.POST, "/conversations/\(conversation)/messages", json: ["text": "Buy my watches", "clientMessageId": "ada-1"], token: ada.access).json["id"].string)

            let noReason = try await server.send(.PUT, "/admin/content/message/\(message)", json: ["hidden": true], token: admin)
            #expect(noReason.status == .unprocessableEntity && noReason.json["error"]["fields"]["reason"].string == "required", "\(noReason)")
            #expect(try await server.send(.PUT, "/admin/content/message/\(message)", json: ["hidden": true, "reason": "x"], token: cast.manager.access).status == .forbidden)
            let hidden = try await server.send(.PUT, "/admin/content/message/\(message)", json: ["hidden": true, "reason": "Advertising"], token: admin)
            #expect(hidden.status == .ok && hidden.json["hidden"].bool == true && hidden.json["authorId"].string?.lowercased() == ada.userID.lowercased(), "\(hidden)")
            #expect(try await server.send(.PUT, "/admin/content/message/\(message)", json: ["hidden": true, "reason": "Again"], token: admin).status == .conflict)
            let seen = try await server.send(.GET, "/conversations/\(conversation)/messages", token: bob.access).json["items"].array.first { $0["id"].string == message }
            #expect(seen?["text"].string == "" && seen?["hiddenAt"].exists == true, "\(String(describing: seen))")
            _ = try await server.send(.PUT, "/admin/content/message/\(message)", json: ["hidden": false], token: admin)
            let back = try await server.send(.GET, "/conversations/\(conversation)/messages", token: bob.access).json["items"].array.first { $0["id"].string == message }
            #expect(back?["text"].string == "Buy my watches" && back?["hiddenAt"].exists == false)

            // The trip: out of searches and out of sight, but its traveller's; requests refused.
            #expect(try await server.send(.PUT, "/admin/content/trip/\(trip)", json: ["hidden": true, "reason": "Fake route"], token: admin).status == .ok)
            let search = "/travel/search?from=CH-VD&to=CH-ZH&category=small_parcel&grams=500"
            #expect(try await server.send(.GET, search, token: bob.access).json["items"].array.isEmpty)
            #expect(try await server.send(.GET, "/trips/\(trip)", token: bob.access).status == .notFound)
            #expect(try await server.send(.GET, "/trips/\(trip)", token: ada.access).status == .ok)
            #expect(try await server.send(.POST, "/trips/\(trip)/requests", json: TripRequestTests.request(), token: bob.access).status == .notFound)
            _ = try await server.send(.PUT, "/admin/content/trip/\(trip)", json: ["hidden": false, "reason": "Checked: real"], token: admin)
            #expect(try await server.send(.GET, search, token: bob.access).json["items"].array.count == 1)

            // A review: out of the profile and its count.
            let (order, review, _) = try await server.ratedDelivery(cast, sender: bob, comment: "Insults")
            let profile = { try await server.send(.GET, "/users/\(cast.driver.userID)/ratings", token: ada.access).json["count"].int }
            #expect(try await profile() == 1)
            #expect(try await server.send(.PUT, "/admin/content/review/\(review)", json: ["hidden": true, "reason": "Insulting"], token: admin).status == .ok)
            #expect(try await profile() == 0)
            let forDriver = try await server.send(.GET, "/shipments/\(order)/ratings", token: cast.driver.access).json["ratings"].array
            #expect(!forDriver.contains { $0["id"].string == review }, "the ratee no longer sees it")
            #expect(try await server.send(.GET, "/shipments/\(order)/ratings", token: bob.access).json["ratings"].array.contains { $0["id"].string == review },
                    "its author still does")
            _ = try await server.send(.PUT, "/admin/content/review/\(review)", json: ["hidden": false], token: admin)
            #expect(try await profile() == 1)

            // A profile picture: shown to nobody but its owner (and admins) while hidden.
            let uploaded = try await server.upload(.PUT, "/me/picture", parts: [.file("photo", SampleImages.squarePNG, type: "image/png", filename: "me.png")], token: ada.access)
            #expect(uploaded.status == .noContent, "\(uploaded)")
            #expect(try await server.send(.GET, "/users/\(ada.userID)/picture", token: bob.access).status == .ok)
            #expect(try await server.send(.PUT, "/admin/content/picture/\(ada.userID)", json: ["hidden": true, "reason": "Not a face"], token: admin).status == .ok)
            #expect(try await server.send(.GET, "/users/\(ada.userID)/picture", token: bob.access).status == .notFound)
            #expect(try await server.send(.GET, "/users/\(ada.userID)/picture", token: ada.access).status == .ok)
            #expect(try await server.send(.GET, "/users/\(ada.userID)/picture", token: admin).status == .ok)
            #expect(try await server.send(.PUT, "/admin/content/picture/\(UUID())", json: ["hidden": true, "reason": "x"], token: admin).status == .notFound)

            let lines = try await server.send(.GET, "/admin/audit?limit=200", token: admin).json["items"].array
            let actions = lines.compactMap { line -> String? in
                guard let action = line["action"].string, action.hasPrefix("content.") else { return nil }
                return "\(action) \(line["targetKind"].string ?? "")"
            }
            #expect(actions == ["content.hidden picture", "content.restored review", "content.hidden review", "content.restored trip", "content.hidden trip",
                                "content.restored message", "content.hidden message"], "\(actions)")
        }
    }

    @Test("An admin setting up an area and a reception counter with its staff leaves a line for each in the audit log", arguments: TestDatabase.available)
    func setupAudited(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let admin = try await server.makeAdmin(cast.otherDriver)
            try await TravelTests.importAreas(server)
            #expect(try await server.send(.POST, "/areas", json: AuthorizationMatrixTests.nyon, token: admin).status == .created)
            #expect(try await server.send(.DELETE, "/areas/CH-M5724", token: admin).status == .noContent)
            let counter = try await server.send(.POST, "/counters", json: ["name": "Guichet Gare", "address": ["street": "Place de la Gare 1", "postalCode": "1003", "city": "Lausanne"],
                                                                            "hours": ["weekly": ["08:00-12:00", "", "", "", "", "", ""]]], token: admin)
            let id = try #require(counter.json["id"].string, "\(counter)")
            #expect(try await server.send(.PUT, "/counters/\(id)/staff/\(cast.customer.userID)", token: admin).status == .ok)
            let lines = try await server.send(.GET, "/admin/audit?limit=200", token: admin).json["items"].array
            let actions = lines.compactMap(\.["action"].string)
            #expect(Array(actions.prefix(5)) == ["capability.granted", "counter.staff_changed", "counter.changed", "area.deleted", "area.changed"], "\(actions)")
            #expect(lines.contains { $0["action"].string == "area.changed" && $0["targetId"].string == "CH-M5724" && ($0["after"].string ?? "").contains("Nyon") })
        }
    }

    @Test("A review hidden before it is published stays out of the average when published, and joins it when shown again",
          arguments: TestDatabase.available)
    func hiddenBeforePublication(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let admin = try await server.makeAdmin(cast.otherDriver)
            let order = try await server.placeOrder(cast.customer.access)
            try await server.advance(order, to: .delivered, cast: cast)
            let pending = try #require(try await server.send(.POST, "/shipments/\(order)/ratings", json: ["stars": 1, "comment": "Rude"],
                                                             token: cast.customer.access).json["id"].string)
            #expect(try await server.send(.PUT, "/admin/content/review/\(pending)", json: ["hidden": true, "reason": "Insulting"], token: admin).status == .ok)
            _ = try await server.send(.POST, "/shipments/\(order)/ratings", json: ["stars": 5], token: cast.driver.access)  // publishes both
            let count = { try await server.send(.GET, "/users/\(cast.driver.userID)/ratings", token: cast.otherCustomer.access).json["count"].int }
            #expect(try await count() == 0)
            _ = try await server.send(.PUT, "/admin/content/review/\(pending)", json: ["hidden": false], token: admin)
            #expect(try await count() == 1)
        }
    }

    @Test("Staff cancelling someone's order is in the audit log, with the reason; a customer cancelling their own is not a staff action",
          arguments: TestDatabase.available)
    func orderCancellationsAudited(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let admin = try await server.makeAdmin(cast.otherDriver)
            let own = try await server.placeOrder(cast.customer.access)
            #expect(try await server.send(.POST, "/orders/\(own)/cancel", json: ["reason": "Changed my mind"], token: cast.customer.access).status == .ok)
            let theirs = try await server.placeOrder(cast.customer.access)
            #expect(try await server.send(.POST, "/orders/\(theirs)/cancel", json: ["reason": "Address outside our area"], token: cast.manager.access).status == .ok)
            let lines = try await server.send(.GET, "/admin/audit?action=order.cancelled", token: admin).json["items"].array
            #expect(lines.count == 1 && lines[0]["targetId"].string?.lowercased() == theirs.lowercased()
                    && lines[0]["actorId"].string?.lowercased() == cast.manager.userID.lowercased() && lines[0]["reason"].string == "Address outside our area",
                    "\(lines)")
        }
    }
}

extension TestServer {
    /// A delivery `sender` (the cast's customer unless said) sent and the cast's driver brought,
    /// rated both ways and so published: the sender's review of the driver, with `comment`, and the
    /// driver's of the sender.
    func ratedDelivery(_ cast: Cast, sender: Tokens? = nil, comment: String) async throws -> (order: String, ofDriver: String, ofSender: String) {
        let sender = sender ?? cast.customer
        let order = try await placeOrder(sender.access)
        try await advance(order, to: .delivered, cast: cast)
        _ = try await send(.POST, "/shipments/\(order)/ratings", json: ["stars": 1, "comment": comment], token: sender.access)
        _ = try await send(.POST, "/shipments/\(order)/ratings", json: ["stars": 5], token: cast.driver.access)
        let ratings = try await send(.GET, "/shipments/\(order)/ratings", token: cast.driver.access).json["ratings"].array
        let ofDriver = try #require(ratings.first { $0["rateeId"].string == cast.driver.userID }?["id"].string)
        let ofSender = try #require(ratings.first { $0["rateeId"].string == sender.userID }?["id"].string)
        return (order, ofDriver, ofSender)
    }
}
