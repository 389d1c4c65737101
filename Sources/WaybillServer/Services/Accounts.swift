import Fluent
import SQLKit
import Vapor
import WaybillCore

/// A signed-in caller: their account as it is now in the database and the session they use.
struct Principal: Sendable {
    let user: User
    let sessionID: SignInID
    /// Set when the caller is a machine with an API key: what the key may do (`APIKeyPolicy`).
    var keyScopes: Set<APIKeyScope>?
    /// The account's id, read once from `user` (which came from the database, so it has one).
    let userID: UserID

    init(user: User, sessionID: SignInID, keyScopes: Set<APIKeyScope>? = nil) throws {
        self.user = user
        self.sessionID = sessionID
        self.keyScopes = keyScopes
        userID = try user.storedID
    }

    /// The caller as an event names them (a value).
    var person: PersonRow { get throws { try PersonRow(user) } }

    /// The caller as WaybillCore's policies know them.
    var caller: Caller { user.caller(id: userID) }

    /// 403 unless the caller's capabilities grant `permission` (`WaybillCore.Permission`).
    func require(_ permission: Permission) throws {
        guard caller.may(permission) else {
            // Theirs but for a suspension: say so, rather than "your role does not allow this".
            if permission.isGranted(to: user.capabilities) { throw WaybillError.accountSuspended }
            throw WaybillError.forbidden
        }
    }

    func may(_ permission: Permission) -> Bool { caller.may(permission) }
}

struct IssuedTokens: Sendable {
    let accessToken: String
    let refreshToken: String
    let user: User
}

/// Everything about accounts: registration, sign-in, sessions, codes, profiles and user management.
/// The API and (later) the web app both call this; neither holds a rule of its own.
struct Accounts {
    let services: WaybillServices
    let db: any Database
    let logger: Logger
    let clientAddress: String

    init(services: WaybillServices, db: any Database, logger: Logger, clientAddress: String) {
        self.services = services
        self.db = db
        self.logger = logger
        self.clientAddress = clientAddress
    }

    init(request: Request) {
        self.init(services: request.application.waybill, db: request.db, logger: request.logger, clientAddress: request.clientAddress)
    }

    func transaction<T: Sendable>(_ body: @escaping @Sendable (any Database) async throws -> T) async throws -> T {
        let result = try await db.writeTransaction(services, body)
        services.outbox.poke()
        return result
    }

    private func throttle<T: Sendable>(_ body: @Sendable (Throttle) async throws -> T) async throws -> T {
        let throttle = try Throttle(db)
        return try await services.writeLock.withLock { try await body(throttle) }
    }

    /// Counts one password attempt against each key before the password is compared. When any key
    /// says wait, nothing is counted (the transaction rolls back) and the answer is 429 with the wait.
    private func reserveAttempt(_ keys: [(String, LoginThrottlePolicy)], _ message: String) async throws {
        do {
            try await db.writeTransaction(services) { db in
                let throttle = try Throttle(db)
                for (key, policy) in keys {
                    if let wait = try await throttle.reserve(key, policy: policy) { throw ThrottleWait(seconds: wait) }
                }
            }
        } catch let wait as ThrottleWait {
            throw WaybillError.tooManyRequests(retryAfter: Int(clamping: wait.seconds), message)
        }
    }

    private struct ThrottleWait: Error { let seconds: Int64 }

    func findUser(email: String) async throws -> User? {
        try await User.query(on: db).filter(\.$email == Validation.normalizeEmail(email)).first()
    }

    // MARK: Registration and email verification

    func register(_ form: Registration) async throws {
        let form = try form.validated().orValidationError()
        try await checkCodeBudgetForClient()
        if try await findUser(email: form.email) != nil { throw WaybillError.emailInUse }
        let hash = try await services.passwords.hash(form.password)
        let codes = services.codes
        do {
            try await transaction { db in
                let user = User(role: .customer, email: form.email, passwordHash: hash, firstName: form.firstName,
                                lastName: form.lastName, address: form.address, postalCode: form.postalCode,
                                city: form.city, isCompany: form.isCompany, companyName: form.companyName)
                try await user.create(on: db)
                let code = try await codes.issue(userID: try user.storedID, purpose: .verifyEmail, on: db)
                try await Outbox.enqueue(MailTemplates.verifyEmail(user, code: code), on: db)
            }
        } catch let error as any DatabaseError where error.isConstraintFailure {
            throw WaybillError.emailInUse  // a parallel registration won the race
        }
        logger.info("Customer account registered")
    }

