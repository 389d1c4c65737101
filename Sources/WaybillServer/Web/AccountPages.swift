import Fluent
import Foundation
import Vapor
import WaybillCore

/// Everyone's pages: sign in, register, verify, reset, one's own account, notifications, language.
/// The handlers call the services and choose a page; each page (`LoginPage`, `AccountPage`, …) is
/// its model and a view that only renders it.
struct AccountPages {
    func register(_ routes: any RoutesBuilder) {
        routes.get(WebRoutes.home, use: home)
        routes.get(WebRoutes.login, use: loginPage)
        routes.post(WebRoutes.login, use: login)
        routes.post(WebRoutes.logout, use: logout)
        routes.get(WebRoutes.register, use: registerPage)
        routes.post(WebRoutes.register, use: register)
        routes.get(WebRoutes.verify, use: verifyPage)
        routes.post(WebRoutes.verify, use: verify)
        routes.post(WebRoutes.resendCode, use: resend)
        routes.get(WebRoutes.forgot, use: forgotPage)
        routes.post(WebRoutes.forgot, use: forgot)
        routes.get(WebRoutes.reset, use: resetPage)
        routes.post(WebRoutes.reset, use: reset)
        routes.get(WebRoutes.account, use: accountPage)
        routes.post(WebRoutes.account, use: updateAccount)
        routes.post(WebRoutes.accountPassword, use: changePassword)
        routes.get(WebRoutes.language, use: switchLanguage)
        routes.get(WebRoutes.notifications, use: notifications)
        routes.post(WebRoutes.readAllNotifications, use: readAll)
        routes.post(WebRoutes.readNotification, use: readOne)
    }

    static func form(_ req: Request) throws -> [String: String] {
        (try? req.content.decode([String: String].self)) ?? [:]
    }

    func home(_ req: Request) async throws -> Response {
        let ctx = try req.web
        guard let me = ctx.principal else { return req.redirect(to: WebRoutes.login()) }
        if me.may(.dispatch) { return req.redirect(to: WebRoutes.dispatch()) }
        if me.may(.drive) { return req.redirect(to: WebRoutes.driverDay()) }
        return req.redirect(to: WebRoutes.orders())
    }

    // MARK: Sign in and out

    func loginPage(_ req: Request) async throws -> Response {
        let ctx = try req.web
        if ctx.user != nil { return req.redirect(to: safeLocalPath(req.query[String.self, at: "next"]) ?? WebRoutes.home()) }
        return try LoginPage(values: ["next": req.query[String.self, at: "next"] ?? "", "email": req.query[String.self, at: "email"] ?? ""],
                         notice: req.query[String.self, at: "verified"] != nil ? ctx.t(.verifiedNowSignIn)
                            : req.query[String.self, at: "reset"] != nil ? ctx.t(.passwordResetNowSignIn) : nil).response(ctx)
    }

    func login(_ req: Request) async throws -> Response {
        let ctx = try req.web
        let form = try Self.form(req)
        let email = form["email"] ?? "", password = form["password"] ?? ""
        do {
            let (_, cookie) = try await Accounts(request: req).webLogin(email: email, password: password)
            let response = req.redirect(to: safeLocalPath(form["next"]) ?? WebRoutes.home(), redirectType: .normal)
            response.cookies[WebContext.sessionCookie(req)] = WebCookies.make(
                cookie, maxAge: Int(TokenService.refreshLifetime), secure: req.application.waybill.config.publicURL.hasPrefix("https://"))
            return response
        } catch let error as WaybillError {
            if error.code == .emailNotVerified {
                return req.redirect(to: WebRoutes.verify(query: "email=" + queryValue(email)), redirectType: .normal)
            }
            let response = try LoginPage(values: ["email": email, "next": form["next"] ?? ""], error: ctx.message(error), status: error.status).response(ctx)
            if let retry = error.retryAfter { response.headers.replaceOrAdd(name: .retryAfter, value: String(retry)) }
            return response
        }
    }

