import Foundation
import OpenAPIRuntime

/// An order as the server describes it: status, price, payment, driver, proof, tracking.
public typealias Order = Components.Schemas.Order
/// A page of orders; pass `nextCursor` back for the next one.
public typealias OrderPage = Components.Schemas.OrderPage
/// A price for a delivery, with how it was reached.
public typealias PriceQuote = Components.Schemas.Quote
/// A new order and what to do next (pay on `next.paymentUrl`, or nothing).
public typealias OrderCreated = Components.Schemas.OrderCreated

/// Where the parcel is collected.
public enum Pickup: Sendable, Equatable {
    /// The address on the customer's account, optionally pinned on a map.
    case accountAddress(Coordinate? = nil)
    case address(Address)
    /// "I will drop it at a counter": the sender brings it there (not with cash payment).
    case counter(CounterID)
}

/// What to deliver, from where to where: enough for a price.
public struct Delivery: Sendable, Equatable {
    public var pickup: Pickup
    public var dropoff: Address
    public var weightClass: WeightClass
    public var service: ServiceLevel
    /// The receiver collects the parcel at this counter (with their code) instead of at `dropoff`.
    public var collectAt: CounterID?
    /// Insure the parcel for this value (minor units): the premium is a line of the price (``InsuranceTable``).
    public var declaredValue: Int?
    /// Spend this many loyalty points on the price (``loyalty(limit:)``): their value is the last line.
    public var redeemPoints: Int?

    public init(pickup: Pickup = .accountAddress(), dropoff: Address, weightClass: WeightClass = .small,
                service: ServiceLevel = .standard, collectAt: CounterID? = nil, declaredValue: Int? = nil, redeemPoints: Int? = nil) {
        self.pickup = pickup
        self.dropoff = dropoff
        self.weightClass = weightClass
        self.service = service
        self.collectAt = collectAt
        self.declaredValue = declaredValue
        self.redeemPoints = redeemPoints
    }

    /// Collected at a counter: no drop-off address.
    public init(pickup: Pickup = .accountAddress(), collectAt counter: CounterID, weightClass: WeightClass = .small, service: ServiceLevel = .standard) {
        self.init(pickup: pickup, dropoff: Address(street: "", postalCode: "", city: ""), weightClass: weightClass, service: service, collectAt: counter)
    }

    var dropOffCounterId: String? { if case .counter(let id) = pickup { id.uuidString.lowercased() } else { nil } }
    var collectionCounterId: String? { collectAt?.uuidString.lowercased() }
    var pickupSchema: Components.Schemas.PickupAddress? { if case .counter = pickup { nil } else { pickup.schema } }
    var dropoffSchema: Components.Schemas.Address? { collectAt == nil ? dropoff.schema : nil }
}

/// An order as the customer places it.
public struct NewOrder: Sendable, Equatable {
    public var delivery: Delivery
    public var paymentMethod: PaymentMethod
    public var recipient: Recipient
    public var notes: String?
    /// Mail the recipient a code at pickup that the driver must enter on delivery (needs `recipient.email`).
    public var requireRecipientCode: Bool
    /// Timeslots chosen with the order (``WaybillSession/slots(_:postalCode:from:days:)``), booked in
    /// the order's own transaction: no seat left and no order is made (`slot_full`).
    public var pickupSlot: SlotID?
    public var deliverySlot: SlotID?
    /// A drop-off slot at the drop-off counter (``WaybillSession/dropOffSlots(at:from:days:)``).
    public var dropOffSlot: SlotID?

    public init(delivery: Delivery, paymentMethod: PaymentMethod, recipient: Recipient, notes: String? = nil,
                requireRecipientCode: Bool = false, pickupSlot: SlotID? = nil, deliverySlot: SlotID? = nil, dropOffSlot: SlotID? = nil) {
        self.dropOffSlot = dropOffSlot
        self.delivery = delivery
        self.paymentMethod = paymentMethod
        self.recipient = recipient
        self.notes = notes
        self.requireRecipientCode = requireRecipientCode
        self.pickupSlot = pickupSlot
        self.deliverySlot = deliverySlot
    }
}

