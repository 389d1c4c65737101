import Foundation
import WaybillCore

/// The administration's strings, in English and French.
extension Text {
    static let administration = Text("Administration", "Administration")
    static let confirmItsYou = Text("Confirm it is you", "Confirmez que c’est vous")
    static let confirmItsYouHint = Text("The administration needs your password from the last 15 minutes. Enter it again to go on.",
                                        "L’administration demande votre mot de passe des 15 dernières minutes. Saisissez-le à nouveau pour continuer.")
    static let confirmPassword = Text("Confirm", "Confirmer")
    static let wrongPassword = Text("That is not your password.", "Ce n’est pas votre mot de passe.")
    static let reportsQueue = Text("Reports", "Signalements")
    static let reportsEmpty = Text("No report here.", "Aucun signalement ici.")
    static let reportPending = Text("To review", "À examiner")
    static let reportReviewed = Text("Under watch", "Sous surveillance")
    static let reportDismissed = Text("Dismissed", "Classé")
    static let reportActionTaken = Text("Action taken", "Mesure prise")
    static let reportAllStatuses = Text("All", "Tous")
    static let reportedBy = Text("Reported by %@", "Signalé par %@")
    static let reportAbout = Text("About", "Concerne")
    static let reportOfMessage = Text("A message", "Un message")
    static let reportOfReview = Text("A review", "Un avis")
    static let reportOfPerson = Text("The person", "La personne")
    static let reportDecide = Text("Decide", "Décider")
    static let reportDecision = Text("Decision", "Décision")
    static let reportDecisionNote = Text("Note for the other moderators", "Note pour les autres modérateurs")
    static let reportDecided = Text("Decided by %@: %@", "Décidé par %@ : %@")
    static let openPerson = Text("Open their account", "Ouvrir son compte")
    static let auditLog = Text("Audit log", "Journal d’audit")
    static let auditHint = Text("Every staff action, newest first: who, what, the state before and after, when (UTC), the request and the address. Nobody can change a line.",
                                "Chaque action du personnel, la plus récente d’abord : qui, quoi, l’état avant et après, quand (UTC), la requête et l’adresse. Personne ne peut modifier une ligne.")
    static let auditAction = Text("Action", "Action")
    static let auditAnyAction = Text("Any action", "Toute action")
    static let auditActor = Text("Who (account id)", "Qui (identifiant du compte)")
    static let auditTarget = Text("About (id)", "Concerne (identifiant)")
    static let auditWho = Text("Who", "Qui")
    static let auditWhen = Text("When (UTC)", "Quand (UTC)")
    static let auditChange = Text("Before → after", "Avant → après")
    static let auditOrigin = Text("Request, address", "Requête, adresse")
    static let auditOperator = Text("The operator (command line)", "L’exploitant (ligne de commande)")
    static let auditEmpty = Text("No line matches.", "Aucune ligne ne correspond.")
    static let auditOlder = Text("Older lines", "Lignes plus anciennes")
    static let auditCSV = Text("Download as CSV", "Télécharger en CSV")
    static let auditFilter = Text("Search", "Rechercher")
    static let actCapabilityGranted = Text("Capability granted", "Capacité accordée")
    static let actCapabilityRevoked = Text("Capability taken back", "Capacité retirée")
    static let actAccountCreated = Text("Staff account created", "Compte du personnel créé")
    static let actPasswordReset = Text("Password reset sent", "Réinitialisation envoyée")
    static let actSuspended = Text("Suspended", "Suspendu")
    static let actBanned = Text("Banned", "Exclu")
    static let actLifted = Text("Restriction lifted", "Restriction levée")
    static let actReportDecided = Text("Report decided", "Signalement décidé")
    static let actTariffChanged = Text("Tariff changed", "Tarif modifié")
    static let actTravelTariffChanged = Text("Travel tariff changed", "Tarif des trajets modifié")
    static let actTripRemoved = Text("Trip removed", "Trajet retiré")
    static let actOrderCancelled = Text("Order cancelled", "Commande annulée")
    static let actOrderRefunded = Text("Order refunded", "Commande remboursée")
    static let actAreaChanged = Text("Area saved", "Zone enregistrée")
    static let actAreaDeleted = Text("Area removed", "Zone supprimée")
    static let actCounterChanged = Text("Counter saved", "Guichet enregistré")
    static let actCounterStaff = Text("Counter staff changed", "Personnel du guichet modifié")
    static let actContentHidden = Text("Content hidden", "Contenu masqué")
    static let actContentRestored = Text("Content shown again", "Contenu rétabli")
    static let hideContent = Text("Hide it", "Le masquer")
    static let restoreContent = Text("Show it again", "Le rétablir")
    static let hideReason = Text("Why (the author is shown this)", "Pourquoi (l’auteur le verra)")
    static let hiddenByModerators = Text("Hidden by the moderators: %@", "Masqué par les modérateurs : %@")
}

enum AdminCatalogue {
    static let all: [Text] = [
        .administration, .confirmItsYou, .confirmItsYouHint, .confirmPassword, .wrongPassword, .reportsQueue, .reportsEmpty,
        .reportPending, .reportReviewed, .reportDismissed, .reportActionTaken, .reportAllStatuses, .reportedBy, .reportAbout,
        .reportOfMessage, .reportOfReview, .reportOfPerson, .reportDecide, .reportDecision, .reportDecisionNote, .reportDecided,
        .openPerson, .auditLog, .auditHint, .auditAction, .auditAnyAction, .auditActor, .auditTarget, .auditWho, .auditWhen,
        .auditChange, .auditOrigin, .auditOperator, .auditEmpty, .auditOlder, .auditCSV, .auditFilter, .hideContent, .restoreContent,
        .hideReason, .hiddenByModerators,
    ] + AuditAction.allCases.map(action)

    static func status(_ status: ReportStatus) -> Text {
        switch status {
        case .pending: .reportPending
        case .reviewed: .reportReviewed
        case .dismissed: .reportDismissed
        case .actionTaken: .reportActionTaken
        }
    }

    static func action(_ action: AuditAction) -> Text {
        switch action {
        case .capabilityGranted: .actCapabilityGranted
        case .capabilityRevoked: .actCapabilityRevoked
        case .accountCreated: .actAccountCreated
        case .passwordResetSent: .actPasswordReset
        case .accountSuspended: .actSuspended
        case .accountBanned: .actBanned
        case .restrictionLifted: .actLifted
        case .reportDecided: .actReportDecided
        case .tariffChanged: .actTariffChanged
        case .planChanged: .actPlanChanged
        case .travelTariffChanged: .actTravelTariffChanged
        case .insuranceChanged: .actInsuranceChanged
        case .claimApproved: .actClaimApproved
        case .claimDeclined: .actClaimDeclined
        case .loyaltyChanged: .actLoyaltyChanged
        case .tripRemoved: .actTripRemoved
        case .orderCancelled: .actOrderCancelled
        case .orderRefunded: .actOrderRefunded
        case .areaChanged: .actAreaChanged
        case .areaDeleted: .actAreaDeleted
        case .counterChanged: .actCounterChanged
        case .counterStaffChanged: .actCounterStaff
        case .contentHidden: .actContentHidden
        case .contentRestored: .actContentRestored
        }
    }
}
