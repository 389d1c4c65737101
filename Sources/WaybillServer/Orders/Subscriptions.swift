import Fluent
import Foundation
import SQLKit
import Vapor
import WaybillCore

/// Subscription plans: the plans admins offer, a customer's subscription through the payment
/// provider (Stripe Billing, or the sandbox), kept up to date from the provider's events, and the
/// benefit a quote and an order get from it. The rules are in WaybillCore (`PlanTerms`,
/// `SubscriptionTerm`, `SubscriptionPolicy`, `Pricing.quote(…, plan:)`).
struct Subscriptions: WaybillService {
    let services: WaybillServices
    let db: any Database
    let logger: Logger

    init(services: WaybillServices, db: any Database, logger: Logger) {
        self.services = services
        self.db = db
        self.logger = logger
    }

    private var orders: Orders { Orders(services: services, db: db, logger: logger) }

    // MARK: Plans

    /// The plans on offer, cheapest first; with `all`, admins also see those withdrawn.
    func plans(all: Bool, for principal: Principal) async throws -> [PlanRecord] {
        if all { try principal.require(.managePlans) }
        var query = PlanRecord.query(on: db)
        if !all { query = query.filter(\.$active == true) }
        return try await query.sort(\.$monthlyPrice).sort(\.$createdAt).all()
    }

    func createPlan(_ terms: PlanTerms, active: Bool, by principal: Principal) async throws -> PlanRecord {
        try principal.require(.managePlans)
        let clean = try terms.validated().orValidationError()
        let currency = try await orders.currentTariff().tariff.currency
        return try await orders.transaction { db in
            let plan = PlanRecord()
            plan.id = .generated()
            plan.terms = clean
            plan.currency = currency
            plan.active = active
            plan.createdBy = principal.userID
            plan.createdAt = UnixTime.nowMillis
            plan.updatedAt = plan.createdAt
            try await plan.create(on: db)
            try await AuditLog.record(.planChanged, by: principal.userID, target: .plan, try plan.storedID.uuidString,
                                      after: Self.audit(plan), on: db)
            return plan
        }
    }

    /// New terms apply to new subscribers; those subscribed keep the terms they paid for.
    func updatePlan(_ id: PlanID, _ terms: PlanTerms, active: Bool, by principal: Principal) async throws -> PlanRecord {
        try principal.require(.managePlans)
        let clean = try terms.validated().orValidationError()
        return try await orders.transaction { db in
            guard let plan = try await PlanRecord.find(id, on: db) else { throw WaybillError.notFound }
            let before = Self.audit(plan)
            plan.terms = clean
            plan.active = active
            plan.updatedAt = UnixTime.nowMillis
            try await plan.save(on: db)
            try await AuditLog.record(.planChanged, by: principal.userID, target: .plan, id.uuidString, before: before, after: Self.audit(plan), on: db)
            return plan
        }
    }

    private static func audit(_ plan: PlanRecord) -> [String: String?] {
        ["name": plan.name, "monthlyPrice": String(plan.monthlyPrice), "currency": plan.currency,
         "includedDeliveries": String(plan.includedDeliveries), "discountPercent": String(plan.discountPercent),
         "expressIncluded": String(plan.expressIncluded), "active": String(plan.active)]
    }

    // MARK: Subscribers (admins)

    /// A subscription with its account, for the admins' list.
    struct Subscriber: Sendable {
        var view: View
        var account: PersonRow
    }

