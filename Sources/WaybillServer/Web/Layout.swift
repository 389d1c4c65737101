import Fluent
import Foundation
import Vapor
import WaybillCore

/// HTML escaping for text and attribute values.
func h(_ text: String) -> String { PaymentPages.escape(text) }
func h(_ text: String?) -> String { PaymentPages.escape(text ?? "") }

/// A page's view. The conforming struct's stored properties are the page's model (built by the
/// page's one query function, `load`, where it shows stored data, or by the handler from a form);
/// `page(_:)` only renders it: no database, no service, no rule of its own. It throws only where
/// the model is not what it should be (a stored record without its id, `storedID`): that request
/// answers 500, nothing traps.
protocol PageView {
    func page(_ ctx: WebContext) throws -> WebPage
}

extension PageView {
    func response(_ ctx: WebContext) throws -> Response { try page(ctx).render(ctx) }
}

/// A page of the web app: the shell (header, navigation, language switch) around its content.
struct WebPage {
    var title: String
    var body: String
    var status: HTTPResponseStatus = .ok
    /// Island modules besides ui.js and live.js (always there when signed in): "map", "signature", "position".
    var scripts: [String] = []
    /// Live channel topics this page follows (`order:<id>`, `fleet`); `notifications` is added for everyone signed in.
    var liveTopics: [String] = []
    /// Narrow column for forms; wide for boards and tables.
    var wide = false

    func render(_ ctx: WebContext) -> Response {
        let config = ctx.request.application.waybill.config
        var topics = liveTopics
        if ctx.principal != nil { topics.append("notifications") }
        var modules = ["ui"]
        if !topics.isEmpty, ctx.principal != nil { modules.append("live") }
        modules += scripts
        // A driver's steps wait on the phone when there is no network (`outbox.js`, `StepForm`).
        let outbox = ctx.principal?.may(.drive) == true
        if outbox { modules.append("outbox") }
        let lang = ctx.lang
        let path = ctx.request.url.path
        let other: Lang = lang == .en ? .fr : .en
        let back = (ctx.request.url.path + (ctx.request.url.query.map { "?" + $0 } ?? "")).addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "/"
        let sandboxBanner = ctx.request.application.waybill.payments.isSandbox && ctx.principal?.may(.placeOrders) == true
            ? "<p class=\"test-banner\" role=\"note\">\(h(ctx.t(.sandboxBanner)))</p>" : ""
        let suspension = ctx.principal.flatMap { $0.user.restriction == .suspended ? $0.user.restrictedUntil : nil }
            .map { "<p class=\"alert error\" role=\"note\">\(h(ctx.t(.suspendedBanner))) \(ctx.time($0))</p>" } ?? ""
        let vapid = (try? ctx.request.application.waybill.push.vapidPublicKey).flatMap { $0 }
        // The menu's links, worked out once for the top bar and the menu.
        let menu = ctx.principal.flatMap { p in ctx.user.map { Self.menuLinks(ctx, caller: p.caller, user: $0) } } ?? []
        // The person's tabs, once for the top bar, the tab bar and the manifest's shortcuts.
        let tabs = ctx.principal.map { TabPolicy.tabs(for: $0.caller) } ?? []
        let html = """
            <!doctype html>
            <html lang="\(lang.rawValue)"><head><meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1, viewport-fit=cover">
            <title>\(h(title)) · Waybill</title>
            <meta name="csrf-token" content="\(h(ctx.csrf))">
            \(topics.isEmpty || ctx.principal == nil ? "" : "<meta name=\"live-topics\" content=\"\(h(topics.joined(separator: " ")))\"><meta name=\"live-since\" content=\"\(ctx.liveSince)\">")
            \(vapid.map { "<meta name=\"vapid-key\" content=\"\(h($0))\">" } ?? "")
            <meta name="theme-color" content="#0b5cad" media="(prefers-color-scheme: light)"><meta name="theme-color" content="#10243d" media="(prefers-color-scheme: dark)">
            <link rel="manifest" href="/manifest.webmanifest\(manifestQuery(ctx, tabs: tabs))">
            <link rel="icon" href="/assets/icons/icon.svg" type="image/svg+xml">
            <link rel="apple-touch-icon" href="/assets/icons/icon-192.png">
            <link rel="stylesheet" href="/assets/app.css?v=\(WebAssets.version)">
            \(modules.map { "<script type=\"module\" src=\"/assets/js/\($0).js?v=\(WebAssets.version)\"></script>" }.joined(separator: "\n"))
            </head>
            <body class="role-\(ctx.role?.rawValue ?? "guest")\(ctx.principal == nil ? "" : " signed-in")">
            <a class="skip" href="#main">\(h(ctx.t(.skipToContent)))</a>
            <header class="top">
            \(topBar(ctx, path: path, menu: menu, tabs: tabs))
            \(navigation(ctx, path: path, menu: menu))
            <a class="lang" href="\(WebRoutes.language(other, query: "back=" + back))" hreflang="\(other.rawValue)" lang="\(other.rawValue)">\(other == .fr ? "Français" : "English")</a>
            </header>
            \(sandboxBanner)\(suspension)
            <main id="main" class="\(wide ? "wide" : "narrow")" tabindex="-1">
            \(outbox ? StepForm.region(ctx) : "")\(body)
            </main>
            <div class="update" data-update hidden role="status"><p>\(h(ctx.t(.updateReady)))</p><button type="button" class="primary" data-update-reload>\(h(ctx.t(.updateReload)))</button></div>
            \(ctx.principal == nil ? "" : "<p class=\"live-state\" data-live-state aria-live=\"polite\" data-text-live=\"\(h(ctx.t(.liveOn)))\" data-text-reconnecting=\"\(h(ctx.t(.liveReconnecting)))\" data-text-offline=\"\(h(ctx.t(.liveOff)))\"></p>")\(tabBar(ctx, path: path, tabs: tabs))
            </body></html>
            """
        var headers = HTTPHeaders()
        headers.contentType = .html
        headers.replaceOrAdd(name: .cacheControl, value: "no-store")
        headers.replaceOrAdd(name: "Content-Security-Policy", value: WebPage.csp(config))
        headers.replaceOrAdd(name: "X-Frame-Options", value: "DENY")
        return Response(status: status, headers: headers, body: .init(string: html))
    }

