import Foundation

// Timeslots (issue "Counters, timeslots and QR hand-overs", item 2), the pure part: templates that
// say when pickups, deliveries and counter drop-offs happen each week, the slots they make on each
// local date (through the zone's own clock, so a slot at 08:00 stays at 08:00 across daylight-saving
// changes: never "add 24 hours"), how full a slot looks to people, and whether it may be held or
// booked now. Seats are counted by the server in one conditional update (`booked + holds < capacity`).

extension Identifiers {
    public enum SlotTemplate {}
    public enum Slot {}
    public enum SlotBooking {}
}

public typealias SlotTemplateID = Tagged<Identifiers.SlotTemplate, UUID>
public typealias SlotID = Tagged<Identifiers.Slot, UUID>
public typealias SlotBookingID = Tagged<Identifiers.SlotBooking, UUID>

/// What a slot is for.
public enum SlotKind: String, Sendable, Hashable, Codable, CaseIterable {
    /// A driver collects the parcel from the sender.
    case pickup
    /// A driver brings the parcel to the receiver.
    case delivery
    /// The sender brings the parcel to a reception counter.
    case dropOff = "drop_off"
}

/// A day of the week, ISO numbering (Monday 1 … Sunday 7).
public enum Weekday: Int, Sendable, Hashable, Codable, CaseIterable {
    case monday = 1, tuesday, wednesday, thursday, friday, saturday, sunday
}

/// A date on the wall calendar of a place, without a time zone ("2026-03-29").
public struct LocalDate: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    public let year: Int
    public let month: Int
    public let day: Int

    public init?(year: Int, month: Int, day: Int) {
        guard (1970...9999).contains(year), (1...12).contains(month), (1...Self.days(inMonth: month, year: year)).contains(day) else { return nil }
        self.year = year
        self.month = month
        self.day = day
    }

    /// A date known to be valid (a constant).
    private init(valid year: Int, _ month: Int, _ day: Int) {
        self.year = year
        self.month = month
        self.day = day
    }

    /// "YYYY-MM-DD" and nothing else.
    public init?(_ text: String) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
              parts.allSatisfy({ $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }),
              let y = Int(parts[0]), let m = Int(parts[1]), let d = Int(parts[2]) else { return nil }
        self.init(year: y, month: m, day: d)
    }

    public var description: String {
        String(format: "%04d-%02d-%02d", year, month, day)
    }

    static func days(inMonth month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01 (the civil-from-days algorithm, exact for the Gregorian calendar).
    public var dayNumber: Int {
        let y = month <= 2 ? year - 1 : year
        let era = y / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    public init?(dayNumber z0: Int) {
        guard (0...3_000_000).contains(z0) else { return nil }
        let z = z0 + 719_468
        let era = z / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        self.init(year: yoe + era * 400 + (m <= 2 ? 1 : 0), month: m, day: d)
    }

    public func adding(days: Int) -> LocalDate? {
        let (n, overflow) = dayNumber.addingReportingOverflow(days)
        return overflow ? nil : LocalDate(dayNumber: n)
    }

    public var weekday: Weekday {
        // 1970-01-01 was a Thursday.
        let offset = ((dayNumber % 7) + 7 + 3) % 7
        return Weekday.allCases[offset]  // monday ... sunday, in order
    }

    public static func < (a: LocalDate, b: LocalDate) -> Bool { a.dayNumber < b.dayNumber }

    /// The local date at an instant in `zone`.
    public static func at(_ millis: Int64, in zone: TimeZone) -> LocalDate {
        let seconds = millis / 1000 + Int64(zone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(millis / 1000))))
        let days = Int(seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400)
        return LocalDate(dayNumber: max(0, days)) ?? LocalDate(valid: 1970, 1, 1)
    }
}

