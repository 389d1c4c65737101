import Testing
import WaybillCore

private let both: Set<ImageFormat> = [.png, .jpeg]

private func sanitize(_ b: [UInt8], allowed: Set<ImageFormat> = both, maxWidth: Int = 4096, maxHeight: Int = 4096) throws(ImageProblem) -> SanitizedImage {
    try ImageSanitizer.sanitize(b, allowed: allowed, maxWidth: maxWidth, maxHeight: maxHeight)
}

private func problem(_ b: [UInt8], allowed: Set<ImageFormat> = both, maxWidth: Int = 4096, maxHeight: Int = 4096) -> ImageProblem? {
    do {
        _ = try sanitize(b, allowed: allowed, maxWidth: maxWidth, maxHeight: maxHeight)
        return nil
    } catch {
        return error
    }
}

private func isCorrupt(_ p: ImageProblem?) -> Bool {
    if case .corrupt = p { return true }
    return false
}

@Suite struct FormatTests {
    @Test func detectsByContent() {
        #expect(ImageSanitizer.detect(makePNG()) == .png)
        #expect(ImageSanitizer.detect(baselineJPEG) == .jpeg)
        #expect(ImageSanitizer.detect(ascii("GIF89a\u{01}\u{00}\u{01}\u{00}")) == nil)
        #expect(ImageSanitizer.detect([]) == nil)
        #expect(ImageSanitizer.detect([0xFF, 0xD8]) == nil)
        #expect(ImageSanitizer.detect(Array(pngSignatureBytes.prefix(7))) == nil)
    }

    @Test func contentTypeAndExtension() {
        #expect(ImageFormat.png.contentType == "image/png")
        #expect(ImageFormat.jpeg.contentType == "image/jpeg")
        #expect(ImageFormat.png.fileExtension == "png")
        #expect(ImageFormat.jpeg.fileExtension == "jpg")
    }

    @Test func gifIsNotAnImage() {
        let gif = ascii("GIF89a") + [0x01, 0x00, 0x01, 0x00, 0x80, 0x00, 0x00] + Array(repeating: 0, count: 20)
        #expect(problem(gif) == .notAnImage)
        #expect(problem([]) == .notAnImage)
        #expect(problem(ascii("<svg xmlns=\"http://www.w3.org/2000/svg\"/>")) == .notAnImage)
    }

    @Test func formatNotAllowed() {
        #expect(problem(makePNG(), allowed: [.jpeg]) == .formatNotAllowed(.png))
        #expect(problem(baselineJPEG, allowed: [.png]) == .formatNotAllowed(.jpeg))
        #expect(problem(baselineJPEG, allowed: []) == .formatNotAllowed(.jpeg))
    }
}

@Suite struct PNGTests {
    @Test func stripsMetadataAndKeepsImage() throws {
        let text = pngChunk("tEXt", ascii("Author\u{0}Jane Doe, 12 Main St"))
        let exif = pngChunk("eXIf", ascii("MM\u{0}*") + [0, 0, 0, 8, 0, 0])
        let time = pngChunk("tIME", [0x07, 0xE8, 1, 2, 3, 4, 5])
        let itxt = pngChunk("iTXt", ascii("GPS\u{0}\u{0}\u{0}\u{0}\u{0}52.1,4.3"))
        let input = makePNG(beforeIDAT: [text, exif], afterIDAT: [time, itxt])
        #expect(pngChunkTypes(input) == ["IHDR", "tEXt", "eXIf", "IDAT", "tIME", "iTXt", "IEND"])

        let out = try sanitize(input)
        #expect(out.format == .png)
        #expect(out.width == 2)
        #expect(out.height == 2)
        #expect(pngChunkTypes(out.bytes) == ["IHDR", "IDAT", "IEND"])
        #expect(!containsSubsequence(out.bytes, ascii("Jane Doe")))
        #expect(!containsSubsequence(out.bytes, ascii("52.1,4.3")))
        #expect(out.bytes == makePNG()) // exactly the metadata-free file
    }

