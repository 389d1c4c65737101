import Foundation

/// How much of a QR symbol may be damaged and still decode. Higher levels
/// survive scuffed or creased labels at the cost of a larger (denser) symbol.
public enum QRErrorCorrection: Int, Sendable, CaseIterable, Hashable {
    /// Recovers about 7 % of codewords.
    case low
    /// Recovers about 15 % of codewords; the usual choice for printed links.
    case medium
    /// Recovers about 25 % of codewords.
    case quartile
    /// Recovers about 30 % of codewords.
    case high

    /// The two error-correction bits of the format information (Table 12).
    var formatBits: Int {
        switch self {
        case .low: 1
        case .medium: 0
        case .quartile: 3
        case .high: 2
        }
    }
}

/// Why a QR symbol could not be produced.
public enum QRCodeError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Even a version 40 symbol at the requested level cannot hold the data.
    case dataTooLong(byteCount: Int, maximum: Int)

    public var description: String {
        switch self {
        case let .dataTooLong(byteCount, maximum):
            "QR code data is \(byteCount) bytes; at most \(maximum) fit at this error-correction level"
        }
    }
}

/// A QR Code Model 2 symbol (ISO/IEC 18004), encoded in byte mode.
///
/// Written from the specification so labels can be produced without any
/// platform imaging framework (the server runs on Linux). The text is stored
/// as its UTF-8 bytes without an ECI header, which is what phone cameras and
/// common decoders expect for URLs.
public struct QRCode: Sendable, Hashable {
    /// Modules per side, including neither the quiet zone nor any margin.
    public let size: Int
    /// The symbol version (1–40), the smallest that holds the data.
    public let version: Int
    /// The error-correction level the symbol was built with.
    public let correction: QRErrorCorrection
    /// The data mask (0–7) that scored the lowest penalty.
    public let mask: Int
    private let modules: [Bool]

    /// Whether the module at column `x`, row `y` is dark. Coordinates outside
    /// the symbol read as light, like the quiet zone around it.
    public subscript(x: Int, y: Int) -> Bool {
        guard x >= 0, y >= 0, x < size, y < size else { return false }
        return modules[y * size + x]
    }

    /// Encodes `text` as UTF-8 in the smallest version that fits.
    /// - Throws: `QRCodeError.dataTooLong` when even version 40 is too small.
    public static func encode(_ text: String, correction: QRErrorCorrection = .medium) throws -> QRCode {
        try encode(bytes: Array(text.utf8), correction: correction)
    }

    /// Encodes raw bytes in the smallest version that fits.
    public static func encode(bytes: [UInt8], correction: QRErrorCorrection = .medium) throws -> QRCode {
        guard let version = (1...40).first(where: { byteCapacity(version: $0, correction: correction) >= bytes.count }) else {
            throw QRCodeError.dataTooLong(byteCount: bytes.count, maximum: byteCapacity(version: 40, correction: correction))
        }
        let data = dataCodewords(bytes: bytes, version: version, correction: correction)
        let codewords = interleavedWithErrorCorrection(data, version: version, correction: correction)

        var base = QRMatrix(version: version)
        base.drawFunctionPatterns()
        base.drawCodewords(codewords)

        var best: QRMatrix? = nil
        var bestMask = 0
        var bestPenalty = Int.max
        for mask in 0..<8 {
            var candidate = base
            candidate.applyMask(mask)
            candidate.drawFormatBits(correction: correction, mask: mask)
            let penalty = candidate.penalty()
            if penalty < bestPenalty {
                bestPenalty = penalty
                bestMask = mask
                best = candidate
            }
        }
        let chosen = best ?? base
        return QRCode(size: chosen.size, version: version, correction: correction, mask: bestMask, modules: chosen.modules)
    }

