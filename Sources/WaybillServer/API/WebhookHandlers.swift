import Foundation
import Vapor
import WaybillAPI
import WaybillCore

/// Integrators' webhook endpoints: translation only (`Webhooks` and `WebhookPolicy` decide).
extension APIHandler {
    func listWebhookEndpoints(_ input: Operations.ListWebhookEndpoints.Input) async throws -> Operations.ListWebhookEndpoints.Output {
        let me = try await principal()
        let endpoints = try await Webhooks(request: try request).list(for: me)
        return .ok(.init(body: .json(.init(items: try endpoints.map { try Self.webhookEndpoint($0, secret: nil) }))))
    }

    func createWebhookEndpoint(_ input: Operations.CreateWebhookEndpoint.Input) async throws -> Operations.CreateWebhookEndpoint.Output {
        let me = try await principal()
        guard case .json(let body) = input.body else { throw WaybillError.unsupportedBody }
        let draft = Webhooks.Draft(url: body.url, events: body.events.map(\.rawValue),
                                   scope: WebhookScope(rawValue: (body.scope ?? .own).rawValue) ?? .own, description: body.description)
        let (endpoint, secret) = try await Webhooks(request: try request).create(draft, by: me)
        return .created(.init(body: .json(try Self.webhookEndpoint(endpoint, secret: secret))))
    }

    func getWebhookEndpoint(_ input: Operations.GetWebhookEndpoint.Input) async throws -> Operations.GetWebhookEndpoint.Output {
        let me = try await principal()
        let endpoint = try await Webhooks(request: try request).endpoint(try Self.plainID(input.path.endpointId, "endpointId"), for: me)
        return .ok(.init(body: .json(try Self.webhookEndpoint(endpoint, secret: nil))))
    }

    func updateWebhookEndpoint(_ input: Operations.UpdateWebhookEndpoint.Input) async throws -> Operations.UpdateWebhookEndpoint.Output {
        let me = try await principal()
        guard case .json(let body) = input.body else { throw WaybillError.unsupportedBody }
        let change = Webhooks.Change(url: body.url, events: body.events?.map(\.rawValue),
                                     description: body.description.map { $0.isEmpty ? nil : $0 }, enabled: body.enabled)
        let endpoint = try await Webhooks(request: try request).update(try Self.plainID(input.path.endpointId, "endpointId"), change, by: me)
        return .ok(.init(body: .json(try Self.webhookEndpoint(endpoint, secret: nil))))
    }

    func deleteWebhookEndpoint(_ input: Operations.DeleteWebhookEndpoint.Input) async throws -> Operations.DeleteWebhookEndpoint.Output {
        let me = try await principal()
        try await Webhooks(request: try request).delete(try Self.plainID(input.path.endpointId, "endpointId"), by: me)
        return .noContent(.init())
    }

    func rotateWebhookSecret(_ input: Operations.RotateWebhookSecret.Input) async throws -> Operations.RotateWebhookSecret.Output {
        let me = try await principal()
        let (endpoint, secret) = try await Webhooks(request: try request).rotateSecret(try Self.plainID(input.path.endpointId, "endpointId"), by: me)
        return .ok(.init(body: .json(try Self.webhookEndpoint(endpoint, secret: secret))))
    }

    func pingWebhookEndpoint(_ input: Operations.PingWebhookEndpoint.Input) async throws -> Operations.PingWebhookEndpoint.Output {
        let me = try await principal()
        let delivery = try await Webhooks(request: try request).ping(try Self.plainID(input.path.endpointId, "endpointId"), by: me)
        return .accepted(.init(body: .json(try Self.webhookDelivery(delivery, attempts: []))))
    }

    func listWebhookDeliveries(_ input: Operations.ListWebhookDeliveries.Input) async throws -> Operations.ListWebhookDeliveries.Output {
        let me = try await principal()
        var before: Int64?
        if let cursor = input.query.before {
            guard let value = Int64(cursor), value > 0 else { throw WaybillError.invalidParameter("before") }
            before = value
        }
        let log = try await Webhooks(request: try request).deliveries(try Self.plainID(input.path.endpointId, "endpointId"), for: me,
                                                                       limit: input.query.limit ?? 50, before: before)
        return .ok(.init(body: .json(.init(items: try log.map { try Self.webhookDelivery($0.0, attempts: $0.1) }))))
    }

