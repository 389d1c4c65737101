import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import WaybillCore
import ZIPFoundation

/// The first worksheet of an Excel workbook (Office Open XML, ECMA-376) as rows of text, and a
/// one-sheet workbook made from rows (the import template). Only what a table of deliveries needs:
/// shared and inline strings, numbers, booleans; formulas are read as their cached values. Every
/// part is read with a size limit, so a compressed bomb stops at the limit instead of filling memory.
enum XLSX {
    enum Failure: Error, Equatable {
        case notAWorkbook
        case tooLarge
    }

    static let maxPartBytes = 64 * 1024 * 1024

    /// Whether `bytes` start like a ZIP archive (every .xlsx does).
    static func looksLikeWorkbook(_ bytes: [UInt8]) -> Bool { bytes.starts(with: [0x50, 0x4B, 0x03, 0x04]) }

    static func rows(_ bytes: [UInt8]) throws(Failure) -> [(line: Int, fields: [String])] {
        let archive: Archive
        do { archive = try Archive(data: Data(bytes), accessMode: .read) } catch { throw .notAWorkbook }
        func part(_ path: String) throws(Failure) -> Data? {
            guard let entry = archive[path] else { return nil }
            var data = Data()
            do {
                _ = try archive.extract(entry, skipCRC32: false) { chunk in
                    guard data.count + chunk.count <= maxPartBytes else { throw Failure.tooLarge }
                    data.append(chunk)
                }
            } catch let failure as Failure { throw failure } catch { throw .notAWorkbook }
            return data
        }
        guard let sheet = try part(try firstSheetPath(part)) else { throw .notAWorkbook }
        let shared = try part("xl/sharedStrings.xml").map { SharedStrings.parse($0) } ?? []
        guard let rows = SheetReader.parse(sheet, shared: shared) else { throw .notAWorkbook }
        return rows
    }

    /// The workbook's first sheet, through its relationships (often, but not always, sheet1.xml).
    private static func firstSheetPath(_ part: (String) throws(Failure) -> Data?) throws(Failure) -> String {
        guard let workbook = try part("xl/workbook.xml"), let rels = try part("xl/_rels/workbook.xml.rels") else {
            if try part("xl/worksheets/sheet1.xml") != nil { return "xl/worksheets/sheet1.xml" }
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
        var sheet = #"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>"#
        for (r, row) in rows.enumerated() {
            sheet += "<row r=\"\(r + 1)\">"
            for (c, value) in row.enumerated() where !value.isEmpty {
                sheet += "<c r=\"\(columnName(c))\(r + 1)\" t=\"inlineStr\"><is><t xml:space=\"preserve\">\(escape(value))</t></is></c>"
            }
            sheet += "</row>"
        }
        try add("xl/worksheets/sheet1.xml", sheet + "</sheetData></worksheet>")
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
    var strings: [String] = []
    var current = ""
    var inText = false, inPhonetic = false

    static func parse(_ data: Data) -> [String] {
        let delegate = SharedStrings()
        _ = XLSX.parse(data, with: delegate)
        return delegate.strings
    }

    func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName qName: String?,
                attributes attributeDict: [String: String] = [:]) {
        switch elementName {
        case "si": current = ""
        case "t": inText = !inPhonetic
        case "rPh": inPhonetic = true
        default: break
        }
    }

    func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName qName: String?) {
        switch elementName {
        case "si": strings.append(current)
        case "t": inText = false
        case "rPh": inPhonetic = false
        default: break
        }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) { if inText { current += string } }
}

/// A worksheet's `<sheetData>`: rows by their `r` number, cells placed by their reference so empty
/// cells Excel leaves out keep the columns aligned.
private final class SheetReader: NSObject, XMLParserDelegate {
    let shared: [String]
    var rows: [(line: Int, fields: [String])] = []
    var row: [Int: String] = [:]
    var rowNumber = 0
    var cellColumn = 0, nextColumn = 0
    var cellType = ""
    var value = ""
    var collecting = false
    var failed = false

    init(shared: [String]) { self.shared = shared }

    static func parse(_ data: Data, shared: [String]) -> [(line: Int, fields: [String])]? {
        let delegate = SheetReader(shared: shared)
        guard XLSX.parse(data, with: delegate), !delegate.failed else { return nil }
        return delegate.rows
    }

    func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName qName: String?,
                attributes attributeDict: [String: String] = [:]) {
        switch elementName {
        case "row":
            rowNumber = attributeDict["r"].flatMap(Int.init) ?? (rowNumber + 1)
            row = [:]
            nextColumn = 0
        case "c":
            cellColumn = attributeDict["r"].flatMap(XLSX.columnIndex) ?? nextColumn
            nextColumn = cellColumn + 1
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
            if cellColumn < 16384 { row[cellColumn] = text }
        case "row":
            let width = (row.keys.max() ?? -1) + 1
            rows.append((rowNumber, (0..<width).map { row[$0] ?? "" }))
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
