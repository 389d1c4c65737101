import Foundation
import Testing
@testable import WaybillCore

/// A ZIP archive of stored entries, written field by field (little-endian), so each test can bend
/// one offset or size the way a hostile upload would.
private struct ZIPBuilder {
    var entries: [(name: String, data: [UInt8])] = [("a.xml", Array("<a/>".utf8)), ("b.xml", Array("<b>second</b>".utf8))]
    var comment: [UInt8] = []
    var dataDescriptor = false
    /// Applied to the central directory entry's fields (offset in the entry → value) before writing.
    var patch: (_ entry: Int, _ central: inout [UInt8], _ local: inout [UInt8]) -> Void = { _, _, _ in }
    var patchEnd: (inout [UInt8]) -> Void = { _ in }

    static func le16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] }
    static func le32(_ v: Int) -> [UInt8] { le16(v & 0xFFFF) + le16(v >> 16 & 0xFFFF) }

    func bytes() -> [UInt8] {
        var out: [UInt8] = [], directory: [UInt8] = []
        for (i, entry) in entries.enumerated() {
            let name = Array(entry.name.utf8), size = entry.data.count
            let flags = dataDescriptor ? 0x8 : 0
            var local = Self.le32(0x0403_4B50) + Self.le16(20) + Self.le16(flags) + Self.le16(0) + Self.le32(0) + Self.le32(0)
            local += Self.le32(dataDescriptor ? 0 : size) + Self.le32(dataDescriptor ? 0 : size) + Self.le16(name.count) + Self.le16(0) + name
            var central = Self.le32(0x0201_4B50) + Self.le16(20) + Self.le16(20) + Self.le16(flags) + Self.le16(0) + Self.le32(0) + Self.le32(0)
            central += Self.le32(size) + Self.le32(size) + Self.le16(name.count) + Self.le16(0) + Self.le16(0) + Self.le16(0) + Self.le16(0)
            central += Self.le32(0) + Self.le32(out.count) + name
            patch(i, &central, &local)
            out += local + entry.data
            if dataDescriptor { out += Self.le32(0x0807_4B50) + Self.le32(0) + Self.le32(size) + Self.le32(size) }
            directory += central
        }
        var end = Self.le32(0x0605_4B50) + Self.le16(0) + Self.le16(0) + Self.le16(entries.count) + Self.le16(entries.count)
        end += Self.le32(directory.count) + Self.le32(out.count) + Self.le16(comment.count)
        patchEnd(&end)
        return out + directory + end + comment
    }
}

@Suite("Upload shapes: a workbook's ZIP layout and a form's multipart body are checked before a dependency that would trap reads them")
struct UploadShapeTests {
    @Test("Well-formed archives are sound: entries, a comment, data descriptors")
    func soundArchives() {
        #expect(ZIPLayout.isSound(ZIPBuilder().bytes()))
        #expect(ZIPLayout.isSound(ZIPBuilder(comment: Array("made by hand".utf8)).bytes()))
        #expect(ZIPLayout.isSound(ZIPBuilder(dataDescriptor: true).bytes()))
        #expect(ZIPLayout.isSound(ZIPBuilder(entries: []).bytes()))
    }

    @Test("Entries are listed with where their bytes lie")
    func listing() throws {
        let bytes = ZIPBuilder().bytes()
        let entries = try #require(ZIPLayout.entries(bytes))
        #expect(entries.map(\.name) == ["a.xml", "b.xml"])
        #expect(entries.map { Array(bytes[$0.data]) } == [Array("<a/>".utf8), Array("<b>second</b>".utf8)])
        #expect(entries.allSatisfy { $0.method == 0 && $0.uncompressedSize == $0.data.count })
    }

    @Test("Offsets and sizes that point past the end, or past where the next part starts, are refused")
    func offsetsPastTheEnd() {
        func patched(_ field: Int, in central: Bool = true, to value: Int, entry: Int = 1) -> [UInt8] {
            var builder = ZIPBuilder()
            builder.patch = { i, c, l in
                guard i == entry else { return }
                let bytes = ZIPBuilder.le32(value)
                for k in 0..<4 { if central { c[field + k] = bytes[k] } else { l[field + k] = bytes[k] } }
            }
            return builder.bytes()
        }
        #expect(!ZIPLayout.isSound(patched(42, to: 1_000_000)), "local header offset past the end")
        #expect(!ZIPLayout.isSound(patched(42, to: 40)), "local header offset inside another entry's data")
        #expect(!ZIPLayout.isSound(patched(20, to: 1_000_000)), "compressed size past the end")
        #expect(!ZIPLayout.isSound(patched(24, to: 0xFFFF_FFFF)), "a ZIP64 size marker")
        #expect(!ZIPLayout.isSound(patched(0, in: false, to: 0x0403_4B51)), "no local header where the directory points")

        func end(_ field: Int, _ bytes: [UInt8]) -> [UInt8] {
            var builder = ZIPBuilder()
            builder.patchEnd = { e in for (k, b) in bytes.enumerated() { e[field + k] = b } }
            return builder.bytes()
        }
        #expect(!ZIPLayout.isSound(end(16, ZIPBuilder.le32(1_000_000))), "central directory past the end")
        #expect(!ZIPLayout.isSound(end(12, ZIPBuilder.le32(1_000_000))), "central directory longer than the file")
        #expect(!ZIPLayout.isSound(end(8, ZIPBuilder.le16(3) + ZIPBuilder.le16(3))), "more entries than the directory holds")
        #expect(!ZIPLayout.isSound(end(20, ZIPBuilder.le16(40))), "a comment longer than what follows")
        #expect(!ZIPLayout.isSound(end(8, ZIPBuilder.le16(1))), "entries on this disk differ from the total")

        var descriptor = ZIPBuilder(dataDescriptor: true)
        descriptor.patch = { i, c, _ in if i == 1 { for (k, b) in ZIPBuilder.le32(500).enumerated() { c[20 + k] = b; c[24 + k] = b } } }
        #expect(!ZIPLayout.isSound(descriptor.bytes()), "a data descriptor read past the directory")
    }

