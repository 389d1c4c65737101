import Fluent
import Foundation
import NIOConcurrencyHelpers
import WaybillCore

/// What happened to an order, recorded once, in the transaction that did it. Whatever must follow
/// (notifications with their mail and push, the live channel, and later statistics, webhooks,
/// auto-dispatch) subscribes here instead of being called from inside the change: a new feature adds
/// a subscriber, not a line in every transition.
enum DomainEvent: Sendable {
    /// The order reached dispatch (placed and confirmed, or paid).
    case orderPlaced(Order)
    /// Given to `driver` by `actor`; `previousDriverID` had it before (a reassignment).
    case orderAssigned(Order, driver: User, previousDriverID: UserID?, actor: UserID)
    case orderAccepted(Order, driver: User)
    /// Picked up; `cashCollected` for cash orders (minor units).
    case orderPickedUp(Order, driver: User, cashCollected: Int?)
    case orderDelivered(Order, signedBy: String)
    case orderFailed(Order, driver: User, reason: FailureReason)
    /// Cancelled by a person (`actor`) or by the server (nil).
    case orderCancelled(Order, actor: UserID?, reason: String)
    /// A checkout left unpaid expired; the order is cancelled without telling anyone.
    case checkoutExpired(Order)
    case paymentRefunded(Order)
    /// The receiver (an account) confirmed the parcel reached them.
    case receiptConfirmed(Order, receiver: User)
    /// A counter checked the parcel in: dropped off by its sender, or brought by a driver for the
    /// receiver to collect there (`collection`).
    case atCounter(Order, counter: String, collection: Bool)
    /// Money went to someone who carried a leg (`entry.account`), through the payment provider.
    case paidOut(Order, entry: LedgerEntry)
    /// A parcel of another carrier changed status at its carrier (`parcel` holds the new one).
    case parcelChanged(ParcelRecord, from: ParcelStatus, newEvents: [ParcelEvent])
    /// A request for a place on a trip was sent, answered, withdrawn or expired (`request` holds the new status).
    case tripRequestChanged(TripRequestRecord, TripRequestChange)
    /// An import placed orders (each also recorded as `orderPlaced`): `perCustomer` counts them per account.
    case ordersImported(importID: UUID, by: User, perCustomer: [UserID: Int])

    /// The order it happened to (nil for a parcel of another carrier).
    var order: Order? {
        switch self {
        case .orderPlaced(let o), .orderAssigned(let o, _, _, _), .orderAccepted(let o, _), .orderPickedUp(let o, _, _),
             .orderDelivered(let o, _), .orderFailed(let o, _, _), .orderCancelled(let o, _, _), .checkoutExpired(let o),
             .paymentRefunded(let o), .receiptConfirmed(let o, _), .paidOut(let o, _), .atCounter(let o, _, _):
            o
        case .parcelChanged, .tripRequestChanged, .ordersImported:
            nil
        }
    }

    /// Whether the order's status changed with this event (a refund does not change it).
    var changesStatus: Bool {
        switch self {
        case .paymentRefunded, .receiptConfirmed, .paidOut, .parcelChanged, .tripRequestChanged, .ordersImported, .atCounter: false
        default: true
        }
    }
}

/// Subscribers, in the order they were added; each runs in the transaction that records the event,
/// so what they write lands with the change or not at all.
final class DomainEvents: Sendable {
    typealias Subscriber = @Sendable (DomainEvent, any Database) async throws -> Void
    private let subscribers = NIOLockedValueBox<[(name: String, handle: Subscriber)]>([])

    func subscribe(_ name: String, _ handle: @escaping Subscriber) {
        subscribers.withLockedValue { $0.append((name, handle)) }
    }

    var names: [String] { subscribers.withLockedValue { $0.map(\.name) } }

    func record(_ event: DomainEvent, on db: any Database) async throws {
        for subscriber in subscribers.withLockedValue({ $0 }) { try await subscriber.handle(event, db) }
    }
}

