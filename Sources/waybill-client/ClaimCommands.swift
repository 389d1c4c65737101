import ArgumentParser
import Foundation
import WaybillClient
import WaybillCore

/// `waybill-client claims`: insurance claims. The sender files one (`claims file ORDER --kind lost
/// --amount 250 --description … --photo damage.jpg`); staff list, approve (two of them above the
/// table's threshold) or decline them; admins read and set the premium table (`claims table`).
struct ClaimCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "claims", abstract: "Insurance claims and the premium table.",
        subcommands: [List.self, File.self, Show.self, Approve.self, Decline.self, Table.self],
        defaultSubcommand: List.self)

    static func line(_ c: InsuranceClaim) -> String {
        "\(c.id)  \(c.reference)  \(c.kind.rawValue)  \(c.claimed.money)  \(c.status.rawValue)"
            + (c.approved.map { "  approved \($0.money)" } ?? "") + (c.paymentNote.map { "  (\($0))" } ?? "")
    }

    static func amount(_ text: String) throws -> Int {
        guard let cents = Money.minorUnits(fromText: text, maximum: Decimal(Tariff.maxAmount) / 100), cents > 0 else {
            throw ValidationError("Not an amount: \(text) (such as 250 or 249.90)")
        }
        return cents
    }

    static func id(_ text: String) throws -> ClaimID {
        guard let id = ClaimID(uuidString: text) else { throw ValidationError("Not a claim id: \(text)") }
        return id
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "Claims: staff see all, others their own.")
        @OptionGroup var options: GlobalOptions
        @Option(help: "submitted, awaiting_second_approval, approved, paid or declined.") var status: ClaimStatus?

        func run() async throws {
            try await options.run { session in
                let claims = try await session.claims(status: status)
                if options.json { return Output.json(claims) }
                if claims.isEmpty { return Output.line("No claims.") }
                for claim in claims { Output.line(ClaimCommand.line(claim)) }
            }
        }
    }

    struct File: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "file", abstract: "Claim the insurance of a shipment you sent insured.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The shipment's (order's) id.") var order: OrderID
        @Option(help: "damaged or lost.") var kind: ClaimKind
        @Option(help: "What you claim, such as 250 or 249.90 (at most the declared value).") var amount: String
        @Option(help: "What happened.") var description: String
        @Option(help: "A JPEG or PNG of the damage (repeat for up to five).") var photo: [String] = []

        func run() async throws {
            let cents = try ClaimCommand.amount(amount)
            let photos = try photo.map { try Data(contentsOf: URL(fileURLWithPath: $0)) }
            try await options.run { session in
                let claim = try await session.fileClaim(order, kind: kind, amount: cents, description: description, photos: photos)
                if options.json { return Output.json(claim) }
                Output.line("Claim \(claim.id) sent: \(claim.claimed.money), \(claim.status.rawValue).")
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "show", abstract: "One claim.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The claim's id.") var claim: String

        func run() async throws {
            let id = try ClaimCommand.id(claim)
            try await options.run { session in
                let c = try await session.claim(id)
                if options.json { return Output.json(c) }
                Output.line(ClaimCommand.line(c))
                Output.line("  \(c.description)")
                if let reason = c.declineReason { Output.line("  Declined: \(reason)") }
            }
        }
    }

    struct Approve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "approve", abstract: "Approve an amount (staff; a second staff member confirms above the threshold).")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The claim's id.") var claim: String
        @Option(help: "The amount to pay, such as 250 or 249.90.") var amount: String

        func run() async throws {
            let id = try ClaimCommand.id(claim)
            let cents = try ClaimCommand.amount(amount)
            try await options.run { session in
                let c = try await session.approve(claim: id, amount: cents)
                if options.json { return Output.json(c) }
                Output.line(ClaimCommand.line(c))
            }
        }
    }

    struct Decline: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "decline", abstract: "Decline a claim with the reason its sender reads (staff).")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The claim's id.") var claim: String
        @Option(help: "Why.") var reason: String

        func run() async throws {
            let id = try ClaimCommand.id(claim)
            try await options.run { session in
                let c = try await session.decline(claim: id, reason: reason)
                if options.json { return Output.json(c) }
                Output.line(ClaimCommand.line(c))
            }
        }
    }

    struct Table: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "table", abstract: "The premium table; admins set it with --band UPTO:BASISPOINTS:MINIMUM (amounts like 500 or 499.90).")
        @OptionGroup var options: GlobalOptions
        @Option(help: "A band: declared values up to UPTO, at BASISPOINTS (150 = 1.5 %), at least MINIMUM. Repeat, ascending.") var band: [String] = []
        @Option(name: .customLong("claim-window-days"), help: "Days to claim after delivery or loss.") var claimWindowDays: Int?
        @Option(name: .customLong("second-approval-above"), help: "Claims approved above this need a second staff member.") var secondApprovalAbove: String?

        func run() async throws {
            try await options.run { session in
                var current = try await session.insuranceTable()
                if !band.isEmpty || claimWindowDays != nil || secondApprovalAbove != nil {
                    let bands = try band.map { text -> InsuranceTable.Band in
                        let parts = text.split(separator: ":").map(String.init)
                        guard parts.count == 3, let rate = Int(parts[1]) else { throw ValidationError("A band is UPTO:BASISPOINTS:MINIMUM, not \(text)") }
                        return .init(upTo: try ClaimCommand.amount(parts[0]), rateBasisPoints: rate, minimumPremium: try ClaimCommand.amount(parts[2]))
                    }
                    let table = InsuranceTable(
                        currency: current.value1.currency,
                        bands: bands.isEmpty ? current.value1.bands.map { .init(upTo: $0.upTo, rateBasisPoints: $0.rateBasisPoints, minimumPremium: $0.minimumPremium) } : bands,
                        claimWindowDays: claimWindowDays ?? current.value1.claimWindowDays,
                        secondApprovalAbove: try secondApprovalAbove.map(ClaimCommand.amount) ?? current.value1.secondApprovalAbove)
                    current = try await session.setInsuranceTable(table)
                }
                if options.json { return Output.json(current) }
                let t = current.value1
                for b in t.bands {
                    Output.line("up to \(Money(b.upTo, t.currency)): \(Double(b.rateBasisPoints) / 100) %, at least \(Money(b.minimumPremium, t.currency))")
                }
                Output.line("Claims within \(t.claimWindowDays) days; two approvals above \(Money(t.secondApprovalAbove, t.currency)).")
            }
        }
    }
}

extension ClaimKind: ExpressibleByArgument {}
extension ClaimStatus: ExpressibleByArgument {}
