import Foundation
import OpenAPIRuntime
import Vapor
import WaybillAPI
import WaybillCore

/// `/shipments`: translation only. Who sees what is `ShipmentVisibility` (WaybillCore), applied here
/// field by field; the service decides who sees the shipment at all.
extension APIHandler {
    func listShipments(_ input: Operations.ListShipments.Input) async throws -> Operations.ListShipments.Output {
        let me = try await principal()
        let q = input.query
        var filter = try Self.listFilter(limit: q.limit, status: q.status, cursor: q.cursor)
        filter.box = try q.box.map { try wire($0, as: ShipmentBox.self) }
        let page = try await orders.list(filter, for: me)
        return .ok(.init(body: .json(S.ShipmentPage(
            items: try page.records.map { try Self.shipment(ShipmentRecord(record: $0)) }, nextCursor: page.nextCursor,
            boxes: try OrderPolicy.boxes(for: me.caller).map { try wire($0, as: S.ShipmentBox.self) }))))
    }

    func getShipment(_ input: Operations.GetShipment.Input) async throws -> Operations.GetShipment.Output {
        let me = try await principal()
        return .ok(.init(body: .json(try Self.shipment(try await orders.shipment(try Self.uuid(input.path.shipmentId), for: me)))))
    }

    func confirmReceipt(_ input: Operations.ConfirmReceipt.Input) async throws -> Operations.ConfirmReceipt.Output {
        let me = try await principal()
        let id: OrderID = try Self.uuid(input.path.shipmentId)
        var photo: [UInt8]?, scanned: String?
        switch input.body {
        case .multipartForm(let form):
            do {
                for try await part in form {
                    switch part {
                    case .photo(let p): photo = try await Self.collect(p.payload.body, field: "photo", limit: UploadLimits.photoBytes)
                    case .scannedCode(let p): scanned = String(decoding: try await Self.collect(p.payload.body, field: "scannedCode", limit: 300), as: UTF8.self)
                    case .undocumented: continue
                    }
                }
            } catch let error as WaybillError {
                throw error
            } catch {
                throw WaybillError(.badRequest, .invalidMultipart, "The multipart body is malformed or repeats a part.")
            }
        case .json(let body): scanned = body.scannedCode
        }
        let orders = try self.orders
        _ = try await orders.confirmReceipt(id, photo: photo.map { .init(bytes: $0, field: "photo") }, scannedCode: scanned, by: me)
        return .ok(.init(body: .json(try Self.shipment(try await orders.shipment(id, for: me)))))
    }

    func scanLabel(_ input: Operations.ScanLabel.Input) async throws -> Operations.ScanLabel.Output {
        let me = try await principal()
        guard case .json(let body) = input.body else { throw WaybillError.unsupportedBody }
        let (order, step) = try await Handovers(request: try request).lookup(body.code, by: me)
        return .ok(.init(body: .json(.init(shipmentId: try order.storedID.uuidString, reference: order.reference,
                                           status: try wire(order.status),
                                           step: step.flatMap { .init(rawValue: $0.rawValue) }))))
    }

    /// The ledger's sums and entries; payouts to carriers only for staff.
    static func ledger(_ entries: [LedgerEntry], staff: Bool, currency: String) throws -> S.ShipmentMoney {
        let balance = try Orders.ledgerBalance(entries) ?? LedgerBalance(currency: currency)
        let shown = entries.filter { staff || $0.kind.carrierSide == 0 && $0.kind != .platformFee }
        return S.ShipmentMoney(
            paid: money(Money(balance.paidByCustomer, balance.currency)), refunded: money(Money(balance.refunded, balance.currency)),
            paidOut: staff ? money(Money(balance.paidOut, balance.currency)) : nil,
            entries: try shown.map { .init(kind: try wire($0.kind), amount: money(Money($0.amount, $0.currency)), at: date($0.at)) })
    }

    /// A list's page size (1 to 100, 50 by default), status filter and cursor, from the query.
    static func listFilter(limit: Int?, status: String?, cursor: String?) throws -> Orders.ListFilter {
        var filter = Orders.ListFilter()
        filter.limit = limit ?? 50
        guard (1...100).contains(filter.limit) else { throw WaybillError.invalidParameter("limit", "out_of_range") }
        filter.statuses = try statuses(status)
        filter.cursor = cursor
        return filter
    }

    static func statuses(_ raw: String?) throws -> [OrderStatus] {
        guard let raw else { return [] }
        return try raw.split(separator: ",").map { part in
            guard let status = OrderStatus(rawValue: part.trimmingCharacters(in: .whitespaces)) else {
                throw WaybillError.invalidParameter("status")
            }
            return status
        }
    }

