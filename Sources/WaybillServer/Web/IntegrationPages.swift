import Vapor
import WaybillCore

/// Webhook endpoints in the web app: the list with the form to add one (the secret shown once),
/// and each endpoint's page with its delivery log, a test event, turning it off and on, a new
/// secret, redelivery by hand. The service is `Webhooks`; the rules are `WebhookPolicy`.
struct IntegrationPages {
    func register(_ routes: any RoutesBuilder) {
        routes.get(WebRoutes.webhooks, use: list)
        routes.post(WebRoutes.webhooks, use: create)
        routes.get(WebRoutes.webhook, use: show)
        routes.post(WebRoutes.webhookAction, use: act)
        routes.post(WebRoutes.webhookRedeliver, use: redeliver)
        routes.post(WebRoutes.apiKeys, use: createKey)
        routes.post(WebRoutes.apiKeyRevoke, use: revokeKey)
    }

    static func listPage(_ req: Request, _ me: Principal, form: Form, keyForm: Form? = nil) async throws -> WebhookListPage {
        WebhookListPage(endpoints: try await Webhooks(request: req).list(for: me), mayCompany: WebhookPolicy.mayRegister(.company, by: me.caller),
                        form: form, keys: try await APIKeys(request: req).list(for: me),
                        mayDispatch: APIKeyPolicy.mayCreate([.dispatch], by: me.caller), keyForm: keyForm ?? Form(ctx: form.ctx))
    }

    func createKey(_ req: Request) async throws -> Response {
        let (ctx, me) = try TravelPages.signedIn(req)
        let form = try AccountPages.form(req)
        let scopes = APIKeyScope.allCases.filter { form["scope_\($0.rawValue.replacingOccurrences(of: ":", with: "_"))"] == "on" }.map(\.rawValue)
        let days = form["days"].flatMap { $0.isEmpty ? nil : $0 }
        do {
            guard days.map({ Int($0) != nil }) ?? true else { throw WaybillError.validation("expiresInDays", "invalid") }
            let (_, token) = try await APIKeys(request: req).create(name: form["name"] ?? "", scopes: scopes, expiresInDays: days.flatMap { Int($0) }, by: me)
            var page = try await Self.listPage(req, me, form: Form(ctx: ctx, values: ["scope": "own"]))
            page.madeKey = token
            return try page.response(ctx)
        } catch let error as WaybillError where error.fields != nil {
            var page = try await Self.listPage(req, me, form: Form(ctx: ctx, values: ["scope": "own"]), keyForm: Form(ctx: ctx, values: form, errors: error.fields ?? [:]))
            page.status = error.status
            return try page.response(ctx)
        }
    }

    func revokeKey(_ req: Request) async throws -> Response {
        let (_, me) = try TravelPages.signedIn(req)
        let id: APIKeyID = try WebRoutes.id(req)
        try await APIKeys(request: req).revoke(id, by: me)
        return req.redirect(to: WebRoutes.webhooks(), redirectType: .normal)
    }

    func list(_ req: Request) async throws -> Response {
        let (ctx, me) = try TravelPages.signedIn(req)
        var page = try await Self.listPage(req, me, form: Form(ctx: ctx, values: ["scope": "own"]))
        page.deleted = req.query[String.self, at: "deleted"] != nil
        return try page.response(ctx)
    }

    func create(_ req: Request) async throws -> Response {
        let (ctx, me) = try TravelPages.signedIn(req)
        let form = try AccountPages.form(req)
        let events = WebhookEvent.subscribable.enumerated().filter { form["ev\($0.offset)"] == "on" }.map(\.element.rawValue)
        let webhooks = Webhooks(request: req)
        do {
            let (endpoint, secret) = try await webhooks.create(
                .init(url: (form["url"] ?? "").trimmingCharacters(in: .whitespaces), events: events,
                      scope: WebhookScope(rawValue: form["scope"] ?? "") ?? .own, description: form["description"]), by: me)
            return try await Self.endpointPage(req, ctx, me, try endpoint.storedID, secret: secret, notice: .webhookCreated)
        } catch let error as WaybillError where error.fields != nil {
            var page = try await Self.listPage(req, me, form: Form(ctx: ctx, values: form, errors: error.fields ?? [:]))
            page.status = error.status
            return try page.response(ctx)
        }
    }

