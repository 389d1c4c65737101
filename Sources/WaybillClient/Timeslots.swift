import Foundation
import OpenAPIRuntime
import WaybillCore

/// A weekly rule of pickup or delivery slots (dispatch).
public typealias SlotTemplateRecord = Components.Schemas.SlotTemplate
/// One slot on one local date, as the signed-in person sees it (`availability`, their own hold).
public typealias Slot = Components.Schemas.Slot
/// A shipment's pickup or delivery in a slot.
public typealias SlotBooking = Components.Schemas.SlotBooking
/// What a scanned label is: the shipment, and the hand-over the scan proves for the caller now.
public typealias ScannedLabel = Operations.ScanLabel.Output.Ok.Body.JsonPayload

/// Timeslots, labels and scans (docs/timeslots.md).
extension WaybillSession {
    /// Dispatch: every weekly template.
    public func slotTemplates() async throws(WaybillError) -> [SlotTemplateRecord] {
        try await call { try await $0.listSlotTemplates().ok.body.json.items }
    }

    /// Dispatch: a weekly template (`start`, `end` as "HH:MM" in `timeZone`; `zone` a postal-code prefix).
    public func createSlotTemplate(kind: SlotKind, weekday: Weekday, start: String, end: String, capacity: Int, zone: String = "",
                                   cutoffMinutes: Int? = nil, horizonDays: Int? = nil, timeZone: String? = nil,
                                   requiresApproval: Bool = false) async throws(WaybillError) -> SlotTemplateRecord {
        try await call {
            try await $0.createSlotTemplate(body: .json(.init(
                kind: .init(rawValue: kind.rawValue)!, zone: zone, weekday: weekday.rawValue, start: start, end: end, capacity: capacity,
                cutoffMinutes: cutoffMinutes, horizonDays: horizonDays, timeZone: timeZone, requiresApproval: requiresApproval))).created.body.json
        }
    }

    /// Dispatch: change a template's seats or approval, or switch it off.
    public func updateSlotTemplate(_ id: SlotTemplateID, capacity: Int? = nil, requiresApproval: Bool? = nil, active: Bool? = nil)
        async throws(WaybillError) -> SlotTemplateRecord {
        try await call {
            try await $0.updateSlotTemplate(path: .init(templateId: id.uuidString.lowercased()),
                                            body: .json(.init(capacity: capacity, requiresApproval: requiresApproval, active: active))).ok.body.json
        }
    }

    /// The slots of `kind` for a postal code, from a local date ("YYYY-MM-DD"; nil: today) for some days.
    public func slots(_ kind: SlotKind, postalCode: String, from: String? = nil, days: Int = 7) async throws(WaybillError) -> [Slot] {
        try await call {
            try await $0.listSlots(query: .init(kind: .init(rawValue: kind.rawValue)!, postalCode: postalCode, from: from, days: days)).ok.body.json.items
        }
    }

    /// Keeps a seat for ten minutes while the order is finished (`slot_full` when none is left).
    public func hold(slot id: SlotID) async throws(WaybillError) -> Slot {
        try await call { try await $0.holdSlot(path: .init(slotId: id.uuidString.lowercased())).ok.body.json }
    }

    /// Lets one's hold go.
    public func release(slot id: SlotID) async throws(WaybillError) {
        try await call { _ = try await $0.releaseSlot(path: .init(slotId: id.uuidString.lowercased())).noContent }
    }

    /// Books the slot for the shipment's pickup or delivery (the slot's kind), or moves its booking there.
    public func book(slot id: SlotID, for order: OrderID) async throws(WaybillError) -> SlotBooking {
        try await call {
            let output = try await $0.bookSlot(path: .init(orderId: order.uuidString.lowercased()), body: .json(.init(slotId: id.uuidString.lowercased())))
            if case .ok(let ok) = output { return try ok.body.json }
            return try output.created.body.json
        }
    }

    /// A shipment's bookings, live and past.
    public func slotBookings(of order: OrderID) async throws(WaybillError) -> [SlotBooking] {
        try await call { try await $0.listOrderSlots(path: .init(orderId: order.uuidString.lowercased())).ok.body.json.items }
    }

    /// Dispatch: bookings by status and local date, in time order.
    public func slotBookings(status: SlotBookingStatus? = nil, date: String? = nil) async throws(WaybillError) -> [SlotBooking] {
        try await call {
            try await $0.listSlotBookings(query: .init(status: status.map { .init(rawValue: $0.rawValue)! }, date: date)).ok.body.json.items
        }
    }

    /// Approve, decline (with a reason), cancel, complete or fail (with a reason) a booking.
    public func decide(booking id: SlotBookingID, _ action: SlotBookingAction, reason: String? = nil) async throws(WaybillError) -> SlotBooking {
        try await call {
            try await $0.decideSlotBooking(path: .init(bookingId: id.uuidString.lowercased()),
                                           body: .json(.init(action: .init(rawValue: action.rawValue)!, reason: reason))).ok.body.json
        }
    }

    /// A shipment's label as PDF bytes (A6, or four to an A4 sheet).
    public func label(of order: OrderID, a4: Bool = false, french: Bool = false) async throws(WaybillError) -> Data {
        try await call {
            let output = try await $0.getOrderLabel(path: .init(orderId: order.uuidString.lowercased()),
                                                    query: .init(layout: a4 ? .a4 : .a6, lang: french ? .fr : .en))
            switch try output.ok.body {
            case .pdf(let body): return try await Data(collecting: body, upTo: 32 * 1024 * 1024)
            }
        }
    }

