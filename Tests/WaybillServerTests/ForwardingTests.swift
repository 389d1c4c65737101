import Fluent
import Foundation
import Testing
import Vapor
@testable import WaybillServer
import WaybillCore

/// A personal forwarding address for shipping confirmations (issue "Parcels of every carrier",
/// item 8): a forwarded shop mail, as a mail server pipes it to `waybill inbound-mail`.
@Suite("Forwarding a shipping confirmation to one's own address: the numbers in it are followed")
struct ForwardingTests {
    /// A shop's confirmation as mail clients forward it: multipart, the text quoted-printable,
    /// the HTML in base64.
    static func message(to address: String) -> String {
        let html = Data("<html><body><p>Your order <b>#1001</b> has shipped.</p><p>DHL: <a href=\"https://www.dhl.de/\">00340434292135100124</a></p><style>.x{}</style></body></html>".utf8).base64EncodedString()
        return """
            Return-Path: <ada@example.com>\r
            Delivered-To: \(address)\r
            From: Ada <ada@example.com>\r
            To: \(address)\r
            Subject: Fwd: Your order #1001 has shipped\r
            MIME-Version: 1.0\r
            Content-Type: multipart/alternative;\r
             boundary="b1"\r
            \r
            --b1\r
            Content-Type: text/plain; charset=utf-8\r
            Content-Transfer-Encoding: quoted-printable\r
            \r
            Your order #1001 has shipped. Suivi La Poste : 6A123456789=\r
            01 =E2=80=94 merci !\r
            --b1\r
            Content-Type: text/html; charset=utf-8\r
            Content-Transfer-Encoding: base64\r
            \r
            \(html)\r
            --b1--\r
            """
    }

    @Test("The address is made once and renewed on demand; a forwarded mail's numbers are followed; an unknown address is refused")
    func forwarding() async throws {
        try await TestServer.run(.sqlite, adjust: { $0.inboundMailDomain = "in.waybill.test" }) { server in
            let cast = try await server.cast()
            let first = try await server.send(.GET, "/me/forwarding-address", token: cast.customer.access)
            let address = try #require(first.json["address"].string, "\(first)")
            #expect(address.hasPrefix("parcels+") && address.hasSuffix("@in.waybill.test"))
            #expect(try await server.send(.GET, "/me/forwarding-address", token: cast.customer.access).json["address"].string == address)

            let forwarding = Forwarding(services: server.app.waybill, db: server.db, logger: server.app.logger)
            let result = try await forwarding.receive(Self.message(to: address), recipient: nil)
            #expect(result?.followed == 2, "\(String(describing: result))")
            let parcels = try await server.send(.GET, "/parcels", token: cast.customer.access)
            #expect(Set(parcels.json["items"].array.compactMap { $0["carrier"].string }) == ["dhl", "la_poste"], "\(parcels)")
            #expect(parcels.json["items"][0]["name"].string == "Fwd: Your order #1001 has shipped")
            #expect(try await forwarding.receive(Self.message(to: "parcels+zzzzzzzzzzzz@in.waybill.test"), recipient: nil) == nil)

            // Renewed: the old address stops working.
            let renewed = try await server.send(.POST, "/me/forwarding-address", token: cast.customer.access)
            #expect(renewed.json["address"].string != address)
            #expect(try await forwarding.receive(Self.message(to: address), recipient: nil) == nil)

            let ada = TestBrowser(server)
            _ = try await ada.signIn("ada@example.com")
            #expect(try await ada.get("/parcels").html.contains(try #require(renewed.json["address"].string)))

            // The command a mail server pipes the message to, on the same database.
            let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            let candidates = (0..<5).map { n in (0..<n).reduce(binary) { u, _ in u.deletingLastPathComponent() }.appendingPathComponent("waybill") }
                + [URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("build/debug/waybill")]
            let executable = try #require(candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) && !$0.hasDirectoryPath }, "build waybill first")
            let current = try #require(renewed.json["address"].string)
            let environment = ProcessInfo.processInfo.environment.merging([
                "DATABASE_URL": "sqlite://" + server.app.waybill.config.storagePath + "/waybill.sqlite",
                "STORAGE_PATH": server.app.waybill.config.storagePath, "INBOUND_MAIL_DOMAIN": "in.waybill.test", "LOG_LEVEL": "error",
            ]) { _, new in new }
            // Waited for off the test's threads (CLI.finish), which a blocking wait would starve.
            let piped = try Spawned(executable.path, ["inbound-mail", "--recipient", current], environment: environment, input: true)
            try piped.stdin?.write(contentsOf: Data("To: \(current)\r\nSubject: Fwd: Swiss Post\r\n\r\nYour parcel RB123456785CH is on its way.\r\n".utf8))
            try piped.stdin?.close()
            let said = await CLI.finish(piped)
            #expect(said.status == 0 && (said.stdout + said.stderr).contains("Followed 1"), "\(said)")
            #expect(try await ParcelRecord.query(on: server.db).filter(\.$number == "RB123456785CH").count() == 1)

            let unknown = try Spawned(executable.path, ["inbound-mail", "--recipient", "parcels+zzzzzzzzzzzz@in.waybill.test"],
                                      environment: environment, input: true)
            try unknown.stdin?.write(contentsOf: Data("Subject: hi\r\n\r\nhello".utf8))
            try unknown.stdin?.close()
            let bounced = await CLI.finish(unknown)
            #expect(bounced.status == 67, "EX_NOUSER: the mail server bounces it: \(bounced)")
        }
    }
}