    /// The manifest for this person: their tabs as the installed app's shortcuts, in their language.
    private func manifestQuery(_ ctx: WebContext, tabs: [AppTab]) -> String {
        tabs.isEmpty ? "" : "?lang=\(ctx.lang.rawValue)&amp;tabs=" + tabs.map(\.rawValue).joined(separator: ",")
    }

    static func csp(_ config: WaybillConfig) -> String {
        let tiles = config.mapTileOrigin.map { " " + $0 } ?? ""
        let socket = config.liveSocketBase
        return "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:\(tiles); "
            + "connect-src 'self' \(socket); font-src 'self'; manifest-src 'self'; worker-src 'self'; "
            + "form-action 'self' https://checkout.stripe.com; frame-ancestors 'none'; base-uri 'none'"
    }

    /// The top bar on phones: back (or the brand on a tab's own page), the page's title, and the menu
    /// (its links open over the page; on wide screens they are the side navigation).
    private func topBar(_ ctx: WebContext, path: String, menu links: [(String, String)], tabs: [AppTab]) -> String {
        guard ctx.principal != nil else { return "<a class=\"brand\" href=\"\(WebRoutes.home())\">Waybill</a>" }
        // The menu's and the tabs' own pages are where one starts from; anything below them has back.
        let tabPages = tabs.map { Self.tabTarget($0, ctx.lang).href }
        let menu = links.map(\.0)
        let start = path == "/" || tabPages.contains(path) || menu.contains(path) || path == WebRoutes.notifications()
        return """
            <a class="brand\(start ? "" : " has-back")" href="\(WebRoutes.home())">Waybill</a>\(start ? "" : "<a class=\"back\" href=\"\(WebRoutes.home())\" data-back>‹ \(h(ctx.t(.back)))</a>")
            <span class="bar-title" aria-hidden="true">\(h(title))</span>
            <a class="menu-toggle" href="#menu" aria-controls="menu">\(h(ctx.t(.menu)))</a>
            """
    }