    /// How many bytes a byte-mode symbol of `version` holds at `correction`
    /// (ISO/IEC 18004 Table 7). Returns 0 for versions outside 1–40.
    public static func byteCapacity(version: Int, correction: QRErrorCorrection) -> Int {
        guard (1...40).contains(version) else { return 0 }
        let bits = QRTables.dataCodewords(version: version, level: correction) * 8
        let header = 4 + (version <= 9 ? 8 : 16)
        return max(0, (bits - header) / 8)
    }

    // MARK: - Data encoding

    /// Mode indicator, character count, data, terminator and pad codewords.
    static func dataCodewords(bytes: [UInt8], version: Int, correction: QRErrorCorrection) -> [UInt8] {
        let capacityBits = QRTables.dataCodewords(version: version, level: correction) * 8
        var bits = BitBuffer()
        bits.append(0b0100, count: 4)
        bits.append(bytes.count, count: version <= 9 ? 8 : 16)
        for byte in bytes { bits.append(Int(byte), count: 8) }
        bits.append(0, count: min(4, capacityBits - bits.count))
        bits.append(0, count: (8 - bits.count % 8) % 8)
        var pad = 0xEC
        while bits.count < capacityBits {
            bits.append(pad, count: 8)
            pad = pad == 0xEC ? 0x11 : 0xEC
        }
        return bits.bytes
    }

    /// Splits the data into the spec's blocks, appends Reed–Solomon codewords
    /// to each, then interleaves column by column (ISO/IEC 18004 §7.6).
    static func interleavedWithErrorCorrection(_ data: [UInt8], version: Int, correction: QRErrorCorrection) -> [UInt8] {
        let layout = QRTables.blockLayout(version: version, level: correction)
        let generator = ReedSolomon.generator(degree: layout.eccPerBlock)
        var dataBlocks: [[UInt8]] = []
        var eccBlocks: [[UInt8]] = []
        var offset = 0
        for length in layout.dataPerBlock {
            let block = Array(data[offset..<offset + length])
            offset += length
            dataBlocks.append(block)
            eccBlocks.append(ReedSolomon.remainder(block, generator: generator))
        }
        var result: [UInt8] = []
        result.reserveCapacity(QRTables.totalCodewords(version: version))
        let longest = layout.dataPerBlock.max() ?? 0
        for index in 0..<longest {
            for block in dataBlocks where index < block.count { result.append(block[index]) }
        }
        for index in 0..<layout.eccPerBlock {
            for block in eccBlocks { result.append(block[index]) }
        }
        return result
    }
}

// MARK: - Bits

struct BitBuffer {
    private(set) var bits: [Bool] = []
    var count: Int { bits.count }

    mutating func append(_ value: Int, count: Int) {
        guard count > 0 else { return }
        for shift in stride(from: count - 1, through: 0, by: -1) {
            bits.append((value >> shift) & 1 == 1)
        }
    }

    var bytes: [UInt8] {
        var result = [UInt8](repeating: 0, count: (bits.count + 7) / 8)
        for (index, bit) in bits.enumerated() where bit {
            result[index >> 3] |= UInt8(0x80 >> (index & 7))
        }
        return result
    }
}

// MARK: - Reed–Solomon over GF(256), primitive polynomial x^8+x^4+x^3+x^2+1

enum ReedSolomon {
    static let exp: [UInt8] = {
        var table = [UInt8](repeating: 0, count: 512)
        var value = 1
        for index in 0..<255 {
            table[index] = UInt8(value)
            value <<= 1
            if value & 0x100 != 0 { value ^= 0x11D }
        }
        for index in 255..<512 { table[index] = table[index - 255] }
        return table
    }()

    static let log: [Int] = {
        var table = [Int](repeating: 0, count: 256)
        for index in 0..<255 { table[Int(exp[index])] = index }
        return table
    }()

    static func multiply(_ a: UInt8, _ b: UInt8) -> UInt8 {
        if a == 0 || b == 0 { return 0 }
        return exp[log[Int(a)] + log[Int(b)]]
    }

