import Fluent
import Foundation
import Testing
import Vapor
import WaybillCore
@testable import WaybillServer

/// Reception counters (issue "Counters, timeslots and QR hand-overs", item 1) through the API.
@Suite("Counters: admins set them up with their hours and staff; drop-off slots follow their hours")
struct CounterTests {
    static func body(name: String = "Guichet Gare", weekly: [String] = Array(repeating: "00:00-24:00", count: 7), holidays: [String] = [],
                     exceptions: [[String: any Sendable]] = []) -> [String: any Sendable] {
        let address: [String: any Sendable] = ["street": "Place de la Gare 1", "postalCode": "1003", "city": "Lausanne", "latitude": 46.5167, "longitude": 6.6291]
        let hours: [String: any Sendable] = ["weekly": weekly, "holidays": holidays, "exceptions": exceptions]
        return ["name": name, "address": address, "timeZone": "Europe/Zurich", "hours": hours]
    }

    @Test("An admin adds a counter with its hours and names its staff, who get the counter capability; others may not; everyone sees whether it is open",
          arguments: TestDatabase.available)
    func setUp(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            #expect(try await server.send(.POST, "/counters", json: Self.body(), token: cast.manager.access).status == .forbidden, "not every manager")
            let admin = try await server.makeAdmin(cast.manager)
            let bad = try await server.send(.POST, "/counters", json: Self.body(name: " ", weekly: ["08:00-12:00, 11:00-13:00", "", "", "", "", "", ""],
                                                                                holidays: ["2026-02-30"]), token: admin)
            #expect(bad.status == .unprocessableEntity && bad.json["error"]["fields"]["hours.weekly.1"].string == "invalid", "\(bad)")
            let created = try await server.send(.POST, "/counters", json: Self.body(weekly: ["08:00-12:00, 13:30-18:00", "08:00-12:00", "", "", "", "", ""],
                                                                                    holidays: ["2026-12-25"],
                                                                                    exceptions: [["date": "2026-12-24", "hours": "08:00-10:00"]]), token: admin)
            #expect(created.status == .created, "\(created)")
            let id = try #require(created.json["id"].string)
            #expect(created.json["hours"]["weekly"][0].string == "08:00-12:00, 13:30-18:00" && created.json["hours"]["holidays"][0].string == "2026-12-25")
            #expect(created.json["hours"]["exceptions"][0]["hours"].string == "08:00-10:00")

            let seen = try await server.send(.GET, "/counters", token: cast.customer.access)
            #expect(seen.json["items"].array.map { $0["id"].string } == [id] && seen.json["items"][0]["openNow"].bool != nil)
            #expect(seen.json["items"][0]["staff"].exists == false, "staff are for admins")

            // Luca is named staff: he now holds `counter`.
            let named = try await server.send(.PUT, "/counters/\(id)/staff/\(cast.driver.userID)", token: admin)
            #expect(named.status == .ok && named.json["staff"].array.map { $0["userId"].string } == [cast.driver.userID], "\(named)")
            let luca = try #require(try await User.find(UserID(uuidString: cast.driver.userID), on: server.db))
            #expect(luca.capabilities.contains(.counter))
            #expect(try await server.send(.PUT, "/counters/\(id)/staff/\(cast.driver.userID)", token: cast.manager.access).status == .ok, "admin again: harmless")
            let removed = try await server.send(.DELETE, "/counters/\(id)/staff/\(cast.driver.userID)", token: admin)
            #expect(removed.json["staff"].exists == false)
            #expect(try await server.send(.PUT, "/counters/\(id)/staff/\(UUID().uuidString)", token: admin).status == .unprocessableEntity)
            #expect(try await server.send(.PUT, "/counters/\(UUID().uuidString)/staff/\(cast.driver.userID)", token: admin).status == .notFound)

            // Switched off: gone for customers.
            var off = Self.body()
            off["active"] = false
            #expect(try await server.send(.PUT, "/counters/\(id)", json: off, token: admin).json["active"].bool == false)
            #expect(try await server.send(.GET, "/counters", token: cast.customer.access).json["items"].array.isEmpty)
            #expect(try await server.send(.GET, "/counters/\(id)", token: cast.customer.access).status == .notFound)
            #expect(try await server.send(.GET, "/counters/\(id)", token: admin).status == .ok)
        }
    }

    @Test("A counter's drop-off slots follow its hours: unavailable on its holidays, available on its open days", arguments: TestDatabase.available)
    func dropOffSlots(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let admin = try await server.makeAdmin(cast.manager)
            let holiday = TimeslotTests.day(server, in: 2)
            let counter = try #require(try await server.send(.POST, "/counters", json: Self.body(holidays: [holiday.description]), token: admin).json["id"].string)
            let template = try await server.send(.POST, "/slot-templates", json: [
                "kind": "drop_off", "counterId": counter, "weekday": holiday.weekday.rawValue, "start": "09:00", "end": "11:00", "capacity": 10, "horizonDays": 14,
            ], token: cast.manager.access)
            #expect(template.status == .created && template.json["counterId"].string == counter, "\(template)")
            let noCounter = try await server.send(.POST, "/slot-templates", json: ["kind": "drop_off", "weekday": 1, "start": "09:00", "end": "11:00", "capacity": 1],
                                                  token: cast.manager.access)
            #expect(noCounter.json["error"]["fields"]["counterId"].string == "required")
            let slots = try await server.send(.GET, "/slots?kind=drop_off&counterId=\(counter)&from=\(holiday)&days=8", token: cast.customer.access)
            let states = slots.json["items"].array.map { "\($0["date"].string ?? ""):\($0["availability"].string ?? "")" }
            #expect(states == ["\(holiday):unavailable", "\(holiday.adding(days: 7)!):available"], "\(slots)")
            // The counter's closure holds for choosing too, not only for showing.
            let closedDay = try #require(slots.json["items"][0]["id"].string), openDay = try #require(slots.json["items"][1]["id"].string)
            #expect(try await server.send(.POST, "/slots/\(closedDay)/hold", token: cast.customer.access).errorCode == "slot_unavailable")
            #expect(try await server.send(.POST, "/slots/\(openDay)/hold", token: cast.customer.access).status == .ok)
            #expect(try await server.send(.GET, "/slots?kind=drop_off", token: cast.customer.access).status == .badRequest)
            #expect(try await server.send(.GET, "/slots?kind=delivery", token: cast.customer.access).status == .badRequest)
        }
    }

    @Test("In the web app an admin adds a counter with its hours, names its staff by email and switches it off; a manager who is not an admin may not; in French too",
          arguments: TestDatabase.available)
    func webPages(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let boss = TestBrowser(server)
            _ = try await boss.signIn("boss@courier.example")
            #expect(try await boss.get("/counters").status == .forbidden)
            _ = try await server.makeAdmin(cast.manager)
            boss.acceptLanguage = "fr"
            let page = try await boss.get("/counters")
            #expect(page.status == .ok && page.html.contains("Ajouter un guichet"))
            var fields = ["name": "Guichet Gare", "street": "Place de la Gare 1", "postalCode": "1003", "city": "Lausanne", "timeZone": "Europe/Zurich",
                          "day1": "08:00-12:00, 11:00-13:00", "holidays": "2026-12-25"]
            let bad = try await boss.post("/counters", fields, from: "/counters")
            #expect(bad.status == .unprocessableEntity && bad.html.contains("role=\"alert\""))
            fields["day1"] = "08:00-12:00, 13:30-18:00"
            #expect(try await boss.post("/counters", fields, from: "/counters").status == .seeOther)
            let listed = try await boss.get("/counters")
            let id = try #require(listed.html.components(separatedBy: "data-counter=\"").dropFirst().first?.prefix(36)).description
            #expect(listed.html.contains("Guichet Gare") && listed.html.contains("08:00-12:00, 13:30-18:00"))
            #expect(try await boss.post("/counters/\(id)/staff", ["email": "luca@courier.example"], from: "/counters").status == .seeOther)
            #expect(try await boss.get("/counters").html.contains("Luca"))
            #expect(try await boss.post("/counters/\(id)/staff", ["email": "nobody@example.com"], from: "/counters").status == .unprocessableEntity)
            #expect(try await boss.post("/counters/\(id)/active", ["active": "off"], from: "/counters").status == .seeOther)
            #expect(try await server.send(.GET, "/counters", token: cast.customer.access).json["items"].array.isEmpty)
        }
    }
}
