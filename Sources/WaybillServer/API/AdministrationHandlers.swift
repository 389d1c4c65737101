import Foundation
import OpenAPIRuntime
import WaybillAPI
import WaybillCore

/// The administration: translation only (`Accounts`' administration and `Permission.moderate` decide).
extension APIHandler {
    func reauthenticate(_ input: Operations.Reauthenticate.Input) async throws -> Operations.Reauthenticate.Output {
        let me = try await principal()
        guard case .json(let body) = input.body else { throw WaybillError.unsupportedBody }
        try await accounts.reauthenticate(password: body.password, by: me)
        return .noContent(.init())
    }

    func listAuditLog(_ input: Operations.ListAuditLog.Input) async throws -> Operations.ListAuditLog.Output {
        let me = try await principal()
        let q = input.query
        let search = AuditSearch(actor: try q.actor.map { try Self.uuidParameter($0, "actor") }, action: q.action.flatMap { AuditAction(rawValue: $0.rawValue) },
                                 targetID: q.target, from: q.from.map(Self.millis), to: q.to.map(Self.millis), before: q.before, limit: q.limit ?? 50)
        let entries = try await accounts.auditLog(search, for: me)
        let next = entries.count == search.limit ? entries.last?.id : nil
        return .ok(.init(body: .json(.init(items: try entries.map(Self.auditEntry), nextBefore: next))))
    }

    func exportAuditLog(_ input: Operations.ExportAuditLog.Input) async throws -> Operations.ExportAuditLog.Output {
        let me = try await principal()
        let q = input.query
        let search = AuditSearch(actor: try q.actor.map { try Self.uuidParameter($0, "actor") }, action: q.action.flatMap { AuditAction(rawValue: $0.rawValue) },
                                 targetID: q.target, from: q.from.map(Self.millis), to: q.to.map(Self.millis))
        let csv = try await accounts.auditExport(search, for: me)
        try request.storage[DownloadNameKey.self] = "waybill-audit-log.csv"
        return .ok(.init(body: .csv(HTTPBody(csv))))
    }

    func decideReport(_ input: Operations.DecideReport.Input) async throws -> Operations.DecideReport.Output {
        let me = try await principal()
        guard case .json(let body) = input.body else { throw WaybillError.unsupportedBody }
        guard let status = ReportStatus(rawValue: body.status.rawValue) else { throw WaybillError.validation("status", "invalid") }
        let report = try await accounts.decide(report: try Self.plainID(input.path.reportId, "reportId"), status: status, note: body.note, by: me)
        return .ok(.init(body: .json(try Self.report(report))))
    }

    func reportRating(_ input: Operations.ReportRating.Input) async throws -> Operations.ReportRating.Output {
        let me = try await principal()
        guard case .json(let body) = input.body else { throw WaybillError.unsupportedBody }
        guard let reason = ReportReason(rawValue: body.reason.rawValue) else { throw WaybillError.validation("reason", "invalid") }
        let report = try await ratings.report(RatingID(rawValue: try Self.plainID(input.path.ratingId, "ratingId")), reason: reason,
                                              note: body.note, by: me)
        return .created(.init(body: .json(try Self.report(report))))
    }

    static func auditEntry(_ e: AuditEntry) throws -> S.AuditEntry {
        S.AuditEntry(id: e.id, at: date(e.at), actorId: e.actor?.uuidString, action: try wire(e.action),
                     targetKind: try wire(e.targetKind), targetId: e.targetID,
                     before: e.before, after: e.after, reason: e.reason, requestId: e.requestID, address: e.address)
    }
}

extension APIHandler {
    func moderateContent(_ input: Operations.ModerateContent.Input) async throws -> Operations.ModerateContent.Output {
        let me = try await principal()
        guard case .json(let body) = input.body else { throw WaybillError.unsupportedBody }
        guard let kind = ModeratedContent(rawValue: input.path.kind.rawValue) else { throw WaybillError.notFound }
        let id: UUID = try Self.plainID(input.path.id, "id")
        let done = try await accounts.setHidden(ModeratedItem(kind, id: id), hide: body.hidden, reason: body.reason, by: me)
        return .ok(.init(body: .json(.init(kind: try wire(done.item.kind), id: done.item.uuid.uuidString, hidden: done.hidden,
                                           authorId: done.author?.uuidString))))
    }
}