    /// A tab's page, name and icon (24×24, drawn with the text's colour).
    static func tab(_ tab: AppTab, _ ctx: WebContext) -> (href: String, label: String, icon: String) {
        let (href, label) = tabTarget(tab, ctx.lang)
        let icon = switch tab {
        case .send: "M3 11l18-8-8 18-2-8z"
        case .parcels: "M3 7l9-4 9 4v10l-9 4-9-4zM3 7l9 4 9-4M12 11v10"
        case .messages: "M4 4h16v12H9l-5 4z"
        case .account: "M12 12a4 4 0 1 0 0-8 4 4 0 0 0 0 8zM4 21c0-4 4-6 8-6s8 2 8 6"
        case .today: "M4 5h16v15H4zM4 9h16M8 3v4M16 3v4"
        case .map: "M12 21s7-6 7-11a7 7 0 0 0-14 0c0 5 7 11 7 11zM12 10h.01"
        case .dispatch: "M4 4h7v7H4zM13 4h7v7h-7zM4 13h7v7H4zM13 13h7v7h-7z"
        case .routes: "M6 19a2 2 0 1 0 0-4 2 2 0 0 0 0 4zM18 9a2 2 0 1 0 0-4 2 2 0 0 0 0 4zM6 15V9a3 3 0 0 1 3-3h7M8 19h7a3 3 0 0 0 3-3v-5"
        case .counter: "M3 10h18M5 10v10h14V10M4 4h16l1 6H3z"
        case .scan: "M4 8V4h4M16 4h4v4M20 16v4h-4M8 20H4v-4M7 12h10"
        }
        return (href, label, icon)
    }

    /// A tab's page and name: the tab bar's, and the installed app's shortcuts (the manifest's).
    static func tabTarget(_ tab: AppTab, _ lang: Lang) -> (href: String, label: String) {
        switch tab {
        case .send: (WebRoutes.newOrder(), Text.tabSend.in(lang))
        case .parcels: (WebRoutes.parcels(), Text.parcels.in(lang))
        case .messages: (WebRoutes.conversations(), Text.messages.in(lang))
        case .account: (WebRoutes.account(), Text.tabAccount.in(lang))
        case .today: (WebRoutes.driverDay(), Text.today.in(lang))
        case .map: (WebRoutes.driverMap(), Text.tabMap.in(lang))
        case .dispatch: (WebRoutes.dispatch(), Text.dispatch.in(lang))
        case .routes: (WebRoutes.routePlans(), Text.routes.in(lang))
        case .counter: (WebRoutes.desk(), Text.desk.in(lang))
        case .scan: (WebRoutes.scan(), Text.tabScan.in(lang))
        }
    }

    /// The bottom tab bar on phones (`TabPolicy`): the person's four places, with the unread messages.
    private func tabBar(_ ctx: WebContext, path: String, tabs: [AppTab]) -> String {
        guard !tabs.isEmpty else { return "" }
        let unreadMessages = ctx.request.storage[UnreadMessagesKey.self] ?? 0
        let items = tabs.map { tab -> String in
            let (href, label, icon) = Self.tab(tab, ctx)
            let badge = tab == .messages
                ? " <span class=\"badge\" data-messages-unread \(unreadMessages == 0 ? "hidden" : "") aria-label=\"\(h(ctx.t(.unread)))\">\(unreadMessages)</span>" : ""
            return "<li><a href=\"\(href)\"\(current(path, href)) data-tab=\"\(tab.rawValue)\"><svg viewBox=\"0 0 24 24\" aria-hidden=\"true\"><path d=\"\(icon)\"/></svg><span>\(h(label))</span>\(badge)</a></li>"
        }.joined()
        return "<nav class=\"tabs\" aria-label=\"\(h(ctx.t(.tabsMenu)))\"><ul>\(items)</ul></nav>"
    }

