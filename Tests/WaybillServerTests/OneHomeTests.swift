import Fluent
import NIOConcurrencyHelpers
import Foundation
import Testing
import Vapor
@testable import WaybillServer
import WaybillCore

/// The rules that used to be decided twice (API and web) and disagreed, now decided once in
/// WaybillCore, seen from the API, the web app and the SDK's operations; and what the API now
/// offers so that a native app needs no rule of its own.
@Suite("One home for every rule")
struct OneHomeTests {
    @Test("The customer knows the driver by first name; the driver sees no email; managers see everyone in full",
          arguments: TestDatabase.available)
    func whatEachPartySees(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let id = try await server.placeOrder(cast.customer.access)
            try await server.advance(id, to: .accepted, cast: cast)
            let asCustomer = try await server.send(.GET, "/orders/\(id)", token: cast.customer.access).json
            #expect(asCustomer["driver"]["firstName"].string == "Luca")
            #expect(!asCustomer["driver"]["lastName"].exists)
            #expect(!asCustomer["driver"]["email"].exists)
            // The timeline names the staff by first name too; the customer's own entries in full.
            for event in asCustomer["events"].array where event["actor"].exists {
                if event["actor"]["id"].string == cast.customer.userID { #expect(event["actor"]["lastName"].exists) }
                else { #expect(!event["actor"]["lastName"].exists, "\(event["type"].string ?? "")") }
            }
            let asDriver = try await server.send(.GET, "/orders/\(id)", token: cast.driver.access).json
            #expect(!asDriver["customer"]["email"].exists && !asDriver["recipient"]["email"].exists)
            #expect(asDriver["customer"]["lastName"].exists && asDriver["recipient"]["name"].exists)
            let asManager = try await server.send(.GET, "/orders/\(id)", token: cast.manager.access).json
            #expect(asManager["driver"]["lastName"].exists && asManager["driver"]["email"].exists && asManager["customer"]["email"].exists)

            // The web app shows the customer the same: the driver's first name, not the last.
            let driverLast = try #require(try await User.find(UserID(uuidString: cast.driver.userID)!, on: server.db)).lastName
            let page = try await server.webPage("/orders/\(id)", as: "ada@example.com")
            #expect(page.contains("Luca") && !page.contains(driverLast), "\(page.components(separatedBy: driverLast).first?.suffix(300) ?? "")")
        }
    }

    @Test("A cancelled order's tracking link is neither shown nor renewed, over the API or on the web; it can still be withdrawn",
          arguments: TestDatabase.available)
    func cancelledOrdersHaveNoLink(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let id = try await server.placeOrder(cast.customer.access)
            #expect(try await server.send(.GET, "/orders/\(id)", token: cast.customer.access).json["tracking"]["trackingUrl"].exists)
            #expect(try await server.send(.POST, "/orders/\(id)/cancel", json: ["reason": "changed my mind"], token: cast.customer.access).status == .ok)
            for token in [cast.customer.access, cast.manager.access] {
                #expect(!(try await server.send(.GET, "/orders/\(id)", token: token).json["tracking"]["trackingUrl"].exists))
            }
            let renew = try await server.send(.POST, "/orders/\(id)/tracking-link", token: cast.customer.access)
            #expect(renew.status == .conflict)
            #expect(renew.json["error"]["currentStatus"].string == "cancelled")
            #expect(try await server.send(.DELETE, "/orders/\(id)/tracking-link", token: cast.customer.access).status == .noContent)
            let page = try await server.webPage("/orders/\(id)", as: "ada@example.com")
            #expect(!page.contains("/tracking-link\""))
        }
    }