    @Test func sanitizingIsIdempotent() throws {
        let first = try sanitize(makePNG(width: 5, height: 3, beforeIDAT: [pngChunk("tEXt", ascii("a\u{0}b"))]))
        let second = try sanitize(first.bytes)
        #expect(first == second)
        #expect(first.width == 5 && first.height == 3)
    }

    @Test func keepsPaletteAndTransparency() throws {
        // 2×1, 8-bit palette: scanline = filter 0, index 0, index 1.
        var png = pngSignatureBytes + ihdr(width: 2, height: 1, bitDepth: 8, colorType: 3)
        png += pngChunk("gAMA", be32Bytes(45455))
        png += pngChunk("PLTE", [255, 0, 0, 0, 0, 255])
        png += pngChunk("tRNS", [0x80])
        png += pngChunk("IDAT", zlibStored([0, 0, 1]))
        png += pngChunk("IEND", [])
        let out = try sanitize(png)
        #expect(pngChunkTypes(out.bytes) == ["IHDR", "PLTE", "tRNS", "IDAT", "IEND"])
        #expect(out.width == 2 && out.height == 1)
    }

    @Test func dropsAPNGChunksAndKeepsSplitIDAT() throws {
        let stream = zlibStored(rgbaScanlines(width: 2, height: 2))
        var png = pngSignatureBytes + ihdr(width: 2, height: 2)
        png += pngChunk("acTL", be32Bytes(1) + be32Bytes(0))
        png += pngChunk("IDAT", Array(stream[0..<1])) // zlib header split across chunks
        png += pngChunk("IDAT", Array(stream[1...]))
        png += pngChunk("IEND", [])
        let out = try sanitize(png)
        #expect(pngChunkTypes(out.bytes) == ["IHDR", "IDAT", "IDAT", "IEND"])
    }

    @Test func badCRCIsCorrupt() {
        var png = makePNG()
        png[png.count - 20] ^= 0x01 // inside the IDAT payload
        #expect(problem(png) == .corrupt("bad PNG chunk CRC"))

        var badIHDRCRC = makePNG()
        badIHDRCRC[8 + 8 + 13] ^= 0xFF // first CRC byte of IHDR
        #expect(problem(badIHDRCRC) == .corrupt("bad PNG chunk CRC"))
    }

    @Test func everyTruncationIsRejected() {
        let png = makePNG(beforeIDAT: [pngChunk("tEXt", ascii("k\u{0}v"))])
        for n in 0..<png.count {
            let p = problem(Array(png.prefix(n)))
            if n < 8 {
                #expect(p == .notAnImage, "prefix \(n)")
            } else {
                #expect(isCorrupt(p), "prefix \(n)")
            }
        }
    }

    @Test func trailingDataAfterIENDIsCorrupt() {
        #expect(problem(makePNG() + [0x00]) == .corrupt("data after IEND"))
        #expect(problem(makePNG() + ascii("PK\u{3}\u{4}zip")) == .corrupt("data after IEND"))
    }

