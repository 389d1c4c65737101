import Foundation

// Capabilities instead of one role (issue "Shipments with legs, parties and a money ledger"): one
// person sends today, carries a parcel on their trip tomorrow and receives one the day after, in
// one account. The pure rules: what each capability is, how today's roles map onto them, who may
// grant which, and how a restriction (suspension, ban) limits an account.

/// Something an account is able to do.
public enum Capability: String, Sendable, Hashable, Codable, CaseIterable {
    /// Send shipments: every verified account.
    case sender
    /// Receive shipments addressed to one's verified email, and confirm receipt: every verified account.
    case receiver
    /// Carry parcels on one's own trips: after completing a traveller profile.
    case traveller
    /// Carry the company's shipments (the fleet).
    case driver
    /// Dispatch, manage staff and the tariff.
    case manager
    /// Ban people and remove content.
    case admin
    /// Staff of a reception counter: receive and hand out parcels.
    case counter
    /// A company staff have vetted: pays by monthly invoice and imports deliveries
    /// (`PaymentOptions`, `OrderImportPolicy`). Granted by managers and admins; it means nothing
    /// on an account that is not a company's.
    case invoice

    /// Every verified account has these; nobody grants or removes them.
    public static let everyone: Set<Capability> = [.sender, .receiver]

    /// Staff capabilities: granted by someone else, never by oneself (`invoice` too: staff vet a
    /// company, it does not vet itself).
    public static let staff: Set<Capability> = [.driver, .manager, .admin, .counter, .invoice]

    /// What an account row keeps (`users.capabilities`): the staff capabilities, and traveller
    /// (which a person takes on themself with a traveller profile).
    public static let stored: Set<Capability> = staff.union([.traveller])

    /// Today's single role as the capabilities its account will hold: every verified account sends
    /// and receives; a driver also drives; a manager manages and drives (a manager may take an
    /// order themself, as `Permission.drive` allows today).
    public static func granted(to role: Role) -> Set<Capability> {
        switch role {
        case .customer: everyone
        case .driver: everyone.union([.driver])
        case .manager: everyone.union([.manager, .driver])
        }
    }

    /// The one role older clients still read (`role` in tokens and accounts), from an account's
    /// capabilities: manager, else driver, else customer.
    public static func primaryRole(of capabilities: Set<Capability>) -> Role {
        if capabilities.contains(.manager) { return .manager }
        if capabilities.contains(.driver) { return .driver }
        return .customer
    }

    /// The staff capabilities a role change asks for (`PATCH /users/{id}` with `role`, kept for one
    /// release): the role's own, plus whatever else the account holds that a role does not speak
    /// of (counter, admin, invoice).
    public static func staff(for role: Role, keeping current: Set<Capability>) -> Set<Capability> {
        granted(to: role).intersection(staff).union(current.intersection([.counter, .admin, .traveller, .invoice]))
    }

    /// Staff capabilities (and traveller) as stored on an account (`users.capabilities`): sorted, comma-separated.
    public static func storedList(_ capabilities: Set<Capability>) -> String {
        capabilities.intersection(stored).map(\.rawValue).sorted().joined(separator: ",")
    }

    /// Reads `storedList`; unknown names are ignored.
    public static func parseList(_ stored: String) -> Set<Capability> {
        Set(stored.split(separator: ",").compactMap { Capability(rawValue: String($0)) }).intersection(Self.stored)
    }

    /// What an account holds: its staff capabilities, and sending and receiving once its email is
    /// verified (an account that has not verified its email cannot sign in).
    public static func held(staff: Set<Capability>, emailVerified: Bool) -> Set<Capability> {
        let own = staff.intersection(Self.stored)
        return emailVerified ? own.union(everyone) : own
    }
}

/// A limit set on an account by staff, with its reason and who set it.
public struct Restriction: Sendable, Hashable, Codable {
    public enum Kind: String, Sendable, Hashable, Codable, CaseIterable {
        /// Cannot act until `until`; may still sign in to see their shipments.
        case suspended
        /// Cannot sign in.
        case banned
    }

    public var kind: Kind
    /// When a suspension ends (Unix ms); nil for a ban.
    public var until: Int64?
    public var reason: String
    public var setBy: UserID
    public var setAt: Int64

    public init(kind: Kind, until: Int64?, reason: String, setBy: UserID, setAt: Int64) {
        self.kind = kind
        self.until = until
        self.reason = reason
        self.setBy = setBy
        self.setAt = setAt
    }

    /// The restriction in force as an account row keeps it (`users.restricted_kind`,
    /// `restricted_until`), for the checks every request makes without reading the history.
    public static func inForce(kind: String?, until: Int64?, at now: Int64) -> Kind? {
        guard let kind = kind.flatMap(Kind.init(rawValue:)) else { return nil }
        switch kind {
        case .banned: return .banned
        case .suspended: return until.map { now < $0 } ?? true ? .suspended : nil
        }
    }

