import Foundation
import OpenAPIRuntime

/// Dates as RFC 3339 (`2026-11-22T10:15:00Z`), read with or without fractional seconds (phones
/// send `…:00.123Z`), written without them. The server and the SDK both use this.
public struct LenientISO8601DateTranscoder: DateTranscoder, @unchecked Sendable {
    private let plain = ISO8601DateFormatter()
    private let fractional: ISO8601DateFormatter = {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter
    }()
    private let lock = NSLock()

    public init() {}

    public func encode(_ date: Date) throws -> String {
        lock.lock()
        defer { lock.unlock() }
        return plain.string(from: date)
    }

    public func decode(_ text: String) throws -> Date {
        lock.lock()
        defer { lock.unlock() }
        if let date = fractional.date(from: text) ?? plain.date(from: text) { return date }
        throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "Expected an RFC 3339 date-time, got \(text)"))
    }
}

extension Configuration {
    /// Waybill's settings for the generated server and client: compact JSON, lenient dates.
    public static var waybill: Configuration {
        Configuration(dateTranscoder: LenientISO8601DateTranscoder(), jsonEncodingOptions: [])
    }
}
