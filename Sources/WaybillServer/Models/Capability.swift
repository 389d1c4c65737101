import Fluent
import Foundation
import WaybillCore

/// A staff capability given to an account: by whom and when, and when it was taken back. The
/// account's current set is also kept on `users.capabilities`, written in the same transaction.
final class CapabilityGrant: Model, @unchecked Sendable {
    static let schema = "capability_grants"

    @ID(custom: "id", generatedBy: .database) var id: Int?
    @Field(key: "user_id") var userID: UserID
    @Field(key: "capability") var capability: Capability
    /// nil: from the account's role before capabilities existed, or the operator's command line.
    @OptionalField(key: "granted_by") var grantedBy: UserID?
    @Field(key: "granted_at") var grantedAt: Int64
    @OptionalField(key: "revoked_by") var revokedBy: UserID?
    @OptionalField(key: "revoked_at") var revokedAt: Int64?

    /// Listed so Fluent does not find them by reflection on every save and read.
    var properties: [any AnyProperty] { [$id, $userID, $capability, $grantedBy, $grantedAt, $revokedBy, $revokedAt] }

    init() {}

    init(userID: UserID, capability: Capability, grantedBy: UserID?, at: Int64) {
        self.userID = userID
        self.capability = capability
        self.grantedBy = grantedBy
        self.grantedAt = at
    }
}

/// A suspension or a ban, with its reason and who set it; lifted by someone, or over when a
/// suspension's time is up. The one in force is also kept on the account row
/// (`users.restricted_kind`, `restricted_until`), written in the same transaction.
final class RestrictionRecord: Model, @unchecked Sendable {
    static let schema = "restrictions"

    @ID(custom: "id", generatedBy: .database) var id: Int?
    @Field(key: "user_id") var userID: UserID
    @Field(key: "kind") var kind: Restriction.Kind
    @OptionalField(key: "until") var until: Int64?
    @Field(key: "reason") var reason: String
    /// nil for a disabled account carried over by migration 010.
    @OptionalField(key: "set_by") var setBy: UserID?
    @Field(key: "set_at") var setAt: Int64
    @OptionalField(key: "lifted_by") var liftedBy: UserID?
    @OptionalField(key: "lifted_at") var liftedAt: Int64?

    /// Listed so Fluent does not find them by reflection on every save and read.
    var properties: [any AnyProperty] { [$id, $userID, $kind, $until, $reason, $setBy, $setAt, $liftedBy, $liftedAt] }

    init() {}

    init(userID: UserID, request: RestrictionRequest, setBy: UserID, at: Int64) {
        self.userID = userID
        self.kind = request.kind
        self.until = request.until
        self.reason = request.reason
        self.setBy = setBy
        self.setAt = at
    }

    /// As WaybillCore's `Restriction` (a migrated one counts as set by nobody known).
    var restriction: Restriction {
        Restriction(kind: kind, until: until, reason: reason, setBy: setBy ?? UserID(rawValue: UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))), setAt: setAt)
    }
}
