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
    /// An account's role changed: its open connections close, and reconnect with what it may see now.
    static let accessChanged = "_access_changed"
    var isControl: Bool { type.hasPrefix("_") }
}

/// Writes live events inside the caller's transaction, so an event exists exactly when the change
/// it reports does. On PostgreSQL each event is also sent with `pg_notify`, which PostgreSQL delivers
/// to every listening process when (and only if) the transaction commits; on SQLite the one process
/// reads new rows after each write (`LiveFeed`).
enum LiveLog {
    /// Stored topics. Clients name them differently (`notifications`, `tracking:…`): see `LiveSocket`.
    static func orderTopic(_ id: OrderID) -> String { LiveTopic.order(id).name }
    static let fleetTopic = "fleet"
    static func userTopic(_ id: UserID) -> String { "user:\(id.uuidString)" }

    /// NOTIFY payloads are limited to 8000 bytes; larger events are fetched from the table.
    static let maxNotifyBytes = 7_000

    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        return encoder
    }()

    static func publish(_ payload: LivePayload, to topics: [String], at: Int64 = UnixTime.nowMillis, on db: any Database) async throws {
        let data = try encodeData(payload)
        try await insert(topics.map { (topic: $0, type: payload.type, data: data) }, at: at, on: db)
    }

    /// Several events in one statement (and, on PostgreSQL, one notification): a position report
    /// makes three or more, and round trips are what its transaction spends its time on.
    static func publish(_ events: [(payload: LivePayload, topic: String)], at: Int64 = UnixTime.nowMillis, on db: any Database) async throws {
        try await insert(try events.map { (topic: $0.topic, type: $0.payload.type, data: try encodeData($0.payload)) }, at: at, on: db)
    }

    static func publishControl(_ type: String, topic: String, data: [String: String], on db: any Database) async throws {
        let text = String(decoding: try encoder.encode(data), as: UTF8.self)
        try await insert([(topic: topic, type: type, data: text)], at: UnixTime.nowMillis, on: db)
    }

    /// The event's `data`, written by `DirectJSON` (the payloads hold no dates): through
    /// `JSONEncoder` it was 2 % of placing an order, under the write lock.
    static func encodeData(_ payload: LivePayload) throws -> String {
        struct Wrapper: Encodable {
            let payload: LivePayload
            func encode(to encoder: any Encoder) throws { try payload.encodeData(to: encoder) }
        }
        return String(decoding: try DirectJSON.encode(Wrapper(payload: payload)), as: UTF8.self)
    }

    static let columns = ["topic", "type", "data", "at"]

    private static func insert(_ events: [(topic: String, type: String, data: String)], at: Int64, on db: any Database) async throws {
        guard !events.isEmpty else { return }
        if let writer = db as? WriterDatabase {
            // SQLite's writer: one prepared insert per event, without SQLKit's builder and serializer.
            for event in events {
                try writer.insert(into: "live_events", columns: columns, values: [.text(event.topic), .text(event.type), .text(event.data), .integer(Int(at))])
            }
            return
        }
        guard let sql = db.tracedSQL else { return }
        var insert = sql.insert(into: "live_events").columns(columns)
        for event in events {
            insert = insert.values(SQLBind(event.topic), SQLBind(event.type), SQLBind(event.data), SQLBind(at))
        }
        guard sql.dialect.name == "postgresql" else {
            try await insert.run()
            return
        }
        let rows = try LiveFeed.rows(try await insert.returning("id", "topic", "type", "data", "at").all()).sorted { $0.id < $1.id }
        // The channel is named after the schema, so databases shared by several installations
        // (or by tests, one schema each) do not hear each other. All notifications in one statement.
        var query = SQLQueryString("SELECT ")
        for (index, text) in notifications(rows).enumerated() {
            if index > 0 { query.appendLiteral(", ") }
            query.appendInterpolation(unsafeRaw: "pg_notify('\(LiveFeed.channelPrefix)' || current_schema(), ")
            query.appendInterpolation(bind: text)
            query.appendLiteral(")")
        }
        try await sql.raw(query).run()
    }

    /// The rows as notification payloads, in order, each under the size limit (a group commit of
    /// positions writes dozens of events at once, and a listener that had to read them from the
    /// table would add a round trip to each). A payload is `R` and then one line per row, its
    /// fields separated by tabs (`id`, `at`, `topic`, `type`, `data`): our topics and types hold
    /// neither tabs nor line breaks, and JSON text escapes them, so nothing needs quoting and a
    /// listener splits instead of running a JSON decoder (which cost 5 % of the server's time
    /// under a thousand position reports a second). A row too large for one payload, or one that
    /// would hold a tab or a line break anyway, is sent as `F` and its id, to be read from the table.
    static func notifications(_ rows: [LiveRow]) -> [String] {
        var payloads: [String] = []
        var current = ""
        func close() {
            if !current.isEmpty { payloads.append("R" + current) }
            current = ""
        }
        for row in rows {
            let line = "\n\(row.id)\t\(row.at)\t\(row.topic)\t\(row.type)\t\(row.data)"
            let plain = [row.topic, row.type, row.data].allSatisfy { !$0.utf8.contains { $0 == 9 || $0 == 10 } }
            guard plain, line.utf8.count + 1 <= maxNotifyBytes else {
                close()
                payloads.append("F\(row.id)")
                continue
            }
            if current.utf8.count + line.utf8.count + 1 > maxNotifyBytes { close() }
            current += line
        }
        close()
        return payloads
    }

    /// Reads a payload of `notifications`: the rows it holds and the ids to read from the table.
    /// Payloads of the earlier format (a JSON array of rows, or `{"fetch": [ids]}`) are read too.
    static func parseNotification(_ payload: String) -> (rows: [LiveRow], fetch: [Int64])? {
        if payload.hasPrefix("F") {
            return Int64(payload.dropFirst()).map { ([], [$0]) }
        }
        if payload.hasPrefix("R") {
            var rows: [LiveRow] = []
            for line in payload.utf8.split(separator: 10).dropFirst() {  // the first is the "R"
                let fields = line.split(separator: 9, maxSplits: 4, omittingEmptySubsequences: false)
                guard fields.count == 5, let id = Int64(Substring(fields[0])), let at = Int64(Substring(fields[1])) else { return nil }
                rows.append(LiveRow(id: id, topic: String(Substring(fields[2])), type: String(Substring(fields[3])),
                                    data: String(Substring(fields[4])), at: at))
            }
            return (rows, [])
        }
        let decoder = JSONDecoder(), data = Data(payload.utf8)
        if let rows = try? decoder.decode([LiveRow].self, from: data) { return (rows, []) }
        if let fetch = try? decoder.decode([String: [Int64]].self, from: data)["fetch"] { return ([], fetch) }
        return nil
    }
}
