import Foundation
import Testing
@testable import WaybillLabels

/// French and German sample labels with distinct references and links.
func sampleLabels(_ count: Int) -> [LabelContent] {
    let receivers: [[String]] = [
        ["Béatrice Dufour-Lefèvre", "Avenue de la Gare 3", "Bâtiment B, 2e étage", "1003 Lausanne", "Suisse"],
        ["Jürgen Groß", "Königstraße 15", "70173 Stuttgart"],
        ["François Müller", "« Les Tilleuls »", "Chemin des Crêts 9", "1218 Le Grand-Saconnex"],
        ["Zoë Øster", "Via Cantonale 4", "6900 Lugano"],
        ["Ælfrida O’Brien", "Rue du Rhône 100", "1204 Genève"],
    ]
    return (0..<count).map { index in
        LabelContent(
            reference: "WB-7K3M\(index)Q",
            service: index % 2 == 0 ? "Express · 2–5 kg" : "Standard · jusqu’à 2 kg",
            senderTitle: index % 2 == 0 ? "De" : "Von",
            receiverTitle: index % 2 == 0 ? "À" : "An",
            sender: ["Atelier Lumière SàRL", "Rue de l’Industrie 12", "1205 Genève"],
            receiver: receivers[index % receivers.count],
            qrPayload: handOverLink(seed: UInt64(index + 100)),
            note: index % 2 == 0 ? "Scannez ce code à chaque remise du colis" : "Bei jeder Übergabe scannen",
            date: "12 mars 2026"
        )
    }
}

@Suite("Shipping labels", .serialized)
struct ShippingLabelTests {
    /// Writes samples when WAYBILL_LABELS_SAMPLES names a directory, for eyeballing.
    func keepSample(_ bytes: [UInt8], named name: String) {
        guard let directory = ProcessInfo.processInfo.environment["WAYBILL_LABELS_SAMPLES"], !directory.isEmpty else { return }
        try? Data(bytes).write(to: URL(fileURLWithPath: directory).appendingPathComponent(name))
    }

    @Test("A single A6 label is a valid one-page A6 PDF")
    func a6Document() throws {
        let bytes = ShippingLabel.pdf(sampleLabels(1), layout: .a6, title: "Étiquette WB-7K3M0Q")
        keepSample(bytes, named: "label-a6.pdf")
        let scratch = try Scratch()
        defer { scratch.remove() }
        let pdf = try scratch.write(bytes, named: "a6.pdf")
        let check = try Decode.qpdfCheck(pdf)
        #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
        #expect(!check.stdout.lowercased().contains("xref") && !check.stderr.lowercased().contains("warning"))
        let info = try Decode.pdfInfo(pdf)
        #expect(info.pages == 1)
        #expect(info.size.hasPrefix("297.638 x 419.528") || info.size.hasPrefix("297.64 x 419.53"), "\(info.size)")
    }

    @Test("A label's QR code reads back as its hand-over link, and its barcode as its reference, with an ordinary decoder")
    func a6Decodes() throws {
        let label = try #require(sampleLabels(1).first)
        let scratch = try Scratch()
        defer { scratch.remove() }
        let pdf = try scratch.write(ShippingLabel.pdf([label], layout: .a6), named: "a6.pdf")
        let page = try #require(try Decode.render(pdf, dpi: 200, in: scratch).first)
        let symbols = Set(try Decode.zbar(page))
        #expect(symbols == [Symbol(type: "QR-Code", data: label.qrPayload), Symbol(type: "CODE-128", data: label.reference)])
    }