    @Test func structuralErrors() {
        let idat = pngChunk("IDAT", zlibStored(rgbaScanlines(width: 2, height: 2)))
        let iend = pngChunk("IEND", [])
        let text = pngChunk("tEXt", ascii("k\u{0}v"))
        // IHDR not first
        #expect(problem(pngSignatureBytes + text + ihdr(width: 2, height: 2) + idat + iend) == .corrupt("PNG does not start with IHDR"))
        // no IDAT
        #expect(problem(pngSignatureBytes + ihdr(width: 2, height: 2) + iend) == .corrupt("missing IDAT"))
        // no IEND
        #expect(problem(pngSignatureBytes + ihdr(width: 2, height: 2) + idat) == .corrupt("truncated PNG (missing IEND)"))
        // zero width
        #expect(problem(pngSignatureBytes + ihdr(width: 0, height: 2) + idat + iend) == .corrupt("bad PNG dimensions"))
        // bad bit depth for RGBA
        #expect(problem(pngSignatureBytes + ihdr(width: 2, height: 2, bitDepth: 4, colorType: 6) + idat + iend) == .corrupt("bad PNG bit depth"))
        // bad colour type
        #expect(problem(pngSignatureBytes + ihdr(width: 2, height: 2, bitDepth: 8, colorType: 5) + idat + iend) == .corrupt("bad PNG colour type"))
        // bad interlace
        #expect(problem(pngSignatureBytes + ihdr(width: 2, height: 2, interlace: 2) + idat + iend) == .corrupt("bad PNG interlace method"))
        // duplicate IHDR
        #expect(problem(pngSignatureBytes + ihdr(width: 2, height: 2) + ihdr(width: 2, height: 2) + idat + iend) == .corrupt("duplicate IHDR"))
        // non-consecutive IDAT
        #expect(problem(pngSignatureBytes + ihdr(width: 2, height: 2) + idat + text + idat + iend) == .corrupt("IDAT chunks not consecutive"))
        // unknown critical chunk
        #expect(problem(pngSignatureBytes + ihdr(width: 2, height: 2) + pngChunk("ABCD", []) + idat + iend) == .corrupt("unknown critical PNG chunk"))
        // palette image without PLTE
        #expect(problem(pngSignatureBytes + ihdr(width: 2, height: 2, bitDepth: 8, colorType: 3) + idat + iend) == .corrupt("missing PLTE"))
        // IDAT that is not a zlib stream
        #expect(problem(pngSignatureBytes + ihdr(width: 2, height: 2) + pngChunk("IDAT", [1, 2, 3]) + iend) == .corrupt("bad zlib header in IDAT"))
        // chunk length with the top bit set
        var huge = makePNG()
        huge[8] = 0x80
        #expect(problem(huge) == .corrupt("PNG chunk length out of range"))
    }

    @Test func dimensionCaps() throws {
        let png = makePNG(width: 6, height: 3)
        #expect(problem(png, maxWidth: 5, maxHeight: 100) == .dimensionsTooLarge(width: 6, height: 3))
        #expect(problem(png, maxWidth: 100, maxHeight: 2) == .dimensionsTooLarge(width: 6, height: 3))
        #expect(try sanitize(png, maxWidth: 6, maxHeight: 3).width == 6)

        // 10000 × 10000 = 100 MP, over the absolute 50 MP cap even with generous limits.
        // (The IDAT is too short for that size; pixel data is not decoded.)
        let idat = pngChunk("IDAT", zlibStored([0]))
        let big = pngSignatureBytes + ihdr(width: 10_000, height: 10_000) + idat + pngChunk("IEND", [])
        #expect(problem(big, maxWidth: 100_000, maxHeight: 100_000) == .dimensionsTooLarge(width: 10_000, height: 10_000))
        let maxed = pngSignatureBytes + ihdr(width: 0x7FFF_FFFF, height: 0x7FFF_FFFF) + idat + pngChunk("IEND", [])
        #expect(problem(maxed, maxWidth: .max, maxHeight: .max) == .dimensionsTooLarge(width: 0x7FFF_FFFF, height: 0x7FFF_FFFF))
        let exactly50MP = pngSignatureBytes + ihdr(width: 10_000, height: 5_000) + idat + pngChunk("IEND", [])
        #expect(try sanitize(exactly50MP, maxWidth: 10_000, maxHeight: 10_000).height == 5_000)
    }
}

