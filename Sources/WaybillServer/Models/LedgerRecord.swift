import Fluent
import Foundation
import WaybillCore

/// One movement of money (`WaybillCore.LedgerEntry`), stored. Never changed or deleted: a refund is
/// a new entry, not an edit of the charge.
final class LedgerRecord: Model, @unchecked Sendable {
    static let schema = "ledger_entries"

    @ID(custom: "id", generatedBy: .database) var id: Int?
    @Field(key: "kind") var kind: LedgerEntryKind
    @Field(key: "amount") var amount: Int
    @Field(key: "currency") var currency: String
    /// The shipment (today's order) the money is for.
    @OptionalField(key: "shipment_id") var shipmentID: OrderID?
    /// The account it came from or went to.
    @OptionalField(key: "account_id") var accountID: UserID?
    @Field(key: "at") var at: Int64
    /// The payment provider's id (a payment intent, a refund), when there is one.
    @OptionalField(key: "reference") var reference: String?

    /// Listed so Fluent does not find them by reflection on every save and read.
    var properties: [any AnyProperty] { [$id, $kind, $amount, $currency, $shipmentID, $accountID, $at, $reference] }

    init() {}

    init(_ entry: LedgerEntry) {
        kind = entry.kind
        amount = entry.amount
        currency = entry.currency
        shipmentID = entry.shipment
        accountID = entry.account
        at = entry.at
        reference = entry.reference
    }

    var entry: LedgerEntry {
        LedgerEntry(kind: kind, amount: amount, currency: currency, shipment: shipmentID, account: accountID, at: at, reference: reference)
    }
}

extension LedgerEntryKind: TextColumn {}

/// Which entries the money of an order adds to the ledger: as it happens (a domain event), and, for
/// orders made before the ledger existed, from what the order records (the backfill of migration
/// 007). Both say the same (`LedgerRecordingTests`).
enum LedgerRecorder {
    /// An entry of `order`'s money, from or to its customer.
    private static func entry(_ kind: LedgerEntryKind, _ amount: Int, of order: some OrderColumns, at: Int64, reference: String? = nil) -> LedgerEntry {
        LedgerEntry(kind: kind, amount: amount, currency: order.currency, shipment: try? order.orderID, account: order.customerID, at: at,
                    reference: reference)
    }

    static func entries(for event: DomainEvent) -> [LedgerEntry] {
        guard case .shipment(let order, let fact) = event else { return [] }
        func entry(_ kind: LedgerEntryKind, _ amount: Int, at: Int64, reference: String? = nil) -> LedgerEntry {
            Self.entry(kind, amount, of: order, at: at, reference: reference)
        }
        guard order.priceAmount > 0 else { return [] }
        switch fact {
        case .placed:
            // Paid through the checkout, or billed on the month's statement; cash waits for the pickup.
            // An insured order's premium is recorded with it: the part of the payment that insures.
            if order.paymentStatus == .paid {
                let at = order.paidAt ?? UnixTime.nowMillis
                return [entry(.charge, order.priceAmount, at: at, reference: order.paymentIntentID)] + premium(of: order, at: at) + points(of: order, at: at)
            }
            if order.paymentMethod == .invoice {
                return [entry(.invoiceLine, order.priceAmount, at: order.createdAt)] + premium(of: order, at: order.createdAt) + points(of: order, at: order.createdAt)
            }
            return []
        case .pickedUp(_, let cash):
            guard let cash, cash > 0 else { return [] }
            return [entry(.cashCollected, cash, at: order.updatedAt)] + premium(of: order, at: order.updatedAt) + points(of: order, at: order.updatedAt)
        case .paymentRefunded:
            let at = order.refundedAt ?? UnixTime.nowMillis
            return [entry(.refund, order.priceAmount, at: at, reference: order.refundID)] + pointsBack(of: order, at: at)
        case .cancelled:
            // A cancelled order is on no statement: its invoice line is credited back.
            return order.paymentMethod == .invoice
                ? [entry(.refund, order.priceAmount, at: order.updatedAt, reference: "credit")] + pointsBack(of: order, at: order.updatedAt) : []
        case .paidOut(let entry):
            return [entry]
        case .assigned, .accepted, .delivered, .failed, .checkoutExpired, .receiptConfirmed, .atCounter:
            return []
        }
    }

    /// The insurance premium of an insured order, as the payment that includes it is recorded.
    private static func premium(of order: OrderRow, at: Int64) -> [LedgerEntry] {
        guard let premium = order.insurancePremium, premium > 0 else { return [] }
        return [entry(.insurancePremium, premium, of: order, at: at)]
    }

    /// The loyalty points spent on an order, as the payment of the rest is recorded.
    private static func points(of order: OrderRow, at: Int64) -> [LedgerEntry] {
        guard let discount = order.pointsDiscount, discount > 0 else { return [] }
        return [entry(.pointsRedeemed, discount, of: order, at: at)]
    }

    /// The points given back with a refund or a credit (`Loyalty` restores them to the account).
    private static func pointsBack(of order: OrderRow, at: Int64) -> [LedgerEntry] {
        guard let discount = order.pointsDiscount, discount > 0 else { return [] }
        return [entry(.refund, discount, of: order, at: at, reference: "points")]
    }

    /// What an order made before the ledger would have recorded. `pickedUpAt`: when it was picked up.
    static func entries(replaying order: Order, pickedUpAt: Int64?) -> [LedgerEntry] {
        func entry(_ kind: LedgerEntryKind, _ amount: Int, at: Int64, reference: String? = nil) -> LedgerEntry {
            Self.entry(kind, amount, of: order, at: at, reference: reference)
        }
        guard order.priceAmount > 0 else { return [] }
        var entries: [LedgerEntry] = []
        if order.paymentMethod.isOnline, let paidAt = order.paidAt {
            entries.append(entry(.charge, order.priceAmount, at: paidAt, reference: order.paymentIntentID))
        }
        if order.paymentMethod == .invoice {
            entries.append(entry(.invoiceLine, order.priceAmount, at: order.createdAt))
            if order.status == .cancelled { entries.append(entry(.refund, order.priceAmount, at: order.updatedAt, reference: "credit")) }
        }
        if let cash = order.cashCollected, cash > 0 { entries.append(entry(.cashCollected, cash, at: pickedUpAt ?? order.updatedAt)) }
        if let refundedAt = order.refundedAt { entries.append(entry(.refund, order.priceAmount, at: refundedAt, reference: order.refundID)) }
        return entries
    }
}
