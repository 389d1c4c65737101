import ArgumentParser
import Foundation
import WaybillClient
import WaybillCore

extension WebhookEvent: ExpressibleByArgument {}

struct WebhookCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "webhook", abstract: "Endpoints your systems receive events at, signed (docs/webhooks.md).",
        subcommands: [Add.self, List.self, Show.self, Ping.self, Redeliver.self, On.self, Off.self, Rotate.self, Remove.self])

    static func id(_ text: String) throws -> UUID {
        guard let id = UUID(uuidString: text) else { throw ValidationError("Not an endpoint or delivery id: \(text)") }
        return id
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
            let id = try WebhookCommand.id(endpoint)
            try await options.run { session in
                let d = try await session.pingWebhookEndpoint(id)
                if options.json { Output.json(d) } else { Output.line(WebhookCommand.line(d)) }
            }
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
            let id = try WebhookCommand.id(endpoint)
            try await options.run { session in
                let e = try await session.updateWebhookEndpoint(id, enabled: true)
                if options.json { Output.json(e) } else { Output.line(WebhookCommand.line(e)) }
            }
        }
    }

    struct Off: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Turn an endpoint off.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The endpoint's id.") var endpoint: String

        func run() async throws {
            let id = try WebhookCommand.id(endpoint)
            try await options.run { session in
                let e = try await session.updateWebhookEndpoint(id, enabled: false)
                if options.json { Output.json(e) } else { Output.line(WebhookCommand.line(e)) }
            }
        }
    }

    struct Rotate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "A new signing secret (printed once; the old one stops at once).")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The endpoint's id.") var endpoint: String

        func run() async throws {
            let id = try WebhookCommand.id(endpoint)
            try await options.run { session in
                let e = try await session.rotateWebhookSecret(id)
                if options.json { Output.json(e) } else { Output.line("Signing secret (shown once): \(e.secret ?? "")") }
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove an endpoint and its log.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The endpoint's id.") var endpoint: String

        func run() async throws {
            let id = try WebhookCommand.id(endpoint)
            try await options.run { session in
                try await session.removeWebhookEndpoint(id)
                if options.json { Output.json(["removed": id.uuidString]) } else { Output.line("Removed.") }
            }
        }
    }
}
