import Foundation
import Testing
import WaybillCore

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
}
