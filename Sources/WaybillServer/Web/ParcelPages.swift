import Vapor
import WaybillCore

/// Parcels of other carriers in the web app: the list with an "add a number" form (the carrier
/// suggested as WaybillCore's `CarrierDetection` says, or chosen), and each parcel's page (carrier,
/// the other candidates to correct it, the events at the carrier, refresh, remove). The service is
/// `Parcels`; the rules are `ParcelDraft` and `ParcelPolicy`.
struct ParcelPages {
    func register(_ routes: any RoutesBuilder) {
        routes.get(WebRoutes.parcels, use: list)
        routes.post(WebRoutes.parcels, use: add)
        routes.get(WebRoutes.parcel, use: show)
        routes.post(WebRoutes.parcelAction, use: act)
        routes.get(WebRoutes.trackParcel, use: lookup)
        routes.post(WebRoutes.parcelAlerts, use: saveAlerts)
        routes.post(WebRoutes.parcelsFromText, use: addFromText)
        routes.post(WebRoutes.shops, use: connectShop)
        routes.post(WebRoutes.shopRemove, use: removeShop)
        routes.get(WebRoutes.sharedParcel, use: shared)
        routes.get(WebRoutes.carrierStatistics, use: statistics)
    }

    /// Try it without an account (seed M-Track): the carriers a number may belong to, with their
    /// own tracking pages; signed in, follow it; else sign in to follow it. Nothing is stored;
    /// lookups are limited per client address like the API's.
    func lookup(_ req: Request) async throws -> Response {
        let ctx = try req.web
        let number = (req.query[String.self, at: "number"] ?? "").prefix(100).description
        var candidates: [CarrierCandidate] = []
        var live: PublicLookup.Result?
        if !number.trimmingCharacters(in: .whitespaces).isEmpty {
            if let wait = req.application.waybill.carrierLookupLimiter.take(req.clientAddress) {
                return WebErrors.page(for: WaybillError.tooManyRequests(retryAfter: wait, "Too many lookups from this address."), ctx)
            }
            let lookup = PublicLookup(services: req.application.waybill, db: req.db, logger: req.logger)
            do {
                let found = try await lookup.lookUp(number, carrier: nil, clientAddress: req.clientAddress)
                candidates = found.candidates
                live = found
            } catch let error as WaybillError where error.status == .badRequest {
                // Not a number any carrier could use: said as "no carrier knows it".
                candidates = []
            }
        }
        return try TrackParcelPage(number: number, candidates: candidates, signedIn: ctx.principal != nil, live: live).response(ctx)
    }

    func list(_ req: Request) async throws -> Response {
        let (ctx, me) = try TravelPages.signedIn(req)
        var page = try await Self.listPage(req, me, form: Form(ctx: ctx))
        page.removed = req.query[String.self, at: "removed"] != nil
        page.saved = req.query[String.self, at: "saved"] != nil
        page.imported = req.query[Int.self, at: "imported"].map { ($0, req.query[Int.self, at: "skipped"] ?? 0) }
        return try page.response(ctx)
    }

    /// Everything the person follows, filtered (`?filter=`, on the way by default), with the forms.
    static func listPage(_ req: Request, _ me: Principal, form: Form) async throws -> ParcelListPage {
        let parcels = Parcels(request: req)
        let filter = req.query[String.self, at: "filter"].flatMap(TrackedFilter.init(rawValue:)) ?? .active
        let items = try await parcels.tracked(for: me, filter: filter)
        var any = !items.isEmpty
        if !any { any = try await !parcels.tracked(for: me, filter: .all).isEmpty }
        var page = ParcelListPage(items: items, filter: filter, followsAny: any, form: form, settings: try await parcels.settings(for: me),
                                  shops: try await Shops(request: req).list(for: me))
        if req.application.waybill.config.inboundMailDomain != nil, ParcelPolicy.allows(.change, as: .owner, by: me.caller) {
            page.forwardingAddress = try await Forwarding(services: req.application.waybill, db: req.db, logger: req.logger).address(for: me)
        }
        return page
    }

    /// Connects a shop: the page shows its webhook address and secret this once.
    func connectShop(_ req: Request) async throws -> Response {
        let (ctx, me) = try TravelPages.signedIn(req)
        let form = try AccountPages.form(req)
        let shops = Shops(request: req)
        do {
            guard let platform = ShopPlatform(rawValue: form["platform"] ?? "") else { throw WaybillError.validation("platform", "invalid") }
            let (shop, secret) = try await shops.connect(platform: platform, name: form["name"] ?? "",
                                                         secret: form["secret"].flatMap { $0.isEmpty ? nil : $0 }, by: me)
            var page = try await Self.listPage(req, me, form: Form(ctx: ctx))
            page.connected = (shop, try shops.webhookURL(shop), secret)
            return try page.response(ctx)
        } catch let error as WaybillError where error.fields != nil {
            var page = try await Self.listPage(req, me, form: Form(ctx: ctx))
            page.shopForm = Form(ctx: ctx, values: form, errors: error.fields ?? [:])
            page.status = error.status
            return try page.response(ctx)
        }
    }

