import Fluent
import Foundation
import SQLKit
import Vapor
import WaybillCore

/// Loyalty points: the rules admins set, each account's points (a history of entries replayed by
/// `LoyaltyBalance`), spending them on an order in its transaction, and the entries that follow a
/// shipment's life (earned when delivered, given back when cancelled or refunded, taken back when a
/// delivered shipment is refunded). The rules are in WaybillCore (`LoyaltyRules`, `LoyaltyPolicy`).
struct Loyalty: WaybillService {
    let services: WaybillServices
    let db: any Database
    let logger: Logger

    init(services: WaybillServices, db: any Database, logger: Logger) {
        self.services = services
        self.db = db
        self.logger = logger
    }

    private var orders: Orders { Orders(services: services, db: db, logger: logger) }

    // MARK: Rules

    static func currentRules(on db: any Database) async throws -> LoyaltyRulesRecord {
        guard let record = try await LoyaltyRulesRecord.current(on: db) else {
            throw WaybillError(.serviceUnavailable, .noTariff, "No loyalty rules are set.")
        }
        return record
    }

    /// The rules as anyone signed in reads them, in the tariff's currency.
    func rules(for principal: Principal) async throws -> (record: LoyaltyRulesRecord, currency: String) {
        (try await Self.currentRules(on: db), try await orders.currentTariff().tariff.currency)
    }

    /// Admins replace the rules; points already earned keep their expiry.
    func replaceRules(_ rules: LoyaltyRules, by principal: Principal) async throws -> (record: LoyaltyRulesRecord, currency: String) {
        try principal.require(.manageLoyalty)
        let clean = try rules.validated().orValidationError()
        let currency = try await orders.currentTariff().tariff.currency
        do {
            let record = try await orders.transaction { db in
                let (record, current) = try await LoyaltyRulesRecord.replace(with: clean, by: principal.userID, on: db)
                try await AuditLog.record(.loyaltyChanged, by: principal.userID, target: .tariff, "loyalty",
                                          before: current.map { ["version": String($0.version), "rules": $0.data] },
                                          after: ["version": String(record.version), "rules": record.data], on: db)
                return record
            }
            return (record, currency)
        } catch let error as any DatabaseError where error.isConstraintFailure {
            throw WaybillError(.conflict, .conflict, "Another admin changed the loyalty rules at the same moment; reload them and try again.")
        }
    }

    // MARK: An account's points

    struct Account: Sendable {
        var balance: LoyaltyBalance
        /// The newest first, with the reference of the order each concerns.
        var entries: [(entry: LoyaltyEntry, reference: String?)]
        var rules: LoyaltyRulesRecord
        var currency: String
    }

    /// The caller's points and history. Points past their validity are recorded as expired first.
    func account(for principal: Principal, limit: Int = 100) async throws -> Account {
        let id = principal.userID
        let now = UnixTime.nowMillis
        // One read of the history gives both the balance and the newest entries; only when points
        // are due to expire is it written (under the account's lock) and read again.
        var entries = try await Self.entries(of: id, on: db)
        var balance = LoyaltyBalance.replay(entries, now: now)
        if !balance.due.isEmpty {
            (balance, entries) = try await orders.transaction { db in
                try await Self.lockAccount(id, on: db)
                let settled = try await Self.settle(id, now: now, on: db)
                return (settled, try await Self.entries(of: id, on: db))
            }
        }
        let newest = Array(entries.reversed().prefix(max(1, min(limit, 500))))
        let orderIDs = Set(newest.compactMap(\.order))
        var references: [OrderID: String] = [:]
        if !orderIDs.isEmpty, let sql = db.tracedSQL {
            let rows = try await sql.select().column("id").column("reference").from("orders")
                .where("id", .in, SQLBind.group(orderIDs.map(\.rawValue))).all()
            for row in rows {
                references[OrderID(rawValue: try row.decode(column: "id", as: UUID.self))] = try row.decode(column: "reference", as: String.self)
            }
        }
        let (rules, currency) = try await self.rules(for: principal)
        return Account(balance: balance, entries: newest.map { ($0, $0.order.flatMap { references[$0] }) }, rules: rules, currency: currency)
    }

    /// What an account holds, for the ordering form: nil unless it holds enough to spend.
    struct Holding: Sendable {
        var points: Int
        var worth: Int
        var rules: LoyaltyRules
        var currency: String
    }

    func holding(_ account: UserID) async throws -> Holding? {
        let rules = try await Self.currentRules(on: db).rules
        let balance = LoyaltyBalance.replay(try await Self.entries(of: account, on: db), now: UnixTime.nowMillis)
        guard balance.points >= rules.minimumRedemption else { return nil }
        return Holding(points: balance.points, worth: rules.value(of: balance.points) ?? 0, rules: rules,
                       currency: try await orders.currentTariff().tariff.currency)
    }

    /// Checks `points` may be spent on `price` by `account` now (a quote, or an order before its
    /// transaction, which checks again under the account's lock): a field error on `redeemPoints`.
    func redemption(_ points: Int?, price: Int, for account: UserID) async throws -> LoyaltyRedemption? {
        guard let points else { return nil }
        let rules = try await Self.currentRules(on: db).rules
        let balance = LoyaltyBalance.replay(try await Self.entries(of: account, on: db), now: UnixTime.nowMillis)
        switch LoyaltyPolicy.redeem(points, price: price, balance: balance.points, rules: rules) {
        case .success(let redemption): return redemption
        case .failure(let refusal): throw WaybillError.validation("redeemPoints", refusal.fieldError)
        }
    }

