import Foundation
import Testing
import Vapor
@testable import WaybillServer
import WaybillCore

/// The dependencies that read uploads (ZIPFoundation for workbooks, MultipartKit for the web app's
/// forms) trap or loop on some malformed input instead of throwing; a trap in this test process
/// fails the run, and a loop never ends it. These feed damaged input the way `scripts/attack` does
/// to the readers the server uses (`XLSX.rows` over `ZIPLayout`; `MultipartShape` before MultipartKit).
@Suite("Malformed uploads never reach a dependency that would trap on them")
struct MalformedUploadTests {
    /// A deterministic generator (SplitMix64, as `WaybillCoreTests`' image fuzzing uses: the two test
    /// targets share no module), so a failure names the damage that caused it.
    struct SplitMix64: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    static func le32(_ v: UInt32) -> [UInt8] { (0..<4).map { UInt8(v >> (8 * $0) & 0xFF) } }

    /// Where the end record of `bytes` starts (a workbook the server wrote has no comment).
    static func endRecord(_ bytes: [UInt8]) -> Int { bytes.count - 22 }

    @Test("A workbook whose directory or entries point past the end of the file is not a workbook, and a sound one still reads")
    func workbookOffsets() throws {
        let workbook = [UInt8](try XLSX.workbook(rows: [["reference", "street"], ["A-1", "Rue du Marché 12"]]))
        #expect(try XLSX.rows(workbook).map(\.fields) == [["reference", "street"], ["A-1", "Rue du Marché 12"]])
        let end = Self.endRecord(workbook)
        let directory = Int(workbook[end + 16]) | Int(workbook[end + 17]) << 8 | Int(workbook[end + 18]) << 16 | Int(workbook[end + 19]) << 24

        var pastEnd = workbook
        pastEnd.replaceSubrange(end + 16..<end + 20, with: Self.le32(UInt32(workbook.count + 1_000)))
        #expect(throws: XLSX.Failure.notAWorkbook) { try XLSX.rows(pastEnd) }

        var localPastEnd = workbook
        localPastEnd.replaceSubrange(directory + 42..<directory + 46, with: Self.le32(0x7FFF_0000))
        #expect(throws: XLSX.Failure.notAWorkbook) { try XLSX.rows(localPastEnd) }

        // A deflated part cut short (ZIPFoundation asked for more input for ever), and one damaged inside.
        let sheet = try #require(ZIPLayout.entries(workbook)?.first { $0.name == "xl/worksheets/sheet1.xml" })
        var cut = workbook
        let signature: [UInt8] = [0x50, 0x4B, 0x01, 0x02], name = Array("xl/worksheets/sheet1.xml".utf8)
        func isSheetEntry(_ at: Int) -> Bool {
            Array(workbook[at..<at + 4]) == signature && Array(workbook[at + 46..<at + 46 + name.count]) == name
        }
        let centralSheet = try #require((directory..<end - 4).first(where: isSheetEntry))
        cut.replaceSubrange(centralSheet + 20..<centralSheet + 24, with: Self.le32(UInt32(sheet.data.count / 2)))
        #expect(throws: XLSX.Failure.notAWorkbook) { try XLSX.rows(cut) }
        var damaged = workbook
        damaged[sheet.data.lowerBound + sheet.data.count / 2] ^= 0x5A
        #expect(throws: XLSX.Failure.notAWorkbook) { try XLSX.rows(damaged) }

        var tooLong = workbook
        tooLong.replaceSubrange(directory + 20..<directory + 24, with: Self.le32(UInt32(workbook.count)))
        #expect(throws: XLSX.Failure.notAWorkbook) { try XLSX.rows(tooLong) }
    }

    @Test("Every truncation and 3,000 random damages of a workbook are read or refused, never a trap or an endless loop")
    func damagedWorkbooks() throws {
        let workbook = [UInt8](try XLSX.workbook(rows: (0..<20).map { ["R-\($0)", "Bundesplatz \($0)", "3005", "Bern"] }))
        for length in stride(from: 0, to: workbook.count, by: 7) {
            _ = try? XLSX.rows(Array(workbook.prefix(length)))
        }
        var dice = SplitMix64(state: 50)
        var refused = 0
        for _ in 0..<3_000 {
            var damaged = workbook
            for _ in 0..<Int.random(in: 1...4, using: &dice) {
                let at = Int.random(in: 0..<damaged.count, using: &dice)
                damaged[at] = UInt8.random(in: 0...255, using: &dice)
            }
            if !ZIPLayout.isSound(damaged) { refused += 1 }
            _ = try? XLSX.rows(damaged)
        }
        #expect(refused > 0, "the damage reached the layout the check guards")
    }

