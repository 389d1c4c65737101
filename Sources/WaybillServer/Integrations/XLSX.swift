import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import WaybillCore
import ZIPFoundation

/// The first worksheet of an Excel workbook (Office Open XML, ECMA-376) as rows of text, and a
/// one-sheet workbook made from rows (the import template). Only what a table of deliveries needs:
/// shared and inline strings, numbers, booleans; formulas are read as their cached values. Every
/// part is read with a size limit, so a compressed bomb stops at the limit instead of filling memory,
/// and the sheet within `TableLimits` (second audit, finding 1): a row holds only what lies within
/// the width, up to its last value, and the reading stops at the first row, column or value beyond.
/// Parsing is CPU work: callers on a request's path run it on the thread pool.
enum XLSX {
    enum Failure: Error, Equatable {
        case notAWorkbook
        case tooLarge
        /// The sheet (or its shared strings) breaks one of the `TableLimits`: reading stopped there.
        case exceeded(TableOverflow)
    }

    static let maxPartBytes = 64 * 1024 * 1024
    /// XML elements a sheet (or its shared strings) may hold, empty rows and styled empty cells
    /// included: the CPU a parse may spend, whatever deflates to 64 MiB. A full table of 10,000
    /// rows × 64 columns, each cell a `<c>` with its `<is><t>`, is under 2 million.
    static let maxElements = 3_000_000

    /// Whether `bytes` start like a ZIP archive (every .xlsx does).
    static func looksLikeWorkbook(_ bytes: [UInt8]) -> Bool { bytes.starts(with: [0x50, 0x4B, 0x03, 0x04]) }

    static func rows(_ bytes: [UInt8], limits: TableLimits = .unbounded) throws(Failure) -> [(line: Int, fields: [String])] {
        // The archive's layout is read and checked here, not by ZIPFoundation's `Archive` (which
        // traps on offsets past the end and loops on a deflate stream cut short): see `ZIPLayout`.
        guard let entries = ZIPLayout.entries(bytes) else { throw .notAWorkbook }
        var byName: [String: ZIPEntry] = [:]
        for entry in entries where byName[entry.name] == nil { byName[entry.name] = entry }
        func part(_ path: String) throws(Failure) -> Data? {
            guard let entry = byName[path] else { return nil }
            return try unpack(entry, from: bytes)
        }
        guard let sheet = try part(try firstSheetPath(part, has: { byName[$0] != nil })) else { throw .notAWorkbook }
        // A sheet uses at most one shared string per value: more than `maxValues` is refused too.
        let shared = try part("xl/sharedStrings.xml").map { data throws(Failure) in try SharedStrings.parse(data, limit: limits.maxValues) } ?? []
        guard let read = try SheetReader.parse(sheet, shared: shared, limits: limits) else { throw .notAWorkbook }
        return read
    }

    /// The bytes inflated at a time.
    static let chunkSize = 64 * 1024

    /// One entry's bytes, unpacked within `maxPartBytes` and checked against its CRC-32. Deflated
    /// entries go through ZIPFoundation's inflater with a provider that hands it whole buffers (it
    /// tells zlib a buffer is full whatever it was given) and throws past the entry's end (where it
    /// would otherwise ask for more for ever).
    static func unpack(_ entry: ZIPEntry, from bytes: [UInt8]) throws(Failure) -> Data {
        guard entry.uncompressedSize <= maxPartBytes else { throw .tooLarge }
        var data = Data()
        let checksum: CRC32
        switch entry.method {
        case 0:
            data = Data(bytes[entry.data])
            checksum = data.crc32(checksum: 0)
        case 8:
            let stored = entry.data
            do {
                checksum = try Data.decompress(size: Int64(stored.count), bufferSize: chunkSize, skipCRC32: false, provider: { position, size in
                    guard position >= 0, position < Int64(stored.count), size > 0 else { throw Failure.notAWorkbook }
                    let start = stored.lowerBound + Int(position)
                    var chunk = Data(bytes[start..<min(stored.upperBound, start + size)])
                    if chunk.count < size { chunk.append(Data(count: size - chunk.count)) }
                    return chunk
                }, consumer: { chunk in
                    guard data.count + chunk.count <= maxPartBytes else { throw Failure.tooLarge }
                    data.append(chunk)
                })
            } catch let failure as Failure { throw failure } catch { throw .notAWorkbook }
        default:
            throw .notAWorkbook
        }
        guard checksum == entry.crc32, data.count == entry.uncompressedSize else { throw .notAWorkbook }
        return data
    }

