import AsyncHTTPClient
import Foundation
import NIOCore
import Vapor

/// The three push services Waybill can reach. The devices table says `ios`, `android` or `web`;
/// the push service is what matters here, because a web subscription may live on any browser.
enum PushPlatform: String, Sendable, CaseIterable {
    case apns, fcm, webPush

    /// `ios` → APNs, `android` → FCM, `web` → Web Push; nil for anything else.
    init?(devicePlatform: String) {
        switch devicePlatform {
        case "ios": self = .apns
        case "android": self = .fcm
        case "web": self = .webPush
        default: return nil
        }
    }
}

/// One notification, the same for every platform; each sender shapes it for its service.
struct PushMessage: Sendable, Equatable {
    var title: String
    var body: String
    /// Handed to the app as is (APNs: top-level keys beside `aps`; FCM: `data`; Web Push: `data`).
    var data: [String: String] = [:]
    /// Messages with the same key replace each other on the device (an order's status, say).
    var collapseKey: String? = nil
    /// The app icon's number, where the platform has one (APNs only).
    var badge: Int? = nil
}

/// What became of one send, so the caller knows whether to keep the device and whether to try again.
enum PushOutcome: Sendable, Equatable {
    case delivered
    /// The token or subscription is no longer valid: delete the device.
    case gone
    /// A transient failure (429, 5xx, network, credentials being renewed): try again later.
    case retry(String)
    /// The service refused this message for good; trying again would fail the same way.
    case rejected(String)
}

/// Sends a message to one device of one platform. Never throws: every failure is an outcome,
/// because the caller's choices (retry, delete, give up) depend on which failure it was.
protocol PushSender: Sendable {
    func send(_ message: PushMessage, to token: String) async -> PushOutcome
}

/// The one entry point for pushes: picks the sender for the platform, or, when that platform has no
/// credentials (development), logs the title and reports success so nothing piles up in the outbox.
///
/// Give it an `HTTPClient` made with `redirectConfiguration: .disallow`: Web Push endpoints come
/// from browsers, and a redirect from one would otherwise send the server wherever it points.
/// (No push service redirects; a 3xx then simply counts as rejected.)
final class PushService: Sendable {
    let senders: [PushPlatform: any PushSender]
    let logger: Logger
    /// The VAPID public key (base64url, uncompressed P-256 point) browsers need to subscribe, served
    /// at `GET /push/vapid-public-key`; nil when Web Push is not configured.
    let vapidPublicKey: String?

    convenience init(settings: PushSettings, httpClient: HTTPClient, logger: Logger) {
        var senders: [PushPlatform: any PushSender] = [:]
        if let apns = settings.apns { senders[.apns] = APNsSender(settings: apns, httpClient: httpClient, logger: logger) }
        if let fcm = settings.fcm { senders[.fcm] = FCMSender(settings: fcm, httpClient: httpClient, logger: logger) }
        if let vapid = settings.vapid {
            let check = PushAddressGuard(configuration: PushService.clientConfiguration)
            senders[.webPush] = WebPushSender(settings: vapid, httpClient: httpClient, logger: logger, addressGuard: check)
        }
        self.init(senders: senders, vapidPublicKey: settings.vapid?.publicKeyBase64URL, logger: logger)
    }

    /// Every push client's settings: redirects refused, bounded waits.
    static var clientConfiguration: HTTPClient.Configuration {
        .init(redirectConfiguration: .disallow, timeout: .init(connect: .seconds(10), read: .seconds(20)))
    }

    /// For tests and for callers that build their own senders.
    init(senders: [PushPlatform: any PushSender], vapidPublicKey: String?, logger: Logger) {
        self.senders = senders
        self.vapidPublicKey = vapidPublicKey
        self.logger = logger
    }

    func send(_ message: PushMessage, platform: PushPlatform, token: String) async -> PushOutcome {
        guard let sender = senders[platform] else {
            // The token is left out on purpose: it is a credential for the device.
            logger.notice("push (development, \(platform.rawValue) not configured): \(message.title)")
            return .delivered
        }
        return await sender.send(message, to: token)
    }

    /// Whether `json` is a browser's `PushSubscription` Waybill can send to: an https endpoint on a
    /// public host name, a P-256 `p256dh` key and a 16-byte `auth` secret. Check it when the device
    /// registers, because the server will later POST to that endpoint.
    static func validateWebPushSubscription(_ json: String) -> Bool {
        guard let subscription = WebPushSubscription(json: json) else { return false }
        return WebPushSubscription.isPublicEndpoint(subscription.endpoint)
    }
}

/// The HTTP exchange every sender makes: one POST, the status and a bounded body back, or the
/// network error. Kept apart so each sender only decides what the answer means.
enum PushHTTP {
    static let timeout: TimeAmount = .seconds(15)
    /// Error answers are small JSON documents; anything longer is cut off rather than buffered.
    static let maxResponseBytes = 64 * 1024

    struct Response: Sendable {
        var status: Int
        var body: Data
        var json: [String: Any] { ((try? JSONSerialization.jsonObject(with: body)) as? [String: Any]) ?? [:] }
    }

    static func post(_ client: HTTPClient, url: String, headers: [(String, String)], body: Data, logger: Logger) async throws -> Response {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        request.body = .bytes(ByteBuffer(data: body))
        let response = try await client.execute(request, timeout: timeout, logger: logger)
        var buffer = try await response.body.collect(upTo: maxResponseBytes)
        return Response(status: Int(response.status.code), body: buffer.readData(length: buffer.readableBytes) ?? Data())
    }
}

/// Time to live of every push: after a day, a delivery notice is no longer worth showing.
enum PushTTL {
    static let seconds: Int64 = 24 * 3600
}
