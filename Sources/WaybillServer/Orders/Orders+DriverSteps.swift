import Crypto
import Fluent
import Foundation
import SQLKit
import Vapor
import WaybillCore

/// The driver's steps: accept, pick up (cash collected, the recipient's code sent), fail. Delivery
/// with its proof is in `Orders+Proof`.
extension Orders {
    /// A step sent with an idempotency key is done once: sent again by the same person (a retry,
    /// the web app's offline queue sending what it kept), it is answered with the order as it is,
    /// not done twice; the key used for another order or step is refused. The key is kept in the
    /// step's own transaction (`transition`'s `receipt`), so a step and its key land together.
    func once(_ idempotencyKey: String?, _ id: OrderID, _ action: OrderAction, by principal: Principal,
              _ step: (StepReceipt?) async throws -> Order) async throws -> Order {
        guard let raw = idempotencyKey else { return try await step(nil) }
        guard let key = IdempotencyKey.normalized(raw) else { throw WaybillError.validation("Idempotency-Key", "invalid") }
        if let done = try await replayed(key, id, action, by: principal) { return done }
        do {
            return try await step(StepReceipt(userID: principal.userID, idempotencyKey: key, orderID: id, action: action))
        } catch {
            // The same key raced in twice: the one that landed answers.
            if let done = try await replayed(key, id, action, by: principal) { return done }
            throw error
        }
    }

    private func replayed(_ key: String, _ id: OrderID, _ action: OrderAction, by principal: Principal) async throws -> Order? {
        guard let receipt = try await StepReceipt.query(on: db).filter(\.$userID == principal.userID)
            .filter(\.$idempotencyKey == key).first() else { return nil }
        guard receipt.orderID == id, receipt.action == action else { throw WaybillError.validation("Idempotency-Key", "reused") }
        return try await visibleOrder(id, to: principal)
    }

    func accept(_ id: OrderID, idempotencyKey: String? = nil, by principal: Principal) async throws -> Order {
        try await once(idempotencyKey, id, .accept, by: principal) { receipt in
            try await transition(id, .accept, by: principal, receipt: receipt) { order, db in
                try await OrderEvent(orderID: id, type: "accepted", status: .accepted, actorID: principal.userID).insert(on: db)
                return .accepted(driver: try principal.person)
            }
        }
    }

    func pickup(_ id: OrderID, cashCollected: Money?, scannedCode: String? = nil, idempotencyKey: String? = nil,
                by principal: Principal) async throws -> Order {
        try await once(idempotencyKey, id, .pickup, by: principal) { receipt in
            try await pickup(id, cashCollected: cashCollected, scannedCode: scannedCode, receipt: receipt, by: principal)
        }
    }

    private func pickup(_ id: OrderID, cashCollected: Money?, scannedCode: String?, receipt: StepReceipt?, by principal: Principal) async throws -> Order {
        let existing = try await visibleOrder(id, to: principal)
        let handovers = Handovers(services: services, db: db, logger: logger)
        let qr = try await handovers.proof(scannedCode, for: existing, step: .pickup, by: principal)
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
        let order = try await handovers.scanned(qr, order: id, step: .pickup, by: principal) {
            try await transition(id, .pickup, by: principal, proof: HandOverProof(qrCode: qr), receipt: receipt) { order, db in
            var note: String?
            if order.paymentMethod == .cash, let cash = cashCollected {
                order.cashCollected = cash.amount
                order.paymentStatus = .collected
                note = "Cash collected: \(Money(cash.amount, order.currency))"
            }
            // Stamped with the order's own time of the change: the ledger's cash entry carries it too.
            try await OrderEvent(orderID: id, type: "picked_up", status: .inTransit, actorID: principal.userID, note: note,
                                 at: order.updatedAt).insert(on: db)
            if order.requireRecipientCode, let email = order.recipient.email {
                let code = OneTimeCodes.randomCode()
                order.recipientCodeHash = codes.hashRecipientCode(code, orderID: id)
                order.recipientCodeSealed = codes.sealRecipientCode(code, orderID: id)
                order.recipientCodeAttempts = 0
                try await Outbox.enqueue(MailTemplates.recipientCode(to: MailAddress(name: order.recipient.name, address: email),
                                                                    reference: order.reference, code: code), on: db)
                try await OrderEvent(orderID: id, type: "recipient_code_sent", status: nil, actorID: nil).insert(on: db)
            }
            return .pickedUp(driver: try principal.person, cashCollected: order.paymentMethod == .cash ? cashCollected?.amount : nil)
        }
        }
        return order
    }

    func fail(_ id: OrderID, reason: FailureReason, note: String?, idempotencyKey: String? = nil, by principal: Principal) async throws -> Order {
        let note = note?.trimmingCharacters(in: .whitespacesAndNewlines)
        return try await once(idempotencyKey, id, .fail, by: principal) { receipt in
            try await transition(id, .fail, by: principal, receipt: receipt) { order, db in
                order.failureReason = reason
                order.failureNote = (note?.isEmpty ?? true) ? nil : note
                try await OrderEvent(orderID: id, type: "failed", status: .failed, actorID: principal.userID,
                                     note: [reason.rawValue, order.failureNote].compactMap { $0 }.joined(separator: ": ")).insert(on: db)
                return .failed(driver: try principal.person, reason: reason)
            }
        }
    }
}
