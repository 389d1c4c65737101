import Foundation

/// An uploaded file's structure, read where a dependency would trap (or loop) on a malformed file
/// instead of throwing (found by `scripts/attack`'s upload fuzzing). A trap ends the process for
/// everyone, so these refuse what would reach one: each is a single linear pass, and each accepts
/// every well-formed file.

/// One file in a ZIP archive, where its bytes lie: what a reader needs to unpack it.
public struct ZIPEntry: Sendable, Equatable {
    public var name: String
    /// 0 stored, 8 deflated (the two methods workbooks use).
    public var method: Int
    /// The entry's bytes as stored (compressed when `method` is 8), within the archive.
    public var data: Range<Int>
    public var uncompressedSize: Int
    public var crc32: UInt32
}

/// The layout of a ZIP archive (an .xlsx workbook is one), read from its end record and central
/// directory, every offset checked against the file. Waybill reads uploaded workbooks through this
/// rather than ZIPFoundation's `Archive`, whose in-memory reader traps when an offset points past
/// the end of the data and loops for ever on a deflate stream cut short (found by `scripts/attack`).
/// `entries` answers nil unless every entry's local header and data lie before the directory, the
/// directory before the end record, and the archive is not ZIP64 (a workbook within Waybill's upload
/// limit never needs 64-bit offsets). One pass over the directory; the end record is looked for in
/// the last 64 KiB only.
public enum ZIPLayout {
    static let endRecordSignature = 0x0605_4B50
    static let zip64LocatorSignature = 0x0706_4B50
    static let centralEntrySignature = 0x0201_4B50
    static let localHeaderSignature = 0x0403_4B50
    static let endRecordSize = 22, centralEntrySize = 46, localHeaderSize = 30

    public static func isSound(_ bytes: [UInt8]) -> Bool { entries(bytes) != nil }

    public static func entries(_ bytes: [UInt8]) -> [ZIPEntry]? {
        bytes.withUnsafeBytes { entries($0) }
    }

    public static func entries(_ bytes: UnsafeRawBufferPointer) -> [ZIPEntry]? {
        let count = bytes.count
        func u16(_ at: Int) -> Int? {
            guard at >= 0, at + 2 <= count else { return nil }
            return Int(bytes[at]) | Int(bytes[at + 1]) << 8
        }
        func u32(_ at: Int) -> Int? {
            guard at >= 0, at + 4 <= count else { return nil }
            return Int(bytes[at]) | Int(bytes[at + 1]) << 8 | Int(bytes[at + 2]) << 16 | Int(bytes[at + 3]) << 24
        }
        // The end record nearest the end; its comment must reach the end exactly.
        guard count >= endRecordSize else { return nil }
        var end = -1
        var at = count - endRecordSize
        let lowest = max(0, count - endRecordSize - 0xFFFF)
        while at >= lowest {
            if u32(at) == endRecordSignature { end = at; break }
            at -= 1
        }
        guard end >= 0, let commentLength = u16(end + 20), end + endRecordSize + commentLength == count else { return nil }
        if end >= 20, u32(end - 20) == zip64LocatorSignature { return nil }
        guard let total = u16(end + 10), let onDisk = u16(end + 8), let directorySize = u32(end + 12),
              let directoryStart = u32(end + 16),
              total != 0xFFFF, onDisk == total, directorySize != 0xFFFF_FFFF, directoryStart != 0xFFFF_FFFF,
              directoryStart + directorySize <= end else { return nil }
        let directoryEnd = directoryStart + directorySize
        var position = directoryStart
        var found: [ZIPEntry] = []
        found.reserveCapacity(total)
        for _ in 0..<total {
            guard position + centralEntrySize <= directoryEnd, u32(position) == centralEntrySignature,
                  let method = u16(position + 10), let crc = u32(position + 16),
                  let compressed = u32(position + 20), let uncompressed = u32(position + 24),
                  let nameLength = u16(position + 28), let extraLength = u16(position + 30),
                  let commentLength = u16(position + 32), let localStart = u32(position + 42),
                  compressed != 0xFFFF_FFFF, uncompressed != 0xFFFF_FFFF, localStart != 0xFFFF_FFFF,
                  position + centralEntrySize + nameLength <= directoryEnd else { return nil }
            let nameStart = position + centralEntrySize
            let name = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[nameStart..<nameStart + nameLength]), as: UTF8.self)
            position = nameStart + nameLength + extraLength + commentLength
            guard position <= directoryEnd else { return nil }
            // The local header, as the central directory points to it, and the data after it, before the directory.
            guard localStart + localHeaderSize <= directoryStart, u32(localStart) == localHeaderSignature,
                  let localName = u16(localStart + 26), let localExtra = u16(localStart + 28) else { return nil }
            let dataStart = localStart + localHeaderSize + localName + localExtra
            guard dataStart + compressed <= directoryStart, method != 0 || compressed == uncompressed else { return nil }
            found.append(ZIPEntry(name: name, method: method, data: dataStart..<dataStart + compressed,
                                  uncompressedSize: uncompressed, crc32: UInt32(crc)))
        }
        return found
    }
}

