import Foundation

/// A column of the delivery import (issue "Integrations", item 3): its name in English (the
/// canonical one, in the API and the English template) and in French (the French template);
/// either is recognised, in any case, with or without accents, spaces or dashes.
public enum ImportColumn: String, Sendable, CaseIterable, Codable {
    case externalReference = "external_reference"
    case customerEmail = "customer_email"
    case pickupStreet = "pickup_street"
    case pickupPostalCode = "pickup_postal_code"
    case pickupCity = "pickup_city"
    case pickupCountry = "pickup_country"
    case dropoffStreet = "dropoff_street"
    case dropoffPostalCode = "dropoff_postal_code"
    case dropoffCity = "dropoff_city"
    case dropoffCountry = "dropoff_country"
    case recipientName = "recipient_name"
    case recipientEmail = "recipient_email"
    case recipientPhone = "recipient_phone"
    case weightClass = "weight_class"
    case service
    case paymentMethod = "payment_method"
    case recipientCode = "recipient_code"
    case notes

    public var french: String {
        switch self {
        case .externalReference: "reference_externe"
        case .customerEmail: "email_client"
        case .pickupStreet: "enlevement_rue"
        case .pickupPostalCode: "enlevement_npa"
        case .pickupCity: "enlevement_localite"
        case .pickupCountry: "enlevement_pays"
        case .dropoffStreet: "livraison_rue"
        case .dropoffPostalCode: "livraison_npa"
        case .dropoffCity: "livraison_localite"
        case .dropoffCountry: "livraison_pays"
        case .recipientName: "destinataire_nom"
        case .recipientEmail: "destinataire_email"
        case .recipientPhone: "destinataire_telephone"
        case .weightClass: "poids"
        case .service: "service"
        case .paymentMethod: "paiement"
        case .recipientCode: "code_destinataire"
        case .notes: "remarques"
        }
    }

    /// Every delivery needs these; the pickup defaults to the customer's own address.
    public static let required: [ImportColumn] = [.dropoffStreet, .dropoffPostalCode, .dropoffCity, .recipientName]

    /// The field of `OrderRequest`'s validation that this column fills.
    var field: String {
        switch self {
        case .externalReference: "externalReference"
        case .customerEmail: "customerEmail"
        case .pickupStreet: "pickup.street"
        case .pickupPostalCode: "pickup.postalCode"
        case .pickupCity: "pickup.city"
        case .pickupCountry: "pickup.country"
        case .dropoffStreet: "dropoff.street"
        case .dropoffPostalCode: "dropoff.postalCode"
        case .dropoffCity: "dropoff.city"
        case .dropoffCountry: "dropoff.country"
        case .recipientName: "recipient.name"
        case .recipientEmail: "recipient.email"
        case .recipientPhone: "recipient.phone"
        case .weightClass: "weightClass"
        case .service: "service"
        case .paymentMethod: "paymentMethod"
        case .recipientCode: "requireRecipientCode"
        case .notes: "notes"
        }
    }

    static func column(forField field: String) -> ImportColumn? {
        if field == "pickup.useAccountAddress" { return .pickupStreet }
        return allCases.first { $0.field == field }
    }

    /// The column a header names, in English or French.
    public static func named(_ header: String) -> ImportColumn? {
        let key = normalised(header).replacingOccurrences(of: " ", with: "_").replacingOccurrences(of: "-", with: "_")
        return allCases.first { $0.rawValue == key || $0.french == key }
    }

    static func normalised(_ value: String) -> String {
        value.trimmingWhitespace().folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
    }
}

/// Something wrong in an imported file: the row (its line in the file, the header being 1; 0 for
/// the file as a whole), the column (nil for the whole row or file) and a stable code a client
/// translates (the same codes as the API's field errors, plus the import's own).
public struct ImportProblem: Sendable, Equatable, Codable {
    public var row: Int
    public var column: String?
    public var code: String

    public init(row: Int, column: String?, code: String) {
        self.row = row
        self.column = column
        self.code = code
    }

    /// The file as a whole is not one the server can read (CSV or XLSX).
    public static let unreadable = ImportProblem(row: 0, column: nil, code: "unreadable_file")
    /// A workbook that unpacks beyond the limit (a compressed bomb, or a huge sheet).
    public static let unpacksTooLarge = ImportProblem(row: 0, column: nil, code: "file_too_large")

