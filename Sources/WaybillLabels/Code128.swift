/// Why a Code 128 symbol could not be produced.
public enum Code128Error: Error, Sendable, Equatable, CustomStringConvertible {
    /// There is nothing to encode; an empty symbol would scan as nothing.
    case empty
    /// Only printable ASCII (32–126) is supported, so scans are unambiguous.
    case unsupportedCharacter(Unicode.Scalar)

    public var description: String {
        switch self {
        case .empty:
            "Code 128 needs at least one character"
        case let .unsupportedCharacter(scalar):
            "Code 128 supports printable ASCII only; U+\(String(scalar.value, radix: 16, uppercase: true)) is not"
        }
    }
}

/// Code 128 (ISO/IEC 15417) linear barcodes for references on labels.
///
/// Hand scanners at depots read 1D codes faster than QR codes, so the label
/// repeats its reference as Code 128. Code sets B and C are mixed so that
/// digit runs take half the width, which keeps modules wide enough to print.
public enum Code128 {
    static let startB = 104
    static let startC = 105
    static let switchToC = 99
    static let switchToB = 100
    static let stop = 106

    /// Bar/space widths of symbol values 0–106 (bar first); 106 is the stop
    /// pattern including its final 2-module bar.
    static let patterns: [[Int]] = [
        "212222", "222122", "222221", "121223", "121322", "131222", "122213", "122312", "132212", "221213",
        "221312", "231212", "112232", "122132", "122231", "113222", "123122", "123221", "223211", "221132",
        "221231", "213212", "223112", "312131", "311222", "321122", "321221", "312212", "322112", "322211",
        "212123", "212321", "232121", "111323", "131123", "131321", "112313", "132113", "132311", "211313",
        "231113", "231311", "112133", "112331", "132131", "113123", "113321", "133121", "313121", "211331",
        "231131", "213113", "213311", "213131", "311123", "311321", "331121", "312113", "312311", "332111",
        "314111", "221411", "431111", "111224", "111422", "121124", "121421", "141122", "141221", "112214",
        "112412", "122114", "122411", "142112", "142211", "241211", "221114", "413111", "241112", "134111",
        "111242", "121142", "121241", "114212", "124112", "124211", "411212", "421112", "421211", "212141",
        "214121", "412121", "111143", "111341", "131141", "114113", "114311", "411113", "411311", "113141",
        "114131", "311141", "411131", "211412", "211214", "211232", "2331112",
    ].map { $0.compactMap { $0.wholeNumberValue } }

    /// Symbol values: start code, data, modulo-103 check value, stop.
    ///
    /// The code set sequence is the shortest possible (ties keep the current
    /// set), so runs of four or more digits use code set C where it helps.
    public static func symbols(_ text: String) throws -> [Int] {
        let scalars = Array(text.unicodeScalars)
        guard !scalars.isEmpty else { throw Code128Error.empty }
        for scalar in scalars where !(32...126).contains(scalar.value) {
            throw Code128Error.unsupportedCharacter(scalar)
        }
        let bytes = scalars.map { Int($0.value) }
        let count = bytes.count
        func isDigit(_ index: Int) -> Bool { index < count && (48...57).contains(bytes[index]) }
        func pairAt(_ index: Int) -> Bool { isDigit(index) && isDigit(index + 1) }

        // costB[i] / costC[i]: fewest symbols to encode bytes[i...] when the
        // current code set is B / C.
        let unreachable = Int.max / 4
        var costB = [Int](repeating: 0, count: count + 1)
        var costC = [Int](repeating: 0, count: count + 1)
        for index in stride(from: count - 1, through: 0, by: -1) {
            let stayB = 1 + costB[index + 1]
            let stayC = pairAt(index) ? 1 + costC[index + 2] : unreachable
            costB[index] = min(stayB, 1 + stayC)
            costC[index] = min(stayC, 1 + stayB)
        }

        var inC = costC[0] < costB[0]
        var values = [inC ? startC : startB]
        var index = 0
        while index < count {
            let stayB = 1 + costB[index + 1]
            let stayC = pairAt(index) ? 1 + costC[index + 2] : unreachable
            if inC {
                if stayC <= 1 + stayB {
                    values.append((bytes[index] - 48) * 10 + (bytes[index + 1] - 48))
                    index += 2
                } else {
                    values.append(switchToB)
                    inC = false
                }
            } else {
                if stayB <= 1 + stayC {
                    values.append(bytes[index] - 32)
                    index += 1
                } else {
                    values.append(switchToC)
                    inC = true
                }
            }
        }
        values.append(checkValue(values))
        values.append(stop)
        return values
    }

    /// Start value plus each following value weighted by its position, mod 103.
    static func checkValue(_ values: [Int]) -> Int {
        guard let start = values.first else { return 0 }
        var sum = start
        for (position, value) in values.dropFirst().enumerated() {
            sum = (sum + (position + 1) * value) % 103
        }
        return sum
    }

    /// Bar (`true`) and space (`false`) modules of the whole symbol, from the
    /// start pattern to the end of the stop pattern. The quiet zone is left
    /// to the renderer, which must keep at least 10 light modules each side.
    public static func modules(_ text: String) throws -> [Bool] {
        var result: [Bool] = []
        for value in try symbols(text) {
            for (index, width) in patterns[value].enumerated() {
                result.append(contentsOf: repeatElement(index % 2 == 0, count: width))
            }
        }
        return result
    }
}
