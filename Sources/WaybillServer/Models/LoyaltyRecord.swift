import Fluent
import Foundation
import WaybillCore

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
