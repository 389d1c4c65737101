import ArgumentParser
import Foundation
import WaybillClient
import WaybillCore

extension WebhookEvent: ExpressibleByArgument {}

struct WebhookCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "webhook", abstract: "Endpoints your systems receive events at, signed (docs/integrations.md).",
        subcommands: [Add.self, List.self, Show.self, Ping.self, Redeliver.self, On.self, Off.self, Rotate.self, Remove.self])

    static func id(_ text: String) throws -> UUID {
        guard let id = UUID(uuidString: text) else { throw ValidationError("Not an endpoint or delivery id: \(text)") }
        return id
    }

    /// Runs `call` for the endpoint named on the command line and prints its answer: JSON with
    /// `--json`, else `text`.
    static func run<T: Encodable>(_ options: GlobalOptions, _ endpoint: String, _ call: (WaybillSession, UUID) async throws -> T,
                                  text: (T) -> String) async throws {
        let id = try Self.id(endpoint)
        try await options.run { session in
            let value = try await call(session, id)
            if options.json { Output.json(value) } else { Output.line(text(value)) }
        }
    }

    static func line(_ e: WebhookEndpoint) -> String {
        "\(e.id)  \(e.url)  \(e.scope.rawValue)  \(e.enabled ? "on" : "off\(e.disabledReason.map { " (\($0.rawValue))" } ?? "")")  \(e.events.map(\.rawValue).joined(separator: ","))\(e.description.map { "  \($0)" } ?? "")"
    }

    static func line(_ d: WebhookDelivery) -> String {
        "\(d.id)  \(d.eventType.rawValue)  \(d.status.rawValue)  attempts \(d.attempts)\(d.lastStatusCode.map { "  HTTP \($0)" } ?? "")\(d.lastError.map { "  \($0)" } ?? "")"
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Register an https endpoint; prints its signing secret this once.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The endpoint's address (https://…).") var url: String
        @Option(name: .customLong("event"), help: "An event to send (repeat): shipment.placed, shipment.delivered, parcel.updated…") var events: [WebhookEvent] = []
        @Flag(help: "Every shipment of the company (dispatchers), not only your own.") var company = false
        @Option(help: "What it is for.") var description: String?

        func run() async throws {
            guard !events.isEmpty else { throw ValidationError("Name at least one --event.") }
            try await options.run { session in
                let e = try await session.addWebhookEndpoint(url: url, events: events, scope: company ? .company : .own, description: description)
                if options.json { Output.json(e) } else {
                    Output.line(WebhookCommand.line(e))
                    Output.line("Signing secret (shown once): \(e.secret ?? "")")
                }
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Your endpoints.")
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            try await options.run { session in
                let list = try await session.webhookEndpoints()
                if options.json { Output.json(list) } else {
                    if list.isEmpty { Output.line("No endpoint: `webhook add URL --event shipment.delivered` to add one.") }
                    for e in list { Output.line(WebhookCommand.line(e)) }
                }
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "One endpoint and its latest deliveries.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The endpoint's id.") var endpoint: String

        func run() async throws {
            let id = try WebhookCommand.id(endpoint)
            try await options.run { session in
                let e = try await session.webhookEndpoint(id)
                let log = try await session.webhookDeliveries(id)
                if options.json { Output.json(log) } else {
                    Output.line(WebhookCommand.line(e))
                    for d in log { Output.line("  " + WebhookCommand.line(d)) }
                }
            }
        }
    }

    struct Ping: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Send a test event.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The endpoint's id.") var endpoint: String

        func run() async throws {
            try await WebhookCommand.run(options, endpoint) { session, id in try await session.pingWebhookEndpoint(id) } text: { WebhookCommand.line($0) }
        }
    }

    struct Redeliver: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Send a delivery's event again (same event id).")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The endpoint's id.") var endpoint: String
        @Argument(help: "The delivery's id (from `webhook show`).") var delivery: String

        func run() async throws {
            let id = try WebhookCommand.id(endpoint), deliveryID = try WebhookCommand.id(delivery)
            try await options.run { session in
                let d = try await session.redeliverWebhook(id, delivery: deliveryID)
                if options.json { Output.json(d) } else { Output.line(WebhookCommand.line(d)) }
            }
        }
    }

    struct On: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Turn an endpoint on (again).")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The endpoint's id.") var endpoint: String

        func run() async throws {
            try await WebhookCommand.run(options, endpoint) { session, id in try await session.updateWebhookEndpoint(id, enabled: true) } text: { WebhookCommand.line($0) }
        }
    }

    struct Off: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Turn an endpoint off.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The endpoint's id.") var endpoint: String

        func run() async throws {
            try await WebhookCommand.run(options, endpoint) { session, id in try await session.updateWebhookEndpoint(id, enabled: false) } text: { WebhookCommand.line($0) }
        }
    }

    struct Rotate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "A new signing secret (printed once; the old one stops at once).")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The endpoint's id.") var endpoint: String

        func run() async throws {
            try await WebhookCommand.run(options, endpoint) { session, id in try await session.rotateWebhookSecret(id) } text: { "Signing secret (shown once): \($0.secret ?? "")" }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove an endpoint and its log.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The endpoint's id.") var endpoint: String

        func run() async throws {
            try await WebhookCommand.run(options, endpoint) { session, id in try await session.removeWebhookEndpoint(id); return ["removed": id.uuidString] } text: { _ in "Removed." }
        }
    }
}

extension APIKeyScope: ExpressibleByArgument {}

struct APIKeyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apikey", abstract: "API keys for your servers (WAYBILL_API_KEY=… then runs commands as the key).",
        subcommands: [Create.self, List.self, Revoke.self])

    static func line(_ k: APIKey) -> String {
        let state = k.revokedAt != nil ? "revoked" : k.expiresAt.map { $0 < Date() ? "expired" : "until \($0.formatted(date: .abbreviated, time: .omitted))" } ?? "no expiry"
        return "\(k.id)  \(k.hint)…  \(k.name)  \(k.scopes.map(\.rawValue).joined(separator: ","))  \(state)\(k.lastUsedAt.map { "  last used \($0.formatted())" } ?? "")"
    }

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Make a key; prints it this once.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "What it is for.") var name: String
        @Option(name: .customLong("scope"), help: "shipments:read, shipments:write, dispatch, webhooks, parcels:read, parcels:write (repeat).")
        var scopes: [APIKeyScope] = []
        @Option(help: "Days until it expires (1 to 730); absent, it does not.") var days: Int?

        func run() async throws {
            guard !scopes.isEmpty else { throw ValidationError("Name at least one --scope.") }
            try await options.run { session in
                let key = try await session.createAPIKey(name: name, scopes: scopes, expiresInDays: days)
                if options.json { Output.json(key) } else {
                    Output.line(APIKeyCommand.line(key))
                    Output.line("Key (shown once): \(key.key ?? "")")
                }
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Your keys (never their values).")
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            try await options.run { session in
                let keys = try await session.apiKeys()
                if options.json { Output.json(keys) } else {
                    if keys.isEmpty { Output.line("No key: `apikey create NAME --scope shipments:read` to make one.") }
                    for k in keys { Output.line(APIKeyCommand.line(k)) }
                }
            }
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Revoke a key: it stops at once.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The key's id.") var key: String

        func run() async throws {
            let id = try WebhookCommand.id(key)
            try await options.run { session in
                try await session.revokeAPIKey(id)
                if options.json { Output.json(["revoked": id.uuidString]) } else { Output.line("Revoked.") }
            }
        }
    }
}