extension Address {
    var schema: Components.Schemas.Address {
        .init(street: street, postalCode: postalCode, city: city, country: country,
              latitude: coordinate?.latitude, longitude: coordinate?.longitude)
    }
}

extension Pickup {
    var schema: Components.Schemas.PickupAddress {
        switch self {
        case .accountAddress(let pin):
            .init(useAccountAddress: true, latitude: pin?.latitude, longitude: pin?.longitude)
        case .address(let address):
            .init(street: address.street, postalCode: address.postalCode, city: address.city, country: address.country,
                  latitude: address.coordinate?.latitude, longitude: address.coordinate?.longitude)
        case .counter:
            .init()
        }
    }
}

extension Money {
    var schema: Components.Schemas.Money { .init(amount: amount, currency: currency) }
}

extension Components.Schemas.Money {
    /// As WaybillCore's value type, which formats itself (`CHF 24.50`).
    public var money: Money { Money(amount, currency) }
}

extension Order {
    /// The order's id, typed (an order's id cannot be passed where a user's is meant).
    public var orderID: OrderID { OrderID(uuidString: id)! }
    /// The status as WaybillCore's value type.
    public var orderStatus: OrderStatus { OrderStatus(rawValue: status.rawValue)! }
}

extension WaybillSession {
    // MARK: Customers

    /// The price of a delivery, without ordering it.
    public func quote(_ delivery: Delivery) async throws(WaybillError) -> PriceQuote {
        try await call { client in
            try await client.createQuote(body: .json(.init(
                pickup: delivery.pickupSchema, dropoff: delivery.dropoffSchema,
                weightClass: .init(rawValue: delivery.weightClass.rawValue)!,
                service: .init(rawValue: delivery.service.rawValue)!,
                dropOffCounterId: delivery.dropOffCounterId, collectionCounterId: delivery.collectionCounterId,
                declaredValue: delivery.declaredValue, redeemPoints: delivery.redeemPoints))).ok.body.json
        }
    }

    /// Orders a delivery. Card and TWINT orders wait for payment at `next.paymentUrl`; cash and
    /// invoice orders are confirmed at once. Retrying with the same `idempotencyKey` returns the
    /// same order instead of a second one.
    public func placeOrder(_ order: NewOrder, idempotencyKey: String = UUID().uuidString) async throws(WaybillError) -> OrderCreated {
        try await call { client in
            try await client.createOrder(
                headers: .init(idempotencyKey: idempotencyKey),
                body: .json(.init(
                    pickup: order.delivery.pickupSchema, dropoff: order.delivery.dropoffSchema,
                    dropOffCounterId: order.delivery.dropOffCounterId, collectionCounterId: order.delivery.collectionCounterId,
                    dropOffSlotId: order.dropOffSlot?.uuidString.lowercased(),
                    weightClass: .init(rawValue: order.delivery.weightClass.rawValue)!,
                    service: .init(rawValue: order.delivery.service.rawValue)!,
                    declaredValue: order.delivery.declaredValue, redeemPoints: order.delivery.redeemPoints,
                    paymentMethod: .init(rawValue: order.paymentMethod.rawValue)!,
                    recipient: .init(name: order.recipient.name, email: order.recipient.email, phone: order.recipient.phone),
                    notes: order.notes, requireRecipientCode: order.requireRecipientCode ? true : nil,
                    pickupSlotId: order.pickupSlot?.uuidString.lowercased(), deliverySlotId: order.deliverySlot?.uuidString.lowercased()))).created.body.json
        }
    }

    /// Orders the caller may see, newest first: customers their own, drivers theirs, managers all.
    /// Deprecated on the server (kept for one release): use ``shipments(box:status:cursor:limit:)``.
    @available(*, deprecated, message: "The server deprecated GET /orders: use shipments(box:status:cursor:limit:)")
    public func orders(status: [OrderStatus] = [], customerId: UserID? = nil, driverId: UserID? = nil, cursor: String? = nil,
                       limit: Int? = nil) async throws(WaybillError) -> OrderPage {
        try await call { client in
            try await client.listOrders(query: .init(
                status: status.isEmpty ? nil : status.map(\.rawValue).joined(separator: ","),
                customerId: customerId?.uuidString.lowercased(), driverId: driverId?.uuidString.lowercased(),
                cursor: cursor, limit: limit)).ok.body.json
        }
    }

