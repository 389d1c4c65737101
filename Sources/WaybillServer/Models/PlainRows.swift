import FluentPostgresDriver
import Foundation
import SQLKit
import SQLiteKit
import SQLiteNIO
import Vapor
import WaybillCore

/// Rows read as plain values, column after column in the order the statement selected them: no
/// Fluent model, no `Decodable`, no lookup by name. Each value is converted by the driver's own
/// non-generic conversion. Used where a page of rows is read on every request (an order's detail,
/// the order lists): filling a Fluent model there cost a third of a list's time (docs/performance.md).
enum PlainRows {
    static func read(_ select: SQLSelectBuilder, sql: any SQLDatabase) async throws -> [ColumnCursor] {
        let traced = sql as? TracedSQLDatabase
        let base = traced?.base ?? sql
        let serialized = sql.serialize(select.query)
        if let direct = SQLiteReaders.direct(base) {
            return try await direct.run(serialized, traced: traced != nil).rows.map { ColumnCursor(.sqlite($0)) }
        }
        if let sqlite = base as? any SQLiteDatabase {
            let encoder = SQLiteDataEncoder()
            let binds = try serialized.binds.map { try encoder.encode($0) }
            let rows = try await TracedSQLDatabase.span(serialized.sql, system: "sqlite", when: traced != nil) {
                try await sqlite.query(serialized.sql, binds)
            }
            return rows.map { ColumnCursor(.sqlite($0.columns.map(\.data))) }
        }
        guard let postgres = base as? any PostgresDatabase else {
            throw Abort(.internalServerError, reason: "Plain rows need SQLite or PostgreSQL.")
        }
        let rows = try await ListRows.postgresRows(serialized, postgres: postgres, traced: traced != nil)
        return rows.map { ColumnCursor(.postgres(Array($0))) }
    }
}

/// One row's values, read in order: each call reads the next column.
struct ColumnCursor {
    enum Cells {
        case sqlite([SQLiteData])
        case postgres([PostgresCell])
    }

    let cells: Cells
    private(set) var position = 0

    init(_ cells: Cells) { self.cells = cells }

    struct Unreadable: Error, CustomStringConvertible {
        let position: Int
        let expected: String
        var description: String { "column \(position): not a \(expected)" }
    }

    private mutating func next() -> Int {
        defer { position += 1 }
        return position
    }

    /// Moves past a column without reading it.
    mutating func skip() { position += 1 }

    mutating func isNull() -> Bool {
        switch cells {
        case .sqlite(let values): if case .null = values[position] { return true }
        case .postgres(let values): return values[position].bytes == nil
        }
        return false
    }

    mutating func string() throws -> String {
        let at = next()
        switch cells {
        case .sqlite(let values): if let value = String(sqliteData: values[at]) { return value }
        case .postgres(let values): if let value = try? values[at].decode(String.self) { return value }
        }
        throw Unreadable(position: at, expected: "text")
    }

    mutating func int64() throws -> Int64 {
        let at = next()
        switch cells {
        case .sqlite(let values): if case .integer(let value) = values[at] { return Int64(value) }
        case .postgres(let values): if let value = try? values[at].decode(Int64.self) { return value }
        }
        throw Unreadable(position: at, expected: "integer")
    }

    mutating func int() throws -> Int {
        let at = position
        guard let value = Int(exactly: try int64()) else { throw Unreadable(position: at, expected: "integer") }
        return value
    }

    mutating func double() throws -> Double {
        let at = next()
        switch cells {
        case .sqlite(let values): if let value = Double(sqliteData: values[at]) { return value }
        case .postgres(let values): if let value = try? values[at].decode(Double.self) { return value }
        }
        throw Unreadable(position: at, expected: "number")
    }

    mutating func bool() throws -> Bool {
        let at = next()
        switch cells {
        case .sqlite(let values): if case .integer(let value) = values[at] { return value != 0 }
        case .postgres(let values): if let value = try? values[at].decode(Bool.self) { return value }
        }
        throw Unreadable(position: at, expected: "boolean")
    }

    mutating func uuid() throws -> UUID {
        let at = next()
        switch cells {
        case .sqlite(let values):
            if case .text(let text) = values[at], let value = UUID.parsing(text) { return value }
        case .postgres(let values): if let value = try? values[at].decode(UUID.self) { return value }
        }
        throw Unreadable(position: at, expected: "UUID")
    }

    mutating func id<Tag>() throws -> Tagged<Tag, UUID> { Tagged(rawValue: try uuid()) }

    mutating func text<T: RawRepresentable<String>>(_ type: T.Type = T.self) throws -> T {
        let at = position
        guard let value = T(rawValue: try string()) else { throw Unreadable(position: at, expected: "\(T.self)") }
        return value
    }

    /// The next column, nil when it is NULL.
    mutating func optional<T>(_ read: (inout ColumnCursor) throws -> T) rethrows -> T? {
        if isNull() { skip(); return nil }
        return try read(&self)
    }
}

extension UUID {
    /// A UUID from its 36-character text, without Foundation's general parser (a list reads a
    /// hundred of them). Either case of hex digits; nil for anything else.
    static func parsing(_ text: String) -> UUID? {
        var text = text
        return text.withUTF8 { bytes -> UUID? in
            guard bytes.count == 36 else { return nil }
            var raw: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            let parsed = withUnsafeMutableBytes(of: &raw) { out -> Bool in
                var index = 0
                var byte = 0
                while index < 36 {
                    if index == 8 || index == 13 || index == 18 || index == 23 {
                        guard bytes[index] == UInt8(ascii: "-") else { return false }
                        index += 1
                        continue
                    }
                    guard let high = hexValue(bytes[index]), let low = hexValue(bytes[index + 1]) else { return false }
                    out[byte] = high << 4 | low
                    byte += 1
                    index += 2
                }
                return true
            }
            return parsed ? UUID(uuid: raw) : nil
        }
    }

    private static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