    func removeShop(_ req: Request) async throws -> Response {
        let (_, me) = try TravelPages.signedIn(req)
        let id: ShopID = try WebRoutes.id(req)
        try await Shops(request: req).remove(id, by: me)
        return req.redirect(to: WebRoutes.parcels(), redirectType: .normal)
    }

    /// Pasted shipping confirmation: every number found is followed.
    func addFromText(_ req: Request) async throws -> Response {
        let (ctx, me) = try TravelPages.signedIn(req)
        let form = try AccountPages.form(req)
        do {
            let (added, skipped) = try await Parcels(request: req).addAll(from: form["text"] ?? "", name: form["name"].flatMap { $0.isEmpty ? nil : $0 }, by: me)
            return req.redirect(to: WebRoutes.parcels(query: "imported=\(added.count)&skipped=\(skipped.count)"), redirectType: .normal)
        } catch let error as WaybillError where error.fields != nil {
            var page = try await Self.listPage(req, me, form: Form(ctx: ctx))
            page.pasteForm = Form(ctx: ctx, values: form, errors: error.fields ?? [:])
            page.status = error.status
            return try page.response(ctx)
        }
    }

    func saveAlerts(_ req: Request) async throws -> Response {
        let (_, me) = try TravelPages.signedIn(req)
        let form = try AccountPages.form(req)
        guard let alerts = ParcelAlerts(rawValue: form["alerts"] ?? "") else { throw WaybillError.validation("alerts", "invalid") }
        _ = try await Parcels(request: req).setSettings(alerts: alerts, mail: form["mail"] == "on", push: form["push"] == "on", by: me)
        return req.redirect(to: WebRoutes.parcels(query: "saved=1"), redirectType: .normal)
    }

    /// How fast carriers deliver: the public board, and the person's own figures when signed in.
    func statistics(_ req: Request) async throws -> Response {
        let ctx = try req.web
        // The public board: limited per address like the API's, and shared (`DeliveryStats.publicBoard`).
        if let wait = req.application.waybill.carrierLookupLimiter.take(req.clientAddress) {
            return WebErrors.page(for: WaybillError.tooManyRequests(retryAfter: wait, "Too many requests from this address."), ctx)
        }
        let board = try await DeliveryStats.publicBoard(req.application.waybill)
        var mine: DeliveryStats.Board?
        if let me = ctx.principal { mine = try await DeliveryStats.ownBoard(me.userID, req.application.waybill) }
        return try CarrierStatisticsPage(board: board, mine: mine).response(ctx)
    }

    /// A parcel's public link: no sign-in; misses spend the address's budget.
    func shared(_ req: Request) async throws -> Response {
        let ctx = try req.web
        let token = req.parameters.get("token") ?? ""
        do {
            let (record, events) = try await Parcels.shared(token: token, clientAddress: req.clientAddress, services: req.application.waybill, db: req.db)
            var page = ParcelPage(parcel: ParcelView(record: record, relation: .shared), events: events, notice: nil)
            page.publicView = true
            let response = try page.response(ctx)
            response.headers.replaceOrAdd(name: "Referrer-Policy", value: "no-referrer")
            response.headers.replaceOrAdd(name: "X-Robots-Tag", value: "noindex")
            return response
        } catch let error as WaybillError {
            return WebErrors.page(for: error, ctx)
        }
    }

    func add(_ req: Request) async throws -> Response {
        let (ctx, me) = try TravelPages.signedIn(req)
        let form = try AccountPages.form(req)
        let draft = ParcelDraft(number: form["number"] ?? "", carrier: form["carrier"].flatMap { $0.isEmpty ? nil : $0 },
                                name: form["name"], notes: nil)
        do {
            let parcel = try await Parcels(request: req).add(draft, by: me)
            return req.redirect(to: WebRoutes.parcel(try parcel.storedID, query: "added=1"), redirectType: .normal)
        } catch let error as WaybillError where error.fields != nil {
            var page = try await Self.listPage(req, me, form: Form(ctx: ctx, values: form, errors: error.fields ?? [:]))
            page.status = error.status
            return try page.response(ctx)
        } catch let error as WaybillError {
            return WebErrors.page(for: error, ctx)
        }
    }

    func show(_ req: Request) async throws -> Response {
        let (ctx, me) = try TravelPages.signedIn(req)
        let parcels = Parcels(request: req)
        let parcel = try await parcels.view(try WebRoutes.id(req), for: me)
        return try ParcelPage(parcel: parcel, events: try await parcels.events(of: try parcel.record.storedID),
                          notice: req.query[String.self, at: "added"] != nil ? ctx.t(.parcelAdded) : nil).response(ctx)
    }

