import Foundation
import OpenAPIRuntime
import WaybillCore

/// A plan of the drivers' routes: a route per driver on duty (its stops in order, with planned
/// arrivals) and the orders left out, each with the reason.
public typealias RoutePlan = Components.Schemas.RoutePlan
/// A plan, and when applied what happened to each order.
public typealias RoutePlanResult = Components.Schemas.RoutePlanResult
/// One stop of a route: a pickup or a delivery of an order, with its planned arrival.
public typealias PlannedStop = Components.Schemas.PlannedStop
/// Whether auto-dispatch is on.
public typealias DispatchSettings = Components.Schemas.DispatchSettings

/// Route planning (dispatchers) and the driver's planned stops.
extension WaybillSession {
    /// Plans the open orders over the drivers on duty. `seconds` of search (0.2–30, default 2);
    /// `capacity` of a van in load units (small 1, medium 3, large 10; default 40); `fewestDrivers`
    /// to use as few drivers as possible first; `apply` to give each order its driver at once.
    public func planRoutes(seconds: Double? = nil, capacity: Int? = nil, serviceMinutes: Int? = nil,
                           fewestDrivers: Bool = false, apply: Bool = false) async throws(WaybillError) -> RoutePlanResult {
        try await call {
            try await $0.createRoutePlan(body: .json(.init(seconds: seconds, capacity: capacity, serviceMinutes: serviceMinutes,
                                                           fewestDrivers: fewestDrivers, apply: apply))).created.body.json
        }
    }

    /// The newest plan, or nil before the first.
    public func latestRoutePlan() async throws(WaybillError) -> RoutePlan? {
        do {
            return try await call { try await $0.getLatestRoutePlan().ok.body.json }
        } catch {
            if case .server(let problem) = error, problem.status == 404 { return nil }
            throw error
        }
    }

    public func routePlan(_ id: UUID) async throws(WaybillError) -> RoutePlan {
        try await call { try await $0.getRoutePlan(path: .init(planId: id.uuidString.lowercased())).ok.body.json }
    }

    /// Gives each planned order to its driver; only the newest plan, once (409 `plan_superseded` otherwise).
    public func applyRoutePlan(_ id: UUID) async throws(WaybillError) -> RoutePlanResult {
        try await call { try await $0.applyRoutePlan(path: .init(planId: id.uuidString.lowercased())).ok.body.json }
    }

    /// The signed-in driver's stops still to do in the applied plan, in order.
    public func myPlannedStops() async throws(WaybillError) -> [PlannedStop] {
        try await call { try await $0.getDriverRoute().ok.body.json.stops }
    }

    public func dispatchSettings() async throws(WaybillError) -> DispatchSettings {
        try await call { try await $0.getDispatchSettings().ok.body.json }
    }

    /// Auto-dispatch on (new orders are planned and given to drivers within seconds, in your name) or off.
    public func setAutoDispatch(_ on: Bool, capacity: Int? = nil) async throws(WaybillError) -> DispatchSettings {
        try await call { try await $0.setDispatchSettings(body: .json(.init(autoDispatch: on, capacity: capacity))).ok.body.json }
    }
}
