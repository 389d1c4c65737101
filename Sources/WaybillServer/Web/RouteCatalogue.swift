import Foundation
import WaybillCore

/// Route planning's strings, in English and French.
extension Text {
    static let routes = Text("Routes", "Tournées")
    static let routesIntro = Text("Plan the open orders over the drivers on duty: each gets its stops in order, with the time they should arrive. Orders a driver accepted, or that you gave by hand, stay with that driver.",
                                  "Planifiez les commandes ouvertes sur les chauffeurs en service : chacun reçoit ses arrêts dans l’ordre, avec l’heure d’arrivée prévue. Les commandes qu’un chauffeur a acceptées, ou que vous avez attribuées à la main, restent à ce chauffeur.")
    static let planSearch = Text("Search time", "Temps de recherche")
    static let planSeconds = Text("%@ s", "%@ s")
    static let planCapacity = Text("Room in a van (small parcel 1, medium 3, large 10)", "Place dans une camionnette (petit colis 1, moyen 3, grand 10)")
    static let planFewest = Text("As few drivers as possible, then the shortest distance", "Le moins de chauffeurs possible, puis la distance la plus courte")
    static let planRoutes = Text("Plan routes", "Planifier les tournées")
    static let planTitle = Text("Plan %@", "Plan %@")
    static let planProposed = Text("proposed, not applied yet", "proposé, pas encore appliqué")
    static let planApplied = Text("applied", "appliqué")
    static let planSuperseded = Text("replaced by a newer plan", "remplacé par un plan plus récent")
    static let planApply = Text("Apply: give each order its driver", "Appliquer : attribuer chaque commande à son chauffeur")
    static let planRoads = Text("Distances by road", "Distances par la route")
    static let planStraight = Text("Distances estimated from straight lines", "Distances estimées à vol d’oiseau")
    static let planRoadsDown = Text("Distances estimated from straight lines: the road network did not answer", "Distances estimées à vol d’oiseau : le réseau routier n’a pas répondu")
    static let planTotal = Text("%@ km in all", "%@ km au total")
    static let planRouteSummary = Text("%@ stops, %@ km", "%@ arrêts, %@ km")
    static let planNothing = Text("Nothing to do.", "Rien à faire.")
    static let planPickUp = Text("Pick up", "Enlever")
    static let planDeliver = Text("Deliver", "Livrer")
    static let planUnplanned = Text("Not planned", "Non planifiées")
    static let planWhy = Text("Why", "Pourquoi")
    static let planOrder = Text("Order", "Commande")
    static let planNone = Text("No plan yet.", "Aucun plan pour l’instant.")
    static let planMade = Text("Plan %@ is ready: check it, then apply it.", "Le plan %@ est prêt : vérifiez-le, puis appliquez-le.")
    static let planApplyDone = Text("%@ orders given to their driver, %@ unchanged, %@ left as they were.",
                                    "%@ commandes attribuées à leur chauffeur, %@ inchangées, %@ laissées telles quelles.")
    static let planMap = Text("Map of the planned routes", "Carte des tournées planifiées")
    static let plannedAt = Text("Planned for %@", "Prévu à %@")
    static let autoDispatch = Text("Auto-dispatch", "Répartition automatique")
    static let autoDispatchOn = Text("On: every new order is planned and given to a driver within seconds, in the name of the manager who switched it on. Orders already given stay where they are.",
                                     "Activée : chaque nouvelle commande est planifiée et attribuée à un chauffeur en quelques secondes, au nom du responsable qui l’a activée. Les commandes déjà attribuées restent où elles sont.")
    static let autoDispatchOff = Text("Off: orders wait until you plan or assign them.", "Désactivée : les commandes attendent que vous les planifiiez ou les attribuiez.")
    static let autoDispatchStart = Text("Switch auto-dispatch on", "Activer la répartition automatique")
    static let autoDispatchStop = Text("Switch auto-dispatch off", "Désactiver la répartition automatique")
    static let reasonNoCoordinates = Text("Its pickup or drop-off has no position on the map", "Son enlèvement ou sa livraison n’a pas de position sur la carte")
    static let reasonDriverOffDuty = Text("Its driver is off duty", "Son chauffeur n’est pas en service")
    static let reasonNoDriverOnDuty = Text("No driver is on duty", "Aucun chauffeur n’est en service")
    static let reasonTooLarge = Text("Too large for a van", "Trop grand pour une camionnette")
    static let reasonOutOfShift = Text("No driver can reach it before the end of the day", "Aucun chauffeur ne peut l’atteindre avant la fin de la journée")
    static let reasonSlotMissed = Text("Its booked timeslot cannot be kept", "Son créneau réservé ne peut pas être tenu")
    static let reasonSlotLater = Text("Its timeslot is on a later day", "Son créneau est un autre jour")
    static let reasonNotAtCounter = Text("Not dropped at its counter yet", "Pas encore déposé à son guichet")
    static let reasonNoRoom = Text("Every van is full or out of time", "Toutes les camionnettes sont pleines ou n’ont plus le temps")

    static func unplanned(_ reason: RoutePlanningPolicy.Unplanned) -> Text {
        switch reason {
        case .noCoordinates: .reasonNoCoordinates
        case .driverOffDuty: .reasonDriverOffDuty
        case .noDriverOnDuty: .reasonNoDriverOnDuty
        case .tooLarge: .reasonTooLarge
        case .outOfShift: .reasonOutOfShift
        case .slotMissed: .reasonSlotMissed
        case .slotLater: .reasonSlotLater
        case .notAtCounter: .reasonNotAtCounter
        case .noRoom: .reasonNoRoom
        }
    }
}

enum RouteCatalogue {
    static let all: [Text] = [
        .routes, .routesIntro, .planSearch, .planSeconds, .planCapacity, .planFewest, .planRoutes, .planTitle, .planProposed, .planApplied,
        .planSuperseded, .planApply, .planRoads, .planStraight, .planRoadsDown, .planTotal, .planRouteSummary, .planNothing, .planPickUp,
        .planDeliver, .planUnplanned, .planWhy, .planOrder, .planNone, .planMade, .planApplyDone, .planMap, .plannedAt,
        .autoDispatch, .autoDispatchOn, .autoDispatchOff, .autoDispatchStart, .autoDispatchStop,
    ] + RoutePlanningPolicy.Unplanned.allCases.map(Text.unplanned)
}
