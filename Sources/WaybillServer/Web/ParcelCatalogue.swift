import Foundation

/// The parcel pages' strings, in English and French (`ParcelPages`). Keep it sorted.
extension Text {
    static let askCarrierNow = Text("Ask the carrier now", "Demander au transporteur maintenant")
    static let atTheCarrier = Text("Open it on the carrier’s site", "Ouvrir sur le site du transporteur")
    static let carrier = Text("Carrier", "Transporteur")
    static let carrierChosen = Text("chosen by you", "choisi par vous")
    static let carrierOptional = Text("Carrier", "Transporteur")
    static let carrierSuggested = Text("Suggest it from the number", "Le déduire du numéro")
    static let carrierSuggestedShort = Text("suggested from the number", "déduit du numéro")
    static let errAlreadyFollowed = Text("You already follow this number.", "Vous suivez déjà ce numéro.")
    static let errCarrierNotRecognised = Text("No carrier is known for this number: choose one.", "Aucun transporteur connu pour ce numéro : choisissez-en un.")
    static let errUnknownCarrier = Text("Choose a carrier from the list.", "Choisissez un transporteur de la liste.")
    static let expectedOn = Text("Expected", "Attendu le")
    static let followParcel = Text("Follow this parcel", "Suivre ce colis")
    static let followedParcels = Text("Everything you follow", "Tout ce que vous suivez")
    static let filterActive = Text("On the way", "En route")
    static let filterAttention = Text("Needs you", "À traiter")
    static let filterDelivered = Text("Delivered", "Livrés")
    static let filterAll = Text("All", "Tout")
    static let unknownAtCarrier = Text("the carrier does not know this number yet (it often appears a few hours after the label is printed).",
                                       "le transporteur ne connaît pas encore ce numéro (il apparaît souvent quelques heures après l’impression de l’étiquette).")
    static let carrierBusy = Text("The carrier could not be asked just now; try again in a few minutes.", "Le transporteur n’a pas pu être interrogé pour l’instant ; réessayez dans quelques minutes.")
    static let statsTitle = Text("How fast carriers deliver", "La rapidité des transporteurs")
    static let statsIntro = Text("From the first scan to delivery, over the last year, for the parcels followed on Waybill and Waybill’s own deliveries. Groups of fewer than five deliveries are not shown.",
                                 "De la première prise en charge à la livraison, sur la dernière année, pour les colis suivis sur Waybill et les livraisons de Waybill. Les groupes de moins de cinq livraisons ne sont pas affichés.")
    static let statsByCarrier = Text("By carrier", "Par transporteur")
    static let statsByRoute = Text("By route", "Par trajet")
    static let statsRoute = Text("From → to", "De → à")
    static let statsCount = Text("Deliveries", "Livraisons")
    static let statsMedian = Text("Half within", "La moitié en")
    static let statsP90 = Text("9 in 10 within", "9 sur 10 en")
    static let statsFirstAttempt = Text("At the first attempt", "Au premier passage")
    static let statsMine = Text("Your parcels", "Vos colis")
    static let statsNone = Text("Not enough deliveries yet.", "Pas encore assez de livraisons.")
    static let statsDays = Text("days", "jours")
    static let parcelMap = Text("Where the parcel has been", "Où le colis est passé")
    static let approximatePlaces = Text("≈ approximate: the carrier gave only a town or a country, placed by its postal code, its name or the country’s centre.",
                                        "≈ approximatif : le transporteur n’a donné qu’une ville ou un pays, placé par son code postal, son nom ou le centre du pays.")
    static let pasteConfirmation = Text("Paste a shipping confirmation", "Coller une confirmation d’expédition")
    static let pasteHint = Text("The shop’s email or page: every tracking number in it is followed.", "Le courriel ou la page de la boutique : chaque numéro de suivi qu’il contient est suivi.")
    static let pasteFollow = Text("Follow the numbers in it", "Suivre ses numéros")
    static let pasteFollowed = Text("Numbers followed:", "Numéros suivis :")
    static let pasteAlready = Text("already followed:", "déjà suivis :")
    static let errNoTrackingNumber = Text("No tracking number was found in this text.", "Aucun numéro de suivi trouvé dans ce texte.")
    static let shopsTitle = Text("Your shops", "Vos boutiques")
    static let shopConnect = Text("Connect a shop", "Connecter une boutique")
    static let shopPlatform = Text("Shop software", "Logiciel de la boutique")
    static let shopName = Text("The shop’s name", "Le nom de la boutique")
    static let shopSecretOptional = Text("Signing key (Shopify)", "Clé de signature (Shopify)")
    static let shopSecretHint = Text("Shopify shows it under Settings → Notifications → Webhooks; leave empty for WooCommerce and Waybill makes one.",
                                     "Shopify l’affiche sous Paramètres → Notifications → Webhooks ; laissez vide pour WooCommerce et Waybill en crée une.")
    static let shopConnected = Text("Connected. Give the shop this address and key; the key is shown only now.", "Connectée. Donnez à la boutique cette adresse et cette clé ; la clé n’est affichée que maintenant.")
    static let shopWebhookURL = Text("Webhook address", "Adresse du webhook")
    static let shopSecret = Text("Key", "Clé")
    static let shopHowShopify = Text("In Shopify: Settings → Notifications → Webhooks → Create webhook, events “Fulfillment creation” and “Fulfillment update”, format JSON, this address.",
                                     "Dans Shopify : Paramètres → Notifications → Webhooks → Créer un webhook, événements « Création du traitement » et « Mise à jour du traitement », format JSON, cette adresse.")
    static let shopHowWoo = Text("In WooCommerce: Settings → Advanced → Webhooks → Add webhook, topic “Order updated”, this address as delivery URL and this key as secret.",
                                 "Dans WooCommerce : Réglages → Avancé → Webhooks → Ajouter, sujet « Commande mise à jour », cette adresse comme URL de livraison et cette clé comme secret.")
    static let shopNumbers = Text("numbers received:", "numéros reçus :")
    static let shopDisconnect = Text("Disconnect", "Déconnecter")
    static let forwardTo = Text("Or forward the shop’s email to your own address:", "Ou transférez le courriel de la boutique à votre adresse :")
    static let nothingHere = Text("Nothing here.", "Rien ici.")
    static let shipmentFrom = Text("Shipment from", "Envoi de")
    static let shipmentTo = Text("Shipment to", "Envoi pour")
    static let lastChecked = Text("Carrier last asked", "Transporteur interrogé")
    static let localTime = Text("local time", "heure locale")
    static let noParcelEvents = Text("Nothing from the carrier yet.", "Rien du transporteur pour l’instant.")
    static let noParcels = Text("You follow no parcel yet.", "Vous ne suivez encore aucun colis.")
    static let notThisCarrier = Text("Not this carrier?", "Pas ce transporteur ?")
    static let wrongNumber = Text("Wrong number? Correct it", "Mauvais numéro ? Corrigez-le")
    static let correctNumber = Text("Save the number", "Enregistrer le numéro")
    static let numberCorrected = Text("Number corrected: the carrier is asked again.", "Numéro corrigé : le transporteur est interrogé à nouveau.")
    static let parcelAdded = Text("Followed. The carrier is asked every two hours.", "Suivi. Le transporteur est interrogé toutes les deux heures.")
    static let parcelEvents = Text("At the carrier", "Chez le transporteur")
    static let parcelName = Text("A name for it", "Un nom pour ce colis")
    static let parcelRemoved = Text("No longer followed.", "N’est plus suivi.")
    static let parcels = Text("Parcels", "Colis")
    static let parcelsIntro = Text("Follow the parcels of any carrier — DHL, La Poste, UPS, Swiss Post… — by their tracking number.",
                                   "Suivez les colis de tout transporteur — DHL, La Poste, UPS, la Poste suisse… — par leur numéro de suivi.")
    static let psCancelled = Text("Cancelled", "Annulé")
    static let psDelayed = Text("Delayed", "Retardé")
    static let psDelivered = Text("Delivered", "Livré")
    static let psExpired = Text("No news for 90 days", "Sans nouvelles depuis 90 jours")
    static let psFailed = Text("Delivery failed", "Échec de livraison")
    static let psInTransit = Text("On its way", "En chemin")
    static let psOnHold = Text("On hold", "En attente")
    static let psOutForDelivery = Text("Out for delivery", "En cours de livraison")
    static let psPending = Text("Waiting for the carrier", "En attente du transporteur")
    static let psPickedUp = Text("Picked up", "Pris en charge")
    static let psReadyForPickup = Text("Ready to collect", "Prêt à être retiré")
    static let psReturned = Text("Returned to sender", "Retourné à l’expéditeur")
    static let psUnknown = Text("Unknown", "Inconnu")
    static let stopFollowing = Text("Stop following", "Ne plus suivre")
    static let trackingNumber = Text("Tracking number", "Numéro de suivi")
    static let alertsAll = Text("At every change", "À chaque changement")
    static let alertsAsAccount = Text("As for all my parcels", "Comme pour tous mes colis")
    static let alertsImportant = Text("Only important news (out for delivery, to collect, failed, delivered…)", "Seulement l’important (en livraison, à retirer, échec, livré…)")
    static let alertsNone = Text("Never", "Jamais")
    static let alertsAlsoMail = Text("Also by email", "Aussi par e-mail")
    static let alertsAlsoPush = Text("Also on my phone (push)", "Aussi sur mon téléphone (push)")
    static let alertsSaved = Text("Saved.", "Enregistré.")
    static let errNoAccountForShare = Text("No Waybill account uses this address; ask them to sign up first.", "Aucun compte Waybill n’utilise cette adresse ; invitez la personne à s’inscrire d’abord.")
    static let errShareYourself = Text("That is your own address.", "C’est votre propre adresse.")
    static let leaveParcel = Text("Remove it from my list", "Le retirer de ma liste")
    static let linkHint = Text("Anyone with the link sees the number, the carrier, the status and the events — never your notes.",
                               "Toute personne ayant le lien voit le numéro, le transporteur, le statut et les événements — jamais vos notes.")
    static let makeLink = Text("Make a link", "Créer un lien")
    static let renewParcelLink = Text("Make a new link (the old one stops working)", "Nouveau lien (l’ancien cesse de fonctionner)")
    static let parcelAlerts = Text("Tell me", "Me prévenir")
    static let parcelAlertsTitle = Text("News about my parcels", "Nouvelles de mes colis")
    static let publicLink = Text("Link to share", "Lien à partager")
    static let shareParcel = Text("Share", "Partager")
    static let shareWithEmail = Text("With a Waybill account (email)", "Avec un compte Waybill (e-mail)")
    static let sharedBy = Text("Shared by", "Partagé par")
    static let sharedWith = Text("Shared with", "Partagé avec")
    static let stopSharing = Text("Stop sharing", "Ne plus partager")
    static let withdrawLink = Text("Withdraw the link", "Retirer le lien")
    static let trackingNumberHint = Text("As printed; spaces do not matter.", "Tel qu’imprimé ; les espaces ne comptent pas.")
    static let checkDigitValid = Text("its check digit is right", "sa clé de contrôle est juste")
    static let noCarrierKnown = Text("No carrier we know uses numbers like this one.", "Aucun transporteur connu n’utilise de numéros comme celui-ci.")
    static let patternOnly = Text("the shape matches", "la forme correspond")
    static let signInToFollow = Text("Sign in to follow it", "Connectez-vous pour le suivre")
    static let trackWithoutAccount = Text("Track a parcel of any carrier", "Suivre un colis de tout transporteur")
    static let whichCarrier = Text("Which carrier?", "Quel transporteur ?")
}