    private func navigation(_ ctx: WebContext, path: String, menu: [(String, String)]) -> String {
        guard let user = ctx.user else {
            return """
                <nav aria-label="\(h(ctx.t(.mainMenu)))"><ul>
                <li><a href="\(WebRoutes.login())"\(current(path, WebRoutes.login()))>\(h(ctx.t(.signIn)))</a></li>
                <li><a href="\(WebRoutes.register())"\(current(path, WebRoutes.register()))>\(h(ctx.t(.createAccount)))</a></li>
                </ul></nav>
                """
        }
        guard ctx.principal != nil else { return "" }
        let items = menu.map { "<li><a href=\"\($0.0)\"\(current(path, $0.0))>\(h($0.1))</a></li>" }.joined()
        return navigationList(ctx, path: path, user: user, items: items)
    }

    /// The menu: what the account's permissions allow (WaybillCore's `Permission`), besides messages,
    /// notifications and the account, which everyone has.
    static func menuLinks(_ ctx: WebContext, caller: Caller, user: User) -> [(String, String)] {
        var links: [(String, String)] = []
        // Everyone sends; staff reach what they sent through the list's box switcher, so their
        // menu keeps its own first (`OrderPolicy.defaultBox`).
        if caller.may(.placeOrders) {
            links.append((WebRoutes.newOrder(), ctx.t(.newDelivery)))
            if OrderPolicy.defaultBox(for: caller) == .sent { links.append((WebRoutes.orders(), ctx.t(.myDeliveries))) }
            if PaymentOptions.hasStatements(isCompany: user.isCompany) { links.append((WebRoutes.statements(), ctx.t(.statements))) }
        }
        // Travellers carry, everyone may send with one (`TripPolicy`).
        if caller.may(.placeOrders) { links.append((WebRoutes.travel(), ctx.t(.travel))) }
        // Everyone who sends may follow parcels of other carriers (`ParcelPolicy`).
        if caller.may(.placeOrders) { links.append((WebRoutes.parcels(), ctx.t(.parcels))) }
        // Every account with a verified email receives: its parcels are under "Incoming" (`ShipmentBox`).
        if OrderPolicy.boxes(for: caller).contains(.incoming) { links.append((WebRoutes.incoming(), ctx.t(.incoming))) }
        if caller.may(.dispatch) {
            links += [(WebRoutes.dispatch(), ctx.t(.dispatch)), (WebRoutes.routePlans(), ctx.t(.routes)), (WebRoutes.fleet(), ctx.t(.fleet)),
                      (WebRoutes.orders(), ctx.t(.orders)), (WebRoutes.timeslots(), ctx.t(.timeslots)), (WebRoutes.statistics(), ctx.t(.statistics))]
        }
        if caller.may(.manageUsers) { links.append((WebRoutes.users(), ctx.t(.users))) }
        if caller.may(.moderate) { links.append((WebRoutes.admin(), ctx.t(.administration))) }
        if caller.may(.decideClaims) { links.append((WebRoutes.claims(), ctx.t(.claims))) }
        if caller.may(.manageInsurance) { links.append((WebRoutes.insurance(), ctx.t(.insurance))) }
        if caller.may(.manageLoyalty) { links.append((WebRoutes.loyaltyRules(), ctx.t(.loyaltyRules))) }
        if caller.may(.managePlans) { links.append((WebRoutes.adminPlans(), ctx.t(.managePlans))) }
        if caller.may(.manageCounters) { links.append((WebRoutes.counters(), ctx.t(.counters))) }
        if caller.may(.receiveAtCounter) { links.append((WebRoutes.desk(), ctx.t(.desk))) }
        if caller.may(.manageTariff) { links.append((WebRoutes.tariff(), ctx.t(.tariff))) }
        if caller.may(.drive) {
            if caller.may(.dispatch) { links.append((WebRoutes.driverDay(), ctx.t(.myRuns))) }
            else { links += [(WebRoutes.driverDay(), ctx.t(.today)), (WebRoutes.orders(), ctx.t(.history))] }
            links.append((WebRoutes.scan(), ctx.t(.scanLabel)))
        }
        return links
    }

