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
        let template = SlotTemplate(kind: SlotKind(rawValue: body.kind.rawValue)!, weekday: weekday, startMinute: start, endMinute: end,
                                    capacity: body.capacity, cutoffMinutes: body.cutoffMinutes ?? 120, horizonDays: body.horizonDays ?? 14,
                                    timeZone: body.timeZone ?? "Europe/Zurich", requiresApproval: body.requiresApproval ?? false)
        let record = try await timeslots.createTemplate(template, zone: body.zone ?? "", by: me)
        return .created(.init(body: .json(Self.slotTemplate(record))))
    }

    func updateSlotTemplate(_ input: Operations.UpdateSlotTemplate.Input) async throws -> Operations.UpdateSlotTemplate.Output {
        let me = try await principal()
        guard case .json(let body) = input.body else { throw WaybillError.unsupportedBody }
        let id = SlotTemplateID(rawValue: try Self.plainID(input.path.templateId, "templateId"))
        let record = try await timeslots.updateTemplate(id, capacity: body.capacity, requiresApproval: body.requiresApproval, active: body.active, by: me)
        return .ok(.init(body: .json(Self.slotTemplate(record))))
    }

    func listSlots(_ input: Operations.ListSlots.Input) async throws -> Operations.ListSlots.Output {
        let me = try await principal()
        let q = input.query
        let from = try q.from.map { text -> LocalDate in
            guard let date = LocalDate(text) else { throw WaybillError.invalidParameter("from") }
            return date
        }
        let slots = try await timeslots.slots(kind: SlotKind(rawValue: q.kind.rawValue)!, postalCode: q.postalCode, from: from, days: q.days ?? 7, for: me)
        return .ok(.init(body: .json(.init(items: slots.map(Self.slot)))))
    }

    func holdSlot(_ input: Operations.HoldSlot.Input) async throws -> Operations.HoldSlot.Output {
        let me = try await principal()
        let view = try await timeslots.hold(SlotID(rawValue: try Self.plainID(input.path.slotId, "slotId")), by: me)
        return .ok(.init(body: .json(Self.slot(view))))
    }

    func releaseSlot(_ input: Operations.ReleaseSlot.Input) async throws -> Operations.ReleaseSlot.Output {
        let me = try await principal()
        try await timeslots.release(SlotID(rawValue: try Self.plainID(input.path.slotId, "slotId")), by: me)
        return .noContent(.init())
    }

    func listOrderSlots(_ input: Operations.ListOrderSlots.Input) async throws -> Operations.ListOrderSlots.Output {
        let me = try await principal()
        let items = try await timeslots.bookings(of: OrderID(rawValue: try Self.plainID(input.path.orderId, "orderId")), for: me)
        return .ok(.init(body: .json(.init(items: items.map(Self.slotBooking)))))
    }

    func bookSlot(_ input: Operations.BookSlot.Input) async throws -> Operations.BookSlot.Output {
        let me = try await principal()
        guard case .json(let body) = input.body else { throw WaybillError.unsupportedBody }
        let order = OrderID(rawValue: try Self.plainID(input.path.orderId, "orderId"))
        let (view, created) = try await timeslots.book(order: order, slot: SlotID(rawValue: try Self.plainID(body.slotId, "slotId")), by: me)
        return created ? .created(.init(body: .json(Self.slotBooking(view)))) : .ok(.init(body: .json(Self.slotBooking(view))))
    }

    func listSlotBookings(_ input: Operations.ListSlotBookings.Input) async throws -> Operations.ListSlotBookings.Output {
        let me = try await principal()
        let date = try input.query.date.map { text -> LocalDate in
            guard let date = LocalDate(text) else { throw WaybillError.invalidParameter("date") }
            return date
        }
        let items = try await timeslots.bookings(status: input.query.status.map { SlotBookingStatus(rawValue: $0.rawValue)! }, date: date, by: me)
        return .ok(.init(body: .json(.init(items: items.map(Self.slotBooking)))))
    }

    func decideSlotBooking(_ input: Operations.DecideSlotBooking.Input) async throws -> Operations.DecideSlotBooking.Output {
        let me = try await principal()
        guard case .json(let body) = input.body else { throw WaybillError.unsupportedBody }
        let id = SlotBookingID(rawValue: try Self.plainID(input.path.bookingId, "bookingId"))
        let view = try await timeslots.decide(id, SlotBookingAction(rawValue: body.action.rawValue)!, reason: body.reason, by: me)
        return .ok(.init(body: .json(Self.slotBooking(view))))
    }

    // MARK: translation

    static func slotTemplate(_ r: SlotTemplateRecord) -> S.SlotTemplate {
        S.SlotTemplate(id: r.id!.uuidString, kind: S.SlotKind(rawValue: r.kind.rawValue)!, zone: r.zone, weekday: r.weekday,
                       start: SlotTemplate.text(minute: r.startMinute), end: SlotTemplate.text(minute: r.endMinute), capacity: r.capacity,
                       cutoffMinutes: r.cutoffMinutes, horizonDays: r.horizonDays, timeZone: r.timeZone, requiresApproval: r.requiresApproval,
                       active: r.active)
    }

    static func slot(_ v: SlotView) -> S.Slot {
        slot(v.slot, template: v.template, availability: v.availability, heldUntil: v.heldUntil)
    }

    static func slot(_ s: SlotRecord, template t: SlotTemplateRecord, availability: SlotAvailability, heldUntil: Int64?) -> S.Slot {
        S.Slot(id: s.id!.uuidString, templateId: t.id!.uuidString, kind: S.SlotKind(rawValue: t.kind.rawValue)!, date: s.localDate,
               startsAt: date(s.startsAt), endsAt: date(s.endsAt), start: SlotTemplate.text(minute: t.startMinute),
               end: SlotTemplate.text(minute: t.endMinute), timeZone: t.timeZone,
               availability: S.SlotAvailability(rawValue: availability.rawValue)!, requiresApproval: t.requiresApproval,
               heldUntil: heldUntil.map(date))
    }

    static func slotBooking(_ v: SlotBookingView) -> S.SlotBooking {
        let b = v.booking
        // A booking's slot as it stands: its seats are the booking's own, so only whether it still runs matters.
        let availability: SlotAvailability = v.slot.closed || !v.template.active ? .unavailable : .available
        return S.SlotBooking(id: b.id!.uuidString, orderId: b.orderID.uuidString, reference: v.reference, kind: S.SlotKind(rawValue: b.kind.rawValue)!,
                             status: S.SlotBookingStatus(rawValue: b.status.rawValue)!, reason: b.reason,
                             slot: slot(v.slot, template: v.template, availability: availability, heldUntil: nil),
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