    /// Coefficients of ∏(x − αⁱ) for i in 0..<degree, highest power first,
    /// with the leading 1 omitted.
    static func generator(degree: Int) -> [UInt8] {
        var result = [UInt8](repeating: 0, count: degree)
        guard degree > 0 else { return result }
        result[degree - 1] = 1
        var root: UInt8 = 1
        for _ in 0..<degree {
            for index in 0..<degree {
                result[index] = multiply(result[index], root)
                if index + 1 < degree { result[index] ^= result[index + 1] }
            }
            root = multiply(root, 0x02)
        }
        return result
    }

    /// The error-correction codewords: remainder of data·x^n divided by the generator.
    static func remainder(_ data: [UInt8], generator: [UInt8]) -> [UInt8] {
        var result = [UInt8](repeating: 0, count: generator.count)
        guard !generator.isEmpty else { return result }
        for byte in data {
            let factor = byte ^ result[0]
            result.removeFirst()
            result.append(0)
            for index in 0..<result.count {
                result[index] ^= multiply(generator[index], factor)
            }
        }
        return result
    }
}

// MARK: - Module matrix

struct QRMatrix {
    let version: Int
    let size: Int
    var modules: [Bool]
    var isFunction: [Bool]

    init(version: Int) {
        self.version = version
        size = version * 4 + 17
        modules = [Bool](repeating: false, count: size * size)
        isFunction = [Bool](repeating: false, count: size * size)
    }

    subscript(x: Int, y: Int) -> Bool {
        modules[y * size + x]
    }

    private mutating func setFunction(_ x: Int, _ y: Int, _ dark: Bool) {
        modules[y * size + x] = dark
        isFunction[y * size + x] = true
    }

    mutating func drawFunctionPatterns() {
        // Timing patterns first; finders and alignment patterns overwrite their ends.
        for index in 0..<size {
            setFunction(6, index, index % 2 == 0)
            setFunction(index, 6, index % 2 == 0)
        }
        drawFinder(centerX: 3, centerY: 3)
        drawFinder(centerX: size - 4, centerY: 3)
        drawFinder(centerX: 3, centerY: size - 4)

        let positions = QRTables.alignmentPositions[version]
        let count = positions.count
        for i in 0..<count {
            for j in 0..<count {
                // Skip the three corners occupied by finder patterns.
                if (i == 0 && j == 0) || (i == 0 && j == count - 1) || (i == count - 1 && j == 0) { continue }
                drawAlignment(centerX: positions[i], centerY: positions[j])
            }
        }
        // Reserve the format areas (real bits are drawn after masking).
        drawFormatBits(correction: .medium, mask: 0)
        drawVersion()
    }

    /// Finder pattern plus its separator (the light ring at distance 4).
    private mutating func drawFinder(centerX: Int, centerY: Int) {
        for dy in -4...4 {
            for dx in -4...4 {
                let x = centerX + dx, y = centerY + dy
                guard x >= 0, y >= 0, x < size, y < size else { continue }
                let distance = max(abs(dx), abs(dy))
                setFunction(x, y, distance != 2 && distance != 4)
            }
        }
    }

    private mutating func drawAlignment(centerX: Int, centerY: Int) {
        for dy in -2...2 {
            for dx in -2...2 {
                setFunction(centerX + dx, centerY + dy, max(abs(dx), abs(dy)) != 1)
            }
        }
    }

    /// 15-bit format information: BCH(15,5) with generator 0x537, XOR 0x5412.
    static func formatInformation(correction: QRErrorCorrection, mask: Int) -> Int {
        let data = correction.formatBits << 3 | mask
        var remainder = data
        for _ in 0..<10 { remainder = (remainder << 1) ^ ((remainder >> 9) * 0x537) }
        return (data << 10 | remainder) ^ 0x5412
    }

