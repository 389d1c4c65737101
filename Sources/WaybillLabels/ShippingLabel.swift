import Foundation

/// Everything printed on one parcel label. All strings arrive already
/// translated; the label only lays them out.
public struct LabelContent: Sendable, Hashable {
    /// Short shipment reference, printed large and as a Code 128 barcode.
    public var reference: String
    /// One line describing the service, e.g. "Express · 2–5 kg".
    public var service: String
    /// Heading over the sender block, e.g. "From" or "De".
    public var senderTitle: String
    /// Heading over the receiver block, e.g. "To" or "À".
    public var receiverTitle: String
    /// Sender name and address lines; blank lines are skipped.
    public var sender: [String]
    /// Receiver name (first non-blank line, printed bold) and address lines.
    public var receiver: [String]
    /// What the QR code carries: the unguessable hand-over link.
    public var qrPayload: String
    /// Short instruction next to the QR code, e.g. "Scan at every hand-over".
    public var note: String?
    /// Date shown in the top-right corner, already formatted.
    public var date: String?

    public init(reference: String, service: String, senderTitle: String, receiverTitle: String,
                sender: [String], receiver: [String], qrPayload: String,
                note: String? = nil, date: String? = nil) {
        self.reference = reference
        self.service = service
        self.senderTitle = senderTitle
        self.receiverTitle = receiverTitle
        self.sender = sender
        self.receiver = receiver
        self.qrPayload = qrPayload
        self.note = note
        self.date = date
    }
}

/// Paper arrangement for printing labels.
public enum LabelLayout: Sendable, Hashable, CaseIterable {
    /// One 105 × 148 mm label per A6 page, for label printers.
    case a6
    /// Four A6 labels per A4 sheet (2 × 2) with dashed cut lines, for office printers.
    case a4Four
}

/// Printable parcel labels as PDF.
///
/// Each label carries the reference (large text and Code 128 for depot
/// scanners), the service, sender and receiver blocks and a QR code of the
/// hand-over link sized for phone cameras (about 37 mm for a 70-character
/// link). Every line is measured and cut with "…" and each label is clipped
/// to its own cell, so no input can spill onto a neighbouring label.
///
/// Degenerate input never traps: an empty list yields one blank page of the
/// layout's size; a reference that is empty, non-ASCII or too long to print
/// with modules of at least 0.33 mm gets no barcode (the text still prints);
/// a QR payload above the version 40 capacity leaves the QR area blank.
public enum ShippingLabel {
    static let millimetre = 72.0 / 25.4
    static let a6 = (width: 105.0 * millimetre, height: 148.0 * millimetre)
    static let a4 = (width: 210.0 * millimetre, height: 297.0 * millimetre)

    /// Renders `labels` in order.
    /// - Parameter title: document title shown by PDF viewers.
    public static func pdf(_ labels: [LabelContent], layout: LabelLayout, title: String = "Labels") -> [UInt8] {
        var writer = PDFWriter(title: title)
        switch layout {
        case .a6:
            if labels.isEmpty { writer.beginPage(width: a6.width, height: a6.height) }
            for label in labels {
                writer.beginPage(width: a6.width, height: a6.height)
                draw(label, on: &writer, left: 0, top: a6.height)
            }
        case .a4Four:
            if labels.isEmpty { writer.beginPage(width: a4.width, height: a4.height) }
            var index = 0
            while index < labels.count {
                writer.beginPage(width: a4.width, height: a4.height)
                drawCutLines(on: &writer)
                let cellHeight = a4.height / 2
                let inset = (cellHeight - a6.height) / 2
                for slot in 0..<4 where index < labels.count {
                    let left = Double(slot % 2) * a6.width
                    let top = a4.height - Double(slot / 2) * cellHeight - inset
                    draw(labels[index], on: &writer, left: left, top: top)
                    index += 1
                }
            }
        }
        return writer.data()
    }

    /// Dashed light-grey lines where the sheet is cut into four labels; they
    /// run through the labels' 5 mm margins, never through content.
    static func drawCutLines(on writer: inout PDFWriter) {
        let dash = [4.0, 3.0]
        writer.line(fromX: a4.width / 2, y: 0, toX: a4.width / 2, y: a4.height, lineWidth: 0.4, gray: 0.55, dash: dash)
        writer.line(fromX: 0, y: a4.height / 2, toX: a4.width, y: a4.height / 2, lineWidth: 0.4, gray: 0.55, dash: dash)
    }

