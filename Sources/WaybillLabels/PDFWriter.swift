import Foundation

/// A rectangle in PDF points, origin at the bottom-left of the page.
public struct PDFRect: Sendable, Hashable {
    public var x: Double
    public var y: Double
    public var width: Double
    public var height: Double

    public init(x: Double, y: Double, width: Double, height: Double) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }
}

/// A minimal PDF 1.4 writer for print output: rectangles, lines and text in
/// the built-in Helvetica fonts.
///
/// Labels only need black shapes and Latin text, and a few hundred lines of
/// writer beat a dependency on a rendering stack that is missing on Linux
/// servers. Coordinates are PDF points (1/72 in) with the origin at the
/// bottom-left of the page. Output is deterministic (no dates, no IDs), so
/// the same input always yields byte-identical files.
public struct PDFWriter: Sendable {
    struct Page: Sendable {
        var width: Double
        var height: Double
        var content: [UInt8] = []
    }

    /// Document title shown by PDF viewers instead of the file name.
    public var title: String?
    private var pages: [Page] = []

    /// A4 in points, used when drawing starts before any `beginPage` call.
    public static let a4 = (width: 595.2756, height: 841.8898)

    public init(title: String? = nil) {
        self.title = title
    }

    /// Number of pages begun so far.
    public var pageCount: Int { pages.count }

    /// Starts a new page; later drawing goes to it. Sizes are clamped to
    /// 1–14 400 pt, the range every PDF reader accepts.
    public mutating func beginPage(width: Double, height: Double) {
        pages.append(Page(width: PDFWriter.clampSize(width), height: PDFWriter.clampSize(height)))
    }

    private static func clampSize(_ value: Double) -> Double {
        guard value.isFinite else { return 1 }
        return min(max(value, 1), 14_400)
    }

    private mutating func emit(_ operators: String) {
        if pages.isEmpty { beginPage(width: PDFWriter.a4.width, height: PDFWriter.a4.height) }
        pages[pages.count - 1].content.append(contentsOf: Array(operators.utf8))
    }

    private mutating func emit(bytes: [UInt8]) {
        if pages.isEmpty { beginPage(width: PDFWriter.a4.width, height: PDFWriter.a4.height) }
        pages[pages.count - 1].content.append(contentsOf: bytes)
    }

    // MARK: Drawing

    /// Fills one rectangle. `gray` runs from 0 (black) to 1 (white).
    public mutating func fillRect(_ rect: PDFRect, gray: Double = 0) {
        fillRects([rect], gray: gray)
    }

    /// Fills many rectangles as one path, so touching rectangles render as a
    /// single shape without hairline seams (important for QR codes).
    public mutating func fillRects(_ rects: [PDFRect], gray: Double = 0) {
        guard !rects.isEmpty else { return }
        var operators = "\(PDFWriter.number(PDFWriter.unit(gray))) g\n"
        for rect in rects {
            operators += "\(PDFWriter.number(rect.x)) \(PDFWriter.number(rect.y)) \(PDFWriter.number(rect.width)) \(PDFWriter.number(rect.height)) re\n"
        }
        operators += "f\n"
        emit(operators)
    }

    /// Outlines a rectangle; `dash` lists on/off lengths in points.
    public mutating func strokeRect(_ rect: PDFRect, lineWidth: Double = 0.5, gray: Double = 0, dash: [Double] = []) {
        let path = "\(PDFWriter.number(rect.x)) \(PDFWriter.number(rect.y)) \(PDFWriter.number(rect.width)) \(PDFWriter.number(rect.height)) re"
        stroke(path: path, lineWidth: lineWidth, gray: gray, dash: dash)
    }

    /// Draws a straight line; `dash` lists on/off lengths in points.
    public mutating func line(fromX x1: Double, y y1: Double, toX x2: Double, y y2: Double,
                              lineWidth: Double = 0.5, gray: Double = 0, dash: [Double] = []) {
        let path = "\(PDFWriter.number(x1)) \(PDFWriter.number(y1)) m \(PDFWriter.number(x2)) \(PDFWriter.number(y2)) l"
        stroke(path: path, lineWidth: lineWidth, gray: gray, dash: dash)
    }

