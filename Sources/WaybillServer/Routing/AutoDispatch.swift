import Fluent
import Foundation
import SQLKit
import Vapor
import WaybillCore

/// Auto-dispatch as a standing mode: while on, every order that reaches dispatch (paid or confirmed,
/// or failed) marks a re-plan as due, in its own transaction; a worker in each process claims the mark
/// (one claim wins across processes) within seconds and applies a plan that keeps every assignment and
/// every stop under way, so only the new orders move in. Plans are applied in the name of the manager
/// who switched it on; if they may no longer dispatch, auto-dispatch stops and says so in the log.
struct AutoDispatch: WaybillService {
    let services: WaybillServices
    let db: any Database
    let logger: Logger

    init(services: WaybillServices, db: any Database, logger: Logger) {
        self.services = services
        self.db = db
        self.logger = logger
    }

    struct Settings: Sendable, Equatable {
        var on: Bool
        var enabledBy: UUID?
        var capacity: Int
        var pendingSince: Int64?
    }

    private var sql: any SQLDatabase {
        get throws { guard let sql = db.tracedSQL else { throw Abort(.internalServerError) }; return sql }
    }

    static func read(_ sql: any SQLDatabase) async throws -> Settings {
        guard let row = try await sql.raw("SELECT auto_dispatch, enabled_by, capacity, pending_since FROM dispatch_settings WHERE id = 1").first() else {
            return Settings(on: false, enabledBy: nil, capacity: RoutePlanningPolicy.defaultCapacity, pendingSince: nil)
        }
        return Settings(on: try row.decode(column: "auto_dispatch", as: Bool.self),
                        enabledBy: try row.decodeNil(column: "enabled_by") ? nil : try row.decode(column: "enabled_by", as: UUID.self),
                        capacity: try row.decode(column: "capacity", as: Int.self),
                        pendingSince: try row.decodeNil(column: "pending_since") ? nil : try row.decode(column: "pending_since", as: Int64.self))
    }

    func settings(by principal: Principal) async throws -> Settings {
        try principal.require(.dispatch)
        return try await Self.read(sql)
    }

    /// Switches auto-dispatch on (in the caller's name: its plans assign as they would) or off.
    /// Switching on plans at once.
    func set(on: Bool, capacity: Int?, by principal: Principal) async throws -> Settings {
        try principal.require(.dispatch)
        if let capacity, !RoutePlanningPolicy.capacityRange.contains(capacity) { throw WaybillError.validation("capacity", "out_of_range") }
        let now = UnixTime.nowMillis
        let me = principal.userID.rawValue
        return try await db.writeTransaction(services) { db in
            guard let sql = db.tracedSQL else { throw Abort(.internalServerError) }
            let current = try await Self.read(sql)
            let next = Settings(on: on, enabledBy: on ? me : current.enabledBy, capacity: capacity ?? current.capacity,
                                pendingSince: on ? now : nil)
            try await sql.raw("""
                INSERT INTO dispatch_settings (id, auto_dispatch, enabled_by, capacity, pending_since, updated_at)
                VALUES (1, \(bind: next.on), \(bind: next.enabledBy), \(bind: next.capacity), \(bind: next.pendingSince), \(bind: now))
                ON CONFLICT (id) DO UPDATE SET auto_dispatch = \(bind: next.on), enabled_by = \(bind: next.enabledBy),
                    capacity = \(bind: next.capacity), pending_since = \(bind: next.pendingSince), updated_at = \(bind: now)
                """).run()
            return next
        }
    }

    /// In the transaction of the event: a re-plan is due (if auto-dispatch is on).
    static func markDue(_ event: DomainEvent, on db: any Database) async throws {
        guard event.changesStatus, let order = event.order, RoutePlanningPolicy.autoDispatchReplans(on: order.status),
              let sql = db.tracedSQL else { return }
        try await sql.raw("""
            UPDATE dispatch_settings SET pending_since = COALESCE(pending_since, \(bind: UnixTime.nowMillis))
            WHERE id = 1 AND auto_dispatch = \(bind: true)
            """).run()
    }

    /// Claims a due re-plan (one process wins) and applies it. Returns the plan applied, if any.
    @discardableResult
    func runOnce() async throws -> RoutePlanApplication? {
        let sql = try self.sql
        let settings = try await Self.read(sql)
        guard settings.on, let since = settings.pendingSince, let managerID = settings.enabledBy else { return nil }
        let claimed = try await db.writeTransaction(services) { db -> Bool in
            guard let sql = db.tracedSQL else { throw Abort(.internalServerError) }
            return try await sql.raw("""
                UPDATE dispatch_settings SET pending_since = NULL WHERE id = 1 AND pending_since = \(bind: since) RETURNING id
                """).first() != nil
        }
        guard claimed else { return nil }
        guard let manager = try await User.find(UserID(rawValue: managerID), on: db), try manager.caller.may(.dispatch) else {
            logger.warning("auto-dispatch: the manager who switched it on may no longer dispatch; switching it off")
            try await db.writeTransaction(services) { db in
                try await db.tracedSQL?.raw("UPDATE dispatch_settings SET auto_dispatch = \(bind: false) WHERE id = 1").run()
            }
            return nil
        }
        let principal = try Principal(user: manager, sessionID: .random())
        var request = RoutePlanRequest(seconds: RoutePlanningPolicy.autoDispatchSeconds, capacity: settings.capacity)
        request.keepAssignments = true
        request.automatic = true
        request.apply = true
        do {
            return try await RoutePlans(services: services, db: db, logger: logger).plan(request, by: principal)
        } catch let error as WaybillError where error.code == .planSuperseded || error.code == .conflict {
            // A manager planned at the same moment: try again on the next round.
            try await db.writeTransaction(services) { db in
                try await db.tracedSQL?.raw("UPDATE dispatch_settings SET pending_since = COALESCE(pending_since, \(bind: UnixTime.nowMillis)) WHERE id = 1").run()
            }
            return nil
        }
    }

    /// Every two seconds while the process runs.
    static func run(_ app: Application) async {
        while !Task.isCancelled {
            do {
                try await AutoDispatch(services: app.waybill, db: app.db, logger: app.logger).runOnce()
            } catch {
                app.logger.warning("auto-dispatch failed: \(String(describing: error))")
            }
            try? await Task.sleep(for: .seconds(2))
        }
    }
}
