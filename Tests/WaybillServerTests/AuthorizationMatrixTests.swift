import Fluent
import SQLKit
import Foundation
import Testing
import Vapor
@testable import WaybillServer
import WaybillCore
import WaybillLabels

/// Every authenticated API operation × every kind of caller, against objects that belong to
/// customer A and driver A: the status each must get. Someone else's object is 404 (as if it did
/// not exist); a role that may never act is 403; no token is 401; a disabled account is 403.
@Suite("Authorization matrix: every operation × every caller")
struct AuthorizationMatrixTests {
    enum Caller: String, CaseIterable, Sendable {
        case anonymous, customerA, customerB, driverA, driverB, manager, admin, disabled
    }

    /// What a row acts on: made fresh where the call changes it.
    struct Target: Sendable {
        var order: String
        var file: String = ""
        var notification: String = ""
        var user: String = ""
        var restriction: String = ""
        var trip: String = ""
        var request: String = ""
        var code: String = ""
        var parcel: String = ""
    }

    struct World: Sendable {
        let server: TestServer
        let cast: Cast
        let tokens: [Caller: String]
        let companyA: Tokens
    }

    struct Row: Sendable {
        let operation: String
        /// Statuses by caller, e.g. "anonymous=401 customerA=200 …"; callers left out expect `others`.
        let expected: [Caller: UInt]
        /// Builds what the call acts on (fresh for every caller expected to succeed).
        let setup: @Sendable (World) async throws -> Target
        let call: @Sendable (World, Target, String?) async throws -> Reply
    }

    static func expect(_ text: String) -> [Caller: UInt] {
        // Every authenticated operation: no token 401, a disabled account 403.
        var table: [Caller: UInt] = [.anonymous: 401, .disabled: 403]
        var others: UInt?
        for pair in text.split(separator: " ") {
            let parts = pair.split(separator: "=")
            let code = UInt(parts[1])!
            if parts[0] == "others" { others = code } else { table[Caller(rawValue: String(parts[0]))!] = code }
        }
        if let others { for caller in Caller.allCases where table[caller] == nil { table[caller] = others } }
        return table
    }

    // MARK: targets

    /// A route plan the manager made (its id in `parcel`).
    static func managerPlan(_ w: World) async throws -> Target {
        let reply = try await w.server.send(.POST, "/route-plans", json: ["seconds": 0.2], token: w.cast.manager.access)
        return Target(order: "", parcel: try #require(reply.json["plan"]["id"].string, "\(reply)"))
    }

    static func pendingOrder(_ w: World) async throws -> Target {
        Target(order: try await w.server.placeOrder(w.cast.customer.access))
    }

    static func cardOrder(_ w: World) async throws -> Target {
        Target(order: try await w.server.placeOrder(w.cast.customer.access, payment: "card"))
    }

    static func orderIn(_ status: OrderStatus) -> @Sendable (World) async throws -> Target {
        { w in
            let id = try await w.server.placeOrder(w.cast.customer.access)
            try await w.server.advance(id, to: status, cast: w.cast)
            return Target(order: id)
        }
    }

    /// Delivered, addressed to customer B (bob@example.com), who has an account: B is its receiver.
    static func deliveredToCustomerB(_ w: World) async throws -> Target {
        let id = try await w.server.placeOrder(w.cast.customer.access, extra: ["recipient": ["name": "Bob", "email": "bob@example.com"]])
        try await w.server.advance(id, to: .delivered, cast: w.cast)
        return Target(order: id)
    }

    static func deliveredWithFile(_ w: World) async throws -> Target {
        let id = try await w.server.placeOrder(w.cast.customer.access)
        try await w.server.advance(id, to: .delivered, cast: w.cast)
        let file = try #require(try await OrderFile.query(on: w.server.db).filter(\.$orderID == OrderID(uuidString: id)!).first())
        return Target(order: id, file: file.id!.uuidString)
    }

    static func customerANotification(_ w: World) async throws -> Target {
        let id = try await w.server.placeOrder(w.cast.customer.access)
        try await w.server.advance(id, to: .accepted, cast: w.cast)
        let note = try #require(try await Notification.query(on: w.server.db)
            .filter(\.$userID == UserID(uuidString: w.cast.customer.userID)!).first())
        return Target(order: id, notification: note.id!.uuidString)
    }

    static func nothing(_ w: World) async throws -> Target { Target(order: UUID().uuidString) }