    func logout(_ req: Request) async throws -> Response {
        let ctx = try req.web
        if let principal = ctx.principal { try await Accounts(request: req).endSession(principal.sessionID) }
        let response = req.redirect(to: WebRoutes.login(), redirectType: .normal)
        response.cookies[WebContext.sessionCookie(req)] = WebCookies.expired(secure: req.application.waybill.config.publicURL.hasPrefix("https://"))
        return response
    }

    // MARK: Registration and verification

    func registerPage(_ req: Request) async throws -> Response {
        try RegisterPage(values: [:], errors: [:]).response(try req.web)
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
            return try RegisterPage(values: form, errors: error.fields ?? [:], message: ctx.message(error), status: error.status).response(ctx)
        } catch let error as FieldErrorsError {
            return try RegisterPage(values: form, errors: error.errors.fields, message: ctx.t(.errValidation), status: .unprocessableEntity).response(ctx)
        }
        return req.redirect(to: WebRoutes.verify(query: "sent=1&email=" + queryValue(form["email"] ?? "")), redirectType: .normal)
    }

    func verifyPage(_ req: Request) async throws -> Response {
        let ctx = try req.web
        return try VerifyPage(email: req.query[String.self, at: "email"] ?? "",
                          notice: req.query[String.self, at: "sent"] != nil ? ctx.t(.codeSent) : nil).response(ctx)
    }

    func verify(_ req: Request) async throws -> Response {
        let ctx = try req.web
        let form = try Self.form(req)
        let email = form["email"] ?? ""
        do {
            try await Accounts(request: req).verifyEmail(email: email, code: (form["code"] ?? "").trimmingCharacters(in: .whitespaces))
        } catch let error as WaybillError {
            return try VerifyPage(email: email, error: ctx.message(error), status: error.status).response(ctx)
        }
        return req.redirect(to: WebRoutes.login(query: "verified=1&email=" + queryValue(email)), redirectType: .normal)
    }

    func resend(_ req: Request) async throws -> Response {
        let form = try Self.form(req)
        let email = form["email"] ?? ""
        try await Accounts(request: req).resendVerification(email: email)
        return req.redirect(to: WebRoutes.verify(query: "sent=1&email=" + queryValue(email)), redirectType: .normal)
    }

    // MARK: Forgotten password

    func forgotPage(_ req: Request) async throws -> Response {
        try ForgotPage().response(try req.web)
    }

    func forgot(_ req: Request) async throws -> Response {
        let form = try Self.form(req)
        let email = form["email"] ?? ""
        try await Accounts(request: req).requestPasswordReset(email: email)
        return req.redirect(to: WebRoutes.reset(query: "sent=1&email=" + queryValue(email)), redirectType: .normal)
    }

    func resetPage(_ req: Request) async throws -> Response {
        let ctx = try req.web
        return try ResetPage(values: ["email": req.query[String.self, at: "email"] ?? ""], errors: [:],
                         notice: req.query[String.self, at: "sent"] != nil ? ctx.t(.resetCodeSent) : nil).response(ctx)
    }

    func reset(_ req: Request) async throws -> Response {
        let ctx = try req.web
        let form = try Self.form(req)
        let email = form["email"] ?? ""
        do {
            try await Accounts(request: req).completePasswordReset(email: email, code: (form["code"] ?? "").trimmingCharacters(in: .whitespaces),
                                                                   newPassword: form["newPassword"] ?? "")
        } catch let error as WaybillError {
            return try ResetPage(values: form, errors: error.fields ?? [:], message: ctx.message(error), status: error.status).response(ctx)
        }
        return req.redirect(to: WebRoutes.login(query: "reset=1&email=" + queryValue(email)), redirectType: .normal)
    }

    // MARK: One's own account

    func accountPage(_ req: Request) async throws -> Response {
        let (ctx, me) = try WebAuth.require(req)
        var page = AccountPage(me)
        page.hasPicture = try await Accounts(request: req).hasPicture(me)
        page.notice = req.query[String.self, at: "saved"] != nil ? ctx.t(.saved) : req.query[String.self, at: "password"] != nil ? ctx.t(.passwordChanged) : nil
        return try page.response(ctx)
    }

    func updateAccount(_ req: Request) async throws -> Response {
        let (ctx, me) = try WebAuth.require(req)
        let form = try Self.form(req)
        let customer = me.may(.placeOrders)
        // An address left empty stays as it is (staff, who send too, need not give one).
        let address = { (name: String) in customer ? form[name].flatMap { $0.isEmpty ? nil : $0 } : nil }
        let changes = ProfileChanges(
            firstName: form["firstName"], lastName: form["lastName"],
            address: address("address"), postalCode: address("postalCode"),
            city: address("city"), companyName: me.user.isCompany ? form["companyName"] : nil)
        do {
            _ = try await Accounts(request: req).updateProfile(me, changes: changes)
        } catch let error as WaybillError {
            var page = AccountPage(me)
            page.values = form
            page.errors = error.fields ?? [:]
            page.message = ctx.message(error)
            page.status = error.status
            return try page.response(ctx)
        }
        return req.redirect(to: WebRoutes.account(query: "saved=1"), redirectType: .normal)
    }

    func changePassword(_ req: Request) async throws -> Response {
        let (ctx, me) = try WebAuth.require(req)
        let form = try Self.form(req)
        do {
            try await Accounts(request: req).changePassword(me, current: form["currentPassword"] ?? "", new: form["newPassword"] ?? "")
        } catch let error as WaybillError {
            var page = AccountPage(me)
            page.errors = error.fields ?? [:]
            page.message = ctx.message(error)
            page.status = error.status
            return try page.response(ctx)
        }
        return req.redirect(to: WebRoutes.account(query: "password=1"), redirectType: .normal)
    }

    // MARK: Language

    func switchLanguage(_ req: Request) async throws -> Response {
        guard let lang = Lang(rawValue: req.parameters.get("lang") ?? "") else { throw WaybillError.notFound }
        let response = req.redirect(to: safeLocalPath(req.query[String.self, at: "back"]) ?? WebRoutes.home())
        response.cookies[WebContext.langCookie(req)] = HTTPCookies.Value(
            string: lang.rawValue, maxAge: 365 * 86400, path: "/", isSecure: req.application.waybill.config.publicURL.hasPrefix("https://"),
            isHTTPOnly: true, sameSite: .lax)
        return response
    }

    // MARK: Notifications

    func notifications(_ req: Request) async throws -> Response {
        let (ctx, me) = try WebAuth.require(req)
        return try await NotificationsPage.load(for: me, orders: Orders(request: req)).response(ctx)
    }

    func readOne(_ req: Request) async throws -> Response {
        let (_, me) = try WebAuth.require(req)
        _ = try await Orders(request: req).markRead(try WebRoutes.id(req), for: me)
        return req.redirect(to: WebRoutes.notifications(), redirectType: .normal)
    }

    func readAll(_ req: Request) async throws -> Response {
        let (_, me) = try WebAuth.require(req)
        try await Orders(request: req).markAllRead(for: me)
        return req.redirect(to: WebRoutes.notifications(), redirectType: .normal)
    }
}

