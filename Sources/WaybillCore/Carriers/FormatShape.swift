/// What a tracking-number format's pattern can match, read once from the pattern itself
/// (`carrier-formats.json`): the lengths of its whole matches and the characters each position may
/// hold. It is a superset, never a judge: the pattern and the check digit decide; the shape only
/// spares them candidates they could not match (`CarrierDetection.scan`, security audit 2, finding 2).
///
/// Numbers are matched after `CarrierDetection.normalized`: capitals, digits and dashes only, at most
/// 60 characters. So `\s` matches nothing, a lowercase letter nothing, and lookarounds and `\b` are
/// read as matching anything (they only ever narrow a match). A pattern using something this reader
/// does not know gets the shape that admits everything: slower, never wrong.
struct FormatShape: Sendable, Equatable {
    /// The characters a normalized number holds: 0-9, A-Z, "-".
    static let symbols = 37
    static let allSymbols: UInt64 = (1 << 37) - 1
    /// Positions followed; whole matches are at most 60 long (`candidates(for:)`).
    static let positionCount = 64

    /// Bit n: a whole match n characters long is possible.
    var lengths: UInt64
    /// For each position, the characters (bit `symbol(_:)`) a match may hold there.
    var positions: [UInt64]

    static let anything = FormatShape(lengths: ~0, positions: Array(repeating: allSymbols, count: positionCount))

    init(lengths: UInt64, positions: [UInt64]) {
        self.lengths = lengths
        self.positions = positions
    }

    /// The shape of `pattern`, or `.anything` when the pattern is beyond this reader.
    init(pattern: String) {
        var reader = Reader(bytes: Array(pattern.utf8))
        guard let node = try? reader.whole() else { self = .anything; return }
        var shaper = Shaper()
        guard let ends = try? shaper.ends(node, from: 1) else { self = .anything; return }
        self.init(lengths: ends, positions: shaper.positions)
    }

