import Fluent
import Foundation
import Vapor
import WaybillCore

/// Orders in the web app: the customer's ordering flow, every role's order page and history, and
/// the actions on an order. Every rule is the services' (`Orders`, `Tracking`); these only render.
struct OrderPages {
    func register(_ routes: any RoutesBuilder) {
        routes.get(WebRoutes.orders, use: history)
        routes.get(WebRoutes.newOrder, use: newOrder)
        routes.post(WebRoutes.newOrder, use: review)
        routes.post(WebRoutes.orders, use: create)
        routes.get(WebRoutes.order, use: show)
        routes.get(WebRoutes.orderFile, use: file)
        routes.post(WebRoutes.cancelOrder, use: cancel)
        routes.post(WebRoutes.renewTrackingLink, use: renewLink)
        routes.post(WebRoutes.revokeTrackingLink, use: revokeLink)
        routes.get(WebRoutes.statements, use: statements)
        routes.get(WebRoutes.incoming, use: incoming)
        routes.post(WebRoutes.confirmReceipt, use: confirmReceipt)
    }

    // MARK: Ordering

    /// The fields of the ordering form, as the browser posts them.
    struct OrderForm: Content {
        var pickupMode: String?
        var pickupStreet: String?
        var pickupPostalCode: String?
        var pickupCity: String?
        var pickupLatitude: String?
        var pickupLongitude: String?
        var dropoffStreet: String?
        var dropoffPostalCode: String?
        var dropoffCity: String?
        var dropoffLatitude: String?
        var dropoffLongitude: String?
        /// "I will drop it at a counter" (`pickupMode` = `counter`) and "collect at a counter" (`dropoffMode` = `counter`).
        var dropOffCounter: String?
        var dropoffMode: String?
        var collectionCounter: String?
        var weightClass: String?
        var service: String?
        var recipientName: String?
        var recipientEmail: String?
        var recipientPhone: String?
        var requireCode: String?
        var notes: String?
        var paymentMethod: String?
        var idempotencyKey: String?
        /// "Insure it for": an amount in the currency's units ("500", "499.90"); empty not to insure.
        var declaredValue: String?
        /// "Use loyalty points": a number of points; empty to use none.
        var redeemPoints: String?
        var photo: File?

        var values: [String: String] {
            var values: [String: String] = [:]
            let mirror = Mirror(reflecting: self)
            for child in mirror.children {
                if let label = child.label, let value = child.value as? String? , let value { values[label] = value }
            }
            return values
        }

        static func coordinate(_ raw: String?) -> Double? {
            guard let raw, !raw.isEmpty else { return nil }
            return Double(raw)
        }

        var quoteRequest: QuoteRequest {
            let own = (pickupMode ?? "own") == "own"
            let pickup = PickupInput(useAccountAddress: own, address: AddressInput(
                street: own ? nil : pickupStreet, postalCode: own ? nil : pickupPostalCode, city: own ? nil : pickupCity,
                latitude: Self.coordinate(pickupLatitude), longitude: Self.coordinate(pickupLongitude)))
            let dropoff = AddressInput(street: dropoffStreet, postalCode: dropoffPostalCode, city: dropoffCity,
                                       latitude: Self.coordinate(dropoffLatitude), longitude: Self.coordinate(dropoffLongitude))
            let counters = CounterChoice(dropOffID: pickupMode == "counter" ? UUID(uuidString: dropOffCounter ?? "")?.uuidString ?? "" : nil,
                                         collectionID: dropoffMode == "counter" ? UUID(uuidString: collectionCounter ?? "")?.uuidString ?? "" : nil)
            // A value that is not an amount reads as 0, which the service refuses on `declaredValue`.
            let insured = (declaredValue ?? "").trimmingCharacters(in: .whitespaces)
            // Points that are not a whole number read as 0, which the service refuses on `redeemPoints`.
            let points = (redeemPoints ?? "").trimmingCharacters(in: .whitespaces)
            return QuoteRequest(pickup: pickup, dropoff: dropoff, weightClass: WeightClass(rawValue: weightClass ?? "") ?? .small,
                                service: ServiceLevel(rawValue: service ?? "") ?? .standard, counters: counters,
                                declaredValue: insured.isEmpty ? nil : Money.minorUnits(fromText: insured, maximum: Decimal(Tariff.maxAmount) / 100) ?? 0,
                                redeemPoints: points.isEmpty ? nil : Int(points) ?? 0)
        }
    }