    func show(_ req: Request) async throws -> Response {
        let (ctx, me) = try TravelPages.signedIn(req)
        let id: WebhookEndpointID = try WebRoutes.id(req)
        let notice: Text? = switch req.query[String.self, at: "done"] {
        case "ping": .webhookPinged
        case "redeliver": .webhookRedelivered
        default: nil
        }
        return try await Self.endpointPage(req, ctx, me, id, secret: nil, notice: notice)
    }

    static func endpointPage(_ req: Request, _ ctx: WebContext, _ me: Principal, _ id: WebhookEndpointID, secret: String?, notice: Text?) async throws -> Response {
        let webhooks = Webhooks(request: req)
        let endpoint = try await webhooks.endpoint(id, for: me)
        let log = try await webhooks.deliveries(id, for: me, limit: 50)
        return try WebhookPage(endpoint: endpoint, log: log, secret: secret, notice: notice).response(ctx)
    }

    func act(_ req: Request) async throws -> Response {
        let (ctx, me) = try TravelPages.signedIn(req)
        let id: WebhookEndpointID = try WebRoutes.id(req)
        let webhooks = Webhooks(request: req)
        switch req.parameters.get("action") {
        case "ping":
            _ = try await webhooks.ping(id, by: me)
            return req.redirect(to: WebRoutes.webhook(id, query: "done=ping"), redirectType: .normal)
        case "enable", "disable":
            _ = try await webhooks.update(id, .init(enabled: req.parameters.get("action") == "enable"), by: me)
            return req.redirect(to: WebRoutes.webhook(id), redirectType: .normal)
        case "rotate":
            let (_, secret) = try await webhooks.rotateSecret(id, by: me)
            return try await Self.endpointPage(req, ctx, me, id, secret: secret, notice: .webhookRotated)
        case "delete":
            try await webhooks.delete(id, by: me)
            return req.redirect(to: WebRoutes.webhooks(query: "deleted=1"), redirectType: .normal)
        default:
            throw WaybillError.notFound
        }
    }

    func redeliver(_ req: Request) async throws -> Response {
        let (_, me) = try TravelPages.signedIn(req)
        let id: WebhookEndpointID = try WebRoutes.id(req), delivery: WebhookDeliveryID = try WebRoutes.id(req, "delivery")
        _ = try await Webhooks(request: req).redeliver(id, delivery: delivery, by: me)
        return req.redirect(to: WebRoutes.webhook(id, query: "done=redeliver"), redirectType: .normal)
    }
}

extension WebRoutes {
    static let webhooks = WebPath("/webhooks")
    static let webhook = WebPath<WebhookEndpointID>("/webhooks/:id") { [$0.uuidString] }
    static let webhookAction = WebPath<(WebhookEndpointID, String)>("/webhooks/:id/:action") { [$0.0.uuidString, $0.1] }
    static let apiKeys = WebPath("/api-keys")
    static let apiKeyRevoke = WebPath<APIKeyID>("/api-keys/:id/revoke") { [$0.uuidString] }
    static let webhookRedeliver = WebPath<(WebhookEndpointID, WebhookDeliveryID)>("/webhooks/:id/deliveries/:delivery/redeliver") { [$0.0.uuidString, $0.1.uuidString] }
}

extension WebContext {
    func webhookState(_ e: WebhookEndpointRecord) -> String {
        if e.enabled { return t(.webhookOn) }
        return e.disabledReason == "failing" ? t(.webhookOffFailing) : t(.webhookOffByOwner)
    }
}

