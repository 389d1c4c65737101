import Foundation

/// Unicode → WinAnsiEncoding (Windows-1252), the encoding every PDF reader
/// supports for the standard fonts without embedding anything.
///
/// Covers the Latin letters of French, German, Italian, Spanish and the
/// Nordic languages plus typographic quotes, dashes, ellipsis and €. Line
/// breaks and tabs become spaces, other control and zero-width characters
/// are dropped, and anything else (arrows, emoji, CJK) prints as "?".
public enum WinAnsi {
    /// Unicode code points of WinAnsi 0x80–0x9F (0 where the code is unused).
    static let high: [UInt32] = [
        0x20AC, 0, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021,
        0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0, 0x017D, 0,
        0, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014,
        0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0, 0x017E, 0x0178,
    ]

    static let specials: [UInt32: UInt8] = {
        var table: [UInt32: UInt8] = [
            // Close look-alikes that French and German typesetting produce.
            0x2010: 0x2D, 0x2011: 0x2D, 0x2012: 0x96, 0x2212: 0x2D, 0x2015: 0x97,
            0x2032: 0x27, 0x2033: 0x22, 0x2044: 0x2F,
        ]
        for (offset, scalar) in high.enumerated() where scalar != 0 {
            table[scalar] = UInt8(0x80 + offset)
        }
        return table
    }()

    /// The WinAnsi byte for one user-perceived character, or `nil` when the
    /// character should leave no trace (controls, zero-width marks).
    static func code(for character: Character) -> UInt8? {
        if character.isNewline { return 0x20 }
        let scalars = character.unicodeScalars
        guard let first = scalars.first else { return nil }
        if scalars.count > 1 {
            // Keep a base letter whose extra marks did not compose; any other
            // cluster (emoji sequences, flags) is one unknown glyph.
            let rest = scalars.dropFirst()
            let ignorable = rest.allSatisfy { scalar in
                scalar.properties.generalCategory == .nonspacingMark
                    || scalar.properties.generalCategory == .enclosingMark
                    || scalar.properties.generalCategory == .spacingMark
                    || (0xFE00...0xFE0F).contains(scalar.value)
            }
            guard ignorable else { return 0x3F }
            if first.properties.isEmojiPresentation || first.value > 0xFFFF { return 0x3F }
        }
        return code(for: first)
    }

    static func code(for scalar: Unicode.Scalar) -> UInt8? {
        let value = scalar.value
        switch value {
        case 0x20...0x7E, 0xA0...0xFF:
            return UInt8(value)
        case 0x09:
            return 0x20
        case 0x00...0x1F, 0x7F...0x9F:
            return nil
        case 0x2000...0x200A, 0x202F, 0x205F, 0x3000:
            // Typographic spaces, including the narrow no-break space that
            // French puts before « » : ; ! ?
            return value == 0x202F ? 0xA0 : 0x20
        case 0x200B...0x200F, 0x2028...0x202E, 0x2060...0x206F, 0xFEFF, 0xFE00...0xFE0F:
            return nil
        default:
            return specials[value] ?? 0x3F
        }
    }

    /// WinAnsi bytes of `text`, composed to NFC first so that decomposed
    /// input ("e" + combining acute) still prints as "é".
    public static func encode(_ text: String) -> [UInt8] {
        var result: [UInt8] = []
        for character in text.precomposedStringWithCanonicalMapping {
            if let code = code(for: character) { result.append(code) }
        }
        return result
    }

    /// The Unicode character a WinAnsi byte stands for (`nil` for unused
    /// codes and controls).
    public static func character(for code: UInt8) -> Character? {
        switch code {
        case 0x20...0x7E, 0xA0...0xFF:
            return Character(Unicode.Scalar(code))
        case 0x80...0x9F:
            guard let scalar = Unicode.Scalar(high[Int(code) - 0x80]), scalar.value != 0 else { return nil }
            return Character(scalar)
        default:
            return nil
        }
    }
}