    @Test("ZIP64 archives, files without an end record, and every truncation of an archive are refused")
    func truncations() {
        let whole = ZIPBuilder().bytes()
        for length in 0..<whole.count {
            #expect(!ZIPLayout.isSound(Array(whole.prefix(length))), "the first \(length) bytes")
        }
        // A ZIP64 end locator right before the end record: refused (the same archive without it is sound).
        let plain = ZIPBuilder(entries: []).bytes()
        let locator = ZIPBuilder.le32(0x0706_4B50) + [UInt8](repeating: 0, count: 16)
        #expect(ZIPLayout.isSound(plain))
        #expect(!ZIPLayout.isSound(locator + plain))
        #expect(!ZIPLayout.isSound(Array("PK\u{3}\u{4} not really a zip".utf8)))
    }

    static let form = Array("--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.png\"\r\nContent-Type: image/png\r\n\r\n\u{89}PNG body\r\n--XyZ\r\nContent-Disposition: form-data; name=\"_csrf\"\r\n\r\ntoken\r\n--XyZ--\r\n".utf8)

    static func readable(_ body: [UInt8], _ boundary: String = "XyZ") -> Bool {
        body.withUnsafeBytes { MultipartShape.isReadable($0, boundary: boundary) }
    }

    @Test("Boundaries follow RFC 2046: 1 to 70 characters of its set, no trailing space")
    func boundaries() {
        #expect(MultipartShape.isValidBoundary("----WebKitFormBoundary7MA4YWxkTrZu0gW"))
        #expect(MultipartShape.isValidBoundary("a'()+_,-./:=? b"))
        #expect(!MultipartShape.isValidBoundary(""))
        #expect(!MultipartShape.isValidBoundary(String(repeating: "b", count: 71)))
        #expect(MultipartShape.isValidBoundary(String(repeating: "b", count: 70)))
        #expect(!MultipartShape.isValidBoundary("ends in a space "))
        #expect(!MultipartShape.isValidBoundary("é"))
        #expect(!MultipartShape.isValidBoundary("semi;colon"))
        #expect(!Self.readable(Self.form, ""))
    }

    @Test("A byte of 0x80 or more where a part header's name is read is refused; anywhere else it is the parser's to judge")
    func headerNames() {
        #expect(Self.readable(Self.form))
        func replacing(_ text: String, with bytes: [UInt8]) -> [UInt8] {
            let needle = Array(text.utf8)
            var body = Self.form
            for start in 0...(body.count - needle.count) where Array(body[start..<start + needle.count]) == needle {
                body.replaceSubrange(start..<start + needle.count, with: bytes)
                return body
            }
            Issue.record("\(text) not in the form")
            return body
        }
        #expect(!Self.readable(replacing("Content-Type", with: Array("Content-Typ".utf8) + [0xC3])), "in the first part's second header")
        #expect(!Self.readable(replacing("Content-Disposition: form-data; name=\"_csrf\"", with: [0x80] + Array(": x".utf8))), "in the second part, after a body")
        #expect(Self.readable(replacing("image/png", with: [0xC3, 0xA9])), "in a header's value")
        #expect(Self.readable(replacing("PNG body", with: [0xFF, 0xFE, 0x80])), "in a part's body")
        #expect(Self.readable([0xFF] + Self.form), "in the preamble")
        #expect(Self.readable(Self.form + [0xFF, 0x80]), "in the epilogue")
        #expect(Self.readable(replacing("Content-Type", with: Array("Content Type".utf8))), "a space in a name is a syntax error, not a trap")
        // Split into the parser's own steps: a boundary, CRLF, then the name, whatever came before.
        #expect(!Self.readable(Array("\r\n--XyZ\r\n".utf8) + [0xE2]))
        #expect(!Self.readable(Array("--XyZ\r\nA: b\r\n".utf8) + [0x90]))
        #expect(Self.readable(Array("--XyZ-\r\n".utf8) + [0x90]), "not a boundary: still the preamble")
        #expect(Self.readable(Array("--XyZ\r\nA: b\r\n\r\nbody\r\n--XyZ--".utf8) + [0x90]))
        #expect(!Self.readable(Array("--XyZ\r\nA: b\r\n\r\nbody\r\n--XyZ\r\n".utf8) + [0x90]))
        #expect(Self.readable(Array("--XyZ\r\nA: b\r\n\r\nbody\r\n--XyY\r\n".utf8) + [0x90]), "a near-boundary is body")
    }
}
