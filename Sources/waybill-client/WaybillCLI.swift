import ArgumentParser
import Foundation
import WaybillClient

@main
struct WaybillCLI: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "waybill-client",
        abstract: "Order, dispatch and deliver with a Waybill server from the command line.",
        discussion: """
            Uses the Swift SDK (WaybillClient) only. Sign in once with `login`; the session is kept in ~/.config/waybill/session.json (mode 0600), or the file named by --session-file or WAYBILL_SESSION_FILE, and refreshed as needed. The server comes from --server or WAYBILL_SERVER (default http://localhost:8080). Every command prints for people, or JSON with --json (errors too, on standard error, with the server's code and field errors).

            Everyone:  shipments [--box sent|incoming|carrying|all], shipment ID, receipt ID [--photo FILE] (the receiver)
            Customers: register, verify, login, quote, order create, order show, order cancel, order confirm-payment, orders, track
            Drivers:   duty, accept, pickup [--scanned CODE], deliver, fail, position, scan CODE, label ID
            Timeslots: slots list|hold|release|book|bookings|counters, slots templates|template-add|decide (dispatch)
            Counters:  order create --drop-at COUNTER|--collect-at COUNTER; desk mine|day|check-in|hand-out (counter staff)
            Managers:  assign, users, fleet, and every order command
            Admins:    users suspend|ban|lift|restrictions, admin reauth|reports|decide|hide|restore|audit [--csv FILE]
            Insurance: quote|order create --insure AMOUNT; claims file ORDER|list|show; claims approve|decline (staff); claims table (admins)
            Loyalty points: points (yours and their history); quote|order create --points N; points rules (admins set them)
            Travellers: areas, become-traveller, trip post|list|show|cancel|categories, request list --received|accept|reject|pickup|deliver
            Senders:   find-trips, request send|list|show|cancel
            Integrators: webhook add|list|show|ping|redeliver|on|off|rotate|remove, apikey create|list|revoke
                       (WAYBILL_API_KEY=wb_live_… runs any command as that key)
            """,
        subcommands: [
            Register.self, Verify.self, Login.self, Logout.self, WhoAmI.self,
            QuoteCommand.self, OrderCommand.self, Orders.self, Track.self, ShipmentsCommand.self, ShipmentCommand.self, Receipt.self,
            Duty.self, Accept.self, PickupCommand.self, Deliver.self, Fail.self, PositionCommand.self,
            Assign.self, Users.self, Fleet.self,
            AreasCommand.self, BecomeTraveller.self, PayoutsCommand.self, ParcelCommand.self, TripCommand.self, FindTrips.self, RequestCommand.self,
            WebhookCommand.self, APIKeyCommand.self, ImportCommand.self, BulkCommand.self, ExportCommand.self, PlanCommand.self, ChatCommand.self, RateCommand.self,
            SlotCommand.self, LabelCommand.self, ScanCommand.self, DeskCommand.self, AdminCommand.self, ClaimCommand.self, PointsCommand.self, SubscriptionCommand.self,
        ]
    )
}

// MARK: - Shared options

struct GlobalOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The server, such as https://waybill.example.com (env WAYBILL_SERVER).", valueName: "url"))
    var server: String?

    @Option(name: .long, help: ArgumentHelp("Where the session's tokens are kept (env WAYBILL_SESSION_FILE).", valueName: "path"))
    var sessionFile: String?

    @Flag(name: .long, help: "Print JSON for scripts instead of text for people.")
    var json = false

    var serverURL: URL {
        get throws {
            let raw = server ?? ProcessInfo.processInfo.environment["WAYBILL_SERVER"] ?? "http://localhost:8080"
            var text = raw.hasSuffix("/") ? String(raw.dropLast()) : raw
            if !text.hasSuffix("/api/v1") { text += "/api/v1" }
            guard let url = URL(string: text), url.scheme == "http" || url.scheme == "https", url.host != nil else {
                throw ValidationError("--server must be an http(s) URL, got \(raw)")
            }
            return url
        }
    }

    var sessionFileURL: URL {
        if let path = sessionFile ?? ProcessInfo.processInfo.environment["WAYBILL_SESSION_FILE"], !path.isEmpty {
            return URL(fileURLWithPath: path)
        }
        return FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".config/waybill/session.json")
    }

    /// With `WAYBILL_API_KEY` set, commands run as that key (a server's scripts); otherwise as the
    /// person signed in with `login`.
    func session() throws -> WaybillSession {
        if let key = ProcessInfo.processInfo.environment["WAYBILL_API_KEY"], !key.isEmpty {
            return WaybillSession(serverURL: try serverURL, apiKey: key)
        }
        return WaybillSession(serverURL: try serverURL, tokenStore: FileTokenStore(url: sessionFileURL))
    }

    /// Runs `body` and prints any error for people or as JSON, exiting with 1.
    func run(_ body: (WaybillSession) async throws -> Void) async throws {
        do {
            try await body(try session())
        } catch let error as WaybillError {
            Output.error(error, json: json)
            throw ExitCode(1)
        }
    }
}

