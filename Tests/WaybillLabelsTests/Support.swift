import Foundation
import Testing
@testable import WaybillLabels

/// A required command-line decoder is not installed. The test fails (it is
/// never skipped) and the message names the Debian package to install.
struct MissingTool: Error, CustomStringConvertible {
    let description: String
}

struct ToolResult {
    let status: Int32
    let stdout: String
    let stderr: String
}

/// The independent tools the tests read results back with.
enum Tool: String {
    case zbarimg, pdftoppm, pdfinfo, pdftotext, qpdf

    var debianPackage: String {
        switch self {
        case .zbarimg: "zbar-tools"
        case .pdftoppm, .pdfinfo, .pdftotext: "poppler-utils"
        case .qpdf: "qpdf"
        }
    }

    func path() throws -> String {
        let searchPath = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let directories = searchPath.split(separator: ":").map(String.init) + ["/usr/bin", "/usr/local/bin", "/bin"]
        for directory in directories {
            let candidate = directory + "/" + rawValue
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw MissingTool(description: "`\(rawValue)` was not found on PATH. Install the Debian package `\(debianPackage)` (sudo apt-get install \(debianPackage)); these tests verify output with independent decoders and cannot run without it.")
    }

    @discardableResult
    func run(_ arguments: [String]) throws -> ToolResult {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try path())
        process.arguments = arguments
        // Files instead of pipes: large outputs cannot dead-lock the child.
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("tool-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let outURL = scratch.appendingPathComponent("out"), errURL = scratch.appendingPathComponent("err")
        try Data().write(to: outURL)
        try Data().write(to: errURL)
        let out = try FileHandle(forWritingTo: outURL), err = try FileHandle(forWritingTo: errURL)
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        try out.close()
        try err.close()
        let stdout = String(decoding: try Data(contentsOf: outURL), as: UTF8.self)
        let stderr = String(decoding: try Data(contentsOf: errURL), as: UTF8.self)
        return ToolResult(status: process.terminationStatus, stdout: stdout, stderr: stderr)
    }
}

/// A temporary directory removed when the test is done with it.
struct Scratch {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("waybill-labels-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func write(_ bytes: [UInt8], named name: String) throws -> URL {
        let file = url.appendingPathComponent(name)
        try Data(bytes).write(to: file)
        return file
    }

    func remove() {
        try? FileManager.default.removeItem(at: url)
    }
}

struct Symbol: Hashable, CustomStringConvertible {
    let type: String
    let data: String
    var description: String { "\(type):\(data)" }
}

enum Decode {
    /// Rasterises every page with pdftoppm and returns the PNG files in page order.
    static func render(_ pdf: URL, dpi: Int, in scratch: Scratch, format: String = "png") throws -> [URL] {
        let prefix = scratch.url.appendingPathComponent("page-\(UUID().uuidString.prefix(8))")
        var arguments = ["-r", String(dpi)]
        arguments += format == "pgm" ? ["-gray"] : ["-png"]
        let result = try Tool.pdftoppm.run(arguments + [pdf.path, prefix.path])
        guard result.status == 0 else {
            throw MissingTool(description: "pdftoppm failed (\(result.status)): \(result.stderr)")
        }
        let name = prefix.lastPathComponent
        let files = try FileManager.default.contentsOfDirectory(atPath: scratch.url.path)
            .filter { $0.hasPrefix(name + "-") }
            .sorted { pageNumber($0) < pageNumber($1) }
        return files.map { scratch.url.appendingPathComponent($0) }
    }

    private static func pageNumber(_ file: String) -> Int {
        let stem = file.split(separator: ".").first.map(String.init) ?? file
        return Int(stem.split(separator: "-").last ?? "") ?? 0
    }

    /// Every symbol zbarimg finds in the image, as "TYPE:data" pairs.
    /// `only` restricts the scan to one symbology (e.g. "qrcode", "code128").
    static func zbar(_ image: URL, only symbology: String? = nil) throws -> [Symbol] {
        var arguments = ["-q"]
        if let symbology { arguments += ["-Sdisable", "-S\(symbology).enable"] }
        let result = try Tool.zbarimg.run(arguments + [image.path])
        // Status 4 means "no symbol found", which the caller's expectations report.
        guard result.status == 0 || result.status == 4 else {
            throw MissingTool(description: "zbarimg failed (\(result.status)): \(result.stderr)")
        }
        return result.stdout.split(separator: "\n", omittingEmptySubsequences: true).compactMap { line -> Symbol? in
            let parts = line.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2 else { return nil }
            return Symbol(type: String(parts[0]), data: String(parts[1]))
        }
    }

    /// A one-page PDF holding just `code` with a 4-module quiet zone.
    static func pdf(for code: QRCode, modulePoints: Double = 3) -> [UInt8] {
        let side = Double(code.size + 8) * modulePoints
        var writer = PDFWriter(title: "QR test")
        writer.beginPage(width: side, height: side)
        writer.qrCode(code, x: 4 * modulePoints, top: side - 4 * modulePoints, moduleSize: modulePoints)
        return writer.data()
    }

    static func pdfInfo(_ pdf: URL) throws -> (pages: Int, size: String) {
        let result = try Tool.pdfinfo.run([pdf.path])
        var pages = -1, size = ""
        for line in result.stdout.split(separator: "\n") {
            if line.hasPrefix("Pages:") { pages = Int(line.dropFirst(6).trimmingCharacters(in: .whitespaces)) ?? -1 }
            if line.hasPrefix("Page size:") { size = line.dropFirst(10).trimmingCharacters(in: .whitespaces) }
        }
        return (pages, size)
    }

    /// `qpdf --check`: status and combined output.
    static func qpdfCheck(_ pdf: URL) throws -> ToolResult {
        try Tool.qpdf.run(["--check", pdf.path])
    }

    static func text(_ pdf: URL) throws -> String {
        let result = try Tool.pdftotext.run(["-enc", "UTF-8", "-layout", pdf.path, "-"])
        return result.stdout.precomposedStringWithCanonicalMapping
    }
}

/// Deterministic 43-character base64url tokens, like 32 random bytes.
func handOverLink(seed: UInt64) -> String {
    let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
    var state = seed &* 6364136223846793005 &+ 1442695040888963407
    var token = ""
    for _ in 0..<43 {
        state = state &* 6364136223846793005 &+ 1442695040888963407
        token.append(alphabet[Int((state >> 33) % 64)])
    }
    return "https://waybill.example/h/" + token
}