    /// 18-bit version information: BCH(18,6) with generator 0x1F25.
    static func versionInformation(version: Int) -> Int {
        var remainder = version
        for _ in 0..<12 { remainder = (remainder << 1) ^ ((remainder >> 11) * 0x1F25) }
        return version << 12 | remainder
    }

    mutating func drawFormatBits(correction: QRErrorCorrection, mask: Int) {
        let bits = QRMatrix.formatInformation(correction: correction, mask: mask)
        func bit(_ index: Int) -> Bool { (bits >> index) & 1 == 1 }
        // Copy around the top-left finder.
        for index in 0...5 { setFunction(8, index, bit(index)) }
        setFunction(8, 7, bit(6))
        setFunction(8, 8, bit(7))
        setFunction(7, 8, bit(8))
        for index in 9..<15 { setFunction(14 - index, 8, bit(index)) }
        // Copy split between the top-right and bottom-left finders.
        for index in 0..<8 { setFunction(size - 1 - index, 8, bit(index)) }
        for index in 8..<15 { setFunction(8, size - 15 + index, bit(index)) }
        // The dark module.
        setFunction(8, size - 8, true)
    }

    private mutating func drawVersion() {
        guard version >= 7 else { return }
        let bits = QRMatrix.versionInformation(version: version)
        for index in 0..<18 {
            let dark = (bits >> index) & 1 == 1
            let a = size - 11 + index % 3
            let b = index / 3
            setFunction(a, b, dark)
            setFunction(b, a, dark)
        }
    }

    /// Places codeword bits in the two-column zigzag from the bottom-right
    /// corner, skipping function modules and the vertical timing column.
    mutating func drawCodewords(_ codewords: [UInt8]) {
        let totalBits = codewords.count * 8
        var bitIndex = 0
        var right = size - 1
        while right >= 1 {
            if right == 6 { right = 5 }
            let upward = ((right + 1) & 2) == 0
            for vertical in 0..<size {
                for column in 0..<2 {
                    let x = right - column
                    let y = upward ? size - 1 - vertical : vertical
                    let index = y * size + x
                    if !isFunction[index] && bitIndex < totalBits {
                        modules[index] = (codewords[bitIndex >> 3] >> (7 - UInt8(bitIndex & 7))) & 1 == 1
                        bitIndex += 1
                    }
                    // Remainder bits stay light (0) before masking, as the spec requires.
                }
            }
            right -= 2
        }
    }

    static func maskCondition(_ mask: Int, x: Int, y: Int) -> Bool {
        switch mask {
        case 0: (x + y) % 2 == 0
        case 1: y % 2 == 0
        case 2: x % 3 == 0
        case 3: (x + y) % 3 == 0
        case 4: (x / 3 + y / 2) % 2 == 0
        case 5: (x * y) % 2 + (x * y) % 3 == 0
        case 6: ((x * y) % 2 + (x * y) % 3) % 2 == 0
        default: ((x + y) % 2 + (x * y) % 3) % 2 == 0
        }
    }

    mutating func applyMask(_ mask: Int) {
        for y in 0..<size {
            for x in 0..<size where !isFunction[y * size + x] && QRMatrix.maskCondition(mask, x: x, y: y) {
                modules[y * size + x].toggle()
            }
        }
    }

    /// The four penalty rules of ISO/IEC 18004 §7.8.3.
    func penalty() -> Int {
        var total = 0
        // Rule 1: runs of five or more same-coloured modules in a row or column.
        for line in 0..<size {
            total += runPenalty { self[$0, line] }
            total += runPenalty { self[line, $0] }
        }
        // Rule 2: 2×2 blocks of one colour.
        for y in 0..<(size - 1) {
            for x in 0..<(size - 1) {
                let colour = self[x, y]
                if colour == self[x + 1, y] && colour == self[x, y + 1] && colour == self[x + 1, y + 1] {
                    total += 3
                }
            }
        }
        // Rule 3: 1:1:3:1:1 finder-like patterns with four light modules on
        // either side; modules beyond the edge count as the light quiet zone.
        for line in 0..<size {
            total += finderLikePenalty { self[$0, line] }
            total += finderLikePenalty { self[line, $0] }
        }
        // Rule 4: deviation of the dark proportion from 50 %, in steps of 5 %.
        let dark = modules.reduce(0) { $0 + ($1 ? 1 : 0) }
        let count = size * size
        total += abs(dark * 20 - count * 10) / count * 10
        return total
    }

