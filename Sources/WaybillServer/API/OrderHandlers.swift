import Foundation
import OpenAPIRuntime
import Vapor
import WaybillAPI
import WaybillCore

/// The orders part of `openapi.yaml`: translation between generated types and `Orders`.
extension APIHandler {
    var orders: Orders { get throws { Orders(request: try request) } }

    // MARK: tariff and quotes

    func getTariff(_ input: Operations.GetTariff.Input) async throws -> Operations.GetTariff.Output {
        let me = try await principal()
        return .ok(.init(body: .json(try Self.tariff(try await orders.tariff(for: me)))))
    }

    func putTariff(_ input: Operations.PutTariff.Input) async throws -> Operations.PutTariff.Output {
        let me = try await principal()
        guard case .json(let body) = input.body else { throw WaybillError.unsupportedBody }
        func rate(_ r: S.Rate) -> Tariff.Rate { Tariff.Rate(baseFee: r.baseFee, perKm: r.perKm, flatFee: r.flatFee) }
        let record = try await orders.replaceTariff(Tariff(
            currency: body.currency, small: rate(body.small), medium: rate(body.medium), large: rate(body.large),
            expressMultiplierPercent: body.expressMultiplierPercent, roundingIncrement: body.roundingIncrement), by: me)
        return .ok(.init(body: .json(try Self.tariff(record))))
    }

    func createQuote(_ input: Operations.CreateQuote.Input) async throws -> Operations.CreateQuote.Output {
        let me = try await principal()
        guard case .json(let body) = input.body else { throw WaybillError.unsupportedBody }
        let quote = try await orders.quote(try Self.quoteRequest(body.pickup, body.dropoff, body.weightClass, body.service,
                                                             counters: try Self.counterChoice(body.dropOffCounterId, body.collectionCounterId),
                                                             declaredValue: body.declaredValue, redeemPoints: body.redeemPoints), for: me)
        return .ok(.init(body: .json(S.Quote(price: Self.money(quote.price), distanceKm: quote.distanceKm,
                                             breakdown: try quote.breakdown.map(Self.priceLine),
                                             insurance: quote.insurance.map { Self.cover($0, currency: quote.price.currency) },
                                             points: quote.points.map { Self.redemption($0, currency: quote.price.currency) },
                                             plan: quote.plan.map { Self.planApplied($0, currency: quote.price.currency) }))))
    }

    // MARK: orders

    func createOrder(_ input: Operations.CreateOrder.Input) async throws -> Operations.CreateOrder.Output {
        let me = try await principal()
        guard case .json(let body) = input.body else { throw WaybillError.unsupportedBody }
        let request = OrderRequest(
            quote: try Self.quoteRequest(body.pickup, body.dropoff, body.weightClass, body.service,
                                     counters: try Self.counterChoice(body.dropOffCounterId, body.collectionCounterId),
                                     declaredValue: body.declaredValue, redeemPoints: body.redeemPoints),
            paymentMethod: try wire(body.paymentMethod),
            recipientName: body.recipient.name, recipientEmail: body.recipient.email, recipientPhone: body.recipient.phone,
            notes: body.notes, requireRecipientCode: body.requireRecipientCode ?? false)
        var slots: [(field: String, kind: SlotKind, id: SlotID)] = []
        if let id = body.pickupSlotId { slots.append(("pickupSlotId", .pickup, SlotID(rawValue: try Self.plainID(id, "pickupSlotId")))) }
        if let id = body.deliverySlotId { slots.append(("deliverySlotId", .delivery, SlotID(rawValue: try Self.plainID(id, "deliverySlotId")))) }
        if let id = body.dropOffSlotId { slots.append(("dropOffSlotId", .dropOff, SlotID(rawValue: try Self.plainID(id, "dropOffSlotId")))) }
        let created = try await orders.create(request, slots: slots, by: me, idempotencyKey: input.headers.idempotencyKey)
        let next = created.paymentURL.map { S.NextStep(action: .pay, paymentUrl: $0, sandbox: created.sandbox) }
            ?? S.NextStep(action: .none)
        return .created(.init(body: .json(S.OrderCreated(order: try Self.order(created.record), next: next))))
    }