    @Test("Label text, accents included, is real text a PDF reader can extract")
    func extractableText() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let pdf = try scratch.write(ShippingLabel.pdf(sampleLabels(1), layout: .a6), named: "a6.pdf")
        let text = try Decode.text(pdf)
        for expected in ["WB-7K3M0Q", "Genève", "Béatrice Dufour-Lefèvre", "Express · 2–5 kg", "Rue de l’Industrie 12", "12 mars 2026", "DE", "À"] {
            #expect(text.contains(expected), "missing \(expected)")
        }
    }

    @Test("Five labels on A4 fill two pages of four, each label scannable")
    func a4Sheet() throws {
        let labels = sampleLabels(5)
        let bytes = ShippingLabel.pdf(labels, layout: .a4Four, title: "Étiquettes")
        keepSample(bytes, named: "label-a4.pdf")
        let scratch = try Scratch()
        defer { scratch.remove() }
        let pdf = try scratch.write(bytes, named: "a4.pdf")
        let check = try Decode.qpdfCheck(pdf)
        #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
        let info = try Decode.pdfInfo(pdf)
        #expect(info.pages == 2)
        #expect(info.size.hasPrefix("595.276 x 841.89") || info.size.hasPrefix("595.28 x 841.89"), "\(info.size)")

        let pages = try Decode.render(pdf, dpi: 200, in: scratch)
        #expect(pages.count == 2)
        var found = Set<Symbol>()
        for page in pages { found.formUnion(try Decode.zbar(page)) }
        let expected = Set(labels.flatMap {
            [Symbol(type: "QR-Code", data: $0.qrPayload), Symbol(type: "CODE-128", data: $0.reference)]
        })
        #expect(found == expected)

        let text = try Decode.text(pdf)
        for name in ["Béatrice", "Jürgen Groß", "François Müller", "Ælfrida O’Brien", "Genève", "« Les Tilleuls »"] {
            #expect(text.contains(name), "missing \(name)")
        }
    }

    static let hostile = LabelContent(
        reference: String(repeating: "WB-ÉÉ-", count: 90),
        service: String(repeating: "Express 🚚 · ", count: 50),
        senderTitle: "",
        receiverTitle: String(repeating: "À ", count: 300),
        sender: ["", "   ", "\u{0}\u{1B}[31mBell\u{7}", String(repeating: "x", count: 500), "", "a", "b", "c", "d"],
        receiver: [String(repeating: "👩‍👩‍👧 Zoë ", count: 60), "\t\n", String(repeating: "(Straße) \\ ", count: 50),
                   "1", "2", "3", "4", "5"],
        qrPayload: String(repeating: "ü", count: 1500),
        note: String(repeating: "Überlange Notiz ohne Ende ", count: 30),
        date: String(repeating: "2026-03-12 ", count: 50)
    )

    @Test("Hostile text (500-character lines, blanks, control characters, emoji) still yields a valid PDF")
    func hostileInput() throws {
        let empty = LabelContent(reference: "", service: "", senderTitle: "", receiverTitle: "",
                                 sender: [], receiver: [], qrPayload: "", note: "", date: "")
        let tooLongForQR = LabelContent(reference: "WB-1", service: "S", senderTitle: "De", receiverTitle: "À",
                                        sender: ["A"], receiver: ["B"], qrPayload: String(repeating: "q", count: 5000))
        let scratch = try Scratch()
        defer { scratch.remove() }
        for (index, layout) in LabelLayout.allCases.enumerated() {
            let bytes = ShippingLabel.pdf([Self.hostile, empty, tooLongForQR], layout: layout)
            keepSample(bytes, named: "hostile-\(layout).pdf")
            let pdf = try scratch.write(bytes, named: "hostile-\(index).pdf")
            let check = try Decode.qpdfCheck(pdf)
            #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
            #expect(try Decode.pdfInfo(pdf).pages == (layout == .a6 ? 3 : 1))
            let text = try Decode.text(pdf)
            #expect(text.contains("…"), "long lines end in an ellipsis")
            #expect(text.contains("(Straße) \\"))
        }
    }

    @Test("A label never prints outside its own quarter of the A4 sheet")
    func staysInsideCell() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let pdf = try scratch.write(ShippingLabel.pdf([Self.hostile], layout: .a4Four), named: "cell.pdf")
        let page = try #require(try Decode.render(pdf, dpi: 72, in: scratch, format: "pgm").first)
        let image = try GrayImage(contentsOf: page)
        // Ignore the dashed cut lines (and anti-aliasing) within 3 px of the centre lines.
        var strayInk = 0
        for y in 0..<image.height {
            for x in 0..<image.width {
                let inFirstCell = x < image.width / 2 - 3 && y < image.height / 2 - 3
                let onCutLine = abs(x - image.width / 2) <= 3 || abs(y - image.height / 2) <= 3
                if !inFirstCell && !onCutLine && image[x, y] < 200 { strayInk += 1 }
            }
        }
        #expect(strayInk == 0)
        var ink = 0
        for y in 0..<(image.height / 2 - 3) { for x in 0..<(image.width / 2 - 3) where image[x, y] < 128 { ink += 1 } }
        #expect(ink > 1000, "the hostile label itself was drawn")
    }

    @Test("No labels gives one blank page of the layout's size")
    func noLabels() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        for (index, layout) in LabelLayout.allCases.enumerated() {
            let pdf = try scratch.write(ShippingLabel.pdf([], layout: layout), named: "none-\(index).pdf")
            #expect(try Decode.qpdfCheck(pdf).status == 0)
            let info = try Decode.pdfInfo(pdf)
            #expect(info.pages == 1)
            #expect(info.size.hasPrefix(layout == .a6 ? "297.6" : "595.2"), "\(info.size)")
        }
    }

    @Test("A hand-over link's QR code prints about 37 mm wide, big enough for a phone camera")
    func qrSize() throws {
        let code = try QRCode.encode(handOverLink(seed: 1), correction: .medium)
        let placement = ShippingLabel.qrPlacement(symbolSize: code.size)
        #expect(placement.side >= 35 && placement.side <= 40, "\(placement.side) mm")
        // Quiet zone: 4 modules clear of the receiver frame, the barcode and the label edge.
        #expect(placement.top - 4 * placement.module >= 81.25)
        #expect(placement.top + placement.side + 4 * placement.module <= 127 + 1e-9)
        #expect(4 * placement.module <= ShippingLabel.margin)
        // Even tiny or huge symbols keep the quiet zone inside the band.
        for size in [21, 177] {
            let other = ShippingLabel.qrPlacement(symbolSize: size)
            #expect(other.top - 4 * other.module >= 81.25 && 4 * other.module <= ShippingLabel.margin)
        }
    }

    @Test("Barcode bars are at least 0.33 mm wide with 10-module quiet zones, or left out")
    func barcodeSize() throws {
        let typical = try Code128.modules("WB-7K3M9Q").count
        #expect(ShippingLabel.barcodeModuleWidth(moduleCount: typical) == 0.5)
        let longest = try Code128.modules(String(repeating: "A", count: 18)).count
        let width = try #require(ShippingLabel.barcodeModuleWidth(moduleCount: longest))
        #expect(width >= 0.33 && Double(longest + 20) * width <= ShippingLabel.contentWidth)
        #expect(ShippingLabel.barcodeModuleWidth(moduleCount: try Code128.modules(String(repeating: "A", count: 40)).count) == nil)
    }

    @Test("The same labels always produce byte-identical PDFs")
    func deterministic() {
        #expect(ShippingLabel.pdf(sampleLabels(3), layout: .a4Four) == ShippingLabel.pdf(sampleLabels(3), layout: .a4Four))
    }
}

/// A binary PGM (P5) image as written by `pdftoppm -gray`.
struct GrayImage {
    let width: Int
    let height: Int
    let pixels: [UInt8]

    init(contentsOf url: URL) throws {
        let bytes = [UInt8](try Data(contentsOf: url))
        var fields: [String] = []
        var index = 0
        while fields.count < 4 && index < bytes.count {
            while index < bytes.count && (bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D || bytes[index] == 0x09) { index += 1 }
            var field = ""
            while index < bytes.count && !(bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D || bytes[index] == 0x09) {
                field.append(Character(Unicode.Scalar(bytes[index])))
                index += 1
            }
            fields.append(field)
        }
        index += 1 // the single whitespace after maxval
        guard fields.count == 4, fields[0] == "P5", let width = Int(fields[1]), let height = Int(fields[2]),
              bytes.count >= index + width * height else {
            throw MissingTool(description: "pdftoppm -gray did not produce a binary PGM")
        }
        self.width = width
        self.height = height
        pixels = Array(bytes[index..<index + width * height])
    }

    subscript(x: Int, y: Int) -> UInt8 { pixels[y * width + x] }
}