    @Test("A CSV file whose cells hold a NUL (a header, a value) is unreadable, not stored")
    func nulInTables() {
        func code(_ bytes: [UInt8]) -> String? {
            if case .problem(let problem) = OrderImports.read(bytes) { return problem.code }
            return nil
        }
        #expect(code(Array("recipient_name,dropoff_city\nAda,Bern\n".utf8)) == nil)
        #expect(code(Array("recipient_name,dropoff_city\nA\u{0}da,Bern\n".utf8)) == "unreadable_file")
        #expect(code(Array("Re\u{0}cipient,dropoff_city\nAda,Bern\n".utf8)) == "unreadable_file")
    }

    static let form = Array("""
        --XyZ\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\nContent-Type: image/png\r\n\r\nPNG body\r\n\
        --XyZ\r\nContent-Disposition: form-data; name="_csrf"\r\n\r\ntoken\r\n--XyZ--\r\n
        """.utf8)

    struct Form: Decodable {
        var file: File?
        var _csrf: String?
    }

    static func decode(_ body: [UInt8], boundary: String) {
        _ = try? FormDataDecoder().decode(Form.self, from: body, boundary: boundary)
    }

    @Test("Every form body the check lets through is read by MultipartKit without a trap; the known traps are refused")
    func damagedForms() {
        let known: [(String, [UInt8])] = [
            ("", Self.form),
            ("XyZ", Array("--XyZ\r\nContent-Typ".utf8) + [0xC3] + Array(": x\r\n\r\nb\r\n--XyZ--\r\n".utf8)),
        ]
        for (boundary, body) in known {
            #expect(!body.withUnsafeBytes { MultipartShape.isReadable($0, boundary: boundary) })
        }
        Self.decode(Self.form, boundary: "XyZ")
        var dice = SplitMix64(state: 7)
        var refused = 0, read = 0
        for _ in 0..<5_000 {
            var damaged = Self.form
            for _ in 0..<Int.random(in: 1...3, using: &dice) {
                let at = Int.random(in: 0..<damaged.count, using: &dice)
                switch Int.random(in: 0..<3, using: &dice) {
                case 0: damaged[at] = UInt8.random(in: 0...255, using: &dice)
                case 1: damaged.insert(UInt8.random(in: 0x80...0xFF, using: &dice), at: at)
                default: damaged.remove(at: at)
                }
            }
            guard damaged.withUnsafeBytes({ MultipartShape.isReadable($0, boundary: "XyZ") }) else { refused += 1; continue }
            read += 1
            Self.decode(damaged, boundary: "XyZ")
        }
        #expect(refused > 0 && read > 0)
    }

    @Test("Through the web app, a malformed upload gets the error page (400), and the server goes on", arguments: [TestDatabase.sqlite])
    func webUpload(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            try await server.registerCustomer("up@example.com")
            let browser = TestBrowser(server)
            _ = try await browser.signIn("up@example.com")
            var headers = HTTPHeaders()
            headers.replaceOrAdd(name: .cookie, value: browser.cookies.map { "\($0.key)=\($0.value)" }.joined(separator: "; "))
            headers.replaceOrAdd(name: "Sec-Fetch-Site", value: "same-origin")
            let highByte = ByteBuffer(bytes: Array("--x\r\nContent-Disposition: form-data; name=\"a\"\r\n".utf8) + [0xC3, 0xA9] + Array(": b\r\n\r\nb\r\n--x--\r\n".utf8))
            for (type, body) in [("multipart/form-data; boundary=", ByteBuffer(string: "--\r\n\r\n")), ("multipart/form-data; boundary=\"\"", ByteBuffer(string: "x")),
                                 ("multipart/form-data; boundary=x", highByte)] {
                headers.replaceOrAdd(name: .contentType, value: type)
                let reply = try await server.app.testing().sendRequest(.POST, "/orders/new", headers: headers, body: body)
                #expect(reply.status == .badRequest, "\(type)")
                #expect(reply.body.string.contains("malformed"), "\(type)")
            }
            #expect(try await browser.get("/orders").status == .ok)
        }
    }
}
