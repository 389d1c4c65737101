import Fluent
import Foundation
import Vapor
import WaybillCore

/// Everyone's pages: sign in, register, verify, reset, one's own account, notifications, language.
struct AccountPages {
    func register(_ routes: any RoutesBuilder) {
        routes.get(use: home)
        routes.get("login", use: loginPage)
        routes.post("login", use: login)
        routes.post("logout", use: logout)
        routes.get("register", use: registerPage)
        routes.post("register", use: register)
        routes.get("verify", use: verifyPage)
        routes.post("verify", use: verify)
        routes.post("verify", "resend", use: resend)
        routes.get("forgot", use: forgotPage)
        routes.post("forgot", use: forgot)
        routes.get("reset", use: resetPage)
        routes.post("reset", use: reset)
        routes.get("account", use: accountPage)
        routes.post("account", use: updateAccount)
        routes.post("account", "password", use: changePassword)
        routes.get("lang", ":lang", use: switchLanguage)
        routes.get("notifications", use: notifications)
        routes.post("notifications", "read-all", use: readAll)
        routes.post("notifications", ":id", "read", use: readOne)
    }

    static func form(_ req: Request) throws -> [String: String] {
        (try? req.content.decode([String: String].self)) ?? [:]
    }

    func home(_ req: Request) async throws -> Response {
        let ctx = try req.web
        guard let user = ctx.user else { return req.redirect(to: "/login") }
        let caller = Caller(id: user.id!, role: user.role)
        if caller.may(.dispatch) { return req.redirect(to: "/dispatch") }
        if caller.may(.drive) { return req.redirect(to: "/driver") }
        return req.redirect(to: "/orders")
    }

    // MARK: Sign in and out

    func loginPage(_ req: Request) async throws -> Response {
        let ctx = try req.web
        if ctx.user != nil { return req.redirect(to: safeLocalPath(req.query[String.self, at: "next"]) ?? "/") }
        return loginView(ctx, values: ["next": req.query[String.self, at: "next"] ?? "", "email": req.query[String.self, at: "email"] ?? ""],
                         notice: req.query[String.self, at: "verified"] != nil ? ctx.t(.verifiedNowSignIn) : req.query[String.self, at: "reset"] != nil ? ctx.t(.passwordResetNowSignIn) : nil)
    }

    func loginView(_ ctx: WebContext, values: [String: String], error: String? = nil, notice: String? = nil, status: HTTPResponseStatus = .ok) -> Response {
        let form = Form(ctx: ctx, values: values)
        return WebPage(title: ctx.t(.signIn), body: """
            <h1>\(h(ctx.t(.signIn)))</h1>
            \(notice.map { "<div class=\"alert ok\" role=\"status\">\(h($0))</div>" } ?? "")
            \(error.map { "<div class=\"alert error\" role=\"alert\">\(h($0))</div>" } ?? "")
            <form method="post" action="/login" class="stack">
            \(form.hidden())<input type="hidden" name="next" value="\(h(values["next"]))">
            \(form.field("email", ctx.t(.email), type: "email", autocomplete: "username"))
            \(form.field("password", ctx.t(.password), type: "password", autocomplete: "current-password"))
            <button type="submit" class="primary">\(h(ctx.t(.signIn)))</button>
            </form>
            <p><a href="/forgot">\(h(ctx.t(.forgotPassword)))</a> · <a href="/register">\(h(ctx.t(.createAccount)))</a></p>
            """, status: status).render(ctx)
    }

    func login(_ req: Request) async throws -> Response {
        let ctx = try req.web
        let form = try Self.form(req)
        let email = form["email"] ?? "", password = form["password"] ?? ""
        do {
            let (_, cookie) = try await Accounts(request: req).webLogin(email: email, password: password)
            let response = req.redirect(to: safeLocalPath(form["next"]) ?? "/", redirectType: .normal)
            response.cookies[WebContext.sessionCookie(req)] = WebCookies.make(
                cookie, maxAge: Int(TokenService.refreshLifetime), secure: req.application.waybill.config.publicURL.hasPrefix("https://"))
            return response
        } catch let error as WaybillError {
            if error.code == .emailNotVerified {
                return req.redirect(to: "/verify?email=" + (email.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""), redirectType: .normal)
            }
            let response = loginView(ctx, values: ["email": email, "next": form["next"] ?? ""], error: ctx.message(error), status: error.status)
            if let retry = error.retryAfter { response.headers.replaceOrAdd(name: .retryAfter, value: String(retry)) }
            return response
        }
    }

