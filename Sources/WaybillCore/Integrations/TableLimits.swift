import Foundation

/// Bounds on a table read from a file someone uploaded (a CSV file, a workbook's sheet), checked
/// while it is read: the reader stops at the first row, column or value beyond them, so what a few
/// bytes ask for (a 54-byte row whose one cell claims column 16,384, a line of ten million
/// delimiters, a hundred thousand rows that deflate to nothing) is refused before it is built.
/// Rows hold only what lies within the width, up to their last value, so memory follows the
/// values read, never the columns a file claims.
public struct TableLimits: Sendable, Equatable {
    /// Rows holding at least one value, the header included (rows with none are skipped, uncounted).
    public var maxRows: Int
    /// Columns a value may be in (0-based indices below this); empty cells beyond are ignored.
    public var maxColumns: Int
    /// Values (non-empty cells) read in all, a cell a file repeats counted each time.
    public var maxValues: Int

    public init(maxRows: Int, maxColumns: Int, maxValues: Int) {
        self.maxRows = maxRows
        self.maxColumns = maxColumns
        self.maxValues = maxValues
    }

    /// No bound (files Waybill wrote itself, such as the import template).
    public static let unbounded = TableLimits(maxRows: .max, maxColumns: .max, maxValues: .max)

    /// The bound a file broke; the raw value is the code the API names it by (`fields.file`).
    public enum Bound: String, Sendable, Equatable, CaseIterable {
        case rows = "too_many_rows"
        case columns = "too_many_columns"
        case values = "too_many_values"
    }
}

/// Where reading stopped: the bound broken, and the rows and values read until then (a reader
/// that stops early has read at most one row or value past its bound).
public struct TableOverflow: Error, Sendable, Equatable {
    public var bound: TableLimits.Bound
    public var rowsRead: Int
    public var valuesRead: Int

    public init(bound: TableLimits.Bound, rowsRead: Int, valuesRead: Int) {
        self.bound = bound
        self.rowsRead = rowsRead
        self.valuesRead = valuesRead
    }
}

/// A table built as it is read, within `TableLimits`: the CSV reader and the workbook reader feed
/// it cell by cell and stop at the first `TableOverflow` it throws.
public struct BoundedTable: Sendable {
    public let limits: TableLimits
    public private(set) var rows: [(line: Int, fields: [String])] = []
    /// Rows with a value read so far (the one that broke `maxRows` included).
    public private(set) var rowsRead = 0
    /// Values read so far (the one that broke `maxValues` included).
    public private(set) var valuesRead = 0
    private var current: [String] = []
    private var line = 0
    private var hasValue = false

    public init(limits: TableLimits) { self.limits = limits }

    /// Starts a row that begins on `line` of the file (1-based).
    public mutating func startRow(line: Int) {
        current = []
        self.line = line
        hasValue = false
    }

    /// A cell of the current row at a 0-based column. An empty one is kept only when it is the
    /// next in the row (a CSV field, so a header's blank columns keep their place) and within the
    /// width; a value beyond the width, or one too many, stops the reading. A column seen twice
    /// (a workbook may repeat a reference) keeps its last value, each read counted.
    public mutating func cell(_ value: String, column: Int) throws(TableOverflow) {
        guard column >= 0 else { return }
        if value.isEmpty {
            if column == current.count, column < limits.maxColumns { current.append("") }
            return
        }
        guard column < limits.maxColumns else { throw overflow(.columns) }
        valuesRead += 1
        guard valuesRead <= limits.maxValues else { throw overflow(.values) }
        if column < current.count {
            current[column] = value
        } else {
            current.append(contentsOf: repeatElement("", count: column - current.count))
            current.append(value)
        }
        hasValue = true
    }

    /// Ends the current row: kept if it holds a value, counted against `maxRows`.
    public mutating func endRow() throws(TableOverflow) {
        defer { current = [] }
        guard hasValue else { return }
        rowsRead += 1
        guard rowsRead <= limits.maxRows else { throw overflow(.rows) }
        rows.append((line, current))
    }

    private func overflow(_ bound: TableLimits.Bound) -> TableOverflow {
        TableOverflow(bound: bound, rowsRead: rowsRead, valuesRead: valuesRead)
    }
}
