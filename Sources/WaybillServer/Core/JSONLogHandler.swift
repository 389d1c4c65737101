import Foundation
import Logging
import WaybillCore

/// One JSON object per line on standard error (`LOG_FORMAT=json`), for log collectors: the time
/// (UTC, ISO 8601), level, logger label, message, the source location, and the metadata (the
/// `request-id` of request-scoped lines among it).
public struct JSONLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level
    let label: String

    public init(label: String, level: Logger.Level) {
        self.label = label
        self.logLevel = level
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(level: Logger.Level, message: Logger.Message, metadata explicit: Logger.Metadata?, source: String,
                    file: String, function: String, line: UInt) {
        FileHandle.standardError.write(Data(render(level: level, message: message, metadata: explicit, file: file, line: line).utf8))
    }

    /// The line `log` writes.
    func render(level: Logger.Level, message: Logger.Message, metadata explicit: Logger.Metadata?, file: String, line: UInt,
                at now: Date = Date()) -> String {
        var fields: [String: String] = [:]
        for (key, value) in metadata.merging(explicit ?? [:], uniquingKeysWith: { $1 }) { fields[key] = "\(value)" }
        var text = "{\"ts\":\(Self.quote(ISO8601DateFormatter.string(from: now, timeZone: .gmt, formatOptions: [.withInternetDateTime, .withFractionalSeconds])))"
        text += ",\"level\":\(Self.quote(level.rawValue)),\"logger\":\(Self.quote(label)),\"msg\":\(Self.quote(message.description))"
        text += ",\"source\":\(Self.quote("\(file.split(separator: "/").last ?? ""):\(line)"))"
        for (key, value) in fields.sorted(by: { $0.key < $1.key }) where !["ts", "level", "logger", "msg", "source"].contains(key) {
            text += ",\(Self.quote(key)):\(Self.quote(value))"
        }
        return text + "}\n"
    }

    /// A JSON string literal.
    static func quote(_ text: String) -> String { JSONText.quote(text) }

    /// `LOG_FORMAT=json`: every logger writes JSON lines at `LOG_LEVEL` (default `info`). Returns
    /// false (and changes nothing) for any other format.
    public static func bootstrapIfAsked(environment: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
        guard environment["LOG_FORMAT"]?.lowercased() == "json" else { return false }
        let level = environment["LOG_LEVEL"].flatMap { Logger.Level(rawValue: $0.lowercased()) } ?? .info
        LoggingSystem.bootstrap { label in JSONLogHandler(label: label, level: level) }
        return true
    }
}
