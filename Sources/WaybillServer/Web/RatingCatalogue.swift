import Foundation
import WaybillCore

/// Ratings' strings, in English and French.
extension Text {
    static let ratings = Text("Ratings", "Évaluations")
    static let rateWho = Text("Rate %@", "Évaluer %@")
    static let ratingTags = Text("What stood out (optional)", "Ce qui vous a marqué (facultatif)")
    static let ratingComment = Text("A comment everyone will see (optional)", "Un commentaire visible de tous (facultatif)")
    static let ratingPrivateNote = Text("A private note for %@ only (optional)", "Une remarque privée pour %@ seulement (facultatif)")
    static let sendRating = Text("Send the rating", "Envoyer l’évaluation")
    static let ratingSaved = Text("Thank you: your rating is saved.", "Merci : votre évaluation est enregistrée.")
    static let ratedBy = Text("%@ rated %@", "%@ a évalué %@")
    static let starsOutOfFive = Text("%@ stars out of 5", "%@ étoiles sur 5")
    static let privateNoteShown = Text("Private note:", "Remarque privée :")
    static let ratingPending = Text("Shown when the other side has rated too, or on %@ at the latest.", "Visible quand l’autre partie aura évalué aussi, ou le %@ au plus tard.")
    static let ratingAnswer = Text("%@ answered:", "Réponse de %@ :")
    static let answerRating = Text("Answer publicly (once)", "Répondre publiquement (une fois)")
    static let sendAnswer = Text("Send the answer", "Envoyer la réponse")
    static let ratingAverage = Text("%@ ★ (%@ ratings)", "%@ ★ (%@ évaluations)")

    static func ratingTag(_ code: String) -> Text {
        switch code {
        case "on_time": Text("On time", "À l’heure")
        case "careful_with_parcel": Text("Careful with the parcel", "Soigneux avec le colis")
        case "friendly": Text("Friendly", "Aimable")
        case "good_communication": Text("Good communication", "Bonne communication")
        case "late": Text("Late", "En retard")
        case "parcel_damaged": Text("Parcel damaged", "Colis abîmé")
        case "rude": Text("Rude", "Impoli")
        case "hard_to_reach": Text("Hard to reach", "Difficile à joindre")
        case "ready_on_time": Text("Ready on time", "Prêt à l’heure")
        case "well_packed": Text("Well packed", "Bien emballé")
        case "clear_instructions": Text("Clear instructions", "Instructions claires")
        case "not_ready": Text("Not ready", "Pas prêt")
        case "badly_packed": Text("Badly packed", "Mal emballé")
        case "wrong_address": Text("Wrong address", "Mauvaise adresse")
        case "fast": Text("Fast", "Rapide")
        case "accurate_tracking": Text("Accurate tracking", "Suivi précis")
        case "slow": Text("Slow", "Lent")
        case "lost_parcel": Text("Lost parcel", "Colis perdu")
        case "poor_tracking": Text("Poor tracking", "Suivi médiocre")
        default: Text(code, code)
        }
    }
}
