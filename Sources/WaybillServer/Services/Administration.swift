import Fluent
import SQLKit
import Vapor
import WaybillCore

/// The administration (issue "Insurance, subscription plans, loyalty points, and an
/// administration…", item 4): re-authentication, the audit log, the reports queue's decisions.
/// Who may is `Permission.moderate` and `Reauthentication` (WaybillCore); this records it.
extension Accounts {
    /// 403 unless the caller holds `moderate` (admins), acts as a person (not an API key), and
    /// proved their password recently in this session: else 403 `reauthentication_required`.
    static func requireModerator(_ actor: Principal, on db: any Database) async throws {
        try await requireRecentPassword(actor, for: .moderate, on: db)
    }

    /// `permission`, exercised by a person (never an API key) whose session proved its password
    /// recently (`Reauthentication`): the administration, and decisions that move money.
    static func requireRecentPassword(_ actor: Principal, for permission: Permission, on db: any Database) async throws {
        try actor.require(permission)
        guard actor.keyScopes == nil else { throw WaybillError.forbidden }
        guard let session = try await Session.find(actor.sessionID, on: db), session.revokedAt == nil else {
            throw WaybillError.unauthenticated
        }
        guard Reauthentication.isRecent(provenAt: session.passwordProvenAt, now: UnixTime.nowMillis) else {
            throw WaybillError.reauthenticationRequired
        }
    }

    func requireModerator(_ actor: Principal) async throws { try await Self.requireModerator(actor, on: db) }

    /// The signed-in person enters their password again (throttled like a sign-in); their session
    /// then counts as recently authenticated for `Reauthentication.defaultWindowMillis`.
    func reauthenticate(password: String, by actor: Principal) async throws {
        guard actor.keyScopes == nil else { throw WaybillError.forbidden }
        do {
            _ = try await checkPassword(email: actor.user.email, password: password)
        } catch let error as WaybillError where error.code == .invalidCredentials {
            throw WaybillError(.unprocessableEntity, .invalidCredentials, "That is not your password.", fields: ["password": "invalid"])
        }
        let sessionID = actor.sessionID
        try await transaction { db in
            guard let session = try await Session.find(sessionID, on: db), session.revokedAt == nil else { throw WaybillError.unauthenticated }
            session.reauthenticatedAt = UnixTime.nowMillis
            try await session.save(on: db)
        }
    }

    // MARK: the audit log

    /// The audit log, newest first, narrowed by `search` (admins, recently authenticated).
    func auditLog(_ search: AuditSearch, for actor: Principal, maxLimit: Int = AuditSearch.maxPage) async throws -> [AuditEntry] {
        try await requireModerator(actor)
        let search = try search.validated(maxLimit: maxLimit).orValidationError()
        var query = AuditRecord.query(on: db)
        if let who = search.actor { query = query.filter(\.$actorID == who) }
        if let action = search.action { query = query.filter(\.$action == action) }
        if let target = search.targetID { query = query.filter(\.$targetID == target) }
        if let from = search.from { query = query.filter(\.$at >= from) }
        if let to = search.to { query = query.filter(\.$at <= to) }
        if let before = search.before { query = query.filter(\.$id < before) }
        return try await query.sort(\.$id, .descending).limit(search.limit).all().map(\.entry)
    }

    /// The audit log as CSV (RFC 4180, cells that a spreadsheet would run as a formula quoted
    /// harmless), up to `AuditSearch.maxExport` lines. The export itself is not a change; it is
    /// still a staff action worth knowing about, so it is logged at notice level.
    func auditExport(_ search: AuditSearch, for actor: Principal) async throws -> String {
        var search = search
        search.limit = AuditSearch.maxExport
        let entries = try await auditLog(search, for: actor, maxLimit: AuditSearch.maxExport)
        logger.notice("audit log exported", metadata: ["lines": "\(entries.count)"])
        return CSVText.line(AuditEntry.csvHeader) + entries.map { CSVText.line($0.csvRow) }.joined()
    }

    // MARK: reports

