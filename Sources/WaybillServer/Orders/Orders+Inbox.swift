import Fluent
import Foundation
import Vapor
import WaybillCore

/// The inbox: a person's notifications, read and marked read. (Writing them is `Notifier`.)
extension Orders {
    func notifications(for principal: Principal, unreadOnly: Bool, cursor: String?, limit: Int) async throws -> (items: [Notification], unread: Int, next: String?) {
        let query = Notification.query(on: db).filter(\.$userID == principal.userID)
        if unreadOnly { query.filter(\.$readAt == nil) }
        if let cursor {
            guard let (at, id): (Int64, NotificationID) = Self.decodeCursor(cursor) else { throw WaybillError.invalidParameter("cursor") }
            query.group(.or) { or in
                or.filter(\.$createdAt < at)
                or.group(.and) { and in and.filter(\.$createdAt == at).filter(\.$id < id) }
            }
        }
        let rows = try await query.sort(\.$createdAt, .descending).sort(\.$id, .descending).limit(limit + 1).all()
        let unread = try await unreadCount(for: principal)
        let page = Array(rows.prefix(limit))
        let next = try rows.count > limit ? page.last.map { Self.encodeCursor($0.createdAt, try $0.storedID) } : nil
        return (page, unread, next)
    }

    /// How many of the caller's notifications are unread (the badge in the web app's menu).
    func unreadCount(for principal: Principal) async throws -> Int {
        try await Notification.query(on: db).filter(\.$userID == principal.userID).filter(\.$readAt == nil).count()
    }

    func markRead(_ id: NotificationID, for principal: Principal) async throws -> Notification {
        try await db.writeTransaction(services) { db in
            guard let row = try await Notification.query(on: db).filter(\.$id == id).filter(\.$userID == principal.userID).first() else {
                throw WaybillError.notFound
            }
            if row.readAt == nil {
                row.readAt = UnixTime.nowMillis
                try await row.save(on: db)
            }
            return row
        }
    }

    /// Marks every unread notification of the caller read, in one statement.
    func markAllRead(for principal: Principal) async throws {
        try await db.writeTransaction(services) { db in
            try await Notification.query(on: db).filter(\.$userID == principal.userID).filter(\.$readAt == nil)
                .set(\.$readAt, to: UnixTime.nowMillis).update()
        }
    }
}