    static func shipment(_ shipment: ShipmentRecord) throws -> S.Shipment {
        let record = shipment.record, o = record.order
        let seen = shipment.visibility
        let full = shipment.detail
        let recipient = o.recipient
        let files = Dictionary(uniqueKeysWithValues: try record.files.map { (try $0.storedID, $0) })
        func someone(_ id: UserID?) -> S.PersonSummary? {
            id.flatMap { shipment.people[$0] }.map { person($0, withEmail: seen.carrierEmail, withLastName: seen.carrierLastNames) }
        }
        return try S.Shipment(
            id: o.id.uuidString, reference: o.reference, status: wire(o.status),
            createdAt: date(o.createdAt), updatedAt: date(o.updatedAt),
            roles: shipment.roles.sorted { $0.rawValue < $1.rawValue }.map { try wire($0, as: S.ShipmentRole.self) },
            sender: person(record.customer, withEmail: seen.senderEmail),
            receiver: S.ShipmentReceiver(name: recipient.name, email: seen.receiverEmail ? recipient.email : nil,
                                         phone: seen.receiverPhone ? recipient.phone : nil),
            pickup: address(o.pickup), dropoff: address(o.dropoff),
            weightClass: wire(o.weightClass), service: wire(o.service),
            notes: o.notes, requireRecipientCode: o.requireRecipientCode, recipientCode: record.recipientCode,
            price: seen.money ? money(o.price) : nil,
            payment: seen.money || seen.amountDue ? S.Payment(
                method: wire(o.paymentMethod),
                status: paymentStatus(o.paymentStatus), amount: money(o.price), sandbox: o.sandbox,
                paidAt: o.paidAt.map(date), refundedAt: o.refundedAt.map(date),
                cashCollected: o.cashCollected.map { money(Money($0, o.currency)) }) : nil,
            money: full && seen.money ? try ledger(shipment.ledger, staff: shipment.roles.contains(.manager), currency: o.currency) : nil,
            legs: full ? shipment.legs.map { leg in
                S.Leg(position: leg.position, kind: try wire(leg.kind), status: try wire(leg.status),
                      from: address(leg.from.address), to: address(leg.to.address),
                      windowStart: leg.windowStart.map(date), windowEnd: leg.windowEnd.map(date),
                      carrierCode: leg.carrierCode, trackingNumber: leg.trackingNumber,
                      assignee: someone(leg.assigneeID), updatedAt: date(leg.updatedAt))
            } : nil,
            handOvers: full ? shipment.handOvers.map { handOver in
                let proof = handOver.proof
                return S.HandOver(
                    kind: try wire(handOver.kind), leg: handOver.legPosition, at: date(handOver.at),
                    by: someone(handOver.actorID),
                    proof: .init(kinds: try proof.kinds.sorted { $0.rawValue < $1.rawValue }.map { try wire($0) },
                                 signedBy: seen.proofs ? proof.signedBy : nil,
                                 signature: seen.proofs ? try proof.signatureFileID.flatMap { files[$0] }.map(file) : nil,
                                 photo: seen.proofs ? try proof.photoFileID.flatMap { files[$0] }.map(file) : nil))
            } : nil,
            photos: full && seen.proofs ? try record.files.filter { $0.kind == .parcelPhoto }.map(file) : nil,
            files: full && seen.proofs ? try record.files.filter(\.kind.shownWithShipment).map(file) : nil,
            events: full ? record.events.map { event, actor in
                // Notes can carry money (the cash collected): only for those who see it.
                S.OrderEvent(id: event.id ?? 0, _type: event.type, status: try event.status.map { try wire($0, as: S.OrderStatus.self) },
                             at: date(event.at), actor: actor.map { person($0, withEmail: false, withLastName: seen.carrierLastNames || $0.personID == o.customerID) },
                             note: seen.money ? event.note : nil)
            } : nil,
            availableActions: shipment.availableActions.map { action in
                guard let known = S.ShipmentAction(rawValue: action) else {
                    throw WaybillError.inconsistent("shipment action \(action) has no S.ShipmentAction")
                }
                return known
            },
            tracking: record.tracking.map { tracking in
                S.OrderTracking(trackingUrl: seen.trackingLink ? tracking.trackingURL : nil,
                                driverPosition: tracking.position.map(position), eta: tracking.eta.map(arrival))
            })
    }
}