    func verifyEmail(email: String, code: String) async throws {
        let user = try await findUser(email: email)
        let row = try await services.writeLock.withLock {
            try await services.codes.check(code, userID: user?.id, purpose: .verifyEmail, on: db)
        }
        try await transaction { db in
            try await OneTimeCodes.consume(row, on: db)
            try await User.query(on: db).filter(\.$id == row.$user.id).filter(\.$emailVerifiedAt == nil)
                .set(\.$emailVerifiedAt, to: UnixTime.now).update()
        }
    }

    /// Answers the same whether or not such an account exists; sends only to unverified accounts,
    /// within the per-account budget.
    func resendVerification(email: String) async throws {
        try await checkCodeBudgetForClient()
        guard let user = try await findUser(email: email), user.emailVerifiedAt == nil, !user.isBanned else { return }
        try await mailCodeQuietly(to: user, purpose: .verifyEmail, template: { MailTemplates.verifyEmail($0, code: $1) })
    }

    /// Mails a new code within the account's budget; over it, sends nothing and says nothing, so
    /// the answer does not tell whether the account exists.
    private func mailCodeQuietly(to user: User, purpose: OneTimeCode.Purpose,
                                 template: @escaping @Sendable (User, String) -> MailMessage) async throws {
        guard let id = user.id else { return }
        guard try await OneTimeCodes.sendBlocked(userID: id, purpose: purpose, on: db) == nil else {
            logger.info("Code (\(purpose.rawValue)) not sent: per-account budget used")
            return
        }
        let codes = services.codes
        try await transaction { db in
            let code = try await codes.issue(userID: id, purpose: purpose, on: db)
            try await Outbox.enqueue(template(user, code), on: db)
        }
    }

    /// Per client address: at most 30 requests that mail a code per hour, counted atomically
    /// (parallel requests cannot all read 29 and pass).
    private func checkCodeBudgetForClient() async throws {
        let key = Throttle.key("codes:ip", clientAddress)
        if let wait = try await db.writeStatement(services, { db in try await Throttle(db).take(key, limit: 30, window: 3600) }) {
            throw WaybillError.tooManyRequests(retryAfter: Int(clamping: wait))
        }
    }

    // MARK: Sign-in and sessions

    func login(email rawEmail: String, password: String, device: (DevicePlatform, String)?) async throws -> IssuedTokens {
        if let (platform, token) = device { try Self.validatePushToken(token, platform: platform, field: "device.pushToken") }
        let user = try await checkPassword(email: rawEmail, password: password)
        let userID = try user.storedID
        let refresh = TokenService.newRefreshToken()
        let sessionID = try await transaction { db in
            let session = Session(userID: userID)
            session.reauthenticatedAt = UnixTime.nowMillis  // the password was just proven
            try await session.create(on: db)
            let sessionID = try session.storedID
            try await RefreshToken(sessionID: sessionID, tokenHash: TokenService.hash(refresh),
                                   expiresAt: UnixTime.now.addingTimeInterval(TokenService.refreshLifetime)).create(on: db)
            if let (platform, token) = device {
                try await Self.upsertDevice(userID: userID, platform: platform, pushToken: token, on: db)
            }
            return sessionID
        }
        let access = try await services.tokens.accessToken(userID: userID, role: user.role, sessionID: sessionID)
        return IssuedTokens(accessToken: access, refreshToken: refresh, user: user)
    }

    /// The sign-in check shared by the API and the web app: throttled per account and per client
    /// address, the same time whether or not the account exists, then disabled and unverified
    /// accounts refused.
    func checkPassword(email rawEmail: String, password: String) async throws -> User {
        let email = Validation.normalizeEmail(rawEmail)
        let accountKey = Throttle.key("login:acct", email)
        let clientKey = Throttle.key("login:ip", clientAddress)
        // The attempt is counted before the password is compared, in one transaction per attempt,
        // so forty guesses sent at once are forty counted attempts, not forty free ones.
        try await reserveAttempt([(clientKey, .perClient), (accountKey, .perAccount)],
                                 "Too many failed sign-ins. Wait a moment and try again.")
        let user = try await findUser(email: email)
        // Too long for bcrypt: checked against the decoy so it takes as long, then refused.
        let verified = try await services.passwords.verify(String(password.utf8.prefix(PasswordPolicy.maxBytes)) ?? "", against: user?.passwordHash)
        let ok = verified && password.utf8.count <= PasswordPolicy.maxBytes
        guard ok, let user, user.id != nil else {
            logger.info("Sign-in refused: invalid credentials")
            throw WaybillError.invalidCredentials
        }
        // A success: the account starts afresh and the address gets its attempt back.
        try await throttle { throttle in
            try await throttle.reset(accountKey)
            try await throttle.release(clientKey)
        }
        if user.isBanned { throw WaybillError.accountDisabled }
        if user.emailVerifiedAt == nil { throw WaybillError.emailNotVerified }
        return user
    }

