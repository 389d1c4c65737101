// Test-only builders and inspectors. Independent of the library's internals.

func testCRC32(_ bytes: [UInt8]) -> UInt32 {
    var c: UInt32 = 0xFFFF_FFFF
    for byte in bytes {
        c ^= UInt32(byte)
        for _ in 0..<8 { c = (c & 1) != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
    }
    return c ^ 0xFFFF_FFFF
}

func adler32(_ bytes: [UInt8]) -> UInt32 {
    var a: UInt32 = 1, b: UInt32 = 0
    for byte in bytes {
        a = (a + UInt32(byte)) % 65521
        b = (b + a) % 65521
    }
    return b << 16 | a
}

func be32Bytes(_ v: UInt32) -> [UInt8] {
    [UInt8(v >> 24 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)]
}

func ascii(_ s: String) -> [UInt8] { Array(s.utf8) }

func pngChunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
    let typeBytes = ascii(type)
    return be32Bytes(UInt32(data.count)) + typeBytes + data + be32Bytes(testCRC32(typeBytes + data))
}

let pngSignatureBytes: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

/// zlib stream holding `raw` in a single stored (uncompressed) deflate block.
func zlibStored(_ raw: [UInt8]) -> [UInt8] {
    precondition(raw.count <= 0xFFFF)
    let len = UInt16(raw.count)
    let nlen = ~len
    return [0x78, 0x01, 0x01,
            UInt8(len & 0xFF), UInt8(len >> 8), UInt8(nlen & 0xFF), UInt8(nlen >> 8)]
        + raw + be32Bytes(adler32(raw))
}

func ihdr(width: UInt32, height: UInt32, bitDepth: UInt8 = 8, colorType: UInt8 = 6, interlace: UInt8 = 0) -> [UInt8] {
    pngChunk("IHDR", be32Bytes(width) + be32Bytes(height) + [bitDepth, colorType, 0, 0, interlace])
}

/// Scanlines (filter type 0) for an RGBA8 image with a simple pattern.
func rgbaScanlines(width: Int, height: Int) -> [UInt8] {
    var raw: [UInt8] = []
    for y in 0..<height {
        raw.append(0)
        for x in 0..<width {
            raw += [UInt8(truncatingIfNeeded: x * 80), UInt8(truncatingIfNeeded: y * 120), 0x40, 0xFF]
        }
    }
    return raw
}

/// A valid RGBA PNG; `beforeIDAT` / `afterIDAT` are inserted as-is.
func makePNG(width: Int = 2, height: Int = 2, beforeIDAT: [[UInt8]] = [], afterIDAT: [[UInt8]] = []) -> [UInt8] {
    var png = pngSignatureBytes + ihdr(width: UInt32(width), height: UInt32(height))
    for c in beforeIDAT { png += c }
    png += pngChunk("IDAT", zlibStored(rgbaScanlines(width: width, height: height)))
    for c in afterIDAT { png += c }
    return png + pngChunk("IEND", [])
}

/// Chunk types of a PNG, in order; nil if the walk fails or a CRC is wrong.
func pngChunkTypes(_ png: [UInt8]) -> [String]? {
    guard png.count >= 8, Array(png[0..<8]) == pngSignatureBytes else { return nil }
    var pos = 8
    var types: [String] = []
    while pos < png.count {
        guard png.count - pos >= 12 else { return nil }
        let len = Int(png[pos]) << 24 | Int(png[pos + 1]) << 16 | Int(png[pos + 2]) << 8 | Int(png[pos + 3])
        guard png.count - pos - 12 >= len else { return nil }
        let typeAndData = Array(png[(pos + 4)..<(pos + 8 + len)])
        let crc = Array(png[(pos + 8 + len)..<(pos + 12 + len)])
        guard be32Bytes(testCRC32(typeAndData)) == crc else { return nil }
        types.append(String(decoding: typeAndData[0..<4], as: UTF8.self))
        pos += 12 + len
    }
    return types
}