enum Output {
    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }()

    static func json(_ value: some Encodable) {
        let data = (try? encoder.encode(value)) ?? Data("null".utf8)
        line(String(decoding: data, as: UTF8.self))
    }

    /// Unbuffered, so `track` shows each event as it comes, even into a pipe.
    static func line(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    static func error(_ error: WaybillError, json: Bool) {
        var text: String
        if json {
            struct Body: Encodable { var code: String; var message: String; var status: Int?; var fields: [String: String]? }
            var body = Body(code: error.code ?? "client_error", message: error.description)
            if case .server(let problem) = error {
                body = Body(code: problem.code, message: problem.message, status: problem.status,
                            fields: problem.fields.isEmpty ? nil : problem.fields)
            }
            text = String(decoding: (try? encoder.encode(["error": body])) ?? Data(), as: UTF8.self)
        } else {
            switch error {
            case .server(let problem):
                text = "error: \(problem.message) (\(problem.code))"
                for (field, reason) in problem.fields.sorted(by: { $0.key < $1.key }) { text += "\n  \(field): \(reason)" }
            case .sessionEnded, .notSignedIn:
                text = "error: \(error.description) Run `waybill-client login`."
            default:
                text = "error: \(error.description)"
            }
        }
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }

    static func time(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyy-MM-dd HH:mm"
        return formatter.string(from: date)
    }

    static func name(_ person: Components.Schemas.PersonSummary) -> String {
        [person.firstName, person.lastName].compactMap { $0 }.joined(separator: " ")
    }

    static func summary(_ s: Shipment) -> String {
        let driver = s.roles.contains(.carrier) ? "" : (s.legs?.first?.assignee).map { " · driver \(name($0))" } ?? ""
        return "\(s.reference)  \(s.status.rawValue.padding(toLength: 16, withPad: " ", startingAt: 0)) "
            + (s.price.map { "\($0.money)  " } ?? "") + "from \(s.sender.firstName) → \(s.receiver.name), \(s.dropoff.city)\(driver)  \(s.id)"
    }

    static func detail(_ s: Shipment) -> String {
        var lines = [
            "Shipment \(s.reference) (\(s.id))",
            "  Status:     \(s.status.rawValue)",
            "  You are:    " + s.roles.map(\.rawValue).joined(separator: ", "),
            "  Sender:     \(name(s.sender))",
            "  From:       \(s.pickup.street), \(s.pickup.postalCode) \(s.pickup.city)",
            "  To:         \(s.receiver.name), \(s.dropoff.street), \(s.dropoff.postalCode) \(s.dropoff.city)",
        ]
        if let price = s.price, let payment = s.payment {
            lines.append("  Price:      \(price.money) (\(payment.method.rawValue), \(payment.status.rawValue))")
        } else if let payment = s.payment {
            lines.append("  Payment:    \(payment.amount.money) (\(payment.method.rawValue), \(payment.status.rawValue))")
        }
        for leg in s.legs ?? [] {
            lines.append("  Leg \(leg.position + 1):      \(leg.kind.rawValue), \(leg.status.rawValue)"
                         + (leg.assignee.map { " · \(name($0)) (\($0.id))" } ?? ""))
        }
        for handOver in s.handOvers ?? [] {
            lines.append("  \((handOver.kind.rawValue + ":").padding(toLength: 11, withPad: " ", startingAt: 0)) \(time(handOver.at))"
                         + (handOver.by.map { " by \($0.firstName)" } ?? "")
                         + (handOver.proof.kinds.isEmpty ? "" : " · proof: " + handOver.proof.kinds.map(\.rawValue).joined(separator: ", "))
                         + (handOver.proof.signedBy.map { ", signed by \($0)" } ?? ""))
        }
        if let eta = s.tracking?.eta { lines.append("  ETA:        \(eta.stop.rawValue) at \(time(eta.arrivesAt)) (\(eta.distanceMeters) m)") }
        if let url = s.tracking?.trackingUrl { lines.append("  Tracking:   \(url)") }
        if let events = s.events, !events.isEmpty {
            lines.append("  History:")
            for event in events { lines.append("    \(time(event.at))  \(event._type)\(event.note.map { " – \($0)" } ?? "")") }
        }
        if !s.availableActions.isEmpty { lines.append("  You can:    \(s.availableActions.map(\.rawValue).joined(separator: ", "))") }
        return lines.joined(separator: "\n")
    }
}

/// An id from the command line (an order's, an account's).
extension Tagged: @retroactive ExpressibleByArgument where RawValue == UUID {
    public init?(argument: String) { self.init(uuidString: argument) }
    public static var defaultValueDescription: String { "an id (UUID)" }
}

func readPassword(_ given: String?) throws -> String {
    if let given { return given }
    if let env = ProcessInfo.processInfo.environment["WAYBILL_PASSWORD"], !env.isEmpty { return env }
    if isatty(STDIN_FILENO) != 0, let typed = getpass("Password: ") {
        // At a terminal: not echoed.
        let password = String(cString: typed)
        guard !password.isEmpty else { throw ValidationError("No password given.") }
        return password
    }
    FileHandle.standardError.write(Data("Password: ".utf8))
    guard let line = readLine(strippingNewline: true), !line.isEmpty else { throw ValidationError("No password given.") }
    return line
}

// MARK: - Account

struct Register: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Create a customer account.",
        discussion: "The server mails a 6-digit code; confirm it with `verify` before signing in.")
    @OptionGroup var options: GlobalOptions
    @Option(help: "Email address.") var email: String
    @Option(help: "Password (or WAYBILL_PASSWORD, or typed on standard input).") var password: String?
    @Option(help: "First name.") var firstName: String
    @Option(help: "Last name.") var lastName: String
    @Option(help: "Street and number (the default pickup address).") var address: String
    @Option(help: "Postal code.") var postalCode: String
    @Option(help: "City.") var city: String
    @Option(help: "Company name, for a company account (may pay by invoice).") var company: String?

    func run() async throws {
        let password = try readPassword(password)
        try await options.run { session in
            try await session.register(Registration(
                firstName: firstName, lastName: lastName, address: address, postalCode: postalCode, city: city,
                email: email, password: password, isCompany: company != nil, companyName: company))
            if options.json { Output.json(["status": "registered", "email": email]) }
            else { Output.line("Registered \(email). Enter the code from the email with `waybill-client verify`.") }
        }
    }
}

