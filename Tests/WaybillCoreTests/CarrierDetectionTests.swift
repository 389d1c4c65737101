import Foundation
import Testing
@testable import WaybillCore

@Suite("Carrier detection: the carrier suggested from a tracking number, offline")
struct CarrierDetectionTests {
    struct Vector: Decodable {
        var courier: String
        var format: String
        var number: String
        var valid: Bool
    }

    static let detection = CarrierDetection.standard

    @Test("Every sample number of tracking_number_data is classified as its file says: valid ones as their format, invalid ones not")
    func vectors() throws {
        let url = try #require(Bundle.module.url(forResource: "tracking-vectors", withExtension: "json", subdirectory: "Fixtures"))
        let vectors = try JSONDecoder().decode([Vector].self, from: Data(contentsOf: url))
        #expect(vectors.count == 140)
        for vector in vectors {
            let candidates = Self.detection.candidates(for: vector.number)
            let hit = candidates.contains { $0.table == vector.courier && ($0.format == vector.format || $0.formatName == vector.format) }
            #expect(hit == vector.valid, "\(vector.courier) \(vector.format) \(vector.number): \(candidates.map { "\($0.table)/\($0.format)" })")
        }
    }

    @Test("DHL Paket numbers are DHL first, not USPS; an S10 item goes to its country's post; Swiss Post's printed dots are ignored")
    func europe() {
        for number in ["00340434292135100124", "00340434161094015902", "00340433836442636597"] {
            let candidates = Self.detection.candidates(for: number)
            #expect(candidates.first?.format == "dhl_paket_sscc" && candidates.first?.reason == .checkDigitValid, "\(candidates)")
            #expect(candidates.contains { $0.format == "usps_20" }, "the other reading is offered too")
        }
        // A wrong check digit is no DHL Paket number.
        #expect(!Self.detection.candidates(for: "00340434292135100125").contains { $0.format == "dhl_paket_sscc" })
        // Both DHL eCommerce and S10 (La Poste): ranked, the check digit first.
        let lx = Self.detection.candidates(for: "LX123456785FR")
        #expect(lx.map(\.format) == ["s10", "dhl_ecommerce"] && lx[0].carrier == "la_poste" && lx[0].country == "FR", "\(lx)")
        #expect(Self.detection.candidates(for: "rb 123 456 785 ch").first?.carrier == "swiss_post")
        #expect(Self.detection.candidates(for: "RB123456785GB").first?.carrier == "royal_mail")
        // An unknown country is no S10 number.
        #expect(!Self.detection.candidates(for: "RB123456785QQ").contains { $0.format == "s10" })
        let swiss = Self.detection.candidates(for: "99.00.123456.12345678")
        #expect(swiss.first?.carrier == "swiss_post" && swiss.first?.reason == .patternOnly && swiss.first?.number == "990012345612345678")
        #expect(Self.detection.candidates(for: "6A12345678901").first?.format == "colissimo")
        #expect(Self.detection.candidates(for: "1Z 999 AA1 01 2345 6784").first?.trackingURL?.contains("1Z999AA10123456784") == true)
        // An S10 item links to its post's page (the S10 format has none of its own).
        let s10 = Self.detection.candidates(for: "RB123456785CH").first
        #expect(s10?.trackingURL?.hasPrefix("https://service.post.ch/") == true && s10?.trackingURL?.contains("RB123456785CH") == true, "\(String(describing: s10))")
        #expect(Self.detection.trackingURL(format: "s10", number: "RB123456785CH", carrier: "swiss_post")?.contains("RB123456785CH") == true)
        #expect(Self.detection.trackingURL(format: "s10", number: "RB123456785CH") == nil, "no post named, no page guessed")
    }

    @Test("The check-digit algorithms, each on a known number and one digit off")
    func algorithms() {
        #expect(CheckDigits.s10("12345678", check: "5") && !CheckDigits.s10("12345678", check: "4"))
        #expect(CheckDigits.mod7("331881002", check: "5") && !CheckDigits.mod7("331881002", check: "4"))
        #expect(CheckDigits.mod10("0034043429213510012", check: "4", evens: 3, odds: 1))
        #expect(!CheckDigits.mod10("0034043429213510012", check: "3", evens: 3, odds: 1))
        #expect(CheckDigits.luhn("7992739871", check: "3") && !CheckDigits.luhn("7992739871", check: "4"))
        // DPD: ISO 7064 mod 37,36, the check a letter here.
        #expect(CheckDigits.mod37_36("09980000020034", check: "D") && !CheckDigits.mod37_36("09980000020034", check: "E"))
        #expect(CheckDigits.luhn("32059546393", check: "8") && !CheckDigits.luhn("32059546393", check: "9"))
        // GLS: weights 3,1 from the left, plus one, mod 10 (the offset changes the answer).
        let gls = "12345678901"
        let glsCheck = (0...9).first { CheckDigits.mod10(gls, check: String($0), evens: 3, odds: 1, offset: 1) }
        let plainCheck = (0...9).first { CheckDigits.mod10(gls, check: String($0), evens: 3, odds: 1) }
        #expect(glsCheck != nil && plainCheck != nil && glsCheck != plainCheck)
        // Nothing from outside traps: letters where digits go, empty input, huge input.
        #expect(!CheckDigits.s10("ABCDEFGH", check: "1") && !CheckDigits.mod7("", check: "0") && !CheckDigits.mod7(String(repeating: "9", count: 40), check: "1"))
        #expect(!CheckDigits.luhn("", check: "") && !CheckDigits.sumProduct("12", check: "x", weights: [1, 2], modulo1: 11, modulo2: 10))
        #expect(!CheckDigits.mod10("12é", check: "1", evens: 3, odds: 1))
    }

