/// Every error code the server answers with, in the API (`{"error": {"code": …}}`), on the live
/// channel and in the web app; one list for the server, the web catalogue and the SDK, each with a
/// message in English and in French for people. The API's own `message` may add detail (a limit,
/// a status); these are what a person is shown when an app has nothing better to say.
public enum ErrorCode: String, Sendable, Hashable, Codable, CaseIterable {
    // The request itself
    case badRequest = "bad_request"
    case invalidJSON = "invalid_json"
    case invalidMultipart = "invalid_multipart"
    case invalidParameter = "invalid_parameter"
    case invalidCursor = "invalid_cursor"
    case invalidCharacter = "invalid_character"
    case missingBody = "missing_body"
    case methodNotAllowed = "method_not_allowed"
    case payloadTooLarge = "payload_too_large"
    case unsupportedMediaType = "unsupported_media_type"
    case unsupportedImage = "unsupported_image"
    case validationFailed = "validation_failed"
    case originNotAllowed = "origin_not_allowed"
    // Who is asking
    case unauthenticated
    case invalidToken = "invalid_token"
    case tokenExpired = "token_expired"
    case sessionRevoked = "session_revoked"
    case sessionEnded = "session_ended"
    case invalidCredentials = "invalid_credentials"
    case invalidRefreshToken = "invalid_refresh_token"
    case emailNotVerified = "email_not_verified"
    case accountDisabled = "account_disabled"
    case accountSuspended = "account_suspended"
    case accessChanged = "access_changed"
    case reauthenticationRequired = "reauthentication_required"
    case forbidden
    case notFound = "not_found"
    // Accounts and codes
    case emailInUse = "email_in_use"
    case invalidCode = "invalid_code"
    case codeLocked = "code_locked"
    case linkExpired = "link_expired"
    case cannotModifySelf = "cannot_modify_self"
    case notGranted = "not_granted"
    // Orders
    case conflict
    case invalidTransition = "invalid_transition"
    case noTariff = "no_tariff"
    case notACompany = "not_a_company"
    case companyNotVetted = "company_not_vetted"
    case notAnOnlinePayment = "not_an_online_payment"
    case tooManyOrders = "too_many_orders"
    case tooManyPhotos = "too_many_photos"
    case alreadyConfirmed = "already_confirmed"
    case payoutExceedsPayment = "payout_exceeds_payment"
    case ledgerInconsistent = "ledger_inconsistent"
    case invalidRecipientCode = "invalid_recipient_code"
    case recipientCodeLocked = "recipient_code_locked"
    case noRecipientCode = "no_recipient_code"
    case offDuty = "off_duty"
    /// Posting trips needs a traveller profile.
    case notATraveller = "not_a_traveller"
    /// A trip's route, date or room cannot change below what is booked on it.
    case tripBooked = "trip_booked"
    case ownTrip = "own_trip"
    case tripNotOpen = "trip_not_open"
    case tripFull = "trip_full"
    /// A route plan that is no longer the newest, or was applied already.
    case planSuperseded = "plan_superseded"
    /// Accepting paid requests needs a payout account whose transfers are active.
    case payoutsNotReady = "payouts_not_ready"
    case payoutsFrozen = "payouts_frozen"
    /// A claim about a shipment that was not insured.
    case notInsured = "not_insured"
    /// Damage is claimed once delivered, a loss once the parcel failed, was cancelled after
    /// pickup, or is overdue.
    case claimTooEarly = "claim_too_early"
    case claimWindowClosed = "claim_window_closed"
    /// A claim already decided (or a second claim on the same shipment).
    case claimDecided = "claim_decided"
    /// An approval above the threshold, confirmed by the one who approved it first.
    case secondApproverRequired = "second_approver_required"
    /// A conversation whose subject ended some days ago: read-only.
    case conversationClosed = "conversation_closed"
    /// A message changed or deleted more than five minutes after it was sent.
    case editWindowPassed = "edit_window_passed"
    /// A timeslot whose seats are all booked or held by others.
    case slotFull = "slot_full"
    /// A timeslot that is closed, switched off or past its cutoff.
    case slotUnavailable = "slot_unavailable"
    /// A parcel a counter's staff scanned that does not pass through their counter.
    case notForThisCounter = "not_for_this_counter"
    /// A parcel not at the counter yet: the sender has not dropped it, or its driver has not brought it.
    case notAtCounter = "not_at_counter"
    /// A subscription asked for while one is active or past due.
    case alreadySubscribed = "already_subscribed"
    /// A plan withdrawn from offer.
    case planClosed = "plan_closed"
    /// An order priced as one of the plan's included deliveries after the last was used.
    case includedDeliveriesUsed = "included_deliveries_used"
    // Payments and push
    case paymentProviderError = "payment_provider_error"
    case invalidSignature = "invalid_signature"
    case invalidEvent = "invalid_event"
    case webhooksNotConfigured = "webhooks_not_configured"
    case pushNotConfigured = "push_not_configured"
    // The live channel
    case ticketRequired = "ticket_required"
    case invalidTicket = "invalid_ticket"
    case websocketRequired = "websocket_required"
    case invalidCommand = "invalid_command"
    case invalidTopic = "invalid_topic"
    case invalidSince = "invalid_since"
    case linkRevoked = "link_revoked"
    case tooManySubscriptions = "too_many_subscriptions"
    case tooManyConnections = "too_many_connections"
    // Load and failures
    case rateLimited = "rate_limited"
    case unavailable
    case internalError = "internal_error"