    func listOrders(_ input: Operations.ListOrders.Input) async throws -> Operations.ListOrders.Output {
        let me = try await principal()
        let q = input.query
        var filter = try Self.listFilter(limit: q.limit, status: q.status, cursor: q.cursor)
        filter.customerID = try q.customerId.map { try Self.uuidParameter($0, "customerId") }
        filter.driverID = try q.driverId.map { try Self.uuidParameter($0, "driverId") }
        filter.from = q.from
        filter.to = q.to
        let page = try await orders.list(filter, for: me)
        return .ok(.init(body: .json(S.OrderPage(items: try page.records.map { try Self.order($0) }, nextCursor: page.nextCursor))))
    }

    func getOrder(_ input: Operations.GetOrder.Input) async throws -> Operations.GetOrder.Output {
        let me = try await principal()
        let record = try await orders.detail(try Self.uuid(input.path.orderId), for: me)
        // This shape always has the price: a caller who may not see money (the receiver) reads the shipment.
        guard PartyDetails.visible(to: record.capacities).money else { throw WaybillError.notFound }
        return .ok(.init(body: .json(try Self.order(record))))
    }

    /// The changed order as the caller sees it, with its history (no second lookup of the order).
    private func answer(_ order: Order, _ me: Principal) async throws -> S.Order {
        let orders = try self.orders
        return try Self.order(try await orders.load(order, capacities: orders.capacities(of: me, for: order)))
    }

    func confirmPayment(_ input: Operations.ConfirmPayment.Input) async throws -> Operations.ConfirmPayment.Output {
        let me = try await principal()
        let record = try await orders.confirmPayment(try Self.uuid(input.path.orderId), by: me)
        return .ok(.init(body: .json(try Self.order(record))))
    }

    func cancelOrder(_ input: Operations.CancelOrder.Input) async throws -> Operations.CancelOrder.Output {
        let me = try await principal()
        guard case .json(let body) = input.body else { throw WaybillError.unsupportedBody }
        let id: OrderID = try Self.uuid(input.path.orderId)
        let order = try await orders.cancel(id, reason: body.reason, by: me)
        return .ok(.init(body: .json(try await answer(order, me))))
    }

    func assignOrder(_ input: Operations.AssignOrder.Input) async throws -> Operations.AssignOrder.Output {
        let me = try await principal()
        guard case .json(let body) = input.body else { throw WaybillError.unsupportedBody }
        let id: OrderID = try Self.uuid(input.path.orderId)
        let order = try await orders.assign(id, to: try Self.uuidField(body.driverId, "driverId"), reassign: body.reassign ?? false, by: me)
        return .ok(.init(body: .json(try await answer(order, me))))
    }

    func acceptOrder(_ input: Operations.AcceptOrder.Input) async throws -> Operations.AcceptOrder.Output {
        let me = try await principal()
        let id: OrderID = try Self.uuid(input.path.orderId)
        let order = try await orders.accept(id, idempotencyKey: input.headers.idempotencyKey, by: me)
        return .ok(.init(body: .json(try await answer(order, me))))
    }

    func pickupOrder(_ input: Operations.PickupOrder.Input) async throws -> Operations.PickupOrder.Output {
        let me = try await principal()
        let id: OrderID = try Self.uuid(input.path.orderId)
        var cash: Money?, scanned: String?
        if case .json(let body) = input.body {
            cash = body.cashCollected.map { Money($0.amount, $0.currency) }
            scanned = body.scannedCode
        }
        let order = try await orders.pickup(id, cashCollected: cash, scannedCode: scanned, idempotencyKey: input.headers.idempotencyKey, by: me)
        return .ok(.init(body: .json(try await answer(order, me))))
    }