    func act(_ req: Request) async throws -> Response {
        let (ctx, me) = try TravelPages.signedIn(req)
        let id: ParcelID = try WebRoutes.id(req)
        let form = try AccountPages.form(req)
        let parcels = Parcels(request: req)
        do {
            switch req.parameters.get("action") {
            case "refresh": _ = try await parcels.refresh(id, by: me)
            case "carrier": _ = try await parcels.update(id, name: nil, notes: nil, carrier: form["carrier"] ?? "", by: me)
            case "number": _ = try await parcels.update(id, number: form["number"] ?? "", name: nil, notes: nil, carrier: nil, by: me)
            case "rename": _ = try await parcels.update(id, name: form["name"] ?? "", notes: form["notes"] ?? "", carrier: nil, by: me)
            case "alerts":
                let chosen = form["alerts"] ?? ""
                let alerts: ParcelAlerts?? = chosen == "default" ? .some(nil) : ParcelAlerts(rawValue: chosen).map { .some($0) }
                guard let alerts else { throw WaybillError.validation("alerts", "invalid") }
                _ = try await parcels.update(id, name: nil, notes: nil, carrier: nil, alerts: alerts, by: me)
            case "share": _ = try await parcels.share(id, with: form["email"] ?? "", by: me)
            case "unshare":
                guard let user = form["user"].flatMap(UUID.init(uuidString:)) else { throw WaybillError.notFound }
                try await parcels.unshare(id, user: UserID(user), by: me)
            case "link": _ = try await parcels.setLink(id, on: true, by: me)
            case "unlink": _ = try await parcels.setLink(id, on: false, by: me)
            case "remove":
                try await parcels.remove(id, by: me)
                return req.redirect(to: WebRoutes.parcels(query: "removed=1"), redirectType: .normal)
            default: throw WaybillError.notFound
            }
        } catch let error as WaybillError {
            let parcel = try await parcels.view(id, for: me)
            var page = ParcelPage(parcel: parcel, events: try await parcels.events(of: id), notice: nil)
            page.error = error.fields?["email"].map { ctx.fieldError("email", $0) } ?? ctx.message(error)
            page.status = error.status
            return try page.response(ctx)
        }
        return req.redirect(to: WebRoutes.parcel(id), redirectType: .normal)
    }
}

extension WebRoutes {
    static let parcels = WebPath("/parcels")
    static let parcel = WebPath<ParcelID>("/parcels/:id") { [$0.uuidString] }
    static let parcelAction = WebPath<(ParcelID, String)>("/parcels/:id/:action") { [$0.0.uuidString, $0.1] }
    static let trackParcel = WebPath("/track-parcel")
    static let parcelAlerts = WebPath("/parcel-alerts")
    static let parcelsFromText = WebPath("/parcels/from-text")
    static let shops = WebPath("/shops")
    static let shopRemove = WebPath<ShopID>("/shops/:id/remove") { [$0.uuidString] }
    static let carrierStatistics = WebPath("/carrier-statistics")
}

extension WebContext {
    func parcelStatus(_ status: ParcelStatus) -> String {
        switch status {
        case .pending: t(.psPending)
        case .pickedUp: t(.psPickedUp)
        case .inTransit: t(.psInTransit)
        case .onHold: t(.psOnHold)
        case .outForDelivery: t(.psOutForDelivery)
        case .readyForPickup: t(.psReadyForPickup)
        case .deliveryDelayed: t(.psDelayed)
        case .deliveryFailed: t(.psFailed)
        case .delivered: t(.psDelivered)
        case .returnToSender: t(.psReturned)
        case .cancelled: t(.psCancelled)
        case .unknown: t(.psUnknown)
        case .expired: t(.psExpired)
        }
    }

    func carrierName(_ code: String) -> String { CarrierDetection.standard.carrierNames[code] ?? code }
}

/// Everything a person follows — other carriers' parcels and Waybill's own shipments — with the
/// filters, the form to follow a number, and when to be told.
struct ParcelListPage: PageView {
    var items: [TrackedItem]
    var filter: TrackedFilter
    /// Whether the person follows anything at all (whatever the filter shows).
    var followsAny: Bool
    var form: Form
    var settings: ParcelSettingsRecord?
    var removed = false
    var saved = false
    /// After a paste: numbers followed, numbers already followed.
    var imported: (added: Int, skipped: Int)?
    var pasteForm: Form?
    var shops: [ShopRecord] = []
    var shopForm: Form?
    /// Where to forward shipping confirmations, when this server receives mail.
    var forwardingAddress: String?
    /// Just connected: the shop, its webhook address and its secret, shown this once.
    var connected: (shop: ShopRecord, url: String, secret: String)?
    var status: HTTPResponseStatus = .ok

