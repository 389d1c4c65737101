import ArgumentParser
import Foundation
import WaybillClient
import WaybillCore

/// `waybill-client plan`: plans the open orders over the drivers on duty and prints each route;
/// `--apply` gives the orders their drivers. `plan show` prints the newest plan, `plan apply ID`
/// applies a proposed one, `plan mine` prints a driver's own stops.
struct PlanCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plan", abstract: "Plan the drivers' routes (dispatchers), or see your planned stops (drivers).",
        subcommands: [Make.self, Show.self, Apply.self, Mine.self, Auto.self], defaultSubcommand: Make.self)

    static func time(_ date: Date) -> String {
        let f = DateFormatter()
        f.dateFormat = "HH:mm"
        return f.string(from: date)
    }

    static func print(_ plan: RoutePlan) {
        Output.line("Plan \(plan.version) (\(plan.status.rawValue)), \(plan.id): \(String(format: "%.1f", plan.distanceMeters / 1000)) km, distances from \(plan.matrixSource)")
        for route in plan.routes {
            Output.line("\(route.driverName) (\(route.driverId)): \(route.stops.count) stops, \(String(format: "%.1f", route.distanceMeters / 1000)) km")
            for stop in route.stops {
                Output.line("  \(time(stop.arrival))  \(stop.kind == .pickup ? "pick up" : "deliver")  \(stop.reference)  (\(stop.orderId))")
            }
        }
        if !plan.unplanned.isEmpty {
            Output.line("Not planned:")
            for u in plan.unplanned { Output.line("  \(u.reference)  \(u.reason.rawValue)  (\(u.orderId))") }
        }
    }

    static func print(_ result: RoutePlanResult, json: Bool) {
        if json { return Output.json(result) }
        print(result.plan)
        for r in result.results where r.outcome != .unchanged {
            Output.line("\(r.reference): \(r.outcome.rawValue)\(r.error.map { " (\($0.message))" } ?? "")")
        }
    }

    struct Make: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "make", abstract: "Plan now (and with --apply, give the orders their drivers).")
        @OptionGroup var options: GlobalOptions
        @Option(help: "Seconds of search (0.2 to 30).") var seconds: Double?
        @Option(help: "A van's room in load units (small 1, medium 3, large 10).") var capacity: Int?
        @Option(help: "Minutes per stop.") var serviceMinutes: Int?
        @Flag(help: "As few drivers as possible first, then the shortest distance.") var fewestDrivers = false
        @Flag(help: "Give each order its planned driver.") var apply = false

        func run() async throws {
            try await options.run { session in
                PlanCommand.print(try await session.planRoutes(seconds: seconds, capacity: capacity, serviceMinutes: serviceMinutes,
                                                               fewestDrivers: fewestDrivers, apply: apply), json: options.json)
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "show", abstract: "The newest plan, or one by id.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "A plan id (default: the newest).") var id: String?

        func run() async throws {
            let planID = try id.map { text -> UUID in
                guard let u = UUID(uuidString: text) else { throw ValidationError("Not a plan id: \(text)") }
                return u
            }
            try await options.run { session in
                let plan: RoutePlan? = if let planID { try await session.routePlan(planID) } else { try await session.latestRoutePlan() }
                guard let plan else { return Output.line("No plan yet.") }
                if options.json { Output.json(plan) } else { PlanCommand.print(plan) }
            }
        }
    }

    struct Apply: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "apply", abstract: "Give each order of a proposed plan its driver.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The plan's id.") var id: String

        func run() async throws {
            guard let planID = UUID(uuidString: id) else { throw ValidationError("Not a plan id: \(id)") }
            try await options.run { session in PlanCommand.print(try await session.applyRoutePlan(planID), json: options.json) }
        }
    }

    struct Mine: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "mine", abstract: "Your stops in the applied plan, in order (drivers).")
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            try await options.run { session in
                let stops = try await session.myPlannedStops()
                if options.json { return Output.json(stops) }
                if stops.isEmpty { Output.line("No planned stops.") }
                for stop in stops {
                    Output.line("\(PlanCommand.time(stop.arrival))  \(stop.kind == .pickup ? "pick up" : "deliver")  \(stop.reference)  (\(stop.orderId))")
                }
            }
        }
    }

    struct Auto: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "auto",
                                                        abstract: "Auto-dispatch: new orders planned and given to drivers within seconds, in your name.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "on, off, or nothing to see the setting.") var state: String?
        @Option(help: "A van's room in load units for automatic plans.") var capacity: Int?

        func run() async throws {
            guard state == nil || state == "on" || state == "off" else { throw ValidationError("Say on or off.") }
            try await options.run { session in
                let settings = if let state { try await session.setAutoDispatch(state == "on", capacity: capacity) }
                    else { try await session.dispatchSettings() }
                if options.json { return Output.json(settings) }
                Output.line("Auto-dispatch is \(settings.autoDispatch ? "on" : "off") (van room \(settings.capacity))\(settings.replanDue ? ", a plan is due" : "").")
            }
        }
    }
}