struct Verify: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Confirm an email address with the mailed code.")
    @OptionGroup var options: GlobalOptions
    @Option(help: "Email address.") var email: String
    @Argument(help: "The 6-digit code from the email.") var code: String

    func run() async throws {
        try await options.run { session in
            try await session.verifyEmail(email, code: code)
            if options.json { Output.json(["status": "verified", "email": email]) } else { Output.line("Confirmed \(email); you can sign in.") }
        }
    }
}

struct Login: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Sign in and keep the session for the next commands.",
        discussion: "The password comes from --password, WAYBILL_PASSWORD, or a line on standard input.")
    @OptionGroup var options: GlobalOptions
    @Option(help: "Email address.") var email: String
    @Option(help: "Password.") var password: String?

    func run() async throws {
        let password = try readPassword(password)
        try await options.run { session in
            let account = try await session.signIn(email: email, password: password)
            if options.json { Output.json(account) }
            else { Output.line("Signed in as \(account.firstName) \(account.lastName) <\(account.email)>, \(account.role.rawValue).") }
        }
    }
}

struct Logout: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "End the session on the server and forget it here.")
    @OptionGroup var options: GlobalOptions

    func run() async throws {
        try await options.run { session in
            try await session.signOut()
            if options.json { Output.json(["status": "signed_out"]) } else { Output.line("Signed out.") }
        }
    }
}

struct WhoAmI: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "whoami", abstract: "Show the signed-in account.")
    @OptionGroup var options: GlobalOptions

    func run() async throws {
        try await options.run { session in
            let account = try await session.me()
            if options.json { Output.json(account) }
            else { Output.line("\(account.firstName) \(account.lastName) <\(account.email)>, \(account.role.rawValue), id \(account.id)") }
        }
    }
}

// MARK: - Customers

struct DeliveryOptions: ParsableArguments {
    @Option(help: "Drop-off street and number (not with --collect-at).") var toStreet: String?
    @Option(help: "Drop-off postal code.") var toPostalCode: String?
    @Option(help: "Drop-off city.") var toCity: String?
    @Option(name: .customLong("drop-at"), help: "Drop the parcel at this counter (its id) instead of a pickup.") var dropAt: String?
    @Option(name: .customLong("collect-at"), help: "The receiver collects it at this counter (its id).") var collectAt: String?
    @Option(help: "Drop-off latitude (with --to-longitude, priced by distance).") var toLatitude: Double?
    @Option(help: "Drop-off longitude.") var toLongitude: Double?
    @Option(help: "Pickup street; without it, the address on your account.") var fromStreet: String?
    @Option(help: "Pickup postal code.") var fromPostalCode: String?
    @Option(help: "Pickup city.") var fromCity: String?
    @Option(help: "Pickup latitude.") var fromLatitude: Double?
    @Option(help: "Pickup longitude.") var fromLongitude: Double?
    @Option(help: "small, medium or large.") var weight: WeightClass = .small
    @Option(help: "standard or express.") var service: ServiceLevel = .standard
    @Option(help: "Insure the parcel for this value, such as 500 or 499.90 (its premium is part of the price).") var insure: String?
    @Option(help: "Spend this many loyalty points on the price (`points` shows what you hold).") var points: Int?

    var delivery: Delivery {
        func pin(_ latitude: Double?, _ longitude: Double?) -> Coordinate? {
            guard let latitude, let longitude else { return nil }
            return Coordinate(latitude: latitude, longitude: longitude)
        }
        let pickup: Pickup = if let dropAt, let counter = UUID(uuidString: dropAt) {
            .counter(CounterID(rawValue: counter))
        } else if let fromStreet {
            .address(Address(street: fromStreet, postalCode: fromPostalCode ?? "", city: fromCity ?? "",
                             coordinate: pin(fromLatitude, fromLongitude)))
        } else {
            .accountAddress(pin(fromLatitude, fromLongitude))
        }
        return Delivery(pickup: pickup,
                        dropoff: Address(street: toStreet ?? "", postalCode: toPostalCode ?? "", city: toCity ?? "", coordinate: pin(toLatitude, toLongitude)),
                        weightClass: weight, service: service, collectAt: collectAt.flatMap(UUID.init(uuidString:)).map(CounterID.init(rawValue:)),
                        // An amount that does not read as one goes as 0: the server names the field.
                        declaredValue: insure.map { Money.minorUnits(fromText: $0, maximum: Decimal(Tariff.maxAmount) / 100) ?? 0 },
                        redeemPoints: points)
    }
}

extension WeightClass: ExpressibleByArgument {}
extension ServiceLevel: ExpressibleByArgument {}
extension PaymentMethod: ExpressibleByArgument {}
extension FailureReason: ExpressibleByArgument {}
extension Role: ExpressibleByArgument {}
extension OrderStatus: ExpressibleByArgument {}
extension TrackedFilter: ExpressibleByArgument {}
extension ShipmentBox: ExpressibleByArgument {}
extension Capability: ExpressibleByArgument {}

struct ShipmentsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "shipments", abstract: "List one of your boxes, newest first: sent, incoming, carrying or all.")
    @OptionGroup var options: GlobalOptions
    @Option(help: "sent, incoming (addressed to your verified email), carrying, all (dispatch).") var box: ShipmentBox?
    @Option(help: "Only these statuses (repeatable).") var status: [OrderStatus] = []
    @Option(help: "At most this many.") var limit: Int?
    @Option(help: "The next page (printed after a full page).") var cursor: String?

    func run() async throws {
        try await options.run { session in
            let page = try await session.shipments(box: box, status: status, cursor: cursor, limit: limit)
            if options.json { Output.json(page); return }
            if page.items.isEmpty { Output.line("Nothing here.") }
            for shipment in page.items { Output.line(Output.summary(shipment)) }
            if let next = page.nextCursor { Output.line("More: --cursor \(next)") }
            Output.line("Your boxes: " + page.boxes.map(\.rawValue).joined(separator: ", "))
        }
    }
}

