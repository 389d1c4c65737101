import Fluent
import SQLKit
import Vapor
import WaybillCore

/// Travellers' payout accounts: onboarding with the payment provider (Stripe Connect Express, or
/// the sandbox's test page), the status the provider reports (`account.updated`), and the rule that
/// only travellers whose transfers are active accept paid requests (`TripPolicy.mayAcceptPaid`).
extension Travel {
    struct PayoutAccountView: Sendable {
        var status: PayoutAccountStatus
        var requirementsDue: [String]
        var sandbox: Bool
    }

    /// The traveller's payout account. While it is not active, the provider is asked again (the
    /// traveller may have just finished onboarding): its answer, not a query string, decides.
    func payoutAccount(for me: Principal, refresh: Bool = true) async throws -> PayoutAccountView {
        try requireTraveller(me)
        guard let user = try await User.find(me.userID, on: db) else { throw WaybillError.notFound }
        var due: [String] = []
        var status = user.payoutStatus
        if refresh, let account = user.payoutAccount, status != .active, status != .disconnected,
           services.providerCallLimiter.take("status:" + me.userID.uuidString) == nil {
            let state = try await services.payments.connectedAccount(account)
            // Stamped to the second, as Stripe stamps its events: an event of the same second still applies.
            status = try await store(state, account: account, user: me.userID, at: UnixTime.nowSeconds * 1000)
            due = state?.requirementsDue ?? []
        }
        return PayoutAccountView(status: status, requirementsDue: due, sandbox: services.payments.isSandbox)
    }

    /// Opens the traveller's connected account if they have none (or removed Waybill's access to
    /// the old one) and returns a single-use link to the provider's onboarding.
    func startPayoutOnboarding(by me: Principal) async throws -> String {
        try requireTraveller(me)
        if let wait = services.providerCallLimiter.take("onboarding:" + me.userID.uuidString) {
            throw WaybillError.tooManyRequests(retryAfter: wait, "Too many onboarding links asked for; try again in a minute.")
        }
        guard let user = try await User.find(me.userID, on: db) else { throw WaybillError.notFound }
        var account = user.payoutAccount
        if user.payoutStatus.needsNewAccount {
            let created = try await services.payments.createConnectedAccount(for: me.userID, email: user.email, country: services.config.payoutCountry)
            try await transaction { db in
                guard let sql = db.tracedSQL else { return }
                try await sql.update(User.schema)
                    .set("payout_account", to: SQLBind(created))
                    .set("payout_status", to: SQLBind(PayoutAccountStatus.pending.rawValue))
                    // Nothing read from the provider yet: its first event or reading applies.
                    .set("payout_status_at", to: SQLBind(Int64?.none))
                    .where("id", .equal, SQLBind(me.userID)).run()
                WrittenChanges.note(me.userID, caches: services.caches)
            }
            account = created
        }
        guard let account else { throw WaybillError.notFound }
        let base = services.config.publicURL
        return try await services.payments.onboardingLink(account: account, refreshURL: base + WebRoutes.payoutsRefresh(),
                                                          returnURL: base + WebRoutes.payoutsReturn())
    }

    /// Writes what the provider says of `account` unless a newer reading is already stored (events
    /// arrive in any order). nil: the platform lost access to it. Returns the status now stored.
    @discardableResult
    func store(_ state: ConnectedAccountState?, account: String, user: UserID? = nil, at time: Int64) async throws -> PayoutAccountStatus {
        let status: PayoutAccountStatus = state?.status ?? .disconnected
        return try await transaction { db in
            var query = User.query(on: db).filter(\.$payoutAccount == account)
            if let user { query = query.filter(\.$id == user) }
            guard let person = try await query.first() else { return .none }
            guard ProviderEventOrder.supersedes(time, stored: person.payoutStatusAt) else { return person.payoutStatus }
            guard let sql = db.tracedSQL else { return status }
            let personID = try person.storedID
            try await sql.update(User.schema)
                .set("payout_status", to: SQLBind(status.rawValue)).set("payout_status_at", to: SQLBind(time))
                .where("id", .equal, SQLBind(personID)).run()
            WrittenChanges.note(person.id, caches: services.caches)
            if status != person.payoutStatus {
                logger.info("Payout account of \(personID.uuidString) is now \(status.rawValue)")
            }
            return status
        }
    }

    /// One verified event from the Connect endpoint, handled once per id. The account is read
    /// again from the provider rather than trusted from the event (which may be stale); a
    /// deauthorisation marks it disconnected.
    func handleConnectEvent(_ json: [String: Any]) async throws {
        guard let eventID = json["id"] as? String, let type = json["type"] as? String else {
            throw WaybillError(.badRequest, .invalidEvent, "The event has no id or type.")
        }
        let object = (json["data"] as? [String: Any])?["object"] as? [String: Any]
        let account: String? = switch type {
        case "account.updated": object?["id"] as? String
        case "account.application.deauthorized", "capability.updated": json["account"] as? String
        default: nil
        }
        guard let account, StripePayments.isStripeID(account) else { return }
        // `created` is in seconds; a status read for an older event never replaces a newer one.
        let created = (json["created"] as? NSNumber).map { $0.int64Value.multipliedReportingOverflow(by: 1000) }
        let time = created.flatMap { $0.overflow ? nil : $0.partialValue } ?? UnixTime.nowMillis
        try await StripeEvent.handleOnce(eventID, type: type, db: db, services: services, logger: logger) {
            let state = type == "account.application.deauthorized" ? nil : try await services.payments.connectedAccount(account)
            try await store(state, account: account, at: time)
        }
    }
}

extension WebRoutes {
    /// Where the provider's onboarding sends the traveller back, and where an expired link goes.
    static let payoutsReturn = WebPath("/travel/payouts/return")
    static let payoutsRefresh = WebPath("/travel/payouts/refresh")
    static let payoutsStart = WebPath("/travel/payouts")
}
