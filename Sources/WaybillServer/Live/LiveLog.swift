import Fluent
import Foundation
import SQLKit
import WaybillCore

/// A stored live event: what the log holds and what travels between processes.
struct LiveRow: Sendable, Codable, Equatable {
    var id: Int64
    var topic: String
    var type: String
    /// The event's `data` object, as JSON text.
    var data: String
    var at: Int64

    /// Types the hub acts on itself and never forwards to a client.
    static let sessionEnded = "_session_ended"
    static let trackingChanged = "_tracking_changed"
    var isControl: Bool { type.hasPrefix("_") }
}

/// Writes live events inside the caller's transaction, so an event exists exactly when the change
/// it reports does. On PostgreSQL each event is also sent with `pg_notify`, which PostgreSQL delivers
/// to every listening process when (and only if) the transaction commits; on SQLite the one process
/// reads new rows after each write (`LiveFeed`).
enum LiveLog {
    /// Stored topics. Clients name them differently (`notifications`, `tracking:…`): see `LiveSocket`.
    static func orderTopic(_ id: UUID) -> String { LiveTopic.order(id).name }
    static let fleetTopic = "fleet"
    static func userTopic(_ id: UUID) -> String { "user:\(id.uuidString)" }

    /// NOTIFY payloads are limited to 8000 bytes; larger events are fetched from the table.
    static let maxNotifyBytes = 7_000

    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        return encoder
    }()

    static func publish(_ payload: LivePayload, to topics: [String], at: Int64 = UnixTime.nowMillis, on db: any Database) async throws {
        let data = try encodeData(payload)
        for topic in topics {
            try await insert(topic: topic, type: payload.type, data: data, at: at, on: db)
        }
    }

    static func publishControl(_ type: String, topic: String, data: [String: String], on db: any Database) async throws {
        let text = String(decoding: try encoder.encode(data), as: UTF8.self)
        try await insert(topic: topic, type: type, data: text, at: UnixTime.nowMillis, on: db)
    }

    static func encodeData(_ payload: LivePayload) throws -> String {
        struct Wrapper: Encodable {
            let payload: LivePayload
            func encode(to encoder: any Encoder) throws { try payload.encodeData(to: encoder) }
        }
        return String(decoding: try encoder.encode(Wrapper(payload: payload)), as: UTF8.self)
    }

    private static func insert(topic: String, type: String, data: String, at: Int64, on db: any Database) async throws {
        guard let sql = db as? any SQLDatabase else { return }
        let row = try await sql.insert(into: "live_events")
            .columns("topic", "type", "data", "at")
            .values(SQLBind(topic), SQLBind(type), SQLBind(data), SQLBind(at))
            .returning("id")
            .first()
        guard let id = try row?.decode(column: "id", as: Int64.self) else { return }
        if sql.dialect.name == "postgresql" {
            let event = LiveRow(id: id, topic: topic, type: type, data: data, at: at)
            var text = String(decoding: try encoder.encode(event), as: UTF8.self)
            if text.utf8.count > maxNotifyBytes { text = #"{"fetch":\#(id)}"# }
            // The channel is named after the schema, so databases shared by several installations
            // (or by tests, one schema each) do not hear each other.
            try await sql.raw("SELECT pg_notify('\(unsafeRaw: LiveFeed.channelPrefix)' || current_schema(), \(bind: text))").run()
        }
    }
}