    /// Connected shops, and the form to connect one (seed M-Track: "link e-shops").
    func shopSection(_ ctx: WebContext) throws -> String {
        var f = shopForm ?? Form(ctx: ctx, values: ["platform": "shopify"])
        f.idPrefix = "shop-"  // the page's three forms each have a "name" field
        let list = try shops.map { s -> String in
            let id = try s.storedID
            return "<li data-shop=\"\(id.uuidString)\">\(h(s.name)) · \(s.platform == .shopify ? "Shopify" : "WooCommerce") · \(h(ctx.t(.shopNumbers))) \(s.numbersReceived) <form method=\"post\" action=\"\(WebRoutes.shopRemove(id))\" class=\"inline\">\(f.hidden())<button type=\"submit\" class=\"link\">\(h(ctx.t(.shopDisconnect)))</button></form></li>"
        }.joined()
        let just = connected.map { c in
            """
            <div class="alert ok" role="status" data-shop-connected>
            <p>\(h(ctx.t(.shopConnected)))</p>
            <p><label>\(h(ctx.t(.shopWebhookURL))) <input type="text" readonly value="\(h(c.url))" data-webhook-url></label></p>
            <p><label>\(h(ctx.t(.shopSecret))) <input type="text" readonly value="\(h(c.secret))" data-webhook-secret></label></p>
            <p class="note">\(h(ctx.t(c.shop.platform == .shopify ? .shopHowShopify : .shopHowWoo)))</p>
            </div>
            """
        } ?? ""
        return """
            <h2>\(h(ctx.t(.shopsTitle)))</h2>
            \(just)
            \(list.isEmpty ? "" : "<ul class=\"list\">\(list)</ul>")
            <details\(shopForm == nil ? "" : " open")><summary>\(h(ctx.t(.shopConnect)))</summary>
            <form method="post" action="\(WebRoutes.shops())" class="stack">\(f.hidden())
            \(f.select("platform", ctx.t(.shopPlatform), options: [("shopify", "Shopify"), ("woocommerce", "WooCommerce")]))
            \(f.field("name", ctx.t(.shopName)))
            \(f.field("secret", ctx.t(.shopSecretOptional), autocomplete: "off", required: false, hint: ctx.t(.shopSecretHint)))
            <button type="submit">\(h(ctx.t(.shopConnect)))</button>
            </form></details>
            """
    }

    /// Paste a shop's shipping confirmation: every number in it is followed.
    func paste(_ ctx: WebContext) -> String {
        var f = pasteForm ?? Form(ctx: ctx)
        f.idPrefix = "paste-"
        let error = f.errors["text"].map { "<p class=\"error\" id=\"f-text-error\">\(h(ctx.fieldError("text", $0)))</p>" } ?? ""
        return """
            <details\(pasteForm == nil ? "" : " open")><summary>\(h(ctx.t(.pasteConfirmation)))</summary>
            <form method="post" action="\(WebRoutes.parcelsFromText())" class="stack">\(f.hidden())
            <div class="field\(error.isEmpty ? "" : " invalid")"><label for="f-text">\(h(ctx.t(.pasteHint)))</label>
            <textarea id="f-text" name="text" rows="6" maxlength="20000"\(error.isEmpty ? "" : " aria-invalid=\"true\" aria-describedby=\"f-text-error\"")>\(h(f.values["text"] ?? ""))</textarea>\(error)</div>
            \(f.field("name", ctx.t(.parcelName), required: false))
            <button type="submit">\(h(ctx.t(.pasteFollow)))</button>
            </form>
            \(forwardingAddress.map { "<p>\(h(ctx.t(.forwardTo))) <strong data-forwarding-address>\(h($0))</strong></p>" } ?? "")
            </details>
            """
    }

