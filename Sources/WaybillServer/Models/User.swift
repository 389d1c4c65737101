import Fluent
import SQLKit
import Foundation
import WaybillCore

/// A person who signs in. What they may do is their capabilities (`WaybillCore.Capability`): every
/// verified account sends and receives; staff capabilities are granted (`capability_grants`).
/// `role` is the primary role older clients read, `Capability.primaryRole` of the staff ones.
final class User: Model, @unchecked Sendable {
    static let schema = "users"

    @ID(custom: .id, generatedBy: .random) var id: UserID?

    // data
    @Field(key: "role") var role: Role
    @Field(key: "email") var email: String
    /// nil until the person sets a password (invited staff).
    @OptionalField(key: "password_hash") var passwordHash: String?
    @Field(key: "first_name") var firstName: String
    @Field(key: "last_name") var lastName: String
    @OptionalField(key: "address") var address: String?
    @OptionalField(key: "postal_code") var postalCode: String?
    @OptionalField(key: "city") var city: String?
    @Field(key: "is_company") var isCompany: Bool
    @OptionalField(key: "company_name") var companyName: String?
    @OptionalField(key: "email_verified_at") var emailVerifiedAt: Date?
    /// The staff capabilities held now (`Capability.storedList`), as the grants say.
    @Field(key: "capabilities") var staffCapabilities: String
    /// The restriction in force (`restrictions`), if any: its kind and, for a suspension, its end (Unix ms).
    @OptionalField(key: "restricted_kind") var restrictedKind: String?
    @OptionalField(key: "restricted_until") var restrictedUntil: Int64?
    /// Where the person is paid as a traveller: their connected account with the payment provider.
    @OptionalField(key: "payout_account") var payoutAccount: String?
    /// `PayoutAccountStatus` as last read from the provider, and the time of what it was read for.
    @OptionalField(key: "payout_status") var payoutStatusRaw: String?
    @OptionalField(key: "payout_status_at") var payoutStatusAt: Int64?

    // managed
    @Timestamp(key: "created_at", on: .create) var createdAt: Date?
    @Timestamp(key: "updated_at", on: .update) var updatedAt: Date?

    /// Listed so Fluent does not discover them by reflection for every row (see `Order.databaseFields`).
    var databaseFields: [any AnyDatabaseProperty] {
        [$id, $role, $email, $passwordHash, $firstName, $lastName, $address, $postalCode, $city, $isCompany, $companyName,
         $emailVerifiedAt, $staffCapabilities, $restrictedKind, $restrictedUntil, $payoutAccount, $payoutStatusRaw, $payoutStatusAt, $createdAt, $updatedAt]
    }

    var properties: [any AnyProperty] { databaseFields }

    /// Every column, qualified by the table (for reading an account joined with another table).
    static let allColumns: [SQLColumn] = User().databaseFields.flatMap(\.keys).map { SQLColumn($0.description, table: schema) }

    /// What a list of people reads: everything but the password hash.
    static let listColumns: [SQLIdentifier] = User().databaseFields.flatMap(\.keys).map(\.description)
        .filter { $0 != "password_hash" }.map { SQLIdentifier($0) }

    /// Fills the model from a row through `databaseFields`, without Fluent's casts of every property.
    func output(from output: any DatabaseOutput) throws {
        for field in databaseFields { try field.output(from: output) }
    }

    init() {}

    init(id: UserID? = nil, role: Role, email: String, passwordHash: String?, firstName: String, lastName: String,
         address: String? = nil, postalCode: String? = nil, city: String? = nil,
         isCompany: Bool = false, companyName: String? = nil, emailVerifiedAt: Date? = nil) {
        self.id = id
        self.role = role
        // The grants themselves are recorded by whoever creates the account (`Accounts.recordGrants`).
        self.staffCapabilities = Capability.storedList(Capability.granted(to: role))
        self.email = email
        self.passwordHash = passwordHash
        self.firstName = firstName
        self.lastName = lastName
        self.address = address
        self.postalCode = postalCode
        self.city = city
        self.isCompany = isCompany
        self.companyName = companyName
        self.emailVerifiedAt = emailVerifiedAt
    }