/// The two standard PDF fonts labels use. They are built into every PDF
/// reader and printer, so files stay small and need no font licensing.
public enum PDFFont: Sendable, CaseIterable, Hashable {
    case helvetica
    case helveticaBold

    var baseFont: String {
        switch self {
        case .helvetica: "Helvetica"
        case .helveticaBold: "Helvetica-Bold"
        }
    }

    var resourceName: String {
        switch self {
        case .helvetica: "F1"
        case .helveticaBold: "F2"
        }
    }

    /// Advance width of a WinAnsi code in 1/1000 em (Adobe AFM metrics).
    func advance(_ code: UInt8) -> Int {
        guard code >= 0x20 else { return 0 }
        let index = Int(code) - 0x20
        switch self {
        case .helvetica: return Int(HelveticaMetrics.helvetica[index])
        case .helveticaBold: return Int(HelveticaMetrics.helveticaBold[index])
        }
    }

    /// Printed width in points of `text` at `size`, exactly as a PDF reader
    /// will lay it out, so callers can fit lines before drawing them.
    public func width(of text: String, size: Double) -> Double {
        width(ofCodes: WinAnsi.encode(text), size: size)
    }

    func width(ofCodes codes: [UInt8], size: Double) -> Double {
        guard size.isFinite, size > 0 else { return 0 }
        let units = codes.reduce(0) { $0 + advance($1) }
        return Double(units) * size / 1000
    }

    /// `text` cut to fit `maxWidth` points, ending in "…" when anything was
    /// removed. Returns "" when not even the ellipsis fits.
    /// - Parameter forceEllipsis: append "…" even if the text fits, to signal
    ///   that following lines were dropped.
    public func truncate(_ text: String, toWidth maxWidth: Double, size: Double, forceEllipsis: Bool = false) -> String {
        guard maxWidth.isFinite, maxWidth > 0, size.isFinite, size > 0 else { return "" }
        let characters = Array(text.precomposedStringWithCanonicalMapping)
        let widths = characters.map { character -> Double in
            guard let code = WinAnsi.code(for: character) else { return 0 }
            return Double(advance(code)) * size / 1000
        }
        let full = widths.reduce(0, +)
        if !forceEllipsis && full <= maxWidth { return String(characters) }
        let ellipsis = Double(advance(0x85)) * size / 1000
        guard ellipsis <= maxWidth else { return "" }
        var used = ellipsis
        var kept = 0
        while kept < characters.count && used + widths[kept] <= maxWidth {
            used += widths[kept]
            kept += 1
        }
        var prefix = String(characters[0..<kept])
        while let last = prefix.last, last.isWhitespace { prefix.removeLast() }
        return prefix + "…"
    }

    /// Greedy word wrap by measured width; at most `maxLines` lines, the last
    /// one ellipsised when text remains. Words wider than a line are cut.
    public func wrap(_ text: String, toWidth maxWidth: Double, size: Double, maxLines: Int) -> [String] {
        guard maxLines > 0 else { return [] }
        let words = text.split(whereSeparator: { $0.isWhitespace }).map(String.init)
        var lines: [String] = []
        var current = ""
        var index = 0
        while index < words.count {
            let word = words[index]
            let candidate = current.isEmpty ? word : current + " " + word
            if width(of: candidate, size: size) <= maxWidth {
                current = candidate
                index += 1
                continue
            }
            if current.isEmpty {
                // A single word wider than the line.
                lines.append(truncate(word, toWidth: maxWidth, size: size))
                index += 1
            } else {
                lines.append(current)
                current = ""
            }
            if lines.count == maxLines {
                if index < words.count || !current.isEmpty {
                    let last = lines.removeLast()
                    lines.append(truncate(last, toWidth: maxWidth, size: size, forceEllipsis: !last.hasSuffix("…")))
                }
                return lines
            }
        }
        if !current.isEmpty { lines.append(current) }
        return lines
    }
}

