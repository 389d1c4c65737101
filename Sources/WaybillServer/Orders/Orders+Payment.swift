import Crypto
import Fluent
import Foundation
import SQLKit
import Vapor
import WaybillCore

/// Card and TWINT payments: confirming checkouts, Stripe events and refunds.
extension Orders {
    // MARK: Payment

    /// Asks the provider about the order's checkout and, if it is paid, moves the order on.
    func confirmPayment(_ id: OrderID, by principal: Principal) async throws -> OrderRecord {
        let order = try await visibleOrder(id, to: principal)
        try check(.confirmPayment, on: order, by: principal)
        guard order.paymentMethod.isOnline else {
            throw WaybillError(.conflict, .notAnOnlinePayment, "This order is paid \(order.paymentMethod.rawValue == "cash" ? "in cash" : "by invoice").")
        }
        if order.status == .awaitingPayment, let session = order.checkoutSessionID {
            let state = try await services.payments.checkout(id: session)
            try await settleCheckout(state)
        }
        return try await detail(id, for: principal)
    }

    /// The one place a paid checkout moves an order on; called by confirm, the webhook, the
    /// return page and the sandbox page. Idempotent. A checkout paid after the order was
    /// cancelled is refunded.
    func settleCheckout(_ state: CheckoutState) async throws {
        guard let orderID = state.orderID.flatMap(OrderID.init(uuidString:)),
              let order = try await Order.find(orderID, on: db), order.checkoutSessionID == state.id else { return }
        if state.expired, order.status == .awaitingPayment {
            _ = try? await transition(orderID, .cancel, by: nil) { order, db in
                order.cancellationReason = "Checkout expired without payment"
                order.paymentStatus = .void
                try await OrderEvent(orderID: orderID, type: "cancelled", status: .cancelled, actorID: nil, note: order.cancellationReason).insert(on: db)
                return .checkoutExpired
            }
            return
        }
        guard state.paid else { return }
        guard state.amount == nil || (state.amount == order.priceAmount && state.currency == order.currency) else {
            logger.error("Checkout \(state.id) paid an amount that differs from order \(order.reference); not confirmed")
            return
        }
        if order.status == .cancelled, order.paymentStatus == .void || order.paymentStatus == .awaiting {
            // Paid after the order was cancelled: give the money back.
            try await transaction { db in
                guard let sql = db.tracedSQL else { return }
                let rows = try await sql.update(Order.schema)
                    .set("payment_status", to: SQLBind(Order.PaymentStatus.refundPending.rawValue))
                    .set("payment_intent_id", to: SQLBind(state.paymentIntent))
                    .where("id", .equal, SQLBind(orderID))
                    .where("payment_status", .in, SQLBind.group([Order.PaymentStatus.void.rawValue, Order.PaymentStatus.awaiting.rawValue]))
                    .returning("id").all()
                WrittenChanges.note(order: orderID, caches: services.caches)
                if !rows.isEmpty { try await Outbox.enqueueJob(kind: Outbox.refundKind, payload: orderID.uuidString, on: db) }
            }
            try? await refundNow(orderID)
            return
        }
        guard order.status == .awaitingPayment else { return }  // already confirmed: nothing to do
        do {
            try await transition(orderID, .confirmPayment, by: nil) { order, db in
                order.paymentStatus = .paid
                order.paidAt = UnixTime.nowMillis
                order.paymentIntentID = state.paymentIntent
                try await OrderEvent(orderID: orderID, type: "payment_confirmed", status: .pending, actorID: nil,
                                     note: order.sandbox ? "Sandbox payment (test, no money moved)" : nil).insert(on: db)
                return .placed
            }
        } catch let error as WaybillError where error.code == .invalidTransition {
            return  // a concurrent confirmation won; the order is confirmed either way
        }
    }

