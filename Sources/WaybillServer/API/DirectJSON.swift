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
    /// One transcoder for every answer (it is safe to share; making one makes two date formatters).
    static let dates = LenientISO8601DateTranscoder()

    static func encode<T: Encodable>(_ value: T, dates: any DateTranscoder = DirectJSON.dates) throws -> [UInt8] {
        let sink = Sink(dates: dates)
        if let direct = value as? any DirectlyWritten {
            try direct.write(to: sink)
        } else {
            try sink.value(value, level: 0)
            sink.close(to: 0)
        }
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

        /// How many containers of the generic path are open.
        var openContainers: Int { closers.count }

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

/// A generated type written field by field, for the hottest answers (an order and its parts): the
/// generic path still asks the runtime for each container's type and goes through a box for each
/// container. Keys and their order are those of the generated `CodingKeys`, and an absent optional
/// is left out, as the synthesized `encode(to:)` does; `DirectJSONTests` compares each with
/// `JSONEncoder`, every optional set and every optional empty. Parts written rarely go through the
/// generic path (`Fields.encodable`).
protocol DirectlyWritten: Encodable {
    func write(to sink: DirectJSON.Sink) throws
}

extension DirectJSON.Sink {
    func object(_ body: (inout Fields) throws -> Void) rethrows {
        bytes.append(UInt8(ascii: "{"))
        var fields = Fields(sink: self)
        try body(&fields)
        bytes.append(UInt8(ascii: "}"))
    }

    func array<T: DirectlyWritten>(_ items: [T]) throws {
        bytes.append(UInt8(ascii: "["))
        for (index, item) in items.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            try item.write(to: self)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    /// An object's members, written in turn.
    struct Fields {
        let sink: DirectJSON.Sink
        private var first = true

        init(sink: DirectJSON.Sink) { self.sink = sink }

        private mutating func key(_ key: StaticString) {
            if first { first = false } else { sink.bytes.append(UInt8(ascii: ",")) }
            sink.bytes.append(UInt8(ascii: "\""))
            key.withUTF8Buffer { sink.bytes.append(contentsOf: $0) }
            sink.bytes.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: ":")])
        }

        mutating func string(_ name: StaticString, _ value: String?) {
            guard let value else { return }
            key(name)
            sink.string(value)
        }

        mutating func text<R: RawRepresentable<String>>(_ name: StaticString, _ value: R?) { string(name, value?.rawValue) }

        mutating func int(_ name: StaticString, _ value: Int?) {
            guard let value else { return }
            key(name)
            sink.integer(value)
        }

        mutating func bool(_ name: StaticString, _ value: Bool?) {
            guard let value else { return }
            key(name)
            sink.literal(value ? "true" : "false")
        }

        mutating func double(_ name: StaticString, _ value: Double?) throws {
            guard let value else { return }
            key(name)
            try sink.double(value)
        }

        mutating func date(_ name: StaticString, _ value: Date?) throws {
            guard let value else { return }
            key(name)
            sink.string(try sink.dates.encode(value))
        }

        mutating func value<T: DirectlyWritten>(_ name: StaticString, _ value: T?) throws {
            guard let value else { return }
            key(name)
            try value.write(to: sink)
        }

        mutating func array<T: DirectlyWritten>(_ name: StaticString, _ values: [T]?) throws {
            guard let values else { return }
            key(name)
            try sink.array(values)
        }

        mutating func texts<R: RawRepresentable<String>>(_ name: StaticString, _ values: [R]) {
            key(name)
            sink.bytes.append(UInt8(ascii: "["))
            for (index, value) in values.enumerated() {
                if index > 0 { sink.bytes.append(UInt8(ascii: ",")) }
                sink.string(value.rawValue)
            }
            sink.bytes.append(UInt8(ascii: "]"))
        }

        /// A part written through its own `encode(to:)` (the generic path).
        mutating func encodable<T: Encodable>(_ name: StaticString, _ value: T?) throws {
            guard let value else { return }
            key(name)
            let level = sink.openContainers
            try sink.value(value, level: level)
            sink.close(to: level)
        }
    }
}

extension Components.Schemas.OrderPage: DirectlyWritten {
    func write(to sink: DirectJSON.Sink) throws {
        try sink.object { f in
            try f.array("items", items)
            f.string("nextCursor", nextCursor)
        }
    }
}

extension Components.Schemas.Order: DirectlyWritten {
    func write(to sink: DirectJSON.Sink) throws {
        try sink.object { f in
            f.string("id", id)
            f.string("reference", reference)
            f.text("status", status)
            try f.date("createdAt", createdAt)
            try f.date("updatedAt", updatedAt)
            try f.value("customer", customer)
            try f.value("driver", driver)
            try f.value("pickup", pickup)
            try f.value("dropoff", dropoff)
            f.text("weightClass", weightClass)
            f.text("service", service)
            try f.value("recipient", recipient)
            f.string("notes", notes)
            f.bool("requireRecipientCode", requireRecipientCode)
            try f.value("price", price)
            try f.double("distanceKm", distanceKm)
            try f.encodable("breakdown", breakdown)
            try f.encodable("insurance", insurance)
            try f.encodable("points", points)
            try f.encodable("plan", plan)
            try f.value("payment", payment)
            try f.encodable("failure", failure)
            f.string("cancellationReason", cancellationReason)
            try f.encodable("proof", proof)
            try f.encodable("photos", photos)
            try f.array("events", events)
            f.texts("availableActions", availableActions)
            try f.encodable("tracking", tracking)
        }
    }
}

extension Components.Schemas.PersonSummary: DirectlyWritten {
    func write(to sink: DirectJSON.Sink) throws {
        sink.object { f in
            f.string("id", id)
            f.string("firstName", firstName)
            f.string("lastName", lastName)
            f.string("email", email)
            f.string("companyName", companyName)
            f.text("role", role)
        }
    }
}

extension Components.Schemas.Address: DirectlyWritten {
    func write(to sink: DirectJSON.Sink) throws {
        try sink.object { f in
            f.string("street", street)
            f.string("postalCode", postalCode)
            f.string("city", city)
            f.string("country", country)
            try f.double("latitude", latitude)
            try f.double("longitude", longitude)
        }
    }
}

extension Components.Schemas.Recipient: DirectlyWritten {
    func write(to sink: DirectJSON.Sink) throws {
        sink.object { f in
            f.string("name", name)
            f.string("email", email)
            f.string("phone", phone)
        }
    }
}

extension Components.Schemas.Money: DirectlyWritten {
    func write(to sink: DirectJSON.Sink) throws {
        sink.object { f in
            f.int("amount", amount)
            f.string("currency", currency)
        }
    }
}

extension Components.Schemas.Payment: DirectlyWritten {
    func write(to sink: DirectJSON.Sink) throws {
        try sink.object { f in
            f.text("method", method)
            f.text("status", status)
            try f.value("amount", amount)
            f.bool("sandbox", sandbox)
            try f.date("paidAt", paidAt)
            try f.date("refundedAt", refundedAt)
            try f.value("cashCollected", cashCollected)
        }
    }
}

extension Components.Schemas.OrderEvent: DirectlyWritten {
    func write(to sink: DirectJSON.Sink) throws {
        try sink.object { f in
            f.int("id", id)
            f.string("type", _type)
            f.text("status", status)
            try f.date("at", at)
            try f.value("actor", actor)
            f.string("note", note)
        }
    }
}
