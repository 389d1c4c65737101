import Foundation
import OpenAPIRuntime
import Vapor
import WaybillAPI
import WaybillCore
import WaybillLabels

/// Timeslots: translation only (`Timeslots`, `SlotPolicy` and `SlotBookingMachine` decide).
extension APIHandler {
    var timeslots: Timeslots { get throws { Timeslots(request: try request) } }

    func listSlotTemplates(_ input: Operations.ListSlotTemplates.Input) async throws -> Operations.ListSlotTemplates.Output {
        let me = try await principal()
        return .ok(.init(body: .json(.init(items: try await timeslots.templates(by: me).map(Self.slotTemplate)))))
    }

    func createSlotTemplate(_ input: Operations.CreateSlotTemplate.Input) async throws -> Operations.CreateSlotTemplate.Output {
        let me = try await principal()
        guard case .json(let body) = input.body else { throw WaybillError.unsupportedBody }
        var errors = FieldErrors()
        let weekday = Weekday(rawValue: body.weekday)
        if weekday == nil { errors.add("weekday", "invalid") }
        let start = SlotTemplate.minute(body.start), end = SlotTemplate.minute(body.end)
        if start == nil { errors.add("start", "invalid") }
        if end == nil { errors.add("end", "invalid") }
        guard errors.isEmpty, let weekday, let start, let end else { throw WaybillError.validation(errors) }
        let template = SlotTemplate(kind: try wire(body.kind), weekday: weekday, startMinute: start, endMinute: end,
                                    capacity: body.capacity, cutoffMinutes: body.cutoffMinutes ?? 120, horizonDays: body.horizonDays ?? 14,
                                    timeZone: body.timeZone ?? "Europe/Zurich", requiresApproval: body.requiresApproval ?? false)
        let counter = try body.counterId.map { CounterID(rawValue: try Self.plainID($0, "counterId")) }
        let record = try await timeslots.createTemplate(template, zone: body.zone ?? "", counter: counter, by: me)
        return .created(.init(body: .json(try Self.slotTemplate(record))))
    }

    func updateSlotTemplate(_ input: Operations.UpdateSlotTemplate.Input) async throws -> Operations.UpdateSlotTemplate.Output {
        let me = try await principal()
        guard case .json(let body) = input.body else { throw WaybillError.unsupportedBody }
        let id = SlotTemplateID(rawValue: try Self.plainID(input.path.templateId, "templateId"))
        let record = try await timeslots.updateTemplate(id, capacity: body.capacity, requiresApproval: body.requiresApproval, active: body.active, by: me)
        return .ok(.init(body: .json(try Self.slotTemplate(record))))
    }

    func listSlots(_ input: Operations.ListSlots.Input) async throws -> Operations.ListSlots.Output {
        let me = try await principal()
        let q = input.query
        let from = try q.from.map { text -> LocalDate in
            guard let date = LocalDate(text) else { throw WaybillError.invalidParameter("from") }
            return date
        }
        let counter = try q.counterId.map { CounterID(rawValue: try Self.plainID($0, "counterId")) }
        let slots = try await timeslots.slots(kind: try wire(q.kind), postalCode: q.postalCode, counter: counter, from: from,
                                              days: q.days ?? 7, for: me)
        return .ok(.init(body: .json(.init(items: try slots.map(Self.slot)))))
    }

    func holdSlot(_ input: Operations.HoldSlot.Input) async throws -> Operations.HoldSlot.Output {
        let me = try await principal()
        let view = try await timeslots.hold(SlotID(rawValue: try Self.plainID(input.path.slotId, "slotId")), by: me)
        return .ok(.init(body: .json(try Self.slot(view))))
    }

    func releaseSlot(_ input: Operations.ReleaseSlot.Input) async throws -> Operations.ReleaseSlot.Output {
        let me = try await principal()
        try await timeslots.release(SlotID(rawValue: try Self.plainID(input.path.slotId, "slotId")), by: me)
        return .noContent(.init())
    }

    func listOrderSlots(_ input: Operations.ListOrderSlots.Input) async throws -> Operations.ListOrderSlots.Output {
        let me = try await principal()
        let items = try await timeslots.bookings(of: OrderID(rawValue: try Self.plainID(input.path.orderId, "orderId")), for: me)
        return .ok(.init(body: .json(.init(items: try items.map(Self.slotBooking)))))
    }