    @Test("Payment options follow the account and the tariff, and an order is refused by the same rule",
          arguments: TestDatabase.available)
    func paymentOptions(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let person = try await server.send(.GET, "/me/payment-options", token: cast.customer.access).json
            #expect(person["methods"].array.compactMap(\.string) == ["card", "twint", "cash"])
            #expect(person["currency"].string == "CHF")
            try await server.registerCustomer("firm@example.com", isCompany: true)
            let firm = try await server.login("firm@example.com")
            #expect(try await server.send(.GET, "/me/payment-options", token: firm.access).json["methods"].array.compactMap(\.string)
                    == ["card", "twint", "cash", "invoice"])
            let refused = try await server.send(.POST, "/orders", json: TestServer.orderBody(payment: "invoice"), token: cast.customer.access)
            #expect(refused.status == .unprocessableEntity)
            #expect(refused.json["error"]["fields"]["paymentMethod"].string == "invoice_requires_company")
            // Every verified account sends: a driver has payment options too.
            #expect(try await server.send(.GET, "/me/payment-options", token: cast.driver.access).status == .ok)
        }
    }

    @Test("The driver's day lists what is under way first, then accepted, then new, and what was finished today",
          arguments: TestDatabase.available)
    func driverDay(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            var ids: [OrderStatus: String] = [:]
            for status in [OrderStatus.assigned, .accepted, .inTransit, .delivered] {
                let id = try await server.placeOrder(cast.customer.access)
                try await server.advance(id, to: status, cast: cast)
                ids[status] = id
            }
            let day = try await server.send(.GET, "/drivers/me/day", token: cast.driver.access)
            #expect(day.status == .ok)
            #expect(day.json["todo"].array.compactMap { $0["id"].string } == [ids[.inTransit], ids[.accepted], ids[.assigned]])
            #expect(day.json["done"].array.compactMap { $0["id"].string } == [ids[.delivered]])
            #expect(day.json["duty"]["onDuty"].exists)
            // The other driver's day is their own, and empty.
            let other = try await server.send(.GET, "/drivers/me/day", token: cast.otherDriver.access).json
            #expect(other["todo"].array.isEmpty && other["done"].array.isEmpty)
            // The web page lists them in the same order.
            let page = try await server.webPage("/driver", as: "luca@courier.example")
            let references = try await [ids[.inTransit]!, ids[.accepted]!, ids[.assigned]!].asyncMap { id in
                try await server.send(.GET, "/orders/\(id)", token: cast.manager.access).json["reference"].string!
            }
            let positions = references.compactMap { page.range(of: $0)?.lowerBound }
            #expect(positions.count == 3 && positions == positions.sorted())
        }
    }

    @Test("Every notification can be marked read at once", arguments: TestDatabase.available)
    func markAllRead(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            for _ in 0..<2 {
                let id = try await server.placeOrder(cast.customer.access)
                try await server.advance(id, to: .inTransit, cast: cast)
            }
            #expect(try await server.send(.GET, "/notifications", token: cast.customer.access).json["unreadCount"].int ?? 0 >= 4)
            let done = try await server.send(.POST, "/notifications/read-all", token: cast.customer.access)
            #expect(done.status == .ok && done.json["unreadCount"].int == 0)
            #expect(try await server.send(.GET, "/notifications", token: cast.customer.access).json["unreadCount"].int == 0)
            // Someone else's stay unread.
            #expect(try await server.send(.GET, "/notifications", token: cast.driver.access).json["unreadCount"].int ?? 0 > 0)
        }
    }

    @Test("The fleet comes ranked for an order: on duty and nearest first, the same list the web's assign form offers",
          arguments: TestDatabase.available)
    func rankedFleet(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let id = try await server.placeOrder(cast.customer.access, extra: ["pickup": TestServer.bern])
            // Luca is 50 km away, Mia 1 km; both on duty.
            for (token, latitude) in [(cast.driver.access, 47.40), (cast.otherDriver.access, 46.955)] {
                try await server.goOnDuty(token)
                #expect(try await server.report(token, [(latitude, 7.4441)], at: Date().addingTimeInterval(-5)).status == .ok)
            }
            let fleet = try await server.send(.GET, "/fleet?orderId=\(id)", token: cast.manager.access).json["drivers"].array
            #expect(fleet.prefix(2).compactMap { $0["driver"]["firstName"].string } == ["Mia", "Luca"])
            let distances = fleet.prefix(2).compactMap { $0["distanceToPickupMeters"].int }
            #expect(distances.count == 2 && distances[0] < distances[1])
            // The order's page offers Mia first too.
            let page = try await server.webPage("/orders/\(id)", as: "boss@courier.example")
            let mia = try #require(page.range(of: "Mia"))
            let luca = try #require(page.range(of: "Luca"))
            #expect(mia.lowerBound < luca.lowerBound)
        }
    }
}