    /// One order with its full record: stages, proof, photos, tracking.
    /// Deprecated on the server (kept for one release): use ``shipment(_:)``, which adds legs and hand-overs.
    @available(*, deprecated, message: "The server deprecated GET /orders/{id}: use shipment(_:)")
    public func order(_ id: OrderID) async throws(WaybillError) -> Order {
        try await call { try await $0.getOrder(path: .init(orderId: id.uuidString.lowercased())).ok.body.json }
    }

    /// Asks the server to check the payment (after the person comes back from the payment page).
    @discardableResult
    public func confirmPayment(_ id: OrderID) async throws(WaybillError) -> Order {
        try await call { try await $0.confirmPayment(path: .init(orderId: id.uuidString.lowercased())).ok.body.json }
    }

    /// Cancels the order (customers until pickup, managers until delivery). Paid orders are refunded.
    @discardableResult
    public func cancel(_ id: OrderID, reason: String) async throws(WaybillError) -> Order {
        try await call {
            try await $0.cancelOrder(path: .init(orderId: id.uuidString.lowercased()), body: .json(.init(reason: reason))).ok.body.json
        }
    }

    /// Refunds a delivered or failed shipment (managers, a dispute): what its carrier was paid is
    /// taken back first, then the sender is refunded.
    public func refund(_ id: OrderID, reason: String) async throws(WaybillError) -> Order {
        try await call {
            try await $0.refundOrder(path: .init(orderId: id.uuidString.lowercased()), body: .json(.init(reason: reason))).ok.body.json
        }
    }

    /// Attaches a photo of the parcel (JPEG or PNG), before pickup.
    @discardableResult
    public func addPhoto(to id: OrderID, image: Data) async throws(WaybillError) -> Components.Schemas.OrderFile {
        try await call { client in
            try await client.addOrderPhoto(
                path: .init(orderId: id.uuidString.lowercased()),
                body: .multipartForm(MultipartBody([.photo(.init(payload: .init(body: HTTPBody(image)), filename: "photo"))]))).created.body.json
        }
    }

    /// A signature or photo of an order (`file.url` of an ``Order``'s proof or photos).
    public func file(of id: OrderID, fileId: String) async throws(WaybillError) -> Data {
        try await call { client in
            let ok = try await client.getOrderFile(path: .init(orderId: id.uuidString.lowercased(), fileId: fileId)).ok
            switch ok.body {
            case .png(let body): return try await Data(collecting: body, upTo: 16 * 1024 * 1024)
            case .jpeg(let body): return try await Data(collecting: body, upTo: 16 * 1024 * 1024)
            }
        }
    }

    /// The route the driver took (accepted and in transit), oldest first.
    public func trail(of id: OrderID) async throws(WaybillError) -> Components.Schemas.Trail {
        try await call { try await $0.getOrderTrail(path: .init(orderId: id.uuidString.lowercased())).ok.body.json }
    }

    /// A new public tracking link to share (the old one stops working).
    public func renewTrackingLink(_ id: OrderID) async throws(WaybillError) -> Components.Schemas.TrackingLink {
        try await call { try await $0.renewTrackingLink(path: .init(orderId: id.uuidString.lowercased())).ok.body.json }
    }

    /// Withdraws the public tracking link.
    public func revokeTrackingLink(_ id: OrderID) async throws(WaybillError) {
        _ = try await call { try await $0.revokeTrackingLink(path: .init(orderId: id.uuidString.lowercased())).noContent }
    }

    /// An order seen through its public tracking link; needs no sign-in.
    public func publicTracking(token: String) async throws(WaybillError) -> Components.Schemas.PublicTracking {
        try await call { try await $0.getPublicTracking(path: .init(token: token)).ok.body.json }
    }

    /// Monthly statements of invoice orders (company customers; managers see all).
    public func invoices(month: String? = nil, customerId: UserID? = nil) async throws(WaybillError) -> Components.Schemas.StatementList {
        try await call {
            try await $0.listInvoices(query: .init(month: month, customerId: customerId?.uuidString.lowercased())).ok.body.json
        }
    }

