import Foundation
import Testing
@testable import WaybillAPI

@Suite("Dates in the API")
struct DateTranscoderTests {
    @Test("Dates are written exactly as the ISO 8601 formatter writes them, across leap years, centuries, before 1970 and at the ends of the range; before the Gregorian reform the formatter answers")
    func fastWriterAgreesWithTheFormatter() throws {
        let formatter = ISO8601DateFormatter()
        var generator = SystemRandomNumberGenerator()
        var samples: [Double] = [0, -1, -0.5, 0.999, 86_399.999, 86_400, 951_782_400, 951_868_800, 4_107_542_400,
                                 -2_208_988_800, -12_212_553_600, -12_212_553_601, -62_135_596_800, 253_402_300_799.9,
                                 1_795_392_000.123, 1_795_392_000.999_999]
        for _ in 0..<20_000 { samples.append(Double.random(in: -62_135_596_800 ..< 253_402_300_800, using: &generator)) }
        // Today's dates with milliseconds, as the API writes them.
        for _ in 0..<20_000 { samples.append(Double(Int64.random(in: 1_700_000_000_000 ..< 2_000_000_000_000, using: &generator)) / 1000) }
        var fast = 0
        for seconds in samples {
            let date = Date(timeIntervalSince1970: seconds)
            guard let written = LenientISO8601DateTranscoder.utc(date) else { continue }
            fast += 1
            #expect(written == formatter.string(from: date), "\(seconds)")
        }
        #expect(fast > 30_000, "the fast path writes nearly every date")
        // Outside the years 1…9999 the formatter answers.
        #expect(LenientISO8601DateTranscoder.utc(Date(timeIntervalSince1970: 253_402_300_800)) == nil)
        #expect(LenientISO8601DateTranscoder.utc(Date(timeIntervalSince1970: -12_212_553_601)) == nil)
        #expect(LenientISO8601DateTranscoder.utc(Date(timeIntervalSince1970: .infinity)) == nil)
        let far = Date(timeIntervalSince1970: 1e15)
        #expect(try LenientISO8601DateTranscoder().encode(far) == formatter.string(from: far))
    }

    @Test("Dates are read exactly as the ISO 8601 formatters read them: with and without milliseconds, in UTC or with an offset; odd shapes and impossible days still go to the formatters")
    func fastReaderAgreesWithTheFormatters() throws {
        let plain = ISO8601DateFormatter()
        let fractional = ISO8601DateFormatter()
        fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        func formatters(_ text: String) -> Date? { fractional.date(from: text) ?? plain.date(from: text) }
        var generator = SystemRandomNumberGenerator()
        var texts = ["2026-11-22T10:15:00Z", "2026-11-22T10:15:00.1Z", "2026-11-22T10:15:00.12Z", "2026-11-22T10:15:00.123Z",
                     "2024-02-29T23:59:59.999+01:00", "2000-01-01T00:00:00-05:30", "1583-01-01T00:00:00Z", "9999-12-31T23:59:59.999Z",
                     "1969-12-31T23:59:59.5Z", "2026-03-29T02:30:00+02:00"]
        let offsets = ["Z", "+01:00", "-05:30", "+14:00", "-00:00", "+00:45"]
        for _ in 0..<20_000 {
            let millis = Int64.random(in: -12_212_553_600_000 ..< 253_402_300_800_000, using: &generator)
            let date = Date(timeIntervalSince1970: Double(millis) / 1000)
            let base = String(fractional.string(from: date).dropLast())  // yyyy-MM-ddTHH:mm:ss.SSS
            let digits = Int.random(in: 0...3, using: &generator)
            let body = digits == 0 ? String(base.prefix(19)) : String(base.prefix(20 + digits))
            texts.append(body + offsets.randomElement(using: &generator)!)
        }
        var fast = 0
        for text in texts {
            let expected = formatters(text)
            if let read = LenientISO8601DateTranscoder.parse(text) {
                fast += 1
                #expect(read == expected, "\(text): \(read.timeIntervalSince1970) ≠ \(String(describing: expected?.timeIntervalSince1970))")
            }
            #expect(try LenientISO8601DateTranscoder().decode(text) == expected)
        }
        #expect(fast > 19_000, "the fast path reads nearly every date")
        // Shapes it leaves to the formatters: what they say stands, accepted or refused.
        for text in ["2026-02-30T10:00:00Z", "2026-11-22T10:15:00.1234Z", "2026-11-22 10:15:00Z", "2026-11-22T10:15:00", "2026-11-22T24:00:00Z",
                     "20261122T101500Z", "2026-11-22T10:15:00.Z", "2026-11-22t10:15:00z", "1582-10-10T00:00:00Z", "2026-11-22T10:15:60Z",
                     "2026-11-22T10:15:00+0100", "２０２６-11-22T10:15:00Z", ""] {
            #expect(LenientISO8601DateTranscoder.parse(text) == nil, "\(text)")
            #expect((try? LenientISO8601DateTranscoder().decode(text)) == formatters(text), "\(text)")
        }
    }
}