    private mutating func stroke(path: String, lineWidth: Double, gray: Double, dash: [Double]) {
        let width = lineWidth.isFinite ? min(max(lineWidth, 0), 100) : 0.5
        let pattern = dash.filter { $0.isFinite && $0 > 0 }.map { PDFWriter.number($0) }.joined(separator: " ")
        emit("q \(PDFWriter.number(width)) w \(PDFWriter.number(PDFWriter.unit(gray))) G [\(pattern)] 0 d \(path) S Q\n")
    }

    /// Draws one line of text with its baseline starting at (`x`, `y`).
    /// Characters outside WinAnsi print as "?"; nothing is wrapped or cut,
    /// so measure with `PDFFont.width(of:size:)` or `truncate` first.
    public mutating func text(_ text: String, x: Double, y: Double, font: PDFFont, size: Double, gray: Double = 0) {
        let codes = WinAnsi.encode(text)
        guard !codes.isEmpty, size.isFinite, size > 0 else { return }
        var bytes = Array("BT \(PDFWriter.number(PDFWriter.unit(gray))) g /\(font.resourceName) \(PDFWriter.number(min(size, 1000))) Tf \(PDFWriter.number(x)) \(PDFWriter.number(y)) Td ".utf8)
        bytes.append(contentsOf: PDFWriter.literalString(codes))
        bytes.append(contentsOf: Array(" Tj ET\n".utf8))
        emit(bytes: bytes)
    }

    /// Draws a QR symbol with its top-left module corner at (`x`, `top`).
    /// Horizontal runs of dark modules become single rectangles, which
    /// keeps a version 10 symbol to a few kilobytes. The quiet zone is not
    /// drawn: keep 4 modules around the symbol free of ink.
    public mutating func qrCode(_ code: QRCode, x: Double, top: Double, moduleSize: Double) {
        guard moduleSize.isFinite, moduleSize > 0 else { return }
        var rects: [PDFRect] = []
        for row in 0..<code.size {
            var column = 0
            while column < code.size {
                guard code[column, row] else { column += 1; continue }
                let start = column
                while column < code.size && code[column, row] { column += 1 }
                rects.append(PDFRect(x: x + Double(start) * moduleSize,
                                     y: top - Double(row + 1) * moduleSize,
                                     width: Double(column - start) * moduleSize,
                                     height: moduleSize))
            }
        }
        fillRects(rects)
    }

    /// Draws linear barcode modules (`true` = bar) from `x`, bars spanning
    /// `y` to `y + height`. Adjacent bar modules merge into one rectangle.
    public mutating func barcode(_ modules: [Bool], x: Double, y: Double, moduleWidth: Double, height: Double) {
        guard moduleWidth.isFinite, moduleWidth > 0, height.isFinite, height > 0 else { return }
        var rects: [PDFRect] = []
        var index = 0
        while index < modules.count {
            guard modules[index] else { index += 1; continue }
            let start = index
            while index < modules.count && modules[index] { index += 1 }
            rects.append(PDFRect(x: x + Double(start) * moduleWidth, y: y,
                                 width: Double(index - start) * moduleWidth, height: height))
        }
        fillRects(rects)
    }

    // MARK: Serialisation

