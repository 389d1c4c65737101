import Foundation
import WaybillCore

/// Loyalty points' strings, in English and French.
extension Text {
    static let plPoints = Text("Loyalty points", "Points de fidélité")
    static let actLoyaltyChanged = Text("Loyalty rules changed", "Règles de fidélité modifiées")
    static let usePoints = Text("Use loyalty points", "Utiliser des points de fidélité")
    static let usePointsHint = Text("You hold %@ points, worth %@. At least %@ at a time, on up to %@ % of the price. Leave empty to keep them.",
                                    "Vous avez %@ points, d’une valeur de %@. Au moins %@ à la fois, sur %@ % du prix au plus. Laissez vide pour les garder.")
    static let errPointsAboveMaximum = Text("More points than this price allows.", "Plus de points que ce prix ne le permet.")
    static let errPointsBelowMinimum = Text("Fewer points than can be spent at once.", "Moins de points qu’on ne peut en utiliser à la fois.")
    static let errNotEnoughPoints = Text("You do not hold that many points.", "Vous n’avez pas autant de points.")
    static let pointsHeld = Text("%@ points, worth %@", "%@ points, d’une valeur de %@")
    static let pointsNextExpiry = Text("%@ of them expire on %@.", "%@ d’entre eux expirent le %@.")
    static let pointsRulesHint = Text("Each delivery earns %@ points per %@ paid; a point is worth %@ when you order. Spend %@ or more at a time, on up to %@ % of a price. Points stay valid %@ days.",
                                      "Chaque livraison rapporte %@ points par %@ payé ; un point vaut %@ quand vous commandez. Utilisez-en %@ ou plus à la fois, sur %@ % d’un prix au plus. Les points restent valables %@ jours.")
    static let pointsHistory = Text("History", "Historique")
    static let pointsNone = Text("No points yet: each delivery earns some.", "Pas encore de points : chaque livraison en rapporte.")
    static let pointsWhen = Text("When", "Quand")
    static let pointsWhat = Text("What", "Quoi")
    static let pointsOrder = Text("Delivery", "Livraison")
    static let pointsEarned = Text("Earned", "Gagnés")
    static let pointsRedeemed = Text("Spent", "Utilisés")
    static let pointsRestored = Text("Given back", "Rendus")
    static let pointsExpired = Text("Expired", "Expirés")
    static let pointsRevoked = Text("Taken back (refunded)", "Repris (remboursé)")
    static let pointsOnAccount = Text("Your loyalty points, what they are worth and when they expire:",
                                      "Vos points de fidélité, leur valeur et leur échéance :")
    static let loyaltyRules = Text("Loyalty rules", "Règles de fidélité")
    static let loyaltyRulesHint = Text("Points already earned keep their expiry; deliveries paid from now on earn by these rules.",
                                       "Les points déjà gagnés gardent leur échéance ; les livraisons payées dès maintenant rapportent selon ces règles.")
    static let rulePointsPerUnit = Text("Points per %@ paid", "Points par %@ payé")
    static let rulePointValue = Text("Value of a point (%@)", "Valeur d’un point (%@)")
    static let ruleMinimum = Text("Fewest points spent at once", "Minimum de points utilisés à la fois")
    static let ruleMaxPercent = Text("Largest share of a price paid with points (%)", "Part maximale d’un prix payée en points (%)")
    static let ruleValidity = Text("Days points stay valid", "Jours de validité des points")
    static let saveLoyalty = Text("Save the rules", "Enregistrer les règles")
}

enum LoyaltyCatalogue {
    static func kind(_ kind: LoyaltyEntryKind) -> Text {
        switch kind {
        case .earned: .pointsEarned
        case .redeemed: .pointsRedeemed
        case .restored: .pointsRestored
        case .expired: .pointsExpired
        case .revoked: .pointsRevoked
        }
    }

    static let all: [Text] = [
        .plPoints, .actLoyaltyChanged, .usePoints, .usePointsHint, .errPointsAboveMaximum, .errPointsBelowMinimum, .errNotEnoughPoints,
        .pointsHeld, .pointsNextExpiry, .pointsRulesHint, .pointsHistory, .pointsNone, .pointsWhen, .pointsWhat, .pointsOrder,
        .pointsEarned, .pointsRedeemed, .pointsRestored, .pointsExpired, .pointsRevoked, .pointsOnAccount, .loyaltyRules,
        .loyaltyRulesHint, .rulePointsPerUnit, .rulePointValue, .ruleMinimum, .ruleMaxPercent, .ruleValidity, .saveLoyalty,
    ]
}
