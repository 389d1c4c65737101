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
        if let text = Self.utc(date) { return text }
        lock.lock()
        defer { lock.unlock() }
        return plain.string(from: date)
    }

    /// `yyyy-MM-ddTHH:mm:ssZ` by arithmetic (a list page writes hundreds of dates; the formatter
    /// and its lock cost several microseconds each). Whole seconds, rounded down like the
    /// formatter (which counts from 2001, as here); nil before 1583 (the formatter's calendar is
    /// Julian before the Gregorian reform) and after 9999, which go to the formatter.
    static func utc(_ date: Date) -> String? {
        // Like the formatter: to the millisecond first, then whole seconds.
        let sinceReference = ((date.timeIntervalSinceReferenceDate * 1000).rounded() / 1000).rounded(.down)
        guard sinceReference.isFinite, sinceReference >= -12_212_553_600 - 978_307_200,
              sinceReference < 253_402_300_800 - 978_307_200 else { return nil }
        let seconds = Int64(sinceReference) + 978_307_200
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = Int(seconds - days * 86_400)
        // Howard Hinnant's civil_from_days.
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = Int(dayOfYear - (153 * mp + 2) / 5 + 1)
        let month = Int(mp < 10 ? mp + 3 : mp - 9)
        let year = Int(yearOfEra + era * 400 + (month <= 2 ? 1 : 0))
        var bytes = [UInt8](repeating: 0, count: 20)
        func put(_ value: Int, at offset: Int, digits: Int) {
            var value = value
            for index in stride(from: offset + digits - 1, through: offset, by: -1) {
                bytes[index] = UInt8(ascii: "0") + UInt8(value % 10)
                value /= 10
            }
        }
        put(year, at: 0, digits: 4); bytes[4] = UInt8(ascii: "-")
        put(month, at: 5, digits: 2); bytes[7] = UInt8(ascii: "-")
        put(day, at: 8, digits: 2); bytes[10] = UInt8(ascii: "T")
        put(secondOfDay / 3600, at: 11, digits: 2); bytes[13] = UInt8(ascii: ":")
        put(secondOfDay / 60 % 60, at: 14, digits: 2); bytes[16] = UInt8(ascii: ":")
        put(secondOfDay % 60, at: 17, digits: 2); bytes[19] = UInt8(ascii: "Z")
        return String(decoding: bytes, as: UTF8.self)
    }

    public func decode(_ text: String) throws -> Date {
        if let date = Self.parse(text) { return date }
        lock.lock()
        defer { lock.unlock() }
        if let date = fractional.date(from: text) ?? plain.date(from: text) { return date }
        throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "Expected an RFC 3339 date-time, got \(text)"))
    }
}

extension LenientISO8601DateTranscoder {
    /// `yyyy-MM-ddTHH:mm:ss`, then up to three digits of fraction, then `Z` or `±HH:mm`, read by
    /// arithmetic: what phones send with every position (the formatter, behind its lock, was 5 % of
    /// the server's time under a thousand reports a second). Anything else (more digits, another
    /// shape, an impossible day, years before 1583) is left to the formatter, so what is accepted
    /// and what it means do not change.
    static func parse(_ text: String) -> Date? {
        var text = text
        return text.withUTF8 { bytes -> Date? in
            let count = bytes.count
            guard count >= 20, count <= 29 else { return nil }
            func digits(_ start: Int, _ length: Int) -> Int? {
                var value = 0
                for index in start..<(start + length) {
                    let byte = bytes[index]
                    guard byte >= 48, byte <= 57 else { return nil }
                    value = value * 10 + Int(byte - 48)
                }
                return value
            }
            guard bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"), bytes[10] == UInt8(ascii: "T"),
                  bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"),
                  let year = digits(0, 4), let month = digits(5, 2), let day = digits(8, 2),
                  let hour = digits(11, 2), let minute = digits(14, 2), let second = digits(17, 2),
                  year >= 1583, (1...12).contains(month), hour <= 23, minute <= 59, second <= 59 else { return nil }
            let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
            let monthDays = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
            guard day >= 1, day <= monthDays else { return nil }
            var index = 19
            var millis = 0
            if bytes[index] == UInt8(ascii: ".") {
                index += 1
                var length = 0
                while index < count, bytes[index] >= 48, bytes[index] <= 57 {
                    guard length < 3 else { return nil }
                    millis = millis * 10 + Int(bytes[index] - 48)
                    length += 1
                    index += 1
                }
                guard length > 0 else { return nil }
                for _ in length..<3 { millis *= 10 }
            }
            guard index < count else { return nil }
            var offset = 0
            switch bytes[index] {
            case UInt8(ascii: "Z"):
                guard index + 1 == count else { return nil }
            case UInt8(ascii: "+"), UInt8(ascii: "-"):
                guard index + 6 == count, bytes[index + 3] == UInt8(ascii: ":"),
                      let hours = digits(index + 1, 2), let minutes = digits(index + 4, 2), hours <= 23, minutes <= 59 else { return nil }
                offset = (hours * 60 + minutes) * 60 * (bytes[index] == UInt8(ascii: "+") ? 1 : -1)
            default:
                return nil
            }
            // Howard Hinnant's days_from_civil.
            let y = month <= 2 ? year - 1 : year
            let era = y / 400
            let yearOfEra = y - era * 400
            let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
            let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
            let days = era * 146_097 + dayOfEra - 719_468
            let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offset
            return Date(timeIntervalSince1970: Double(seconds * 1000 + millis) / 1000)
        }
    }
}

extension Configuration {
    /// Waybill's settings for the generated server and client: compact JSON, lenient dates.
    public static var waybill: Configuration {
        Configuration(dateTranscoder: LenientISO8601DateTranscoder(), jsonEncodingOptions: [])
    }
}