    /// Who subscribes to which plan, newest first, paged on (created, id): by default those paid
    /// for (active or past due), or those of one `status`; optionally one plan's. Without invoices.
    func subscribers(plan: PlanID?, status: SubscriptionStatus?, cursor: String?, limit: Int,
                     for principal: Principal) async throws -> (items: [Subscriber], nextCursor: String?) {
        try principal.require(.managePlans)
        guard (1...100).contains(limit) else { throw WaybillError.invalidParameter("limit") }
        let query = SubscriptionRecord.query(on: db)
        if let plan { query.filter(\.$planID == plan) }
        if let status { query.filter(\.$status == status) } else { query.filter(\.$status ~~ SubscriptionStatus.paid) }
        if let cursor {
            guard let (at, id): (Int64, SubscriptionID) = Orders.decodeCursor(cursor) else {
                throw WaybillError.invalidParameter("cursor")
            }
            query.group(.or) { older in
                older.filter(\.$createdAt < at).group(.and) { same in same.filter(\.$createdAt == at).filter(\.$id < id) }
            }
        }
        let rows = try await query.sort(\.$createdAt, .descending).sort(\.$id, .descending).limit(limit + 1).all()
        let page = Array(rows.prefix(limit))
        guard let sql = db.tracedSQL else { throw Abort(.internalServerError) }
        let accounts = try await Orders.people(Array(Set(page.map(\.accountID))), on: sql)
        let now = UnixTime.nowMillis
        let items = try page.compactMap { record -> Subscriber? in
            guard let account = accounts[record.accountID] else { return nil }
            return Subscriber(view: View(record: record, terms: try record.terms, invoices: [], benefitApplies: record.term.benefitApplies(at: now)),
                              account: account)
        }
        let next = try rows.count > limit ? page.last.map { Orders.encodeCursor($0.createdAt, try $0.storedID) } : nil
        return (items, next)
    }

    /// How many subscriptions each plan has paid for now (active or past due), for the admins' page.
    func subscriberCounts(for principal: Principal) async throws -> [PlanID: Int] {
        try principal.require(.managePlans)
        guard let sql = db.tracedSQL else { throw Abort(.internalServerError) }
        let rows = try await sql.select().column("plan_id").column(SQLFunction("count", args: SQLLiteral.all), as: "n")
            .from(SubscriptionRecord.schema).where("status", .in, SQLBind.group(SubscriptionStatus.paid.map(\.rawValue)))
            .groupBy("plan_id").all()
        var counts: [PlanID: Int] = [:]
        for row in rows { counts[try row.decode(column: "plan_id", as: PlanID.self)] = Int(try row.decode(column: "n", as: Int64.self)) }
        return counts
    }

    // MARK: A customer's subscription

    struct View: Sendable {
        var record: SubscriptionRecord
        var terms: PlanTerms
        var invoices: [SubscriptionInvoiceRecord]
        var benefitApplies: Bool
    }

    /// The caller's newest subscription (nil if they never subscribed). An unpaid one is checked
    /// with the provider first: the customer may have paid and come back before its event.
    func current(for principal: Principal) async throws -> View? {
        try principal.require(.placeOrders)
        guard var record = try await newest(of: principal.userID) else { return nil }
        if record.status == .incomplete, let checkout = record.checkoutID {
            // The provider unreachable: the subscription as last known (its event will come).
            do {
                try await settleCheckout(try await services.payments.subscriptionCheckout(id: checkout))
                record = try await SubscriptionRecord.find(record.id, on: db) ?? record
            } catch {
                logger.warning("Could not read subscription checkout \(checkout) from the provider: \(String(describing: error))")
            }
        } else if record.status == .active, let end = record.periodEnd, end < UnixTime.nowMillis {
            // The period is over and no renewal arrived: ask the provider.
            try? await refresh(record)
            record = try await SubscriptionRecord.find(record.id, on: db) ?? record
        }
        return try await view(record)
    }

    func view(_ record: SubscriptionRecord) async throws -> View {
        let id = try record.storedID
        let invoices = try await SubscriptionInvoiceRecord.query(on: db).filter(\.$subscriptionID == id)
            .sort(\.$at, .descending).limit(24).all()
        return View(record: record, terms: try record.terms, invoices: invoices, benefitApplies: record.term.benefitApplies(at: UnixTime.nowMillis))
    }

    /// The account's current subscription (at most one), or else its newest.
    private func newest(of account: UserID) async throws -> SubscriptionRecord? {
        if let current = try await SubscriptionRecord.query(on: db).filter(\.$accountID == account)
            .filter(\.$status ~~ SubscriptionStatus.current).first() { return current }
        return try await SubscriptionRecord.query(on: db).filter(\.$accountID == account).sort(\.$createdAt, .descending).first()
    }

