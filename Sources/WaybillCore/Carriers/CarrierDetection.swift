import Foundation

/// How each carrier's tracking numbers look and how their check digits work: the data of
/// `Resources/carrier-formats.json` (built by `scripts/make-carrier-formats`, mostly from
/// tracking_number_data, MIT). Adding a carrier or a format is a change to that file, not to code.
public struct CarrierFormatTable: Sendable, Decodable {
    public struct Carrier: Sendable, Decodable {
        public var code: String
        public var name: String
        public var formats: [Format]
    }

    public struct Format: Sendable, Decodable {
        public var id: String
        public var name: String
        var regex: String
        var checksum: Checksum?
        var prependIf: Prepend?
        /// Named groups whose value must be in their lookup table (an S10 number's country).
        var requires: [String]?
        var lookups: [Lookup]?
        /// The carrier's public tracking page, `%s` standing for the number.
        public var trackingUrl: String?
        var rankBonus: Double?
        /// False for formats too loose to pick out of pasted text (any 14 digits).
        var inText: Bool?
    }

    struct Checksum: Sendable, Decodable {
        var name: String
        var modulo: Int?
        var evensMultiplier: Int?
        var oddsMultiplier: Int?
        var reverse: Bool?
        var weightings: [Int]?
        var modulo1: Int?
        var modulo2: Int?
        /// Added to the sum before the check (GLS: 1).
        var offset: Int?
    }

    struct Prepend: Sendable, Decodable {
        var matchesRegex: String
        var content: String
    }

    struct Lookup: Sendable, Decodable {
        var name: String
        var group: String
        var entries: [Entry]
    }

    struct Entry: Sendable, Decodable {
        var matches: String?
        var matchesRegex: String?
        var name: String?
        var courier: String?
        var country: String?
        /// The Waybill carrier for an S10 country's post (`swiss_post` for CH).
        var carrier: String?
    }

    public var carriers: [Carrier]

    public static func decode(_ data: Data) throws -> CarrierFormatTable {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return try decoder.decode(CarrierFormatTable.self, from: data)
    }
}

/// One carrier and format a tracking number may belong to.
public struct CarrierCandidate: Sendable, Hashable, Codable {
    public enum Reason: String, Sendable, Hashable, Codable, CaseIterable {
        /// The pattern matches and its check digit is right.
        case checkDigitValid = "check_digit_valid"
        /// The format has no check digit: only the pattern matches.
        case patternOnly = "pattern_only"
    }

    /// The number as carriers read it: capitals, no spaces.
    public var number: String
    /// The carrier (`dhl`, `ups`, `swiss_post`…); for S10 items the post of their country when
    /// known, `s10` otherwise.
    public var carrier: String
    public var carrierName: String
    /// The format within the data (`dhl_express`, `s10`…), and its table (`dhl`, `s10`).
    public var format: String
    public var formatName: String
    public var table: String
    public var reason: Reason
    /// Higher is likelier: 5 for a valid check digit, plus a tenth per character, plus the format's bonus.
    public var confidence: Double
    /// The carrier's own tracking page for this number, when known.
    public var trackingURL: String?
    /// An S10 item's country (ISO 3166 alpha-2).
    public var country: String?
}

/// Suggests carriers from a tracking number, offline (issue "Parcels of every carrier", item 1):
/// the number is normalised (spaces and dots out, capitals), matched against every format
/// of the table and its check digit computed; the candidates come best first. A person always
/// confirms or corrects the suggestion.
public struct CarrierDetection: @unchecked Sendable {
    // Regex values are immutable and safe to share; `Regex<AnyRegexOutput>` is not marked Sendable.
    private struct Compiled {
        var carrier: CarrierFormatTable.Carrier
        var format: CarrierFormatTable.Format
        var regex: Regex<AnyRegexOutput>
        var prepend: Regex<AnyRegexOutput>?
        var lookups: [(CarrierFormatTable.Lookup, [Regex<AnyRegexOutput>?])]
        /// What the pattern can match at all (lengths, characters per position): read from it once.
        var shape: FormatShape
    }