    @Test("Numbers are found in a pasted shipping confirmation; order numbers, phone numbers and dates are not taken for parcels")
    func pastedText() {
        let mail = """
            Hello Ada, thank you for order #100234567 placed on 2026-11-20.
            Call us on +41 79 123 45 67 if needed.
            Your parcel left with UPS: 1Z 999 AA1 01 2345 6784.
            The second box goes by DHL (Sendungsnummer 00340434292135100124), and a letter by post: RB123456785CH.
            """
        let found = Self.detection.numbers(in: mail)
        #expect(found.map(\.number) == ["1Z999AA10123456784", "00340434292135100124", "RB123456785CH"], "\(found.map(\.number))")
        #expect(found.map(\.carrier) == ["ups", "dhl", "swiss_post"])
        #expect(Self.detection.numbers(in: "").isEmpty && Self.detection.numbers(in: String(repeating: "9 ", count: 5000)).count < 5000)
    }

    @Test("Nonsense gives no candidate and never a crash")
    func nonsense() {
        for text in ["", "   ", "abc", String(repeating: "A", count: 1000), "😀1Z999AA10123456784", "1Z999AA1012345678\u{0}4"] {
            #expect(Self.detection.candidates(for: text).isEmpty, "\(text.prefix(20))")
        }
    }

    @Test("A number followed by more figures is still found: the longest group of words with a match wins, each length tried")
    func numbersFollowedByFigures() {
        let text = "USPS 9400 1112 0620 6406 2607 87, 2 items. DHL Express 3318810036 1 piece. Sendungsnummer 00340434292135100124 2 Pakete"
        let found = Self.detection.numbers(in: text)
        #expect(found.map(\.number) == ["9400111206206406260787", "3318810036", "00340434292135100124"], "\(found.map(\.number))")
        #expect(found.map(\.format) == ["usps_impb_n", "dhl_express", "dhl_paket_sscc"])
    }

    @Test("Each format's shape is read from its pattern: the lengths and characters it can match, never fewer than it does")
    func shapes() {
        for format in Self.detection.table.carriers.flatMap(\.formats) {
            #expect(FormatShape(pattern: format.regex) != .anything, "\(format.id) is not read, so never pre-filtered")
        }
        func lengths(_ pattern: String) -> [Int] { (0..<64).filter { FormatShape(pattern: pattern).admits(length: $0) } }
        let ups = #"\s*1\s*Z\s*(?<SerialNumber>(?<ShipperId>(?:[A-Z0-9]\s*){6,6})(?<ServiceType>(?:[A-Z0-9]\s*){2,2})(?<PackageId>(?:[A-Z0-9]\s*){7,7}))(?<CheckDigit>[0-9]\s*)"#
        #expect(lengths(ups) == [18])
        #expect(FormatShape(pattern: ups).admits(Array("1Z999AA10123456784".utf8)))
        #expect(!FormatShape(pattern: ups).admits(Array("1Q999AA10123456784".utf8)) && !FormatShape(pattern: ups).admits(Array("1Z999AA1012345678A".utf8)))
        #expect(lengths(#"\s*(?<SerialNumber>([0-9]\s*){9,10})(?<CheckDigit>([0-9]\s*))"#) == [10, 11])
        #expect(lengths(#"\s*J\s*(J\s*)?D\s*(?<SerialNumber>([0-9]\s*){16})\s*"#) == [18, 19])
        // Lookarounds narrow a match: read as always true, the shape stays a superset.
        #expect(lengths(#"(?=[0-9]{3})[0-9A-Z]{2,4}\b"#) == [2, 3, 4])
        // Whatever the reader does not know admits everything: slower, never wrong.
        for pattern in [#"([0-9])\1"#, "[0-9", #"\p{L}+"#, "a{2", "(?i)abc", "*"] {
            #expect(FormatShape(pattern: pattern) == .anything, "\(pattern)")
        }
        // Every sample number is admitted by its own format's shape (the vectors test checks the
        // result through `candidates(for:)`, which skips formats whose shape refuses a number).
        #expect(FormatShape(pattern: "[A-Z]{2}[0-9]{9}[A-Z]{2}").admits(Array("RB123456785CH".utf8)))
    }