struct ShipmentCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "shipment", abstract: "Show one shipment with its legs and hand-overs.")
    @OptionGroup var options: GlobalOptions
    @Argument(help: "The shipment's id.") var shipment: OrderID

    func run() async throws { try await Self.show(shipment, options) }

    static func show(_ id: OrderID, _ options: GlobalOptions) async throws {
        try await options.run { session in
            let shipment = try await session.shipment(id)
            if options.json { Output.json(shipment) } else { Output.line(Output.detail(shipment)) }
        }
    }
}

struct Receipt: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Confirm that a parcel addressed to you reached you (optionally with a photo).")
    @OptionGroup var options: GlobalOptions
    @Argument(help: "The shipment's id.") var shipment: OrderID
    @Option(help: "A JPEG or PNG of what arrived.") var photo: String?

    func run() async throws {
        let bytes = try photo.map { try Data(contentsOf: URL(fileURLWithPath: $0)) }
        try await options.run { session in
            let s = try await session.confirmReceipt(shipment, photo: bytes)
            if options.json { Output.json(s) } else { Output.line("Receipt of \(s.reference) confirmed.") }
        }
    }
}

struct QuoteCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "quote", abstract: "Price a delivery without ordering it.")
    @OptionGroup var options: GlobalOptions
    @OptionGroup var delivery: DeliveryOptions

    func run() async throws {
        try await options.run { session in
            let quote = try await session.quote(delivery.delivery)
            if options.json { Output.json(quote); return }
            Output.line("Price: \(quote.price.money)\(quote.distanceKm.map { " for \($0) km" } ?? "")")
            for line in quote.breakdown { Output.line("  \(line.label): \(Money(line.amount, quote.price.currency))") }
        }
    }
}

struct OrderCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "order", abstract: "Place, show and cancel orders.",
        subcommands: [Create.self, Show.self, Cancel.self, Refund.self, ConfirmPayment.self])

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Order a delivery (customers).",
            discussion: "Cash and invoice orders are confirmed at once. For card and TWINT, open the printed payment URL, then run `order confirm-payment ID`.")
        @OptionGroup var options: GlobalOptions
        @OptionGroup var delivery: DeliveryOptions
        @Option(help: "card, twint, cash or invoice.") var payment: PaymentMethod = .cash
        @Option(help: "Who receives the parcel.") var recipientName: String
        @Option(help: "The recipient's email (told about the delivery).") var recipientEmail: String?
        @Option(help: "The recipient's phone.") var recipientPhone: String?
        @Option(help: "Notes for the driver.") var notes: String?
        @Flag(help: "Mail the recipient a code the driver must enter on delivery.") var recipientCode = false

        func run() async throws {
            try await options.run { session in
                let created = try await session.placeOrder(NewOrder(
                    delivery: delivery.delivery, paymentMethod: payment,
                    recipient: Recipient(name: recipientName, email: recipientEmail, phone: recipientPhone),
                    notes: notes, requireRecipientCode: recipientCode))
                if options.json { Output.json(created); return }
                Output.line("Ordered \(created.order.reference) for \(created.order.price.money): \(created.order.status.rawValue). Id \(created.order.id)")
                if created.next.action == .pay, let url = created.next.paymentUrl {
                    Output.line("Pay at \(url)\(created.next.sandbox == true ? " (test page, no money moves)" : ""), then run `waybill-client order confirm-payment \(created.order.id)`.")
                }
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show one order: the same as `shipment ID`.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The order's id.") var order: OrderID

        func run() async throws { try await ShipmentCommand.show(order, options) }
    }

    struct Cancel: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Cancel an order (customers before pickup, managers before delivery).")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The order's id.") var order: OrderID
        @Option(help: "Why.") var reason: String

        func run() async throws {
            try await options.run { session in
                let order = try await session.cancel(order, reason: reason)
                if options.json { Output.json(order) } else { Output.line("Cancelled \(order.reference).") }
            }
        }
    }

    struct Refund: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Refund a delivered or failed order (managers); a traveller's payout is reversed first.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The order's id.") var order: OrderID
        @Option(help: "Why (kept in the order's history).") var reason: String

        func run() async throws {
            try await options.run { session in
                let order = try await session.refund(order, reason: reason)
                if options.json { Output.json(order) } else { Output.line("Refund of \(order.reference): \(order.payment.status.rawValue).") }
            }
        }
    }

    struct ConfirmPayment: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Check the payment after paying on the payment page.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The order's id.") var order: OrderID

        func run() async throws {
            try await options.run { session in
                let order = try await session.confirmPayment(order)
                if options.json { Output.json(order) } else { Output.line("\(order.reference): \(order.status.rawValue), payment \(order.payment.status.rawValue).") }
            }
        }
    }
}

struct Orders: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List orders, newest first.",
        discussion: "Customers see their own, drivers those assigned to them, managers all.")
    @OptionGroup var options: GlobalOptions
    @Option(help: "Only these statuses (repeatable).") var status: [OrderStatus] = []
    @Option(help: "At most this many.") var limit: Int?
    @Option(help: "The next page (printed after a full page).") var cursor: String?

    func run() async throws {
        try await options.run { session in
            let page = try await session.shipments(status: status, cursor: cursor, limit: limit)
            if options.json { Output.json(page); return }
            if page.items.isEmpty { Output.line("No orders.") }
            for shipment in page.items { Output.line(Output.summary(shipment)) }
            if let next = page.nextCursor { Output.line("More: --cursor \(next)") }
        }
    }
}