@Suite struct JPEGTests {
    static let exif = jpegSegment(0xE1, ascii("Exif\u{0}\u{0}MM\u{0}*GPS 52.37N 4.89E Canon EOS"))
    static let xmp = jpegSegment(0xE1, ascii("http://ns.adobe.com/xap/1.0/\u{0}<x:xmpmeta>secret</x:xmpmeta>"))
    static let icc = jpegSegment(0xE2, ascii("ICC_PROFILE\u{0}\u{1}\u{1}") + Array(repeating: 0x11, count: 40))
    static let comment = jpegSegment(0xFE, ascii("Taken at 12 Main St"))

    @Test func stripsExifAndCommentAndReadsDimensions() throws {
        let input = insertAfterSOI(baselineJPEG, [Self.exif, Self.comment])
        #expect(jpegMarkers(input).prefix(3) == [0xE1, 0xFE, 0xE0])
        let out = try sanitize(input)
        #expect(out.format == .jpeg)
        #expect(out.width == 3)
        #expect(out.height == 2)
        #expect(out.bytes.prefix(2) == [0xFF, 0xD8])
        #expect(out.bytes.suffix(2) == [0xFF, 0xD9])
        #expect(!containsSubsequence(out.bytes, ascii("Exif")))
        #expect(!containsSubsequence(out.bytes, ascii("Main St")))
        let markers = jpegMarkers(out.bytes)
        #expect(!markers.contains(0xE1) && !markers.contains(0xFE))
        #expect(markers.first == 0xE0) // JFIF kept (normalised) as the first segment
        #expect(markers.last == 0xD9)
        // Stripping the inserted segments gives back the original file exactly.
        #expect(out.bytes == baselineJPEG)
        #expect(try sanitize(out.bytes) == out)
    }

    @Test func stripsAllAPPnSegments() throws {
        let photoshop = jpegSegment(0xED, ascii("Photoshop 3.0\u{0}8BIM"))
        let input = insertAfterSOI(baselineJPEG, [Self.exif, Self.xmp, Self.icc, photoshop, Self.comment])
        let out = try sanitize(input)
        let markers = jpegMarkers(out.bytes)
        #expect(markers.allSatisfy { !(0xE1...0xEF).contains($0) && $0 != 0xFE })
        #expect(!containsSubsequence(out.bytes, ascii("secret")))
        #expect(!containsSubsequence(out.bytes, ascii("ICC_PROFILE")))
    }

    @Test func exifOrientationIsKeptAndNothingElse() throws {
        // Little-endian TIFF: Make = "SecretCam" (stored after the IFD), Orientation = 6 (rotate 90°).
        let tiff: [UInt8] = [0x49, 0x49, 0x2A, 0x00, 0x08, 0x00, 0x00, 0x00, 0x02, 0x00,
                             0x0F, 0x01, 0x02, 0x00, 0x0A, 0x00, 0x00, 0x00, 0x26, 0x00, 0x00, 0x00,
                             0x12, 0x01, 0x03, 0x00, 0x01, 0x00, 0x00, 0x00, 0x06, 0x00, 0x00, 0x00,
                             0x00, 0x00, 0x00, 0x00] + ascii("SecretCam\u{0}")
        let input = insertAfterSOI(baselineJPEG, [jpegSegment(0xE1, ascii("Exif\u{0}\u{0}") + tiff)])
        let out = try sanitize(input)
        #expect(!containsSubsequence(out.bytes, ascii("SecretCam")))
        // The orientation survives in a minimal big-endian EXIF block.
        #expect(containsSubsequence(out.bytes, ascii("Exif\u{0}\u{0}MM") + [0x00, 0x2A]))
        #expect(containsSubsequence(out.bytes, [0x01, 0x12, 0x00, 0x03, 0x00, 0x00, 0x00, 0x01, 0x00, 0x06]))
        #expect(try sanitize(out.bytes).bytes == out.bytes)
        // Upright photos need no EXIF at all.
        var upright = tiff
        upright[30] = 0x01
        let plain = try sanitize(insertAfterSOI(baselineJPEG, [jpegSegment(0xE1, ascii("Exif\u{0}\u{0}") + upright)]))
        #expect(!containsSubsequence(plain.bytes, ascii("Exif")))
    }

