import Foundation
import OpenAPIRuntime
import WaybillCore

/// An integrator's endpoint, and one delivery in its log.
public typealias WebhookEndpoint = Components.Schemas.WebhookEndpoint
public typealias WebhookDelivery = Components.Schemas.WebhookDelivery

/// Webhook endpoints: Waybill POSTs the events they subscribe to, signed. Receiving servers
/// written in Swift check deliveries with `WaybillWebhooks.verify` (the same code that signs them).
extension WaybillSession {
    /// Registers an endpoint; the answer holds its signing secret (`whsec_…`) this once.
    /// `scope` `.company` (dispatchers) hears every shipment; `.own` what is the caller's.
    public func addWebhookEndpoint(url: String, events: [WebhookEvent], scope: WebhookScope = .own,
                                   description: String? = nil) async throws(WaybillError) -> WebhookEndpoint {
        try await call {
            try await $0.createWebhookEndpoint(body: .json(.init(url: url, events: events.compactMap { .init(rawValue: $0.rawValue) },
                                                                 scope: .init(rawValue: scope.rawValue), description: description))).created.body.json
        }
    }

    public func webhookEndpoints() async throws(WaybillError) -> [WebhookEndpoint] {
        try await call { try await $0.listWebhookEndpoints().ok.body.json.items }
    }

    public func webhookEndpoint(_ id: UUID) async throws(WaybillError) -> WebhookEndpoint {
        try await call { try await $0.getWebhookEndpoint(path: .init(endpointId: id.uuidString.lowercased())).ok.body.json }
    }

    /// Changes what is given; `enabled: true` turns an endpoint on again after it was turned off.
    public func updateWebhookEndpoint(_ id: UUID, url: String? = nil, events: [WebhookEvent]? = nil, description: String? = nil,
                                      enabled: Bool? = nil) async throws(WaybillError) -> WebhookEndpoint {
        try await call {
            try await $0.updateWebhookEndpoint(path: .init(endpointId: id.uuidString.lowercased()), body: .json(.init(
                url: url, events: events?.compactMap { .init(rawValue: $0.rawValue) }, description: description, enabled: enabled))).ok.body.json
        }
    }

    public func removeWebhookEndpoint(_ id: UUID) async throws(WaybillError) {
        _ = try await call { try await $0.deleteWebhookEndpoint(path: .init(endpointId: id.uuidString.lowercased())).noContent }
    }

    /// A new signing secret, in the answer this once; the old one stops at once.
    public func rotateWebhookSecret(_ id: UUID) async throws(WaybillError) -> WebhookEndpoint {
        try await call { try await $0.rotateWebhookSecret(path: .init(endpointId: id.uuidString.lowercased())).ok.body.json }
    }

    /// Queues a `ping` event to the endpoint.
    public func pingWebhookEndpoint(_ id: UUID) async throws(WaybillError) -> WebhookDelivery {
        try await call { try await $0.pingWebhookEndpoint(path: .init(endpointId: id.uuidString.lowercased())).accepted.body.json }
    }

    /// The delivery log, newest first; pass the last item's `cursor` as `before` for more.
    public func webhookDeliveries(_ id: UUID, limit: Int = 50, before: String? = nil) async throws(WaybillError) -> [WebhookDelivery] {
        try await call {
            try await $0.listWebhookDeliveries(path: .init(endpointId: id.uuidString.lowercased()), query: .init(limit: limit, before: before)).ok.body.json.items
        }
    }

    /// Sends a delivery's event again now (same event id).
    public func redeliverWebhook(_ id: UUID, delivery: UUID) async throws(WaybillError) -> WebhookDelivery {
        try await call {
            try await $0.redeliverWebhook(path: .init(endpointId: id.uuidString.lowercased(), deliveryId: delivery.uuidString.lowercased())).accepted.body.json
        }
    }
}

/// For servers that receive Waybill's webhooks.
public enum WaybillWebhooks {
    /// Checks a delivery: `body` as received (exact bytes), the `Waybill-Signature` header, the
    /// endpoint's secret. Throws unless it was signed with that secret less than five minutes ago.
    public static func verify(body: [UInt8], signatureHeader: String, secret: String, now: Date = Date()) throws(WebhookSignature.Failure) {
        try WebhookSignature.verify(body: body, header: signatureHeader, secret: secret, now: now)
    }
}

/// An API key, as listed (its value only in the answer that made it, as `key`).
public typealias APIKey = Components.Schemas.APIKey

extension WaybillSession {
    /// A session for a server of yours, authenticated by an API key (`wb_live_…`) instead of a
    /// person's sign-in: it can call what the key's scopes cover, and nothing needs refreshing.
    public convenience init(serverURL: URL, apiKey: String, transport: (any ClientTransport)? = nil) {
        self.init(serverURL: serverURL,
                  tokenStore: InMemoryTokenStore(SessionTokens(accessToken: apiKey, refreshToken: "", expiresAt: .distantFuture)),
                  transport: transport)
    }

    /// Makes an API key acting as the signed-in person within `scopes`; `key` holds it this once.
    public func createAPIKey(name: String, scopes: [APIKeyScope], expiresInDays: Int? = nil) async throws(WaybillError) -> APIKey {
        try await call {
            try await $0.createAPIKey(body: .json(.init(name: name, scopes: scopes.compactMap { .init(rawValue: $0.rawValue) },
                                                        expiresInDays: expiresInDays))).created.body.json
        }
    }

    public func apiKeys() async throws(WaybillError) -> [APIKey] {
        try await call { try await $0.listAPIKeys().ok.body.json.items }
    }

    public func revokeAPIKey(_ id: UUID) async throws(WaybillError) {
        _ = try await call { try await $0.revokeAPIKey(path: .init(keyId: id.uuidString.lowercased())).noContent }
    }
}