// MARK: - Pages

struct LoginPage: PageView {
    var values: [String: String]
    var error: String?
    var notice: String?
    var status: HTTPResponseStatus = .ok

    func page(_ ctx: WebContext) -> WebPage {
        let form = Form(ctx: ctx, values: values)
        return WebPage(title: ctx.t(.signIn), body: """
            <h1>\(h(ctx.t(.signIn)))</h1>
            \(notice.map { "<div class=\"alert ok\" role=\"status\">\(h($0))</div>" } ?? "")
            \(error.map { "<div class=\"alert error\" role=\"alert\">\(h($0))</div>" } ?? "")
            <form method="post" action="\(WebRoutes.login())" class="stack">
            \(form.hidden())<input type="hidden" name="next" value="\(h(values["next"]))">
            \(form.field("email", ctx.t(.email), type: "email", autocomplete: "username"))
            \(form.field("password", ctx.t(.password), type: "password", autocomplete: "current-password"))
            <button type="submit" class="primary">\(h(ctx.t(.signIn)))</button>
            </form>
            <p><a href="\(WebRoutes.forgot())">\(h(ctx.t(.forgotPassword)))</a> · <a href="\(WebRoutes.register())">\(h(ctx.t(.createAccount)))</a></p>
            <p><a href="\(WebRoutes.trackParcel())">\(h(ctx.t(.trackWithoutAccount)))</a></p>
            """, status: status)
    }
}

