import Foundation
import Testing
import SQLKit
import Vapor
import WaybillClient
import WaybillCore
@testable import WaybillServer

@Suite("Route plans: managers plan the day, drivers get their stops in order")
struct RoutePlanTests {
    /// A place in Bern, `dx`/`dy` hundreds of metres east/north of the Bundesplatz.
    static func place(_ dx: Double, _ dy: Double, street: String = "Teststrasse 1") -> [String: any Sendable] {
        ["street": street, "postalCode": "3005", "city": "Bern", "latitude": 46.9466 + dy * 0.0009, "longitude": 7.4441 + dx * 0.0013]
    }

    func order(_ server: TestServer, _ cast: Cast, from: [String: any Sendable], to: [String: any Sendable], weight: String = "small") async throws -> String {
        try await server.placeOrder(cast.customer.access, extra: ["pickup": from, "dropoff": to, "weightClass": weight])
    }

    /// Every planned order's pickup comes before its delivery in one route (but for parcels already on
    /// board); arrivals only go forward.
    func checkShape(_ plan: JSON, onBoard: Set<String> = []) {
        for route in plan["routes"].array {
            var picked = Set<String>()
            var last = ""
            for stop in route["stops"].array {
                let id = stop["orderId"].string ?? ""
                if stop["kind"].string == "pickup" { picked.insert(id) }
                else { #expect(picked.contains(id) || onBoard.contains(id), "\(id) delivered before its pickup") }
                let arrival = stop["arrival"].string ?? ""
                #expect(arrival >= last, "arrivals go forward in \(route["driverName"].string ?? "")")
                last = arrival
            }
        }
    }

    @Test("A manager plans the open orders over the drivers on duty; applying gives each its driver; a driver sees their stops in order",
          arguments: TestDatabase.available)
    func planApplyAndDriverStops(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            try await server.goOnDuty(cast.driver.access)
            try await server.goOnDuty(cast.otherDriver.access)
            #expect(try await server.report(cast.driver.access, [(46.9466, 7.4300)]).status == .ok)
            #expect(try await server.report(cast.otherDriver.access, [(46.9466, 7.4600)]).status == .ok)
            // West and east of the centre, and one whose drop-off has no coordinates.
            let west1 = try await order(server, cast, from: Self.place(-8, 1), to: Self.place(-9, 3))
            let west2 = try await order(server, cast, from: Self.place(-7, -2), to: Self.place(-10, -1), weight: "medium")
            let east1 = try await order(server, cast, from: Self.place(8, 1), to: Self.place(10, 2))
            let east2 = try await order(server, cast, from: Self.place(7, -1), to: Self.place(9, -3))
            let nowhere = try await order(server, cast, from: Self.place(0, 0),
                                          to: ["street": "Unbekannt 1", "postalCode": "3005", "city": "Bern"])
            // Given to the eastern driver by hand: the plan keeps that.
            let manual = try await order(server, cast, from: Self.place(9, 0), to: Self.place(11, -1))
            #expect(try await server.send(.POST, "/orders/\(manual)/assign", json: ["driverId": cast.otherDriver.userID], token: cast.manager.access).status == .ok)

            let made = try await server.send(.POST, "/route-plans", json: ["seconds": 0.3], token: cast.manager.access)
            try #require(made.status == .created, "\(made)")
            let plan = made.json["plan"]
            #expect(plan["version"].int == 1 && plan["status"].string == "proposed")
            #expect(plan["matrixSource"].string?.hasPrefix("straight line") == true)
            #expect(plan["unplanned"].array.map { "\($0["orderId"].string ?? ""):\($0["reason"].string ?? "")" } == ["\(nowhere):no_coordinates"])
            checkShape(plan)
            var driverOf: [String: String] = [:]
            var counts: [String: Int] = [:]
            for route in plan["routes"].array {
                for stop in route["stops"].array {
                    let id = stop["orderId"].string!
                    driverOf[id] = route["driverId"].string
                    counts[id, default: 0] += 1
                }
            }
            #expect(counts == [west1: 2, west2: 2, east1: 2, east2: 2, manual: 2], "each order once as a pickup and once as a delivery")
            #expect(driverOf[manual] == cast.otherDriver.userID, "a manual assignment is kept")
            // Near is cheaper: the western orders go to the driver in the west.
            #expect(driverOf[west1] == cast.driver.userID && driverOf[west2] == cast.driver.userID)
            #expect(driverOf[east1] == cast.otherDriver.userID && driverOf[east2] == cast.otherDriver.userID)

            // Applying: each order to its planned driver, through the state machine.
            let planID = try #require(plan["id"].string)
            let applied = try await server.send(.POST, "/route-plans/\(planID)/apply", token: cast.manager.access)
            try #require(applied.status == .ok, "\(applied)")
            #expect(applied.json["plan"]["status"].string == "applied")
            let outcomes = Dictionary(uniqueKeysWithValues: applied.json["results"].array.map { ($0["orderId"].string!, $0["outcome"].string!) })
            #expect(outcomes == [west1: "assigned", west2: "assigned", east1: "assigned", east2: "assigned", manual: "unchanged"])
            for id in [west1, west2, east1, east2, manual] {
                let found = try #require(try await Order.find(OrderID(uuidString: id)!, on: server.db))
                #expect(found.status == .assigned && found.driverID?.uuidString == driverOf[id])
            }
            // Applied once only.
            let again = try await server.send(.POST, "/route-plans/\(planID)/apply", token: cast.manager.access)
            #expect(again.status == .conflict && again.errorCode == "plan_superseded")

            // The western driver's stops: their route, in order, with arrivals.
            let westRoute = try #require(plan["routes"].array.first { $0["driverId"].string == cast.driver.userID })
            let mine = try await server.send(.GET, "/drivers/me/route", token: cast.driver.access)
            #expect(mine.status == .ok)
            #expect(mine.json["stops"].array.map { "\($0["orderId"].string!)/\($0["kind"].string!)" }
                    == westRoute["stops"].array.map { "\($0["orderId"].string!)/\($0["kind"].string!)" })
            // After the pickup, only the delivery is ahead.
            try #require(try await server.send(.POST, "/orders/\(west1)/accept", token: cast.driver.access).status == .ok)
            try #require(try await server.send(.POST, "/orders/\(west1)/pickup", json: TestServer.cash(try await server.price(of: west1)),
                                               token: cast.driver.access).status == .ok)
            let after = try await server.send(.GET, "/drivers/me/route", token: cast.driver.access)
            #expect(after.json["stops"].array.filter { $0["orderId"].string == west1 }.map { $0["kind"].string } == ["delivery"])

            // The next plan is version 2; the picked-up parcel is only a delivery, in its driver's route.
            let next = try await server.send(.POST, "/route-plans", json: ["seconds": 0.2], token: cast.manager.access)
            #expect(next.json["plan"]["version"].int == 2)
            let west1Stops = next.json["plan"]["routes"].array.flatMap { route in
                route["stops"].array.filter { $0["orderId"].string == west1 }.map { "\(route["driverId"].string!)/\($0["kind"].string!)" }
            }
            #expect(west1Stops == ["\(cast.driver.userID)/delivery"])
            checkShape(next.json["plan"], onBoard: [west1])
            let latest = try await server.send(.GET, "/route-plans/latest", token: cast.manager.access)
            #expect(latest.json["version"].int == 2)
            #expect(try await server.send(.GET, "/route-plans/\(planID)", token: cast.manager.access).json["status"].string == "applied")
        }
    }

    @Test("Orders stay with the driver who has them; an off-duty driver's orders and an oversized one are left out with the reason",
          arguments: TestDatabase.available)
    func lockedOrdersAndReasons(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            try await server.goOnDuty(cast.driver.access)
            #expect(try await server.report(cast.driver.access, [(46.95, 7.44)]).status == .ok)
            let accepted = try await order(server, cast, from: Self.place(1, 1), to: Self.place(2, 2))
            try await server.advance(accepted, to: .accepted, cast: cast)
            let onBoard = try await order(server, cast, from: Self.place(-1, 1), to: Self.place(-2, 2))
            try await server.advance(onBoard, to: .inTransit, cast: cast)
            // Given by hand to a driver who is off duty.
            let offDuty = try await order(server, cast, from: Self.place(1, -1), to: Self.place(2, -2))
            #expect(try await server.send(.POST, "/orders/\(offDuty)/assign", json: ["driverId": cast.otherDriver.userID], token: cast.manager.access).status == .ok)
            let large = try await order(server, cast, from: Self.place(0, 1), to: Self.place(0, 2), weight: "large")

            let made = try await server.send(.POST, "/route-plans", json: ["seconds": 0.2, "capacity": 5], token: cast.manager.access)
            try #require(made.status == .created, "\(made)")
            let plan = made.json["plan"]
            let reasons = Dictionary(uniqueKeysWithValues: plan["unplanned"].array.map { ($0["orderId"].string!, $0["reason"].string!) })
            #expect(reasons == [offDuty: "driver_off_duty", large: "too_large"])
            let route = try #require(plan["routes"].array.first { $0["driverId"].string == cast.driver.userID })
            let stops = route["stops"].array.map { "\($0["orderId"].string!)/\($0["kind"].string!)" }
            #expect(Set(stops) == ["\(accepted)/pickup", "\(accepted)/delivery", "\(onBoard)/delivery"])
        }
    }

    @Test("A booked timeslot is the stop's time window: the plan arrives within it; a slot that ended, or one on a later day, leaves the order out with the reason",
          arguments: TestDatabase.available)
    func timeslotsAreWindows(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            // "Today's next two hours" end before the shift does, whenever the test runs.
            let cast = try await server.startWorkingDay(try await server.cast())
            try await server.goOnDuty(cast.driver.access)
            #expect(try await server.report(cast.driver.access, [(46.95, 7.44)]).status == .ok)
            let kept = try await order(server, cast, from: Self.place(1, 1), to: Self.place(2, 2))
            let ended = try await order(server, cast, from: Self.place(-1, 1), to: Self.place(-2, 2))
            let later = try await order(server, cast, from: Self.place(1, -1), to: Self.place(2, -2))
            // Slots written directly: today's next two hours (from now), one that ended, one in three days.
            let now = Int64(server.clock.now.timeIntervalSince1970 * 1000)
            let template = try #require(UUID(uuidString: try await TimeslotTests.template(server, cast, capacity: 10)))
            func slot(_ start: Int64, _ end: Int64, _ date: String) async throws -> SlotID {
                let record = SlotRecord()
                record.id = SlotID(rawValue: UUID())
                record.templateID = SlotTemplateID(rawValue: template)
                record.localDate = date
                record.startsAt = start
                record.endsAt = end
                record.capacity = 10
                record.booked = 0
                record.closed = false
                try await record.create(on: server.db)
                return record.id!
            }
            let soon = try await slot(now + 60 * 60_000, now + 3 * 3_600_000, "2000-01-01")
            let past = try await slot(now - 3 * 3_600_000, now - 60 * 60_000, "2000-01-02")
            let future = try await slot(now + 3 * 86_400_000, now + 3 * 86_400_000 + 7_200_000, "2000-01-03")
            for (order, slot) in [(kept, soon), (ended, past), (later, future)] {
                let booking = SlotBookingRecord()
                booking.id = SlotBookingID(rawValue: UUID())
                booking.slotID = slot
                booking.orderID = OrderID(uuidString: order)!
                booking.kind = .delivery
                booking.status = .booked
                booking.bookedBy = UserID(uuidString: cast.customer.userID)!
                booking.createdAt = now
                booking.updatedAt = now
                try await booking.create(on: server.db)
            }
            let made = try await server.send(.POST, "/route-plans", json: ["seconds": 0.2], token: cast.manager.access)
            try #require(made.status == .created, "\(made)")
            let plan = made.json["plan"]
            let reasons = Dictionary(uniqueKeysWithValues: plan["unplanned"].array.map { ($0["orderId"].string!, $0["reason"].string!) })
            #expect(reasons == [ended: "slot_missed", later: "slot_later"], "\(reasons)")
            let stops: [JSON] = plan["routes"].array.flatMap { $0["stops"].array }
            let stop = try #require(stops.first { $0["orderId"].string == kept && $0["kind"].string == "delivery" }, "\(plan)")
            let arrival = try #require(stop["arrival"].string.flatMap { ISO8601DateFormatter().date(from: $0) })
            let millis = Int64(arrival.timeIntervalSince1970 * 1000)
            #expect(millis >= now + 60 * 60_000 - 1000 && millis <= now + 3 * 3_600_000, "arrives within the slot")
        }
    }

    @Test("Planning is for dispatchers, within bounds, ten a minute; with nobody on duty every order says so")
    func boundsAndRefusals() async throws {
        try await TestServer.run(.sqlite) { server in
            let cast = try await server.cast()
            let waiting = try await order(server, cast, from: Self.place(0, 0), to: Self.place(1, 1))
            #expect(try await server.send(.POST, "/route-plans", json: [:], token: cast.customer.access).status == .forbidden)
            #expect(try await server.send(.POST, "/route-plans", json: [:], token: cast.driver.access).status == .forbidden)
            for bad: [String: any Sendable] in [["seconds": 100], ["capacity": 0], ["serviceMinutes": -1], ["seconds": "soon"]] {
                let reply = try await server.send(.POST, "/route-plans", json: bad, token: cast.manager.access)
                #expect([400, 422].contains(reply.status.code) && reply.json["error"]["code"].string != nil, "\(bad): \(reply)")
            }
            #expect(try await server.send(.GET, "/route-plans/not-an-id", token: cast.manager.access).status.code == 400)
            #expect(try await server.send(.GET, "/route-plans/\(UUID())", token: cast.manager.access).status == .notFound)
            #expect(try await server.send(.GET, "/route-plans/latest", token: cast.manager.access).status == .notFound)
            let lonely = try await server.send(.POST, "/route-plans", token: cast.manager.access)
            #expect(lonely.status == .created)
            #expect(lonely.json["plan"]["unplanned"].array.map { $0["reason"].string } == ["no_driver_on_duty"])
            #expect(lonely.json["plan"]["unplanned"][0]["orderId"].string == waiting)
            // Ten a minute: the burst of ten (one spent above) goes through, then 429 with Retry-After. A
            // slow machine may earn a token back meanwhile, so at least nine more pass before it.
            var passed = 0
            var refused: Reply?
            for _ in 0..<30 where refused == nil {
                let reply = try await server.send(.POST, "/route-plans", token: cast.manager.access)
                if reply.status == .created { passed += 1 } else { refused = reply }
            }
            let limit = try #require(refused, "never limited")
            #expect(limit.status == .tooManyRequests && limit.headers.first(name: "Retry-After") != nil && passed >= 9, "\(passed) then \(limit)")
        }
    }

    @Test("Through the SDK and the command-line client: a dispatcher plans and applies, a driver reads their stops")
    func sdkAndCommandLine() async throws {
        try await TestServer.run(.sqlite) { server in
            let cast = try await server.cast()
            try await server.goOnDuty(cast.driver.access)
            #expect(try await server.report(cast.driver.access, [(46.9466, 7.4441)]).status == .ok)
            let first = try await order(server, cast, from: Self.place(1, 1), to: Self.place(3, 2))
            let second = try await order(server, cast, from: Self.place(-1, 1), to: Self.place(-3, 2))
            try await server.serving { port in
                let manager = server.sdk(port: port)
                try await manager.signIn(email: "boss@courier.example", password: TestServer.password)
                #expect(try await manager.latestRoutePlan() == nil)
                let proposed = try await manager.planRoutes(seconds: 0.2)
                #expect(proposed.plan.version == 1 && proposed.results.isEmpty)
                let applied = try await manager.applyRoutePlan(UUID(uuidString: proposed.plan.id)!)
                #expect(Set(applied.results.map(\.outcome)) == [.assigned])
                let driver = server.sdk(port: port)
                try await driver.signIn(email: "luca@courier.example", password: TestServer.password)
                let stops = try await driver.myPlannedStops()
                #expect(Set(stops.map { $0.orderId.lowercased() }) == [first.lowercased(), second.lowercased()] && stops.count == 4)

                // The same from the command line.
                let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("plan-cli-\(UUID().uuidString)")
                try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
                defer { try? FileManager.default.removeItem(at: scratch) }
                let url = "http://127.0.0.1:\(port)"
                let boss = CLI(server: url, sessionFile: scratch.appendingPathComponent("boss.json").path)
                let luca = CLI(server: url, sessionFile: scratch.appendingPathComponent("luca.json").path)
                #expect(try await boss.run("login", "--email", "boss@courier.example", "--password", TestServer.password).status == 0)
                #expect(try await luca.run("login", "--email", "luca@courier.example", "--password", TestServer.password).status == 0)
                let made = try await boss.run("plan", "--seconds", "0.2", "--json")
                #expect(made.status == 0 && made.json["plan"]["version"].int == 2, "\(made)")
                let shown = try await boss.run("plan", "show")
                #expect(shown.status == 0 && shown.stdout.contains("Plan 2 (proposed)") && shown.stdout.contains("Luca"), "\(shown)")
                let planID = try #require(made.json["plan"]["id"].string)
                let apply = try await boss.run("plan", "apply", planID)
                #expect(apply.status == 0 && apply.stdout.contains("Plan 2 (applied)"), "\(apply)")
                let twice = try await boss.run("plan", "apply", planID)
                #expect(twice.status != 0 && twice.stderr.contains("plan"), "\(twice)")
                let mine = try await luca.run("plan", "mine")
                #expect(mine.status == 0 && mine.stdout.components(separatedBy: "pick up").count == 3, "\(mine)")
                #expect(try await luca.run("plan").status != 0, "a driver cannot plan")
            }
        }
    }

    @Test("In the web app a dispatcher plans, sees the routes and what is left out (in French), applies; the driver's day follows the plan",
          arguments: TestDatabase.available)
    func webPages(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            try await server.goOnDuty(cast.driver.access)
            #expect(try await server.report(cast.driver.access, [(46.9466, 7.4441)]).status == .ok)
            let far = try await order(server, cast, from: Self.place(6, 6), to: Self.place(8, 8))
            let near = try await order(server, cast, from: Self.place(1, 0), to: Self.place(2, 0))
            let lost = try await order(server, cast, from: Self.place(0, 0), to: ["street": "Unbekannt 1", "postalCode": "3005", "city": "Bern"])
            let boss = TestBrowser(server)
            boss.acceptLanguage = "fr"
            _ = try await boss.signIn("boss@courier.example")
            let empty = try await boss.get("/dispatch/routes")
            #expect(empty.status == .ok && empty.html.contains("Planifier les tournées") && empty.html.contains("id=\"route-plan-none\""))
            #expect(try await boss.get("/dispatch").html.contains("href=\"/dispatch/routes\""), "the menu leads to the routes")

            let made = try await boss.post("/dispatch/routes", ["seconds": "1", "capacity": "40"], from: "/dispatch/routes")
            let location = try #require(made.location, "\(made.status) \(made.html.prefix(300))")
            let page = try await boss.get(location)
            #expect(page.html.contains("Le plan 1 est prêt") && page.html.contains("data-status=\"proposed\""))
            #expect(page.html.contains("data-unplanned=\"\(lost.lowercased())\" data-reason=\"no_coordinates\""))
            #expect(page.html.contains("n’a pas de position sur la carte"))
            #expect(page.html.contains("Distances estimées à vol d’oiseau") && page.html.contains("id=\"route-map\""))
            // The board says why on the card of the order left out.
            #expect(try await boss.get("/dispatch").html.contains("data-unplanned-reason=\"no_coordinates\""))
            // The near order first: its pickup is the first stop.
            let nearPickup = try #require(page.html.range(of: "data-stop=\"\(near.lowercased())/pickup\""))
            let farPickup = try #require(page.html.range(of: "data-stop=\"\(far.lowercased())/pickup\""))
            #expect(nearPickup.lowerBound < farPickup.lowerBound)

            let latest = try await server.send(.GET, "/route-plans/latest", token: cast.manager.access)
            let planID = try #require(latest.json["id"].string.flatMap(UUID.init(uuidString:)))
            let applied = try await boss.post("/dispatch/routes/\(planID.uuidString)/apply", [:], from: "/dispatch/routes")
            let after = try await boss.get(try #require(applied.location))
            #expect(after.html.contains("2 commandes attribuées à leur chauffeur, 0 inchangées, 0 laissées telles quelles.") && after.html.contains("data-status=\"applied\""))
            // Applying twice: refused, said on the page.
            let twice = try await boss.post("/dispatch/routes/\(planID.uuidString)/apply", [:], from: "/dispatch/routes")
            #expect(twice.status == .conflict && twice.html.contains("planifiez à nouveau"))

            // The driver's day: in the plan's order, with the planned time.
            let luca = TestBrowser(server)
            _ = try await luca.signIn("luca@courier.example")
            let day = try await luca.get("/driver")
            let nearOrder = try #require(try await Order.find(OrderID(uuidString: near)!, on: server.db))
            let farOrder = try #require(try await Order.find(OrderID(uuidString: far)!, on: server.db))
            let first = try #require(day.html.range(of: nearOrder.reference))
            let second = try #require(day.html.range(of: farOrder.reference))
            #expect(first.lowerBound < second.lowerBound && day.html.contains("data-planned"))
            // Others may not plan.
            #expect(try await luca.get("/dispatch/routes").status == .forbidden)
        }
    }

    @Test("Re-planning keeps the stop a driver is on their way to first, even when a new order is nearer", arguments: TestDatabase.available)
    func stopUnderWayStaysFirst(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            try await server.goOnDuty(cast.driver.access)
            #expect(try await server.report(cast.driver.access, [(46.9466, 7.4441)]).status == .ok)
            let started = try await order(server, cast, from: Self.place(6, 0), to: Self.place(7, 1))
            let first = try await server.send(.POST, "/route-plans", json: ["seconds": 0.2, "apply": true], token: cast.manager.access)
            try #require(first.status == .created, "\(first)")
            // The driver accepts it and sets off for its pickup.
            try #require(try await server.send(.POST, "/orders/\(started)/accept", token: cast.driver.access).status == .ok)
            // A new order right where the driver stands: the shortest route would take it first.
            let nearer = try await order(server, cast, from: Self.place(0, 0.1), to: Self.place(0.5, 0.5))
            let second = try await server.send(.POST, "/route-plans", json: ["seconds": 0.2], token: cast.manager.access)
            let route = try #require(second.json["plan"]["routes"].array.first { $0["driverId"].string == cast.driver.userID })
            let stops = route["stops"].array.map { "\($0["orderId"].string!)/\($0["kind"].string!)" }
            #expect(stops.first == "\(started)/pickup", "\(stops)")
            #expect(Set(stops) == ["\(started)/pickup", "\(started)/delivery", "\(nearer)/pickup", "\(nearer)/delivery"])
            checkShape(second.json["plan"])
            // Applying: the order under way is unchanged, the new one goes to the driver.
            let applied = try await server.send(.POST, "/route-plans/\(second.json["plan"]["id"].string!)/apply", token: cast.manager.access)
            let outcomes = Dictionary(uniqueKeysWithValues: applied.json["results"].array.map { ($0["orderId"].string!, $0["outcome"].string!) })
            #expect(outcomes == [started: "unchanged", nearer: "assigned"])

            // The customer's arrival estimate for the new order: the driver stands next to its pickup,
            // but goes to the order under way first, so the estimate is the plan's, not "now".
            try #require(try await server.send(.POST, "/orders/\(nearer)/accept", token: cast.driver.access).status == .ok)
            let planned = try #require(route["stops"].array.first { $0["orderId"].string == nearer && $0["kind"].string == "pickup" }?["arrival"].string)
            let page = try await server.send(.GET, "/orders/\(nearer)", token: cast.customer.access)
            let eta = try #require(page.json["tracking"]["eta"]["arrivesAt"].string, "\(page)")
            let parse = ISO8601DateFormatter()
            parse.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            func date(_ text: String) -> Date? { parse.date(from: text) ?? ISO8601DateFormatter().date(from: text) }
            let etaDate = try #require(date(eta)), plannedDate = try #require(date(planned))
            #expect(abs(etaDate.timeIntervalSince(plannedDate)) < 1, "ETA \(eta), planned \(planned)")
            // The ETA pushed live with the driver's next position is the plan's too.
            try #require(try await server.report(cast.driver.access, [(46.9466, 7.4441)]).status == .ok)
            let sql = try #require(server.app.db as? any SQLDatabase)
            let pushed = try #require(try await sql.raw("""
                SELECT data FROM live_events WHERE topic = \(bind: "order:" + nearer.uppercased()) AND type = 'eta' ORDER BY id DESC LIMIT 1
                """).first()?.decode(column: "data", as: String.self))
            let live = try JSONDecoder().decode(LiveETA.self, from: Data(pushed.utf8))
            #expect(abs(Double(live.arrivesAt) / 1000 - plannedDate.timeIntervalSince1970) < 1, "live ETA \(live.arrivesAt), planned \(planned)")

            // Picked up: now its delivery is under way, and stays first.
            try #require(try await server.send(.POST, "/orders/\(started)/pickup", json: TestServer.cash(try await server.price(of: started)),
                                               token: cast.driver.access).status == .ok)
            let third = try await server.send(.POST, "/route-plans", json: ["seconds": 0.2], token: cast.manager.access)
            let next = try #require(third.json["plan"]["routes"].array.first { $0["driverId"].string == cast.driver.userID })
            #expect(next["stops"].array.first.map { "\($0["orderId"].string!)/\($0["kind"].string!)" } == "\(started)/delivery")
        }
    }

    @Test("Auto-dispatch: switched on, each new order goes to a driver within seconds without moving orders already given; off, orders wait",
          arguments: TestDatabase.available)
    func autoDispatch(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let auto = AutoDispatch(services: server.app.waybill, db: server.db, logger: server.app.logger)
            try await server.goOnDuty(cast.driver.access)
            try await server.goOnDuty(cast.otherDriver.access)
            // An hour ago: the drivers have had time to cross town since.
            let earlier = Date().addingTimeInterval(-3600)
            #expect(try await server.report(cast.driver.access, [(46.9466, 7.4300)], at: earlier).status == .ok)
            #expect(try await server.report(cast.otherDriver.access, [(46.9466, 7.4600)], at: earlier).status == .ok)
            // Off: nothing is due, nothing moves.
            let waiting = try await order(server, cast, from: Self.place(-8, 0), to: Self.place(-9, 1))
            #expect(try await auto.runOnce() == nil)
            #expect(try await server.status(of: waiting) == "pending")

            let on = try await server.send(.PUT, "/dispatch-settings", json: ["autoDispatch": true], token: cast.manager.access)
            #expect(on.status == .ok && on.json["autoDispatch"].bool == true && on.json["replanDue"].bool == true)
            #expect(on.json["enabledBy"].string?.lowercased() == cast.manager.userID.lowercased())
            // Switching on plans what waits: the western order to the western driver.
            let first = try #require(try await auto.runOnce())
            #expect(first.record.status == .applied)
            let given = try #require(try await Order.find(OrderID(uuidString: waiting)!, on: server.db))
            #expect(given.status == .assigned && given.driverID?.uuidString == cast.driver.userID)
            #expect(try await auto.runOnce() == nil, "nothing is due any more")

            // The western driver drives east; a new order appears in the west. The order already given
            // stays with its driver (a full re-plan would move it to the driver now nearer).
            #expect(try await server.report(cast.driver.access, [(46.9466, 7.4700)]).status == .ok)
            #expect(try await server.report(cast.otherDriver.access, [(46.9466, 7.4300)]).status == .ok)
            #expect(try await server.send(.GET, "/dispatch-settings", token: cast.manager.access).json["replanDue"].bool == false)
            let fresh = try await order(server, cast, from: Self.place(-7, 0), to: Self.place(-8, -1))
            #expect(try await server.send(.GET, "/dispatch-settings", token: cast.manager.access).json["replanDue"].bool == true)
            // The worker's loop picks it up: the test hears the assignment on the order's live topic
            // (published once it is committed) instead of asking again and again.
            try await server.serving { port in
                let watcher = try await server.live(port: port, token: cast.manager.access)
                try await watcher.subscribe("order:\(fresh)")
                let worker = Task { await AutoDispatch.run(server.app) }
                defer { worker.cancel() }
                try await watcher.next { $0["type"].string == "status" && $0["data"]["status"].string == "assigned" }
                worker.cancel()
                await worker.value
                await watcher.close()
            }
            #expect(try await server.status(of: fresh) == "assigned")
            let after = try #require(try await Order.find(OrderID(uuidString: waiting)!, on: server.db))
            #expect(after.driverID?.uuidString == cast.driver.userID, "an order already given stays with its driver")
            // (A full re-plan would give both western orders to the driver now in the west.)
            let full = try await server.send(.POST, "/route-plans", json: ["seconds": 0.3], token: cast.manager.access)
            let western = try #require(full.json["plan"]["routes"].array.first { $0["driverId"].string == cast.otherDriver.userID })
            #expect(Set(western["stops"].array.compactMap { $0["orderId"].string }) == [waiting, fresh])

            // Off again: new orders wait.
            #expect(try await server.send(.PUT, "/dispatch-settings", json: ["autoDispatch": false], token: cast.manager.access).json["autoDispatch"].bool == false)
            let later = try await order(server, cast, from: Self.place(-7, 1), to: Self.place(-8, 2))
            #expect(try await auto.runOnce() == nil)
            #expect(try await server.status(of: later) == "pending")
            let bad = try await server.send(.PUT, "/dispatch-settings", json: ["autoDispatch": true, "capacity": 0], token: cast.manager.access)
            #expect([400, 422].contains(bad.status.code) && bad.errorCode != nil, "\(bad)")
            #expect(try await server.send(.PUT, "/dispatch-settings", json: ["autoDispatch": true], token: cast.driver.access).status == .forbidden)
        }
    }

    @Test("A driver whose only stop left is the one under way keeps it in the next plan")
    func onlyStopUnderWay() async throws {
        try await TestServer.run(.sqlite) { server in
            let cast = try await server.cast()
            try await server.goOnDuty(cast.driver.access)
            #expect(try await server.report(cast.driver.access, [(46.9466, 7.4441)]).status == .ok)
            let only = try await order(server, cast, from: Self.place(1, 1), to: Self.place(4, 4))
            try #require(try await server.send(.POST, "/route-plans", json: ["seconds": 0.2, "apply": true], token: cast.manager.access).status == .created)
            try #require(try await server.send(.POST, "/orders/\(only)/accept", token: cast.driver.access).status == .ok)
            try #require(try await server.send(.POST, "/orders/\(only)/pickup", json: TestServer.cash(try await server.price(of: only)),
                                               token: cast.driver.access).status == .ok)
            let again = try await server.send(.POST, "/route-plans", json: ["seconds": 0.2], token: cast.manager.access)
            let route = try #require(again.json["plan"]["routes"].array.first { $0["driverId"].string == cast.driver.userID })
            #expect(route["stops"].array.map { "\($0["orderId"].string!)/\($0["kind"].string!)" } == ["\(only)/delivery"])
        }
    }
}