    /// What a scanned label is (`code`: the link or the token read by the scanner).
    public func scan(_ code: String) async throws(WaybillError) -> ScannedLabel {
        try await call { try await $0.scanLabel(body: .json(.init(code: code))).ok.body.json }
    }

}

/// A reception counter: address, time zone, opening hours, whether it is open now (and its staff, for admins).
public typealias Counter = Components.Schemas.Counter
/// A counter as an admin writes it.
public typealias CounterInput = Components.Schemas.CounterInput

/// Reception counters (docs/timeslots.md).
extension WaybillSession {
    /// The active counters (every counter, with staff, for admins).
    public func counters() async throws(WaybillError) -> [Counter] {
        try await call { try await $0.listCounters().ok.body.json.items }
    }

    public func counter(_ id: CounterID) async throws(WaybillError) -> Counter {
        try await call { try await $0.getCounter(path: .init(counterId: id.uuidString.lowercased())).ok.body.json }
    }

    /// Admins: a counter; `weekly` is seven strings, Monday first, such as "08:00-12:00, 13:30-18:00" ("" for closed).
    public func createCounter(_ input: CounterInput) async throws(WaybillError) -> Counter {
        try await call { try await $0.createCounter(body: .json(input)).created.body.json }
    }

    /// Admins: changes a counter (or switches it off with `active: false`).
    public func updateCounter(_ id: CounterID, _ input: CounterInput) async throws(WaybillError) -> Counter {
        try await call { try await $0.updateCounter(path: .init(counterId: id.uuidString.lowercased()), body: .json(input)).ok.body.json }
    }

    /// Admins: names someone staff of a counter (they get the counter capability).
    public func addStaff(_ user: UserID, to counter: CounterID) async throws(WaybillError) -> Counter {
        try await call {
            try await $0.addCounterStaff(path: .init(counterId: counter.uuidString.lowercased(), userId: user.uuidString.lowercased())).ok.body.json
        }
    }

    /// Admins: takes someone off a counter's staff.
    public func removeStaff(_ user: UserID, from counter: CounterID) async throws(WaybillError) -> Counter {
        try await call {
            try await $0.removeCounterStaff(path: .init(counterId: counter.uuidString.lowercased(), userId: user.uuidString.lowercased())).ok.body.json
        }
    }

    /// A counter's drop-off slots from a local date ("YYYY-MM-DD"; nil: today).
    public func dropOffSlots(at counter: CounterID, from: String? = nil, days: Int = 7) async throws(WaybillError) -> [Slot] {
        try await call {
            try await $0.listSlots(query: .init(kind: .dropOff, counterId: counter.uuidString.lowercased(), from: from, days: days)).ok.body.json.items
        }
    }
}

/// A parcel as a counter's desk sees it.
public typealias CounterParcel = Components.Schemas.CounterParcel
/// A counter's day: booked drop-offs in time order, parcels here, parcels expected.
public typealias CounterDay = Components.Schemas.CounterDay

/// A counter's desk: its staff check parcels in and hand them to their receivers (docs/timeslots.md).
extension WaybillSession {
    /// The counters the signed-in person works at.
    public func myCounters() async throws(WaybillError) -> [Counter] {
        try await call { try await $0.listCounters(query: .init(mine: true)).ok.body.json.items }
    }

    /// A counter's day ("YYYY-MM-DD", its local date; nil: today).
    public func counterDay(_ counter: CounterID, date: String? = nil) async throws(WaybillError) -> CounterDay {
        try await call { try await $0.getCounterDay(path: .init(counterId: counter.uuidString.lowercased()), query: .init(date: date)).ok.body.json }
    }

    /// Checks a parcel in: what the scanner read from its label (`code`) or its reference typed,
    /// with an optional photo (JPEG or PNG).
    public func checkIn(at counter: CounterID, code: String? = nil, reference: String? = nil, photo: Data? = nil) async throws(WaybillError) -> CounterParcel {
        try await call {
            var parts: [Operations.CheckInAtCounter.Input.Body.MultipartFormPayload] = []
            if let code { parts.append(.code(.init(payload: .init(body: HTTPBody(code))))) }
            if let reference { parts.append(.reference(.init(payload: .init(body: HTTPBody(reference))))) }
            if let photo { parts.append(.photo(.init(payload: .init(body: HTTPBody(photo)), filename: "parcel"))) }
            return try await $0.checkInAtCounter(path: .init(counterId: counter.uuidString.lowercased()), body: .multipartForm(MultipartBody(parts))).ok.body.json
        }
    }

    /// Hands a parcel to its receiver against their code, with the name of who collected it.
    public func handOut(at counter: CounterID, code: String? = nil, reference: String? = nil, receiverCode: String,
                        collectedBy: String) async throws(WaybillError) -> CounterParcel {
        try await call {
            try await $0.handOutAtCounter(path: .init(counterId: counter.uuidString.lowercased()),
                                          body: .json(.init(code: code, reference: reference, receiverCode: receiverCode, collectedBy: collectedBy))).ok.body.json
        }
    }
}