    @Test func progressiveJPEGIsSupported() throws {
        let input = insertAfterSOI(progressiveJPEG, [Self.exif])
        let out = try sanitize(input)
        #expect(out.width == 3 && out.height == 2)
        #expect(out.bytes == progressiveJPEG)
        let markers = jpegMarkers(out.bytes)
        #expect(markers.contains(0xC2))
        #expect(markers.filter { $0 == 0xDA }.count > 1)
        #expect(markers.last == 0xD9)
    }

    @Test func jfifThumbnailIsRemoved() throws {
        // JFIF APP0 with a 1×1 RGB thumbnail.
        let jfifWithThumb = jpegSegment(0xE0, ascii("JFIF\u{0}") + [1, 2, 1, 0, 72, 0, 72, 1, 1, 0xAB, 0xCD, 0xEF])
        var body = Array(baselineJPEG[2...])
        body.removeSubrange(0..<18) // original APP0 (FFE0 + 16)
        let input = [0xFF, 0xD8] + jfifWithThumb + body
        let out = try sanitize(input)
        #expect(!containsSubsequence(out.bytes, [0xAB, 0xCD, 0xEF]))
        #expect(Array(out.bytes[2..<20]) == [0xFF, 0xE0, 0x00, 0x10] + ascii("JFIF\u{0}") + [1, 2, 1, 0, 72, 0, 72, 0, 0])
    }

    @Test func fillBytesAndTrailingDataAfterEOI() throws {
        // Extra 0xFF fill bytes before a marker are legal and are not copied.
        var withFill = baselineJPEG
        withFill.insert(contentsOf: [0xFF, 0xFF, 0xFF], at: 20) // before the first DQT marker
        #expect(try sanitize(withFill).bytes == baselineJPEG)
        // Bytes after EOI (e.g. phone trailers) are discarded, not copied.
        let trailer = baselineJPEG + ascii("SEFT motion-photo mp4 data")
        #expect(try sanitize(trailer).bytes == baselineJPEG)
    }

    @Test func everyTruncationIsRejected() {
        let jpeg = insertAfterSOI(baselineJPEG, [Self.exif])
        for n in 0..<jpeg.count {
            let p = problem(Array(jpeg.prefix(n)))
            if n < 3 {
                #expect(p == .notAnImage, "prefix \(n)")
            } else {
                #expect(isCorrupt(p), "prefix \(n)")
            }
        }
        for n in 3..<progressiveJPEG.count {
            #expect(isCorrupt(problem(Array(progressiveJPEG.prefix(n)))), "progressive prefix \(n)")
        }
    }

    /// Offset of the first occurrence of FF `marker` in the header part of a JPEG.
    private func offset(of marker: UInt8, in jpeg: [UInt8]) -> Int {
        var i = 2
        while i + 1 < jpeg.count {
            if jpeg[i] == 0xFF && jpeg[i + 1] == marker { return i }
            let len = Int(jpeg[i + 2]) << 8 | Int(jpeg[i + 3])
            i += 2 + len
        }
        return -1
    }