    private func navigationList(_ ctx: WebContext, path: String, user: User, items: String) -> String {
        let unread = ctx.request.storage[UnreadCountKey.self] ?? 0
        let unreadMessages = ctx.request.storage[UnreadMessagesKey.self] ?? 0
        return """
            <nav id="menu" aria-label="\(h(ctx.t(.mainMenu)))"><a class="menu-close" href="#main">\(h(ctx.t(.closeMenu)))</a><ul>\(items)
            <li><a href="\(WebRoutes.conversations())"\(current(path, WebRoutes.conversations()))>\(h(ctx.t(.messages))) <span class="badge" data-messages-unread \(unreadMessages == 0 ? "hidden" : "") aria-label="\(h(ctx.t(.unread)))">\(unreadMessages)</span></a></li>
            <li><a href="\(WebRoutes.notifications())"\(current(path, WebRoutes.notifications()))>\(h(ctx.t(.notifications))) <span class="badge" data-unread-count \(unread == 0 ? "hidden" : "") aria-label="\(h(ctx.t(.unread)))">\(unread)</span></a></li>
            <li><a href="\(WebRoutes.account())"\(current(path, WebRoutes.account()))>\(h(user.firstName))</a></li>
            <li><form method="post" action="\(WebRoutes.logout())" class="inline"><input type="hidden" name="_csrf" value="\(h(ctx.csrf))"><button type="submit" class="link">\(h(ctx.t(.signOut)))</button></form></li>
            </ul></nav>
            """
    }

    private func current(_ path: String, _ link: String) -> String {
        path == link ? " aria-current=\"page\"" : ""
    }
}

/// The signed-in person's unread notifications, read once per page by `WebUnreadMiddleware`.
struct UnreadCountKey: StorageKey { typealias Value = Int }
/// The signed-in person's unread messages in all their conversations (the "Messages" badge).
struct UnreadMessagesKey: StorageKey { typealias Value = Int }

struct WebUnreadMiddleware: AsyncMiddleware {
    func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        // Pages only: an order's images (`/orders/{id}/files/…`) have no header to show it in.
        if request.method == .GET, !request.url.path.contains("/files/"), let principal = try? request.web.principal {
            request.storage[UnreadCountKey.self] = try await Orders(request: request).unreadCount(for: principal)
            request.storage[UnreadMessagesKey.self] = Int(clamping: try await Conversations.totalUnread([principal.userID], on: request.db)[principal.userID] ?? 0)
        }
        return try await next.respond(to: request)
    }
}

// MARK: Forms

/// Small builders for labelled, accessible form controls with their errors.
struct Form {
    let ctx: WebContext
    var values: [String: String] = [:]
    var errors: [String: String] = [:]
    /// What the fields' ids start with: another prefix where one page holds several forms with the same fields.
    var idPrefix = "f-"

    func hidden() -> String { "<input type=\"hidden\" name=\"_csrf\" value=\"\(h(ctx.csrf))\">" }

    func field(_ name: String, _ label: String, type: String = "text", autocomplete: String? = nil,
               required: Bool = true, hint: String? = nil, errorKey: String? = nil, attributes: String = "") -> String {
        let id = idPrefix + name.replacingOccurrences(of: ".", with: "-")
        let key = errorKey ?? name
        let error = errors[key].map { ctx.fieldError(key, $0) }
        let describedBy = [hint == nil ? nil : id + "-hint", error == nil ? nil : id + "-error"].compactMap { $0 }
        let value = type == "password" ? "" : (values[name] ?? "")
        return """
            <div class="field\(error == nil ? "" : " invalid")">
            <label for="\(id)">\(h(label))\(required ? "" : " <span class=\"optional\">(\(h(ctx.t(.optional))))</span>")</label>
            \(hint.map { "<p class=\"hint\" id=\"\(id)-hint\">\(h($0))</p>" } ?? "")
            <input id="\(id)" name="\(h(name))" type="\(type)" value="\(h(value))"\(required ? " required" : "")\(autocomplete.map { " autocomplete=\"\($0)\"" } ?? "")\(describedBy.isEmpty ? "" : " aria-describedby=\"\(describedBy.joined(separator: " "))\"")\(error == nil ? "" : " aria-invalid=\"true\"") \(attributes)>
            \(error.map { "<p class=\"error\" id=\"\(id)-error\">\(h($0))</p>" } ?? "")
            </div>
            """
    }