    func logout(_ req: Request) async throws -> Response {
        let ctx = try req.web
        if let principal = ctx.principal { try await Accounts(request: req).endSession(principal.sessionID) }
        let response = req.redirect(to: "/login", redirectType: .normal)
        response.cookies[WebContext.sessionCookie(req)] = WebCookies.expired(secure: req.application.waybill.config.publicURL.hasPrefix("https://"))
        return response
    }

    // MARK: Registration and verification

    func registerPage(_ req: Request) async throws -> Response {
        registerView(try req.web, values: [:], errors: [:])
    }

    func registerView(_ ctx: WebContext, values: [String: String], errors: [String: String], message: String? = nil,
                      status: HTTPResponseStatus = .ok) -> Response {
        let form = Form(ctx: ctx, values: values, errors: errors)
        let shown: Set<String> = ["firstName", "lastName", "address", "postalCode", "city", "email", "password", "companyName"]
        return WebPage(title: ctx.t(.createAccount), body: """
            <h1>\(h(ctx.t(.createAccount)))</h1>
            \(form.summary(message: message, shown: shown))
            <form method="post" action="/register" class="stack">
            \(form.hidden())
            <div class="row">\(form.field("firstName", ctx.t(.firstName), autocomplete: "given-name"))\(form.field("lastName", ctx.t(.lastName), autocomplete: "family-name"))</div>
            \(form.field("address", ctx.t(.street), autocomplete: "street-address"))
            <div class="row">\(form.field("postalCode", ctx.t(.postalCode), autocomplete: "postal-code", attributes: "inputmode=\"numeric\""))\(form.field("city", ctx.t(.city), autocomplete: "address-level2"))</div>
            \(form.field("email", ctx.t(.email), type: "email", autocomplete: "email"))
            \(form.field("password", ctx.t(.password), type: "password", autocomplete: "new-password", hint: ctx.t(.passwordHint)))
            \(form.checkbox("isCompany", ctx.t(.iAmACompany)))
            \(form.field("companyName", ctx.t(.companyName), autocomplete: "organization", required: false, hint: ctx.t(.companyHint)))
            <button type="submit" class="primary">\(h(ctx.t(.createAccount)))</button>
            </form>
            <p><a href="/login">\(h(ctx.t(.haveAccount)))</a></p>
            """, status: status).render(ctx)
    }

    func register(_ req: Request) async throws -> Response {
        let ctx = try req.web
        let form = try Self.form(req)
        let isCompany = form["isCompany"] == "on"
        let registration = Registration(
            firstName: form["firstName"] ?? "", lastName: form["lastName"] ?? "", address: form["address"] ?? "",
            postalCode: form["postalCode"] ?? "", city: form["city"] ?? "", email: form["email"] ?? "",
            password: form["password"] ?? "", isCompany: isCompany,
            companyName: isCompany ? form["companyName"] : nil)
        do {
            try await Accounts(request: req).register(registration)
        } catch let error as WaybillError {
            return registerView(ctx, values: form, errors: error.fields ?? [:], message: ctx.message(error), status: error.status)
        } catch let error as FieldErrorsError {
            return registerView(ctx, values: form, errors: error.errors.fields, message: ctx.t(.errValidation), status: .unprocessableEntity)
        }
        return req.redirect(to: "/verify?sent=1&email=" + ((form["email"] ?? "").addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""),
                            redirectType: .normal)
    }

    func verifyPage(_ req: Request) async throws -> Response {
        let ctx = try req.web
        return verifyView(ctx, email: req.query[String.self, at: "email"] ?? "", notice: req.query[String.self, at: "sent"] != nil ? ctx.t(.codeSent) : nil)
    }