struct WebhookListPage: PageView {
    var endpoints: [WebhookEndpointRecord]
    var mayCompany: Bool
    var form: Form
    var keys: [APIKeyRecord] = []
    var mayDispatch = false
    var keyForm: Form
    /// Just made: shown this once.
    var madeKey: String?
    var deleted = false
    var status: HTTPResponseStatus = .ok

    func scopeLabel(_ ctx: WebContext, _ scope: APIKeyScope) -> String {
        switch scope {
        case .readShipments: ctx.t(.scopeReadShipments)
        case .writeShipments: ctx.t(.scopeWriteShipments)
        case .dispatch: ctx.t(.scopeDispatch)
        case .webhooks: ctx.t(.scopeWebhooks)
        case .readParcels: ctx.t(.scopeReadParcels)
        case .writeParcels: ctx.t(.scopeWriteParcels)
        }
    }

    /// API keys: the list (never the keys), the one just made, the form.
    func keySection(_ ctx: WebContext) throws -> String {
        let f = keyForm
        let now = UnixTime.nowMillis
        let rows = try keys.map { k -> String in
            let id = try k.storedID
            let state = k.revokedAt != nil ? ctx.t(.apiKeyRevoked)
                : k.expiresAt.map { $0 <= now ? ctx.t(.apiKeyExpired) : "\(ctx.t(.apiKeyExpires)) \(ctx.time($0, dateOnly: true))" } ?? ""
            let used = k.lastUsedAt.map { "\(ctx.t(.apiKeyLastUsed)) \(ctx.time($0))" } ?? ctx.t(.apiKeyNeverUsed)
            let revoke = k.revokedAt == nil
                ? "<form method=\"post\" action=\"\(WebRoutes.apiKeyRevoke(id))\" class=\"inline\">\(f.hidden())<button type=\"submit\" class=\"link\">\(h(ctx.t(.apiKeyRevoke)))</button></form>"
                : ""
            return "<li data-api-key=\"\(id.uuidString)\"><code>\(h(k.hint))…</code> \(h(k.name)) · <small>\(h(k.scopes.map(\.rawValue).sorted().joined(separator: ", ")))</small> · <small>\(h([state, used].filter { !$0.isEmpty }.joined(separator: " · ")))</small> \(revoke)</li>"
        }.joined()
        let boxes = APIKeyScope.allCases.filter { $0 != .dispatch || mayDispatch }
            .map { f.checkbox("scope_\($0.rawValue.replacingOccurrences(of: ":", with: "_"))", scopeLabel(ctx, $0)) }.joined()
        let scopesError = f.errors["scopes"].map { "<p class=\"error\">\(h(ctx.fieldError("scopes", $0)))</p>" } ?? ""
        let made = madeKey.map { "<div class=\"alert ok\" role=\"status\"><p>\(h(ctx.t(.apiKeyCreated)))</p><p><input type=\"text\" readonly value=\"\(h($0))\" data-api-key-made aria-label=\"\(h(ctx.t(.apiKeys)))\"></p></div>" } ?? ""
        return """
            <h2>\(h(ctx.t(.apiKeys)))</h2>
            <p>\(h(ctx.t(.apiKeysIntro)))</p>
            \(made)
            \(keys.isEmpty ? "<p>\(h(ctx.t(.apiKeysNone)))</p>" : "<ul class=\"list\">\(rows)</ul>")
            <details\(f.errors.isEmpty ? "" : " open")><summary>\(h(ctx.t(.apiKeyCreate)))</summary>
            <form method="post" action="\(WebRoutes.apiKeys())" class="stack">\(f.hidden())
            \(f.field("name", ctx.t(.apiKeyName)))
            <fieldset class="field\(scopesError.isEmpty ? "" : " invalid")"><legend>\(h(ctx.t(.apiKeyScopes)))</legend>\(boxes)\(scopesError)</fieldset>
            \(f.field("days", ctx.t(.apiKeyDays), type: "number", required: false, errorKey: "expiresInDays", attributes: "min=\"1\" max=\"730\""))
            <button type="submit">\(h(ctx.t(.apiKeyCreate)))</button>
            </form></details>
            """
    }

