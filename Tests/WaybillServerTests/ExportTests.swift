import Fluent
import Foundation
import Testing
import Vapor
@testable import WaybillServer
import WaybillCore

@Suite("CSV exports: shipments, ledger and statements for a period, streamed")
struct ExportTests {
    /// The rows of a CSV reply, header first.
    static func table(_ reply: Reply) throws -> [[String]] {
        try CSVText.rows([UInt8](Data(buffer: reply.body))).get().map(\.fields)
    }

    static func column(_ table: [[String]], _ name: String) -> [String] {
        guard let index = table.first?.firstIndex(of: name) else { return [] }
        return table.dropFirst().map { index < $0.count ? $0[index] : "" }
    }

    @Test("Shipments: a dispatcher gets every one, a customer their own, for the days asked; thousands of rows come in order, each once",
          arguments: TestDatabase.both)
    func shipments(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let ada = try await server.placeOrder(cast.customer.access, extra: ["recipient": ["name": "=HYPERLINK(\"http://evil\")"]])
            _ = try await server.placeOrder(cast.otherCustomer.access)
            // 2,500 more through an import: three pages of the export.
            let text = "external_reference,recipient_name,dropoff_street,dropoff_postal_code,dropoff_city,pickup_street,pickup_postal_code,pickup_city\n"
                + (1...2500).map { "E\($0),Person \($0),Bundesplatz 3,3005,Bern,Rue de Lausanne 1,1201,Genève" }.joined(separator: "\n")
            let upload = try await OrderImportTests.upload(server, Array(text.utf8), token: cast.manager.access)
            let importID = try #require(upload.json["id"].string)
            #expect(try await server.send(.POST, "/order-imports/\(importID)/commit", token: cast.manager.access).json["createdCount"].int == 2500)

            let all = try await server.send(.GET, "/exports/shipments", token: cast.manager.access)
            #expect(all.status == .ok && all.headers.first(name: .contentType)?.hasPrefix("text/csv") == true, "\(all.status)")
            #expect(all.headers.first(name: .contentDisposition) == "attachment; filename=\"waybill-shipments.csv\"")
            #expect(Array(Data(buffer: all.body).prefix(3)) == [0xEF, 0xBB, 0xBF], "a byte order mark for Excel")
            let rows = try Self.table(all)
            #expect(rows.first == ExportPolicy.columns(.shipments))
            #expect(rows.count == 2503)
            let references = Self.column(rows, "reference")
            #expect(Set(references).count == 2502, "each shipment once across pages")
            let created = Self.column(rows, "created_at")
            #expect(created == created.sorted(), "oldest first")
            #expect(Self.column(rows, "recipient_name").contains("'=HYPERLINK(\"http://evil\")"), "a formula is defused")
            #expect(Self.column(rows, "price").allSatisfy { $0.range(of: #"^\d+\.\d\d$"#, options: .regularExpression) != nil })

            let mine = try Self.table(try await server.send(.GET, "/exports/shipments", token: cast.customer.access))
            #expect(mine.count == 2 && Self.column(mine, "customer_email") == ["ada@example.com"])
            let adaRef = try #require(try await Order.find(OrderID(uuidString: ada)!, on: server.db)).reference
            #expect(Self.column(mine, "reference") == [adaRef])

            // A period: today only, tomorrow only.
            let zone = server.app.waybill.config.displayTimeZone
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = zone
            let today = calendar.dateComponents([.year, .month, .day], from: UnixTime.now)
            let day = String(format: "%04d-%02d-%02d", today.year!, today.month!, today.day!)
            let tomorrow = calendar.date(byAdding: .day, value: 1, to: UnixTime.now)!
            let next = calendar.dateComponents([.year, .month, .day], from: tomorrow)
            let nextDay = String(format: "%04d-%02d-%02d", next.year!, next.month!, next.day!)
            #expect(try Self.table(try await server.send(.GET, "/exports/shipments?from=\(day)&to=\(day)", token: cast.customer.access)).count == 2)
            #expect(try Self.table(try await server.send(.GET, "/exports/shipments?from=\(nextDay)", token: cast.customer.access)).count == 1)

            let bad = try await server.send(.GET, "/exports/shipments?from=2026-02-30", token: cast.manager.access)
            #expect(bad.status == .unprocessableEntity && bad.json["error"]["fields"]["from"].string == "invalid", "\(bad)")
            let backwards = try await server.send(.GET, "/exports/shipments?from=2026-03-02&to=2026-03-01", token: cast.manager.access)
            #expect(backwards.json["error"]["fields"]["to"].string == "before_from")
            #expect(try await server.send(.GET, "/exports/shipments?box=all", token: cast.customer.access).status == .forbidden)
            #expect(try await server.send(.GET, "/exports/parcels", token: cast.manager.access).status == .badRequest)
        }
    }

    @Test("Emails are neutralised like every cell that came from a person: one that starts like a formula gets its apostrophe (second audit, finding 10)",
          arguments: TestDatabase.available)
    func emailsNeutralised(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            try await server.registerCustomer("-2+3+cmd@example.com")
            _ = try await server.placeOrder(try await server.login("-2+3+cmd@example.com").access)
            try await server.registerCustomer("=1+1@acme.example", isCompany: true)
            _ = try await server.placeOrder(try await server.login("=1+1@acme.example").access, payment: "invoice")
            func emails(_ kind: String, _ column: String) async throws -> [String] {
                let reply = try await server.send(.GET, "/exports/\(kind)", token: cast.manager.access)
                #expect(reply.status == .ok, "\(kind): \(reply.status)")
                return Self.column(try Self.table(reply), column).filter { !$0.isEmpty }
            }
            let shipments = try await emails("shipments", "customer_email")
            #expect(shipments.contains("'-2+3+cmd@example.com") && shipments.contains("'=1+1@acme.example"), "\(shipments)")
            #expect(try await emails("statements", "customer_email") == ["'=1+1@acme.example"])
            // No email cell of any export starts like a formula.
            for (kind, column) in [("shipments", "customer_email"), ("shipments", "driver_email"), ("ledger", "account_email"), ("statements", "customer_email")] {
                for email in try await emails(kind, column) { #expect(!"=+-@".contains(email.first ?? " "), "\(kind) \(column): \(email)") }
            }
        }
    }

    @Test("Ledger and statements: managers see every account, a company its own, a private customer nothing; credits net out",
          arguments: TestDatabase.both)
    func ledgerAndStatements(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            try await server.registerCustomer("shop@acme.example", isCompany: true)
            let shop = try await server.login("shop@acme.example")
            let kept = try await server.placeOrder(shop.access, payment: "invoice")
            let dropped = try await server.placeOrder(shop.access, payment: "invoice")
            _ = try await server.send(.POST, "/orders/\(dropped)/cancel", json: ["reason": "Not needed"], token: shop.access)
            _ = try await server.placeOrder(cast.customer.access, payment: "cash")

            let ledger = try Self.table(try await server.send(.GET, "/exports/ledger", token: cast.manager.access))
            #expect(ledger.first == ExportPolicy.columns(.ledger))
            #expect(Self.column(ledger, "kind").sorted() == ["invoice_line", "invoice_line", "refund"], "\(ledger)")
            #expect(Self.column(ledger, "amount").contains { $0.hasPrefix("-") } == false, "amounts are as recorded, with their kind")
            let own = try Self.table(try await server.send(.GET, "/exports/ledger", token: shop.access))
            #expect(Self.column(own, "account_email").allSatisfy { $0 == "shop@acme.example" } && own.count == 4)
            #expect(try await server.send(.GET, "/exports/ledger", token: cast.customer.access).status == .forbidden)
            #expect(try await server.send(.GET, "/exports/statements", token: cast.driver.access).status == .forbidden)

            let keptRef = try #require(try await Order.find(OrderID(uuidString: kept)!, on: server.db)).reference
            for token in [cast.manager.access, shop.access] {
                let lines = try Self.table(try await server.send(.GET, "/exports/statements", token: token))
                #expect(lines.first == ExportPolicy.columns(.statements))
                #expect(Self.column(lines, "shipment_reference") == [keptRef], "the cancelled order nets to nothing and is left out")
                #expect(Self.column(lines, "company") == ["Acme SA"] && Self.column(lines, "month").first?.count == 7)
                let price = try await server.price(of: kept)
                #expect(Self.column(lines, "amount") == [ExportPolicy.decimal(price)])
            }
        }
    }

    @Test("The web app streams the same files to a signed-in person; a visitor is sent to sign in", arguments: TestDatabase.available)
    func webExport(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            _ = try await server.placeOrder(cast.customer.access)
            let boss = TestBrowser(server)
            _ = try await boss.signIn("boss@courier.example")
            #expect(try await boss.get("/orders?box=all").html.contains("formaction=\"/exports/shipments\""))
            let file = try await boss.get("/exports/shipments?box=all&from=&to=")
            #expect(file.status == .ok && file.headers.first(name: .contentType)?.hasPrefix("text/csv") == true)
            #expect(file.html.contains("reference,external_reference") && file.html.components(separatedBy: "\r\n").count == 3)
            #expect(try await boss.get("/statements").html.contains("/exports/statements?from="))
            let visitor = TestBrowser(server)
            #expect(try await visitor.get("/exports/shipments").location?.hasPrefix("/login") == true)
        }
    }
}