    public var english: String { messages.english }
    public var french: String { messages.french }

    public func message(french isFrench: Bool) -> String { isFrench ? french : english }

    private var messages: (english: String, french: String) {
        switch self {
        case .badRequest: ("The request is malformed.", "La requête est mal formée.")
        case .invalidJSON: ("The body is not valid JSON.", "Le corps de la requête n’est pas du JSON valable.")
        case .invalidMultipart: ("The upload is malformed or repeats a part.", "L’envoi est mal formé ou répète une partie.")
        case .invalidParameter: ("A parameter is malformed or out of range.", "Un paramètre est mal formé ou hors limites.")
        case .invalidCursor: ("This list position is not one we gave out; start from the top.", "Cette position dans la liste est inconnue ; recommencez depuis le début.")
        case .invalidCharacter: ("The text contains a character that cannot be stored.", "Le texte contient un caractère qui ne peut pas être enregistré.")
        case .missingBody: ("The request has no body.", "La requête n’a pas de contenu.")
        case .methodNotAllowed: ("This address does not accept this method.", "Cette adresse n’accepte pas cette méthode.")
        case .payloadTooLarge: ("What you sent is too large.", "Ce que vous avez envoyé est trop volumineux.")
        case .unsupportedMediaType: ("This kind of content is not accepted here.", "Ce type de contenu n’est pas accepté ici.")
        case .unsupportedImage: ("Send a JPEG or PNG image.", "Envoyez une image JPEG ou PNG.")
        case .validationFailed: ("Some fields are missing or invalid.", "Certains champs manquent ou ne sont pas valables.")
        case .originNotAllowed: ("This page may not do that from another site.", "Cette page ne peut pas faire cela depuis un autre site.")
        case .unauthenticated: ("Sign in to continue.", "Connectez-vous pour continuer.")
        case .invalidToken: ("Your sign-in is not valid; sign in again.", "Votre connexion n’est pas valable ; reconnectez-vous.")
        case .tokenExpired: ("Your sign-in has expired; sign in again.", "Votre connexion a expiré ; reconnectez-vous.")
        case .sessionRevoked: ("This session has ended; sign in again.", "Cette session est terminée ; reconnectez-vous.")
        case .sessionEnded: ("The session has ended; sign in again.", "La session est terminée ; reconnectez-vous.")
        case .invalidCredentials: ("The email or password is wrong.", "L’e-mail ou le mot de passe est faux.")
        case .invalidRefreshToken: ("Your sign-in is no longer valid; sign in again.", "Votre connexion n’est plus valable ; reconnectez-vous.")
        case .emailNotVerified: ("Confirm your email address with the code we sent before signing in.", "Confirmez votre adresse e-mail avec le code reçu avant de vous connecter.")
        case .accountDisabled: ("This account has been disabled.", "Ce compte a été désactivé.")
        case .reauthenticationRequired: ("Enter your password again to continue: this needs a recent sign-in.", "Saisissez à nouveau votre mot de passe pour continuer : cette action demande une connexion récente.")
        case .accountSuspended: ("This account is suspended for now: you can follow your shipments, not start anything new.", "Ce compte est suspendu pour le moment : vous pouvez suivre vos envois, pas en commencer de nouveaux.")
        case .accessChanged: ("What this account may see has changed; reconnect.", "Ce que ce compte peut voir a changé ; reconnectez-vous.")
        case .forbidden: ("Your role does not allow this.", "Votre rôle ne le permet pas.")
        case .notFound: ("This does not exist, or you may not see it.", "Cela n’existe pas, ou vous ne pouvez pas le voir.")
        case .emailInUse: ("An account already uses this email address.", "Un compte utilise déjà cette adresse e-mail.")
        case .invalidCode: ("The code is wrong or has expired. Ask for a new one.", "Le code est faux ou a expiré. Demandez-en un nouveau.")
        case .codeLocked: ("Too many wrong tries. Ask for a new code.", "Trop d’essais erronés. Demandez un nouveau code.")
        case .linkExpired: ("This link has expired.", "Ce lien a expiré.")
        case .cannotModifySelf: ("You cannot change your own role or disable your own account.", "Vous ne pouvez pas changer votre propre rôle ni désactiver votre propre compte.")
        case .notGranted: ("Nobody grants this: every verified account has it, or it comes with a profile.", "Personne ne l’accorde : chaque compte vérifié l’a, ou il vient avec un profil.")
        case .conflict: ("Someone changed this at the same moment; reload and try again.", "Quelqu’un l’a modifié au même moment ; rechargez et réessayez.")
        case .invalidTransition: ("This delivery has changed in the meantime; reload to see where it is now.", "Cette livraison a changé entre-temps ; rechargez pour voir où elle en est.")
        case .noTariff: ("No tariff is set yet; ask the courier.", "Aucun tarif n’est encore défini ; adressez-vous au coursier.")
        case .notACompany: ("Monthly statements are for company accounts.", "Les relevés mensuels sont réservés aux comptes d’entreprise.")
        case .companyNotVetted: ("Invoices and imports open once our staff have checked your company; contact us.",
                                 "Les factures et les imports s’ouvrent une fois votre entreprise vérifiée par notre équipe ; contactez-nous.")
        case .notAnOnlinePayment: ("This order is not paid online.", "Cette commande n’est pas payée en ligne.")
        case .tooManyOrders: ("You have placed many orders in the last hour; try again later.", "Vous avez passé beaucoup de commandes dans la dernière heure ; réessayez plus tard.")
        case .tooManyPhotos: ("This order has as many photos as it may have.", "Cette commande a déjà le nombre maximal de photos.")
        case .alreadyConfirmed: ("Receipt of this shipment is already confirmed.", "La réception de cet envoi est déjà confirmée.")
        case .ledgerInconsistent: ("The ledger cannot be summed; tell the operator.", "Le registre ne peut être additionné ; prévenez l'exploitant.")
        case .payoutExceedsPayment: ("A payout cannot exceed what was paid for the shipment.", "Un versement ne peut dépasser ce qui a été payé pour l'envoi.")
        case .invalidRecipientCode: ("The recipient’s code is wrong.", "Le code du destinataire est faux.")
        case .recipientCodeLocked: ("Too many wrong codes: the manager has been told; call them.", "Trop de codes erronés : le responsable a été prévenu ; appelez-le.")
        case .noRecipientCode: ("This delivery asks for the recipient’s code.", "Cette livraison demande le code du destinataire.")
        case .offDuty: ("Go on duty before sharing your position.", "Prenez votre service avant de partager votre position.")
        case .ownTrip: ("You cannot send a parcel on your own trip.", "Vous ne pouvez pas envoyer un colis sur votre propre trajet.")
        case .tripNotOpen: ("This trip takes no requests now.", "Ce trajet ne prend plus de demandes.")
        case .tripFull: ("This trip has no room left for this parcel.", "Ce trajet n’a plus de place pour ce colis.")
        case .planSuperseded: ("This plan is no longer the newest, or was applied already; plan again.", "Ce plan n’est plus le plus récent, ou a déjà été appliqué ; planifiez à nouveau.")
        case .alreadySubscribed: ("You already have a subscription; cancel it first.", "Vous avez déjà un abonnement ; résiliez-le d’abord.")
        case .planClosed: ("This plan is no longer offered.", "Cette formule n’est plus proposée.")
        case .includedDeliveriesUsed: ("Your plan's included deliveries are used up; ask for a new price.", "Les livraisons incluses dans votre formule sont épuisées ; demandez un nouveau prix.")
        case .notInsured: ("This shipment was not insured.", "Cet envoi n’était pas assuré.")
        case .claimTooEarly: ("Claim damage once delivered, and a loss once the delivery failed or is overdue.",
                              "Déclarez un dommage une fois livré, et une perte une fois la livraison échouée ou en retard.")
        case .claimWindowClosed: ("The time to claim this shipment's insurance has passed.", "Le délai pour déclarer un sinistre sur cet envoi est passé.")
        case .claimDecided: ("This claim is already decided.", "Ce sinistre est déjà tranché.")
        case .secondApproverRequired: ("A second staff member must confirm this approval.", "Un deuxième membre de l’équipe doit confirmer cette approbation.")
        case .payoutsFrozen: ("Payouts to this account are frozen while it is banned.", "Les versements à ce compte sont gelés tant qu’il est exclu.")
        case .payoutsNotReady: ("Set up your payouts before accepting paid parcels.", "Configurez vos versements avant d’accepter des colis payants.")
        case .notATraveller: ("Complete your traveller profile to post trips.", "Complétez votre profil de voyageur pour publier des trajets.")
        case .tripBooked: ("Parcels are booked on this trip: its route and date stay, and its room cannot go below what is booked.",
                           "Des colis sont réservés sur ce trajet : son itinéraire et sa date restent, et sa place ne peut descendre sous ce qui est réservé.")
        case .conversationClosed: ("This conversation is closed: it can be read, not written to.", "Cette conversation est fermée : elle peut être lue, plus complétée.")
        case .slotFull: ("This timeslot is full: choose another one.", "Ce créneau est complet : choisissez-en un autre.")
        case .notForThisCounter: ("This parcel does not pass through this counter.", "Ce colis ne passe pas par ce guichet.")
        case .notAtCounter: ("This parcel is not at the counter yet.", "Ce colis n’est pas encore au guichet.")
        case .slotUnavailable: ("This timeslot can no longer be booked: choose another one.", "Ce créneau ne peut plus être réservé : choisissez-en un autre.")
        case .editWindowPassed: ("A message can be changed or deleted only in the five minutes after it was sent.", "Un message ne peut être modifié ou supprimé que dans les cinq minutes qui suivent son envoi.")
        case .paymentProviderError: ("The payment service did not answer; try again in a moment.", "Le service de paiement n’a pas répondu ; réessayez dans un instant.")
        case .invalidSignature: ("The signature of this message does not match.", "La signature de ce message ne correspond pas.")
        case .invalidEvent: ("This event is not one we understand.", "Cet événement n’est pas compris.")
        case .webhooksNotConfigured: ("This server does not receive payment events.", "Ce serveur ne reçoit pas d’événements de paiement.")
        case .pushNotConfigured: ("Push notifications are not set up on this server.", "Les notifications push ne sont pas configurées sur ce serveur.")
        case .ticketRequired: ("Ask for a live ticket first.", "Demandez d’abord un ticket pour le direct.")
        case .invalidTicket: ("The live ticket is unknown, used or expired; ask for a new one.", "Le ticket pour le direct est inconnu, utilisé ou expiré ; demandez-en un nouveau.")
        case .websocketRequired: ("This address speaks WebSocket only.", "Cette adresse ne parle que WebSocket.")
        case .invalidCommand: ("This live command is not one we understand.", "Cette commande du direct n’est pas comprise.")
        case .invalidTopic: ("This live topic does not exist.", "Ce sujet du direct n’existe pas.")
        case .invalidSince: ("The position to resume from is out of range.", "La position de reprise est hors limites.")
        case .linkRevoked: ("This tracking link is no longer valid.", "Ce lien de suivi n’est plus valable.")
        case .tooManySubscriptions: ("Too many live subscriptions on this connection.", "Trop d’abonnements en direct sur cette connexion.")
        case .tooManyConnections: ("Too many live connections are open; close one first.", "Trop de connexions en direct sont ouvertes ; fermez-en une d’abord.")
        case .rateLimited: ("Too many attempts. Try again later.", "Trop d’essais. Réessayez plus tard.")
        case .unavailable: ("The server is busy; try again in a moment.", "Le serveur est occupé ; réessayez dans un instant.")
        case .internalError: ("Something went wrong on our side. Please try again.", "Un problème est survenu de notre côté. Veuillez réessayer.")
        }
    }
}
