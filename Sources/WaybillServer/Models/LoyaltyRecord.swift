import Fluent
import Foundation
import WaybillCore

/// A version of the loyalty rules (the newest is in force), like the tariff's.
final class LoyaltyRulesRecord: Model, @unchecked Sendable {
    static let schema = "loyalty_rules"

    @ID(custom: "version", generatedBy: .user) var id: Int?
    @Field(key: "data") var data: String
    @OptionalField(key: "created_by") var createdBy: UserID?
    @Field(key: "created_at") var createdAt: Int64

    var properties: [any AnyProperty] { [$id, $data, $createdBy, $createdAt] }

    init() {}
    init(version: Int, rules: LoyaltyRules, createdBy: UserID?) {
        self.id = version
        self.data = Order.json(rules)
        self.createdBy = createdBy
        self.createdAt = UnixTime.nowMillis
    }

    var rules: LoyaltyRules {
        get throws { try Order.decoder.decode(LoyaltyRules.self, from: Data(data.utf8)) }
    }
}

extension LoyaltyEntryKind: TextColumn {}

/// One line of an account's points history (`LoyaltyEntry`). Never changed or deleted.
final class LoyaltyEntryRecord: Model, @unchecked Sendable {
    static let schema = "loyalty_entries"

    @ID(custom: .id, generatedBy: .random) var id: LoyaltyEntryID?
    @Field(key: "account_id") var accountID: UserID
    @Field(key: "kind") var kind: LoyaltyEntryKind
    @Field(key: "points") var points: Int
    @OptionalField(key: "order_id") var orderID: OrderID?
    @OptionalField(key: "expires_at") var expiresAt: Int64?
    @Field(key: "created_at") var createdAt: Int64

    var properties: [any AnyProperty] { [$id, $accountID, $kind, $points, $orderID, $expiresAt, $createdAt] }

    init() {}
    init(account: UserID, _ entry: LoyaltyEntry) {
        self.id = .generated()
        self.accountID = account
        self.kind = entry.kind
        self.points = entry.points
        self.orderID = entry.order
        self.expiresAt = entry.expiresAt
        self.createdAt = entry.at
    }

    var entry: LoyaltyEntry { LoyaltyEntry(kind: kind, points: points, at: createdAt, expiresAt: expiresAt, order: orderID) }
}