extension Array {
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var result: [T] = []
        for element in self { result.append(try await transform(element)) }
        return result
    }
}

extension TestServer {
    /// A page of the web app as `email` sees it (signed in with the test password), in `language`.
    func webPage(_ path: String, as email: String, language: String = "en") async throws -> String {
        let browser = TestBrowser(self)
        browser.acceptLanguage = language
        _ = try await browser.signIn(email)
        let page = try await browser.get(path)
        try #require(page.status == .ok, "\(path) as \(email): \(page.status)")
        return page.html
    }
}

@Suite("One list of error codes")
struct ErrorCodeListTests {
    /// The codes the server source names, read from the source itself: each must be in the list
    /// (the compiler sees to it for `WaybillError`; this catches codes written as plain text).
    @Test("Every code the server, the live channel and the SDK use is in WaybillCore's list")
    func everyCodeIsListed() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let known = Set(ErrorCode.allCases.map(\.rawValue))
        var unknown: [String] = []
        let pattern = try NSRegularExpression(pattern: #"code(?:: |\s*===?\s*)"([a-z_]+)""#)
        for folder in ["Sources/WaybillServer", "Sources/WaybillClient"] {
            let enumerator = FileManager.default.enumerator(at: root.appendingPathComponent(folder), includingPropertiesForKeys: nil)
            while let url = enumerator?.nextObject() as? URL {
                guard ["swift", "js"].contains(url.pathExtension) else { continue }
                let text = try String(contentsOf: url, encoding: .utf8)
                for match in pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                    let code = String(text[Range(match.range(at: 1), in: text)!])
                    // The SDK's own reason for a local sign-out is not a server code.
                    if !known.contains(code) && code != "signed_out" { unknown.append("\(url.lastPathComponent): \(code)") }
                }
            }
        }
        #expect(unknown.isEmpty, "\(unknown)")
    }

    @Test("A French driver who types a wrong recipient code is told so in French, on the form", arguments: TestDatabase.available)
    func frenchDriverGetsFrenchError(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let id = try await server.placeOrder(cast.customer.access, extra: ["requireRecipientCode": true])
            try await server.advance(id, to: .inTransit, cast: cast)
            let browser = TestBrowser(server)
            browser.acceptLanguage = "fr"
            _ = try await browser.signIn("luca@courier.example")
            let form = "/driver/orders/\(id)/deliver"
            let png = "data:image/png;base64," + Data(SampleImages.signaturePNG).base64EncodedString()
            let page = try await browser.post(form, ["signature": png, "recipientName": "Bea", "code": "000000"], from: form)
            #expect(page.status == .unprocessableEntity)
            #expect(page.html.contains(h(ErrorCode.invalidRecipientCode.french)), "\(page.html.prefix(3000))")
        }
    }
}

@Suite("The public tracking page speaks the visitor's language")
struct PublicPageLanguageTests {
    @Test("A French browser reads the tracking page in French, an English one in English", arguments: TestDatabase.available)
    func frenchAndEnglish(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let id = try await server.placeOrder(cast.customer.access)
            try await server.advance(id, to: .accepted, cast: cast)
            let token = try await server.trackingToken(id, customer: cast.customer.access)
            let french = try await server.app.testing().sendRequest(.GET, "/t/\(token)", headers: ["Accept-Language": "fr-CH, fr;q=0.9"])
            #expect(french.status == .ok)
            #expect(french.body.string.contains(#"<html lang="fr">"#))
            #expect(french.body.string.contains(h(Text.pubAccepted.fr)) && french.body.string.contains(h(Text.pubProgress.fr)))
            #expect(french.body.string.contains("Luca"))
            let english = try await server.app.testing().sendRequest(.GET, "/t/\(token)", headers: ["Accept-Language": "en-GB"])
            #expect(english.body.string.contains(#"<html lang="en">"#) && english.body.string.contains(Text.pubAccepted.en))
            let missing = try await server.app.testing().sendRequest(.GET, "/t/AAAAAAAAAAAAAAAAAAAAAAAA", headers: ["Accept-Language": "fr"])
            #expect(missing.status == .notFound && missing.body.string.contains(h(Text.pubNotFoundTitle.fr)))
        }
    }
}