    // MARK: Drivers

    /// Whether the driver is on duty, and their last position.
    public func duty() async throws(WaybillError) -> Components.Schemas.DutyState {
        try await call { try await $0.getDuty().ok.body.json }
    }

    /// The driver's day: duty, the orders still to do in the order to do them, those done today.
    public func driverDay() async throws(WaybillError) -> Components.Schemas.DriverDay {
        try await call { try await $0.getDriverDay().ok.body.json }
    }

    /// Goes on or off duty. Off duty, nobody sees the driver and positions are refused.
    @discardableResult
    public func setDuty(_ onDuty: Bool) async throws(WaybillError) -> Components.Schemas.DutyState {
        try await call { try await $0.setDuty(body: .json(.init(onDuty: onDuty))).ok.body.json }
    }

    /// The assigned driver takes the delivery on.
    ///
    /// Every step (accept, pick up, deliver, fail) takes an `idempotencyKey`: an app that keeps a
    /// step while offline, or retries after a lost answer, sends it again with the same key and the
    /// server does it once (the answer is then the order as it is). Without one, a fresh key is drawn.
    @discardableResult
    public func accept(_ id: OrderID, idempotencyKey: String = UUID().uuidString) async throws(WaybillError) -> Order {
        try await call {
            try await $0.acceptOrder(path: .init(orderId: id.uuidString.lowercased()), headers: .init(idempotencyKey: idempotencyKey)).ok.body.json
        }
    }

    /// The driver has the parcel. For cash orders, `cashCollected` is the amount taken.
    @discardableResult
    /// `scannedCode`: what the scanner read from the parcel's label, kept as the pickup's proof.
    public func pickUp(_ id: OrderID, cashCollected: Money? = nil, scannedCode: String? = nil,
                       idempotencyKey: String = UUID().uuidString) async throws(WaybillError) -> Order {
        try await call {
            try await $0.pickupOrder(path: .init(orderId: id.uuidString.lowercased()), headers: .init(idempotencyKey: idempotencyKey),
                                     body: .json(.init(cashCollected: cashCollected?.schema, scannedCode: scannedCode))).ok.body.json
        }
    }

    /// Hands the parcel over with proof: the recipient's signature (PNG), their name, optionally a
    /// photo (JPEG or PNG) and the recipient's code when the order asked for one.
    @discardableResult
    public func deliver(_ id: OrderID, signaturePNG: Data, recipientName: String, photo: Data? = nil, code: String? = nil,
                        scannedCode: String? = nil, idempotencyKey: String = UUID().uuidString) async throws(WaybillError) -> Order {
        var parts: [Operations.DeliverOrder.Input.Body.MultipartFormPayload] = [
            .signature(.init(payload: .init(body: HTTPBody(signaturePNG)), filename: "signature.png")),
            .recipientName(.init(payload: .init(body: HTTPBody(recipientName)))),
        ]
        if let photo { parts.append(.photo(.init(payload: .init(body: HTTPBody(photo)), filename: "photo"))) }
        if let code { parts.append(.code(.init(payload: .init(body: HTTPBody(code))))) }
        if let scannedCode { parts.append(.scannedCode(.init(payload: .init(body: HTTPBody(scannedCode))))) }
        let form = parts
        return try await call {
            try await $0.deliverOrder(path: .init(orderId: id.uuidString.lowercased()), headers: .init(idempotencyKey: idempotencyKey),
                                      body: .multipartForm(MultipartBody(form))).ok.body.json
        }
    }

    /// The driver could not deliver; the order goes back to managers.
    @discardableResult
    public func fail(_ id: OrderID, reason: FailureReason, note: String? = nil,
                     idempotencyKey: String = UUID().uuidString) async throws(WaybillError) -> Order {
        try await call {
            try await $0.failOrder(path: .init(orderId: id.uuidString.lowercased()), headers: .init(idempotencyKey: idempotencyKey),
                                   body: .json(.init(reason: .init(rawValue: reason.rawValue)!, note: note))).ok.body.json
        }
    }