extension DomainEvents {
    /// The subscribers every Waybill has: people are told, the live channel hears of status changes,
    /// the ledger records money.
    func subscribeStandard(etaAverageSpeedKmh speed: Double) {
        subscribe("notifications") { event, db in try await NotificationSubscriber.handle(event, on: db) }
        subscribe("live-status") { event, db in
            if event.changesStatus, let order = event.order { try await Tracking.publishStatus(order, speedKmh: speed, on: db) }
        }
        // Every movement of money, as one ledger entry, in the transaction that moved it.
        subscribe("ledger") { event, db in
            for entry in LedgerRecorder.entries(for: event) { try await LedgerRecord(entry).create(on: db) }
        }
        // A traveller's shipment: its request and the trip's room follow it; delivered, the traveller is paid.
        subscribe("trip-requests") { event, db in try await TripRequestSubscriber.handle(event, on: db) }
        // Delivery-speed statistics per carrier: one sample per delivered parcel or shipment.
        subscribe("statistics") { event, db in try await DeliveryStatsSubscriber.handle(event, on: db) }
        // Auto-dispatch: an order reaching dispatch makes a re-plan due (`AutoDispatch`).
        subscribe("auto-dispatch") { event, db in try await AutoDispatch.markDue(event, on: db) }
        // Conversations: a shipment's status changes appear in its conversation; its parties stay its members.
        subscribe("conversations") { event, db in try await Conversations.handle(event, on: db) }
        // Timeslots: a cancelled shipment frees its seats; a pickup or delivery done completes its booking.
        subscribe("timeslots") { event, db in try await Timeslots.handle(event, on: db) }
        // Loyalty points: a delivery earns them; a cancellation or refund gives back those spent on it.
        subscribe("loyalty") { event, db in try await Loyalty.handle(event, on: db) }
        // A plan's included delivery comes back when its order is cancelled.
        subscribe("subscriptions") { event, db in try await Subscriptions.handle(event, on: db) }
    }
}

