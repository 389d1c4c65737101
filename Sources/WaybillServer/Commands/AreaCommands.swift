import Fluent
import Foundation
import Vapor
import WaybillCore

/// `waybill areas import FILE.csv` and `waybill areas export [FILE.csv]`: the area hierarchy
/// travellers go between, in the CSV format of docs/areas.md (`WaybillCore.AreaCSV`).
struct AreaCommands: AsyncCommandGroup {
    var help: String { "Import and export the areas trips go between." }
    var commands: [String: any AnyAsyncCommand] {
        ["import": AreaImportCommand(), "import-switzerland": SwissAreasCommand(), "export": AreaExportCommand()]
    }

    /// The Swiss areas Waybill ships (scripts/make-swiss-areas): 26 cantons, their districts and
    /// 2,149 municipalities with postal codes, names in German, French, Italian and English.
    static func switzerland() throws -> [Area] {
        guard let url = Bundle.module.url(forResource: "switzerland", withExtension: "csv", subdirectory: "areas"),
              let text = try? String(contentsOf: url, encoding: .utf8) else { throw CommandError("The Swiss areas are missing from this build.") }
        switch AreaCSV.parse(text) {
        case .success(let areas): return areas
        case .failure(let problems): throw CommandError("The shipped Swiss areas do not parse: \(problems.lines.prefix(3))")
        }
    }
}

struct SwissAreasCommand: AsyncCommand {
    struct Signature: CommandSignature { init() {} }
    var help: String { "Adds or replaces the Swiss cantons, districts and municipalities Waybill ships." }

    func run(using context: CommandContext, signature: Signature) async throws {
        let app = context.application
        let areas = try AreaCommands.switzerland()
        try await migrate(app)
        let (created, updated) = try await Travel.importAreas(areas, services: app.waybill, on: app.db)
        context.console.info("Imported \(areas.count) Swiss areas: \(created) new, \(updated) replaced.")
    }
}

struct AreaImportCommand: AsyncCommand {
    struct Signature: CommandSignature {
        @Argument(name: "file", help: "A CSV file: id,parent_id,level,name[,name_xx…][,latitude,longitude][,keywords]")
        var file: String
        init() {}
    }

    var help: String { "Adds or replaces the areas of a CSV file, all or nothing (docs/areas.md)." }

    func run(using context: CommandContext, signature: Signature) async throws {
        let app = context.application
        guard let data = FileManager.default.contents(atPath: signature.file) else { throw CommandError("Cannot read \(signature.file).") }
        guard data.count <= 64 << 20, let text = String(data: data, encoding: .utf8) else {
            throw CommandError("\(signature.file) is not a UTF-8 text file of at most 64 MiB.")
        }
        let areas: [Area]
        switch AreaCSV.parse(text) {
        case .success(let parsed): areas = parsed
        case .failure(let errors):
            throw CommandError("\(signature.file) was not imported:\n" + errors.lines.map { "  \($0)" }.joined(separator: "\n"))
        }
        try await migrate(app)
        do {
            let (created, updated) = try await Travel.importAreas(areas, services: app.waybill, on: app.db)
            context.console.info("Imported \(areas.count) areas from \(signature.file): \(created) new, \(updated) replaced.")
        } catch let error as AreaImportError {
            throw CommandError("\(signature.file) was not imported:\n" + error.problems.map { "  \($0)" }.joined(separator: "\n"))
        }
    }
}

struct AreaExportCommand: AsyncCommand {
    struct Signature: CommandSignature {
        @Option(name: "output", short: "o", help: "Where to write the CSV (standard output without it)")
        var output: String?
        init() {}
    }

    var help: String { "Writes every area to a CSV file that `areas import` reads back." }

    func run(using context: CommandContext, signature: Signature) async throws {
        let app = context.application
        try await migrate(app)
        let areas = try await AreaRecord.query(on: app.db).sort(\.$id).all().map(\.area)
        let csv = AreaCSV.write(areas)
        if let output = signature.output {
            try Data(csv.utf8).write(to: URL(fileURLWithPath: output))
            context.console.info("Wrote \(areas.count) areas to \(output).")
        } else {
            print(csv, terminator: "")
        }
    }
}