    /// Form field names for the services' field names, so each problem shows beside its field.
    static let fieldNames: [String: String] = [
        "pickup.street": "pickupStreet", "pickup.postalCode": "pickupPostalCode", "pickup.city": "pickupCity",
        "pickup.useAccountAddress": "pickupMode", "pickup.latitude": "pickupLatitude", "pickup.longitude": "pickupLongitude",
        "dropoff.street": "dropoffStreet", "dropoff.postalCode": "dropoffPostalCode", "dropoff.city": "dropoffCity",
        "dropoff.latitude": "dropoffLatitude", "dropoff.longitude": "dropoffLongitude",
        "recipient.name": "recipientName", "recipient.email": "recipientEmail", "recipient.phone": "recipientPhone",
        "dropOffCounterId": "dropOffCounter", "collectionCounterId": "collectionCounter",
    ]



    static func formErrors(_ fields: [String: String]?) -> [String: String] {
        var errors: [String: String] = [:]
        for (key, value) in fields ?? [:] { errors[fieldNames[key] ?? key] = value }
        return errors
    }

    /// The ordering form, with the counters to choose from and the premium table for "insure it".
    static func formPage(_ req: Request, _ me: Principal, values: [String: String], errors: [String: String] = [:], message: String? = nil,
                         status: HTTPResponseStatus = .ok) async throws -> OrderFormPage {
        OrderFormPage(accountAddress: me.user.accountAddress, insurance: try? await Claims(request: req).currentTable().table,
                      points: try await Loyalty(request: req).holding(me.userID),
                      counters: try await Counters(request: req).active(by: me), values: values, errors: errors, message: message, status: status)
    }

    func newOrder(_ req: Request) async throws -> Response {
        let (ctx, me) = try WebAuth.require(req, .placeOrders)
        var values = ["pickupMode": me.user.accountAddress == nil ? "other" : "own", "weightClass": "small", "service": "standard"]
        for key in ["dropoffStreet", "dropoffPostalCode", "dropoffCity"] { if let v = req.query[String.self, at: key] { values[key] = v } }
        return try await Self.formPage(req, me, values: values).response(ctx)
    }

    /// Step two: the price, the summary, the payment method and the optional photo.
    func review(_ req: Request) async throws -> Response {
        let (ctx, me) = try WebAuth.require(req, .placeOrders)
        let form = try req.content.decode(OrderForm.self)
        try requireStorableText(Array(form.values.values))
        var values = form.values
        if req.query[String.self, at: "edit"] != nil { return try await Self.formPage(req, me, values: values).response(ctx) }
        let orders = Orders(request: req)
        let quote: Quote
        do {
            quote = try await orders.quote(form.quoteRequest, for: me)
        } catch let error as WaybillError {
            return try await Self.formPage(req, me, values: values, errors: Self.formErrors(error.fields),
                                 message: ctx.message(error), status: error.status).response(ctx)
        }
        let methods = try await orders.paymentOptions(for: me).methods
        // One key per review: pressing "Order" twice makes one order; changing the order makes a new one.
        values["idempotencyKey"] = Randomness.uuid().uuidString
        values["paymentMethod"] = values["paymentMethod"] ?? "card"
        return try ReviewPage(request: form.quoteRequest, accountAddress: me.user.accountAddress, counters: try await Counters(request: req).active(by: me), values: values,
                          quote: quote, methods: methods).response(ctx)
    }

    func create(_ req: Request) async throws -> Response {
        let (ctx, me) = try WebAuth.require(req, .placeOrders)
        let form = try req.content.decode(OrderForm.self)
        try requireStorableText(Array(form.values.values))
        let request = OrderRequest(
            quote: form.quoteRequest, paymentMethod: PaymentMethod(rawValue: form.paymentMethod ?? "") ?? .card,
            recipientName: form.recipientName, recipientEmail: form.recipientEmail, recipientPhone: form.recipientPhone,
            notes: form.notes, requireRecipientCode: form.requireCode == "on")
        let orders = Orders(request: req)
        let created: Orders.Created
        do {
            created = try await orders.create(request, by: me, idempotencyKey: form.idempotencyKey)
        } catch let error as WaybillError {
            return try await Self.formPage(req, me, values: form.values, errors: Self.formErrors(error.fields),
                                 message: ctx.message(error), status: error.status).response(ctx)
        }
        let id = created.record.order.id
        if let photo = form.photo, photo.data.readableBytes > 0 {
            // The order stands; a photo that is not an image is reported on its page.
            do {
                _ = try await orders.addPhoto(id, .init(bytes: Array(photo.data.readableBytesView), field: "photo"), by: me)
            } catch let error as WaybillError {
                req.logger.info("Order photo refused: \(error.code)")
                return req.redirect(to: WebRoutes.order(id, query: "photo=refused"), redirectType: .normal)
            }
        }
        if let url = created.paymentURL { return req.redirect(to: url, redirectType: .normal) }
        return req.redirect(to: WebRoutes.order(id, query: "created=1"), redirectType: .normal)
    }