    /// The moderation queue, oldest first: reports of messages, people and reviews.
    func reports(status: ReportStatus?, for actor: Principal) async throws -> [ReportRecord] {
        try await requireModerator(actor)
        var query = ReportRecord.query(on: db)
        if let status { query = query.filter(\.$status == status) }
        return try await query.sort(\.$createdAt).limit(200).all()
    }

    /// Moves a report out of the queue (`ReportDecisionRule`), with an optional note, in one
    /// transaction with its audit line. Nobody decides a report about themself or filed by themself.
    func decide(report id: ReportID, status wanted: ReportStatus, note: String?, by actor: Principal) async throws -> ReportRecord {
        try await requireModerator(actor)
        let note = note?.trimmingCharacters(in: .whitespacesAndNewlines)
        if let note, note.count > ReportDecisionRule.maxNoteLength { throw WaybillError.validation("note", "too_long") }
        let actorID = actor.userID
        return try await transaction { db in
            guard let report = try await ReportRecord.find(id, on: db) else { throw WaybillError.notFound }
            if report.reportedUserID == actorID || report.reporterID == actorID {
                throw WaybillError(.conflict, .cannotModifySelf, "Another moderator decides reports you filed or that are about you.")
            }
            guard ReportDecisionRule.next(from: report.status, to: wanted) else {
                throw WaybillError(.conflict, .invalidTransition, "This report is \(report.status.rawValue); it cannot become \(wanted.rawValue).")
            }
            let before = report.status
            report.status = wanted
            report.reviewedBy = actorID
            report.reviewedAt = UnixTime.nowMillis
            report.decisionNote = note?.isEmpty == false ? note : nil
            try await report.save(on: db)
            try await AuditLog.record(.reportDecided, by: actorID, target: .report, id.uuidString,
                                      before: ["status": before.rawValue], after: ["status": wanted.rawValue, "reported": report.reportedUserID.uuidString],
                                      reason: report.decisionNote, on: db)
            return report
        }
    }
}

// MARK: what a ban withdraws

extension Outbox {
    /// Withdraws a banned account's accepted requests (their shipments cancelled and refunded), after
    /// the ban's transaction: each cancellation is the shipment's own transaction.
    static let banWithdrawalKind = "ban_withdrawal"
}

extension Accounts {
    /// In the ban's transaction: the banned person's trips still to come are unpublished, requests
    /// waiting for an answer (theirs, or on their trips) end with their other party told, and a job
    /// withdraws accepted requests (`withdrawAccepted`). Their payouts stay frozen while the ban
    /// holds (`Travel.payTraveller`).
    func withdraw(bannedUser id: UserID, on db: any Database) async throws {
        let now = UnixTime.nowMillis, events = services.events
        let trips = try await TripRecord.query(on: db).filter(\.$travellerID == id).filter(\.$cancelledAt == nil).all()
        for trip in trips where BanWithdrawal.unpublishesTrip(cancelled: trip.cancelledAt != nil, departsUntil: trip.departsUntil, now: now) {
            trip.cancelledAt = now
            trip.updatedAt = now
            try await trip.save(on: db)
        }
        let tripIDs = trips.compactMap(\.id)
        var waiting = try await TripRequestRecord.query(on: db).filter(\.$senderID == id).filter(\.$status == .requested).all()
        if !tripIDs.isEmpty {
            waiting += try await TripRequestRecord.query(on: db).filter(\.$tripID ~~ tripIDs).filter(\.$status == .requested).all()
        }
        for r in waiting where BanWithdrawal.outcome(request: r.status, shipment: nil) == .cancelRequest {
            r.status = .cancelled
            r.reason = "Withdrawn by the platform"
            r.updatedAt = now
            try await r.save(on: db)
            try await events.record(.tripRequestChanged(try TripRequestFacts(r), .cancelled), on: db)
            let other = r.senderID == id ? r.travellerID : r.senderID
            try await Travel.notify(other, .tripRequestCancelled, body: "A request you were part of was withdrawn by the platform.", on: db)
        }
        try await Outbox.enqueueJob(kind: Outbox.banWithdrawalKind, payload: id.uuidString, on: db)
    }