    private let compiled: [Compiled]
    /// The formats precise enough for free text (`in_text`), as indices of `compiled`, in chunks
    /// of 64: bit k of chunk c stands for `inText[64 * c + k]`.
    private let inText: [Int]
    /// For each chunk, position p and character s (`FormatShape.symbol`), at `p * symbols + s`: the
    /// formats of `inText` whose numbers may hold s at p (position 0: the first-character index).
    private let admitting: [[UInt64]]
    /// For each chunk and length, the formats of `inText` whose numbers may be that long.
    private let ending: [[UInt64]]
    public let table: CarrierFormatTable
    /// The carriers a person may choose, by code: those of the table and the posts S10 items go
    /// to (`swiss_post`, `royal_mail`…). Read from the table once.
    public let carrierNames: [String: String]
    /// Each format's tracking page template, by format id.
    private let trackingPages: [String: String]
    /// Each carrier's tracking page template (its first format's), by carrier code: an S10 item's
    /// page is its post's (`swiss_post` for …CH).
    private let carrierPages: [String: String]

    /// The shipped table (`Resources/carrier-formats.json`). A table that does not load is a
    /// broken build, caught by the tests, never a request's problem: the server reads it once at
    /// start-up (`WaybillServices.init`, before `configure` registers any route), so a broken table
    /// stops the process there.
    public static let standard: CarrierDetection = {
        guard let url = Bundle.module.url(forResource: "carrier-formats", withExtension: "json"),
              let data = try? Data(contentsOf: url), let table = try? CarrierFormatTable.decode(data),
              let detection = try? CarrierDetection(table: table) else {
            fatalError("Resources/carrier-formats.json is missing or invalid: run scripts/make-carrier-formats")  // cannot fail: after start-up (read once by WaybillServices.init)
        }
        return detection
    }()

    public init(table: CarrierFormatTable) throws {
        self.table = table
        var compiled: [Compiled] = []
        for carrier in table.carriers {
            for format in carrier.formats {
                let lookups = try (format.lookups ?? []).map { lookup in
                    (lookup, try lookup.entries.map { entry in try entry.matchesRegex.map { try Regex("^(?:\($0))$") } })
                }
                compiled.append(Compiled(carrier: carrier, format: format, regex: try Regex(format.regex),
                                         prepend: try format.prependIf.map { try Regex($0.matchesRegex) }, lookups: lookups,
                                         shape: FormatShape(pattern: format.regex)))
            }
        }
        self.compiled = compiled
        let inText = compiled.indices.filter { compiled[$0].format.inText != false }
        let symbols = FormatShape.symbols, positions = FormatShape.positionCount
        var admitting: [[UInt64]] = []
        var ending: [[UInt64]] = []
        for chunk in stride(from: 0, to: inText.count, by: 64) {
            var admits = [UInt64](repeating: 0, count: positions * symbols)
            var ends = [UInt64](repeating: 0, count: positions)
            for (bit, index) in inText[chunk..<min(chunk + 64, inText.count)].enumerated() {
                let shape = compiled[index].shape
                for position in 0..<positions {
                    if shape.admits(length: position) { ends[position] |= 1 << UInt64(bit) }
                    for symbol in 0..<symbols where shape.positions[position] & (1 << UInt64(symbol)) != 0 {
                        admits[position * symbols + symbol] |= 1 << UInt64(bit)
                    }
                }
            }
            admitting.append(admits)
            ending.append(ends)
        }
        self.inText = inText
        self.admitting = admitting
        self.ending = ending
        var names: [String: String] = [:]
        for carrier in table.carriers where carrier.code != "s10" { names[carrier.code] = carrier.name }
        let posts = table.carriers.flatMap(\.formats).flatMap { $0.lookups ?? [] }.filter { $0.group == "CountryCode" }.flatMap(\.entries)
        for entry in posts { if let code = entry.carrier, names[code] == nil { names[code] = entry.courier ?? code } }
        carrierNames = names
        var pages: [String: String] = [:]
        var byCarrier: [String: String] = [:]
        for carrier in table.carriers {
            for format in carrier.formats {
                guard let url = format.trackingUrl else { continue }
                pages[format.id] = url
                if byCarrier[carrier.code] == nil { byCarrier[carrier.code] = url }
            }
        }
        trackingPages = pages
        carrierPages = byCarrier
    }

