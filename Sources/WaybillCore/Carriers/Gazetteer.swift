import Foundation

/// Where a carrier's event happened, as near as its words allow: always approximate, and `precision`
/// says how much (a postal code's area, a locality, or only the country's centre).
public struct GeoGuess: Sendable, Equatable, Codable {
    public enum Precision: String, Sendable, Codable {
        /// The centre of the postal code's places.
        case postalCode = "postal_code"
        /// The locality's centre: the carrier named a town and no known postal code.
        case locality
        /// The country's centre: nothing finer was understood.
        case country
    }

    public var latitude: Double
    public var longitude: Double
    public var precision: Precision

    public init(latitude: Double, longitude: Double, precision: Precision) {
        self.latitude = latitude
        self.longitude = longitude
        self.precision = precision
    }
}

/// An offline gazetteer: places a carrier's location ("Köln, DE", "75008 Paris, FR", "Oftringen") on
/// the map without asking anyone. Its data is `Resources/gazetteer.tsv` (built by
/// `scripts/make-gazetteer` from GeoNames, CC BY 4.0: `Resources/gazetteer-LICENSE.txt`): the postal
/// codes and localities of CH, FR, DE, AT, IT, BE, NL, LU and LI; other countries have their centre.
public struct Gazetteer: Sendable {
    struct Point: Sendable {
        var latitude: Double
        var longitude: Double
    }

    private let points: [Point]
    // The indexes are keyed by a 64-bit hash of their key's bytes (no strings to build for 46,000
    // lines; two keys sharing a hash are as likely as 1 in 10⁹).
    /// "CH|8000": the point of a postal code.
    private let postalCodes: HashIndex
    /// "CH|zurich": the place of that name: the first locality (the file keeps only the most
    /// populous of a name), else the first postal code's.
    private let names: HashIndex
    /// The same without a trailing canton or department ("Kappel SO" as "kappel"), tried after `names`.
    private let namesWithoutSuffix: HashIndex
    /// The countries that have places, in the order a location without a country is looked up.
    private let countries: [String]

    /// Places (lines) in the gazetteer.
    public var count: Int { points.count }

    /// The shipped gazetteer (`Resources/gazetteer.tsv`), read once on first use. A missing resource
    /// leaves only the countries' centres (the tests make sure it is there).
    public static let standard: Gazetteer = {
        guard let url = resourceURL, let data = try? Data(contentsOf: url) else { return Gazetteer(tsv: Data()) }
        return Gazetteer(tsv: data)
    }()

    static var resourceURL: URL? { Bundle.module.url(forResource: "gazetteer", withExtension: "tsv") }

