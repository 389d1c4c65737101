import Foundation

// Reception counters (issue "Counters, timeslots and QR hand-overs", item 1), the pure part: what a
// counter is, its opening hours per weekday with holidays and exceptional days, in its own time
// zone, and who manages counters.

extension Identifiers {
    public enum Counter {}
}

public typealias CounterID = Tagged<Identifiers.Counter, UUID>

/// Open from `start` to `end`, minutes after local midnight.
public struct OpeningInterval: Sendable, Hashable, Codable {
    public var start: Int
    public var end: Int

    public init(start: Int, end: Int) {
        self.start = start
        self.end = end
    }

    public var text: String { "\(SlotTemplate.text(minute: start))-\(SlotTemplate.text(minute: end))" }
}

/// When a counter is open: intervals per ISO weekday, closed on holidays, and other hours on
/// exceptional days (an empty list: closed that day).
public struct CounterHours: Sendable, Hashable, Codable {
    /// Seven lists, Monday first.
    public var weekly: [[OpeningInterval]]
    /// Local dates ("YYYY-MM-DD") closed all day.
    public var holidays: [String]
    /// Local dates with their own hours.
    public var exceptions: [String: [OpeningInterval]]

    public init(weekly: [[OpeningInterval]] = Array(repeating: [], count: 7), holidays: [String] = [], exceptions: [String: [OpeningInterval]] = [:]) {
        self.weekly = weekly
        self.holidays = holidays
        self.exceptions = exceptions
    }

    public static let maxIntervalsPerDay = 6
    public static let maxDates = 400

    /// The hours of one local date.
    public func intervals(on date: LocalDate) -> [OpeningInterval] {
        let key = date.description
        if holidays.contains(key) { return [] }
        if let special = exceptions[key] { return special }
        let index = date.weekday.rawValue - 1
        return weekly.indices.contains(index) ? weekly[index] : []
    }

    /// Whether the counter is open at an instant, in its zone.
    public func isOpen(at millis: Int64, in zone: TimeZone) -> Bool {
        let date = LocalDate.at(millis, in: zone)
        let midnight = LocalClock.instant(date, minute: 0, in: zone)
        let minute = Int((millis - midnight) / 60_000)
        return intervals(on: date).contains { $0.start <= minute && minute < $0.end }
    }

    /// Whether the counter is open for the whole of a slot on `date` (a drop-off slot outside the
    /// hours, or on a holiday, is closed).
    public func covers(_ date: LocalDate, from start: Int, to end: Int) -> Bool {
        intervals(on: date).contains { $0.start <= start && end <= $0.end }
    }

    /// "08:00-12:00, 13:30-18:00" (empty: closed), in order and not overlapping.
    public static func parse(_ text: String) -> [OpeningInterval]? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if trimmed.isEmpty { return [] }
        var result: [OpeningInterval] = []
        for part in trimmed.split(separator: ",") {
            let ends = part.trimmingCharacters(in: .whitespaces).split(separator: "-")
            guard ends.count == 2, let start = SlotTemplate.minute(ends[0].trimmingCharacters(in: .whitespaces)),
                  let end = SlotTemplate.minute(ends[1].trimmingCharacters(in: .whitespaces)), start < end else { return nil }
            if let last = result.last, last.end > start { return nil }
            result.append(OpeningInterval(start: start, end: end))
        }
        return result.count <= maxIntervalsPerDay ? result : nil
    }

    public func validate() -> FieldErrors {
        var errors = FieldErrors()
        func valid(_ list: [OpeningInterval]) -> Bool {
            list.count <= Self.maxIntervalsPerDay && list.allSatisfy { (0..<1440).contains($0.start) && (1...1440).contains($0.end) && $0.start < $0.end }
                && zip(list, list.dropFirst()).allSatisfy { $0.end <= $1.start }
        }
        if weekly.count != 7 { errors.add("hours.weekly", "invalid") }
        for (index, day) in weekly.enumerated() where !valid(day) { errors.add("hours.weekly.\(index + 1)", "invalid") }
        if holidays.count > Self.maxDates || holidays.contains(where: { LocalDate($0) == nil }) { errors.add("hours.holidays", "invalid") }
        if exceptions.count > Self.maxDates || exceptions.contains(where: { LocalDate($0.key) == nil || !valid($0.value) }) {
            errors.add("hours.exceptions", "invalid")
        }
        return errors
    }
}

/// A counter as an admin describes it.
public struct CounterDraft: Sendable, Equatable {
    public var name: String
    public var address: Address
    public var timeZone: String
    public var hours: CounterHours

    public init(name: String, address: Address, timeZone: String = "Europe/Zurich", hours: CounterHours) {
        self.name = name
        self.address = address
        self.timeZone = timeZone
        self.hours = hours
    }

    public var cleanName: String { name.trimmingCharacters(in: .whitespacesAndNewlines) }

    public func validate() -> FieldErrors {
        var errors = FieldErrors()
        if cleanName.isEmpty { errors.add("name", "required") } else if cleanName.count > 120 { errors.add("name", "too_long") }
        if address.street.trimmingCharacters(in: .whitespaces).isEmpty { errors.add("address.street", "required") }
        if address.postalCode.trimmingCharacters(in: .whitespaces).isEmpty { errors.add("address.postalCode", "required") }
        if address.city.trimmingCharacters(in: .whitespaces).isEmpty { errors.add("address.city", "required") }
        for (field, text) in [("address.street", address.street), ("address.postalCode", address.postalCode), ("address.city", address.city)] where text.count > 200 {
            errors.add(field, "too_long")
        }
        if let c = address.coordinate, !(-90...90).contains(c.latitude) || !(-180...180).contains(c.longitude) { errors.add("address.coordinate", "out_of_range") }
        if TimeZone(identifier: timeZone) == nil { errors.add("timeZone", "invalid") }
        errors.merge(hours.validate())
        return errors
    }
}

public enum CounterPolicy {
    /// Admins create counters and name their staff (`Permission.manageCounters`).
    public static func mayManage(_ caller: Caller) -> Bool { caller.may(.manageCounters) }

    /// Staff of a counter: an account holding `counter` that an admin named for it.
    public static func isStaff(_ caller: Caller, namedFor named: Bool) -> Bool {
        named && caller.may(.receiveAtCounter)
    }
}
