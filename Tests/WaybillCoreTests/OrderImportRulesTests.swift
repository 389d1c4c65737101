import Foundation
import Testing
@testable import WaybillCore

@Suite("Reading spreadsheets and checking imported deliveries")
struct OrderImportRulesTests {
    func rows(_ text: String) throws -> [[String]] {
        try CSVText.rows(Array(text.utf8)).get().map(\.fields)
    }

    @Test("CSV as files really are: quotes, doubled quotes, line breaks in cells, CRLF, a byte order mark, blank lines")
    func csv() throws {
        #expect(try rows("a,b\r\n\"x, y\",\"say \"\"hi\"\"\"\r\n\r\n\"two\nlines\",3") == [["a", "b"], ["x, y", "say \"hi\""], ["two\nlines", "3"]])
        #expect(try rows("\u{FEFF}a,b\n1,2\n") == [["a", "b"], ["1", "2"]])
        #expect(try rows("a,b,\n1,,") == [["a", "b", ""], ["1", "", ""]])
        #expect(try CSVText.rows(Array("a\n\"open,1\nmore".utf8)).map(\.count) == .failure(.unterminatedQuote(line: 2)))
        let lines = try CSVText.rows(Array("h\n\"a\nb\"\nc".utf8)).get().map(\.line)
        #expect(lines == [1, 2, 4], "each row knows the line it starts on")
    }

    @Test("The delimiter is the header's: semicolons from French Excel, tabs, commas")
    func delimiters() throws {
        #expect(try rows("a;b;c\n1;2,5;3") == [["a", "b", "c"], ["1", "2,5", "3"]])
        #expect(try rows("a\tb\n1\t2") == [["a", "b"], ["1", "2"]])
        #expect(try rows("\"a;b\",c\n1,2") == [["a;b", "c"], ["1", "2"]], "a delimiter inside quotes does not count")
    }

    @Test("A file that is not UTF-8 is read as Windows-1252, as Excel on Windows writes it")
    func windows1252() throws {
        let bytes: [UInt8] = Array("name\nZ".utf8) + [0xFC] + Array("rich".utf8)  // "Zürich" in Windows-1252
        #expect(try CSVText.rows(bytes).get().map(\.fields) == [["name"], ["Zürich"]])
    }

    @Test("Writing: fields quoted only when needed, and text that looks like a formula defused")
    func writing() {
        #expect(CSVText.line(["a", "b,c", "say \"x\"", "two\nlines"]) == "a,\"b,c\",\"say \"\"x\"\"\",\"two\nlines\"\r\n")
        #expect(CSVText.text("=HYPERLINK(\"http://evil\")") == "'=HYPERLINK(\"http://evil\")")
        #expect(CSVText.text("+41 79 123 45 67") == "'+41 79 123 45 67" && CSVText.text("@home") == "'@home" && CSVText.text("Bern") == "Bern")
    }

    @Test("Headers in English or French, in any case, with accents or spaces")
    func headers() {
        #expect(ImportColumn.named("Recipient Name") == .recipientName)
        #expect(ImportColumn.named("Livraison NPA") == .dropoffPostalCode)
        #expect(ImportColumn.named("référence-externe") == .externalReference)
        #expect(ImportColumn.named("colour") == nil)
    }

    static let me = ImportCustomer(id: UserID(UUID()), email: "shop@acme.example", isCompany: true, vetted: true,
                                   accountAddress: Address(street: "Bahnhofstrasse 1", postalCode: "8001", city: "Zürich"))

    func check(_ text: String, importer: OrderImportPolicy.Importer = .company, customers: [String: ImportCustomer] = [:],
               existing: [UserID: Set<String>] = [:]) throws -> ImportCheck {
        let sheet = try ImportSheet.read(try CSVText.rows(Array(text.utf8)).get()).get()
        return sheet.check(importer: importer, me: Self.me, customers: customers, existing: existing, currency: "CHF")
    }

