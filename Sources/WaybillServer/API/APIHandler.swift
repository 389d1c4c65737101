import Foundation
import Vapor
import WaybillAPI
import WaybillCore

/// Implements the operations of `openapi.yaml`. Each handler only translates between the generated
/// types and the domain services; the rules live in the services and in WaybillCore.
struct APIHandler: APIProtocol {
    typealias S = Components.Schemas

    var request: Request { get throws { try RequestContext.request } }
    var accounts: Accounts { get throws { Accounts(request: try request) } }

    func principal() async throws -> Principal {
        let req = try request
        let principal = try await Accounts(request: req).authenticate(bearer: req.headers.bearerToken)
        // A machine's key: only what its scopes cover (`APIKeyPolicy`).
        if let scopes = principal.keyScopes, !APIKeyPolicy.allows(req.operationID, scopes: scopes) {
            throw WaybillError(.forbidden, .forbidden, "This API key's scopes do not cover this operation.")
        }
        return principal
    }

    static let success = S.StatusResponse(status: .success)

    // MARK: auth

    func register(_ input: Operations.Register.Input) async throws -> Operations.Register.Output {
        guard case .json(let body) = input.body else { throw WaybillError.unsupportedBody }
        try await accounts.register(Registration(
            firstName: body.firstName, lastName: body.lastName, address: body.address, postalCode: body.postalCode,
            city: body.city, email: body.email, password: body.password, isCompany: body.isCompany,
            companyName: body.companyName))
        return .created(.init(body: .json(Self.success)))
    }

    func verifyEmail(_ input: Operations.VerifyEmail.Input) async throws -> Operations.VerifyEmail.Output {
        guard case .json(let body) = input.body else { throw WaybillError.unsupportedBody }
        try await accounts.verifyEmail(email: body.email, code: body.code)
        return .ok(.init(body: .json(Self.success)))
    }

    func resendVerification(_ input: Operations.ResendVerification.Input) async throws -> Operations.ResendVerification.Output {
        guard case .json(let body) = input.body else { throw WaybillError.unsupportedBody }
        try await accounts.resendVerification(email: body.email)
        return .accepted(.init(body: .json(Self.success)))
    }

    func login(_ input: Operations.Login.Input) async throws -> Operations.Login.Output {
        guard case .json(let body) = input.body else { throw WaybillError.unsupportedBody }
        let device = body.device.map { (DevicePlatform($0.platform), $0.pushToken) }
        let issued = try await accounts.login(email: body.email, password: body.password, device: device)
        return .ok(.init(body: .json(try Self.auth(issued))))
    }

    func refreshSession(_ input: Operations.RefreshSession.Input) async throws -> Operations.RefreshSession.Output {
        guard case .json(let body) = input.body else { throw WaybillError.unsupportedBody }
        try limitSessionTokens()
        let issued = try await accounts.refresh(token: body.refreshToken)
        return .ok(.init(body: .json(try Self.auth(issued))))
    }

    /// Refresh and sign-out need no account: limited per client address (`sessionTokenLimiter`).
    private func limitSessionTokens() throws {
        let req = try request
        if let wait = req.application.waybill.sessionTokenLimiter.take(req.clientAddress) {
            throw WaybillError.tooManyRequests(retryAfter: wait)
        }
    }

    func logout(_ input: Operations.Logout.Input) async throws -> Operations.Logout.Output {
        guard case .json(let body) = input.body else { throw WaybillError.unsupportedBody }
        try limitSessionTokens()
        try await accounts.logout(token: body.refreshToken)
        return .noContent(.init())
    }

    func requestPasswordReset(_ input: Operations.RequestPasswordReset.Input) async throws -> Operations.RequestPasswordReset.Output {
        guard case .json(let body) = input.body else { throw WaybillError.unsupportedBody }
        try await accounts.requestPasswordReset(email: body.email)
        return .accepted(.init(body: .json(Self.success)))
    }

    func verifyPasswordResetCode(_ input: Operations.VerifyPasswordResetCode.Input) async throws -> Operations.VerifyPasswordResetCode.Output {
        guard case .json(let body) = input.body else { throw WaybillError.unsupportedBody }
        try await accounts.verifyPasswordReset(email: body.email, code: body.code)
        return .ok(.init(body: .json(Self.success)))
    }

    func completePasswordReset(_ input: Operations.CompletePasswordReset.Input) async throws -> Operations.CompletePasswordReset.Output {
        guard case .json(let body) = input.body else { throw WaybillError.unsupportedBody }
        try await accounts.completePasswordReset(email: body.email, code: body.code, newPassword: body.newPassword)
        return .ok(.init(body: .json(Self.success)))
    }

    // MARK: me