    /// The job after a ban: each accepted request of the banned person (as sender or traveller)
    /// whose parcel is not yet with the traveller has its shipment cancelled, refunded if paid
    /// (the request and the trip's room follow, `TripRequestSubscriber`). Idempotent; does nothing
    /// if the ban was lifted meanwhile.
    func withdrawAccepted(bannedUser id: UserID) async throws {
        guard let user = try await User.find(id, on: db), user.isBanned else { return }
        let orders = Orders(services: services, db: db, logger: logger)
        let accepted = try await TripRequestRecord.query(on: db).group(.or) { $0.filter(\.$senderID == id).filter(\.$travellerID == id) }
            .filter(\.$status == .accepted).all()
        for r in accepted {
            guard let shipmentID = r.shipmentID else { continue }
            let shipment = try await Order.find(shipmentID, on: db)
            guard BanWithdrawal.outcome(request: r.status, shipment: shipment?.status) == .cancelShipment else { continue }
            _ = try await orders.withdraw(shipmentID, reason: "Withdrawn by the platform")
        }
    }
}

extension Accounts {
    /// When a ban is lifted: the payouts it froze are queued again (paying is idempotent, so a
    /// shipment already paid is not paid twice).
    static func resumePayouts(of id: UserID, on db: any Database) async throws {
        let carried = try await TripRequestRecord.query(on: db).filter(\.$travellerID == id).filter(\.$shipmentID != nil).all()
        let shipments = carried.compactMap(\.shipmentID)
        guard !shipments.isEmpty else { return }
        let delivered = try await Order.query(on: db).filter(\.$id ~~ shipments).filter(\.$status == .delivered).all()
        for order in delivered {
            try await Outbox.enqueueJob(kind: Outbox.travellerPayoutKind, payload: try order.storedID.uuidString, on: db)
        }
    }
}

/// A report as the administration's page shows it: who filed it, whom it is about, and what was
/// reported (the message's text, the review's comment).
struct ReportView: Sendable {
    var report: ReportRecord
    var reporter: User?
    var reported: User?
    var excerpt: String?
    /// The reported message or review: what the moderators may hide (nil for a report of a person),
    /// and whether it is hidden now.
    var content: (item: ModeratedItem, hidden: Bool)?
}

extension Accounts {
    func reportViews(status: ReportStatus?, for actor: Principal) async throws -> [ReportView] {
        let reports = try await reports(status: status, for: actor)
        let people = Set(reports.flatMap { [$0.reporterID, $0.reportedUserID] })
        let users = people.isEmpty ? [] : try await User.query(on: db).filter(\.$id ~~ Array(people)).all()
        let byID = Dictionary(try users.map { (try $0.storedID, $0) }, uniquingKeysWith: { a, _ in a })
        let messageIDs = reports.compactMap(\.messageID), ratingIDs = reports.compactMap(\.ratingID)
        let messages = messageIDs.isEmpty ? [] : try await MessageRecord.query(on: db).filter(\.$id ~~ messageIDs).all()
        let ratings = ratingIDs.isEmpty ? [] : try await RatingRecord.query(on: db).filter(\.$id ~~ ratingIDs).all()
        let texts = Dictionary(try messages.map { (try $0.storedID.rawValue, $0.body) } + ratings.map { (try $0.storedID.rawValue, $0.comment ?? "") },
                               uniquingKeysWith: { a, _ in a })
        let hidden = Dictionary(try messages.map { (try $0.storedID.rawValue, $0.hiddenAt != nil) } + ratings.map { (try $0.storedID.rawValue, $0.hiddenAt != nil) },
                                uniquingKeysWith: { a, _ in a })
        return reports.map { r in
            let content: ModeratedItem? = r.messageID.map { .message($0) } ?? r.ratingID.map { .review($0) }
            return ReportView(report: r, reporter: byID[r.reporterID], reported: byID[r.reportedUserID],
                              excerpt: (r.messageID?.rawValue ?? r.ratingID?.rawValue).flatMap { texts[$0] },
                              content: content.flatMap { item in hidden[item.uuid].map { (item, $0) } })
        }
    }

