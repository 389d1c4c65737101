import Fluent
import Vapor
import WaybillCore

/// A line of the audit log (`audit_log`, migration 033). Only ever created: the database refuses
/// to update or delete one.
final class AuditRecord: Model, @unchecked Sendable {
    static let schema = "audit_log"

    @ID(custom: "id", generatedBy: .database) var id: Int64?
    @Field(key: "at") var at: Int64
    @OptionalField(key: "actor_id") var actorID: UserID?
    @Field(key: "action") var action: AuditAction
    @Field(key: "target_kind") var targetKind: AuditTargetKind
    @Field(key: "target_id") var targetID: String
    @OptionalField(key: "before") var before: String?
    @OptionalField(key: "after") var after: String?
    @OptionalField(key: "reason") var reason: String?
    @OptionalField(key: "request_id") var requestID: String?
    @OptionalField(key: "address") var address: String?

    var properties: [any AnyProperty] {
        [$id, $at, $actorID, $action, $targetKind, $targetID, $before, $after, $reason, $requestID, $address]
    }

    init() {}

    var entry: AuditEntry {
        AuditEntry(id: id ?? 0, at: at, actor: actorID, action: action, targetKind: targetKind, targetID: targetID,
                   before: before, after: after, reason: reason, requestID: requestID, address: address)
    }
}

/// Writes the audit log. Called inside the staff action's own transaction, so the action and its
/// line land together or not at all. The request id and address come from the request being
/// served (`RequestContext`); the operator's command line has neither.
enum AuditLog {
    static func record(_ action: AuditAction, by actor: UserID?, target kind: AuditTargetKind, _ id: String,
                       before: [String: String?]? = nil, after: [String: String?]? = nil, reason: String? = nil,
                       on db: any Database) async throws {
        let line = AuditRecord()
        line.at = UnixTime.nowMillis
        line.actorID = actor
        line.action = action
        line.targetKind = kind
        line.targetID = id
        line.before = before.map(AuditEntry.snapshot)
        line.after = after.map(AuditEntry.snapshot)
        line.reason = reason
        if let request = RequestContext.current {
            line.requestID = request.id
            line.address = request.clientAddress
        }
        try await line.create(on: db)
    }

    /// An account's state as its audit lines show it.
    static func snapshot(of user: User) -> [String: String?] {
        ["email": user.email, "capabilities": user.staffCapabilities, "role": user.role.rawValue,
         "restriction": user.restrictedKind, "restricted_until": user.restrictedUntil.map(String.init)]
    }
}
