import Foundation

/// Spreadsheet text as RFC 4180 describes it, read the way people's files really are: a UTF-8 byte
/// order mark or none, Windows-1252 when the bytes are not UTF-8 (Excel on Windows), CRLF or LF, and
/// the delimiter Excel writes in the file's language (a comma, or a semicolon in French; tabs too),
/// found in the header line.
public enum CSVText {
    public enum Failure: Error, Equatable, Sendable {
        /// A quoted field never closes; `line` is where it opened (1-based).
        case unterminatedQuote(line: Int)
        /// The file breaks one of the reader's `TableLimits` (reading stopped there).
        case exceeded(TableOverflow)
    }

    /// The most fields a row may have, empty ones included: the widest sheet a spreadsheet writes
    /// (column XFD, the 16,384th, in Excel and LibreOffice). A longer row (a line of ten million
    /// commas) is refused as `too_many_columns` after reading that many, not after reading them all.
    public static let widestRow = 16_384

    /// The rows of `bytes`, each a list of fields; blank lines, and rows whose every field is
    /// empty, are skipped. Each row carries the line (1-based) it starts on, for error messages.
    /// Read within `limits`: a value beyond `maxColumns`, one row or value too many, a row of more
    /// than `widestRow` fields, stops the reading (`exceeded`); empty fields beyond the width are
    /// ignored, never stored.
    public static func rows(_ bytes: [UInt8], limits: TableLimits = .unbounded) -> Result<[(line: Int, fields: [String])], Failure> {
        var data = bytes
        if data.starts(with: [0xEF, 0xBB, 0xBF]) { data.removeFirst(3) }
        if String(validating: data, as: UTF8.self) == nil {
            // Not UTF-8: Windows-1252, which every byte decodes in (Latin-1 for the few holes).
            let text = String(data: Data(data), encoding: .windowsCP1252) ?? String(decoding: data, as: Unicode.ASCII.self)
            data = Array(text.utf8)
        }
        let delimiter = sniffDelimiter(data)
        let quote = UInt8(ascii: "\""), cr = UInt8(ascii: "\r"), lf = UInt8(ascii: "\n")
        var table = BoundedTable(limits: limits)
        table.startRow(line: 1)
        var column = 0
        var field: [UInt8] = []
        var line = 1, quoteLine = 0
        var inQuotes = false, wasQuoted = false
        var i = 0
        func endField() throws(TableOverflow) {
            guard column < widestRow else { throw TableOverflow(bound: .columns, rowsRead: table.rowsRead, valuesRead: table.valuesRead) }
            if field.isEmpty, !wasQuoted, column >= limits.maxColumns {
                column += 1  // an empty field past the width: nothing to keep, only counted
                return
            }
            try table.cell(String(decoding: field, as: UTF8.self), column: column)
            column += 1
            field.removeAll(keepingCapacity: true)
            wasQuoted = false
        }
        func endRow() throws(TableOverflow) {
            if column == 0, field.isEmpty, !wasQuoted { return }  // a blank line
            try endField()
            try table.endRow()
            column = 0
        }
        do throws(TableOverflow) {
            while i < data.count {
                let byte = data[i]
                if inQuotes {
                    if byte == quote {
                        if i + 1 < data.count, data[i + 1] == quote { field.append(quote); i += 2; continue }
                        inQuotes = false
                    } else {
                        if byte == lf { line += 1 }
                        field.append(byte)
                    }
                    i += 1
                    continue
                }
                switch byte {
                case quote where field.isEmpty && !wasQuoted:
                    inQuotes = true
                    wasQuoted = true
                    quoteLine = line
                case delimiter:
                    try endField()
                case cr, lf:
                    if byte == cr, i + 1 < data.count, data[i + 1] == lf { i += 1 }
                    try endRow()
                    line += 1
                    table.startRow(line: line)
                default:
                    field.append(byte)
                }
                i += 1
            }
            if inQuotes { return .failure(.unterminatedQuote(line: quoteLine)) }
            if !field.isEmpty || column > 0 || wasQuoted { try endRow() }
        } catch {
            return .failure(.exceeded(error))
        }
        return .success(table.rows)
    }

    /// The delimiter of the first line: whichever of comma, semicolon and tab it holds most of,
    /// outside quotes (a comma when it holds none; on a tie, tab before comma before semicolon).
    /// Only the first 64 KiB are looked at: a header line is never longer.
    static func sniffDelimiter(_ data: [UInt8]) -> UInt8 {
        var commas = 0, semicolons = 0, tabs = 0
        var inQuotes = false
        for byte in data.prefix(64 * 1024) {
            switch byte {
            case UInt8(ascii: "\""): inQuotes.toggle()
            case _ where inQuotes: continue
            case UInt8(ascii: "\n"), UInt8(ascii: "\r"): return best(commas, semicolons, tabs)
            case UInt8(ascii: ","): commas += 1
            case UInt8(ascii: ";"): semicolons += 1
            case UInt8(ascii: "\t"): tabs += 1
            default: continue
            }
        }
        return best(commas, semicolons, tabs)
    }

    private static func best(_ commas: Int, _ semicolons: Int, _ tabs: Int) -> UInt8 {
        let most = max(commas, semicolons, tabs)
        if most == 0 || (commas == most && tabs < most) { return UInt8(ascii: ",") }
        return tabs == most ? UInt8(ascii: "\t") : UInt8(ascii: ";")
    }

    // MARK: Writing

    /// One line of a CSV file (ending in CRLF, as RFC 4180 says). Text from people goes through
    /// `text(_:)`; numbers and codes Waybill wrote go in as they are.
    public static func line(_ fields: [String], delimiter: Character = ",") -> String {
        fields.map { quoted($0, delimiter: delimiter) }.joined(separator: String(delimiter)) + "\r\n"
    }

    static func quoted(_ field: String, delimiter: Character) -> String {
        guard field.contains(where: { $0 == delimiter || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return field }
        return "\"" + field.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// A cell of free text made safe for spreadsheets: one that starts like a formula (`=`, `+`,
    /// `-`, `@`, a tab or a carriage return) gets a leading apostrophe, so opening an export never
    /// runs what someone typed into an address (OWASP "CSV injection").
    public static func text(_ value: String) -> String {
        guard let first = value.unicodeScalars.first, "=+-@\t\r".unicodeScalars.contains(first) else { return value }
        return "'" + value
    }
}
