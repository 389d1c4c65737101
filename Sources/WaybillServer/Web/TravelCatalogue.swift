import Foundation

/// The travel pages' strings, in English and French (`TravelPages`). Keep it sorted.
extension Text {
    static let acceptRequest = Text("Accept: I will carry it", "Accepter : je le transporte")
    static let areaHint = Text("A town, a district or a canton, in any language", "Une commune, un district ou un canton, dans n’importe quelle langue")
    static let attestContents = Text("I confirm the parcel contains nothing on this list", "Je confirme que le colis ne contient rien de cette liste")
    static let becomeTraveller = Text("Carry parcels on your trips", "Transportez des colis lors de vos trajets")
    static let cancelRequest = Text("Cancel the request", "Annuler la demande")
    static let cancelTrip = Text("Cancel this trip", "Annuler ce trajet")
    static let card = Text("Card", "Carte")
    static let categoriesTaken = Text("What you take", "Ce que vous acceptez")
    static let checkAgainstPhoto = Text("Check the parcel against the sender’s photo and description before taking it.",
                                        "Vérifiez le colis d’après la photo et la description de l’expéditeur avant de le prendre.")
    static let declaredValue = Text("Declared value (%@)", "Valeur déclarée (%@)")
    static let deliverWithCode = Text("Hand it over", "Remettre le colis")
    static let departureDate = Text("Departure date", "Date de départ")
    static let earliestDeparture = Text("Leaving from", "Départ dès")
    static let findTraveller = Text("Find a traveller", "Trouver un voyageur")
    static let fromArea = Text("From", "De")
    static let iAcceptTerms = Text("I accept the travellers’ terms", "J’accepte les conditions des voyageurs")
    static let iHaveTheParcel = Text("I have the parcel", "J’ai le colis")
    static let latestDeparture = Text("Leaving until", "Départ jusqu’à")
    static let leavesOn = Text("Leaves on %@ between %@ and %@", "Départ le %@ entre %@ et %@")
    static let myRequests = Text("My requests", "Mes demandes")
    static let myTrips = Text("My trips", "Mes trajets")
    static let noMatch = Text("No trip matches yet. Try a larger area or another day.", "Aucun trajet ne correspond pour l’instant. Essayez une région plus large ou un autre jour.")
    static let noRequests = Text("No requests yet.", "Aucune demande pour l’instant.")
    static let noTrips = Text("You have not posted a trip yet.", "Vous n’avez pas encore publié de trajet.")
    static let paidOutLedger = Text("Paid out (ledger)", "Versé (registre)")
    static let parcelCategory = Text("Kind of parcel", "Type de colis")
    static let payBy = Text("Pay by", "Payer par")
    static let pictureHint = Text("A square picture (the page crops yours), JPEG or PNG", "Une image carrée (la page recadre la vôtre), JPEG ou PNG")
    static let pictureNotSquare = Text("The picture must be square: crop it, or use a browser with JavaScript, which crops it for you.",
                                       "L’image doit être carrée : recadrez-la, ou utilisez un navigateur avec JavaScript, qui la recadre pour vous.")
    static let postTrip = Text("Post a trip", "Publier un trajet")
    static let profilePicture = Text("Profile picture", "Photo de profil")
    static let prohibitedList = Text("Never allowed:", "Jamais autorisé :")
    static let receiverCode = Text("The receiver’s 6-digit code", "Le code à 6 chiffres du destinataire")
    static let receiverEmail = Text("Receiver’s email (their code goes there)", "E-mail du destinataire (son code y sera envoyé)")
    static let receiverName = Text("Receiver", "Destinataire")
    static let receiverPhone = Text("Receiver’s phone", "Téléphone du destinataire")
    static let rejectRequest = Text("Decline", "Refuser")
    static let reqAwaitingPayment = Text("Accepted, awaiting payment", "Acceptée, en attente de paiement")
    static let reqCancelled = Text("Cancelled", "Annulée")
    static let reqDelivered = Text("Delivered", "Livré")
    static let reqExpired = Text("Expired without an answer", "Expirée sans réponse")
    static let reqFailed = Text("Could not be delivered", "Livraison impossible")
    static let reqLapsed = Text("Not paid in time", "Non payée à temps")
    static let reqPaid = Text("Paid, waiting for pickup", "Payée, en attente de prise en charge")
    static let reqPickedUp = Text("On its way with the traveller", "En route avec le voyageur")
    static let reqRejected = Text("Declined", "Refusée")
    static let reqRequested = Text("Waiting for the traveller’s answer", "En attente de la réponse du voyageur")
    static let request = Text("Request", "Demande")
    static let requestPlace = Text("Ask to send a parcel on this trip", "Demander à envoyer un colis sur ce trajet")
    static let requestsReceived = Text("Requests on my trips", "Demandes sur mes trajets")
    static let roomKg = Text("Room (kg)", "Place (kg)")
    static let roomLeft = Text("%@ and %@ parcels left", "Reste %@ et %@ colis")
    static let roomParcels = Text("Parcels", "Colis")
    static let sandboxNote = Text("test mode: no money moves", "mode test : aucun argent n’est débité")
    static let searchTrips = Text("Search", "Rechercher")
    static let sendRequest = Text("Send the request", "Envoyer la demande")
    static let toArea = Text("To", "À")
    static let travel = Text("Travel", "Voyages")
    static let travelDone = Text("Done.", "C’est fait.")
    static let travelIntro = Text("People who travel anyway carry parcels for a price set by the platform; you pay once the traveller accepts, and the receiver’s code completes the hand-over.",
                                  "Des personnes qui voyagent de toute façon transportent des colis à un prix fixé par la plateforme ; vous payez quand le voyageur accepte, et le code du destinataire conclut la remise.")
    static let traveller = Text("Traveller", "Voyageur")
    static let travellerShare = Text("%@ to the traveller", "%@ pour le voyageur")
    static let travellerTerms = Text("You carry only what you have checked, you hand it over against the receiver’s code, and you are paid once it is delivered.",
                                     "Vous ne transportez que ce que vous avez vérifié, vous le remettez contre le code du destinataire, et vous êtes payé une fois livré.")
    static let tripCancelled = Text("Cancelled", "Annulé")
    static let tripDeparted = Text("Departed", "Parti")
    static let tripFull = Text("Full", "Complet")
    static let tripOpen = Text("Open for requests", "Ouvert aux demandes")
    static let weightKg = Text("Weight (kg)", "Poids (kg)")
    static let whatIsIt = Text("What it is", "Contenu")
    static let payouts = Text("Payouts", "Versements")
    static let payoutsNone = Text("To accept paid parcels, set up where you are paid: Stripe checks who you are and takes your bank account.",
                                  "Pour accepter des colis payants, indiquez où vous êtes payé : Stripe vérifie votre identité et prend votre compte bancaire.")
    static let payoutsPending = Text("Your payout setup is not finished yet.", "La configuration de vos versements n’est pas terminée.")
    static let payoutsActive = Text("Payouts are set up: you are paid when a receiver’s code completes a delivery.",
                                    "Vos versements sont configurés : vous êtes payé quand le code d’un destinataire conclut une livraison.")
    static let payoutsRestricted = Text("Stripe is checking your details or needs more from you; you can accept paid parcels once it is done.",
                                        "Stripe vérifie vos informations ou en demande davantage ; vous pourrez accepter des colis payants ensuite.")
    static let payoutsDisconnected = Text("Your payout account was disconnected; set it up again to be paid.",
                                          "Votre compte de versement a été déconnecté ; configurez-le à nouveau pour être payé.")
    static let setUpPayouts = Text("Set up payouts", "Configurer les versements")
    static let continuePayouts = Text("Continue the setup", "Continuer la configuration")
    static let yourHandOverCode = Text("Your code for the hand-over — give it when the parcel reaches you:",
                                       "Votre code pour la remise — donnez-le quand le colis vous parvient :")
}

