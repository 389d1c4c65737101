import Foundation

// Areas (issue "Travellers", item 1): a hierarchy of places people travel between, such as
// country → canton → district → municipality, with names in several languages. Trips go from one
// area to another; a sender who searches from an area finds trips from it and from every area
// inside it. The pure part: what an area is, how names are folded for searching, the CSV format
// admins import, and the in-memory index that answers a prefix search in microseconds.

public enum AreaTag {}
/// An area's id: a short code chosen by whoever made the data ("CH", "CH-VD", "CH-5586").
public typealias AreaID = Tagged<AreaTag, String>

public struct Area: Sendable, Hashable, Codable {
    public var id: AreaID
    public var parent: AreaID?
    /// What kind of area: "country", "canton", "district", "municipality", … (free text, lowercase).
    public var level: String
    /// The name in the area's own language.
    public var name: String
    /// Names in other languages, by BCP 47 language code ("fr", "de", "it", "en").
    public var names: [String: String]
    public var coordinate: Coordinate?
    /// Other words the area is found by and that are not names: postal codes, abbreviations ("VD").
    public var keywords: [String]

    public init(id: AreaID, parent: AreaID?, level: String, name: String, names: [String: String] = [:],
                coordinate: Coordinate? = nil, keywords: [String] = []) {
        self.id = id
        self.parent = parent
        self.level = level
        self.name = name
        self.names = names
        self.coordinate = coordinate
        self.keywords = keywords
    }

    /// The name to show in `language`: its translation if the data has one, else its own name.
    public func name(in language: String?) -> String {
        language.flatMap { names[$0] } ?? name
    }

    /// Every name, its own first, without repeats.
    public var allNames: [String] {
        var seen = Set<String>(), result = [String]()
        for n in [name] + names.keys.sorted().compactMap({ names[$0] }) where seen.insert(n).inserted { result.append(n) }
        return result
    }
}

/// The limits an area must respect, and its validation (the same for the CSV and the API).
public enum AreaRules {
    public static let maxIDLength = 64
    public static let maxNameLength = 120
    public static let maxLevelLength = 32
    public static let maxDepth = 8
    public static let maxKeywords = 200
    /// A hierarchy of more areas than this is refused (the index lives in each server's memory).
    public static let maxAreas = 200_000

    /// Letters, digits, "-", "_", "." and ":", 1 to 64 characters.
    public static func isValidID(_ raw: String) -> Bool {
        !raw.isEmpty && raw.utf8.count <= maxIDLength
            && raw.unicodeScalars.allSatisfy { $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "-_.:".unicodeScalars.contains($0)) }
    }

    public static func isValidLanguage(_ raw: String) -> Bool {
        (2...8).contains(raw.count) && raw.allSatisfy { $0.isASCII && ($0.isLetter || $0 == "-") } && raw.first?.isLetter == true
    }

    /// `area` cleaned (names trimmed, level lowercased), or its field errors.
    public static func validated(_ area: Area) -> Result<Area, FieldErrorsError> {
        var errors = FieldErrors()
        var clean = area
        if !isValidID(area.id.rawValue) { errors.add("id", "invalid") }
        if let parent = area.parent {
            if !isValidID(parent.rawValue) { errors.add("parentId", "invalid") }
            else if parent == area.id { errors.add("parentId", "self") }
        }
        clean.level = area.level.trimmingCharacters(in: .whitespaces).lowercased()
        if clean.level.isEmpty { errors.add("level", "required") }
        else if clean.level.count > maxLevelLength || !clean.level.allSatisfy({ $0.isLetter || $0 == "_" || $0 == "-" }) { errors.add("level", "invalid") }
        clean.name = Self.cleanName(area.name)
        if clean.name.isEmpty { errors.add("name", "required") }
        else if clean.name.unicodeScalars.count > maxNameLength { errors.add("name", "too_long") }
        var names = [String: String]()
        for (language, raw) in area.names {
            let name = Self.cleanName(raw)
            guard isValidLanguage(language) else { errors.add("names", "invalid_language"); continue }
            if name.unicodeScalars.count > maxNameLength { errors.add("names", "too_long") }
            if !name.isEmpty { names[language.lowercased()] = name }
        }
        clean.names = names
        clean.keywords = Array(Set(area.keywords.map(cleanName).filter { !$0.isEmpty }.map { String($0.prefix(maxNameLength)) })).sorted()
        if clean.keywords.count > maxKeywords { errors.add("keywords", "too_many") }
        if let c = area.coordinate, !c.isValid { errors.add("latitude", "out_of_range") }
        return errors.isEmpty ? .success(clean) : .failure(FieldErrorsError(errors))
    }

    /// Whitespace collapsed, control characters removed.
    static func cleanName(_ raw: String) -> String {
        raw.unicodeScalars.filter { !CharacterSet.controlCharacters.contains($0) }
            .map(String.init).joined()
            .split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
    }
}