struct Track: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Follow an order live until it is delivered, cancelled or failed.",
        discussion: "Prints each event (status, driver position, arrival estimate) as it happens, reconnecting by itself if the connection drops or the server restarts, and exits once the order is delivered, cancelled or failed. With --json, one event per line, as the live channel sends it; connection notes go to standard error.")
    @OptionGroup var options: GlobalOptions
    @Argument(help: "The order's id.") var order: OrderID
    @Option(help: "Resume after this event id (replays what came after it).") var since: Int64?

    static let terminal: Set<String> = ["delivered", "cancelled", "failed"]

    func run() async throws {
        try await options.run { session in
            let updates = session.liveUpdates([.order(order)], options: LiveOptions(since: since))
            var checked = false
            do {
                for try await update in updates {
                    switch update {
                    case .connected:
                        // On standard error, even with --json: scripts read events from standard output.
                        FileHandle.standardError.write(Data("(following \(order))\n".utf8))
                        // Subscribed first, then read the status, so nothing falls in between.
                        if !checked {
                            checked = true
                            let current = try await session.shipment(order)
                            if Self.terminal.contains(current.status.rawValue) {
                                if options.json { Output.json(["status": current.status.rawValue]) }
                                else { Output.line("\(current.reference) is \(current.status.rawValue).") }
                                return
                            }
                        }
                    case .disconnected(let reason):
                        FileHandle.standardError.write(Data("(connection lost: \(reason); reconnecting)\n".utf8))
                    case .missedEvents:
                        if !options.json { FileHandle.standardError.write(Data("(some older events are no longer kept)\n".utf8)) }
                    case .event(let event):
                        if options.json { Output.json(event) } else { Output.line(Self.describe(event)) }
                        if case .status(let change) = event.payload, Self.terminal.contains(change.status) { return }
                    }
                }
            } catch let error as WaybillError {
                throw error
            } catch {
                throw WaybillError.from(error)
            }
        }
    }

    static func describe(_ event: LiveEvent) -> String {
        let time = Output.time(Date(timeIntervalSince1970: Double(event.at) / 1000))
        switch event.payload {
        case .status(let change): return "\(time)  status \(change.status)"
        case .location(let at):
            return "\(time)  driver at \(String(format: "%.5f", at.latitude)), \(String(format: "%.5f", at.longitude))"
        case .eta(let eta):
            return "\(time)  arrives at \(eta.stop.rawValue) \(Output.time(Date(timeIntervalSince1970: Double(eta.arrivesAt) / 1000))) (\(eta.distanceMeters) m)"
        case .notification(let note): return "\(time)  \(note.title)"
        case .duty(let duty): return "\(time)  driver \(duty.onDuty ? "on" : "off") duty"
        case .message(let m):
            if m.deletedAt != nil { return "\(time)  #\(m.seq) deleted" }
            if m.kind == .system { return "\(time)  #\(m.seq) status \(m.text)" }
            return "\(time)  #\(m.seq) \(m.senderName ?? "?"): \(m.text)\(m.editedAt != nil ? " (edited)" : "")"
        case .marker(let m): return "\(time)  \(m.userId) read up to #\(m.readSeq)"
        case .unread(let u): return "\(time)  \(u.unread) unread here, \(u.total) in all"
        }
    }
}

extension WaybillError {
    static func from(_ error: any Error) -> WaybillError {
        (error as? WaybillError) ?? .transport(String(describing: error))
    }
}

// MARK: - Drivers

struct Duty: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show or change whether you are on duty (drivers).")
    @OptionGroup var options: GlobalOptions
    @Argument(help: "on or off; without it, show the current duty.") var change: String?

    func run() async throws {
        try await options.run { session in
            let state: Components.Schemas.DutyState
            switch change {
            case nil: state = try await session.duty()
            case "on": state = try await session.setDuty(true)
            case "off": state = try await session.setDuty(false)
            default: throw ValidationError("Say `on` or `off`.")
            }
            if options.json { Output.json(state) } else { Output.line(state.onDuty ? "On duty." : "Off duty.") }
        }
    }
}

struct Accept: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Take on an order assigned to you (drivers).")
    @OptionGroup var options: GlobalOptions
    @Argument(help: "The order's id.") var order: OrderID

    func run() async throws {
        try await options.run { session in
            let order = try await session.accept(order)
            if options.json { Output.json(order) } else { Output.line("Accepted \(order.reference): pick up at \(order.pickup.street), \(order.pickup.city).") }
        }
    }
}

struct PickupCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pickup",
        abstract: "Record that you have the parcel (drivers).",
        discussion: "For cash orders, give the amount taken with --cash, in the order's currency (24.50).")
    @OptionGroup var options: GlobalOptions
    @Argument(help: "The order's id.") var order: OrderID
    @Option(help: "Cash collected, such as 24.50 (cash orders only).") var cash: String?
    @Option(name: .customLong("scanned"), help: "What the scanner read from the parcel's label: kept as the pickup's proof.") var scanned: String?

    func run() async throws {
        try await options.run { session in
            var collected: Money?
            if let cash {
                let current = try await session.shipment(order)
                guard let value = Decimal(string: cash), value >= 0, value <= 1_000_000 else {
                    throw ValidationError("--cash must be an amount such as 24.50")
                }
                // Rounded to the cent (24.505 is 24.51), never truncated or wrapped.
                var scaled = value * 100, rounded = Decimal()
                NSDecimalRound(&rounded, &scaled, 0, .plain)
                guard let minor = Int(exactly: NSDecimalNumber(decimal: rounded).int64Value) else {
                    throw ValidationError("--cash must be an amount such as 24.50")
                }
                collected = Money(minor, current.payment?.amount.currency ?? current.price?.currency ?? "CHF")
            }
            let order = try await session.pickUp(order, cashCollected: collected, scannedCode: scanned)
            if options.json { Output.json(order) } else { Output.line("Picked up \(order.reference); deliver to \(order.dropoff.street), \(order.dropoff.city).") }
        }
    }
}

