// ImageSanitizer.swift
//
// Pure-Swift, Foundation-free content sniffing, structural validation and
// metadata stripping for PNG and JPEG uploads.
//
// The sanitizer does not decode pixels. It walks the container structure
// (PNG chunks / JPEG marker segments), verifies it, and re-emits only the
// parts that a decoder needs to render the image. Everything else
// (EXIF, XMP, ICC profiles, text chunks, comments, thumbnails, trailing
// bytes, ...) is dropped.
//
// Every index access is bounds-checked before it happens, so arbitrary input
// either sanitizes or throws `ImageProblem`; it never traps.

/// The image formats the sanitizer understands.
public enum ImageFormat: String, Sendable, Equatable {
    case png
    case jpeg

    /// MIME type to use when serving the sanitized bytes.
    public var contentType: String {
        switch self {
        case .png: return "image/png"
        case .jpeg: return "image/jpeg"
        }
    }

    /// File extension (without dot) to use when storing the sanitized bytes.
    public var fileExtension: String {
        switch self {
        case .png: return "png"
        case .jpeg: return "jpg"
        }
    }
}

/// A validated image with metadata removed.
public struct SanitizedImage: Sendable, Equatable {
    public let format: ImageFormat
    public let width: Int
    public let height: Int
    /// The re-assembled file, safe to store and serve.
    public let bytes: [UInt8]
}

/// Why an upload was rejected.
public enum ImageProblem: Error, Equatable, Sendable {
    /// Neither a PNG nor a JPEG signature.
    case notAnImage
    /// The content is a recognised format that the caller did not allow.
    case formatNotAllowed(ImageFormat)
    /// Truncated, bad CRC, bad structure; the string is a short reason.
    case corrupt(String)
    /// Wider/taller than the caller's cap, or more than 50 megapixels.
    case dimensionsTooLarge(width: Int, height: Int)
}

public enum ImageSanitizer {
    /// Hard cap on width × height, independent of the caller's limits.
    static let maxPixels = 50_000_000

    /// Identifies the format from the leading bytes (never from a file name).
    public static func detect(_ bytes: [UInt8]) -> ImageFormat? {
        if bytes.count >= pngSignature.count, bytes[0..<pngSignature.count].elementsEqual(pngSignature) {
            return .png
        }
        // SOI followed by the 0xFF of the first marker.
        if bytes.count >= 3, bytes[0] == 0xFF, bytes[1] == 0xD8, bytes[2] == 0xFF {
            return .jpeg
        }
        return nil
    }

    /// Checks the type by content, validates the structure, enforces the
    /// dimension caps and returns a copy without metadata.
    ///
    /// Order of checks: `notAnImage`, then `formatNotAllowed`, then
    /// `corrupt` (full structural walk), then `dimensionsTooLarge`.
    public static func sanitize(
        _ bytes: [UInt8],
        allowed: Set<ImageFormat>,
        maxWidth: Int,
        maxHeight: Int
    ) throws(ImageProblem) -> SanitizedImage {
        guard let format = detect(bytes) else { throw .notAnImage }
        guard allowed.contains(format) else { throw .formatNotAllowed(format) }

        let parsed: Parsed
        switch format {
        case .png: parsed = try sanitizePNG(bytes)
        case .jpeg: parsed = try sanitizeJPEG(bytes)
        }

        guard parsed.width <= maxWidth, parsed.height <= maxHeight else {
            throw .dimensionsTooLarge(width: parsed.width, height: parsed.height)
        }
        let (pixels, overflow) = parsed.width.multipliedReportingOverflow(by: parsed.height)
        guard !overflow, pixels <= maxPixels else {
            throw .dimensionsTooLarge(width: parsed.width, height: parsed.height)
        }
        return SanitizedImage(format: format, width: parsed.width, height: parsed.height, bytes: parsed.bytes)
    }
}

// MARK: - Shared helpers

extension ImageSanitizer {
    private struct Parsed {
        var width: Int
        var height: Int
        var bytes: [UInt8]
    }