    func select(_ name: String, _ label: String, options: [(String, String)], required: Bool = true, attributes: String = "") -> String {
        let id = idPrefix + name.replacingOccurrences(of: ".", with: "-")
        let error = errors[name].map { ctx.fieldError(name, $0) }
        let chosen = values[name]
        let opts = options.map { "<option value=\"\(h($0.0))\"\(chosen == $0.0 ? " selected" : "")>\(h($0.1))</option>" }.joined()
        return """
            <div class="field\(error == nil ? "" : " invalid")">
            <label for="\(id)">\(h(label))</label>
            <select id="\(id)" name="\(h(name))"\(required ? " required" : "")\(error == nil ? "" : " aria-invalid=\"true\" aria-describedby=\"\(id)-error\"") \(attributes)>\(opts)</select>
            \(error.map { "<p class=\"error\" id=\"\(id)-error\">\(h($0))</p>" } ?? "")
            </div>
            """
    }

    func radios(_ name: String, _ legend: String, options: [(String, String)]) -> String {
        let error = errors[name].map { ctx.fieldError(name, $0) }
        let chosen = values[name] ?? options.first?.0
        let items = options.enumerated().map { index, option -> String in
            let id = "f-\(name)-\(index)"
            return "<label class=\"choice\" for=\"\(id)\"><input type=\"radio\" id=\"\(id)\" name=\"\(h(name))\" value=\"\(h(option.0))\"\(chosen == option.0 ? " checked" : "")> \(h(option.1))</label>"
        }.joined()
        return """
            <fieldset class="field\(error == nil ? "" : " invalid")"><legend>\(h(legend))</legend>\(items)
            \(error.map { "<p class=\"error\">\(h($0))</p>" } ?? "")</fieldset>
            """
    }

    func checkbox(_ name: String, _ label: String) -> String {
        let id = idPrefix + name.replacingOccurrences(of: ".", with: "-")
        let checked = ["on", "true", "1"].contains(values[name] ?? "")
        return "<div class=\"field\"><label class=\"choice\" for=\"\(id)\"><input type=\"checkbox\" id=\"\(id)\" name=\"\(h(name))\" value=\"on\"\(checked ? " checked" : "")> \(h(label))</label></div>"
    }

    /// Errors on fields this form does not show, listed at the top so nothing is lost.
    func summary(message: String?, shown: Set<String>) -> String {
        let others = errors.filter { !shown.contains($0.key) }.sorted { $0.key < $1.key }
        guard message != nil || !others.isEmpty else { return "" }
        let list = others.map { "<li>\(h(ctx.fieldError($0.key, $0.value)))</li>" }.joined()
        return "<div class=\"alert error\" role=\"alert\" tabindex=\"-1\">\(message.map { "<p>\(h($0))</p>" } ?? "")\(list.isEmpty ? "" : "<ul>\(list)</ul>")</div>"
    }
}

extension WebContext {
    /// A field's problem in words, in the page's language.
    func fieldError(_ field: String, _ reason: String) -> String {
        switch reason {
        case "required": t(.errRequired)
        case "too_long": t(.errTooLong)
        case "invalid", "invalid_format": t(.errInvalid)
        case "in_use": t(.errEmailInUse)
        case "too_short": t(.errPasswordShort)
        case "too_common": t(.errPasswordCommon)
        case "incorrect": t(.errIncorrect)
        case "mismatch": t(.errMismatch)
        case "no_account_address": t(.errNoAccountAddress)
        case "required_for_recipient_code": t(.errRecipientEmailForCode)
        case "not_allowed": t(.errNotAllowed)
        case "not_recognised": t(.errCarrierNotRecognised)
        case "no_tracking_number": t(.errNoTrackingNumber)
        case "unknown_carrier": t(.errUnknownCarrier)
        case "duplicate": t(.errAlreadyFollowed)
        case "no_account": t(.errNoAccountForShare)
        case "yourself": t(.errShareYourself)
        case "https_required": t(.errHTTPSRequired)
        case "invalid_url": t(.errInvalidURL)
        case "unknown_event": t(.errInvalid)
        case "above_maximum" where field == "redeemPoints": t(.errPointsAboveMaximum)
        case "below_minimum": t(.errPointsBelowMinimum)
        case "not_enough_points": t(.errNotEnoughPoints)
        case "above_maximum": t(.errAboveMaximum)
        case "out_of_range": t(.errOutOfRange)
        case "unavailable": t(.errInsuranceUnavailable)
        case "plan_gives_nothing": t(.errPlanGivesNothing)
        default: "\(field): \(reason)"
        }
    }