    // MARK: Web sessions

    /// Signs in from the web app: a session like an app's, held by a cookie instead of tokens.
    /// The cookie is `<session id>.<secret>`; only the secret's hash is stored.
    func webLogin(email: String, password: String) async throws -> (user: User, cookie: String) {
        let user = try await checkPassword(email: email, password: password)
        let secret = TokenService.newRefreshToken()
        let userID = try user.storedID
        let sessionID = try await transaction { db in
            let session = Session(userID: userID)
            session.reauthenticatedAt = UnixTime.nowMillis  // the password was just proven
            session.webTokenHash = TokenService.hash(secret)
            session.lastUsedAt = UnixTime.nowMillis
            try await session.create(on: db)
            return try session.storedID
        }
        return (user, sessionID.uuidString + "." + secret)
    }

    /// Who a web session cookie belongs to, under the same rules as an access token: an ended
    /// session or a disabled account is refused at once. Sessions last as long as refresh tokens.
    func authenticate(webCookie cookie: String) async throws -> Principal {
        let parts = cookie.split(separator: ".", maxSplits: 1)
        guard parts.count == 2, parts[1].count <= 100, let sessionID = SignInID(uuidString: String(parts[0])),
              let session = try await Session.find(sessionID, on: db),
              let hash = session.webTokenHash, constantTimeEquals(Data(hash.utf8), Data(TokenService.hash(String(parts[1])).utf8))
        else { throw WaybillError.unauthenticated }
        guard session.revokedAt == nil else { throw WaybillError.sessionRevoked }
        if let created = session.createdAt, created.addingTimeInterval(TokenService.refreshLifetime) < UnixTime.now {
            throw WaybillError.sessionRevoked
        }
        // Unused for longer than the idle limit: ended (ASVS 7.3.1). Use is noted at most every
        // five minutes, so a page view is not a write.
        let now = UnixTime.nowMillis
        let lastUsed = session.lastUsedAt ?? session.createdAt.map { Int64($0.timeIntervalSince1970 * 1000) } ?? now
        let idleLimit = Int64(services.config.webSessionIdleMinutes) * 60_000
        let idle = now.subtractingReportingOverflow(lastUsed)
        if idle.overflow || idle.partialValue > idleLimit {
            try? await revokeSession(sessionID, reason: "idle")
            throw WaybillError.sessionRevoked
        }
        guard let user = try await User.find(session.$user.id, on: db) else { throw WaybillError.unauthenticated }
        if user.isBanned { throw WaybillError.accountDisabled }
        if idle.partialValue > 5 * 60_000 {
            try await services.writeLock.withLock {
                try await Session.query(on: db).filter(\.$id == sessionID).set(\.$lastUsedAt, to: now).update()
            }
        }
        return try Principal(user: user, sessionID: sessionID)
    }

    /// Ends a web session (sign-out).
    func endSession(_ id: SignInID) async throws {
        try await revokeSession(id, reason: "logout")
    }