    /// Big-endian 32-bit read. Caller guarantees `i + 4 <= b.count`.
    private static func be32(_ b: [UInt8], _ i: Int) -> UInt32 {
        UInt32(b[i]) << 24 | UInt32(b[i + 1]) << 16 | UInt32(b[i + 2]) << 8 | UInt32(b[i + 3])
    }

    /// Big-endian 16-bit read. Caller guarantees `i + 2 <= b.count`.
    private static func be16(_ b: [UInt8], _ i: Int) -> Int {
        Int(b[i]) << 8 | Int(b[i + 1])
    }
}

// MARK: - CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320)

extension ImageSanitizer {
    private static let crcTable: [UInt32] = (0..<256).map { n -> UInt32 in
        var c = UInt32(n)
        for _ in 0..<8 {
            c = (c & 1) != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1
        }
        return c
    }

    /// CRC-32 of `b[range]`. Caller guarantees the range is within bounds.
    private static func crc32(_ b: [UInt8], _ range: Range<Int>) -> UInt32 {
        var c: UInt32 = 0xFFFF_FFFF
        crcTable.withUnsafeBufferPointer { table in
            for i in range {
                c = table[Int((c ^ UInt32(b[i])) & 0xFF)] ^ (c >> 8)
            }
        }
        return c ^ 0xFFFF_FFFF
    }
}

// MARK: - PNG

extension ImageSanitizer {
    private static let pngSignature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    private static func fourCC(_ s: StaticString) -> UInt32 {
        var v: UInt32 = 0
        s.withUTF8Buffer { for c in $0 { v = v << 8 | UInt32(c) } }
        return v
    }

    private static let chunkIHDR = fourCC("IHDR")
    private static let chunkPLTE = fourCC("PLTE")
    private static let chunkTRNS = fourCC("tRNS")
    private static let chunkIDAT = fourCC("IDAT")
    private static let chunkIEND = fourCC("IEND")

    private enum IDATState { case before, inside, after }