    /// A service error's message in the page's language: WaybillCore's `ErrorCode` has one for
    /// every code, in English and French (the API's message may say more, in English).
    func message(_ error: WaybillError) -> String {
        switch error.code {
        case .rateLimited: t(.errRateLimited, String(error.retryAfter ?? 1))
        default: error.code.message(french: lang == .fr)
        }
    }
}

enum WebErrors {
    static func page(for error: WaybillError, _ ctx: WebContext) -> Response {
        let title: String
        switch error.status {
        case .notFound: title = ctx.t(.errNotFoundTitle)
        case .forbidden: title = ctx.t(.errForbiddenTitle)
        case .tooManyRequests: title = ctx.t(.errSlowDownTitle)
        default: title = ctx.t(.errGenericTitle)
        }
        let response = WebPage(title: title, body: """
            <h1>\(h(title))</h1>
            <p>\(h(ctx.message(error)))</p>
            <p><a href="\(WebRoutes.home())">\(h(ctx.t(.backHome)))</a></p>
            """, status: error.status).render(ctx)
        if let retry = error.retryAfter { response.headers.replaceOrAdd(name: .retryAfter, value: String(retry)) }
        return response
    }

    static func csrfRefused(_ ctx: WebContext) -> Response {
        if ctx.request.url.path.hasPrefix("/app/") || ctx.request.headers.contentType == .json {
            let body = #"{"error":{"code":"csrf_failed","message":"The form token is missing or wrong; reload the page."}}"#
            var headers = HTTPHeaders()
            headers.contentType = .json
            return Response(status: .forbidden, headers: headers, body: .init(string: body))
        }
        return WebPage(title: ctx.t(.errFormExpiredTitle), body: """
            <h1>\(h(ctx.t(.errFormExpiredTitle)))</h1>
            <p>\(h(ctx.t(.errFormExpired)))</p>
            <p><a href="\(WebRoutes.home())">\(h(ctx.t(.backHome)))</a></p>
            """, status: .forbidden).render(ctx)
    }
}

// MARK: Formatting

extension WebContext {
    var timeZone: TimeZone { request.application.waybill.config.displayTimeZone }