    public static func problem(_ failure: CSVText.Failure) -> ImportProblem {
        switch failure {
        case .unterminatedQuote(let line): ImportProblem(row: line, column: nil, code: "unterminated_quote")
        case .exceeded(let overflow): ImportProblem(row: 0, column: nil, code: overflow.bound.rawValue)
        }
    }

    /// The codes of a file that breaks a bound of the reader (`OrderImportPolicy.tableLimits`, or
    /// unpacks too large): refused whole with 422, never stored.
    public static let boundCodes: Set<String> = Set(TableLimits.Bound.allCases.map(\.rawValue)).union([unpacksTooLarge.code])
}

/// Why a whole file cannot be imported.
public struct ImportRejection: Error, Sendable, Equatable {
    public var problems: [ImportProblem]
    public init(_ problems: [ImportProblem]) { self.problems = problems }
}

/// Who an import places deliveries for.
public struct ImportCustomer: Sendable, Equatable {
    public var id: UserID
    public var email: String
    public var isCompany: Bool
    /// Whether staff have vetted the account for invoices (`PaymentOptions.vetted`).
    public var vetted: Bool
    public var accountAddress: Address?
    /// Whether the account may place orders now (verified, not restricted or banned).
    public var maySend: Bool

    public init(id: UserID, email: String, isCompany: Bool, vetted: Bool, accountAddress: Address?, maySend: Bool = true) {
        self.id = id
        self.email = email
        self.isCompany = isCompany
        self.vetted = vetted
        self.accountAddress = accountAddress
        self.maySend = maySend
    }
}

/// One row ready to be placed: for whom, under which outside reference, what.
public struct ImportRow: Sendable, Equatable {
    public var line: Int
    public var customer: UserID
    public var externalReference: String?
    public var order: ValidOrder
}

/// The rules of the delivery import: who may import, for whom, what a row must hold, and how big a
/// file may be. The server reads the file (CSV or XLSX), looks up the accounts and references the
/// rows name, and asks here; nothing is created until every row has been checked.
public enum OrderImportPolicy {
    public static let maxRows = 10_000
    public static let maxBytes = 10 * 1024 * 1024
    /// Columns a value may be in (the template has 18; the rest leaves room for a spreadsheet's own notes).
    public static let maxColumns = 64
    /// Values (non-empty cells) a file may hold: 40 a row on average over the most rows.
    public static let maxValues = 400_000
    /// The reader's bounds (second audit, finding 1), checked as the file is read: the header and
    /// `maxRows` rows, `maxColumns` wide, `maxValues` values. A file beyond is refused whole.
    public static let tableLimits = TableLimits(maxRows: maxRows + 1, maxColumns: maxColumns, maxValues: maxValues)
    /// Imported orders an importing account may place per day, whatever the number of files
    /// (second audit, finding 8), unless the operator sets `IMPORTED_ORDERS_PER_DAY`. Apart from the
    /// hourly budget of `POST /orders`, which a single file would use up: one full file a day.
    public static let defaultImportedOrdersPerDay = 10_000
    public static let importBudgetWindowSeconds: Int64 = 24 * 3600
    public static let maxCellLength = 2000
    public static let maxExternalReferenceLength = 100
    /// How long an uploaded file waits to be confirmed.
    public static let keepSeconds: Int64 = 24 * 3600
    /// Problems listed in full; beyond this only counted (the first ones tell what is wrong).
    public static let maxProblemsListed = 1000

    public enum Importer: Sendable, Equatable {
        /// A dispatcher: for any customer the `customer_email` column names (themself when blank).
        case dispatcher
        /// A company customer: for their own account only.
        case company
    }

    /// Who may import: dispatchers for anyone, company customers staff have vetted (the
    /// `invoice` capability) for themselves; nil for everyone else.
    public static func importer(_ caller: Caller, isCompany: Bool) -> Importer? {
        if caller.may(.dispatch) { return .dispatcher }
        if caller.may(.placeOrders), PaymentOptions.paysByInvoice(isCompany: isCompany, vetted: PaymentOptions.vetted(caller.capabilities)) {
            return .company
        }
        return nil
    }