/// Names as a search compares them: case, accents and punctuation ignored ("Genève" and "geneve",
/// "Saint-Gall" and "saint gall", "Zürich" and "zurich" fold alike; "ß" is "ss", "œ" is "oe").
public enum AreaText {
    public static func fold(_ text: String) -> String {
        let decomposed = text.decomposedStringWithCompatibilityMapping
        var out = String.UnicodeScalarView()
        var lastWasSpace = true
        for scalar in decomposed.unicodeScalars {
            if scalar.properties.generalCategory == .nonspacingMark || scalar.properties.generalCategory == .enclosingMark { continue }
            if CharacterSet.alphanumerics.contains(scalar) {
                for lower in String(scalar).lowercased().unicodeScalars {
                    switch lower {
                    case "ß": out.append(contentsOf: "ss".unicodeScalars)
                    case "œ": out.append(contentsOf: "oe".unicodeScalars)
                    case "æ": out.append(contentsOf: "ae".unicodeScalars)
                    case "ø": out.append("o")
                    case "đ", "ð": out.append("d")
                    case "ł": out.append("l")
                    case "ı": out.append("i")
                    default: out.append(lower)
                    }
                }
                lastWasSpace = false
            } else if !lastWasSpace {
                // Hyphens, apostrophes, dots and spaces all separate words.
                out.append(" ")
                lastWasSpace = true
            }
        }
        var folded = String(out)
        if folded.hasSuffix(" ") { folded.removeLast() }
        return folded
    }

    /// The keys a name is found by: the whole folded name and every word's start ("La
    /// Chaux-de-Fonds" is found by "la ch…", "chaux…", "fonds…").
    public static func keys(_ name: String) -> [String] {
        let folded = fold(name)
        guard !folded.isEmpty else { return [] }
        var keys = [folded]
        var index = folded.startIndex
        while let space = folded[index...].firstIndex(of: " ") {
            index = folded.index(after: space)
            keys.append(String(folded[index...]))
        }
        return keys
    }
}

/// One answer of a search: the area, which of its names matched, and its ancestors (nearest first).
public struct AreaMatch: Sendable, Equatable {
    public var area: Area
    public var matchedName: String
    public var ancestors: [Area]
}

/// Every area in memory, with a sorted table of search keys. Built once per change of the data
/// (10,000 areas in tens of milliseconds); a search is two binary searches and a short scan.
public struct AreaIndex: Sendable {
    public private(set) var areas: [AreaID: Area] = [:]
    private var children: [AreaID: [AreaID]] = [:]
    /// Areas by number (the search works on numbers, not ids) and their depth.
    private var order: [AreaID] = []
    private var depthOf: [Int] = []
    /// (folded key, area number, which name, whether it is the start of the name), sorted by the
    /// key's UTF-8 bytes (folded keys compare as bytes, which is what the binary search needs).
    private var keys: [(key: String, area: Int32, name: String, whole: Bool)] = []