    /// The restriction in force now, if any.
    var restriction: Restriction.Kind? { Restriction.inForce(kind: restrictedKind, until: restrictedUntil, at: UnixTime.nowMillis) }
    /// Banned: cannot sign in, and every session ends.
    var isBanned: Bool { restriction == .banned }
    /// What the account holds, restrictions aside.
    var capabilities: Set<Capability> { Self.capabilities(staff: staffCapabilities, emailVerified: emailVerifiedAt != nil) }
    /// What the account may use now: its capabilities less what a restriction takes away.
    var effectiveCapabilities: Set<Capability> { AccountStanding.effective(capabilities, under: restriction) }

    /// What an account holds, restrictions aside, from its stored grants (`capabilities` column)
    /// and whether its email is verified: for the model and for an account read plainly (`NotifiedAccount`).
    static func capabilities(staff: String, emailVerified: Bool) -> Set<Capability> {
        Capability.held(staff: Capability.parseList(staff), emailVerified: emailVerified)
    }
    /// The account as WaybillCore's policies know it.
    var caller: Caller { get throws { caller(id: try storedID) } }
    /// The account as WaybillCore's policies know it, its id already read (`Principal`).
    func caller(id: UserID) -> Caller { Caller(id: id, capabilities: effectiveCapabilities, verifiedEmail: emailVerifiedAt == nil ? nil : email) }
}

/// One sign-in: the family of refresh tokens descended from it. Revoking it ends the session.
final class Session: Model, @unchecked Sendable {
    static let schema = "sessions"

    @ID(custom: .id, generatedBy: .random) var id: SignInID?
    @Parent(key: "user_id") var user: User
    @OptionalField(key: "revoked_at") var revokedAt: Date?
    @OptionalField(key: "revoke_reason") var revokeReason: String?
    /// A web app session's cookie secret, hashed (005_web); nil for app sessions.
    @OptionalField(key: "web_token_hash") var webTokenHash: String?
    @Timestamp(key: "created_at", on: .create) var createdAt: Date?
    /// Web sessions: when last used, Unix ms (006); refreshed at most every few minutes.
    @OptionalField(key: "last_used_at") var lastUsedAt: Int64?
    /// When the password was last entered again in this session, Unix ms (033); admin actions need
    /// a recent one, or a recent sign-in (`Reauthentication`).
    @OptionalField(key: "reauthenticated_at") var reauthenticatedAt: Int64?

    /// Listed so Fluent does not find them by reflection on every save and read.
    var properties: [any AnyProperty] { [$id, $user, $revokedAt, $revokeReason, $webTokenHash, $createdAt, $lastUsedAt, $reauthenticatedAt] }

    /// When this session last proved its password: its sign-in, or a later re-authentication.
    var passwordProvenAt: Int64 {
        max(createdAt.map { Int64($0.timeIntervalSince1970 * 1000) } ?? 0, reauthenticatedAt ?? 0)
    }

    init() {}
    init(id: SignInID? = nil, userID: UserID) {
        self.id = id
        self.$user.id = userID
    }
}

/// A refresh token, stored only as its SHA-256. Each is used once, then retired.
final class RefreshToken: Model, @unchecked Sendable {
    static let schema = "refresh_tokens"

    @ID(custom: .id, generatedBy: .random) var id: RefreshTokenID?
    @Parent(key: "session_id") var session: Session
    @Field(key: "token_hash") var tokenHash: String
    @Field(key: "expires_at") var expiresAt: Date
    @OptionalField(key: "retired_at") var retiredAt: Date?
    @Timestamp(key: "created_at", on: .create) var createdAt: Date?

    /// Listed so Fluent does not find them by reflection on every save and read.
    var properties: [any AnyProperty] { [$id, $session, $tokenHash, $expiresAt, $retiredAt, $createdAt] }