    /// The workbook's first sheet, through its relationships (often, but not always, sheet1.xml).
    private static func firstSheetPath(_ part: (String) throws(Failure) -> Data?, has: (String) -> Bool) throws(Failure) -> String {
        guard let workbook = try part("xl/workbook.xml"), let rels = try part("xl/_rels/workbook.xml.rels") else {
            // Whether the part is there, without unpacking it (it is unpacked once, by the caller).
            if has("xl/worksheets/sheet1.xml") { return "xl/worksheets/sheet1.xml" }
            throw .notAWorkbook
        }
        let sheets = Elements.attributes(of: "sheet", in: workbook)
        let relations = Elements.attributes(of: "Relationship", in: rels)
        guard let first = sheets.first, let id = first["r:id"] ?? first.first(where: { $0.key.hasSuffix(":id") })?.value,
              let target = relations.first(where: { $0["Id"] == id })?["Target"] else { return "xl/worksheets/sheet1.xml" }
        return target.hasPrefix("/") ? String(target.dropFirst()) : "xl/" + target
    }

    // MARK: Writing

    /// A workbook of one sheet named `sheetName` holding `rows` as text cells (inline strings).
    static func workbook(rows: [[String]], sheetName: String = "Deliveries") throws -> Data {
        var sheet = #"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>"#
        for (r, row) in rows.enumerated() {
            sheet += "<row r=\"\(r + 1)\">"
            for (c, value) in row.enumerated() where !value.isEmpty {
                sheet += "<c r=\"\(columnName(c))\(r + 1)\" t=\"inlineStr\"><is><t xml:space=\"preserve\">\(escape(value))</t></is></c>"
            }
            sheet += "</row>"
        }
        return try workbook(sheetXML: sheet + "</sheetData></worksheet>", sheetName: sheetName)
    }

    /// A workbook of one sheet named `sheetName` whose part is `sheetXML` as it is (the tests' hostile sheets too).
    static func workbook(sheetXML: String, sheetName: String = "Deliveries") throws -> Data {
        let archive = try Archive(data: Data(), accessMode: .create)
        func add(_ path: String, _ text: String) throws {
            let data = Data(text.utf8)
            try archive.addEntry(with: path, type: .file, uncompressedSize: Int64(data.count), compressionMethod: .deflate) { position, size in
                data.subdata(in: Int(position)..<Int(position) + size)
            }
        }
        try add("[Content_Types].xml", """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/></Types>
            """)
        try add("_rels/.rels", """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>
            """)
        try add("xl/workbook.xml", """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="\(escape(sheetName))" sheetId="1" r:id="rId1"/></sheets></workbook>
            """)
        try add("xl/_rels/workbook.xml.rels", """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/></Relationships>
            """)
        try add("xl/worksheets/sheet1.xml", sheetXML)
        guard let data = archive.data else { throw Failure.notAWorkbook }
        return data
    }

    /// A, B, …, Z, AA, AB, … for a 0-based column.
    static func columnName(_ index: Int) -> String {
        var n = index + 1, name = ""
        while n > 0 {
            let r = (n - 1) % 26
            name = String(UnicodeScalar(UInt8(65 + r))) + name
            n = (n - 1) / 26
        }
        return name
    }

    /// The 0-based column of a cell: its reference's, or the one after the row's previous cell when
    /// it has none (or no letters); `Int.max` for letters beyond the last column a sheet may have.
    static func column(of reference: String?, next: Int) -> Int {
        guard let reference else { return next }
        if let index = columnIndex(reference) { return index }
        return reference.unicodeScalars.first.map { ("A"..."Z").contains($0) || ("a"..."z").contains($0) } == true ? .max : next
    }

    /// The 0-based column of a cell reference such as "AB12"; nil if it has no letters.
    static func columnIndex(_ reference: String) -> Int? {
        var n = 0, any = false
        for scalar in reference.unicodeScalars {
            let v = scalar.value
            if (65...90).contains(v) { n = n &* 26 &+ Int(v - 64); any = true }
            else if (97...122).contains(v) { n = n &* 26 &+ Int(v - 96); any = true }
            else { break }
            if n > 16384 { return nil }
        }
        return any ? n - 1 : nil
    }

    /// Parses one part with `delegate`, never resolving external entities.
    static func parse(_ data: Data, with delegate: any XMLParserDelegate) -> Bool {
        let parser = XMLParser(data: data)
        parser.shouldResolveExternalEntities = false
        parser.delegate = delegate
        return parser.parse()
    }

    static func escape(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            // XML 1.0 cannot hold most control characters.
            case _ where scalar.value < 0x20 && scalar != "\t" && scalar != "\n" && scalar != "\r": continue
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}

/// The attributes of every element with a given name, in document order.
private final class Elements: NSObject, XMLParserDelegate {
    let name: String
    var found: [[String: String]] = []
    init(_ name: String) { self.name = name }

    static func attributes(of name: String, in data: Data) -> [[String: String]] {
        let delegate = Elements(name)
        _ = XLSX.parse(data, with: delegate)
        return delegate.found
    }

    func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName qName: String?,
                attributes attributeDict: [String: String] = [:]) {
        if elementName == name || elementName.hasSuffix(":" + name) { found.append(attributeDict) }
    }
}

/// xl/sharedStrings.xml: each `<si>` is one string, plain (`<t>`) or in runs (`<r><t>`), phonetic
/// hints (`<rPh>`) left out.
private final class SharedStrings: NSObject, XMLParserDelegate {
    let limit: Int
    var strings: [String] = []
    var current = ""
    var inText = false, inPhonetic = false
    var overflow: TableOverflow?
    var seen = 0
    var elements = 0