    func bookSlot(_ input: Operations.BookSlot.Input) async throws -> Operations.BookSlot.Output {
        let me = try await principal()
        guard case .json(let body) = input.body else { throw WaybillError.unsupportedBody }
        let order = OrderID(rawValue: try Self.plainID(input.path.orderId, "orderId"))
        let (view, created) = try await timeslots.book(order: order, slot: SlotID(rawValue: try Self.plainID(body.slotId, "slotId")), by: me)
        return created ? .created(.init(body: .json(try Self.slotBooking(view)))) : .ok(.init(body: .json(try Self.slotBooking(view))))
    }

    func listSlotBookings(_ input: Operations.ListSlotBookings.Input) async throws -> Operations.ListSlotBookings.Output {
        let me = try await principal()
        let date = try input.query.date.map { text -> LocalDate in
            guard let date = LocalDate(text) else { throw WaybillError.invalidParameter("date") }
            return date
        }
        let items = try await timeslots.bookings(status: try input.query.status.map { try wire($0, as: SlotBookingStatus.self) }, date: date, by: me)
        return .ok(.init(body: .json(.init(items: try items.map(Self.slotBooking)))))
    }

    func decideSlotBooking(_ input: Operations.DecideSlotBooking.Input) async throws -> Operations.DecideSlotBooking.Output {
        let me = try await principal()
        guard case .json(let body) = input.body else { throw WaybillError.unsupportedBody }
        let id = SlotBookingID(rawValue: try Self.plainID(input.path.bookingId, "bookingId"))
        let view = try await timeslots.decide(id, try wire(body.action), reason: body.reason, by: me)
        return .ok(.init(body: .json(try Self.slotBooking(view))))
    }

    // MARK: translation

    static func slotTemplate(_ r: SlotTemplateRecord) throws -> S.SlotTemplate {
        S.SlotTemplate(id: try r.storedID.uuidString, kind: try wire(r.kind), zone: r.zone, counterId: r.counterID?.uuidString, weekday: r.weekday,
                       start: SlotTemplate.text(minute: r.startMinute), end: SlotTemplate.text(minute: r.endMinute), capacity: r.capacity,
                       cutoffMinutes: r.cutoffMinutes, horizonDays: r.horizonDays, timeZone: r.timeZone, requiresApproval: r.requiresApproval,
                       active: r.active)
    }

    static func slot(_ v: SlotView) throws -> S.Slot {
        try slot(v.slot, template: v.template, availability: v.availability, heldUntil: v.heldUntil)
    }

    static func slot(_ s: SlotRecord, template t: SlotTemplateRecord, availability: SlotAvailability, heldUntil: Int64?) throws -> S.Slot {
        S.Slot(id: try s.storedID.uuidString, templateId: try t.storedID.uuidString, kind: try wire(t.kind), date: s.localDate,
               startsAt: date(s.startsAt), endsAt: date(s.endsAt), start: SlotTemplate.text(minute: t.startMinute),
               end: SlotTemplate.text(minute: t.endMinute), timeZone: t.timeZone,
               availability: try wire(availability), requiresApproval: t.requiresApproval,
               heldUntil: heldUntil.map(date))
    }

    static func slotBooking(_ v: SlotBookingView) throws -> S.SlotBooking {
        let b = v.booking
        // A booking's slot as it stands: its seats are the booking's own, so only whether it still runs matters.
        let availability: SlotAvailability = v.slot.closed || !v.template.active ? .unavailable : .available
        return S.SlotBooking(id: try b.storedID.uuidString, orderId: b.orderID.uuidString, reference: v.reference, kind: try wire(b.kind),
                             status: try wire(b.status), reason: b.reason,
                             slot: try slot(v.slot, template: v.template, availability: availability, heldUntil: nil),
                             createdAt: date(b.createdAt), decidedAt: b.decidedAt.map(date))
    }
}