    func page(_ ctx: WebContext) throws -> WebPage {
        let rows = items.map { i -> String in
            let href = i.kind == .parcel ? WebRoutes.parcel(ParcelID(i.id)) : WebRoutes.order(OrderID(i.id))
            let title: String = switch (i.kind, i.direction) {
            case (.shipment, .incoming?): "\(ctx.t(.shipmentFrom)) \(i.place ?? "")"
            case (.shipment, _): "\(ctx.t(.shipmentTo)) \(i.place ?? "")"
            case (.parcel, _): i.name ?? i.number
            }
            let carrier = i.carrier == "waybill" ? "Waybill" : ctx.carrierName(i.carrier)
            let shared = i.sharedBy.map { " · <small class=\"shared\">\(h(ctx.t(.sharedBy))) \(h($0))</small>" } ?? ""
            let number = title == i.number ? "" : " · <small>\(h(i.number))</small>"
            return "<li data-kind=\"\(i.kind.rawValue)\"><a href=\"\(href)\">\(h(title))</a> · \(h(carrier)) · <span class=\"status\" data-parcel-status=\"\(i.status.rawValue)\">\(h(ctx.parcelStatus(i.status)))</span>\(number)\(shared)</li>"
        }.joined()
        let filters = TrackedFilter.allCases.map { f -> String in
            let label = switch f {
            case .active: ctx.t(.filterActive)
            case .attention: ctx.t(.filterAttention)
            case .delivered: ctx.t(.filterDelivered)
            case .all: ctx.t(.filterAll)
            }
            return "<li><a href=\"\(WebRoutes.parcels(query: "filter=" + f.rawValue))\"\(f == filter ? " aria-current=\"page\"" : "")>\(h(label))</a></li>"
        }.joined()
        let list = !followsAny ? "<p>\(h(ctx.t(.noParcels)))</p>"
            : "<nav class=\"boxes\" aria-label=\"\(h(ctx.t(.views)))\"><ul>\(filters)</ul></nav>"
              + (items.isEmpty ? "<p>\(h(ctx.t(.nothingHere)))</p>" : "<ul class=\"list\">\(rows)</ul>")
        let alertsForm = settings.map { s in
            let f = Form(ctx: ctx, values: ["alerts": s.alerts.rawValue, "mail": s.mail ? "on" : "", "push": s.push ? "on" : ""])
            return """
                <h2>\(h(ctx.t(.parcelAlertsTitle)))</h2>
                \(saved ? "<div class=\"alert ok\" role=\"status\">\(h(ctx.t(.alertsSaved)))</div>" : "")
                <form method="post" action="\(WebRoutes.parcelAlerts())" class="stack">\(f.hidden())
                \(f.select("alerts", ctx.t(.parcelAlerts), options: [("all", ctx.t(.alertsAll)), ("important", ctx.t(.alertsImportant)), ("none", ctx.t(.alertsNone))]))
                \(f.checkbox("mail", ctx.t(.alertsAlsoMail)))
                \(f.checkbox("push", ctx.t(.alertsAlsoPush)))
                <button type="submit">\(h(ctx.t(.save)))</button>
                </form>
                """
        } ?? ""
        let carriers = CarrierDetection.standard.carrierNames.sorted { $0.value < $1.value }
        return WebPage(title: ctx.t(.parcels), body: """
            <h1>\(h(ctx.t(.parcels)))</h1>
            <p><a href="\(WebRoutes.trackParcel())">\(h(ctx.t(.whichCarrier)))</a> · <a href="\(WebRoutes.carrierStatistics())">\(h(ctx.t(.statsTitle)))</a></p>
            \(removed ? "<div class=\"alert ok\" role=\"status\">\(h(ctx.t(.parcelRemoved)))</div>" : "")
            \(status == .ok ? "" : "<div class=\"alert error\" role=\"alert\">\(h(ctx.t(.errValidation)))</div>")
            <p>\(h(ctx.t(.parcelsIntro)))</p>
            <form method="post" action="\(WebRoutes.parcels())" class="stack">\(form.hidden())
            \(form.field("number", ctx.t(.trackingNumber), autocomplete: "off", hint: ctx.t(.trackingNumberHint)))
            \(form.select("carrier", ctx.t(.carrierOptional), options: [("", ctx.t(.carrierSuggested))] + carriers.map { ($0.key, $0.value) }, required: false, attributes: ""))
            \(form.field("name", ctx.t(.parcelName), required: false))
            <button type="submit" class="primary">\(h(ctx.t(.followParcel)))</button>
            </form>
            \(imported.map { "<div class=\"alert ok\" role=\"status\" data-imported=\"\($0.added)\">\(h(ctx.t(.pasteFollowed))) \($0.added)\($0.skipped > 0 ? " · \(h(ctx.t(.pasteAlready))) \($0.skipped)" : "")</div>" } ?? "")
            \(paste(ctx))
            <h2>\(h(ctx.t(.followedParcels)))</h2>
            \(list)
            \(try shopSection(ctx))
            \(alertsForm)
            """, status: status)
    }
}

struct TrackParcelPage: PageView {
    var number: String
    var candidates: [CarrierCandidate]
    var signedIn: Bool
    /// What the likeliest carrier said, when this server could ask it.
    var live: PublicLookup.Result?

