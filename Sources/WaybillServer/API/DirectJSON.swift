import Foundation
import OpenAPIRuntime
import WaybillAPI

/// Writes an `Encodable` value as compact JSON straight into bytes, in the order its `encode(to:)`
/// writes them: no intermediate tree of boxed values, as Foundation's `JSONEncoder` builds. Half of
/// a list page's time was `JSONEncoder` writing the generated `Components.Schemas.Order`s
/// (docs/performance.md). Dates go through the API's transcoder, as the generated server writes
/// them; strings are escaped as JSON requires (quote, backslash, control characters), slashes are
/// left as they are. `DirectJSONTests` checks the output means the same as `JSONEncoder`'s.
///
/// A container stays open until the encoder writes something at its own level or above (or the
/// end): encoding is strictly nested, as every synthesized and generated `encode(to:)` is.
enum DirectJSON {
    static func encode<T: Encodable>(_ value: T, dates: any DateTranscoder = LenientISO8601DateTranscoder()) throws -> [UInt8] {
        let sink = Sink(dates: dates)
        try sink.value(value, level: 0)
        sink.close(to: 0)
        return sink.bytes
    }

    final class Sink {
        // One encoding runs on one task, start to end: the runtime's exclusivity checks on these
        // (a thread-local access set per write) cost a fifth of the encoding.
        @exclusivity(unchecked) var bytes: [UInt8] = []
        /// Closing bytes of the open containers, innermost last, and whether each has a member yet.
        @exclusivity(unchecked) private var closers: [UInt8] = []
        @exclusivity(unchecked) private var hasMember: [Bool] = []
        let dates: any DateTranscoder

        init(dates: any DateTranscoder) {
            self.dates = dates
            bytes.reserveCapacity(4096)
        }

        func close(to level: Int) {
            while closers.count > level {
                bytes.append(closers.removeLast())
                hasMember.removeLast()
            }
        }

        func open(_ opener: UInt8, _ closer: UInt8, level: Int) {
            close(to: level)
            bytes.append(opener)
            closers.append(closer)
            hasMember.append(false)
        }

        /// Before a member of the container at `level`: children left open are closed, then a comma.
        func member(of level: Int) {
            close(to: level + 1)
            if hasMember[level] { bytes.append(UInt8(ascii: ",")) } else { hasMember[level] = true }
        }

        func key(_ key: String, of level: Int) {
            member(of: level)
            string(key)
            bytes.append(UInt8(ascii: ":"))
        }

        /// Any value at `level` (the level its own containers would open at).
        func value<T: Encodable>(_ value: T, level: Int) throws {
            // Comparing the type is cheaper than a dynamic cast per value (`as?`).
            if T.self == String.self { string(unsafeBitCast(value, to: String.self)) }
            else if T.self == Int.self { integer(unsafeBitCast(value, to: Int.self)) }
            else if T.self == Bool.self { literal(unsafeBitCast(value, to: Bool.self) ? "true" : "false") }
            else if T.self == Double.self { try double(unsafeBitCast(value, to: Double.self)) }
            else if T.self == Date.self { string(try dates.encode(unsafeBitCast(value, to: Date.self))) }
            else {
                let before = bytes.count
                try value.encode(to: Writer(sink: self, level: level))
                // A value that wrote nothing at all is an empty object, as JSONEncoder writes it.
                if bytes.count == before { bytes.append(contentsOf: [UInt8(ascii: "{"), UInt8(ascii: "}")]) }
            }
        }

        func literal(_ text: StaticString) {
            text.withUTF8Buffer { bytes.append(contentsOf: $0) }
        }

        func integer<I: BinaryInteger>(_ number: I) {
            bytes.append(contentsOf: String(number).utf8)
        }

        func double(_ number: Double) throws {
            guard number.isFinite else {
                throw EncodingError.invalidValue(number, .init(codingPath: [], debugDescription: "\(number) is not valid JSON"))
            }
            // Whole numbers as JSONEncoder writes them (3.0 -> 3); others in Swift's shortest form.
            if number == number.rounded(), abs(number) < 1e15 { integer(Int64(number)) } else { bytes.append(contentsOf: "\(number)".utf8) }
        }