    /// Handles one verified Stripe event, once per event id.
    func handleStripeEvent(_ json: [String: Any]) async throws {
        guard let eventID = json["id"] as? String, let type = json["type"] as? String else {
            throw WaybillError(.badRequest, .invalidEvent, "The event has no id or type.")
        }
        let handled = ["checkout.session.completed", "checkout.session.async_payment_succeeded", "checkout.session.expired"]
        guard let object = (json["data"] as? [String: Any])?["object"] as? [String: Any] else { return }
        // Subscriptions (Stripe Billing): their checkouts, the subscriptions and their invoices.
        if type.hasPrefix("customer.subscription.") || type == "invoice.paid" || type == "invoice.payment_failed"
            || (handled.contains(type) && object["mode"] as? String == "subscription") {
            let subscriptions = Subscriptions(services: services, db: db, logger: logger)
            try await StripeEvent.handleOnce(eventID, type: type, db: db, services: services, logger: logger) {
                try await subscriptions.handleStripeEvent(type: type, object: object)
            }
            return
        }
        guard handled.contains(type) else { return }
        try await StripeEvent.handleOnce(eventID, type: type, db: db, services: services, logger: logger) {
            try await settleCheckout(StripePayments.state(from: object))
        }
    }


    /// Refunds a cancelled, paid order in full. Run from the outbox (with retries) and right after
    /// the cancellation. Does nothing if the refund already happened.
    func refundNow(_ id: OrderID) async throws {
        guard let order = try await Order.find(id, on: db), order.paymentStatus == .refundPending,
              let session = order.checkoutSessionID else { return }
        // Money already sent on to a carrier comes back first (Stripe: reverse the transfer, then
        // refund the charge), so the platform never refunds what it no longer holds.
        try await reversePayouts(of: id)
        let state = try await services.payments.checkout(id: session)
        let refundID = try await services.payments.refund(checkout: state, amount: nil, idempotencyKey: "refund-\(id.uuidString)")
        let events = services.events
        try await transaction { db in
            guard let sql = db.tracedSQL else { return }
            let now = UnixTime.nowMillis
            let rows = try await sql.update(Order.schema)
                .set("payment_status", to: SQLBind(Order.PaymentStatus.refunded.rawValue))
                .set("refund_id", to: SQLBind(refundID))
                .set("refunded_at", to: SQLBind(now))
                .where("id", .equal, SQLBind(id))
                .where("payment_status", .equal, SQLBind(Order.PaymentStatus.refundPending.rawValue))
                .returning("id").all()
            guard !rows.isEmpty else { return }
            WrittenChanges.note(order: id, caches: services.caches)
            try await OrderEvent(orderID: id, type: "refunded", status: nil, actorID: nil, note: refundID).insert(on: db)
            // The event carries the order as it now is (its subscribers, the ledger among them, read it).
            order.paymentStatus = .refunded
            order.refundID = refundID
            order.refundedAt = now
            try await events.record(.shipment(try OrderRow(order), .paymentRefunded), on: db)
        }
    }
}

extension StripeEvent {
    /// Runs `body` once per Stripe event id, for the platform's and the Connect endpoint alike: the
    /// id is recorded first (a second delivery stops there) and forgotten if `body` fails, so
    /// Stripe's redelivery is handled.
    static func handleOnce(_ eventID: String, type: String, db: any Database, services: WaybillServices, logger: Logger,
                           _ body: () async throws -> Void) async throws {
        do {
            try await db.writeTransaction(services) { db in
                let row = StripeEvent()
                row.id = eventID
                row.type = type
                row.receivedAt = UnixTime.nowMillis
                try await row.create(on: db)
            }
        } catch let error as any DatabaseError where error.isConstraintFailure {
            logger.info("Stripe event \(eventID) already handled")
            return
        }
        do {
            try await body()
        } catch {
            _ = try? await db.writeTransaction(services) { db in try await StripeEvent.query(on: db).filter(\.$id == eventID).delete() }
            throw error
        }
    }
}