/// Wall-clock time into an instant, in a zone: the one place daylight-saving changes are decided.
public enum LocalClock {
    /// The instant (Unix ms) of `minute` minutes after midnight on `date` in `zone`. A time that does
    /// not exist (the hour skipped in spring) moves forward by the gap: 02:30 becomes 03:30. A time
    /// that happens twice (the hour repeated in autumn) is its first occurrence.
    public static func instant(_ date: LocalDate, minute: Int, in zone: TimeZone) -> Int64 {
        let local = Int64(date.dayNumber) * 86_400 + Int64(max(0, min(minute, 48 * 60))) * 60
        func offset(_ utc: Int64) -> Int64 { Int64(zone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(utc)))) }
        // The offsets in force a day before and a day after: a zone changes at most once between.
        // An instant reads as this wall-clock time when the offset in force then is the one assumed.
        let before = offset(local - 86_400), after = offset(local + 86_400)
        let valid = Set([before, after]).map { local - $0 }.filter { offset($0) == local - $0 }
        if let first = valid.min() { return first * 1000 }
        // In the gap: read with the offset from before the change, which lands after it.
        return (local - before) * 1000
    }
}

/// A weekly rule that makes slots: on a weekday, from a local start to a local end, so many seats.
public struct SlotTemplate: Sendable, Hashable, Codable {
    public var kind: SlotKind
    public var weekday: Weekday
    /// Minutes after local midnight.
    public var startMinute: Int
    public var endMinute: Int
    public var capacity: Int
    /// Booking closes this many minutes before the slot starts (the minimum notice).
    public var cutoffMinutes: Int
    /// Slots are offered this many days ahead, today included.
    public var horizonDays: Int
    /// The IANA zone the times are in ("Europe/Zurich").
    public var timeZone: String
    /// Bookings wait for staff to approve or decline them.
    public var requiresApproval: Bool

    public init(kind: SlotKind, weekday: Weekday, startMinute: Int, endMinute: Int, capacity: Int, cutoffMinutes: Int = 120,
                horizonDays: Int = 14, timeZone: String = "Europe/Zurich", requiresApproval: Bool = false) {
        self.kind = kind
        self.weekday = weekday
        self.startMinute = startMinute
        self.endMinute = endMinute
        self.capacity = capacity
        self.cutoffMinutes = cutoffMinutes
        self.horizonDays = horizonDays
        self.timeZone = timeZone
        self.requiresApproval = requiresApproval
    }

    public static let capacityRange = 1...1000
    public static let cutoffRange = 0...(14 * 24 * 60)
    public static let horizonRange = 1...90

    public var zone: TimeZone? { TimeZone(identifier: timeZone) }

    public func validate() -> FieldErrors {
        var errors = FieldErrors()
        if !(0..<(24 * 60)).contains(startMinute) { errors.add("start", "invalid") }
        if !(1...(24 * 60)).contains(endMinute) { errors.add("end", "invalid") }
        else if endMinute <= startMinute { errors.add("end", "before_start") }
        if !Self.capacityRange.contains(capacity) { errors.add("capacity", "out_of_range") }
        if !Self.cutoffRange.contains(cutoffMinutes) { errors.add("cutoffMinutes", "out_of_range") }
        if !Self.horizonRange.contains(horizonDays) { errors.add("horizonDays", "out_of_range") }
        if zone == nil { errors.add("timeZone", "invalid") }
        return errors
    }

    /// "HH:MM" (00:00–24:00) into minutes after midnight.
    public static func minute(_ text: String) -> Int? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].count == 2, parts[1].count == 2,
              let h = Int(parts[0]), let m = Int(parts[1]), parts.allSatisfy({ $0.allSatisfy { $0.isASCII && $0.isNumber } }),
              (0...24).contains(h), (0...59).contains(m), h < 24 || m == 0 else { return nil }
        return h * 60 + m
    }

    public static func text(minute: Int) -> String {
        String(format: "%02d:%02d", minute / 60, minute % 60)
    }
}

/// One slot on one local date, as a template makes it.
public struct SlotOccurrence: Sendable, Hashable {
    public var date: LocalDate
    public var startsAt: Int64
    public var endsAt: Int64
}