    public init(_ list: [Area] = []) {
        var listed: [Area] = []
        for area in list where areas[area.id] == nil {
            areas[area.id] = area
            order.append(area.id)
            listed.append(area)
        }
        var named: [AreaID: [(name: String, id: AreaID)]] = [:]
        for area in listed { if let parent = area.parent, areas[parent] != nil { named[parent, default: []].append((area.name, area.id)) } }
        children = named.mapValues { $0.sorted { $0.name < $1.name }.map(\.id) }
        for (n, area) in listed.enumerated() {
            for name in area.allNames {
                for (i, key) in AreaText.keys(name).enumerated() { keys.append((key, Int32(n), name, i == 0)) }
            }
            // A keyword (a postal code) is found from its start only, and shows the area's own name.
            for keyword in area.keywords {
                let key = AreaText.fold(keyword)
                if !key.isEmpty { keys.append((key, Int32(n), area.name, true)) }
            }
        }
        keys.sort { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
        depthOf = order.map { ancestors(of: $0).count }
    }

    public var count: Int { areas.count }
    public subscript(id: AreaID) -> Area? { areas[id] }

    /// The areas at the top of the hierarchy, by name.
    public var roots: [Area] {
        areas.values.filter { $0.parent.map { areas[$0] == nil } ?? true }.sorted { $0.name < $1.name }
    }

    public func children(of id: AreaID) -> [Area] { (children[id] ?? []).compactMap { areas[$0] } }

    /// Parent, grandparent, … up to the top (stops on a loop, which validation prevents anyway).
    public func ancestors(of id: AreaID) -> [Area] {
        var result = [Area](), seen: Set<AreaID> = [id]
        var next = areas[id]?.parent
        while let current = next, let area = areas[current], seen.insert(current).inserted {
            result.append(area)
            next = area.parent
        }
        return result
    }

    /// Whether `id` is `ancestor` or lies inside it.
    public func isWithin(_ id: AreaID, _ ancestor: AreaID) -> Bool {
        if id == ancestor { return true }
        var seen: Set<AreaID> = [id]
        var next = areas[id]?.parent
        while let current = next, seen.insert(current).inserted {
            if current == ancestor { return true }
            next = areas[current]?.parent
        }
        return false
    }

    /// `id` and every area inside it.
    public func descendants(of id: AreaID) -> Set<AreaID> {
        var result: Set<AreaID> = [id], stack = [id]
        while let next = stack.popLast() {
            for child in children[next] ?? [] where result.insert(child).inserted { stack.append(child) }
        }
        return result
    }

    /// Areas with a name (in any language) or a word of a name starting with `query`, accents and
    /// case ignored. Ranked: a name equal to the query first, then a name that starts with it, then a
    /// word that does; within each, larger areas (nearer the top) first, then by name.
    public func search(_ query: String, limit: Int = 20, within: AreaID? = nil) -> [AreaMatch] {
        let prefix = AreaText.fold(query)
        guard !prefix.isEmpty, limit > 0 else { return [] }
        var low = 0, high = keys.count
        while low < high {
            let mid = (low + high) / 2
            if keys[mid].key.utf8.lexicographicallyPrecedes(prefix.utf8) { low = mid + 1 } else { high = mid }
        }
        let inside = within.map { descendants(of: $0) }
        // The best entry per area (rank 0 exact, 1 start of a name, 2 start of a word), by number.
        var best = [Int32](repeating: -1, count: order.count)
        var bestRank = [UInt8](repeating: 3, count: order.count)
        var touched: [Int32] = []
        var i = low
        while i < keys.count, keys[i].key.utf8.starts(with: prefix.utf8) {
            let entry = keys[i]
            let n = Int(entry.area)
            let rank: UInt8 = entry.whole ? (entry.key.utf8.count == prefix.utf8.count ? 0 : 1) : 2
            if rank < bestRank[n], inside.map({ $0.contains(order[n]) }) ?? true {
                if best[n] < 0 { touched.append(entry.area) }
                best[n] = Int32(i)
                bestRank[n] = rank
            }
            i += 1
        }
        // Buckets by rank and depth (few), then names only within the buckets that fill the page.
        var buckets = [Int: [Int32]]()
        for n in touched { buckets[Int(bestRank[Int(n)]) * 64 + min(depthOf[Int(n)], 63), default: []].append(n) }
        var chosen: [Int32] = []
        for (_, bucket) in buckets.sorted(by: { $0.key < $1.key }) where chosen.count < limit {
            let bucket = bucket.sorted { a, b in
                let na = keys[Int(best[Int(a)])].name, nb = keys[Int(best[Int(b)])].name
                return na != nb ? na < nb : order[Int(a)].rawValue < order[Int(b)].rawValue
            }
            chosen += bucket.prefix(limit - chosen.count)
        }
        return chosen.compactMap { n in
            let id = order[Int(n)]
            guard let area = areas[id] else { return nil }
            return AreaMatch(area: area, matchedName: keys[Int(best[Int(n)])].name, ancestors: ancestors(of: id))
        }
    }

}

/// The CSV format admins import (`waybill areas import FILE.csv`, documented in docs/areas.md):
/// a header row, then one area per row.
///
///     id,parent_id,level,name,name_fr,name_de,name_it,name_en,latitude,longitude
///     CH,,country,Schweiz,Suisse,Schweiz,Svizzera,Switzerland,46.80,8.23
///
/// `id`, `level` and `name` are required; `parent_id` is empty at the top; any column `name_xx`
/// gives the name in language `xx`; latitude and longitude are optional; an optional `keywords`
/// column holds other search words separated by "|" (postal codes, abbreviations). Fields may be quoted
/// ("…", with "" for a quote); UTF-8; a parent may come after its child in the file.
public enum AreaCSV {
    public struct LineError: Error, Sendable, Equatable, CustomStringConvertible {
        public var line: Int
        public var reason: String
        public var description: String { "line \(line): \(reason)" }
    }