    func refresh(token: String) async throws -> IssuedTokens {
        guard let stored = try await RefreshToken.query(on: db).filter(\.$tokenHash == TokenService.hash(token))
            .with(\.$session).first(), let tokenID = stored.id
        else { throw WaybillError.invalidRefreshToken }
        let session = stored.session
        guard session.revokedAt == nil else { throw WaybillError.sessionRevoked }
        if stored.retiredAt != nil {
            try await revokeSession(try session.storedID, reason: "refresh_token_reuse")
            logger.warning("Retired refresh token presented again: session revoked")
            throw WaybillError.sessionRevoked
        }
        guard stored.expiresAt > UnixTime.now else { throw WaybillError.invalidRefreshToken }
        guard let user = try await User.find(session.$user.id, on: db) else { throw WaybillError.invalidRefreshToken }
        if user.isBanned { throw WaybillError.accountDisabled }

        let next = TokenService.newRefreshToken()
        let sessionID = try session.storedID
        let rotated = try await transaction { db -> Bool in
            guard let sql = db.tracedSQL else { return false }
            let retired = try await sql.update(RefreshToken.schema)
                .set("retired_at", to: SQLBind(UnixTime.now))
                .where("id", .equal, SQLBind(tokenID))
                .where("retired_at", .is, SQLLiteral.null)
                .returning("id")
                .all()
            guard !retired.isEmpty else { return false }
            try await RefreshToken(sessionID: sessionID, tokenHash: TokenService.hash(next),
                                   expiresAt: UnixTime.now.addingTimeInterval(TokenService.refreshLifetime)).create(on: db)
            return true
        }
        guard rotated else {
            // Someone used the same token a moment ago: treat it as reuse.
            try await revokeSession(sessionID, reason: "refresh_token_reuse")
            throw WaybillError.sessionRevoked
        }
        let access = try await services.tokens.accessToken(userID: try user.storedID, role: user.role, sessionID: sessionID)
        return IssuedTokens(accessToken: access, refreshToken: next, user: user)
    }

    func logout(token: String) async throws {
        guard let stored = try await RefreshToken.query(on: db).filter(\.$tokenHash == TokenService.hash(token)).first()
        else { return }
        try await revokeSession(stored.$session.id, reason: "logout")
    }

    func revokeSession(_ id: SignInID, reason: String) async throws {
        try await transaction { db in
            try await Session.query(on: db).filter(\.$id == id).filter(\.$revokedAt == nil)
                .set(\.$revokedAt, to: UnixTime.now).set(\.$revokeReason, to: reason).update()
            if let userID = try await Session.find(id, on: db)?.$user.id {
                WrittenChanges.note(userID, caches: nil)
                try await LiveLog.publishControl(LiveRow.sessionEnded, topic: LiveLog.userTopic(userID),
                                                 data: ["user": userID.uuidString, "session": id.uuidString], on: db)
            }
        }
    }

    /// Ends every session of an account, or every other one when `except` is given.
    static func revokeSessions(userID: UserID, except: SignInID? = nil, reason: String, on db: any Database) async throws {
        var query = Session.query(on: db).filter(\.$user.$id == userID).filter(\.$revokedAt == nil)
        if let except { query = query.filter(\.$id != except) }
        try await query.set(\.$revokedAt, to: UnixTime.now).set(\.$revokeReason, to: reason).update()
        WrittenChanges.note(userID, caches: nil)  // in a transaction: forgotten when it commits
        // Live connections of those sessions close too.
        var data = ["user": userID.uuidString]
        if let except { data["except"] = except.uuidString }
        try await LiveLog.publishControl(LiveRow.sessionEnded, topic: LiveLog.userTopic(userID), data: data, on: db)
    }

    /// `SELECT users.*, sessions.revoked_at … WHERE users.id = ` (both dialects quote identifiers with `"`).
    private static let principalQuery: String = {
        let user = User.schema, session = Session.schema
        let columns = User().databaseFields.flatMap(\.keys).map { "\"\(user)\".\"\($0.description)\"" }.joined(separator: ", ")
        return "SELECT \(columns), \"\(session)\".\"revoked_at\" AS \"session_revoked_at\" FROM \"\(user)\" "
            + "JOIN \"\(session)\" ON \"\(session)\".\"user_id\" = \"\(user)\".\"id\" WHERE \"\(user)\".\"id\" = "
    }()

