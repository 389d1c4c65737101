import Foundation
import OpenAPIRuntime
import WaybillCore

/// The insurance premium table in force.
public typealias InsuranceTableInfo = Components.Schemas.InsuranceTable
/// An insurance claim with its decision and payment.
public typealias InsuranceClaim = Components.Schemas.Claim

/// Insurance: what insuring costs (``Delivery/declaredValue`` insures a parcel), claims by the
/// sender, staff's decisions (two staff above the table's threshold, a password proven in the last
/// 15 minutes: ``reauthenticate(password:)``), and the admins' premium table.
extension WaybillSession {
    public func insuranceTable() async throws(WaybillError) -> InsuranceTableInfo {
        try await call { try await $0.getInsuranceTable().ok.body.json }
    }

    /// Replaces the premium table (admins): bands ascending by `upTo`, the tariff's currency.
    @discardableResult
    public func setInsuranceTable(_ table: InsuranceTable) async throws(WaybillError) -> InsuranceTableInfo {
        try await call {
            try await $0.putInsuranceTable(body: .json(.init(
                currency: table.currency,
                bands: table.bands.map { .init(upTo: $0.upTo, rateBasisPoints: $0.rateBasisPoints, minimumPremium: $0.minimumPremium) },
                claimWindowDays: table.claimWindowDays, secondApprovalAbove: table.secondApprovalAbove))).ok.body.json
        }
    }

    /// Claims the insurance of an insured shipment one sent: `amount` in minor units (at most the
    /// declared value), with up to five JPEG or PNG photos.
    public func fileClaim(_ order: OrderID, kind: ClaimKind, amount: Int, description: String, photos: [Data] = []) async throws(WaybillError) -> InsuranceClaim {
        try await call {
            var parts: [Operations.FileClaim.Input.Body.MultipartFormPayload] = [
                .kind(.init(payload: .init(body: HTTPBody(kind.rawValue)))),
                .amount(.init(payload: .init(body: HTTPBody(String(amount))))),
                .description(.init(payload: .init(body: HTTPBody(description)))),
            ]
            parts += photos.map { .photos(.init(payload: .init(body: HTTPBody($0)), filename: "photo")) }
            return try await $0.fileClaim(path: .init(orderId: order.uuidString.lowercased()), body: .multipartForm(MultipartBody(parts))).created.body.json
        }
    }

    /// Claims, newest first: staff who decide claims see all of them, others their own.
    public func claims(status: ClaimStatus? = nil) async throws(WaybillError) -> [InsuranceClaim] {
        try await call { try await $0.listClaims(query: .init(status: status.flatMap { .init(rawValue: $0.rawValue) })).ok.body.json.items }
    }

    public func claim(_ id: ClaimID) async throws(WaybillError) -> InsuranceClaim {
        try await call { try await $0.getClaim(path: .init(claimId: id.uuidString.lowercased())).ok.body.json }
    }

    /// Approves `amount` (minor units) of a claim; above the table's threshold it waits for a second
    /// staff member, who approves the same amount.
    @discardableResult
    public func approve(claim id: ClaimID, amount: Int) async throws(WaybillError) -> InsuranceClaim {
        try await call {
            try await $0.decideClaim(path: .init(claimId: id.uuidString.lowercased()), body: .json(.init(decision: .approve, amount: amount))).ok.body.json
        }
    }

    /// Declines a claim with the reason its sender reads.
    @discardableResult
    public func decline(claim id: ClaimID, reason: String) async throws(WaybillError) -> InsuranceClaim {
        try await call {
            try await $0.decideClaim(path: .init(claimId: id.uuidString.lowercased()), body: .json(.init(decision: .decline, reason: reason))).ok.body.json
        }
    }
}
