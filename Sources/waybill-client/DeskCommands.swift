import ArgumentParser
import Foundation
import WaybillClient
import WaybillCore

/// `waybill-client desk`: a counter's desk for its staff. `desk day COUNTER` lists the day's booked
/// drop-offs and the parcels here and expected, `desk check-in COUNTER CODE [--photo FILE]` takes a
/// parcel in (a scanned label, or its reference typed), `desk hand-out COUNTER CODE --receiver-code
/// 123456 --name "Bea"` gives it to its receiver.
struct DeskCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "desk", abstract: "A reception counter's desk: its day, check-ins and hand-outs.",
        subcommands: [Mine.self, Day.self, CheckIn.self, HandOut.self], defaultSubcommand: Mine.self)

    static func line(_ p: CounterParcel) -> String {
        let slot = p.slot.map { "  slot \(ISO8601DateFormatter().string(from: $0.startsAt))" } ?? ""
        return "\(p.reference)  \(p.recipientName)  \(p.stage.rawValue)  \(p.status.rawValue)\(slot)"
    }


    struct Mine: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "mine", abstract: "The counters you work at.")
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            try await options.run { session in
                let items = try await session.myCounters()
                if options.json { return Output.json(items) }
                if items.isEmpty { return Output.line("You are not staff of any counter.") }
                for c in items { Output.line("\(c.id)  \(c.name)  \(c.openNow ? "open now" : "closed now")") }
            }
        }
    }

    struct Day: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "day", abstract: "A counter's day: booked drop-offs in time order, parcels here and expected.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The counter's id.") var counter: String
        @Option(help: "A local date, YYYY-MM-DD (default today).") var date: String?

        func run() async throws {
            let id: CounterID = try SlotCommand.id(counter, "counter")
            try await options.run { session in
                let day = try await session.counterDay(id, date: date)
                if options.json { return Output.json(day) }
                Output.line("\(day.counterName), \(day.date)")
                for (title, items) in [("Booked drop-offs", day.booked), ("Here", day.here), ("Expected", day.expected)] {
                    Output.line("\(title):" + (items.isEmpty ? " none" : ""))
                    for p in items { Output.line("  " + DeskCommand.line(p)) }
                }
            }
        }
    }

    struct CheckIn: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "check-in", abstract: "Take a parcel in: its scanned label or its reference.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The counter's id.") var counter: String
        @Argument(help: "What the scanner read, or the reference (WB-…).") var code: String
        @Option(help: "A photo of the parcel (JPEG or PNG).") var photo: String?

        func run() async throws {
            let id: CounterID = try SlotCommand.id(counter, "counter")
            let image = try photo.map { path -> Data in
                do { return try Data(contentsOf: URL(fileURLWithPath: path)) } catch { throw ValidationError("Cannot read \(path).") }
            }
            let entry = LabelEntry(code)
            try await options.run { session in
                let parcel = try await session.checkIn(at: id, code: entry.scanned, reference: entry.typed, photo: image)
                if options.json { return Output.json(parcel) }
                Output.line("Checked in: " + DeskCommand.line(parcel))
            }
        }
    }

    struct HandOut: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "hand-out", abstract: "Give a parcel to its receiver, against their code.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The counter's id.") var counter: String
        @Argument(help: "What the scanner read, or the reference (WB-…).") var code: String
        @Option(name: .customLong("receiver-code"), help: "The code the receiver gives.") var receiverCode: String
        @Option(help: "The name of who collects it.") var name: String

        func run() async throws {
            let id: CounterID = try SlotCommand.id(counter, "counter")
            let entry = LabelEntry(code)
            try await options.run { session in
                let parcel = try await session.handOut(at: id, code: entry.scanned, reference: entry.typed, receiverCode: receiverCode, collectedBy: name)
                if options.json { return Output.json(parcel) }
                Output.line("Handed out: " + DeskCommand.line(parcel))
            }
        }
    }
}