/// Who is told what, for each event: an in-app notification, a push and a mail (`Notifier`).
enum NotificationSubscriber {
    static func handle(_ event: DomainEvent, on db: any Database) async throws {
        if case .parcelChanged(let parcel, let old, _) = event { return try await ParcelNews.tell(parcel, from: old, on: db) }
        if case .ordersImported(_, let importer, let perCustomer) = event { return try await importNews(by: importer, perCustomer, on: db) }
        guard let order = event.order else { return }
        func customer() async throws -> [User] { try await User.find(order.customerID, on: db).map { [$0] } ?? [] }
        switch event {
        case .orderPlaced where order.driverID != nil:
            // A traveller's shipment, paid: its carrier was named when they accepted the request.
            if let travellerID = order.driverID, let traveller = try await User.find(travellerID, on: db) {
                try await Notifier.notify([traveller], .orderAssigned, order: order,
                                          body: "The sender paid \(order.reference): pick the parcel up in \(order.pickup.city) and check it against their photo.",
                                          on: db)
            }
        case .orderPlaced where order.importID != nil:
            break  // the import tells managers once (`ordersImported`)
        case .orderPlaced:
            try await Notifier.notify(try await Notifier.managers(on: db), .orderPending, order: order,
                                      body: "A new \(order.service.rawValue) order \(order.reference) (\(order.price), \(order.paymentMethod.rawValue)) is waiting to be assigned.",
                                      on: db)
        case .orderAssigned(_, let driver, let previous, let actor):
            if let previous, previous != driver.id, previous != actor, let previousDriver = try await User.find(previous, on: db) {
                try await Notifier.notify([previousDriver], .orderUnassigned, order: order,
                                          body: "Order \(order.reference) has been given to another driver; you no longer need to pick it up.", on: db)
            }
            if driver.id != actor {
                try await Notifier.notify([driver], .orderAssigned, order: order,
                                          body: "Pick up at \(order.pickup.singleLine) and deliver to \(order.dropoff.singleLine).",
                                          on: db)
            }
        case .orderAccepted(_, let driver):
            try await Notifier.notify(try await customer(), .orderAccepted, order: order,
                                      body: "\(driver.firstName) will pick up your parcel \(order.reference) at \(order.pickup.singleLine).",
                                      on: db)
        case .orderPickedUp(_, let driver, let cash):
            if let cash, cash != order.priceAmount {
                try await Notifier.notify(try await Notifier.managers(on: db), .cashDiscrepancy, order: order,
                                          body: "\(driver.displayName) collected \(Money(cash, order.currency)) for \(order.reference); the price is \(order.price).",
                                          on: db)
            }
            try await Notifier.notify(try await customer(), .orderPickedUp, order: order,
                                      body: "Delivery in progress: your parcel \(order.reference) is on its way to \(order.dropoff.singleLine).",
                                      on: db)
            // The receiver, if they have an account: it is under "Incoming" from now on.
            let sender = try await customer().first
            try await Notifier.notify(try await Notifier.receiver(of: order, on: db).filter { $0.id != order.customerID }, .parcelComing,
                                      order: order, body: "\(sender?.firstName ?? "Someone") sent you a parcel (\(order.reference)); it is on its way to \(order.dropoff.singleLine).",
                                      on: db)
        case .orderDelivered(_, let name):
            try await Notifier.notify(try await customer(), .orderDelivered, order: order,
                                      body: "Your parcel \(order.reference) was delivered and signed for by \(name).", on: db)
        case .orderFailed(_, let driver, let reason):
            try await Notifier.notify(try await Notifier.managers(on: db), .orderFailed, order: order,
                                      body: "\(driver.displayName) could not deliver \(order.reference) (\(reason.rawValue)). Reassign or cancel it.",
                                      on: db)
        case .orderCancelled(_, let actor, let reason):
            // Cancelled by the server (nobody to hear it from): nobody is told, as before events.
            guard let actor else { return }
            var people: [User] = []
            if order.customerID != actor { people += try await customer() }
            if let driverID = order.driverID, driverID != actor, let driver = try await User.find(driverID, on: db) { people.append(driver) }
            try await Notifier.notify(people, .orderCancelled, order: order, body: "Order \(order.reference) was cancelled: \(reason)", on: db)
        case .checkoutExpired:
            return
        case .paymentRefunded:
            try await Notifier.notify(try await customer(), .paymentRefunded, order: order,
                                      body: "\(order.price) for order \(order.reference) has been refunded to your \(order.paymentMethod.rawValue).", on: db)
        case .paidOut(_, let entry):
            guard let account = entry.account, let person = try await User.find(account, on: db) else { return }
            try await Notifier.notify([person], .paidOut, order: order,
                                      body: "\(Money(entry.amount, entry.currency)) for carrying \(order.reference) is on its way to your account.", on: db)
        case .receiptConfirmed(_, let receiver):
            try await Notifier.notify(try await customer().filter { $0.id != receiver.id }, .receiptConfirmed, order: order,
                                      body: "\(receiver.firstName) confirmed that your parcel \(order.reference) reached them.", on: db)
        case .atCounter(_, let counter, let collection):
            if collection {
                try await Notifier.notify(try await customer(), .atCounter, order: order,
                                          body: "Your parcel \(order.reference) arrived at \(counter), where its receiver collects it.", on: db)
                // The receiver's mail with their code goes from the desk (it alone can read the code).
                try await Notifier.notify(try await Notifier.receiver(of: order, on: db).filter { $0.id != order.customerID }, .atCounter,
                                          order: order, body: "Your parcel \(order.reference) is ready to collect at \(counter): bring the code we mailed you.",
                                          mail: false, on: db)
            } else {
                try await Notifier.notify(try await customer(), .atCounter, order: order,
                                          body: "\(counter) received your parcel \(order.reference); a driver takes it on from there.", on: db)
            }
        case .parcelChanged, .tripRequestChanged, .ordersImported:
            return // told above, or by the travel service with its own words
        }
    }
}

/// What happened to a request for a place on a trip.
enum TripRequestChange: String, Sendable { case created, accepted, declined, cancelled, expired }

extension NotificationSubscriber {
    /// One notice per import: to the managers (but the one who imported), and to each customer a
    /// dispatcher imported for. In-app and push only: the orders are on the board and in their lists.
    static func importNews(by importer: User, _ perCustomer: [UserID: Int], on db: any Database) async throws {
        let total = perCustomer.values.reduce(0, +)
        guard total > 0 else { return }
        let managers = try await Notifier.managers(on: db).filter { $0.personID != importer.id }
        try await Notifier.notify(managers, .ordersImported, order: nil, reference: String(total),
                                  body: "\(importer.displayName) imported \(total) deliveries; they are waiting to be assigned.", mail: false, on: db)
        for (customerID, count) in perCustomer where customerID != importer.id {
            guard let customer = try await User.find(customerID, on: db) else { continue }
            try await Notifier.notify([customer], .ordersImported, order: nil, reference: String(count),
                                      body: "\(importer.displayName) placed \(count) deliveries for you from a file.", mail: false, on: db)
        }
    }
}