    /// A gazetteer of lines `country<TAB>name<TAB>postal code or empty<TAB>latitude<TAB>longitude`;
    /// malformed lines are skipped. Byte by byte, without Foundation's parsers: the shipped 47,000
    /// lines load in about 12 ms (optimised build; some 0.2 s unoptimised).
    public init(tsv: Data) {
        var points: [Point] = []
        var isPostal: [Bool] = []
        let estimate = tsv.count / 30
        var postalCodes = HashIndex(capacity: estimate)
        var names = HashIndex(capacity: estimate)
        var suffixed = HashIndex(capacity: 1024)
        var seen: [String] = []
        tsv.withUnsafeBytes { (raw: UnsafeRawBufferPointer) in
            let bytes = raw.bindMemory(to: UInt8.self)
            let end = bytes.count
            points.reserveCapacity(estimate)
            isPostal.reserveCapacity(estimate)
            var key: [UInt8] = []
            key.reserveCapacity(256)
            var lineStart = 0
            while lineStart < end {
                // The five fields' bounds.
                var tabs = (0, 0, 0, 0)
                var found = 0
                var lineEnd = lineStart
                while lineEnd < end && bytes[lineEnd] != 0x0A {
                    if bytes[lineEnd] == 0x09 {
                        switch found {
                        case 0: tabs.0 = lineEnd
                        case 1: tabs.1 = lineEnd
                        case 2: tabs.2 = lineEnd
                        case 3: tabs.3 = lineEnd
                        default: break
                        }
                        found += 1
                    }
                    lineEnd += 1
                }
                defer { lineStart = lineEnd + 1 }
                let fieldEnd = lineEnd > lineStart && bytes[lineEnd - 1] == 0x0D ? lineEnd - 1 : lineEnd  // CRLF
                guard found == 4, tabs.0 == lineStart + 2, tabs.1 > tabs.0 + 1,
                      let latitude = Self.decimal(bytes, (tabs.2 + 1)..<tabs.3),
                      let longitude = Self.decimal(bytes, (tabs.3 + 1)..<fieldEnd),
                      (-90...90).contains(latitude), (-180...180).contains(longitude) else { continue }
                let index = Int32(points.count)
                points.append(Point(latitude: latitude, longitude: longitude))
                let postal = tabs.2 > tabs.1 + 1
                isPostal.append(postal)
                let country = UnsafeBufferPointer(rebasing: bytes[lineStart..<tabs.0])
                if seen.isEmpty || !seen[seen.count - 1].utf8.elementsEqual(country) {
                    let code = String(decoding: country, as: UTF8.self)
                    if !seen.contains(code) { seen.append(code) }
                }
                key.removeAll(keepingCapacity: true)
                key.append(contentsOf: country)
                key.append(UInt8(ascii: "|"))
                if postal {
                    key.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[(tabs.1 + 1)..<tabs.2]))
                    let postalKey = Self.hash(key[...])
                    postalCodes.insertIfAbsent(postalKey, index)
                    key.removeSubrange(3...)
                }
                let name = UnsafeBufferPointer(rebasing: bytes[(tabs.0 + 1)..<tabs.1])
                Self.fold(name, into: &key)
                guard key.count > 3 else { continue }
                let nameKey = Self.hash(key[...])
                if let existing = names.insertIfAbsent(nameKey, index), !postal, isPostal[Int(existing)] {
                    // A locality before any postal code's place of the same name.
                    names.replace(nameKey, index)
                }
                // "Kappel SO": also "kappel", after the names proper.
                let n = name.count
                if n > 3, name[n - 3] == 0x20, (0x41...0x5A).contains(name[n - 2]), (0x41...0x5A).contains(name[n - 1]),
                   key.count > 6, key[key.count - 3] == 0x20 {
                    let strippedKey = Self.hash(key[..<(key.count - 3)])
                    suffixed.insertIfAbsent(strippedKey, index)
                }
            }
        }
        self.points = points
        self.postalCodes = postalCodes
        self.names = names
        self.namesWithoutSuffix = suffixed
        let priority = ["CH", "DE", "FR", "AT", "LI", "IT", "BE", "NL", "LU"]
        countries = priority.filter(seen.contains) + seen.filter { !priority.contains($0) }
    }

    // MARK: - Looking up

    /// Where `location` is, as a carrier writes it: "Köln, DE", "75008 Paris, FR", "PARIS 08, FR",
    /// "D-50667 Köln", "CHICAGO, IL, US", "Oftringen", "DE". By postal code when one is given and
    /// known, else by the locality's name, else the country's centre; nil when nothing is understood.
    public func locate(_ location: String) -> GeoGuess? {
        // A carrier's location is short: the rest of a huge string is noise.
        let text = String(location.unicodeScalars.prefix(300))
        var parts = text.split(whereSeparator: { $0 == "," || $0 == ";" || $0 == "\n" || $0 == "\t" })
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }
        guard !parts.isEmpty else { return nil }

        // The country: the last part ("…, DE", "…, Switzerland"), else a postal code's prefix
        // ("D-50667 Köln") or a code ending the name ("Köln DE").
        var country: String?
        var countryAsCode = false
        if parts.count > 1 || Self.country(named: parts[0]) != nil, let code = Self.country(named: parts[parts.count - 1]) {
            if parts.count == 1 {
                // "Luxembourg" alone: the town rather than the country, when the country has it.
                if let guess = localityWithCountry(Self.words(parts[0]), in: [code], runs: false)?.1 { return guess }
                return centre(of: code)
            }
            country = code
            countryAsCode = parts[parts.count - 1].count == 2
            parts.removeLast()
        }

        // Postal codes ("8000", "D-50667", "L-1234", "NL-1011") and what remains of each part.
        var codes: [String] = []
        var nameParts: [[String]] = []
        for part in parts {
            var words: [String] = []
            var afterCode = false
            for token in part.split(whereSeparator: { $0 == " " || $0 == "\u{00A0}" }) {
                if let (prefixCountry, code) = Self.postalCode(String(token)) {
                    codes.append(code)
                    if country == nil, let prefixCountry { country = prefixCountry }
                    afterCode = true
                } else {
                    // "1011 AB Amsterdam": a Dutch postal code's letters.
                    if afterCode, token.count == 2, token.allSatisfy({ $0.isASCII && $0.isUppercase }) {
                        afterCode = false
                        continue
                    }
                    afterCode = false
                    words.append(String(token))
                }
            }
            if !words.isEmpty { nameParts.append(words) }
        }

        if country == nil, var last = nameParts.last, last.count > 1, let word = last.last, word.count == 2,
           word.allSatisfy({ $0.isASCII && $0.isUppercase }), let code = Self.country(named: word) {
            // "Köln DE": a country code ending the name, unless the whole is a place ("Kappel SO").
            if localityWithCountry(last, in: countries, runs: false) == nil {
                last.removeLast()
                nameParts[nameParts.count - 1] = last
                country = code
            }
        }
        guard let country else {
            // No country: the name picks it ("75008 Paris": FR), else the first country knowing the code.
            for words in nameParts {
                if let (code, guess) = localityWithCountry(words, in: countries) {
                    return postal(codes, in: code) ?? guess
                }
            }
            for code in countries { if let guess = postal(codes, in: code) { return guess } }
            return nil
        }
        if let guess = postal(codes, in: country) { return guess }
        for words in nameParts { if let guess = localityWithCountry(words, in: [country])?.1 { return guess } }
        if countryAsCode, nameParts.count == 1, let others = Self.subdivisionCodes[country] {
            // Two capitals may be a canton's or a province's rather than a country's ("Bern, BE",
            // "Luzern, LU", "Chur, GR", "Siena, SI"): a town of that exact name there, when the
            // country named has none.
            if let guess = localityWithCountry(nameParts[0], in: others, runs: false)?.1 { return guess }
        }
        return centre(of: country)
    }

    private func postal(_ codes: [String], in country: String) -> GeoGuess? {
        for code in codes {
            if let index = postalCodes[Self.hash("\(country)|\(code)".utf8)] { return guess(index, .postalCode) }
        }
        return nil
    }

    /// The first country of `countries` that has a place named `words`: the whole name first, then
    /// without arrondissement numbers and "Cedex" ("PARIS CEDEX 08"), without the words of a
    /// facility before it ("Paketzentrum Härkingen"), then its first words ("Köln Eifeltor" as Köln,
    /// "Zürich Mülligen" as Zürich) unless `runs` is false.
    private func localityWithCountry(_ words: [String], in countries: [String], runs useRuns: Bool = true) -> (String, GeoGuess)? {
        let folded = Self.fold(words.joined(separator: " ")).split(separator: " ").prefix(12).map(String.init)
        guard !folded.isEmpty else { return nil }
        var variants: [String] = [folded.joined(separator: " ")]
        var trimmed = folded
        while let last = trimmed.last, trimmed.count > 1, last == "cedex" || last.allSatisfy(\.isNumber)
            || (last.count <= 3 && last.first?.isNumber == true) {
            trimmed.removeLast()
        }
        var core = trimmed.filter { !$0.allSatisfy(\.isNumber) && $0 != "cedex" }
        while core.count > 1, Self.facilityWords.contains(core[0]) { core.removeFirst() }
        for candidate in [trimmed, core] where !candidate.isEmpty {
            let variant = candidate.joined(separator: " ")
            if !variants.contains(variant) { variants.append(variant) }
        }
        if useRuns, core.count > 1 {
            for length in stride(from: core.count - 1, through: 1, by: -1) {
                let run = core[0..<length].joined(separator: " ")
                if length > 1 || run.count >= 3 { variants.append(run) }
            }
        }
        for variant in variants {
            for country in countries {
                let key = Self.hash("\(country)|\(variant)".utf8)
                if let index = names[key] ?? namesWithoutSuffix[key] {
                    return (country, guess(index, .locality))
                }
            }
        }
        return nil
    }

    /// Words of a carrier's facility before the town's name ("Paketzentrum Härkingen", "Hub Basel",
    /// "Centre de tri Lyon"), folded.
    private static let facilityWords: Set<String> = Set([
        "paketzentrum", "briefzentrum", "sortierzentrum", "verteilzentrum", "paketverteilzentrum", "logistikzentrum",
        "frachtzentrum", "postzentrum", "zustellbasis", "zustellstelle", "zentrum", "depot", "hub", "center", "centre",
        "centro", "plateforme", "platform", "agence", "agency", "site", "terminal", "gateway", "facility", "station",
        "airport", "flughafen", "aeroport", "aeroporto", "sorting", "distribution", "delivery", "international",
        "mail", "parcel", "parcels", "paket", "pakete", "post", "poste", "postal", "postale", "filiale", "postfiliale",
        "tri", "colis", "courrier", "smistamento", "dhl", "dpd", "gls", "ups", "fedex", "tnt", "hermes", "chronopost",
        "colissimo", "bpost", "postnl", "pz", "bz", "pvz", "de", "du", "des", "di", "del", "della", "der", "am", "im", "bei", "of",
    ].map { fold($0) })

    private func guess(_ index: Int32, _ precision: GeoGuess.Precision) -> GeoGuess {
        let point = points[Int(index)]
        return GeoGuess(latitude: point.latitude, longitude: point.longitude, precision: precision)
    }

    private func centre(of country: String) -> GeoGuess? {
        Self.centres[country].map { GeoGuess(latitude: $0.0, longitude: $0.1, precision: .country) }
    }

    // MARK: - Countries

    /// The countries' approximate centres (mainland for FR, ES, PT, US).
    static let centres: [String: (Double, Double)] = [
        "CH": (46.818, 8.228), "FR": (46.228, 2.214), "DE": (51.166, 10.452), "AT": (47.516, 14.550),
        "IT": (41.872, 12.567), "BE": (50.504, 4.470), "NL": (52.133, 5.291), "LU": (49.815, 6.130),
        "LI": (47.166, 9.555), "GB": (54.0, -2.5), "IE": (53.413, -8.244), "ES": (40.464, -3.749),
        "PT": (39.400, -8.224), "US": (39.833, -98.583), "CA": (56.130, -106.347), "PL": (51.919, 19.145),
        "CZ": (49.817, 15.473), "SK": (48.669, 19.699), "HU": (47.162, 19.503), "SI": (46.151, 14.995),
        "HR": (45.100, 15.200), "DK": (56.264, 9.502), "SE": (62.198, 17.551), "NO": (61.0, 9.0),
        "FI": (64.0, 26.0), "GR": (39.074, 21.824), "MC": (43.738, 7.425), "AD": (42.546, 1.602),
        "SM": (43.942, 12.458),
    ]

    /// Country codes that are also a Swiss canton's, a German state's or an Italian province's
    /// abbreviation, and where.
    static let subdivisionCodes: [String: [String]] = [
        "BE": ["CH", "DE"], "FR": ["CH"], "LU": ["CH"], "GR": ["CH", "IT"], "AT": ["IT"], "CA": ["IT"], "FI": ["IT"],
        "LI": ["IT"], "NO": ["IT"], "SI": ["IT"], "PT": ["IT"], "CZ": ["IT"],
    ]

    /// ISO codes, their three-letter forms and the names carriers use, folded.
    static let countryNames: [String: String] = {
        var table: [String: String] = [:]
        for code in centres.keys { table[code.lowercased()] = code }
        let names: [String: [String]] = [
            "CH": ["che", "switzerland", "schweiz", "suisse", "svizzera", "svizra", "helvetia"],
            "FR": ["fra", "france", "frankreich", "francia"],
            "DE": ["deu", "germany", "deutschland", "allemagne", "germania"],
            "AT": ["aut", "austria", "osterreich", "autriche"],
            "IT": ["ita", "italy", "italia", "italien", "italie"],
            "BE": ["bel", "belgium", "belgique", "belgien", "belgie", "belgio"],
            "NL": ["nld", "netherlands", "the netherlands", "nederland", "niederlande", "pays bas", "paesi bassi", "holland"],
            "LU": ["lux", "luxembourg", "luxemburg", "lussemburgo"],
            "LI": ["lie", "liechtenstein"],
            "GB": ["gbr", "uk", "united kingdom", "great britain", "england", "scotland", "wales", "grossbritannien", "royaume uni", "regno unito"],
            "IE": ["irl", "ireland", "irland", "irlande"],
            "ES": ["esp", "spain", "espana", "spanien", "espagne", "spagna"],
            "PT": ["prt", "portugal", "portogallo"],
            "US": ["usa", "united states", "united states of america", "vereinigte staaten", "etats unis", "stati uniti"],
            "CA": ["can", "canada", "kanada"],
            "PL": ["pol", "poland", "polska", "polen", "pologne", "polonia"],
            "CZ": ["cze", "czech republic", "czechia", "cesko", "ceska republika", "tschechien", "republique tcheque"],
            "SK": ["svk", "slovakia", "slovensko", "slowakei"],
            "HU": ["hun", "hungary", "magyarorszag", "ungarn", "hongrie"],
            "SI": ["svn", "slovenia", "slovenija", "slowenien"],
            "HR": ["hrv", "croatia", "hrvatska", "kroatien"],
            "DK": ["dnk", "denmark", "danmark", "danemark"],
            "SE": ["swe", "sweden", "sverige", "schweden", "suede"],
            "NO": ["nor", "norway", "norge", "norwegen", "norvege"],
            "FI": ["fin", "finland", "suomi", "finnland", "finlande"],
            "GR": ["grc", "greece", "hellas", "griechenland", "grece"],
            "MC": ["mco", "monaco"],
            "AD": ["and", "andorra", "andorre"],
            "SM": ["smr", "san marino", "saint marin"],
        ]
        for (code, list) in names { for name in list { table[fold(name)] = code } }
        return table
    }()

    /// The country a part names ("DE", "Deutschland", "CHE"), if any.
    static func country(named part: String) -> String? {
        let folded = fold(part)
        guard !folded.isEmpty, folded.count <= 40 else { return nil }
        return countryNames[folded]
    }

    /// Licence-plate prefixes of postal codes ("D-50667", "CH-8000", "F-75008", "FL-9490").
    private static let postalPrefixes: [String: String] = [
        "CH": "CH", "D": "DE", "DE": "DE", "F": "FR", "FR": "FR", "A": "AT", "AT": "AT", "I": "IT", "IT": "IT",
        "B": "BE", "BE": "BE", "NL": "NL", "L": "LU", "LU": "LU", "FL": "LI", "LI": "LI",
        "E": "ES", "ES": "ES", "P": "PT", "PT": "PT", "PL": "PL", "CZ": "CZ", "DK": "DK", "S": "SE", "SE": "SE",
        "N": "NO", "NO": "NO", "SK": "SK", "H": "HU", "HU": "HU", "SI": "SI", "SLO": "SI", "HR": "HR",
    ]

    /// A token that is a postal code: 4 or 5 digits, perhaps after a country prefix ("D-50667").
    static func postalCode(_ token: String) -> (country: String?, code: String)? {
        var prefix: String?
        var digits = Substring(token)
        if let dash = token.firstIndex(where: { $0 == "-" || $0 == "‑" || $0 == "–" }) {
            let head = token[..<dash].uppercased()
            guard let country = postalPrefixes[head] else { return nil }
            prefix = country
            digits = token[token.index(after: dash)...]
        }
        guard (4...5).contains(digits.count), digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return (prefix, String(digits))
    }

    private static func words(_ part: String) -> [String] {
        part.split(separator: " ").map(String.init)
    }

    // MARK: - Folding

    /// U+00C0…U+024F folded to ASCII ("_": not a letter). Generated with Python's NFKD, as
    /// scripts/make-gazetteer folds, plus ß→ss, æ→ae, œ→oe, ø→o, ł→l, đ/ð→d, þ→th.
    private static let latin: [[UInt8]] = {
        let table = """
        a a a a a a ae c e e e e i i i i d n o o o o o _ o u u u u y th ss a a a a a a ae c e e e e i i i i d n o \
        o o o o _ o u u u u y th y a a a a a a c c c c c c c c d d d d e e e e e e e e e e g g g g g g g g h h h h \
        i i i i i i i i i i ij ij j j k k k l l l l l l l l l l n n n n n n n n n o o o o o o oe oe r r r r r r s s \
        s s s s s s t t t t _ _ u u u u u u u u u u u u w w y y y z z z z z z s b _ _ _ _ _ _ c c _ _ d d _ _ _ _ \
        f f _ _ _ _ i k k l _ _ _ _ _ o o _ _ p p _ _ _ _ _ _ t t _ u u _ _ y y z z _ _ _ _ _ _ _ _ _ _ _ _ _ dz \
        dz dz lj lj lj nj nj nj a a i i o o u u u u u u u u u u _ a a a a _ _ _ _ g g k k o o o o _ _ j dz dz dz \
        g g _ _ n n a a _ _ _ _ a a a a e e e e i i i i o o o o r r r r u u u u s s t t _ _ h h _ _ _ _ z z a a e \
        e o o o o o o o o y y l n t j db qp a c c l t s z _ _ b u _ e e j j q q r r y y
        """
        return table.split(separator: " ").map { $0 == "_" ? [] : Array($0.utf8) }
    }()

    /// The key names are matched by: lower case, no diacritics, ue/oe/ae as u/o/a (Zuerich = Zürich),
    /// Saint/Sankt/Sint/St. as "st", Sainte as "ste", anything but letters and digits one space.
    static func fold(_ text: some StringProtocol) -> String {
        var out: [UInt8] = []
        var copy = String(text)
        copy.withUTF8 { fold($0, into: &out) }
        return String(decoding: out, as: UTF8.self)
    }

    /// `fold` of UTF-8 bytes, appended to `out` (what `out` held before is left alone).
    static func fold(_ utf8: UnsafeBufferPointer<UInt8>, into out: inout [UInt8]) {
        let base = out.count
        var wordStart = base
        var i = 0
        let n = utf8.count
        while i < n {
            let byte = utf8[i]
            if byte < 0x80 {
                i += 1
                switch byte {
                case 0x41...0x5A: appendLetter(byte + 0x20, &out, wordStart)
                case 0x61...0x7A, 0x30...0x39: appendLetter(byte, &out, wordStart)
                default: separate(&out, &wordStart)
                }
                continue
            }
            // A multi-byte scalar; invalid UTF-8 counts as a separator.
            var value: UInt32
            var length: Int
            switch byte {
            case 0xC2...0xDF: value = UInt32(byte & 0x1F); length = 2
            case 0xE0...0xEF: value = UInt32(byte & 0x0F); length = 3
            case 0xF0...0xF4: value = UInt32(byte & 0x07); length = 4
            default: value = 0; length = 1
            }
            var valid = length > 1 && i + length <= n
            if valid {
                for k in 1..<length {
                    let next = utf8[i + k]
                    guard next & 0xC0 == 0x80 else { valid = false; break }
                    value = value << 6 | UInt32(next & 0x3F)
                }
            }
            guard valid, let scalar = Unicode.Scalar(value) else {
                i += 1
                separate(&out, &wordStart)
                continue
            }
            i += length
            switch value {
            case 0xC0..<0x250:
                let folded = latin[Int(value - 0xC0)]
                if folded.isEmpty { separate(&out, &wordStart) } else { for b in folded { appendLetter(b, &out, wordStart) } }
            case 0x300...0x36F, 0x1AB0...0x1AFF, 0x1DC0...0x1DFF, 0x20D0...0x20FF, 0xFE20...0xFE2F:
                continue  // combining marks (a decomposed "é")
            default:
                let properties = scalar.properties
                if properties.isAlphabetic || properties.numericType != nil {
                    for lower in properties.lowercaseMapping.unicodeScalars {
                        if lower.isASCII { appendLetter(UInt8(lower.value), &out, wordStart) } else { out.append(contentsOf: String(lower).utf8) }
                    }
                } else {
                    separate(&out, &wordStart)
                }
            }
        }
        if out.count > wordStart { endWord(&out, wordStart) } else if out.count > base, out[out.count - 1] == 0x20 { out.removeLast() }
    }

    /// A letter, but "e" after "u", "o" or "a" in a word is dropped: Zuerich, Koeln, Graeff read as
    /// Zürich, Köln, Gräff (folded).
    @inline(__always)
    private static func appendLetter(_ byte: UInt8, _ out: inout [UInt8], _ wordStart: Int) {
        if byte == 0x65, out.count > wordStart {
            let previous = out[out.count - 1]
            if previous == 0x75 || previous == 0x6F || previous == 0x61 { return }
        }
        out.append(byte)
    }

    @inline(__always)
    private static func separate(_ out: inout [UInt8], _ wordStart: inout Int) {
        guard out.count > wordStart else { return }
        endWord(&out, wordStart)
        out.append(0x20)
        wordStart = out.count
    }

    /// Saint, Sankt, Sint → st; Sainte → ste.
    private static func endWord(_ out: inout [UInt8], _ wordStart: Int) {
        let length = out.count - wordStart
        guard length == 4 || length == 5 || length == 6, out[wordStart] == 0x73 else { return }
        let word = out[wordStart...]
        if word.elementsEqual("saint".utf8) || word.elementsEqual("sankt".utf8) || word.elementsEqual("sint".utf8) {
            out.removeSubrange((wordStart + 2)...)
            out[wordStart + 1] = 0x74
        } else if word.elementsEqual("sainte".utf8) {
            out.removeSubrange((wordStart + 3)...)
            out[wordStart + 1] = 0x74
            out[wordStart + 2] = 0x65
        }
    }

    /// FNV-1a, 64 bits.
    @inline(__always)
    static func hash(_ bytes: some Sequence<UInt8>) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
        return hash
    }

    /// "47.367" without Foundation's parser (the file has 45,000 of them).
    private static func decimal(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Double? {
        var index = range.lowerBound
        guard index < range.upperBound else { return nil }
        var negative = false
        if bytes[index] == UInt8(ascii: "-") { negative = true; index += 1 }
        var whole: Int64 = 0, fraction: Int64 = 0, scale: Double = 1, digits = 0, dot = false
        while index < range.upperBound {
            let byte = bytes[index]
            if byte == UInt8(ascii: ".") {
                if dot { return nil }
                dot = true
            } else if byte >= 0x30 && byte <= 0x39 {
                digits += 1
                guard digits <= 15 else { return nil }
                if dot { fraction = fraction * 10 + Int64(byte - 0x30); scale *= 10 } else { whole = whole * 10 + Int64(byte - 0x30) }
            } else {
                return nil
            }
            index += 1
        }
        guard digits > 0 else { return nil }
        let value = Double(whole) + Double(fraction) / scale
        return negative ? -value : value
    }
}

