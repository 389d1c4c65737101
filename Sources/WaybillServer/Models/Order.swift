import Fluent
import NIOConcurrencyHelpers
import SQLKit
import Foundation
import WaybillCore

/// A delivery order. Money is stored in minor units; times as Unix milliseconds, so the lists
/// sort and page on plain integers on both SQLite and PostgreSQL.
final class Order: Model, OrderColumns, @unchecked Sendable {
    static let schema = "orders"

    @ID(custom: .id, generatedBy: .random) var id: OrderID?
    @Field(key: "reference") var reference: String
    @Field(key: "customer_id") var customerID: UserID
    @OptionalField(key: "driver_id") var driverID: UserID?
    @Field(key: "status") var status: OrderStatus
    /// Bumped by every change; a change only lands if nobody else changed the order meanwhile.
    @Field(key: "version") var version: Int
    @Field(key: "created_at") var createdAt: Int64
    @Field(key: "updated_at") var updatedAt: Int64

    /// Where the parcel is picked up and where it goes, as columns (`pickup_city`, …).
    @Group(key: "pickup") var pickupPlace: PlaceColumns
    @Group(key: "dropoff") var dropoffPlace: PlaceColumns
    @Field(key: "weight_class") var weightClass: WeightClass
    @Field(key: "service") var service: ServiceLevel
    /// The receiver: a name and contact; an account when one has the recipient's email verified.
    @Group(key: "recipient") var recipientColumns: RecipientColumns
    @OptionalField(key: "notes") var notes: String?

    @Field(key: "price_amount") var priceAmount: Int
    @Field(key: "currency") var currency: String
    @OptionalField(key: "distance_m") var distanceMeters: Int?
    @Field(key: "breakdown") var breakdownJSON: String
    @Field(key: "tariff_version") var tariffVersion: Int

    @Field(key: "payment_method") var paymentMethod: PaymentMethod
    @Field(key: "payment_status") var paymentStatus: PaymentStatus
    @Field(key: "sandbox") var sandbox: Bool
    @OptionalField(key: "checkout_session_id") var checkoutSessionID: String?
    @OptionalField(key: "checkout_url") var checkoutURL: String?
    @OptionalField(key: "payment_intent_id") var paymentIntentID: String?
    @OptionalField(key: "paid_at") var paidAt: Int64?
    @OptionalField(key: "refund_id") var refundID: String?
    @OptionalField(key: "refunded_at") var refundedAt: Int64?
    @OptionalField(key: "cash_collected") var cashCollected: Int?
    @OptionalField(key: "idempotency_key") var idempotencyKey: String?

    @Field(key: "require_recipient_code") var requireRecipientCode: Bool
    @OptionalField(key: "recipient_code_hash") var recipientCodeHash: String?
    @Field(key: "recipient_code_attempts") var recipientCodeAttempts: Int

    @OptionalField(key: "failure_reason") var failureReason: FailureReason?
    @OptionalField(key: "failure_note") var failureNote: String?
    @OptionalField(key: "cancellation_reason") var cancellationReason: String?
    @OptionalField(key: "signed_by") var signedBy: String?
    @OptionalField(key: "delivered_at") var deliveredAt: Int64?
    /// The secret of the order's public tracking link (`/t/{token}`); nil when revoked.
    @OptionalField(key: "tracking_token") var trackingToken: String?
    /// The receiver's code, sealed under the server's key, for the receiver's app while the parcel is
    /// on its way (`RecipientCodeSeal`); nil once delivered.
    @OptionalField(key: "recipient_code_sealed") var recipientCodeSealed: String?
    /// The customer's own reference (their shop's order number), unique per customer: an import
    /// given the same file twice places each delivery once.
    @OptionalField(key: "external_reference") var externalReference: String?
    /// The import that placed it (nil: placed one at a time).
    @OptionalField(key: "import_id") var importID: OrderImportID?
    /// The secret the parcel's label carries in its QR code (`/h/{token}`): scanned at each hand-over
    /// as proof the parcel is in hand. Only those who handle the parcel print it.
    @OptionalField(key: "handover_token") var handoverToken: String?
    /// The value the sender insured (minor units of `currency`); nil uninsured.
    @OptionalField(key: "declared_value") var declaredValue: Int?
    /// What the insurance cost, part of `priceAmount`.
    @OptionalField(key: "insurance_premium") var insurancePremium: Int?
    /// Loyalty points spent on it, and what they took off the price (`priceAmount` is what is left
    /// to pay in money).
    @OptionalField(key: "points_redeemed") var pointsRedeemed: Int?
    @OptionalField(key: "points_discount") var pointsDiscount: Int?
    /// The subscription whose plan priced it, whether it was one of the plan's included
    /// deliveries, and what the plan took off the price.
    @OptionalField(key: "plan_subscription_id") var planSubscriptionID: SubscriptionID?
    @OptionalField(key: "plan_included") var planIncluded: Bool?
    @OptionalField(key: "plan_discount") var planDiscount: Int?
    @OptionalField(key: "plan_name") var planName: String?

