import Foundation
import SQLKit
import WaybillCore

/// What an order's stored columns mean, whichever way it was read: the Fluent model (for writes)
/// or the plain `OrderRow` (for answers and pages).
protocol OrderColumns {
    /// The order's id (a model being read or written already has one: `Order` throws, rather than
    /// traps, for one never saved; an `OrderRow` always has it).
    var orderID: OrderID { get throws }
    var reference: String { get }
    var status: OrderStatus { get }
    var updatedAt: Int64 { get }
    var deliveredAt: Int64? { get }
    var declaredValue: Int? { get }
    var customerID: UserID { get }
    var driverID: UserID? { get }
    var recipient: Recipient { get }
    var pickup: Address { get }
    var dropoff: Address { get }
    var priceAmount: Int { get }
    var currency: String { get }
    var breakdownJSON: String { get }
    var paymentStatus: Order.PaymentStatus { get }
    var requireRecipientCode: Bool { get }
}

extension OrderColumns {
    var breakdown: [PriceLine] { get throws { try Order.decoder.decode([PriceLine].self, from: Data(breakdownJSON.utf8)) } }
    var price: Money { Money(priceAmount, currency) }

    /// Whom the order concerns, for `OrderPolicy`.
    var parties: OrderParties { OrderParties(customerID: customerID, driverID: driverID, recipientEmail: recipient.email) }
}

/// An order as answers, pages and policies read it: every column a stored property, read straight
/// from the row (`PlainRows`). The Fluent model `Order` is what writes use; a Fluent model is 55
/// property-wrapper objects made, filled, read and freed through generic code, which was most of a
/// list's time (docs/performance.md). `Order.databaseFields` stays the one list of columns: the
/// statement selects them in that order and `init(reading:)` reads them in that order
/// (`OrderRowTests` checks it reads what Fluent reads).
struct OrderRow: OrderColumns, Sendable, Equatable {
    var id: OrderID
    var orderID: OrderID { id }
    var reference: String
    var customerID: UserID
    var driverID: UserID?
    var status: OrderStatus
    var version: Int
    var createdAt: Int64
    var updatedAt: Int64
    var pickup: Address
    var pickupAreaID: String?
    var dropoff: Address
    var dropoffAreaID: String?
    var weightClass: WeightClass
    var service: ServiceLevel
    var recipient: Recipient
    var notes: String?
    var priceAmount: Int
    var currency: String
    var distanceMeters: Int?
    var breakdownJSON: String
    var tariffVersion: Int
    var paymentMethod: PaymentMethod
    var paymentStatus: Order.PaymentStatus
    var sandbox: Bool
    var checkoutSessionID: String?
    var checkoutURL: String?
    var paymentIntentID: String?
    var paidAt: Int64?
    var refundID: String?
    var refundedAt: Int64?
    var cashCollected: Int?
    var idempotencyKey: String?
    var requireRecipientCode: Bool
    var recipientCodeHash: String?
    var recipientCodeAttempts: Int
    var failureReason: FailureReason?
    var failureNote: String?
    var cancellationReason: String?
    var signedBy: String?
    var deliveredAt: Int64?
    var trackingToken: String?
    var recipientCodeSealed: String?
    var externalReference: String?
    var importID: OrderImportID?
    var handoverToken: String?
    var declaredValue: Int?
    var insurancePremium: Int?
    var pointsRedeemed: Int?
    var pointsDiscount: Int?
    var planSubscriptionID: SubscriptionID?
    var planIncluded: Bool?
    var planDiscount: Int?
    var planName: String?

    /// Every column, in `Order.databaseFields`' order.
    static let columns: [String] = Order().databaseFields.flatMap(\.keys).map(\.description)

    /// Columns no list shows (the recipient code's hash, the checkout, the idempotency key, the
    /// tracking and hand-over links): a list selects NULL in their place.
    static let secretColumns: Set<String> = ["recipient_code_hash", "checkout_session_id", "checkout_url", "payment_intent_id",
                                             "refund_id", "idempotency_key", "tracking_token", "recipient_code_sealed", "handover_token"]

    /// The select list for `init(reading:)`, written once: serializing 59 column expressions on every
    /// request was a sixth of an order's detail. Both databases quote identifiers with `"`.
    private static let fullSelection = SQLRaw(selection(listed: false))
    /// The same with NULL in place of the secrets.
    private static let listedSelection = SQLRaw(selection(listed: true))

    static func selection(listed: Bool) -> String {
        columns.map { listed && secretColumns.contains($0) ? "NULL" : "\"\($0)\"" }.joined(separator: ", ")
    }

    /// A select of orders, every column in `columns`' order.
    static func select(on sql: any SQLDatabase, listed: Bool) -> SQLSelectBuilder {
        sql.select().column(listed ? listedSelection : fullSelection).from(Order.schema)
    }

    static func read(_ select: SQLSelectBuilder, on sql: any SQLDatabase) async throws -> [OrderRow] {
        var rows = try await PlainRows.read(select, sql: sql)
        return try rows.indices.map { try OrderRow(reading: &rows[$0]) }
    }