    /// Checks an access token and loads who is calling. A disabled account or an ended session is
    /// refused at once, whatever the token's expiry says.
    func authenticate(bearer: String?) async throws -> Principal {
        guard let bearer, !bearer.isEmpty else { throw WaybillError.unauthenticated }
        if bearer.hasPrefix(APIKeyPolicy.prefix) {
            return try await APIKeys(services: services, db: db, logger: logger).authenticate(bearer)
        }
        let claims = try await services.tokens.verifyAccessToken(bearer)
        guard let userID = UserID(uuidString: claims.sub.value), let sessionID = SignInID(uuidString: claims.sid) else {
            throw WaybillError.invalidToken
        }
        // The account and its session in one query, its text made once (building it with SQLKit's
        // builder took 9 % of a quote's time), and kept for a second (`ReadCaches.principals`): a
        // client's burst of requests asks once. Ending a session or changing the account forgets it.
        let row: any SQLRow
        let cache = services.caches.principals
        if let kept = cache.value(sessionID), kept.user == userID {
            row = kept.row
        } else {
            guard let sql = db.tracedSQL else { throw Abort(.internalServerError) }
            let generation = cache.generation
            guard let read = try await sql.raw("\(unsafeRaw: Self.principalQuery)\(bind: userID) AND \"\(unsafeRaw: Session.schema)\".\"id\" = \(bind: sessionID)")
                .first() else { throw WaybillError.invalidToken }
            cache.keep(ReadCaches.PrincipalRow(user: userID, row: read), for: sessionID, readAt: generation)
            row = read
        }
        let user = try User(row: row)
        if user.isBanned { throw WaybillError.accountDisabled }
        guard try row.decodeNil(column: "session_revoked_at") else { throw WaybillError.sessionRevoked }
        return try Principal(user: user, sessionID: sessionID)
    }

    // MARK: Password reset

    /// Answers the same whether or not such an account exists.
    func requestPasswordReset(email: String) async throws {
        try await checkCodeBudgetForClient()
        guard let user = try await findUser(email: email), !user.isBanned else { return }
        try await mailCodeQuietly(to: user, purpose: .passwordReset, template: { MailTemplates.passwordReset($0, code: $1) })
    }

    func verifyPasswordReset(email: String, code: String) async throws {
        let user = try await findUser(email: email)
        _ = try await services.writeLock.withLock {
            try await services.codes.check(code, userID: user?.id, purpose: .passwordReset, on: db)
        }
    }

    func completePasswordReset(email: String, code: String, newPassword: String) async throws {
        let user = try await findUser(email: email)
        var errors = FieldErrors()
        PasswordPolicy.validate(newPassword, field: "newPassword", email: user?.email ?? email, into: &errors)
        if !errors.isEmpty { throw WaybillError.validation(errors) }
        let row = try await services.writeLock.withLock {
            try await services.codes.check(code, userID: user?.id, purpose: .passwordReset, on: db)
        }
        let hash = try await services.passwords.hash(newPassword)
        let userID = row.$user.id
        try await transaction { db in
            try await OneTimeCodes.consume(row, on: db)
            guard let user = try await User.find(userID, on: db) else { throw WaybillError.invalidCode }
            user.passwordHash = hash
            // The code arrived by mail, so the address works.
            if user.emailVerifiedAt == nil { user.emailVerifiedAt = UnixTime.now }
            try await user.save(on: db)
            try await Self.revokeSessions(userID: userID, reason: "password_reset", on: db)
        }
        try await throttle { throttle in try await throttle.reset(Throttle.key("login:acct", Validation.normalizeEmail(email))) }
    }

    // MARK: One's own account

    func updateProfile(_ principal: Principal, changes: ProfileChanges) async throws -> User {
        let clean = try changes.validated(isCompany: principal.user.isCompany).orValidationError()
        let userID = principal.userID
        return try await transaction { db in
            guard let user = try await User.find(userID, on: db) else { throw WaybillError.notFound }
            if let v = clean.firstName { user.firstName = v }
            if let v = clean.lastName { user.lastName = v }
            if let v = clean.address { user.address = v }
            if let v = clean.postalCode { user.postalCode = v }
            if let v = clean.city { user.city = v }
            if let v = clean.companyName { user.companyName = v }
            try await user.save(on: db)
            return user
        }
    }

    func changePassword(_ principal: Principal, current: String, new: String) async throws {
        let accountKey = Throttle.key("login:acct", principal.user.email)
        try await reserveAttempt([(accountKey, .perAccount)], "Too many attempts. Try again later.")
        let verified = current.utf8.count <= PasswordPolicy.maxBytes
            ? try await services.passwords.verify(current, against: principal.user.passwordHash) : false
        guard verified else {
            throw WaybillError(.unprocessableEntity, .validationFailed, "The current password is wrong.",
                               fields: ["currentPassword": "incorrect"])
        }
        try await throttle { try await $0.reset(accountKey) }
        var errors = FieldErrors()
        PasswordPolicy.validate(new, field: "newPassword", email: principal.user.email, into: &errors)
        if !errors.isEmpty { throw WaybillError.validation(errors) }
        let hash = try await services.passwords.hash(new)
        let userID = principal.userID, sessionID = principal.sessionID
        try await transaction { db in
            try await User.query(on: db).filter(\.$id == userID).set(\.$passwordHash, to: hash).update()
            WrittenChanges.note(userID, caches: nil)
            try await Self.revokeSessions(userID: userID, except: sessionID, reason: "password_changed", on: db)
        }
    }

