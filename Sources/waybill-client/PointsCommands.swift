import ArgumentParser
import Foundation
import WaybillClient
import WaybillCore

/// `waybill-client points`: the caller's loyalty points and their history; `points rules` reads the
/// rules, and admins set them (`points rules --per-unit 1 --value 0.05 --validity-days 365`).
struct PointsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "points", abstract: "Your loyalty points, and the rules.",
        subcommands: [Show.self, Rules.self], defaultSubcommand: Show.self)

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "show", abstract: "Your points, what they are worth, the next expiry, the history.")
        @OptionGroup var options: GlobalOptions
        @Option(help: "How many entries of the history (newest first).") var limit: Int = 20

        func run() async throws {
            try await options.run { session in
                let account = try await session.loyalty(limit: limit)
                if options.json { return Output.json(account) }
                Output.line("\(account.points) points, worth \(account.worth.money)")
                if let next = account.nextExpiry { Output.line("\(next.points) expire on \(next.at.formatted(date: .abbreviated, time: .omitted))") }
                for entry in account.entries {
                    let sign = ["earned", "restored"].contains(entry.kind.rawValue) ? "+" : "-"
                    Output.line("\(entry.at.formatted(date: .abbreviated, time: .shortened))  \(sign)\(entry.points)  \(entry.kind.rawValue)"
                                + (entry.orderReference.map { "  \($0)" } ?? ""))
                }
            }
        }
    }

    struct Rules: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "rules", abstract: "The rules; admins change them with the options.")
        @OptionGroup var options: GlobalOptions
        @Option(name: .customLong("per-unit"), help: "Points earned per whole unit of currency paid.") var perUnit: Int?
        @Option(help: "What a point is worth, such as 0.05.") var value: String?
        @Option(name: .customLong("validity-days"), help: "Days points stay valid.") var validityDays: Int?
        @Option(help: "The fewest points spent on one order.") var minimum: Int?
        @Option(name: .customLong("max-percent"), help: "The largest share of a price points may pay, in percent.") var maxPercent: Int?

        func run() async throws {
            try await options.run { session in
                var rules = try await session.loyaltyRules()
                if perUnit != nil || value != nil || validityDays != nil || minimum != nil || maxPercent != nil {
                    let pointValue = try value.map { text -> Int in
                        guard let cents = Money.minorUnits(fromText: text, maximum: 100) else { throw ValidationError("Not an amount: \(text) (such as 0.05)") }
                        return cents
                    }
                    rules = try await session.setLoyaltyRules(LoyaltyRules(
                        pointsPerUnit: perUnit ?? rules.pointsPerUnit, pointValue: pointValue ?? rules.pointValue,
                        validityDays: validityDays ?? rules.validityDays, minimumRedemption: minimum ?? rules.minimumRedemption,
                        maxDiscountPercent: maxPercent ?? rules.maxDiscountPercent))
                }
                if options.json { return Output.json(rules) }
                Output.line("\(rules.pointsPerUnit) points per \(rules.currency) paid; a point is worth \(Money(rules.pointValue, rules.currency))")
                Output.line("Spent \(rules.minimumRedemption) or more at a time, on at most \(rules.maxDiscountPercent) % of a price; valid \(rules.validityDays) days.")
            }
        }
    }
}