    func verifyView(_ ctx: WebContext, email: String, error: String? = nil, notice: String? = nil, status: HTTPResponseStatus = .ok) -> Response {
        let form = Form(ctx: ctx, values: ["email": email])
        return WebPage(title: ctx.t(.confirmEmail), body: """
            <h1>\(h(ctx.t(.confirmEmail)))</h1>
            <p>\(h(ctx.t(.confirmEmailIntro)))</p>
            \(notice.map { "<div class=\"alert ok\" role=\"status\">\(h($0))</div>" } ?? "")
            \(error.map { "<div class=\"alert error\" role=\"alert\">\(h($0))</div>" } ?? "")
            <form method="post" action="/verify" class="stack">
            \(form.hidden())
            \(form.field("email", ctx.t(.email), type: "email", autocomplete: "email"))
            \(form.field("code", ctx.t(.code), autocomplete: "one-time-code", attributes: "inputmode=\"numeric\" pattern=\"[0-9]{6}\" maxlength=\"6\""))
            <button type="submit" class="primary">\(h(ctx.t(.confirm)))</button>
            </form>
            <form method="post" action="/verify/resend" class="inline">\(form.hidden())<input type="hidden" name="email" value="\(h(email))">
            <button type="submit" class="link">\(h(ctx.t(.sendNewCode)))</button></form>
            """, status: status).render(ctx)
    }

    func verify(_ req: Request) async throws -> Response {
        let ctx = try req.web
        let form = try Self.form(req)
        let email = form["email"] ?? ""
        do {
            try await Accounts(request: req).verifyEmail(email: email, code: (form["code"] ?? "").trimmingCharacters(in: .whitespaces))
        } catch let error as WaybillError {
            return verifyView(ctx, email: email, error: ctx.message(error), status: error.status)
        }
        return req.redirect(to: "/login?verified=1&email=" + (email.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""), redirectType: .normal)
    }

    func resend(_ req: Request) async throws -> Response {
        let form = try Self.form(req)
        let email = form["email"] ?? ""
        try await Accounts(request: req).resendVerification(email: email)
        return req.redirect(to: "/verify?sent=1&email=" + (email.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""), redirectType: .normal)
    }

    // MARK: Forgotten password

    func forgotPage(_ req: Request) async throws -> Response {
        let ctx = try req.web
        let form = Form(ctx: ctx)
        return WebPage(title: ctx.t(.forgotPassword), body: """
            <h1>\(h(ctx.t(.forgotPassword)))</h1>
            <p>\(h(ctx.t(.forgotIntro)))</p>
            <form method="post" action="/forgot" class="stack">\(form.hidden())
            \(form.field("email", ctx.t(.email), type: "email", autocomplete: "email"))
            <button type="submit" class="primary">\(h(ctx.t(.sendCode)))</button>
            </form>
            """).render(ctx)
    }

    func forgot(_ req: Request) async throws -> Response {
        let form = try Self.form(req)
        let email = form["email"] ?? ""
        try await Accounts(request: req).requestPasswordReset(email: email)
        return req.redirect(to: "/reset?sent=1&email=" + (email.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""), redirectType: .normal)
    }

    func resetPage(_ req: Request) async throws -> Response {
        let ctx = try req.web
        return resetView(ctx, values: ["email": req.query[String.self, at: "email"] ?? ""], errors: [:],
                         notice: req.query[String.self, at: "sent"] != nil ? ctx.t(.resetCodeSent) : nil)
    }

    func resetView(_ ctx: WebContext, values: [String: String], errors: [String: String], message: String? = nil,
                   notice: String? = nil, status: HTTPResponseStatus = .ok) -> Response {
        let form = Form(ctx: ctx, values: values, errors: errors)
        return WebPage(title: ctx.t(.newPassword), body: """
            <h1>\(h(ctx.t(.newPassword)))</h1>
            \(notice.map { "<div class=\"alert ok\" role=\"status\">\(h($0))</div>" } ?? "")
            \(form.summary(message: message, shown: ["email", "code", "newPassword"]))
            <form method="post" action="/reset" class="stack">\(form.hidden())
            \(form.field("email", ctx.t(.email), type: "email", autocomplete: "email"))
            \(form.field("code", ctx.t(.code), autocomplete: "one-time-code", attributes: "inputmode=\"numeric\" maxlength=\"6\""))
            \(form.field("newPassword", ctx.t(.newPassword), type: "password", autocomplete: "new-password", hint: ctx.t(.passwordHint)))
            <button type="submit" class="primary">\(h(ctx.t(.setPassword)))</button>
            </form>
            """, status: status).render(ctx)
    }