enum ParcelCatalogue {
    static let all: [Text] = [
        .askCarrierNow, .atTheCarrier, .carrier, .carrierChosen, .carrierOptional, .carrierSuggested, .carrierSuggestedShort,
        .errAlreadyFollowed, .errCarrierNotRecognised, .errUnknownCarrier, .expectedOn, .followParcel, .followedParcels,
        .lastChecked, .localTime, .noParcelEvents, .noParcels, .notThisCarrier, .parcelAdded, .parcelEvents, .parcelName,
        .parcelRemoved, .parcels, .parcelsIntro, .psCancelled, .psDelayed, .psDelivered, .psExpired, .psFailed, .psInTransit,
        .psOnHold, .psOutForDelivery, .psPending, .psPickedUp, .psReadyForPickup, .psReturned, .psUnknown, .stopFollowing,
        .trackingNumber, .trackingNumberHint, .checkDigitValid, .noCarrierKnown, .patternOnly, .signInToFollow,
        .trackWithoutAccount, .whichCarrier, .alertsAll, .alertsAsAccount, .alertsImportant, .alertsNone, .alertsAlsoMail,
        .alertsAlsoPush, .alertsSaved, .errNoAccountForShare, .errShareYourself, .leaveParcel, .linkHint, .makeLink, .renewParcelLink,
        .parcelAlerts, .parcelAlertsTitle, .publicLink, .shareParcel, .shareWithEmail, .sharedBy, .sharedWith,
        .stopSharing, .withdrawLink, .filterActive, .filterAttention, .filterDelivered, .filterAll, .nothingHere, .shipmentFrom,
        .shipmentTo, .unknownAtCarrier, .carrierBusy, .statsTitle, .statsIntro, .statsByCarrier, .statsByRoute, .statsRoute,
        .statsCount, .statsMedian, .statsP90, .statsFirstAttempt, .statsMine, .statsNone, .statsDays, .parcelMap, .approximatePlaces,
        .pasteConfirmation, .pasteHint, .pasteFollow, .pasteFollowed, .pasteAlready, .errNoTrackingNumber,
        .shopsTitle, .shopConnect, .shopPlatform, .shopName, .shopSecretOptional, .shopSecretHint, .shopConnected, .shopWebhookURL,
        .shopSecret, .shopHowShopify, .shopHowWoo, .shopNumbers, .shopDisconnect, .forwardTo, .wrongNumber, .correctNumber,
        .numberCorrected,
    ]
}