    func failOrder(_ input: Operations.FailOrder.Input) async throws -> Operations.FailOrder.Output {
        let me = try await principal()
        guard case .json(let body) = input.body else { throw WaybillError.unsupportedBody }
        let id: OrderID = try Self.uuid(input.path.orderId)
        let order = try await orders.fail(id, reason: try wire(body.reason), note: body.note,
                                          idempotencyKey: input.headers.idempotencyKey, by: me)
        return .ok(.init(body: .json(try await answer(order, me))))
    }

    func deliverOrder(_ input: Operations.DeliverOrder.Input) async throws -> Operations.DeliverOrder.Output {
        let me = try await principal()
        let id: OrderID = try Self.uuid(input.path.orderId)
        guard case .multipartForm(let form) = input.body else { throw WaybillError.unsupportedBody }
        var signature: [UInt8]?, photo: [UInt8]?, name: String?, code: String?, scanned: String?
        do {
            for try await part in form {
                switch part {
                case .scannedCode(let p): scanned = String(decoding: try await Self.collect(p.payload.body, field: "scannedCode", limit: 300), as: UTF8.self)
                case .signature(let p): signature = try await Self.collect(p.payload.body, field: "signature", limit: UploadLimits.signatureBytes)
                case .photo(let p): photo = try await Self.collect(p.payload.body, field: "photo", limit: UploadLimits.photoBytes)
                case .recipientName(let p): name = String(decoding: try await Self.collect(p.payload.body, field: "recipientName", limit: 4096), as: UTF8.self)
                case .code(let p): code = String(decoding: try await Self.collect(p.payload.body, field: "code", limit: 100), as: UTF8.self)
                case .undocumented: continue
                }
            }
        } catch let error as WaybillError {
            throw error
        } catch {
            // The runtime checks required and repeated parts as it reads: a missing part is reported
            // per field below; anything else is a malformed body.
            if signature != nil && name != nil {
                throw WaybillError(.badRequest, .invalidMultipart, "The multipart body is malformed or repeats a part.")
            }
        }
        guard let signature, let name else {
            var fields = FieldErrors()
            if signature == nil { fields.add("signature", "required") }
            if name == nil { fields.add("recipientName", "required") }
            throw WaybillError.validation(fields)
        }
        let order = try await orders.deliver(id, signature: .init(bytes: signature, field: "signature"),
                                             photo: photo.map { .init(bytes: $0, field: "photo") }, recipientName: name, code: code,
                                             scannedCode: scanned, idempotencyKey: input.headers.idempotencyKey, by: me)
        return .ok(.init(body: .json(try await answer(order, me))))
    }

    func addOrderPhoto(_ input: Operations.AddOrderPhoto.Input) async throws -> Operations.AddOrderPhoto.Output {
        let me = try await principal()
        let id: OrderID = try Self.uuid(input.path.orderId)
        guard case .multipartForm(let form) = input.body else { throw WaybillError.unsupportedBody }
        var photo: [UInt8]?
        do {
            for try await part in form {
                if case .photo(let p) = part { photo = try await Self.collect(p.payload.body, field: "photo", limit: UploadLimits.photoBytes) }
            }
        } catch let error as WaybillError {
            throw error
        } catch {
            if photo != nil { throw WaybillError(.badRequest, .invalidMultipart, "The multipart body is malformed or repeats a part.") }
        }
        guard let photo else { throw WaybillError.validation("photo", "required") }
        let file = try await orders.addPhoto(id, .init(bytes: photo, field: "photo"), by: me)
        return .created(.init(body: .json(try Self.file(file))))
    }

    func getOrderFile(_ input: Operations.GetOrderFile.Input) async throws -> Operations.GetOrderFile.Output {
        let me = try await principal()
        let (file, data) = try await orders.file(orderID: try Self.uuid(input.path.orderId), fileID: try Self.uuid(input.path.fileId), for: me)
        let body = HTTPBody(data)
        return .ok(.init(body: file.contentType == "image/png" ? .png(body) : .jpeg(body)))
    }