    @Test("Each row is checked by the rules of a single order, problems named by row and column")
    func rowProblems() throws {
        let result = try check("""
            recipient_name,dropoff_street,dropoff_postal_code,dropoff_city,recipient_email,recipient_code,weight_class,payment_method
            Ann,Bundesplatz 3,3005,Bern,,,,
            ,Bundesplatz 3,3005,Bern,not-an-email,oui,gros,twint
            Bob,Bundesplatz 3,3005,Bern,,yes,,
            """)
        #expect(result.rows.count == 1 && result.invalidRows == 2)
        #expect(result.rows[0].order.paymentMethod == .invoice && result.rows[0].order.pickup.city == "Zürich", "companies are billed; the pickup is their address")
        let problems = Set(result.problems.map { "\($0.row) \($0.column ?? "-") \($0.code)" })
        #expect(problems == ["3 recipient_name required", "3 recipient_email invalid_email", "3 weight_class invalid",
                             "3 payment_method online_payment_not_in_import", "4 recipient_email required_for_recipient_code"], "\(problems)")
    }

    @Test("Outside references: once per customer in a file, and rows already imported are skipped")
    func references() throws {
        let text = """
            external_reference,recipient_name,dropoff_street,dropoff_postal_code,dropoff_city
            A,Ann,Bundesplatz 3,3005,Bern
            A,Ann,Bundesplatz 3,3005,Bern
            B,Bob,Bundesplatz 3,3005,Bern
            """
        let result = try check(text, existing: [Self.me.id: ["B"]])
        #expect(result.rows.map(\.externalReference) == ["A"])
        #expect(result.problems.map(\.code) == ["duplicate_in_file"] && result.alreadyImported == [4])
    }

    @Test("Who a row is for: a dispatcher names customers; a company only itself")
    func customers() throws {
        let other = ImportCustomer(id: UserID(UUID()), email: "ann@example.com", isCompany: false, vetted: false, accountAddress: nil)
        let text = """
            customer_email,recipient_name,dropoff_street,dropoff_postal_code,dropoff_city,pickup_street,pickup_postal_code,pickup_city
            ANN@example.com,Ann,Bundesplatz 3,3005,Bern,Rue de Lausanne 1,1201,Genève
            ghost@example.com,Ann,Bundesplatz 3,3005,Bern,,,
            """
        let dispatcher = try check(text, importer: .dispatcher, customers: ["ann@example.com": other])
        #expect(dispatcher.rows.map(\.customer) == [other.id] && dispatcher.rows[0].order.paymentMethod == .cash, "a private customer pays cash")
        #expect(dispatcher.problems.map(\.code) == ["unknown_customer"], "no address problem for an account that does not exist")
        let company = try check(text, customers: ["ann@example.com": other])
        #expect(company.rows.isEmpty && company.problems.map(\.code) == ["not_your_account", "not_your_account"])
        #expect(OrderImportPolicy.importer(Caller(id: UserID(UUID()), role: .customer), isCompany: false) == nil)
        // A company imports once staff have vetted it (the `invoice` capability); until then it is told so.
        let unvetted = Caller(id: UserID(UUID()), role: .customer)
        let vetted = Caller(id: UserID(UUID()), capabilities: Capability.granted(to: .customer).union([.invoice]))
        #expect(OrderImportPolicy.importer(unvetted, isCompany: true) == nil && OrderImportPolicy.awaitsVetting(unvetted, isCompany: true))
        #expect(OrderImportPolicy.importer(vetted, isCompany: true) == .company && !OrderImportPolicy.awaitsVetting(vetted, isCompany: true))
        #expect(OrderImportPolicy.importer(vetted, isCompany: false) == nil && !OrderImportPolicy.awaitsVetting(vetted, isCompany: false))
        let suspended = Caller(id: UserID(UUID()), capabilities: AccountStanding.effective(vetted.capabilities, under: .suspended))
        #expect(OrderImportPolicy.importer(suspended, isCompany: true) == nil && !OrderImportPolicy.awaitsVetting(suspended, isCompany: true))
        #expect(OrderImportPolicy.importer(Caller(id: UserID(UUID()), role: .manager), isCompany: false) == .dispatcher)
        #expect(OrderImportPolicy.importer(Caller(id: UserID(UUID()), role: .driver), isCompany: false) == nil)
    }

    @Test("The header: required columns, repeated ones, unknown ones (reported, ignored), and the size of the file")
    func sheet() throws {
        func problems(_ text: String) throws -> [String] {
            switch ImportSheet.read(try CSVText.rows(Array(text.utf8)).get()) {
            case .success(let sheet): sheet.unknownColumns.map { "\($0.code):\($0.column ?? "")" }
            case .failure(let rejection): rejection.problems.map { "\($0.code):\($0.column ?? "")" }
            }
        }
        #expect(try problems("recipient_name,dropoff_city\nA,B") == ["missing_column:dropoff_street", "missing_column:dropoff_postal_code"])
        #expect(try problems("recipient_name,destinataire_nom,dropoff_street,dropoff_postal_code,dropoff_city\nA,A,B,1,C")
                == ["duplicate_column:recipient_name"])
        #expect(try problems("recipient_name,dropoff_street,dropoff_postal_code,dropoff_city,colour\nA,B,1000,C,red") == ["unknown_column:colour"])
        #expect(try problems("") == ["empty_file:"])
    }

    @Test("A company staff have not vetted gets no invoice by default and is refused one by name; a dispatcher's rows for it are paid in cash")
    func unvettedCompany() throws {
        let shop = ImportCustomer(id: UserID(UUID()), email: "new@shop.example", isCompany: true, vetted: false, accountAddress: nil)
        let text = """
            customer_email,recipient_name,dropoff_street,dropoff_postal_code,dropoff_city,pickup_street,pickup_postal_code,pickup_city,payment_method
            new@shop.example,Ann,Bundesplatz 3,3005,Bern,Rue de Lausanne 1,1201,Genève,
            new@shop.example,Ann,Bundesplatz 3,3005,Bern,Rue de Lausanne 1,1201,Genève,invoice
            """
        let result = try check(text, importer: .dispatcher, customers: ["new@shop.example": shop])
        #expect(result.rows.map(\.order.paymentMethod) == [.cash])
        #expect(result.problems.map { "\($0.row) \($0.code)" } == ["3 company_not_vetted"])
    }

    @Test("The CSV reader stops at the first row, column or value beyond its bounds, and never stores what lies beyond the width")
    func boundedCSV() throws {
        let limits = TableLimits(maxRows: 3, maxColumns: 4, maxValues: 10)
        func read(_ text: String) -> Result<[[String]], CSVText.Failure> {
            CSVText.rows(Array(text.utf8), limits: limits).map { $0.map(\.fields) }
        }
        #expect(try read("a,b,c,d\n1,2,3,4\n").get() == [["a", "b", "c", "d"], ["1", "2", "3", "4"]])
        // Rows counted as they come: the fourth row stops the reading, whatever follows.
        #expect(read("h\n1\n2\n3\n4\n5\n") == .failure(.exceeded(TableOverflow(bound: .rows, rowsRead: 4, valuesRead: 4))))
        // Rows with no value are skipped, uncounted.
        #expect(try read("h\n,,\n\n1\n,\n2\n").get() == [["h"], ["1"], ["2"]])
        // A value beyond the width stops at once; empty fields beyond it are ignored, not stored.
        #expect(read("a,b,c,d,e\n") == .failure(.exceeded(TableOverflow(bound: .columns, rowsRead: 0, valuesRead: 4))))
        let delimiters = "a" + String(repeating: ",", count: CSVText.widestRow - 1) + "\nb\n"
        #expect(try read(delimiters).get() == [["a", "", "", ""], ["b"]], "a line as wide as a spreadsheet's widest is four fields")
        // A row wider than any spreadsheet writes stops at its 16,385th field, not at its end.
        let commas = "a\n" + String(repeating: ",", count: 10_000_000) + "\n"
        #expect(read(commas) == .failure(.exceeded(TableOverflow(bound: .columns, rowsRead: 1, valuesRead: 1))), "a line of ten million commas")
        #expect(read(String(repeating: ",", count: CSVText.widestRow) + "\n") == .failure(.exceeded(TableOverflow(bound: .columns, rowsRead: 0, valuesRead: 0))))
        // A file of blank lines is empty, not an error.
        #expect(try read(String(repeating: "\r\n", count: 100_000)).get().isEmpty)
        // Values counted in all.
        #expect(read("a,b,c,d\n1,2,3,4\n5,6,7,8\n") == .failure(.exceeded(TableOverflow(bound: .values, rowsRead: 2, valuesRead: 11))))
        // The import's own bounds, by the codes the API names them by.
        #expect(OrderImportPolicy.tableLimits == TableLimits(maxRows: 10_001, maxColumns: 64, maxValues: 400_000))
        #expect(ImportProblem.problem(.exceeded(TableOverflow(bound: .columns, rowsRead: 0, valuesRead: 0))).code == "too_many_columns")
        #expect(ImportProblem.boundCodes == ["too_many_rows", "too_many_columns", "too_many_values", "file_too_large"])
    }

    @Test("Both templates are valid files of two deliveries")
    func templates() throws {
        for french in [false, true] {
            let result = try check(ImportTemplate.csv(french: french))
            #expect(result.rows.count == 2 && result.problems.isEmpty, "\(result.problems)")
        }
    }
}
