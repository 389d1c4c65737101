import Fluent
import Foundation
import Vapor
import WaybillCore

// The order pages of the web app, each its model and a view that only renders it. The handlers are
// in `OrderPages`; the rules are the services' and WaybillCore's.

/// Ordering, step one: addresses (or a pin on the map), parcel, service, recipient.
struct OrderFormPage: PageView {
    var accountAddress: Address?
    /// The premium table, for the "insure it" field (its currency and maximum).
    var insurance: InsuranceTable?
    /// The sender's points, for the "use points" field (shown once they hold enough to spend).
    var points: Loyalty.Holding?
    /// Reception counters the parcel may be dropped at or collected from.
    var counters: [CounterRecord] = []
    var values: [String: String]
    var errors: [String: String] = [:]
    var message: String?
    var status: HTTPResponseStatus = .ok

    func page(_ ctx: WebContext) throws -> WebPage {
        let form = Form(ctx: ctx, values: values, errors: errors)
        let own = accountAddress
        var pickupModes: [(String, String)] = []
        if let own { pickupModes.append(("own", ctx.t(.useMyAddress, "\(own.street), \(own.postalCode) \(own.city)"))) }
        pickupModes.append(("other", ctx.t(.anotherAddress)))
        let counterOptions = try counters.map { (try $0.storedID.uuidString, "\($0.name), \($0.street), \($0.city)") }
        if !counters.isEmpty { pickupModes.append(("counter", ctx.t(.dropAtCounter))) }
        let dropOffCounter = counters.isEmpty ? "" : "<div class=\"counter-choice\">" + form.select("dropOffCounter", ctx.t(.counterWhich), options: counterOptions, required: false) + "</div>"
        let collection = counters.isEmpty ? "" : form.radios("dropoffMode", ctx.t(.dropoffWhere), options: [("address", ctx.t(.deliverToAddress)), ("counter", ctx.t(.collectAtCounter))])
            + "<div class=\"counter-choice\">" + form.select("collectionCounter", ctx.t(.counterWhich), options: counterOptions, required: false) + "</div>"
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
        let shown: Set<String> = ["pickupMode", "dropOffCounter", "dropoffMode", "collectionCounter", "pickupStreet", "pickupPostalCode", "pickupCity", "dropoffStreet", "dropoffPostalCode",
                                  "dropoffCity", "weightClass", "service", "recipientName", "recipientEmail", "recipientPhone", "notes", "declaredValue", "redeemPoints"]
        return WebPage(title: ctx.t(.newDelivery), body: """
            <h1>\(h(ctx.t(.newDelivery)))</h1>
            \(form.summary(message: message, shown: shown))
            <form method="post" action="\(WebRoutes.newOrder())" class="stack" novalidate>
            \(form.hidden())
            <fieldset><legend>\(h(ctx.t(.pickup)))</legend>
            \(form.radios("pickupMode", ctx.t(.pickupWhere), options: pickupModes))
            <div class="other-address">
            \(form.field("pickupStreet", ctx.t(.street), autocomplete: "off", required: false))
            <div class="row">\(form.field("pickupPostalCode", ctx.t(.postalCode), required: false))\(form.field("pickupCity", ctx.t(.city), required: false))</div>
            </div>\(dropOffCounter)
            \(pin("pickup", ctx.t(.pickup)))
            </fieldset>
            <fieldset><legend>\(h(ctx.t(.dropoff)))</legend>\(collection)
            \(form.field("dropoffStreet", ctx.t(.street), autocomplete: "off"))
            <div class="row">\(form.field("dropoffPostalCode", ctx.t(.postalCode)))\(form.field("dropoffCity", ctx.t(.city)))</div>
            \(pin("dropoff", ctx.t(.dropoff)))
            </fieldset>
            \(form.radios("weightClass", ctx.t(.weightClass), options: WeightClass.allCases.map { ($0.rawValue, ctx.weight($0)) }))
            \(form.radios("service", ctx.t(.serviceLevel), options: ServiceLevel.allCases.map { ($0.rawValue, ctx.service($0)) }))
            \(insurance.map { form.field("declaredValue", ctx.t(.insureFor, $0.currency), required: false,
                                        hint: ctx.t(.insureHint, Money($0.maxInsurableValue, $0.currency).description), attributes: "inputmode=\"decimal\"") } ?? "")
            \(points.map { p in form.field("redeemPoints", ctx.t(.usePoints), required: false,
                                           hint: ctx.t(.usePointsHint, String(p.points), Money(p.worth, p.currency).description,
                                                       String(p.rules.minimumRedemption), String(p.rules.maxDiscountPercent)),
                                           attributes: "inputmode=\"numeric\"") } ?? "")
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
            """, status: status, scripts: ["map"])
    }

}

