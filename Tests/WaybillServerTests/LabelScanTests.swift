import Fluent
import Foundation
import Testing
import Vapor
import WaybillCore
@testable import WaybillServer

/// Shipping labels and scans (issue "Counters, timeslots and QR hand-overs", items 3 and 4): the
/// label PDF read back by independent tools, who may print it, and scans as hand-over proofs.
@Suite("Labels and scans: print a shipment's label, scan it at every hand-over")
struct LabelScanTests {
    /// Renders a PDF's pages (pdftoppm) and decodes every code on them (zbarimg): "TYPE:text" lines.
    static func decode(_ pdf: [UInt8]) throws -> [String] {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("labels-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("label.pdf")
        try Data(pdf).write(to: file)
        #expect(try run("/usr/bin/qpdf", ["--check", file.path]).status == 0, "qpdf accepts the PDF")
        try #require(try run("/usr/bin/pdftoppm", ["-r", "200", "-png", file.path, dir.appendingPathComponent("page").path]).status == 0)
        let pages = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".png") }.sorted()
        var found: [String] = []
        for page in pages {
            let result = try run("/usr/bin/zbarimg", ["-q", dir.appendingPathComponent(page).path])
            found += result.out.split(separator: "\n").map(String.init)
        }
        return found
    }

    static func run(_ tool: String, _ arguments: [String]) throws -> (status: Int32, out: String) {
        guard FileManager.default.isExecutableFile(atPath: tool) else {
            throw TestFailure("\(tool) is missing: install zbar-tools, poppler-utils and qpdf (scripts/test does)")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    struct TestFailure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    static func token(_ server: TestServer, _ order: String) async throws -> String {
        try #require(try await Order.find(OrderID(uuidString: order)!, on: server.db)?.handoverToken)
    }

    static func scans(_ server: TestServer) async throws -> [String] {
        try await server.db.tracedSQL!.select().columns("step", "outcome").from("handover_scans").orderBy("created_at").all()
            .map { "\(try $0.decode(column: "step", as: String.self)):\(try $0.decode(column: "outcome", as: String.self))" }
    }

    @Test("A shipment's label reads back with ordinary decoders: its QR code is the hand-over link (not the shipment's id), its barcode the reference; its sender, driver and dispatch print it, its receiver may not",
          arguments: TestDatabase.available)
    func labelReadsBack(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            try await server.registerCustomer("bea@example.com")
            let bea = try await server.login("bea@example.com")
            let order = try await server.placeOrder(cast.customer.access)
            try await server.advance(order, to: .accepted, cast: cast)
            let reply = try await server.send(.GET, "/orders/\(order)/label?lang=fr", token: cast.customer.access)
            #expect(reply.status == .ok && reply.headers.first(name: .contentType) == "application/pdf")
            let codes = try Self.decode(Array(reply.body.readableBytesView))
            let reference = try #require(try await Order.find(OrderID(uuidString: order)!, on: server.db)?.reference)
            let token = try await Self.token(server, order)
            #expect(codes.contains("QR-Code:http://localhost:8080/h/\(token)"), "\(codes)")
            #expect(codes.contains("CODE-128:\(reference)"), "\(codes)")
            #expect(!codes.joined().contains(order) && !codes.joined().lowercased().contains(order.lowercased()), "never the shipment's id")

            // Four to an A4 sheet; the driver and dispatch may print, the receiver and strangers may not.
            let a4 = try await server.send(.GET, "/orders/\(order)/label?layout=a4", token: cast.driver.access)
            #expect(a4.status == .ok)
            #expect(try await server.send(.GET, "/orders/\(order)/label", token: cast.manager.access).status == .ok)
            #expect(try await server.send(.GET, "/orders/\(order)/label", token: bea.access).status == .forbidden)
            #expect(try await server.send(.GET, "/orders/\(order)/label", token: cast.otherCustomer.access).status == .notFound)
            // Not before it is paid.
            let unpaid = try await server.placeOrder(cast.customer.access, payment: "card")
            #expect(try await server.send(.GET, "/orders/\(unpaid)/label", token: cast.customer.access).status == .conflict)
        }
    }

    @Test("The driver scans the label at pickup and delivery, the receiver at receipt: each scan is kept as the hand-over's proof; a wrong code, a stranger's scan and a replay are refused and kept",
          arguments: TestDatabase.available)
    func scansAreProofs(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            try await server.registerCustomer("bea@example.com")
            let bea = try await server.login("bea@example.com")
            let order = try await server.placeOrder(cast.customer.access)
            try await server.advance(order, to: .accepted, cast: cast)
            let token = try await Self.token(server, order)
            let link = "http://localhost:8080/h/\(token)"

            // Looking the label up: the driver learns it is this parcel and that the scan proves its pickup.
            let found = try await server.send(.POST, "/scans", json: ["code": link], token: cast.driver.access)
            #expect(found.status == .ok && found.json["shipmentId"].string == order && found.json["step"].string == "pickup", "\(found)")
            #expect(try await server.send(.POST, "/scans", json: ["code": link], token: cast.otherCustomer.access).status == .notFound)
            #expect(try await server.send(.POST, "/scans", json: ["code": "http://localhost:8080/h/AAAAAAAAAAAAAAAAAAAAAAAA"], token: cast.driver.access).status == .notFound)
            #expect(try await server.send(.POST, "/scans", json: ["code": "not a label"], token: cast.driver.access).status == .notFound)

            // Pickup with another parcel's code: refused; with this one: the proof of the pickup.
            let other = try await server.placeOrder(cast.customer.access)
            func pickupBody(_ code: String) async throws -> [String: any Sendable] {
                var body = TestServer.cash(try await server.price(of: order))
                body["scannedCode"] = code
                return body
            }
            let wrong = try await server.send(.POST, "/orders/\(order)/pickup", json: try await pickupBody(try await Self.token(server, other)), token: cast.driver.access)
            #expect(wrong.status == .unprocessableEntity && wrong.json["error"]["fields"]["scannedCode"].string == "wrong", "\(wrong)")
            #expect(try await server.status(of: order) == "accepted", "nothing changed")
            let picked = try await server.send(.POST, "/orders/\(order)/pickup",
                                               json: try await pickupBody(link),
                                               token: cast.driver.access)
            #expect(picked.status == .ok, "\(picked)")
            let replay = try await server.send(.POST, "/orders/\(order)/pickup",
                                               json: try await pickupBody(link),
                                               token: cast.driver.access)
            #expect(replay.status == .conflict)
            let pickup = try #require(try await HandOver.query(on: server.db).filter(\.$orderID == OrderID(uuidString: order)!).filter(\.$kind == .pickup).first())
            #expect(pickup.qrCode == token)

            // At the door: the driver's scan now proves delivery.
            #expect(try await server.send(.POST, "/scans", json: ["code": token], token: cast.driver.access).json["step"].string == "delivery")
            let parts: [TestServer.Part] = [.file("signature", SampleImages.signaturePNG, type: "image/png", filename: "s.png"), .text("recipientName", "Bea"),
                                 .text("scannedCode", link)]
            #expect(try await server.upload("/orders/\(order)/deliver", parts: parts, token: cast.driver.access).status == .ok)
            let delivery = try #require(try await HandOver.query(on: server.db).filter(\.$orderID == OrderID(uuidString: order)!).filter(\.$kind == .delivery).first())
            #expect(delivery.qrCode == token)

            // The receiver's scan confirms receipt, once.
            #expect(try await server.send(.POST, "/scans", json: ["code": link], token: bea.access).json["step"].string == "receipt")
            #expect(try await server.send(.POST, "/shipments/\(order)/receipt", json: ["scannedCode": link], token: bea.access).status == .ok)
            #expect(try await server.send(.POST, "/shipments/\(order)/receipt", json: ["scannedCode": link], token: bea.access).status == .conflict)

            #expect(try await Self.scans(server) == [
                "lookup:accepted", "lookup:not_allowed", "lookup:wrong_token", "lookup:wrong_token",
                "pickup:wrong_token", "pickup:accepted", "pickup:replayed",
                "lookup:accepted", "delivery:accepted", "lookup:accepted", "receipt:accepted", "receipt:replayed",
            ])
        }
    }

    @Test("In the web app: a phone's camera opens the label; signed out it asks to sign in and says nothing of the parcel; the driver lands on the parcel with the scan carried into the pickup",
          arguments: TestDatabase.available)
    func webScan(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let order = try await server.placeOrder(cast.customer.access)
            try await server.advance(order, to: .accepted, cast: cast)
            let token = try await Self.token(server, order)
            let reference = try #require(try await Order.find(OrderID(uuidString: order)!, on: server.db)?.reference)
            let anonymous = try await TestBrowser(server).get("/h/\(token)")
            #expect(anonymous.status == .ok && anonymous.html.contains("Sign in") && !anonymous.html.contains(reference))

            let ada = TestBrowser(server)
            _ = try await ada.signIn("ada@example.com")
            let page = try await ada.get("/orders/\(order)")
            #expect(page.html.contains("data-label-pdf"), "the sender prints the label")
            let pdf = try await ada.get("/orders/\(order)/label.pdf")
            #expect(pdf.status == .ok && pdf.headers.first(name: .contentType) == "application/pdf")

            let luca = TestBrowser(server)
            _ = try await luca.signIn("luca@courier.example")
            let opened = try await luca.get("/h/\(token)")
            let location = try #require(opened.location)
            #expect(location.contains("/orders/\(order)") && location.contains("scan=\(token)"))
            let landed = try await luca.get(location)
            #expect(landed.html.contains("data-scanned") && landed.html.contains("name=\"scannedCode\" value=\"\(token)\""))
            let picked = try await luca.post("/driver/orders/\(order)/pickup",
                                             ["cash": OrderPages.decimal(Money(try await server.price(of: order), "CHF")), "scannedCode": token], from: location)
            #expect(picked.status == .seeOther, "\(picked.status)")
            #expect(try await HandOver.query(on: server.db).filter(\.$kind == .pickup).first()?.qrCode == token)

            let stranger = TestBrowser(server)
            _ = try await stranger.signIn("bob@example.com")
            #expect(try await stranger.get("/h/\(token)").status == .notFound)
        }
    }
}