    /// Whether `importer` refused a company only because staff have not vetted it yet.
    public static func awaitsVetting(_ caller: Caller, isCompany: Bool) -> Bool {
        importer(caller, isCompany: isCompany) == nil && caller.may(.placeOrders) && isCompany
    }

    /// Imported deliveries are billed, or paid in cash at the pickup: nobody completes ten thousand
    /// checkouts. Invoice for vetted companies, cash otherwise, when the row does not say.
    public static func defaultPaymentMethod(isCompany: Bool, vetted: Bool) -> PaymentMethod {
        PaymentOptions.paysByInvoice(isCompany: isCompany, vetted: vetted) ? .invoice : .cash
    }

    public static func refusal(_ method: PaymentMethod, isCompany: Bool, vetted: Bool, currency: String) -> String? {
        if method.isOnline { return "online_payment_not_in_import" }
        return PaymentOptions.refusal(method, isCompany: isCompany, vetted: vetted, currency: currency)
    }
}

/// A file's table, its header understood: which column each position holds.
public struct ImportSheet: Sendable {
    public let columns: [ImportColumn?]
    public let rows: [(line: Int, cells: [String])]
    /// Columns of the header that are not the import's (a spreadsheet's own notes): reported, ignored.
    public let unknownColumns: [ImportProblem]

    /// The sheet of a table whose first row is the header. Fails when the header lacks a required
    /// column, names one twice, or the file has no row or too many.
    public static func read(_ table: [(line: Int, fields: [String])]) -> Result<ImportSheet, ImportRejection> {
        guard let header = table.first else { return .failure(ImportRejection([ImportProblem(row: 0, column: nil, code: "empty_file")])) }
        var problems: [ImportProblem] = []
        var columns: [ImportColumn?] = []
        var seen = Set<ImportColumn>()
        for name in header.fields {
            let column = ImportColumn.named(name)
            if let column, !seen.insert(column).inserted {
                problems.append(ImportProblem(row: header.line, column: column.rawValue, code: "duplicate_column"))
            }
            if column == nil, !name.trimmingWhitespace().isEmpty {
                problems.append(ImportProblem(row: header.line, column: String(name.prefix(100)), code: "unknown_column"))
            }
            columns.append(column)
        }
        for column in ImportColumn.required where !seen.contains(column) {
            problems.append(ImportProblem(row: header.line, column: column.rawValue, code: "missing_column"))
        }
        let rows = table.dropFirst().filter { !$0.fields.allSatisfy { $0.trimmingWhitespace().isEmpty } }.map { ($0.line, $0.fields) }
        if rows.isEmpty { problems.append(ImportProblem(row: 0, column: nil, code: "no_rows")) }
        if rows.count > OrderImportPolicy.maxRows { problems.append(ImportProblem(row: 0, column: nil, code: "too_many_rows")) }
        // Unknown columns are reported but harmless (a spreadsheet's own notes); the rest stop here.
        if problems.contains(where: { $0.code != "unknown_column" }) { return .failure(ImportRejection(problems)) }
        return .success(ImportSheet(columns: columns, rows: rows, unknownColumns: problems))
    }

    public func value(_ column: ImportColumn, in cells: [String]) -> String? {
        guard let index = columns.firstIndex(of: column), index < cells.count else { return nil }
        let value = cells[index].trimmingWhitespace()
        return value.isEmpty ? nil : value
    }

    /// The customer emails the rows name (lowercased), to look up before `check`.
    public var customerEmails: Set<String> {
        Set(rows.compactMap { value(.customerEmail, in: $0.cells).map(Validation.normalizeEmail) })
    }

    /// The outside references the rows carry, to look up before `check`.
    public var externalReferences: Set<String> { Set(rows.compactMap { value(.externalReference, in: $0.cells) }) }
}

/// The result of checking every row: the rows to place, the problems by row and column, and the
/// rows already placed by an earlier import (same customer, same outside reference), which are skipped.
public struct ImportCheck: Sendable {
    public var rows: [ImportRow] = []
    public var problems: [ImportProblem] = []
    public var alreadyImported: [Int] = []
    /// Rows with at least one problem.
    public var invalidRows: Int = 0

    public init() {}
}