    private static func sanitizePNG(_ b: [UInt8]) throws(ImageProblem) -> Parsed {
        var out = pngSignature
        out.reserveCapacity(b.count)

        var pos = pngSignature.count
        var header: (width: Int, height: Int, bitDepth: UInt8, colorType: UInt8)?
        var paletteEntries = 0
        var sawTRNS = false
        var idat = IDATState.before
        var zlibHeader: [UInt8] = []
        var sawIEND = false

        chunks: while pos < b.count {
            let remaining = b.count - pos
            guard remaining >= 12 else { throw .corrupt("truncated PNG chunk") }
            let length = be32(b, pos)
            guard length <= 0x7FFF_FFFF else { throw .corrupt("PNG chunk length out of range") }
            let len = Int(length)
            guard len <= remaining - 12 else { throw .corrupt("truncated PNG chunk") }

            let typeStart = pos + 4
            let dataStart = pos + 8
            let dataEnd = dataStart + len
            let chunkEnd = dataEnd + 4

            for i in typeStart..<dataStart {
                let c = b[i]
                guard (0x41...0x5A).contains(c) || (0x61...0x7A).contains(c) else {
                    throw .corrupt("invalid PNG chunk type")
                }
            }
            let type = be32(b, typeStart)
            guard crc32(b, typeStart..<dataEnd) == be32(b, dataEnd) else {
                throw .corrupt("bad PNG chunk CRC")
            }

            if header == nil && type != chunkIHDR {
                throw .corrupt("PNG does not start with IHDR")
            }

            var keep = true
            switch type {
            case chunkIHDR:
                guard header == nil else { throw .corrupt("duplicate IHDR") }
                header = try parseIHDR(b, dataStart, len)

            case chunkPLTE:
                guard let h = header else { throw .corrupt("PNG does not start with IHDR") }
                guard idat == .before else { throw .corrupt("PLTE after IDAT") }
                guard paletteEntries == 0 else { throw .corrupt("duplicate PLTE") }
                guard !sawTRNS else { throw .corrupt("PLTE after tRNS") }
                guard h.colorType != 0 && h.colorType != 4 else {
                    throw .corrupt("PLTE not allowed for greyscale")
                }
                guard len > 0, len % 3 == 0, len / 3 <= 256 else { throw .corrupt("bad PLTE length") }
                if h.colorType == 3 {
                    guard len / 3 <= 1 << Int(h.bitDepth) else { throw .corrupt("PLTE too large for bit depth") }
                }
                paletteEntries = len / 3

            case chunkTRNS:
                guard let h = header else { throw .corrupt("PNG does not start with IHDR") }
                guard idat == .before else { throw .corrupt("tRNS after IDAT") }
                guard !sawTRNS else { throw .corrupt("duplicate tRNS") }
                switch h.colorType {
                case 0: guard len == 2 else { throw .corrupt("bad tRNS length") }
                case 2: guard len == 6 else { throw .corrupt("bad tRNS length") }
                case 3:
                    guard paletteEntries > 0 else { throw .corrupt("tRNS before PLTE") }
                    guard len <= paletteEntries else { throw .corrupt("bad tRNS length") }
                default: throw .corrupt("tRNS not allowed with alpha channel")
                }
                sawTRNS = true

            case chunkIDAT:
                guard let h = header else { throw .corrupt("PNG does not start with IHDR") }
                guard idat != .after else { throw .corrupt("IDAT chunks not consecutive") }
                if h.colorType == 3 && paletteEntries == 0 { throw .corrupt("missing PLTE") }
                idat = .inside
                var i = dataStart
                while zlibHeader.count < 2 && i < dataEnd {
                    zlibHeader.append(b[i])
                    i += 1
                }

            case chunkIEND:
                guard len == 0 else { throw .corrupt("bad IEND length") }
                guard idat != .before else { throw .corrupt("missing IDAT") }
                sawIEND = true

            default:
                // Bit 5 of the first type byte clear => critical chunk we cannot drop.
                if b[typeStart] & 0x20 == 0 { throw .corrupt("unknown critical PNG chunk") }
                keep = false // ancillary: tEXt, iTXt, zTXt, eXIf, tIME, iCCP, acTL, ...
            }

            if type != chunkIDAT && idat == .inside { idat = .after }
            if keep { out.append(contentsOf: b[pos..<chunkEnd]) }
            pos = chunkEnd
            if sawIEND { break chunks }
        }

        guard header != nil else { throw .corrupt("missing IHDR") }
        guard sawIEND else { throw .corrupt("truncated PNG (missing IEND)") }
        guard pos == b.count else { throw .corrupt("data after IEND") }
        guard zlibHeader.count == 2 else { throw .corrupt("IDAT too short") }
        let cmf = zlibHeader[0], flg = zlibHeader[1]
        guard cmf & 0x0F == 8, cmf >> 4 <= 7, flg & 0x20 == 0,
              (UInt16(cmf) << 8 | UInt16(flg)) % 31 == 0 else {
            throw .corrupt("bad zlib header in IDAT")
        }
        guard let h = header else { throw .corrupt("missing IHDR") }
        return Parsed(width: h.width, height: h.height, bytes: out)
    }

    private static func parseIHDR(
        _ b: [UInt8], _ start: Int, _ len: Int
    ) throws(ImageProblem) -> (width: Int, height: Int, bitDepth: UInt8, colorType: UInt8) {
        guard len == 13 else { throw .corrupt("bad IHDR length") }
        let width = be32(b, start)
        let height = be32(b, start + 4)
        let bitDepth = b[start + 8]
        let colorType = b[start + 9]
        guard width > 0, height > 0, width <= 0x7FFF_FFFF, height <= 0x7FFF_FFFF else {
            throw .corrupt("bad PNG dimensions")
        }
        let validDepths: [UInt8]
        switch colorType {
        case 0: validDepths = [1, 2, 4, 8, 16]
        case 3: validDepths = [1, 2, 4, 8]
        case 2, 4, 6: validDepths = [8, 16]
        default: throw .corrupt("bad PNG colour type")
        }
        guard validDepths.contains(bitDepth) else { throw .corrupt("bad PNG bit depth") }
        guard b[start + 10] == 0 else { throw .corrupt("bad PNG compression method") }
        guard b[start + 11] == 0 else { throw .corrupt("bad PNG filter method") }
        guard b[start + 12] <= 1 else { throw .corrupt("bad PNG interlace method") }
        return (Int(width), Int(height), bitDepth, colorType)
    }
}