    /// The people an audit page names (actors and account targets), by id.
    func auditPeople(_ entries: [AuditEntry]) async throws -> [UserID: User] {
        let ids = Set(entries.compactMap(\.actor) + entries.filter { $0.targetKind == .user }.compactMap { UserID(uuidString: $0.targetID) })
        guard !ids.isEmpty else { return [:] }
        let users = try await User.query(on: db).filter(\.$id ~~ Array(ids)).all()
        return Dictionary(try users.map { (try $0.storedID, $0) }, uniquingKeysWith: { a, _ in a })
    }
}

// MARK: hiding and restoring content

/// What a hide or a restore did.
struct ModerationOutcome: Sendable {
    var item: ModeratedItem
    var hidden: Bool
    /// Whose content it is.
    var author: UserID?
}

extension Accounts {
    /// Hides content from everyone but its author and the administration, or shows it again
    /// (`ModeratedContent`), with its audit line, in one transaction. Hiding needs a reason, which
    /// the author is shown; hiding what is hidden (or restoring what is shown) is 409.
    func setHidden(_ item: ModeratedItem, hide: Bool, reason raw: String?, by actor: Principal) async throws -> ModerationOutcome {
        try await requireModerator(actor)
        let reason = try ContentModeration.reason(raw, hiding: hide).orValidationError()
        let actorID = actor.userID
        return try await transaction { db in
            let now = UnixTime.nowMillis
            let stamp: Int64? = hide ? now : nil, note: String? = hide ? reason : nil
            func check(_ hiddenAt: Int64?) throws {
                guard ContentModeration.decide(hide: hide, hidden: hiddenAt != nil) == .allowed else {
                    throw WaybillError(.conflict, .conflict, hide ? "This is hidden already." : "This is not hidden.")
                }
            }
            var author: UserID?
            switch item {
            case .trip(let id):
                guard let trip = try await TripRecord.find(id, on: db) else { throw WaybillError.notFound }
                try check(trip.hiddenAt)
                (trip.hiddenAt, trip.hiddenReason, trip.updatedAt) = (stamp, note, now)
                try await trip.save(on: db)
                author = trip.travellerID
            case .message(let id):
                guard let message = try await MessageRecord.find(id, on: db), message.kind != .system else { throw WaybillError.notFound }
                try check(message.hiddenAt)
                (message.hiddenAt, message.hiddenReason) = (stamp, note)
                try await message.save(on: db)
                author = message.senderID
                // Open conversations see it go (or come back) at once, as their readers see it
                // (contact details masked where the conversation masks them).
                if let subject = try await ConversationRecord.find(message.conversationID, on: db)?.subject,
                   let access = try await Conversations.access(to: subject, caller: nil, on: db) {
                    let sender = try await message.senderID.asyncMap { try await User.find($0, on: db) } ?? nil
                    try await Conversations.announce(Conversations.view(message, access: access, sender: sender, references: [:]),
                                                     in: message.conversationID, from: nil, preview: nil, on: db)
                }
            case .review(let id):
                guard let rating = try await RatingRecord.find(id, on: db) else { throw WaybillError.notFound }
                try check(rating.hiddenAt)
                (rating.hiddenAt, rating.hiddenReason) = (stamp, note)
                try await rating.save(on: db)
                author = rating.reviewerID
                // A published review leaves (or rejoins) its ratee's average.
                if rating.status == .published, let sql = db.tracedSQL {
                    try await Ratings.count(rating, sign: hide ? -1 : 1, on: sql)
                }
            case .picture(let id):
                guard let picture = try await ProfilePicture.find(id, on: db) else { throw WaybillError.notFound }
                try check(picture.hiddenAt)
                (picture.hiddenAt, picture.hiddenReason) = (stamp, note)
                try await picture.save(on: db)
                author = id
            }
            try await AuditLog.record(hide ? .contentHidden : .contentRestored, by: actorID, target: item.kind.auditTarget, item.uuid.uuidString,
                                      before: ["hidden": String(!hide)], after: ["hidden": String(hide), "author": author?.uuidString],
                                      reason: reason, on: db)
            return ModerationOutcome(item: item, hidden: hide, author: author)
        }
    }
}
