import Foundation
import Vapor
import WaybillCore

/// `PUBLIC_URL/t/{token}`: the page behind a shared tracking link. It works without JavaScript
/// (reload to refresh); a small module keeps it current over the live channel.
struct TrackingPage: RouteCollection {
    func boot(routes: any RoutesBuilder) throws {
        routes.get(WebRoutes.trackingPage, use: page)
        routes.get("assets", "live-tracking.js", use: script)
    }

    /// What the public is told of each status: worded for the person waiting for the parcel.
    static func statusText(_ status: OrderStatus) -> Text {
        switch status {
        case .awaitingPayment: .pubAwaitingPayment
        case .pending: .pubPending
        case .assigned: .pubAssigned
        case .accepted: .pubAccepted
        case .inTransit: .pubInTransit
        case .delivered: .pubDelivered
        case .cancelled: .pubCancelled
        case .failed: .pubFailed
        }
    }

    /// In the visitor's language (their choice in the web app, else their browser's). The live
    /// island is language-neutral: the page hands it its texts in data attributes.
    func page(_ req: Request) async throws -> Response {
        let lang = Lang.choose(req)
        let token = req.parameters.get("token") ?? ""
        let view: Tracking.PublicView
        do {
            view = try await Tracking(request: req).publicView(token: token, clientAddress: req.clientAddress)
        } catch let error as WaybillError where error.status == .notFound {
            return Self.html(status: .notFound, lang: lang, title: Text.pubNotFoundTitle.in(lang), body: """
                <h1>\(h(Text.pubNotFoundTitle.in(lang)))</h1><p>\(h(Text.pubNotFound.in(lang)))</p>
                """)
        }
        let status = Self.statusText(view.order.status).in(lang)
        let timeline = view.timeline.map { step in
            "<li><time datetime=\"\(Self.iso(step.at))\">\(Self.iso(step.at))</time> — \(h(Self.statusText(step.status).in(lang)))</li>"
        }.joined()
        let eta = view.eta.map { estimate -> String in
            let time = "<time datetime=\"\(Self.iso(estimate.arrivesAt))\">\(Self.iso(estimate.arrivesAt))</time>"
            let text = (estimate.stop == .pickup ? Text.pubEtaPickup : Text.pubEtaDropoff)
                .format(lang, ["\u{0}", String(format: "%.1f", Double(estimate.distanceMeters) / 1000)])
            return "<p id=\"eta\">\(h(text).replacingOccurrences(of: "\u{0}", with: time))</p>"
        } ?? #"<p id="eta" hidden></p>"#
        let position = view.position.map { p in
            let link = #"<a href="https://www.openstreetmap.org/?mlat=\#(p.latitude)&mlon=\#(p.longitude)#map=16/\#(p.latitude)/\#(p.longitude)">\#(String(format: "%.5f, %.5f", p.latitude, p.longitude))</a>"#
            return #"<p id="position">"# + h(Text.pubPosition.format(lang, ["\u{0}"])).replacingOccurrences(of: "\u{0}", with: link) + "</p>"
        } ?? #"<p id="position" hidden></p>"#
        let driver = view.driverFirstName.map { "<p>" + h(Text.pubYourDriver.format(lang, ["\u{0}"])).replacingOccurrences(of: "\u{0}", with: "<strong>\(h($0))</strong>") + "</p>" } ?? ""
        var statuses: [String: String] = [:]
        for s in OrderStatus.allCases { statuses[s.rawValue] = Self.statusText(s).in(lang) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let statusJSON = String(decoding: (try? encoder.encode(statuses)) ?? Data("{}".utf8), as: UTF8.self)
        // The statuses in which the public sees the position: the rule's (`PublicTrackingView`), for the script.
        let positionStatuses = OrderStatus.allCases.filter { PublicTrackingView.visible(in: $0).position }.map(\.rawValue).joined(separator: " ")
        let texts = [("eta-pickup", Text.pubEtaPickup), ("eta-dropoff", Text.pubEtaDropoff), ("position", Text.pubPosition),
                     ("live-on", Text.pubLiveOn), ("live-off", Text.pubLiveOff), ("reconnecting", Text.pubReconnecting),
                     ("withdrawn", Text.pubWithdrawn)]
            .map { " data-text-\($0.0)=\"\(h($0.1.in(lang)))\"" }.joined()
        return Self.html(status: .ok, lang: lang, title: Text.pubTitle.format(lang, [status]), body: """
            <h1 id="status" data-token="\(h(token))" data-statuses="\(h(statusJSON))" data-position-statuses="\(h(positionStatuses))"\(texts)>\(h(status))</h1>
            \(driver)
            \(eta)
            \(position)
            <h2>\(h(Text.pubProgress.in(lang)))</h2>
            <ol id="timeline">\(timeline)</ol>
            <p class="hint" id="live-state">\(h(Text.pubReload.in(lang)))</p>
            <script type="module" src="/assets/live-tracking.js"></script>
            """)
    }

    static func iso(_ millis: Int64) -> String {
        ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: Double(millis) / 1000))
    }

    static func html(status: HTTPResponseStatus, lang: Lang, title: String, body: String) -> Response {
        let html = """
            <!doctype html>
            <html lang="\(lang.rawValue)"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
            <meta name="referrer" content="no-referrer"><meta name="robots" content="noindex">
            <title>\(PaymentPages.escape(title)) · Waybill</title>
            <style>
            body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:0 auto;padding:1rem;color:#1a1a1a}
            h1{font-size:1.6rem}.hint{color:#555;font-size:.9rem}a{color:#0b5cad}
            a:focus-visible{outline:3px solid #1a1a1a;outline-offset:2px}
            </style></head>
            <body><main>\(body)</main></body></html>
            """
        var headers = HTTPHeaders()
        headers.contentType = .html
        headers.replaceOrAdd(name: "Content-Security-Policy",
                             value: "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'unsafe-inline'; frame-ancestors 'none'")
        headers.replaceOrAdd(name: .cacheControl, value: "no-store")
        return Response(status: status, headers: headers, body: .init(string: html))
    }

    /// The live island: asks for a ticket with the link's token, subscribes, and updates the page.
    func script(_ req: Request) async throws -> Response {
        var headers = HTTPHeaders()
        headers.replaceOrAdd(name: .contentType, value: "text/javascript; charset=utf-8")
        headers.replaceOrAdd(name: .cacheControl, value: "public, max-age=300")
        return Response(status: .ok, headers: headers, body: .init(string: Self.javascript))
    }

    static let javascript = #"""
    // The page's language is the server's choice: the texts come from the heading's data attributes.
    const heading = document.getElementById("status");
    const token = heading?.dataset.token;
    const statusText = JSON.parse(heading?.dataset.statuses || "{}");
    const positionStatuses = (heading?.dataset.positionStatuses || "").split(" ");
    const text = (name, ...args) => args.reduce((t, arg) => t.replace("%@", arg), heading?.dataset["text" + name] || "");
    const state = document.getElementById("live-state");
    let lastId = null, delay = 1000;
    const iso = (ms) => new Date(ms).toISOString();

    async function connect() {
      try {
        const reply = await fetch("/api/v1/live/ticket", {method: "POST", headers: {"Content-Type": "application/json"},
          body: JSON.stringify({trackingToken: token})});
        if (!reply.ok) { state.textContent = text("LiveOff"); return; }
        const {url} = await reply.json();
        const socket = new WebSocket(url);
        socket.onopen = () => {
          delay = 1000;
          state.textContent = text("LiveOn");
          socket.send(JSON.stringify(lastId === null ? {type: "subscribe", topic: "tracking:" + token}
                                                     : {type: "subscribe", topic: "tracking:" + token, since: lastId}));
        };
        socket.onmessage = (message) => show(JSON.parse(message.data));
        socket.onclose = () => { state.textContent = text("Reconnecting"); setTimeout(connect, delay); delay = Math.min(delay * 2, 30000); };
      } catch { setTimeout(connect, delay); delay = Math.min(delay * 2, 30000); }
    }

    function show(event) {
      if (typeof event.id === "number") lastId = event.id;
      const data = event.data || {};
      if (event.type === "status") {
        heading.textContent = statusText[data.status] || data.status;
        const item = document.createElement("li");
        item.textContent = iso(data.at) + " — " + (statusText[data.status] || data.status);
        document.getElementById("timeline").append(item);
        if (!positionStatuses.includes(data.status)) document.getElementById("position").hidden = true;
      } else if (event.type === "location") {
        const p = document.getElementById("position");
        p.hidden = false;
        p.textContent = text("Position", data.latitude.toFixed(5) + ", " + data.longitude.toFixed(5) + " (" + iso(data.recordedAt) + ")");
      } else if (event.type === "eta") {
        const p = document.getElementById("eta");
        p.hidden = false;
        p.textContent = text(data.stop === "pickup" ? "EtaPickup" : "EtaDropoff", iso(data.arrivesAt), (data.distanceMeters / 1000).toFixed(1));
      } else if (event.type === "error" && event.code === "link_revoked") {
        state.textContent = text("Withdrawn");
      }
    }

    if (token) connect();
    """#
}
