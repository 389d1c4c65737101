import Fluent
import Foundation
import Vapor
import WaybillCore

/// Insurance: the premium table, claims filed by senders of insured shipments, staff's decisions
/// (two of them above the table's threshold) and the payment of the compensation. The rules are
/// in WaybillCore (`Insurance`, `ClaimPolicy`); the API and the web app call this.
struct Claims: WaybillService {
    let services: WaybillServices
    let db: any Database
    let logger: Logger

    init(services: WaybillServices, db: any Database, logger: Logger) {
        self.services = services
        self.db = db
        self.logger = logger
    }

    static let paymentKind = "claim_payment"

    private var orders: Orders { Orders(services: services, db: db, logger: logger) }

    func transaction<T: Sendable>(_ body: @escaping @Sendable (any Database) async throws -> T) async throws -> T {
        try await orders.transaction(body)
    }

    // MARK: The premium table

    func currentTable(on db: (any Database)? = nil) async throws -> InsuranceTableRecord {
        guard let record = try await InsuranceTableRecord.current(on: db ?? self.db) else {
            throw WaybillError(.serviceUnavailable, .noTariff, "No insurance table is set.")
        }
        return record
    }

    /// The table as anyone signed in reads it (what insuring costs).
    func table(for principal: Principal) async throws -> InsuranceTableRecord {
        try await currentTable()
    }

    /// Admins replace the table; the prices' currency is the table's.
    func replaceTable(_ table: InsuranceTable, by principal: Principal) async throws -> InsuranceTableRecord {
        try principal.require(.manageInsurance)
        let clean = try table.validated().orValidationError()
        let currency = try await orders.currentTariff().tariff.currency
        guard clean.currency == currency else { throw WaybillError.validation("currency", "differs_from_tariff") }
        do {
            return try await transaction { db in
                let (record, current) = try await InsuranceTableRecord.replace(with: clean, by: principal.userID, on: db)
                try await AuditLog.record(.insuranceChanged, by: principal.userID, target: .tariff, "insurance",
                                          before: current.map { ["version": String($0.version), "table": $0.data] },
                                          after: ["version": String(record.version), "table": record.data], on: db)
                return record
            }
        } catch let error as any DatabaseError where error.isConstraintFailure {
            throw WaybillError(.conflict, .conflict, "Another admin changed the insurance table at the same moment; reload it and try again.")
        }
    }

    // MARK: Filing

    struct Filed: Sendable {
        var kind: ClaimKind
        var description: String
        var amount: Int
        var photos: [Orders.Upload]
    }

