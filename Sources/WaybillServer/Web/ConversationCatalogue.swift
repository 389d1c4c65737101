import Foundation
import WaybillCore

/// Conversations' strings, in English and French.
extension Text {
    static let messages = Text("Messages", "Messages")
    static let messagesIntro = Text("Talk with the people of your deliveries: the driver or traveller, the sender, the receiver, and staff; or with one of them privately.",
                                    "Échangez avec les personnes de vos livraisons : le livreur ou le voyageur, l’expéditeur, le destinataire et l’équipe ; ou avec l’une d’elles en privé.")
    static let noConversations = Text("No conversations yet. Open one from a delivery’s page.", "Aucune conversation pour l’instant. Ouvrez-en une depuis la page d’une livraison.")
    static let messageTheParties = Text("Messages", "Messages")
    static let conversationAbout = Text("Delivery %@", "Livraison %@")
    static let conversationRequest = Text("Traveller request", "Demande à un voyageur")
    static let withPeople = Text("With %@", "Avec %@")
    static let unreadMessages = Text("%@ unread", "%@ non lus")
    static let writeMessage = Text("Your message", "Votre message")
    static let send = Text("Send", "Envoyer")
    static let edited = Text("edited", "modifié")
    static let messageDeleted = Text("Message deleted", "Message supprimé")
    static let messageHidden = Text("Hidden by the moderators", "Masqué par les modérateurs")
    static let photoFrom = Text("Photo from %@", "Photo de %@")
    static let addPhoto = Text("Add a photo (optional)", "Ajouter une photo (facultatif)")
    static let photoMessage = Text("Photo", "Photo")
    static let deleteMessage = Text("Delete", "Supprimer")
    static let editMessage = Text("Edit", "Modifier")
    static let saveMessage = Text("Save", "Enregistrer")
    static let readBy = Text("Read", "Lu")
    static let you = Text("You", "Vous")
    static let conversationClosedNote = Text("This conversation is closed: it can be read, no longer written to.",
                                             "Cette conversation est fermée : elle peut être lue, plus complétée.")
    static let conversationMaskedNote = Text("Until the parcel is paid, phone numbers and email addresses are hidden: arrange everything here.",
                                             "Tant que le colis n’est pas payé, les numéros de téléphone et adresses e-mail sont masqués : organisez tout ici.")
    static let observerNote = Text("You read this conversation as staff; writing in it makes you a participant.",
                                   "Vous lisez cette conversation en tant qu’équipe ; y écrire fait de vous un participant.")
    static let noMessagesYet = Text("No messages yet.", "Aucun message pour l’instant.")
    static let statusMessage = Text("Status: %@", "Statut : %@")
    static let sharedDelivery = Text("Shared delivery %@", "Livraison partagée %@")
    static let reportMessage = Text("Report", "Signaler")
    static let reportReason = Text("Why", "Pourquoi")
    static let reportSent = Text("Thank you: the moderators will look at it.", "Merci : les modérateurs vont l’examiner.")
    static let messagePreviews = Text("Show the text of new messages in push notifications", "Afficher le texte des nouveaux messages dans les notifications push")
    static let savePreviews = Text("Save", "Enregistrer")
    static let openTracking = Text("Open its tracking", "Ouvrir son suivi")
    static let roleSender = Text("sender", "expéditeur")
    static let roleCarrier = Text("carrier", "transporteur")
    static let roleReceiver = Text("receiver", "destinataire")
    static let roleStaff = Text("staff", "équipe")
    static let rolePeer = Text("direct", "direct")
    static let roleCounter = Text("counter", "guichet")
    static let conversationWith = Text("Conversation with %@", "Conversation avec %@")
    static let writePrivately = Text("Write to %@ privately", "Écrire à %@ en privé")
    static let directClosedNote = Text("You no longer share a delivery or a parcel: this conversation can be read, no longer written to.",
                                       "Vous ne partagez plus de livraison ni de colis : cette conversation peut être lue, plus complétée.")
    static let reasonHarassment = Text("Harassment", "Harcèlement")
    static let reasonUnsafe = Text("Unsafe behaviour", "Comportement dangereux")
    static let reasonFake = Text("Fake profile", "Faux profil")
    static let reasonSpam = Text("Spam", "Spam")
    static let reasonInappropriate = Text("Inappropriate content", "Contenu inapproprié")
    static let reasonOther = Text("Other", "Autre")

    static func role(_ role: ConversationRole) -> Text {
        switch role {
        case .sender: .roleSender
        case .carrier: .roleCarrier
        case .receiver: .roleReceiver
        case .staff: .roleStaff
        case .peer: .rolePeer
        case .counter: .roleCounter
        }
    }

    static func reason(_ reason: ReportReason) -> Text {
        switch reason {
        case .harassment: .reasonHarassment
        case .unsafeBehaviour: .reasonUnsafe
        case .fakeProfile: .reasonFake
        case .spam: .reasonSpam
        case .inappropriateContent: .reasonInappropriate
        case .other: .reasonOther
        }
    }
}
