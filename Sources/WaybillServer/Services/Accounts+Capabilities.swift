import Fluent
import SQLKit
import Vapor
import WaybillCore

/// Capabilities and restrictions (issue "Shipments with legs, parties and a money ledger", item 3):
/// who may grant what and restrict whom is `CapabilityPolicy` (WaybillCore); this records it.
extension Accounts {
    /// Grants (`granted: true`) or takes back a staff capability. Managers grant driver, counter
    /// and manager; only an admin grants admin; nobody changes their own.
    func setCapability(_ capability: Capability, granted: Bool, on id: UserID, by actor: Principal) async throws -> User {
        try decide(CapabilityPolicy.mayChange(capability, on: id, by: actor.userID, having: actor.caller.capabilities), field: "capability")
        return try await transaction { db in
            guard let user = try await User.find(id, on: db) else { throw WaybillError.notFound }
            var staff = Capability.parseList(user.staffCapabilities)
            if granted { staff.insert(capability) } else { staff.remove(capability) }
            try await Self.setStaffCapabilities(user, to: staff, by: actor.userID, on: db)
            return user
        }
    }

    /// Suspends or bans an account, with a reason the person is told (admins, recently
    /// authenticated). A ban ends every session and live connection at once, unpublishes the
    /// person's trips, withdraws their open requests (refunding what was paid) and freezes their
    /// payouts (`withdraw(bannedUser:)`); a suspension leaves the account signed in, able to follow
    /// what is on its way. Recorded in the audit log in the same transaction.
    func restrict(_ id: UserID, _ request: RestrictionRequest, by actor: Principal) async throws -> (User, RestrictionRecord) {
        // Who may ask at all comes first: nobody else learns which accounts exist or what the form wants.
        try await requireModerator(actor)
        let clean: RestrictionRequest
        switch request.validated(now: UnixTime.nowMillis) {
        case .success(let value): clean = value
        case .failure(let error): throw WaybillError.validation(error.errors)
        }
        guard let target = try await User.find(id, on: db) else { throw WaybillError.notFound }
        try decide(CapabilityPolicy.mayRestrict(id, targetHas: target.capabilities, by: actor.userID, having: actor.caller.capabilities))
        return try await transaction { db in
            guard let user = try await User.find(id, on: db) else { throw WaybillError.notFound }
            let before = AuditLog.snapshot(of: user)
            let record = RestrictionRecord(userID: id, request: clean, setBy: actor.userID, at: UnixTime.nowMillis)
            try await record.create(on: db)
            try await Self.refreshRestriction(user, on: db)
            if clean.kind == .banned {
                try await Self.revokeSessions(userID: id, reason: "banned", on: db)
                try await withdraw(bannedUser: id, on: db)
            }
            try await AuditLog.record(clean.kind == .banned ? .accountBanned : .accountSuspended, by: actor.userID, target: .user,
                                      id.uuidString, before: before, after: AuditLog.snapshot(of: user), reason: clean.reason, on: db)
            return (user, record)
        }
    }

    /// Lifts a restriction before its time. Lifting one already lifted or over changes nothing.
    func lift(restriction restrictionID: Int, of id: UserID, by actor: Principal) async throws -> User {
        try await requireModerator(actor)
        guard let target = try await User.find(id, on: db) else { throw WaybillError.notFound }
        try decide(CapabilityPolicy.mayRestrict(id, targetHas: target.capabilities, by: actor.userID, having: actor.caller.capabilities))
        return try await transaction { db in
            guard let user = try await User.find(id, on: db),
                  let record = try await RestrictionRecord.find(restrictionID, on: db), record.userID == id
            else { throw WaybillError.notFound }
            if record.liftedAt == nil {
                let before = AuditLog.snapshot(of: user)
                record.liftedAt = UnixTime.nowMillis
                record.liftedBy = actor.userID
                try await record.save(on: db)
                let wasBanned = user.isBanned
                try await Self.refreshRestriction(user, on: db)
                if wasBanned, !user.isBanned { try await Self.resumePayouts(of: id, on: db) }
                try await AuditLog.record(.restrictionLifted, by: actor.userID, target: .user, id.uuidString, before: before,
                                          after: AuditLog.snapshot(of: user), reason: "restriction \(restrictionID)", on: db)
            }
            return user
        }
    }

    /// An account's restrictions, newest first (account managers read them; admins set and lift
    /// them; the person sees the one in force).
    func restrictions(of id: UserID, for actor: Principal) async throws -> [RestrictionRecord] {
        try actor.require(.manageUsers)
        guard try await User.find(id, on: db) != nil else { throw WaybillError.notFound }
        return try await RestrictionRecord.query(on: db).filter(\.$userID == id).sort(\.$id, .descending).limit(100).all()
    }

