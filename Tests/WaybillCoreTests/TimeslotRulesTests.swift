import Foundation
import Testing
@testable import WaybillCore

@Suite("Timeslots: weekly templates make slots on the local calendar, through clock changes; how full they look; who may change a booking")
struct TimeslotRulesTests {
    static let zurich = TimeZone(identifier: "Europe/Zurich")!

    static func utc(_ text: String) -> Int64 {
        let formatter = ISO8601DateFormatter()
        return Int64(formatter.date(from: text)!.timeIntervalSince1970 * 1000)
    }

    @Test("Live bookings are those that hold a seat, as the database's one-live-booking index says (pending, booked); the desk also shows those done")
    func liveBookings() {
        // Migrations/028_Timeslots.swift: `slot_bookings_live ... WHERE status IN ('pending', 'booked')`.
        #expect(SlotBookingStatus.live.map(\.rawValue) == ["pending", "booked"])
        #expect(SlotBookingStatus.atDesk == [.pending, .booked, .completed])
        #expect(SlotBookingStatus.allCases.filter { !SlotBookingStatus.live.contains($0) }.allSatisfy { !$0.takesSeat })
    }

    @Test("Local dates: parsed strictly, counted exactly, with the right weekday")
    func localDates() throws {
        #expect(LocalDate("2026-03-29")?.description == "2026-03-29")
        for bad in ["2026-3-29", "2026-02-30", "2025-02-29", "26-03-29", "2026-03-29T00", "２０２６-03-29", "", "9999999999-01-01"] {
            #expect(LocalDate(bad) == nil, "\(bad)")
        }
        #expect(LocalDate("2024-02-29") != nil)
        let date = try #require(LocalDate("2026-03-29"))
        #expect(date.weekday == .sunday && LocalDate("2026-10-26")?.weekday == .monday && LocalDate("1970-01-01")?.weekday == .thursday)
        #expect(LocalDate(dayNumber: date.dayNumber) == date)
        #expect(date.adding(days: 3)?.description == "2026-04-01" && date.adding(days: -29)?.description == "2026-02-28")
        #expect(date.adding(days: Int.max) == nil)
        #expect(LocalDate.at(Self.utc("2026-03-28T23:30:00Z"), in: Self.zurich).description == "2026-03-29", "00:30 in Zurich")
    }

    @Test("A slot at 08:00 is at 08:00 on both clock-change days in Zurich: 06:00 UTC in summer, 07:00 in winter")
    func clockChanges() {
        let morning = SlotTemplate(kind: .delivery, weekday: .sunday, startMinute: 8 * 60, endMinute: 10 * 60, capacity: 5)
        let march = SlotCalendar.occurrences(of: morning, from: LocalDate("2026-03-22")!, days: 14)
        #expect(march.map(\.date.description) == ["2026-03-22", "2026-03-29"])
        #expect(march.map(\.startsAt) == [Self.utc("2026-03-22T07:00:00Z"), Self.utc("2026-03-29T06:00:00Z")])
        #expect(march.allSatisfy { $0.endsAt - $0.startsAt == 2 * 3_600_000 })
        let october = SlotCalendar.occurrences(of: morning, from: LocalDate("2026-10-25")!, days: 8)
        #expect(october.map(\.startsAt) == [Self.utc("2026-10-25T07:00:00Z"), Self.utc("2026-11-01T07:00:00Z")])
        #expect(SlotCalendar.occurrences(of: morning, from: LocalDate("2026-10-18")!, days: 1).map(\.startsAt) == [Self.utc("2026-10-18T06:00:00Z")])

        // Across the changes themselves: the skipped hour shortens a night slot, the repeated one lengthens it.
        let night = SlotTemplate(kind: .pickup, weekday: .sunday, startMinute: 60, endMinute: 4 * 60, capacity: 1)
        let spring = SlotCalendar.occurrences(of: night, from: LocalDate("2026-03-29")!, days: 1)[0]
        #expect(spring.startsAt == Self.utc("2026-03-29T00:00:00Z") && spring.endsAt == Self.utc("2026-03-29T02:00:00Z"), "01:00–04:00 lasts two hours")
        let autumn = SlotCalendar.occurrences(of: night, from: LocalDate("2026-10-25")!, days: 1)[0]
        #expect(autumn.startsAt == Self.utc("2026-10-24T23:00:00Z") && autumn.endsAt == Self.utc("2026-10-25T03:00:00Z"), "01:00–04:00 lasts four hours")
        // 02:30 does not exist on the spring day: it moves forward by the gap; on the autumn day it is its first occurrence.
        #expect(LocalClock.instant(LocalDate("2026-03-29")!, minute: 150, in: Self.zurich) == Self.utc("2026-03-29T01:30:00Z"))
        #expect(LocalClock.instant(LocalDate("2026-10-25")!, minute: 150, in: Self.zurich) == Self.utc("2026-10-25T00:30:00Z"))
        // A slot entirely inside the skipped hour does not exist.
        let gap = SlotTemplate(kind: .pickup, weekday: .sunday, startMinute: 120, endMinute: 180, capacity: 1)
        #expect(SlotCalendar.occurrences(of: gap, from: LocalDate("2026-03-29")!, days: 1).isEmpty)
        #expect(SlotCalendar.occurrences(of: gap, from: LocalDate("2026-04-05")!, days: 1).count == 1)
    }