    /// Subscribes the caller to a plan: a checkout with the provider first (nothing is stored if it
    /// fails), then the subscription, `incomplete` until the provider says it is paid. An unpaid
    /// earlier request is replaced.
    func subscribe(to planID: PlanID, by principal: Principal) async throws -> View {
        try principal.require(.placeOrders)
        guard let plan = try await PlanRecord.find(planID, on: db) else { throw WaybillError.notFound }
        let current = try await SubscriptionRecord.query(on: db).filter(\.$accountID == principal.userID)
            .filter(\.$status ~~ SubscriptionStatus.current).first()
        try refuse(SubscriptionPolicy.maySubscribe(current: current?.status, planActive: plan.active))
        // Each request opens a checkout with the provider: a budget per account and hour.
        if let wait = try await db.writeTransaction(services, { db in
            try await Throttle(db).take("subscribe:" + principal.userID.uuidString, limit: 10, window: 3600)
        }) {
            throw WaybillError(.tooManyRequests, .rateLimited, "Too many subscription requests; try again later.", retryAfter: Int(clamping: wait))
        }
        let id = SubscriptionID.generated()
        let terms = plan.terms
        let checkout = try await services.payments.createSubscriptionCheckout(SubscriptionCheckoutRequest(
            subscriptionID: id, accountID: principal.userID, planName: terms.name, monthlyPrice: Money(terms.monthlyPrice, plan.currency),
            customerEmail: principal.user.email,
            successURL: services.config.publicURL + WebRoutes.planPage(query: "checkout={CHECKOUT_SESSION_ID}"),
            cancelURL: services.config.publicURL + WebRoutes.planPage(query: "cancelled=1")))
        let record = SubscriptionRecord()
        record.id = id
        record.accountID = principal.userID
        record.planID = planID
        record.termsJSON = Order.json(terms)
        record.currency = plan.currency
        record.status = .incomplete
        record.checkoutID = checkout.id
        record.checkoutURL = checkout.url
        record.cancelAtPeriodEnd = false
        record.includedUsed = 0
        record.sandbox = services.payments.isSandbox
        record.createdAt = UnixTime.nowMillis
        record.updatedAt = record.createdAt
        do {
            try await orders.transaction { db in
                // The unpaid request it replaces ends (its checkout simply expires).
                try await Self.endUnpaid(account: principal.userID, at: record.createdAt, on: db)
                try await record.create(on: db)
            }
        } catch let error as any DatabaseError where error.isConstraintFailure {
            // Another request of the same account won (the one-current index).
            throw WaybillError(.conflict, .alreadySubscribed, "You already have a subscription; cancel it first.")
        }
        return try await view(record)
    }

    func cancel(by principal: Principal) async throws -> View {
        try await setCancelAtPeriodEnd(true, by: principal)
    }

    func resume(by principal: Principal) async throws -> View {
        try await setCancelAtPeriodEnd(false, by: principal)
    }