struct Deliver: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Hand over the parcel with the recipient's signature (drivers).")
    @OptionGroup var options: GlobalOptions
    @Argument(help: "The order's id.") var order: OrderID
    @Option(help: ArgumentHelp("The recipient's signature, a PNG file.", valueName: "file.png")) var signature: String
    @Option(help: "Who took the parcel; by default the order's recipient.") var recipientName: String?
    @Option(help: ArgumentHelp("A photo of the handed-over parcel (JPEG or PNG).", valueName: "file")) var photo: String?
    @Option(help: "The recipient's code, when the order asked for one.") var code: String?

    func run() async throws {
        let signatureData: Data
        do { signatureData = try Data(contentsOf: URL(fileURLWithPath: signature)) } catch {
            throw ValidationError("Cannot read \(signature): \(error.localizedDescription)")
        }
        let photoData = try photo.map { try Data(contentsOf: URL(fileURLWithPath: $0)) }
        try await options.run { session in
            var name = recipientName
            if name == nil { name = try await session.shipment(order).receiver.name }
            let order = try await session.deliver(order, signaturePNG: signatureData, recipientName: name!, photo: photoData, code: code)
            if options.json { Output.json(order) } else { Output.line("Delivered \(order.reference) to \(order.proof?.recipientName ?? name!).") }
        }
    }
}

struct Fail: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Record that the delivery could not be made (drivers).")
    @OptionGroup var options: GlobalOptions
    @Argument(help: "The order's id.") var order: OrderID
    @Option(help: "recipient_absent, address_wrong, refused, damaged or other.") var reason: FailureReason
    @Option(help: "What happened.") var note: String?

    func run() async throws {
        try await options.run { session in
            let order = try await session.fail(order, reason: reason, note: note)
            if options.json { Output.json(order) } else { Output.line("\(order.reference) failed: \(reason.rawValue).") }
        }
    }
}

struct PositionCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "position", abstract: "Report your position now (drivers on duty).")
    @OptionGroup var options: GlobalOptions
    @Argument(help: "Latitude.") var latitude: Double
    @Argument(help: "Longitude.") var longitude: Double

    func run() async throws {
        try await options.run { session in
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            let receipt = try await session.reportPositions([PositionReport(latitude: latitude, longitude: longitude, recordedAt: now)])
            if options.json { Output.json(receipt) } else { Output.line("Position sent (\(receipt.accepted) stored).") }
        }
    }
}

// MARK: - Managers

struct Assign: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Give an order to a driver (managers).")
    @OptionGroup var options: GlobalOptions
    @Argument(help: "The order's id.") var order: OrderID
    @Option(help: "The driver: an id, or an email address.") var driver: String
    @Flag(help: "Take the order from its current driver.") var reassign = false

    func run() async throws {
        try await options.run { session in
            let driverId: UserID
            if let id = UserID(uuidString: driver) { driverId = id } else {
                let page = try await session.users(query: driver)
                guard let match = page.items.first(where: { $0.email.lowercased() == driver.lowercased() }), let id = UserID(uuidString: match.id) else {
                    throw WaybillError.server(ServerProblem(status: 404, code: "not_found", message: "No account \(driver)."))
                }
                driverId = id
            }
            let order = try await session.assign(order, to: driverId, reassign: reassign)
            if options.json { Output.json(order) }
            else { Output.line("Assigned \(order.reference) to \(order.driver.map { "\($0.firstName) \($0.lastName)" } ?? driver).") }
        }
    }
}

