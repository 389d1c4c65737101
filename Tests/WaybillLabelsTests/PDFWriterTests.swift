import Foundation
import Testing
@testable import WaybillLabels

@Suite("PDF writer", .serialized)
struct PDFWriterTests {
    static let europeanText = "é è à ç ü ö ß É « » ’ – … € Œuvre Straße"

    @Test("Every cross-reference entry points exactly at its object")
    func crossReference() throws {
        var writer = PDFWriter(title: "Étiquettes (test)")
        for page in 0..<3 {
            writer.beginPage(width: 200 + Double(page), height: 300)
            writer.text("Page \(page) (é) \\ ", x: 10, y: 10, font: .helvetica, size: 12)
        }
        let bytes = writer.data()
        let text = String(decoding: bytes, as: UTF8.self)
        let startxref = try #require(text.range(of: "startxref\n", options: .backwards))
        let offsetLine = text[startxref.upperBound...].prefix { $0 != "\n" }
        let xrefOffset = try #require(Int(offsetLine))
        #expect(Array(bytes[xrefOffset..<xrefOffset + 5]) == Array("xref\n".utf8))
        #expect(text.hasSuffix("%%EOF\n"))
        // Parse the table from the bytes, relying only on the fixed 20-byte entries.
        var cursor = xrefOffset + 5
        let header = bytes[cursor...].prefix { $0 != 0x0A }
        let fields = String(decoding: header, as: UTF8.self).split(separator: " ")
        let count = try #require(Int(fields[1]))
        cursor += header.count + 1
        #expect(text.contains("/Size \(count) /Root 1 0 R"))
        for object in 0..<count {
            let entry = Array(bytes[cursor..<cursor + 20])
            cursor += 20
            #expect(Array(entry[18...]) == [0x0D, 0x0A])
            let offset = try #require(Int(String(decoding: entry[0..<10], as: UTF8.self)))
            if object == 0 {
                #expect(String(decoding: entry[0..<18], as: UTF8.self) == "0000000000 65535 f")
                continue
            }
            let target = Array("\(object) 0 obj".utf8)
            #expect(Array(bytes[offset..<offset + target.count]) == target, "object \(object)")
        }
    }

    @Test("French and German text prints correctly and survives text extraction")
    func winAnsiText() throws {
        var writer = PDFWriter(title: "Accents")
        writer.beginPage(width: 595, height: 200)
        writer.text(Self.europeanText, x: 20, y: 150, font: .helvetica, size: 14)
        writer.text("Parenthèses (ouvertes) et \\barre\\ oblique", x: 20, y: 100, font: .helveticaBold, size: 14)
        let scratch = try Scratch()
        defer { scratch.remove() }
        let pdf = try scratch.write(writer.data(), named: "accents.pdf")
        let check = try Decode.qpdfCheck(pdf)
        #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
        let extracted = try Decode.text(pdf)
        #expect(extracted.contains(Self.europeanText))
        #expect(extracted.contains("Parenthèses (ouvertes) et \\barre\\ oblique"))
    }

    @Test("Unicode maps to WinAnsi bytes, including the 0x80–0x9F specials")
    func winAnsiMapping() {
        #expect(WinAnsi.encode("’–…€") == [0x92, 0x96, 0x85, 0x80])
        #expect(WinAnsi.encode("éÉçß«»") == [0xE9, 0xC9, 0xE7, 0xDF, 0xAB, 0xBB])
        #expect(WinAnsi.encode("e\u{301}") == [0xE9], "decomposed accents are composed first")
        #expect(WinAnsi.encode("a→b") == [0x61, 0x3F, 0x62])
        #expect(WinAnsi.encode("👩‍👩‍👧🇨🇭x") == [0x3F, 0x3F, 0x78], "one ? per emoji")
        #expect(WinAnsi.encode("a\u{0}\u{7}b\tc\r\nd") == [0x61, 0x62, 0x20, 0x63, 0x20, 0x64])
        #expect(WinAnsi.encode("1\u{202F}»") == [0x31, 0xA0, 0xBB])
        for code in UInt8(0x80)...UInt8(0x9F) {
            if let character = WinAnsi.character(for: code) {
                #expect(WinAnsi.encode(String(character)) == [code])
            }
        }
    }