    /// Label-local drawing in millimetres from the label's top-left corner.
    struct Frame {
        let left: Double
        let top: Double
        func x(_ millimetres: Double) -> Double { left + millimetres * ShippingLabel.millimetre }
        func y(_ millimetres: Double) -> Double { top - millimetres * ShippingLabel.millimetre }
        func rect(x: Double, y: Double, width: Double, height: Double) -> PDFRect {
            PDFRect(x: self.x(x), y: self.y(y + height),
                    width: width * ShippingLabel.millimetre, height: height * ShippingLabel.millimetre)
        }
    }

    // Layout grid (mm). The label is 105 × 148 with 5 mm margins.
    static let margin = 5.0
    static let contentWidth = 95.0

    static func draw(_ label: LabelContent, on writer: inout PDFWriter, left: Double, top: Double) {
        let frame = Frame(left: left, top: top)
        let clip = frame.rect(x: 0, y: 0, width: 105, height: 148)
        writer.clipped(to: clip) { writer in
            drawHeader(label, on: &writer, frame: frame)
            drawAddresses(label, on: &writer, frame: frame)
            drawCodes(label, on: &writer, frame: frame)
        }
    }

    static func clean(_ text: String) -> String {
        text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func cleanLines(_ lines: [String]) -> [String] {
        lines.map(clean).filter { !$0.isEmpty }
    }

    static func widthMM(_ text: String, font: PDFFont, size: Double) -> Double {
        font.width(of: text, size: size) / millimetre
    }

    /// Draws `text` cut to `width` mm at (`x`, baseline `y`) in label millimetres.
    static func line(_ text: String, on writer: inout PDFWriter, frame: Frame, x: Double, y: Double,
                     width: Double, font: PDFFont, size: Double, gray: Double = 0, forceEllipsis: Bool = false) {
        let fitted = font.truncate(text, toWidth: width * millimetre, size: size, forceEllipsis: forceEllipsis)
        writer.text(fitted, x: frame.x(x), y: frame.y(y), font: font, size: size, gray: gray)
    }

    /// Largest size from `sizes` at which `text` fits, else the smallest.
    static func fittingSize(_ text: String, font: PDFFont, width: Double, sizes: [Double]) -> Double {
        sizes.first { widthMM(text, font: font, size: $0) <= width } ?? (sizes.last ?? 10)
    }

    static func drawHeader(_ label: LabelContent, on writer: inout PDFWriter, frame: Frame) {
        // Date, top right and small, so the reference keeps the most room.
        var dateWidth = 0.0
        if let date = label.date.map(clean), !date.isEmpty {
            let fitted = PDFFont.helvetica.truncate(date, toWidth: 35 * millimetre, size: 8)
            dateWidth = widthMM(fitted, font: .helvetica, size: 8)
            writer.text(fitted, x: frame.x(margin + contentWidth - dateWidth), y: frame.y(9), font: .helvetica, size: 8)
        }
        let reference = clean(label.reference)
        let referenceWidth = contentWidth - (dateWidth > 0 ? dateWidth + 3 : 0)
        let size = fittingSize(reference, font: .helveticaBold, width: referenceWidth, sizes: [24, 22, 20, 18, 16, 14])
        line(reference, on: &writer, frame: frame, x: margin, y: 13.5, width: referenceWidth, font: .helveticaBold, size: size)

        // Service band: white on black so the product is seen at a glance.
        writer.fillRect(frame.rect(x: margin, y: 16.5, width: contentWidth, height: 8))
        line(clean(label.service), on: &writer, frame: frame, x: margin + 3, y: 22.1, width: contentWidth - 6,
             font: .helveticaBold, size: 11, gray: 1)
    }

    static func drawAddresses(_ label: LabelContent, on writer: inout PDFWriter, frame: Frame) {
        // Sender: compact, up to four lines.
        line(clean(label.senderTitle).uppercased(), on: &writer, frame: frame, x: margin, y: 29.5,
             width: contentWidth, font: .helveticaBold, size: 7)
        let sender = cleanLines(label.sender)
        let senderShown = min(sender.count, 4)
        for index in 0..<senderShown {
            line(sender[index], on: &writer, frame: frame, x: margin, y: 33.3 + Double(index) * 3.5,
                 width: contentWidth, font: .helvetica, size: 8.5,
                 forceEllipsis: index == senderShown - 1 && sender.count > senderShown)
        }

        // Receiver: framed, name bold and large, up to four address lines.
        writer.strokeRect(frame.rect(x: margin, y: 47, width: contentWidth, height: 34), lineWidth: 1.4)
        let inner = contentWidth - 6
        line(clean(label.receiverTitle).uppercased(), on: &writer, frame: frame, x: margin + 3, y: 51,
             width: inner, font: .helveticaBold, size: 7)
        let receiver = cleanLines(label.receiver)
        if let name = receiver.first {
            let size = fittingSize(name, font: .helveticaBold, width: inner, sizes: [15, 14, 13, 12])
            line(name, on: &writer, frame: frame, x: margin + 3, y: 57.5, width: inner, font: .helveticaBold, size: size)
        }
        let address = Array(receiver.dropFirst())
        let addressShown = min(address.count, 4)
        for index in 0..<addressShown {
            line(address[index], on: &writer, frame: frame, x: margin + 3, y: 63 + Double(index) * 4.6,
                 width: inner, font: .helvetica, size: 11,
                 forceEllipsis: index == addressShown - 1 && address.count > addressShown)
        }
    }

    /// QR geometry in label millimetres for a symbol of `symbolSize`
    /// modules: as large as the band between the receiver frame (its 1.4 pt
    /// stroke ends at 81.25 mm) and the barcode (127 mm) allows with a
    /// 4-module quiet zone, capped at 1.25 mm modules so the left quiet zone
    /// fits in the 5 mm margin.
    static func qrPlacement(symbolSize: Int) -> (module: Double, side: Double, top: Double) {
        let zoneTop = 81.5, zoneBottom = 127.0, quiet = 4.0
        let module = min((zoneBottom - zoneTop) / (Double(max(symbolSize, 1)) + 2 * quiet), margin / quiet)
        let side = Double(symbolSize) * module
        return (module, side, zoneTop + (zoneBottom - zoneTop - side) / 2)
    }

    /// Module width in millimetres for a Code 128 symbol of `moduleCount`
    /// modules across the label with 10-module quiet zones: up to 0.5 mm,
    /// or `nil` below 0.33 mm, where depot scanners become unreliable.
    static func barcodeModuleWidth(moduleCount: Int) -> Double? {
        let width = min(0.5, contentWidth / Double(max(moduleCount, 1) + 20))
        return width >= 0.33 ? width : nil
    }

    static func drawCodes(_ label: LabelContent, on writer: inout PDFWriter, frame: Frame) {
        // QR code left-aligned on the margin; its quiet zone lies in the
        // white band above the barcode and, on the left, in the margin.
        var textLeft = margin
        if let code = (try? QRCode.encode(label.qrPayload, correction: .medium))
            ?? (try? QRCode.encode(label.qrPayload, correction: .low)) {
            let placement = qrPlacement(symbolSize: code.size)
            writer.qrCode(code, x: frame.x(margin), top: frame.y(placement.top), moduleSize: placement.module * millimetre)
            textLeft = margin + placement.side + 4 * placement.module + 1
        }

        // The note explains what the QR code is for; bold so couriers notice it.
        let columnWidth = max(0, margin + contentWidth - textLeft)
        if let note = label.note.map(clean), !note.isEmpty, columnWidth > 5 {
            let lines = PDFFont.helveticaBold.wrap(note, toWidth: columnWidth * millimetre, size: 10, maxLines: 5)
            for (index, text) in lines.enumerated() {
                writer.text(text, x: frame.x(textLeft), y: frame.y(91 + Double(index) * 4.4), font: .helveticaBold, size: 10)
            }
        }

        // Code 128 of the reference, as wide as fits up to 0.5 mm modules.
        let reference = clean(label.reference)
        if let modules = try? Code128.modules(reference) {
            if let moduleWidth = barcodeModuleWidth(moduleCount: modules.count) {
                let barsWidth = Double(modules.count) * moduleWidth
                let barsLeft = margin + (contentWidth - barsWidth) / 2
                let barsTop = 128.0, barsHeight = 12.5
                writer.barcode(modules, x: frame.x(barsLeft), y: frame.y(barsTop + barsHeight),
                               moduleWidth: moduleWidth * millimetre, height: barsHeight * millimetre)
            }
        }
        let caption = PDFFont.helvetica.truncate(reference, toWidth: contentWidth * millimetre, size: 9)
        let captionWidth = widthMM(caption, font: .helvetica, size: 9)
        writer.text(caption, x: frame.x(margin + (contentWidth - captionWidth) / 2), y: frame.y(144), font: .helvetica, size: 9)
    }
}
