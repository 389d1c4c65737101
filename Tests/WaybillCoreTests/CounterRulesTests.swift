import Foundation
import Testing
@testable import WaybillCore

@Suite("Counters: opening hours per weekday, holidays and exceptional days, in the counter's own time")
struct CounterRulesTests {
    static let zurich = TimeZone(identifier: "Europe/Zurich")!

    static func hours() -> CounterHours {
        var weekly = Array(repeating: CounterHours.parse("08:00-12:00, 13:30-18:00")!, count: 5)
        weekly += [CounterHours.parse("09:00-12:00")!, []]
        return CounterHours(weekly: weekly, holidays: ["2026-12-25"], exceptions: ["2026-12-24": CounterHours.parse("08:00-12:00")!])
    }

    @Test("Hours read as \"08:00-12:00, 13:30-18:00\"; empty is closed; overlaps, reversed and malformed intervals are refused")
    func parsing() {
        #expect(CounterHours.parse("08:00-12:00, 13:30-18:00") == [OpeningInterval(start: 480, end: 720), OpeningInterval(start: 810, end: 1080)])
        #expect(CounterHours.parse("  ") == [])
        for bad in ["12:00-08:00", "08:00-12:00, 11:00-13:00", "8-12", "08:00", "08:00-25:00", "a-b", String(repeating: "01:00-01:01, ", count: 8)] {
            #expect(CounterHours.parse(bad) == nil, "\(bad)")
        }
        #expect(Self.hours().validate().isEmpty)
        var broken = Self.hours()
        broken.holidays.append("2026-02-30")
        broken.weekly[2] = [OpeningInterval(start: 600, end: 500)]
        let errors = broken.validate()
        #expect(errors["hours.holidays"] == "invalid" && errors["hours.weekly.3"] == "invalid")
    }

    @Test("A counter is open on its weekday hours, closed on holidays, and keeps its own hours on exceptional days; across the clock change too")
    func openOrClosed() {
        let hours = Self.hours()
        func at(_ text: String) -> Int64 { Int64(ISO8601DateFormatter().date(from: text)!.timeIntervalSince1970 * 1000) }
        #expect(hours.isOpen(at: at("2026-12-01T09:00:00Z"), in: Self.zurich), "Tuesday 10:00 in Zurich")
        #expect(!hours.isOpen(at: at("2026-12-01T11:30:00Z"), in: Self.zurich), "12:30, lunch")
        #expect(!hours.isOpen(at: at("2026-12-06T09:00:00Z"), in: Self.zurich), "Sunday")
        #expect(!hours.isOpen(at: at("2026-12-25T09:00:00Z"), in: Self.zurich), "Christmas, a holiday")
        #expect(hours.isOpen(at: at("2026-12-24T09:00:00Z"), in: Self.zurich) && !hours.isOpen(at: at("2026-12-24T13:00:00Z"), in: Self.zurich), "Christmas Eve, mornings only")
        // Monday 30 March 2026, the day after the spring change: 08:00 in Zurich is 06:00 UTC.
        #expect(hours.isOpen(at: at("2026-03-30T06:00:00Z"), in: Self.zurich) && !hours.isOpen(at: at("2026-03-30T05:59:00Z"), in: Self.zurich))
        // A drop-off slot is open only when the counter is for all of it.
        #expect(hours.covers(LocalDate("2026-12-01")!, from: 480, to: 600) && !hours.covers(LocalDate("2026-12-01")!, from: 690, to: 840))
        #expect(!hours.covers(LocalDate("2026-12-25")!, from: 480, to: 600))
    }

    @Test("A counter needs a name, an address and a real time zone; only admins manage counters; staff are those named and holding counter")
    func drafts() {
        let draft = CounterDraft(name: " Guichet Gare ", address: Address(street: "Place de la Gare 1", postalCode: "1003", city: "Lausanne"), hours: Self.hours())
        #expect(draft.validate().isEmpty && draft.cleanName == "Guichet Gare")
        var bad = draft
        bad.name = " "
        bad.timeZone = "Mars/Olympus"
        bad.address.city = ""
        let errors = bad.validate()
        #expect(errors["name"] == "required" && errors["timeZone"] == "invalid" && errors["address.city"] == "required")
        #expect(CounterPolicy.mayManage(Caller(id: .random(), capabilities: [.admin])) && !CounterPolicy.mayManage(Caller(id: .random(), role: .manager)))
        let clerk = Caller(id: .random(), capabilities: [.sender, .counter])
        #expect(CounterPolicy.isStaff(clerk, namedFor: true) && !CounterPolicy.isStaff(clerk, namedFor: false))
        #expect(!CounterPolicy.isStaff(Caller(id: .random(), role: .customer), namedFor: true))
    }
}