    func page(_ ctx: WebContext) -> WebPage {
        let asked = !number.trimmingCharacters(in: .whitespaces).isEmpty
        let csrf = "<input type=\"hidden\" name=\"_csrf\" value=\"\(h(ctx.csrf))\">"
        let back = WebRoutes.trackParcel(query: "number=" + queryValue(number))
        let rows = candidates.map { c -> String in
            let follow = signedIn
                ? "<form method=\"post\" action=\"\(WebRoutes.parcels())\" class=\"inline\">\(csrf)<input type=\"hidden\" name=\"number\" value=\"\(h(c.number))\"><input type=\"hidden\" name=\"carrier\" value=\"\(h(c.carrier))\"><button type=\"submit\">\(h(ctx.t(.followParcel)))</button></form>"
                : "<a href=\"\(WebRoutes.login(query: "next=" + queryValue(back)))\">\(h(ctx.t(.signInToFollow)))</a>"
            let site = c.trackingURL.map { " · <a href=\"\(h($0))\" rel=\"noopener noreferrer\" target=\"_blank\">\(h(ctx.t(.atTheCarrier)))</a>" } ?? ""
            let why = c.reason == .checkDigitValid ? ctx.t(.checkDigitValid) : ctx.t(.patternOnly)
            return "<li data-candidate=\"\(h(c.carrier))\"><strong>\(h(c.carrierName))</strong> — \(h(c.formatName)) <small>(\(h(why)))</small>\(site)<br>\(follow)</li>"
        }.joined()
        let results = !asked ? "" : candidates.isEmpty ? "<p>\(h(ctx.t(.noCarrierKnown)))</p>" : "<ol class=\"list\">\(rows)</ol>"
        var word = ""
        if let live, let carrier = live.carrier {
            if let report = live.report {
                let status = ParcelTracking.overall(report.events, delivered: report.delivered)
                word = """
                    <section class="live-status" aria-live="polite"><h2>\(h(ctx.carrierName(carrier)))</h2>
                    <p class="big-status" data-parcel-status="\(status.rawValue)">\(h(ctx.parcelStatus(status)))</p>
                    \(ParcelPage.timeline(ctx, report.events.sorted { $0.at > $1.at }))</section>
                    """
            } else if live.unknownAtCarrier {
                word = "<p class=\"note\" data-live=\"unknown\">\(h(ctx.carrierName(carrier))): \(h(ctx.t(.unknownAtCarrier)))</p>"
            } else if live.notAsked == "busy" {
                word = "<p class=\"note\" data-live=\"busy\">\(h(ctx.t(.carrierBusy)))</p>"
            }
        }
        return WebPage(title: ctx.t(.trackWithoutAccount), body: """
            <h1>\(h(ctx.t(.trackWithoutAccount)))</h1>
            <p>\(h(ctx.t(.parcelsIntro)))</p>
            <form method="get" action="\(WebRoutes.trackParcel())" class="stack">
            \(Form(ctx: ctx, values: ["number": number]).field("number", ctx.t(.trackingNumber), autocomplete: "off", hint: ctx.t(.trackingNumberHint)))
            <button type="submit" class="primary">\(h(ctx.t(.whichCarrier)))</button>
            </form>
            \(word)
            \(results)
            <p><a href="\(WebRoutes.carrierStatistics())">\(h(ctx.t(.statsTitle)))</a></p>
            """)
    }
}

struct ParcelPage: PageView {
    var parcel: ParcelView
    var events: [ParcelEvent]
    var notice: String?
    var error: String?
    var status: HTTPResponseStatus = .ok
    /// The page of a public link: what it shows, and no actions.
    var publicView = false

    func page(_ ctx: WebContext) throws -> WebPage {
        let p = parcel.record, id = try parcel.record.storedID
        let owner = parcel.relation == .owner && !publicView
        let csrf = "<input type=\"hidden\" name=\"_csrf\" value=\"\(h(ctx.csrf))\">"
        let candidates = CarrierDetection.standard.candidates(for: p.number)
        let mine = candidates.first { $0.carrier == p.carrier }
        let others = candidates.filter { $0.carrier != p.carrier }
        let correct = others.isEmpty || !owner ? "" : """
            <details><summary>\(h(ctx.t(.notThisCarrier)))</summary>
            \(others.map { c in "<form method=\"post\" action=\"\(WebRoutes.parcelAction((id, "carrier")))\" class=\"inline\">\(csrf)<input type=\"hidden\" name=\"carrier\" value=\"\(h(c.carrier))\"><button type=\"submit\">\(h(c.carrierName)) — \(h(c.formatName))</button></form> " }.joined())
            </details>
            """
        let renumber = !owner ? "" : """
            <details><summary>\(h(ctx.t(.wrongNumber)))</summary>
            <form method="post" action="\(WebRoutes.parcelAction((id, "number")))" class="stack">\(csrf)
            <div class="field"><label for="parcel-number">\(h(ctx.t(.trackingNumber)))</label><input id="parcel-number" name="number" value="\(h(p.number))" maxlength="100" required autocomplete="off" autocapitalize="characters" spellcheck="false"></div>
            <button type="submit">\(h(ctx.t(.correctNumber)))</button></form>
            </details>
            """
        return WebPage(title: p.name ?? p.number, body: """
            <h1>\(h(p.name ?? p.number))</h1>
            \(notice.map { "<div class=\"alert ok\" role=\"status\">\(h($0))</div>" } ?? "")
            \(error.map { "<div class=\"alert error\" role=\"alert\">\(h($0))</div>" } ?? "")
            <p class="big-status" data-parcel-status="\(p.status.rawValue)">\(h(ctx.parcelStatus(p.status)))</p>
            <dl class="facts">
            <dt>\(h(ctx.t(.trackingNumber)))</dt><dd>\(h(p.number))</dd>
            <dt>\(h(ctx.t(.carrier)))</dt><dd data-carrier="\(h(p.carrier))">\(h(ctx.carrierName(p.carrier)))\(mine.map { " — " + h($0.formatName) } ?? "") <small>(\(h(ctx.t(p.pinned ? .carrierChosen : .carrierSuggestedShort))))</small></dd>
            \(p.estimatedDelivery.map { "<dt>\(h(ctx.t(.expectedOn)))</dt><dd>\(ctx.time($0, dateOnly: true))</dd>" } ?? "")
            \(p.lastCheckedAt.map { "<dt>\(h(ctx.t(.lastChecked)))</dt><dd>\(ctx.time($0))</dd>" } ?? "")
            </dl>
            \(CarrierDetection.standard.trackingURL(format: p.format, number: p.number, carrier: p.carrier).map { "<p><a href=\"\(h($0))\" rel=\"noopener noreferrer\" target=\"_blank\">\(h(ctx.t(.atTheCarrier)))</a></p>" } ?? "")
            \(correct)
            \(renumber)
            <h2>\(h(ctx.t(.parcelEvents)))</h2>
            \(Self.map(ctx, events))
            \(Self.timeline(ctx, events))
            \(publicView ? "" : actions(ctx, id: id, owner: owner, csrf: csrf))
            \(publicView ? "" : "<p><a href=\"\(WebRoutes.parcels())\">\(h(ctx.t(.back)))</a></p>")
            """, status: status)
    }