    private func setCancelAtPeriodEnd(_ cancel: Bool, by principal: Principal) async throws -> View {
        try principal.require(.placeOrders)
        // Only a paid subscription (active or past due) has a renewal to stop or keep.
        guard let record = try await newest(of: principal.userID), record.status.isPaid else {
            throw WaybillError(.notFound, .notFound, "You have no subscription to change.")
        }
        try refuse(cancel ? SubscriptionPolicy.mayCancel(record.term) : SubscriptionPolicy.mayResume(record.term))
        guard let providerID = record.providerID else { throw WaybillError(.conflict, .conflict, "This subscription is not paid yet.") }
        let state = try await services.payments.setCancelAtPeriodEnd(subscription: providerID, cancel)
        let id = try record.storedID
        try await apply(state, to: id)
        logger.info("Subscription \(id.uuidString) \(cancel ? "set to end at the period's end" : "renews again")")
        return try await view(try await SubscriptionRecord.find(record.id, on: db) ?? record)
    }

    private func refuse(_ result: Result<Void, SubscriptionPolicy.Refusal>) throws {
        guard case .failure(let refusal) = result else { return }
        switch refusal {
        case .alreadySubscribed: throw WaybillError(.conflict, .alreadySubscribed, "You already have a subscription; cancel it first.")
        case .planClosed: throw WaybillError(.conflict, .planClosed, "This plan is no longer offered.")
        case .notCancellable: throw WaybillError(.conflict, .conflict, "This subscription is not renewing; there is nothing to cancel.")
        case .notResumable: throw WaybillError(.conflict, .conflict, "This subscription is not set to end.")
        }
    }

    // MARK: The provider's side

    /// A subscription checkout finished (its event, the return page, or the customer's reading):
    /// links the provider's subscription and reads it. An abandoned one ends the request.
    func settleCheckout(_ state: SubscriptionCheckoutState) async throws {
        // A request the customer replaced by asking again may still be paid: it then becomes the subscription.
        guard let record = try await SubscriptionRecord.query(on: db).filter(\.$checkoutID == state.id).first(),
              record.status == .incomplete || (record.status == .canceled && record.providerID == nil) else { return }
        if state.expired {
            let (account, id) = (record.accountID, try record.storedID)
            try await orders.transaction { db in try await Self.endUnpaid(account: account, only: id, at: UnixTime.nowMillis, on: db) }
            return
        }
        guard state.complete, let providerID = state.subscription else { return }
        let id = try record.storedID
        if record.providerID == nil {
            try await orders.transaction { db in
                guard let sql = db.tracedSQL else { return }
                try await sql.update(SubscriptionRecord.schema).set("provider_id", to: SQLBind(providerID))
                    .where("id", .equal, SQLBind(id)).where(SQLIdentifier("provider_id"), .is, SQLLiteral.null).run()
            }
        }
        guard let provider = try await services.payments.subscription(id: providerID) else { return }
        try await apply(provider, to: id)
    }

    /// Ends an account's unpaid requests (`incomplete`): `only` one of them, or all `except` one.
    private static func endUnpaid(account: UserID, only: SubscriptionID? = nil, except: SubscriptionID? = nil, at now: Int64, on db: any Database) async throws {
        guard let sql = db.tracedSQL else { return }
        var update = sql.update(SubscriptionRecord.schema).set("status", to: SQLBind(SubscriptionStatus.canceled.rawValue))
            .set("updated_at", to: SQLBind(now))
            .where("account_id", .equal, SQLBind(account)).where("status", .equal, SQLBind(SubscriptionStatus.incomplete.rawValue))
        if let only { update = update.where("id", .equal, SQLBind(only)) }
        if let except { update = update.where("id", .notEqual, SQLBind(except)) }
        try await update.run()
    }

    /// Reads the subscription from the provider again and keeps what it says.
    func refresh(_ record: SubscriptionRecord) async throws {
        guard let providerID = record.providerID, let state = try await services.payments.subscription(id: providerID) else { return }
        try await apply(state, to: try record.storedID)
    }

    /// Keeps the provider's view of a subscription: its status, period and renewal. A new period
    /// counts the included deliveries from zero; a failure starts the grace, a payment ends it.
    private func apply(_ state: ProviderSubscription, to id: SubscriptionID, failedAt: Int64? = nil) async throws {
        let graceDays = services.config.subscriptionGraceDays
        try await orders.transaction { db in
            guard let record = try await SubscriptionRecord.find(id, on: db), let sql = db.tracedSQL else { return }
            let previous = record.term
            let status = SubscriptionStatus.ofStripe(state.status)
            let now = UnixTime.nowMillis
            var grace = record.graceEndsAt
            if let failedAt { grace = SubscriptionPolicy.graceEnd(failedAt: failedAt, days: graceDays, current: grace) }
            if status == .pastDue, grace == nil { grace = SubscriptionPolicy.graceEnd(failedAt: now, days: graceDays, current: nil) }
            if status == .active, failedAt == nil { grace = nil }
            if record.graceEndsAt == nil, let grace {
                // The first failed renewal: the customer hears it at once (app, push and mail), with
                // how long the plan still applies. A second failure keeps the deadline and says nothing.
                try await Self.tellRenewalFailed(record, graceEndsAt: grace, on: db)
            }
            // Only the provider's fields: an order taking an included delivery meanwhile keeps its count.
            var update = sql.update(SubscriptionRecord.schema)
                .set("status", to: SQLBind(status.rawValue))
                .set("cancel_at_period_end", to: SQLBind(state.cancelAtPeriodEnd))
                .set("grace_ends_at", to: SQLBind(grace))
                .set("updated_at", to: SQLBind(now))
            if let start = state.periodStart, let end = state.periodEnd {
                update = update.set("period_start", to: SQLBind(start)).set("period_end", to: SQLBind(end))
                if SubscriptionPolicy.includedUsed(after: previous, newPeriodStart: start) == 0, previous.includedUsed != 0 {
                    update = update.set("included_used", to: SQLBind(0))
                }
            }
            if record.providerID == nil, !state.id.isEmpty { update = update.set("provider_id", to: SQLBind(state.id)) }
            if status.isPaid, !previous.status.isPaid {
                // Paid after the customer asked again: the newer unpaid request gives way (one current per account).
                try await Self.endUnpaid(account: record.accountID, except: id, at: now, on: db)
            }
            try await update.where("id", .equal, SQLBind(id)).run()
            WrittenChanges.note(record.accountID, caches: nil)  // its kept plan, forgotten when this commits
            if status != previous.status {
                logger.info("Subscription \(id.uuidString): \(previous.status.rawValue) → \(status.rawValue)")
            }
        }
    }

    private static func tellRenewalFailed(_ record: SubscriptionRecord, graceEndsAt: Int64, on db: any Database) async throws {
        guard let customer = try await User.find(record.accountID, on: db) else { return }
        let name = (try? record.terms.name) ?? "your plan"
        let until = Date(timeIntervalSince1970: Double(graceEndsAt) / 1000).formatted(.iso8601.year().month().day())
        // SUBSCRIPTION_GRACE_DAYS=0: no grace, the plan stops at once.
        let then = graceEndsAt > UnixTime.nowMillis
            ? "The plan still applies until \(until); update your card before then to keep it."
            : "The plan no longer applies until the payment goes through; update your card to restore it."
        try await Notifier.notify([customer], .planPaymentFailed, order: nil,
                                  body: "We could not take this month's payment for \(name). " + then, on: db)
    }

    /// One verified Stripe event about subscriptions (already deduplicated by `StripeEvent.handleOnce`).
    /// The subscription is read again from Stripe: events may arrive out of order, the answer is current.
    func handleStripeEvent(type: String, object: [String: Any]) async throws {
        switch type {
        case "checkout.session.completed", "checkout.session.async_payment_succeeded", "checkout.session.expired":
            try await settleCheckout(StripePayments.subscriptionCheckoutState(from: object))
        case "customer.subscription.created", "customer.subscription.updated", "customer.subscription.deleted",
             "customer.subscription.paused", "customer.subscription.resumed":
            let sent = StripePayments.subscriptionState(from: object)
            guard let record = try await record(provider: sent.id, reference: sent.reference) else { return }
            let state = try await services.payments.subscription(id: sent.id) ?? sent
            try await apply(state, to: try record.storedID)
        case "invoice.paid", "invoice.payment_failed":
            guard let providerID = Self.subscriptionID(ofInvoice: object),
                  let record = try await record(provider: providerID, reference: Self.reference(ofInvoice: object)) else { return }
            let paid = type == "invoice.paid"
            try await recordInvoice(object, paid: paid, for: record)
            guard let state = try await services.payments.subscription(id: providerID) else { return }
            try await apply(state, to: try record.storedID, failedAt: paid ? nil : UnixTime.nowMillis)
        default:
            return
        }
    }

    /// The subscription a provider's id names, linking it on the way if only the reference was known.
    private func record(provider: String, reference: String?) async throws -> SubscriptionRecord? {
        if let known = try await SubscriptionRecord.query(on: db).filter(\.$providerID == provider).first() { return known }
        guard let reference = reference.flatMap(SubscriptionID.init(uuidString:)) else {
            logger.info("Stripe subscription \(provider) is not one of ours")
            return nil
        }
        return try await SubscriptionRecord.find(reference, on: db)
    }

    /// An invoice's subscription: `subscription` in older API versions, `parent.subscription_details`
    /// since 2025-03-31.basil.
    static func subscriptionID(ofInvoice invoice: [String: Any]) -> String? {
        if let id = invoice["subscription"] as? String { return id }
        let details = (invoice["parent"] as? [String: Any])?["subscription_details"] as? [String: Any]
        return details?["subscription"] as? String
    }

    private static func reference(ofInvoice invoice: [String: Any]) -> String? {
        let details = (invoice["parent"] as? [String: Any])?["subscription_details"] as? [String: Any]
        let metadata = (details?["metadata"] as? [String: Any]) ?? (invoice["subscription_details"] as? [String: Any])?["metadata"] as? [String: Any]
        return metadata?["subscription_id"] as? String
    }

    private func recordInvoice(_ invoice: [String: Any], paid: Bool, for record: SubscriptionRecord) async throws {
        guard let id = invoice["id"] as? String, StripePayments.isStripeID(id) else { return }
        let amount = ((paid ? invoice["amount_paid"] : invoice["amount_due"]) as? NSNumber).flatMap { Int(exactly: $0.doubleValue) } ?? 0
        let currency = ((invoice["currency"] as? String) ?? record.currency).uppercased()
        try await store(invoice: id, amount: amount, currency: currency, paid: paid, for: try record.storedID)
    }

    /// Keeps an invoice once; a failed one that is later paid becomes paid.
    func store(invoice id: String, amount: Int, currency: String, paid: Bool, for subscription: SubscriptionID) async throws {
        guard Money.isValidCurrency(currency), amount >= 0 else { return }
        try await orders.transaction { db in
            if let known = try await SubscriptionInvoiceRecord.find(id, on: db) {
                if paid, known.status != .paid {
                    known.status = .paid
                    known.at = UnixTime.nowMillis
                    try await known.save(on: db)
                }
                return
            }
            let row = SubscriptionInvoiceRecord()
            row.id = id
            row.subscriptionID = subscription
            row.amount = amount
            row.currency = currency
            row.status = paid ? .paid : .failed
            row.at = UnixTime.nowMillis
            try await row.create(on: db)
        }
    }

    /// The sandbox page's buttons: what Stripe's events would do, applied at once.
    func sandbox(_ action: SandboxPayments.SubscriptionAction, checkout: String) async throws -> Bool {
        guard let sandbox = services.payments as? SandboxPayments,
              let (providerID, invoice) = try await sandbox.act(action, checkout: checkout) else { return false }
        if action == .pay {
            try await settleCheckout(try await sandbox.subscriptionCheckout(id: checkout))
        }
        guard let record = try await SubscriptionRecord.query(on: db).filter(\.$checkoutID == checkout).first() else { return true }
        let id = try record.storedID
        if let invoice { try await store(invoice: invoice.id, amount: invoice.amount, currency: invoice.currency, paid: action != .failRenewal, for: id) }
        if let state = try await sandbox.subscription(id: providerID) {
            try await apply(state, to: id, failedAt: action == .failRenewal ? UnixTime.nowMillis : nil)
        }
        return true
    }

    // MARK: Quotes and orders

    /// The benefit the caller's plan gives an order placed now, and the subscription it comes from.
    /// `SELECT * FROM subscriptions WHERE status IN (paid statuses) AND account_id = `
    private static let paidQuery = "SELECT * FROM \"\(SubscriptionRecord.schema)\" WHERE \"status\" IN ("
        + SubscriptionStatus.paid.map { "'\($0.rawValue)'" }.joined(separator: ", ") + ") AND \"account_id\" = "

    typealias Benefit = (subscription: SubscriptionID, periodStart: Int64?, benefit: PlanBenefit)

    /// `kept`: a price quote may take the subscription's row kept for a second (`ReadCaches.plans`);
    /// an order reads it afresh. Either way what is read is kept for the next quote, and what the row
    /// means now (its period, its grace) is worked out on every call.
    func benefit(for account: UserID, kept: Bool = false) async throws -> Benefit? {
        let cache = services.caches.plans
        let found: (any SQLRow)?
        if kept, let entry = cache.value(account) {
            found = entry.row
        } else {
            // Every quote and order asks: plain SQL whose text is made once (docs/performance.md).
            guard let sql = db.tracedSQL else { throw Abort(.internalServerError) }
            let generation = cache.generation
            found = try await sql.raw("\(unsafeRaw: Self.paidQuery)\(bind: account) LIMIT 1").first()
            cache.keep(ReadCaches.KeptPlan(row: found), for: account, readAt: generation)
        }
        guard let row = found else { return nil }
        var record = try SubscriptionRecord(row: row)
        let now = UnixTime.nowMillis
        if record.status == .active, let end = record.periodEnd, end < now {
            // No renewal arrived in time: the provider knows (at most once per reading past the end).
            do {
                try await refresh(record)
                record = try await SubscriptionRecord.find(record.id, on: db) ?? record
            } catch {
                logger.warning("Could not read subscription \(record.id?.uuidString ?? "") from the provider: \(String(describing: error))")
            }
        }
        return try Self.benefit(of: record, at: now)
    }

    /// What `record` gives an order placed at `now`, if anything.
    static func benefit(of record: SubscriptionRecord, at now: Int64) throws -> Benefit? {
        guard record.term.benefitApplies(at: now) else { return nil }
        let terms = try record.terms
        return (try record.storedID, record.periodStart, PlanBenefit(terms: terms, includedLeft: terms.includedDeliveries - record.includedUsed))
    }

    /// The plans of an import's customers, as orders placed now would get them, read afresh in one
    /// statement per 500 accounts. A period that ended without word from the provider gives nothing
    /// here (the import does not ask the provider once per customer).
    func benefits(for accounts: [UserID]) async throws -> [UserID: Benefit] {
        guard !accounts.isEmpty, let sql = db.tracedSQL else { return [:] }
        let now = UnixTime.nowMillis
        var found: [UserID: Benefit] = [:]
        for chunk in accounts.chunked(500) {
            let rows = try await sql.select().column(SQLLiteral.all).from(SubscriptionRecord.schema)
                .where("status", .in, SQLBind.group(SubscriptionStatus.paid.map(\.rawValue)))
                .where("account_id", .in, SQLBind.group(Array(chunk))).all()
            for row in rows {
                let record = try SubscriptionRecord(row: row)
                if let benefit = try Self.benefit(of: record, at: now) { found[record.accountID] = benefit }
            }
        }
        return found
    }

    /// Takes one of the plan's included deliveries in the order's transaction: 409
    /// `included_deliveries_used` when a parallel order took the last one first.
    /// An import takes `count` at once, all or none.
    static func useIncluded(_ subscription: SubscriptionID, of account: UserID, count: Int = 1, limit: Int, periodStart: Int64?,
                            on db: any Database) async throws {
        guard let sql = db.tracedSQL else { return }
        var update = sql.update(SubscriptionRecord.schema)
            .set(SQLIdentifier("included_used"), to: SQLBinaryExpression(SQLIdentifier("included_used"), .add, SQLBind(count)))
            .where("id", .equal, SQLBind(subscription))
            .where("included_used", .lessThanOrEqual, SQLBind(limit - count))
        update = periodStart.map { update.where("period_start", .equal, SQLBind($0)) } ?? update.where(SQLIdentifier("period_start"), .is, SQLLiteral.null)
        let rows = try await update.returning("id").all()
        WrittenChanges.note(account, caches: nil)  // in the order's transaction: forgotten when it commits
        if rows.isEmpty {
            throw WaybillError(.conflict, .includedDeliveriesUsed, "Your plan's included deliveries are used up; ask for a new price.")
        }
    }

    /// A cancelled order gives its included delivery back, if it was counted in the current period.
    static func handle(_ event: DomainEvent, on db: any Database) async throws {
        guard case .shipment(let order, .cancelled) = event, order.planIncluded == true, let id = order.planSubscriptionID,
              let sql = db.tracedSQL else { return }
        try await sql.update(SubscriptionRecord.schema)
            .set(SQLIdentifier("included_used"), to: SQLBinaryExpression(SQLIdentifier("included_used"), .subtract, SQLLiteral.numeric("1")))
            .where("id", .equal, SQLBind(id)).where("included_used", .greaterThan, SQLBind(0))
            .where("period_start", .lessThanOrEqual, SQLBind(order.createdAt))
            .run()
        WrittenChanges.note(order.customerID, caches: nil)  // in the cancel's transaction: forgotten when it commits
    }
}