@Suite("Migrations")
struct MigrationSeedTests {
    @Test("A new database starts with the first tariff as written in its migration", arguments: TestDatabase.both)
    func firstTariff(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let first = try #require(try await TariffRecord.find(1, on: server.db))
            #expect(try first.tariff == .initial)
            #expect(first.createdBy == nil && first.createdAt > 0)
        }
    }
}

@Suite("The server's clock is the application's")
struct ClockTests {
    @Test("A mailed code stops working once its lifetime has passed: the test moves the clock instead of waiting",
          arguments: TestDatabase.available)
    func codesExpire(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let email = "late@example.com"
            #expect(try await server.send(.POST, "/auth/register", json: TestServer.form(email, isCompany: false, password: TestServer.password)).status == .created)
            let code = try await server.code(for: email)
            server.clock.advance(by: TimeInterval(OneTimeCodePolicy.lifetime) + 1)
            let late = try await server.send(.POST, "/auth/verify-email", json: ["email": email, "code": code])
            #expect(late.status == .badRequest)
            #expect(late.json["error"]["code"].string == ErrorCode.invalidCode.rawValue)
        }
    }

    @Test("A service called directly reads the clock it is given")
    func servicesReadTheGivenClock() async throws {
        let clock = TestClock()
        clock.advance(by: 86_400 * 365)
        let then = await clock.run { UnixTime.nowMillis }
        #expect(then - UnixTime.nowMillis > 86_400_000 * 364)
    }
}

@Suite("Services stand on their own")
struct StandaloneServiceTests {
    @Test("A delivery from order to signature runs through the services alone (no HTTP), on a clock the test moves",
          arguments: TestDatabase.available)
    func deliveryThroughServices(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let services = server.app.waybill
            let orders = Orders(services: services, db: server.db, logger: server.app.logger)
            func person(_ email: String, _ role: Role) async throws -> Principal {
                let user = User(role: role, email: email, passwordHash: nil, firstName: "Sam", lastName: role.rawValue,
                                emailVerifiedAt: Date())
                try await user.save(on: server.db)
                return try Principal(user: user, sessionID: .random())
            }
            let customer = try await person("sam@example.com", .customer)
            let driver = try await person("dora@courier.example", .driver)
            let manager = try await person("max@courier.example", .manager)
            let bern = AddressInput(street: "Bundesplatz 3", postalCode: "3005", city: "Bern")
            let quote = QuoteRequest(pickup: PickupInput(address: bern), dropoff: bern, weightClass: .small, service: .standard)

            let placed = try await services.run {
                try await orders.create(OrderRequest(quote: quote, paymentMethod: .cash, recipientName: "Rita"), by: customer, idempotencyKey: nil)
            }.record.order
            let id = try #require(placed.id)
            server.clock.advance(by: 3 * 3600)
            let delivered = try await services.run {
                _ = try await orders.assign(id, to: driver.userID, by: manager)
                _ = try await orders.accept(id, by: driver)
                _ = try await orders.pickup(id, cashCollected: placed.price, by: driver)
                return try await orders.deliver(id, signature: .init(bytes: SampleImages.signaturePNG, field: "signature"), photo: nil,
                                                recipientName: "Rita Reber", code: nil, by: driver)
            }
            #expect(delivered.status == .delivered && delivered.signedBy == "Rita Reber")
            let hours = Double(try #require(delivered.deliveredAt) - placed.createdAt) / 3_600_000
            #expect(hours >= 3 && hours < 3.1, "the delivery is stamped on the moved clock: \(placed.createdAt) \(String(describing: delivered.deliveredAt)) \(UnixTime.nowMillis)")
            await #expect(throws: WaybillError.self) { try await orders.detail(id, for: try await person("eve@example.com", .customer)) }
            #expect(try await orders.detail(id, for: customer).events.map(\.0.type).count >= 5)
        }
    }
}

