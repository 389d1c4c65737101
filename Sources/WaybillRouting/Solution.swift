/// A plan: a route per vehicle used, and what could not be served, with the reason.
public struct RoutingSolution: Sendable, Codable {
    public struct Stop: Sendable, Codable, Hashable {
        public enum Kind: String, Sendable, Codable { case delivery, pickup }
        /// The job's or shipment's id.
        public var id: String
        public var kind: Kind
        public var location: Int
        public var arrival: Double
        /// When service starts (after waiting for the window to open).
        public var serviceStart: Double
        public var departure: Double
        /// What the vehicle carries when it leaves, per dimension.
        public var load: [Int]
    }

    public struct Route: Sendable, Codable {
        public var vehicle: String
        public var vehicleIndex: Int
        public var departure: Double
        public var stops: [Stop]
        public var arrival: Double
        public var distance: Double
        public var duration: Double
    }

    public enum Reason: String, Sendable, Codable, Hashable {
        /// No vehicle has every skill it needs.
        case noVehicleWithSkills = "no_vehicle_with_skills"
        /// It is bigger than any suitable vehicle.
        case capacity
        /// Its window cannot be reached by any suitable vehicle's shift, even alone.
        case timeWindow = "time_window"
        /// It could be served alone, but not beside the rest: no vehicle had room or time left.
        case noRoom = "no_room"
        /// Optional, and serving it would cost more than its penalty.
        case notWorthIt = "not_worth_it"
    }

    public struct Unassigned: Sendable, Codable, Hashable {
        public var id: String
        public var reason: Reason
    }

    public var routes: [Route]
    public var unassigned: [Unassigned]
    /// The objective: distance, plus fixed costs of the vehicles used, plus penalties of what was left out.
    public var cost: Double
    public var distance: Double
    public var vehiclesUsed: Int { routes.count }
    /// Search statistics.
    public var iterations: Int
    public var seconds: Double
}