    @Test("A template offers its weekday from today in its own zone, for its horizon")
    func offered() {
        var template = SlotTemplate(kind: .dropOff, weekday: .monday, startMinute: 9 * 60, endMinute: 12 * 60, capacity: 3, horizonDays: 15)
        // Sunday 23:30 UTC is already Monday in Zurich.
        let now = Self.utc("2026-11-22T23:30:00Z")
        #expect(SlotCalendar.offered(by: template, now: now).map(\.date.description) == ["2026-11-23", "2026-11-30", "2026-12-07"])
        // In New York it is still Sunday afternoon: fifteen days from the 22nd end before the third Monday.
        template.timeZone = "America/New_York"
        #expect(SlotCalendar.offered(by: template, now: now).map(\.date.description) == ["2026-11-23", "2026-11-30"])
        template.timeZone = "Mars/Olympus"
        #expect(SlotCalendar.offered(by: template, now: now).isEmpty && template.validate()["timeZone"] == "invalid")
    }

    @Test("Templates: the end after the start, sensible capacity, cutoff and horizon, a real time zone; times read as HH:MM")
    func templateValidation() {
        #expect(SlotTemplate(kind: .pickup, weekday: .monday, startMinute: 480, endMinute: 600, capacity: 5).validate().isEmpty)
        let bad = SlotTemplate(kind: .pickup, weekday: .monday, startMinute: 600, endMinute: 480, capacity: 0, cutoffMinutes: -1, horizonDays: 0)
        let errors = bad.validate()
        #expect(errors["end"] == "before_start" && errors["capacity"] == "out_of_range" && errors["cutoffMinutes"] == "out_of_range" && errors["horizonDays"] == "out_of_range")
        #expect(SlotTemplate.minute("08:30") == 510 && SlotTemplate.minute("24:00") == 1440 && SlotTemplate.minute("00:00") == 0)
        for text in ["8:30", "24:01", "12:60", "ab:cd", "", "08:30:00", "-1:00", "٠٨:٣٠"] { #expect(SlotTemplate.minute(text) == nil, "\(text)") }
        #expect(SlotTemplate.text(minute: 510) == "08:30")
    }

    @Test("People see a slot as available, nearly full (a fifth left or less), full, or unavailable once closed or past its cutoff")
    func availability() {
        let start = Self.utc("2026-12-01T08:00:00Z"), cutoff = 120
        let early = start - 3 * 3_600_000
        func look(_ capacity: Int, booked: Int, held: Int = 0, now: Int64 = early, closed: Bool = false) -> SlotAvailability {
            SlotPolicy.availability(capacity: capacity, booked: booked, held: held, startsAt: start, cutoffMinutes: cutoff, closed: closed, now: now)
        }
        #expect(look(10, booked: 0) == .available && look(10, booked: 7) == .available)
        #expect(look(10, booked: 8) == .nearlyFull && look(10, booked: 7, held: 2) == .nearlyFull && look(5, booked: 4) == .nearlyFull)
        #expect(look(10, booked: 10) == .full && look(5, booked: 3, held: 2) == .full && look(5, booked: 9) == .full)
        #expect(look(10, booked: 0, closed: true) == .unavailable)
        #expect(look(10, booked: 0, now: start - 2 * 3_600_000) == .unavailable, "booking closes two hours before")
        #expect(look(10, booked: 0, now: start - 2 * 3_600_000 - 1) == .available)
        #expect(SlotPolicy.isPastCutoff(startsAt: Int64.min, cutoffMinutes: 120, now: 0), "no trap at the ends")
        #expect(SlotPolicy.free(capacity: 5, booked: -3, held: Int.min) == 5)
        // A driver who will arrive after the slot ends, or a slot that ended without the visit: late.
        let end = start + 2 * 3_600_000
        #expect(SlotPolicy.timing(arrival: end - 1, slotEnd: end, now: early) == .onTime)
        #expect(SlotPolicy.timing(arrival: end + 60_000, slotEnd: end, now: early) == .late)
        #expect(SlotPolicy.timing(arrival: nil, slotEnd: end, now: early) == nil)
        #expect(SlotPolicy.timing(arrival: nil, slotEnd: end, now: end + 1) == .late)
        // As a route plan's time window, in seconds from now; none once the slot ended.
        #expect(RoutePlanningPolicy.window(slotStart: start, slotEnd: end, now: early)! == (3 * 3600, 5 * 3600))
        #expect(RoutePlanningPolicy.window(slotStart: start, slotEnd: end, now: start + 1000)! == (0, 2 * 3600 - 1))
        #expect(RoutePlanningPolicy.window(slotStart: start, slotEnd: end, now: end) == nil)
    }

    @Test("Staff approve or decline what waits and mark visits completed or failed; the customer cancels until the slot starts")
    func bookingMachine() {
        func decide(_ a: SlotBookingAction, _ s: SlotBookingStatus, staff: Bool = false, owner: Bool = false, started: Bool = false) -> Result<SlotBookingStatus, SlotBookingMachine.BookingRefusal> {
            SlotBookingMachine.decide(a, from: s, isStaff: staff, isOwner: owner, slotStarted: started)
        }
        #expect(decide(.approve, .pending, staff: true) == .success(.booked) && decide(.decline, .pending, staff: true) == .success(.declined))
        #expect(decide(.approve, .pending, owner: true) == .failure(.forbidden) && decide(.approve, .booked, staff: true) == .failure(.wrongStatus))
        #expect(decide(.cancel, .booked, owner: true) == .success(.cancelled) && decide(.cancel, .pending, owner: true) == .success(.cancelled))
        #expect(decide(.cancel, .booked, owner: true, started: true) == .failure(.tooLate) && decide(.cancel, .booked, staff: true, started: true) == .success(.cancelled))
        #expect(decide(.cancel, .completed, owner: true) == .failure(.wrongStatus) && decide(.cancel, .booked) == .failure(.forbidden))
        #expect(decide(.complete, .booked, staff: true) == .success(.completed) && decide(.fail, .booked, staff: true) == .success(.failed))
        #expect(decide(.complete, .pending, staff: true) == .failure(.wrongStatus) && decide(.complete, .booked, owner: true) == .failure(.forbidden))
        #expect(SlotBookingStatus.allCases.filter(\.takesSeat) == [.pending, .booked])
        // Who books what, and until when; only the fleet's legs take slots.
        #expect(SlotPolicy.mayBook(.delivery, as: [.receiver], status: .inTransit) && !SlotPolicy.mayBook(.pickup, as: [.receiver], status: .pending))
        #expect(SlotPolicy.mayBook(.pickup, as: [.owner], status: .accepted) && !SlotPolicy.mayBook(.pickup, as: [.owner], status: .inTransit))
        #expect(!SlotPolicy.mayBook(.delivery, as: [.owner], status: .delivered) && !SlotPolicy.mayBook(.delivery, as: [.assignee], status: .inTransit))
        #expect(!SlotPolicy.mayBook(.delivery, as: [.owner], status: .pending, legKind: .traveller))
    }
}