    /// The sender of an insured shipment claims, within the table's window after delivery (damage)
    /// or loss; with up to five photos. One claim per shipment.
    func file(_ orderID: OrderID, _ filed: Filed, by principal: Principal) async throws -> ClaimRecord {
        let order = try await orders.visibleOrder(orderID, to: principal)
        try orders.check(.fileClaim, on: order, by: principal)
        var errors = FieldErrors()
        let description = filed.description.trimmingCharacters(in: .whitespacesAndNewlines)
        Validation.text(description, field: "description", maxLength: ClaimPolicy.descriptionLimit, into: &errors)
        if filed.photos.count > ClaimPolicy.photosPerClaim { errors.add("photos", "too_many") }
        if let insured = order.declaredValue, filed.amount <= 0 || filed.amount > insured { errors.add("amount", "out_of_range") }
        if !errors.isEmpty, order.declaredValue != nil { throw WaybillError.validation(errors) }
        switch try await filing(filed.kind, of: order) {
        case .allowed: break
        case .notInsured: throw WaybillError(.conflict, .notInsured, ErrorCode.notInsured.english)
        case .notYet: throw WaybillError(.conflict, .claimTooEarly, ErrorCode.claimTooEarly.english)
        case .windowClosed: throw WaybillError(.conflict, .claimWindowClosed, ErrorCode.claimWindowClosed.english)
        }
        var images: [SanitizedImage] = []
        for photo in filed.photos {
            images.append(try await orders.sanitize(photo, allowed: [.png, .jpeg], maxBytes: UploadLimits.photoBytes, maxPixels: UploadLimits.photoPixels))
        }
        let store = services.files
        var names: [String] = []
        do {
            for image in images { names.append(try await store.save(image.bytes, extension: image.format.fileExtension)) }
            let claim = ClaimRecord()
            claim.id = .random()
            claim.orderID = orderID
            claim.claimantID = principal.userID
            claim.kind = filed.kind
            claim.description = description
            claim.claimedAmount = filed.amount
            claim.currency = order.currency
            claim.status = .submitted
            claim.createdAt = UnixTime.nowMillis
            claim.updatedAt = claim.createdAt
            let saved = zip(images, names).map { ($0, $1) }
            let userID = principal.userID
            return try await transaction { db in
                try await Orders.lockOrderRow(orderID, on: db)
                guard try await ClaimRecord.query(on: db).filter(\.$orderID == orderID).count() == 0 else {
                    throw WaybillError(.conflict, .claimDecided, "This shipment has a claim already; see it on the shipment's page.")
                }
                try await claim.create(on: db)
                for (image, name) in saved {
                    try await Orders.fileRecord(of: orderID, kind: .claimPhoto, image: image, name: name, by: userID).create(on: db)
                }
                try await OrderEvent(orderID: orderID, type: "claim_filed", status: nil, actorID: userID,
                                     note: "\(filed.kind.rawValue), \(Money(filed.amount, order.currency))").insert(on: db)
                try await Notifier.notify(try await Notifier.managers(on: db), .claimFiled, order: order,
                                          body: "The sender of \(order.reference) claims \(Money(filed.amount, order.currency)) (\(filed.kind.rawValue)): decide it under Claims.",
                                          on: db)
                return claim
            }
        } catch {
            for name in names { await store.delete(name) }
            throw error
        }
    }

    /// Whether a claim of `kind` may be filed about `order` now (`ClaimPolicy.filing`).
    func filing(_ kind: ClaimKind, of order: Order) async throws -> ClaimPolicy.Filing {
        try await filings(of: order)(kind)
    }

    /// `ClaimPolicy.filing` for any kind, with the table and the pickup read once.
    private func filings(of order: some OrderColumns) async throws -> @Sendable (ClaimKind) -> ClaimPolicy.Filing {
        let window = try await currentTable().table.claimWindowDays
        let pickedUpAt = try await OrderEvent.query(on: db).filter(\.$orderID == order.orderID).filter(\.$type == "picked_up").first()?.at
        let insured = order.declaredValue != nil, status = order.status, deliveredAt = order.deliveredAt, changedAt = order.updatedAt
        let now = UnixTime.nowMillis
        return { kind in
            ClaimPolicy.filing(kind, insured: insured, status: status, pickedUpAt: pickedUpAt, deliveredAt: deliveredAt,
                               changedAt: changedAt, windowDays: window, now: now)
        }
    }

    /// What the caller may claim about `order` now: nothing unless they sent it insured and have
    /// not claimed yet (the shipment's page offers the form).
    func claimableKinds(_ order: some OrderColumns, for principal: Principal) async throws -> [ClaimKind] {
        guard order.declaredValue != nil, OrderPolicy.allows(.fileClaim, status: order.status, as: orders.capacities(of: principal, for: order)),
              try await ClaimRecord.query(on: db).filter(\.$orderID == order.orderID).count() == 0 else { return [] }
        let filing = try await filings(of: order)
        return ClaimKind.allCases.filter { if case .allowed = filing($0) { true } else { false } }
    }

    // MARK: Reading

    /// One claim with its shipment and photos, for its claimant and staff who decide claims.
    struct View: Sendable {
        let claim: ClaimRecord
        let order: Order
        let photos: [OrderFile]
        let claimant: User?
        /// What the viewer may do with it now (`ClaimPolicy.actions`).
        var actions: [ClaimAction] = []
    }

    /// What `principal` may do with `claim` now (`ClaimPolicy.actions`).
    static func actions(_ claim: ClaimRecord, for principal: Principal) -> [ClaimAction] {
        ClaimPolicy.actions(status: claim.status, claimant: claim.claimantID, firstApprover: claim.firstApproverID, by: principal.caller)
    }

    func claim(_ id: ClaimID, for principal: Principal) async throws -> View {
        guard let claim = try await ClaimRecord.find(id, on: db) else { throw WaybillError.notFound }
        return try await view(claim, for: principal)
    }

