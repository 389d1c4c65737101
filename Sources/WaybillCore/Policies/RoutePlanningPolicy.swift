import Foundation

/// What route planning may do with each order, and what an order weighs in a van (issue
/// "Auto-dispatch and route optimisation"). The planner in the server asks these; nothing else decides.
/// Where a route plan stands: proposed to dispatch, applied (its orders given to their drivers), or
/// superseded by a newer plan.
public enum RoutePlanStatus: String, Sendable, Hashable, Codable, CaseIterable {
    case proposed, applied, superseded
}

public enum RoutePlanningPolicy {
    /// Whether a plan may be applied: only the newest, while it is proposed (an older one was
    /// planned on orders and drivers that have changed since). The Routes page offers Apply and the
    /// service applies by this one rule.
    public static func mayApply(_ status: RoutePlanStatus, isNewest: Bool) -> Bool {
        isNewest && status == .proposed
    }

    /// How an order enters a plan.
    public enum Role: String, Sendable, Hashable, Codable {
        /// Waiting for a driver (or planned but not yet accepted): any driver on duty may get it.
        case open
        /// Its driver took it, or a manager gave it to them by hand: it stays with that driver, the plan
        /// only places its stops.
        case keepDriver = "keep_driver"
        /// Picked up: only its delivery is left, in its driver's van.
        case onBoard = "on_board"
    }

    /// The role of an order in `status`; `assignedByPlan` when a plan (not a person) gave it to its
    /// current driver. nil: not for planning (awaiting payment, delivered, cancelled).
    public static func role(of status: OrderStatus, assignedByPlan: Bool) -> Role? {
        switch status {
        case .pending, .failed: .open
        // A manual assignment is an override the next run keeps; a planned one may still move until
        // the driver accepts it.
        case .assigned: assignedByPlan ? .open : .keepDriver
        case .accepted: .keepDriver
        case .inTransit: .onBoard
        case .awaitingPayment, .delivered, .cancelled: nil
        }
    }

    /// Statuses a plan considers.
    public static let plannedStatuses: [OrderStatus] = OrderStatus.allCases.filter {
        role(of: $0, assignedByPlan: false) != nil
    }

    /// Room an order takes, in load units: a small parcel 1, a medium one 3, a large one 10.
    public static func load(_ weight: WeightClass) -> Int {
        switch weight {
        case .small: 1
        case .medium: 3
        case .large: 10
        }
    }

    /// A van's room in load units unless the manager says otherwise (four large parcels, or forty small).
    public static let defaultCapacity = 40
    public static let capacityRange = 1...10_000
    /// Express orders are served first when not everything fits.
    public static func priority(_ service: ServiceLevel) -> Int { service == .express ? 1 : 0 }
    /// Minutes a stop takes (parking, the hand-over).
    public static let defaultServiceMinutes = 3
    public static let serviceMinutesRange = 0...120
    /// Seconds of search a manager may ask for (the server's thread is busy meanwhile).
    public static let secondsRange = 0.2...30.0
    public static let defaultSeconds = 2.0
    /// Plans one account may ask for per minute.
    public static let plansPerMinute = 10
    /// At most this many orders in one plan.
    public static let maxOrders = 2_000

    /// Why an order is not in a plan, as the board shows it.
    public enum Unplanned: String, Sendable, Hashable, Codable, CaseIterable {
        /// Its pickup or drop-off has no coordinates.
        case noCoordinates = "no_coordinates"
        /// It stays with its driver, who is not on duty.
        case driverOffDuty = "driver_off_duty"
        /// Nobody is on duty.
        case noDriverOnDuty = "no_driver_on_duty"
        /// Larger than a van holds.
        case tooLarge = "too_large"
        /// No driver can reach it and come back before their shift ends.
        case outOfShift = "out_of_shift"
        /// Each part fits, but not beside the rest: every van is full or out of time.
        case noRoom = "no_room"
        /// Its booked timeslot cannot be kept: it ended, or no driver reaches it within it.
        case slotMissed = "slot_missed"
        /// Its booked timeslot is on a later day than the plan's.
        case slotLater = "slot_later"
        /// Its sender drops it at a counter and has not yet, and no drop-off slot (still to come) says when.
        case notAtCounter = "not_at_counter"
    }

    /// When a driver may collect a parcel its sender drops at a counter.
    public enum CounterPickup: Sendable, Equatable {
        /// The counter holds it.
        case now
        /// From the end of its booked drop-off slot (Unix ms).
        case from(Int64)
        /// Not before it is there: no drop-off slot to come says when.
        case notYet
    }

    /// The counter holds it: now; its drop-off slot is still to end: from then; otherwise not yet (a
    /// drop-off slot that ended without the parcel says nothing more).
    public static func counterPickup(held: Bool, dropOffSlotEnd: Int64?, now: Int64) -> CounterPickup {
        if held { return .now }
        if let end = dropOffSlotEnd, end > now { return .from(end) }
        return .notYet
    }

    /// A booked timeslot as the solver's time window, in seconds from `now` (the plan's clock); nil
    /// for a slot that already ended (the order stays out with `slotMissed`).
    public static func window(slotStart: Int64, slotEnd: Int64, now: Int64) -> (start: Double, end: Double)? {
        guard slotEnd > now else { return nil }
        return (max(0, Double(slotStart) - Double(now)) / 1000, (Double(slotEnd) - Double(now)) / 1000)
    }

    public enum StopKind: Sendable { case pickup, delivery }

    /// Whether a planned stop is still to be done by its driver, given the order's status now.
    public static func stopIsAhead(_ kind: StopKind, status: OrderStatus) -> Bool {
        switch kind {
        case .pickup: status == .assigned || status == .accepted
        case .delivery: status == .assigned || status == .accepted || status == .inTransit
        }
    }

    /// Whether a driver is on their way to this stop: it is their first stop still ahead in the applied
    /// plan, and they have started on it (accepted the order for a pickup, picked it up for a delivery).
    /// Re-planning keeps such a stop first.
    public static func isUnderWay(_ kind: StopKind, status: OrderStatus) -> Bool {
        switch kind {
        case .pickup: status == .accepted
        case .delivery: status == .inTransit
        }
    }

    /// Auto-dispatch re-plans when an order reaches this status (paid or confirmed, or failed and back
    /// with the managers).
    public static func autoDispatchReplans(on status: OrderStatus) -> Bool { status == .pending || status == .failed }
    /// Seconds of search an automatic plan takes.
    public static let autoDispatchSeconds = 1.0
}