// MARK: - JPEG

extension ImageSanitizer {
    private struct JPEGFrame {
        var width: Int
        var height: Int
        var componentIDs: [UInt8]
    }

    private static func isSOF(_ m: UInt8) -> Bool {
        (0xC0...0xCF).contains(m) && m != 0xC4 && m != 0xC8 && m != 0xCC
    }

    private static func sanitizeJPEG(_ b: [UInt8]) throws(ImageProblem) -> Parsed {
        guard b.count >= 2, b[0] == 0xFF, b[1] == 0xD8 else { throw .corrupt("missing SOI") }
        var out: [UInt8] = [0xFF, 0xD8]
        out.reserveCapacity(b.count)

        var pos = 2
        var frame: JPEGFrame?
        var scans = 0
        var wroteOrientation = false

        while true {
            guard pos < b.count else { throw .corrupt("truncated JPEG (missing EOI)") }
            guard b[pos] == 0xFF else { throw .corrupt("expected JPEG marker") }
            while pos < b.count && b[pos] == 0xFF { pos += 1 } // fill bytes
            guard pos < b.count else { throw .corrupt("truncated JPEG (missing EOI)") }
            let marker = b[pos]
            pos += 1

            // Stand-alone markers (no length field).
            switch marker {
            case 0xD9: // EOI
                guard frame != nil else { throw .corrupt("JPEG has no frame header") }
                guard scans > 0 else { throw .corrupt("JPEG has no scan") }
                out.append(0xFF)
                out.append(0xD9)
                // Bytes after EOI (phone trailers, embedded videos, ...) are discarded.
                guard let f = frame else { throw .corrupt("JPEG has no frame header") }
                return Parsed(width: f.width, height: f.height, bytes: out)
            case 0x01: // TEM: no meaning for decoding, drop.
                continue
            case 0x00, 0xD8, 0xD0...0xD7:
                throw .corrupt("unexpected JPEG marker")
            default:
                break
            }

            // Marker segment: 16-bit length includes itself.
            guard b.count - pos >= 2 else { throw .corrupt("truncated JPEG segment") }
            let length = be16(b, pos)
            guard length >= 2 else { throw .corrupt("bad JPEG segment length") }
            guard length <= b.count - pos else { throw .corrupt("truncated JPEG segment") }
            let dataStart = pos + 2
            let end = pos + length

            var keep = true
            switch marker {
            case 0xDB: // DQT
                try validateDQT(b, dataStart, end)
            case 0xC4: // DHT
                try validateDHT(b, dataStart, end)
            case 0xCC: // DAC
                guard length > 2, (length - 2) % 2 == 0 else { throw .corrupt("bad DAC segment") }
            case 0xDD: // DRI
                guard length == 4 else { throw .corrupt("bad DRI segment") }
            case let m where isSOF(m):
                guard frame == nil else { throw .corrupt("multiple JPEG frame headers") }
                frame = try parseSOF(b, dataStart, end)
            case 0xDA: // SOS
                guard let f = frame else { throw .corrupt("JPEG scan before frame header") }
                try validateSOS(b, dataStart, end, frame: f)
                out.append(0xFF)
                out.append(marker)
                out.append(contentsOf: b[pos..<end])
                let scanEnd = try entropyDataEnd(b, from: end)
                out.append(contentsOf: b[end..<scanEnd])
                scans += 1
                pos = scanEnd
                continue
            case 0xE0: // APP0: keep only a JFIF header, rebuilt without thumbnail.
                keep = false
                if out.count == 2, let jfif = normalizedJFIF(b, dataStart, end) {
                    out.append(contentsOf: jfif)
                }
            case 0xEE: // APP14: keep only Adobe colour-transform info (needed for RGB/CMYK).
                keep = false
                if scans == 0, let adobe = normalizedAdobe(b, dataStart, end) {
                    out.append(contentsOf: adobe)
                }
            case 0xE1: // APP1: EXIF or XMP. Only the orientation survives, so photos stay upright.
                keep = false
                if scans == 0, !wroteOrientation, let orientation = exifOrientation(b, dataStart, end) {
                    out.append(contentsOf: minimalExif(orientation: orientation))
                    wroteOrientation = true
                }
            case 0xE2...0xEF, 0xFE: // APP2-APP15 (ICC, Photoshop, ...), COM
                keep = false
            default: // DNL, DHP, EXP, JPGn, reserved: unsupported
                throw .corrupt("unsupported JPEG marker")
            }

            if keep {
                out.append(0xFF)
                out.append(marker)
                out.append(contentsOf: b[pos..<end])
            }
            pos = end
        }
    }