/// A `multipart/form-data` body, checked the way MultipartKit 4's parser walks it (Vapor's reader of
/// the web app's forms). That parser traps on an empty boundary, and on a byte of 0x80 or more where
/// it expects a part header's name (it indexes a 128-entry table with the byte). `isReadable` follows
/// the parser's own states over the body and answers false exactly when the parser would reach one of
/// those, so a refused body is one the parser could not have read, and a readable one reaches it as is
/// (the parser's own syntax errors still answer as before).
public enum MultipartShape {
    /// RFC 2046: 1 to 70 characters from `bchars`, not ending in a space.
    public static func isValidBoundary(_ boundary: String) -> Bool {
        let scalars = Array(boundary.unicodeScalars)
        guard (1...70).contains(scalars.count), scalars.last != " " else { return false }
        return scalars.allSatisfy { scalar in
            switch scalar {
            case "0"..."9", "a"..."z", "A"..."Z", "'", "(", ")", "+", "_", ",", "-", ".", "/", ":", "=", "?", " ": true
            default: false
            }
        }
    }

    public static func isReadable(_ body: UnsafeRawBufferPointer, boundary: String) -> Bool {
        guard isValidBoundary(boundary) else { return false }
        let delimiter = Array("\r\n--\(boundary)".utf8)
        let length = delimiter.count
        let cr: UInt8 = 13, lf: UInt8 = 10, colon: UInt8 = 58
        enum State { case preamble(Int), preHeaders(expectingLF: Bool), headerName(empty: Bool), headerValue, postHeaderValue, postHeaders, body, boundary(Int) }
        var state = State.preamble(0)
        var index = 0
        let count = body.count
        while index < count {
            switch state {
            case .preamble(var matched):
                while matched < length, index < count {
                    let byte = body[index]
                    index += 1
                    if matched == 0, byte == delimiter[2] { matched = 3 }
                    else if byte == delimiter[matched] { matched += 1 }
                    else if matched > 0, byte == delimiter[0] { matched = 1 }
                    else { matched = 0 }
                }
                state = matched >= length ? .preHeaders(expectingLF: false) : .preamble(matched)
            case .preHeaders(let expectingLF):
                let byte = body[index]
                index += 1
                if !expectingLF, byte == cr { state = .preHeaders(expectingLF: true) }
                else if expectingLF, byte == lf { state = .headerName(empty: true) }
                else { return true }  // the parser's syntax error: it stops there
            case .headerName(let empty):
                let byte = body[index]
                index += 1
                if byte == colon, !empty { state = .headerValue }
                else if byte == cr, empty { state = .postHeaders }
                else if byte >= 0x80 { return false }  // the parser's table lookup traps here
                else if isTokenCharacter(byte) { state = .headerName(empty: false) }
                else { return true }
            case .headerValue:
                // Everything up to the CR is the value.
                guard let found = firstIndex(of: cr, in: body, from: index) else { return true }
                index = found + 1
                state = .postHeaderValue
            case .postHeaderValue, .postHeaders:
                let byte = body[index]
                index += 1
                guard byte == lf else { return true }
                if case .postHeaders = state { state = .body } else { state = .headerName(empty: true) }
            case .body:
                guard let found = firstIndex(of: cr, in: body, from: index) else { return true }
                index = found
                state = .boundary(0)
            case .boundary(let matched):
                let byte = body[index]
                index += 1
                if matched >= length {
                    if byte == cr { state = .preHeaders(expectingLF: true) }
                    else { return true }  // "--": the epilogue, ignored; anything else a syntax error
                } else if byte == delimiter[matched] {
                    state = .boundary(matched + 1)
                } else {
                    state = byte == delimiter[0] ? .boundary(1) : .body
                }
            }
        }
        return true
    }

    /// RFC 822 token characters (MultipartKit's table of header name characters, below 0x80).
    static func isTokenCharacter(_ byte: UInt8) -> Bool {
        guard byte > 32, byte < 127 else { return false }
        switch byte {
        case 34, 40, 41, 44, 47, 58, 59, 60, 61, 62, 63, 64, 91, 92, 93, 123, 125: return false
        default: return true
        }
    }

    static func firstIndex(of byte: UInt8, in body: UnsafeRawBufferPointer, from start: Int) -> Int? {
        guard start < body.count, let base = body.baseAddress else { return nil }
        guard let found = memchr(base + start, Int32(byte), body.count - start) else { return nil }
        return base.distance(to: UnsafeRawPointer(found))
    }
}