/// Advance widths (1/1000 em) for WinAnsi codes 0x20–0xFF, from Adobe's
/// Helvetica and Helvetica-Bold AFM files; unused codes are 0.
enum HelveticaMetrics {
    static let helvetica: [UInt16] = [
        278, 278, 355, 556, 556, 889, 667, 191, 333, 333, 389, 584, 278, 333, 278, 278, // 0x20
        556, 556, 556, 556, 556, 556, 556, 556, 556, 556, 278, 278, 584, 584, 584, 556, // 0x30
        1015, 667, 667, 722, 722, 667, 611, 778, 722, 278, 500, 667, 556, 833, 722, 778, // 0x40
        667, 778, 722, 667, 611, 722, 667, 944, 667, 667, 611, 278, 278, 278, 469, 556, // 0x50
        333, 556, 556, 500, 556, 556, 278, 556, 556, 222, 222, 500, 222, 833, 556, 556, // 0x60
        556, 556, 333, 500, 278, 556, 500, 722, 500, 500, 500, 334, 260, 334, 584, 0, // 0x70
        556, 0, 222, 556, 333, 1000, 556, 556, 333, 1000, 667, 333, 1000, 0, 611, 0, // 0x80
        0, 222, 222, 333, 333, 350, 556, 1000, 333, 1000, 500, 333, 944, 0, 500, 667, // 0x90
        278, 333, 556, 556, 556, 556, 260, 556, 333, 737, 370, 556, 584, 333, 737, 333, // 0xA0
        400, 584, 333, 333, 333, 556, 537, 278, 333, 333, 365, 556, 834, 834, 834, 611, // 0xB0
        667, 667, 667, 667, 667, 667, 1000, 722, 667, 667, 667, 667, 278, 278, 278, 278, // 0xC0
        722, 722, 778, 778, 778, 778, 778, 584, 778, 722, 722, 722, 722, 667, 667, 611, // 0xD0
        556, 556, 556, 556, 556, 556, 889, 500, 556, 556, 556, 556, 278, 278, 278, 278, // 0xE0
        556, 556, 556, 556, 556, 556, 556, 584, 611, 556, 556, 556, 556, 500, 556, 500, // 0xF0
    ]
    static let helveticaBold: [UInt16] = [
        278, 333, 474, 556, 556, 889, 722, 238, 333, 333, 389, 584, 278, 333, 278, 278, // 0x20
        556, 556, 556, 556, 556, 556, 556, 556, 556, 556, 333, 333, 584, 584, 584, 611, // 0x30
        975, 722, 722, 722, 722, 667, 611, 778, 722, 278, 556, 722, 611, 833, 722, 778, // 0x40
        667, 778, 722, 667, 611, 722, 667, 944, 667, 667, 611, 333, 278, 333, 584, 556, // 0x50
        333, 556, 611, 556, 611, 556, 333, 611, 611, 278, 278, 556, 278, 889, 611, 611, // 0x60
        611, 611, 389, 556, 333, 611, 556, 778, 556, 556, 500, 389, 280, 389, 584, 0, // 0x70
        556, 0, 278, 556, 500, 1000, 556, 556, 333, 1000, 667, 333, 1000, 0, 611, 0, // 0x80
        0, 278, 278, 500, 500, 350, 556, 1000, 333, 1000, 556, 333, 944, 0, 500, 667, // 0x90
        278, 333, 556, 556, 556, 556, 280, 556, 333, 737, 370, 556, 584, 333, 737, 333, // 0xA0
        400, 584, 333, 333, 333, 611, 556, 278, 333, 333, 365, 556, 834, 834, 834, 611, // 0xB0
        722, 722, 722, 722, 722, 722, 1000, 722, 667, 667, 667, 667, 278, 278, 278, 278, // 0xC0
        722, 722, 778, 778, 778, 778, 778, 584, 778, 722, 722, 722, 722, 667, 667, 611, // 0xD0
        556, 556, 556, 556, 556, 556, 889, 556, 556, 556, 556, 556, 278, 278, 278, 278, // 0xE0
        611, 611, 611, 611, 611, 611, 611, 584, 611, 611, 611, 611, 611, 556, 611, 556, // 0xF0
    ]
}
