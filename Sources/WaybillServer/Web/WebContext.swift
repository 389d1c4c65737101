import Crypto
import Foundation
import Vapor
import WaybillCore

/// What every web page knows about its request: who is signed in (if anyone), the language, and
/// the form token that proves a POST came from one of our pages.
struct WebContext: Sendable {
    let request: Request
    let principal: Principal?
    let lang: Lang
    /// The CSRF secret for this visitor: bound to the web session, or to the anonymous cookie before
    /// sign-in. Never sent as it is: see `csrf`.
    let csrfSecret: String
    /// The CSRF token to put in a page: the secret under a fresh random mask each time. Pages are
    /// sent compressed, and a secret repeated unchanged beside text an attacker chose could be read
    /// from the compressed size (BREACH); a masked token differs in every response.
    var csrf: String { WebSessionMiddleware.masked(csrfSecret) }
    /// The newest live event this process had seen when the request began: the page's live island
    /// subscribes from there, so an event that lands between reading the page's data and opening
    /// the socket is replayed, not lost.
    var liveSince: Int64 = 0

    var user: User? { principal?.user }
    var role: Role? { principal?.user.role }

    func t(_ text: Text) -> String { text.in(lang) }
    func t(_ text: Text, _ args: String...) -> String { text.format(lang, args) }

    /// Under https the cookies carry the `__Host-` prefix: the browser then only takes them from this
    /// very host, over https, for the whole site — no subdomain or plain-http page can plant one.
    static func sessionCookie(_ req: Request) -> String { cookieName("wb_session", req) }
    static func anonCookie(_ req: Request) -> String { cookieName("wb_anon", req) }
    static func langCookie(_ req: Request) -> String { cookieName("wb_lang", req) }

    static func cookieName(_ base: String, _ req: Request) -> String {
        req.application.waybill.config.publicURL.hasPrefix("https://") ? "__Host-" + base : base
    }
}

private struct WebContextKey: StorageKey { typealias Value = WebContext }

extension Request {
    /// Set by `WebSessionMiddleware` on every web route.
    var web: WebContext {
        get throws {
            guard let context = storage[WebContextKey.self] else { throw Abort(.internalServerError) }
            return context
        }
    }

    fileprivate func setWeb(_ context: WebContext) { storage[WebContextKey.self] = context }
}

/// Reads the session cookie and the language, and checks the CSRF token of every state-changing
/// request. Pages that need a signed-in person ask `WebAuth.require`.
struct WebSessionMiddleware: AsyncMiddleware {
    func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        let services = request.application.waybill
        var principal: Principal?
        var clearSession = false
        if let cookie = request.cookies[WebContext.sessionCookie(request)]?.string, !cookie.isEmpty {
            do {
                principal = try await Accounts(request: request).authenticate(webCookie: cookie)
            } catch let error as WaybillError where error.status == .unauthorized || error.status == .forbidden {
                clearSession = true  // ended, expired or disabled: back to the sign-in page
            }
        }
        var anon = request.cookies[WebContext.anonCookie(request)]?.string ?? ""
        var newAnon = false
        if principal == nil, anon.count != 32 || !anon.allSatisfy(\.isHexDigit) {
            anon = randomHex(bytes: 16)
            newAnon = true
        }
        let binding = principal.map { "s:" + $0.sessionID.uuidString } ?? "a:" + anon
        let csrf = Self.csrfToken(binding, secret: services.config.jwtSecret)
        var context = WebContext(request: request, principal: principal, lang: Lang.choose(request), csrfSecret: csrf)
        context.liveSince = request.application.waybill.liveFeed.newestID
        request.setWeb(context)