    /// The finished PDF. A document without pages gets one blank A4 page,
    /// because a PDF must have at least one page to open anywhere.
    public func data() -> [UInt8] {
        var pages = self.pages
        if pages.isEmpty { pages.append(Page(width: PDFWriter.a4.width, height: PDFWriter.a4.height)) }

        // 1 catalog, 2 page tree, 3–4 fonts, 5 info, then page + content pairs.
        let firstPage = 6
        let objectCount = firstPage + pages.count * 2 // including object 0
        var output: [UInt8] = []
        var offsets = [Int](repeating: 0, count: objectCount)

        func write(_ string: String) { output.append(contentsOf: Array(string.utf8)) }
        func beginObject(_ number: Int) {
            offsets[number] = output.count
            write("\(number) 0 obj\n")
        }

        write("%PDF-1.4\n")
        // A comment with high bytes tells transfer tools the file is binary.
        output.append(contentsOf: [0x25, 0xE2, 0xE3, 0xCF, 0xD3, 0x0A])

        beginObject(1)
        write("<< /Type /Catalog /Pages 2 0 R >>\nendobj\n")

        beginObject(2)
        let kids = (0..<pages.count).map { "\(firstPage + $0 * 2) 0 R" }.joined(separator: " ")
        write("<< /Type /Pages /Kids [\(kids)] /Count \(pages.count) >>\nendobj\n")

        for (offset, font) in PDFFont.allCases.enumerated() {
            beginObject(3 + offset)
            write("<< /Type /Font /Subtype /Type1 /BaseFont /\(font.baseFont) /Encoding /WinAnsiEncoding >>\nendobj\n")
        }

        beginObject(5)
        var info = "<< /Producer \(PDFWriter.textString("Waybill"))"
        if let title { info += " /Title \(PDFWriter.textString(title))" }
        write(info + " >>\nendobj\n")

        for (index, page) in pages.enumerated() {
            let pageObject = firstPage + index * 2
            beginObject(pageObject)
            write("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 \(PDFWriter.number(page.width)) \(PDFWriter.number(page.height))]"
                + " /Resources << /Font << /F1 3 0 R /F2 4 0 R >> /ProcSet [/PDF /Text] >>"
                + " /Contents \(pageObject + 1) 0 R >>\nendobj\n")
            beginObject(pageObject + 1)
            write("<< /Length \(page.content.count) >>\nstream\n")
            output.append(contentsOf: page.content)
            write("\nendstream\nendobj\n")
        }

        let xrefOffset = output.count
        write("xref\n0 \(objectCount)\n")
        write("0000000000 65535 f\r\n")
        for number in 1..<objectCount {
            write(PDFWriter.padded(offsets[number]) + " 00000 n\r\n")
        }
        write("trailer\n<< /Size \(objectCount) /Root 1 0 R /Info 5 0 R >>\nstartxref\n\(xrefOffset)\n%%EOF\n")
        return output
    }

    // MARK: Formatting helpers

    private static func unit(_ value: Double) -> Double {
        value.isFinite ? min(max(value, 0), 1) : 0
    }

    private static func padded(_ offset: Int) -> String {
        let digits = String(offset)
        return String(repeating: "0", count: max(0, 10 - digits.count)) + digits
    }

    /// Locale-independent number with at most three decimals and no
    /// exponent; non-finite or huge values are clamped so any input is safe.
    static func number(_ value: Double) -> String {
        guard value.isFinite else { return "0" }
        let clamped = min(max(value, -1_000_000), 1_000_000)
        var thousandths = Int((clamped * 1000).rounded())
        let negative = thousandths < 0
        thousandths = abs(thousandths)
        let whole = thousandths / 1000
        let fraction = thousandths % 1000
        var result = negative ? "-" : ""
        result += String(whole)
        if fraction != 0 {
            var digits = String(fraction)
            digits = String(repeating: "0", count: 3 - digits.count) + digits
            while digits.hasSuffix("0") { digits.removeLast() }
            result += "." + digits
        }
        return result
    }

    /// A literal string `( … )` with `(`, `)` and `\` escaped; other bytes,
    /// including WinAnsi's high half, are written as they are.
    static func literalString(_ codes: [UInt8]) -> [UInt8] {
        var result: [UInt8] = [0x28]
        result.reserveCapacity(codes.count + 2)
        for code in codes {
            switch code {
            case 0x28, 0x29, 0x5C:
                result.append(0x5C)
                result.append(code)
            case 0x0A:
                result.append(contentsOf: [0x5C, 0x6E])
            case 0x0D:
                result.append(contentsOf: [0x5C, 0x72])
            default:
                result.append(code)
            }
        }
        result.append(0x29)
        return result
    }

    /// A document-information text string as UTF-16BE with byte-order mark,
    /// which represents any Unicode title without escaping issues.
    static func textString(_ text: String) -> String {
        var hex = "<FEFF"
        for unit in text.utf16 {
            let digits = String(unit, radix: 16, uppercase: true)
            hex += String(repeating: "0", count: 4 - digits.count) + digits
        }
        return hex + ">"
    }
}

extension PDFWriter {
    /// Runs `body` with drawing clipped to `rect`, so nothing it draws can
    /// leak outside (used to keep each label inside its own cell).
    public mutating func clipped(to rect: PDFRect, _ body: (inout PDFWriter) -> Void) {
        emit("q \(PDFWriter.number(rect.x)) \(PDFWriter.number(rect.y)) \(PDFWriter.number(rect.width)) \(PDFWriter.number(rect.height)) re W n\n")
        body(&self)
        emit("Q\n")
    }
}
