import Foundation
import WaybillCore

/// Statistics' strings, in English and French.
extension Text {
    static let statistics = Text("Statistics", "Statistiques")
    static let statFrom = Text("From", "Du")
    static let statTo = Text("To", "Au")
    static let statBy = Text("Per", "Par")
    static let statPerDay = Text("day", "jour")
    static let statPerWeek = Text("week", "semaine")
    static let statPerMonth = Text("month", "mois")
    static let statShow = Text("Show", "Afficher")
    static let statCSV = Text("Download as CSV", "Télécharger en CSV")
    static let statExplained = Text("Orders count from when they reached dispatch. On time: express within four hours, standard by the end of the next day. Delivery time: from dispatch to delivery. Revenue: every order but cancelled ones.",
                                    "Les commandes comptent dès leur arrivée à la répartition. À l’heure : express en quatre heures, standard avant la fin du lendemain. Délai : de la répartition à la livraison. Chiffre d’affaires : toutes les commandes sauf les annulées.")
    static let statGroup = Text("Group", "Groupe")
    static let statPlaced = Text("Orders", "Commandes")
    static let statDelivered = Text("Delivered", "Livrées")
    static let statFailed = Text("Failed", "Échouées")
    static let statOnTime = Text("On time", "À l’heure")
    static let statMedian = Text("Median time", "Délai médian")
    static let statP90 = Text("90th percentile", "90e centile")
    static let statRevenue = Text("Revenue", "Chiffre d’affaires")
    static let statMinutes = Text("%@ min", "%@ min")
    static let statHours = Text("%@ h", "%@ h")
    static let statVolumeChart = Text("Deliveries per period", "Livraisons par période")
    static let statOnTimeChart = Text("On-time rate per period", "Taux de ponctualité par période")
    static let statPerPeriod = Text("Per period", "Par période")
    static let statPerDriver = Text("Per driver", "Par chauffeur")
    static let statPerArea = Text("Per postal-code area", "Par zone postale")
    static let statOtherArea = Text("other", "autre")
    static let statFailures = Text("Failures by reason", "Échecs par motif")
    static let statNoFailures = Text("No failed deliveries in this period.", "Aucune livraison échouée sur cette période.")
}