    /// A subscription plan an admin offers (its id in `code`).
    static func offeredPlan(_ w: World) async throws -> Target {
        let reply = try await w.server.send(.POST, "/plans", json: SubscriptionTests.pro, token: w.tokens[.admin]!)
        return Target(order: "", code: try #require(reply.json["id"].string, "\(reply)"))
    }

    /// A conversation (as `conversation()`) where customer A sent a photo (its message in `code`).
    static func conversationWithPhoto(_ w: World) async throws -> Target {
        var target = try await conversation()(w)
        let sent = try await w.server.upload("/conversations/\(target.parcel)/images", parts: [.file("photo", SampleImages.photoJPEG, type: "image/jpeg", filename: "p.jpg"),
                                                                                             .text("clientMessageId", UUID().uuidString)], token: w.cast.customer.access)
        target.code = try #require(sent.json["id"].string, "\(sent)")
        return target
    }

    /// A delivered order of customer A that customer A and driver A rated each other on: the
    /// driver's rating of customer A (published) in `code`.
    static func ratedBothWays(_ w: World) async throws -> Target {
        let order = try await w.server.placeOrder(w.cast.customer.access)
        try await w.server.advance(order, to: .delivered, cast: w.cast)
        _ = try await w.server.send(.POST, "/shipments/\(order)/ratings", json: ["stars": 5], token: w.cast.customer.access)
        let back = try await w.server.send(.POST, "/shipments/\(order)/ratings", json: ["stars": 4], token: w.cast.driver.access)
        return Target(order: order, code: try #require(back.json["id"].string, "\(back)"))
    }

    /// Customer A's insured shipment, delivered (in `order`).
    static func insuredDelivered(_ w: World) async throws -> Target {
        let id = try await w.server.placeOrder(w.cast.customer.access, extra: ["declaredValue": 20_000])
        try await w.server.advance(id, to: .delivered, cast: w.cast)
        return Target(order: id)
    }

    /// Customer A's claim about an insured delivered shipment, with a photo (the claim in `code`, the photo in `file`).
    static func customerAClaim(_ w: World) async throws -> Target {
        var target = try await insuredDelivered(w)
        let filed = try await InsuranceTests.file(w.server, target.order, kind: "damaged", amount: 10_000, token: w.cast.customer.access)
        target.code = try #require(filed.json["id"].string, "\(filed)")
        target.file = try #require(filed.json["photos"][0]["id"].string)
        return target
    }

    /// A pending report by customer B about customer A (its id in `parcel`).
    static func pendingReport(_ w: World) async throws -> Target {
        let report = ReportRecord()
        report.id = .generated()
        report.reporterID = UserID(uuidString: w.cast.otherCustomer.userID)!
        report.reportedUserID = UserID(uuidString: w.cast.customer.userID)!
        report.reason = .spam
        report.status = .pending
        report.createdAt = UnixTime.nowMillis
        try await report.create(on: w.server.db)
        return Target(order: "", parcel: report.id!.uuidString)
    }

    /// A parcel customer A follows, delivered (its id in `parcel`).
    static func deliveredParcel(_ w: World) async throws -> Target {
        let target = try await customerAParcel(w)
        let record = try #require(try await ParcelRecord.find(ParcelID(uuidString: target.parcel), on: w.server.db))
        record.status = .delivered
        try await record.save(on: w.server.db)
        return target
    }

    /// An accepted order of customer A (driver A carries it) and its conversation (its id in
    /// `parcel`); with `by`, a message that party wrote (its id in `code`).
    static func conversation(by author: Caller? = nil) -> @Sendable (World) async throws -> Target {
        { w in
            let order = try await w.server.placeOrder(w.cast.customer.access)
            try await w.server.advance(order, to: .accepted, cast: w.cast)
            let id = try await ConversationTests.open(w.server, order: order, w.cast.customer.access)
            var target = Target(order: order, parcel: id)
            if let author {
                let sent = try await ConversationTests.say(w.server, id, "Hello", id: UUID().uuidString, w.tokens[author]!)
                target.code = try #require(sent.json["id"].string, "\(sent)")
            }
            return target
        }
    }

    /// An accepted order of customer A with its label's hand-over token (in `code`).
    static func labelledOrder(_ w: World) async throws -> Target {
        var target = try await orderIn(.accepted)(w)
        target.code = try await LabelScanTests.token(w.server, target.order)
        return target
    }

    /// An active counter (its id in `trip`), written directly.
    static func aCounter(_ w: World) async throws -> Target {
        let record = CounterRecord()
        record.id = .generated()
        record.apply(CounterDraft(name: "Guichet", address: Address(street: "Place de la Gare 1", postalCode: "1003", city: "Lausanne"), hours: CounterHours()))
        record.active = true
        record.createdAt = UnixTime.nowMillis
        record.updatedAt = record.createdAt
        try await record.create(on: w.server.db)
        return Target(order: "", user: w.cast.driver.userID, trip: record.id!.uuidString)
    }

    /// A counter whose staff is driver A (its id in `trip`), and customer A's paid shipment to be
    /// dropped there (in `order`, its label's token in `code`).
    static func counterParcel(_ w: World) async throws -> Target {
        var target = try await aCounter(w)
        let driver = try #require(try await User.find(UserID(uuidString: w.cast.driver.userID), on: w.server.db))
        try await w.server.sql.insert(into: "counter_staff").columns("counter_id", "user_id", "added_at")
            .values(SQLBind(UUID(uuidString: target.trip)!), SQLBind(driver.id!), SQLBind(UnixTime.nowMillis)).run()
        if !Capability.parseList(driver.staffCapabilities).contains(.counter) {
            try await Accounts.setStaffCapabilities(driver, to: Capability.parseList(driver.staffCapabilities).union([.counter]), by: nil, on: w.server.db)
        }
        var body = TestServer.orderBody(payment: "card", extra: ["dropOffCounterId": target.trip])
        body["pickup"] = nil
        let created = try await w.server.send(.POST, "/orders", json: body, token: w.cast.customer.access)
        target.order = try #require(created.json["order"]["id"].string, "\(created)")
        try await CounterDeskTests.pay(w.server, target.order, w.cast)
        target.code = try await LabelScanTests.token(w.server, target.order)
        return target
    }

    /// A delivery slot for Bern (its template's id in `trip`, the slot's in `code`), plenty of seats.
    static func deliverySlot(_ w: World) async throws -> Target {
        let template = try await TimeslotTests.template(w.server, w.cast, capacity: 1000)
        let list = try await w.server.send(.GET, "/slots?kind=delivery&postalCode=3005&from=\(TimeslotTests.day(w.server, in: 2))&days=1",
                                           token: w.cast.customer.access)
        let slot = try #require(list.json["items"].array.first { $0["templateId"].string == template }?["id"].string, "\(list)")
        return Target(order: "", trip: template, code: slot)
    }

    /// An accepted order of customer A (driver A carries it) and a delivery slot for it (in `code`).
    static func orderAndSlot(_ w: World) async throws -> Target {
        var target = try await deliverySlot(w)
        target.order = try await orderIn(.accepted)(w).order
        return target
    }

    /// As `orderAndSlot`, the slot booked by customer A (the booking's id in `request`).
    static func slotBooking(_ w: World) async throws -> Target {
        var target = try await orderAndSlot(w)
        let booked = try await w.server.send(.POST, "/orders/\(target.order)/slots", json: ["slotId": target.code], token: w.cast.customer.access)
        target.request = try #require(booked.json["id"].string, "\(booked)")
        return target
    }

    static func customerAUser(_ w: World) async throws -> Target { Target(order: "", user: w.cast.customer.userID) }

    static func spareUser(_ w: World) async throws -> Target {
        Target(order: "", user: try await w.server.createAccount("spare-\(UUID().uuidString.prefix(8).lowercased())@example.com", role: .customer).userID)
    }

    /// A spare account with a suspension in force, set by the admin.
    static func restrictedUser(_ w: World) async throws -> Target {
        var target = try await spareUser(w)
        let until = ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: Double(UnixTime.nowMillis) / 1000 + 86_400))
        let reply = try await w.server.send(.POST, "/users/\(target.user)/restrictions",
                                            json: ["kind": "suspended", "until": until, "reason": "matrix"], token: w.tokens[.admin])
        target.restriction = String(try #require(reply.json["id"].int))
        return target
    }

    /// The sample areas of `TravelTests`, imported once (again is harmless).
    static func areasReady(_ w: World) async throws -> Target {
        try await TravelTests.importAreas(w.server)
        return Target(order: "")
    }

    /// A trip customer A posts, as a traveller (written directly: the matrix makes more trips than
    /// one traveller may have waiting).
    static func customerATrip(_ w: World) async throws -> Target {
        try await TravelTests.importAreas(w.server)
        _ = try await w.server.send(.POST, "/me/traveller", json: ["acceptTerms": true], token: w.cast.customer.access)
        if try await User.find(UserID(uuidString: w.cast.customer.userID), on: w.server.db)?.payoutStatus != .active {
            try await TripRequestTests.onboardPayouts(w.server, w.cast.customer.access)
        }
        let body = TravelTests.trip()
        let draft = TripDraft(from: AreaID("CH-M5586"), to: AreaID("CH-M261"), date: body["date"] as! String, earliest: "07:00", latest: "09:00",
                              timeZone: "Europe/Zurich", capacityGrams: 5000, capacityParcels: 2, categories: ["documents", "small_parcel"])
        guard case .success(let plan) = draft.validated(now: UnixTime.nowMillis, tariff: .standard, areaExists: { _ in true }) else {
            throw CommandError("trip")
        }
        let trip = TripRecord(id: .random(), traveller: UserID(uuidString: w.cast.customer.userID)!, plan: plan, currency: "CHF", at: UnixTime.nowMillis)
        try await trip.create(on: w.server.db)
        return Target(order: "", trip: trip.id!.uuidString)
    }

    /// Customer B's request on a trip of customer A.
    static func requestByB(_ w: World) async throws -> Target {
        var target = try await customerATrip(w)
        let reply = try await w.server.send(.POST, "/trips/\(target.trip)/requests", json: TripRequestTests.request(), token: w.cast.otherCustomer.access)
        target.request = try #require(reply.json["id"].string, "\(reply)")
        return target
    }

    static func requestWithPhoto(_ w: World) async throws -> Target {
        let target = try await requestByB(w)
        _ = try await w.server.upload(.PUT, "/trip-requests/\(target.request)/photo",
                                      parts: [.file("photo", SampleImages.photoJPEG, type: "image/jpeg", filename: "p.jpg")], token: w.cast.otherCustomer.access)
        return target
    }

    /// Accepted by A and paid by B.
    static func paidRequest(_ w: World) async throws -> Target {
        let target = try await requestByB(w)
        let accepted = try await w.server.send(.POST, "/trip-requests/\(target.request)/accept", token: w.cast.customer.access)
        try #require(accepted.status == .ok, "\(accepted)")
        let url = try #require(try await w.server.send(.GET, "/trip-requests/\(target.request)", token: w.cast.otherCustomer.access).json["shipment"]["paymentUrl"].string)
        try await TripRequestTests.pay(w.server, url: url)
        return target
    }

    /// Paid and picked up by A; the receiver's code read from the mail.
    static func pickedUpRequest(_ w: World) async throws -> Target {
        var target = try await paidRequest(w)
        // Mail still queued from other rows (a parcel coming to bea@) must not come after the code:
        // the outbox sends a batch at a time, so until it is empty.
        while try await w.server.deliverMail() > 0 {}
        let picked = try await w.server.send(.POST, "/trip-requests/\(target.request)/pickup", token: w.cast.customer.access)
        try #require(picked.status == .ok, "\(picked)")
        _ = try await w.server.deliverMail()
        target.code = try #require(w.server.mailer.lastCode(to: "bea@example.com"))
        return target
    }

    /// Delivered by A against the code, paid by card (sandbox) by B: a shipment a manager may refund.
    static func deliveredRequest(_ w: World) async throws -> Target {
        var target = try await pickedUpRequest(w)
        let done = try await w.server.send(.POST, "/trip-requests/\(target.request)/deliver", json: ["code": target.code], token: w.cast.customer.access)
        target.order = try #require(done.json["shipment"]["id"].string, "\(done)")
        return target
    }

    /// A parcel of another carrier customer A follows.
    static func customerAParcel(_ w: World) async throws -> Target {
        let reply = try await w.server.send(.POST, "/parcels", json: ["number": "RB\(Int.random(in: 10_000_000...99_999_999))5CH", "carrier": "swiss_post"],
                                            token: w.cast.customer.access)
        return Target(order: "", parcel: try #require(reply.json["id"].string, "\(reply)"))
    }

    /// A shop customer A connected (its id in `parcel`).
    static func customerAShop(_ w: World) async throws -> Target {
        let reply = try await w.server.send(.POST, "/me/shops", json: ["platform": "shopify", "name": "A's shop"], token: w.cast.customer.access)
        return Target(order: "", parcel: try #require(reply.json["id"].string, "\(reply)"))
    }

    /// A webhook endpoint customer A registered (its id in `parcel`), with one delivery (its id in `code`).
    static func customerAEndpoint(_ w: World) async throws -> Target {
        // Fresh for each caller expected to succeed: the older ones go (ten per account at most).
        for old in try await w.server.send(.GET, "/webhook-endpoints", token: w.cast.customer.access).json["items"].array {
            _ = try await w.server.send(.DELETE, "/webhook-endpoints/\(old["id"].string ?? "")", token: w.cast.customer.access)
        }
        let reply = try await w.server.send(.POST, "/webhook-endpoints", json: ["url": "https://hooks.example.com/waybill", "events": ["shipment.delivered"]],
                                            token: w.cast.customer.access)
        let id = try #require(reply.json["id"].string, "\(reply)")
        let ping = try await w.server.send(.POST, "/webhook-endpoints/\(id)/pings", token: w.cast.customer.access)
        return Target(order: "", code: try #require(ping.json["id"].string, "\(ping)"), parcel: id)
    }

    /// An API key customer A made (its id in `parcel`).
    static func customerAKey(_ w: World) async throws -> Target {
        let reply = try await w.server.send(.POST, "/api-keys", json: ["name": "Shop", "scopes": ["shipments:read"]], token: w.cast.customer.access)
        return Target(order: "", parcel: try #require(reply.json["id"].string, "\(reply)"))
    }

    /// A file of one delivery the manager uploaded and may confirm.
    static let importFile = Array("recipient_name,dropoff_street,dropoff_postal_code,dropoff_city,pickup_street,pickup_postal_code,pickup_city\nHans,Bundesplatz 3,3005,Bern,Rue de Lausanne 1,1201,Genève\n".utf8)

    static func managerImport(_ w: World) async throws -> Target {
        let reply = try await w.server.upload("/order-imports", parts: [.file("file", importFile, type: "text/csv", filename: "m.csv")], token: w.cast.manager.access)
        return Target(order: "", parcel: try #require(reply.json["id"].string, "\(reply)"))
    }

    /// Customer A with a picture.
    static func customerAPicture(_ w: World) async throws -> Target {
        _ = try await w.server.upload(.PUT, "/me/picture", parts: [.file("photo", SampleImages.squarePNG, type: "image/png", filename: "p.png")],
                                      token: w.cast.customer.access)
        return Target(order: "", user: w.cast.customer.userID)
    }

    static let nyon: [String: any Sendable] = ["id": "CH-M5724", "parentId": "CH-VD", "level": "municipality", "name": "Nyon"]

    static let rows: [Row] = [
        // travel (before becomeTraveller, which makes every caller a traveller)
        Row(operation: "searchAreas", expected: expect("others=200"), setup: areasReady) { w, _, t in
            try await w.server.send(.GET, "/areas?q=gen", token: t) },
        Row(operation: "getArea", expected: expect("others=200"), setup: areasReady) { w, _, t in
            try await w.server.send(.GET, "/areas/CH-VD", token: t) },
        Row(operation: "createArea", expected: expect("admin=201 others=403"), setup: areasReady) { w, _, t in
            try await w.server.send(.POST, "/areas", json: nyon, token: t) },
        Row(operation: "updateArea", expected: expect("admin=200 others=403"), setup: areasReady) { w, _, t in
            try await w.server.send(.PUT, "/areas/CH-M5586", json: ["id": "CH-M5586", "parentId": "CH-VD", "level": "municipality", "name": "Lausanne"], token: t) },
        Row(operation: "deleteArea", expected: expect("admin=204 others=403"), setup: areasReady) { w, _, t in
            try await w.server.send(.DELETE, "/areas/CH-M5586", token: t) },
        Row(operation: "getTravelTariff", expected: expect("others=200"), setup: nothing) { w, _, t in
            try await w.server.send(.GET, "/travel/tariff", token: t) },
        Row(operation: "setTravelTariff", expected: expect("admin=200 others=403"), setup: nothing) { w, _, t in
            let tariff = try JSONSerialization.jsonObject(with: JSONEncoder().encode(TravelTariff.standard))
            return try await w.server.send(.PUT, "/travel/tariff", json: sendable(tariff) as? [String: any Sendable], token: t) },
        Row(operation: "getPayoutAccount", expected: expect("customerA=200 others=403"), setup: customerATrip) { w, _, t in
            try await w.server.send(.GET, "/me/payouts", token: t) },
        Row(operation: "startPayoutOnboarding", expected: expect("customerA=200 others=403"), setup: customerATrip) { w, _, t in
            try await w.server.send(.POST, "/me/payouts/onboarding", token: t) },
        Row(operation: "refundOrder", expected: expect("manager=200 customerA=403 customerB=403 others=404"), setup: deliveredRequest) { w, x, t in
            try await w.server.send(.POST, "/orders/\(x.order)/refund", json: ["reason": "matrix"], token: t) },
        Row(operation: "listParcels", expected: expect("others=200"), setup: nothing) { w, _, t in
            try await w.server.send(.GET, "/parcels", token: t) },
        Row(operation: "createParcel", expected: expect("others=201"), setup: nothing) { w, _, t in
            try await w.server.send(.POST, "/parcels", json: ["number": "1Z\(UUID().uuidString.prefix(8))", "carrier": "ups"], token: t) },
        Row(operation: "getParcel", expected: expect("customerA=200 others=404"), setup: customerAParcel) { w, x, t in
            try await w.server.send(.GET, "/parcels/\(x.parcel)", token: t) },
        Row(operation: "updateParcel", expected: expect("customerA=200 others=404"), setup: customerAParcel) { w, x, t in
            try await w.server.send(.PATCH, "/parcels/\(x.parcel)", json: ["name": "Books"], token: t) },
        // No carrier adapter is configured in the matrix: its owner hears 409, others 404.
        Row(operation: "refreshParcel", expected: expect("customerA=409 others=404"), setup: customerAParcel) { w, x, t in
            try await w.server.send(.POST, "/parcels/\(x.parcel)/refresh", token: t) },
        Row(operation: "deleteParcel", expected: expect("customerA=204 others=404"), setup: customerAParcel) { w, x, t in
            try await w.server.send(.DELETE, "/parcels/\(x.parcel)", token: t) },
        Row(operation: "shareParcel", expected: expect("customerA=200 others=404"), setup: customerAParcel) { w, x, t in
            try await w.server.send(.POST, "/parcels/\(x.parcel)/shares", json: ["email": "boss@courier.example"], token: t) },
        Row(operation: "unshareParcel", expected: expect("customerA=204 others=404"), setup: customerAParcel) { w, x, t in
            try await w.server.send(.DELETE, "/parcels/\(x.parcel)/shares/\(UUID().uuidString)", token: t) },
        Row(operation: "createParcelLink", expected: expect("customerA=200 others=404"), setup: customerAParcel) { w, x, t in
            try await w.server.send(.POST, "/parcels/\(x.parcel)/link", token: t) },
        Row(operation: "revokeParcelLink", expected: expect("customerA=200 others=404"), setup: customerAParcel) { w, x, t in
            try await w.server.send(.DELETE, "/parcels/\(x.parcel)/link", token: t) },
        Row(operation: "listTracked", expected: expect("others=200"), setup: nothing) { w, _, t in
            try await w.server.send(.GET, "/tracked?filter=all", token: t) },
        Row(operation: "getMyCarrierStatistics", expected: expect("others=200"), setup: nothing) { w, _, t in
            try await w.server.send(.GET, "/me/statistics/carriers", token: t) },
        Row(operation: "createParcelsFromText", expected: expect("others=200"), setup: nothing) { w, _, t in
            try await w.server.send(.POST, "/parcel-imports", json: ["text": "UPS 1Z999AA10123456784", "name": "Matrix"], token: t) },
        Row(operation: "listShops", expected: expect("others=200"), setup: nothing) { w, _, t in
            try await w.server.send(.GET, "/me/shops", token: t) },
        Row(operation: "connectShop", expected: expect("others=201"), setup: nothing) { w, _, t in
            try await w.server.send(.POST, "/me/shops", json: ["platform": "woocommerce", "name": "Matrix shop"], token: t) },
        Row(operation: "disconnectShop", expected: expect("customerA=204 others=404"), setup: customerAShop) { w, x, t in
            try await w.server.send(.DELETE, "/me/shops/\(x.parcel)", token: t) },
        Row(operation: "listAPIKeys", expected: expect("others=200"), setup: nothing) { w, _, t in
            try await w.server.send(.GET, "/api-keys", token: t) },
        Row(operation: "createAPIKey", expected: expect("others=201"), setup: nothing) { w, _, t in
            try await w.server.send(.POST, "/api-keys", json: ["name": "Matrix", "scopes": ["parcels:read"]], token: t) },
        Row(operation: "revokeAPIKey", expected: expect("customerA=204 others=404"), setup: customerAKey) { w, x, t in
            try await w.server.send(.DELETE, "/api-keys/\(x.parcel)", token: t) },
        Row(operation: "exportCSV", expected: expect("others=200"), setup: nothing) { w, _, t in
            try await w.server.send(.GET, "/exports/shipments", token: t) },
        Row(operation: "listOrderImports", expected: expect("manager=200 others=403"), setup: nothing) { w, _, t in
            try await w.server.send(.GET, "/order-imports", token: t) },
        Row(operation: "uploadOrderImport", expected: expect("manager=201 others=403"), setup: nothing) { w, _, t in
            try await w.server.upload("/order-imports", parts: [.file("file", importFile, type: "text/csv", filename: "m.csv")], token: t) },
        Row(operation: "getOrderImport", expected: expect("manager=200 others=403"), setup: managerImport) { w, x, t in
            try await w.server.send(.GET, "/order-imports/\(x.parcel)", token: t) },
        Row(operation: "commitOrderImport", expected: expect("manager=200 others=403"), setup: managerImport) { w, x, t in
            try await w.server.send(.POST, "/order-imports/\(x.parcel)/commit", token: t) },
        Row(operation: "listConversations", expected: expect("others=200"), setup: nothing) { w, _, t in
            try await w.server.send(.GET, "/conversations", token: t) },
        Row(operation: "openConversation", expected: expect("customerA=200 driverA=200 manager=200 others=404"), setup: orderIn(.accepted)) { w, x, t in
            try await w.server.send(.POST, "/conversations", json: ["subject": ["kind": "shipment", "id": x.order]], token: t) },
        Row(operation: "getConversation", expected: expect("customerA=200 driverA=200 manager=200 others=404"), setup: conversation()) { w, x, t in
            try await w.server.send(.GET, "/conversations/\(x.parcel)", token: t) },
        Row(operation: "listMessages", expected: expect("customerA=200 driverA=200 manager=200 others=404"), setup: conversation()) { w, x, t in
            try await w.server.send(.GET, "/conversations/\(x.parcel)/messages", token: t) },
        Row(operation: "sendMessage", expected: expect("customerA=201 driverA=201 manager=201 others=404"), setup: conversation()) { w, x, t in
            try await w.server.send(.POST, "/conversations/\(x.parcel)/messages", json: ["text": "Hi", "clientMessageId": UUID().uuidString], token: t) },
        Row(operation: "editMessage", expected: expect("customerA=200 driverA=403 manager=403 others=404"), setup: conversation(by: .customerA)) { w, x, t in
            try await w.server.send(.PATCH, "/conversations/\(x.parcel)/messages/\(x.code)", json: ["text": "Hi again"], token: t) },
        Row(operation: "deleteMessage", expected: expect("customerA=200 driverA=403 manager=403 others=404"), setup: conversation(by: .customerA)) { w, x, t in
            try await w.server.send(.DELETE, "/conversations/\(x.parcel)/messages/\(x.code)", token: t) },
        Row(operation: "markConversation", expected: expect("customerA=200 driverA=200 manager=200 others=404"), setup: conversation()) { w, x, t in
            try await w.server.send(.POST, "/conversations/\(x.parcel)/markers", json: ["read": 1], token: t) },
        Row(operation: "reportInConversation", expected: expect("customerA=201 driverA=422 manager=201 others=404"), setup: conversation(by: .driverA)) { w, x, t in
            try await w.server.send(.POST, "/conversations/\(x.parcel)/reports", json: ["messageId": x.code, "reason": "spam"], token: t) },
        Row(operation: "sendImageMessage", expected: expect("customerA=201 driverA=201 manager=201 others=404"), setup: conversation()) { w, x, t in
            try await w.server.upload("/conversations/\(x.parcel)/images", parts: [.file("photo", SampleImages.photoJPEG, type: "image/jpeg", filename: "p.jpg"),
                                                                                  .text("clientMessageId", UUID().uuidString)], token: t) },
        Row(operation: "getMessageImage", expected: expect("customerA=200 driverA=200 manager=200 others=404"), setup: conversationWithPhoto) { w, x, t in
            try await w.server.send(.GET, "/conversations/\(x.parcel)/messages/\(x.code)/image", token: t) },
        Row(operation: "listReports", expected: expect("admin=200 others=403"), setup: nothing) { w, _, t in
            try await w.server.send(.GET, "/reports", token: t) },
        // the administration
        Row(operation: "reauthenticate", expected: expect("others=204"), setup: nothing) { w, _, t in
            try await w.server.send(.POST, "/auth/reauthenticate", json: ["password": TestServer.password], token: t) },
        Row(operation: "decideReport", expected: expect("admin=200 others=403"), setup: pendingReport) { w, x, t in
            try await w.server.send(.PATCH, "/reports/\(x.parcel)", json: ["status": "reviewed"], token: t) },
        Row(operation: "moderateContent", expected: expect("admin=200 others=403"), setup: customerATrip) { w, x, t in
            try await w.server.send(.PUT, "/admin/content/trip/\(x.trip)", json: ["hidden": true, "reason": "matrix"], token: t) },
        // insurance
        Row(operation: "getInsuranceTable", expected: expect("others=200"), setup: nothing) { w, _, t in
            try await w.server.send(.GET, "/insurance", token: t) },
        Row(operation: "putInsuranceTable", expected: expect("admin=200 others=403"), setup: nothing) { w, _, t in
            try await w.server.send(.PUT, "/insurance", json: ["currency": "CHF", "claimWindowDays": 30, "secondApprovalAbove": 50_000,
                                                               "bands": [["upTo": 500_000, "rateBasisPoints": 150, "minimumPremium": 200]] as [[String: any Sendable]]],
                                    token: t) },
        // loyalty points
        Row(operation: "getLoyalty", expected: expect("others=200"), setup: nothing) { w, _, t in
            try await w.server.send(.GET, "/loyalty", token: t) },
        Row(operation: "getLoyaltyRules", expected: expect("others=200"), setup: nothing) { w, _, t in
            try await w.server.send(.GET, "/loyalty/rules", token: t) },
        Row(operation: "putLoyaltyRules", expected: expect("admin=200 others=403"), setup: nothing) { w, _, t in
            try await w.server.send(.PUT, "/loyalty/rules", json: ["pointsPerUnit": 1, "pointValue": 5, "validityDays": 365,
                                                                   "minimumRedemption": 100, "maxDiscountPercent": 50], token: t) },
        // subscription plans
        Row(operation: "listPlans", expected: expect("others=200"), setup: nothing) { w, _, t in
            try await w.server.send(.GET, "/plans", token: t) },
        Row(operation: "createPlan", expected: expect("admin=201 others=403"), setup: nothing) { w, _, t in
            try await w.server.send(.POST, "/plans", json: SubscriptionTests.pro, token: t) },
        Row(operation: "updatePlan", expected: expect("admin=200 others=403"), setup: offeredPlan) { w, x, t in
            try await w.server.send(.PUT, "/plans/\(x.code)", json: SubscriptionTests.pro, token: t) },
        Row(operation: "listSubscribers", expected: expect("admin=200 others=403"), setup: nothing) { w, _, t in
            try await w.server.send(.GET, "/subscriptions", token: t) },
        Row(operation: "getSubscription", expected: expect("others=404"), setup: nothing) { w, _, t in
            try await w.server.send(.GET, "/subscription", token: t) },
        Row(operation: "subscribe", expected: expect("others=201"), setup: offeredPlan) { w, x, t in
            try await w.server.send(.POST, "/subscription", json: ["planId": x.code], token: t) },
        Row(operation: "cancelSubscription", expected: expect("others=404"), setup: nothing) { w, _, t in
            try await w.server.send(.POST, "/subscription/cancel", token: t) },
        Row(operation: "resumeSubscription", expected: expect("others=404"), setup: nothing) { w, _, t in
            try await w.server.send(.POST, "/subscription/resume", token: t) },
        Row(operation: "fileClaim", expected: expect("customerA=201 driverA=403 manager=403 others=404"), setup: insuredDelivered) { w, x, t in
            try await InsuranceTests.file(w.server, x.order, kind: "damaged", amount: 10_000, photo: nil, token: t) },
        Row(operation: "listClaims", expected: expect("others=200"), setup: nothing) { w, _, t in
            try await w.server.send(.GET, "/claims", token: t) },
        Row(operation: "getClaim", expected: expect("customerA=200 manager=200 admin=200 others=404"), setup: customerAClaim) { w, x, t in
            try await w.server.send(.GET, "/claims/\(x.code)", token: t) },
        Row(operation: "getClaimPhoto", expected: expect("customerA=200 manager=200 admin=200 others=404"), setup: customerAClaim) { w, x, t in
            try await w.server.send(.GET, "/claims/\(x.code)/photos/\(x.file)", token: t) },
        Row(operation: "decideClaim", expected: expect("manager=200 admin=200 others=403"), setup: customerAClaim) { w, x, t in
            try await w.server.send(.POST, "/claims/\(x.code)/decision", json: ["decision": "decline", "reason": "matrix"], token: t) },
        Row(operation: "listAuditLog", expected: expect("admin=200 others=403"), setup: nothing) { w, _, t in
            try await w.server.send(.GET, "/admin/audit", token: t) },
        Row(operation: "exportAuditLog", expected: expect("admin=200 others=403"), setup: nothing) { w, _, t in
            try await w.server.send(.GET, "/admin/audit.csv", token: t) },
        Row(operation: "reportRating", expected: expect("driverA=422 others=201"), setup: ratedBothWays) { w, x, t in
            try await w.server.send(.POST, "/ratings/\(x.code)/reports", json: ["reason": "other"], token: t) },
        Row(operation: "getOrderLabel", expected: expect("customerA=200 driverA=200 manager=200 others=404"), setup: orderIn(.accepted)) { w, x, t in
            try await w.server.send(.GET, "/orders/\(x.order)/label", token: t) },
        Row(operation: "scanLabel", expected: expect("customerA=200 driverA=200 manager=200 others=404"), setup: labelledOrder) { w, x, t in
            try await w.server.send(.POST, "/scans", json: ["code": x.code], token: t) },
        Row(operation: "listCounters", expected: expect("others=200"), setup: nothing) { w, _, t in
            try await w.server.send(.GET, "/counters", token: t) },
        Row(operation: "createCounter", expected: expect("admin=201 others=403"), setup: nothing) { w, _, t in
            try await w.server.send(.POST, "/counters", json: ["name": "Guichet", "address": ["street": "Place de la Gare 1", "postalCode": "1003", "city": "Lausanne"], "hours": ["weekly": ["08:00-12:00", "", "", "", "", "", ""]]], token: t) },
        Row(operation: "getCounter", expected: expect("others=200"), setup: aCounter) { w, x, t in
            try await w.server.send(.GET, "/counters/\(x.trip)", token: t) },
        Row(operation: "updateCounter", expected: expect("admin=200 others=403"), setup: aCounter) { w, x, t in
            try await w.server.send(.PUT, "/counters/\(x.trip)", json: ["name": "Guichet", "address": ["street": "Place de la Gare 1", "postalCode": "1003", "city": "Lausanne"], "hours": ["weekly": ["08:00-12:00", "", "", "", "", "", ""]]], token: t) },
        Row(operation: "addCounterStaff", expected: expect("admin=200 others=403"), setup: aCounter) { w, x, t in
            try await w.server.send(.PUT, "/counters/\(x.trip)/staff/\(x.user)", token: t) },
        Row(operation: "removeCounterStaff", expected: expect("admin=200 others=403"), setup: aCounter) { w, x, t in
            try await w.server.send(.DELETE, "/counters/\(x.trip)/staff/\(x.user)", token: t) },
        // The desk is its staff's (dispatch may look at the day); a 409 for staff handing out a parcel
        // the counter does not hold shows they got past the authorization.
        Row(operation: "getCounterDay", expected: expect("admin=200 driverA=200 manager=200 others=403"), setup: counterParcel) { w, x, t in
            try await w.server.send(.GET, "/counters/\(x.trip)/day", token: t) },
        Row(operation: "checkInAtCounter", expected: expect("driverA=200 others=403"), setup: counterParcel) { w, x, t in
            try await w.server.upload("/counters/\(x.trip)/check-ins", parts: [.text("code", x.code)], token: t) },
        Row(operation: "handOutAtCounter", expected: expect("driverA=409 others=403"), setup: counterParcel) { w, x, t in
            try await w.server.send(.POST, "/counters/\(x.trip)/hand-outs", json: ["code": x.code, "receiverCode": "123456", "collectedBy": "Bea"], token: t) },
        Row(operation: "listSlotTemplates", expected: expect("manager=200 others=403"), setup: nothing) { w, _, t in
            try await w.server.send(.GET, "/slot-templates", token: t) },
        Row(operation: "createSlotTemplate", expected: expect("manager=201 others=403"), setup: nothing) { w, _, t in
            try await w.server.send(.POST, "/slot-templates", json: ["kind": "pickup", "weekday": 2, "start": "08:00", "end": "09:00", "capacity": 3], token: t) },
        Row(operation: "updateSlotTemplate", expected: expect("manager=200 others=403"), setup: deliverySlot) { w, x, t in
            try await w.server.send(.PATCH, "/slot-templates/\(x.trip)", json: ["capacity": 999], token: t) },
        Row(operation: "listSlots", expected: expect("others=200"), setup: nothing) { w, _, t in
            try await w.server.send(.GET, "/slots?kind=pickup&postalCode=3005", token: t) },
        Row(operation: "holdSlot", expected: expect("others=200"), setup: deliverySlot) { w, x, t in
            try await w.server.send(.POST, "/slots/\(x.code)/hold", token: t) },
        Row(operation: "releaseSlot", expected: expect("others=204"), setup: deliverySlot) { w, x, t in
            try await w.server.send(.DELETE, "/slots/\(x.code)/hold", token: t) },
        Row(operation: "listOrderSlots", expected: expect("customerA=200 driverA=200 manager=200 others=404"), setup: orderIn(.accepted)) { w, x, t in
            try await w.server.send(.GET, "/orders/\(x.order)/slots", token: t) },
        Row(operation: "bookSlot", expected: expect("customerA=201 driverA=403 manager=201 others=404"), setup: orderAndSlot) { w, x, t in
            try await w.server.send(.POST, "/orders/\(x.order)/slots", json: ["slotId": x.code], token: t) },
        Row(operation: "listSlotBookings", expected: expect("manager=200 others=403"), setup: nothing) { w, _, t in
            try await w.server.send(.GET, "/slot-bookings", token: t) },
        Row(operation: "decideSlotBooking", expected: expect("customerA=200 driverA=403 manager=200 others=404"), setup: slotBooking) { w, x, t in
            try await w.server.send(.POST, "/slot-bookings/\(x.request)/decision", json: ["action": "cancel"], token: t) },
        Row(operation: "getChatSettings", expected: expect("others=200"), setup: nothing) { w, _, t in
            try await w.server.send(.GET, "/me/chat-settings", token: t) },
        Row(operation: "setChatSettings", expected: expect("others=200"), setup: nothing) { w, _, t in
            try await w.server.send(.PUT, "/me/chat-settings", json: ["previews": false], token: t) },
        Row(operation: "getShipmentRatings", expected: expect("customerA=200 driverA=200 manager=200 others=404"), setup: orderIn(.delivered)) { w, x, t in
            try await w.server.send(.GET, "/shipments/\(x.order)/ratings", token: t) },
        Row(operation: "rateShipment", expected: expect("customerA=201 driverA=201 manager=403 others=404"), setup: orderIn(.delivered)) { w, x, t in
            try await w.server.send(.POST, "/shipments/\(x.order)/ratings", json: ["stars": 5], token: t) },
        Row(operation: "rateParcelCarrier", expected: expect("customerA=201 others=404"), setup: deliveredParcel) { w, x, t in
            try await w.server.send(.POST, "/parcels/\(x.parcel)/rating", json: ["stars": 4], token: t) },
        Row(operation: "getPersonRatings", expected: expect("others=200"), setup: customerAUser) { w, x, t in
            try await w.server.send(.GET, "/users/\(x.user)/ratings", token: t) },
        Row(operation: "getCarrierRatings", expected: expect("others=200"), setup: nothing) { w, _, t in
            try await w.server.send(.GET, "/carriers/dhl/ratings", token: t) },
        Row(operation: "respondToRating", expected: expect("customerA=200 driverA=403 manager=403 others=404"), setup: ratedBothWays) { w, x, t in
            try await w.server.send(.POST, "/ratings/\(x.code)/response", json: ["text": "Thanks"], token: t) },
        Row(operation: "getOperationsStatistics", expected: expect("manager=200 others=403"), setup: nothing) { w, _, t in
            try await w.server.send(.GET, "/statistics/operations", token: t) },
        Row(operation: "exportOperationsStatistics", expected: expect("manager=200 others=403"), setup: nothing) { w, _, t in
            try await w.server.send(.GET, "/statistics/operations/export", token: t) },
        Row(operation: "createRoutePlan", expected: expect("manager=201 others=403"), setup: nothing) { w, _, t in
            try await w.server.send(.POST, "/route-plans", json: ["seconds": 0.2], token: t) },
        Row(operation: "getLatestRoutePlan", expected: expect("manager=200 others=403"), setup: managerPlan) { w, _, t in
            try await w.server.send(.GET, "/route-plans/latest", token: t) },
        Row(operation: "getRoutePlan", expected: expect("manager=200 others=403"), setup: managerPlan) { w, x, t in
            try await w.server.send(.GET, "/route-plans/\(x.parcel)", token: t) },
        Row(operation: "applyRoutePlan", expected: expect("manager=200 others=403"), setup: managerPlan) { w, x, t in
            try await w.server.send(.POST, "/route-plans/\(x.parcel)/apply", token: t) },
        Row(operation: "getDispatchSettings", expected: expect("manager=200 others=403"), setup: nothing) { w, _, t in
            try await w.server.send(.GET, "/dispatch-settings", token: t) },
        Row(operation: "setDispatchSettings", expected: expect("manager=200 others=403"), setup: nothing) { w, _, t in
            try await w.server.send(.PUT, "/dispatch-settings", json: ["autoDispatch": false], token: t) },
        Row(operation: "getDriverRoute", expected: expect("driverA=200 driverB=200 manager=200 others=403"), setup: nothing) { w, _, t in
            try await w.server.send(.GET, "/drivers/me/route", token: t) },
        Row(operation: "bulkOrderAction", expected: expect("manager=200 others=403"), setup: pendingOrder) { w, x, t in
            try await w.server.send(.POST, "/bulk-order-actions", json: ["action": "cancel", "orderIds": [x.order], "reason": "matrix"], token: t) },
        Row(operation: "listWebhookEndpoints", expected: expect("others=200"), setup: nothing) { w, _, t in
            try await w.server.send(.GET, "/webhook-endpoints", token: t) },
        Row(operation: "createWebhookEndpoint", expected: expect("others=201"), setup: nothing) { w, _, t in
            try await w.server.send(.POST, "/webhook-endpoints", json: ["url": "https://hooks.example.com/m", "events": ["shipment.placed"]], token: t) },
        Row(operation: "getWebhookEndpoint", expected: expect("customerA=200 others=404"), setup: customerAEndpoint) { w, x, t in
            try await w.server.send(.GET, "/webhook-endpoints/\(x.parcel)", token: t) },
        Row(operation: "updateWebhookEndpoint", expected: expect("customerA=200 others=404"), setup: customerAEndpoint) { w, x, t in
            try await w.server.send(.PATCH, "/webhook-endpoints/\(x.parcel)", json: ["description": "Shop"], token: t) },
        Row(operation: "deleteWebhookEndpoint", expected: expect("customerA=204 others=404"), setup: customerAEndpoint) { w, x, t in
            try await w.server.send(.DELETE, "/webhook-endpoints/\(x.parcel)", token: t) },
        Row(operation: "rotateWebhookSecret", expected: expect("customerA=200 others=404"), setup: customerAEndpoint) { w, x, t in
            try await w.server.send(.POST, "/webhook-endpoints/\(x.parcel)/secret", token: t) },
        Row(operation: "pingWebhookEndpoint", expected: expect("customerA=202 others=404"), setup: customerAEndpoint) { w, x, t in
            try await w.server.send(.POST, "/webhook-endpoints/\(x.parcel)/pings", token: t) },
        Row(operation: "listWebhookDeliveries", expected: expect("customerA=200 others=404"), setup: customerAEndpoint) { w, x, t in
            try await w.server.send(.GET, "/webhook-endpoints/\(x.parcel)/deliveries", token: t) },
        Row(operation: "redeliverWebhook", expected: expect("customerA=202 others=404"), setup: customerAEndpoint) { w, x, t in
            try await w.server.send(.POST, "/webhook-endpoints/\(x.parcel)/deliveries/\(x.code)/redeliveries", token: t) },
        // This server receives no mail (no INBOUND_MAIL_DOMAIN): said plainly.
        Row(operation: "getForwardingAddress", expected: expect("others=409"), setup: nothing) { w, _, t in
            try await w.server.send(.GET, "/me/forwarding-address", token: t) },
        Row(operation: "renewForwardingAddress", expected: expect("others=409"), setup: nothing) { w, _, t in
            try await w.server.send(.POST, "/me/forwarding-address", token: t) },
        Row(operation: "getParcelAlerts", expected: expect("others=200"), setup: nothing) { w, _, t in
            try await w.server.send(.GET, "/me/parcel-alerts", token: t) },
        Row(operation: "setParcelAlerts", expected: expect("others=200"), setup: nothing) { w, _, t in
            try await w.server.send(.PUT, "/me/parcel-alerts", json: ["alerts": "important", "mail": false, "push": true], token: t) },
        Row(operation: "listMyTrips", expected: expect("others=200"), setup: nothing) { w, _, t in
            try await w.server.send(.GET, "/trips", token: t) },
        Row(operation: "postTrip", expected: expect("customerA=201 others=403"), setup: customerATrip) { w, _, t in
            try await w.server.send(.POST, "/trips", json: TravelTests.trip(inDays: 4), token: t) },
        Row(operation: "getTrip", expected: expect("others=200"), setup: customerATrip) { w, x, t in
            try await w.server.send(.GET, "/trips/\(x.trip)", token: t) },
        Row(operation: "updateTrip", expected: expect("admin=403 customerA=200 others=404"), setup: customerATrip) { w, x, t in
            try await w.server.send(.PATCH, "/trips/\(x.trip)", json: ["capacityParcels": 3], token: t) },
        Row(operation: "cancelTrip", expected: expect("admin=200 customerA=200 others=403"), setup: customerATrip) { w, x, t in
            try await w.server.send(.POST, "/trips/\(x.trip)/cancel", token: t) },
        Row(operation: "searchTrips", expected: expect("others=200"), setup: customerATrip) { w, _, t in
            try await w.server.send(.GET, "/travel/search?from=CH&to=CH-ZH&category=documents&grams=100", token: t) },
        Row(operation: "sendTripRequest", expected: expect("customerA=409 others=201"), setup: customerATrip) { w, x, t in
            try await w.server.send(.POST, "/trips/\(x.trip)/requests", json: TripRequestTests.request(), token: t) },
        Row(operation: "listTripRequests", expected: expect("others=200"), setup: nothing) { w, _, t in
            try await w.server.send(.GET, "/trip-requests?box=received", token: t) },
        Row(operation: "getTripRequest", expected: expect("admin=200 customerA=200 customerB=200 manager=200 others=404"), setup: requestByB) { w, x, t in
            try await w.server.send(.GET, "/trip-requests/\(x.request)", token: t) },
        Row(operation: "getTripRequestPhoto", expected: expect("admin=200 customerA=200 customerB=200 manager=200 others=404"), setup: requestWithPhoto) { w, x, t in
            try await w.server.send(.GET, "/trip-requests/\(x.request)/photo", token: t) },
        Row(operation: "setTripRequestPhoto", expected: expect("admin=403 customerB=200 customerA=403 manager=403 others=404"), setup: requestByB) { w, x, t in
            try await w.server.upload(.PUT, "/trip-requests/\(x.request)/photo",
                                      parts: [.file("photo", SampleImages.photoJPEG, type: "image/jpeg", filename: "p.jpg")], token: t) },
        Row(operation: "acceptTripRequest", expected: expect("customerA=200 customerB=403 others=404"), setup: requestByB) { w, x, t in
            try await w.server.send(.POST, "/trip-requests/\(x.request)/accept", token: t) },
        Row(operation: "rejectTripRequest", expected: expect("customerA=200 customerB=403 others=404"), setup: requestByB) { w, x, t in
            try await w.server.send(.POST, "/trip-requests/\(x.request)/reject", json: ["reason": "full"], token: t) },
        Row(operation: "cancelTripRequest", expected: expect("admin=403 customerB=200 customerA=403 manager=403 others=404"), setup: requestByB) { w, x, t in
            try await w.server.send(.POST, "/trip-requests/\(x.request)/cancel", json: ["reason": "plans"], token: t) },
        Row(operation: "pickUpTripRequest", expected: expect("admin=403 customerA=200 customerB=403 manager=403 others=404"), setup: paidRequest) { w, x, t in
            try await w.server.send(.POST, "/trip-requests/\(x.request)/pickup", token: t) },
        Row(operation: "deliverTripRequest", expected: expect("admin=403 customerA=200 customerB=403 manager=403 others=404"), setup: pickedUpRequest) { w, x, t in
            try await w.server.send(.POST, "/trip-requests/\(x.request)/deliver", json: ["code": x.code], token: t) },
        Row(operation: "setProfilePicture", expected: expect("others=204"), setup: nothing) { w, _, t in
            try await w.server.upload(.PUT, "/me/picture", parts: [.file("photo", SampleImages.squarePNG, type: "image/png", filename: "p.png")], token: t) },
        Row(operation: "deleteProfilePicture", expected: expect("others=204"), setup: nothing) { w, _, t in
            try await w.server.send(.DELETE, "/me/picture", token: t) },
        // Customer A has open trips by now (the rows above): everyone who may send sees who would
        // carry their parcel. Who may not see a picture is ProfilePictureTests' to show.
        Row(operation: "getProfilePicture", expected: expect("others=200"), setup: customerAPicture) { w, x, t in
            try await w.server.send(.GET, "/users/\(x.user)/picture", token: t) },
        Row(operation: "becomeTraveller", expected: expect("others=200"), setup: nothing) { w, _, t in
            try await w.server.send(.POST, "/me/traveller", json: ["acceptTerms": true], token: t) },
        // me
        Row(operation: "getMe", expected: expect("others=200"), setup: nothing) { w, _, t in try await w.server.send(.GET, "/me", token: t) },
        Row(operation: "updateMe", expected: expect("others=200"), setup: nothing) { w, _, t in
            try await w.server.send(.PATCH, "/me", json: ["city": "Basel"], token: t) },
        Row(operation: "registerDevice", expected: expect("others=201"), setup: nothing) { w, _, t in
            try await w.server.send(.POST, "/me/devices", json: ["platform": "android", "pushToken": "tok-\(UUID().uuidString)"], token: t) },
        Row(operation: "listNotifications", expected: expect("others=200"), setup: nothing) { w, _, t in
            try await w.server.send(.GET, "/notifications", token: t) },
        Row(operation: "markNotificationRead", expected: expect("customerA=200 others=404"), setup: customerANotification) { w, x, t in
            try await w.server.send(.POST, "/notifications/\(x.notification)/read", token: t) },
        Row(operation: "markAllNotificationsRead", expected: expect("others=200"), setup: nothing) { w, _, t in
            try await w.server.send(.POST, "/notifications/read-all", token: t) },
        Row(operation: "getPaymentOptions", expected: expect("others=200"), setup: nothing) { w, _, t in
            try await w.server.send(.GET, "/me/payment-options", token: t) },
        // users
        Row(operation: "listUsers", expected: expect("manager=200 admin=200 others=403"), setup: nothing) { w, _, t in
            try await w.server.send(.GET, "/users", token: t) },
        Row(operation: "createUser", expected: expect("manager=201 admin=201 others=403"), setup: nothing) { w, _, t in
            try await w.server.send(.POST, "/users", json: ["role": "driver", "firstName": "New", "lastName": "Driver",
                                                            "email": "new-\(UUID().uuidString.prefix(8))@courier.example"], token: t) },
        Row(operation: "getUser", expected: expect("manager=200 admin=200 others=403"), setup: customerAUser) { w, x, t in
            try await w.server.send(.GET, "/users/\(x.user)", token: t) },
        Row(operation: "updateUser", expected: expect("admin=200 others=403"), setup: customerAUser) { w, x, t in
            try await w.server.send(.PATCH, "/users/\(x.user)", json: ["disabled": false], token: t) },
        // A reset ends the account's sessions: done to a spare account.
        Row(operation: "resetUser", expected: expect("manager=202 admin=202 others=403"), setup: spareUser) { w, x, t in
            try await w.server.send(.POST, "/users/\(x.user)/reset", token: t) },
        Row(operation: "grantCapability", expected: expect("manager=200 admin=200 others=403"), setup: spareUser) { w, x, t in
            try await w.server.send(.PUT, "/users/\(x.user)/capabilities/counter", token: t) },
        Row(operation: "revokeCapability", expected: expect("manager=200 admin=200 others=403"), setup: spareUser) { w, x, t in
            try await w.server.send(.DELETE, "/users/\(x.user)/capabilities/counter", token: t) },
        Row(operation: "listRestrictions", expected: expect("manager=200 admin=200 others=403"), setup: customerAUser) { w, x, t in
            try await w.server.send(.GET, "/users/\(x.user)/restrictions", token: t) },
        Row(operation: "restrictUser", expected: expect("admin=201 others=403"), setup: spareUser) { w, x, t in
            try await w.server.send(.POST, "/users/\(x.user)/restrictions", json: ["kind": "banned", "reason": "matrix"], token: t) },
        Row(operation: "liftRestriction", expected: expect("admin=200 others=403"), setup: restrictedUser) { w, x, t in
            try await w.server.send(.DELETE, "/users/\(x.user)/restrictions/\(x.restriction)", token: t) },
        // tariff, quotes, orders
        Row(operation: "getTariff", expected: expect("manager=200 others=403"), setup: nothing) { w, _, t in
            try await w.server.send(.GET, "/tariff", token: t) },
        Row(operation: "putTariff", expected: expect("manager=200 others=403"), setup: nothing) { w, _, t in
            let current = try await w.server.send(.GET, "/tariff", token: w.cast.manager.access).json.value as! [String: Any]
            var body: [String: any Sendable] = [:]
            for key in ["currency", "small", "medium", "large", "expressMultiplierPercent", "roundingIncrement"] {
                body[key] = Self.sendable(current[key])
            }
            return try await w.server.send(.PUT, "/tariff", json: body, token: t) },
        Row(operation: "createQuote", expected: expect("others=200"), setup: nothing) { w, _, t in
            try await w.server.send(.POST, "/quotes", json: ["pickup": TestServer.bern, "dropoff": TestServer.bern,
                                                             "weightClass": "small", "service": "standard"], token: t) },
        Row(operation: "listOrders", expected: expect("others=200"), setup: nothing) { w, _, t in
            try await w.server.send(.GET, "/orders", token: t) },
        // Every verified account sends, staff included.
        Row(operation: "createOrder", expected: expect("others=201"), setup: nothing) { w, _, t in
            try await w.server.send(.POST, "/orders", json: TestServer.orderBody(extra: ["pickup": TestServer.bern]), token: t) },
        // shipments (the successor of /orders)
        Row(operation: "listShipments", expected: expect("others=200"), setup: nothing) { w, _, t in
            try await w.server.send(.GET, "/shipments", token: t) },
        Row(operation: "getShipment", expected: expect("customerA=200 driverA=200 manager=200 customerB=200 others=404"), setup: deliveredToCustomerB) { w, x, t in
            try await w.server.send(.GET, "/shipments/\(x.order)", token: t) },
        // Only the receiver confirms receipt; the sender, its driver and dispatch see it but may not.
        Row(operation: "confirmReceipt", expected: expect("customerB=200 customerA=403 driverA=403 manager=403 others=404"), setup: deliveredToCustomerB) { w, x, t in
            try await w.server.send(.POST, "/shipments/\(x.order)/receipt", json: [:], token: t) },
        Row(operation: "getOrder", expected: expect("customerA=200 driverA=200 manager=200 others=404"), setup: orderIn(.assigned)) { w, x, t in
            try await w.server.send(.GET, "/orders/\(x.order)", token: t) },
        Row(operation: "confirmPayment", expected: expect("customerA=200 manager=200 others=404"), setup: cardOrder) { w, x, t in
            try await w.server.send(.POST, "/orders/\(x.order)/payment/confirm", token: t) },
        Row(operation: "cancelOrder", expected: expect("customerA=200 manager=200 others=404"), setup: pendingOrder) { w, x, t in
            try await w.server.send(.POST, "/orders/\(x.order)/cancel", json: ["reason": "matrix"], token: t) },
        Row(operation: "assignOrder", expected: expect("manager=200 others=403"), setup: pendingOrder) { w, x, t in
            try await w.server.send(.POST, "/orders/\(x.order)/assign", json: ["driverId": w.cast.driver.userID], token: t) },
        // The order's customer and managers see it but may not act for the driver: 403.
        Row(operation: "acceptOrder", expected: expect("driverA=200 customerA=403 manager=403 others=404"), setup: orderIn(.assigned)) { w, x, t in
            try await w.server.send(.POST, "/orders/\(x.order)/accept", token: t) },
        Row(operation: "pickupOrder", expected: expect("driverA=200 customerA=403 manager=403 others=404"), setup: orderIn(.accepted)) { w, x, t in
            try await w.server.send(.POST, "/orders/\(x.order)/pickup", json: TestServer.cash(try await w.server.price(of: x.order)), token: t) },
        Row(operation: "deliverOrder", expected: expect("driverA=200 customerA=403 manager=403 others=404"), setup: orderIn(.inTransit)) { w, x, t in
            try await w.server.deliver(x.order, token: t ?? "") },
        Row(operation: "failOrder", expected: expect("driverA=200 customerA=403 manager=403 others=404"), setup: orderIn(.inTransit)) { w, x, t in
            try await w.server.send(.POST, "/orders/\(x.order)/fail", json: ["reason": "recipient_absent"], token: t) },
        Row(operation: "addOrderPhoto", expected: expect("customerA=201 manager=403 others=404"), setup: pendingOrder) { w, x, t in
            try await w.server.upload("/orders/\(x.order)/photos", parts: [.file("photo", SampleImages.photoJPEG, type: "image/jpeg")], token: t) },
        Row(operation: "getOrderFile", expected: expect("customerA=200 driverA=200 manager=200 others=404"), setup: deliveredWithFile) { w, x, t in
            try await w.server.send(.GET, "/orders/\(x.order)/files/\(x.file)", token: t) },
        Row(operation: "listInvoices", expected: expect("manager=200 others=403"), setup: nothing) { w, _, t in
            try await w.server.send(.GET, "/invoices", token: t) },
        // live
        Row(operation: "getDuty", expected: expect("driverA=200 driverB=200 manager=200 others=403"), setup: nothing) { w, _, t in
            try await w.server.send(.GET, "/drivers/me/duty", token: t) },
        Row(operation: "setDuty", expected: expect("driverA=200 driverB=200 manager=200 others=403"), setup: nothing) { w, _, t in
            try await w.server.send(.PUT, "/drivers/me/duty", json: ["onDuty": true], token: t) },
        // Customers A and B are travellers by now (becomeTraveller above): they share their position
        // with the shipments they carry (PositionSharing.ownShipments), without duty.
        Row(operation: "reportLocations", expected: expect("admin=200 driverA=200 driverB=200 manager=200 customerA=200 customerB=200 others=403"), setup: nothing) { w, _, t in
            if let t { _ = try? await w.server.send(.PUT, "/drivers/me/duty", json: ["onDuty": true], token: t) }
            return try await w.server.report(t ?? "", [(47.0, 8.0)], at: Date().addingTimeInterval(Double.random(in: -300 ... -1))) },
        Row(operation: "getDriverDay", expected: expect("driverA=200 driverB=200 manager=200 others=403"), setup: nothing) { w, _, t in
            try await w.server.send(.GET, "/drivers/me/day", token: t) },
        Row(operation: "getFleet", expected: expect("manager=200 others=403"), setup: nothing) { w, _, t in
            try await w.server.send(.GET, "/fleet", token: t) },
        Row(operation: "getOrderTrail", expected: expect("customerA=200 driverA=200 manager=200 others=404"), setup: orderIn(.accepted)) { w, x, t in
            try await w.server.send(.GET, "/orders/\(x.order)/trail", token: t) },
        Row(operation: "renewTrackingLink", expected: expect("customerA=200 manager=200 driverA=403 others=404"), setup: orderIn(.assigned)) { w, x, t in
            try await w.server.send(.POST, "/orders/\(x.order)/tracking-link", token: t) },
        Row(operation: "revokeTrackingLink", expected: expect("customerA=204 manager=204 driverA=403 others=404"), setup: orderIn(.assigned)) { w, x, t in
            try await w.server.send(.DELETE, "/orders/\(x.order)/tracking-link", token: t) },
        Row(operation: "createLiveTicket", expected: expect("others=201"), setup: nothing) { w, _, t in
            try await w.server.send(.POST, "/live/ticket", token: t) },
        Row(operation: "changePassword", expected: expect("others=200"), setup: nothing) { w, _, t in
            try await w.server.send(.POST, "/me/password", json: ["currentPassword": TestServer.password, "newPassword": TestServer.password + "-2"], token: t) },
    ]

    // MARK: the same rules, asked of the services directly

    typealias ServiceCall = @Sendable (World, Target, Principal) async throws -> Void

    /// Each row's operation as a call to the service behind it, with no HTTP in between. Rows
    /// that are about the caller's own account only (no rule to break) are listed in `noRule`.
    static let serviceCalls: [String: ServiceCall] = {
        @Sendable func orders(_ w: World) -> Orders { Orders(services: w.server.app.waybill, db: w.server.db, logger: w.server.app.logger) }
        @Sendable func accounts(_ w: World) -> Accounts { Accounts(services: w.server.app.waybill, db: w.server.db, logger: w.server.app.logger, clientAddress: "127.0.0.1") }
        @Sendable func tracking(_ w: World) -> Tracking { Tracking(services: w.server.app.waybill, db: w.server.db, logger: w.server.app.logger) }
        @Sendable func rates(_ w: World) -> Ratings { Ratings(services: w.server.app.waybill, db: w.server.db, logger: w.server.app.logger) }
        @Sendable func chats(_ w: World) -> Conversations { Conversations(services: w.server.app.waybill, db: w.server.db, logger: w.server.app.logger) }
        @Sendable func stats(_ w: World) -> OperationsStats { OperationsStats(services: w.server.app.waybill, db: w.server.db, logger: w.server.app.logger) }
        @Sendable func routePlans(_ w: World) -> RoutePlans { RoutePlans(services: w.server.app.waybill, db: w.server.db, logger: w.server.app.logger) }
        @Sendable func id<Tag>(_ raw: String) -> Tagged<Tag, UUID> { Tagged(uuidString: raw)! }
        @Sendable func parcels(_ w: World) -> Parcels { Parcels(services: w.server.app.waybill, db: w.server.db, logger: w.server.app.logger) }
        @Sendable func webhooks(_ w: World) -> Webhooks { Webhooks(services: w.server.app.waybill, db: w.server.db, logger: w.server.app.logger) }
        @Sendable func imports(_ w: World) -> OrderImports { OrderImports(services: w.server.app.waybill, db: w.server.db, logger: w.server.app.logger) }
        @Sendable func shops(_ w: World) -> Shops { Shops(services: w.server.app.waybill, db: w.server.db, logger: w.server.app.logger) }
        @Sendable func counters(_ w: World) -> Counters { Counters(services: w.server.app.waybill, db: w.server.db, logger: w.server.app.logger) }
        @Sendable func desks(_ w: World) -> CounterDesks { CounterDesks(services: w.server.app.waybill, db: w.server.db, logger: w.server.app.logger) }
        @Sendable func slots(_ w: World) -> Timeslots { Timeslots(services: w.server.app.waybill, db: w.server.db, logger: w.server.app.logger) }
        @Sendable func travel(_ w: World) -> Travel { Travel(services: w.server.app.waybill, db: w.server.db, logger: w.server.app.logger) }
        @Sendable func claims(_ w: World) -> Claims { Claims(services: w.server.app.waybill, db: w.server.db, logger: w.server.app.logger) }
        @Sendable func points(_ w: World) -> Loyalty { Loyalty(services: w.server.app.waybill, db: w.server.db, logger: w.server.app.logger) }
        @Sendable func plans(_ w: World) -> Subscriptions { Subscriptions(services: w.server.app.waybill, db: w.server.db, logger: w.server.app.logger) }
        let pro = PlanTerms(name: "Pro", monthlyPrice: 4_900, includedDeliveries: 2, discountPercent: 20, expressIncluded: true)
        /// The account as it is now (a request reads it afresh; a setup may have made it a traveller).
        @Sendable func fresh(_ w: World, _ p: Principal) async throws -> Principal {
            try Principal(user: try #require(try await User.find(p.userID, on: w.server.db)), sessionID: p.sessionID)
        }
        let bern = AddressInput(street: "Bundesplatz 3", postalCode: "3005", city: "Bern")
        return [
            "searchAreas": { w, _, p in _ = try await travel(w).searchAreas("gen", limit: 10, within: nil) },
            "getArea": { w, _, p in _ = try await travel(w).area(AreaID("CH-VD")) },
            "createArea": { w, _, p in
                _ = try await travel(w).saveArea(Area(id: AreaID("CH-M5724"), parent: AreaID("CH-VD"), level: "municipality", name: "Nyon"), creating: true, by: p) },
            "updateArea": { w, _, p in
                _ = try await travel(w).saveArea(Area(id: AreaID("CH-M5586"), parent: AreaID("CH-VD"), level: "municipality", name: "Lausanne"), creating: false, by: p) },
            "deleteArea": { w, _, p in try await travel(w).deleteArea(AreaID("CH-M5586"), by: p) },
            "getTravelTariff": { w, _, p in _ = try await travel(w).tariff() },
            "setTravelTariff": { w, _, p in _ = try await travel(w).setTariff(.standard, by: p) },
            "listMyTrips": { w, _, p in _ = try await travel(w).myTrips(for: p) },
            "postTrip": { w, _, p in
                let window = TravelTests.trip(inDays: 4)
                _ = try await travel(w).postTrip(TripDraft(from: AreaID("CH-M5586"), to: AreaID("CH-M261"), date: window["date"] as! String,
                                                           earliest: "07:00", latest: "09:00", timeZone: "Europe/Zurich", capacityGrams: 1000,
                                                           capacityParcels: 1, categories: ["documents"]), by: try await fresh(w, p)) },
            "getTrip": { w, x, p in _ = try await travel(w).trip(id(x.trip), for: p) },
            "listParcels": { w, _, p in _ = try await parcels(w).list(for: p) },
            "createParcel": { w, _, p in _ = try await parcels(w).add(ParcelDraft(number: "1Z\(UUID().uuidString.prefix(8))", carrier: "ups"), by: p) },
            "getParcel": { w, x, p in _ = try await parcels(w).parcel(id(x.parcel), for: p) },
            "updateParcel": { w, x, p in _ = try await parcels(w).update(id(x.parcel), name: "Books", notes: nil, carrier: nil, by: p) },
            "refreshParcel": { w, x, p in _ = try await parcels(w).refresh(id(x.parcel), by: p) },
            "deleteParcel": { w, x, p in try await parcels(w).remove(id(x.parcel), by: p) },
            "createParcelsFromText": { w, _, p in
                _ = try await parcels(w).addAll(from: "UPS 1Z999AA10123456784", name: nil, by: p) },
            "listShops": { w, _, p in _ = try await shops(w).list(for: p) },
            "listWebhookEndpoints": { w, _, p in _ = try await webhooks(w).list(for: p) },
            "listOrderImports": { w, _, p in _ = try await imports(w).recent(by: p) },
            "exportCSV": { w, _, p in
                _ = try await Exports(services: w.server.app.waybill, db: w.server.db, logger: w.server.app.logger).export(.shipments, from: nil, to: nil, by: p) },
            "uploadOrderImport": { w, _, p in _ = try await imports(w).upload(importFile, fileName: "m.csv", by: p) },
            "getOrderImport": { w, x, p in _ = try await imports(w).find(.init(uuidString: x.parcel)!, by: p) },
            "commitOrderImport": { w, x, p in _ = try await imports(w).commit(.init(uuidString: x.parcel)!, by: p) },
            "bulkOrderAction": { w, x, p in _ = try await orders(w).bulk(.cancel(reason: "matrix"), [id(x.order)], by: p) },
            "getShipmentRatings": { w, x, p in _ = try await rates(w).shipmentRatings(id(x.order), for: p) },
            "rateShipment": { w, x, p in _ = try await rates(w).rate(shipment: id(x.order), ratee: nil, RatingDraft(stars: 5), by: p) },
            "rateParcelCarrier": { w, x, p in _ = try await rates(w).rate(parcel: id(x.parcel), RatingDraft(stars: 4), by: p) },
            "getPersonRatings": { w, x, p in _ = try await rates(w).profile(.person(id(x.user)), for: p) },
            "getCarrierRatings": { w, _, p in _ = try await rates(w).profile(.carrier("dhl"), for: p) },
            "respondToRating": { w, x, p in _ = try await rates(w).respond(id(x.code), text: "Thanks", by: p) },
            "getOrderLabel": { w, x, p in _ = try await Labels(services: w.server.app.waybill, db: w.server.db, logger: w.server.app.logger).label(id(x.order), layout: .a6, lang: .en, by: p) },
            "scanLabel": { w, x, p in _ = try await Handovers(services: w.server.app.waybill, db: w.server.db, logger: w.server.app.logger).lookup(x.code, by: p) },
            "listCounters": { w, _, p in _ = try await counters(w).list(by: p) },
            "createCounter": { w, _, p in
                _ = try await counters(w).create(CounterDraft(name: "Guichet", address: Address(street: "Place de la Gare 1", postalCode: "1003", city: "Lausanne"),
                                                             hours: CounterHours()), by: p) },
            "getCounter": { w, x, p in _ = try await counters(w).counter(id(x.trip), by: p) },
            "updateCounter": { w, x, p in _ = try await counters(w).update(id(x.trip), nil, active: true, by: p) },
            "addCounterStaff": { w, x, p in _ = try await counters(w).addStaff(id(x.trip), user: id(x.user), by: p) },
            "removeCounterStaff": { w, x, p in _ = try await counters(w).removeStaff(id(x.trip), user: id(x.user), by: p) },
            "getCounterDay": { w, x, p in _ = try await desks(w).day(id(x.trip), date: nil, for: try await fresh(w, p)) },
            "checkInAtCounter": { w, x, p in _ = try await desks(w).checkIn(at: id(x.trip), code: x.code, reference: nil, photo: nil, by: try await fresh(w, p)) },
            "handOutAtCounter": { w, x, p in
                _ = try await desks(w).handOut(at: id(x.trip), code: x.code, reference: nil, receiverCode: "123456", collectedBy: "Bea", by: try await fresh(w, p)) },
            "listSlotTemplates": { w, _, p in _ = try await slots(w).templates(by: p) },
            "createSlotTemplate": { w, _, p in
                _ = try await slots(w).createTemplate(SlotTemplate(kind: .pickup, weekday: .tuesday, startMinute: 480, endMinute: 540, capacity: 3), zone: "", by: p) },
            "updateSlotTemplate": { w, x, p in _ = try await slots(w).updateTemplate(id(x.trip), capacity: 999, requiresApproval: nil, active: nil, by: p) },
            "listSlots": { w, _, p in _ = try await slots(w).slots(kind: .pickup, postalCode: "3005", from: nil, days: 7, for: p) },
            "holdSlot": { w, x, p in _ = try await slots(w).hold(id(x.code), by: p) },
            "releaseSlot": { w, x, p in try await slots(w).release(id(x.code), by: p) },
            "listOrderSlots": { w, x, p in _ = try await slots(w).bookings(of: id(x.order), for: p) },
            "bookSlot": { w, x, p in _ = try await slots(w).book(order: id(x.order), slot: id(x.code), by: p) },
            "listSlotBookings": { w, _, p in _ = try await slots(w).bookings(status: nil, date: nil, by: p) },
            "decideSlotBooking": { w, x, p in _ = try await slots(w).decide(id(x.request), .cancel, reason: nil, by: p) },
            "listConversations": { w, _, p in _ = try await chats(w).list(for: p) },
            "openConversation": { w, x, p in _ = try await chats(w).open(.shipment(id(x.order)), for: p) },
            "getConversation": { w, x, p in _ = try await chats(w).conversation(id(x.parcel), for: p) },
            "listMessages": { w, x, p in _ = try await chats(w).messages(id(x.parcel), after: nil, before: nil, limit: 50, for: p) },
            "sendMessage": { w, x, p in _ = try await chats(w).send(id(x.parcel), MessageDraft(text: "Hi", clientMessageId: UUID().uuidString), by: p) },
            "editMessage": { w, x, p in _ = try await chats(w).edit(id(x.parcel), message: id(x.code), text: "Hi again", by: p) },
            "deleteMessage": { w, x, p in _ = try await chats(w).delete(id(x.parcel), message: id(x.code), by: p) },
            "markConversation": { w, x, p in _ = try await chats(w).mark(id(x.parcel), delivered: nil, read: 1, by: p) },
            "reportInConversation": { w, x, p in
                _ = try await chats(w).report(message: id(x.code), person: nil, in: id(x.parcel), reason: .spam, note: nil, by: p) },
            "listReports": { w, _, p in _ = try await accounts(w).reports(status: nil, for: p) },
            "decideReport": { w, x, p in _ = try await accounts(w).decide(report: .init(uuidString: x.parcel)!, status: .reviewed, note: nil, by: p) },
            "listAuditLog": { w, _, p in _ = try await accounts(w).auditLog(AuditSearch(), for: p) },
            "getInsuranceTable": { w, _, p in _ = try await claims(w).table(for: p) },
            "putInsuranceTable": { w, _, p in _ = try await claims(w).replaceTable(InsuranceTable.initial, by: p) },
            "getLoyalty": { w, _, p in _ = try await points(w).account(for: p) },
            "listPlans": { w, _, p in _ = try await plans(w).plans(all: false, for: p) },
            "createPlan": { w, _, p in _ = try await plans(w).createPlan(pro, active: true, by: p) },
            "updatePlan": { w, x, p in _ = try await plans(w).updatePlan(.init(uuidString: x.code)!, pro, active: true, by: p) },
            // The handler answers 404 for none; the service says none.
            "listSubscribers": { w, _, p in _ = try await plans(w).subscribers(plan: nil, status: nil, cursor: nil, limit: 50, for: p) },
            "getSubscription": { w, _, p in if try await plans(w).current(for: p) == nil { throw WaybillError.notFound } },
            "subscribe": { w, x, p in _ = try await plans(w).subscribe(to: .init(uuidString: x.code)!, by: p) },
            "cancelSubscription": { w, _, p in _ = try await plans(w).cancel(by: p) },
            "resumeSubscription": { w, _, p in _ = try await plans(w).resume(by: p) },
            "getLoyaltyRules": { w, _, p in _ = try await points(w).rules(for: p) },
            "putLoyaltyRules": { w, _, p in _ = try await points(w).replaceRules(LoyaltyRules.initial, by: p) },
            "fileClaim": { w, x, p in _ = try await claims(w).file(id(x.order), .init(kind: .damaged, description: "matrix", amount: 10_000, photos: []), by: p) },
            "listClaims": { w, _, p in _ = try await claims(w).list(status: nil, for: p) },
            "getClaim": { w, x, p in _ = try await claims(w).claim(id(x.code), for: p) },
            "getClaimPhoto": { w, x, p in _ = try await claims(w).photo(id(x.code), file: id(x.file), for: p) },
            "decideClaim": { w, x, p in _ = try await claims(w).decide(id(x.code), .decline(reason: "matrix"), by: p) },
            "moderateContent": { w, x, p in _ = try await accounts(w).setHidden(.trip(.init(uuidString: x.trip)!), hide: true, reason: "matrix", by: p) },
            "exportAuditLog": { w, _, p in _ = try await accounts(w).auditExport(AuditSearch(), for: p) },
            "reportRating": { w, x, p in _ = try await rates(w).report(id(x.code), reason: .other, note: nil, by: p) },
            "sendImageMessage": { w, x, p in
                _ = try await chats(w).send(id(x.parcel), MessageDraft(text: "", clientMessageId: UUID().uuidString),
                                            image: .init(bytes: SampleImages.photoJPEG, field: "photo"), by: p) },
            "getMessageImage": { w, x, p in _ = try await chats(w).image(id(x.parcel), message: id(x.code), for: p) },
            "getOperationsStatistics": { w, _, p in _ = try await stats(w).report(from: nil, to: nil, period: .day, by: p) },
            "exportOperationsStatistics": { w, _, p in _ = try await stats(w).report(from: nil, to: nil, period: .month, by: p) },
            "createRoutePlan": { w, _, p in _ = try await routePlans(w).plan(RoutePlanRequest(seconds: 0.2), by: p) },
            "getLatestRoutePlan": { w, _, p in _ = try await routePlans(w).latest(by: p) },
            "getRoutePlan": { w, x, p in _ = try await routePlans(w).find(.init(uuidString: x.parcel)!, by: p) },
            "applyRoutePlan": { w, x, p in _ = try await routePlans(w).apply(.init(uuidString: x.parcel)!, by: p) },
            "getDriverRoute": { w, _, p in _ = try await routePlans(w).driverRoute(for: p) },
            "getDispatchSettings": { w, _, p in _ = try await AutoDispatch(services: w.server.app.waybill, db: w.server.db, logger: w.server.app.logger).settings(by: p) },
            "setDispatchSettings": { w, _, p in
                _ = try await AutoDispatch(services: w.server.app.waybill, db: w.server.db, logger: w.server.app.logger).set(on: false, capacity: nil, by: p) },
            "listAPIKeys": { w, _, p in _ = try await APIKeys(services: w.server.app.waybill, db: w.server.db, logger: w.server.app.logger).list(for: p) },
            "createAPIKey": { w, _, p in
                _ = try await APIKeys(services: w.server.app.waybill, db: w.server.db, logger: w.server.app.logger)
                    .create(name: "Matrix", scopes: ["parcels:read"], expiresInDays: nil, by: p) },
            "revokeAPIKey": { w, x, p in
                try await APIKeys(services: w.server.app.waybill, db: w.server.db, logger: w.server.app.logger).revoke(.init(uuidString: x.parcel)!, by: p) },
            "createWebhookEndpoint": { w, _, p in
                _ = try await webhooks(w).create(.init(url: "https://hooks.example.com/m", events: ["shipment.placed"]), by: p) },
            "getWebhookEndpoint": { w, x, p in _ = try await webhooks(w).endpoint(.init(uuidString: x.parcel)!, for: p) },
            "updateWebhookEndpoint": { w, x, p in _ = try await webhooks(w).update(.init(uuidString: x.parcel)!, .init(description: "Shop"), by: p) },
            "deleteWebhookEndpoint": { w, x, p in try await webhooks(w).delete(.init(uuidString: x.parcel)!, by: p) },
            "rotateWebhookSecret": { w, x, p in _ = try await webhooks(w).rotateSecret(.init(uuidString: x.parcel)!, by: p) },
            "pingWebhookEndpoint": { w, x, p in _ = try await webhooks(w).ping(.init(uuidString: x.parcel)!, by: p) },
            "listWebhookDeliveries": { w, x, p in _ = try await webhooks(w).deliveries(.init(uuidString: x.parcel)!, for: p) },
            "redeliverWebhook": { w, x, p in
                _ = try await webhooks(w).redeliver(.init(uuidString: x.parcel)!, delivery: .init(uuidString: x.code)!, by: p) },
            "connectShop": { w, _, p in _ = try await shops(w).connect(platform: .woocommerce, name: "Matrix shop", secret: nil, by: p) },
            "disconnectShop": { w, x, p in try await shops(w).remove(.init(uuidString: x.parcel)!, by: p) },
            "listTracked": { w, _, p in _ = try await parcels(w).tracked(for: p, filter: .all) },
            "shareParcel": { w, x, p in _ = try await parcels(w).share(id(x.parcel), with: "boss@courier.example", by: p) },
            "unshareParcel": { w, x, p in try await parcels(w).unshare(id(x.parcel), user: UserID(UUID()), by: p) },
            "createParcelLink": { w, x, p in _ = try await parcels(w).setLink(id(x.parcel), on: true, by: p) },
            "revokeParcelLink": { w, x, p in _ = try await parcels(w).setLink(id(x.parcel), on: false, by: p) },
            "getPayoutAccount": { w, _, p in _ = try await travel(w).payoutAccount(for: try await fresh(w, p)) },
            "startPayoutOnboarding": { w, _, p in _ = try await travel(w).startPayoutOnboarding(by: try await fresh(w, p)) },
            "refundOrder": { w, x, p in _ = try await orders(w).refundAfterDelivery(id(x.order), reason: "matrix", by: p) },
            "updateTrip": { w, x, p in _ = try await travel(w).editTrip(id(x.trip), by: try await fresh(w, p)) { $0.capacityParcels = 3 } },
            "cancelTrip": { w, x, p in _ = try await travel(w).cancelTrip(id(x.trip), by: try await fresh(w, p)) },
            "searchTrips": { w, _, p in
                _ = try await travel(w).searchTrips(TripSearch(from: AreaID("CH"), to: AreaID("CH-ZH"), grams: 100, category: "documents"), limit: 20, for: p) },
            "sendTripRequest": { w, x, p in
                _ = try await travel(w).sendRequest(TripRequestDraft(trip: id(x.trip), category: "small_parcel", grams: 1000, declaredValue: 0,
                                                                     description: "Books", receiver: Recipient(name: "Bea", email: "bea@example.com"),
                                                                     attestsAllowedContents: true), by: p) },
            "listTripRequests": { w, _, p in _ = try await travel(w).requests(received: true, for: p) },
            "getTripRequest": { w, x, p in _ = try await travel(w).request(id(x.request), for: p) },
            "getTripRequestPhoto": { w, x, p in _ = try await travel(w).requestPhoto(id(x.request), for: p) },
            "setTripRequestPhoto": { w, x, p in
                _ = try await travel(w).setRequestPhoto(id(x.request), .init(bytes: SampleImages.photoJPEG, field: "photo"), by: p) },
            "acceptTripRequest": { w, x, p in _ = try await travel(w).answer(id(x.request), accept: true, reason: nil, by: try await fresh(w, p)) },
            "rejectTripRequest": { w, x, p in _ = try await travel(w).answer(id(x.request), accept: false, reason: nil, by: try await fresh(w, p)) },
            "cancelTripRequest": { w, x, p in _ = try await travel(w).cancelRequest(id(x.request), reason: nil, by: p) },
            "pickUpTripRequest": { w, x, p in _ = try await travel(w).pickUp(id(x.request), by: try await fresh(w, p)) },
            "deliverTripRequest": { w, x, p in _ = try await travel(w).deliver(id(x.request), code: x.code, by: try await fresh(w, p)) },
            "getProfilePicture": { w, x, p in _ = try await accounts(w).picture(of: id(x.user), for: p) },
            "markNotificationRead": { w, x, p in _ = try await orders(w).markRead(id(x.notification), for: p) },
            "markAllNotificationsRead": { w, _, p in try await orders(w).markAllRead(for: p) },
            "listNotifications": { w, _, p in _ = try await orders(w).notifications(for: p, unreadOnly: false, cursor: nil, limit: 50) },
            "getPaymentOptions": { w, _, p in _ = try await orders(w).paymentOptions(for: p) },
            "listUsers": { w, _, p in _ = try await accounts(w).listUsers(role: nil, query: nil, cursor: nil, limit: 50, for: p) },
            "createUser": { w, _, p in
                _ = try await accounts(w).createStaff(role: .driver, firstName: "New", lastName: "Driver",
                                                      email: "svc-\(UUID().uuidString.prefix(8))@courier.example", by: p) },
            "getUser": { w, x, p in _ = try await accounts(w).user(id(x.user), for: p) },
            "updateUser": { w, x, p in _ = try await accounts(w).updateUser(actor: p, id: id(x.user), role: nil, disabled: false) },
            "resetUser": { w, x, p in try await accounts(w).resetUser(id: id(x.user), by: p) },
            "grantCapability": { w, x, p in _ = try await accounts(w).setCapability(.counter, granted: true, on: id(x.user), by: p) },
            "revokeCapability": { w, x, p in _ = try await accounts(w).setCapability(.counter, granted: false, on: id(x.user), by: p) },
            "listRestrictions": { w, x, p in _ = try await accounts(w).restrictions(of: id(x.user), for: p) },
            "restrictUser": { w, x, p in
                _ = try await accounts(w).restrict(id(x.user), RestrictionRequest(kind: .banned, until: nil, reason: "matrix"), by: p) },
            "liftRestriction": { w, x, p in _ = try await accounts(w).lift(restriction: Int(x.restriction)!, of: id(x.user), by: p) },
            "getTariff": { w, _, p in _ = try await orders(w).tariff(for: p) },
            "putTariff": { w, _, p in _ = try await orders(w).replaceTariff(try await orders(w).currentTariff().tariff, by: p) },
            "createQuote": { w, _, p in
                _ = try await orders(w).quote(QuoteRequest(pickup: PickupInput(address: bern), dropoff: bern, weightClass: .small, service: .standard), for: p) },
            "listOrders": { w, _, p in _ = try await orders(w).list(Orders.ListFilter(), for: p) },
            "createOrder": { w, _, p in
                let quote = QuoteRequest(pickup: PickupInput(address: bern), dropoff: bern, weightClass: .small, service: .standard)
                _ = try await orders(w).create(OrderRequest(quote: quote, paymentMethod: .cash, recipientName: "Rita"), by: p, idempotencyKey: nil) },
            "getOrder": { w, x, p in _ = try await orders(w).detail(id(x.order), for: p) },
            "listShipments": { w, _, p in _ = try await orders(w).list(Orders.ListFilter(), for: p) },
            "getShipment": { w, x, p in _ = try await orders(w).shipment(id(x.order), for: p) },
            "confirmReceipt": { w, x, p in _ = try await orders(w).confirmReceipt(id(x.order), photo: nil, by: try await fresh(w, p)) },
            "confirmPayment": { w, x, p in _ = try await orders(w).confirmPayment(id(x.order), by: p) },
            "cancelOrder": { w, x, p in _ = try await orders(w).cancel(id(x.order), reason: "matrix", by: p) },
            "assignOrder": { w, x, p in _ = try await orders(w).assign(id(x.order), to: id(w.cast.driver.userID), by: p) },
            "acceptOrder": { w, x, p in _ = try await orders(w).accept(id(x.order), by: p) },
            "pickupOrder": { w, x, p in
                let price = try await w.server.price(of: x.order)
                _ = try await orders(w).pickup(id(x.order), cashCollected: Money(price, "CHF"), by: p) },
            "deliverOrder": { w, x, p in
                _ = try await orders(w).deliver(id(x.order), signature: .init(bytes: SampleImages.signaturePNG, field: "signature"), photo: nil,
                                                recipientName: "Bea Beispiel", code: nil, by: p) },
            "failOrder": { w, x, p in _ = try await orders(w).fail(id(x.order), reason: .recipientAbsent, note: nil, by: p) },
            "addOrderPhoto": { w, x, p in _ = try await orders(w).addPhoto(id(x.order), .init(bytes: SampleImages.photoJPEG, field: "photo"), by: p) },
            "getOrderFile": { w, x, p in _ = try await orders(w).file(orderID: id(x.order), fileID: id(x.file), for: p) },
            "listInvoices": { w, _, p in _ = try await orders(w).statements(month: nil, customerID: nil, for: p) },
            "getDuty": { w, _, p in _ = try await tracking(w).duty(of: p) },
            "setDuty": { w, _, p in _ = try await tracking(w).setDuty(true, by: p) },
            "becomeTraveller": { w, _, p in _ = try await travel(w).becomeTraveller(acceptTerms: true, by: p) },
            "reportLocations": { w, _, p in
                _ = try? await tracking(w).setDuty(true, by: p)
                let at = Int64(Date().addingTimeInterval(Double.random(in: -300 ... -1)).timeIntervalSince1970 * 1000)
                _ = try await tracking(w).report([PositionReport(latitude: 47, longitude: 8, accuracy: nil, heading: nil, speed: nil, recordedAt: at)],
                                                 by: try await fresh(w, p)) },
            "getDriverDay": { w, _, p in _ = try await orders(w).driverDay(for: p) },
            "getFleet": { w, _, p in _ = try await tracking(w).fleet(nearOrder: nil, by: p) },
            "getOrderTrail": { w, x, p in _ = try await tracking(w).trail(id(x.order), for: p) },
            "renewTrackingLink": { w, x, p in _ = try await tracking(w).renewLink(id(x.order), by: p) },
            "revokeTrackingLink": { w, x, p in _ = try await tracking(w).revokeLink(id(x.order), by: p) },
        ]
    }()

    /// About the caller's own account or session: every signed-in caller may, so no policy is asked.
    static let noRule: Set<String> = ["getMe", "updateMe", "registerDevice", "createLiveTicket", "changePassword",
                                      "setProfilePicture", "deleteProfilePicture", "getParcelAlerts", "setParcelAlerts",
                                      "getMyCarrierStatistics", "getForwardingAddress", "renewForwardingAddress",
                                      "getChatSettings", "setChatSettings", "reauthenticate"]

    @Test("Each service, called directly with every role, answers as the HTTP matrix does", arguments: TestDatabase.available)
    func serviceMatrix(db: TestDatabase) async throws {
        #expect(Set(Self.rows.map(\.operation)) == Set(Self.serviceCalls.keys).union(Self.noRule), "every operation has a service call or is rule-free")
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            // An admin's token sets up what only an admin may (a restriction to lift).
            try await server.registerCustomer("root@example.com")
            let admin = try await server.makeAdmin(try await server.login("root@example.com"))
            let tokens: [Caller: String] = [.customerA: cast.customer.access, .customerB: cast.otherCustomer.access, .driverA: cast.driver.access,
                                            .driverB: cast.otherDriver.access, .manager: cast.manager.access, .admin: admin]
            let ids: [Caller: String] = [.customerA: cast.customer.userID, .customerB: cast.otherCustomer.userID, .driverA: cast.driver.userID,
                                         .driverB: cast.otherDriver.userID, .manager: cast.manager.userID]
            var principals: [Caller: Principal] = [:]
            for (caller, raw) in ids {
                let user = try #require(try await User.find(UserID(uuidString: raw)!, on: server.db))
                // Their session from the sign-in above: a password proven just now (`Reauthentication`).
                let session = try #require(try await Session.query(on: server.db).filter(\.$user.$id == user.id!).filter(\.$revokedAt == nil).first())
                principals[caller] = try Principal(user: user, sessionID: session.id!)
            }
            let world = World(server: server, cast: cast, tokens: tokens, companyA: cast.customer)
            var mismatches: [String] = []
            var cells = 0
            // Anonymous and disabled callers never reach a service: authentication answers them.
            let callers: [Caller] = [.customerB, .driverB, .customerA, .driverA, .manager]
            for row in Self.rows {
                guard let call = Self.serviceCalls[row.operation] else { continue }
                let shared = try await row.setup(world)
                for caller in callers.sorted(by: { (row.expected[$0]! < 300 ? 1 : 0) < (row.expected[$1]! < 300 ? 1 : 0) }) {
                    let expected = row.expected[caller]!
                    let target = expected < 300 ? try await row.setup(world) : shared
                    var got: UInt
                    do {
                        try await call(world, target, principals[caller]!)
                        got = expected < 300 ? expected : 200
                    } catch let error as WaybillError {
                        got = error.status.code
                    } catch let error as FieldErrorsError {
                        got = error.apiError.status.code
                    }
                    cells += 1
                    if got != expected { mismatches.append("\(row.operation) as \(caller.rawValue): HTTP says \(expected), the service \(got)") }
                }
            }
            print("Service matrix (\(db)): \(cells) cells, \(mismatches.count) mismatches")
            #expect(mismatches.isEmpty, "\(mismatches.joined(separator: "\n"))")
        }
    }

    static func sendable(_ value: Any?) -> any Sendable {
        switch value {
        case let v as [String: Any]: return v.mapValues { sendable($0) } as [String: any Sendable]
        case let v as [Any]: return v.map { sendable($0) } as [any Sendable]
        case let v as String: return v
        case let v as NSNumber: return v.intValue
        default: return ""
        }
    }

    @Test("The matrix has every operation of the contract that needs a token (and the live ticket, whose token is optional)")
    func coversTheContract() throws {
        let url = try #require(Bundle.module.url(forResource: "openapi", withExtension: "yaml")
            ?? URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("openapi.yaml"))
        let validator = try SpecValidator(yaml: String(contentsOf: url, encoding: .utf8))
        let guarded = Set(validator.operations.filter(\.needsToken).compactMap(\.operationID))
        let all = Set(validator.operations.compactMap(\.operationID))
        let rows = Set(Self.rows.map(\.operation))
        #expect(guarded.count > 40)
        #expect(guarded.subtracting(rows).isEmpty, "missing from the matrix: \(guarded.subtracting(rows).sorted())")
        #expect(rows.subtracting(all).isEmpty, "not in the contract: \(rows.subtracting(all).sorted())")
    }

    @Test("Each operation answers each caller as the rules say", arguments: TestDatabase.available)
    func matrix(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            try await server.registerCustomer("dora@example.com")
            let dora = try await server.login("dora@example.com")
            // An admin: a person (who sends, like any account) with the `admin` capability.
            try await server.registerCustomer("root@example.com")
            let admin = try await server.makeAdmin(try await server.login("root@example.com"))
            try #require(try await server.send(.PATCH, "/users/\(dora.userID)", json: ["disabled": true], token: admin).status == .ok)
            let tokens: [Caller: String] = [.customerA: cast.customer.access, .customerB: cast.otherCustomer.access, .driverA: cast.driver.access,
                                            .driverB: cast.otherDriver.access, .manager: cast.manager.access, .admin: admin, .disabled: dora.access]
            let world = World(server: server, cast: cast, tokens: tokens, companyA: cast.customer)
            var mismatches: [String] = []
            var table: [String] = []
            // Callers who may not act go first, on one shared target; each who may gets a fresh one.
            let order: [Caller] = [.anonymous, .disabled, .customerB, .driverB, .customerA, .driverA, .manager, .admin]
            for row in Self.rows {
                let shared = try await row.setup(world)
                var line: [String] = []
                for caller in order.sorted(by: { (row.expected[$0]! < 300 ? 1 : 0, 0) < (row.expected[$1]! < 300 ? 1 : 0, 0) }) {
                    let target = row.expected[caller]! < 300 ? try await row.setup(world) : shared
                    let reply = try await row.call(world, target, tokens[caller])
                    line.append("\(caller.rawValue)=\(reply.status.code)")
                    if reply.status.code != row.expected[caller]! {
                        mismatches.append("\(row.operation) as \(caller.rawValue): expected \(row.expected[caller]!), got \(reply.status.code) \(reply.text.prefix(160))")
                    }
                }
                table.append("\(row.operation): \(line.sorted().joined(separator: " "))")
                if ProcessInfo.processInfo.environment["MATRIX_PRINT"] != nil { print(table.last!) }
            }
            let cells = Self.rows.count * Caller.allCases.count
            print("Authorization matrix (\(db)): \(Self.rows.count) operations × \(Caller.allCases.count) callers = \(cells) cells, \(mismatches.count) mismatches")
            if ProcessInfo.processInfo.environment["MATRIX_PRINT"] != nil { print(table.joined(separator: "\n")) }
            #expect(mismatches.isEmpty, "\(mismatches.joined(separator: "\n"))")
        }
    }

    @Test("Fields outside an operation's contract change nothing: no price, status, owner or role by the back door",
          arguments: TestDatabase.available)
    func noBackDoorFields(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let id = try await server.placeOrder(cast.customer.access)
            let price = try await server.price(of: id)
            try await server.advance(id, to: .accepted, cast: cast)
            var body = TestServer.cash(price)
            body["status"] = "delivered"
            body["priceAmount"] = 1
            body["price"] = ["amount": 1, "currency": "CHF"] as [String: any Sendable]
            body["customerId"] = cast.otherCustomer.userID
            body["driverId"] = cast.otherDriver.userID
            let picked = try await server.send(.POST, "/orders/\(id)/pickup", json: body, token: cast.driver.access)
            #expect(picked.status == .ok)
            #expect(picked.json["status"].string == "in_transit")
            #expect(picked.json["price"]["amount"].int == price)
            let order = try #require(try await Order.find(OrderID(uuidString: id)!, on: server.db))
            #expect(order.priceAmount == price && order.customerID.uuidString == cast.customer.userID && order.driverID?.uuidString == cast.driver.userID)
            // A customer cannot make themself a manager or verify, disable or re-own their account.
            let me = try await server.send(.PATCH, "/me", json: ["role": "manager", "disabled": true, "email": "x@example.com", "city": "Basel"],
                                           token: cast.customer.access)
            #expect(me.status == .ok)
            #expect(me.json["role"].string == "customer")
            #expect(me.json["email"].string == "ada@example.com")
            #expect(try await server.send(.GET, "/users", token: cast.customer.access).status == .forbidden)
            // A driver's position report cannot speak for another driver.
            try await server.goOnDuty(cast.driver.access)
            let report = try await server.send(.POST, "/drivers/me/locations", json: [
                "driverId": cast.otherDriver.userID,
                "positions": [["latitude": 47.0, "longitude": 8.0, "recordedAt": ISO8601DateFormatter().string(from: Date())]] as [[String: any Sendable]],
            ], token: cast.driver.access)
            #expect(report.status == .ok)
            #expect(try await DriverState.find(UserID(uuidString: cast.otherDriver.userID)!, on: server.db) == nil)
        }
    }
}