    /// The carrier's page for `number` in `format`, without matching anything again; for a format
    /// without a page of its own (S10), the page of its `carrier` (the post of the item's country).
    public func trackingURL(format: String?, number: String, carrier: String? = nil) -> String? {
        (format.flatMap { trackingPages[$0] } ?? carrier.flatMap { carrierPages[$0] })?.replacingOccurrences(of: "%s", with: number)
    }

    /// The number as carriers read it: capitals, without spaces or dots (Swiss Post prints
    /// `99.00.123456.12345678`). Dashes stay: one LaserShip format has one.
    public static func normalized(_ raw: String) -> String {
        String(raw.uppercased().unicodeScalars.filter { !CharacterSet.whitespacesAndNewlines.contains($0) && $0 != "." }
            .map(Character.init))
    }

    /// Every carrier and format `raw` may be, best first (empty: none known).
    public func candidates(for raw: String) -> [CarrierCandidate] {
        let number = Self.normalized(raw)
        guard (4...60).contains(number.count), number.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }) else { return [] }
        let bytes = Array(number.utf8)
        return Self.ranked(compiled.filter { $0.shape.admits(bytes) }.compactMap { candidate(number, as: $0) })
    }

    /// Best first: the highest confidence, then the format's id.
    private static func ranked(_ found: [CarrierCandidate]) -> [CarrierCandidate] {
        found.sorted { ($0.confidence, $1.format) > ($1.confidence, $0.format) }
    }

    /// `number` (normalized, at most 60 characters) read as format `c`: its pattern (over that
    /// bounded input), lookups and check digit; nil when it is not one.
    private func candidate(_ number: String, as c: Compiled) -> CarrierCandidate? {
        guard let match = try? c.regex.wholeMatch(in: number) else { return nil }
        func group(_ name: String) -> String? { match.output[name]?.substring.map(String.init) }
        var serial = group("SerialNumber") ?? ""
        if let prepend = c.format.prependIf, let test = c.prepend, (try? test.firstMatch(in: serial)) != nil {
            serial = prepend.content + serial
        }
        // Lookups the format requires (an S10 country must be known), and what they say.
        var known: [String: CarrierFormatTable.Entry] = [:]
        for (lookup, patterns) in c.lookups {
            guard let value = group(lookup.group) else { continue }
            if let index = lookup.entries.indices.first(where: { i in
                lookup.entries[i].matches == value || ((patterns[i]).flatMap { try? $0.wholeMatch(in: value) } != nil)
            }) { known[lookup.name] = lookup.entries[index] }
        }
        if let required = c.format.requires, !required.allSatisfy({ known[$0] != nil }) { return nil }
        let reason: CarrierCandidate.Reason
        if let checksum = c.format.checksum {
            guard let check = group("CheckDigit"), CheckDigits.validates(checksum, serial: serial, check: check) else { return nil }
            reason = .checkDigitValid
        } else {
            reason = .patternOnly
        }
        let post = known["Courier"]
        let confidence = (reason == .checkDigitValid ? 5 : 0) + 0.1 * Double(number.count) + (c.format.rankBonus ?? 0)
        return CarrierCandidate(
            number: number, carrier: post?.carrier ?? c.carrier.code, carrierName: post?.courier ?? c.carrier.name,
            format: c.format.id, formatName: c.format.name, table: c.carrier.code, reason: reason,
            confidence: (confidence * 100).rounded() / 100,
            trackingURL: trackingURL(format: c.format.id, number: number, carrier: post?.carrier),
            country: c.carrier.code == "s10" ? group("CountryCode") : nil)
    }

    /// The most characters of a text `numbers(in:)` and `scan(_:)` read; the rest is not looked at.
    /// The API refuses longer text (422 `too_long`, `openapi.yaml`) before it gets here.
    public static let maxTextLength = 20_000
    /// The most format checks (one format's pattern and check digit tried on one group of words)
    /// one scan makes: about 40 ms of CPU (release build). A shipping confirmation needs a few
    /// dozen, a long table of figures a few thousand; text built to cost the most is read only as
    /// far as the checks last (`NumberScan.complete` false).
    public static let maxChecks = 5_000

    /// What `scan(_:)` found, and the work it took.
    public struct NumberScan: Sendable, Hashable {
        /// Each number found with its best candidate, in the order they appear, each once.
        public var numbers: [CarrierCandidate]
        /// Format checks made: one format's pattern and check digit tried on one group of words.
        /// Never more than the scan's cap, nor than `maxChecksPerWord` for each word read.
        public var checks: Int
        /// Words read (a number printed in groups is several).
        public var words: Int
        /// False when a cap (checks, numbers) stopped the scan before the end of the text.
        public var complete: Bool
    }

    /// The most checks one word of text can cost: every format admitting each length a group
    /// of words starting there can have (8 to 40 characters), once. Worked out from the table.
    public var maxChecksPerWord: Int {
        ending.reduce(0) { sum, chunk in sum + (4...Self.longestGroup).reduce(0) { $0 + chunk[$1].nonzeroBitCount } }
    }

    /// The most characters (as written, dots included) of the words joined into one number.
    static let longestGroup = 40

    /// Tracking numbers found in pasted text (a shop's confirmation, a forwarded mail): each with
    /// its best candidate, in the order they appear. Only formats precise enough for free text
    /// count (`in_text`), so order numbers and phone numbers are not taken for parcels. At most
    /// `maxTextLength` characters and `maxChecks` checks (`scan(_:)`).
    public func numbers(in text: String) -> [CarrierCandidate] {
        scan(text).numbers
    }

    /// `numbers(in:)` with its work counted and capped (security audit 2, finding 2): linear in
    /// the text's length (at most `maxTextLength` characters read, each word costing at most
    /// `maxChecksPerWord` checks) and at most `maxChecks` checks whatever the text.
    ///
    /// The text is read as words of letters, digits, dots and dashes; a number printed in groups
    /// ("1Z 999 AA1 01 2345 6784") is the following words joined, at most 40 characters. At each
    /// word the groups starting there are tried longest first, each only with the formats whose
    /// shape admits it (`FormatShape`: its length, the character at each position, the first
    /// character first): each (group, format) pair is checked at most once, most never, and
    /// groups stop growing as soon as no format admits them; text without digits costs no check.
    /// The longest group with a match is taken, with its best candidate, and the scan goes on
    /// after it; otherwise at the next word. (Trying each format only on its longest admissible
    /// group would miss USPS numbers, whose lengths vary, when digits follow them.)
    public func scan(_ text: String, maxChecks: Int = Self.maxChecks, maxNumbers: Int = .max) -> NumberScan {
        let words = Self.words(in: text)
        let symbols = FormatShape.symbols
        let longest = Self.longestGroup
        let row = longest + 1
        var result = NumberScan(numbers: [], checks: 0, words: 0, complete: true)
        var seen: Set<String> = []
        // For the groups of one start: alive[chunk * row + n], the formats of the chunk admitting
        // the first n characters joined. Buffers reused from start to start.
        var alive = [UInt64](repeating: 0, count: admitting.count * row)
        var joined: [UInt8] = []
        joined.reserveCapacity(longest)
        // The groups starting at one word: their last word, length as written (dots in), length
        // joined (dots out), whether they hold a digit.
        var groups: [(last: Int, written: Int, length: Int, digit: Bool)] = []
        var i = 0
        scanning: while i < words.count {
            result.words = i + 1
            joined.removeAll(keepingCapacity: true)
            groups.removeAll(keepingCapacity: true)
            for chunk in admitting.indices { alive[chunk * row] = .max }
            var written = 0
            var digit = false
            var admitted = true
            var end = i
            while admitted, end < words.count, written + words[end].count <= longest {
                written += words[end].count
                for byte in words[end] where byte != UInt8(ascii: ".") {
                    let n = joined.count
                    joined.append(byte)
                    admitted = false
                    for chunk in admitting.indices {
                        let before = alive[chunk * row + n]
                        let now = before == 0 ? 0 : before & (FormatShape.symbol(byte).map { admitting[chunk][n * symbols + $0] } ?? 0)
                        alive[chunk * row + n + 1] = now
                        admitted = admitted || now != 0
                    }
                    digit = digit || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                }
                groups.append((end, written, joined.count, digit))
                // Only short groups continue a number; a long word stands alone.
                if words[end].count > 12 && end > i { break }
                end += 1
            }
            var taken: (words: Int, best: CarrierCandidate)?
            for group in groups.reversed() where group.written >= 8 && group.digit && group.length >= 4 {
                var found: [CarrierCandidate] = []
                var number: String?
                for chunk in admitting.indices {
                    var formats = alive[chunk * row + group.length] & ending[chunk][group.length]
                    while formats != 0 {
                        let bit = formats.trailingZeroBitCount
                        formats &= formats - 1
                        guard result.checks < maxChecks else { result.complete = false; break scanning }
                        result.checks += 1
                        let text = number ?? String(decoding: joined[..<group.length], as: UTF8.self)
                        number = text
                        if let match = candidate(text, as: compiled[inText[chunk * 64 + bit]]) { found.append(match) }
                    }
                }
                if let best = Self.ranked(found).first {
                    taken = (group.last - i + 1, best)
                    break
                }
            }
            guard let taken else { i += 1; continue }
            i += taken.words
            result.words = i
            if seen.insert(taken.best.number).inserted {
                result.numbers.append(taken.best)
                if result.numbers.count >= maxNumbers {
                    result.complete = i >= words.count
                    break
                }
            }
        }
        return result
    }

    /// The words of a text (its first `maxTextLength` characters, in capitals): runs of ASCII
    /// letters, digits, dots and dashes, without the dots and dashes they start or end with.
    static func words(in text: String) -> [[UInt8]] {
        var words: [[UInt8]] = []
        var word: [UInt8] = []
        func isEdge(_ byte: UInt8) -> Bool { byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-") }
        func flush() {
            var start = 0
            var end = word.count
            while start < end, isEdge(word[start]) { start += 1 }
            while end > start, isEdge(word[end - 1]) { end -= 1 }
            if start < end { words.append(Array(word[start..<end])) }
            word.removeAll(keepingCapacity: true)
        }
        for character in String(text.prefix(maxTextLength)).uppercased() {
            if character.isASCII, let byte = character.asciiValue, FormatShape.symbol(byte) != nil || byte == UInt8(ascii: ".") {
                word.append(byte)
            } else {
                flush()
            }
        }
        flush()
        return words
    }
}