/// A hash table of 64-bit keys (hashes) to row numbers: open addressing, linear probing, each key
/// beside its value (one cache line per probe).
struct HashIndex: Sendable {
    private struct Entry {
        var key: UInt64
        var value: Int32
    }

    private var entries: [Entry]
    private var mask: Int
    private var shift: UInt64
    private var count = 0

    init(capacity: Int) {
        var size = 16
        while size * 5 < capacity * 6 { size <<= 1 }
        entries = Array(repeating: Entry(key: 0, value: 0), count: size)
        mask = size - 1
        shift = UInt64(64 - size.trailingZeroBitCount)
    }

    /// 0 marks an empty slot: the key 0 is stored as 1.
    @inline(__always) private static func stored(_ key: UInt64) -> UInt64 { key == 0 ? 1 : key }

    @inline(__always) private func slot(of key: UInt64) -> Int {
        // Fibonacci hashing: the product's top bits (FNV's low bits alone cluster).
        var i = Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) >> shift)
        while entries[i].key != 0 && entries[i].key != key { i = (i + 1) & mask }
        return i
    }

    subscript(key: UInt64) -> Int32? {
        let i = slot(of: Self.stored(key))
        return entries[i].key == 0 ? nil : entries[i].value
    }

    /// Stores `value` unless the key has one: then returns that one.
    @discardableResult
    mutating func insertIfAbsent(_ key: UInt64, _ value: Int32) -> Int32? {
        let key = Self.stored(key)
        let i = slot(of: key)
        if entries[i].key != 0 { return entries[i].value }
        entries[i] = Entry(key: key, value: value)
        count += 1
        if count * 4 > entries.count * 3 { grow() }
        return nil
    }

    mutating func replace(_ key: UInt64, _ value: Int32) {
        let i = slot(of: Self.stored(key))
        if entries[i].key != 0 { entries[i].value = value }
    }

    private mutating func grow() {
        let old = entries
        entries = Array(repeating: Entry(key: 0, value: 0), count: old.count * 2)
        mask = entries.count - 1
        shift -= 1
        for entry in old where entry.key != 0 { entries[slot(of: entry.key)] = entry }
    }
}