    func registerDevice(_ principal: Principal, platform: DevicePlatform, pushToken: String) async throws -> Device {
        let token = pushToken.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !token.isEmpty else { throw WaybillError.validation("pushToken", "required") }
        try Self.validatePushToken(token, platform: platform, field: "pushToken")
        let userID = principal.userID
        return try await transaction { db in
            try await Self.upsertDevice(userID: userID, platform: platform, pushToken: token, on: db)
        }
    }

    /// A web "token" is a browser's push subscription; the server will POST to its endpoint, so
    /// only an https endpoint on a public host is kept.
    static func validatePushToken(_ token: String, platform: DevicePlatform, field: String) throws {
        if platform == .web, !PushService.validateWebPushSubscription(token) {
            throw WaybillError.validation(field, "invalid_subscription")
        }
    }

    @discardableResult
    static func upsertDevice(userID: UserID, platform: DevicePlatform, pushToken: String, on db: any Database) async throws -> Device {
        if let existing = try await Device.query(on: db).filter(\.$pushToken == pushToken).first() {
            existing.$user.id = userID
            existing.platform = platform
            try await existing.save(on: db)
            return existing
        }
        let device = Device(userID: userID, platform: platform, pushToken: pushToken)
        try await device.create(on: db)
        return device
    }

    // MARK: User management (managers)

    func createStaff(role: Role, firstName: String, lastName: String, email: String, by principal: Principal) async throws -> User {
        try principal.require(.manageUsers)
        guard AccountPolicy.creatableRoles.contains(role) else { throw WaybillError.validation("role", "invalid") }
        var errors = FieldErrors()
        let first = Validation.text(firstName, field: "firstName", maxLength: Validation.maxNameLength, into: &errors)
        let last = Validation.text(lastName, field: "lastName", maxLength: Validation.maxNameLength, into: &errors)
        let email = Validation.email(email, into: &errors)
        if !errors.isEmpty { throw WaybillError.validation(errors) }
        if try await findUser(email: email) != nil { throw WaybillError.emailInUse }
        let codes = services.codes, publicURL = services.config.publicURL
        do {
            return try await transaction { db in
                let user = User(role: role, email: email, passwordHash: nil, firstName: first, lastName: last)
                try await user.create(on: db)
                try await Self.recordGrants(of: user, by: principal.userID, on: db)
                try await AuditLog.record(.accountCreated, by: principal.userID, target: .user, try user.storedID.uuidString,
                                          after: AuditLog.snapshot(of: user), on: db)
                let code = try await codes.issue(userID: try user.storedID, purpose: .passwordReset, on: db)
                try await Outbox.enqueue(MailTemplates.invitation(to: user, code: code, publicURL: publicURL), on: db)
                return user
            }
        } catch let error as any DatabaseError where error.isConstraintFailure {
            throw WaybillError.emailInUse
        }
    }

    /// One account, for a manager.
    func user(_ id: UserID, for principal: Principal) async throws -> User {
        try principal.require(.manageUsers)
        guard let user = try await User.find(id, on: db) else { throw WaybillError.notFound }
        return user
    }