/// The check-digit algorithms of carriers' tracking numbers (docs/carriers.md). Each returns
/// whether `check` is right for `serial`; anything that is not a digit where one is needed is wrong,
/// never a crash.
public enum CheckDigits {
    static func validates(_ checksum: CarrierFormatTable.Checksum, serial: String, check: String) -> Bool {
        switch checksum.name {
        case "mod10":
            return mod10(serial, check: check, evens: checksum.evensMultiplier, odds: checksum.oddsMultiplier,
                         reverse: checksum.reverse ?? false, offset: checksum.offset ?? 0)
        case "mod7": return mod7(serial, check: check)
        case "s10": return s10(serial, check: check)
        case "sum_product_with_weightings_and_modulo":
            return sumProduct(serial, check: check, weights: checksum.weightings ?? [], modulo1: checksum.modulo1 ?? 11, modulo2: checksum.modulo2 ?? 10)
        case "mod_37_36": return mod37_36(serial, check: check)
        case "luhn": return luhn(serial, check: check)
        default: return false
        }
    }

    /// Mod 10 with multipliers for even and odd positions (from 0), letters as (ASCII − 3) mod 10;
    /// check = (10 − (sum + offset) mod 10) mod 10. UPS 1Z, FedEx Ground, SSCC, USPS, Canada Post,
    /// DHL Paket, GLS.
    public static func mod10(_ serial: String, check: String, evens: Int?, odds: Int?, reverse: Bool = false, offset: Int = 0) -> Bool {
        guard let expected = Int(check) else { return false }
        var total = offset
        let characters = reverse ? Array(serial.reversed()) : Array(serial)
        for (index, character) in characters.enumerated() {
            guard let ascii = character.asciiValue else { return false }
            var value = character.isNumber ? Int(ascii - 48) : (Int(ascii) - 3) % 10
            if let odds, index % 2 == 1 { value *= odds } else if let evens, index % 2 == 0 { value *= evens }
            total += value
        }
        let remainder = total % 10
        return (remainder == 0 ? 0 : 10 - remainder) == expected
    }

