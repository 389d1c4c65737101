import Foundation
import Vapor
import WaybillAPI
import WaybillCore

/// The live part of `openapi.yaml`: duty, positions, the fleet, trails, tracking links, tickets.
extension APIHandler {
    var tracking: Tracking { get throws { Tracking(request: try request) } }

    func getDuty(_ input: Operations.GetDuty.Input) async throws -> Operations.GetDuty.Output {
        let me = try await principal()
        return .ok(.init(body: .json(Self.duty(try await tracking.duty(of: me)))))
    }

    func setDuty(_ input: Operations.SetDuty.Input) async throws -> Operations.SetDuty.Output {
        let me = try await principal()
        guard case .json(let body) = input.body else { throw WaybillError.unsupportedBody }
        return .ok(.init(body: .json(Self.duty(try await tracking.setDuty(body.onDuty, by: me)))))
    }

    func reportLocations(_ input: Operations.ReportLocations.Input) async throws -> Operations.ReportLocations.Output {
        let me = try await principal()
        guard case .json(let body) = input.body else { throw WaybillError.unsupportedBody }
        let batch = try body.positions.enumerated().map { index, p in
            guard let millis = UnixTime.millis(p.recordedAt) else { throw WaybillError.validation("positions[\(index)].recordedAt", "invalid") }
            return PositionReport(latitude: p.latitude, longitude: p.longitude, accuracy: p.accuracy, heading: p.heading, speed: p.speed,
                                  recordedAt: millis)
        }
        let result = try await tracking.report(batch, by: me)
        return .ok(.init(body: .json(S.LocationReceipt(accepted: result.accepted, ignored: result.ignored, orders: result.orders))))
    }

    func getFleet(_ input: Operations.GetFleet.Input) async throws -> Operations.GetFleet.Output {
        let me = try await principal()
        let near: OrderID? = try input.query.orderId.map { try Self.uuidParameter($0, "orderId") }
        let entries = try await tracking.fleet(nearOrder: near, by: me)
        return .ok(.init(body: .json(S.Fleet(drivers: try entries.map { entry in
            S.FleetDriver(driver: try Self.person(entry.driver, withEmail: true), onDuty: entry.state?.onDuty ?? false,
                          position: entry.state?.position.map(Self.position), load: entry.load,
                          distanceToPickupMeters: entry.distanceToPickupMeters)
        }))))
    }

    func getOrderTrail(_ input: Operations.GetOrderTrail.Input) async throws -> Operations.GetOrderTrail.Output {
        let me = try await principal()
        let points = try await tracking.trail(try Self.uuid(input.path.orderId), for: me)
        return .ok(.init(body: .json(S.Trail(points: points.map {
            S.TrailPoint(latitude: $0.latitude, longitude: $0.longitude, recordedAt: Self.date($0.recordedAt))
        }))))
    }

    func renewTrackingLink(_ input: Operations.RenewTrackingLink.Input) async throws -> Operations.RenewTrackingLink.Output {
        let me = try await principal()
        let tracking = try self.tracking
        let order = try await tracking.renewLink(try Self.uuid(input.path.orderId), by: me)
        let token = order.trackingToken ?? ""
        return .ok(.init(body: .json(S.TrackingLink(url: tracking.trackingURL(token), token: token))))
    }

    func revokeTrackingLink(_ input: Operations.RevokeTrackingLink.Input) async throws -> Operations.RevokeTrackingLink.Output {
        let me = try await principal()
        _ = try await tracking.revokeLink(try Self.uuid(input.path.orderId), by: me)
        return .noContent(.init())
    }

    func getPublicTracking(_ input: Operations.GetPublicTracking.Input) async throws -> Operations.GetPublicTracking.Output {
        let req = try request
        let view = try await tracking.publicView(token: input.path.token, clientAddress: req.clientAddress)
        return .ok(.init(body: .json(S.PublicTracking(
            status: try wire(view.order.status),
            timeline: try view.timeline.map { S.PublicTrackingStage(status: try wire($0.status), at: Self.date($0.at)) },
            driverFirstName: view.driverFirstName,
            eta: view.eta.map(Self.arrival),
            driverPosition: view.position.map(Self.position)))))
    }

    func createLiveTicket(_ input: Operations.CreateLiveTicket.Input) async throws -> Operations.CreateLiveTicket.Output {
        let req = try request
        // Signed in, or following a tracking link; a bad token is an error, not a fall-back.
        let me: Principal? = req.headers.bearerToken == nil ? nil : try await principal()
        var trackingToken: String?
        if case .json(let body)? = input.body { trackingToken = body.trackingToken }
        let issued = try await LiveTickets.issue(for: me, trackingToken: trackingToken, clientAddress: req.clientAddress,
                                                 app: req.application, db: req.db)
        let socketBase = req.application.waybill.config.liveSocketBase
        return .created(.init(body: .json(S.LiveTicket(
            ticket: issued.ticket, url: socketBase + "/api/v1/live?ticket=" + issued.ticket, expiresAt: Self.date(issued.expiresAt)))))
    }

    // MARK: mapping

    func getDriverDay(_ input: Operations.GetDriverDay.Input) async throws -> Operations.GetDriverDay.Output {
        let me = try await principal()
        let day = try await orders.driverDay(for: me)
        return .ok(.init(body: .json(S.DriverDay(duty: Self.duty(day.state), todo: try day.todo.map { try Self.order($0) },
                                                 done: try day.done.map { try Self.order($0) }))))
    }

    static func duty(_ state: DriverState?) -> S.DutyState {
        S.DutyState(onDuty: state?.onDuty ?? false, since: state.map { date($0.dutyChangedAt) }, position: state?.position.map(position))
    }

    static func position(_ p: PositionReport) -> S.Position {
        S.Position(latitude: p.latitude, longitude: p.longitude, accuracy: p.accuracy, heading: p.heading, speed: p.speed,
                   recordedAt: date(p.recordedAt))
    }

    static func arrival(_ estimate: ArrivalEstimate) -> S.ArrivalEstimate {
        S.ArrivalEstimate(stop: estimate.stop == .pickup ? .pickup : .dropoff, arrivesAt: date(estimate.arrivesAt),
                          distanceMeters: estimate.distanceMeters)
    }
}

extension APIHandler {
    func getVapidPublicKey(_ input: Operations.GetVapidPublicKey.Input) async throws -> Operations.GetVapidPublicKey.Output {
        guard let key = try request.application.waybill.push.vapidPublicKey else {
            throw WaybillError(.notFound, .pushNotConfigured, "This server has no VAPID keys; Web Push is off.")
        }
        return .ok(.init(body: .json(S.VapidPublicKey(publicKey: key))))
    }
}
