import Foundation

/// Someone acting: an account's id and role. Services build it from the signed-in principal; the
/// policies below need nothing else to answer.
public struct Caller: Sendable, Hashable {
    public let id: UserID
    public let role: Role

    public init(id: UserID, role: Role) {
        self.id = id
        self.role = role
    }

    public func may(_ permission: Permission) -> Bool { permission.isGranted(to: role) }
}

/// What an account may do whatever order or person it concerns, decided by its role here and
/// nowhere else. Rules about one order (its customer, its driver, its status) are in `OrderPolicy`.
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

    /// The roles that have this permission (to find, say, everyone who dispatches).
    public var roles: [Role] { Role.allCases.filter(isGranted(to:)) }

    public func isGranted(to role: Role) -> Bool {
        switch self {
        case .placeOrders: role == .customer
        case .manageUsers, .manageTariff, .dispatch, .readAllStatements: role == .manager
        // Managers drive too: a manager may assign an order to themself.
        case .drive: role == .driver || role == .manager
        }
    }
}

/// Who may manage whom: the rules behind the user administration.
public enum AccountPolicy {
    /// Roles a manager may give to an account they create (customers register themselves).
    public static let creatableRoles: Set<Role> = Role.staff

    /// Whether `caller` may change `target`'s role or disabled flag. A manager may not change
    /// their own role or disable themself (nobody locks the last manager out by mistake).
    public static func mayUpdate(_ targetID: UserID, changingRole: Bool, disabling: Bool, by caller: Caller) -> AccountDecision {
        guard caller.may(.manageUsers) else { return .forbidden }
        return targetID == caller.id && (changingRole || disabling) ? .notOnSelf : .allowed
    }

    public enum AccountDecision: Sendable, Equatable {
        case allowed, forbidden, notOnSelf
    }
}
