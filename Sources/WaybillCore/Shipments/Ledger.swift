import Foundation

// A money ledger (issue "Shipments with legs, parties and a money ledger"), the pure part: every
// movement of money is one entry; balances per shipment and per account are sums of entries, never
// stored figures. Amounts are minor units of one currency; sums are checked, never trapping.

/// One movement of money.
public enum LedgerEntryKind: String, Sendable, Hashable, Codable, CaseIterable {
    /// The customer paid by card or TWINT.
    case charge
    /// Money given back to the customer.
    case refund
    /// Cash the driver took at pickup.
    case cashCollected = "cash_collected"
    /// A shipment billed on a company's monthly statement.
    case invoiceLine = "invoice_line"
    /// Money paid to a traveller for carrying a leg.
    case payout
    /// A payout taken back (a dispute, a refund after delivery).
    case transferReversal = "transfer_reversal"
    /// Waybill's share of a charge (informational: part of the charge, not money of its own).
    case platformFee = "platform_fee"
    /// The part of a charge that pays for insurance.
    case insurancePremium = "insurance_premium"
    /// Loyalty points the customer used instead of money.
    case pointsRedeemed = "points_redeemed"
    /// An insurance claim's compensation paid to the customer beyond a refund (a transfer).
    case claimPayout = "claim_payout"

    /// What the entry does to the money the customer has paid for a shipment: +1 paid, -1 given
    /// back, 0 not a payment by the customer (a payout, or a share of a payment already counted).
    public var customerSide: Int {
        switch self {
        case .charge, .cashCollected, .invoiceLine, .pointsRedeemed: 1
        case .refund: -1
        case .payout, .transferReversal, .platformFee, .insurancePremium, .claimPayout: 0
        }
    }

    /// What it does to the money paid out to those who carried the shipment: +1 paid, -1 taken back.
    public var carrierSide: Int {
        switch self {
        case .payout: 1
        case .transferReversal: -1
        case .charge, .refund, .cashCollected, .invoiceLine, .platformFee, .insurancePremium, .pointsRedeemed, .claimPayout: 0
        }
    }
}

/// One entry: always a positive amount; its kind says which way the money went.
public struct LedgerEntry: Sendable, Hashable, Codable {
    public var kind: LedgerEntryKind
    /// Minor units, > 0.
    public var amount: Int
    public var currency: String
    public var shipment: OrderID?
    /// The account the money came from or went to (the customer, the traveller).
    public var account: UserID?
    public var at: Int64
    /// The payment provider's id for it (a charge, a refund, a transfer), when there is one.
    public var reference: String?

    public init(kind: LedgerEntryKind, amount: Int, currency: String, shipment: OrderID?, account: UserID?, at: Int64, reference: String? = nil) {
        self.kind = kind
        self.amount = amount
        self.currency = currency
        self.shipment = shipment
        self.account = account
        self.at = at
        self.reference = reference
    }

    /// Whether the entry can be recorded: a positive amount in a currency code.
    public var isValid: Bool { amount > 0 && Money.isValidCurrency(currency) }
}

/// The sums of a set of entries in one currency.
public struct LedgerBalance: Sendable, Equatable {
    public var currency: String
    /// Paid by the customer (charges, cash, invoice lines, points), less refunds.
    public var paidByCustomer: Int
    /// Refunded to the customer.
    public var refunded: Int
    /// Paid out to travellers, less reversals.
    public var paidOut: Int
    public var platformFees: Int
    public var insurancePremiums: Int
    /// Insurance compensation transferred to the customer (what a claim paid beyond a refund).
    public var claimsPaid: Int

    public init(currency: String) {
        self.currency = currency
        paidByCustomer = 0; refunded = 0; paidOut = 0; platformFees = 0; insurancePremiums = 0; claimsPaid = 0
    }

    /// What Waybill keeps: what customers paid less what went out to carriers.
    public var retained: Int? {
        let (value, overflow) = paidByCustomer.subtractingReportingOverflow(paidOut)
        return overflow ? nil : value
    }
}

public enum Ledger {
    public enum Problem: Error, Equatable {
        /// Entries in more than one currency cannot be summed into one balance.
        case mixedCurrencies
        /// An entry that could never have been recorded (amount ≤ 0, no currency).
        case invalidEntry
        /// The sums do not fit in 64 bits.
        case overflow
    }

    /// The balance of `entries` (those of one shipment or one account). Nil currency for no entries.
    public static func balance(_ entries: [LedgerEntry]) throws(Problem) -> LedgerBalance? {
        guard let currency = entries.first?.currency else { return nil }
        var balance = LedgerBalance(currency: currency)
        func add(_ amount: Int, _ sign: Int, to total: inout Int) throws(Problem) {
            guard sign != 0 else { return }
            let (value, overflow) = sign > 0 ? total.addingReportingOverflow(amount) : total.subtractingReportingOverflow(amount)
            if overflow { throw .overflow }
            total = value
        }
        for entry in entries {
            guard entry.isValid else { throw .invalidEntry }
            guard entry.currency == currency else { throw .mixedCurrencies }
            try add(entry.amount, entry.kind.customerSide, to: &balance.paidByCustomer)
            try add(entry.amount, entry.kind.carrierSide, to: &balance.paidOut)
            switch entry.kind {
            case .refund: try add(entry.amount, 1, to: &balance.refunded)
            case .platformFee: try add(entry.amount, 1, to: &balance.platformFees)
            case .insurancePremium: try add(entry.amount, 1, to: &balance.insurancePremiums)
            case .claimPayout: try add(entry.amount, 1, to: &balance.claimsPaid)
            case .charge, .cashCollected, .invoiceLine, .payout, .transferReversal, .pointsRedeemed: break
            }
        }
        return balance
    }

    /// Whether a refund of `amount` fits what the customer paid for the shipment (never more back
    /// than was paid, in all).
    public static func mayRefund(_ amount: Int, of entries: [LedgerEntry]) -> Bool {
        guard amount > 0, let balance = try? balance(entries) else { return false }
        return amount <= balance.paidByCustomer
    }

    /// Whether a payout of `amount` fits what was paid: nobody is paid out more than the customer
    /// paid less what was already paid out.
    public static func mayPayOut(_ amount: Int, of entries: [LedgerEntry]) -> Bool {
        guard amount > 0, let balance = try? balance(entries), let left = balance.retained else { return false }
        return amount <= left
    }
}
