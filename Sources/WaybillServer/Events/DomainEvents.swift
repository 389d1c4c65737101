import Fluent
import Foundation
import NIOConcurrencyHelpers
import WaybillCore

/// What happened, recorded once, in the transaction that did it. Whatever must follow
/// (notifications with their mail and push, the live channel, the ledger, statistics, webhooks,
/// auto-dispatch) subscribes here instead of being called from inside the change: a new feature adds
/// a subscriber, not a line in every transition.
///
/// An event carries values, never a database model: the shipment as it was saved (`OrderRow`, read
/// once when the event is recorded), the people by their names (`PersonRow`), a parcel's or a
/// request's ids and facts. A subscriber that needs more reads it. `Equatable`, synthesized: a case
/// that carried a Fluent model (a reference, not equatable) would not compile.
enum DomainEvent: Sendable, Equatable {
    /// Something happened to a shipment; `OrderRow` is the shipment as saved with it.
    case shipment(OrderRow, ShipmentFact)
    /// A parcel of another carrier changed status at its carrier (`parcel` holds the new one).
    case parcelChanged(ParcelFacts, from: ParcelStatus, newEvents: [ParcelEvent])
    /// A request for a place on a trip was sent, answered, withdrawn or expired (`request` holds the new status).
    case tripRequestChanged(TripRequestFacts, TripRequestChange)
    /// An import placed orders (each also recorded as `placed`): `perCustomer` counts them per account.
    case ordersImported(importID: OrderImportID, by: PersonRow, perCustomer: [UserID: Int])

    /// The shipment it happened to, as saved (nil for a parcel of another carrier, a request, an import).
    var order: OrderRow? {
        if case .shipment(let order, _) = self { order } else { nil }
    }

    /// What happened to the shipment, if it is about one.
    var fact: ShipmentFact? {
        if case .shipment(_, let fact) = self { fact } else { nil }
    }

    /// Whether the shipment's status changed with this event (a refund does not change it).
    var changesStatus: Bool { fact?.changesStatus ?? false }
}

/// What happened to a shipment: the command that landed, or the money that moved.
enum ShipmentFact: Sendable, Equatable {
    /// It reached dispatch (placed and confirmed, or paid).
    case placed
    /// Given to `driver` by `actor`; `previousDriverID` had it before (a reassignment).
    case assigned(driver: PersonRow, previousDriverID: UserID?, actor: UserID)
    case accepted(driver: PersonRow)
    /// Picked up; `cashCollected` for cash orders (minor units).
    case pickedUp(driver: PersonRow, cashCollected: Int?)
    case delivered(signedBy: String)
    case failed(driver: PersonRow, reason: FailureReason)
    /// Cancelled by a person (`actor`) or by the server (nil).
    case cancelled(actor: UserID?, reason: String)
    /// A checkout left unpaid expired; the shipment is cancelled without telling anyone.
    case checkoutExpired
    case paymentRefunded
    /// The receiver (an account) confirmed the parcel reached them.
    case receiptConfirmed(receiver: PersonRow)
    /// A counter checked the parcel in: dropped off by its sender, or brought by a driver for the
    /// receiver to collect there (`collection`).
    case atCounter(counter: String, collection: Bool)
    /// Money went to someone who carried a leg (`entry.account`), through the payment provider.
    case paidOut(LedgerEntry)

    /// Whether the shipment's status changed with it (a refund, a receipt, a payout, a counter's
    /// check-in do not change it).
    var changesStatus: Bool {
        switch self {
        case .paymentRefunded, .receiptConfirmed, .paidOut, .atCounter: false
        default: true
        }
    }

    /// Its name in logs and tests (`assigned`, `picked_up`, …).
    var name: String {
        switch self {
        case .placed: "placed"
        case .assigned: "assigned"
        case .accepted: "accepted"
        case .pickedUp: "picked_up"
        case .delivered: "delivered"
        case .failed: "failed"
        case .cancelled: "cancelled"
        case .checkoutExpired: "expired"
        case .paymentRefunded: "refunded"
        case .receiptConfirmed: "receipt_confirmed"
        case .atCounter: "at_counter"
        case .paidOut: "paid_out"
        }
    }
}

/// A followed parcel as its news needs it: whose it is, what it is called, where it now stands.
struct ParcelFacts: Sendable, Equatable {
    var id: ParcelID
    var ownerID: UserID
    var number: String
    var carrier: String
    var name: String?
    var status: ParcelStatus
    var alerts: ParcelAlerts?

    init(_ parcel: ParcelRecord) throws {
        id = try parcel.storedID
        ownerID = parcel.ownerID
        number = parcel.number
        carrier = parcel.carrier
        name = parcel.name
        status = parcel.status
        alerts = parcel.alerts
    }
}

/// A request for a place on a trip, by its ids and the status it now has.
struct TripRequestFacts: Sendable, Equatable {
    var id: TripRequestID
    var tripID: TripID
    var senderID: UserID
    var travellerID: UserID
    var shipmentID: ShipmentID?
    var status: TripRequestStatus