    /// The bytes of a form's `photo` part (`photo` picks it out of the operation's own part type), or
    /// nil when there is none; a malformed or repeated part is 400, a part over `limit` 413.
    static func photoPart<Part: Sendable>(of form: MultipartBody<Part>, limit: Int,
                                          _ photo: @escaping @Sendable (Part) -> HTTPBody?) async throws -> [UInt8]? {
        var bytes: [UInt8]?
        do {
            for try await part in form {
                if let body = photo(part) { bytes = try await collect(body, field: "photo", limit: limit) }
            }
        } catch let error as WaybillError {
            throw error
        } catch {
            throw WaybillError(.badRequest, .invalidMultipart, "The multipart body is malformed or repeats a part.")
        }
        return bytes
    }

    static func collect(_ body: HTTPBody, field: String, limit: Int) async throws -> [UInt8] {
        var bytes: [UInt8] = []
        for try await chunk in body {
            guard bytes.count + chunk.count <= limit else {
                throw WaybillError(.payloadTooLarge, .payloadTooLarge, "\(field) is larger than \(limit / 1024) KB.", fields: [field: "too_large"])
            }
            bytes.append(contentsOf: chunk)
        }
        return bytes
    }

    // MARK: statements and notifications

    func listInvoices(_ input: Operations.ListInvoices.Input) async throws -> Operations.ListInvoices.Output {
        let me = try await principal()
        let statements = try await orders.statements(month: input.query.month,
                                                     customerID: try input.query.customerId.map { try Self.uuidParameter($0, "customerId") }, for: me)
        let links = StatementLinks(secret: try request.application.waybill.config.jwtSecret)
        let base = try request.application.waybill.config.publicURL
        return .ok(.init(body: .json(S.StatementList(items: try statements.map { statement in
            try S.Statement(
                customer: Self.person(statement.customer, withEmail: true), month: statement.month,
                orders: statement.lines.map { line in
                    let o = line.order
                    return .init(id: try o.storedID.uuidString, reference: o.reference, createdAt: Self.date(o.createdAt),
                                 status: try wire(o.status), amount: Self.money(line.money), dropoffCity: o.dropoff.city)
                },
                total: Self.money(statement.total),
                pageUrl: "\(base)/statements/\(links.token(customerID: try statement.customer.storedID, month: statement.month))")
        }))))
    }

    func listNotifications(_ input: Operations.ListNotifications.Input) async throws -> Operations.ListNotifications.Output {
        let me = try await principal()
        let limit = input.query.limit ?? 50
        guard (1...100).contains(limit) else { throw WaybillError.invalidParameter("limit", "out_of_range") }
        let page = try await orders.notifications(for: me, unreadOnly: input.query.unread ?? false, cursor: input.query.cursor, limit: limit)
        return .ok(.init(body: .json(S.NotificationPage(items: try page.items.map(Self.notification), unreadCount: page.unread, nextCursor: page.next))))
    }

    func markAllNotificationsRead(_ input: Operations.MarkAllNotificationsRead.Input) async throws -> Operations.MarkAllNotificationsRead.Output {
        let me = try await principal()
        try await orders.markAllRead(for: me)
        return .ok(.init(body: .json(S.UnreadCount(unreadCount: 0))))
    }

    func getPaymentOptions(_ input: Operations.GetPaymentOptions.Input) async throws -> Operations.GetPaymentOptions.Output {
        let me = try await principal()
        let options = try await orders.paymentOptions(for: me)
        return .ok(.init(body: .json(S.PaymentOptions(methods: try options.methods.map { try wire($0, as: S.PaymentMethod.self) },
                                                      currency: options.currency))))
    }

    func markNotificationRead(_ input: Operations.MarkNotificationRead.Input) async throws -> Operations.MarkNotificationRead.Output {
        let me = try await principal()
        return .ok(.init(body: .json(try Self.notification(try await orders.markRead(try Self.uuid(input.path.notificationId), for: me)))))
    }

    // MARK: Stripe