    init(limit: Int) { self.limit = limit }

    /// The strings, at most `limit` of them (beyond, the parse stops and throws), in at most
    /// `XLSX.maxElements` elements.
    static func parse(_ data: Data, limit: Int) throws(XLSX.Failure) -> [String] {
        let delegate = SharedStrings(limit: limit)
        _ = XLSX.parse(data, with: delegate)
        if let overflow = delegate.overflow { throw .exceeded(overflow) }
        if delegate.elements > XLSX.maxElements { throw .tooLarge }
        return delegate.strings
    }

    func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName qName: String?,
                attributes attributeDict: [String: String] = [:]) {
        elements += 1
        if elements > XLSX.maxElements { parser.abortParsing() }
        switch elementName {
        case "si": current = ""
        case "t": inText = !inPhonetic
        case "rPh": inPhonetic = true
        default: break
        }
    }

    func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName qName: String?) {
        switch elementName {
        case "si":
            seen += 1
            guard strings.count < limit else {
                overflow = TableOverflow(bound: .values, rowsRead: 0, valuesRead: seen)
                parser.abortParsing()
                return
            }
            strings.append(current)
        case "t": inText = false
        case "rPh": inPhonetic = false
        default: break
        }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) { if inText { current += string } }
}

/// A worksheet's `<sheetData>`: rows by their `r` number, cells placed by their reference so empty
/// cells Excel leaves out keep the columns aligned, built as they come into a `BoundedTable`: the
/// first row, column or value beyond its limits stops the parse.
private final class SheetReader: NSObject, XMLParserDelegate {
    let shared: [String]
    var table: BoundedTable
    var overflow: TableOverflow?
    var rowNumber = 0
    var cellColumn = 0, nextColumn = 0
    var cellType = ""
    var value = ""
    var collecting = false
    var failed = false
    var elements = 0

    init(shared: [String], limits: TableLimits) {
        self.shared = shared
        self.table = BoundedTable(limits: limits)
    }

    /// The sheet's rows; nil when it is not well-formed or names a shared string that is not there.
    /// Throws at a bound of `limits`, or past `XLSX.maxElements` elements (empty ones included).
    static func parse(_ data: Data, shared: [String], limits: TableLimits) throws(XLSX.Failure) -> [(line: Int, fields: [String])]? {
        let delegate = SheetReader(shared: shared, limits: limits)
        let parsed = XLSX.parse(data, with: delegate)
        if let overflow = delegate.overflow { throw .exceeded(overflow) }
        if delegate.elements > XLSX.maxElements { throw .tooLarge }
        guard parsed, !delegate.failed else { return nil }
        return delegate.table.rows
    }

    /// Stops the parse at a bound. Were the parser to go on, what it reads is still refused (every
    /// later row or value throws again) and `overflow` says how far it went: the tests count that.
    private func stop(_ parser: XMLParser, _ overflow: TableOverflow) {
        self.overflow = overflow
        parser.abortParsing()
    }

    func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName qName: String?,
                attributes attributeDict: [String: String] = [:]) {
        elements += 1
        if elements > XLSX.maxElements { parser.abortParsing() }
        switch elementName {
        case "row":
            rowNumber = attributeDict["r"].flatMap(Int.init) ?? (rowNumber &+ 1)
            table.startRow(line: rowNumber)
            nextColumn = 0
        case "c":
            cellColumn = XLSX.column(of: attributeDict["r"], next: nextColumn)
            nextColumn = cellColumn == .max ? .max : cellColumn + 1
            cellType = attributeDict["t"] ?? "n"
            value = ""
        case "v", "t":
            collecting = true
        default: break
        }
    }

    func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName qName: String?) {
        switch elementName {
        case "v", "t":
            collecting = false
        case "c":
            let text: String
            switch cellType {
            case "s":
                guard let index = Int(value.trimmingCharacters(in: .whitespaces)), shared.indices.contains(index) else { failed = true; return }
                text = shared[index]
            case "b": text = value == "1" ? "TRUE" : "FALSE"
            case "n": text = Self.number(value)
            default: text = value  // inlineStr, str (a formula's text), e (an error's text)
            }
            // Only values take room: an empty cell (a styled one) is left out, wherever it is.
            guard !text.isEmpty else { return }
            do throws(TableOverflow) { try table.cell(text, column: cellColumn) } catch { stop(parser, error) }
        case "row":
            do throws(TableOverflow) { try table.endRow() } catch { stop(parser, error) }
        default: break
        }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) { if collecting { value += string } }

    /// Numbers as people typed them: a postal code 1204 stored as "1204" or "1.204E3" reads "1204".
    static func number(_ raw: String) -> String {
        let trimmed = raw.trimmingCharacters(in: .whitespaces)
        guard let double = Double(trimmed), double.isFinite else { return trimmed }
        if double == double.rounded(), abs(double) < 1e15 { return String(Int64(double)) }
        return trimmed
    }
}