        /// A JSON string: runs that need no escape are copied whole.
        func string(_ text: String) {
            bytes.append(UInt8(ascii: "\""))
            var text = text
            text.withUTF8 { utf8 in
                var start = 0
                for index in 0..<utf8.count {
                    let byte = utf8[index]
                    guard byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 else { continue }
                    bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<index]))
                    start = index + 1
                    switch byte {
                    case UInt8(ascii: "\""): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
                    case UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
                    case 0x0A: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
                    case 0x0D: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
                    case 0x09: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
                    default:
                        let hex = Array("0123456789abcdef".utf8)
                        bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                                                  hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
                    }
                }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<utf8.count]))
            }
            bytes.append(UInt8(ascii: "\""))
        }
    }

    /// The `Encoder` a value writes itself through, at one level of nesting.
    struct Writer: Encoder {
        let sink: Sink
        let level: Int
        var codingPath: [any CodingKey] { [] }
        var userInfo: [CodingUserInfoKey: Any] { [:] }

        func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
            sink.open(UInt8(ascii: "{"), UInt8(ascii: "}"), level: level)
            return KeyedEncodingContainer(Keyed<Key>(sink: sink, level: level))
        }

        func unkeyedContainer() -> any UnkeyedEncodingContainer {
            sink.open(UInt8(ascii: "["), UInt8(ascii: "]"), level: level)
            return Unkeyed(sink: sink, level: level)
        }

        func singleValueContainer() -> any SingleValueEncodingContainer { Single(sink: sink, level: level) }
    }

    struct Keyed<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let sink: Sink
        let level: Int
        var codingPath: [any CodingKey] { [] }

        mutating func encodeNil(forKey key: Key) throws { sink.key(key.stringValue, of: level); sink.literal("null") }
        mutating func encode(_ value: Bool, forKey key: Key) throws { sink.key(key.stringValue, of: level); sink.literal(value ? "true" : "false") }
        mutating func encode(_ value: String, forKey key: Key) throws { sink.key(key.stringValue, of: level); sink.string(value) }
        mutating func encode(_ value: Double, forKey key: Key) throws { sink.key(key.stringValue, of: level); try sink.double(value) }
        mutating func encode(_ value: Float, forKey key: Key) throws { sink.key(key.stringValue, of: level); try sink.double(Double(value)) }
        mutating func encode(_ value: Int, forKey key: Key) throws { sink.key(key.stringValue, of: level); sink.integer(value) }
        mutating func encode(_ value: Int8, forKey key: Key) throws { sink.key(key.stringValue, of: level); sink.integer(value) }
        mutating func encode(_ value: Int16, forKey key: Key) throws { sink.key(key.stringValue, of: level); sink.integer(value) }
        mutating func encode(_ value: Int32, forKey key: Key) throws { sink.key(key.stringValue, of: level); sink.integer(value) }
        mutating func encode(_ value: Int64, forKey key: Key) throws { sink.key(key.stringValue, of: level); sink.integer(value) }
        mutating func encode(_ value: UInt, forKey key: Key) throws { sink.key(key.stringValue, of: level); sink.integer(value) }
        mutating func encode(_ value: UInt8, forKey key: Key) throws { sink.key(key.stringValue, of: level); sink.integer(value) }
        mutating func encode(_ value: UInt16, forKey key: Key) throws { sink.key(key.stringValue, of: level); sink.integer(value) }
        mutating func encode(_ value: UInt32, forKey key: Key) throws { sink.key(key.stringValue, of: level); sink.integer(value) }
        mutating func encode(_ value: UInt64, forKey key: Key) throws { sink.key(key.stringValue, of: level); sink.integer(value) }
        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
            sink.key(key.stringValue, of: level)
            try sink.value(value, level: level + 1)
        }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
            sink.key(key.stringValue, of: level)
            return Writer(sink: sink, level: level + 1).container(keyedBy: keyType)
        }

        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            sink.key(key.stringValue, of: level)
            return Writer(sink: sink, level: level + 1).unkeyedContainer()
        }

        mutating func superEncoder() -> any Encoder {
            sink.key("super", of: level)
            return Writer(sink: sink, level: level + 1)
        }

        mutating func superEncoder(forKey key: Key) -> any Encoder {
            sink.key(key.stringValue, of: level)
            return Writer(sink: sink, level: level + 1)
        }
    }

    struct Unkeyed: UnkeyedEncodingContainer {
        let sink: Sink
        let level: Int
        var codingPath: [any CodingKey] { [] }
        private(set) var count = 0

        init(sink: Sink, level: Int) {
            self.sink = sink
            self.level = level
        }

        mutating func encodeNil() throws { sink.member(of: level); count += 1; sink.literal("null") }
        mutating func encode(_ value: String) throws { sink.member(of: level); count += 1; sink.string(value) }
        mutating func encode<T: Encodable>(_ value: T) throws {
            sink.member(of: level)
            count += 1
            try sink.value(value, level: level + 1)
        }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
            sink.member(of: level)
            count += 1
            return Writer(sink: sink, level: level + 1).container(keyedBy: keyType)
        }

        mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
            sink.member(of: level)
            count += 1
            return Writer(sink: sink, level: level + 1).unkeyedContainer()
        }

        mutating func superEncoder() -> any Encoder {
            sink.member(of: level)
            count += 1
            return Writer(sink: sink, level: level + 1)
        }
    }

    struct Single: SingleValueEncodingContainer {
        let sink: Sink
        let level: Int
        var codingPath: [any CodingKey] { [] }

        mutating func encodeNil() throws { sink.close(to: level); sink.literal("null") }
        mutating func encode(_ value: String) throws { sink.close(to: level); sink.string(value) }
        mutating func encode(_ value: Bool) throws { sink.close(to: level); sink.literal(value ? "true" : "false") }
        mutating func encode(_ value: Int) throws { sink.close(to: level); sink.integer(value) }
        mutating func encode(_ value: Double) throws { sink.close(to: level); try sink.double(value) }
        mutating func encode<T: Encodable>(_ value: T) throws {
            sink.close(to: level)
            try sink.value(value, level: level)
        }
    }
}
