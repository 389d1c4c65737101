import Crypto
import Foundation
import Vapor
import WaybillCore

/// The web app: server-rendered pages for every role, the small JSON endpoints its islands call
/// with the session cookie (and the CSRF header), and its static files.
enum WebApp {
    static func register(_ app: Application) throws {
        let web = app.grouped(WebSessionMiddleware()).grouped(WebRedirectMiddleware()).grouped(WebUnreadMiddleware())
        AccountPages().register(web)
        OrderPages().register(web)
        DriverPages().register(web)
        TravelPages().register(web)
        ParcelPages().register(web)
        IntegrationPages().register(web)
        ImportPages().register(web)
        RoutePages().register(web)
        ConversationPages().register(web)
        HandoverPages().register(web)
        TimeslotPages().register(web)
        CounterPages().register(web)
        DeskPages().register(web)
        RatingPages().register(web)
        StatisticsPages().register(web)
        DispatchPages().register(web)
        AdminPages().register(web)
        ClaimPages().register(web)
        LoyaltyPages().register(web)
        PlanPages().register(web)
        IslandEndpoints().register(web.grouped("app"))
        WebAssets.register(app)
        web.get(WebRoutes.offline, use: offline)
    }

    @Sendable static func offline(_ req: Request) async throws -> Response {
        let ctx = try req.web
        let response = WebPage(title: ctx.t(.offlineTitle), body: """
            <h1>\(h(ctx.t(.offlineTitle)))</h1><p>\(h(ctx.t(.offlineText)))</p><p><a href="\(WebRoutes.home())">\(h(ctx.t(.tryAgain)))</a></p>
            """).render(ctx)
        response.headers.replaceOrAdd(name: .cacheControl, value: "public, max-age=300")
        return response
    }
}

/// JSON endpoints for the islands, with the web session: the same services as the API.
struct IslandEndpoints {
    func register(_ routes: any RoutesBuilder) {
        routes.post("live-ticket", use: liveTicket)
        routes.post("duty", use: duty)
        routes.post("positions", use: positions)
        routes.post("devices", use: device)
        routes.get("areas", use: areas)
    }

    /// Area suggestions for the travel forms (`areas.js`): names in the page's language, with the
    /// areas above them.
    func areas(_ req: Request) async throws -> Response {
        await Self.run(req) {
            _ = try Self.principal(req)
            let lang = try req.web.lang.rawValue
            let (_, matches) = try await Travel(request: req).searchAreas(req.query[String.self, at: "q"] ?? "", limit: 8, within: nil)
            return Self.json(["items": matches.map { m in
                ["id": m.area.id.rawValue, "name": m.area.name(in: lang), "level": m.area.level,
                 "path": m.ancestors.prefix(2).map { $0.name(in: lang) }.joined(separator: ", ")] as [String: Any]
            }])
        }
    }

    static func principal(_ req: Request) throws -> Principal {
        guard let principal = try req.web.principal else { throw WaybillError.unauthenticated }
        return principal
    }

