import Foundation
import WaybillCore

/// The driver's offline queue (`outbox.js`): what it says while steps wait for the network; and the
/// installed app's update prompt (`ui.js`).
extension Text {
    static let outboxTitle = Text("Waiting to send", "En attente d’envoi")
    static let outboxWaiting = Text("waiting for the network", "en attente du réseau")
    static let outboxSending = Text("sending…", "envoi…")
    static let outboxSent = Text("sent", "envoyé")
    static let outboxRefused = Text("not recorded: %@", "non enregistré : %@")
    static let outboxDismiss = Text("Dismiss", "Retirer")
    static let outboxQueued = Text("No network: this is kept on the phone and sent as soon as the network is back.",
                                   "Pas de réseau : c’est gardé sur le téléphone et envoyé dès le retour du réseau.")
    static let outboxOpen = Text("Open", "Ouvrir")
    static let updateReady = Text("A new version of Waybill is ready.", "Une nouvelle version de Waybill est prête.")
    static let updateReload = Text("Update now", "Mettre à jour")
}

enum OutboxCatalogue {
    static let all: [Text] = [.outboxTitle, .outboxWaiting, .outboxSending, .outboxSent, .outboxRefused, .outboxDismiss, .outboxQueued, .outboxOpen,
                                .updateReady, .updateReload]
}

/// A driver's step form (accept, picked up, delivered, failed): an idempotency key drawn for this
/// page, so sending it twice (a double tap, a retry, the offline queue) does it once, and what the
/// offline queue (`outbox.js`) shows for it while it waits.
enum StepForm {
    /// Attributes for the `<form>` element.
    static func attributes(_ ctx: WebContext, _ action: OrderAction, _ order: some OrderColumns) throws -> String {
        attributes(ctx, action, id: try order.orderID, reference: order.reference)
    }

    /// The same for an order read plainly (its id always there).
    static func attributes(_ ctx: WebContext, _ action: OrderAction, _ order: OrderRow) -> String {
        attributes(ctx, action, id: order.id, reference: order.reference)
    }

    private static func attributes(_ ctx: WebContext, _ action: OrderAction, id: OrderID, reference: String) -> String {
        let label = switch action {
        case .accept: ctx.t(.accept)
        case .pickup: ctx.t(.pickedUp)
        case .deliver: ctx.t(.confirmDelivery)
        default: ctx.t(.markFailed)
        }
        return " data-outbox=\"\(WebRoutes.queuedStep((id, action)))\" data-outbox-label=\"\(h(reference + " · " + label))\""
    }

    /// The hidden field with a fresh key.
    static func key() -> String { "<input type=\"hidden\" name=\"idempotencyKey\" value=\"\(UUID().uuidString.lowercased())\">" }

    /// The queue's texts, for the page's `#outbox` region.
    static func region(_ ctx: WebContext) -> String {
        let texts: [String: String] = ["waiting": ctx.t(.outboxWaiting), "sending": ctx.t(.outboxSending), "sent": ctx.t(.outboxSent),
                                       "refused": ctx.t(.outboxRefused), "dismiss": ctx.t(.outboxDismiss), "queued": ctx.t(.outboxQueued),
                                       "open": ctx.t(.outboxOpen)]
        let json = String(decoding: (try? JSONSerialization.data(withJSONObject: texts, options: [.sortedKeys])) ?? Data("{}".utf8), as: UTF8.self)
        return "<section id=\"outbox\" class=\"outbox\" hidden aria-labelledby=\"outbox-title\" data-texts=\"\(h(json))\"><h2 id=\"outbox-title\">\(h(ctx.t(.outboxTitle)))</h2><ul aria-live=\"polite\"></ul></section>"
    }
}