struct RegisterPage: PageView {
    var values: [String: String]
    var errors: [String: String]
    var message: String?
    var status: HTTPResponseStatus = .ok

    func page(_ ctx: WebContext) -> WebPage {
        let form = Form(ctx: ctx, values: values, errors: errors)
        let shown: Set<String> = ["firstName", "lastName", "address", "postalCode", "city", "email", "password", "companyName"]
        return WebPage(title: ctx.t(.createAccount), body: """
            <h1>\(h(ctx.t(.createAccount)))</h1>
            \(form.summary(message: message, shown: shown))
            <form method="post" action="\(WebRoutes.register())" class="stack">
            \(form.hidden())
            <div class="row">\(form.field("firstName", ctx.t(.firstName), autocomplete: "given-name"))\(form.field("lastName", ctx.t(.lastName), autocomplete: "family-name"))</div>
            \(form.field("address", ctx.t(.street), autocomplete: "address-line1"))
            <div class="row">\(form.field("postalCode", ctx.t(.postalCode), autocomplete: "postal-code", attributes: "inputmode=\"numeric\""))\(form.field("city", ctx.t(.city), autocomplete: "address-level2"))</div>
            \(form.field("email", ctx.t(.email), type: "email", autocomplete: "email"))
            \(form.field("password", ctx.t(.password), type: "password", autocomplete: "new-password", hint: ctx.t(.passwordHint)))
            \(form.checkbox("isCompany", ctx.t(.iAmACompany)))
            \(form.field("companyName", ctx.t(.companyName), autocomplete: "organization", required: false, hint: ctx.t(.companyHint)))
            <button type="submit" class="primary">\(h(ctx.t(.createAccount)))</button>
            </form>
            <p><a href="\(WebRoutes.login())">\(h(ctx.t(.haveAccount)))</a></p>
            """, status: status)
    }
}

struct VerifyPage: PageView {
    var email: String
    var error: String?
    var notice: String?
    var status: HTTPResponseStatus = .ok

    func page(_ ctx: WebContext) -> WebPage {
        let form = Form(ctx: ctx, values: ["email": email])
        return WebPage(title: ctx.t(.confirmEmail), body: """
            <h1>\(h(ctx.t(.confirmEmail)))</h1>
            <p>\(h(ctx.t(.confirmEmailIntro)))</p>
            \(notice.map { "<div class=\"alert ok\" role=\"status\">\(h($0))</div>" } ?? "")
            \(error.map { "<div class=\"alert error\" role=\"alert\">\(h($0))</div>" } ?? "")
            <form method="post" action="\(WebRoutes.verify())" class="stack">
            \(form.hidden())
            \(form.field("email", ctx.t(.email), type: "email", autocomplete: "email"))
            \(form.field("code", ctx.t(.code), autocomplete: "one-time-code", attributes: "inputmode=\"numeric\" pattern=\"[0-9]{6}\" maxlength=\"6\""))
            <button type="submit" class="primary">\(h(ctx.t(.confirm)))</button>
            </form>
            <form method="post" action="\(WebRoutes.resendCode())" class="inline">\(form.hidden())<input type="hidden" name="email" value="\(h(email))">
            <button type="submit" class="link">\(h(ctx.t(.sendNewCode)))</button></form>
            """, status: status)
    }
}

struct ForgotPage: PageView {
    func page(_ ctx: WebContext) -> WebPage {
        let form = Form(ctx: ctx)
        return WebPage(title: ctx.t(.forgotPassword), body: """
            <h1>\(h(ctx.t(.forgotPassword)))</h1>
            <p>\(h(ctx.t(.forgotIntro)))</p>
            <form method="post" action="\(WebRoutes.forgot())" class="stack">\(form.hidden())
            \(form.field("email", ctx.t(.email), type: "email", autocomplete: "email"))
            <button type="submit" class="primary">\(h(ctx.t(.sendCode)))</button>
            </form>
            """)
    }
}

