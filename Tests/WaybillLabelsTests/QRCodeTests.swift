import Foundation
import Testing
@testable import WaybillLabels

struct QRCase: Sendable, CustomTestStringConvertible {
    let name: String
    let payload: String
    let correction: QRErrorCorrection
    var testDescription: String { "\(name) at \(correction)" }
}

private let url60 = "https://waybill.example/h/Zx8pQ3vT7mK2LwB9dR4sN6yH1cF5gJ0aEu" // 60 characters
private let text150 = String(repeating: "Parcel WB-7K3M9Q, 2–5 kg; ", count: 6).prefix(150).description
private let text400 = String((0..<400).map { index in
    Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789 -./:")[(index * 7 + index / 3) % 67]
})
private let utf8Text = "Zürich → Genève ✓"

private let roundTripCases: [QRCase] = {
    let payloads: [(String, String)] = [
        ("1 character", "W"),
        ("17 characters", "WB-7K3M9Q parcel!"),
        ("60-character link", url60),
        ("150 characters", text150),
        ("400 characters", text400),
        ("UTF-8 text", utf8Text),
    ]
    var cases: [QRCase] = []
    for (name, payload) in payloads {
        cases.append(QRCase(name: name, payload: payload, correction: .low))
        cases.append(QRCase(name: name, payload: payload, correction: .medium))
    }
    cases.append(QRCase(name: "60-character link", payload: url60, correction: .high))
    cases.append(QRCase(name: "150 characters", payload: text150, correction: .quartile))
    return cases
}()

@Suite("QR codes", .serialized)
struct QRCodeTests {
    @Test("Test payloads have the lengths the cases claim")
    func payloadLengths() {
        #expect(url60.count == 60)
        #expect(text150.count == 150)
        #expect(text400.count == 400)
    }