    // MARK: History

    func history(_ req: Request) async throws -> Response {
        let (ctx, me) = try WebAuth.require(req)
        return try await HistoryPage.load(req, for: me).response(ctx)
    }

    static func day(_ raw: String) -> Date? {
        guard raw.count == 10 else { return nil }
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyy-MM-dd"
        formatter.timeZone = .gmt
        return formatter.date(from: raw)
    }

    // MARK: One order

    func show(_ req: Request) async throws -> Response {
        let (ctx, me) = try WebAuth.require(req)
        return try await OrderPage.load(try WebRoutes.id(req), req, for: me).response(ctx)
    }

    static func decimal(_ money: Money) -> String {
        String(format: "%.2f", Double(money.amount) / 100)
    }

    func file(_ req: Request) async throws -> Response {
        let (_, me) = try WebAuth.require(req)
        let (file, data) = try await Orders(request: req).file(orderID: try WebRoutes.id(req), fileID: try WebRoutes.id(req, "file"), for: me)
        var headers = HTTPHeaders()
        headers.replaceOrAdd(name: .contentType, value: file.contentType)
        headers.replaceOrAdd(name: .cacheControl, value: "private, max-age=3600")
        headers.replaceOrAdd(name: "Content-Security-Policy", value: "default-src 'none'")
        return Response(status: .ok, headers: headers, body: .init(data: data))
    }

    // MARK: Actions

    func cancel(_ req: Request) async throws -> Response {
        let (_, me) = try WebAuth.require(req)
        let id: OrderID = try WebRoutes.id(req)
        let reason = (try AccountPages.form(req)["reason"] ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        _ = try await Orders(request: req).cancel(id, reason: reason, by: me)
        return req.redirect(to: WebRoutes.order(id, query: "done=cancelled"), redirectType: .normal)
    }

    func renewLink(_ req: Request) async throws -> Response {
        let (_, me) = try WebAuth.require(req)
        let id: OrderID = try WebRoutes.id(req)
        _ = try await Tracking(request: req).renewLink(id, by: me)
        return req.redirect(to: WebRoutes.order(id) + "#tracking-url", redirectType: .normal)
    }

    func revokeLink(_ req: Request) async throws -> Response {
        let (_, me) = try WebAuth.require(req)
        let id: OrderID = try WebRoutes.id(req)
        _ = try await Tracking(request: req).revokeLink(id, by: me)
        return req.redirect(to: WebRoutes.order(id), redirectType: .normal)
    }

    // MARK: The receiver

    func incoming(_ req: Request) async throws -> Response {
        let (ctx, me) = try WebAuth.require(req)
        var filter = Orders.ListFilter()
        filter.box = .incoming
        filter.cursor = req.query[String.self, at: "cursor"].flatMap { $0.isEmpty ? nil : $0 }
        let page = try await Orders(request: req).list(filter, for: me)
        return try IncomingPage(records: page.records, email: me.user.email,
                            nextQuery: page.nextCursor.map { "cursor=" + queryValue($0) }, boxes: OrderPolicy.boxes(for: me.caller)).response(ctx)
    }

    struct ReceiptForm: Content {
        var photo: File?
        var scannedCode: String?
    }

    func confirmReceipt(_ req: Request) async throws -> Response {
        let (_, me) = try WebAuth.require(req)
        let id: OrderID = try WebRoutes.id(req)
        let form = try req.content.decode(ReceiptForm.self)
        let photo = form.photo.flatMap { $0.data.readableBytes > 0 ? Orders.Upload(bytes: Array($0.data.readableBytesView), field: "photo") : nil }
        _ = try await Orders(request: req).confirmReceipt(id, photo: photo, scannedCode: form.scannedCode.flatMap { $0.isEmpty ? nil : $0 }, by: me)
        return req.redirect(to: WebRoutes.order(id, query: "receipt=1"), redirectType: .normal)
    }

    // MARK: Statements (company accounts)

    func statements(_ req: Request) async throws -> Response {
        let (ctx, me) = try WebAuth.require(req)
        let month = req.query[String.self, at: "month"] ?? Orders.currentMonth(in: ctx.timeZone)
        guard Orders.monthBounds(month, in: ctx.timeZone) != nil else { throw WaybillError.invalidParameter("month") }
        let list = try await Orders(request: req).statements(month: month, customerID: nil, for: me)
        let links = StatementLinks(secret: req.application.waybill.config.jwtSecret)
        return try StatementsPage(month: month, rows: try list.map { ($0, links.token(customerID: try $0.customer.storedID, month: month)) }).response(ctx)
    }
}