    public struct Problems: Error, Sendable, Equatable {
        public var lines: [LineError]
    }

    /// The areas of a file, or every problem found (up to 50), with its line.
    public static func parse(_ text: String) -> Result<[Area], Problems> {
        var rows = records(text)
        guard !rows.isEmpty else { return .failure(Problems(lines: [LineError(line: 1, reason: "the file is empty")])) }
        let header = rows.removeFirst().fields.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        var errors = [LineError]()
        func column(_ name: String) -> Int? { header.firstIndex(of: name) }
        guard let idColumn = column("id"), let levelColumn = column("level"), let nameColumn = column("name") else {
            return .failure(Problems(lines: [LineError(line: 1, reason: "the header must name the columns id, level and name")]))
        }
        let parentColumn = column("parent_id"), latColumn = column("latitude"), lonColumn = column("longitude"), keywordColumn = column("keywords")
        var languageColumns = [(String, Int)]()
        for (i, name) in header.enumerated() where name.hasPrefix("name_") {
            let language = String(name.dropFirst(5))
            guard AreaRules.isValidLanguage(language) else {
                return .failure(Problems(lines: [LineError(line: 1, reason: "\(name) does not name a language")]))
            }
            languageColumns.append((language, i))
        }
        if Set(header).count != header.count { return .failure(Problems(lines: [LineError(line: 1, reason: "a column is named twice")])) }
        var areas = [Area](), seen = [AreaID: Int]()
        for row in rows {
            if errors.count >= 50 { break }
            if row.fields.allSatisfy({ $0.trimmingCharacters(in: .whitespaces).isEmpty }) { continue }
            func field(_ i: Int?) -> String { i.flatMap { $0 < row.fields.count ? row.fields[$0] : nil }?.trimmingCharacters(in: .whitespaces) ?? "" }
            if row.fields.count > header.count { errors.append(LineError(line: row.line, reason: "more fields than the header has")); continue }
            var coordinate: Coordinate?
            let lat = field(latColumn), lon = field(lonColumn)
            if !lat.isEmpty || !lon.isEmpty {
                guard let la = Double(lat), let lo = Double(lon), Coordinate(latitude: la, longitude: lo).isValid else {
                    errors.append(LineError(line: row.line, reason: "latitude and longitude must both be numbers in range")); continue
                }
                coordinate = Coordinate(latitude: la, longitude: lo)
            }
            let parent = field(parentColumn)
            var names = [String: String]()
            for (language, i) in languageColumns where !field(i).isEmpty { names[language] = field(i) }
            let area = Area(id: AreaID(field(idColumn)), parent: parent.isEmpty ? nil : AreaID(parent), level: field(levelColumn),
                            name: field(nameColumn), names: names, coordinate: coordinate,
                            keywords: field(keywordColumn).split(separator: "|").map { String($0) })
            switch AreaRules.validated(area) {
            case .failure(let problem):
                errors.append(LineError(line: row.line, reason: problem.errors.description))
            case .success(let clean):
                if let earlier = seen[clean.id] {
                    errors.append(LineError(line: row.line, reason: "id \(clean.id.rawValue) is already on line \(earlier)"))
                } else {
                    seen[clean.id] = row.line
                    areas.append(clean)
                }
            }
        }
        if areas.count > AreaRules.maxAreas { errors.append(LineError(line: 1, reason: "more than \(AreaRules.maxAreas) areas")) }
        return errors.isEmpty ? .success(areas) : .failure(Problems(lines: errors))
    }

