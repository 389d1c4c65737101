import ArgumentParser
import Foundation
import WaybillClient
import WaybillCore

/// `waybill-client subscription`: the caller's subscription; `subscription plans` lists the plans,
/// `subscribe PLAN` prints where to pay, `cancel` and `resume` stop or keep the renewal; admins
/// offer plans (`subscription offer --name Pro --price 49.00 --included 5 --discount 20 --express`)
/// and list who subscribes (`subscription subscribers [--plan ID] [--status past_due]`).
struct SubscriptionCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "subscription", abstract: "Your subscription plan; the plans on offer; admins offer plans.",
        subcommands: [Show.self, Plans.self, Subscribe.self, Cancel.self, Resume.self, Offer.self, Subscribers.self], defaultSubcommand: Show.self)

    static func print(_ s: SubscriptionInfo) {
        Output.line("\(s.plan.name): \(s.status.rawValue)\(s.cancelAtPeriodEnd ? ", ends at the period's end" : "")\(s.sandbox ? " (sandbox: no money moves)" : "")")
        if let end = s.currentPeriodEnd { Output.line("\(s.cancelAtPeriodEnd ? "Ends" : "Renews") on \(end.formatted(date: .abbreviated, time: .omitted))") }
        if let grace = s.graceEndsAt { Output.line("The renewal failed; the plan applies until \(grace.formatted(date: .abbreviated, time: .omitted))") }
        if s.plan.includedDeliveries > 0 { Output.line("\(s.includedUsed) of \(s.plan.includedDeliveries) included deliveries used") }
        if let url = s.checkoutUrl { Output.line("Pay at: \(url)") }
    }

    static func planID(_ raw: String) throws -> UUID {
        guard let id = UUID(uuidString: raw) else { throw ValidationError("Not a plan id: \(raw)") }
        return id
    }

    static func print(_ p: PlanInfo) {
        var gives: [String] = []
        if p.includedDeliveries > 0 { gives.append("\(p.includedDeliveries) deliveries included") }
        if p.discountPercent > 0 { gives.append("\(p.discountPercent) % off") }
        if p.expressIncluded { gives.append("express included") }
        Output.line("\(p.id)  \(p.name)  \(p.monthlyPrice.money) a month  \(gives.joined(separator: ", "))\(p.active ? "" : "  (withdrawn)")")
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "show", abstract: "Your subscription.")
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            try await options.run { session in
                guard let subscription = try await session.subscription() else { return Output.line("No subscription.") }
                if options.json { return Output.json(subscription) }
                SubscriptionCommand.print(subscription)
            }
        }
    }

    struct Plans: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "plans", abstract: "The plans on offer.")
        @OptionGroup var options: GlobalOptions
        @Flag(help: "Withdrawn plans too (admins).") var all = false

        func run() async throws {
            try await options.run { session in
                let plans = try await session.plans(all: all)
                if options.json { return Output.json(plans) }
                plans.forEach(SubscriptionCommand.print)
            }
        }
    }

    struct Subscribe: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "subscribe", abstract: "Subscribe to a plan; prints where to pay.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The plan's id.") var plan: String

        func run() async throws {
            let id = try SubscriptionCommand.planID(plan)
            try await SubscriptionCommand.change(options) { try await $0.subscribe(to: id) }
        }
    }

    /// Runs `change` and prints the subscription it answers.
    static func change(_ options: GlobalOptions, _ change: (WaybillSession) async throws -> SubscriptionInfo) async throws {
        try await options.run { session in
            let subscription = try await change(session)
            if options.json { return Output.json(subscription) }
            SubscriptionCommand.print(subscription)
        }
    }

    struct Cancel: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "cancel", abstract: "Stop the renewal; the plan stays until the period's end.")
        @OptionGroup var options: GlobalOptions

        func run() async throws { try await SubscriptionCommand.change(options) { try await $0.cancelSubscription() } }
    }

    struct Resume: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "resume", abstract: "Keep a subscription set to end.")
        @OptionGroup var options: GlobalOptions

        func run() async throws { try await SubscriptionCommand.change(options) { try await $0.resumeSubscription() } }
    }

    struct Subscribers: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "subscribers",
                                                        abstract: "Who subscribes, newest first (admins): those paid for, or --status's.")
        @OptionGroup var options: GlobalOptions
        @Option(help: "Only this plan's subscribers (its id).") var plan: String?
        @Option(help: "incomplete, active, past_due or canceled (default: active and past_due).") var status: String?
        @Option(help: "Stop after this many.") var limit = 200

        func run() async throws {
            let planID = try plan.map(SubscriptionCommand.planID)
            let wanted = try status.map { raw -> SubscriptionStatus in
                guard let value = SubscriptionStatus(rawValue: raw) else { throw ValidationError("Not a status: \(raw) (incomplete, active, past_due, canceled)") }
                return value
            }
            guard limit > 0 else { throw ValidationError("--limit must be at least 1") }
            try await options.run { session in
                var all: [SubscriberInfo] = []
                var cursor: String?
                repeat {
                    let page = try await session.subscribers(plan: planID, status: wanted, cursor: cursor, limit: min(100, limit - all.count))
                    all += page.items
                    cursor = page.nextCursor
                } while cursor != nil && all.count < limit
                if options.json { return Output.json(all) }
                if all.isEmpty { return Output.line("No subscribers.") }
                for entry in all {
                    let s = entry.subscription, a = entry.account
                    let who = [a.firstName, a.lastName].compactMap { $0 }.joined(separator: " ") + (a.email.map { " <\($0)>" } ?? "")
                    let used = s.plan.includedDeliveries > 0 ? "  \(s.includedUsed)/\(s.plan.includedDeliveries) included used" : ""
                    let end = s.currentPeriodEnd.map { "  \(s.cancelAtPeriodEnd ? "ends" : "renews") \($0.formatted(date: .abbreviated, time: .omitted))" } ?? ""
                    Output.line("\(who)  \(s.plan.name)  \(s.status.rawValue)\(end)\(used)\(s.sandbox ? "  (sandbox)" : "")")
                }
            }
        }
    }

    struct Offer: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "offer", abstract: "Offer a plan, or change one with --id (admins).")
        @OptionGroup var options: GlobalOptions
        @Option(help: "Change this plan instead of offering a new one.") var id: String?
        @Option var name: String
        @Option(help: "The monthly price, such as 49.00.") var price: String
        @Option(help: "Deliveries a month whose delivery charge the plan covers.") var included: Int = 0
        @Option(help: "Percent off the other deliveries.") var discount: Int = 0
        @Flag(help: "No express surcharge.") var express = false
        @Flag(help: "Withdraw it: no new subscribers.") var withdrawn = false

        func run() async throws {
            guard let cents = Money.minorUnits(fromText: price, maximum: 100_000) else { throw ValidationError("Not an amount: \(price) (such as 49.00)") }
            let planID = try id.map(SubscriptionCommand.planID)
            let terms = PlanTerms(name: name, monthlyPrice: cents, includedDeliveries: included, discountPercent: discount, expressIncluded: express)
            try await options.run { session in
                let plan: PlanInfo
                if let planID { plan = try await session.updatePlan(planID, terms, active: !withdrawn) }
                else { plan = try await session.createPlan(terms, active: !withdrawn) }
                if options.json { return Output.json(plan) }
                SubscriptionCommand.print(plan)
            }
        }
    }
}
