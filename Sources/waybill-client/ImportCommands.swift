import ArgumentParser
import Foundation
import WaybillClient
import WaybillCore

extension ExportKind: ExpressibleByArgument {}

/// `waybill-client import FILE`: checks a CSV or XLSX of deliveries and prints the problems per
/// row and column; with `--commit`, places the valid rows.
struct ImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import", abstract: "Import deliveries from a CSV or XLSX file (dispatchers; company accounts for themselves).",
        discussion: "The file is checked first and its problems printed per row and column; nothing is created without --commit. `import template` writes the template.",
        subcommands: [Check.self, Template.self], defaultSubcommand: Check.self)

    static func summary(_ i: OrderImport) -> String {
        "\(i.id)  \(i.status.rawValue)  \(i.rowCount) rows: \(i.validCount) ready, \(i.invalidCount) with problems, \(i.alreadyImportedCount) already imported"
            + (i.createdCount.map { ", \($0) created" } ?? "") + "  total \(i.total.currency) \(ExportPolicy.decimal(i.total.amount))"
    }

    struct Check: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "check", abstract: "Check a file (and with --commit, create its valid rows).")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "A .csv or .xlsx file.") var file: String
        @Flag(help: "Create the valid rows after the check.") var commit = false

        func run() async throws {
            let url = URL(fileURLWithPath: file)
            guard let data = FileManager.default.contents(atPath: url.path) else { throw ValidationError("Cannot read \(file).") }
            try await options.run { session in
                var result = try await session.uploadOrderImport(data, fileName: url.lastPathComponent)
                if !options.json {
                    Output.line(ImportCommand.summary(result))
                    for p in result.problems { Output.line("  row \(p.row)\(p.column.map { ", \($0)" } ?? ""): \(p.message) (\(p.code))") }
                }
                if commit, result.status == .ready, result.validCount > 0 {
                    result = try await session.commitOrderImport(UUID(uuidString: result.id)!)
                    if !options.json { Output.line(ImportCommand.summary(result)) }
                }
                if options.json { Output.json(result) }
            }
        }
    }

    struct Template: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Write the import template to a file.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "Where to write it (.csv or .xlsx decides the format).") var output: String
        @Flag(help: "French columns.") var french = false

        func run() async throws {
            try await options.run { session in
                let data = try await session.orderImportTemplate(french: french, excel: output.lowercased().hasSuffix(".xlsx"))
                guard FileManager.default.createFile(atPath: output, contents: data) else { throw ValidationError("Cannot write \(output).") }
                Output.line("Wrote \(output) (\(data.count) bytes).")
            }
        }
    }
}

/// `waybill-client bulk assign|cancel ID…`: board actions on many orders.
struct BulkCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "bulk", abstract: "Assign or cancel many orders at once (dispatchers).",
                                                    subcommands: [AssignAll.self, CancelAll.self])

    static func ids(_ texts: [String]) throws -> [UUID] {
        try texts.map { text in
            guard let id = UUID(uuidString: text) else { throw ValidationError("Not an order id: \(text)") }
            return id
        }
    }

    static func print(_ result: BulkOrderResult, json: Bool) {
        if json { return Output.json(result) }
        for r in result.results {
            Output.line("\(r.orderId)  \(r.reference ?? "")  \(r.ok ? "done" : "not done: \(r.error?.message ?? "")")")
        }
        Output.line("\(result.succeeded) done, \(result.failed) not possible.")
    }

    struct AssignAll: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "assign", abstract: "Give orders to one driver.")
        @OptionGroup var options: GlobalOptions
        @Option(help: "The driver's account id.") var driver: String
        @Argument(help: "Order ids.") var orders: [String]

        func run() async throws {
            guard let driverID = UUID(uuidString: driver) else { throw ValidationError("Not a driver id: \(driver)") }
            let ids = try BulkCommand.ids(orders)
            try await options.run { session in BulkCommand.print(try await session.bulkAssign(ids, to: driverID), json: options.json) }
        }
    }

    struct CancelAll: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "cancel", abstract: "Cancel orders, with one reason.")
        @OptionGroup var options: GlobalOptions
        @Option(help: "Why (told to the customers).") var reason: String
        @Argument(help: "Order ids.") var orders: [String]

        func run() async throws {
            let ids = try BulkCommand.ids(orders)
            try await options.run { session in BulkCommand.print(try await session.bulkCancel(ids, reason: reason), json: options.json) }
        }
    }
}

/// `waybill-client export shipments|ledger|statements`: a CSV of a period, streamed to a file or stdout.
struct ExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "export", abstract: "Shipments, the ledger or statement lines of a period as CSV.")
    @OptionGroup var options: GlobalOptions
    @Argument(help: "shipments, ledger or statements.") var kind: ExportKind
    @Option(help: "First day, YYYY-MM-DD.") var from: String?
    @Option(help: "Last day, YYYY-MM-DD (included).") var to: String?
    @Option(help: "Shipments: sent, incoming, carrying or all.") var box: ShipmentBox?
    @Option(name: .shortAndLong, help: "Write to this file (default: standard output).") var output: String?

    func run() async throws {
        let handle: FileHandle
        if let output {
            guard FileManager.default.createFile(atPath: output, contents: nil), let file = FileHandle(forWritingAtPath: output) else {
                throw ValidationError("Cannot write \(output).")
            }
            handle = file
        } else {
            handle = FileHandle.standardOutput
        }
        try await options.run { session in
            let bytes = try await session.exportCSV(kind, from: from, to: to, box: box) { chunk in handle.write(Data(chunk)) }
            if output != nil { Output.line("Wrote \(bytes) bytes to \(output!).") }
        }
        if output != nil { try handle.close() }
    }
}
