import Foundation
import Vapor
import WaybillCore

/// `PUBLIC_URL/t/{token}`: the page behind a shared tracking link. It works without JavaScript
/// (reload to refresh); a small module keeps it current over the live channel.
struct TrackingPage: RouteCollection {
    func boot(routes: any RoutesBuilder) throws {
        routes.get("t", ":token", use: page)
        routes.get("assets", "live-tracking.js", use: script)
    }

    static let statusText: [OrderStatus: String] = [
        .awaitingPayment: "Waiting for payment", .pending: "Order received", .assigned: "Driver assigned",
        .accepted: "Driver on the way to pick up", .inTransit: "On its way to you", .delivered: "Delivered",
        .cancelled: "Cancelled", .failed: "Delivery failed",
    ]

    func page(_ req: Request) async throws -> Response {
        let token = req.parameters.get("token") ?? ""
        let view: Tracking.PublicView
        do {
            view = try await Tracking(request: req).publicView(token: token, clientAddress: req.clientAddress)
        } catch let error as WaybillError where error.status == .notFound {
            return Self.html(status: .notFound, title: "Tracking link not found", body: """
                <h1>Tracking link not found</h1><p>This link does not exist or was withdrawn by the sender.</p>
                """)
        }
        let e = PaymentPages.escape
        let status = Self.statusText[view.order.status] ?? view.order.status.rawValue
        let timeline = view.timeline.map { step in
            "<li><time datetime=\"\(Self.iso(step.at))\">\(Self.iso(step.at))</time> — \(e(Self.statusText[step.status] ?? step.status.rawValue))</li>"
        }.joined()
        let eta = view.eta.map { "<p id=\"eta\">Expected at the \($0.stop == .pickup ? "pickup" : "drop-off") around <time datetime=\"\(Self.iso($0.arrivesAt))\">\(Self.iso($0.arrivesAt))</time> (\(String(format: "%.1f", Double($0.distanceMeters) / 1000)) km away).</p>" } ?? #"<p id="eta" hidden></p>"#
        let position = view.position.map { p in
            #"<p id="position">Driver’s position: <a href="https://www.openstreetmap.org/?mlat=\#(p.latitude)&mlon=\#(p.longitude)#map=16/\#(p.latitude)/\#(p.longitude)">\#(String(format: "%.5f, %.5f", p.latitude, p.longitude))</a></p>"#
        } ?? #"<p id="position" hidden></p>"#
        let driver = view.driverFirstName.map { "<p>Your driver: <strong>\(e($0))</strong></p>" } ?? ""
        return Self.html(status: .ok, title: "Tracking · \(status)", body: """
            <h1 id="status" data-token="\(e(token))">\(e(status))</h1>
            \(driver)
            \(eta)
            \(position)
            <h2>Progress</h2>
            <ol id="timeline">\(timeline)</ol>
            <p class="hint" id="live-state">Reload the page for the latest news.</p>
            <script type="module" src="/assets/live-tracking.js"></script>
            """)
    }

    static func iso(_ millis: Int64) -> String {
        ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: Double(millis) / 1000))
    }

    static func html(status: HTTPResponseStatus, title: String, body: String) -> Response {
        let html = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
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
    const statusText = {awaiting_payment: "Waiting for payment", pending: "Order received", assigned: "Driver assigned",
      accepted: "Driver on the way to pick up", in_transit: "On its way to you", delivered: "Delivered",
      cancelled: "Cancelled", failed: "Delivery failed"};
    const heading = document.getElementById("status");
    const token = heading?.dataset.token;
    const state = document.getElementById("live-state");
    let lastId = null, delay = 1000;
    const iso = (ms) => new Date(ms).toISOString();

    async function connect() {
      try {
        const reply = await fetch("/api/v1/live/ticket", {method: "POST", headers: {"Content-Type": "application/json"},
          body: JSON.stringify({trackingToken: token})});
        if (!reply.ok) { state.textContent = "Live updates are not available."; return; }
        const {url} = await reply.json();
        const socket = new WebSocket(url);
        socket.onopen = () => {
          delay = 1000;
          state.textContent = "Live: this page updates by itself.";
          socket.send(JSON.stringify(lastId === null ? {type: "subscribe", topic: "tracking:" + token}
                                                     : {type: "subscribe", topic: "tracking:" + token, since: lastId}));
        };
        socket.onmessage = (message) => show(JSON.parse(message.data));
        socket.onclose = () => { state.textContent = "Reconnecting…"; setTimeout(connect, delay); delay = Math.min(delay * 2, 30000); };
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
        if (data.status !== "in_transit") document.getElementById("position").hidden = true;
      } else if (event.type === "location") {
        const p = document.getElementById("position");
        p.hidden = false;
        p.textContent = "Driver’s position: " + data.latitude.toFixed(5) + ", " + data.longitude.toFixed(5) + " at " + iso(data.recordedAt);
      } else if (event.type === "eta") {
        const p = document.getElementById("eta");
        p.hidden = false;
        p.textContent = "Expected at the " + (data.stop === "pickup" ? "pickup" : "drop-off") + " around " + iso(data.arrivesAt)
          + " (" + (data.distanceMeters / 1000).toFixed(1) + " km away).";
      } else if (event.type === "error" && event.code === "link_revoked") {
        state.textContent = "This tracking link was withdrawn.";
      }
    }

    if (token) connect();
    """#
}
