import Crypto
import Fluent
import Foundation
import SQLKit
import Vapor
import WaybillCore

/// Changing orders: the state machine's transitions, dispatch and the driver's steps.
extension Orders {
    // MARK: Changing orders

    /// Applies `action` through the state machine in one transaction: the caller must see the
    /// order (else 404), have a capacity allowed to act (else 403) and find it in a status that
    /// allows it (else 409 with the current status). The change lands only if nobody changed the
    /// order since it was read (a version check), so of two managers assigning at once one wins.
    @discardableResult
    func transition(_ id: UUID, _ action: OrderAction, by principal: Principal?,
                    change: @escaping @Sendable (Order, any Database) async throws -> Void = { _, _ in }) async throws -> Order {
        let orders = self
        let speed = services.config.etaAverageSpeedKmh
        return try await transaction { db in
            guard let order = try await Order.find(id, on: db) else { throw WaybillError.notFound }
            let capacities: Set<OrderCapacity> = principal.map { orders.capacities(of: $0, for: order) } ?? [.system]
            if capacities.isEmpty { throw WaybillError.notFound }
            switch OrderStateMachine.decide(action, from: order.status, as: capacities) {
            case .forbidden:
                throw WaybillError.forbidden
            case .wrongStatus(let status):
                throw WaybillError.invalidTransition(status, action)
            case .allowed(let next):
                try await Self.claim(order, action: action, on: db)
                order.status = next
                order.updatedAt = UnixTime.nowMillis
                try await change(order, db)
                try await order.save(on: db)
                try await Tracking.publishStatus(order, speedKmh: speed, on: db)
            }
            return order
        }
    }

    /// Compare-and-set on the version: fails with 409 if another change landed first.
    static func claim(_ order: Order, action: OrderAction, on db: any Database) async throws {
        guard let sql = db as? any SQLDatabase else { throw Abort(.internalServerError) }
        let rows = try await sql.update(Order.schema)
            .set("version", to: SQLBind(order.version + 1))
            .where("id", .equal, SQLBind(order.id!))
            .where("version", .equal, SQLBind(order.version))
            .returning("id")
            .all()
        guard !rows.isEmpty else {
            let now = try await Order.find(order.id!, on: db)
            throw WaybillError.invalidTransition(now?.status ?? order.status, action)
        }
        order.version += 1
    }

    func cancel(_ id: UUID, reason: String, by principal: Principal) async throws -> Order {
        let reason = reason.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !reason.isEmpty else { throw WaybillError.validation("reason", "required") }
        let order = try await transition(id, .cancel, by: principal) { order, db in
            order.cancellationReason = reason
            if order.paymentStatus == .paid { order.paymentStatus = .refundPending }
            else if order.paymentStatus == .awaiting || order.paymentStatus == .dueOnPickup || order.paymentStatus == .invoiced {
                order.paymentStatus = .void
            }
            try await OrderEvent(orderID: order.id!, type: "cancelled", status: .cancelled, actorID: principal.userID, note: reason).create(on: db)
            try await Self.notifyCancelled(order, by: principal.userID, reason: reason, on: db)
            if order.paymentStatus == .refundPending {
                try await Outbox.enqueueJob(kind: Outbox.refundKind, payload: order.id!.uuidString, on: db)
            }
        }
        if order.paymentStatus == .refundPending {
            // Try at once so the answer usually shows the refund; the outbox retries if this fails.
            try? await refundNow(id)
            return try await Order.find(id, on: db) ?? order
        }
        return order
    }

    static func notifyCancelled(_ order: Order, by actor: UUID?, reason: String, on db: any Database) async throws {
        var people: [User] = []
        if let customer = try await User.find(order.customerID, on: db), customer.id != actor { people.append(customer) }
        if let driverID = order.driverID, driverID != actor, let driver = try await User.find(driverID, on: db) { people.append(driver) }
        try await Notifier.notify(people, .orderCancelled, order: order, body: "Order \(order.reference) was cancelled: \(reason)", on: db)
    }