    static func json(_ object: [String: Any], status: HTTPResponseStatus = .ok) -> Response {
        var headers = HTTPHeaders()
        headers.contentType = .json
        headers.replaceOrAdd(name: .cacheControl, value: "no-store")
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.withoutEscapingSlashes])) ?? Data("{}".utf8)
        return Response(status: status, headers: headers, body: .init(data: data))
    }

    /// Errors here are JSON like the API's, never pages; `localized`: their message in the page's
    /// language, for an island that shows it as it is.
    static func run(_ req: Request, localized: Bool = false, _ body: () async throws -> Response) async -> Response {
        do {
            return try await body()
        } catch let error as WaybillError {
            let message = localized ? ((try? req.web).map { $0.message(error) } ?? error.message) : error.message
            var payload: [String: Any] = ["code": error.code.rawValue, "message": message]
            if let fields = error.fields { payload["fields"] = fields }
            let response = json(["error": payload], status: error.status)
            if let retry = error.retryAfter { response.headers.replaceOrAdd(name: .retryAfter, value: String(retry)) }
            return response
        } catch let error as FieldErrorsError {
            return json(["error": ["code": "validation_failed", "message": "Some fields are missing or invalid.", "fields": error.errors.fields]],
                        status: .unprocessableEntity)
        } catch {
            return json(["error": ["code": "bad_request", "message": "The request could not be read."]], status: .badRequest)
        }
    }

    func liveTicket(_ req: Request) async throws -> Response {
        await Self.run(req) {
            let me = try Self.principal(req)
            let issued = try await LiveTickets.issue(for: me, trackingToken: nil, clientAddress: req.clientAddress, app: req.application, db: req.db)
            return Self.json(["ticket": issued.ticket, "url": req.application.waybill.config.liveSocketBase + "/api/v1/live?ticket=" + issued.ticket,
                              "expiresAt": issued.expiresAt], status: .created)
        }
    }

    struct DutyBody: Content { var onDuty: Bool }

    func duty(_ req: Request) async throws -> Response {
        await Self.run(req) {
            let me = try Self.principal(req)
            let body = try req.content.decode(DutyBody.self)
            let state = try await Tracking(request: req).setDuty(body.onDuty, by: me)
            return Self.json(["onDuty": state.onDuty])
        }
    }

    struct PositionsBody: Content {
        struct Point: Content {
            var latitude: Double
            var longitude: Double
            var accuracy: Double?
            var heading: Double?
            var speed: Double?
            var recordedAt: String
        }
        var positions: [Point]
    }

    func positions(_ req: Request) async throws -> Response {
        await Self.run(req) {
            let me = try Self.principal(req)
            let body = try req.content.decode(PositionsBody.self)
            guard !body.positions.isEmpty, body.positions.count <= 500 else { throw WaybillError.validation("positions", "invalid") }
            let parser = ISO8601DateFormatter()
            parser.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            let plain = ISO8601DateFormatter()
            var batch: [PositionReport] = []
            for (index, p) in body.positions.enumerated() {
                guard let date = parser.date(from: p.recordedAt) ?? plain.date(from: p.recordedAt), let millis = UnixTime.millis(date) else {
                    throw WaybillError.validation("positions[\(index)].recordedAt", "invalid")
                }
                batch.append(PositionReport(latitude: p.latitude, longitude: p.longitude, accuracy: p.accuracy, heading: p.heading,
                                            speed: p.speed, recordedAt: millis))
            }
            let result = try await Tracking(request: req).report(batch, by: me)
            return Self.json(["accepted": result.accepted, "ignored": result.ignored])
        }
    }

    struct DeviceBody: Content {
        struct Subscription: Content {
            struct Keys: Content { var p256dh: String; var auth: String }
            var endpoint: String
            var keys: Keys
        }
        var subscription: Subscription
    }

    /// A browser's Web Push subscription, stored like an app's device.
    func device(_ req: Request) async throws -> Response {
        await Self.run(req) {
            let me = try Self.principal(req)
            let body = try req.content.decode(DeviceBody.self)
            let token = String(decoding: try JSONEncoder().encode(body.subscription), as: UTF8.self)
            _ = try await Accounts(request: req).registerDevice(me, platform: .web, pushToken: token)
            return Self.json(["status": "SUCCESS"], status: .created)
        }
    }
}

/// The web app's own files (CSS, islands, service worker, manifest, icons) from the bundle, and
/// Leaflet from `VENDOR_ASSETS_PATH` (put there by scripts/setup-assets).
enum WebAssets {
    static let types = ["css": "text/css; charset=utf-8", "js": "text/javascript; charset=utf-8", "svg": "image/svg+xml",
                        "png": "image/png", "webmanifest": "application/manifest+json", "json": "application/json"]