@Suite("Domain events")
struct DomainEventTests {
    struct Refused: Error {}

    @Test("Each state change records exactly one event, in its transaction: a subscriber that fails undoes the change",
          arguments: TestDatabase.both)
    func oneEventPerChange(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let seen = NIOLockedValueBox<[String]>([])
            let refuse = NIOLockedValueBox(false)
            server.app.waybill.events.subscribe("test") { event, _ in
                if refuse.withLockedValue({ $0 }) { throw Refused() }
                let name = switch event {
                case .shipment(_, let fact): fact.name
                case .parcelChanged: "parcel_changed"
                case .ordersImported: "orders_imported"
                case .tripRequestChanged(_, let change): "trip_request_\(change.rawValue)"
                }
                seen.withLockedValue { $0.append("\(name):\(event.order?.status.rawValue ?? "-")") }
            }
            #expect(server.app.waybill.events.names == ["notifications", "live-status", "ledger", "trip-requests", "statistics", "auto-dispatch", "conversations", "timeslots", "loyalty", "subscriptions", "webhooks", "test"])
            let cast = try await server.cast()
            let id = try await server.placeOrder(cast.customer.access)
            try await server.advance(id, to: .delivered, cast: cast)
            #expect(seen.withLockedValue { $0 } == ["placed:pending", "assigned:assigned", "accepted:accepted", "picked_up:in_transit", "delivered:delivered"])

            // A subscriber that fails: the cancellation, its history line and its notifications do not land.
            let other = try await server.placeOrder(cast.customer.access)
            let notificationsBefore = try await Notification.query(on: server.db).count()
            refuse.withLockedValue { $0 = true }
            let refused = try await server.send(.POST, "/orders/\(other)/cancel", json: ["reason": "no"], token: cast.customer.access)
            #expect(refused.status == .internalServerError)
            refuse.withLockedValue { $0 = false }
            let order = try #require(try await Order.find(OrderID(uuidString: other)!, on: server.db))
            #expect(order.status == .pending && order.cancellationReason == nil)
            #expect(try await OrderEvent.query(on: server.db).filter(\.$orderID == order.id!).filter(\.$type == "cancelled").count() == 0)
            #expect(try await Notification.query(on: server.db).count() == notificationsBefore)
        }
    }
}

@Suite("The server's randomness is the application's")
struct RandomnessTests {
    @Test("Two servers given the same seed draw the same order id, reference and tracking link; the system's do not")
    func seededServersAgree() async throws {
        func first(_ random: WaybillRandom) async throws -> (id: String, reference: String, token: String) {
            var result = ("", "", "")
            try await TestServer.run(.sqlite, random: random) { server in
                try await server.registerCustomer("ada@example.com")
                let ada = try await server.login("ada@example.com")
                let id = try await server.placeOrder(ada.access)
                let order = try await server.send(.GET, "/orders/\(id)", token: ada.access).json
                result = (id, order["reference"].string ?? "", try await server.trackingToken(id, customer: ada.access))
            }
            return result
        }
        let a = try await first(.seeded(42)), b = try await first(.seeded(42)), c = try await first(.system)
        #expect(a.id == b.id && a.reference == b.reference && a.token == b.token)
        #expect(a.id != c.id && a.reference != c.reference && a.token != c.token)
        #expect(UUID(uuidString: a.id) != nil)
        #expect(a.reference.hasPrefix("WB-") && a.reference.count == 11)
    }
}