public enum SlotCalendar {
    /// The template's slots from `from` for `days` local dates (its weekday only; a slot the clock
    /// change leaves empty is skipped).
    public static func occurrences(of template: SlotTemplate, from: LocalDate, days: Int) -> [SlotOccurrence] {
        guard let zone = template.zone, days > 0 else { return [] }
        var result: [SlotOccurrence] = []
        for offset in 0..<min(days, 366) {
            guard let date = from.adding(days: offset) else { break }
            guard date.weekday == template.weekday else { continue }
            let start = LocalClock.instant(date, minute: template.startMinute, in: zone)
            let end = LocalClock.instant(date, minute: template.endMinute, in: zone)
            if end > start { result.append(SlotOccurrence(date: date, startsAt: start, endsAt: end)) }
        }
        return result
    }

    /// The local dates a template offers at `now`: from today (in its zone) for its horizon.
    public static func offered(by template: SlotTemplate, now: Int64) -> [SlotOccurrence] {
        guard let zone = template.zone else { return [] }
        return occurrences(of: template, from: LocalDate.at(now, in: zone), days: template.horizonDays)
    }
}

/// How a slot looks to people choosing one.
public enum SlotAvailability: String, Sendable, Hashable, Codable, CaseIterable {
    case available
    /// A few seats left (a fifth of them or fewer).
    case nearlyFull = "nearly_full"
    case full
    /// Not to be booked: closed (a counter's holiday, a template switched off) or past its cutoff.
    case unavailable
}

public enum SlotPolicy {
    /// How long choosing a slot keeps a seat for the person while they finish their order.
    public static let holdMillis: Int64 = 10 * 60 * 1000

    /// Seats nobody has taken or is holding.
    public static func free(capacity: Int, booked: Int, held: Int) -> Int {
        max(0, capacity - max(0, booked) - max(0, held))
    }

    /// Booking closes `cutoffMinutes` before the slot starts.
    public static func isPastCutoff(startsAt: Int64, cutoffMinutes: Int, now: Int64) -> Bool {
        let (closes, overflow) = startsAt.subtractingReportingOverflow(Int64(max(0, cutoffMinutes)) * 60_000)
        return overflow || now >= closes
    }

    /// What people see. `held` counts other people's live holds (one's own hold is one's seat).
    public static func availability(capacity: Int, booked: Int, held: Int, startsAt: Int64, cutoffMinutes: Int, closed: Bool,
                                    now: Int64) -> SlotAvailability {
        if closed || isPastCutoff(startsAt: startsAt, cutoffMinutes: cutoffMinutes, now: now) { return .unavailable }
        let free = free(capacity: capacity, booked: booked, held: held)
        if free == 0 { return .full }
        return free * 5 <= capacity ? .nearlyFull : .available
    }
}

extension SlotPolicy {
    /// Whether a template's zone (a postal-code prefix; empty for everywhere) covers a postal code.
    public static func covers(zone: String, postalCode: String) -> Bool {
        zone.isEmpty || postalCode.replacingOccurrences(of: " ", with: "").uppercased().hasPrefix(zone)
    }

    /// A zone as stored: upper case, no spaces, letters and digits, at most 10.
    public static func cleanZone(_ text: String) -> String? {
        let zone = text.replacingOccurrences(of: " ", with: "").uppercased()
        guard zone.count <= 10, zone.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0)) }) else { return nil }
        return zone
    }

    /// Who sets the weekly templates and decides bookings: dispatch.
    public static func isStaff(_ caller: Caller) -> Bool { caller.may(.dispatch) }

    /// Whether someone in `capacities` may book (or move, or cancel) a shipment's slot of `kind` now:
    /// its customer and dispatch, and for the delivery its receiver too; a pickup until the parcel is
    /// picked up, a delivery until it is delivered. Slots are the fleet's: a leg carried by a
    /// traveller or an outside carrier keeps its own arrangements (`legKind`: the leg the slot is for).
    public static func mayBook(_ kind: SlotKind, as capacities: Set<OrderCapacity>, status: OrderStatus, legKind: LegKind = .fleet) -> Bool {
        guard legKind == Self.legKind(of: kind) else { return false }
        switch kind {
        case .pickup:
            return !capacities.isDisjoint(with: [.owner, .manager]) && [.awaitingPayment, .pending, .assigned, .accepted].contains(status)
        case .delivery:
            return !capacities.isDisjoint(with: [.owner, .manager, .receiver])
                && [.awaitingPayment, .pending, .assigned, .accepted, .inTransit, .failed].contains(status)
        case .dropOff:
            return !capacities.isDisjoint(with: [.owner, .manager]) && [.awaitingPayment, .pending].contains(status)
        }
    }
}