    func stripeWebhook(_ input: Operations.StripeWebhook.Input) async throws -> Operations.StripeWebhook.Output {
        let req = try request
        guard let secret = req.application.waybill.config.stripe?.webhookSecret else {
            throw WaybillError(.serviceUnavailable, .webhooksNotConfigured, "This server has no STRIPE_WEBHOOK_SECRET.")
        }
        try await orders.handleStripeEvent(try Self.verifiedStripeEvent(req, signature: input.headers.stripeSignature, secret: secret))
        return .ok(.init(body: .json(Self.success)))
    }

    /// Travellers' connected accounts: Stripe's Connect endpoint, with its own secret.
    func stripeConnectWebhook(_ input: Operations.StripeConnectWebhook.Input) async throws -> Operations.StripeConnectWebhook.Output {
        let req = try request
        guard let secret = req.application.waybill.config.stripe?.connectWebhookSecret else {
            throw WaybillError(.serviceUnavailable, .webhooksNotConfigured, "This server has no STRIPE_CONNECT_WEBHOOK_SECRET.")
        }
        try await Travel(request: req).handleConnectEvent(try Self.verifiedStripeEvent(req, signature: input.headers.stripeSignature, secret: secret))
        return .ok(.init(body: .json(Self.success)))
    }

    func refundOrder(_ input: Operations.RefundOrder.Input) async throws -> Operations.RefundOrder.Output {
        let me = try await principal()
        guard case .json(let body) = input.body else { throw WaybillError.unsupportedBody }
        let order = try await orders.refundAfterDelivery(try Self.uuid(input.path.orderId), reason: body.reason, by: me)
        return .ok(.init(body: .json(try await answer(order, me))))
    }

    /// The event Stripe signed, parsed; 400 if the signature or the JSON is wrong.
    static func verifiedStripeEvent(_ req: Request, signature: String, secret: String) throws -> [String: Any] {
        // The signature covers the exact bytes Stripe sent, so verify those, not a re-encoding.
        let raw = req.body.data.map { Array($0.readableBytesView) } ?? []
        do {
            try StripeSignature.verify(payload: raw, header: signature, secret: secret)
        } catch {
            let reason = switch error { case .stale: "stale"; case .malformed: "malformed"; case .mismatch: "mismatch" }
            req.logger.warning("Stripe webhook refused: signature \(reason)")
            throw WaybillError(.badRequest, .invalidSignature, "The Stripe-Signature header does not match (\(reason)).")
        }
        guard let json = (try? JSONSerialization.jsonObject(with: Data(raw))) as? [String: Any] else {
            throw WaybillError(.badRequest, .invalidJSON, "The body is not valid JSON.")
        }
        return json
    }

    // MARK: mapping

    /// A query parameter that must be an id: 400 if it is not one.
    static func uuidParameter<Tag>(_ raw: String, _ field: String) throws -> Tagged<Tag, UUID> {
        guard let id = Tagged<Tag, UUID>(uuidString: raw) else { throw WaybillError.invalidParameter(field) }
        return id
    }

    static func uuidField<Tag>(_ raw: String, _ field: String) throws -> Tagged<Tag, UUID> {
        guard let id = Tagged<Tag, UUID>(uuidString: raw) else { throw WaybillError.validation(field, "invalid") }
        return id
    }

    static func date(_ millis: Int64) -> Date { Date(timeIntervalSince1970: TimeInterval(millis) / 1000) }

    static func money(_ money: Money) -> S.Money { S.Money(amount: money.amount, currency: money.currency) }

    static func priceLine(_ line: PriceLine) throws -> S.PriceLine {
        S.PriceLine(kind: try wire(line.kind), label: line.label, amount: line.amount)
    }