    /// Returns the index of the 0xFF that starts the first marker after the
    /// entropy-coded data beginning at `start` (stuffed 0xFF00 and RSTn are
    /// part of the data).
    private static func entropyDataEnd(_ b: [UInt8], from start: Int) throws(ImageProblem) -> Int {
        var j = start
        while j < b.count {
            if b[j] == 0xFF {
                guard j + 1 < b.count else { break }
                let next = b[j + 1]
                if next == 0x00 || (0xD0...0xD7).contains(next) {
                    j += 2
                    continue
                }
                return j
            }
            j += 1
        }
        throw .corrupt("truncated JPEG scan data")
    }

    private static func validateDQT(_ b: [UInt8], _ start: Int, _ end: Int) throws(ImageProblem) {
        guard start < end else { throw .corrupt("empty DQT segment") }
        var p = start
        while p < end {
            let pq = b[p] >> 4, tq = b[p] & 0x0F
            guard pq <= 1, tq <= 3 else { throw .corrupt("bad DQT segment") }
            let size = 64 * (Int(pq) + 1)
            guard size <= end - p - 1 else { throw .corrupt("bad DQT segment") }
            p += 1 + size
        }
    }

    private static func validateDHT(_ b: [UInt8], _ start: Int, _ end: Int) throws(ImageProblem) {
        guard start < end else { throw .corrupt("empty DHT segment") }
        var p = start
        while p < end {
            guard end - p >= 17 else { throw .corrupt("bad DHT segment") }
            let tc = b[p] >> 4, th = b[p] & 0x0F
            guard tc <= 1, th <= 3 else { throw .corrupt("bad DHT segment") }
            var total = 0
            for k in 1...16 { total += Int(b[p + k]) }
            guard total <= 256, total <= end - p - 17 else { throw .corrupt("bad DHT segment") }
            p += 17 + total
        }
    }

    private static func parseSOF(_ b: [UInt8], _ start: Int, _ end: Int) throws(ImageProblem) -> JPEGFrame {
        guard end - start >= 6 else { throw .corrupt("bad JPEG frame header") }
        let height = be16(b, start + 1)
        let width = be16(b, start + 3)
        let count = Int(b[start + 5])
        guard count >= 1, end - start == 6 + 3 * count else { throw .corrupt("bad JPEG frame header") }
        guard height > 0 else { throw .corrupt("JPEG height 0 (DNL) unsupported") }
        guard width > 0 else { throw .corrupt("JPEG width 0") }
        var ids: [UInt8] = []
        ids.reserveCapacity(count)
        for c in 0..<count {
            let p = start + 6 + 3 * c
            let h = b[p + 1] >> 4, v = b[p + 1] & 0x0F
            guard (1...4).contains(h), (1...4).contains(v), b[p + 2] <= 3 else {
                throw .corrupt("bad JPEG component")
            }
            guard !ids.contains(b[p]) else { throw .corrupt("duplicate JPEG component") }
            ids.append(b[p])
        }
        return JPEGFrame(width: width, height: height, componentIDs: ids)
    }

    private static func validateSOS(
        _ b: [UInt8], _ start: Int, _ end: Int, frame: JPEGFrame
    ) throws(ImageProblem) {
        guard end - start >= 1 else { throw .corrupt("bad JPEG scan header") }
        let count = Int(b[start])
        guard (1...4).contains(count), end - start == 1 + 2 * count + 3 else {
            throw .corrupt("bad JPEG scan header")
        }
        for c in 0..<count {
            let p = start + 1 + 2 * c
            guard frame.componentIDs.contains(b[p]) else { throw .corrupt("JPEG scan references unknown component") }
            guard b[p + 1] >> 4 <= 3, b[p + 1] & 0x0F <= 3 else { throw .corrupt("bad JPEG scan header") }
        }
    }