    func reset(_ req: Request) async throws -> Response {
        let ctx = try req.web
        let form = try Self.form(req)
        let email = form["email"] ?? ""
        do {
            try await Accounts(request: req).completePasswordReset(email: email, code: (form["code"] ?? "").trimmingCharacters(in: .whitespaces),
                                                                   newPassword: form["newPassword"] ?? "")
        } catch let error as WaybillError {
            return resetView(ctx, values: form, errors: error.fields ?? [:], message: ctx.message(error), status: error.status)
        }
        return req.redirect(to: "/login?reset=1&email=" + (email.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""), redirectType: .normal)
    }

    // MARK: One's own account

    func accountPage(_ req: Request) async throws -> Response {
        let (ctx, me) = try WebAuth.require(req)
        let user = me.user
        return accountView(ctx, user: user, values: [
            "firstName": user.firstName, "lastName": user.lastName, "address": user.address ?? "",
            "postalCode": user.postalCode ?? "", "city": user.city ?? "", "companyName": user.companyName ?? "",
        ], errors: [:], notice: req.query[String.self, at: "saved"] != nil ? ctx.t(.saved) : req.query[String.self, at: "password"] != nil ? ctx.t(.passwordChanged) : nil)
    }

    func accountView(_ ctx: WebContext, user: User, values: [String: String], errors: [String: String], message: String? = nil,
                     notice: String? = nil, status: HTTPResponseStatus = .ok) -> Response {
        let form = Form(ctx: ctx, values: values, errors: errors)
        let company = user.isCompany ? form.field("companyName", ctx.t(.companyName), autocomplete: "organization") : ""
        let addressFields = Caller(id: user.id!, role: user.role).may(.placeOrders) ? """
            \(form.field("address", ctx.t(.street), autocomplete: "street-address"))
            <div class="row">\(form.field("postalCode", ctx.t(.postalCode), autocomplete: "postal-code"))\(form.field("city", ctx.t(.city), autocomplete: "address-level2"))</div>
            """ : ""
        return WebPage(title: ctx.t(.myAccount), body: """
            <h1>\(h(ctx.t(.myAccount)))</h1>
            \(notice.map { "<div class=\"alert ok\" role=\"status\">\(h($0))</div>" } ?? "")
            \(form.summary(message: message, shown: ["firstName", "lastName", "address", "postalCode", "city", "companyName", "currentPassword", "newPassword"]))
            <p>\(h(user.email)) · \(h(ctx.role(user.role)))</p>
            <form method="post" action="/account" class="stack">\(form.hidden())
            <div class="row">\(form.field("firstName", ctx.t(.firstName), autocomplete: "given-name"))\(form.field("lastName", ctx.t(.lastName), autocomplete: "family-name"))</div>
            \(addressFields)
            \(company)
            <button type="submit" class="primary">\(h(ctx.t(.save)))</button>
            </form>
            <h2>\(h(ctx.t(.changePassword)))</h2>
            <form method="post" action="/account/password" class="stack">\(form.hidden())
            <input type="hidden" name="username" value="\(h(user.email))" autocomplete="username">
            \(form.field("currentPassword", ctx.t(.currentPassword), type: "password", autocomplete: "current-password"))
            \(form.field("newPassword", ctx.t(.newPassword), type: "password", autocomplete: "new-password", hint: ctx.t(.passwordHint)))
            <button type="submit">\(h(ctx.t(.changePassword)))</button>
            </form>
            <h2>\(h(ctx.t(.pushTitle)))</h2>
            <p><button type="button" data-enable-push hidden data-text-done="\(h(ctx.t(.pushOn)))" data-text-failed="\(h(ctx.t(.pushFailed)))">\(h(ctx.t(.pushEnable)))</button></p>
            <p data-push-state aria-live="polite"></p>
            """, status: status).render(ctx)
    }