    func redeliverWebhook(_ input: Operations.RedeliverWebhook.Input) async throws -> Operations.RedeliverWebhook.Output {
        let me = try await principal()
        let delivery = try await Webhooks(request: try request).redeliver(try Self.plainID(input.path.endpointId, "endpointId"),
                                                                          delivery: try Self.plainID(input.path.deliveryId, "deliveryId"), by: me)
        return .accepted(.init(body: .json(try Self.webhookDelivery(delivery, attempts: []))))
    }

    static func plainID(_ text: String, _ name: String) throws -> UUID {
        guard let id = UUID(uuidString: text) else { throw WaybillError.invalidParameter(name) }
        return id
    }

    /// A typed id from the path (`endpointId`, `planId`, …), 400 naming `name` when it is not one.
    static func plainID<Tag>(_ text: String, _ name: String) throws -> Tagged<Tag, UUID> {
        Tagged(rawValue: try plainID(text, name) as UUID)
    }

    static func webhookEndpoint(_ e: WebhookEndpointRecord, secret: String?) throws -> S.WebhookEndpoint {
        S.WebhookEndpoint(id: try e.storedID.uuidString, url: e.url, events: e.events.compactMap { S.WebhookEventType(rawValue: $0.rawValue) },
                          scope: try wire(e.scope), description: e.about, enabled: e.enabled,
                          disabledReason: e.disabledReason.flatMap { .init(rawValue: $0) }, failingSince: e.failingSince.map(date),
                          version: e.version, secret: secret, createdAt: date(e.createdAt))
    }

    static func webhookDelivery(_ d: WebhookDeliveryRecord, attempts: [WebhookAttemptRecord]) throws -> S.WebhookDelivery {
        S.WebhookDelivery(
            id: try d.storedID.uuidString, cursor: String(d.sequence),
            eventId: "evt_" + d.eventID.uuidString.lowercased().replacingOccurrences(of: "-", with: ""),
            eventType: S.WebhookEventType(rawValue: d.eventType) ?? .ping, status: try wire(d.status),
            attempts: d.attempts, nextAttemptAt: d.status == .pending ? date(d.nextAttemptAt) : nil, lastStatusCode: d.lastStatusCode,
            lastError: d.lastError, createdAt: date(d.createdAt), deliveredAt: d.deliveredAt.map(date), payload: d.payload,
            attemptLog: attempts.map { .init(at: date($0.at), statusCode: $0.statusCode, durationMs: $0.durationMillis, error: $0.error) })
    }
}

/// API keys: translation only (`APIKeys` and `APIKeyPolicy` decide).
extension APIHandler {
    func listAPIKeys(_ input: Operations.ListAPIKeys.Input) async throws -> Operations.ListAPIKeys.Output {
        let me = try await principal()
        return .ok(.init(body: .json(.init(items: try await APIKeys(request: try request).list(for: me).map { try Self.apiKey($0, token: nil) }))))
    }

    func createAPIKey(_ input: Operations.CreateAPIKey.Input) async throws -> Operations.CreateAPIKey.Output {
        let me = try await principal()
        guard case .json(let body) = input.body else { throw WaybillError.unsupportedBody }
        let (key, token) = try await APIKeys(request: try request).create(name: body.name, scopes: body.scopes.map(\.rawValue),
                                                                          expiresInDays: body.expiresInDays, by: me)
        return .created(.init(body: .json(try Self.apiKey(key, token: token))))
    }

    func revokeAPIKey(_ input: Operations.RevokeAPIKey.Input) async throws -> Operations.RevokeAPIKey.Output {
        let me = try await principal()
        try await APIKeys(request: try request).revoke(try Self.plainID(input.path.keyId, "keyId"), by: me)
        return .noContent(.init())
    }

    static func apiKey(_ k: APIKeyRecord, token: String?) throws -> S.APIKey {
        S.APIKey(id: try k.storedID.uuidString, name: k.name, hint: k.hint, scopes: APIKeyScope.allCases.filter(k.scopes.contains).compactMap { S.APIKeyScope(rawValue: $0.rawValue) },
                 key: token, createdAt: date(k.createdAt), expiresAt: k.expiresAt.map(date), revokedAt: k.revokedAt.map(date),
                 lastUsedAt: k.lastUsedAt.map(date))
    }
}