    @Test("Text widths use Helvetica's real metrics so lines can be fitted")
    func widths() {
        // H 722 + e 556 + l 222 + l 222 + o 556 = 2278 units.
        #expect(abs(PDFFont.helvetica.width(of: "Hello", size: 10) - 22.78) < 1e-9)
        // Bold: H 722 + e 556 + l 278 + l 278 + o 611 = 2445 units.
        #expect(abs(PDFFont.helveticaBold.width(of: "Hello", size: 10) - 24.45) < 1e-9)
        #expect(PDFFont.helvetica.width(of: "…", size: 1) == 1)
        #expect(PDFFont.helvetica.width(of: "'", size: 1000) == 191)
        #expect(PDFFont.helvetica.width(of: "-", size: 1000) == 333)
        #expect(PDFFont.helvetica.width(of: "@", size: 1000) == 1015)
        #expect(PDFFont.helvetica.width(of: "W", size: .nan) == 0)
    }

    @Test("Long lines are cut with an ellipsis to fit the measured width")
    func truncation() {
        let long = String(repeating: "Béatrice Dufour-Lefèvre ", count: 20)
        for font in PDFFont.allCases {
            let cut = font.truncate(long, toWidth: 150, size: 11)
            #expect(cut.hasSuffix("…"))
            #expect(font.width(of: cut, size: 11) <= 150)
            #expect(font.width(of: cut, size: 11) > 140)
        }
        #expect(PDFFont.helvetica.truncate("Short", toWidth: 150, size: 11) == "Short")
        #expect(PDFFont.helvetica.truncate("Short", toWidth: 150, size: 11, forceEllipsis: true) == "Short…")
        #expect(PDFFont.helvetica.truncate("Anything", toWidth: 1, size: 11) == "")
        #expect(PDFFont.helvetica.truncate("", toWidth: -5, size: 11) == "")
        let lines = PDFFont.helvetica.wrap("Scannez le code à chaque remise du colis, même à la porte", toWidth: 80, size: 10, maxLines: 2)
        #expect(lines.count == 2)
        #expect(lines.allSatisfy { PDFFont.helvetica.width(of: $0, size: 10) <= 80 })
        #expect(lines.last?.hasSuffix("…") == true)
    }

    @Test("Numbers are written without exponents or locale, whatever the input")
    func numbers() {
        #expect(PDFWriter.number(1.23456) == "1.235")
        #expect(PDFWriter.number(-2.5) == "-2.5")
        #expect(PDFWriter.number(-0.0001) == "0")
        #expect(PDFWriter.number(42) == "42")
        #expect(PDFWriter.number(.nan) == "0")
        #expect(PDFWriter.number(.infinity) == "0")
        #expect(PDFWriter.number(1e300) == "1000000")
        #expect(PDFWriter.literalString(Array("a(b)c\\".utf8)) == Array("(a\\(b\\)c\\\\)".utf8))
    }

    @Test("An empty document still opens, with one blank page")
    func emptyDocument() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let pdf = try scratch.write(PDFWriter().data(), named: "empty.pdf")
        #expect(try Decode.qpdfCheck(pdf).status == 0)
        #expect(try Decode.pdfInfo(pdf).pages == 1)
    }

    @Test("A QR code drawn into a PDF merges runs into one rectangle each")
    func qrRuns() throws {
        let code = try QRCode.encode(handOverLink(seed: 9))
        var writer = PDFWriter()
        writer.qrCode(code, x: 0, top: 500, moduleSize: 3)
        let text = String(decoding: writer.data(), as: UTF8.self)
        var runs = 0
        for y in 0..<code.size {
            for x in 0..<code.size where code[x, y] && !code[x - 1, y] { runs += 1 }
        }
        #expect(text.components(separatedBy: " re\n").count - 1 == runs)
        #expect(text.components(separatedBy: "\nf\n").count - 1 == 1, "one fill for the whole symbol")
    }
}