    func updateAccount(_ req: Request) async throws -> Response {
        let (ctx, me) = try WebAuth.require(req)
        let form = try Self.form(req)
        let customer = me.may(.placeOrders)
        let changes = ProfileChanges(
            firstName: form["firstName"], lastName: form["lastName"],
            address: customer ? form["address"] : nil, postalCode: customer ? form["postalCode"] : nil,
            city: customer ? form["city"] : nil, companyName: me.user.isCompany ? form["companyName"] : nil)
        do {
            _ = try await Accounts(request: req).updateProfile(me, changes: changes)
        } catch let error as WaybillError {
            return accountView(ctx, user: me.user, values: form, errors: error.fields ?? [:], message: ctx.message(error), status: error.status)
        }
        return req.redirect(to: "/account?saved=1", redirectType: .normal)
    }

    func changePassword(_ req: Request) async throws -> Response {
        let (ctx, me) = try WebAuth.require(req)
        let form = try Self.form(req)
        do {
            try await Accounts(request: req).changePassword(me, current: form["currentPassword"] ?? "", new: form["newPassword"] ?? "")
        } catch let error as WaybillError {
            let user = me.user
            return accountView(ctx, user: user, values: ["firstName": user.firstName, "lastName": user.lastName, "address": user.address ?? "",
                                                         "postalCode": user.postalCode ?? "", "city": user.city ?? "", "companyName": user.companyName ?? ""],
                               errors: error.fields ?? [:], message: ctx.message(error), status: error.status)
        }
        return req.redirect(to: "/account?password=1", redirectType: .normal)
    }

    // MARK: Language

    func switchLanguage(_ req: Request) async throws -> Response {
        guard let lang = Lang(rawValue: req.parameters.get("lang") ?? "") else { throw WaybillError.notFound }
        let response = req.redirect(to: safeLocalPath(req.query[String.self, at: "back"]) ?? "/")
        response.cookies[WebContext.langCookie(req)] = HTTPCookies.Value(
            string: lang.rawValue, maxAge: 365 * 86400, path: "/", isSecure: req.application.waybill.config.publicURL.hasPrefix("https://"),
            isHTTPOnly: true, sameSite: .lax)
        return response
    }

    // MARK: Notifications

    func notifications(_ req: Request) async throws -> Response {
        let (ctx, me) = try WebAuth.require(req)
        let page = try await Orders(request: req).notifications(for: me, unreadOnly: false, cursor: nil, limit: 100)
        let form = Form(ctx: ctx)
        let items = page.items.map { n -> String in
            """
            <li class="\(n.readAt == nil ? "unread" : "read")">
            <p><strong>\(h(ctx.notificationTitle(n)))</strong> \(ctx.time(n.createdAt))</p>
            <p>\(h(n.body))</p>
            <p>\(n.orderID.map { "<a href=\"/orders/\($0.uuidString)\">\(h(ctx.t(.openDelivery)))</a>" } ?? "")
            \(n.readAt == nil ? "<form method=\"post\" action=\"/notifications/\(n.id!.uuidString)/read\" class=\"inline\">\(form.hidden())<button type=\"submit\" class=\"link\">\(h(ctx.t(.markRead)))</button></form>" : "")</p>
            </li>
            """
        }.joined()
        return WebPage(title: ctx.t(.notifications), body: """
            <h1>\(h(ctx.t(.notifications)))</h1>
            <div id="notification-list" data-live-refresh="notification">
            \(page.unread > 0 ? "<form method=\"post\" action=\"/notifications/read-all\">\(form.hidden())<button type=\"submit\">\(h(ctx.t(.markAllRead)))</button></form>" : "")
            \(items.isEmpty ? "<p>\(h(ctx.t(.noNotifications)))</p>" : "<ul class=\"notifications\">\(items)</ul>")
            </div>
            """).render(ctx)
    }

    func readOne(_ req: Request) async throws -> Response {
        let (_, me) = try WebAuth.require(req)
        guard let id = req.parameters.get("id").flatMap(NotificationID.init(uuidString:)) else { throw WaybillError.notFound }
        _ = try await Orders(request: req).markRead(id, for: me)
        return req.redirect(to: "/notifications", redirectType: .normal)
    }

    func readAll(_ req: Request) async throws -> Response {
        let (_, me) = try WebAuth.require(req)
        try await Orders(request: req).markAllRead(for: me)
        return req.redirect(to: "/notifications", redirectType: .normal)
    }
}