    @Test("Finding numbers costs at most a bounded number of checks a word and `maxChecks` a call, whatever the text; the audit's text costs none")
    func boundedWork() {
        let detection = Self.detection
        let perWord = detection.maxChecksPerWord
        #expect(perWord > 0 && perWord <= 100, "\(perWord)")
        // The audit's text (security audit 2, finding 2): 130 s of CPU before; no format admits it now.
        let audit = detection.scan(String(repeating: "Q 1 ", count: 5_000))
        #expect(audit.numbers.isEmpty && audit.checks == 0 && audit.complete && audit.words == 10_000)
        #expect(detection.scan(String(repeating: "Hello world, see you on Monday. ", count: 600)).checks == 0)
        // Text made of figures: each word may start numbers of many lengths; the work stays within both bounds.
        var random = SplitMix64(seed: 2)
        let figures = (0..<10_000).map { _ in String(Int.random(in: 0...9, using: &random)) }.joined(separator: " ")
        for text in [String(repeating: "9 ", count: 10_000), String(repeating: "1 0 ", count: 5_000), String(repeating: "123456789012 ", count: 1_500), figures] {
            let scan = detection.scan(text)
            #expect(scan.checks <= CarrierDetection.maxChecks && scan.checks <= scan.words * perWord, "\(scan.checks) checks, \(scan.words) words")
            let uncapped = detection.scan(text, maxChecks: .max)
            #expect(uncapped.complete && uncapped.checks <= uncapped.words * perWord, "\(uncapped.checks) checks, \(uncapped.words) words")
        }
        // The cap stops the scan; what was found before it is kept.
        let capped = detection.scan(String(repeating: "123456789012 ", count: 1_500), maxChecks: 100)
        #expect(capped.checks == 100 && !capped.complete && capped.words < 1_500)
        // So does a limit on numbers, and only the first 20,000 characters are read.
        let two = detection.scan("RB123456785CH 00340434292135100124 1Z999AA10123456784", maxNumbers: 2)
        #expect(two.numbers.map(\.number) == ["RB123456785CH", "00340434292135100124"] && !two.complete)
        let long = detection.scan(String(repeating: "a ", count: 10_000) + "RB123456785CH")
        #expect(long.numbers.isEmpty && long.words == 10_000)
    }

    /// The algorithm before the pre-filters and the cap: every group of words at every start, longest
    /// first, against every format (`candidates(for:)`).
    static func formerNumbers(in text: String) -> [CarrierCandidate] {
        let words = text.uppercased().split { !($0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "-")) }
            .map { String($0).trimmingCharacters(in: CharacterSet(charactersIn: ".-")) }
            .filter { !$0.isEmpty }
        let precise = Set(detection.table.carriers.flatMap(\.formats).filter { $0.inText != false }.map(\.id))
        var results: [CarrierCandidate] = []
        var seen: Set<String> = []
        var i = 0
        while i < words.count {
            var joined = ""
            var ends: [(Int, String)] = []
            var end = i
            while end < words.count, joined.count + words[end].count <= 40 {
                joined += words[end]
                ends.append((end, joined))
                if words[end].count > 12 && end > i { break }
                end += 1
            }
            var taken: (Int, CarrierCandidate)?
            for (last, group) in ends.reversed() where group.count >= 8 && group.contains(where: \.isNumber) {
                if let first = detection.candidates(for: group).first(where: { precise.contains($0.format) }) {
                    taken = (last - i + 1, first)
                    break
                }
            }
            guard let (count, best) = taken else { i += 1; continue }
            if seen.insert(best.number).inserted { results.append(best) }
            i += count
        }
        return results
    }

    @Test("The capped scan finds what the former algorithm found, on random text of real numbers (whole or in groups) and noise")
    func scanAsBefore() throws {
        let url = try #require(Bundle.module.url(forResource: "tracking-vectors", withExtension: "json", subdirectory: "Fixtures"))
        let numbers = try JSONDecoder().decode([Vector].self, from: Data(contentsOf: url)).filter(\.valid).map(\.number)
            + ["1Z 999 AA1 01 2345 6784", "99.00.123456.12345678", "9400 1112 0620 6406 2607 87"]
        let noise = ["the", "order", "#100234567", "2026-11-20", "+41", "79", "123", "45", "67", "1", "2", "12", "CHF", "12.90",
                     "x", "Q", "Sendungsnummer", "(", ")", ":", ",", "7", "0", "00", "99", "LX", "1Z", "J"]
        var random = SplitMix64(seed: 11)
        var differences: [String] = []
        for _ in 0..<300 {
            var parts: [String] = []
            for _ in 0..<Int.random(in: 1...25, using: &random) {
                guard Int.random(in: 0..<4, using: &random) == 0 else { parts.append(noise[Int.random(in: 0..<noise.count, using: &random)]); continue }
                var number = numbers[Int.random(in: 0..<numbers.count, using: &random)]
                if Bool.random(using: &random) { // printed in groups
                    number = number.enumerated().map { k, c in k > 0 && Int.random(in: 0..<4, using: &random) == 0 ? " \(c)" : "\(c)" }.joined()
                }
                parts.append(number)
            }
            let text = parts.joined(separator: " ")
            if Self.detection.numbers(in: text) != Self.formerNumbers(in: text) { differences.append(text) }
        }
        #expect(differences.isEmpty, "\(differences.prefix(3))")
    }
}