    /// The places of the events on a map (oldest to newest as a line), the newest labelled; a place
    /// found only by its town or country is marked approximate (≈).
    static func map(_ ctx: WebContext, _ events: [ParcelEvent]) -> String {
        let placed = events.sorted { $0.at < $1.at }.compactMap { e in e.place().map { (e, $0) } }
        guard !placed.isEmpty else { return "" }
        // One marker per distinct place, labelled with the last event there.
        var markers: [WebMap.Marker] = []
        var seen: [String: Int] = [:]
        for (event, place) in placed {
            let key = String(format: "%.3f,%.3f", place.latitude, place.longitude)
            let label = (event.location ?? "") + (place.approximate ? " ≈" : "")
            let marker = WebMap.Marker(id: "place-\(markers.count)", latitude: place.latitude, longitude: place.longitude, label: label,
                                       kind: place.approximate ? "approx" : "pin")
            if let index = seen[key] { markers[index].label = label } else { seen[key] = markers.count; markers.append(marker) }
        }
        let approximate = placed.contains { $0.1.approximate }
        let fallback = "<ul class=\"map-fallback\">" + markers.map { "<li data-place-kind=\"\($0.kind)\">\(h($0.label))</li>" }.joined() + "</ul>"
        let map = WebMap(id: "parcel-map", label: ctx.t(.parcelMap), markers: markers,
                         trail: placed.map { [$0.1.latitude, $0.1.longitude] }, fallback: fallback)
        return map.render(ctx) + (approximate ? "<p class=\"note\">\(h(ctx.t(.approximatePlaces)))</p>" : "")
    }

    /// The carrier's events, newest first, with the time as the carrier gave it.
    static func timeline(_ ctx: WebContext, _ events: [ParcelEvent]) -> String {
        guard !events.isEmpty else { return "<p>\(h(ctx.t(.noParcelEvents)))</p>" }
        let items = events.map { e in
            "<li><span class=\"when\">\(ctx.time(e.at))\(e.timeZoneKnown ? "" : " <small>(\(h(ctx.t(.localTime))))</small>")</span> <strong>\(h(e.status.map(ctx.parcelStatus) ?? e.rawCode))</strong><br><span class=\"note\">\(h(e.description))\(e.location.map { " — " + h($0) } ?? "")</span></li>"
        }.joined()
        return "<ol class=\"timeline\">\(items)</ol>"
    }

