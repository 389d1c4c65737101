import ArgumentParser
import Foundation
import WaybillClient
import WaybillCore

/// `waybill-client slots`: timeslots for pickups and deliveries. `slots list --kind delivery
/// --postal-code 3005` shows a week's slots, `slots hold ID` keeps a seat for ten minutes, `slots book
/// ID --order ORDER` books it for a shipment; dispatch adds templates and decides bookings.
struct SlotCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "slots", abstract: "Pickup and delivery timeslots.",
        subcommands: [List.self, Hold.self, Release.self, Book.self, Bookings.self, Templates.self, AddTemplate.self, Decide.self, Counters.self],
        defaultSubcommand: List.self)

    static func line(_ s: Slot) -> String {
        "\(s.id)  \(s.date) \(s.start ?? "")–\(s.end ?? "")  \(s.kind.rawValue)  \(s.availability.rawValue)\(s.heldUntil != nil ? "  (held by you)" : "")"
    }

    static func line(_ b: SlotBooking) -> String {
        "\(b.id)  \(b.reference ?? b.orderId)  \(b.kind.rawValue) \(b.slot.date) \(b.slot.start ?? "")–\(b.slot.end ?? "")  \(b.status.rawValue)\(b.reason.map { "  (\($0))" } ?? "")"
    }

    static func id<Tag>(_ text: String, _ what: String) throws -> Tagged<Tag, UUID> {
        guard let uuid = UUID(uuidString: text) else { throw ValidationError("Not a \(what) id: \(text)") }
        return Tagged(rawValue: uuid)
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "The slots for a postal code, from a date.")
        @OptionGroup var options: GlobalOptions
        @Option(help: "pickup or delivery.") var kind: String = "delivery"
        @Option(name: .customLong("postal-code"), help: "The address's postal code.") var postalCode: String
        @Option(help: "The first local date, YYYY-MM-DD (default today).") var from: String?
        @Option(help: "How many days (1–31).") var days: Int = 7

        func run() async throws {
            guard let kind = SlotKind(rawValue: kind) else { throw ValidationError("--kind is pickup or delivery") }
            try await options.run { session in
                let slots = try await session.slots(kind, postalCode: postalCode, from: from, days: days)
                if options.json { return Output.json(slots) }
                if slots.isEmpty { return Output.line("No slots.") }
                for slot in slots { Output.line(SlotCommand.line(slot)) }
            }
        }
    }

    struct Hold: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "hold", abstract: "Keep a seat in a slot for ten minutes.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The slot's id.") var slot: String

        func run() async throws {
            let id: SlotID = try SlotCommand.id(slot, "slot")
            try await options.run { session in
                let held = try await session.hold(slot: id)
                if options.json { return Output.json(held) }
                Output.line(SlotCommand.line(held))
            }
        }
    }

    struct Release: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "release", abstract: "Let your hold on a slot go.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The slot's id.") var slot: String

        func run() async throws {
            let id: SlotID = try SlotCommand.id(slot, "slot")
            try await options.run { session in
                try await session.release(slot: id)
                Output.line("Released.")
            }
        }
    }

    struct Book: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "book", abstract: "Book a slot for a shipment's pickup or delivery (or move its booking there).")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The slot's id.") var slot: String
        @Option(help: "The shipment's (order's) id.") var order: String

        func run() async throws {
            let slotID: SlotID = try SlotCommand.id(slot, "slot"), orderID: OrderID = try SlotCommand.id(order, "order")
            try await options.run { session in
                let booking = try await session.book(slot: slotID, for: orderID)
                if options.json { return Output.json(booking) }
                Output.line(SlotCommand.line(booking))
            }
        }
    }

    struct Bookings: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "bookings", abstract: "A shipment's bookings (--order), or dispatch's list by status and date.")
        @OptionGroup var options: GlobalOptions
        @Option(help: "A shipment's (order's) id.") var order: String?
        @Option(help: "pending, booked, declined, cancelled, completed or failed (dispatch).") var status: String?
        @Option(help: "A local date, YYYY-MM-DD (dispatch).") var date: String?

        func run() async throws {
            let orderID: OrderID? = try order.map { try SlotCommand.id($0, "order") }
            let wanted = try status.map { text -> SlotBookingStatus in
                guard let s = SlotBookingStatus(rawValue: text) else { throw ValidationError("Unknown status: \(text)") }
                return s
            }
            try await options.run { session in
                let items = if let orderID { try await session.slotBookings(of: orderID) } else { try await session.slotBookings(status: wanted, date: date) }
                if options.json { return Output.json(items) }
                if items.isEmpty { return Output.line("No bookings.") }
                for b in items { Output.line(SlotCommand.line(b)) }
            }
        }
    }

    struct Templates: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "templates", abstract: "The weekly templates (dispatch).")
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            try await options.run { session in
                let items = try await session.slotTemplates()
                if options.json { return Output.json(items) }
                if items.isEmpty { return Output.line("No templates.") }
                for t in items {
                    Output.line("\(t.id)  \(t.kind.rawValue)  day \(t.weekday) \(t.start)–\(t.end)  \(t.capacity) seats  zone \(t.zone.isEmpty ? "*" : t.zone)\(t.requiresApproval ? "  approval" : "")\(t.active ? "" : "  (off)")")
                }
            }
        }
    }

    struct AddTemplate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "template-add", abstract: "Add a weekly template (dispatch).")
        @OptionGroup var options: GlobalOptions
        @Option(help: "pickup or delivery.") var kind: String
        @Option(help: "ISO weekday, Monday 1 … Sunday 7.") var weekday: Int
        @Option(help: "Local start, HH:MM.") var start: String
        @Option(help: "Local end, HH:MM.") var end: String
        @Option(help: "Seats per slot.") var capacity: Int
        @Option(help: "A postal-code prefix (default: everywhere).") var zone: String = ""
        @Flag(help: "Bookings wait for staff's approval.") var approval = false

        func run() async throws {
            guard let kind = SlotKind(rawValue: kind) else { throw ValidationError("--kind is pickup or delivery") }
            guard let day = Weekday(rawValue: weekday) else { throw ValidationError("--weekday is 1 (Monday) to 7 (Sunday)") }
            try await options.run { session in
                let t = try await session.createSlotTemplate(kind: kind, weekday: day, start: start, end: end, capacity: capacity, zone: zone,
                                                             requiresApproval: approval)
                if options.json { return Output.json(t) }
                Output.line("\(t.id)  \(t.kind.rawValue)  day \(t.weekday) \(t.start)–\(t.end)  \(t.capacity) seats")
            }
        }
    }

    struct Decide: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "decide", abstract: "Approve, decline, cancel, complete or fail a booking.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The booking's id.") var booking: String
        @Argument(help: "approve, decline, cancel, complete or fail.") var action: String
        @Option(help: "Why (required to decline or fail).") var reason: String?

        func run() async throws {
            let id: SlotBookingID = try SlotCommand.id(booking, "booking")
            guard let act = SlotBookingAction(rawValue: action) else { throw ValidationError("Unknown action: \(action)") }
            try await options.run { session in
                let b = try await session.decide(booking: id, act, reason: reason)
                if options.json { return Output.json(b) }
                Output.line(SlotCommand.line(b))
            }
        }
    }
}