extension ImportSheet {
    /// Checks every row.
    ///
    /// - `importer`: who imports, as `OrderImportPolicy.importer` said; `me` is their own account.
    /// - `customers`: the accounts `customerEmails` named, by lowercased email (missing: unknown).
    /// - `existing`: the outside references already placed, per customer.
    public func check(importer: OrderImportPolicy.Importer, me: ImportCustomer, customers: [String: ImportCustomer],
                      existing: [UserID: Set<String>], currency: String) -> ImportCheck {
        var result = ImportCheck()
        result.problems = unknownColumns
        var seenReferences: [UserID: Set<String>] = [:]
        for (line, cells) in rows {
            var problems: [ImportProblem] = []
            func problem(_ column: ImportColumn?, _ code: String) { problems.append(ImportProblem(row: line, column: column?.rawValue, code: code)) }
            for (index, cell) in cells.enumerated() where cell.unicodeScalars.count > OrderImportPolicy.maxCellLength {
                problem(index < columns.count ? columns[index] : nil, "too_long")
            }
            if cells.count > columns.count, cells[columns.count...].contains(where: { !$0.trimmingWhitespace().isEmpty }) {
                problem(nil, "too_many_cells")
            }
            // For whom.
            var customer = me
            var customerKnown = true
            if let email = value(.customerEmail, in: cells).map(Validation.normalizeEmail), email != me.email {
                customerKnown = false
                if importer == .company { problem(.customerEmail, "not_your_account") }
                else if let named = customers[email] { customer = named; customerKnown = true }
                else { problem(.customerEmail, "unknown_customer") }
            }
            if !customer.maySend { problem(.customerEmail, "customer_cannot_send") }
            // Its outside reference, once per customer.
            let reference = value(.externalReference, in: cells)
            if let reference {
                if reference.unicodeScalars.count > OrderImportPolicy.maxExternalReferenceLength { problem(.externalReference, "too_long") }
                else if !seenReferences[customer.id, default: []].insert(reference).inserted { problem(.externalReference, "duplicate_in_file") }
            }
            // The delivery, checked by the same rules as one order placed in the app.
            let weight = Self.choice(value(.weightClass, in: cells), WeightClass.self, default: .small,
                                     aliases: ["petit": .small, "moyen": .medium, "grand": .large, "s": .small, "m": .medium, "l": .large])
            let service = Self.choice(value(.service, in: cells), ServiceLevel.self, default: .standard,
                                      aliases: ["normal": .standard, "urgent": .express])
            let method = Self.choice(value(.paymentMethod, in: cells), PaymentMethod.self,
                                     default: OrderImportPolicy.defaultPaymentMethod(isCompany: customer.isCompany, vetted: customer.vetted),
                                     aliases: ["facture": .invoice, "especes": .cash, "comptant": .cash, "carte": .card])
            let code = Self.yesNo(value(.recipientCode, in: cells))
            if weight == nil { problem(.weightClass, "invalid") }
            if service == nil { problem(.service, "invalid") }
            if method == nil { problem(.paymentMethod, "invalid") }
            if code == nil { problem(.recipientCode, "invalid") }
            if let method, let refusal = OrderImportPolicy.refusal(method, isCompany: customer.isCompany, vetted: customer.vetted, currency: currency) {
                problem(.paymentMethod, refusal)
            }
            let pickupGiven = [ImportColumn.pickupStreet, .pickupPostalCode, .pickupCity].contains { value($0, in: cells) != nil }
            let request = OrderRequest(
                quote: QuoteRequest(
                    pickup: PickupInput(useAccountAddress: !pickupGiven, address: AddressInput(
                        street: value(.pickupStreet, in: cells), postalCode: value(.pickupPostalCode, in: cells),
                        city: value(.pickupCity, in: cells), country: value(.pickupCountry, in: cells))),
                    dropoff: AddressInput(street: value(.dropoffStreet, in: cells), postalCode: value(.dropoffPostalCode, in: cells),
                                          city: value(.dropoffCity, in: cells), country: value(.dropoffCountry, in: cells)),
                    weightClass: weight ?? .small, service: service ?? .standard),
                paymentMethod: method.flatMap { $0.isOnline ? nil : $0 } ?? .cash,
                recipientName: value(.recipientName, in: cells), recipientEmail: value(.recipientEmail, in: cells),
                recipientPhone: value(.recipientPhone, in: cells), notes: value(.notes, in: cells),
                requireRecipientCode: code ?? false)
            var valid: ValidOrder?
            switch request.validated(accountAddress: customer.accountAddress, isCompany: customer.isCompany, vetted: customer.vetted, currency: currency) {
            case .success(let order): valid = order
            case .failure(let failure):
                // Without a known customer there is no account address to miss.
                for (field, code) in failure.errors.fields.sorted(by: { $0.key < $1.key })
                where field != "paymentMethod" && (customerKnown || field != "pickup.useAccountAddress") {
                    problems.append(ImportProblem(row: line, column: ImportColumn.column(forField: field)?.rawValue ?? field, code: code))
                }
                // A refusal met only by the fields left out above is still a refusal of the row.
                if problems.isEmpty { problems.append(ImportProblem(row: line, column: nil, code: "invalid")) }
            }
            guard problems.isEmpty, let valid else {
                result.invalidRows += 1
                result.problems += problems
                continue
            }
            if let reference, existing[customer.id]?.contains(reference) == true {
                result.alreadyImported.append(line)
                continue
            }
            result.rows.append(ImportRow(line: line, customer: customer.id, externalReference: reference, order: valid))
        }
        return result
    }