struct Users: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List accounts, or invite a driver or manager (managers).",
        subcommands: [List.self, Create.self, Disable.self, Grant.self, Revoke.self, Suspend.self, Ban.self, Lift.self, Restrictions.self],
        defaultSubcommand: List.self)

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List accounts, ordered by email.")
        @OptionGroup var options: GlobalOptions
        @Option(help: "customer, driver or manager.") var role: Role?
        @Option(help: "Match email, names or company.") var query: String?
        @Option(help: "At most this many.") var limit: Int?
        @Option(help: "The next page.") var cursor: String?

        func run() async throws {
            try await options.run { session in
                let page = try await session.users(role: role, query: query, cursor: cursor, limit: limit)
                if options.json { Output.json(page); return }
                for user in page.items {
                    Output.line("\(user.email.padding(toLength: 32, withPad: " ", startingAt: 0)) \(user.role.rawValue.padding(toLength: 9, withPad: " ", startingAt: 0)) \(user.firstName) \(user.lastName)\(user.disabled ? " (disabled)" : "")  \(user.id)")
                }
                if let next = page.nextCursor { Output.line("More: --cursor \(next)") }
            }
        }
    }

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Invite a driver or manager; they set a password with the mailed code.")
        @OptionGroup var options: GlobalOptions
        @Option(help: "driver or manager.") var role: Role
        @Option(help: "Email address.") var email: String
        @Option(help: "First name.") var firstName: String
        @Option(help: "Last name.") var lastName: String

        func run() async throws {
            try await options.run { session in
                let user = try await session.createUser(role: role, firstName: firstName, lastName: lastName, email: email)
                if options.json { Output.json(user) } else { Output.line("Invited \(user.email) as \(user.role.rawValue), id \(user.id).") }
            }
        }
    }

    struct Disable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Disable an account, ending its sessions (or enable it again).")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The account's id.") var id: String
        @Flag(help: "Enable instead.") var enable = false

        func run() async throws {
            guard let uuid = UserID(uuidString: id) else { throw ValidationError("Give the account's id.") }
            try await options.run { session in
                let user = try await session.updateUser(uuid, disabled: !enable)
                if options.json { Output.json(user) } else { Output.line("\(user.email) is \(user.disabled ? "disabled" : "enabled").") }
            }
        }
    }

    static func userID(_ raw: String) throws -> UserID {
        guard let uuid = UserID(uuidString: raw) else { throw ValidationError("Give the account's id.") }
        return uuid
    }

    static func holds(_ user: Account) -> String {
        "\(user.email) holds: \(user.capabilities.map(\.rawValue).joined(separator: ", "))."
    }

    struct Grant: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Grant a staff capability: driver, manager, counter (admin: by an admin).")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The account's id.") var id: String
        @Argument(help: "driver, manager, counter or admin.") var capability: Capability

        func run() async throws {
            let uuid = try Users.userID(id)
            try await options.run { session in
                let user = try await session.grant(capability, to: uuid)
                if options.json { Output.json(user) } else { Output.line(Users.holds(user)) }
            }
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Take a staff capability back.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The account's id.") var id: String
        @Argument(help: "driver, manager, counter or admin.") var capability: Capability

        func run() async throws {
            let uuid = try Users.userID(id)
            try await options.run { session in
                let user = try await session.revoke(capability, from: uuid)
                if options.json { Output.json(user) } else { Output.line(Users.holds(user)) }
            }
        }
    }

    struct Suspend: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Suspend an account for some days: it follows what is on its way, and starts nothing.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The account's id.") var id: String
        @Option(help: "How many days (1 to 366).") var days: Int
        @Option(help: "Why; the person is told.") var reason: String

        func run() async throws {
            let uuid = try Users.userID(id)
            guard (1...366).contains(days) else { throw ValidationError("--days must be 1 to 366.") }
            try await options.run { session in
                let record = try await session.suspend(uuid, until: Date().addingTimeInterval(Double(days) * 86_400), reason: reason)
                if options.json { Output.json(record) } else { Output.line("Suspended until \(record.until.map { "\($0)" } ?? "—") (restriction \(record.id)).") }
            }
        }
    }

    struct Ban: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Ban an account: its sessions end and it cannot sign in.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The account's id.") var id: String
        @Option(help: "Why; the person is told.") var reason: String

        func run() async throws {
            let uuid = try Users.userID(id)
            try await options.run { session in
                let record = try await session.ban(uuid, reason: reason)
                if options.json { Output.json(record) } else { Output.line("Banned (restriction \(record.id)).") }
            }
        }
    }

    struct Lift: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Lift a suspension or ban before its time.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The account's id.") var id: String
        @Argument(help: "The restriction's number (see `users restrictions`).") var restriction: Int64

        func run() async throws {
            let uuid = try Users.userID(id)
            try await options.run { session in
                let user = try await session.lift(restriction: restriction, of: uuid)
                if options.json { Output.json(user) } else { Output.line("\(user.email): \(user.restriction.map { "still \($0.kind.rawValue)" } ?? "no restriction in force").") }
            }
        }
    }

    struct Restrictions: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "An account's suspensions and bans, newest first.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The account's id.") var id: String

        func run() async throws {
            let uuid = try Users.userID(id)
            try await options.run { session in
                let records = try await session.restrictions(of: uuid)
                if options.json { Output.json(records); return }
                if records.isEmpty { Output.line("None.") }
                for record in records {
                    Output.line("\(record.id)  \(record.kind.rawValue.padding(toLength: 9, withPad: " ", startingAt: 0)) \(record.inForce ? "in force" : record.liftedAt != nil ? "lifted  " : "over    ")  \(record.reason)")
                }
            }
        }
    }
}

struct Fleet: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Every driver with duty, position and load (managers).")
    @OptionGroup var options: GlobalOptions
    @Option(help: "Show each driver's distance to this order's pickup.") var near: OrderID?

    func run() async throws {
        try await options.run { session in
            let fleet = try await session.fleet(near: near)
            if options.json { Output.json(fleet); return }
            for entry in fleet.drivers {
                let position = entry.position.map { String(format: " at %.5f, %.5f", $0.latitude, $0.longitude) } ?? ""
                let distance = entry.distanceToPickupMeters.map { ", \($0) m from pickup" } ?? ""
                Output.line("\(entry.driver.firstName) \(entry.driver.lastName)  \(entry.onDuty ? "on duty" : "off duty")\(position), \(entry.load) orders\(distance)  \(entry.driver.id)")
            }
        }
    }
}

// MARK: - The administration