    /// The restriction in force on an account (with its reason), if any.
    static func restrictionInForce(of user: User, on db: any Database) async throws -> RestrictionRecord? {
        guard user.restriction != nil else { return nil }
        let now = UnixTime.nowMillis, userID = try user.storedID
        let open = try await RestrictionRecord.query(on: db).filter(\.$userID == userID).filter(\.$liftedAt == nil).all()
        return open.filter { $0.restriction.holds(at: now) }
            .max { a, b in
                // A ban wins; of suspensions, the one that lasts longest.
                if a.kind != b.kind { return a.kind == .suspended }
                return (a.until ?? .max) < (b.until ?? .max)
            }
    }

    private func decide(_ decision: CapabilityPolicy.Decision, field: String? = nil) throws {
        switch decision {
        case .allowed: return
        case .forbidden: throw WaybillError.forbidden
        case .notOnSelf:
            throw WaybillError(.conflict, .cannotModifySelf, "You cannot change your own capabilities or restrict your own account.")
        case .notGranted:
            throw WaybillError(.unprocessableEntity, .notGranted, ErrorCode.notGranted.english, fields: field.map { [$0: "not_granted"] } ?? [:])
        }
    }

    /// Records a change of an account's staff capabilities: a grant for each one added, the
    /// revocation of each one taken back, the account row (with its primary `role`), and the
    /// account's live connections closed so they reopen with what it may see now.
    static func setStaffCapabilities(_ user: User, to wanted: Set<Capability>, by actor: UserID?, on db: any Database) async throws {
        let id = try user.storedID, now = UnixTime.nowMillis
        let current = Capability.parseList(user.staffCapabilities)
        let wanted = wanted.intersection(Capability.stored)
        guard wanted != current else { return }
        for added in wanted.subtracting(current).sorted(by: { $0.rawValue < $1.rawValue }) {
            try await CapabilityGrant(userID: id, capability: added, grantedBy: actor, at: now).create(on: db)
        }
        let removed = current.subtracting(wanted)
        if !removed.isEmpty {
            try await CapabilityGrant.query(on: db).filter(\.$userID == id).filter(\.$capability ~~ Array(removed))
                .filter(\.$revokedAt == nil).set(\.$revokedBy, to: actor).set(\.$revokedAt, to: now).update()
        }
        // Staff (or the operator's command line) changing someone's capabilities is audited; a
        // person taking on traveller themself is not a staff action.
        if actor != id {
            let staffBefore = Capability.storedList(current), staffAfter = Capability.storedList(wanted)
            for added in wanted.subtracting(current).sorted(by: { $0.rawValue < $1.rawValue }) {
                try await AuditLog.record(.capabilityGranted, by: actor, target: .user, id.uuidString, before: ["capabilities": staffBefore],
                                          after: ["capabilities": staffAfter, "capability": added.rawValue], on: db)
            }
            for taken in removed.sorted(by: { $0.rawValue < $1.rawValue }) {
                try await AuditLog.record(.capabilityRevoked, by: actor, target: .user, id.uuidString, before: ["capabilities": staffBefore],
                                          after: ["capabilities": staffAfter, "capability": taken.rawValue], on: db)
            }
        }
        user.staffCapabilities = Capability.storedList(wanted)
        user.role = Capability.primaryRole(of: wanted)
        try await user.save(on: db)
        try await LiveLog.publishControl(LiveRow.accessChanged, topic: LiveLog.userTopic(id), data: ["user": id.uuidString], on: db)
    }

    /// Records the grants of an account created with staff capabilities (invited staff, demo
    /// accounts, the operator's command line).
    static func recordGrants(of user: User, by actor: UserID?, on db: any Database) async throws {
        let now = UnixTime.nowMillis, userID = try user.storedID
        for capability in Capability.parseList(user.staffCapabilities).sorted(by: { $0.rawValue < $1.rawValue }) {
            try await CapabilityGrant(userID: userID, capability: capability, grantedBy: actor, at: now).create(on: db)
        }
    }

    /// Writes the restriction in force onto the account row, from its restrictions.
    static func refreshRestriction(_ user: User, on db: any Database) async throws {
        let userID = try user.storedID
        let open = try await RestrictionRecord.query(on: db).filter(\.$userID == userID).filter(\.$liftedAt == nil).all()
        let standing = AccountStanding.of(capabilities: user.capabilities, restrictions: open.map(\.restriction), at: UnixTime.nowMillis)
        let wasSuspended = user.restriction == .suspended
        user.restrictedKind = standing.restriction?.kind.rawValue
        user.restrictedUntil = standing.restriction?.until
        try await user.save(on: db)
        // What the account may see changes with a suspension too: its live connections reopen.
        if wasSuspended || standing.restriction?.kind == .suspended {
            try await LiveLog.publishControl(LiveRow.accessChanged, topic: LiveLog.userTopic(userID), data: ["user": userID.uuidString], on: db)
        }
    }
}