enum TravelCatalogue {
    static let all: [Text] = [
        .acceptRequest, .areaHint, .attestContents, .becomeTraveller, .cancelRequest, .cancelTrip, .card, .categoriesTaken,
        .checkAgainstPhoto, .declaredValue, .deliverWithCode, .departureDate, .earliestDeparture, .findTraveller, .fromArea,
        .iAcceptTerms, .iHaveTheParcel, .latestDeparture, .leavesOn, .myRequests, .myTrips, .noMatch, .noRequests, .noTrips,
        .paidOutLedger, .parcelCategory, .payBy, .pictureHint, .pictureNotSquare, .profilePicture, .postTrip, .prohibitedList, .receiverCode, .receiverEmail, .receiverName, .receiverPhone,
        .rejectRequest, .reqAwaitingPayment, .reqCancelled, .reqDelivered, .reqExpired, .reqFailed, .reqLapsed, .reqPaid,
        .reqPickedUp, .reqRejected, .reqRequested, .request, .requestPlace, .requestsReceived, .roomKg, .roomLeft, .roomParcels,
        .sandboxNote, .searchTrips, .sendRequest, .toArea, .travel, .travelDone, .travelIntro, .traveller, .travellerShare,
        .travellerTerms, .tripCancelled, .tripDeparted, .tripFull, .tripOpen, .weightKg, .whatIsIt,
        .payouts, .payoutsNone, .payoutsPending, .payoutsActive, .payoutsRestricted, .payoutsDisconnected, .setUpPayouts,
        .continuePayouts, .yourHandOverCode,
    ]
}