struct ResetPage: PageView {
    var values: [String: String]
    var errors: [String: String]
    var message: String?
    var notice: String?
    var status: HTTPResponseStatus = .ok

    func page(_ ctx: WebContext) -> WebPage {
        let form = Form(ctx: ctx, values: values, errors: errors)
        return WebPage(title: ctx.t(.newPassword), body: """
            <h1>\(h(ctx.t(.newPassword)))</h1>
            \(notice.map { "<div class=\"alert ok\" role=\"status\">\(h($0))</div>" } ?? "")
            \(form.summary(message: message, shown: ["email", "code", "newPassword"]))
            <form method="post" action="\(WebRoutes.reset())" class="stack">\(form.hidden())
            \(form.field("email", ctx.t(.email), type: "email", autocomplete: "email"))
            \(form.field("code", ctx.t(.code), autocomplete: "one-time-code", attributes: "inputmode=\"numeric\" maxlength=\"6\""))
            \(form.field("newPassword", ctx.t(.newPassword), type: "password", autocomplete: "new-password", hint: ctx.t(.passwordHint)))
            <button type="submit" class="primary">\(h(ctx.t(.setPassword)))</button>
            </form>
            """, status: status)
    }
}

/// One's own account: the profile form (with the address for those who place orders, the company
/// name for companies), the password form and push notifications.
struct AccountPage: PageView {
    var email: String
    var role: Role
    var showsAddress: Bool
    /// Registered senders gave an address; staff, who send too, may add one (it fills "pick up at my address").
    var addressRequired: Bool
    var isCompany: Bool
    var values: [String: String]
    var errors: [String: String] = [:]
    var message: String?
    var notice: String?
    var status: HTTPResponseStatus = .ok
    var userID: UserID
    var hasPicture = false

    init(_ me: Principal) {
        let user = me.user
        userID = me.userID
        email = user.email
        role = user.role
        showsAddress = me.may(.placeOrders)
        addressRequired = user.address != nil
        isCompany = user.isCompany
        values = ["firstName": user.firstName, "lastName": user.lastName, "address": user.address ?? "",
                  "postalCode": user.postalCode ?? "", "city": user.city ?? "", "companyName": user.companyName ?? ""]
    }

