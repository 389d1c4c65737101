import Foundation
import WaybillCore

/// Subscription plans' strings, in English and French.
extension Text {
    static let plPlan = Text("Subscription plan", "Formule d’abonnement")
    static let actPlanChanged = Text("Plan changed", "Formule modifiée")
    static let subPlanTitle = Text("Subscription plan", "Abonnement")
    static let plansOnOffer = Text("Plans", "Formules")
    static let planPerMonth = Text("%@ a month", "%@ par mois")
    static let planIncludedN = Text("%@ deliveries a month included", "%@ livraisons par mois incluses")
    static let planDiscountN = Text("%@ % off other deliveries", "%@ % de réduction sur les autres livraisons")
    static let planExpressIncluded = Text("Express at no extra charge", "Express sans supplément")
    static let plansNone = Text("No plans are offered at the moment.", "Aucune formule n’est proposée pour le moment.")
    static let subscribe = Text("Subscribe", "S’abonner")
    static let subIncomplete = Text("waiting for payment", "en attente de paiement")
    static let subActive = Text("active", "actif")
    static let subPastDue = Text("renewal payment failed", "paiement du renouvellement échoué")
    static let subEnded = Text("ended", "terminé")
    static let subRenews = Text("Renews on %@.", "Se renouvelle le %@.")
    static let subEnds = Text("Ends on %@; it will not renew.", "Prend fin le %@ ; il ne sera pas renouvelé.")
    static let subGrace = Text("The plan still applies until %@ while the payment is retried; update your card with the payment provider.",
                               "La formule s’applique encore jusqu’au %@ pendant que le paiement est retenté ; mettez à jour votre carte auprès du prestataire de paiement.")
    static let subIncludedUsed = Text("%@ of %@ included deliveries used this period.", "%@ des %@ livraisons incluses utilisées sur cette période.")
    static let subCancel = Text("Cancel at the end of the period", "Résilier à la fin de la période")
    static let subResume = Text("Keep my subscription", "Garder mon abonnement")
    static let subPay = Text("Complete the payment", "Terminer le paiement")
    static let subNotStarted = Text("No subscription was started.", "Aucun abonnement n’a été commencé.")
    static let subInvoices = Text("Invoices", "Factures")
    static let invoicePaid = Text("Paid", "Payée")
    static let invoiceFailed = Text("Payment failed", "Paiement échoué")
    static let subSandbox = Text("Test subscription: no money moves.", "Abonnement de test : aucun argent ne circule.")
    static let subSandboxPage = Text("The test subscription's page (renewals, failures)", "La page de l’abonnement de test (renouvellements, échecs)")
    static let planOnAccount = Text("Your subscription plan and the plans on offer:", "Votre abonnement et les formules proposées :")
    static let managePlans = Text("Plans", "Formules")
    static let planName = Text("Name", "Nom")
    static let planMonthlyPrice = Text("Monthly price (%@)", "Prix mensuel (%@)")
    static let planIncluded = Text("Included deliveries a month", "Livraisons incluses par mois")
    static let planDiscount = Text("Discount on other deliveries (%)", "Réduction sur les autres livraisons (%)")
    static let planActive = Text("Offered to new subscribers", "Proposée aux nouveaux abonnés")
    static let planOptions = Text("Express and availability", "Express et disponibilité")
    static let planWithdrawn = Text("withdrawn", "retirée")
    static let planNew = Text("A new plan", "Une nouvelle formule")
    static let planCreate = Text("Offer this plan", "Proposer cette formule")
    static let planAdminHint = Text("Changes apply to new subscribers; those already subscribed keep their terms until they subscribe again.",
                                    "Les changements s’appliquent aux nouveaux abonnés ; les abonnés actuels gardent leurs conditions jusqu’à un nouvel abonnement.")
    static let planSubscribers = Text("Subscribers", "Abonnés")
    static let planSubscribersN = Text("Paying subscribers: %@", "Abonnés payants : %@")
    static let subscribersNone = Text("No subscribers match.", "Aucun abonné ne correspond.")
    static let subscribersAllPlans = Text("All plans", "Toutes les formules")
    static let subscribersPaid = Text("Paying (active or renewal failed)", "Payants (actifs ou renouvellement échoué)")
    static let subscribersPeriod = Text("Period", "Période")
    static let subscribersIncluded = Text("Included deliveries used", "Livraisons incluses utilisées")
    static let subscribersSince = Text("Subscribed on", "Abonné le")
    static let subscribersGraceUntil = Text("Plan applies until %@", "La formule s’applique jusqu’au %@")
    static let subscribersTest = Text("test", "test")
    static let subscribersMore = Text("More subscribers", "Plus d’abonnés")
    static let errPlanGivesNothing = Text("A plan must include deliveries, a discount or express.", "Une formule doit inclure des livraisons, une réduction ou l’express.")
}

enum PlanCatalogue {
    static let all: [Text] = [
        .plPlan, .actPlanChanged, .subPlanTitle, .plansOnOffer, .planPerMonth, .planIncludedN, .planDiscountN, .planExpressIncluded, .plansNone,
        .subscribe, .subIncomplete, .subActive, .subPastDue, .subEnded, .subRenews, .subEnds, .subGrace, .subIncludedUsed, .subCancel,
        .subResume, .subPay, .subNotStarted, .subInvoices, .invoicePaid, .invoiceFailed, .subSandbox, .subSandboxPage, .planOnAccount,
        .managePlans, .planName, .planMonthlyPrice, .planIncluded, .planDiscount, .planActive, .planOptions, .planWithdrawn, .planNew, .planCreate,
        .planAdminHint, .errPlanGivesNothing, .planSubscribers, .planSubscribersN, .subscribersNone, .subscribersAllPlans, .subscribersPaid,
        .subscribersPeriod, .subscribersIncluded, .subscribersSince, .subscribersGraceUntil, .subscribersTest, .subscribersMore,
    ]
}