    /// `PATCH /users/{id}` (kept for one release): a role is the staff capabilities it maps to
    /// (`Capability.staff(for:keeping:)`); `disabled` bans the account, or lifts its bans.
    func updateUser(actor: Principal, id: UserID, role: Role?, disabled: Bool?) async throws -> User {
        // The caller's own record is already loaded; no need to read it again for the self check.
        switch AccountPolicy.mayUpdate(id, changingRole: role != nil && role != actor.user.role, disabling: disabled == true, by: actor.caller) {
        case .forbidden: throw WaybillError.forbidden
        case .notOnSelf: throw WaybillError(.conflict, .cannotModifySelf, "You cannot change your own role or disable your own account.")
        case .allowed: break
        }
        // Disabling is a ban: the administration's (`moderate`), as `restrict` is.
        if disabled != nil { try await requireModerator(actor) }
        let actorID = actor.userID
        return try await transaction { db in
            guard let user = try await User.find(id, on: db) else { throw WaybillError.notFound }
            let before = AuditLog.snapshot(of: user)
            if let role, role != user.role {
                let wanted = Capability.staff(for: role, keeping: Capability.parseList(user.staffCapabilities))
                try await Self.setStaffCapabilities(user, to: wanted, by: actorID, on: db)
            }
            if let disabled {
                if disabled, !user.isBanned {
                    try await RestrictionRecord(userID: id, request: RestrictionRequest(kind: .banned, until: nil, reason: "Disabled by a manager"),
                                                setBy: actorID, at: UnixTime.nowMillis).create(on: db)
                    try await Self.refreshRestriction(user, on: db)
                    try await Self.revokeSessions(userID: id, reason: "disabled", on: db)
                    try await withdraw(bannedUser: id, on: db)
                    try await AuditLog.record(.accountBanned, by: actorID, target: .user, id.uuidString, before: before,
                                              after: AuditLog.snapshot(of: user), reason: "Disabled by a manager", on: db)
                } else if !disabled, user.isBanned {
                    try await RestrictionRecord.query(on: db).filter(\.$userID == id).filter(\.$kind == .banned).filter(\.$liftedAt == nil)
                        .set(\.$liftedAt, to: UnixTime.nowMillis).set(\.$liftedBy, to: actorID).update()
                    try await Self.refreshRestriction(user, on: db)
                    try await Self.resumePayouts(of: id, on: db)
                    try await AuditLog.record(.restrictionLifted, by: actorID, target: .user, id.uuidString, before: before,
                                              after: AuditLog.snapshot(of: user), on: db)
                }
            }
            return user
        }
    }

    func resetUser(id: UserID, by principal: Principal) async throws {
        try principal.require(.manageUsers)
        guard let user = try await User.find(id, on: db) else { throw WaybillError.notFound }
        if let wait = try await OneTimeCodes.sendBlocked(userID: id, purpose: .passwordReset, on: db) {
            throw WaybillError.tooManyRequests(retryAfter: Int(wait), "A code was mailed to this account moments ago.")
        }
        let codes = services.codes
        let actorID = principal.userID
        try await transaction { db in
            try await Self.revokeSessions(userID: id, reason: "reset_by_manager", on: db)
            try await AuditLog.record(.passwordResetSent, by: actorID, target: .user, id.uuidString, on: db)
            let code = try await codes.issue(userID: id, purpose: .passwordReset, on: db)
            try await Outbox.enqueue(MailTemplates.passwordReset(user, code: code), on: db)
        }
    }

    struct UserPage {
        var users: [User]
        var nextCursor: String?
    }

    /// Accounts ordered by email; `q` matches email, names and company name, ignoring case.
    /// Everyone who may drive (`Permission.drive`), by first name: the dispatcher's filter of an order list.
    func drivers(for principal: Principal) async throws -> [User] {
        try principal.require(.dispatch)
        // Drivers and managers by primary role, then whoever of them may drive now.
        return try await User.query(on: db).filter(\.$role ~~ [Role.driver, .manager]).sort(\.$firstName).all()
            .filter { try $0.caller.may(.drive) }
    }

    func listUsers(role: Role?, query: String?, cursor: String?, limit: Int, for principal: Principal) async throws -> UserPage {
        try principal.require(.manageUsers)
        var builder = User.query(on: db).sort(\.$email).limit(limit + 1)
        if let role { builder = builder.filter(\.$role == role) }
        if let cursor {
            guard let data = Data(base64URLEncoded: cursor), let after = String(data: data, encoding: .utf8) else {
                throw WaybillError(.badRequest, .invalidCursor, "The cursor is not one this server gave out.")
            }
            builder = builder.filter(\.$email > after)
        }
        if let q = query?.trimmingCharacters(in: .whitespaces).lowercased(), !q.isEmpty {
            let escaped = q.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%")
                .replacingOccurrences(of: "_", with: "\\_")
            let pattern = "%\(escaped)%"
            builder = builder.group(.or) { or in
                for column in ["email", "first_name", "last_name", "company_name"] {
                    let condition: SQLQueryString = "lower(\(ident: column)) LIKE \(bind: pattern) ESCAPE '\\'"
                    or.filter(.sql(condition))
                }
            }
        }
        var users = try await builder.all()
        var next: String?
        if users.count > limit {
            users.removeLast()
            next = users.last.map { Data($0.email.utf8).base64URLEncodedString() }
        }
        return UserPage(users: users, nextCursor: next)
    }
}