    /// The bundled files and a hash of them, read once per process (a `static let` is initialised
    /// exactly once, whichever thread or test asks first).
    private static let bundle: (files: [String: (Data, String)], version: String) = {
        guard let root = Bundle.module.resourceURL?.appendingPathComponent("web") else { return ([:], "0") }
        var loaded: [String: (Data, String)] = [:]
        var hasher = SHA256()
        let enumerator = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)
        var urls: [URL] = []
        while let url = enumerator?.nextObject() as? URL { urls.append(url) }
        for url in urls.sorted(by: { $0.path < $1.path }) {
            guard let data = try? Data(contentsOf: url), let type = types[url.pathExtension] else { continue }
            let relative = String(url.standardizedFileURL.path.dropFirst(root.standardizedFileURL.path.count + 1))
            loaded[relative] = (data, type)
            hasher.update(data: Data(relative.utf8))
            hasher.update(data: data)
        }
        // An operator's release name (`WEB_RELEASE`) counts too: a deployment can ask installed apps
        // to update (their offline page, the shell) even when no file of the bundle changed.
        if let release = ProcessInfo.processInfo.environment["WEB_RELEASE"], !release.isEmpty { hasher.update(data: Data(release.utf8)) }
        return (loaded, String(Data(hasher.finalize()).base64URLEncodedString().prefix(10)))
    }()

    /// Changes with the files, so pages can ask browsers to cache them for long.
    static var version: String { bundle.version }
    private static var files: [String: (Data, String)] { bundle.files }

    static func file(_ path: String) -> (Data, String)? { files[path] }

    /// The service worker, written once per process with the bundle's version: a deployment that
    /// changes the app changes the worker's bytes, which is what makes browsers install the new one
    /// (and ui.js offer it).
    private static let worker: String? = file("sw.js").map {
        String(decoding: $0.0, as: UTF8.self).replacingOccurrences(of: #"const VERSION = "dev";"#, with: #"const VERSION = "\#(version)";"#)
    }

    static func register(_ app: Application) {
        app.get("assets", "app.css") { req in serve(req, "app.css", maxAge: 31_536_000) }
        app.get("assets", "js", ":name") { req in serve(req, "js/" + (req.parameters.get("name") ?? ""), maxAge: 31_536_000) }
        app.get("assets", "icons", ":name") { req in serve(req, "icons/" + (req.parameters.get("name") ?? ""), maxAge: 86_400) }
        app.get("sw.js") { req in
            guard let script = worker else { return Response(status: .notFound) }
            var headers = HTTPHeaders()
            headers.replaceOrAdd(name: .contentType, value: types["js"] ?? "text/javascript; charset=utf-8")
            headers.replaceOrAdd(name: .cacheControl, value: "no-cache")
            return Response(status: .ok, headers: headers, body: .init(string: script))
        }
        app.get("manifest.webmanifest") { req in manifest(req) }
        app.get("assets", "vendor", "leaflet", "**") { req async throws -> Response in
            let parts = req.parameters.getCatchall()
            guard !parts.isEmpty, parts.allSatisfy({ !$0.isEmpty && $0 != ".." && !$0.hasPrefix(".") && !$0.contains("\\") }) else {
                throw Abort(.notFound)
            }
            let path = req.application.waybill.config.vendorAssetsPath + "/leaflet/" + parts.joined(separator: "/")
            guard let data = FileManager.default.contents(atPath: path) else { throw Abort(.notFound) }
            let ext = ((parts.last ?? "") as NSString).pathExtension
            var headers = HTTPHeaders()
            headers.replaceOrAdd(name: .contentType, value: types[ext] ?? "application/octet-stream")
            headers.replaceOrAdd(name: .cacheControl, value: "public, max-age=86400")
            return Response(status: .ok, headers: headers, body: .init(data: data))
        }
    }

    /// The manifest, with the shortcuts of the person's tabs (`?tabs=today,map,…`, from `TabPolicy`
    /// on the page that links it) named in the page's language (`?lang=`): an installed app's icon
    /// then offers a driver Today and Map, a customer Send and Parcels. Unknown tabs are ignored.
    static func manifest(_ req: Request) -> Response {
        guard let (data, type) = file("manifest.webmanifest"),
              var object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else { return Response(status: .notFound) }
        let lang = req.query[String.self, at: "lang"].flatMap(Lang.init(rawValue:)) ?? .en
        let tabs = (req.query[String.self, at: "tabs"] ?? "").split(separator: ",").prefix(AppTab.allCases.count).compactMap { AppTab(rawValue: String($0)) }
        if !tabs.isEmpty {
            object["lang"] = lang.rawValue
            object["shortcuts"] = tabs.map { tab -> [String: Any] in
                let (url, name) = WebPage.tabTarget(tab, lang)
                return ["name": name, "short_name": name, "url": url,
                        "icons": [["src": "/assets/icons/icon-192.png", "sizes": "192x192", "type": "image/png"]]]
            }
        }
        let body = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? data
        var headers = HTTPHeaders()
        headers.replaceOrAdd(name: .contentType, value: type)
        headers.replaceOrAdd(name: .cacheControl, value: "public, max-age=86400")
        return Response(status: .ok, headers: headers, body: .init(data: body))
    }

    static func serve(_ req: Request, _ path: String, maxAge: Int) -> Response {
        guard let (data, type) = file(path) else { return Response(status: .notFound) }
        var headers = HTTPHeaders()
        headers.replaceOrAdd(name: .contentType, value: type)
        headers.replaceOrAdd(name: .cacheControl, value: maxAge > 0 && req.query[String.self, at: "v"] == version ? "public, max-age=\(maxAge), immutable" : "public, max-age=300")
        return Response(status: .ok, headers: headers, body: .init(data: data))
    }
}