    func getMe(_ input: Operations.GetMe.Input) async throws -> Operations.GetMe.Output {
        let me = try await principal()
        // The person is told why they are restricted, and which boxes they switch between.
        let restriction = try await Accounts.restrictionInForce(of: me.user, on: request.db)
        var user = try Self.user(me.user, restriction: restriction)
        user.boxes = try OrderPolicy.boxes(for: me.caller).map { try wire($0, as: S.ShipmentBox.self) }
        return .ok(.init(body: .json(user)))
    }

    func updateMe(_ input: Operations.UpdateMe.Input) async throws -> Operations.UpdateMe.Output {
        let me = try await principal()
        guard case .json(let body) = input.body else { throw WaybillError.unsupportedBody }
        let user = try await accounts.updateProfile(me, changes: ProfileChanges(
            firstName: body.firstName, lastName: body.lastName, address: body.address,
            postalCode: body.postalCode, city: body.city, companyName: body.companyName))
        return .ok(.init(body: .json(try Self.user(user))))
    }

    func changePassword(_ input: Operations.ChangePassword.Input) async throws -> Operations.ChangePassword.Output {
        let me = try await principal()
        guard case .json(let body) = input.body else { throw WaybillError.unsupportedBody }
        try await accounts.changePassword(me, current: body.currentPassword, new: body.newPassword)
        return .ok(.init(body: .json(Self.success)))
    }

    func registerDevice(_ input: Operations.RegisterDevice.Input) async throws -> Operations.RegisterDevice.Output {
        let me = try await principal()
        guard case .json(let body) = input.body else { throw WaybillError.unsupportedBody }
        let device = try await accounts.registerDevice(me, platform: DevicePlatform(body.platform), pushToken: body.pushToken)
        return .created(.init(body: .json(S.Device(
            id: try device.storedID.uuidString, platform: body.platform, createdAt: device.createdAt ?? Date()))))
    }

    // MARK: users

    func listUsers(_ input: Operations.ListUsers.Input) async throws -> Operations.ListUsers.Output {
        let me = try await principal()
        let limit = input.query.limit ?? 50
        guard (1...100).contains(limit) else { throw WaybillError.invalidParameter("limit", "out_of_range") }
        let page = try await accounts.listUsers(role: input.query.role.map(Role.init), query: input.query.q,
                                                cursor: input.query.cursor, limit: limit, for: me)
        return .ok(.init(body: .json(S.UserPage(items: try page.users.map { try Self.user($0) }, nextCursor: page.nextCursor))))
    }

    func createUser(_ input: Operations.CreateUser.Input) async throws -> Operations.CreateUser.Output {
        let me = try await principal()
        guard case .json(let body) = input.body else { throw WaybillError.unsupportedBody }
        let role: Role = body.role == .manager ? .manager : .driver
        let user = try await accounts.createStaff(role: role, firstName: body.firstName, lastName: body.lastName, email: body.email, by: me)
        return .created(.init(body: .json(try Self.user(user))))
    }

    func getUser(_ input: Operations.GetUser.Input) async throws -> Operations.GetUser.Output {
        let me = try await principal()
        let id: UserID = try Self.uuid(input.path.userId)
        let user = try await accounts.user(id, for: me)
        return .ok(.init(body: .json(try Self.user(user, restriction: try await Accounts.restrictionInForce(of: user, on: request.db)))))
    }

    func updateUser(_ input: Operations.UpdateUser.Input) async throws -> Operations.UpdateUser.Output {
        let me = try await principal()
        let id: UserID = try Self.uuid(input.path.userId)
        guard case .json(let body) = input.body else { throw WaybillError.unsupportedBody }
        let user = try await accounts.updateUser(actor: me, id: id, role: body.role.map(Role.init), disabled: body.disabled)
        return .ok(.init(body: .json(try Self.user(user))))
    }

    func resetUser(_ input: Operations.ResetUser.Input) async throws -> Operations.ResetUser.Output {
        let me = try await principal()
        try await accounts.resetUser(id: try Self.uuid(input.path.userId), by: me)
        return .accepted(.init(body: .json(Self.success)))
    }

    func grantCapability(_ input: Operations.GrantCapability.Input) async throws -> Operations.GrantCapability.Output {
        let me = try await principal()
        let user = try await accounts.setCapability(try wire(input.path.capability, as: Capability.self), granted: true, on: try Self.uuid(input.path.userId), by: me)
        return .ok(.init(body: .json(try Self.user(user))))
    }

    func revokeCapability(_ input: Operations.RevokeCapability.Input) async throws -> Operations.RevokeCapability.Output {
        let me = try await principal()
        let user = try await accounts.setCapability(try wire(input.path.capability, as: Capability.self), granted: false, on: try Self.uuid(input.path.userId), by: me)
        return .ok(.init(body: .json(try Self.user(user))))
    }