    // MARK: Within transactions

    static func entries(of account: UserID, on db: any Database) async throws -> [LoyaltyEntry] {
        try await LoyaltyEntryRecord.query(on: db).filter(\.$accountID == account).sort(\.$createdAt).all().map(\.entry)
    }

    /// Holds the account's row until the transaction ends, so parallel checkouts spend its points
    /// one after the other (on SQLite the write lock serialises writers). PostgreSQL's `FOR NO KEY
    /// UPDATE`, not `FOR UPDATE`: rows inserted with a reference to the account (the order) take a
    /// key-share lock on it, which `FOR UPDATE` would wait for, and two checkouts would deadlock.
    static func lockAccount(_ id: UserID, on db: any Database) async throws {
        guard let sql = db.tracedSQL, sql.dialect.name == "postgresql" else { return }
        try await sql.raw("SELECT id FROM users WHERE id = \(bind: id) FOR NO KEY UPDATE").run()
    }

    /// Records the expiry of points past their validity and returns the balance (under the lock).
    @discardableResult
    static func settle(_ account: UserID, now: Int64, on db: any Database) async throws -> LoyaltyBalance {
        var entries = try await entries(of: account, on: db)
        let balance = LoyaltyBalance.replay(entries, now: now)
        guard !balance.due.isEmpty else { return balance }
        for lot in balance.due {
            // Recorded now (not at the expiry): replayed in order, it takes the lots expiring soonest, these.
            let entry = LoyaltyEntry(kind: .expired, points: lot.points, at: now, expiresAt: lot.expiresAt)
            try await LoyaltyEntryRecord(account: account, entry).create(on: db)
            entries.append(entry)
        }
        return LoyaltyBalance.replay(entries, now: now)
    }

    /// Spends the order's points in the transaction that stores it: 422 `redeemPoints`:
    /// `not_enough_points` when a parallel order spent them first.
    static func spend(_ redemption: LoyaltyRedemption, on order: Order, on db: any Database) async throws {
        let account = order.customerID
        try await lockAccount(account, on: db)
        let now = UnixTime.nowMillis
        let balance = try await settle(account, now: now, on: db)
        guard redemption.points <= balance.points else { throw WaybillError.validation("redeemPoints", "not_enough_points") }
        try await LoyaltyEntryRecord(account: account, LoyaltyEntry(
            kind: .redeemed, points: redemption.points, at: now, expiresAt: balance.expiryOfOldest(redemption.points), order: order.id)).create(on: db)
    }

    /// The entry `order` already has of `kind`, if any.
    private static func entry(_ kind: LoyaltyEntryKind, of order: OrderRow, on db: any Database) async throws -> LoyaltyEntryRecord? {
        try await LoyaltyEntryRecord.query(on: db).filter(\.$orderID == order.id).filter(\.$kind == kind).first()
    }

    /// What a shipment's life does to its sender's points, in the transaction of the change: a
    /// delivery earns by the rules in force; a cancellation or a refund gives back the points spent
    /// on it; a refund after delivery takes back what the delivery earned (what is left of it).
    static func handle(_ event: DomainEvent, on db: any Database) async throws {
        guard case .shipment(let order, let fact) = event else { return }
        switch fact {
        case .delivered:
            guard order.paymentStatus != .refunded, order.paymentStatus != .refundPending,
                  try await entry(.earned, of: order, on: db) == nil else { return }
            let rules = try await currentRules(on: db).rules
            let points = rules.earned(forPaid: LoyaltyPolicy.earningBasis(price: order.priceAmount, insurancePremium: order.insurancePremium))
            guard points > 0 else { return }
            let now = UnixTime.nowMillis
            try await LoyaltyEntryRecord(account: order.customerID, LoyaltyEntry(
                kind: .earned, points: points, at: now, expiresAt: rules.expiry(ofPointsEarnedAt: now), order: order.id)).create(on: db)
        case .cancelled, .checkoutExpired:
            try await giveBack(order, on: db)
        case .paymentRefunded:
            try await giveBack(order, on: db)
            guard let earned = try await entry(.earned, of: order, on: db), try await entry(.revoked, of: order, on: db) == nil else { return }
            try await lockAccount(order.customerID, on: db)
            let now = UnixTime.nowMillis
            let balance = try await settle(order.customerID, now: now, on: db)
            // Never below zero: points already spent stay spent.
            let points = min(earned.points, balance.points)
            guard points > 0 else { return }
            try await LoyaltyEntryRecord(account: order.customerID, LoyaltyEntry(kind: .revoked, points: points, at: now, order: order.id)).create(on: db)
        default:
            return
        }
    }

    /// Gives back the points spent on `order`, once, with the expiry the oldest of them had.
    private static func giveBack(_ order: OrderRow, on db: any Database) async throws {
        guard let spent = try await entry(.redeemed, of: order, on: db), try await entry(.restored, of: order, on: db) == nil else { return }
        try await LoyaltyEntryRecord(account: order.customerID, LoyaltyEntry(
            kind: .restored, points: spent.points, at: UnixTime.nowMillis, expiresAt: spent.expiresAt, order: order.id)).create(on: db)
    }
}
