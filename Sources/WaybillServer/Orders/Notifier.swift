import Fluent
import SQLKit
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
        case parcelComing = "parcel_coming", receiptConfirmed = "receipt_confirmed", paidOut = "paid_out"
        case tripRequested = "trip_requested", tripRequestAccepted = "trip_request_accepted"
        case tripRequestRejected = "trip_request_rejected", tripRequestCancelled = "trip_request_cancelled"
        case tripRequestExpired = "trip_request_expired"
        case parcelUpdate = "parcel_update", parcelShared = "parcel_shared"
        case webhookDisabled = "webhook_disabled"
        case ordersImported = "orders_imported"
        case slotApproved = "slot_approved", slotDeclined = "slot_declined", slotPending = "slot_pending"
        case atCounter = "at_counter"
        case claimFiled = "claim_filed", claimDecided = "claim_decided", claimPaid = "claim_paid"
        case planPaymentFailed = "plan_payment_failed"

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
            case .parcelComing: ("A parcel is on its way to you: \(reference)", "Un colis est en route vers vous : \(reference)")
            case .receiptConfirmed: ("Receipt of \(reference) confirmed", "Réception de \(reference) confirmée")
            case .paidOut: ("You were paid for \(reference)", "Vous avez été payé pour \(reference)")
            case .tripRequested: ("A sender asks for a place on your trip", "Un expéditeur demande une place sur votre trajet")
            case .tripRequestAccepted: ("Your request was accepted: pay \(reference) to confirm", "Votre demande est acceptée : payez \(reference) pour confirmer")
            case .tripRequestRejected: ("Your request was declined", "Votre demande a été refusée")
            case .tripRequestCancelled: ("A request for your trip was withdrawn", "Une demande pour votre trajet a été retirée")
            case .tripRequestExpired: ("Your request expired", "Votre demande a expiré")
            case .parcelUpdate: ("\(reference): news from the carrier", "\(reference) : du nouveau chez le transporteur")
            case .parcelShared: ("A parcel shared with you: \(reference)", "Un colis partagé avec vous : \(reference)")
            case .webhookDisabled: ("Webhook endpoint turned off: \(reference)", "Point de terminaison webhook désactivé : \(reference)")
            case .ordersImported: ("\(reference) deliveries imported", "\(reference) livraisons importées")
            case .slotApproved: ("Your timeslot for \(reference) is confirmed", "Votre créneau pour \(reference) est confirmé")
            case .slotDeclined: ("Your timeslot for \(reference) was declined", "Votre créneau pour \(reference) a été refusé")
            case .atCounter: ("\(reference) is at the counter", "\(reference) est au guichet")
            case .claimFiled: ("Insurance claim for \(reference)", "Sinistre déclaré pour \(reference)")
            case .claimDecided: ("Your claim for \(reference) was decided", "Votre sinistre pour \(reference) a été tranché")
            case .claimPaid: ("Compensation for \(reference) paid", "Indemnité pour \(reference) versée")
            case .slotPending: ("A timeslot for \(reference) waits for approval", "Un créneau pour \(reference) attend une approbation")
            case .planPaymentFailed: ("Your plan's payment failed", "Le paiement de votre abonnement a échoué")
            }
        }
    }

    /// The account a shipment is addressed to, if someone has verified the recipient's email.
    static func receiver(of order: some OrderColumns, on db: any Database) async throws -> [User] {
        guard let email = order.recipient.email else { return [] }
        return try await User.query(on: db).filter(\.$email == email).filter(\.$emailVerifiedAt != nil).all()
    }

    /// In the app always; by push and mail unless the person turned them off (`push`, `mail`).
    static func notify(_ users: [any NotifiedPerson], _ kind: Kind, order: (any OrderColumns)?, reference: String? = nil, body: String,
                       push: Bool = true, mail: Bool = true, on db: any Database) async throws {
        let title = kind.title(reference ?? order?.reference ?? "")
        let orderID = try order?.orderID
        var seen = Set<UserID>()
        for user in users where !user.isBanned {
            let id = try user.personID
            guard seen.insert(id).inserted else { continue }
            let notification = Notification(userID: id, orderID: orderID, kind: kind.rawValue, title: title.en, body: body)
            try await notification.insert(on: db)
            let notificationID = try notification.storedID
            try await LiveLog.publish(.notification(LiveNotification(
                id: notificationID, kind: kind.rawValue, title: title.en, body: body, orderId: orderID,
                createdAt: notification.createdAt)), to: [LiveLog.userTopic(id)], on: db)
            if push { try await PushDelivery.enqueue(userID: id, title: title.en, body: body,
                                           data: ["kind": kind.rawValue, "orderId": orderID?.uuidString ?? "", "notificationId": notificationID.uuidString,
                                                  // The web app's page it is about: the service worker opens it when the notification is tapped.
                                                  "path": orderID.map { WebRoutes.order($0) } ?? WebRoutes.notifications()],
                                           collapseKey: (orderID?.uuidString ?? notificationID.uuidString), on: db) }
            guard mail else { continue }
            try await Outbox.enqueue(MailMessage(
                to: MailAddress(name: user.displayName, address: user.email),
                subject: title.en,
                text: """
                Hello \(user.firstName),

                \(body)

                \(order.map { "Order \($0.reference) — open" } ?? "Open") the Waybill app for details.

                Bonjour \(user.firstName),
                \(title.fr). Ouvrez l'application Waybill pour les détails.
                """), on: db)
        }
    }

    /// The managers who may dispatch, as telling them needs. The primary role is manager exactly
    /// when the account holds `manager` (`Capability.primaryRole`). Read plainly: every new order
    /// asks, inside its transaction, and filling Fluent's `User` for each manager was 4 % of
    /// placing an order under SQLite's write lock (docs/performance.md).
    static func managers(on db: any Database) async throws -> [NotifiedAccount] {
        guard let sql = db.tracedSQL else { return [] }
        var rows = try await PlainRows.read(sql.select().column(NotifiedAccount.selection).from(User.schema)
            .where("role", .equal, SQLBind(Role.manager.rawValue)), sql: sql)
        var managers: [NotifiedAccount] = []
        for index in rows.indices {
            let manager = try NotifiedAccount(reading: &rows[index])
            if manager.caller.may(.dispatch) { managers.append(manager) }
        }
        return managers
    }
}