    /// The bit of a character of a normalized number, nil for any other.
    static func symbol(_ byte: UInt8) -> Int? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return Int(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): return 10 + Int(byte - UInt8(ascii: "A"))
        case UInt8(ascii: "-"): return 36
        default: return nil
        }
    }

    func admits(length: Int) -> Bool { length >= 0 && length < 64 && lengths & (1 << UInt64(length)) != 0 }

    /// Whether `bytes` (a normalized number) may be a whole match: its length and each character.
    func admits(_ bytes: [UInt8]) -> Bool {
        guard admits(length: bytes.count) else { return false }
        for (position, byte) in bytes.enumerated() {
            guard let symbol = Self.symbol(byte), positions[position] & (1 << UInt64(symbol)) != 0 else { return false }
        }
        return true
    }

    // MARK: reading a pattern

    struct Unsupported: Error {}

    indirect enum Node: Equatable {
        /// One character of this set (empty: nothing matches, as `\s` here).
        case one(UInt64)
        /// Lookarounds, `\b`, anchors: read as always true.
        case zeroWidth
        case sequence([Node])
        case choice([Node])
        case repeated(Node, min: Int, max: Int?)
    }

    /// A recursive-descent reader of the regular expressions of the formats table.
    struct Reader {
        var bytes: [UInt8]
        var index = 0
        var depth = 0

        init(bytes: [UInt8]) { self.bytes = bytes }

        var next: UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func take(_ text: String) -> Bool {
            let wanted = Array(text.utf8)
            guard index + wanted.count <= bytes.count, Array(bytes[index..<index + wanted.count]) == wanted else { return false }
            index += wanted.count
            return true
        }

        mutating func whole() throws -> Node {
            let node = try choice()
            guard index == bytes.count else { throw Unsupported() }
            return node
        }

        mutating func choice() throws -> Node {
            depth += 1
            defer { depth -= 1 }
            guard depth < 50 else { throw Unsupported() }
            var options = [try sequence()]
            while next == UInt8(ascii: "|") {
                index += 1
                options.append(try sequence())
            }
            return options.count == 1 ? options[0] : .choice(options)
        }

        mutating func sequence() throws -> Node {
            var parts: [Node] = []
            while let byte = next, byte != UInt8(ascii: "|"), byte != UInt8(ascii: ")") {
                parts.append(try quantified(try atom()))
            }
            return .sequence(parts)
        }

        mutating func atom() throws -> Node {
            guard let byte = next else { throw Unsupported() }
            index += 1
            switch byte {
            case UInt8(ascii: "("):
                var lookaround = false
                if take("?:") {
                } else if take("?=") || take("?!") || take("?<=") || take("?<!") {
                    lookaround = true
                } else if take("?<") || take("?P<") {
                    while let c = next, c != UInt8(ascii: ">") { index += 1 }
                    guard take(">") else { throw Unsupported() }
                } else if next == UInt8(ascii: "?") {
                    throw Unsupported()
                }
                let inner = try choice()
                guard take(")") else { throw Unsupported() }
                return lookaround ? .zeroWidth : inner
            case UInt8(ascii: "["): return .one(try characterClass())
            case UInt8(ascii: "\\"): return try escape(inClass: false)
            case UInt8(ascii: "."): return .one(Self.all)
            case UInt8(ascii: "^"), UInt8(ascii: "$"): return .zeroWidth
            case UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "?"), UInt8(ascii: "{"), UInt8(ascii: ")"), UInt8(ascii: "]"):
                throw Unsupported()
            default: return .one(Self.bit(byte))
            }
        }

        static let all = FormatShape.allSymbols
        static let digits: UInt64 = (1 << 10) - 1
        static let letters: UInt64 = ((1 << 26) - 1) << 10

        static func bit(_ byte: UInt8) -> UInt64 { FormatShape.symbol(byte).map { 1 << UInt64($0) } ?? 0 }

        /// After a backslash. In a class only character sets are allowed.
        mutating func escape(inClass: Bool) throws -> Node {
            guard let byte = next else { throw Unsupported() }
            index += 1
            switch byte {
            case UInt8(ascii: "s"): return .one(0)
            case UInt8(ascii: "S"): return .one(Self.all)
            case UInt8(ascii: "d"): return .one(Self.digits)
            case UInt8(ascii: "D"): return .one(Self.all & ~Self.digits)
            case UInt8(ascii: "w"): return .one(Self.digits | Self.letters)
            case UInt8(ascii: "W"): return .one(Self.bit(UInt8(ascii: "-")))
            case UInt8(ascii: "b"), UInt8(ascii: "B"):
                if inClass { throw Unsupported() }
                return .zeroWidth
            default:
                // An escaped punctuation character stands for itself; an escaped letter or digit
                // is something else (a back-reference, \p{…}, \u…): not read.
                let letterOrDigit = (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                    || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                guard byte < 128, !letterOrDigit else { throw Unsupported() }
                return .one(Self.bit(byte))
            }
        }

        /// After `[`: the set of symbols the class admits.
        mutating func characterClass() throws -> UInt64 {
            let negated = take("^")
            var set: UInt64 = 0
            var first = true
            while true {
                guard let byte = next else { throw Unsupported() }
                if byte == UInt8(ascii: "]") && !first { index += 1; break }
                first = false
                index += 1
                if byte == UInt8(ascii: "[") { throw Unsupported() }
                if byte == UInt8(ascii: "\\") {
                    guard case .one(let escaped) = try escape(inClass: true) else { throw Unsupported() }
                    set |= escaped
                    continue
                }
                if next == UInt8(ascii: "-"), index + 1 < bytes.count, bytes[index + 1] != UInt8(ascii: "]") {
                    let high = bytes[index + 1]
                    guard high >= byte, high != UInt8(ascii: "\\"), high != UInt8(ascii: "[") else { throw Unsupported() }
                    index += 2
                    for c in byte...high { set |= Self.bit(c) }
                } else {
                    set |= Self.bit(byte)
                }
            }
            return negated ? Self.all & ~set : set
        }

        mutating func quantified(_ node: Node) throws -> Node {
            var node = node
            while let byte = next {
                var bounds: (Int, Int?)
                switch byte {
                case UInt8(ascii: "*"): index += 1; bounds = (0, nil)
                case UInt8(ascii: "+"): index += 1; bounds = (1, nil)
                case UInt8(ascii: "?"): index += 1; bounds = (0, 1)
                case UInt8(ascii: "{"):
                    index += 1
                    let low = try number()
                    var high: Int? = low
                    if take(",") { high = next == UInt8(ascii: "}") ? nil : try number() }
                    guard take("}"), high.map({ $0 >= low }) ?? true else { throw Unsupported() }
                    bounds = (low, high)
                default: return node
                }
                // A lazy or possessive mark changes which match is taken, not whether one exists
                // (possessive only removes some): the shape stays a superset.
                if next == UInt8(ascii: "?") || next == UInt8(ascii: "+") { index += 1 }
                node = .repeated(node, min: bounds.0, max: bounds.1)
            }
            return node
        }

        mutating func number() throws -> Int {
            var value = 0
            var digits = 0
            while let byte = next, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) {
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
                digits += 1
                index += 1
                guard digits <= 4 else { throw Unsupported() }
            }
            guard digits > 0 else { throw Unsupported() }
            return value
        }
    }

    /// Follows every offset a match may reach (bit n: n characters read), noting which characters
    /// each position may hold on the way.
    struct Shaper {
        var positions = [UInt64](repeating: 0, count: FormatShape.positionCount)
        var steps = 0

        mutating func ends(_ node: Node, from starts: UInt64) throws -> UInt64 {
            steps += 1
            guard steps < 200_000 else { throw Unsupported() }
            switch node {
            case .one(let set):
                guard set != 0 else { return 0 }
                var out: UInt64 = 0
                for offset in 0..<63 where starts & (1 << UInt64(offset)) != 0 {
                    positions[offset] |= set
                    out |= 1 << UInt64(offset + 1)
                }
                return out
            case .zeroWidth:
                return starts
            case .sequence(let parts):
                var current = starts
                for part in parts {
                    if current == 0 { return 0 }
                    current = try ends(part, from: current)
                }
                return current
            case .choice(let options):
                var out: UInt64 = 0
                for option in options { out |= try ends(option, from: starts) }
                return out
            case .repeated(let inner, let min, let max):
                var current = starts
                var count = 0
                while count < min {
                    if current == 0 { return 0 }
                    let next = try ends(inner, from: current)
                    count += 1
                    if next == current { break } // the same from here on
                    current = next
                }
                var out = current
                var extra = 0
                while current != 0, max.map({ extra < $0 - min }) ?? true {
                    let next = try ends(inner, from: current)
                    extra += 1
                    if next == current { break }
                    out |= next
                    current = next
                    guard extra < 200 else { throw Unsupported() }
                }
                return out
            }
        }
    }
}