    func assign(_ id: UUID, to driverID: UUID, reassign: Bool = false, by principal: Principal) async throws -> Order {
        try principal.require(.dispatch)
        guard let driver = try await User.find(driverID, on: db),
              DispatchPolicy.mayCarry(assignee: Caller(id: driverID, role: driver.role), disabled: driver.isDisabled, assignedBy: principal.caller) else {
            throw WaybillError.validation("driverId", "not_an_active_driver")
        }
        return try await transition(id, reassign ? .reassign : .assign, by: principal) { order, db in
            if let previous = order.driverID, previous != driverID, previous != principal.userID,
               let previousDriver = try await User.find(previous, on: db) {
                try await Notifier.notify([previousDriver], .orderUnassigned, order: order,
                                          body: "Order \(order.reference) has been given to another driver; you no longer need to pick it up.", on: db)
            }
            order.driverID = driverID
            order.failureReason = nil
            order.failureNote = nil
            try await OrderEvent(orderID: order.id!, type: reassign ? "reassigned" : "assigned", status: .assigned,
                                 // The timeline is read by the customer too, who knows the driver by first name.
                                 actorID: principal.userID, note: driver.firstName).create(on: db)
            if driverID != principal.userID {
                try await Notifier.notify([driver], .orderAssigned, order: order,
                                          body: "Pick up at \((try? order.pickup.singleLine) ?? "") and deliver to \((try? order.dropoff.singleLine) ?? "").",
                                          on: db)
            }
        }
    }

    func accept(_ id: UUID, by principal: Principal) async throws -> Order {
        try await transition(id, .accept, by: principal) { order, db in
            try await OrderEvent(orderID: order.id!, type: "accepted", status: .accepted, actorID: principal.userID).create(on: db)
            if let customer = try await User.find(order.customerID, on: db) {
                try await Notifier.notify([customer], .orderAccepted, order: order,
                                          body: "\(principal.user.firstName) will pick up your parcel \(order.reference) at \((try? order.pickup.singleLine) ?? "").",
                                          on: db)
            }
        }
    }

    func pickup(_ id: UUID, cashCollected: Money?, by principal: Principal) async throws -> Order {
        let existing = try await visibleOrder(id, to: principal)
        if existing.paymentMethod == .cash {
            guard let cash = cashCollected else { throw WaybillError.validation("cashCollected", "required_for_cash") }
            var errors = FieldErrors()
            if cash.currency.uppercased() != existing.currency { errors.add("cashCollected.currency", "must_be_\(existing.currency)") }
            if cash.amount < 0 { errors.add("cashCollected.amount", "out_of_range") }
            if !errors.isEmpty { throw WaybillError.validation(errors) }
        } else if cashCollected != nil {
            throw WaybillError.validation("cashCollected", "not_a_cash_order")
        }
        let codes = services.codes
        let order = try await transition(id, .pickup, by: principal) { order, db in
            var note: String?
            if order.paymentMethod == .cash, let cash = cashCollected {
                order.cashCollected = cash.amount
                order.paymentStatus = .collected
                note = "Cash collected: \(Money(cash.amount, order.currency))"
                if cash.amount != order.priceAmount {
                    try await Notifier.notify(try await Notifier.managers(on: db), .cashDiscrepancy, order: order,
                                              body: "\(principal.user.displayName) collected \(Money(cash.amount, order.currency)) for \(order.reference); the price is \(order.price).",
                                              on: db)
                }
            }
            try await OrderEvent(orderID: order.id!, type: "picked_up", status: .inTransit, actorID: principal.userID, note: note).create(on: db)
            if let customer = try await User.find(order.customerID, on: db) {
                try await Notifier.notify([customer], .orderPickedUp, order: order,
                                          body: "Delivery in progress: your parcel \(order.reference) is on its way to \((try? order.dropoff.singleLine) ?? "").",
                                          on: db)
            }
            if order.requireRecipientCode, let email = try order.recipient.email {
                let code = OneTimeCodes.randomCode()
                order.recipientCodeHash = codes.hashRecipientCode(code, orderID: order.id!)
                order.recipientCodeAttempts = 0
                try await Outbox.enqueue(MailTemplates.recipientCode(to: MailAddress(name: try order.recipient.name, address: email),
                                                                    reference: order.reference, code: code), on: db)
                try await OrderEvent(orderID: order.id!, type: "recipient_code_sent", status: nil, actorID: nil).create(on: db)
            }
        }
        return order
    }

    func fail(_ id: UUID, reason: FailureReason, note: String?, by principal: Principal) async throws -> Order {
        let note = note?.trimmingCharacters(in: .whitespacesAndNewlines)
        return try await transition(id, .fail, by: principal) { order, db in
            order.failureReason = reason
            order.failureNote = (note?.isEmpty ?? true) ? nil : note
            try await OrderEvent(orderID: order.id!, type: "failed", status: .failed, actorID: principal.userID,
                                 note: [reason.rawValue, order.failureNote].compactMap { $0 }.joined(separator: ": ")).create(on: db)
            try await Notifier.notify(try await Notifier.managers(on: db), .orderFailed, order: order,
                                      body: "\(principal.user.displayName) could not deliver \(order.reference) (\(reason.rawValue)). Reassign or cancel it.",
                                      on: db)
        }
    }
}