struct AdminCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "admin",
        abstract: "The administration (admins): enter your password again, the reports queue, the audit log.",
        discussion: "Admin calls need a password proven in the last 15 minutes: `admin reauth` (or sign in again). Suspend, ban and lift are under `users`.",
        subcommands: [Reauth.self, Reports.self, Decide.self, Hide.self, Restore.self, Audit.self])

    struct Reauth: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Enter your password again, for the next 15 minutes of admin work.",
            discussion: "The password comes from --password, WAYBILL_PASSWORD, or a line on standard input.")
        @OptionGroup var options: GlobalOptions
        @Option(help: "Password.") var password: String?

        func run() async throws {
            let password = try readPassword(password)
            try await options.run { session in
                try await session.reauthenticate(password: password)
                if options.json { Output.json(["status": "ok"]) } else { Output.line("Confirmed for 15 minutes.") }
            }
        }
    }

    struct Reports: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The reports queue, oldest first.")
        @OptionGroup var options: GlobalOptions
        @Option(help: "pending (default), reviewed, dismissed, action_taken or all.") var status = "pending"

        func run() async throws {
            let wanted: ReportStatus?
            if status == "all" { wanted = nil } else {
                guard let s = ReportStatus(rawValue: status) else { throw ValidationError("--status must be pending, reviewed, dismissed, action_taken or all.") }
                wanted = s
            }
            try await options.run { session in
                let reports = try await session.moderationQueue(status: wanted)
                if options.json { Output.json(reports); return }
                if reports.isEmpty { Output.line("None.") }
                for r in reports {
                    let what = r.ratingId.map { "review \($0)" } ?? r.messageId.map { "message \($0)" } ?? "person"
                    Output.line("\(r.id)  \(r.status.rawValue)  \(r.reason.rawValue)  about \(r.reportedUserId) (\(what))\(r.note.map { ": \($0)" } ?? "")")
                }
            }
        }
    }

    struct Decide: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Decide a report: reviewed, dismissed or action_taken.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The report's id.") var id: String
        @Option(name: .customLong("as"), help: "reviewed, dismissed or action_taken.") var status: String
        @Option(help: "What was decided and why, for the other moderators.") var note: String?

        func run() async throws {
            guard let uuid = UUID(uuidString: id) else { throw ValidationError("The report's id is a UUID.") }
            guard let wanted = ReportStatus(rawValue: status) else { throw ValidationError("--as must be reviewed, dismissed or action_taken.") }
            try await options.run { session in
                let report = try await session.decide(report: uuid, as: wanted, note: note)
                if options.json { Output.json(report) } else { Output.line("Report \(report.id): \(report.status.rawValue).") }
            }
        }
    }

    /// The content a hide or restore names.
    static func content(_ kind: String, _ id: String) throws -> (ModeratedContent, UUID) {
        guard let kind = ModeratedContent(rawValue: kind) else { throw ValidationError("The kind is trip, message, review or picture.") }
        guard let uuid = UUID(uuidString: id) else { throw ValidationError("The id is a UUID.") }
        return (kind, uuid)
    }

    struct Hide: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Hide a trip, a message, a review or a profile picture (by its owner's id), with a reason the author is shown.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "trip, message, review or picture.") var kind: String
        @Argument(help: "Its id (an account's id for a picture).") var id: String
        @Option(help: "Why; the author is shown this.") var reason: String

        func run() async throws {
            let (kind, uuid) = try AdminCommand.content(kind, id)
            try await options.run { session in
                try await session.hide(kind, uuid, reason: reason)
                if options.json { Output.json(["kind": kind.rawValue, "id": uuid.uuidString.lowercased(), "hidden": "true"]) } else { Output.line("Hidden.") }
            }
        }
    }

    struct Restore: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show hidden content again.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "trip, message, review or picture.") var kind: String
        @Argument(help: "Its id (an account's id for a picture).") var id: String
        @Option(help: "Why, for the audit log.") var reason: String?

        func run() async throws {
            let (kind, uuid) = try AdminCommand.content(kind, id)
            try await options.run { session in
                try await session.restore(kind, uuid, reason: reason)
                if options.json { Output.json(["kind": kind.rawValue, "id": uuid.uuidString.lowercased(), "hidden": "false"]) } else { Output.line("Shown again.") }
            }
        }
    }

    struct Audit: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The audit log of staff actions, newest first, or all of it as CSV.")
        @OptionGroup var options: GlobalOptions
        @Option(help: "Who acted (an account's id).") var actor: String?
        @Option(help: "An action, such as account.banned or report.decided.") var action: String?
        @Option(help: "The target's id.") var target: String?
        @Option(help: "From this day (YYYY-MM-DD, UTC).") var from: String?
        @Option(help: "Until this day, included (YYYY-MM-DD, UTC).") var to: String?
        @Option(help: "How many lines (1 to 200).") var limit = 50
        @Option(help: "Write every matching line as CSV to this file instead.") var csv: String?

        func run() async throws {
            let actorID = try actor.map { try Users.userID($0) }
            let wanted = try action.map { name -> AuditAction in
                guard let a = AuditAction(rawValue: name) else {
                    throw ValidationError("--action must be one of \(AuditAction.allCases.map(\.rawValue).joined(separator: ", ")).")
                }
                return a
            }
            let start = try from.map { try Self.day($0, "--from") }
            let end = try to.map { try Self.day($0, "--to").addingTimeInterval(86_399.999) }
            try await options.run { session in
                if let csv {
                    let data = try await session.exportAuditLog(actor: actorID, action: wanted, target: target, from: start, to: end)
                    try data.write(to: URL(fileURLWithPath: csv))
                    Output.line("Wrote \(data.count) bytes to \(csv).")
                    return
                }
                let page = try await session.auditLog(actor: actorID, action: wanted, target: target, from: start, to: end, limit: limit)
                if options.json { Output.json(page.items); return }
                if page.items.isEmpty { Output.line("None.") }
                for e in page.items {
                    Output.line("\(e.id)  \(e.at)  \(e.actorId ?? "operator")  \(e.action.rawValue)  \(e.targetKind.rawValue) \(e.targetId)\(e.reason.map { "  \($0)" } ?? "")")
                }
            }
        }

        static func day(_ text: String, _ option: String) throws -> Date {
            let f = DateFormatter()
            f.locale = Locale(identifier: "en_US_POSIX")
            f.timeZone = TimeZone(identifier: "UTC")
            f.dateFormat = "yyyy-MM-dd"
            guard let date = f.date(from: text) else { throw ValidationError("\(option) is a day, YYYY-MM-DD.") }
            return date
        }
    }
}
