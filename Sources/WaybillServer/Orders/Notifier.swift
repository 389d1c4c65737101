import Fluent
import Foundation
import WaybillCore

/// Tells people about what happened to an order: an in-app notification (read through
/// `/notifications`, and later pushed to their devices) and an email through the outbox, both in
/// the transaction of the change itself.
enum Notifier {
    enum Kind: String, CaseIterable {
        case orderPending = "order_pending", orderAssigned = "order_assigned", orderUnassigned = "order_unassigned"
        case orderAccepted = "order_accepted"
        case orderPickedUp = "order_picked_up", orderDelivered = "order_delivered", orderFailed = "order_failed"
        case orderCancelled = "order_cancelled", cashDiscrepancy = "cash_discrepancy", paymentRefunded = "payment_refunded"

        /// English and French titles (the first client writes French).
        func title(_ reference: String) -> (en: String, fr: String) {
            switch self {
            case .orderPending: ("New order \(reference)", "Nouvelle commande \(reference)")
            case .orderAssigned: ("Delivery \(reference) assigned to you", "Livraison \(reference) qui vous est attribuée")
            case .orderUnassigned: ("Delivery \(reference) given to another driver", "Livraison \(reference) confiée à un autre livreur")
            case .orderAccepted: ("Your parcel \(reference) will be picked up", "Votre colis \(reference) va être pris en charge")
            case .orderPickedUp: ("Delivery \(reference) in progress", "Livraison \(reference) en cours")
            case .orderDelivered: ("Delivered: \(reference)", "Livré : \(reference)")
            case .orderFailed: ("Delivery \(reference) failed", "Échec de la livraison \(reference)")
            case .orderCancelled: ("Order \(reference) cancelled", "Commande \(reference) annulée")
            case .cashDiscrepancy: ("Cash for \(reference) differs from the price", "Montant encaissé différent pour \(reference)")
            case .paymentRefunded: ("Payment for \(reference) refunded", "Paiement de \(reference) remboursé")
            }
        }
    }

    static func notify(_ users: [User], _ kind: Kind, order: Order, body: String, on db: any Database) async throws {
        let title = kind.title(order.reference)
        var seen = Set<UserID>()
        for user in users where !user.isDisabled {
            guard let id = user.id, seen.insert(id).inserted else { continue }
            let notification = Notification(userID: id, orderID: order.id, kind: kind.rawValue, title: title.en, body: body)
            try await notification.create(on: db)
            try await LiveLog.publish(.notification(LiveNotification(
                id: notification.id!, kind: kind.rawValue, title: title.en, body: body, orderId: order.id,
                createdAt: notification.createdAt)), to: [LiveLog.userTopic(id)], on: db)
            try await PushDelivery.enqueue(userID: id, title: title.en, body: body,
                                           data: ["kind": kind.rawValue, "orderId": order.id!.uuidString, "notificationId": notification.id!.uuidString],
                                           collapseKey: order.id!.uuidString, on: db)
            try await Outbox.enqueue(MailMessage(
                to: MailAddress(name: user.displayName, address: user.email),
                subject: title.en,
                text: """
                Hello \(user.firstName),

                \(body)

                Order \(order.reference) — open the Waybill app for details.

                Bonjour \(user.firstName),
                \(title.fr). Ouvrez l'application Waybill pour les détails.
                """), on: db)
        }
    }

    static func managers(on db: any Database) async throws -> [User] {
        try await User.query(on: db).filter(\.$role ~~ Permission.dispatch.roles).filter(\.$disabledAt == nil).all()
    }
}
