import Foundation
import OpenAPIRuntime
import WaybillCore

/// A line of the audit log of staff actions.
public typealias AuditLogEntry = Components.Schemas.AuditEntry

/// The administration (admins): the reports queue, the audit log, and entering one's password again
/// for them. Suspensions and bans are `suspend`, `ban` and `lift`.
extension WaybillSession {
    /// Enters the password again: admin calls answer 403 `reauthentication_required` once the
    /// session's password was proven more than 15 minutes ago.
    public func reauthenticate(password: String) async throws(WaybillError) {
        try await call { _ = try await $0.reauthenticate(body: .json(.init(password: password))).noContent }
    }

    /// The reports queue, oldest first (of messages, people and reviews).
    public func moderationQueue(status: ReportStatus? = .pending) async throws(WaybillError) -> [ModerationReport] {
        try await call { try await $0.listReports(query: .init(status: status.flatMap { .init(rawValue: $0.rawValue) })).ok.body.json.items }
    }

    /// Decides a report: `reviewed`, `dismissed` or `actionTaken`, with a note for the other moderators.
    @discardableResult
    public func decide(report id: UUID, as status: ReportStatus, note: String? = nil) async throws(WaybillError) -> ModerationReport {
        try await call {
            try await $0.decideReport(path: .init(reportId: id.uuidString.lowercased()),
                                      body: .json(.init(status: .init(rawValue: status.rawValue)!, note: note))).ok.body.json
        }
    }

    /// Reports a published review (its author) to the moderators.
    @discardableResult
    public func report(review id: RatingID, reason: ReportReason, note: String? = nil) async throws(WaybillError) -> ModerationReport {
        try await call {
            try await $0.reportRating(path: .init(ratingId: id.uuidString.lowercased()),
                                      body: .json(.init(reason: .init(rawValue: reason.rawValue)!, note: note))).created.body.json
        }
    }

    /// A page of the audit log, newest first; pass the answer's `nextBefore` as `before` for the next.
    public func auditLog(actor: UserID? = nil, action: AuditAction? = nil, target: String? = nil, from: Date? = nil, to: Date? = nil,
                         before: Int64? = nil, limit: Int = 50) async throws(WaybillError) -> (items: [AuditLogEntry], nextBefore: Int64?) {
        try await call {
            let page = try await $0.listAuditLog(query: .init(actor: actor?.uuidString.lowercased(), action: action.flatMap { .init(rawValue: $0.rawValue) },
                                                              target: target, from: from, to: to, before: before, limit: limit)).ok.body.json
            return (page.items, page.nextBefore)
        }
    }

    /// The audit log as CSV, with the same filters.
    public func exportAuditLog(actor: UserID? = nil, action: AuditAction? = nil, target: String? = nil, from: Date? = nil,
                               to: Date? = nil) async throws(WaybillError) -> Data {
        try await call {
            let body = try await $0.exportAuditLog(query: .init(actor: actor?.uuidString.lowercased(), action: action.flatMap { .init(rawValue: $0.rawValue) },
                                                                target: target, from: from, to: to)).ok.body
            switch body {
            case .csv(let data): return try await Data(collecting: data, upTo: 64 << 20)
            }
        }
    }
}

extension WaybillSession {
    /// Hides content from everyone but its author and the admins, with a reason the author is shown.
    @discardableResult
    public func hide(_ kind: ModeratedContent, _ id: UUID, reason: String) async throws(WaybillError) -> Bool {
        try await setHidden(kind, id, hidden: true, reason: reason)
    }

    /// Shows hidden content again.
    @discardableResult
    public func restore(_ kind: ModeratedContent, _ id: UUID, reason: String? = nil) async throws(WaybillError) -> Bool {
        try await setHidden(kind, id, hidden: false, reason: reason)
    }

    private func setHidden(_ kind: ModeratedContent, _ id: UUID, hidden: Bool, reason: String?) async throws(WaybillError) -> Bool {
        try await call {
            try await $0.moderateContent(path: .init(kind: .init(rawValue: kind.rawValue)!, id: id.uuidString.lowercased()),
                                         body: .json(.init(hidden: hidden, reason: reason))).ok.body.json.hidden
        }
    }
}