    /// Ask now, when to be told, and: for its owner sharing and stopping; for others leaving.
    private func actions(_ ctx: WebContext, id: ParcelID, owner: Bool, csrf: String) -> String {
        let alerts = Form(ctx: ctx, values: ["alerts": parcel.alerts?.rawValue ?? "default"])
        let alertsForm = """
            <form method="post" action="\(WebRoutes.parcelAction((id, "alerts")))" class="stack">\(csrf)
            \(alerts.select("alerts", ctx.t(.parcelAlerts), options: [("default", ctx.t(.alertsAsAccount)), ("all", ctx.t(.alertsAll)), ("important", ctx.t(.alertsImportant)), ("none", ctx.t(.alertsNone))]))
            <button type="submit">\(h(ctx.t(.save)))</button>
            </form>
            """
        var sharing = ""
        if owner {
            // No "write privately" here: sharing a parcel with someone does not let its owner write to
            // them first; the person it is shared with may (`Acquaintance.parcelShareLinks`).
            let people = parcel.sharedWith.map { person in
                "<li data-shared-with=\"\(person.id.uuidString)\">\(h(person.name)) <form method=\"post\" action=\"\(WebRoutes.parcelAction((id, "unshare")))\" class=\"inline\">\(csrf)<input type=\"hidden\" name=\"user\" value=\"\(person.id.uuidString)\"><button type=\"submit\">\(h(ctx.t(.stopSharing)))</button></form></li>"
            }.joined()
            let link = parcel.shareURL.map { url in
                "<p><input type=\"text\" readonly value=\"\(h(url))\" aria-label=\"\(h(ctx.t(.publicLink)))\" data-share-url></p><form method=\"post\" action=\"\(WebRoutes.parcelAction((id, "link")))\" class=\"inline\">\(csrf)<button type=\"submit\">\(h(ctx.t(.renewParcelLink)))</button></form> <form method=\"post\" action=\"\(WebRoutes.parcelAction((id, "unlink")))\" class=\"inline\">\(csrf)<button type=\"submit\">\(h(ctx.t(.withdrawLink)))</button></form>"
            } ?? "<form method=\"post\" action=\"\(WebRoutes.parcelAction((id, "link")))\" class=\"inline\">\(csrf)<button type=\"submit\">\(h(ctx.t(.makeLink)))</button></form>"
            sharing = """
                <h2>\(h(ctx.t(.shareParcel)))</h2>
                \(people.isEmpty ? "" : "<h3>\(h(ctx.t(.sharedWith)))</h3><ul class=\"list\">\(people)</ul>")
                <form method="post" action="\(WebRoutes.parcelAction((id, "share")))" class="stack">\(csrf)
                \(Form(ctx: ctx).field("email", ctx.t(.shareWithEmail), type: "email", autocomplete: "off"))
                <button type="submit">\(h(ctx.t(.shareParcel)))</button>
                </form>
                <h3>\(h(ctx.t(.publicLink)))</h3>
                <p class="note">\(h(ctx.t(.linkHint)))</p>
                \(link)
                """
        }
        let shared = parcel.sharedBy.map {
            "<p class=\"note\">\(h(ctx.t(.sharedBy))) \(h($0)) \(ConversationPages.directButton(ctx, to: parcel.record.ownerID, name: $0))</p>"
        } ?? ""
        return """
            <div class="actions">
            <form method="post" action="\(WebRoutes.parcelAction((id, "refresh")))" class="inline">\(csrf)<button type="submit">\(h(ctx.t(.askCarrierNow)))</button></form>
            <form method="post" action="\(WebRoutes.parcelAction((id, "remove")))" class="inline" data-confirm="\(h(ctx.t(owner ? .stopFollowing : .leaveParcel)))">\(csrf)<button type="submit" class="danger">\(h(ctx.t(owner ? .stopFollowing : .leaveParcel)))</button></form>
            </div>
            \(shared)
            \(alertsForm)
            \(sharing)
            """
    }
}

/// How fast carriers deliver (issue "Parcels of every carrier", item 9): per carrier and per
/// route, from first scan to delivery; the public board shows groups of five or more.
struct CarrierStatisticsPage: PageView {
    var board: (carriers: [DeliveryStatistics.Row], routes: [DeliveryStatistics.Row])
    var mine: (carriers: [DeliveryStatistics.Row], routes: [DeliveryStatistics.Row])?

    static func duration(_ hours: Double, _ ctx: WebContext) -> String {
        hours < 48 ? "\(Int(hours.rounded())) h" : String(format: "%.1f", hours / 24) + " " + ctx.t(.statsDays)
    }

    func table(_ rows: [DeliveryStatistics.Row], routes: Bool, _ ctx: WebContext) -> String {
        guard !rows.isEmpty else { return "<p>\(h(ctx.t(.statsNone)))</p>" }
        let body = rows.map { r -> String in
            let name = r.carrier == "waybill" ? "Waybill" : ctx.carrierName(r.carrier)
            let route = routes ? "<td>\(h(r.origin ?? "?")) → \(h(r.destination ?? "?"))</td>" : ""
            return "<tr data-carrier=\"\(h(r.carrier))\"><th scope=\"row\">\(h(name))</th>\(route)<td>\(r.count)</td><td>\(h(Self.duration(r.medianHours, ctx)))</td><td>\(h(Self.duration(r.p90Hours, ctx)))</td><td>\(Int((r.firstAttemptShare * 100).rounded())) %</td></tr>"
        }.joined()
        let head = "<tr><th scope=\"col\">\(h(ctx.t(.carrier)))</th>\(routes ? "<th scope=\"col\">\(h(ctx.t(.statsRoute)))</th>" : "")<th scope=\"col\">\(h(ctx.t(.statsCount)))</th><th scope=\"col\">\(h(ctx.t(.statsMedian)))</th><th scope=\"col\">\(h(ctx.t(.statsP90)))</th><th scope=\"col\">\(h(ctx.t(.statsFirstAttempt)))</th></tr>"
        return "<div class=\"table-wrap\"><table><thead>\(head)</thead><tbody>\(body)</tbody></table></div>"
    }

    func page(_ ctx: WebContext) -> WebPage {
        let own = mine.map { m in
            "<h2>\(h(ctx.t(.statsMine)))</h2>\(table(m.carriers, routes: false, ctx))"
        } ?? ""
        return WebPage(title: ctx.t(.statsTitle), body: """
            <h1>\(h(ctx.t(.statsTitle)))</h1>
            <p>\(h(ctx.t(.statsIntro)))</p>
            <h2>\(h(ctx.t(.statsByCarrier)))</h2>
            \(table(board.carriers, routes: false, ctx))
            <h2>\(h(ctx.t(.statsByRoute)))</h2>
            \(table(board.routes, routes: true, ctx))
            \(own)
            """)
    }
}