    /// Checks a whole hierarchy: every parent exists, no loops, not too deep. `existing` are areas
    /// already stored that the file may name as parents (the file's own win).
    public static func checkHierarchy(_ areas: [Area], existing: [Area] = []) -> [String] {
        var byID = [AreaID: Area]()
        for area in existing { byID[area.id] = area }
        for area in areas { byID[area.id] = area }
        var problems = [String]()
        for area in byID.values.sorted(by: { $0.id.rawValue < $1.id.rawValue }) {
            var depth = 0, seen: Set<AreaID> = [area.id], next = area.parent
            while let current = next {
                guard let parent = byID[current] else { problems.append("\(area.id.rawValue): parent \(current.rawValue) does not exist"); break }
                guard seen.insert(current).inserted else { problems.append("\(area.id.rawValue): its parents make a loop"); break }
                depth += 1
                if depth > AreaRules.maxDepth { problems.append("\(area.id.rawValue): more than \(AreaRules.maxDepth) levels deep"); break }
                next = parent.parent
            }
            if problems.count >= 50 { break }
        }
        return problems
    }

    /// Writes areas in the format `parse` reads, with a `name_xx` column per language present.
    public static func write(_ areas: [Area]) -> String {
        let languages = Set(areas.flatMap(\.names.keys)).sorted()
        var out = (["id", "parent_id", "level", "name"] + languages.map { "name_\($0)" } + ["latitude", "longitude", "keywords"]).joined(separator: ",") + "\n"
        for area in areas {
            var fields = [area.id.rawValue, area.parent?.rawValue ?? "", area.level, area.name]
            fields += languages.map { area.names[$0] ?? "" }
            fields += [area.coordinate.map { String($0.latitude) } ?? "", area.coordinate.map { String($0.longitude) } ?? "",
                       area.keywords.joined(separator: "|")]
            out += fields.map(quoted).joined(separator: ",") + "\n"
        }
        return out
    }

    static func quoted(_ field: String) -> String {
        field.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) ? "\"" + field.replacingOccurrences(of: "\"", with: "\"\"") + "\"" : field
    }

    /// RFC 4180 records with the line each starts on (a BOM and CRLF line ends accepted).
    static func records(_ text: String) -> [(line: Int, fields: [String])] {
        var result = [(line: Int, fields: [String])]()
        var fields = [String](), field = "", inQuotes = false, line = 1, startLine = 1, atFieldStart = true
        var scalars = Array(text.unicodeScalars)
        if scalars.first == "\u{FEFF}" { scalars.removeFirst() }
        var i = 0
        func endRecord() {
            fields.append(field)
            if !(fields.count == 1 && fields[0].isEmpty) { result.append((startLine, fields)) }
            fields = []; field = ""; atFieldStart = true
        }
        while i < scalars.count {
            let c = scalars[i]
            if inQuotes {
                if c == "\"" {
                    if i + 1 < scalars.count, scalars[i + 1] == "\"" { field.unicodeScalars.append("\""); i += 1 } else { inQuotes = false }
                } else {
                    if c == "\n" { line += 1 }
                    field.unicodeScalars.append(c)
                }
            } else {
                switch c {
                case "\"" where atFieldStart: inQuotes = true; atFieldStart = false
                case ",": fields.append(field); field = ""; atFieldStart = true
                case "\r": break
                case "\n": endRecord(); line += 1; startLine = line
                default: field.unicodeScalars.append(c); atFieldStart = false
                }
            }
            i += 1
        }
        if !field.isEmpty || !fields.isEmpty { endRecord() }
        return result
    }
}
