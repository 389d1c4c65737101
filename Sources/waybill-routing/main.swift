// waybill-routing: solves a benchmark instance (Solomon or Li & Lim format) and prints the plan as JSON,
// for scripts/bench-routing, whose checker recomputes everything from the instance file itself.
import Foundation
import WaybillRouting

func usage() -> Never {
    FileHandle.standardError.write(Data("""
    usage: waybill-routing solve FILE [--format solomon|lilim] [--seconds S] [--iterations N] [--seed K]
                                      [--threads T] [--objective distance|vehicles]
           waybill-routing synthetic N [--seed K] [--seconds S] [--threads T] [--write FILE]
                                      (N stops; --write saves the instance and stops)

    """.utf8))
    exit(2)
}

var args = Array(CommandLine.arguments.dropFirst())
guard let command = args.first else { usage() }
args.removeFirst()
guard let subject = args.first else { usage() }
args.removeFirst()
var flags: [String: String] = [:]
while let flag = args.first, flag.hasPrefix("--"), args.count >= 2 {
    flags[String(flag.dropFirst(2))] = args[1]
    args.removeFirst(2)
}
if !args.isEmpty { usage() }

var options = RoutingOptions(seconds: flags["seconds"].flatMap(Double.init) ?? (flags["iterations"] == nil ? 2 : nil),
                             iterations: flags["iterations"].flatMap(Int.init),
                             seed: flags["seed"].flatMap(UInt64.init) ?? 1,
                             threads: flags["threads"].flatMap(Int.init) ?? 1)
if let t = flags["t0"].flatMap(Double.init) { options.startTemperature = t }
if let t = flags["tf"].flatMap(Double.init) { options.endTemperature = t }

var problem: RoutingProblem
switch command {
case "solve":
    guard let text = try? String(contentsOfFile: subject, encoding: .utf8) else {
        FileHandle.standardError.write(Data("cannot read \(subject)\n".utf8)); exit(1)
    }
    let format = flags["format"].flatMap(BenchmarkFormat.init(rawValue:))
        ?? (text.contains("CUSTOMER") ? .solomon : .liLim)
    do { problem = try format.parse(text) } catch {
        FileHandle.standardError.write(Data("\(subject): \(error)\n".utf8)); exit(1)
    }
case "synthetic":
    guard let n = Int(subject), n > 0 else { usage() }
    let made = SyntheticInstance.makeWithPoints(stops: n, seed: flags["seed"].flatMap(UInt64.init) ?? 1)
    problem = made.problem
    if let path = flags["write"] {
        // The instance without its matrix: the checker recomputes distances from the points.
        struct Written: Encodable {
            var points: [[Double]]; var jobs: [Job]; var shipments: [Shipment]; var vehicles: [Vehicle]
        }
        let written = Written(points: made.points.map { [$0.x, $0.y] }, jobs: problem.jobs,
                              shipments: problem.shipments, vehicles: problem.vehicles)
        try! JSONEncoder().encode(written).write(to: URL(fileURLWithPath: path))
        exit(0)
    }
default:
    usage()
}
if flags["objective"] == "vehicles" {
    // Vehicles first: each vehicle costs more than any route could save.
    let big = 10 * (problem.matrix.distances.max() ?? 1) * Double(max(1, problem.jobs.count + 2 * problem.shipments.count))
    for i in problem.vehicles.indices { problem.vehicles[i].fixedCost = big }
    options.fleetMinimisation = flags["fleet-share"].flatMap(Double.init) ?? 0.5
}
do {
    let solution = try RoutingSolver.solve(problem, options: options)
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    FileHandle.standardOutput.write(try encoder.encode(solution))
    FileHandle.standardOutput.write(Data("\n".utf8))
} catch {
    FileHandle.standardError.write(Data("\(error)\n".utf8)); exit(1)
}