    /// Sends positions at once (at most 500). For a driver app, ``PositionUploader`` batches,
    /// buffers while offline and retries; this is the single request underneath.
    public func reportPositions(_ positions: [PositionReport]) async throws(WaybillError) -> Components.Schemas.LocationReceipt {
        let batch = positions.map {
            Components.Schemas.Position(latitude: $0.latitude, longitude: $0.longitude, accuracy: $0.accuracy, heading: $0.heading,
                                        speed: $0.speed, recordedAt: Date(timeIntervalSince1970: Double($0.recordedAt) / 1000))
        }
        return try await call { try await $0.reportLocations(body: .json(.init(positions: batch))).ok.body.json }
    }

    // MARK: Managers

    /// Gives an order to a driver (or to oneself). `reassign` takes it from its current driver.
    @discardableResult
    public func assign(_ id: OrderID, to driverId: UserID, reassign: Bool = false) async throws(WaybillError) -> Order {
        try await call {
            try await $0.assignOrder(path: .init(orderId: id.uuidString.lowercased()),
                                     body: .json(.init(driverId: driverId.uuidString.lowercased(), reassign: reassign ? true : nil)))
                .ok.body.json
        }
    }

    /// Accounts, ordered by email; `query` matches email, names and company.
    public func users(role: Role? = nil, query: String? = nil, cursor: String? = nil, limit: Int? = nil)
        async throws(WaybillError) -> Components.Schemas.UserPage {
        try await call {
            try await $0.listUsers(query: .init(role: role.flatMap { .init(rawValue: $0.rawValue) }, q: query, cursor: cursor,
                                                limit: limit)).ok.body.json
        }
    }

    public func user(_ id: UserID) async throws(WaybillError) -> Account {
        try await call { try await $0.getUser(path: .init(userId: id.uuidString.lowercased())).ok.body.json }
    }

    /// Invites a driver or manager; they set their password with the mailed code.
    public func createUser(role: Role, firstName: String, lastName: String, email: String) async throws(WaybillError) -> Account {
        guard let staffRole = Components.Schemas.CreateUserRequest.RolePayload(rawValue: role.rawValue) else {
            throw .server(ServerProblem(status: 422, code: "validation_failed", message: "Only drivers and managers are invited.",
                                        fields: ["role": "invalid"]))
        }
        return try await call {
            try await $0.createUser(body: .json(.init(role: staffRole, firstName: firstName, lastName: lastName, email: email)))
                .created.body.json
        }
    }

    /// Changes an account's role or disables it (ending its sessions).
    @discardableResult
    public func updateUser(_ id: UserID, role: Role? = nil, disabled: Bool? = nil) async throws(WaybillError) -> Account {
        try await call {
            try await $0.updateUser(path: .init(userId: id.uuidString.lowercased()),
                                    body: .json(.init(role: role.flatMap { .init(rawValue: $0.rawValue) }, disabled: disabled)))
                .ok.body.json
        }
    }

    /// Ends every session of the account and mails its owner a reset code.
    public func resetUser(_ id: UserID) async throws(WaybillError) {
        _ = try await call { try await $0.resetUser(path: .init(userId: id.uuidString.lowercased())).accepted }
    }

    /// Every driver with duty, position and load, in the order dispatch offers them; with
    /// `orderId`, their distance to its pickup (nearest first among those on duty).
    public func fleet(near orderId: OrderID? = nil) async throws(WaybillError) -> Components.Schemas.Fleet {
        try await call { try await $0.getFleet(query: .init(orderId: orderId?.uuidString.lowercased())).ok.body.json }
    }

    /// The tariff in force.
    public func tariff() async throws(WaybillError) -> Components.Schemas.Tariff {
        try await call { try await $0.getTariff().ok.body.json }
    }

    /// Replaces the tariff for quotes and orders from now on.
    @discardableResult
    public func setTariff(_ tariff: Components.Schemas.TariffInput) async throws(WaybillError) -> Components.Schemas.Tariff {
        try await call { try await $0.putTariff(body: .json(tariff)).ok.body.json }
    }
}