extension SlotCommand {
    struct Counters: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "counters", abstract: "Reception counters, with whether each is open now.")
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            try await options.run { session in
                let items = try await session.counters()
                if options.json { return Output.json(items) }
                if items.isEmpty { return Output.line("No counters.") }
                for c in items {
                    Output.line("\(c.id)  \(c.name)  \(c.address.street), \(c.address.postalCode) \(c.address.city)  \(c.openNow ? "open now" : "closed now")\(c.active ? "" : "  (off)")")
                }
            }
        }
    }
}

/// `waybill-client label ID [--a4] [--out FILE]`: a shipment's label as PDF.
struct LabelCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "label", abstract: "Save a shipment's label as PDF (A6, or four to an A4 sheet).")
    @OptionGroup var options: GlobalOptions
    @Argument(help: "The shipment's (order's) id.") var order: String
    @Flag(help: "Four labels to an A4 sheet.") var a4 = false
    @Flag(help: "In French.") var french = false
    @Option(help: "Where to write the PDF (default label-<id>.pdf).") var out: String?

    func run() async throws {
        let id: OrderID = try SlotCommand.id(order, "order")
        try await options.run { session in
            let pdf = try await session.label(of: id, a4: a4, french: french)
            let path = out ?? "label-\(order.lowercased()).pdf"
            do { try pdf.write(to: URL(fileURLWithPath: path)) } catch { throw ValidationError("Cannot write \(path): \(error.localizedDescription)") }
            Output.line("Wrote \(path) (\(pdf.count) bytes).")
        }
    }
}

/// `waybill-client scan CODE`: what a scanned label is, and what the scan proves for you now.
struct ScanCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "scan", abstract: "Look up a scanned label (its link or code).")
    @OptionGroup var options: GlobalOptions
    @Argument(help: "What the scanner read.") var code: String

    func run() async throws {
        try await options.run { session in
            let found = try await session.scan(code)
            if options.json { return Output.json(found) }
            Output.line("\(found.reference)  \(found.shipmentId)  \(found.status.rawValue)\(found.step.map { "  this scan proves: \($0.rawValue)" } ?? "")")
        }
    }
}