    /// A JFIF APP0 segment with the same version/density but no thumbnail.
    private static func normalizedJFIF(_ b: [UInt8], _ start: Int, _ end: Int) -> [UInt8]? {
        let ident: [UInt8] = [0x4A, 0x46, 0x49, 0x46, 0x00] // "JFIF\0"
        guard end - start >= 14, b[start..<start + 5].elementsEqual(ident) else { return nil }
        var seg: [UInt8] = [0xFF, 0xE0, 0x00, 0x10]
        seg.append(contentsOf: b[start..<start + 12]) // ident, version, units, densities
        seg.append(0) // thumbnail width
        seg.append(0) // thumbnail height
        return seg
    }

    /// The EXIF orientation (2 to 8; 1, upright, is not worth keeping) from an APP1 segment, if
    /// it is EXIF and well formed. Every read is bounds-checked against the segment.
    private static func exifOrientation(_ b: [UInt8], _ start: Int, _ end: Int) -> UInt8? {
        let ident: [UInt8] = [0x45, 0x78, 0x69, 0x66, 0x00, 0x00] // "Exif\0\0"
        guard end - start >= 14, b[start..<start + 6].elementsEqual(ident) else { return nil }
        let tiff = start + 6
        let little: Bool
        switch (b[tiff], b[tiff + 1]) {
        case (0x49, 0x49): little = true
        case (0x4D, 0x4D): little = false
        default: return nil
        }
        func u16(_ at: Int) -> Int? {
            guard at >= tiff, at + 2 <= end else { return nil }
            return little ? Int(b[at]) | Int(b[at + 1]) << 8 : Int(b[at]) << 8 | Int(b[at + 1])
        }
        func u32(_ at: Int) -> Int? {
            guard let high = u16(little ? at + 2 : at), let low = u16(little ? at : at + 2) else { return nil }
            return high << 16 | low
        }
        guard u16(tiff + 2) == 42, let ifdOffset = u32(tiff + 4), ifdOffset <= end - tiff else { return nil }
        let ifd = tiff + ifdOffset
        guard let count = u16(ifd), count <= 1000 else { return nil }
        for entry in 0..<count {
            let at = ifd + 2 + entry * 12
            guard let tag = u16(at) else { return nil }
            if tag == 0x0112 {
                guard u16(at + 2) == 3, let value = u16(at + 8), (2...8).contains(value) else { return nil }
                return UInt8(value)
            }
        }
        return nil
    }

    /// An APP1 segment holding an EXIF block with only the orientation tag (big-endian TIFF).
    private static func minimalExif(orientation: UInt8) -> [UInt8] {
        [0xFF, 0xE1, 0x00, 0x22,
         0x45, 0x78, 0x69, 0x66, 0x00, 0x00,              // "Exif\0\0"
         0x4D, 0x4D, 0x00, 0x2A, 0x00, 0x00, 0x00, 0x08,  // "MM", 42, IFD0 at 8
         0x00, 0x01,                                      // one entry
         0x01, 0x12, 0x00, 0x03, 0x00, 0x00, 0x00, 0x01, 0x00, orientation, 0x00, 0x00,  // Orientation, SHORT, 1
         0x00, 0x00, 0x00, 0x00]                          // no next IFD
    }

    /// A minimal Adobe APP14 segment carrying only the colour transform flag.
    private static func normalizedAdobe(_ b: [UInt8], _ start: Int, _ end: Int) -> [UInt8]? {
        let ident: [UInt8] = [0x41, 0x64, 0x6F, 0x62, 0x65] // "Adobe"
        guard end - start >= 12, b[start..<start + 5].elementsEqual(ident) else { return nil }
        let transform = b[start + 11]
        guard transform <= 2 else { return nil }
        return [0xFF, 0xEE, 0x00, 0x0E] + ident + [0x00, 0x64, 0x00, 0x00, 0x00, 0x00, transform]
    }
}