    /// The model's properties, listed so Fluent does not discover them by reflection (and cast each
    /// one) for every row: that cost most of a list's time. `ModelPropertiesTests` checks the list is
    /// exactly the declared properties, in order, so it cannot drift from the declarations.
    var databaseFields: [any AnyDatabaseProperty] {
        [$id, $reference, $customerID, $driverID, $status, $version, $createdAt, $updatedAt, $pickupPlace, $dropoffPlace,
         $weightClass, $service, $recipientColumns, $notes, $priceAmount, $currency, $distanceMeters, $breakdownJSON,
         $tariffVersion, $paymentMethod, $paymentStatus, $sandbox, $checkoutSessionID, $checkoutURL, $paymentIntentID,
         $paidAt, $refundID, $refundedAt, $cashCollected, $idempotencyKey, $requireRecipientCode, $recipientCodeHash,
         $recipientCodeAttempts, $failureReason, $failureNote, $cancellationReason, $signedBy, $deliveredAt,
         $trackingToken, $recipientCodeSealed, $externalReference, $importID, $handoverToken, $declaredValue, $insurancePremium,
         $pointsRedeemed, $pointsDiscount, $planSubscriptionID, $planIncluded, $planDiscount,
         $planName]
    }

    var properties: [any AnyProperty] { databaseFields }

    /// What an export reads: every column but the order's secrets (`OrderRow.secretColumns`), which
    /// no list shows.
    static let listColumns: [SQLIdentifier] = OrderRow.columns.filter { !OrderRow.secretColumns.contains($0) }.map { SQLIdentifier($0) }

    /// Fills the model from a row through `databaseFields`, without Fluent's casts of every property.
    func output(from output: any DatabaseOutput) throws {
        for field in databaseFields { try field.output(from: output) }
    }

    init() {}

    enum PaymentStatus: String, Codable, Sendable {
        case awaiting, paid, refundPending = "refund_pending", refunded
        case dueOnPickup = "due_on_pickup", collected, invoiced, void
    }

    var orderID: OrderID { get throws { try storedID } }

    var pickup: Address {
        get { pickupPlace.address }
        set { pickupPlace.address = newValue }
    }
    var dropoff: Address {
        get { dropoffPlace.address }
        set { dropoffPlace.address = newValue }
    }
    var recipient: Recipient {
        get { recipientColumns.recipient }
        set { recipientColumns.recipient = newValue }
    }

    /// One decoder for the JSON columns (decoding is safe from several threads).
    static let decoder = JSONDecoder()

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }()

    static func json<T: Encodable>(_ value: T) -> String {
        String(decoding: (try? encoder.encode(value)) ?? Data("null".utf8), as: UTF8.self)
    }
}

/// One line of an order's history: who did what, when. Never changed or deleted.
final class OrderEvent: Model, @unchecked Sendable {
    static let schema = "order_events"

    @ID(custom: "id", generatedBy: .database) var id: Int?
    @Field(key: "order_id") var orderID: OrderID
    @Field(key: "type") var type: String
    @OptionalField(key: "status") var status: OrderStatus?
    @OptionalField(key: "actor_id") var actorID: UserID?
    @OptionalField(key: "note") var note: String?
    @Field(key: "at") var at: Int64

    /// Listed so Fluent does not find them by reflection on every save and read.
    var properties: [any AnyProperty] { [$id, $orderID, $type, $status, $actorID, $note, $at] }

    init() {}
    init(orderID: OrderID, type: String, status: OrderStatus?, actorID: UserID?, note: String? = nil, at: Int64 = UnixTime.nowMillis) {
        self.orderID = orderID
        self.type = type
        self.status = status
        self.actorID = actorID
        self.note = note
        self.at = at
    }
}

/// A stored image belonging to an order: the recipient's signature, a delivery photo, or the
/// customer's photo of the parcel. The bytes live under `STORAGE_PATH/files`, named by the server.
final class OrderFile: Model, @unchecked Sendable {
    static let schema = "order_files"

    /// One list of kinds for the server, its database and its API: WaybillCore's.
    typealias Kind = ShipmentFileKind

    @ID(custom: .id, generatedBy: .random) var id: FileID?
    @Field(key: "order_id") var orderID: OrderID
    @Field(key: "kind") var kind: Kind
    @Field(key: "content_type") var contentType: String
    @Field(key: "storage_name") var storageName: String
    @Field(key: "byte_count") var byteCount: Int
    @Field(key: "width") var width: Int
    @Field(key: "height") var height: Int
    @Field(key: "uploaded_by") var uploadedBy: UserID
    @Field(key: "created_at") var createdAt: Int64