    @Test("A QR code reads back as its exact text with an ordinary decoder", arguments: roundTripCases)
    func roundTrip(_ testCase: QRCase) throws {
        let code = try QRCode.encode(testCase.payload, correction: testCase.correction)
        let scratch = try Scratch()
        defer { scratch.remove() }
        let pdf = try scratch.write(Decode.pdf(for: code), named: "qr.pdf")
        let pages = try Decode.render(pdf, dpi: 150, in: scratch)
        let page = try #require(pages.first)
        let symbols = try Decode.zbar(page, only: "qrcode")
        #expect(symbols == [Symbol(type: "QR-Code", data: testCase.payload)],
                "version \(code.version), mask \(code.mask)")
    }

    @Test("A large symbol (version 7 or more) carries version information a decoder accepts")
    func versionInformation() throws {
        let payload = String(repeating: "0123456789abcde", count: 10) // 150 bytes
        let code = try QRCode.encode(payload, correction: .medium)
        #expect(code.version == 8)
        let large = try QRCode.encode(String(repeating: "x", count: 1200), correction: .low)
        #expect(large.version >= 20)
        let scratch = try Scratch()
        defer { scratch.remove() }
        for (index, symbol) in [code, large].enumerated() {
            let pdf = try scratch.write(Decode.pdf(for: symbol, modulePoints: 2), named: "v\(index).pdf")
            let page = try #require(try Decode.render(pdf, dpi: 150, in: scratch).first)
            let decoded = try Decode.zbar(page, only: "qrcode").map(\.data)
            #expect(decoded == [index == 0 ? payload : String(repeating: "x", count: 1200)])
        }
    }

    @Test("The smallest version that holds the data is chosen")
    func minimalVersion() throws {
        #expect(try QRCode.encode("HELLO WORLD", correction: .medium).version == 1)
        #expect(try QRCode.encode(String(repeating: "a", count: 32), correction: .medium).version == 3)
        #expect(try QRCode.encode(String(repeating: "a", count: 14), correction: .medium).version == 1)
        #expect(try QRCode.encode(String(repeating: "a", count: 15), correction: .medium).version == 2)
        #expect(try QRCode.encode(String(repeating: "a", count: 17), correction: .low).version == 1)
        #expect(try QRCode.encode(String(repeating: "a", count: 18), correction: .low).version == 2)
        #expect(try QRCode.encode(String(repeating: "a", count: 7), correction: .high).version == 1)
        // A 69-character hand-over link fits version 5 at level M (84 bytes).
        #expect(try QRCode.encode(handOverLink(seed: 1), correction: .medium).version == 5)
        // Every boundary from version 1 to 10 at level M.
        for version in 1...10 {
            let capacity = QRCode.byteCapacity(version: version, correction: .medium)
            #expect(try QRCode.encode(String(repeating: "z", count: capacity)).version == version)
            #expect(try QRCode.encode(String(repeating: "z", count: capacity + 1)).version == version + 1)
        }
    }

    @Test("Byte capacities match the published table for every level")
    func capacities() {
        let published: [Int: [Int]] = [
            1: [17, 14, 11, 7], 2: [32, 26, 20, 14], 5: [106, 84, 60, 44], 7: [154, 122, 86, 64],
            10: [271, 213, 151, 119], 20: [858, 666, 482, 382], 25: [1273, 997, 715, 535],
            40: [2953, 2331, 1663, 1273],
        ]
        for (version, expected) in published {
            let actual = QRErrorCorrection.allCases.map { QRCode.byteCapacity(version: version, correction: $0) }
            #expect(actual == expected, "version \(version)")
        }
    }

    @Test("Every version's blocks add up to the symbol's codeword count")
    func blockStructure() {
        for version in 1...40 {
            for level in QRErrorCorrection.allCases {
                let layout = QRTables.blockLayout(version: version, level: level)
                let total = layout.dataPerBlock.reduce(0, +) + layout.dataPerBlock.count * layout.eccPerBlock
                #expect(total == QRTables.totalCodewords(version: version))
                #expect(layout.dataPerBlock.reduce(0, +) == QRTables.dataCodewords(version: version, level: level))
                // Short blocks come first and differ from long blocks by one codeword.
                #expect(layout.dataPerBlock == layout.dataPerBlock.sorted())
                #expect((layout.dataPerBlock.max() ?? 0) - (layout.dataPerBlock.min() ?? 0) <= 1)
            }
        }
        // Spot checks against Table 9: 5-Q is 2×(33,15) + 2×(34,16).
        #expect(QRTables.blockLayout(version: 5, level: .quartile).dataPerBlock == [15, 15, 16, 16])
        #expect(QRTables.blockLayout(version: 5, level: .quartile).eccPerBlock == 18)
    }

    @Test("Text too long for any version is rejected with a clear error")
    func tooLong() {
        #expect(throws: QRCodeError.dataTooLong(byteCount: 2332, maximum: 2331)) {
            try QRCode.encode(String(repeating: "a", count: 2332), correction: .medium)
        }
        #expect((try? QRCode.encode(String(repeating: "a", count: 2953), correction: .low))?.version == 40)
    }

    @Test("Reed–Solomon codewords match the worked example of the standard")
    func reedSolomon() {
        // "HELLO WORLD" as 1-M data codewords and its published EC codewords.
        let data: [UInt8] = [32, 91, 11, 120, 209, 114, 220, 77, 67, 64, 236, 17, 236, 17, 236, 17]
        let ecc = ReedSolomon.remainder(data, generator: ReedSolomon.generator(degree: 10))
        #expect(ecc == [196, 35, 39, 119, 235, 215, 231, 226, 93, 23])
        // ISO/IEC 18004 Annex I: "01234567" at 1-M.
        let annex: [UInt8] = [0x10, 0x20, 0x0C, 0x56, 0x61, 0x80, 0xEC, 0x11, 0xEC, 0x11, 0xEC, 0x11, 0xEC, 0x11, 0xEC, 0x11]
        #expect(ReedSolomon.remainder(annex, generator: ReedSolomon.generator(degree: 10))
            == [0xA5, 0x24, 0xD4, 0xC1, 0xED, 0x36, 0xC7, 0x87, 0x2C, 0x55])
    }

    @Test("Format and version information use the standard's BCH codes")
    func bchCodes() {
        #expect(QRMatrix.formatInformation(correction: .medium, mask: 0) == 0b101010000010010)
        #expect(QRMatrix.formatInformation(correction: .low, mask: 0) == 0b111011111000100)
        #expect(QRMatrix.formatInformation(correction: .low, mask: 4) == 0b110011000101111)
        #expect(QRMatrix.formatInformation(correction: .high, mask: 7) == 0b000100000111011)
        #expect(QRMatrix.versionInformation(version: 7) == 0x07C94)
        #expect(QRMatrix.versionInformation(version: 40) == 0x28C69)
    }

    @Test("Alignment pattern positions match the standard's spacing rule")
    func alignmentPositions() {
        for version in 2...40 {
            let count = version / 7 + 2
            let size = version * 4 + 17
            let step = version == 32 ? 26 : (version * 4 + count * 2 + 1) / (count * 2 - 2) * 2
            var expected = [6]
            var positions: [Int] = []
            var position = size - 7
            for _ in 0..<(count - 1) {
                positions.insert(position, at: 0)
                position -= step
            }
            expected += positions
            #expect(QRTables.alignmentPositions[version] == expected, "version \(version)")
        }
    }

    @Test("Finder, timing and dark modules sit where scanners look for them")
    func functionPatterns() throws {
        let code = try QRCode.encode(handOverLink(seed: 7))
        let n = code.size
        #expect(n == code.version * 4 + 17)
        for (cx, cy) in [(3, 3), (n - 4, 3), (3, n - 4)] {
            #expect(code[cx, cy] && code[cx - 3, cy - 3] && code[cx + 3, cy + 3])
            #expect(!code[cx - 2, cy] && !code[cx + 2, cy])
        }
        for index in 8..<(n - 8) {
            #expect(code[index, 6] == (index % 2 == 0))
            #expect(code[6, index] == (index % 2 == 0))
        }
        #expect(code[8, n - 8])
        #expect(!code[-1, 0] && !code[n, n])
    }

    @Test("The chosen mask is the one with the lowest penalty")
    func maskChoice() throws {
        let payload = handOverLink(seed: 3)
        let code = try QRCode.encode(payload)
        let data = QRCode.dataCodewords(bytes: Array(payload.utf8), version: code.version, correction: .medium)
        let codewords = QRCode.interleavedWithErrorCorrection(data, version: code.version, correction: .medium)
        var base = QRMatrix(version: code.version)
        base.drawFunctionPatterns()
        base.drawCodewords(codewords)
        let penalties = (0..<8).map { mask -> Int in
            var candidate = base
            candidate.applyMask(mask)
            candidate.drawFormatBits(correction: .medium, mask: mask)
            return candidate.penalty()
        }
        #expect(penalties[code.mask] == penalties.min())
    }

    @Test("The SVG is compact, crisp and has an accessible, escaped name")
    func svg() throws {
        let code = try QRCode.encode("https://waybill.example/h/abc")
        let svg = code.svg(moduleSize: 5, quietZone: 4, accessibilityLabel: "Link for <Anna & \"Bo\">\u{1}")
        #expect(svg.hasPrefix("<svg "))
        #expect(svg.contains("shape-rendering=\"crispEdges\""))
        #expect(svg.contains("role=\"img\""))
        #expect(svg.contains("aria-label=\"Link for &lt;Anna &amp; &quot;Bo&quot;&gt;\""))
        #expect(svg.contains("<rect width=\"\(code.size + 8)\" height=\"\(code.size + 8)\" fill=\"#fff\"/>"))
        #expect(svg.components(separatedBy: "<path").count == 2)
        #expect(svg.contains("width=\"\((code.size + 8) * 5)\""))
        // The runs in the path cover exactly the dark modules.
        let path = try #require(svg.components(separatedBy: "d=\"").last?.components(separatedBy: "\"").first)
        var covered = Set<[Int]>()
        for run in path.split(separator: "M") {
            let parts = run.split(whereSeparator: { "hvz ".contains($0) })
            let x = try #require(Int(parts[0])), y = try #require(Int(parts[1])), length = try #require(Int(parts[2]))
            for offset in 0..<length { covered.insert([x + offset - 4, y - 4]) }
        }
        var dark = Set<[Int]>()
        for y in 0..<code.size { for x in 0..<code.size where code[x, y] { dark.insert([x, y]) } }
        #expect(covered == dark)
    }
}
