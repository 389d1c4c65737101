import Foundation
import OpenAPIRuntime
import Vapor
import WaybillAPI
import WaybillCore

/// Route plans: translation only (`RoutePlans` and `RoutePlanningPolicy` decide).
extension APIHandler {
    func createRoutePlan(_ input: Operations.CreateRoutePlan.Input) async throws -> Operations.CreateRoutePlan.Output {
        let me = try await principal()
        var ask = RoutePlanRequest()
        if case .json(let body) = input.body {
            if let v = body.seconds { ask.seconds = v }
            if let v = body.capacity { ask.capacity = v }
            if let v = body.serviceMinutes { ask.serviceMinutes = v }
            ask.fewestDrivers = body.fewestDrivers ?? false
            ask.apply = body.apply ?? false
        }
        let outcome = try await RoutePlans(request: try request).plan(ask, by: me)
        return .created(.init(body: .json(try Self.routePlanResult(outcome))))
    }

    func getLatestRoutePlan(_ input: Operations.GetLatestRoutePlan.Input) async throws -> Operations.GetLatestRoutePlan.Output {
        let me = try await principal()
        guard let record = try await RoutePlans(request: try request).latest(by: me) else { throw WaybillError.notFound }
        return .ok(.init(body: .json(try Self.routePlan(record))))
    }

    func getRoutePlan(_ input: Operations.GetRoutePlan.Input) async throws -> Operations.GetRoutePlan.Output {
        let me = try await principal()
        let record = try await RoutePlans(request: try request).find(try Self.plainID(input.path.planId, "planId"), by: me)
        return .ok(.init(body: .json(try Self.routePlan(record))))
    }

    func applyRoutePlan(_ input: Operations.ApplyRoutePlan.Input) async throws -> Operations.ApplyRoutePlan.Output {
        let me = try await principal()
        let outcome = try await RoutePlans(request: try request).apply(try Self.plainID(input.path.planId, "planId"), by: me)
        return .ok(.init(body: .json(try Self.routePlanResult(outcome))))
    }

    func getDriverRoute(_ input: Operations.GetDriverRoute.Input) async throws -> Operations.GetDriverRoute.Output {
        let me = try await principal()
        let stops = try await RoutePlans(request: try request).driverRoute(for: me)
        return .ok(.init(body: .json(.init(stops: stops.map(Self.plannedStop)))))
    }

    func getDispatchSettings(_ input: Operations.GetDispatchSettings.Input) async throws -> Operations.GetDispatchSettings.Output {
        let me = try await principal()
        return .ok(.init(body: .json(Self.dispatchSettings(try await AutoDispatch(request: try request).settings(by: me)))))
    }

    func setDispatchSettings(_ input: Operations.SetDispatchSettings.Input) async throws -> Operations.SetDispatchSettings.Output {
        let me = try await principal()
        guard case .json(let body) = input.body else { throw WaybillError.unsupportedBody }
        let settings = try await AutoDispatch(request: try request).set(on: body.autoDispatch, capacity: body.capacity, by: me)
        return .ok(.init(body: .json(Self.dispatchSettings(settings))))
    }

    static func dispatchSettings(_ s: AutoDispatch.Settings) -> S.DispatchSettings {
        S.DispatchSettings(autoDispatch: s.on, capacity: s.capacity, enabledBy: s.enabledBy?.uuidString, replanDue: s.pendingSince != nil)
    }

    static func routePlanResult(_ outcome: RoutePlanApplication) throws -> S.RoutePlanResult {
        S.RoutePlanResult(plan: try routePlan(outcome.record), results: outcome.results.map { r in
            .init(orderId: r.orderID.uuidString, reference: r.reference, driverId: r.driverID.uuidString,
                  outcome: .init(rawValue: r.outcome.rawValue) ?? .skipped,
                  error: r.error.map { .init(code: $0.code.rawValue, message: $0.message) })
        })
    }

    static func routePlan(_ record: RoutePlanRecord) throws -> S.RoutePlan {
        let plan = record.plan
        return S.RoutePlan(
            id: record.id.uuidString, version: record.version, status: .init(rawValue: record.status.rawValue) ?? .superseded,
            createdAt: date(record.createdAt), appliedAt: record.appliedAt.map(date), matrixSource: plan.matrixSource,
            distanceMeters: plan.distanceMeters, searchSeconds: plan.searchSeconds, iterations: plan.iterations,
            routes: plan.routes.map { route in
                S.PlannedRoute(driverId: route.driverID.uuidString, driverName: route.driverName,
                               start: route.start.map { .init(latitude: $0.latitude, longitude: $0.longitude) },
                               distanceMeters: route.distanceMeters, durationSeconds: route.durationSeconds,
                               stops: route.stops.map(plannedStop))
            },
            unplanned: try plan.unplanned.map { .init(orderId: $0.orderID.uuidString, reference: $0.reference, reason: try wire($0.reason)) })
    }

    static func plannedStop(_ stop: RoutePlan.Stop) -> S.PlannedStop {
        S.PlannedStop(orderId: stop.orderID.uuidString, reference: stop.reference, kind: stop.kind == .pickup ? .pickup : .delivery,
                      latitude: stop.latitude, longitude: stop.longitude, arrival: date(stop.arrival), departure: date(stop.departure))
    }
}