    /// A missing pickup or drop-off reads as empty (422 for each field) unless a counter stands for it.
    static func quoteRequest(_ pickup: S.PickupAddress?, _ dropoff: S.Address?, _ weight: S.WeightClass, _ service: S.ServiceLevel,
                             counters: CounterChoice = CounterChoice(), declaredValue: Int? = nil, redeemPoints: Int? = nil) throws -> QuoteRequest {
        QuoteRequest(
            pickup: PickupInput(useAccountAddress: pickup?.useAccountAddress ?? false, address: AddressInput(
                street: pickup?.street, postalCode: pickup?.postalCode, city: pickup?.city, country: pickup?.country,
                latitude: pickup?.latitude, longitude: pickup?.longitude)),
            dropoff: AddressInput(street: dropoff?.street, postalCode: dropoff?.postalCode, city: dropoff?.city,
                                  country: dropoff?.country, latitude: dropoff?.latitude, longitude: dropoff?.longitude),
            weightClass: try wire(weight), service: try wire(service),
            counters: counters, declaredValue: declaredValue, redeemPoints: redeemPoints)
    }

    static func planApplied(_ p: PlanApplied, currency: String) -> S.PlanApplied {
        S.PlanApplied(name: p.name, included: p.included, discount: money(Money(p.discount, currency)))
    }

    static func redemption(_ r: LoyaltyRedemption, currency: String) -> S.LoyaltyRedemption {
        S.LoyaltyRedemption(points: r.points, discount: money(Money(r.discount, currency)))
    }

    static func cover(_ cover: InsuranceCover, currency: String) -> S.InsuranceCover {
        S.InsuranceCover(declaredValue: money(Money(cover.declaredValue, currency)), premium: money(Money(cover.premium, currency)))
    }

    static func counterChoice(_ dropOff: String?, _ collection: String?) throws -> CounterChoice {
        CounterChoice(dropOffID: try dropOff.map { try plainID($0, "dropOffCounterId").uuidString },
                      collectionID: try collection.map { try plainID($0, "collectionCounterId").uuidString })
    }

    static func tariff(_ record: TariffRecord) throws -> S.Tariff {
        let t = try record.tariff
        func rate(_ r: Tariff.Rate) -> S.Rate { S.Rate(baseFee: r.baseFee, perKm: r.perKm, flatFee: r.flatFee) }
        return S.Tariff(
            value1: S.TariffInput(currency: t.currency, small: rate(t.small), medium: rate(t.medium), large: rate(t.large),
                                  expressMultiplierPercent: t.expressMultiplierPercent, roundingIncrement: t.roundingIncrement),
            value2: .init(version: record.id ?? 0, updatedAt: date(record.createdAt)))
    }

    static func person(_ user: some PersonNaming, withEmail: Bool, withLastName: Bool = true) throws -> S.PersonSummary {
        S.PersonSummary(id: try user.personID.uuidString, firstName: user.firstName, lastName: withLastName ? user.lastName : nil,
                        email: withEmail ? user.email : nil, companyName: user.companyName, role: S.Role(user.role))
    }

    /// The same for a person read plainly, whose id is always there (no `User` model to lack one).
    static func person(_ row: PersonRow, withEmail: Bool, withLastName: Bool = true) -> S.PersonSummary {
        S.PersonSummary(id: row.personID.uuidString, firstName: row.firstName, lastName: withLastName ? row.lastName : nil,
                        email: withEmail ? row.email : nil, companyName: row.companyName, role: S.Role(row.role))
    }

    static func address(_ a: Address) -> S.Address {
        S.Address(street: a.street, postalCode: a.postalCode, city: a.city, country: a.country,
                  latitude: a.coordinate?.latitude, longitude: a.coordinate?.longitude)
    }

    /// A stored file as the API shows it. Every `ShipmentFileKind` has its schema case (`FileKindTests`),
    /// so any step's file can be shown; `wire` would fail this one request, not the process, if not.
    static func file(_ file: OrderFile) throws -> S.OrderFile {
        let id = try file.storedID
        return S.OrderFile(id: id.uuidString, kind: try wire(file.kind), contentType: file.contentType,
                           url: "/api/v1/orders/\(file.orderID.uuidString)/files/\(id.uuidString)",
                           width: file.width, height: file.height, createdAt: date(file.createdAt))
    }