@Suite("Import, bulk actions and exports from the SDK and the CLI")
struct IntegrationClientTests {
    @Test("A dispatcher's tools: import a workbook with the SDK, assign and cancel in bulk, export with the CLI", arguments: TestDatabase.available)
    func sdkAndCLI(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            try await server.serving { port in
                let boss = server.sdk(port: port)
                try await boss.signIn(email: "boss@courier.example", password: TestServer.password)
                let template = try await boss.orderImportTemplate(french: true, excel: true)
                #expect(Array(template.prefix(2)) == [0x50, 0x4B], "an xlsx is a zip")
                let rows = [["recipient_name", "dropoff_street", "dropoff_postal_code", "dropoff_city", "pickup_street", "pickup_postal_code", "pickup_city", "external_reference"],
                            ["Hans", "Bundesplatz 3", "3005", "Bern", "Rue de Lausanne 1", "1201", "Genève", "S-1"],
                            ["Eva", "Bundesplatz 3", "3005", "Bern", "Rue de Lausanne 1", "1201", "Genève", "S-2"],
                            ["", "Bundesplatz 3", "3005", "Bern", "Rue de Lausanne 1", "1201", "Genève", "S-3"]]
                let checked = try await boss.uploadOrderImport(try XLSX.workbook(rows: rows), fileName: "sdk.xlsx")
                #expect(checked.validCount == 2 && checked.problems.map(\.code) == ["required"])
                let committed = try await boss.commitOrderImport(try #require(UUID(uuidString: checked.id)))
                let recent = try await boss.orderImports()
                #expect(committed.createdCount == 2 && recent.count == 1)
                let ids = try await Order.query(on: server.db).filter(\.$importID != nil).all().map { UUID(uuidString: $0.id!.uuidString)! }
                let driver = try #require(try await User.query(on: server.db).filter(\.$email == "luca@courier.example").first())
                let assigned = try await boss.bulkAssign(ids, to: UUID(uuidString: driver.id!.uuidString)!)
                #expect(assigned.succeeded == 2)

                let cli = CLI(server: "http://127.0.0.1:\(port)", sessionFile: NSTemporaryDirectory() + "/wb-cli-\(UUID().uuidString).json")
                _ = try await cli.run(["login", "--email", "boss@courier.example", "--password", TestServer.password])
                let file = NSTemporaryDirectory() + "/wb-import-\(UUID().uuidString).csv"
                try "external_reference,recipient_name,dropoff_street,dropoff_postal_code,dropoff_city,pickup_street,pickup_postal_code,pickup_city\nS-1,Hans,Bundesplatz 3,3005,Bern,Rue de Lausanne 1,1201,Genève\nC-1,Ida,Bundesplatz 3,3005,Bern,,,\n"
                    .write(toFile: file, atomically: true, encoding: .utf8)
                let imported = try await cli.run(["import", "check", file, "--commit"])
                #expect(imported.status == 0 && imported.stdout.contains("1 already imported") && imported.stdout.contains("row 3, pickup_street"), "\(imported)")
                let cancelled = try await cli.run(["bulk", "cancel", "--reason", "Storm", ids[0].uuidString])
                #expect(cancelled.stdout.contains("1 done, 0 not possible."), "\(cancelled)")
                let out = NSTemporaryDirectory() + "/wb-export-\(UUID().uuidString).csv"
                let exported = try await cli.run(["export", "shipments", "--box", "all", "--output", out])
                #expect(exported.status == 0, "\(exported)")
                let text = try String(contentsOfFile: out, encoding: .utf8)
                #expect(text.components(separatedBy: "\r\n").filter { !$0.isEmpty }.count == 3 && text.contains("cancelled"), "\(text)")
                let refused = try await cli.run(["export", "ledger", "--from", "2026-13-01"])
                #expect(refused.status != 0)
                _ = cast
            }
        }
    }
}
