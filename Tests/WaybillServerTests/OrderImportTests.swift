import Fluent
import Foundation
import Testing
import Vapor
@testable import WaybillServer
import WaybillCore

@Suite("Bulk import of deliveries and bulk actions on the board")
struct OrderImportTests {
    /// A French company's file, as French Excel saves it: semicolons, French headers, a few mistakes.
    static let frenchFile = """
        reference_externe;livraison_rue;livraison_npa;livraison_localite;destinataire_nom;poids;paiement;remarques;notre_colonne
        A-1;Rue du Marché 12;1204;Genève;Marie Dupont;petit;;;x
        A-2;;1204;Genève;Paul;moyen;;;
        A-3;Bundesplatz 3;3005;Bern;Hans;énorme;carte;;
        A-1;Bundesplatz 3;3005;Bern;Eva;;;;
        "A-5";"Quai ""du"" Mont-Blanc 1";1201;Genève;Léa Martin;grand;facture;"Sonner; deux fois";

        """

    static func upload(_ server: TestServer, _ bytes: [UInt8], name: String = "deliveries.csv", token: String) async throws -> Reply {
        try await server.upload("/order-imports", parts: [.file("file", bytes, type: "text/csv", filename: name)], token: token)
    }

    static func importedOrders(_ server: TestServer) async throws -> [Order] {
        try await Order.query(on: server.db).filter(\.$importID != nil).all()
    }

