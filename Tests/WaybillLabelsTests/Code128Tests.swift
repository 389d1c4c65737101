import Foundation
import Testing
@testable import WaybillLabels

@Suite("Code 128", .serialized)
struct Code128Tests {
    @Test("A Code 128 barcode reads back as its text with an ordinary decoder",
          arguments: ["WB-7K3M9Q", "12345678", "AB1234567890cd", "Waybill 2026", "x", "1234", "a 12345 b", "~!{}|`^_ \\"])
    func roundTrip(_ text: String) throws {
        let modules = try Code128.modules(text)
        let moduleWidth = 1.5 // points, about 0.53 mm
        let width = Double(modules.count + 20) * moduleWidth
        var writer = PDFWriter()
        writer.beginPage(width: width, height: 80)
        writer.barcode(modules, x: 10 * moduleWidth, y: 10, moduleWidth: moduleWidth, height: 60)
        let scratch = try Scratch()
        defer { scratch.remove() }
        let pdf = try scratch.write(writer.data(), named: "code128.pdf")
        let page = try #require(try Decode.render(pdf, dpi: 150, in: scratch).first)
        #expect(try Decode.zbar(page, only: "code128") == [Symbol(type: "CODE-128", data: text)])
    }

    @Test("The check value matches the standard's worked example")
    func checksum() throws {
        // "PJJ123C" in code set B: 104 + 48·1 + 42·2 + 42·3 + 17·4 + 18·5 + 19·6 + 35·7 = 879 ≡ 55 (mod 103).
        #expect(try Code128.symbols("PJJ123C") == [104, 48, 42, 42, 17, 18, 19, 35, 55, 106])
    }

    @Test("Digit runs switch to code set C so the barcode is shorter")
    func codeSetC() throws {
        // All digits: start C, pairs, check (105 + 12 + 68 + 168 + 312 = 665 ≡ 47), stop.
        #expect(try Code128.symbols("12345678") == [105, 12, 34, 56, 78, 47, 106])
        let mixed = try Code128.symbols("AB1234567890cd")
        #expect(Array(mixed.dropLast(2)) == [104, 33, 34, 99, 12, 34, 56, 78, 90, 100, 67, 68])
        // Three digits are cheaper in code set B.
        #expect(try Code128.symbols("A123").contains(99) == false)
        // Odd digit runs: one digit in B, the rest as pairs.
        let odd = try Code128.symbols("A12345")
        #expect(odd.count == 1 + 1 + 1 + 1 + 2 + 2)
        for text in ["WB-7K3M9Q", "12345678", "AB1234567890cd", "Waybill 2026", "1", "123456789"] {
            let symbols = try Code128.symbols(text)
            #expect(symbols.count <= text.count + 3, "never longer than plain code set B")
        }
    }

    @Test("Modules form whole symbols: start, data, check, and the 13-module stop")
    func moduleStructure() throws {
        let text = "WB-7K3M9Q"
        let symbols = try Code128.symbols(text)
        let modules = try Code128.modules(text)
        #expect(modules.count == (symbols.count - 1) * 11 + 13)
        #expect(modules.first == true)
        #expect(Array(modules.suffix(13)) == [true, true, false, false, false, true, true, true, false, true, false, true, true])
        // The pattern table: 106 distinct 11-module symbols plus the stop.
        #expect(Code128.patterns.count == 107)
        #expect(Code128.patterns.dropLast().allSatisfy { $0.count == 6 && $0.reduce(0, +) == 11 })
        #expect(Set(Code128.patterns.dropLast().map { $0.map(String.init).joined() }).count == 106)
        #expect(Code128.patterns[106].reduce(0, +) == 13)
    }

    @Test("Text a Code 128 label cannot carry is refused, not garbled")
    func rejectsUnsupported() {
        #expect(throws: Code128Error.empty) { try Code128.modules("") }
        #expect(throws: Code128Error.unsupportedCharacter("é")) { try Code128.modules("Café") }
        #expect(throws: Code128Error.unsupportedCharacter("\n")) { try Code128.modules("A\nB") }
        #expect(throws: Code128Error.unsupportedCharacter("\u{7F}")) { try Code128.modules("\u{7F}") }
    }
}
