import Fluent
import Foundation
import SQLKit
import Vapor
import WaybillCore

final class APIKeyRecord: Model, @unchecked Sendable {
    static let schema = "api_keys"

    @ID(custom: .id, generatedBy: .user) var id: APIKeyID?
    @Field(key: "owner_id") var ownerID: UserID
    @Field(key: "name") var name: String
    /// The key's first characters (`wb_live_ab12…`), to tell keys apart; never enough to use one.
    @Field(key: "hint") var hint: String
    @Field(key: "token_hash") var tokenHash: String
    @Field(key: "scopes") var scopeList: String
    @Field(key: "created_at") var createdAt: Int64
    @OptionalField(key: "expires_at") var expiresAt: Int64?
    @OptionalField(key: "revoked_at") var revokedAt: Int64?
    @OptionalField(key: "last_used_at") var lastUsedAt: Int64?

    var properties: [any AnyProperty] { [$id, $ownerID, $name, $hint, $tokenHash, $scopeList, $createdAt, $expiresAt, $revokedAt, $lastUsedAt] }

    init() {}

    var scopes: Set<APIKeyScope> {
        get { Set(scopeList.split(separator: ",").compactMap { APIKeyScope(rawValue: String($0)) }) }
        set { scopeList = APIKeyScope.allCases.filter(newValue.contains).map(\.rawValue).joined(separator: ",") }
    }
}

/// API keys (issue "Integrations", item 2): made by an account for itself, shown once, kept as a
/// SHA-256 hash, scoped (`APIKeyPolicy`), expiring, revocable, their last use noted; accepted as
/// `Authorization: Bearer wb_live_…` beside access tokens, each key with its own rate limit.
struct APIKeys: WaybillService {
    let services: WaybillServices
    let db: any Database
    let logger: Logger

    func create(name: String, scopes names: [String], expiresInDays: Int?, by me: Principal) async throws -> (APIKeyRecord, String) {
        guard me.keyScopes == nil else { throw WaybillError(.forbidden, .forbidden, "API keys are made by a person signed in, not by another key.") }
        let scopes = Set(names.compactMap(APIKeyScope.init(rawValue:)))
        let errors = APIKeyPolicy.validate(name: name, scopes: names, expiresInDays: expiresInDays)
        guard errors.isEmpty else { throw WaybillError.validation(errors) }
        guard APIKeyPolicy.mayCreate(scopes, by: me.caller) else {
            throw APIKeyPolicy.mayCreate(scopes, by: Caller(id: me.userID, capabilities: me.user.capabilities)) ? WaybillError.accountSuspended : WaybillError.forbidden
        }
        var generator = Randomness.generator
        let token = APIKeyPolicy.prefix + Data((0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }).base64URLEncodedString()
        let key = APIKeyRecord()
        key.id = .generated()
        key.ownerID = me.userID
        key.name = name.trimmingCharacters(in: .whitespacesAndNewlines)
        key.hint = String(token.prefix(APIKeyPolicy.prefix.count + 4))
        key.tokenHash = TokenService.hash(token)
        key.scopes = scopes
        key.createdAt = UnixTime.nowMillis
        key.expiresAt = expiresInDays.map { UnixTime.nowMillis + Int64($0) * 86_400_000 }
        try await db.writeTransaction(services) { db in
            let live = try await APIKeyRecord.query(on: db).filter(\.$ownerID == me.userID).filter(\.$revokedAt == nil).count()
            guard live < APIKeyPolicy.maxPerAccount else {
                throw WaybillError(.conflict, .conflict, "An account holds at most \(APIKeyPolicy.maxPerAccount) API keys; revoke one first.")
            }
            try await key.create(on: db)
        }
        return (key, token)
    }

    func list(for me: Principal) async throws -> [APIKeyRecord] {
        try await APIKeyRecord.query(on: db).filter(\.$ownerID == me.userID).sort(\.$createdAt, .descending).all()
    }

    /// Revoking only ever reduces what is possible: a suspended account may too.
    func revoke(_ id: APIKeyID, by me: Principal) async throws {
        guard me.keyScopes == nil else { throw WaybillError(.forbidden, .forbidden, "API keys are revoked by a person signed in.") }
        guard let key = try await APIKeyRecord.find(id, on: db), APIKeyPolicy.maySee(owner: key.ownerID, by: me.caller) else { throw WaybillError.notFound }
        guard key.revokedAt == nil else { return }
        key.revokedAt = UnixTime.nowMillis
        try await db.writeTransaction(services) { db in try await key.save(on: db) }
    }

    /// The account a key acts for, with the key's scopes; 401 for an unknown, revoked or expired
    /// key, 429 past the key's own rate.
    func authenticate(_ token: String) async throws -> Principal {
        guard APIKeyPolicy.looksLikeKey(token),
              let key = try await APIKeyRecord.query(on: db).filter(\.$tokenHash == TokenService.hash(token)).first() else {
            throw WaybillError.invalidToken
        }
        let now = UnixTime.nowMillis
        guard key.revokedAt == nil, key.expiresAt.map({ $0 > now }) ?? true else { throw WaybillError.invalidToken }
        let keyID = try key.storedID
        if let wait = services.apiKeyLimiter.take(keyID.uuidString) {
            throw WaybillError.tooManyRequests(retryAfter: wait, "This API key made too many requests; slow down.")
        }
        guard let user = try await User.find(key.ownerID, on: db) else { throw WaybillError.invalidToken }
        if user.isBanned { throw WaybillError.accountDisabled }
        // Noted at most once a minute, so reading is not a write every time.
        if now - (key.lastUsedAt ?? 0) > 60_000 {
            try await services.writeLock.withLock {
                try await APIKeyRecord.query(on: db).filter(\.$id == keyID).set(\.$lastUsedAt, to: now).update()
            }
        }
        // A key is its own sign-in: the session the principal names is the key's id.
        return try Principal(user: user, sessionID: SignInID(rawValue: keyID.rawValue), keyScopes: key.scopes)
    }
}