    /// Listed so Fluent does not find them by reflection on every save and read.
    var properties: [any AnyProperty] { [$id, $orderID, $kind, $contentType, $storageName, $byteCount, $width, $height, $uploadedBy, $createdAt] }

    init() {}
}

/// Something a person should know about, shown in the app and mailed.
final class Notification: Model, @unchecked Sendable {
    static let schema = "notifications"

    @ID(custom: .id, generatedBy: .random) var id: NotificationID?
    @Field(key: "user_id") var userID: UserID
    @OptionalField(key: "order_id") var orderID: OrderID?
    @Field(key: "kind") var kind: String
    @Field(key: "title") var title: String
    @Field(key: "body") var body: String
    @OptionalField(key: "read_at") var readAt: Int64?
    @Field(key: "created_at") var createdAt: Int64

    /// Listed so Fluent does not find them by reflection on every save and read.
    var properties: [any AnyProperty] { [$id, $userID, $orderID, $kind, $title, $body, $readAt, $createdAt] }

    init() {}
    init(userID: UserID, orderID: OrderID?, kind: String, title: String, body: String) {
        self.userID = userID
        self.orderID = orderID
        self.kind = kind
        self.title = title
        self.body = body
        self.createdAt = UnixTime.nowMillis
    }
}

/// A checkout on the sandbox payment page (used when no Stripe keys are configured).
final class SandboxCheckout: Model, @unchecked Sendable {
    static let schema = "sandbox_checkouts"

    @ID(custom: "id", generatedBy: .user) var id: String?
    @Field(key: "order_id") var orderID: OrderID
    @Field(key: "amount") var amount: Int
    @Field(key: "currency") var currency: String
    @Field(key: "method") var method: PaymentMethod
    @Field(key: "status") var status: String  // open, paid, expired
    @Field(key: "created_at") var createdAt: Int64

    /// Listed so Fluent does not find them by reflection on every save and read.
    var properties: [any AnyProperty] { [$id, $orderID, $amount, $currency, $method, $status, $createdAt] }

    init() {}
}

/// A payout the sandbox provider recorded instead of moving money.
final class SandboxPayout: Model, @unchecked Sendable {
    static let schema = "sandbox_payouts"

    @ID(custom: "id", generatedBy: .user) var id: String?
    @Field(key: "shipment_id") var shipmentID: OrderID
    @Field(key: "account_id") var accountID: UserID
    @Field(key: "destination") var destination: String
    @Field(key: "amount") var amount: Int
    @Field(key: "currency") var currency: String
    @Field(key: "idempotency_key") var idempotencyKey: String
    @Field(key: "created_at") var createdAt: Int64
    @OptionalField(key: "reversed_at") var reversedAt: Int64?

    /// Listed so Fluent does not find them by reflection on every save and read.
    var properties: [any AnyProperty] { [$id, $shipmentID, $accountID, $destination, $amount, $currency, $idempotencyKey, $createdAt, $reversedAt] }

    init() {}
}

/// A payout claimed but not yet recorded: it counts against what is left to pay out of the shipment
/// while the provider is asked, and is gone once the ledger entry is written (`Orders.payOut`).
final class PayoutClaim: Model, @unchecked Sendable {
    static let schema = "payout_claims"

    /// The payout's idempotency key, one per shipment and account.
    @ID(custom: "idempotency_key", generatedBy: .user) var id: String?
    @Field(key: "shipment_id") var shipmentID: OrderID
    @Field(key: "account_id") var accountID: UserID
    @Field(key: "amount") var amount: Int
    @Field(key: "currency") var currency: String
    @Field(key: "claimed_at") var claimedAt: Int64

    /// Listed so Fluent does not find them by reflection on every save and read.
    var properties: [any AnyProperty] { [$id, $shipmentID, $accountID, $amount, $currency, $claimedAt] }

    init() {}

    init(key: String, shipmentID: OrderID, accountID: UserID, amount: Money, at: Int64) {
        self.id = key
        self.shipmentID = shipmentID
        self.accountID = accountID
        self.amount = amount.amount
        self.currency = amount.currency
        self.claimedAt = at
    }
}

/// A Stripe event already handled (its id), so a redelivery is not handled twice.
final class StripeEvent: Model, @unchecked Sendable {
    static let schema = "stripe_events"
    @ID(custom: "id", generatedBy: .user) var id: String?
    @Field(key: "type") var type: String
    @Field(key: "received_at") var receivedAt: Int64
    /// Listed so Fluent does not find them by reflection on every save and read.
    var properties: [any AnyProperty] { [$id, $type, $receivedAt] }

    init() {}
}