    /// A value among `T`'s cases (English raw values, or the aliases people write), `fallback` when blank; nil when unknown.
    static func choice<T: RawRepresentable>(_ raw: String?, _: T.Type, default fallback: T, aliases: [String: T]) -> T?
        where T.RawValue == String {
        guard let raw else { return fallback }
        let key = ImportColumn.normalised(raw).lowercased().replacingOccurrences(of: " ", with: "_")
        return T(rawValue: key) ?? aliases[key]
    }

    static func yesNo(_ raw: String?) -> Bool? {
        guard let raw else { return false }
        switch ImportColumn.normalised(raw).lowercased() {
        case "yes", "y", "true", "1", "oui", "o", "vrai", "x": return true
        case "no", "n", "false", "0", "non", "faux": return false
        default: return nil
        }
    }
}

/// The downloadable template: the header in the reader's language and two example rows.
public enum ImportTemplate {
    public static func csv(french: Bool) -> String {
        let delimiter: Character = french ? ";" : ","
        let header = ImportColumn.allCases.map { french ? $0.french : $0.rawValue }
        let examples: [[ImportColumn: String]] = [
            [.externalReference: "SHOP-1001", .dropoffStreet: "Rue du Marché 12", .dropoffPostalCode: "1204", .dropoffCity: "Genève",
             .recipientName: "Marie Dupont", .recipientEmail: "marie@example.com", .recipientPhone: "+41 79 123 45 67",
             .weightClass: "small", .service: "standard", .notes: french ? "Sonner deux fois" : "Ring twice"],
            [.externalReference: "SHOP-1002", .pickupStreet: "Bahnhofstrasse 1", .pickupPostalCode: "8001", .pickupCity: "Zürich",
             .dropoffStreet: "Marktgasse 5", .dropoffPostalCode: "3011", .dropoffCity: "Bern", .recipientName: "Hans Muster",
             .weightClass: "medium", .service: "express", .recipientCode: french ? "non" : "no"],
        ]
        var text = "\u{FEFF}" + CSVText.line(header, delimiter: delimiter)
        for example in examples { text += CSVText.line(ImportColumn.allCases.map { example[$0] ?? "" }, delimiter: delimiter) }
        return text
    }
}

extension ImportCheck {
    /// Each row priced as if placed alone, in the file's order: a customer's plan (`plans`) gives
    /// every row of theirs its discount and included express, and its included deliveries to their
    /// first rows while they last.
    public func quotes(tariff: Tariff, plans: [UserID: PlanBenefit]) -> [Quote] {
        var plans = plans
        return rows.map { row in
            let quote = Pricing.quote(tariff: tariff, weightClass: row.order.weightClass, service: row.order.service,
                                      pickup: row.order.pickup.coordinate, dropoff: row.order.dropoff.coordinate, plan: plans[row.customer])
            if quote.plan?.included == true { plans[row.customer]?.includedLeft -= 1 }
            return quote
        }
    }
}