    /// DHL Express: the serial mod 7.
    public static func mod7(_ serial: String, check: String) -> Bool {
        guard serial.count <= 18, let value = Int(serial), let expected = Int(check) else { return false }
        return value % 7 == expected
    }

    /// UPU S10: weights 8,6,4,2,3,5,9,7, r = sum mod 11; 5 if r = 0, 0 if r = 1, else 11 − r.
    public static func s10(_ serial: String, check: String) -> Bool {
        let digits = serial.compactMap(\.wholeNumberValue)
        guard digits.count == 8, serial.count == 8, let expected = Int(check) else { return false }
        let sum = zip(digits, [8, 6, 4, 2, 3, 5, 9, 7]).reduce(0) { $0 + $1.0 * $1.1 }
        let remainder = sum % 11
        let computed = remainder == 0 ? 5 : remainder == 1 ? 0 : 11 - remainder
        return computed == expected
    }

    /// FedEx: (Σ digit × weight mod 11) mod 10.
    public static func sumProduct(_ serial: String, check: String, weights: [Int], modulo1: Int, modulo2: Int) -> Bool {
        let digits = serial.compactMap(\.wholeNumberValue)
        guard digits.count == serial.count, let expected = Int(check), modulo1 > 0, modulo2 > 0 else { return false }
        let sum = zip(digits, weights).reduce(0) { $0 + $1.0 * $1.1 }
        return sum % modulo1 % modulo2 == expected
    }