    init(reading r: inout ColumnCursor) throws {
        id = try r.id()
        reference = try r.string()
        customerID = try r.id()
        driverID = try r.optional { try $0.id() }
        status = try r.text()
        version = try r.int()
        createdAt = try r.int64()
        updatedAt = try r.int64()
        (pickup, pickupAreaID) = try Self.place(&r)
        (dropoff, dropoffAreaID) = try Self.place(&r)
        weightClass = try r.text()
        service = try r.text()
        recipient = Recipient(name: try r.string(), email: try r.optional { try $0.string() }, phone: try r.optional { try $0.string() })
        notes = try r.optional { try $0.string() }
        priceAmount = try r.int()
        currency = try r.string()
        distanceMeters = try r.optional { try $0.int() }
        breakdownJSON = try r.string()
        tariffVersion = try r.int()
        paymentMethod = try r.text()
        paymentStatus = try r.text()
        sandbox = try r.bool()
        checkoutSessionID = try r.optional { try $0.string() }
        checkoutURL = try r.optional { try $0.string() }
        paymentIntentID = try r.optional { try $0.string() }
        paidAt = try r.optional { try $0.int64() }
        refundID = try r.optional { try $0.string() }
        refundedAt = try r.optional { try $0.int64() }
        cashCollected = try r.optional { try $0.int() }
        idempotencyKey = try r.optional { try $0.string() }
        requireRecipientCode = try r.bool()
        recipientCodeHash = try r.optional { try $0.string() }
        recipientCodeAttempts = try r.int()
        failureReason = try r.optional { try $0.text() }
        failureNote = try r.optional { try $0.string() }
        cancellationReason = try r.optional { try $0.string() }
        signedBy = try r.optional { try $0.string() }
        deliveredAt = try r.optional { try $0.int64() }
        trackingToken = try r.optional { try $0.string() }
        recipientCodeSealed = try r.optional { try $0.string() }
        externalReference = try r.optional { try $0.string() }
        importID = try r.optional { try $0.id() }
        handoverToken = try r.optional { try $0.string() }
        declaredValue = try r.optional { try $0.int() }
        insurancePremium = try r.optional { try $0.int() }
        pointsRedeemed = try r.optional { try $0.int() }
        pointsDiscount = try r.optional { try $0.int() }
        planSubscriptionID = try r.optional { try $0.id() }
        planIncluded = try r.optional { try $0.bool() }
        planDiscount = try r.optional { try $0.int() }
        planName = try r.optional { try $0.string() }
    }

    private static func place(_ r: inout ColumnCursor) throws -> (Address, String?) {
        let street = try r.string(), postalCode = try r.string(), city = try r.string(), country = try r.string()
        let latitude = try r.optional { try $0.double() }, longitude = try r.optional { try $0.double() }
        let area = try r.optional { try $0.string() }
        let coordinate = latitude.flatMap { lat in longitude.map { Coordinate(latitude: lat, longitude: $0) } }
        return (Address(street: street, postalCode: postalCode, city: city, country: country, coordinate: coordinate), area)
    }

    /// The same order as the model holds it (after a write, which has the model at hand).
    init(_ o: Order) throws {
        id = try o.storedID
        reference = o.reference
        customerID = o.customerID
        driverID = o.driverID
        status = o.status
        version = o.version
        createdAt = o.createdAt
        updatedAt = o.updatedAt
        pickup = o.pickup
        pickupAreaID = o.pickupPlace.areaID
        dropoff = o.dropoff
        dropoffAreaID = o.dropoffPlace.areaID
        weightClass = o.weightClass
        service = o.service
        recipient = o.recipient
        notes = o.notes
        priceAmount = o.priceAmount
        currency = o.currency
        distanceMeters = o.distanceMeters
        breakdownJSON = o.breakdownJSON
        tariffVersion = o.tariffVersion
        paymentMethod = o.paymentMethod
        paymentStatus = o.paymentStatus
        sandbox = o.sandbox
        checkoutSessionID = o.checkoutSessionID
        checkoutURL = o.checkoutURL
        paymentIntentID = o.paymentIntentID
        paidAt = o.paidAt
        refundID = o.refundID
        refundedAt = o.refundedAt
        cashCollected = o.cashCollected
        idempotencyKey = o.idempotencyKey
        requireRecipientCode = o.requireRecipientCode
        recipientCodeHash = o.recipientCodeHash
        recipientCodeAttempts = o.recipientCodeAttempts
        failureReason = o.failureReason
        failureNote = o.failureNote
        cancellationReason = o.cancellationReason
        signedBy = o.signedBy
        deliveredAt = o.deliveredAt
        trackingToken = o.trackingToken
        recipientCodeSealed = o.recipientCodeSealed
        externalReference = o.externalReference
        importID = o.importID
        handoverToken = o.handoverToken
        declaredValue = o.declaredValue
        insurancePremium = o.insurancePremium
        pointsRedeemed = o.pointsRedeemed
        pointsDiscount = o.pointsDiscount
        planSubscriptionID = o.planSubscriptionID
        planIncluded = o.planIncluded
        planDiscount = o.planDiscount
        planName = o.planName
    }
}