/// Payouts: money to whoever carried a leg (a traveller), recorded in the ledger.
extension Orders {
    /// Staff give a delivered (or failed) shipment's payment back, with a reason (a dispute):
    /// what its carriers were paid is taken back, then the sender is refunded, through the outbox.
    func refundAfterDelivery(_ id: OrderID, reason: String, by principal: Principal) async throws -> Order {
        let reason = reason.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !reason.isEmpty, reason.count <= 500 else { throw WaybillError.validation("reason", reason.isEmpty ? "required" : "too_long") }
        let order = try await visibleOrder(id, to: principal)
        try check(.refund, on: order, by: principal) { "This shipment is \($0.rawValue); cancel it to refund it." }
        guard order.priceAmount > 0 else { throw WaybillError(.conflict, .conflict, "Nothing was paid for this shipment (a plan included it).") }
        let changed = try await transaction { db -> Bool in
            guard let sql = db.tracedSQL else { return false }
            // With the shipment's row held, as a claim's payment holds it to decide its split: a full
            // refund would give back what a claim refunds, or is about to (finding 9 of the second audit).
            try await Self.lockOrderRow(id, on: db)
            let claims = try await ClaimRecord.query(on: db).filter(\.$orderID == id).all()
            if claims.contains(where: { ClaimPolicy.blocksRefundAfterDelivery(status: $0.status, refunded: $0.refundedAmount) }) {
                throw WaybillError(.conflict, .conflict, "An insurance claim on this shipment decides what is given back; see the claim.")
            }
            let rows = try await sql.update(Order.schema)
                .set("payment_status", to: SQLBind(Order.PaymentStatus.refundPending.rawValue))
                .where("id", .equal, SQLBind(id))
                .where("payment_status", .equal, SQLBind(Order.PaymentStatus.paid.rawValue))
                .returning("id").all()
            guard !rows.isEmpty else { return false }
            WrittenChanges.note(order: id, caches: services.caches)
            try await OrderEvent(orderID: id, type: "refund_requested", status: nil, actorID: principal.userID, note: reason).insert(on: db)
            try await AuditLog.record(.orderRefunded, by: principal.userID, target: .order, id.uuidString, before: ["payment": "paid"],
                                      after: ["payment": "refund_pending", "amount": String(order.priceAmount), "currency": order.currency], reason: reason, on: db)
            try await Outbox.enqueueJob(kind: Outbox.refundKind, payload: id.uuidString, on: db)
            return true
        }
        guard changed else {
            throw WaybillError(.conflict, .conflict, "Only a shipment paid online and not yet refunded can be refunded (it is \(order.paymentStatus.rawValue)).")
        }
        try? await refundNow(id)
        return try await Order.find(id, on: db) ?? order
    }

    /// Takes back every payout of the shipment not yet reversed, each recorded once in the ledger
    /// as a `transfer_reversal`. A payout still being made (a claim) makes this wait: the outbox retries.
    func reversePayouts(of shipmentID: OrderID) async throws {
        let entries = try await LedgerRecord.query(on: db).filter(\.$shipmentID == shipmentID).all().map(\.entry)
        if try await PayoutClaim.query(on: db).filter(\.$shipmentID == shipmentID).count() > 0 {
            throw WaybillError(.conflict, .conflict, "A payout of this shipment is under way; the refund waits for it.")
        }
        for payout in entries where payout.kind == .payout {
            guard let account = payout.account, let transfer = payout.reference,
                  !entries.contains(where: { $0.kind == .transferReversal && $0.account == account }) else { continue }
            let amount = Money(payout.amount, payout.currency)
            let reversal = try await services.payments.reverse(transfer: transfer, amount: amount,
                                                               idempotencyKey: "reversal:\(shipmentID.uuidString):\(account.uuidString)")
            try await transaction { db in
                try await Self.lockOrderRow(shipmentID, on: db)
                let done = try await LedgerRecord.query(on: db).filter(\.$shipmentID == shipmentID)
                    .filter(\.$kind == .transferReversal).filter(\.$accountID == account).count()
                guard done == 0 else { return }
                try await LedgerRecord(LedgerEntry(kind: .transferReversal, amount: payout.amount, currency: payout.currency,
                                                   shipment: shipmentID, account: account, at: UnixTime.nowMillis, reference: reversal)).create(on: db)
                try await OrderEvent(orderID: shipmentID, type: "payout_reversed", status: nil, actorID: nil, note: reversal).insert(on: db)
            }
        }
    }

