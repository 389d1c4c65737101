import Foundation

/// Someone acting: an account's id and the capabilities it may use now (a restriction already
/// taken away). Services build it from the signed-in principal; the policies below need nothing
/// else to answer.
public struct Caller: Sendable, Hashable {
    public let id: UserID
    public let capabilities: Set<Capability>
    /// The account's email once verified (lowercased): shipments addressed to it are theirs to receive.
    public let verifiedEmail: String?

    public init(id: UserID, capabilities: Set<Capability>, verifiedEmail: String? = nil) {
        self.id = id
        self.capabilities = capabilities
        self.verifiedEmail = verifiedEmail?.lowercased()
    }

    /// An account holding what `role` maps to (`Capability.granted(to:)`).
    public init(id: UserID, role: Role, verifiedEmail: String? = nil) {
        self.init(id: id, capabilities: Capability.granted(to: role), verifiedEmail: verifiedEmail)
    }

    /// The one role older clients read (`Capability.primaryRole(of:)`).
    public var role: Role { Capability.primaryRole(of: capabilities) }

    public func may(_ permission: Permission) -> Bool { permission.isGranted(to: capabilities) }
}

/// What an account may do whatever order or person it concerns, decided by its capabilities here
/// and nowhere else. Rules about one order (its customer, its driver, its status) are in `OrderPolicy`.
public enum Permission: String, Sendable, CaseIterable {
    /// Order deliveries (and see one's own).
    case placeOrders = "place_orders"
    /// Create staff accounts, change roles, disable accounts, send password resets, read accounts.
    case manageUsers = "manage_users"
    /// Read and change the tariff.
    case manageTariff = "manage_tariff"
    /// See every order, the dispatch board and the fleet; assign and reassign.
    case dispatch
    /// Go on duty, share a position, carry orders assigned to oneself.
    case drive
    /// Read every company's monthly statement.
    case readAllStatements = "read_all_statements"
    /// Edit the areas travellers go between and the travel price table.
    case manageTravel = "manage_travel"
    /// Create reception counters, set their hours and name their staff.
    case manageCounters = "manage_counters"
    /// Receive and hand out parcels at the counters one was named for.
    case receiveAtCounter = "receive_at_counter"
    /// Suspend and ban people, decide reports, read and export the audit log (the administration;
    /// with a recently proven password, `Reauthentication`).
    case moderate
    /// Edit the insurance premium table.
    case manageInsurance = "manage_insurance"
    /// Decide insurance claims (with a recently proven password; two staff above a threshold).
    case decideClaims = "decide_claims"
    /// Set how loyalty points are earned, spent and expire.
    case manageLoyalty = "manage_loyalty"
    /// Offer subscription plans, change and withdraw them.
    case managePlans = "manage_plans"

    /// The capabilities that grant this permission, any one of them (to find, say, everyone who
    /// dispatches).
    public var capabilities: Set<Capability> {
        switch self {
        // Every verified account sends, drivers and managers included.
        case .placeOrders: [.sender]
        case .manageUsers: [.manager, .admin]
        case .manageTariff, .dispatch, .readAllStatements: [.manager]
        // A manager holds `driver` too (`Capability.granted(to:)`): they may take an order themself.
        case .drive: [.driver]
        case .manageTravel, .manageCounters, .moderate, .manageInsurance, .manageLoyalty, .managePlans: [.admin]
        case .decideClaims: [.manager, .admin]
        case .receiveAtCounter: [.counter]
        }
    }

    public func isGranted(to capabilities: Set<Capability>) -> Bool { !self.capabilities.isDisjoint(with: capabilities) }
}

/// Who may manage whom: the rules behind the user administration.
public enum AccountPolicy {
    /// Roles a manager may give to an account they create (customers register themselves).
    public static let creatableRoles: Set<Role> = Role.staff

    /// Whether `caller` may change `target`'s role or disabled flag (`PATCH /users/{id}`, kept for
    /// one release beside capabilities and restrictions). A manager may not change
    /// their own role or disable themself (nobody locks the last manager out by mistake).
    public static func mayUpdate(_ targetID: UserID, changingRole: Bool, disabling: Bool, by caller: Caller) -> AccountDecision {
        guard caller.may(.manageUsers) else { return .forbidden }
        return targetID == caller.id && (changingRole || disabling) ? .notOnSelf : .allowed
    }

    public enum AccountDecision: Sendable, Equatable {
        case allowed, forbidden, notOnSelf
    }
}