/// Ordering, step two: the price, the summary, the payment methods the account may use and the
/// optional photo.
struct ReviewPage: PageView {
    var request: QuoteRequest
    var accountAddress: Address?
    var counters: [CounterRecord] = []
    var values: [String: String]
    var quote: Quote
    var methods: [PaymentMethod]
    var errors: [String: String] = [:]
    var message: String?
    var status: HTTPResponseStatus = .ok

    func page(_ ctx: WebContext) -> WebPage {
        let form = Form(ctx: ctx, values: values, errors: errors)
        let methods = methods.map { method -> (String, String) in
            let label = switch method {
            case .card: ctx.t(.payCard)
            case .twint: "TWINT"
            case .cash: ctx.t(.payCashAtPickup)
            case .invoice: ctx.t(.payInvoiceMonthly)
            }
            return (method.rawValue, label)
        }
        func counter(_ id: String?) -> String? {
            counters.first { $0.id?.uuidString == id }.map { h(ctx.t(.atCounter, $0.name)) + " · " + ctx.address($0.address) }
        }
        let pickupText = counter(request.counters.dropOffID) ?? (request.pickup.useAccountAddress
            ? accountAddress.map { ctx.address($0) } ?? ""
            : "\(h(request.pickup.address.street)), \(h(request.pickup.address.postalCode)) \(h(request.pickup.address.city))")
        let dropoffText = counter(request.counters.collectionID) ?? "\(h(request.dropoff.street)), \(h(request.dropoff.postalCode)) \(h(request.dropoff.city))"
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
            \(quote.insurance.map { "<dt>\(h(ctx.t(.insuredValue)))</dt><dd>\(ctx.money(Money($0.declaredValue, quote.price.currency)))</dd>" } ?? "")
            </dl>
            <table class="price"><tbody>\(lines)</tbody>
            <tfoot><tr><th>\(h(ctx.t(.total)))</th><th class="num" id="price">\(ctx.money(quote.price))</th></tr></tfoot></table>
            <form method="post" action="\(WebRoutes.orders())" enctype="multipart/form-data" class="stack">
            \(form.hidden())\(hiddenFields)
            \(form.radios("paymentMethod", ctx.t(.paymentMethod), options: methods))
            <div class="field"><label for="f-photo">\(h(ctx.t(.parcelPhoto))) <span class="optional">(\(h(ctx.t(.optional))))</span></label>
            <input id="f-photo" name="photo" type="file" accept="image/jpeg,image/png" capture="environment" data-preview>
            <img alt="" data-preview-for="f-photo" hidden class="preview"></div>
            <button type="submit" class="primary">\(h(ctx.t(.placeOrder)))</button>
            <button type="submit" formaction="\(WebRoutes.newOrder(query: "edit=1"))" formenctype="application/x-www-form-urlencoded" class="secondary">\(h(ctx.t(.change)))</button>
            </form>
            """, status: status, scripts: [])
    }

}

/// An order list: the customer's deliveries, a driver's history, or every order for dispatch, with
/// filters (status, dates; the driver, for dispatch) and paging.
struct HistoryPage: PageView {
    var records: [OrderRecord]
    var nextQuery: String?
    /// The box shown (`?box=`, else the caller's `OrderPolicy.defaultBox`) and the others they have.
    var box: ShipmentBox
    var boxes: [ShipmentBox]
    /// Dispatch's box shows every order and the customer and driver columns.
    var manager: Bool { box == .all }
    /// What one sent gets "My deliveries" and the button to send another.
    var customer: Bool { box == .sent }
    var drivers: [User]
    var chosenDriver: String
    var filters: [String: String]
    /// Whether the caller may import a file of deliveries (`OrderImportPolicy`).
    var mayImport = false

    static func load(_ req: Request, for me: Principal) async throws -> HistoryPage {
        var filter = Orders.ListFilter()
        filter.limit = 50
        let statusParam = req.query[String.self, at: "status"] ?? ""
        if let status = OrderStatus(rawValue: statusParam) { filter.statuses = [status] }
        if let from = req.query[String.self, at: "from"].flatMap(OrderPages.day) { filter.from = from }
        if let to = req.query[String.self, at: "to"].flatMap(OrderPages.day) { filter.to = to.addingTimeInterval(86400) }
        let box = req.query[String.self, at: "box"].flatMap(ShipmentBox.init(rawValue:)) ?? OrderPolicy.defaultBox(for: me.caller)
        filter.box = box
        let manager = box == .all
        if manager, let driver = req.query[String.self, at: "driver"].flatMap(UserID.init(uuidString:)) { filter.driverID = driver }
        if let cursor = req.query[String.self, at: "cursor"], !cursor.isEmpty { filter.cursor = cursor }
        let page = try await Orders(request: req).list(filter, for: me)
        var nextQuery: String?
        if let next = page.nextCursor {
            let kept = req.url.query?.split(separator: "&").filter { !$0.hasPrefix("cursor=") }.joined(separator: "&") ?? ""
            nextQuery = kept + (kept.isEmpty ? "" : "&") + "cursor=" + queryValue(next)
        }
        return HistoryPage(
            records: page.records, nextQuery: nextQuery, box: box, boxes: OrderPolicy.boxes(for: me.caller),
            drivers: manager ? try await Accounts(request: req).drivers(for: me) : [],
            chosenDriver: req.query[String.self, at: "driver"] ?? "",
            filters: ["status": statusParam, "from": req.query[String.self, at: "from"] ?? "", "to": req.query[String.self, at: "to"] ?? ""],
            mayImport: OrderImportPolicy.importer(me.caller, isCompany: me.user.isCompany) != nil)
    }

    func page(_ ctx: WebContext) throws -> WebPage {
        let rows = records.map { record -> String in
            let order = record.order
            let who = manager ? "<td>\(h(record.customer.companyName ?? record.customer.displayName))</td><td>\(h(record.driver?.displayName ?? "—"))</td>" : ""
            return """
                <tr><td><a href="\(WebRoutes.order(order.id))">\(h(order.reference))</a></td><td>\(ctx.time(order.createdAt))</td>
                <td>\(ctx.statusBadge(order.status))</td>\(who)<td>\(h(order.dropoff.city))</td><td class="num">\(ctx.money(order.price))</td></tr>
                """
        }.joined()
        let statusOptions = [("", ctx.t(.allStatuses))] + OrderStatus.allCases.filter { manager || $0.listedForCustomer }.map { ($0.rawValue, ctx.status($0)) }
        var driverFilter = ""
        if manager {
            driverFilter = try "<div class=\"field\"><label for=\"f-driver\">\(h(ctx.t(.driver)))</label><select id=\"f-driver\" name=\"driver\" data-autosubmit><option value=\"\">\(h(ctx.t(.allDrivers)))</option>"
                + drivers.map { driver -> String in
                    let id = try driver.storedID.uuidString
                    return "<option value=\"\(id)\"\(chosenDriver == id ? " selected" : "")>\(h(driver.displayName))</option>"
                }.joined()
                + "</select></div>"
        }
        let filterForm = Form(ctx: ctx, values: filters)
        let title = customer ? ctx.t(.myDeliveries) : ctx.t(.orderHistory)
        return WebPage(title: title, body: """
            <h1>\(h(title))</h1>
            \(Self.switcher(ctx, boxes: boxes, current: box))
            \(customer ? "<p><a class=\"button primary\" href=\"\(WebRoutes.newOrder())\">\(h(ctx.t(.newDelivery)))</a>\(mayImport ? " <a class=\"button\" href=\"\(WebRoutes.imports())\">\(h(ctx.t(.imports)))</a>" : "")</p>" : "")
            <form method="get" action="\(WebRoutes.orders())" class="filters">
            <input type="hidden" name="box" value="\(box.rawValue)">
            \(filterForm.select("status", ctx.t(.status), options: statusOptions, required: false, attributes: "data-autosubmit"))
            \(driverFilter)
            \(filterForm.field("from", ctx.t(.from), type: "date", required: false))
            \(filterForm.field("to", ctx.t(.to), type: "date", required: false))
            <button type="submit">\(h(ctx.t(.filter)))</button>
            <button type="submit" formaction="\(WebRoutes.export(.shipments))" class="secondary" data-export>\(h(ctx.t(.exportCSV)))</button>
            </form>
            <div id="order-list" data-live-refresh="status">
            \(rows.isEmpty ? "<p>\(h(ctx.t(.noOrders)))</p>" : """
            <div class="table-wrap"><table class="orders"><thead><tr><th>\(h(ctx.t(.reference)))</th><th>\(h(ctx.t(.date)))</th><th>\(h(ctx.t(.status)))</th>\(manager ? "<th>\(h(ctx.t(.customer)))</th><th>\(h(ctx.t(.driver)))</th>" : "")<th>\(h(ctx.t(.to)))</th><th class="num">\(h(ctx.t(.price)))</th></tr></thead>
            <tbody>\(rows)</tbody></table></div>
            """)
            \(nextQuery.map { "<p><a href=\"\(WebRoutes.orders())?\(h($0))\">\(h(ctx.t(.olderOrders)))</a></p>" } ?? "")
            </div>
            """, liveTopics: manager ? ["fleet"] : [], wide: true)
    }

    /// Where one account switches between what it sent, what comes to it, what it carries and
    /// (dispatch) everything (seed ShipX: one account, several views). Shown with two boxes or more.
    static func switcher(_ ctx: WebContext, boxes: [ShipmentBox], current: ShipmentBox) -> String {
        guard boxes.count > 1 else { return "" }
        let links = boxes.map { box -> String in
            let (href, label): (String, String) = switch box {
            case .sent: (WebRoutes.orders() + "?box=sent", ctx.t(.boxSent))
            case .incoming: (WebRoutes.incoming(), ctx.t(.incoming))
            case .carrying: (WebRoutes.orders() + "?box=carrying", ctx.t(.boxCarrying))
            case .all: (WebRoutes.orders() + "?box=all", ctx.t(.boxAll))
            }
            return "<li><a href=\"\(href)\"\(box == current ? " aria-current=\"page\"" : "")>\(h(label))</a></li>"
        }.joined()
        return "<nav class=\"boxes\" aria-label=\"\(h(ctx.t(.views)))\"><ul>\(links)</ul></nav>"
    }
}

/// A company's monthly statements (or, for dispatch, every invoiced customer's), each with its
/// signed one-hour link.
struct StatementsPage: PageView {
    var month: String
    var rows: [(statement: Statement, token: String)]

    func page(_ ctx: WebContext) -> WebPage {
        let rows = rows.map { statement, token -> String in
            "<tr><td>\(h(statement.customer.companyName ?? statement.customer.displayName))</td><td class=\"num\">\(statement.lines.count)</td><td class=\"num\">\(ctx.money(statement.total))</td><td><a href=\"\(WebRoutes.statement(token))\">\(h(ctx.t(.openStatement)))</a></td></tr>"
        }.joined()
        let form = Form(ctx: ctx, values: ["month": month])
        let period = ExportPolicy.monthDays(month).map { "from=\($0.first)&amp;to=\($0.last)" } ?? ""
        return WebPage(title: ctx.t(.statements), body: """
            <h1>\(h(ctx.t(.statements)))</h1>
            <form method="get" action="\(WebRoutes.statements())" class="filters">\(form.field("month", ctx.t(.month), type: "month"))<button type="submit">\(h(ctx.t(.show)))</button></form>
            <p class="exports">\(h(ctx.t(.exportThisMonth))) <a href="\(WebRoutes.export(.statements))?\(period)" download>\(h(ctx.t(.exportStatementLines)))</a> ·
            <a href="\(WebRoutes.export(.ledger))?\(period)" download>\(h(ctx.t(.exportLedger)))</a></p>
            \(rows.isEmpty ? "<p>\(h(ctx.t(.noStatement)))</p>" : "<div class=\"table-wrap\"><table><thead><tr><th>\(h(ctx.t(.customer)))</th><th class=\"num\">\(h(ctx.t(.orders)))</th><th class=\"num\">\(h(ctx.t(.total)))</th><th></th></tr></thead><tbody>\(rows)</tbody></table></div>")
            """)
    }
}

/// One order, as the viewer may see it: status, arrival estimate, driver, the actions open to them,
/// the map, the timeline, the details their capacity shows (`PartyDetails`), files and the
/// tracking link.
struct OrderPage: PageView {
    var record: OrderRecord
    var details: PartyDetails
    var actions: [OrderAction]
    /// The customer may pay an order awaiting payment through its checkout.
    var payURL: String?
    var trail: [[Double]]
    /// The assignee shares their position from the page (nil: not offered), and whether on duty.
    var sharing: Bool?
    /// Whether sharing puts the person on duty (drivers) or only feeds this shipment (travellers).
    var sharingOnDuty = true
    var showsTrackingLink: Bool
    var assign: AssignForm?
    var created = false, paid = false, photoRefused = false, receiptJustConfirmed = false
    var done: OrderStatus?
    /// The receiver's confirmation, once given (a `receipt` hand-over).
    var receipt: HandOver?
    /// The receiver may confirm receipt now.
    var mayConfirmReceipt = false
    /// Once delivered: whom the person may rate, and the ratings they may see (`Ratings`).
    var ratings: Ratings.ShipmentRatings?
    var justRated = false
    /// The carrier's published average, from the minimum count on.
    var carrierRating: RatingSummary?
    /// The parcel's label was just scanned (its code, carried into the hand-over forms as proof).
    var scanned: String?
    /// The person may print the parcel's label (`HandOverPolicy.mayPrintLabel`).
    var mayPrintLabel = false
    /// Its timeslots: bookings, and the week's slots for whoever may book (`TimeslotPages.Section`).
    var slots = TimeslotPages.Section()
    var slotNotice: String?
    /// Where the shipment's counters are: the sender drops it at one, the receiver collects it at one.
    var counterHints: [String] = []
    /// The shipment's insurance claim, for its claimant and staff; what the sender may claim now.
    var claim: Claims.View?
    var claimKinds: [ClaimKind] = []
    var claimValues: [String: String] = [:]
    var claimErrors: [String: String] = [:]
    var claimMessage: String?

    static func load(_ id: OrderID, _ req: Request, for me: Principal) async throws -> OrderPage {
        let record = try await Orders(request: req).detail(id, for: me)
        let order = record.order, caps = record.capacities
        let tracking = Tracking(request: req)
        let actions = record.actions
        var page = OrderPage(
            record: record, details: PartyDetails.visible(to: caps), actions: actions,
            payURL: OrderPolicy.allows(.pay, status: order.status, as: caps) ? order.checkoutURL : nil,
            trail: order.status.driverHasSetOff ? try await tracking.trail(id, for: me, limit: 500).map { [$0.latitude, $0.longitude] } : [],
            sharing: OrderPolicy.allows(.sharePosition, status: order.status, as: caps)
                // Travellers have no duty (`PositionSharing.ownShipments`): their switch starts off.
                ? (PositionSharing.mode(for: me.caller) == .fleet ? ((try await tracking.duty(of: me))?.onDuty ?? false) : false) : nil,
            showsTrackingLink: OrderPolicy.allows(.renewTrackingLink, status: order.status, as: caps))
        if actions.contains(.assign) || actions.contains(.reassign) {
            page.assign = try AssignForm.load(order, reassign: !actions.contains(.assign), by: me, fleet: try await tracking.fleet(nearOrder: nil, by: me))
        }
        page.sharingOnDuty = PositionSharing.mode(for: me.caller) == .fleet
        page.created = req.query[String.self, at: "created"] != nil
        page.paid = req.query[String.self, at: "paid"] != nil && order.paymentStatus == .paid
        page.photoRefused = req.query[String.self, at: "photo"] == "refused"
        page.done = req.query[String.self, at: "done"].map { OrderStatus(rawValue: $0) ?? order.status }
        page.receipt = try await Orders(request: req).receipt(of: id)
        page.mayConfirmReceipt = ShipmentRecord.mayConfirmReceipt(record, confirmed: page.receipt != nil)
        page.receiptJustConfirmed = req.query[String.self, at: "receipt"] != nil && page.receipt != nil
        page.scanned = req.query[String.self, at: "scan"].flatMap(HandOverPolicy.token(fromScan:))
        page.mayPrintLabel = HandOverPolicy.mayPrintLabel(as: caps, status: order.status)
        let legs = try await Timeslots.legKinds(of: id, on: req.db)
        page.slots = try await TimeslotPages.Section.load(order, legs: legs, capacities: caps, req, for: me)
        page.counterHints = try await Self.counterHints(legs, req)
        page.slotNotice = req.query[String.self, at: "slot"].flatMap { $0.count <= 40 && $0.allSatisfy { $0.isLetter || $0 == "_" } ? $0 : nil }
        if order.status == .delivered {
            page.ratings = try await Ratings(request: req).shipmentRatings(id, for: me)
            page.justRated = req.query[String.self, at: "rated"] != nil
        }
        if let driver = order.driverID, driver != me.userID {
            let summary = try await Ratings(request: req).profile(.person(driver), for: me).summary
            page.carrierRating = summary.average == nil ? nil : summary
        }
        if order.declaredValue != nil {
            let claims = Claims(request: req)
            page.claim = try await claims.claim(of: id, for: me)
            if page.claim == nil { page.claimKinds = try await claims.claimableKinds(order, for: me) }
        }
        return page
    }

    /// The counters of a shipment (`legs`, read once for the page), each as a sentence for its page.
    static func counterHints(_ legs: Timeslots.LegKinds, _ req: Request) async throws -> [String] {
        let ids = legs.counters.compactMap { $0.flatMap(UUID.init(uuidString:)) }.map(CounterID.init(rawValue:))
        guard !ids.isEmpty else { return [] }
        let counters = Dictionary(uniqueKeysWithValues: try await CounterRecord.query(on: req.db).filter(\.$id ~~ ids).all().map { (try $0.storedID.uuidString, $0) })
        let ctx = try req.web
        return zip(legs.kinds, legs.counters).enumerated().compactMap { position, leg -> String? in
            guard leg.0 == .counter, let counter = leg.1.flatMap({ counters[$0] }) else { return nil }
            let place = counter.address.singleLine
            return position == legs.kinds.count - 1 ? ctx.t(.counterCollectHint, counter.name, place) : ctx.t(.counterDropHint, counter.name, place)
        }
    }

    func page(_ ctx: WebContext) throws -> WebPage {
        let order = record.order
        let id = order.id
        let form = Form(ctx: ctx)
        let pickup = order.pickup, dropoff = order.dropoff, recipient = order.recipient

        var notices = ""
        if created { notices += "<div class=\"alert ok\" role=\"status\">\(h(ctx.t(.orderPlaced)))</div>" }
        if paid { notices += "<div class=\"alert ok\" role=\"status\">\(h(ctx.t(.paymentReceived)))</div>" }
        if photoRefused { notices += "<div class=\"alert error\" role=\"alert\">\(h(ctx.t(.photoRefused)))</div>" }
        if let done { notices += "<div class=\"alert ok\" role=\"status\">\(h(ctx.t(.actionDone, ctx.status(done))))</div>" }
        if receiptJustConfirmed { notices += "<div class=\"alert ok\" role=\"status\">\(h(ctx.t(.receiptConfirmed)))</div>" }
        for hint in counterHints { notices += "<div class=\"alert info\" role=\"note\" data-counter-hint>\(h(hint))</div>" }
        if scanned != nil { notices += "<div class=\"alert ok\" role=\"status\" data-scanned>\(h(ctx.t(.labelScanned)))</div>" }
        let scanField = scanned.map { "<input type=\"hidden\" name=\"scannedCode\" value=\"\(h($0))\">" } ?? ""
        if let code = record.recipientCode {
            notices += "<div class=\"alert info handover-code\" role=\"status\">\(h(ctx.t(.yourHandOverCode))) <strong data-recipient-code>\(h(code))</strong></div>"
        }
        // Timeline: every stage with its date and time.
        let stages = record.events.map { event, actor -> String in
            let label = event.status.map { ctx.status($0) } ?? event.type.replacingOccurrences(of: "_", with: " ")
            let by = actor.map { " · " + h(details.staffLastNames || $0.personID == order.customerID ? $0.displayName : $0.firstName) } ?? ""
            // Notes can carry money (the cash collected): only for those who see it.
            let note = details.money ? event.note : nil
            return "<li><span class=\"when\">\(ctx.time(event.at))</span> <strong>\(h(label))</strong>\(by)\(note.map { "<br><span class=\"note\">\(h($0))</span>" } ?? "")</li>"
        }.joined()

        let eta = record.tracking?.eta.map { estimate -> String in
            "<p class=\"eta\">\(h(estimate.stop == .pickup ? ctx.t(.etaPickup) : ctx.t(.etaDropoff))) \(ctx.clock(estimate.arrivesAt)) · \(String(format: "%.1f", Double(estimate.distanceMeters) / 1000)) km</p>"
        } ?? ""
        let average = carrierRating.flatMap { r in r.average.map { " <span class=\"stars\">" + h(ctx.t(.ratingAverage, String(format: "%.1f", $0), String(r.count))) + "</span>" } } ?? ""
        let driverLine = record.driver.map { "<p>\(h(ctx.t(.driver))): <strong>\(h(details.staffLastNames ? $0.displayName : $0.firstName))</strong>\(average)</p>" } ?? ""

        // The map: both stops, the driver while under way, and the route so far.
        var map = WebMap(id: "order-map", label: ctx.t(.mapOfDelivery), orderID: id)
        if let c = pickup.coordinate { map.markers.append(.init(id: "pickup", latitude: c.latitude, longitude: c.longitude, label: ctx.t(.pickup), kind: "pickup")) }
        if let c = dropoff.coordinate { map.markers.append(.init(id: "dropoff", latitude: c.latitude, longitude: c.longitude, label: ctx.t(.dropoff), kind: "dropoff")) }
        if let p = record.tracking?.position, let driver = record.driver {
            map.markers.append(.init(id: "driver:\(driver.personID.uuidString)", latitude: p.latitude, longitude: p.longitude, label: driver.firstName, kind: "driver"))
        }
        map.trail = trail
        let showMap = !map.markers.isEmpty || order.status.nextStop != nil

        // Files: the parcel photo, the signature and the delivery photo.
        let files = try record.files.map { file -> String in
            let label = switch file.kind {
            case .signature: ctx.t(.signature)
            case .deliveryPhoto: ctx.t(.deliveryPhoto)
            case .receiptPhoto: ctx.t(.receiverPhoto)
            case .parcelPhoto: ctx.t(.parcelPhoto)
            case .counterPhoto: ctx.t(.counterPhoto)
            case .claimPhoto: ctx.t(.claim)
            }
            return "<figure><img src=\"\(WebRoutes.orderFile((id, try file.storedID)))\" alt=\"\(h(label))\" width=\"\(file.width)\" height=\"\(file.height)\" class=\"file \(file.kind.rawValue)\" loading=\"lazy\"><figcaption>\(h(label))</figcaption></figure>"
        }.joined()

        var actionBlocks: [String] = []
        if let url = payURL {
            actionBlocks.append("<a class=\"button primary\" href=\"\(h(url))\">\(h(ctx.t(.payNow, order.price.description)))</a>")
        }
        if actions.contains(.accept) {
            actionBlocks.append("<form method=\"post\" action=\"\(WebRoutes.accept(id))\"\(StepForm.attributes(ctx, .accept, order))>\(form.hidden())\(StepForm.key())<button type=\"submit\" class=\"primary\">\(h(ctx.t(.accept)))</button></form>")
        }
        if actions.contains(.pickup) {
            let cash = order.paymentMethod == .cash
                ? "<div class=\"field\"><label for=\"f-cash\">\(h(ctx.t(.cashCollected, order.currency)))</label><input id=\"f-cash\" name=\"cash\" inputmode=\"decimal\" required value=\"\(h(OrderPages.decimal(order.price)))\"></div>" : ""
            actionBlocks.append("<form method=\"post\" action=\"\(WebRoutes.pickup(id))\" class=\"stack\"\(StepForm.attributes(ctx, .pickup, order))>\(form.hidden())\(StepForm.key())\(scanField)\(cash)<button type=\"submit\" class=\"primary\">\(h(ctx.t(.pickedUp)))</button></form>")
        }
        if actions.contains(.deliver) {
            actionBlocks.append("<a class=\"button primary\" href=\"\(WebRoutes.deliver(id))\(scanned.map { "?scan=" + $0 } ?? "")\">\(h(ctx.t(.deliverProof)))</a>")
        }
        if actions.contains(.fail) {
            let reasons = FailureReason.allCases.map { ($0.rawValue, ctx.failure($0)) }
            let failForm = Form(ctx: ctx)
            actionBlocks.append("""
                <details><summary>\(h(ctx.t(.markFailed)))</summary>
                <form method="post" action="\(WebRoutes.fail(id))" class="stack"\(StepForm.attributes(ctx, .fail, order))>\(form.hidden())\(StepForm.key())
                \(failForm.select("reason", ctx.t(.reason), options: reasons))
                \(failForm.field("note", ctx.t(.note), required: false))
                <button type="submit" class="danger">\(h(ctx.t(.markFailed)))</button></form></details>
                """)
        }
        if let assign { actionBlocks.append(try assign.render(ctx)) }
        if mayConfirmReceipt {
            // Seed Mesajem: "click received, then take a photo".
            actionBlocks.append("""
                <form method="post" action="\(WebRoutes.confirmReceipt(id))" enctype="multipart/form-data" class="stack">\(form.hidden())\(scanField)
                <div class="field"><label for="f-receipt-photo">\(h(ctx.t(.receiptPhoto)))</label>
                <input id="f-receipt-photo" name="photo" type="file" accept="image/jpeg,image/png" capture="environment" data-preview></div>
                <button type="submit" class="primary">\(h(ctx.t(.confirmReceipt)))</button></form>
                """)
        }
        if mayPrintLabel {
            actionBlocks.append("""
                <p class="label-links"><a class="button secondary" href="\(WebRoutes.orderLabel(id))" data-label-pdf>\(h(ctx.t(.labelPDF)))</a>
                <a href="\(WebRoutes.orderLabel(id))?layout=a4">\(h(ctx.t(.labelPDFA4)))</a></p>
                """)
        }
        if actions.contains(.cancel) {
            actionBlocks.append("""
                <details><summary>\(h(ctx.t(.cancelOrder)))</summary>
                <form method="post" action="\(WebRoutes.cancelOrder(id))" class="stack" data-confirm="\(h(ctx.t(.cancelConfirm)))">\(form.hidden())
                \(Form(ctx: ctx).field("reason", ctx.t(.reason)))
                <button type="submit" class="danger">\(h(ctx.t(.cancelOrder)))</button></form></details>
                """)
        }

        // The driver shares their position from the order's page too, while it is open.
        let sharingBlock = sharing.map { DriverPages.sharingToggle(ctx, onDuty: $0, duty: sharingOnDuty) } ?? ""

        var linkBlock = ""
        if showsTrackingLink {
            if let url = record.tracking?.trackingURL {
                linkBlock = """
                    <h2>\(h(ctx.t(.trackingLink)))</h2>
                    <p class="hint">\(h(ctx.t(.trackingLinkHint)))</p>
                    <p class="copy"><input readonly value="\(h(url))" data-copy-source aria-label="\(h(ctx.t(.trackingLink)))" id="tracking-url">
                    <button type="button" data-copy="\(h(url))" data-copied-text="\(h(ctx.t(.copied)))">\(h(ctx.t(.copy)))</button></p>
                    <form method="post" action="\(WebRoutes.renewTrackingLink(id))" class="inline">\(form.hidden())<button type="submit" class="secondary">\(h(ctx.t(.newLink)))</button></form>
                    <form method="post" action="\(WebRoutes.revokeTrackingLink(id))" class="inline" data-confirm="\(h(ctx.t(.revokeConfirm)))">\(form.hidden())<button type="submit" class="secondary">\(h(ctx.t(.revokeLink)))</button></form>
                    """
            } else {
                linkBlock = """
                    <h2>\(h(ctx.t(.trackingLink)))</h2><p>\(h(ctx.t(.noTrackingLink)))</p>
                    <form method="post" action="\(WebRoutes.renewTrackingLink(id))" class="inline">\(form.hidden())<button type="submit" class="secondary">\(h(ctx.t(.newLink)))</button></form>
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
            \(ConversationPolicy.roles(shipment: record.capacities, status: order.status).isEmpty ? "" : "<div class=\"chat-link\">" + ConversationPages.button(ctx, subject: .shipment(id)) + "</div>")
            \(try slots.render(ctx, order: id, capacities: record.capacities, status: order.status, notice: slotNotice))
            \(sharingBlock)
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
            \(details.money ? "<dt>\(h(ctx.t(.price)))</dt><dd>\(ctx.money(order.price))</dd>\n" + payment : "")
            \(order.signedBy.map { "<dt>\(h(ctx.t(.signedBy)))</dt><dd>\(h($0)) \(ctx.time(order.deliveredAt))</dd>" } ?? "")
            \(receipt.map { "<dt>\(h(ctx.t(.receiptConfirmed)))</dt><dd>\(ctx.time($0.at))</dd>" } ?? "")
            </dl>
            \(try insuranceBlock(ctx))
            <div class="files" id="files" data-live-refresh="status">\(files)</div>
            \(linkBlock)
            </section>
            </div>
            \(try ratings.map { try RatingPages.section(ctx, order: id, ratings: $0, me: ctx.principal?.userID ?? UserID(rawValue: UUID()), justRated: justRated) } ?? "")
            """, scripts: (showMap ? ["map"] : []) + (sharingBlock.isEmpty ? [] : ["position"]), liveTopics: ["order:\(id.uuidString)"], wide: true)
    }
}


/// Parcels addressed to the account's verified email (the `incoming` box), newest first.
struct IncomingPage: PageView {
    var records: [OrderRecord]
    var email: String
    var nextQuery: String?
    var boxes: [ShipmentBox]

    func page(_ ctx: WebContext) -> WebPage {
        let rows = records.map { record -> String in
            let order = record.order
            return """
                <tr><td><a href="\(WebRoutes.order(order.id))">\(h(order.reference))</a></td><td>\(ctx.time(order.createdAt))</td>
                <td>\(ctx.statusBadge(order.status))</td><td>\(h(record.customer.companyName ?? record.customer.firstName))</td><td>\(h(order.dropoff.city))</td></tr>
                """
        }.joined()
        let title = ctx.t(.incoming)
        return WebPage(title: title, body: """
            <h1>\(h(title))</h1>
            \(HistoryPage.switcher(ctx, boxes: boxes, current: .incoming))
            <p class="hint">\(h(ctx.t(.incomingHint, email)))</p>
            \(records.isEmpty ? "<p>\(h(ctx.t(.noIncoming)))</p>" : """
            <div class="table-wrap"><table><thead><tr><th>\(h(ctx.t(.reference)))</th><th>\(h(ctx.t(.date)))</th><th>\(h(ctx.t(.status)))</th>
            <th>\(h(ctx.t(.sender)))</th><th>\(h(ctx.t(.dropoff)))</th></tr></thead><tbody>\(rows)</tbody></table></div>
            """)
            \(nextQuery.map { "<p><a href=\"\(WebRoutes.incoming(query: $0))\">\(h(ctx.t(.more)))</a></p>" } ?? "")
            """)
    }
}