    init(_ request: TripRequestRecord) throws {
        id = try request.storedID
        tripID = request.tripID
        senderID = request.senderID
        travellerID = request.travellerID
        shipmentID = request.shipmentID
        status = request.status
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
        switch event {
        case .parcelChanged(let parcel, let old, _): return try await ParcelNews.tell(parcel, from: old, on: db)
        case .ordersImported(_, let importer, let perCustomer): return try await importNews(by: importer, perCustomer, on: db)
        case .tripRequestChanged: return  // told by the travel service with its own words
        case .shipment(let order, let fact): try await tell(fact, of: order, on: db)
        }
    }

    /// The account of a person an event names (they may have been removed since).
    private static func account(_ person: PersonRow, on db: any Database) async throws -> [User] {
        try await User.find(person.personID, on: db).map { [$0] } ?? []
    }

    private static func tell(_ fact: ShipmentFact, of order: OrderRow, on db: any Database) async throws {
        func customer() async throws -> [User] { try await User.find(order.customerID, on: db).map { [$0] } ?? [] }
        switch fact {
        case .placed where order.driverID != nil:
            // A traveller's shipment, paid: its carrier was named when they accepted the request.
            if let travellerID = order.driverID, let traveller = try await User.find(travellerID, on: db) {
                try await Notifier.notify([traveller], .orderAssigned, order: order,
                                          body: "The sender paid \(order.reference): pick the parcel up in \(order.pickup.city) and check it against their photo.",
                                          on: db)
            }
        case .placed where order.importID != nil:
            break  // the import tells managers once (`ordersImported`)
        case .placed:
            try await Notifier.notify(try await Notifier.managers(on: db), .orderPending, order: order,
                                      body: "A new \(order.service.rawValue) order \(order.reference) (\(order.price), \(order.paymentMethod.rawValue)) is waiting to be assigned.",
                                      on: db)
        case .assigned(let driver, let previous, let actor):
            if let previous, previous != driver.personID, previous != actor, let previousDriver = try await User.find(previous, on: db) {
                try await Notifier.notify([previousDriver], .orderUnassigned, order: order,
                                          body: "Order \(order.reference) has been given to another driver; you no longer need to pick it up.", on: db)
            }
            if driver.personID != actor {
                try await Notifier.notify(try await account(driver, on: db), .orderAssigned, order: order,
                                          body: "Pick up at \(order.pickup.singleLine) and deliver to \(order.dropoff.singleLine).",
                                          on: db)
            }
        case .accepted(let driver):
            try await Notifier.notify(try await customer(), .orderAccepted, order: order,
                                      body: "\(driver.firstName) will pick up your parcel \(order.reference) at \(order.pickup.singleLine).",
                                      on: db)
        case .pickedUp(let driver, let cash):
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
        case .delivered(let name):
            try await Notifier.notify(try await customer(), .orderDelivered, order: order,
                                      body: "Your parcel \(order.reference) was delivered and signed for by \(name).", on: db)
        case .failed(let driver, let reason):
            try await Notifier.notify(try await Notifier.managers(on: db), .orderFailed, order: order,
                                      body: "\(driver.displayName) could not deliver \(order.reference) (\(reason.rawValue)). Reassign or cancel it.",
                                      on: db)
        case .cancelled(let actor, let reason):
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
        case .paidOut(let entry):
            guard let account = entry.account, let person = try await User.find(account, on: db) else { return }
            try await Notifier.notify([person], .paidOut, order: order,
                                      body: "\(Money(entry.amount, entry.currency)) for carrying \(order.reference) is on its way to your account.", on: db)
        case .receiptConfirmed(let receiver):
            try await Notifier.notify(try await customer().filter { $0.id != receiver.personID }, .receiptConfirmed, order: order,
                                      body: "\(receiver.firstName) confirmed that your parcel \(order.reference) reached them.", on: db)
        case .atCounter(let counter, let collection):
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
        }
    }
}

/// What happened to a request for a place on a trip.
enum TripRequestChange: String, Sendable { case created, accepted, declined, cancelled, expired }

extension NotificationSubscriber {
    /// One notice per import: to the managers (but the one who imported), and to each customer a
    /// dispatcher imported for. In-app and push only: the orders are on the board and in their lists.
    static func importNews(by importer: PersonRow, _ perCustomer: [UserID: Int], on db: any Database) async throws {
        let total = perCustomer.values.reduce(0, +)
        guard total > 0 else { return }
        let managers = try await Notifier.managers(on: db).filter { $0.personID != importer.personID }
        try await Notifier.notify(managers, .ordersImported, order: nil, reference: String(total),
                                  body: "\(importer.displayName) imported \(total) deliveries; they are waiting to be assigned.", mail: false, on: db)
        for (customerID, count) in perCustomer where customerID != importer.personID {
            guard let customer = try await User.find(customerID, on: db) else { continue }
            try await Notifier.notify([customer], .ordersImported, order: nil, reference: String(count),
                                      body: "\(importer.displayName) placed \(count) deliveries for you from a file.", mail: false, on: db)
        }
    }
}
