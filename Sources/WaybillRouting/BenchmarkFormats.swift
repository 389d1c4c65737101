/// The two classic benchmark formats: Solomon's VRPTW (1987) and Li & Lim's PDPTW (2001). Location i is
/// the line with customer number i; location 0 is the depot. Distances are Euclidean, unrounded, and a
/// unit of distance takes a unit of time (the conventions the best-known solutions use).
public enum BenchmarkFormat: String, Sendable, CaseIterable {
    case solomon, liLim = "lilim"

    public struct ParseError: Error, CustomStringConvertible, Sendable {
        public var description: String
    }

    public func parse(_ text: String) throws -> RoutingProblem {
        let lines = text.split(whereSeparator: \.isNewline).map { $0.split(whereSeparator: { $0 == " " || $0 == "\t" }) }
        // Whole numbers where the formats have them; anything else (1e300, nan) makes the line unreadable.
        func numbers(_ line: [Substring]) -> [Double]? {
            let values = line.compactMap { Double($0) }.filter { $0.isFinite && abs($0) < 1e9 }
            return values.count == line.count && !values.isEmpty ? values : nil
        }
        var vehicles = 0, capacity = 0
        var rows: [[Double]] = []
        switch self {
        case .solomon:
            guard let v = lines.firstIndex(where: { $0.first == "VEHICLE" }),
                  let fleet = lines[(v + 1)...].lazy.compactMap(numbers).first, fleet.count >= 2
            else { throw ParseError(description: "no VEHICLE section") }
            vehicles = Int(fleet[0]); capacity = Int(fleet[1])
            guard let c = lines.firstIndex(where: { $0.first == "CUSTOMER" }) else { throw ParseError(description: "no CUSTOMER section") }
            rows = lines[(c + 1)...].compactMap(numbers).filter { $0.count == 7 }
        case .liLim:
            guard let first = lines.first.flatMap(numbers), first.count >= 2 else { throw ParseError(description: "no fleet line") }
            vehicles = Int(first[0]); capacity = Int(first[1])
            rows = lines.dropFirst().compactMap(numbers).filter { $0.count == 9 }
        }
        if vehicles < 1 || vehicles > 10_000 || capacity < 0 { throw ParseError(description: "the fleet line is not sensible") }
        guard !rows.isEmpty, rows[0][0] == 0 else { throw ParseError(description: "the depot (number 0) must come first") }
        for (i, row) in rows.enumerated() where Int(row[0]) != i {
            throw ParseError(description: "customer numbers must run 0, 1, 2…; line \(i) has \(row[0])")
        }
        let matrix = TravelMatrix.euclidean(rows.map { (x: $0[1], y: $0[2]) })
        let depot = rows[0]
        let fleet = (0..<vehicles).map {
            Vehicle(id: "v\($0 + 1)", start: 0, end: 0, shift: TimeWindow(start: depot[4], end: depot[5]), capacity: [capacity])
        }
        func visit(_ row: [Double]) -> Visit {
            Visit(location: Int(row[0]), service: row[6], window: TimeWindow(start: row[4], end: row[5]))
        }
        switch self {
        case .solomon:
            let jobs = rows.dropFirst().map { Job(id: String(Int($0[0])), visit: visit($0), amount: [Int($0[3])]) }
            return RoutingProblem(matrix: matrix, jobs: jobs, vehicles: fleet)
        case .liLim:
            var shipments: [Shipment] = []
            for row in rows.dropFirst() where row[7] == 0 {
                let d = Int(row[8])
                guard d > 0, d < rows.count, rows[d][7] == row[0] else {
                    throw ParseError(description: "pickup \(Int(row[0])) names delivery \(d), which does not name it back")
                }
                shipments.append(Shipment(id: String(Int(row[0])), pickup: visit(row), delivery: visit(rows[d]),
                                          amount: [Int(row[3])]))
            }
            return RoutingProblem(matrix: matrix, shipments: shipments, vehicles: fleet)
        }
    }
}