    @Test func structuralErrors() {
        let sof = offset(of: 0xC0, in: baselineJPEG)
        let sos = offset(of: 0xDA, in: baselineJPEG)
        #expect(sof > 0 && sos > sof)

        var zeroHeight = baselineJPEG
        zeroHeight[sof + 5] = 0
        zeroHeight[sof + 6] = 0
        #expect(problem(zeroHeight) == .corrupt("JPEG height 0 (DNL) unsupported"))

        // SOS moved before SOF.
        let sofLen = Int(baselineJPEG[sof + 2]) << 8 | Int(baselineJPEG[sof + 3])
        var noFrame = baselineJPEG
        noFrame.removeSubrange(sof..<(sof + 2 + sofLen))
        #expect(problem(noFrame) == .corrupt("JPEG scan before frame header"))

        // Header tables but no scan.
        let headerOnly = Array(baselineJPEG[0..<sos]) + [0xFF, 0xD9]
        #expect(problem(headerOnly) == .corrupt("JPEG has no scan"))

        // Garbage where a marker is expected.
        var garbage = baselineJPEG
        garbage[20] = 0x00
        #expect(problem(garbage) == .corrupt("expected JPEG marker"))

        // Missing EOI.
        #expect(problem(Array(baselineJPEG.dropLast(2))) == .corrupt("truncated JPEG scan data"))

        // Segment length smaller than 2.
        var badLen = baselineJPEG
        badLen[4] = 0; badLen[5] = 1
        #expect(problem(badLen) == .corrupt("bad JPEG segment length"))

        // Second SOI.
        #expect(problem(insertAfterSOI(baselineJPEG, [[0xFF, 0xD8]])) == .corrupt("unexpected JPEG marker"))
    }

    @Test func dimensionCaps() throws {
        #expect(problem(baselineJPEG, maxWidth: 2, maxHeight: 100) == .dimensionsTooLarge(width: 3, height: 2))
        #expect(problem(baselineJPEG, maxWidth: 100, maxHeight: 1) == .dimensionsTooLarge(width: 3, height: 2))
        #expect(try sanitize(baselineJPEG, maxWidth: 3, maxHeight: 2).width == 3)

        // Patch SOF to 65535 × 65535 (> 50 MP).
        var huge = baselineJPEG
        let sof = offset(of: 0xC0, in: huge)
        for i in (sof + 5)...(sof + 8) { huge[i] = 0xFF }
        #expect(problem(huge, maxWidth: .max, maxHeight: .max) == .dimensionsTooLarge(width: 65535, height: 65535))
    }
}

@Suite struct FuzzTests {
    /// Sanitize must return or throw for any input; when it succeeds the output
    /// must itself sanitize to the same result.
    private func check(_ input: [UInt8]) -> Bool {
        guard let out = try? sanitize(input, maxWidth: 1 << 20, maxHeight: 1 << 20) else { return false }
        let again = try? sanitize(out.bytes, maxWidth: 1 << 20, maxHeight: 1 << 20)
        #expect(again == out, "output not stable for input of \(input.count) bytes")
        return true
    }

    @Test func mutatedPNGs() {
        var rng = SplitMix64(seed: 0x5EED_0001)
        let samples = [
            makePNG(beforeIDAT: [pngChunk("tEXt", ascii("k\u{0}v")), pngChunk("eXIf", [1, 2, 3])]),
            makePNG(width: 3, height: 5),
        ]
        var accepted = 0
        for i in 0..<2000 {
            var m = mutate(samples[i % samples.count], using: &rng)
            if i % 2 == 0 { m = fixPNGCRCs(m) } // get past the CRC check half the time
            if check(m) { accepted += 1 }
        }
        #expect(accepted < 2000)
    }

    @Test func mutatedJPEGs() {
        var rng = SplitMix64(seed: 0x5EED_0002)
        let samples = [insertAfterSOI(baselineJPEG, [JPEGTests.exif, JPEGTests.comment]), progressiveJPEG]
        var accepted = 0
        for i in 0..<2000 {
            if check(mutate(samples[i % samples.count], using: &rng)) { accepted += 1 }
        }
        #expect(accepted > 0) // mutations inside entropy data still parse
    }

    @Test func randomBytesWithValidSignatures() {
        var rng = SplitMix64(seed: 0x5EED_0003)
        for i in 0..<1000 {
            let junk = (0..<Int.random(in: 0...300, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            let prefix: [UInt8] = i % 2 == 0 ? pngSignatureBytes : [0xFF, 0xD8, 0xFF]
            _ = check(prefix + junk) // must not trap; result irrelevant
        }
    }
}