    func page(_ ctx: WebContext) throws -> WebPage {
        let rows = try endpoints.map { e -> String in
            let id = try e.storedID
            return "<li data-endpoint=\"\(id.uuidString)\"><a href=\"\(WebRoutes.webhook(id))\">\(h(e.about ?? e.url))</a> · <small>\(h(e.url))</small> · <span class=\"status\">\(h(ctx.webhookState(e)))</span></li>"
        }.joined()
        let boxes = WebhookEvent.subscribable.enumerated().map { index, event in form.checkbox("ev\(index)", event.rawValue) }.joined()
        let eventsError = form.errors["events"].map { "<p class=\"error\">\(h($0 == "required" ? ctx.t(.errChooseEvent) : ctx.fieldError("events", $0)))</p>" } ?? ""
        let scope = mayCompany
            ? form.radios("scope", ctx.t(.webhookScope), options: [("own", ctx.t(.webhookScopeOwn)), ("company", ctx.t(.webhookScopeCompany))])
            : "<input type=\"hidden\" name=\"scope\" value=\"own\">"
        return WebPage(title: ctx.t(.webhooks), body: """
            <h1>\(h(ctx.t(.webhooks)))</h1>
            \(deleted ? "<div class=\"alert ok\" role=\"status\">\(h(ctx.t(.webhookDeleted)))</div>" : "")
            \(status == .ok ? "" : "<div class=\"alert error\" role=\"alert\">\(h(ctx.t(.errValidation)))</div>")
            <p>\(h(ctx.t(.webhooksIntro)))</p>
            \(endpoints.isEmpty ? "<p>\(h(ctx.t(.webhooksNone)))</p>" : "<ul class=\"list\">\(rows)</ul>")
            <h2>\(h(ctx.t(.webhookAdd)))</h2>
            <form method="post" action="\(WebRoutes.webhooks())" class="stack">\(form.hidden())
            \(form.field("url", ctx.t(.webhookURL), type: "url", autocomplete: "off"))
            \(form.field("description", ctx.t(.webhookDescription), required: false))
            \(scope)
            <fieldset class="field\(eventsError.isEmpty ? "" : " invalid")"><legend>\(h(ctx.t(.webhookEvents)))</legend>\(boxes)\(eventsError)</fieldset>
            <button type="submit" class="primary">\(h(ctx.t(.webhookAdd)))</button>
            </form>
            <p class="note">\(h(ctx.t(.webhookHowToVerify)))</p>
            \(try keySection(ctx))
            """, status: status)
    }
}

struct WebhookPage: PageView {
    var endpoint: WebhookEndpointRecord
    var log: [(WebhookDeliveryRecord, [WebhookAttemptRecord])]
    /// Just made or rotated: shown this once.
    var secret: String?
    var notice: Text?