    /// Whether the restriction holds at `now`.
    public func holds(at now: Int64) -> Bool {
        switch kind {
        case .banned: true
        case .suspended: until.map { now < $0 } ?? true
        }
    }
}

/// What an account may do now, given its capabilities and restrictions.
public struct AccountStanding: Sendable, Equatable {
    /// The capabilities left to an account under a restriction of `kind` (none for a ban; for a
    /// suspension, only receiving what is already on its way).
    public static func effective(_ capabilities: Set<Capability>, under kind: Restriction.Kind?) -> Set<Capability> {
        switch kind {
        case nil: capabilities
        case .suspended: capabilities.intersection([.receiver])
        case .banned: []
        }
    }

    public var capabilities: Set<Capability>
    /// May sign in at all.
    public var maySignIn: Bool
    /// The restriction in force, if any (a ban wins over a suspension).
    public var restriction: Restriction?

    public static func of(capabilities: Set<Capability>, restrictions: [Restriction], at now: Int64) -> AccountStanding {
        let active = restrictions.filter { $0.holds(at: now) }
        let ban = active.first { $0.kind == .banned }
        // The suspension that lasts longest is the one to show.
        let suspension = active.filter { $0.kind == .suspended }.max { ($0.until ?? .max) < ($1.until ?? .max) }
        if let ban { return AccountStanding(capabilities: [], maySignIn: false, restriction: ban) }
        // A suspended account keeps seeing and receiving what is already on its way, and acts on nothing.
        if let suspension { return AccountStanding(capabilities: effective(capabilities, under: .suspended), maySignIn: true, restriction: suspension) }
        return AccountStanding(capabilities: capabilities, maySignIn: true, restriction: nil)
    }
}

public enum CapabilityPolicy {
    public enum Decision: Sendable, Equatable {
        case allowed
        case forbidden
        /// Nobody grants themselves a capability, or removes their own staff capability.
        case notOnSelf
        /// Not something anyone grants: every verified account has it, or it comes with a profile.
        case notGranted
    }

    /// Whether `actor` (with their capabilities) may grant or remove `capability` on `target`.
    /// Managers grant the operational staff capabilities (driver, counter, manager) and vet
    /// companies (invoice); only an admin grants admin. Sender and receiver belong to every verified account; traveller comes with a
    /// completed traveller profile.
    public static func mayChange(_ capability: Capability, on target: UserID, by actor: UserID, having: Set<Capability>) -> Decision {
        guard Capability.staff.contains(capability) else { return .notGranted }
        if target == actor { return .notOnSelf }
        switch capability {
        case .driver, .counter, .manager, .invoice: return having.contains(.manager) || having.contains(.admin) ? .allowed : .forbidden
        case .admin: return having.contains(.admin) ? .allowed : .forbidden
        case .sender, .receiver, .traveller: return .notGranted
        }
    }

    /// Whether `actor` may suspend or ban `target`: the administration (admins, `Permission.moderate`),
    /// never themselves. Managers run the operation; they do not ban people.
    public static func mayRestrict(_ target: UserID, targetHas: Set<Capability>, by actor: UserID, having: Set<Capability>) -> Decision {
        if target == actor { return .notOnSelf }
        return having.contains(.admin) ? .allowed : .forbidden
    }
}

/// A restriction as staff ask for it, before it is stored.
public struct RestrictionRequest: Sendable, Equatable {
    public var kind: Restriction.Kind
    /// When a suspension ends (Unix ms); must be nil for a ban.
    public var until: Int64?
    public var reason: String

    public init(kind: Restriction.Kind, until: Int64?, reason: String) {
        self.kind = kind
        self.until = until
        self.reason = reason
    }

    public static let maxReasonLength = 500
    /// A suspension longer than this is a ban: say so.
    public static let longestSuspensionMs: Int64 = 366 * 24 * 3_600_000

    /// The request with its reason trimmed, or why not: a reason is required (the person is told
    /// it); a suspension ends in the future and within a year; a ban has no end.
    public func validated(now: Int64) -> Result<RestrictionRequest, FieldErrorsError> {
        var errors = FieldErrors()
        var clean = self
        clean.reason = reason.trimmingCharacters(in: .whitespacesAndNewlines)
        if clean.reason.isEmpty { errors.add("reason", "required") }
        else if clean.reason.count > Self.maxReasonLength { errors.add("reason", "too_long") }
        switch kind {
        case .banned:
            if until != nil { errors.add("until", "not_allowed") }
        case .suspended:
            if let until {
                let latest = now.addingReportingOverflow(Self.longestSuspensionMs)
                if until <= now { errors.add("until", "in_the_past") }
                else if !latest.overflow, until > latest.partialValue { errors.add("until", "too_far") }
            } else {
                errors.add("until", "required")
            }
        }
        return errors.isEmpty ? .success(clean) : .failure(FieldErrorsError(errors))
    }
}
