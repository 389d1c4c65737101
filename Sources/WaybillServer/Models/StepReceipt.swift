import Fluent
import Foundation
import WaybillCore

/// A step on an order (accept, pick up, deliver, fail) done with an idempotency key: the same key
/// from the same person is that step, answered again rather than done twice.
final class StepReceipt: Model, @unchecked Sendable {
    static let schema = "step_receipts"

    @ID(custom: "id", generatedBy: .user) var id: StepReceiptID?
    @Field(key: "user_id") var userID: UserID
    @Field(key: "idempotency_key") var idempotencyKey: String
    @Field(key: "order_id") var orderID: OrderID
    @Field(key: "action") var action: OrderAction
    @Field(key: "created_at") var createdAt: Int64

    var properties: [any AnyProperty] { [$id, $userID, $idempotencyKey, $orderID, $action, $createdAt] }

    init() {}

    init(userID: UserID, idempotencyKey: String, orderID: OrderID, action: OrderAction) {
        self.id = .generated()
        self.userID = userID
        self.idempotencyKey = idempotencyKey
        self.orderID = orderID
        self.action = action
        self.createdAt = UnixTime.nowMillis
    }
}
