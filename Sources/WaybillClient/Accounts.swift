import Foundation
import OpenAPIRuntime
import WaybillCore

/// A suspension or ban as managers read it.
public typealias AccountRestrictionRecord = Components.Schemas.Restriction

/// Capabilities and restrictions (managers and admins): what people may do, and who may not for now.
extension WaybillSession {
    /// Grants a staff capability (`driver`, `manager`, `counter`; `admin` by an admin).
    public func grant(_ capability: Capability, to id: UserID) async throws(WaybillError) -> Account {
        try await call {
            try await $0.grantCapability(path: .init(userId: id.uuidString.lowercased(), capability: Self.capability(capability))).ok.body.json
        }
    }

    /// Takes a staff capability back.
    public func revoke(_ capability: Capability, from id: UserID) async throws(WaybillError) -> Account {
        try await call {
            try await $0.revokeCapability(path: .init(userId: id.uuidString.lowercased(), capability: Self.capability(capability))).ok.body.json
        }
    }

    /// Suspends an account until `until`: it still signs in and follows what is on its way.
    public func suspend(_ id: UserID, until: Date, reason: String) async throws(WaybillError) -> AccountRestrictionRecord {
        try await restrict(id, .init(kind: .suspended, until: until, reason: reason))
    }

    /// Bans an account: every session ends and it cannot sign in.
    public func ban(_ id: UserID, reason: String) async throws(WaybillError) -> AccountRestrictionRecord {
        try await restrict(id, .init(kind: .banned, reason: reason))
    }

    /// Lifts a suspension or ban before its time.
    public func lift(restriction restrictionId: Int64, of id: UserID) async throws(WaybillError) -> Account {
        try await call {
            try await $0.liftRestriction(path: .init(userId: id.uuidString.lowercased(), restrictionId: restrictionId)).ok.body.json
        }
    }

    /// An account's suspensions and bans, newest first.
    public func restrictions(of id: UserID) async throws(WaybillError) -> [AccountRestrictionRecord] {
        try await call { try await $0.listRestrictions(path: .init(userId: id.uuidString.lowercased())).ok.body.json.items }
    }

    private func restrict(_ id: UserID, _ body: Components.Schemas.RestrictionRequest) async throws(WaybillError) -> AccountRestrictionRecord {
        try await call { try await $0.restrictUser(path: .init(userId: id.uuidString.lowercased()), body: .json(body)).created.body.json }
    }

    private static func capability(_ capability: Capability) -> Components.Schemas.Capability {
        Components.Schemas.Capability(rawValue: capability.rawValue)!
    }
}

extension Components.Schemas.User {
    /// What the account holds (a restriction aside), as WaybillCore names it.
    public var heldCapabilities: Set<Capability> { Set(capabilities.compactMap { Capability(rawValue: $0.rawValue) }) }
}