    /// A claim found already, with its shipment, photos and claimant; 404 unless the caller may see it.
    private func view(_ claim: ClaimRecord, for principal: Principal) async throws -> View {
        guard ClaimPolicy.maySee(claimant: claim.claimantID, by: principal.caller),
              let order = try await Order.find(claim.orderID, on: db) else { throw WaybillError.notFound }
        let photos = try await OrderFile.query(on: db).filter(\.$orderID == claim.orderID).filter(\.$kind == .claimPhoto).sort(\.$createdAt).all()
        return View(claim: claim, order: order, photos: photos, claimant: try await User.find(claim.claimantID, on: db),
                    actions: Self.actions(claim, for: principal))
    }

    /// The claim of a shipment, if the caller may see it (the shipment's page shows it).
    func claim(of orderID: OrderID, for principal: Principal) async throws -> View? {
        guard let claim = try await ClaimRecord.query(on: db).filter(\.$orderID == orderID).first(),
              ClaimPolicy.maySee(claimant: claim.claimantID, by: principal.caller) else { return nil }
        return try await view(claim, for: principal)
    }

    /// Staff see every claim (those waiting first); others their own. Newest first.
    func list(status: ClaimStatus?, limit: Int = 100, for principal: Principal) async throws -> [View] {
        var query = ClaimRecord.query(on: db)
        if !principal.caller.may(.decideClaims) { query = query.filter(\.$claimantID == principal.userID) }
        if let status { query = query.filter(\.$status == status) }
        let claims = try await query.sort(\.$createdAt, .descending).limit(max(1, min(limit, 200))).all()
        let ordersByID = Dictionary(try await Order.query(on: db).filter(\.$id ~~ claims.map(\.orderID)).all().map { (try $0.storedID, $0) },
                                    uniquingKeysWith: { a, _ in a })
        let people = Dictionary(try await User.query(on: db).filter(\.$id ~~ claims.map(\.claimantID)).all().map { (try $0.storedID, $0) },
                                uniquingKeysWith: { a, _ in a })
        return claims.compactMap { claim in
            ordersByID[claim.orderID].map {
                View(claim: claim, order: $0, photos: [], claimant: people[claim.claimantID], actions: Self.actions(claim, for: principal))
            }
        }
    }

    /// A claim's photo, for those who may see the claim.
    func photo(_ id: ClaimID, file fileID: FileID, for principal: Principal) async throws -> (OrderFile, Data) {
        let view = try await claim(id, for: principal)
        guard let file = view.photos.first(where: { $0.id == fileID }) else { throw WaybillError.notFound }
        return (file, try await services.files.read(file.storageName))
    }

    // MARK: Deciding