    init() {}
    init(sessionID: SignInID, tokenHash: String, expiresAt: Date) {
        self.$session.id = sessionID
        self.tokenHash = tokenHash
        self.expiresAt = expiresAt
    }
}

/// A mailed 6-digit code, stored as an HMAC. Single use, short-lived, dead after five wrong tries.
final class OneTimeCode: Model, @unchecked Sendable {
    static let schema = "one_time_codes"

    enum Purpose: String, Codable, Sendable {
        case verifyEmail = "verify_email"
        case passwordReset = "password_reset"
    }

    @ID(custom: .id, generatedBy: .random) var id: OneTimeCodeID?
    @Parent(key: "user_id") var user: User
    @Field(key: "purpose") var purpose: Purpose
    @Field(key: "code_hash") var codeHash: String
    @Field(key: "attempts") var attempts: Int
    @Field(key: "expires_at") var expiresAt: Date
    @OptionalField(key: "consumed_at") var consumedAt: Date?
    @Timestamp(key: "created_at", on: .create) var createdAt: Date?

    /// Listed so Fluent does not find them by reflection on every save and read.
    var properties: [any AnyProperty] { [$id, $user, $purpose, $codeHash, $attempts, $expiresAt, $consumedAt, $createdAt] }

    init() {}
    init(userID: UserID, purpose: Purpose, codeHash: String, expiresAt: Date) {
        self.$user.id = userID
        self.purpose = purpose
        self.codeHash = codeHash
        self.attempts = 0
        self.expiresAt = expiresAt
    }
}

/// A phone or browser that receives push notifications for an account.
final class Device: Model, @unchecked Sendable {
    static let schema = "devices"

    @ID(custom: .id, generatedBy: .random) var id: DeviceID?
    @Parent(key: "user_id") var user: User
    @Field(key: "platform") var platform: DevicePlatform
    @Field(key: "push_token") var pushToken: String
    @Timestamp(key: "created_at", on: .create) var createdAt: Date?
    @Timestamp(key: "updated_at", on: .update) var updatedAt: Date?

    /// Listed so Fluent does not find them by reflection on every save and read.
    var properties: [any AnyProperty] { [$id, $user, $platform, $pushToken, $createdAt, $updatedAt] }

    init() {}
    init(userID: UserID, platform: DevicePlatform, pushToken: String) {
        self.$user.id = userID
        self.platform = platform
        self.pushToken = pushToken
    }
}

/// A message waiting to leave the system (mail now; push later). Written in the same transaction
/// as the change that caused it, sent by `OutboxWorker` with retries.
final class OutboxMessage: Model, @unchecked Sendable {
    static let schema = "outbox"

    enum Status: String, Codable, Sendable { case pending, sent, dead }

    @ID(custom: .id, generatedBy: .random) var id: OutboxMessageID?
    @Field(key: "kind") var kind: String
    /// JSON. Cleared once sent, so delivered codes do not linger in the database.
    @OptionalField(key: "payload") var payload: String?
    @Field(key: "status") var status: Status
    @Field(key: "attempts") var attempts: Int
    /// Unix milliseconds; also the lease while a worker is sending.
    @Field(key: "next_attempt_at") var nextAttemptAt: Int64
    @OptionalField(key: "last_error") var lastError: String?
    @OptionalField(key: "sent_at") var sentAt: Date?
    @Timestamp(key: "created_at", on: .create) var createdAt: Date?

    /// Listed so Fluent does not find them by reflection on every save and read.
    var properties: [any AnyProperty] { [$id, $kind, $payload, $status, $attempts, $nextAttemptAt, $lastError, $sentAt, $createdAt] }

    init() {}
    init(kind: String, payload: String, nextAttemptAt: Int64) {
        self.kind = kind
        self.payload = payload
        self.status = .pending
        self.attempts = 0
        self.nextAttemptAt = nextAttemptAt
    }
}

extension User {
    var payoutStatus: PayoutAccountStatus {
        guard payoutAccount != nil else { return .none }
        return payoutStatusRaw.flatMap(PayoutAccountStatus.init(rawValue:)) ?? .pending
    }
}