/// Marker bytes of a well-formed JPEG's segments (entropy data skipped).
func jpegMarkers(_ jpeg: [UInt8]) -> [UInt8] {
    var markers: [UInt8] = []
    var pos = 2
    while pos + 1 < jpeg.count {
        guard jpeg[pos] == 0xFF else { return markers + [0x00] } // 0x00 flags garbage
        var p = pos
        while p < jpeg.count && jpeg[p] == 0xFF { p += 1 }
        guard p < jpeg.count else { return markers }
        let m = jpeg[p]
        markers.append(m)
        if m == 0xD9 { return markers }
        guard p + 2 < jpeg.count else { return markers }
        let len = Int(jpeg[p + 1]) << 8 | Int(jpeg[p + 2])
        pos = p + 1 + len
        if m == 0xDA {
            while pos + 1 < jpeg.count {
                if jpeg[pos] == 0xFF, jpeg[pos + 1] != 0x00, !(0xD0...0xD7).contains(jpeg[pos + 1]) { break }
                pos += 1
            }
        }
    }
    return markers
}

func jpegSegment(_ marker: UInt8, _ payload: [UInt8]) -> [UInt8] {
    let len = payload.count + 2
    return [0xFF, marker, UInt8(len >> 8), UInt8(len & 0xFF)] + payload
}

/// Inserts `segments` right after SOI.
func insertAfterSOI(_ jpeg: [UInt8], _ segments: [[UInt8]]) -> [UInt8] {
    Array(jpeg[0..<2]) + segments.flatMap { $0 } + Array(jpeg[2...])
}

func containsSubsequence(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
    guard !needle.isEmpty, haystack.count >= needle.count else { return needle.isEmpty }
    for i in 0...(haystack.count - needle.count) where haystack[i] == needle[0] {
        if haystack[i..<(i + needle.count)].elementsEqual(needle) { return true }
    }
    return false
}

/// Small deterministic PRNG (SplitMix64) so fuzz failures are reproducible.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Random structural damage: byte flips, truncation, insertion, deletion, duplication.
func mutate(_ input: [UInt8], using rng: inout SplitMix64) -> [UInt8] {
    var b = input
    let rounds = Int.random(in: 1...4, using: &rng)
    for _ in 0..<rounds {
        switch Int.random(in: 0..<7, using: &rng) {
        case 0, 1: // flip/replace a byte
            if !b.isEmpty { b[Int.random(in: 0..<b.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng) }
        case 2: // truncate
            b = Array(b.prefix(Int.random(in: 0...b.count, using: &rng)))
        case 3: // insert random bytes
            let at = Int.random(in: 0...b.count, using: &rng)
            let junk = (0..<Int.random(in: 1...8, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            b.insert(contentsOf: junk, at: at)
        case 4: // delete a range
            if !b.isEmpty {
                let from = Int.random(in: 0..<b.count, using: &rng)
                let to = min(b.count, from + Int.random(in: 1...16, using: &rng))
                b.removeSubrange(from..<to)
            }
        case 5: // interesting values
            if !b.isEmpty {
                let values: [UInt8] = [0x00, 0xFF, 0x7F, 0x80, 0xD8, 0xD9, 0xDA, 0xC0, 0xC4]
                b[Int.random(in: 0..<b.count, using: &rng)] = values.randomElement(using: &rng)!
            }
        default: // duplicate a slice
            if !b.isEmpty {
                let from = Int.random(in: 0..<b.count, using: &rng)
                let to = min(b.count, from + Int.random(in: 1...32, using: &rng))
                b.insert(contentsOf: b[from..<to], at: Int.random(in: 0...b.count, using: &rng))
            }
        }
    }
    return b
}

/// Re-computes every chunk CRC it can find so PNG mutations get past the CRC check.
func fixPNGCRCs(_ input: [UInt8]) -> [UInt8] {
    var b = input
    var pos = 8
    while b.count - pos >= 12 {
        let len = Int(b[pos]) << 24 | Int(b[pos + 1]) << 16 | Int(b[pos + 2]) << 8 | Int(b[pos + 3])
        guard len >= 0, b.count - pos - 12 >= len else { break }
        let crc = be32Bytes(testCRC32(Array(b[(pos + 4)..<(pos + 8 + len)])))
        b.replaceSubrange((pos + 8 + len)..<(pos + 12 + len), with: crc)
        pos += 12 + len
    }
    return b
}