        if request.method != .GET, request.method != .HEAD {
            // Read the body here (bounded) so the token can be checked before any handler runs.
            let isUpload = request.headers.contentType == .formData
            if isUpload, !Self.mayUpload(request, principal: principal) {
                // Uploads are large: refused from the headers alone, before a byte of the body is
                // kept, when nobody is signed in or another site sent them. The connection closes
                // rather than reading the rest of what was announced.
                let refused = WebErrors.csrfRefused(context)
                refused.headers.replaceOrAdd(name: .connection, value: "close")
                return refused
            }
            do {
                _ = try await request.body.collect(max: isUpload ? WebLimits.uploadBody : WebLimits.formBody).get()
            } catch {
                return WebErrors.page(for: WaybillError(.payloadTooLarge, .payloadTooLarge, "The form is too large."), context)
            }
            // The form reader (MultipartKit) traps on some malformed bodies instead of refusing them:
            // those are refused here, after one linear pass over the body (`MultipartShape`).
            if isUpload, let boundary = request.headers.contentType?.parameters["boundary"],
               !(request.body.data?.withUnsafeReadableBytes { MultipartShape.isReadable($0, boundary: boundary) } ?? true) {
                return WebErrors.page(for: WaybillError(.badRequest, .invalidMultipart, "The uploaded form is malformed; send it again from the page."), context)
            }
            // NUL is no text a person types, and PostgreSQL cannot store it: refuse it in any form field
            // (an urlencoded body spells it %00; multipart text fields are checked where they are read).
            if request.headers.contentType == .urlEncodedForm,
               let body = request.body.string, body.range(of: "%00", options: .caseInsensitive) != nil {
                return WebErrors.page(for: WaybillError(.badRequest, .invalidCharacter, "A field holds a character that cannot be stored."), context)
            }
            let given = request.headers.first(name: "X-CSRF-Token") ?? Self.formToken(request)
            guard let given, let unmasked = Self.unmasked(given), constantTimeEquals(unmasked, Data(base64URLEncoded: csrf) ?? Data()) else {
                return WebErrors.csrfRefused(context)
            }
        }
        let response: Response
        do {
            response = try await next.respond(to: request)
        } catch let error as WaybillError where error.code == .reauthenticationRequired && principal != nil {
            // Admin work with a password proven too long ago: ask for it, then come back.
            response = request.redirect(to: WebRedirect.confirmPassword(request).location, redirectType: .normal)
        } catch let error as WaybillError {
            response = WebErrors.page(for: error, context)
        } catch let error as FieldErrorsError {
            response = WebErrors.page(for: error.apiError, context)
        } catch let error as any AbortError where !(error is WebRedirect) {
            response = WebErrors.page(for: WaybillError(error.status, .badRequest, error.reason), context)
        }
        let secure = services.config.publicURL.hasPrefix("https://")
        if clearSession {
            response.cookies[WebContext.sessionCookie(request)] = WebCookies.expired(secure: secure)
        }
        if newAnon {
            response.cookies[WebContext.anonCookie(request)] = WebCookies.make(anon, maxAge: nil, secure: secure)
        }
        return response
    }

    /// Whether a multipart body may be read at all: only from a signed-in person, and, when the
    /// browser says where the form came from (`Origin`, `Sec-Fetch-Site`), only from this site.
    /// Its CSRF token is then checked as for any form, once the (bounded) body is in.
    static func mayUpload(_ request: Request, principal: Principal?) -> Bool {
        guard principal != nil else { return false }
        if let site = request.headers.first(name: "Sec-Fetch-Site")?.lowercased(), site != "same-origin", site != "none" { return false }
        // Our pages send `Referrer-Policy: no-referrer`, under which browsers send `Origin: null` even
        // for their own forms: "null" says nothing, `Sec-Fetch-Site` then decides.
        if let origin = request.headers.first(name: .origin)?.lowercased(), origin != "null",
           !request.application.waybill.config.liveAllowedOrigins.contains(origin) { return false }
        return true
    }

    /// HMAC of the session (or anonymous visitor) under the server's secret: nothing to store,
    /// and useless to anyone who cannot read our pages.
    static func csrfToken(_ binding: String, secret: [UInt8]) -> String {
        let mac = HMAC<SHA256>.authenticationCode(for: Data(("csrf|" + binding).utf8), using: SymmetricKey(data: secret))
        return Data(mac).base64URLEncodedString()
    }

    /// The secret's bytes under a random mask of the same length, sent as the mask then the
    /// masked bytes.
    static func masked(_ secret: String) -> String {
        let raw = [UInt8](Data(base64URLEncoded: secret) ?? Data(secret.utf8))
        var mask = [UInt8](repeating: 0, count: raw.count)
        var generator = SystemRandomNumberGenerator()
        for index in mask.indices { mask[index] = generator.next() }
        return Data(mask + zip(raw, mask).map { $0 ^ $1 }).base64URLEncodedString()
    }

    /// The secret's bytes from a masked token, or nil when it is not one.
    static func unmasked(_ token: String) -> Data? {
        guard token.count <= 200, let data = Data(base64URLEncoded: token), data.count >= 2, data.count % 2 == 0 else { return nil }
        let bytes = [UInt8](data)
        let half = bytes.count / 2
        return Data(zip(bytes[..<half], bytes[half...]).map { $0 ^ $1 })
    }

    /// `_csrf` from an urlencoded or multipart form.
    static func formToken(_ request: Request) -> String? {
        guard let type = request.headers.contentType else { return nil }
        if type == .urlEncodedForm || type == .formData {
            return try? request.content.get(String.self, at: "_csrf")
        }
        return nil
    }
}