    /// Pays `amount` of a shipment out to `accountID`'s connected account `destination`, at most
    /// what the customer paid less what was already paid out (`Ledger.mayPayOut`). The provider is
    /// asked first, with a key that makes a retry return the same transfer; the ledger entry is
    /// then written once (a retry after a lost answer finds it and does not record it twice).
    @discardableResult
    func payOut(_ shipmentID: OrderID, to accountID: UserID, destination: String, amount: Money,
                paymentIntent: String? = nil) async throws -> LedgerEntry {
        let key = "payout:\(shipmentID.uuidString):\(accountID.uuidString)"
        // 1. Claim the amount, with the shipment's row held: what was paid, less what was paid out
        //    and what other payouts of the shipment have claimed, must cover it. Two payouts asked
        //    at once (to two carriers of one shipment) cannot both pass while the provider is asked.
        let claim = try await transaction { db -> LedgerEntry? in
            try await Self.lockOrderRow(shipmentID, on: db)
            let entries = try await LedgerRecord.query(on: db).filter(\.$shipmentID == shipmentID).all().map(\.entry)
            if let earlier = entries.first(where: { $0.kind == .payout && $0.account == accountID }) { return earlier }
            // Nothing is paid out of a payment being (or already) given back.
            if let order = try await Order.find(shipmentID, on: db), order.paymentStatus == .refundPending || order.paymentStatus == .refunded {
                throw WaybillError(.conflict, .conflict, "This shipment's payment is being refunded; nothing is paid out of it.")
            }
            let claims = try await PayoutClaim.query(on: db).filter(\.$shipmentID == shipmentID).all()
            if let mine = claims.first(where: { $0.id == key }) {
                // An earlier try that did not finish (the provider's idempotency makes it one transfer).
                guard mine.amount == amount.amount, mine.currency == amount.currency else {
                    throw WaybillError(.conflict, .conflict, "A payout of another amount to this account is under way.")
                }
                return nil
            }
            let claimed = claims.map { LedgerEntry(kind: .payout, amount: $0.amount, currency: $0.currency, shipment: shipmentID,
                                                   account: $0.accountID, at: $0.claimedAt) }
            guard (entries + claimed).allSatisfy({ $0.currency == amount.currency }), Ledger.mayPayOut(amount.amount, of: entries + claimed) else {
                throw WaybillError(.conflict, .payoutExceedsPayment, "A payout cannot exceed what was paid for the shipment.")
            }
            try await PayoutClaim(key: key, shipmentID: shipmentID, accountID: accountID, amount: amount, at: UnixTime.nowMillis).create(on: db)
            return nil
        }
        if let claim { return claim }
        // 2. The provider moves the money (the same key never moves it twice).
        let transfer: String
        do {
            transfer = try await services.payments.payOut(PayoutRequest(
                shipmentID: shipmentID, accountID: accountID, destination: destination, amount: amount, idempotencyKey: key,
                paymentIntent: paymentIntent))
        } catch {
            try? await transaction { db in try await PayoutClaim.query(on: db).filter(\.$id == key).delete() }
            throw error
        }
        // 3. The ledger entry, and the claim gone, in one transaction.
        let entry = LedgerEntry(kind: .payout, amount: amount.amount, currency: amount.currency, shipment: shipmentID,
                                account: accountID, at: UnixTime.nowMillis, reference: transfer)
        let events = services.events
        return try await transaction { db in
            try await Self.lockOrderRow(shipmentID, on: db)
            try await PayoutClaim.query(on: db).filter(\.$id == key).delete()
            if let earlier = try await LedgerRecord.query(on: db).filter(\.$shipmentID == shipmentID)
                .filter(\.$kind == .payout).filter(\.$accountID == accountID).first() {
                return earlier.entry
            }
            guard let order = try await Order.find(shipmentID, on: db) else { throw WaybillError.notFound }
            // The ledger subscriber writes the entry; the person paid is told.
            try await events.record(.shipment(try OrderRow(order), .paidOut(entry)), on: db)
            return entry
        }
    }
}
