import Foundation

/// The integration pages' strings, in English and French (`IntegrationPages`).
extension Text {
    static let webhooks = Text("Webhooks", "Webhooks")
    static let webhooksIntro = Text("Waybill sends your systems what happens, as signed JSON, the moment it happens. Failed deliveries are retried for three days.",
                                    "Waybill envoie à vos systèmes ce qui se passe, en JSON signé, au moment où cela arrive. Les envois échoués sont réessayés pendant trois jours.")
    static let webhooksNone = Text("No endpoint yet.", "Aucun point de terminaison pour l’instant.")
    static let webhookAdd = Text("Add an endpoint", "Ajouter un point de terminaison")
    static let webhookURL = Text("Address (https://…)", "Adresse (https://…)")
    static let webhookDescription = Text("What it is for", "À quoi il sert")
    static let webhookScope = Text("Whose events", "Quels événements")
    static let webhookScopeOwn = Text("Mine: what I send, my trip requests, the parcels I follow", "Les miens : mes envois, mes demandes de trajet, les colis que je suis")
    static let webhookScopeCompany = Text("The company’s: every shipment", "Ceux de l’entreprise : tous les envois")
    static let webhookEvents = Text("Events", "Événements")
    static let webhookCreated = Text("Endpoint added. Keep this signing secret now: it is shown only once.", "Point de terminaison ajouté. Gardez ce secret de signature maintenant : il n’est affiché qu’une fois.")
    static let webhookRotated = Text("New signing secret (the old one no longer signs). It is shown only once.", "Nouveau secret de signature (l’ancien ne signe plus). Il n’est affiché qu’une fois.")
    static let webhookSecret = Text("Signing secret", "Secret de signature")
    static let webhookOn = Text("On", "Actif")
    static let webhookOffByOwner = Text("Turned off", "Désactivé")
    static let webhookOffFailing = Text("Turned off: every delivery failed for three days", "Désactivé : tous les envois ont échoué pendant trois jours")
    static let webhookFailingSince = Text("Failing since", "En échec depuis")
    static let webhookTurnOn = Text("Turn on", "Activer")
    static let webhookTurnOff = Text("Turn off", "Désactiver")
    static let webhookPing = Text("Send a test event", "Envoyer un événement de test")
    static let webhookPinged = Text("Test event queued: its result appears below in a moment.", "Événement de test envoyé : son résultat apparaît ci-dessous dans un instant.")
    static let webhookRotate = Text("New signing secret", "Nouveau secret de signature")
    static let webhookDelete = Text("Remove this endpoint", "Supprimer ce point de terminaison")
    static let webhookDeleted = Text("Endpoint removed.", "Point de terminaison supprimé.")
    static let webhookLog = Text("Deliveries", "Envois")
    static let webhookLogNone = Text("Nothing sent yet.", "Rien n’a encore été envoyé.")
    static let webhookEvent = Text("Event", "Événement")
    static let webhookState = Text("State", "État")
    static let webhookAttempts = Text("Attempts", "Tentatives")
    static let webhookAnswer = Text("Last answer", "Dernière réponse")
    static let webhookWhen = Text("When", "Quand")
    static let webhookPending = Text("Waiting", "En attente")
    static let webhookDelivered = Text("Delivered", "Remis")
    static let webhookFailed = Text("Given up", "Abandonné")
    static let webhookRedeliver = Text("Send again", "Renvoyer")
    static let webhookRedelivered = Text("Sent again: see the newest line.", "Renvoyé : voir la ligne la plus récente.")
    static let webhookHowToVerify = Text("How to check the signature (Swift, Python, JavaScript): docs/integrations.md.", "Comment vérifier la signature (Swift, Python, JavaScript) : docs/integrations.md.")
    static let apiKeys = Text("API keys", "Clés d’API")
    static let apiKeysIntro = Text("For your own servers: a key acts as you, only within its scopes. Send it as “Authorization: Bearer wb_live_…”.",
                                   "Pour vos propres serveurs : une clé agit en votre nom, seulement dans ses droits. Envoyez-la comme « Authorization: Bearer wb_live_… ».")
    static let apiKeyName = Text("What it is for", "À quoi elle sert")
    static let apiKeyScopes = Text("What it may do", "Ce qu’elle peut faire")
    static let apiKeyDays = Text("Expires after (days)", "Expire après (jours)")
    static let apiKeyCreate = Text("Make a key", "Créer une clé")
    static let apiKeyCreated = Text("Key made. Copy it now: it is shown only once and cannot be found again.", "Clé créée. Copiez-la maintenant : elle n’est affichée qu’une fois et ne peut pas être retrouvée.")
    static let apiKeyRevoke = Text("Revoke", "Révoquer")
    static let apiKeyRevoked = Text("revoked", "révoquée")
    static let apiKeyExpires = Text("expires", "expire le")
    static let apiKeyExpired = Text("expired", "expirée")
    static let apiKeyLastUsed = Text("last used", "dernière utilisation")
    static let apiKeyNeverUsed = Text("never used", "jamais utilisée")
    static let apiKeysNone = Text("No key yet.", "Aucune clé pour l’instant.")
    static let scopeReadShipments = Text("See shipments, quotes and statements", "Voir les envois, les devis et les relevés")
    static let scopeWriteShipments = Text("Order and cancel shipments", "Commander et annuler des envois")
    static let scopeDispatch = Text("Assign and refund (dispatch)", "Attribuer et rembourser (répartition)")
    static let scopeWebhooks = Text("Manage webhooks", "Gérer les webhooks")
    static let scopeReadParcels = Text("See followed parcels", "Voir les colis suivis")
    static let scopeWriteParcels = Text("Follow and stop following parcels", "Suivre et ne plus suivre des colis")
    static let errHTTPSRequired = Text("Use an https:// address.", "Utilisez une adresse https://.")
    static let errInvalidURL = Text("This is not a web address.", "Ce n’est pas une adresse web.")
    static let errChooseEvent = Text("Choose at least one event.", "Choisissez au moins un événement.")
}

enum IntegrationCatalogue {
    static let all: [Text] = [
        .webhooks, .webhooksIntro, .webhooksNone, .webhookAdd, .webhookURL, .webhookDescription, .webhookScope, .webhookScopeOwn,
        .webhookScopeCompany, .webhookEvents, .webhookCreated, .webhookRotated, .webhookSecret, .webhookOn, .webhookOffByOwner,
        .webhookOffFailing, .webhookFailingSince, .webhookTurnOn, .webhookTurnOff, .webhookPing, .webhookPinged, .webhookRotate,
        .webhookDelete, .webhookDeleted, .webhookLog, .webhookLogNone, .webhookEvent, .webhookState, .webhookAttempts, .webhookAnswer,
        .webhookWhen, .webhookPending, .webhookDelivered, .webhookFailed, .webhookRedeliver, .webhookRedelivered, .webhookHowToVerify,
        .errHTTPSRequired, .errInvalidURL, .errChooseEvent, .apiKeys, .apiKeysIntro, .apiKeyName, .apiKeyScopes, .apiKeyDays,
        .apiKeyCreate, .apiKeyCreated, .apiKeyRevoke, .apiKeyRevoked, .apiKeyExpires, .apiKeyExpired, .apiKeyLastUsed, .apiKeyNeverUsed, .apiKeysNone,
        .scopeReadShipments, .scopeWriteShipments, .scopeDispatch, .scopeWebhooks, .scopeReadParcels, .scopeWriteParcels,
    ]
}