    /// Staff approve an amount (up to what was claimed and insured) or decline with a reason. An
    /// approval above the table's threshold waits for a second, different staff member; nobody
    /// decides their own claim. Money decisions need a recently proven password. Approved, the
    /// compensation is paid through the outbox.
    func decide(_ id: ClaimID, _ decision: ClaimPolicy.Decision, by principal: Principal) async throws -> View {
        try await Accounts.requireRecentPassword(principal, for: .decideClaims, on: db)
        let table = try await currentTable().table
        let decider = principal.userID
        let changed = try await transaction { db -> ClaimRecord in
            guard let claim = try await ClaimRecord.find(id, on: db) else { throw WaybillError.notFound }
            try await Orders.lockOrderRow(claim.orderID, on: db)
            // Read again under the lock: two staff deciding at once are served one after the other.
            guard let claim = try await ClaimRecord.find(id, on: db), let order = try await Order.find(claim.orderID, on: db) else {
                throw WaybillError.notFound
            }
            let outcome = ClaimPolicy.decide(decision, status: claim.status, claimant: claim.claimantID, claimed: claim.claimedAmount,
                                             insured: order.declaredValue ?? 0, firstApprover: claim.firstApproverID,
                                             proposed: claim.proposedAmount, threshold: table.secondApprovalAbove, by: decider)
            let before: [String: String?] = ["status": claim.status.rawValue, "proposed": claim.proposedAmount.map(String.init)]
            let now = UnixTime.nowMillis
            switch outcome {
            case .failure(.decided): throw WaybillError(.conflict, .claimDecided, ErrorCode.claimDecided.english)
            case .failure(.ownClaim): throw WaybillError.forbidden
            case .failure(.sameApprover):
                throw WaybillError(.forbidden, .secondApproverRequired, "You approved this claim already; another staff member must confirm it.")
            case .failure(.amountOutOfRange): throw WaybillError.validation("amount", "out_of_range")
            case .failure(.amountDiffers): throw WaybillError.validation("amount", "differs_from_first_approval")
            case .failure(.reasonRequired): throw WaybillError.validation("reason", "required")
            case .success(.awaitingSecondApproval(let amount)):
                claim.status = .awaitingSecondApproval
                claim.proposedAmount = amount
                claim.firstApproverID = decider
                claim.firstApprovedAt = now
            case .success(.approved(let amount)):
                claim.status = .approved
                claim.approvedAmount = amount
                claim.decidedBy = decider
                claim.decidedAt = now
                try await Outbox.enqueueJob(kind: Self.paymentKind, payload: id.uuidString, on: db)
            case .success(.declined(let reason)):
                claim.status = .declined
                claim.declineReason = reason
                claim.decidedBy = decider
                claim.decidedAt = now
            }
            claim.updatedAt = now
            try await claim.save(on: db)
            let amount = claim.approvedAmount ?? claim.proposedAmount
            try await AuditLog.record(claim.status == .declined ? .claimDeclined : .claimApproved, by: decider, target: .claim, id.uuidString,
                                      before: before, after: ["status": claim.status.rawValue, "amount": amount.map(String.init),
                                                              "currency": claim.currency, "order": order.reference],
                                      reason: claim.declineReason, on: db)
            try await OrderEvent(orderID: try order.storedID, type: "claim_\(claim.status.rawValue)", status: nil, actorID: decider,
                                 note: amount.map { Money($0, claim.currency).description } ?? claim.declineReason).insert(on: db)
            if claim.status != .awaitingSecondApproval, let claimant = try await User.find(claim.claimantID, on: db) {
                let body = claim.status == .declined
                    ? "Your claim for \(order.reference) was declined: \(claim.declineReason ?? "")"
                    : "Your claim for \(order.reference) was approved: \(Money(claim.approvedAmount ?? 0, claim.currency)) is on its way to you."
                try await Notifier.notify([claimant], .claimDecided, order: order, body: body, on: db)
            }
            return claim
        }
        if changed.status == .approved { try? await pay(id) }
        return try await claim(id, for: principal)
    }

    // MARK: Paying

