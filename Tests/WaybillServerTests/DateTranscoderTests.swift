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
}
