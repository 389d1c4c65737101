import Foundation
import WaybillCore

/// Insurance's strings, in English and French.
extension Text {
    static let insurance = Text("Insurance", "Assurance")
    static let insureFor = Text("Insure it for (%@)", "L’assurer pour (%@)")
    static let insureHint = Text("The value of what you send, up to %@. Leave empty not to insure it.",
                                 "La valeur de ce que vous envoyez, jusqu’à %@. Laissez vide pour ne pas l’assurer.")
    static let plInsurance = Text("Insurance", "Assurance")
    static let insuredFor = Text("Insured for %@ (premium %@)", "Assuré pour %@ (prime %@)")
    static let insuredValue = Text("Declared value", "Valeur déclarée")
    static let errAboveMaximum = Text("This is above the most that can be insured.", "C’est au-dessus du maximum assurable.")
    static let errOutOfRange = Text("This amount is out of range.", "Ce montant est hors limites.")
    static let errInsuranceUnavailable = Text("Insurance is not available for these prices.", "L’assurance n’est pas disponible pour ces prix.")
    static let claims = Text("Claims", "Sinistres")
    static let claim = Text("Insurance claim", "Déclaration de sinistre")
    static let claimFor = Text("Claim for %@", "Sinistre pour %@")
    static let fileClaim = Text("Claim the insurance", "Déclarer un sinistre")
    static let claimKind = Text("What happened", "Ce qui s’est passé")
    static let claimDamaged = Text("It arrived damaged", "Il est arrivé endommagé")
    static let claimLost = Text("It was lost", "Il a été perdu")
    static let claimAmount = Text("Amount claimed (%@)", "Montant demandé (%@)")
    static let claimDescription = Text("Describe what happened", "Décrivez ce qui s’est passé")
    static let claimPhotos = Text("Photos (up to 5)", "Photos (5 au plus)")
    static let claimSend = Text("Send the claim", "Envoyer la déclaration")
    static let claimFiled = Text("Your claim was sent; staff will decide it.", "Votre déclaration a été envoyée ; l’équipe va la trancher.")
    static let claimStatusSubmitted = Text("Waiting for a decision", "En attente de décision")
    static let claimStatusSecond = Text("Approved once, waiting for a second approval", "Approuvé une fois, en attente d’une deuxième approbation")
    static let claimStatusApproved = Text("Approved, being paid", "Approuvé, en cours de paiement")
    static let claimStatusPaid = Text("Paid", "Payé")
    static let claimStatusDeclined = Text("Declined", "Refusé")
    static let claimAll = Text("All", "Tous")
    static let claimsEmpty = Text("No claim here.", "Aucun sinistre ici.")
    static let claimClaimed = Text("Claimed", "Demandé")
    static let claimApprovedAmount = Text("Approved", "Approuvé")
    static let claimProposed = Text("Approved by a first staff member: %@", "Approuvé par un premier membre de l’équipe : %@")
    static let claimRefunded = Text("Refunded to the payment: %@", "Remboursé sur le paiement : %@")
    static let claimDeclineReason = Text("Why it was declined", "Motif du refus")
    static let claimApprove = Text("Approve", "Approuver")
    static let claimConfirmApproval = Text("Confirm the approval", "Confirmer l’approbation")
    static let claimDecline = Text("Decline", "Refuser")
    static let claimApproveAmount = Text("Amount to pay (%@)", "Montant à verser (%@)")
    static let claimDeclineWhy = Text("Why (the sender reads it)", "Pourquoi (l’expéditeur le lira)")
    static let claimSecondHint = Text("Above %@ a second staff member confirms the approval.", "Au-dessus de %@, un deuxième membre de l’équipe confirme l’approbation.")
    static let claimOpen = Text("Open the claim", "Ouvrir la déclaration")
    static let claimOrder = Text("Shipment", "Envoi")
    static let claimBy = Text("Claimed by", "Déclaré par")
    static let insuranceTable = Text("Insurance premiums", "Primes d’assurance")
    static let insuranceTableHint = Text("Each band covers declared values up to its limit: its rate (in basis points, 150 = 1.5 %), at least its minimum premium. Values above the last band cannot be insured.",
                                         "Chaque tranche couvre les valeurs déclarées jusqu’à sa limite : son taux (en points de base, 150 = 1,5 %), au moins sa prime minimale. Au-delà de la dernière tranche, rien n’est assurable.")
    static let bandUpTo = Text("Band %@: up to (%@)", "Tranche %@ : jusqu’à (%@)")
    static let bandRate = Text("Rate (basis points)", "Taux (points de base)")
    static let bandMinimum = Text("Minimum premium (%@)", "Prime minimale (%@)")
    static let claimWindow = Text("Days to claim after delivery or loss", "Jours pour déclarer après la livraison ou la perte")
    static let secondApprovalAbove = Text("Two approvals above (%@)", "Deux approbations au-delà de (%@)")
    static let saveInsurance = Text("Save the premiums", "Enregistrer les primes")
    static let actInsuranceChanged = Text("Insurance premiums changed", "Primes d’assurance modifiées")
    static let actClaimApproved = Text("Claim approved", "Sinistre approuvé")
    static let actClaimDeclined = Text("Claim declined", "Sinistre refusé")
}

enum InsuranceCatalogue {
    static func status(_ status: ClaimStatus) -> Text {
        switch status {
        case .submitted: .claimStatusSubmitted
        case .awaitingSecondApproval: .claimStatusSecond
        case .approved: .claimStatusApproved
        case .paid: .claimStatusPaid
        case .declined: .claimStatusDeclined
        }
    }

    static func kind(_ kind: ClaimKind) -> Text {
        switch kind {
        case .damaged: .claimDamaged
        case .lost: .claimLost
        }
    }

    static let all: [Text] = [
        .insurance, .insureFor, .insureHint, .plInsurance, .insuredFor, .insuredValue, .errAboveMaximum, .errOutOfRange,
        .errInsuranceUnavailable, .claims, .claim, .claimFor, .fileClaim, .claimKind, .claimDamaged, .claimLost, .claimAmount,
        .claimDescription, .claimPhotos, .claimSend, .claimFiled, .claimStatusSubmitted, .claimStatusSecond, .claimStatusApproved,
        .claimStatusPaid, .claimStatusDeclined, .claimAll, .claimsEmpty, .claimClaimed, .claimApprovedAmount, .claimProposed,
        .claimRefunded, .claimDeclineReason, .claimApprove, .claimConfirmApproval, .claimDecline, .claimApproveAmount,
        .claimDeclineWhy, .claimSecondHint, .claimOpen, .claimOrder, .claimBy, .insuranceTable, .insuranceTableHint, .bandUpTo,
        .bandRate, .bandMinimum, .claimWindow, .secondApprovalAbove, .saveInsurance, .actInsuranceChanged, .actClaimApproved,
        .actClaimDeclined,
    ]
}