/// Labels: translation only (`Labels` and `HandOverPolicy` decide).
extension APIHandler {
    func getOrderLabel(_ input: Operations.GetOrderLabel.Input) async throws -> Operations.GetOrderLabel.Output {
        let me = try await principal()
        let id = OrderID(rawValue: try Self.plainID(input.path.orderId, "orderId"))
        let layout: LabelLayout = input.query.layout == .a4 ? .a4Four : .a6
        let pdf = try await Labels(request: try request).label(id, layout: layout, lang: input.query.lang == .fr ? .fr : .en, by: me)
        return .ok(.init(body: .pdf(HTTPBody(pdf))))
    }
}

/// Counters: translation only (`Counters`, `CounterPolicy` and `CounterHours` decide).
extension APIHandler {
    var counters: Counters { get throws { Counters(request: try request) } }

    func listCounters(_ input: Operations.ListCounters.Input) async throws -> Operations.ListCounters.Output {
        let me = try await principal()
        if input.query.mine == true {
            let mine = try await CounterDesks(request: try request).myCounters(me)
            return .ok(.init(body: .json(.init(items: try mine.map { try Self.counter(CounterView(record: $0, staff: [])) }))))
        }
        return .ok(.init(body: .json(.init(items: try await counters.list(by: me).map(Self.counter)))))
    }

    // MARK: the counter's desk

    func getCounterDay(_ input: Operations.GetCounterDay.Input) async throws -> Operations.GetCounterDay.Output {
        let me = try await principal()
        let date = try input.query.date.map { text -> LocalDate in
            guard let date = LocalDate(text) else { throw WaybillError.invalidParameter("date") }
            return date
        }
        let day = try await CounterDesks(request: try request).day(try Self.counterID(input.path.counterId), date: date, for: me)
        return .ok(.init(body: .json(try S.CounterDay(counterId: day.counter.storedID.uuidString, counterName: day.counter.name, date: day.date.description,
                                                   booked: day.booked.map(Self.counterParcel), here: day.here.map(Self.counterParcel),
                                                   expected: day.expected.map(Self.counterParcel)))))
    }

    func checkInAtCounter(_ input: Operations.CheckInAtCounter.Input) async throws -> Operations.CheckInAtCounter.Output {
        let me = try await principal()
        let counterID = try Self.counterID(input.path.counterId)
        guard case .multipartForm(let form) = input.body else { throw WaybillError.unsupportedBody }
        var code: String?, reference: String?, photo: [UInt8]?
        do {
            for try await part in form {
                switch part {
                case .code(let p): code = String(decoding: try await Self.collect(p.payload.body, field: "code", limit: 300), as: UTF8.self)
                case .reference(let p): reference = String(decoding: try await Self.collect(p.payload.body, field: "reference", limit: 40), as: UTF8.self)
                case .photo(let p): photo = try await Self.collect(p.payload.body, field: "photo", limit: UploadLimits.photoBytes)
                case .undocumented: continue
                }
            }
        } catch let error as WaybillError {
            throw error
        } catch {
            throw WaybillError(.badRequest, .invalidMultipart, "The multipart body is malformed or repeats a part.")
        }
        let parcel = try await CounterDesks(request: try request).checkIn(at: counterID, code: code, reference: reference,
                                                                          photo: photo.map { .init(bytes: $0, field: "photo") }, by: me)
        return .ok(.init(body: .json(try Self.counterParcel(parcel))))
    }

    func handOutAtCounter(_ input: Operations.HandOutAtCounter.Input) async throws -> Operations.HandOutAtCounter.Output {
        let me = try await principal()
        guard case .json(let body) = input.body else { throw WaybillError.unsupportedBody }
        let parcel = try await CounterDesks(request: try request).handOut(at: try Self.counterID(input.path.counterId), code: body.code,
                                                                           reference: body.reference, receiverCode: body.receiverCode,
                                                                           collectedBy: body.collectedBy, by: me)
        return .ok(.init(body: .json(try Self.counterParcel(parcel))))
    }

    static func counterParcel(_ p: CounterParcel) throws -> S.CounterParcel {
        S.CounterParcel(orderId: try p.order.storedID.uuidString, reference: p.order.reference, status: try wire(p.order.status),
                        recipientName: p.order.recipient.name, stage: try wire(p.stage),
                        slot: try p.slot.map { .init(startsAt: date($0.start), endsAt: date($0.end), status: try wire($0.status)) },
                        checkedInAt: p.checkedInAt.map(date))
    }