    func page(_ ctx: WebContext) -> WebPage {
        let form = Form(ctx: ctx, values: values, errors: errors)
        let company = isCompany ? form.field("companyName", ctx.t(.companyName), autocomplete: "organization") : ""
        let addressFields = showsAddress ? """
            \(form.field("address", ctx.t(.street), autocomplete: "address-line1", required: addressRequired))
            <div class="row">\(form.field("postalCode", ctx.t(.postalCode), autocomplete: "postal-code", required: addressRequired))\(form.field("city", ctx.t(.city), autocomplete: "address-level2", required: addressRequired))</div>
            """ : ""
        return WebPage(title: ctx.t(.myAccount), body: """
            <h1>\(h(ctx.t(.myAccount)))</h1>
            \(notice.map { "<div class=\"alert ok\" role=\"status\">\(h($0))</div>" } ?? "")
            \(form.summary(message: message, shown: ["firstName", "lastName", "address", "postalCode", "city", "companyName", "currentPassword", "newPassword"]))
            <p>\(h(email)) · \(h(ctx.role(role)))</p>
            <form method="post" action="\(WebRoutes.account())" class="stack">\(form.hidden())
            <div class="row">\(form.field("firstName", ctx.t(.firstName), autocomplete: "given-name"))\(form.field("lastName", ctx.t(.lastName), autocomplete: "family-name"))</div>
            \(addressFields)
            \(company)
            <button type="submit" class="primary">\(h(ctx.t(.save)))</button>
            </form>
            \(showsAddress ? "<h2>\(h(ctx.t(.plPoints)))</h2><p>\(h(ctx.t(.pointsOnAccount))) <a href=\"\(WebRoutes.points())\">\(h(ctx.t(.plPoints)))</a></p>" : "")
            \(showsAddress ? "<h2>\(h(ctx.t(.subPlanTitle)))</h2><p>\(h(ctx.t(.planOnAccount))) <a href=\"\(WebRoutes.planPage())\">\(h(ctx.t(.subPlanTitle)))</a></p>" : "")
            <h2>\(h(ctx.t(.changePassword)))</h2>
            <form method="post" action="\(WebRoutes.accountPassword())" class="stack">\(form.hidden())
            <input type="hidden" name="username" value="\(h(email))" autocomplete="username">
            \(form.field("currentPassword", ctx.t(.currentPassword), type: "password", autocomplete: "current-password"))
            \(form.field("newPassword", ctx.t(.newPassword), type: "password", autocomplete: "new-password", hint: ctx.t(.passwordHint)))
            <button type="submit">\(h(ctx.t(.changePassword)))</button>
            </form>
            <h2>\(h(ctx.t(.profilePicture)))</h2>
            \(hasPicture ? "<p><img class=\"avatar\" src=\"\(WebRoutes.picture(userID))\" alt=\"\" width=\"96\" height=\"96\"></p>" : "")
            <form method="post" action="\(WebRoutes.accountPicture())" enctype="multipart/form-data" class="stack">\(form.hidden())
            <div class="field"><label for="f-photo">\(h(ctx.t(.pictureHint)))</label><input id="f-photo" type="file" name="photo" accept="image/jpeg,image/png" data-crop-square required></div>
            <button type="submit">\(h(ctx.t(.save)))</button>
            </form>
            <h2>\(h(ctx.t(.pushTitle)))</h2>
            <p><button type="button" data-enable-push hidden data-text-done="\(h(ctx.t(.pushOn)))" data-text-failed="\(h(ctx.t(.pushFailed)))">\(h(ctx.t(.pushEnable)))</button></p>
            <p data-push-state aria-live="polite"></p>
            <h2>\(h(ctx.t(.webhooks)))</h2>
            <p>\(h(ctx.t(.webhooksIntro))) <a href="\(WebRoutes.webhooks())">\(h(ctx.t(.webhooks)))</a></p>
            """, status: status, scripts: ["picture"])
    }
}

/// A person's notifications, newest first, and how many are unread.
struct NotificationsPage: PageView {
    var items: [Notification]
    var unread: Int

    static func load(for me: Principal, orders: Orders) async throws -> NotificationsPage {
        let page = try await orders.notifications(for: me, unreadOnly: false, cursor: nil, limit: 100)
        return NotificationsPage(items: page.items, unread: page.unread)
    }

    func page(_ ctx: WebContext) throws -> WebPage {
        let form = Form(ctx: ctx)
        let list = try items.map { n -> String in
            let id = try n.storedID
            return """
            <li class="\(n.readAt == nil ? "unread" : "read")">
            <p><strong>\(h(ctx.notificationTitle(n)))</strong> \(ctx.time(n.createdAt))</p>
            <p>\(h(n.body))</p>
            <p>\(n.orderID.map { "<a href=\"\(WebRoutes.order($0))\">\(h(ctx.t(.openDelivery)))</a>" } ?? "")
            \(n.readAt == nil ? "<form method=\"post\" action=\"\(WebRoutes.readNotification(id))\" class=\"inline\">\(form.hidden())<button type=\"submit\" class=\"link\">\(h(ctx.t(.markRead)))</button></form>" : "")</p>
            </li>
            """
        }.joined()
        return WebPage(title: ctx.t(.notifications), body: """
            <h1>\(h(ctx.t(.notifications)))</h1>
            <div id="notification-list" data-live-refresh="notification">
            \(unread > 0 ? "<form method=\"post\" action=\"\(WebRoutes.readAllNotifications())\">\(form.hidden())<button type=\"submit\">\(h(ctx.t(.markAllRead)))</button></form>" : "")
            \(list.isEmpty ? "<p>\(h(ctx.t(.noNotifications)))</p>" : "<ul class=\"notifications\">\(list)</ul>")
            </div>
            """)
    }
}
