/// Every string of the web app, in English and French. Pages refer to these by name
/// (`ctx.t(.signIn)`); `%@` is filled in order by `ctx.t(.key, args…)`. Keep it sorted.
extension Text {
    static let accept = Text("Accept", "Accepter")
    static let actionDone = Text("Done: the delivery is now “%@”.", "C’est fait : la livraison est maintenant « %@ ».")
    static let active = Text("Active", "Actif")
    static let allDrivers = Text("All drivers", "Tous les chauffeurs")
    static let allRoles = Text("All roles", "Tous les rôles")
    static let allStatuses = Text("All statuses", "Tous les statuts")
    static let anotherAddress = Text("Another address", "Une autre adresse")
    static let assign = Text("Assign", "Attribuer")
    static let assignTo = Text("Assign to", "Attribuer à")
    static let back = Text("Back", "Retour")
    static let backHome = Text("Back to the start page", "Retour à l’accueil")
    static let baseFee = Text("Base fee", "Prise en charge")
    static let cancelConfirm = Text("Cancel this delivery?", "Annuler cette livraison ?")
    static let cancelOrder = Text("Cancel the delivery", "Annuler la livraison")
    static let cashCollected = Text("Cash collected (%@)", "Espèces encaissées (%@)")
    static let cashCollectedAmount = Text("%@ collected in cash", "%@ encaissés en espèces")
    static let cashToCollect = Text("Collect %@ in cash at pickup", "Encaisser %@ en espèces au ramassage")
    static let change = Text("Change", "Modifier")
    static let changePassword = Text("Change password", "Changer le mot de passe")
    static let city = Text("City", "Localité")
    static let clearSignature = Text("Clear", "Effacer")
    static let code = Text("Code", "Code")
    static let codeSent = Text("We sent a 6-digit code to your email address.", "Nous avons envoyé un code à 6 chiffres à votre adresse e-mail.")
    static let colAssigned = Text("Assigned", "Attribuées")
    static let colFailed = Text("Failed", "Échouées")
    static let colNew = Text("New", "Nouvelles")
    static let colUnderWay = Text("Under way", "En route")
    static let companyHint = Text("Companies can pay by monthly invoice.", "Les entreprises peuvent payer sur facture mensuelle.")
    static let companyName = Text("Company name", "Nom de l’entreprise")
    static let confirm = Text("Confirm", "Confirmer")
    static let confirmDelivery = Text("Confirm delivery", "Confirmer la livraison")
    static let confirmEmail = Text("Confirm your email", "Confirmez votre e-mail")
    static let confirmEmailIntro = Text("Enter the 6-digit code from the email we sent you. It is valid for 10 minutes.", "Saisissez le code à 6 chiffres reçu par e-mail. Il est valable 10 minutes.")
    static let copied = Text("Copied", "Copié")
    static let copy = Text("Copy", "Copier")
    static let createAccount = Text("Create an account", "Créer un compte")
    static let createAndInvite = Text("Create and send the invitation", "Créer et envoyer l’invitation")
    static let currency = Text("Currency", "Monnaie")
    static let currentPassword = Text("Current password", "Mot de passe actuel")
    static let customer = Text("Customer", "Client")
    static let date = Text("Date", "Date")
    static let deliverProof = Text("Deliver: signature", "Livrer : signature")
    static let delivery = Text("Delivery", "Livraison")
    static let deliveryPhoto = Text("Photo at delivery", "Photo à la livraison")
    static let details = Text("Details", "Détails")
    static let directions = Text("Directions", "Itinéraire")
    static let disable = Text("Disable", "Désactiver")
    static let disableConfirm = Text("Disable the account of %@? They are signed out at once.", "Désactiver le compte de %@ ? La personne est déconnectée immédiatement.")
    static let disabled = Text("Disabled", "Désactivé")
    static let dispatch = Text("Dispatch", "Répartition")
    static let distance = Text("Distance", "Distance")
    static let doneToday = Text("Done today", "Terminées aujourd’hui")
    static let driver = Text("Driver", "Chauffeur")
    static let dropoff = Text("Drop-off", "Livraison")
    static let duty = Text("Duty", "Service")
    static let email = Text("Email", "E-mail")
    static let enable = Text("Enable", "Réactiver")
    static let errEmailInUse = Text("An account already uses this email address.", "Un compte utilise déjà cette adresse e-mail.")
    static let errForbiddenTitle = Text("Not allowed", "Non autorisé")
    static let errFormExpired = Text("This form is out of date or did not come from Waybill. Go back, reload the page and try again.", "Ce formulaire est périmé ou ne vient pas de Waybill. Revenez en arrière, rechargez la page et réessayez.")
    static let errFormExpiredTitle = Text("The form has expired", "Le formulaire a expiré")
    static let errGenericTitle = Text("Something is not right", "Quelque chose ne va pas")
    static let errIncorrect = Text("This is not correct.", "Ce n’est pas correct.")
    static let errInvalid = Text("This value is not valid.", "Cette valeur n’est pas valable.")
    static let errMismatch = Text("The values do not match.", "Les valeurs ne correspondent pas.")
    static let errNoAccountAddress = Text("Your account has no address: give another one.", "Votre compte n’a pas d’adresse : indiquez-en une autre.")
    static let errNotAllowed = Text("This choice is not available for your account.", "Ce choix n’est pas disponible pour votre compte.")
    static let errNotFoundTitle = Text("Not found", "Introuvable")
    static let errPasswordCommon = Text("This password is too common.", "Ce mot de passe est trop courant.")
    static let errPasswordShort = Text("The password is too short (at least 10 characters).", "Le mot de passe est trop court (au moins 10 caractères).")
    static let errRateLimited = Text("Too many attempts. Try again in %@ seconds.", "Trop d’essais. Réessayez dans %@ secondes.")
    static let errRecipientEmailForCode = Text("The recipient’s email is needed to send them the code.", "L’e-mail du destinataire est nécessaire pour lui envoyer le code.")
    static let errRequired = Text("Fill this in.", "Veuillez remplir ce champ.")
    static let errSlowDownTitle = Text("Please wait", "Veuillez patienter")
    static let errTooLong = Text("This is too long.", "C’est trop long.")
    static let errValidation = Text("Some fields are missing or invalid.", "Certains champs manquent ou ne sont pas valables.")
    static let etaDropoff = Text("Expected at the drop-off around", "Arrivée prévue à la livraison vers")
    static let etaPickup = Text("Driver expected at the pickup around", "Chauffeur attendu au ramassage vers")
    static let express = Text("Express", "Express")
    static let expressPercent = Text("Express price (% of standard)", "Prix express (% du standard)")
    static let failAbsent = Text("Recipient absent", "Destinataire absent")
    static let failAddress = Text("Wrong address", "Adresse erronée")
    static let failDamaged = Text("Parcel damaged", "Colis endommagé")
    static let failOther = Text("Other reason", "Autre raison")
    static let failRefused = Text("Refused by the recipient", "Refusé par le destinataire")
    static let filter = Text("Filter", "Filtrer")
    static let firstName = Text("First name", "Prénom")
    static let flatFee = Text("Flat fee (no distance)", "Forfait (sans distance)")
    static let fleet = Text("Fleet", "Flotte")
    static let fleetMap = Text("Map of drivers on duty", "Carte des chauffeurs en service")
    static let forgotIntro = Text("Give your email address: we send a code to choose a new password.", "Indiquez votre adresse e-mail : nous envoyons un code pour choisir un nouveau mot de passe.")
    static let forgotPassword = Text("Forgot your password?", "Mot de passe oublié ?")
    static let from = Text("From", "Du")
    static let goOffDuty = Text("Go off duty", "Terminer le service")
    static let goOnDuty = Text("Go on duty", "Prendre le service")
    static let haveAccount = Text("Already have an account? Sign in", "Déjà un compte ? Se connecter")
    static let history = Text("History", "Historique")
    static let iAmACompany = Text("I order for a company", "Je commande pour une entreprise")
    static let invitationHint = Text("They receive an email with a code to choose their password.", "La personne reçoit un e-mail avec un code pour choisir son mot de passe.")
    static let invited = Text("Account created; an invitation went to %@.", "Compte créé ; une invitation a été envoyée à %@.")
    static let lastName = Text("Last name", "Nom")
    static let lastPosition = Text("Last position", "Dernière position")
    static let liveOff = Text("Live updates are off; reload the page for news.", "Mises à jour en direct indisponibles ; rechargez la page.")
    static let liveOn = Text("Live: this page updates by itself.", "En direct : cette page se met à jour toute seule.")
    static let liveReconnecting = Text("Reconnecting…", "Reconnexion…")
    static let load = Text("Load", "Charge")
    static let loadCount = Text("%@ under way", "%@ en cours")
    static let mainMenu = Text("Main menu", "Menu principal")
    static let menu = Text("Menu", "Menu")
    static let closeMenu = Text("Close the menu", "Fermer le menu")
    static let tabsMenu = Text("Tabs", "Onglets")
    static let tabSend = Text("Send", "Envoyer")
    static let tabAccount = Text("Account", "Compte")
    static let tabMap = Text("Map", "Carte")
    static let tabScan = Text("Scan", "Scanner")
    static let driverMapTitle = Text("My stops on the map", "Mes arrêts sur la carte")
    static let driverMapEmpty = Text("No stops today.", "Aucun arrêt aujourd’hui.")
    static let mapOfDelivery = Text("Map of the delivery", "Carte de la livraison")
    static let markAllRead = Text("Mark all as read", "Tout marquer comme lu")
    static let markFailed = Text("Delivery failed", "Livraison impossible")
    static let markRead = Text("Mark as read", "Marquer comme lu")
    static let month = Text("Month", "Mois")
    static let more = Text("More", "Plus")
    static let myAccount = Text("My account", "Mon compte")
    static let myDeliveries = Text("My deliveries", "Mes livraisons")
    static let incoming = Text("Incoming", "À recevoir")
    static let boxSent = Text("Sent", "Envoyés")
    static let capSender = Text("Sends parcels", "Envoie des colis")
    static let capReceiver = Text("Receives parcels", "Reçoit des colis")
    static let capTraveller = Text("Traveller", "Voyageur")
    static let capAdmin = Text("Administrator", "Administrateur")
    static let capCounter = Text("Counter staff", "Personnel de guichet")
    static let capInvoice = Text("Vetted company: pays by invoice, imports deliveries", "Entreprise vérifiée : paie sur facture, importe des livraisons")
    static let capabilities = Text("What this person may do", "Ce que cette personne peut faire")
    static let alsoHolds = Text("Like every verified account:", "Comme tout compte vérifié :")
    static let restrictions = Text("Suspensions and bans", "Suspensions et exclusions")
    static let noRestrictions = Text("None so far.", "Aucune jusqu'ici.")
    static let restrict = Text("Suspend or ban", "Suspendre ou exclure")
    static let restrictHint = Text("The person is told the reason. A suspension ends at the end of the chosen day; they can still follow what is on its way. A ban ends every session at once.", "La personne voit la raison. Une suspension prend fin à la fin du jour choisi ; elle peut encore suivre ce qui est en route. Une exclusion ferme toutes ses sessions aussitôt.")
    static let suspended = Text("Suspended", "Suspendu")
    static let suspendedBanner = Text("Your account is suspended: you can follow your shipments, not start new ones. Until", "Votre compte est suspendu : vous pouvez suivre vos envois, pas en commencer de nouveaux. Jusqu'au")
    static let banned = Text("Banned", "Exclu")
    static let liftRestriction = Text("Lift", "Lever")
    static let inForce = Text("In force", "En vigueur")
    static let lifted = Text("Lifted", "Levée")
    static let over = Text("Over", "Terminée")
    static let kind = Text("Kind", "Type")
    static let until = Text("Until", "Jusqu'au")
    static let boxCarrying = Text("Carrying", "Je transporte")
    static let boxAll = Text("All shipments", "Tous les envois")
    static let views = Text("Views", "Vues")
    static let incomingHint = Text("Parcels sent to %@, from the moment they are on their way.", "Les colis envoyés à %@, dès qu'ils sont en route.")
    static let noIncoming = Text("Nothing is on its way to you.", "Rien n'est en route vers vous.")
    static let sender = Text("Sender", "Expéditeur")
    static let confirmReceipt = Text("I received it", "Je l'ai reçu")
    static let receiptPhoto = Text("Photo of what arrived (optional)", "Photo de ce qui est arrivé (facultatif)")
    static let receiptConfirmed = Text("Receipt confirmed", "Réception confirmée")
    static let receiverPhoto = Text("Receiver's photo", "Photo du destinataire")
    static let myRuns = Text("My runs", "Mes courses")
    static let myself = Text("Myself (%@)", "Moi-même (%@)")
    static let name = Text("Name", "Nom")
    static let newDelivery = Text("New delivery", "Nouvelle livraison")
    static let newLink = Text("New link", "Nouveau lien")
    static let newPassword = Text("New password", "Nouveau mot de passe")
    static let newStaff = Text("New driver or manager", "Nouveau chauffeur ou gestionnaire")
    static let noNotifications = Text("No notifications yet.", "Aucune notification pour l’instant.")
    static let noOrders = Text("No deliveries yet.", "Aucune livraison pour l’instant.")
    static let noStatement = Text("No invoice orders this month.", "Aucune commande sur facture ce mois-ci.")
    static let noTrackingLink = Text("There is no tracking link at the moment.", "Il n’y a pas de lien de suivi pour l’instant.")
    static let none = Text("None", "Aucune")
    static let notVerified = Text("Email not confirmed", "E-mail non confirmé")
    static let note = Text("Note", "Remarque")
    static let notes = Text("Notes for the driver", "Remarques pour le chauffeur")
    static let nothingToDo = Text("Nothing to do right now.", "Rien à faire pour le moment.")
    static let notifications = Text("Notifications", "Notifications")
    static let offDuty = Text("off duty", "hors service")
    static let offlineText = Text("You are offline. Pages you open need the network; try again when you are connected.", "Vous êtes hors ligne. Les pages ont besoin du réseau ; réessayez une fois connecté.")
    static let offlineTitle = Text("Offline", "Hors ligne")
    static let olderOrders = Text("Older deliveries", "Livraisons plus anciennes")
    static let onDuty = Text("on duty", "en service")
    static let openDelivery = Text("Open the delivery", "Ouvrir la livraison")
    static let openStatement = Text("Open", "Ouvrir")
    static let optional = Text("optional", "facultatif")
    static let orderHistory = Text("Order history", "Historique des commandes")
    static let orderPlaced = Text("Your delivery is ordered.", "Votre livraison est commandée.")
    static let orders = Text("Orders", "Commandes")
    static let parcel = Text("Parcel", "Colis")
    static let parcelPhoto = Text("Photo of the parcel or document", "Photo du colis ou du document")
    static let counterPhoto = Text("Photo taken at the counter", "Photo prise au guichet")
    static let password = Text("Password", "Mot de passe")
    static let passwordChanged = Text("Password changed. Your other sessions were signed out.", "Mot de passe changé. Vos autres sessions ont été déconnectées.")
    static let passwordHint = Text("At least 10 characters; not a common password.", "Au moins 10 caractères ; pas un mot de passe courant.")
    static let passwordResetNowSignIn = Text("Your new password is set. Sign in with it.", "Votre nouveau mot de passe est enregistré. Connectez-vous avec.")
    static let payCard = Text("Card", "Carte")
    static let payCash = Text("Cash", "Espèces")
    static let payCashAtPickup = Text("Cash to the driver at pickup", "Espèces au chauffeur au ramassage")
    static let payInvoice = Text("Invoice", "Facture")
    static let payInvoiceMonthly = Text("Monthly invoice", "Facture mensuelle")
    static let payNow = Text("Pay %@", "Payer %@")
    static let payment = Text("Payment", "Paiement")
    static let paymentMethod = Text("Payment", "Paiement")
    static let paymentReceived = Text("Payment received: your delivery goes to dispatch.", "Paiement reçu : votre livraison part à la répartition.")
    static let perKm = Text("Per km", "Par km")
    static let phone = Text("Phone", "Téléphone")
    static let photoRefused = Text("The delivery is ordered, but the photo was not an image we can use.", "La livraison est commandée, mais la photo n’est pas une image utilisable.")
    static let pickedUp = Text("Picked up", "Ramassé")
    static let pickup = Text("Pickup", "Ramassage")
    static let pickupWhere = Text("Where do we pick it up?", "Où passons-nous le prendre ?")
    static let pinHint = Text("Tap the map to place the pin exactly; it gives the price by distance.", "Touchez la carte pour placer l’épingle ; le prix se calcule alors sur la distance.")
    static let pinOnMap = Text("Pin it on a map", "L’épingler sur une carte")
    static let plBaseFee = Text("Base fee", "Prise en charge")
    static let plDistance = Text("Distance, %@ km", "Distance, %@ km")
    static let plExpress = Text("Express surcharge", "Supplément express")
    static let plFlatRate = Text("Flat rate (no pin, no distance)", "Forfait (sans épingle ni distance)")
    static let plRounding = Text("Rounding", "Arrondi")
    static let placeOrder = Text("Order and pay", "Commander et payer")
    static let postalCode = Text("Postal code", "NPA")
    static let price = Text("Price", "Prix")
    static let progress = Text("Progress", "Étapes")
    static let proofOfDelivery = Text("Proof of delivery", "Preuve de livraison")
    static let psAwaiting = Text("awaiting payment", "paiement en attente")
    static let psCollected = Text("collected", "encaissé")
    static let psDueOnPickup = Text("due at pickup", "à encaisser au ramassage")
    static let psInvoiced = Text("on the monthly invoice", "sur la facture mensuelle")
    static let psPaid = Text("paid", "payé")
    static let psRefundPending = Text("refund under way", "remboursement en cours")
    static let psRefunded = Text("refunded", "remboursé")
    static let psVoid = Text("void", "annulé")
    static let pushEnable = Text("Turn on notifications on this device", "Activer les notifications sur cet appareil")
    static let pushFailed = Text("Notifications could not be turned on.", "Les notifications n’ont pas pu être activées.")
    static let pushOn = Text("Notifications are on for this device.", "Les notifications sont activées sur cet appareil.")
    static let pushTitle = Text("Notifications on this device", "Notifications sur cet appareil")
    static let reason = Text("Reason", "Raison")
    static let reassign = Text("Reassign", "Réattribuer")
    static let reassignTo = Text("Reassign to", "Réattribuer à")
    static let recipient = Text("Recipient", "Destinataire")
    static let recipientCode = Text("Recipient’s code", "Code du destinataire")
    static let recipientCodeHint = Text("The recipient received this code by email.", "Le destinataire a reçu ce code par e-mail.")
    static let recipientName = Text("Name of the person who signs", "Nom de la personne qui signe")
    static let reference = Text("Reference", "Référence")
    static let removePin = Text("Remove the pin", "Retirer l’épingle")
    static let requireCode = Text("The recipient must give a code (sent to their email)", "Le destinataire doit donner un code (envoyé par e-mail)")
    static let resetCodeSent = Text("If an account uses this address, we sent it a code.", "Si un compte utilise cette adresse, nous lui avons envoyé un code.")
    static let resetSent = Text("A code to choose a new password was sent.", "Un code pour choisir un nouveau mot de passe a été envoyé.")
    static let reviewAndPay = Text("Price and payment", "Prix et paiement")
    static let revokeConfirm = Text("Withdraw the link? Anyone who has it can no longer follow the delivery.", "Retirer le lien ? Ceux qui l’ont ne pourront plus suivre la livraison.")
    static let revokeLink = Text("Withdraw the link", "Retirer le lien")
    static let role = Text("Role", "Rôle")
    static let roleCustomer = Text("Customer", "Client")
    static let roleDriver = Text("Driver", "Chauffeur")
    static let roleManager = Text("Manager", "Gestionnaire")
    static let rounding = Text("Round to (cents)", "Arrondi (centimes)")
    static let sandboxBanner = Text("Test mode: payments go through a sandbox page, no money moves.", "Mode test : les paiements passent par une page de test, aucun argent ne circule.")
    static let save = Text("Save", "Enregistrer")
    static let saveTariff = Text("Save the tariff", "Enregistrer le tarif")
    static let saved = Text("Saved.", "Enregistré.")
    static let search = Text("Search", "Rechercher")
    static let seePrice = Text("See the price", "Voir le prix")
    static let sendCode = Text("Send the code", "Envoyer le code")
    static let sendNewCode = Text("Send a new code", "Envoyer un nouveau code")
    static let sendReset = Text("Send reset code", "Envoyer un code")
    static let serviceLevel = Text("Speed", "Rapidité")
    static let setPassword = Text("Set the password", "Enregistrer le mot de passe")
    static let sharePosition = Text("Share my position while this page is open", "Partager ma position tant que cette page est ouverte")
    static let sharingDenied = Text("Location access was refused; allow it in the browser’s settings.", "L’accès à la position a été refusé ; autorisez-le dans le navigateur.")
    static let sharingError = Text("Your position could not be sent; retrying.", "Votre position n’a pas pu être envoyée ; nouvel essai.")
    static let sharingHint = Text("Customers see you on the map while a delivery is under way.", "Les clients vous voient sur la carte pendant une livraison.")
    static let sharingOff = Text("Position sharing is off.", "Le partage de position est désactivé.")
    static let sharingOn = Text("Sharing your position.", "Votre position est partagée.")
    static let sharingWaiting = Text("Waiting for a position…", "En attente d’une position…")
    static let show = Text("Show", "Afficher")
    static let signHere = Text("The recipient signs here with a finger", "Le destinataire signe ici avec le doigt")
    static let signIn = Text("Sign in", "Se connecter")
    static let signOut = Text("Sign out", "Se déconnecter")
    static let signature = Text("Signature", "Signature")
    static let signatureMissing = Text("The recipient’s signature is missing.", "La signature du destinataire manque.")
    static let signatureNeedsJS = Text("Signing needs JavaScript, which is off in this browser.", "La signature a besoin de JavaScript, désactivé dans ce navigateur.")
    static let signedBy = Text("Signed by", "Signé par")
    static let skipToContent = Text("Skip to content", "Aller au contenu")
    static let stAccepted = Text("Driver on the way to pick up", "Chauffeur en route vers le ramassage")
    static let stAssigned = Text("Driver assigned", "Chauffeur attribué")
    static let stAwaitingPayment = Text("Waiting for payment", "En attente de paiement")
    static let stCancelled = Text("Cancelled", "Annulée")
    static let stDelivered = Text("Delivered", "Livrée")
    static let stFailed = Text("Delivery failed", "Livraison impossible")
    static let stInTransit = Text("On its way", "En route")
    static let stPending = Text("Order received", "Commande reçue")
    static let standard = Text("Standard", "Standard")
    static let state = Text("State", "État")
    static let statements = Text("Statements", "Relevés")
    static let status = Text("Status", "Statut")
    static let street = Text("Street and number", "Rue et numéro")
    static let tariff = Text("Tariff", "Tarif")
    static let tariffHint = Text("Version %@. A change applies to new quotes and orders only.", "Version %@. Un changement ne vaut que pour les nouveaux devis et commandes.")
    static let test = Text("test", "test")
    static let to = Text("To", "Au")
    static let toDo = Text("To do", "À faire")
    static let today = Text("Today", "Aujourd’hui")
    static let total = Text("Total", "Total")
    static let trackingLink = Text("Tracking link", "Lien de suivi")
    static let trackingLinkHint = Text("Share it with the recipient: it shows the progress and the driver on the way, nothing else.", "Partagez-le avec le destinataire : il montre les étapes et le chauffeur en route, rien d’autre.")
    static let tryAgain = Text("Try again", "Réessayer")
    static let unread = Text("unread", "non lues")
    static let useMyAddress = Text("My address: %@", "Mon adresse : %@")
    static let users = Text("Users", "Utilisateurs")
    static let verifiedNowSignIn = Text("Your email is confirmed. Sign in.", "Votre e-mail est confirmé. Connectez-vous.")
    static let weightClass = Text("Size and weight", "Taille et poids")
    static let weightLarge = Text("Large (up to 30 kg)", "Grand (jusqu’à 30 kg)")
    static let weightMedium = Text("Medium (up to 10 kg)", "Moyen (jusqu’à 10 kg)")
    static let weightSmall = Text("Small (document, up to 2 kg)", "Petit (document, jusqu’à 2 kg)")
    static let youAreOffDuty = Text("You are off duty: nobody sees your position.", "Vous êtes hors service : personne ne voit votre position.")
    static let youAreOnDuty = Text("You are on duty.", "Vous êtes en service.")
    // The public tracking page (`TrackingPage`).
    static let pubAwaitingPayment = Text("Waiting for payment", "En attente du paiement")
    static let pubPending = Text("Order received", "Commande reçue")
    static let pubAssigned = Text("Driver assigned", "Chauffeur désigné")
    static let pubAccepted = Text("Driver on the way to pick up", "Chauffeur en route vers l’enlèvement")
    static let pubInTransit = Text("On its way to you", "En route vers vous")
    static let pubDelivered = Text("Delivered", "Livré")
    static let pubCancelled = Text("Cancelled", "Annulé")
    static let pubFailed = Text("Delivery failed", "Livraison échouée")
    static let pubNotFoundTitle = Text("Tracking link not found", "Lien de suivi introuvable")
    static let pubNotFound = Text("This link does not exist or was withdrawn by the sender.", "Ce lien n’existe pas ou a été retiré par l’expéditeur.")
    static let pubTitle = Text("Tracking · %@", "Suivi · %@")
    static let pubYourDriver = Text("Your driver: %@", "Votre chauffeur : %@")
    static let pubEtaPickup = Text("Expected at the pickup around %@ (%@ km away).", "Attendu à l’enlèvement vers %@ (à %@ km).")
    static let pubEtaDropoff = Text("Expected at the drop-off around %@ (%@ km away).", "Attendu à la livraison vers %@ (à %@ km).")
    static let pubPosition = Text("Driver’s position: %@", "Position du chauffeur : %@")
    static let pubProgress = Text("Progress", "Étapes")
    static let pubReload = Text("Reload the page for the latest news.", "Rechargez la page pour les dernières nouvelles.")
    static let pubLiveOn = Text("Live: this page updates by itself.", "En direct : cette page se met à jour toute seule.")
    static let pubLiveOff = Text("Live updates are not available.", "Les mises à jour en direct ne sont pas disponibles.")
    static let pubReconnecting = Text("Reconnecting…", "Reconnexion…")
    static let pubWithdrawn = Text("This tracking link was withdrawn.", "Ce lien de suivi a été retiré.")
}