    func createCounter(_ input: Operations.CreateCounter.Input) async throws -> Operations.CreateCounter.Output {
        let me = try await principal()
        guard case .json(let body) = input.body else { throw WaybillError.unsupportedBody }
        return .created(.init(body: .json(try Self.counter(try await counters.create(try Self.counterDraft(body), by: me)))))
    }

    func getCounter(_ input: Operations.GetCounter.Input) async throws -> Operations.GetCounter.Output {
        let me = try await principal()
        return .ok(.init(body: .json(try Self.counter(try await counters.counter(try Self.counterID(input.path.counterId), by: me)))))
    }

    func updateCounter(_ input: Operations.UpdateCounter.Input) async throws -> Operations.UpdateCounter.Output {
        let me = try await principal()
        guard case .json(let body) = input.body else { throw WaybillError.unsupportedBody }
        let view = try await counters.update(try Self.counterID(input.path.counterId), try Self.counterDraft(body), active: body.active, by: me)
        return .ok(.init(body: .json(try Self.counter(view))))
    }

    func addCounterStaff(_ input: Operations.AddCounterStaff.Input) async throws -> Operations.AddCounterStaff.Output {
        let me = try await principal()
        let view = try await counters.addStaff(try Self.counterID(input.path.counterId), user: UserID(rawValue: try Self.plainID(input.path.userId, "userId")), by: me)
        return .ok(.init(body: .json(try Self.counter(view))))
    }

    func removeCounterStaff(_ input: Operations.RemoveCounterStaff.Input) async throws -> Operations.RemoveCounterStaff.Output {
        let me = try await principal()
        let view = try await counters.removeStaff(try Self.counterID(input.path.counterId), user: UserID(rawValue: try Self.plainID(input.path.userId, "userId")), by: me)
        return .ok(.init(body: .json(try Self.counter(view))))
    }

    // MARK: translation

    static func counterID(_ text: String) throws -> CounterID { CounterID(rawValue: try plainID(text, "counterId")) }

    /// The form as a draft; hours that do not read are 422 with the day or date at fault.
    static func counterDraft(_ body: S.CounterInput) throws -> CounterDraft {
        var errors = FieldErrors()
        var weekly: [[OpeningInterval]] = []
        for (index, text) in body.hours.weekly.enumerated() {
            if let intervals = CounterHours.parse(text) { weekly.append(intervals) } else { errors.add("hours.weekly.\(index + 1)", "invalid"); weekly.append([]) }
        }
        var exceptions: [String: [OpeningInterval]] = [:]
        for exception in body.hours.exceptions ?? [] {
            if let intervals = CounterHours.parse(exception.hours) { exceptions[exception.date] = intervals } else { errors.add("hours.exceptions", "invalid") }
        }
        guard errors.isEmpty else { throw WaybillError.validation(errors) }
        let a = body.address
        let coordinate = a.latitude.flatMap { lat in a.longitude.map { Coordinate(latitude: lat, longitude: $0) } }
        return CounterDraft(name: body.name, address: Address(street: a.street, postalCode: a.postalCode, city: a.city, country: a.country ?? "CH", coordinate: coordinate),
                            timeZone: body.timeZone ?? "Europe/Zurich",
                            hours: CounterHours(weekly: weekly, holidays: body.hours.holidays ?? [], exceptions: exceptions))
    }

    static func counter(_ v: CounterView) throws -> S.Counter {
        let r = v.record, hours = r.hours
        let a = r.address
        return try S.Counter(
            id: r.storedID.uuidString, name: r.name,
            address: .init(street: a.street, postalCode: a.postalCode, city: a.city, country: a.country, latitude: a.coordinate?.latitude, longitude: a.coordinate?.longitude),
            timeZone: r.timeZone,
            hours: .init(weekly: hours.weekly.map { $0.map(\.text).joined(separator: ", ") }, holidays: hours.holidays.sorted(),
                         exceptions: hours.exceptions.sorted { $0.key < $1.key }.map { .init(date: $0.key, hours: $0.value.map(\.text).joined(separator: ", ")) }),
            active: r.active, openNow: r.active && hours.isOpen(at: UnixTime.nowMillis, in: r.zone),
            staff: v.staff.isEmpty ? nil : v.staff.map { .init(userId: try $0.storedID.uuidString, name: $0.displayName) })
    }
}