    func page(_ ctx: WebContext) throws -> WebPage {
        let e = endpoint, id = try e.storedID
        let csrf = "<input type=\"hidden\" name=\"_csrf\" value=\"\(h(ctx.csrf))\">"
        func button(_ action: String, _ label: Text, _ cls: String = "") -> String {
            "<form method=\"post\" action=\"\(WebRoutes.webhookAction((id, action)))\" class=\"inline\">\(csrf)<button type=\"submit\"\(cls.isEmpty ? "" : " class=\"\(cls)\"")>\(h(ctx.t(label)))</button></form>"
        }
        let rows = try log.map { d, attempts -> String in
            let deliveryID = try d.storedID
            let state = switch d.status {
            case .pending: ctx.t(.webhookPending)
            case .delivered: ctx.t(.webhookDelivered)
            case .failed: ctx.t(.webhookFailed)
            }
            let answer = [d.lastStatusCode.map(String.init), d.lastError].compactMap { $0 }.joined(separator: " · ")
            let tries = attempts.map { a in "\(ctx.time(a.at)) → \(a.statusCode.map(String.init) ?? "—") (\(a.durationMillis) ms)\(a.error.map { " \($0)" } ?? "")" }
                .joined(separator: "\n")
            let again = e.enabled
                ? "<form method=\"post\" action=\"\(WebRoutes.webhookRedeliver((id, deliveryID)))\" class=\"inline\">\(csrf)<button type=\"submit\" class=\"link\">\(h(ctx.t(.webhookRedeliver)))</button></form>"
                : ""
            return "<tr data-delivery=\"\(deliveryID.uuidString)\" data-status=\"\(d.status.rawValue)\"><td>\(h(d.eventType))</td><td>\(h(state))</td><td title=\"\(h(tries))\">\(d.attempts)</td><td>\(h(answer))</td><td>\(h(ctx.time(d.createdAt)))</td><td>\(again)</td></tr>"
        }.joined()
        let table = log.isEmpty ? "<p>\(h(ctx.t(.webhookLogNone)))</p>" : """
            <div class="table-wrap"><table><thead><tr><th scope="col">\(h(ctx.t(.webhookEvent)))</th><th scope="col">\(h(ctx.t(.webhookState)))</th>
            <th scope="col">\(h(ctx.t(.webhookAttempts)))</th><th scope="col">\(h(ctx.t(.webhookAnswer)))</th><th scope="col">\(h(ctx.t(.webhookWhen)))</th><th scope="col"><span class="visually-hidden">\(h(ctx.t(.webhookRedeliver)))</span></th></tr></thead>
            <tbody>\(rows)</tbody></table></div>
            """
        let shown = secret.map { s in
            """
            <div class="alert ok" role="status" data-webhook-secret-shown>
            <p>\(h(ctx.t(notice ?? .webhookCreated)))</p>
            <p><label>\(h(ctx.t(.webhookSecret))) <input type="text" readonly value="\(h(s))" data-webhook-secret></label></p>
            </div>
            """
        } ?? notice.map { "<div class=\"alert ok\" role=\"status\">\(h(ctx.t($0)))</div>" } ?? ""
        return WebPage(title: e.about ?? ctx.t(.webhooks), body: """
            <p><a href="\(WebRoutes.webhooks())">\(h(ctx.t(.webhooks)))</a></p>
            <h1>\(h(e.about ?? e.url))</h1>
            \(shown)
            <dl class="facts">
            <dt>\(h(ctx.t(.webhookURL)))</dt><dd>\(h(e.url))</dd>
            <dt>\(h(ctx.t(.webhookScope)))</dt><dd>\(h(ctx.t(e.scope == .company ? .webhookScopeCompany : .webhookScopeOwn)))</dd>
            <dt>\(h(ctx.t(.webhookEvents)))</dt><dd>\(h(e.events.map(\.rawValue).joined(separator: ", ")))</dd>
            <dt>\(h(ctx.t(.webhookState)))</dt><dd data-endpoint-state="\(e.enabled ? "on" : e.disabledReason ?? "off")">\(h(ctx.webhookState(e)))</dd>
            \(e.failingSince.map { "<dt>\(h(ctx.t(.webhookFailingSince)))</dt><dd>\(h(ctx.time($0)))</dd>" } ?? "")
            </dl>
            <p class="actions">\(e.enabled ? button("ping", .webhookPing, "primary") + " " + button("disable", .webhookTurnOff) : button("enable", .webhookTurnOn, "primary"))
            \(button("rotate", .webhookRotate)) \(button("delete", .webhookDelete, "danger"))</p>
            <h2>\(h(ctx.t(.webhookLog)))</h2>
            \(table)
            <p class="note">\(h(ctx.t(.webhookHowToVerify)))</p>
            """, wide: true)
    }
}