/// Someone `Notifier.notify` tells: an account read in full (`User`) or only as telling them
/// needs (`NotifiedAccount`).
protocol NotifiedPerson: PersonNaming {
    var isBanned: Bool { get }
}

extension User: NotifiedPerson {}

/// An account as telling it needs, read plainly (`Notifier.managers`): how it is named (`PersonRow`),
/// and what decides whether it is banned and what it may do, as `User` decides them.
struct NotifiedAccount: NotifiedPerson, Sendable {
    var person: PersonRow
    var staffCapabilities: String
    var emailVerified: Bool
    var restrictedKind: String?
    var restrictedUntil: Int64?

    /// The columns `init(reading:)` reads, in its order.
    static let selection = SQLRaw(PersonRow.selection.sql + #", "capabilities", "email_verified_at", "restricted_kind", "restricted_until""#)

    init(reading r: inout ColumnCursor) throws {
        person = try PersonRow(reading: &r)
        staffCapabilities = try r.string()
        emailVerified = !r.isNull()
        r.skip()
        restrictedKind = try r.optional { try $0.string() }
        restrictedUntil = try r.optional { try $0.int64() }
    }

    var personID: UserID { person.personID }
    var role: Role { person.role }
    var email: String { person.email }
    var firstName: String { person.firstName }
    var lastName: String { person.lastName }
    var companyName: String? { person.companyName }

    var restriction: Restriction.Kind? { Restriction.inForce(kind: restrictedKind, until: restrictedUntil, at: UnixTime.nowMillis) }
    var isBanned: Bool { restriction == .banned }
    /// The account as WaybillCore's policies know it (as `User.caller`).
    var caller: Caller {
        Caller(id: personID, capabilities: AccountStanding.effective(User.capabilities(staff: staffCapabilities, emailVerified: emailVerified),
                                                                     under: restriction),
               verifiedEmail: emailVerified ? email : nil)
    }
}