    @Test("A company checks a file: problems per row and column, nothing created; confirming creates the valid rows once, like orders placed alone",
          arguments: TestDatabase.both)
    func companyImport(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            try await server.registerCustomer("shop@acme.example", isCompany: true)
            let shop = try await server.login("shop@acme.example")

            let checked = try await Self.upload(server, Array(Self.frenchFile.utf8), token: shop.access)
            #expect(checked.status == .created, "\(checked)")
            let json = checked.json
            #expect(json["status"].string == "ready" && json["rowCount"].int == 5)
            #expect(json["validCount"].int == 2 && json["invalidCount"].int == 3 && json["alreadyImportedCount"].int == 0)
            let problems = Set(json["problems"].array.map { "\($0["row"].int ?? -1) \($0["column"].string ?? "-") \($0["code"].string ?? "")" })
            #expect(problems == ["1 notre_colonne unknown_column", "3 dropoff_street required", "4 weight_class invalid",
                                 "4 payment_method online_payment_not_in_import", "5 external_reference duplicate_in_file"], "\(problems)")
            #expect(json["problems"].array.allSatisfy { !($0["message"].string ?? "").isEmpty })
            #expect(try await Order.query(on: server.db).count() == 0, "nothing is created before the owner confirms")
            let id = try #require(json["id"].string)
            #expect(try await server.send(.GET, "/order-imports/\(id)", token: cast.customer.access).status == .forbidden, "a private customer imports nothing")
            let managerLooks = try await server.send(.GET, "/order-imports/\(id)", token: cast.manager.access)
            #expect(managerLooks.status == .notFound, "an import is its owner's")

            let committed = try await server.send(.POST, "/order-imports/\(id)/commit", token: shop.access)
            #expect(committed.status == .ok && committed.json["status"].string == "committed" && committed.json["createdCount"].int == 2, "\(committed)")
            let orders = try await Self.importedOrders(server)
            #expect(Set(orders.compactMap(\.externalReference)) == ["A-1", "A-5"])
            #expect(orders.allSatisfy { $0.status == .pending && $0.paymentMethod == .invoice && $0.pickup.city == "Zürich" })
            let quay = try #require(orders.first { $0.externalReference == "A-5" })
            #expect(quay.dropoff.street == "Quai \"du\" Mont-Blanc 1" && quay.weightClass == .large && quay.notes == "Sonner; deux fois")
            // Each order as if placed alone: its leg, its timeline, its invoice line in the ledger.
            for order in orders {
                #expect(try await Leg.query(on: server.db).filter(\.$orderID == order.id!).count() == 1)
                #expect(try await OrderEvent.query(on: server.db).filter(\.$orderID == order.id!).filter(\.$type == "created").count() == 1)
                #expect(try await LedgerRecord.query(on: server.db).filter(\.$shipmentID == order.id!).count() == 1)
            }
            // Managers hear of the import once, not once per row.
            let boss = try #require(try await User.query(on: server.db).filter(\.$email == "boss@courier.example").first())
            let notices = try await Notification.query(on: server.db).filter(\.$userID == boss.id!).all()
            #expect(notices.filter { $0.kind == "orders_imported" }.count == 1 && !notices.contains { $0.kind == "order_pending" }, "\(notices.map(\.kind))")
            // The company sees them in its list, with their outside reference.
            let list = try await server.send(.GET, "/orders", token: shop.access)
            #expect(list.json["items"].array.count == 2)

            // Confirming again, or uploading the same file again, creates nothing more.
            let again = try await server.send(.POST, "/order-imports/\(id)/commit", token: shop.access)
            #expect(again.status == .ok && again.json["createdCount"].int == 2)
            let second = try await Self.upload(server, Array(Self.frenchFile.utf8), token: shop.access)
            #expect(second.json["alreadyImportedCount"].int == 2 && second.json["validCount"].int == 0, "\(second)")
            let secondID = try #require(second.json["id"].string)
            let nothing = try await server.send(.POST, "/order-imports/\(secondID)/commit", token: shop.access)
            #expect(nothing.status == .conflict, "\(nothing)")
            #expect(try await Self.importedOrders(server).count == 2)
            let recent = try await server.send(.GET, "/order-imports", token: shop.access)
            #expect(recent.json["items"].array.count == 2 && recent.json["items"][0]["problems"].array.isEmpty)
        }
    }

    @Test("A dispatcher imports an Excel workbook for named customers; unknown accounts and a company's import for others are refused per row",
          arguments: TestDatabase.available)
    func dispatcherWorkbook(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            try await server.registerCustomer("shop@acme.example", isCompany: true)
            let shop = try await server.login("shop@acme.example")
            let rows = [
                ["customer_email", "external_reference", "dropoff_street", "dropoff_postal_code", "dropoff_city", "recipient_name", "recipient_phone", "service",
                 "pickup_street", "pickup_postal_code", "pickup_city"],
                ["SHOP@acme.example", "X1", "Bundesplatz 3", "3005", "Bern", "Hans", "+41 79 123 45 67", "express"],
                ["nobody@example.com", "X2", "Bundesplatz 3", "3005", "Bern", "Hans", "", ""],
                ["ada@example.com", "X1", "Bundesplatz 3", "3005", "Bern", "Ada's friend", "41791234567", "standard"],
                ["", "X3", "Bundesplatz 3", "3005", "Bern", "For the boss", "", "", "Rue de Lausanne 1", "1201", "Genève"],
            ]
            let workbook = try XLSX.workbook(rows: rows)
            let checked = try await Self.upload(server, [UInt8](workbook), name: "june.xlsx", token: cast.manager.access)
            #expect(checked.status == .created && checked.json["format"].string == "xlsx", "\(checked)")
            #expect(checked.json["validCount"].int == 3 && checked.json["invalidCount"].int == 1, "\(checked)")
            #expect(checked.json["problems"].array.map { "\($0["row"].int!) \($0["code"].string!)" } == ["3 unknown_customer"])
            let id = try #require(checked.json["id"].string)
            #expect(try await server.send(.POST, "/order-imports/\(id)/commit", token: cast.manager.access).json["createdCount"].int == 3)
            let orders = try await Self.importedOrders(server)
            let byReference = Dictionary(grouping: orders, by: { $0.externalReference ?? "" })
            let shopUser = try #require(try await User.query(on: server.db).filter(\.$email == "shop@acme.example").first())
            let ada = try #require(try await User.query(on: server.db).filter(\.$email == "ada@example.com").first())
            #expect(byReference["X1"]?.count == 2, "the same reference is another customer's own")
            #expect(byReference["X1"]?.first { $0.customerID == shopUser.id }.map { $0.paymentMethod == .invoice && $0.service == .express } == true)
            #expect(byReference["X1"]?.first { $0.customerID == ada.id }.map { $0.paymentMethod == .cash && $0.recipient.phone == "41791234567" } == true)
            #expect(byReference["X3"]?.first.map { $0.paymentMethod == .cash } == true, "a blank customer is the dispatcher themself")
            // The customers hear of what was placed for them; the dispatcher who imported does not hear of it.
            #expect(try await Notification.query(on: server.db).filter(\.$userID == ada.id!).filter(\.$kind == "orders_imported").count() == 1)

            // A company names only itself.
            let foreign = try await Self.upload(server, Array("customer_email,dropoff_street,dropoff_postal_code,dropoff_city,recipient_name\nada@example.com,Bundesplatz 3,3005,Bern,Hans\n".utf8), token: shop.access)
            #expect(foreign.json["problems"].array.map { $0["code"].string } == ["not_your_account"])
            // Drivers and private customers import nothing.
            #expect(try await Self.upload(server, Array(Self.frenchFile.utf8), token: cast.driver.access).status == .forbidden)
            #expect(try await Self.upload(server, Array(Self.frenchFile.utf8), token: cast.customer.access).status == .forbidden)
        }
    }

    @Test("Files that cannot be imported are rejected whole, with the reason; confirming them is refused; nothing is created", arguments: TestDatabase.available)
    func rejectedFiles(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            func codes(_ text: [UInt8], name: String = "f.csv") async throws -> (String?, [String]) {
                let reply = try await Self.upload(server, text, name: name, token: cast.manager.access)
                #expect(reply.status == .created, "\(reply)")
                let problems = reply.json["problems"].array.compactMap { p -> String? in
                    guard let code = p["code"].string else { return nil }
                    return p["column"].string.map { "\(code):\($0)" } ?? code
                }
                return (reply.json["status"].string, problems)
            }
            #expect(try await codes(Array("dropoff_street,dropoff_city\nA,B\n".utf8)) == ("rejected", ["missing_column:dropoff_postal_code", "missing_column:recipient_name"]))
            #expect(try await codes(Array("recipient_name,dropoff_street,dropoff_postal_code,dropoff_city\n".utf8)) == ("rejected", ["no_rows"]))
            #expect(try await codes(Array("recipient_name,dropoff_street,dropoff_postal_code,dropoff_city\n\"Ann,B,1000,C\n".utf8)) == ("rejected", ["unterminated_quote"]))
            #expect(try await codes([0x50, 0x4B, 0x03, 0x04, 1, 2, 3], name: "broken.xlsx") == ("rejected", ["unreadable_file"]))
            // Beyond a bound of the reader: refused whole, 422 naming the bound (see `boundedFiles`).
            let tooMany = "recipient_name,dropoff_street,dropoff_postal_code,dropoff_city\n" + String(repeating: "A,B,1000,C\n", count: 10_001)
            let refused = try await Self.upload(server, Array(tooMany.utf8), token: cast.manager.access)
            #expect(refused.status == .unprocessableEntity && refused.json["error"]["fields"]["file"].string == "too_many_rows", "\(refused)")
            let rejected = try await Self.upload(server, Array("x\n1\n".utf8), token: cast.manager.access)
            let id = try #require(rejected.json["id"].string)
            #expect(try await server.send(.POST, "/order-imports/\(id)/commit", token: cast.manager.access).status == .conflict)
            #expect(try await server.send(.POST, "/order-imports/\(UUID().uuidString)/commit", token: cast.manager.access).status == .notFound)
            #expect(try await server.send(.GET, "/order-imports/not-a-uuid", token: cast.manager.access).status == .badRequest)
            let other = try await server.upload("/order-imports", parts: [.text("other", "x")], token: cast.manager.access)
            #expect(other.status == .badRequest && other.errorCode == "invalid_multipart", "\(other)")
            let twice = try await server.upload("/order-imports", parts: [.file("file", [1], filename: "a.csv"), .file("file", [2], filename: "b.csv")], token: cast.manager.access)
            #expect(twice.status == .badRequest, "\(twice)")
            #expect(try await Order.query(on: server.db).count() == 0)
        }
    }

    /// A one-sheet workbook of `rows` rows, each the audit's 54 bytes (one inline string in `column`),
    /// `extra` cells before it: 100,000 of them deflate to a few KB.
    static func hostileWorkbook(rows: Int, column: String, before extra: String = "") throws -> [UInt8] {
        let row = "<row>\(extra)<c r=\"\(column)1\" t=\"inlineStr\"><is><t>x</t></is></c></row>"
        let sheet = "<worksheet xmlns=\"http://schemas.openxmlformats.org/spreadsheetml/2006/main\"><sheetData>"
            + String(repeating: row, count: rows) + "</sheetData></worksheet>"
        return [UInt8](try XLSX.workbook(sheetXML: sheet))
    }

    @Test("Files beyond the reader's bounds (the audit's tiny workbooks: 100,000 rows wide to column XFD, 20,000 rows) are refused whole with 422 naming the bound, and not kept",
          arguments: TestDatabase.available)
    func boundedFiles(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            func refusal(_ bytes: [UInt8], name: String) async throws -> String? {
                let reply = try await Self.upload(server, bytes, name: name, token: cast.manager.access)
                #expect(reply.status == .unprocessableEntity && reply.errorCode == "validation_failed", "\(name): \(reply)")
                #expect(reply.json["error"]["message"].string?.isEmpty == false)
                return reply.json["error"]["fields"]["file"].string
            }
            let wide = try Self.hostileWorkbook(rows: 100_000, column: "XFD")
            #expect(wide.count < 64 * 1024, "a few KB: \(wide.count) bytes")
            #expect(try await refusal(wide, name: "wide.xlsx") == "too_many_columns")
            #expect(try await refusal(try Self.hostileWorkbook(rows: 20_000, column: "A"), name: "long.xlsx") == "too_many_rows")
            let header = "recipient_name,dropoff_street,dropoff_postal_code,dropoff_city\n"
            #expect(try await refusal(Array((header + "A,B,1000,C" + String(repeating: ",", count: 70) + "x\n").utf8), name: "wide.csv") == "too_many_columns")
            #expect(try await Self.upload(server, Array("x\n".utf8), token: cast.manager.access).status == .created, "an ordinary file still reads")
            #expect(try await OrderImportRecord.query(on: server.db).count() == 1, "refused files are not kept")
            // Empty fields past the width, as spreadsheets leave them, are skipped, never built; a line of
            // millions of delimiters is wider than any spreadsheet and refused after its 16,384th.
            let trailing = try await Self.upload(server, Array((header + String(repeating: ",", count: 2_000) + "\n").utf8), token: cast.manager.access)
            #expect(trailing.status == .created && trailing.json["problems"].array.map { $0["code"].string } == ["no_rows"], "\(trailing)")
            #expect(try await refusal(Array((header + String(repeating: ",", count: 3_000_000) + "\n").utf8), name: "commas.csv") == "too_many_columns")
            #expect(try await Order.query(on: server.db).count() == 0)
        }
    }

    @Test("The workbook reader stops at the first row, column or value beyond its bounds: it reads no further")
    func workbookReaderStopsEarly() throws {
        let limits = OrderImportPolicy.tableLimits
        // 20,000 rows: stopped at the 10,002nd (the header and 10,000 rows, then one too many).
        #expect(throws: XLSX.Failure.exceeded(TableOverflow(bound: .rows, rowsRead: 10_002, valuesRead: 10_002))) {
            try XLSX.rows(try Self.hostileWorkbook(rows: 20_000, column: "A"), limits: limits)
        }
        // The audit's row, 100,000 times: stopped at its first cell, nothing built.
        #expect(throws: XLSX.Failure.exceeded(TableOverflow(bound: .columns, rowsRead: 0, valuesRead: 0))) {
            try XLSX.rows(try Self.hostileWorkbook(rows: 100_000, column: "XFD"), limits: limits)
        }
        // With a value in column A first, each row would count one more value were the reading to go on: it does not.
        let aThenXFD = try Self.hostileWorkbook(rows: 100_000, column: "XFD", before: "<c r=\"A1\" t=\"inlineStr\"><is><t>a</t></is></c>")
        #expect(throws: XLSX.Failure.exceeded(TableOverflow(bound: .columns, rowsRead: 0, valuesRead: 1))) { try XLSX.rows(aThenXFD, limits: limits) }
        // One cell repeated: each read counts.
        let small = TableLimits(maxRows: 10, maxColumns: 4, maxValues: 100)
        #expect(throws: XLSX.Failure.exceeded(TableOverflow(bound: .values, rowsRead: 0, valuesRead: 101))) {
            try XLSX.rows(try Self.hostileWorkbook(rows: 1, column: "A", before: String(repeating: "<c r=\"B1\"><v>1</v></c>", count: 5_000)), limits: small)
        }
        // A reference with letters beyond the last column a sheet may have is beyond the width too.
        #expect(throws: XLSX.Failure.exceeded(TableOverflow(bound: .columns, rowsRead: 0, valuesRead: 0))) {
            try XLSX.rows(try Self.hostileWorkbook(rows: 1, column: "ZZZZZZZZ"), limits: limits)
        }
        // Rows hold only what lies within the width, up to their last value; styled empty cells take no room.
        let sparse = try Self.hostileWorkbook(rows: 2, column: "C", before: "<c r=\"A1\" t=\"inlineStr\"><is><t>a</t></is></c><c r=\"B1\" s=\"1\"/>")
        #expect(try XLSX.rows(sparse, limits: limits).map(\.fields) == [["a", "", "x"], ["a", "", "x"]])
        // Markup without values (empty rows, styled empty cells) is parsed up to `XLSX.maxElements` elements, no further.
        let empty = "<worksheet><sheetData>" + String(repeating: "<row/>", count: XLSX.maxElements) + "</sheetData></worksheet>"
        #expect(throws: XLSX.Failure.tooLarge) { try XLSX.rows([UInt8](try XLSX.workbook(sheetXML: empty)), limits: limits) }
        // The template reads as written.
        #expect(try XLSX.rows([UInt8](try OrderImportTemplateFile.xlsx(french: false)), limits: limits).count == 3)
    }

    @Test("The templates, in English and French, CSV and Excel, import as they are", arguments: TestDatabase.available)
    func templates(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            try await server.registerCustomer("shop@acme.example", isCompany: true)
            let shop = try await server.login("shop@acme.example")
            for (lang, format, marker) in [("en", "csv", "external_reference,"), ("fr", "csv", "reference_externe;"), ("en", "xlsx", ""), ("fr", "xlsx", "")] {
                let template = try await server.send(.GET, "/order-import-template?lang=\(lang)&format=\(format)")
                #expect(template.status == .ok, "\(template.status)")
                #expect(template.headers.first(name: .contentDisposition)?.contains("attachment") == true)
                let bytes = [UInt8](Data(buffer: template.body))
                if format == "csv" { #expect(String(decoding: bytes, as: UTF8.self).contains(marker)) }
                let checked = try await Self.upload(server, bytes, name: "template.\(format)", token: shop.access)
                #expect(checked.json["validCount"].int == 2 && checked.json["problemCount"].int == 0, "\(lang) \(format): \(checked)")
            }
        }
    }

    @Test("An upload left unconfirmed for a day expires: confirming is refused and housekeeping forgets the file", arguments: TestDatabase.available)
    func expiry(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            try await server.registerCustomer("shop@acme.example", isCompany: true)
            let shop = try await server.login("shop@acme.example")
            let id = try #require(try await Self.upload(server, Array(Self.frenchFile.utf8), token: shop.access).json["id"].string)
            server.clock.advance(by: 25 * 3600)
            let fresh = try await server.login("shop@acme.example")
            let shown = try await server.send(.GET, "/order-imports/\(id)", token: fresh.access)
            #expect(shown.json["status"].string == "expired")
            let late = try await server.send(.POST, "/order-imports/\(id)/commit", token: fresh.access)
            #expect(late.status == .conflict && late.errorCode == "link_expired", "\(late)")
            try await server.clock.run {
                try await OrderImports(services: server.app.waybill, db: server.db, logger: server.app.logger).deleteExpiredFiles()
            }
            let record = try #require(try await OrderImportRecord.find(.init(uuidString: id)!, on: server.db))
            #expect(record.content == nil && record.validCount == 2, "the file is gone, its summary stays")
            #expect(try await Order.query(on: server.db).count() == 0)
        }
    }

    @Test("Confirming from two tabs at once places the rows once", arguments: TestDatabase.both)
    func parallelCommits(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            // The dispatcher has no address of their own: the pickup is in the file.
            let text = "external_reference,recipient_name,dropoff_street,dropoff_postal_code,dropoff_city,pickup_street,pickup_postal_code,pickup_city\n"
                + (1...40).map { "R\($0),Person \($0),Bundesplatz \($0),3005,Bern,Rue de Lausanne 1,1201,Genève" }.joined(separator: "\n")
            let id = try #require(try await Self.upload(server, Array(text.utf8), token: cast.manager.access).json["id"].string)
            let replies = try await withThrowingTaskGroup(of: Reply.self) { group in
                for _ in 0..<4 { group.addTask { try await server.send(.POST, "/order-imports/\(id)/commit", token: cast.manager.access) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(replies.allSatisfy { $0.status == .ok }, "\(replies)")
            #expect(try await Self.importedOrders(server).count == 40)
        }
    }

    @Test("A company pays by invoice and imports once staff have vetted it: refused by name before, accepted after, refused again when taken back",
          arguments: TestDatabase.available)
    func vettedCompany(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            try await server.registerCustomer("new@shop.example", isCompany: true, vetted: false)
            let shop = try await server.login("new@shop.example")
            let file = Array("recipient_name,dropoff_street,dropoff_postal_code,dropoff_city\nAnn,Bundesplatz 3,3005,Bern\n".utf8)
            func refused() async throws {
                let invoice = try await server.send(.POST, "/orders", json: TestServer.orderBody(payment: "invoice"), token: shop.access)
                #expect(invoice.status == .unprocessableEntity && invoice.json["error"]["fields"]["paymentMethod"].string == "company_not_vetted", "\(invoice)")
                let options = try await server.send(.GET, "/me/payment-options", token: shop.access)
                #expect(options.json["methods"].array.compactMap(\.string) == ["card", "twint", "cash"], "\(options)")
                let upload = try await Self.upload(server, file, token: shop.access)
                #expect(upload.status == .forbidden && upload.errorCode == "company_not_vetted", "\(upload)")
            }
            try await refused()
            // A dispatcher's rows for it are paid in cash, and an invoice row is refused by name.
            let forShop = "customer_email,recipient_name,dropoff_street,dropoff_postal_code,dropoff_city,payment_method\n"
                + "new@shop.example,Ann,Bundesplatz 3,3005,Bern,\nnew@shop.example,Ann,Bundesplatz 3,3005,Bern,invoice\n"
            let dispatched = try await Self.upload(server, Array(forShop.utf8), token: cast.manager.access)
            #expect(dispatched.json["validCount"].int == 1 && dispatched.json["problems"].array.map { $0["code"].string } == ["company_not_vetted"], "\(dispatched)")
            // Nobody vets themself, a private customer vets nobody; a manager vets the company.
            let shopID = shop.userID
            #expect(try await server.send(.PUT, "/users/\(shopID)/capabilities/invoice", token: shop.access).errorCode == "cannot_modify_self")
            #expect(try await server.send(.PUT, "/users/\(shopID)/capabilities/invoice", token: cast.customer.access).status == .forbidden)
            let vet = try await server.send(.PUT, "/users/\(shopID)/capabilities/invoice", token: cast.manager.access)
            #expect(vet.status == .ok && vet.json["capabilities"].array.compactMap(\.string).contains("invoice"), "\(vet)")
            #expect(try await AuditRecord.query(on: server.db).filter(\.$action == .capabilityGranted).filter(\.$targetID == shopID).count() == 1,
                    "the vetting is audited")

            let order = try await server.send(.POST, "/orders", json: TestServer.orderBody(payment: "invoice"), token: shop.access)
            #expect(order.status == .created && order.json["order"]["status"].string == "pending", "\(order)")
            let options = try await server.send(.GET, "/me/payment-options", token: shop.access)
            #expect(options.json["methods"].array.compactMap(\.string) == ["card", "twint", "cash", "invoice"])
            let upload = try await Self.upload(server, file, token: shop.access)
            #expect(upload.status == .created && upload.json["validCount"].int == 1, "\(upload)")

            #expect(try await server.send(.DELETE, "/users/\(shopID)/capabilities/invoice", token: cast.manager.access).status == .ok)
            try await refused()
        }
    }

    @Test("Imported orders count against the importing account's daily budget: a file that would pass it is refused whole and stays ready",
          arguments: TestDatabase.available)
    func importBudget(db: TestDatabase) async throws {
        try await TestServer.run(db, adjust: { $0.importedOrdersPerDay = 5 }) { server in
            try await server.registerCustomer("shop@acme.example", isCompany: true)
            let shop = try await server.login("shop@acme.example")
            func file(_ rows: Int, _ prefix: String) -> [UInt8] {
                Array(("external_reference,recipient_name,dropoff_street,dropoff_postal_code,dropoff_city\n"
                       + (1...rows).map { "\(prefix)\($0),Ann,Bundesplatz 3,3005,Bern" }.joined(separator: "\n")).utf8)
            }
            func commit(_ bytes: [UInt8]) async throws -> (id: String, reply: Reply) {
                let id = try #require(try await Self.upload(server, bytes, token: shop.access).json["id"].string)
                return (id, try await server.send(.POST, "/order-imports/\(id)/commit", token: shop.access))
            }
            #expect(try await commit(file(3, "A")).reply.json["createdCount"].int == 3)
            let (id, over) = try await commit(file(3, "B"))
            #expect(over.status == .tooManyRequests && over.errorCode == "too_many_orders" && over.headers.first(name: .retryAfter) != nil, "\(over)")
            #expect(try await server.send(.GET, "/order-imports/\(id)", token: shop.access).json["status"].string == "ready", "nothing of it was placed")
            #expect(try await commit(file(6, "C")).reply.status == .tooManyRequests, "more than a whole day's budget never fits")
            #expect(try await commit(file(2, "D")).reply.json["createdCount"].int == 2, "what is left of the budget is still there")
            #expect(try await Self.importedOrders(server).count == 5)
            // The budget is the imports' own: an order placed in the app still goes through.
            _ = try await server.placeOrder(shop.access, payment: "invoice")
            // A day later the budget is whole again.
            server.clock.advance(by: 24 * 3600 + 1)
            let fresh = try await server.login("shop@acme.example")
            let later = try await server.send(.POST, "/order-imports/\(id)/commit", token: fresh.access)
            #expect(later.status == .conflict || later.json["createdCount"].int == 3, "\(later)")
        }
    }

    @Test("Bulk actions on the board: assign and cancel a selection, each order by its own rules, with a result per order",
          arguments: TestDatabase.available)
    func bulkActions(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            let cast = try await server.cast()
            let a = try await server.placeOrder(cast.customer.access)
            let b = try await server.placeOrder(cast.customer.access)
            let c = try await server.placeOrder(cast.customer.access)
            _ = try await server.send(.POST, "/orders/\(c)/cancel", json: ["reason": "Changed my mind"], token: cast.customer.access)
            let driver = try #require(try await User.query(on: server.db).filter(\.$email == "luca@courier.example").first())
            let assigned = try await server.send(.POST, "/bulk-order-actions", json: ["action": "assign", "orderIds": [a, b, c, a], "driverId": driver.id!.uuidString],
                                                 token: cast.manager.access)
            #expect(assigned.status == .ok && assigned.json["succeeded"].int == 2 && assigned.json["failed"].int == 1, "\(assigned)")
            #expect(assigned.json["results"][2]["error"]["code"].string == "invalid_transition")
            let statusA = try await server.status(of: a), statusB = try await server.status(of: b)
            #expect(statusA == "assigned" && statusB == "assigned")
            // Again to another driver: a reassignment.
            let mia = try #require(try await User.query(on: server.db).filter(\.$email == "mia@courier.example").first())
            let moved = try await server.send(.POST, "/bulk-order-actions", json: ["action": "assign", "orderIds": [a], "driverId": mia.id!.uuidString], token: cast.manager.access)
            let movedOrder = try await Order.find(OrderID(uuidString: a)!, on: server.db)
            #expect(moved.json["succeeded"].int == 1 && movedOrder?.driverID == mia.id)
            let cancelled = try await server.send(.POST, "/bulk-order-actions", json: ["action": "cancel", "orderIds": [a, b], "reason": "Storm"], token: cast.manager.access)
            #expect(cancelled.json["succeeded"].int == 2 && cancelled.json["results"][0]["status"].string == "cancelled", "\(cancelled)")
            // Rules: dispatchers only, a reason to cancel, a real driver, at most 200.
            #expect(try await server.send(.POST, "/bulk-order-actions", json: ["action": "cancel", "orderIds": [a], "reason": "x"], token: cast.customer.access).status == .forbidden)
            #expect(try await server.send(.POST, "/bulk-order-actions", json: ["action": "cancel", "orderIds": [a]], token: cast.manager.access).status == .unprocessableEntity)
            let notDriver = try await server.send(.POST, "/bulk-order-actions", json: ["action": "assign", "orderIds": [a], "driverId": UUID().uuidString], token: cast.manager.access)
            #expect(notDriver.json["error"]["fields"]["driverId"].string == "not_an_active_driver")
            let many = (0...200).map { _ in UUID().uuidString }
            #expect(try await server.send(.POST, "/bulk-order-actions", json: ["action": "cancel", "orderIds": many, "reason": "x"], token: cast.manager.access).status == .unprocessableEntity)
        }
    }
}