    func listRestrictions(_ input: Operations.ListRestrictions.Input) async throws -> Operations.ListRestrictions.Output {
        let me = try await principal()
        let records = try await accounts.restrictions(of: try Self.uuid(input.path.userId), for: me)
        return .ok(.init(body: .json(S.RestrictionList(items: try records.map(Self.restriction)))))
    }

    func restrictUser(_ input: Operations.RestrictUser.Input) async throws -> Operations.RestrictUser.Output {
        let me = try await principal()
        guard case .json(let body) = input.body else { throw WaybillError.unsupportedBody }
        let until = try body.until.map { date -> Int64 in
            guard let ms = UnixTime.millis(date) else { throw WaybillError.validation("until", "out_of_range") }
            return ms
        }
        let kind = try wire(body.kind, as: Restriction.Kind.self)
        let (_, record) = try await accounts.restrict(try Self.uuid(input.path.userId), RestrictionRequest(kind: kind, until: until, reason: body.reason), by: me)
        return .created(.init(body: .json(try Self.restriction(record))))
    }

    func liftRestriction(_ input: Operations.LiftRestriction.Input) async throws -> Operations.LiftRestriction.Output {
        let me = try await principal()
        guard let restrictionID = Int(exactly: input.path.restrictionId) else { throw WaybillError.notFound }
        let user = try await accounts.lift(restriction: restrictionID, of: try Self.uuid(input.path.userId), by: me)
        return .ok(.init(body: .json(try Self.user(user))))
    }

    // MARK: mapping

    /// An id that is not a UUID names nothing: 404, like any other unknown id.
    static func uuid<Tag>(_ raw: String) throws -> Tagged<Tag, UUID> {
        guard let id = Tagged<Tag, UUID>(uuidString: raw) else { throw WaybillError.notFound }
        return id
    }

    /// An account; `restriction` gives the reason of the one in force (else only its kind and end).
    static func user(_ user: User, restriction: RestrictionRecord? = nil) throws -> S.User {
        let inForce: S.AccountRestriction? = try user.restriction.map { kind in
            if let restriction {
                return S.AccountRestriction(id: Int64(try restriction.storedID), kind: try wire(restriction.kind),
                                            until: restriction.until.map(UnixTime.date), reason: restriction.reason)
            }
            return S.AccountRestriction(kind: try wire(kind),
                                        until: kind == .suspended ? user.restrictedUntil.map(UnixTime.date) : nil)
        }
        return S.User(
            id: try user.storedID.uuidString, role: S.Role(user.role),
            capabilities: try Capability.allCases.filter(user.capabilities.contains).map { try wire($0, as: S.Capability.self) },
            email: user.email, firstName: user.firstName,
            lastName: user.lastName, address: user.address, postalCode: user.postalCode, city: user.city,
            isCompany: user.isCompany, companyName: user.companyName, emailVerified: user.emailVerifiedAt != nil,
            disabled: user.isBanned, restriction: inForce, createdAt: user.createdAt ?? Date())
    }

    static func restriction(_ record: RestrictionRecord) throws -> S.Restriction {
        S.Restriction(
            id: Int64(try record.storedID), kind: try wire(record.kind), until: record.until.map(UnixTime.date),
            reason: record.reason, setBy: record.setBy?.uuidString, setAt: UnixTime.date(record.setAt),
            liftedBy: record.liftedBy?.uuidString, liftedAt: record.liftedAt.map(UnixTime.date),
            inForce: record.liftedAt == nil && record.restriction.holds(at: UnixTime.nowMillis))
    }

    static func auth(_ issued: IssuedTokens) throws -> S.AuthResponse {
        S.AuthResponse(
            accessToken: issued.accessToken, refreshToken: issued.refreshToken, tokenType: .bearer,
            expiresIn: Int(TokenService.accessLifetime), role: S.Role(issued.user.role), user: try user(issued.user))
    }
}

extension WaybillError {
    static let unsupportedBody = WaybillError(.unsupportedMediaType, .unsupportedMediaType, "Send the body as application/json.")
}

extension Role {
    init(_ role: Components.Schemas.Role) {
        switch role {
        case .customer: self = .customer
        case .driver: self = .driver
        case .manager: self = .manager
        }
    }
}

extension Components.Schemas.Role {
    init(_ role: Role) {
        switch role {
        case .customer: self = .customer
        case .driver: self = .driver
        case .manager: self = .manager
        }
    }
}

extension DevicePlatform {
    init(_ platform: Components.Schemas.DevicePlatform) {
        switch platform {
        case .ios: self = .ios
        case .android: self = .android
        case .web: self = .web
        }
    }
}