    private func runPenalty(_ module: (Int) -> Bool) -> Int {
        var result = 0
        var run = 1
        var colour = module(0)
        for index in 1..<size {
            let current = module(index)
            if current == colour {
                run += 1
            } else {
                if run >= 5 { result += 3 + (run - 5) }
                colour = current
                run = 1
            }
        }
        if run >= 5 { result += 3 + (run - 5) }
        return result
    }

    private static let finderBefore: [Bool] = [false, false, false, false, true, false, true, true, true, false, true]
    private static let finderAfter: [Bool] = [true, false, true, true, true, false, true, false, false, false, false]

    private func finderLikePenalty(_ module: (Int) -> Bool) -> Int {
        var line = [Bool](repeating: false, count: size + 8)
        for index in 0..<size { line[index + 4] = module(index) }
        var result = 0
        for start in 0...(line.count - 11) {
            var matchesBefore = true, matchesAfter = true
            for offset in 0..<11 {
                let value = line[start + offset]
                if value != QRMatrix.finderBefore[offset] { matchesBefore = false }
                if value != QRMatrix.finderAfter[offset] { matchesAfter = false }
                if !matchesBefore && !matchesAfter { break }
            }
            if matchesBefore { result += 40 }
            if matchesAfter { result += 40 }
        }
        return result
    }
}

// MARK: - SVG

extension QRCode {
    /// A compact, scalable SVG for screens and web pages: one path of
    /// horizontal runs, crisp edges so browsers do not blur module borders,
    /// and an accessible name because the image carries meaning.
    /// - Parameters:
    ///   - moduleSize: pixels per module (clamped to 1…1000).
    ///   - quietZone: light modules around the symbol; the spec asks for 4
    ///     (clamped to 0…100).
    ///   - accessibilityLabel: spoken by screen readers (`aria-label`).
    public func svg(moduleSize: Int = 4, quietZone: Int = 4, accessibilityLabel: String = "QR code") -> String {
        let scale = min(max(moduleSize, 1), 1000)
        let margin = min(max(quietZone, 0), 100)
        let dimension = size + 2 * margin
        let pixels = dimension * scale
        var path = ""
        for y in 0..<size {
            var x = 0
            while x < size {
                guard self[x, y] else { x += 1; continue }
                let start = x
                while x < size && self[x, y] { x += 1 }
                let run = x - start
                path += "M\(start + margin) \(y + margin)h\(run)v1h-\(run)z"
            }
        }
        return "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(pixels)\" height=\"\(pixels)\""
            + " viewBox=\"0 0 \(dimension) \(dimension)\" shape-rendering=\"crispEdges\""
            + " role=\"img\" aria-label=\"\(XML.escape(accessibilityLabel))\">"
            + "<rect width=\"\(dimension)\" height=\"\(dimension)\" fill=\"#fff\"/>"
            + "<path fill=\"#000\" d=\"\(path)\"/></svg>"
    }
}

enum XML {
    /// Escapes markup characters and drops code points XML 1.0 forbids, so
    /// any caller string yields a well-formed attribute.
    static func escape(_ text: String) -> String {
        var result = ""
        result.unicodeScalars.reserveCapacity(text.unicodeScalars.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&apos;"
            case "\t", "\n", "\r": result.unicodeScalars.append(scalar)
            default:
                let value = scalar.value
                if value < 0x20 || value == 0xFFFE || value == 0xFFFF { continue }
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}