/// Every entry, for the test that checks each has both languages.
enum CatalogueIndex {
    static let all: [Text] = [
        .pubAwaitingPayment,
        .pubPending,
        .pubAssigned,
        .pubAccepted,
        .pubInTransit,
        .pubDelivered,
        .pubCancelled,
        .pubFailed,
        .pubNotFoundTitle,
        .pubNotFound,
        .pubTitle,
        .pubYourDriver,
        .pubEtaPickup,
        .pubEtaDropoff,
        .pubPosition,
        .pubProgress,
        .pubReload,
        .pubLiveOn,
        .pubLiveOff,
        .pubReconnecting,
        .pubWithdrawn,
        .accept,
        .actionDone,
        .active,
        .allDrivers,
        .allRoles,
        .allStatuses,
        .anotherAddress,
        .assign,
        .assignTo,
        .back,
        .backHome,
        .baseFee,
        .cancelConfirm,
        .cancelOrder,
        .cashCollected,
        .cashCollectedAmount,
        .cashToCollect,
        .change,
        .changePassword,
        .city,
        .clearSignature,
        .code,
        .codeSent,
        .colAssigned,
        .colFailed,
        .colNew,
        .colUnderWay,
        .companyHint,
        .companyName,
        .confirm,
        .confirmDelivery,
        .confirmEmail,
        .confirmEmailIntro,
        .copied,
        .copy,
        .createAccount,
        .createAndInvite,
        .currency,
        .currentPassword,
        .customer,
        .date,
        .deliverProof,
        .delivery,
        .deliveryPhoto,
        .details,
        .directions,
        .disable,
        .disableConfirm,
        .disabled,
        .dispatch,
        .distance,
        .doneToday,
        .driver,
        .dropoff,
        .duty,
        .email,
        .enable,
        .errEmailInUse,
        .errForbiddenTitle,
        .errFormExpired,
        .errFormExpiredTitle,
        .errGenericTitle,
        .errIncorrect,
        .errInvalid,
        .errMismatch,
        .errNoAccountAddress,
        .errNotAllowed,
        .errNotFoundTitle,
        .errPasswordCommon,
        .errPasswordShort,
        .errRateLimited,
        .errRecipientEmailForCode,
        .errRequired,
        .errSlowDownTitle,
        .errTooLong,
        .errValidation,
        .etaDropoff,
        .etaPickup,
        .express,
        .expressPercent,
        .failAbsent,
        .failAddress,
        .failDamaged,
        .failOther,
        .failRefused,
        .filter,
        .firstName,
        .flatFee,
        .fleet,
        .fleetMap,
        .forgotIntro,
        .forgotPassword,
        .from,
        .goOffDuty,
        .goOnDuty,
        .haveAccount,
        .history,
        .iAmACompany,
        .invitationHint,
        .invited,
        .lastName,
        .lastPosition,
        .liveOff,
        .liveOn,
        .liveReconnecting,
        .load,
        .loadCount,
        .mainMenu,
        .mapOfDelivery,
        .markAllRead,
        .markFailed,
        .markRead,
        .month,
        .more,
        .myAccount,
        .myDeliveries,
        .incoming,
        .boxSent, .boxCarrying, .boxAll, .views,
        .capSender, .capReceiver, .capTraveller, .capAdmin, .capCounter, .capInvoice, .capabilities, .alsoHolds, .restrictions,
        .noRestrictions, .restrict, .restrictHint, .suspended, .suspendedBanner, .banned, .liftRestriction, .inForce, .lifted, .over, .kind, .until,
        .incomingHint,
        .noIncoming,
        .sender,
        .confirmReceipt,
        .receiptPhoto,
        .receiptConfirmed,
        .receiverPhoto,
        .myRuns,
        .myself,
        .name,
        .newDelivery,
        .newLink,
        .newPassword,
        .newStaff,
        .noNotifications,
        .noOrders,
        .noStatement,
        .noTrackingLink,
        .none,
        .notVerified,
        .note,
        .notes,
        .nothingToDo,
        .notifications,
        .offDuty,
        .offlineText,
        .offlineTitle,
        .olderOrders,
        .onDuty,
        .openDelivery,
        .openStatement,
        .optional,
        .orderHistory,
        .orderPlaced,
        .orders,
        .parcel,
        .parcelPhoto,
        .password,
        .passwordChanged,
        .passwordHint,
        .passwordResetNowSignIn,
        .payCard,
        .payCash,
        .payCashAtPickup,
        .payInvoice,
        .payInvoiceMonthly,
        .payNow,
        .payment,
        .paymentMethod,
        .paymentReceived,
        .perKm,
        .phone,
        .photoRefused,
        .pickedUp,
        .pickup,
        .pickupWhere,
        .pinHint,
        .pinOnMap,
        .plBaseFee,
        .plDistance,
        .plExpress,
        .plFlatRate,
        .plRounding,
        .placeOrder,
        .postalCode,
        .price,
        .progress,
        .proofOfDelivery,
        .psAwaiting,
        .psCollected,
        .psDueOnPickup,
        .psInvoiced,
        .psPaid,
        .psRefundPending,
        .psRefunded,
        .psVoid,
        .pushEnable,
        .pushFailed,
        .pushOn,
        .pushTitle,
        .reason,
        .reassign,
        .reassignTo,
        .recipient,
        .recipientCode,
        .recipientCodeHint,
        .recipientName,
        .reference,
        .removePin,
        .requireCode,
        .resetCodeSent,
        .resetSent,
        .reviewAndPay,
        .revokeConfirm,
        .revokeLink,
        .role,
        .roleCustomer,
        .roleDriver,
        .roleManager,
        .rounding,
        .sandboxBanner,
        .save,
        .saveTariff,
        .saved,
        .search,
        .seePrice,
        .sendCode,
        .sendNewCode,
        .sendReset,
        .serviceLevel,
        .setPassword,
        .sharePosition,
        .sharingDenied,
        .sharingError,
        .sharingHint,
        .sharingOff,
        .sharingOn,
        .sharingWaiting,
        .show,
        .signHere,
        .signIn,
        .signOut,
        .signature,
        .signatureMissing,
        .signatureNeedsJS,
        .signedBy,
        .skipToContent,
        .stAccepted,
        .stAssigned,
        .stAwaitingPayment,
        .stCancelled,
        .stDelivered,
        .stFailed,
        .stInTransit,
        .stPending,
        .standard,
        .state,
        .statements,
        .status,
        .street,
        .tariff,
        .tariffHint,
        .test,
        .to,
        .toDo,
        .today,
        .total,
        .trackingLink,
        .trackingLinkHint,
        .tryAgain,
        .unread,
        .useMyAddress,
        .menu, .closeMenu, .tabsMenu, .tabSend, .tabAccount, .tabMap, .tabScan, .driverMapTitle, .driverMapEmpty,
        .users,
        .verifiedNowSignIn,
        .weightClass,
        .weightLarge,
        .weightMedium,
        .weightSmall,
        .youAreOffDuty,
        .youAreOnDuty,
    ] + TravelCatalogue.all + ParcelCatalogue.all + IntegrationCatalogue.all + ImportCatalogue.all + RouteCatalogue.all + TimeslotCatalogue.all + CounterCatalogue.all + DeskCatalogue.all + OutboxCatalogue.all + AdminCatalogue.all + InsuranceCatalogue.all + LoyaltyCatalogue.all + PlanCatalogue.all
}
