import Fluent
import Foundation
import Vapor
import WaybillCore

/// Orders in the web app: the customer's ordering flow, every role's order page and history, and
/// the actions on an order. Every rule is the services' (`Orders`, `Tracking`); these only render.
struct OrderPages {
    func register(_ routes: any RoutesBuilder) {
        routes.get("orders", use: history)
        routes.get("orders", "new", use: newOrder)
        routes.post("orders", "new", use: review)
        routes.post("orders", use: create)
        routes.get("orders", ":id", use: show)
        routes.get("orders", ":id", "files", ":file", use: file)
        routes.post("orders", ":id", "cancel", use: cancel)
        routes.post("orders", ":id", "tracking-link", use: renewLink)
        routes.post("orders", ":id", "tracking-link", "revoke", use: revokeLink)
        routes.get("statements", use: statements)
    }

    static func orderID(_ req: Request) throws -> OrderID {
        guard let id = req.parameters.get("id").flatMap(OrderID.init(uuidString:)) else { throw WaybillError.notFound }
        return id
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
        var weightClass: String?
        var service: String?
        var recipientName: String?
        var recipientEmail: String?
        var recipientPhone: String?
        var requireCode: String?
        var notes: String?
        var paymentMethod: String?
        var idempotencyKey: String?
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
            return QuoteRequest(pickup: pickup, dropoff: dropoff, weightClass: WeightClass(rawValue: weightClass ?? "") ?? .small,
                                service: ServiceLevel(rawValue: service ?? "") ?? .standard)
        }
    }

    /// Form field names for the services' field names, so each problem shows beside its field.
    static let fieldNames: [String: String] = [
        "pickup.street": "pickupStreet", "pickup.postalCode": "pickupPostalCode", "pickup.city": "pickupCity",
        "pickup.useAccountAddress": "pickupMode", "pickup.latitude": "pickupLatitude", "pickup.longitude": "pickupLongitude",
        "dropoff.street": "dropoffStreet", "dropoff.postalCode": "dropoffPostalCode", "dropoff.city": "dropoffCity",
        "dropoff.latitude": "dropoffLatitude", "dropoff.longitude": "dropoffLongitude",
        "recipient.name": "recipientName", "recipient.email": "recipientEmail", "recipient.phone": "recipientPhone",
    ]

    static func formErrors(_ fields: [String: String]?) -> [String: String] {
        var errors: [String: String] = [:]
        for (key, value) in fields ?? [:] { errors[fieldNames[key] ?? key] = value }
        return errors
    }

    func newOrder(_ req: Request) async throws -> Response {
        let (ctx, me) = try WebAuth.require(req, .placeOrders)
        var values = ["pickupMode": me.user.accountAddress == nil ? "other" : "own", "weightClass": "small", "service": "standard"]
        for key in ["dropoffStreet", "dropoffPostalCode", "dropoffCity"] { if let v = req.query[String.self, at: key] { values[key] = v } }
        return orderForm(ctx, me, values: values, errors: [:])
    }

    func orderForm(_ ctx: WebContext, _ me: Principal, values: [String: String], errors: [String: String], message: String? = nil,
                   status: HTTPResponseStatus = .ok) -> Response {
        let form = Form(ctx: ctx, values: values, errors: errors)
        let own = me.user.accountAddress
        var pickupModes: [(String, String)] = []
        if let own { pickupModes.append(("own", ctx.t(.useMyAddress, "\(own.street), \(own.postalCode) \(own.city)"))) }
        pickupModes.append(("other", ctx.t(.anotherAddress)))
        func pin(_ stop: String, _ label: String) -> String {
            var map = WebMap(id: "map-\(stop)", label: label, pick: stop)
            if let lat = values["\(stop)Latitude"].flatMap(Double.init), let lng = values["\(stop)Longitude"].flatMap(Double.init) {
                map.markers = [.init(id: stop, latitude: lat, longitude: lng, label: label, kind: stop)]
            }
            return """
                <details class="pin"\(map.markers.isEmpty ? "" : " open")><summary>\(h(ctx.t(.pinOnMap)))</summary>
                <p class="hint">\(h(ctx.t(.pinHint)))</p>
                \(map.render(ctx))
                <input type="hidden" name="\(stop)Latitude" value="\(h(values["\(stop)Latitude"]))" data-pick-lat="\(stop)">
                <input type="hidden" name="\(stop)Longitude" value="\(h(values["\(stop)Longitude"]))" data-pick-lng="\(stop)">
                <button type="button" class="link" data-pick-clear="\(stop)">\(h(ctx.t(.removePin)))</button>
                </details>
                """
        }
        let shown: Set<String> = ["pickupMode", "pickupStreet", "pickupPostalCode", "pickupCity", "dropoffStreet", "dropoffPostalCode",
                                  "dropoffCity", "weightClass", "service", "recipientName", "recipientEmail", "recipientPhone", "notes"]
        return WebPage(title: ctx.t(.newDelivery), body: """
            <h1>\(h(ctx.t(.newDelivery)))</h1>
            \(form.summary(message: message, shown: shown))
            <form method="post" action="/orders/new" class="stack" novalidate>
            \(form.hidden())
            <fieldset><legend>\(h(ctx.t(.pickup)))</legend>
            \(form.radios("pickupMode", ctx.t(.pickupWhere), options: pickupModes))
            <div class="other-address">
            \(form.field("pickupStreet", ctx.t(.street), autocomplete: "off", required: false))
            <div class="row">\(form.field("pickupPostalCode", ctx.t(.postalCode), required: false))\(form.field("pickupCity", ctx.t(.city), required: false))</div>
            </div>
            \(pin("pickup", ctx.t(.pickup)))
            </fieldset>
            <fieldset><legend>\(h(ctx.t(.dropoff)))</legend>
            \(form.field("dropoffStreet", ctx.t(.street), autocomplete: "off"))
            <div class="row">\(form.field("dropoffPostalCode", ctx.t(.postalCode)))\(form.field("dropoffCity", ctx.t(.city)))</div>
            \(pin("dropoff", ctx.t(.dropoff)))
            </fieldset>
            \(form.radios("weightClass", ctx.t(.weightClass), options: WeightClass.allCases.map { ($0.rawValue, ctx.weight($0)) }))
            \(form.radios("service", ctx.t(.serviceLevel), options: ServiceLevel.allCases.map { ($0.rawValue, ctx.service($0)) }))
            <fieldset><legend>\(h(ctx.t(.recipient)))</legend>
            \(form.field("recipientName", ctx.t(.name), autocomplete: "off"))
            \(form.field("recipientEmail", ctx.t(.email), type: "email", autocomplete: "off", required: false))
            \(form.field("recipientPhone", ctx.t(.phone), type: "tel", autocomplete: "off", required: false))
            \(form.checkbox("requireCode", ctx.t(.requireCode)))
            </fieldset>
            <div class="field"><label for="f-notes">\(h(ctx.t(.notes))) <span class="optional">(\(h(ctx.t(.optional))))</span></label>
            <textarea id="f-notes" name="notes" maxlength="\(OrderRequest.maxNotesLength)" rows="3">\(h(values["notes"]))</textarea></div>
            <button type="submit" class="primary">\(h(ctx.t(.seePrice)))</button>
            </form>
            """, scripts: ["map"]).render(ctx)
    }

    /// Step two: the price, the summary, the payment method and the optional photo.
    func review(_ req: Request) async throws -> Response {
        let (ctx, me) = try WebAuth.require(req, .placeOrders)
        let form = try req.content.decode(OrderForm.self)
        try requireStorableText(Array(form.values.values))
        var values = form.values
        if req.query[String.self, at: "edit"] != nil { return orderForm(ctx, me, values: values, errors: [:]) }
        let orders = Orders(request: req)
        let quote: Quote
        do {
            quote = try await orders.quote(form.quoteRequest, for: me)
        } catch let error as WaybillError {
            return orderForm(ctx, me, values: values, errors: Self.formErrors(error.fields), message: ctx.message(error), status: error.status)
        }
        let methods = try await orders.paymentOptions(for: me).methods.map { method -> (String, String) in
            let label = switch method {
            case .card: ctx.t(.payCard)
            case .twint: "TWINT"
            case .cash: ctx.t(.payCashAtPickup)
            case .invoice: ctx.t(.payInvoiceMonthly)
            }
            return (method.rawValue, label)
        }
        // One key per review: pressing "Order" twice makes one order; changing the order makes a new one.
        values["idempotencyKey"] = UUID().uuidString
        values["paymentMethod"] = values["paymentMethod"] ?? "card"
        return reviewView(ctx, me, form: form, values: values, quote: quote, methods: methods)
    }

    func reviewView(_ ctx: WebContext, _ me: Principal, form orderForm: OrderForm, values: [String: String], quote: Quote,
                    methods: [(String, String)], errors: [String: String] = [:], message: String? = nil,
                    status: HTTPResponseStatus = .ok) -> Response {
        let form = Form(ctx: ctx, values: values, errors: errors)
        let request = orderForm.quoteRequest
        let pickupText = request.pickup.useAccountAddress
            ? me.user.accountAddress.map { ctx.address($0) } ?? ""
            : "\(h(request.pickup.address.street)), \(h(request.pickup.address.postalCode)) \(h(request.pickup.address.city))"
        let dropoffText = "\(h(request.dropoff.street)), \(h(request.dropoff.postalCode)) \(h(request.dropoff.city))"
        let hiddenFields = values.filter { !["paymentMethod", "_csrf"].contains($0.key) }.sorted { $0.key < $1.key }
            .map { "<input type=\"hidden\" name=\"\(h($0.key))\" value=\"\(h($0.value))\">" }.joined()
        let lines = quote.breakdown.map { "<tr><td>\(h(ctx.priceLine($0, distanceKm: quote.distanceKm)))</td><td class=\"num\">\(ctx.money(Money($0.amount, quote.price.currency)))</td></tr>" }.joined()
        return WebPage(title: ctx.t(.reviewAndPay), body: """
            <h1>\(h(ctx.t(.reviewAndPay)))</h1>
            \(form.summary(message: message, shown: ["paymentMethod", "photo"]))
            <dl class="summary">
            <dt>\(h(ctx.t(.pickup)))</dt><dd>\(pickupText)</dd>
            <dt>\(h(ctx.t(.dropoff)))</dt><dd>\(dropoffText)</dd>
            <dt>\(h(ctx.t(.parcel)))</dt><dd>\(h(ctx.weight(request.weightClass))), \(h(ctx.service(request.service)))</dd>
            <dt>\(h(ctx.t(.recipient)))</dt><dd>\(h(values["recipientName"]))\(values["recipientEmail"].map { $0.isEmpty ? "" : ", " + h($0) } ?? "")</dd>
            \(quote.distanceKm.map { "<dt>\(h(ctx.t(.distance)))</dt><dd>\($0) km</dd>" } ?? "")
            </dl>
            <table class="price"><tbody>\(lines)</tbody>
            <tfoot><tr><th>\(h(ctx.t(.total)))</th><th class="num" id="price">\(ctx.money(quote.price))</th></tr></tfoot></table>
            <form method="post" action="/orders" enctype="multipart/form-data" class="stack">
            \(form.hidden())\(hiddenFields)
            \(form.radios("paymentMethod", ctx.t(.paymentMethod), options: methods))
            <div class="field"><label for="f-photo">\(h(ctx.t(.parcelPhoto))) <span class="optional">(\(h(ctx.t(.optional))))</span></label>
            <input id="f-photo" name="photo" type="file" accept="image/jpeg,image/png" capture="environment" data-preview>
            <img alt="" data-preview-for="f-photo" hidden class="preview"></div>
            <button type="submit" class="primary">\(h(ctx.t(.placeOrder)))</button>
            <button type="submit" formaction="/orders/new?edit=1" formenctype="application/x-www-form-urlencoded" class="secondary">\(h(ctx.t(.change)))</button>
            </form>
            """, status: status, scripts: []).render(ctx)
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
            return orderForm(ctx, me, values: form.values, errors: Self.formErrors(error.fields), message: ctx.message(error), status: error.status)
        }
        let id = created.record.order.id!
        if let photo = form.photo, photo.data.readableBytes > 0 {
            // The order stands; a photo that is not an image is reported on its page.
            do {
                _ = try await orders.addPhoto(id, .init(bytes: Array(photo.data.readableBytesView), field: "photo"), by: me)
            } catch let error as WaybillError {
                req.logger.info("Order photo refused: \(error.code)")
                return req.redirect(to: "/orders/\(id.uuidString)?photo=refused", redirectType: .normal)
            }
        }
        if let url = created.paymentURL { return req.redirect(to: url, redirectType: .normal) }
        return req.redirect(to: "/orders/\(id.uuidString)?created=1", redirectType: .normal)
    }

    // MARK: History

    func history(_ req: Request) async throws -> Response {
        let (ctx, me) = try WebAuth.require(req)
        var filter = Orders.ListFilter()
        filter.limit = 50
        let statusParam = req.query[String.self, at: "status"] ?? ""
        if let status = OrderStatus(rawValue: statusParam) { filter.statuses = [status] }
        if let from = req.query[String.self, at: "from"].flatMap(Self.day) { filter.from = from }
        if let to = req.query[String.self, at: "to"].flatMap(Self.day) { filter.to = to.addingTimeInterval(86400) }
        let manager = me.may(.dispatch)
        if manager, let driver = req.query[String.self, at: "driver"].flatMap(UserID.init(uuidString:)) { filter.driverID = driver }
        if let cursor = req.query[String.self, at: "cursor"], !cursor.isEmpty { filter.cursor = cursor }
        let page = try await Orders(request: req).list(filter, for: me)
        let rows = try page.records.map { record -> String in
            let order = record.order
            let who = manager ? "<td>\(h(record.customer.companyName ?? record.customer.displayName))</td><td>\(h(record.driver?.displayName ?? "—"))</td>" : ""
            return """
                <tr><td><a href="/orders/\(order.id!.uuidString)">\(h(order.reference))</a></td><td>\(ctx.time(order.createdAt))</td>
                <td>\(ctx.statusBadge(order.status))</td>\(who)<td>\(h(try order.dropoff.city))</td><td class="num">\(ctx.money(order.price))</td></tr>
                """
        }.joined()
        let statusOptions = [("", ctx.t(.allStatuses))] + OrderStatus.allCases.filter { manager || $0.listedForCustomer }.map { ($0.rawValue, ctx.status($0)) }
        var drivers = ""
        if manager {
            let list = try await User.query(on: req.db).filter(\.$role ~~ Permission.drive.roles).sort(\.$firstName).all()
            let chosen = req.query[String.self, at: "driver"] ?? ""
            drivers = "<div class=\"field\"><label for=\"f-driver\">\(h(ctx.t(.driver)))</label><select id=\"f-driver\" name=\"driver\" data-autosubmit><option value=\"\">\(h(ctx.t(.allDrivers)))</option>"
                + list.map { "<option value=\"\($0.id!.uuidString)\"\(chosen == $0.id!.uuidString ? " selected" : "")>\(h($0.displayName))</option>" }.joined()
                + "</select></div>"
        }
        let filterForm = Form(ctx: ctx, values: ["status": statusParam, "from": req.query[String.self, at: "from"] ?? "", "to": req.query[String.self, at: "to"] ?? ""])
        var nextQuery = req.url.query?.split(separator: "&").filter { !$0.hasPrefix("cursor=") }.joined(separator: "&") ?? ""
        if let next = page.nextCursor { nextQuery += (nextQuery.isEmpty ? "" : "&") + "cursor=" + (next.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "") }
        let customer = me.may(.placeOrders)
        let title = customer ? ctx.t(.myDeliveries) : ctx.t(.orderHistory)
        return WebPage(title: title, body: """
            <h1>\(h(title))</h1>
            \(customer ? "<p><a class=\"button primary\" href=\"/orders/new\">\(h(ctx.t(.newDelivery)))</a></p>" : "")
            <form method="get" action="/orders" class="filters">
            \(filterForm.select("status", ctx.t(.status), options: statusOptions, required: false, attributes: "data-autosubmit"))
            \(drivers)
            \(filterForm.field("from", ctx.t(.from), type: "date", required: false))
            \(filterForm.field("to", ctx.t(.to), type: "date", required: false))
            <button type="submit">\(h(ctx.t(.filter)))</button>
            </form>
            <div id="order-list" data-live-refresh="status">
            \(rows.isEmpty ? "<p>\(h(ctx.t(.noOrders)))</p>" : """
            <div class="table-wrap"><table class="orders"><thead><tr><th>\(h(ctx.t(.reference)))</th><th>\(h(ctx.t(.date)))</th><th>\(h(ctx.t(.status)))</th>\(manager ? "<th>\(h(ctx.t(.customer)))</th><th>\(h(ctx.t(.driver)))</th>" : "")<th>\(h(ctx.t(.to)))</th><th class="num">\(h(ctx.t(.price)))</th></tr></thead>
            <tbody>\(rows)</tbody></table></div>
            """)
            \(page.nextCursor == nil ? "" : "<p><a href=\"/orders?\(h(nextQuery))\">\(h(ctx.t(.olderOrders)))</a></p>")
            </div>
            """, liveTopics: manager ? ["fleet"] : [], wide: true).render(ctx)
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
        let id = try Self.orderID(req)
        let orders = Orders(request: req)
        let record = try await orders.detail(id, for: me)
        let order = record.order
        let caps = record.capacities
        let details = PartyDetails.visible(to: caps)
        let actions = OrderStateMachine.availableActions(from: order.status, as: caps)
        let form = Form(ctx: ctx)
        let pickup = try order.pickup, dropoff = try order.dropoff, recipient = try order.recipient

        var notices = ""
        if req.query[String.self, at: "created"] != nil { notices += "<div class=\"alert ok\" role=\"status\">\(h(ctx.t(.orderPlaced)))</div>" }
        if req.query[String.self, at: "paid"] != nil, order.paymentStatus == .paid { notices += "<div class=\"alert ok\" role=\"status\">\(h(ctx.t(.paymentReceived)))</div>" }
        if req.query[String.self, at: "photo"] == "refused" { notices += "<div class=\"alert error\" role=\"alert\">\(h(ctx.t(.photoRefused)))</div>" }
        if let done = req.query[String.self, at: "done"] { notices += "<div class=\"alert ok\" role=\"status\">\(h(ctx.t(.actionDone, ctx.status(OrderStatus(rawValue: done) ?? order.status))))</div>" }

        // Timeline: every stage with its date and time.
        let stages = record.events.map { event, actor -> String in
            let label = event.status.map { ctx.status($0) } ?? event.type.replacingOccurrences(of: "_", with: " ")
            let by = actor.map { " · " + h(details.staffLastNames || $0.id == order.customerID ? $0.displayName : $0.firstName) } ?? ""
            return "<li><span class=\"when\">\(ctx.time(event.at))</span> <strong>\(h(label))</strong>\(by)\(event.note.map { "<br><span class=\"note\">\(h($0))</span>" } ?? "")</li>"
        }.joined()

        let tracking = record.tracking
        let eta = tracking?.eta.map { estimate -> String in
            "<p class=\"eta\">\(h(estimate.stop == .pickup ? ctx.t(.etaPickup) : ctx.t(.etaDropoff))) \(ctx.clock(estimate.arrivesAt)) · \(String(format: "%.1f", Double(estimate.distanceMeters) / 1000)) km</p>"
        } ?? ""
        let driverLine = record.driver.map { "<p>\(h(ctx.t(.driver))): <strong>\(h(details.staffLastNames ? $0.displayName : $0.firstName))</strong></p>" } ?? ""

        // The map: both stops, the driver while under way, and the route so far.
        var map = WebMap(id: "order-map", label: ctx.t(.mapOfDelivery), orderID: id)
        if let c = pickup.coordinate { map.markers.append(.init(id: "pickup", latitude: c.latitude, longitude: c.longitude, label: ctx.t(.pickup), kind: "pickup")) }
        if let c = dropoff.coordinate { map.markers.append(.init(id: "dropoff", latitude: c.latitude, longitude: c.longitude, label: ctx.t(.dropoff), kind: "dropoff")) }
        if let p = tracking?.position, let driver = record.driver {
            map.markers.append(.init(id: "driver:\(driver.id!.uuidString)", latitude: p.latitude, longitude: p.longitude, label: driver.firstName, kind: "driver"))
        }
        if order.status.driverHasSetOff {
            map.trail = try await Tracking(request: req).trail(id, for: me, limit: 500).map { [$0.latitude, $0.longitude] }
        }
        let showMap = !map.markers.isEmpty || order.status.nextStop != nil

        // Files: the parcel photo, the signature and the delivery photo.
        let files = record.files.map { file -> String in
            let label = switch file.kind { case .signature: ctx.t(.signature); case .deliveryPhoto: ctx.t(.deliveryPhoto); default: ctx.t(.parcelPhoto) }
            return "<figure><img src=\"/orders/\(id.uuidString)/files/\(file.id!.uuidString)\" alt=\"\(h(label))\" width=\"\(file.width)\" height=\"\(file.height)\" class=\"file \(file.kind.rawValue)\" loading=\"lazy\"><figcaption>\(h(label))</figcaption></figure>"
        }.joined()

        var actionBlocks: [String] = []
        if caps.contains(.owner), order.status == .awaitingPayment, let url = order.checkoutURL {
            actionBlocks.append("<a class=\"button primary\" href=\"\(h(url))\">\(h(ctx.t(.payNow, order.price.description)))</a>")
        }
        if actions.contains(.accept) {
            actionBlocks.append("<form method=\"post\" action=\"/driver/orders/\(id.uuidString)/accept\">\(form.hidden())<button type=\"submit\" class=\"primary\">\(h(ctx.t(.accept)))</button></form>")
        }
        if actions.contains(.pickup) {
            let cash = order.paymentMethod == .cash
                ? "<div class=\"field\"><label for=\"f-cash\">\(h(ctx.t(.cashCollected, order.currency)))</label><input id=\"f-cash\" name=\"cash\" inputmode=\"decimal\" required value=\"\(h(Self.decimal(order.price)))\"></div>" : ""
            actionBlocks.append("<form method=\"post\" action=\"/driver/orders/\(id.uuidString)/pickup\" class=\"stack\">\(form.hidden())\(cash)<button type=\"submit\" class=\"primary\">\(h(ctx.t(.pickedUp)))</button></form>")
        }
        if actions.contains(.deliver) {
            actionBlocks.append("<a class=\"button primary\" href=\"/driver/orders/\(id.uuidString)/deliver\">\(h(ctx.t(.deliverProof)))</a>")
        }
        if actions.contains(.fail) {
            let reasons = FailureReason.allCases.map { ($0.rawValue, ctx.failure($0)) }
            let failForm = Form(ctx: ctx)
            actionBlocks.append("""
                <details><summary>\(h(ctx.t(.markFailed)))</summary>
                <form method="post" action="/driver/orders/\(id.uuidString)/fail" class="stack">\(form.hidden())
                \(failForm.select("reason", ctx.t(.reason), options: reasons))
                \(failForm.field("note", ctx.t(.note), required: false))
                <button type="submit" class="danger">\(h(ctx.t(.markFailed)))</button></form></details>
                """)
        }
        if actions.contains(.assign) || actions.contains(.reassign) {
            actionBlocks.append(try await DispatchPages.assignForm(ctx, order: order, reassign: !actions.contains(.assign)))
        }
        if actions.contains(.cancel) {
            actionBlocks.append("""
                <details><summary>\(h(ctx.t(.cancelOrder)))</summary>
                <form method="post" action="/orders/\(id.uuidString)/cancel" class="stack" data-confirm="\(h(ctx.t(.cancelConfirm)))">\(form.hidden())
                \(Form(ctx: ctx).field("reason", ctx.t(.reason)))
                <button type="submit" class="danger">\(h(ctx.t(.cancelOrder)))</button></form></details>
                """)
        }

        // The driver shares their position from the order's page too, while it is open.
        var sharing = ""
        if OrderPolicy.allows(.sharePosition, status: order.status, as: caps) {
            let onDuty = try await DriverState.find(me.userID, on: req.db)?.onDuty ?? false
            sharing = DriverPages.sharingToggle(ctx, onDuty: onDuty)
        }

        var linkBlock = ""
        if OrderPolicy.allows(.renewTrackingLink, status: order.status, as: caps) {
            if let url = tracking?.trackingURL {
                linkBlock = """
                    <h2>\(h(ctx.t(.trackingLink)))</h2>
                    <p class="hint">\(h(ctx.t(.trackingLinkHint)))</p>
                    <p class="copy"><input readonly value="\(h(url))" data-copy-source aria-label="\(h(ctx.t(.trackingLink)))" id="tracking-url">
                    <button type="button" data-copy="\(h(url))" data-copied-text="\(h(ctx.t(.copied)))">\(h(ctx.t(.copy)))</button></p>
                    <form method="post" action="/orders/\(id.uuidString)/tracking-link" class="inline">\(form.hidden())<button type="submit" class="secondary">\(h(ctx.t(.newLink)))</button></form>
                    <form method="post" action="/orders/\(id.uuidString)/tracking-link/revoke" class="inline" data-confirm="\(h(ctx.t(.revokeConfirm)))">\(form.hidden())<button type="submit" class="secondary">\(h(ctx.t(.revokeLink)))</button></form>
                    """
            } else {
                linkBlock = """
                    <h2>\(h(ctx.t(.trackingLink)))</h2><p>\(h(ctx.t(.noTrackingLink)))</p>
                    <form method="post" action="/orders/\(id.uuidString)/tracking-link" class="inline">\(form.hidden())<button type="submit" class="secondary">\(h(ctx.t(.newLink)))</button></form>
                    """
            }
        }

        let customerBlock = details.customer ? """
            <dt>\(h(ctx.t(.customer)))</dt><dd>\(h(record.customer.companyName.map { $0 + " — " } ?? ""))\(h(record.customer.displayName))\(details.customerEmail ? " · " + h(record.customer.email) : "")</dd>
            """ : ""
        let payment = """
            <dt>\(h(ctx.t(.payment)))</dt><dd>\(h(ctx.payment(order.paymentMethod))) · \(h(ctx.paymentStatus(order.paymentStatus)))\(order.sandbox ? " (\(h(ctx.t(.test))))" : "")\(order.cashCollected.map { " · " + h(ctx.t(.cashCollectedAmount, Money($0, order.currency).description)) } ?? "")</dd>
            """
        let title = "\(ctx.t(.delivery)) \(order.reference)"
        return WebPage(title: title, body: """
            <h1>\(h(title))</h1>
            \(notices)
            <div id="order-live" data-live-refresh="status eta">
            <p class="big-status">\(ctx.statusBadge(order.status))</p>
            \(eta)
            \(driverLine)
            \(order.failureReason.map { "<p class=\"alert error\">\(h(ctx.failure($0)))\(order.failureNote.map { ": " + h($0) } ?? "")</p>" } ?? "")
            \(actionBlocks.isEmpty ? "" : "<div class=\"actions\">\(actionBlocks.joined(separator: "\n"))</div>")
            </div>
            \(sharing)
            \(showMap ? map.render(ctx) : "")
            <div class="columns">
            <section><h2>\(h(ctx.t(.progress)))</h2>
            <ol class="timeline" id="timeline" data-live-refresh="status">\(stages)</ol></section>
            <section><h2>\(h(ctx.t(.details)))</h2>
            <dl class="summary">
            \(customerBlock)
            <dt>\(h(ctx.t(.pickup)))</dt><dd>\(ctx.address(pickup))</dd>
            <dt>\(h(ctx.t(.dropoff)))</dt><dd>\(ctx.address(dropoff))</dd>
            <dt>\(h(ctx.t(.parcel)))</dt><dd>\(h(ctx.weight(order.weightClass))), \(h(ctx.service(order.service)))</dd>
            <dt>\(h(ctx.t(.recipient)))</dt><dd>\(h(recipient.name))\((details.recipientEmail ? recipient.email : nil).map { ", " + h($0) } ?? "")\((details.recipientPhone ? recipient.phone : nil).map { ", <a href=\"tel:\(h($0))\">\(h($0))</a>" } ?? "")</dd>
            \(order.notes.map { "<dt>\(h(ctx.t(.notes)))</dt><dd>\(h($0))</dd>" } ?? "")
            <dt>\(h(ctx.t(.price)))</dt><dd>\(ctx.money(order.price))</dd>
            \(payment)
            \(order.signedBy.map { "<dt>\(h(ctx.t(.signedBy)))</dt><dd>\(h($0)) \(ctx.time(order.deliveredAt))</dd>" } ?? "")
            </dl>
            <div class="files" id="files" data-live-refresh="status">\(files)</div>
            \(linkBlock)
            </section>
            </div>
            """, scripts: (showMap ? ["map"] : []) + (sharing.isEmpty ? [] : ["position"]), liveTopics: ["order:\(id.uuidString)"], wide: true).render(ctx)
    }

    static func decimal(_ money: Money) -> String {
        String(format: "%.2f", Double(money.amount) / 100)
    }

    func file(_ req: Request) async throws -> Response {
        let (_, me) = try WebAuth.require(req)
        let id = try Self.orderID(req)
        guard let fileID = req.parameters.get("file").flatMap(FileID.init(uuidString:)) else { throw WaybillError.notFound }
        let (file, data) = try await Orders(request: req).file(orderID: id, fileID: fileID, for: me)
        var headers = HTTPHeaders()
        headers.replaceOrAdd(name: .contentType, value: file.contentType)
        headers.replaceOrAdd(name: .cacheControl, value: "private, max-age=3600")
        headers.replaceOrAdd(name: "Content-Security-Policy", value: "default-src 'none'")
        return Response(status: .ok, headers: headers, body: .init(data: data))
    }

    // MARK: Actions

    func cancel(_ req: Request) async throws -> Response {
        let (_, me) = try WebAuth.require(req)
        let id = try Self.orderID(req)
        let reason = (try AccountPages.form(req)["reason"] ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        _ = try await Orders(request: req).cancel(id, reason: reason, by: me)
        return req.redirect(to: "/orders/\(id.uuidString)?done=cancelled", redirectType: .normal)
    }

    func renewLink(_ req: Request) async throws -> Response {
        let (_, me) = try WebAuth.require(req)
        let id = try Self.orderID(req)
        _ = try await Tracking(request: req).renewLink(id, by: me)
        return req.redirect(to: "/orders/\(id.uuidString)#tracking-url", redirectType: .normal)
    }

    func revokeLink(_ req: Request) async throws -> Response {
        let (_, me) = try WebAuth.require(req)
        let id = try Self.orderID(req)
        _ = try await Tracking(request: req).revokeLink(id, by: me)
        return req.redirect(to: "/orders/\(id.uuidString)", redirectType: .normal)
    }

    // MARK: Statements (company accounts)

    func statements(_ req: Request) async throws -> Response {
        let (ctx, me) = try WebAuth.require(req)
        let month = req.query[String.self, at: "month"] ?? Orders.currentMonth(in: ctx.timeZone)
        guard Orders.monthBounds(month, in: ctx.timeZone) != nil else { throw WaybillError.invalidParameter("month") }
        let list = try await Orders(request: req).statements(month: month, customerID: nil, for: me)
        let links = StatementLinks(secret: req.application.waybill.config.jwtSecret)
        let rows = list.map { statement -> String in
            "<tr><td>\(h(statement.customer.companyName ?? statement.customer.displayName))</td><td class=\"num\">\(statement.orders.count)</td><td class=\"num\">\(ctx.money(statement.total))</td><td><a href=\"/statements/\(links.token(customerID: statement.customer.id!, month: month))\">\(h(ctx.t(.openStatement)))</a></td></tr>"
        }.joined()
        let form = Form(ctx: ctx, values: ["month": month])
        return WebPage(title: ctx.t(.statements), body: """
            <h1>\(h(ctx.t(.statements)))</h1>
            <form method="get" action="/statements" class="filters">\(form.field("month", ctx.t(.month), type: "month"))<button type="submit">\(h(ctx.t(.show)))</button></form>
            \(rows.isEmpty ? "<p>\(h(ctx.t(.noStatement)))</p>" : "<table><thead><tr><th>\(h(ctx.t(.customer)))</th><th class=\"num\">\(h(ctx.t(.orders)))</th><th class=\"num\">\(h(ctx.t(.total)))</th><th></th></tr></thead><tbody>\(rows)</tbody></table>")
            """).render(ctx)
    }
}