extension SlotPolicy {
    /// The kind of leg a slot of `kind` is for: a drop-off is a counter's, pickups and deliveries the fleet's.
    public static func legKind(of kind: SlotKind) -> LegKind { kind == .dropOff ? .counter : .fleet }

    /// The kind of the shipment's leg (`legs`, in order) a slot of `kind` would belong to: a delivery's
    /// is the last leg, a pickup's or drop-off's the first.
    public static func leg(for kind: SlotKind, in legs: [LegKind]) -> LegKind? { kind == .delivery ? legs.last : legs.first }
}

/// Whether a booked visit keeps its timeslot.
public enum SlotTiming: String, Sendable, Hashable, Codable {
    case onTime = "on_time"
    /// The planned arrival is after the slot ends, or the slot ended without the visit.
    case late
}

extension SlotPolicy {
    /// How a booked visit stands at `now`, with the driver's planned arrival at that stop if known:
    /// late when the slot ended without it, or when the arrival is after the slot's end; nil when
    /// nothing is known yet.
    public static func timing(arrival: Int64?, slotEnd: Int64, now: Int64) -> SlotTiming? {
        if now > slotEnd { return .late }
        guard let arrival else { return nil }
        return arrival > slotEnd ? .late : .onTime
    }
}

/// Where a booking is.
public enum SlotBookingStatus: String, Sendable, Hashable, Codable, CaseIterable {
    /// Waiting for staff (the template requires approval); it holds its seat meanwhile.
    case pending
    case booked
    case declined
    case cancelled
    /// The visit happened (staff say so).
    case completed
    /// The visit was booked but did not happen (staff say so, with a reason).
    case failed

    /// Holds a seat.
    public var takesSeat: Bool { self == .pending || self == .booked }
    /// The bookings still to come (they hold a seat): what the slot lists, the driver's day and the
    /// order's page show, and what a cancelled shipment frees.
    public static let live: [SlotBookingStatus] = allCases.filter(\.takesSeat)
    /// What a counter's desk shows of a day's drop-offs: those to come, and those done already.
    public static let atDesk: [SlotBookingStatus] = live + [.completed]
    /// Gives its seat back when reached from a status that held one (a visit done or failed keeps it).
    public var releasesSeat: Bool { self == .declined || self == .cancelled }
}

/// What staff or the customer do to a booking.
public enum SlotBookingAction: String, Sendable, Hashable, Codable, CaseIterable {
    case approve, decline, cancel, complete, fail
}

public enum SlotBookingMachine {
    /// Who may do what: staff decide pending bookings and mark visits; the customer (or staff)
    /// cancels until the slot starts. `isStaff`: the slot's staff (dispatch, or the counter's).
    public static func decide(_ action: SlotBookingAction, from status: SlotBookingStatus, isStaff: Bool, isOwner: Bool,
                              slotStarted: Bool) -> Result<SlotBookingStatus, BookingRefusal> {
        switch action {
        case .approve, .decline:
            guard isStaff else { return .failure(.forbidden) }
            guard status == .pending else { return .failure(.wrongStatus) }
            return .success(action == .approve ? .booked : .declined)
        case .cancel:
            guard isStaff || isOwner else { return .failure(.forbidden) }
            guard status.takesSeat else { return .failure(.wrongStatus) }
            guard !slotStarted || isStaff else { return .failure(.tooLate) }
            return .success(.cancelled)
        case .complete, .fail:
            guard isStaff else { return .failure(.forbidden) }
            guard status == .booked else { return .failure(.wrongStatus) }
            return .success(action == .complete ? .completed : .failed)
        }
    }

    public enum BookingRefusal: Error, Sendable, Equatable {
        case forbidden, wrongStatus, tooLate
    }
}