    /// "22.11.2026 14:05" in the server's display time zone, inside a `<time>` element.
    func time(_ millis: Int64?, dateOnly: Bool = false) -> String {
        guard let millis else { return "" }
        let date = Date(timeIntervalSince1970: TimeInterval(millis) / 1000)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: lang == .fr ? "fr_CH" : "en_GB")
        formatter.timeZone = timeZone
        formatter.dateFormat = dateOnly ? "dd.MM.yyyy" : "dd.MM.yyyy HH:mm"
        let iso = ISO8601DateFormatter().string(from: date)
        return "<time datetime=\"\(iso)\">\(formatter.string(from: date))</time>"
    }

    func clock(_ millis: Int64) -> String {
        let date = Date(timeIntervalSince1970: TimeInterval(millis) / 1000)
        let formatter = DateFormatter()
        formatter.timeZone = timeZone
        formatter.dateFormat = "HH:mm"
        return "<time datetime=\"\(ISO8601DateFormatter().string(from: date))\">\(formatter.string(from: date))</time>"
    }

    func money(_ money: Money) -> String { h(money.description) }

    func status(_ status: OrderStatus) -> String {
        switch status {
        case .awaitingPayment: t(.stAwaitingPayment)
        case .pending: t(.stPending)
        case .assigned: t(.stAssigned)
        case .accepted: t(.stAccepted)
        case .inTransit: t(.stInTransit)
        case .delivered: t(.stDelivered)
        case .cancelled: t(.stCancelled)
        case .failed: t(.stFailed)
        }
    }

    func statusBadge(_ status: OrderStatus) -> String {
        "<span class=\"status st-\(status.rawValue)\">\(h(self.status(status)))</span>"
    }

    func weight(_ weight: WeightClass) -> String {
        switch weight {
        case .small: t(.weightSmall)
        case .medium: t(.weightMedium)
        case .large: t(.weightLarge)
        }
    }

    func service(_ service: ServiceLevel) -> String { service == .express ? t(.express) : t(.standard) }

    func payment(_ method: PaymentMethod) -> String {
        switch method {
        case .card: t(.payCard)
        case .twint: "TWINT"
        case .cash: t(.payCash)
        case .invoice: t(.payInvoice)
        }
    }

    func paymentStatus(_ status: Order.PaymentStatus) -> String {
        switch status {
        case .awaiting: t(.psAwaiting)
        case .paid: t(.psPaid)
        case .refundPending: t(.psRefundPending)
        case .refunded: t(.psRefunded)
        case .dueOnPickup: t(.psDueOnPickup)
        case .collected: t(.psCollected)
        case .invoiced: t(.psInvoiced)
        case .void: t(.psVoid)
        }
    }

    func address(_ a: Address) -> String {
        "\(h(a.street)), \(h(a.postalCode)) \(h(a.city))"
    }

    func failure(_ reason: FailureReason) -> String {
        switch reason {
        case .recipientAbsent: t(.failAbsent)
        case .addressWrong: t(.failAddress)
        case .refused: t(.failRefused)
        case .damaged: t(.failDamaged)
        case .other: t(.failOther)
        }
    }

    /// A line of a quote's breakdown, in the page's language.
    func priceLine(_ line: PriceLine, distanceKm: Double?) -> String {
        switch line.kind {
        case .baseFee: t(.plBaseFee)
        case .distance: t(.plDistance, distanceKm.map { String(format: "%.1f", $0) } ?? "?")
        case .flatRate: t(.plFlatRate)
        case .express: t(.plExpress)
        case .insurance: t(.plInsurance)
        case .rounding: t(.plRounding)
        case .points: t(.plPoints)
        case .plan: t(.plPlan)
        }
    }

    /// A notification's title: stored in English, rebuilt in French from its kind and the order's
    /// reference (or from its kind alone when its title names none).
    func notificationTitle(_ n: Notification) -> String {
        guard lang == .fr, let kind = Notifier.Kind(rawValue: n.kind) else { return n.title }
        guard let range = n.title.range(of: #"WB-[A-Z0-9]+"#, options: .regularExpression) else {
            let plain = kind.title("")
            return plain.en == n.title ? plain.fr : n.title
        }
        return kind.title(String(n.title[range])).fr
    }

    func role(_ role: Role) -> String {
        switch role {
        case .customer: t(.roleCustomer)
        case .driver: t(.roleDriver)
        case .manager: t(.roleManager)
        }
    }

    func capability(_ capability: Capability) -> String {
        switch capability {
        case .sender: t(.capSender)
        case .receiver: t(.capReceiver)
        case .traveller: t(.capTraveller)
        case .driver: t(.roleDriver)
        case .manager: t(.roleManager)
        case .admin: t(.capAdmin)
        case .counter: t(.capCounter)
        case .invoice: t(.capInvoice)
        }
    }

    func restrictionKind(_ kind: Restriction.Kind) -> String {
        switch kind {
        case .suspended: t(.suspended)
        case .banned: t(.banned)
        }
    }

    /// The end of a day given as "yyyy-MM-dd" in the display time zone (Unix ms), or nil.
    func endOfDay(_ raw: String) -> Int64? {
        guard raw.count == 10 else { return nil }
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyy-MM-dd"
        formatter.timeZone = timeZone
        guard let start = formatter.date(from: raw) else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        guard let next = calendar.date(byAdding: .day, value: 1, to: start) else { return nil }
        return UnixTime.millis(next)
    }
}