    static func notification(_ n: Notification) throws -> S.Notification {
        S.Notification(id: try n.storedID.uuidString, kind: n.kind, title: n.title, body: n.body, orderId: n.orderID?.uuidString,
                       createdAt: date(n.createdAt), read: n.readAt != nil)
    }

    static func order(_ record: OrderRecord) throws -> S.Order {
        let o = record.order
        let details = PartyDetails.visible(to: record.capacities)
        let recipient = o.recipient
        let signature = record.files.first { $0.kind == .signature }
        let proof: S.Proof? = try signature.flatMap { signature in
            guard let signedBy = o.signedBy, let at = o.deliveredAt else { return nil }
            return S.Proof(recipientName: signedBy, deliveredAt: date(at), signature: try file(signature),
                           photo: try record.files.first { $0.kind == .deliveryPhoto }.map(file),
                           recipientCodeVerified: o.requireRecipientCode ? true : nil)
        }
        let full = !record.events.isEmpty
        return S.Order(
            id: o.id.uuidString, reference: o.reference, status: try wire(o.status),
            createdAt: date(o.createdAt), updatedAt: date(o.updatedAt),
            customer: person(record.customer, withEmail: details.customerEmail),
            driver: record.driver.map { person($0, withEmail: details.driverEmail, withLastName: details.staffLastNames) },
            pickup: address(o.pickup), dropoff: address(o.dropoff),
            weightClass: try wire(o.weightClass), service: try wire(o.service),
            recipient: S.Recipient(name: recipient.name, email: details.recipientEmail ? recipient.email : nil,
                                   phone: details.recipientPhone ? recipient.phone : nil),
            notes: o.notes, requireRecipientCode: o.requireRecipientCode,
            price: money(o.price), distanceKm: o.distanceMeters.map { Double(($0 + 50) / 100) / 10 },
            breakdown: full ? try o.breakdown.map(priceLine) : nil,
            insurance: o.declaredValue.map { cover(InsuranceCover(declaredValue: $0, premium: o.insurancePremium ?? 0), currency: o.currency) },
            points: o.pointsRedeemed.map { redemption(LoyaltyRedemption(points: $0, discount: o.pointsDiscount ?? 0), currency: o.currency) },
            plan: o.planName.map { planApplied(PlanApplied(name: $0, included: o.planIncluded ?? false, discount: o.planDiscount ?? 0), currency: o.currency) },
            payment: S.Payment(
                method: try wire(o.paymentMethod),
                status: paymentStatus(o.paymentStatus), amount: money(o.price), sandbox: o.sandbox,
                paidAt: o.paidAt.map(date), refundedAt: o.refundedAt.map(date),
                cashCollected: o.cashCollected.map { money(Money($0, o.currency)) }),
            failure: try o.failureReason.map { .init(reason: try wire($0), note: o.failureNote) },
            cancellationReason: o.cancellationReason,
            proof: proof,
            photos: full ? try record.files.filter { $0.kind == .parcelPhoto }.map(file) : nil,
            events: full ? try record.events.map { event, actor in
                S.OrderEvent(id: event.id ?? 0, _type: event.type, status: try event.status.map { try wire($0, as: S.OrderStatus.self) },
                             at: date(event.at), actor: actor.map { person($0, withEmail: false, withLastName: details.staffLastNames || $0.personID == o.customerID) },
                             note: event.note)
            } : nil,
            availableActions: try record.actions.map { try wire($0, as: S.OrderAction.self) },
            tracking: record.tracking.map { tracking in
                S.OrderTracking(trackingUrl: tracking.trackingURL,
                                driverPosition: tracking.position.map(position),
                                eta: tracking.eta.map(arrival))
            })
    }

    static func paymentStatus(_ status: Order.PaymentStatus) -> S.Payment.StatusPayload {
        switch status {
        case .awaiting: .awaiting
        case .paid, .refundPending: .paid
        case .refunded: .refunded
        case .dueOnPickup: .dueOnPickup
        case .collected: .collected
        case .invoiced: .invoiced
        case .void: .void
        }
    }
}