enum WebLimits {
    static let formBody = 256 * 1024
    /// A signature and a photo from a phone's camera.
    static let uploadBody = 16 * 1024 * 1024
}

enum WebCookies {
    static func make(_ value: String, maxAge: Int?, secure: Bool) -> HTTPCookies.Value {
        HTTPCookies.Value(string: value, expires: nil, maxAge: maxAge, domain: nil, path: "/", isSecure: secure,
                          isHTTPOnly: true, sameSite: .lax)
    }

    static func expired(secure: Bool) -> HTTPCookies.Value {
        HTTPCookies.Value(string: "", expires: Date(timeIntervalSince1970: 0), maxAge: 0, domain: nil, path: "/",
                          isSecure: secure, isHTTPOnly: true, sameSite: .lax)
    }
}

/// Who may see a page.
enum WebAuth {
    /// The signed-in person, or a redirect to the sign-in page that comes back here afterwards.
    /// The signed-in caller (else a redirect to sign in) and, for pages that show a form before
    /// any service is asked, the `Permission` the page's service will require (else 403).
    static func require(_ req: Request, _ permission: Permission? = nil) throws -> (WebContext, Principal) {
        let context = try req.web
        guard let principal = context.principal else { throw WebRedirect.signIn(req) }
        if let permission { try principal.require(permission) }
        return (context, principal)
    }
}

/// Thrown to leave a handler with a redirect.
struct WebRedirect: Error {
    let location: String

    static func signIn(_ req: Request) -> WebRedirect {
        let back = req.url.path + (req.url.query.map { "?" + $0 } ?? "")
        return WebRedirect(location: WebRoutes.login(query: "next=" + (back.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "/")))
    }
}

struct WebRedirectMiddleware: AsyncMiddleware {
    func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        do {
            return try await next.respond(to: request)
        } catch let redirect as WebRedirect {
            return request.redirect(to: redirect.location, redirectType: .normal)
        }
    }
}

/// Refuses a multipart form's text fields holding NUL (see `WebSessionMiddleware`).
func requireStorableText(_ values: [String?]) throws {
    if values.contains(where: { $0?.unicodeScalars.contains("\u{0}") == true }) {
        throw WaybillError(.badRequest, .invalidCharacter, "A field holds a character that cannot be stored.")
    }
}

/// A local path to go back to after signing in: never another site (the rule: `RedirectPolicy`).
func safeLocalPath(_ raw: String?) -> String? {
    RedirectPolicy.safeLocalPath(raw)
}