    /// Pays an approved claim: first as a refund of what the customer paid online for the shipment
    /// and has not had back, the rest as a transfer to their payout account. Each step is asked
    /// of the provider with a key of its own (a retry never pays twice) and recorded in the ledger
    /// once. Run from the outbox, which retries; without an active payout account for the rest,
    /// it waits (`payments_not_ready`) and the claimant's page says why.
    func pay(_ id: ClaimID) async throws {
        guard var claim = try await ClaimRecord.find(id, on: db), claim.status == .approved, let approved = claim.approvedAmount,
              let order = try await Order.find(claim.orderID, on: db) else { return }
        let currency = claim.currency, orderID = claim.orderID, claimantID = claim.claimantID
        // 1. The split, decided once, from the payment and the ledger as they are with the shipment's
        //    row held: the job and the approval may pay at once, and staff may be refunding the
        //    whole payment (`refundAfterDelivery` holds the same row; finding 9 of the second audit).
        if claim.refundedAmount == nil {
            claim = try await transaction { db in
                try await Orders.lockOrderRow(orderID, on: db)
                guard let fresh = try await ClaimRecord.find(id, on: db) else { throw WaybillError.notFound }
                if fresh.refundedAmount == nil {
                    guard let current = try await Order.find(orderID, on: db) else { throw WaybillError.notFound }
                    let entries = try await LedgerRecord.query(on: db).filter(\.$shipmentID == orderID).all().map(\.entry)
                    var refundable = 0
                    if current.paymentMethod.isOnline, current.paymentStatus == .paid, current.checkoutSessionID != nil,
                       let balance = try? Ledger.balance(entries), balance.currency == currency {
                        refundable = max(0, balance.paidByCustomer)
                    }
                    let split = ClaimPolicy.split(approved, refundable: refundable)
                    fresh.refundedAmount = split.refund
                    fresh.updatedAt = UnixTime.nowMillis
                    try await fresh.save(on: db)
                }
                return fresh
            }
        }
        // 2. The refund part.
        if let part = claim.refundedAmount, part > 0, claim.refundID == nil, let session = order.checkoutSessionID {
            let state = try await services.payments.checkout(id: session)
            let refundID = try await services.payments.refund(checkout: state, amount: part, idempotencyKey: "claim-refund-\(id.uuidString)")
            try await recordStep(claim, refund: true, amount: part, reference: refundID)
            claim.refundID = refundID
        }
        // 3. The rest, to the claimant's payout account.
        if let rest = claim.payoutAmount, rest > 0, claim.transferID == nil {
            guard let claimant = try await User.find(claim.claimantID, on: db), let destination = claimant.payoutAccount,
                  claimant.payoutStatus == .active else {
                let note = "Set up payouts to receive \(Money(rest, claim.currency))."
                if claim.paymentNote != note {
                    try await transaction { db in
                        try await Orders.lockOrderRow(orderID, on: db)  // the job and the approval may pay at once
                        guard let fresh = try await ClaimRecord.find(id, on: db) else { return }
                        fresh.paymentNote = note
                        try await fresh.save(on: db)
                    }
                }
                throw WaybillError(.conflict, .payoutsNotReady, "The claimant's payout account is not active; the compensation waits for it.")
            }
            let transfer = try await services.payments.payOut(PayoutRequest(
                shipmentID: claim.orderID, accountID: claim.claimantID, destination: destination, amount: Money(rest, claim.currency),
                idempotencyKey: "claim-payout-\(id.uuidString)"))
            try await recordStep(claim, refund: false, amount: rest, reference: transfer)
        }
        // 4. Paid.
        try await transaction { db in
            try await Orders.lockOrderRow(orderID, on: db)  // the job and the approval may pay at once
            guard let fresh = try await ClaimRecord.find(id, on: db), fresh.status == .approved else { return }
            fresh.status = .paid
            let paidAt = UnixTime.nowMillis
            fresh.paidAt = paidAt
            fresh.paymentNote = nil
            fresh.updatedAt = paidAt
            try await fresh.save(on: db)
            try await OrderEvent(orderID: orderID, type: "claim_paid", status: nil, actorID: nil,
                                 note: Money(approved, currency).description).insert(on: db)
            if let claimant = try await User.find(claimantID, on: db) {
                try await Notifier.notify([claimant], .claimPaid, order: order,
                                          body: "\(Money(approved, currency)) for your claim on \(order.reference) was paid\(order.sandbox ? " (sandbox: no money moved)" : "").",
                                          on: db)
            }
        }
    }

    /// Records a step of a claim's payment once, under the shipment's lock (the job and the approval
    /// may pay at once): its provider id on the claim, its ledger entry (`refund` or `claim_payout`)
    /// and a line of the shipment's history.
    private func recordStep(_ claim: ClaimRecord, refund: Bool, amount: Int, reference: String) async throws {
        let id = try claim.storedID, orderID = claim.orderID, claimantID = claim.claimantID, currency = claim.currency
        try await transaction { db in
            try await Orders.lockOrderRow(orderID, on: db)
            guard let fresh = try await ClaimRecord.find(id, on: db), (refund ? fresh.refundID : fresh.transferID) == nil else { return }
            if refund { fresh.refundID = reference } else { fresh.transferID = reference }
            fresh.updatedAt = UnixTime.nowMillis
            try await fresh.save(on: db)
            try await LedgerRecord(LedgerEntry(kind: refund ? .refund : .claimPayout, amount: amount, currency: currency, shipment: orderID,
                                               account: claimantID, at: UnixTime.nowMillis, reference: reference)).create(on: db)
            try await OrderEvent(orderID: orderID, type: refund ? "claim_refunded" : "claim_transferred", status: nil, actorID: nil,
                                 note: reference).insert(on: db)
        }
    }
}