    /// ISO 7064 mod 37,36 (DPD): the check character is from 0–9A–Z.
    public static func mod37_36(_ serial: String, check: String) -> Bool {
        let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ")
        let modulus = 36
        var cd = modulus
        for character in serial {
            guard let value = alphabet.firstIndex(of: character) else { return false }
            cd += value
            if cd > modulus { cd -= modulus }
            cd *= 2
            if cd > modulus { cd -= modulus + 1 }
        }
        cd = modulus + 1 - cd
        if cd == modulus { cd = 0 }
        return check.count == 1 && alphabet.indices.contains(cd) && String(alphabet[cd]) == check
    }

    /// Luhn over the serial followed by its check digit.
    public static func luhn(_ serial: String, check: String) -> Bool {
        let digits = (serial + check).compactMap(\.wholeNumberValue)
        guard digits.count == serial.count + check.count, !digits.isEmpty else { return false }
        var sum = 0
        for (index, digit) in digits.reversed().enumerated() {
            if index % 2 == 1 {
                let doubled = digit * 2
                sum += doubled > 9 ? doubled - 9 : doubled
            } else {
                sum += digit
            }
        }
        return sum % 10 == 0
    }
}

extension CarrierDetection {
    /// Names shops and carriers use for themselves, beside the table's own names.
    static let aliases: [String: String] = [
        "unitedparcelservice": "ups", "federalexpress": "fedex", "fedexground": "fedex", "fedexexpress": "fedex",
        "dhlexpress": "dhl", "dhlparcel": "dhl", "dhlpaket": "dhl", "dhlecommerce": "dhl", "dhlde": "dhl", "deutschepost": "dhl",
        "swisspost": "swiss_post", "diepost": "swiss_post", "postch": "swiss_post", "lapostesuisse": "swiss_post", "postesuisse": "swiss_post",
        "laposte": "la_poste", "colissimo": "la_poste", "chronopost": "la_poste", "glsgroup": "gls", "dpdgroup": "dpd",
        "royalmail": "royal_mail", "canadapost": "canada_post", "amazonlogistics": "amazon", "amazonshipping": "amazon", "usps": "usps",
    ]

    /// The carrier a shop names (`tracking_company: "UPS"`, `tracking_provider: "dhl-express"`),
    /// case, spaces and punctuation ignored; nil when no carrier of the table goes by that name.
    public func carrier(named name: String) -> String? {
        let key = String(name.lowercased().unicodeScalars.filter { CharacterSet.alphanumerics.contains($0) && $0.isASCII }.map(Character.init))
        guard !key.isEmpty, key.count <= 60 else { return nil }
        if let code = Self.aliases[key], carrierNames[code] != nil { return code }
        for (code, carrierName) in carrierNames {
            let codeKey = code.replacingOccurrences(of: "_", with: "")
            let nameKey = String(carrierName.lowercased().unicodeScalars.filter { CharacterSet.alphanumerics.contains($0) && $0.isASCII }.map(Character.init))
            if key == codeKey || key == nameKey { return code }
        }
        return nil
    }
}
