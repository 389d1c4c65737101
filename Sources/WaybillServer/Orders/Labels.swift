import Fluent
import Foundation
import SQLKit
import Vapor
import WaybillCore
import WaybillLabels

extension Text {
    static let labelScanNote = Text("Scan this code at every hand-over", "Scannez ce code à chaque remise du colis")
}

/// Shipping labels as PDF (issue "Counters, timeslots and QR hand-overs", item 3): the sender, the
/// receiver, the reference, a QR code carrying the shipment's hand-over token (`/h/{token}`, never
/// the shipment's id) and a Code 128 of the reference; A6, or four to an A4 sheet. Who may print is
/// `HandOverPolicy.mayPrintLabel`.
struct Labels: WaybillService {
    let services: WaybillServices
    let db: any Database
    let logger: Logger

    /// One shipment's label, for whoever may print it (404 for those who may not see it, 403 for
    /// those who see it but do not handle it, 409 before it is paid or once it ended).
    func label(_ id: OrderID, layout: LabelLayout, lang: Lang, by me: Principal) async throws -> [UInt8] {
        let orders = Orders(services: services, db: db, logger: logger)
        let order = try await orders.visibleOrder(id, to: me)
        let capacities = orders.capacities(of: me, for: order)
        guard HandOverPolicy.mayPrintLabel(as: capacities, status: .pending) else { throw WaybillError.forbidden }
        guard HandOverPolicy.mayPrintLabel(as: capacities, status: order.status) else {
            throw WaybillError.wrongStatus(order.status, "This shipment is \(order.status.rawValue): its label cannot be printed now.")
        }
        return try await pdf([order], layout: layout, lang: lang)
    }

    /// Labels of several shipments, in the order given, for dispatch (at most the board's bulk size).
    func labels(_ ids: [OrderID], layout: LabelLayout, lang: Lang, by me: Principal) async throws -> [UInt8] {
        let found = try await Orders(services: services, db: db, logger: logger).labels(ids, by: me).map(\.order)
        return try await pdf(found.filter { HandOverPolicy.mayPrintLabel(as: [.manager], status: $0.status) }, layout: layout, lang: lang)
    }

    func pdf(_ orders: [Order], layout: LabelLayout, lang: Lang) async throws -> [UInt8] {
        var contents: [LabelContent] = []
        guard let sql = db.tracedSQL else { return ShippingLabel.pdf([], layout: layout) }
        let customers = try await Orders.people(Array(Set(orders.map(\.customerID))), on: sql)
        for order in orders {
            let token = try await Self.handoverToken(of: order, on: db, services: services)
            let customer = customers[order.customerID]
            let sender = [customer?.companyName ?? customer?.displayName ?? "", order.pickup.street, "\(order.pickup.postalCode) \(order.pickup.city)"]
            let receiver = [order.recipient.name, order.dropoff.street, "\(order.dropoff.postalCode) \(order.dropoff.city)"]
            let service = (order.service == .express ? Text.express : Text.standard).in(lang) + " · " + Self.weight(order.weightClass, lang)
            contents.append(LabelContent(reference: order.reference, service: service, senderTitle: Text.labelFrom.in(lang),
                                         receiverTitle: Text.labelTo.in(lang), sender: sender, receiver: receiver,
                                         qrPayload: services.config.publicURL + WebRoutes.handover(token), note: Text.labelScanNote.in(lang),
                                         date: Self.day(order.createdAt, lang)))
        }
        return ShippingLabel.pdf(contents, layout: layout, title: Text.labelsTitle.in(lang))
    }

    /// The shipment's hand-over token, made on first use for shipments from before labels.
    static func handoverToken(of order: Order, on db: any Database, services: WaybillServices) async throws -> String {
        if let token = order.handoverToken { return token }
        let token = Tracking.newTrackingToken(), orderID = try order.storedID
        try await db.writeTransaction(services) { db in
            guard let sql = db.tracedSQL else { return }
            try await sql.update("orders").set("handover_token", to: SQLBind(token)).where("id", .equal, SQLBind(orderID))
                .where("handover_token", .is, SQLLiteral.null).run()
            WrittenChanges.note(order: order.id, caches: services.caches)
        }
        // Someone else's first print may have won: theirs is the one.
        let stored = try await Order.find(orderID, on: db)?.handoverToken ?? token
        order.handoverToken = stored
        return stored
    }

    static func weight(_ weight: WeightClass, _ lang: Lang) -> String {
        switch weight {
        case .small: Text.weightSmall.in(lang)
        case .medium: Text.weightMedium.in(lang)
        case .large: Text.weightLarge.in(lang)
        }
    }

    static func day(_ millis: Int64, _ lang: Lang) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: lang == .fr ? "fr_CH" : "en_GB")
        formatter.timeZone = TimeZone(identifier: "Europe/Zurich")
        formatter.dateStyle = .medium
        return formatter.string(from: Date(timeIntervalSince1970: TimeInterval(millis) / 1000))
    }
}
