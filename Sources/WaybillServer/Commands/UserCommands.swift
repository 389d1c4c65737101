import Fluent
import Foundation
import Vapor
import WaybillCore

/// `waybill user create …`: accounts from the command line, such as a fresh installation's first
/// manager; `waybill user grant …` and `revoke`: staff capabilities, such as the first admin (whom
/// no one in the app may appoint but another admin).
struct UserCommands: AsyncCommandGroup {
    var help: String { "Manage accounts from the command line." }
    var commands: [String: any AnyAsyncCommand] {
        ["create": UserCreateCommand(), "grant": UserCapabilityCommand(grant: true), "revoke": UserCapabilityCommand(grant: false)]
    }
}

/// `waybill user grant --email E --capability admin` (or `revoke`): by the operator, at the machine.
struct UserCapabilityCommand: AsyncCommand {
    struct Signature: CommandSignature {
        @Option(name: "email", help: "The account's email address")
        var email: String?
        @Option(name: "capability", help: "driver, manager, counter or admin")
        var capability: String?
        init() {}
    }

    let grant: Bool

    var help: String {
        grant ? "Grants a staff capability: waybill user grant --email E --capability admin"
            : "Takes a staff capability back: waybill user revoke --email E --capability driver"
    }

    func run(using context: CommandContext, signature: Signature) async throws {
        let app = context.application
        guard let capability = signature.capability.flatMap(Capability.init(rawValue:)), Capability.staff.contains(capability) else {
            throw CommandError("--capability must be one of " + Capability.staff.map(\.rawValue).sorted().joined(separator: ", "))
        }
        var errors = FieldErrors()
        let email = Validation.email(signature.email, into: &errors)
        guard errors.isEmpty else { throw CommandError("Invalid input: \(errors)") }
        try await migrate(app)
        guard let user = try await User.query(on: app.db).filter(\.$email == email).first() else {
            throw CommandError("No account uses \(email).")
        }
        try await app.db.writeTransaction(app) { db in
            var staff = Capability.parseList(user.staffCapabilities)
            if grant { staff.insert(capability) } else { staff.remove(capability) }
            try await Accounts.setStaffCapabilities(user, to: staff, by: nil, on: db)
        }
        let now = Capability.parseList(user.staffCapabilities).map(\.rawValue).sorted()
        context.console.info("\(email) now holds: \((["sender", "receiver"] + now).joined(separator: ", ")).")
    }
}

struct UserCreateCommand: AsyncCommand {
    struct Signature: CommandSignature {
        @Option(name: "role", help: "customer, driver or manager")
        var role: String?
        @Option(name: "email", help: "The account's email address")
        var email: String?
        @Option(name: "first-name", help: "First name")
        var firstName: String?
        @Option(name: "last-name", help: "Last name")
        var lastName: String?
        @Option(name: "password", help: "Password (8 to 72 bytes). Omit to read it from WAYBILL_PASSWORD.")
        var password: String?
        init() {}
    }

    var help: String {
        "Creates a verified account: waybill user create --role manager --email E --first-name F --last-name L --password P"
    }

    func run(using context: CommandContext, signature: Signature) async throws {
        let app = context.application
        guard let role = signature.role.flatMap(Role.init(rawValue:)) else {
            throw CommandError("--role must be customer, driver or manager")
        }
        let password = signature.password ?? ProcessInfo.processInfo.environment["WAYBILL_PASSWORD"] ?? ""
        var errors = FieldErrors()
        let first = Validation.text(signature.firstName, field: "first-name", maxLength: Validation.maxNameLength, into: &errors)
        let last = Validation.text(signature.lastName, field: "last-name", maxLength: Validation.maxNameLength, into: &errors)
        let email = Validation.email(signature.email, into: &errors)
        PasswordPolicy.validate(password, field: "password", email: email, into: &errors)
        guard errors.isEmpty else { throw CommandError("Invalid input: \(errors)") }

        try await migrate(app)
        if try await User.query(on: app.db).filter(\.$email == email).first() != nil {
            throw CommandError("An account already uses \(email).")
        }
        let hash = try await app.waybill.passwords.hash(password)
        let user = User(role: role, email: email, passwordHash: hash, firstName: first, lastName: last, emailVerifiedAt: Date())
        try await app.db.transaction { db in
            try await user.create(on: db)
            try await Accounts.recordGrants(of: user, by: nil, on: db)
        }
        context.console.info("Created \(role.rawValue) \(email) (\(try user.storedID.uuidString)).")
    }
}

struct CommandError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

extension Application {
    /// Waybill's own commands, beside Vapor's `serve` and Fluent's `migrate`.
    public func registerWaybillCommands() {
        asyncCommands.use(UserCommands(), as: "user")
        asyncCommands.use(MigrateCommand(), as: "migrate")
        asyncCommands.use(AreaCommands(), as: "areas")
        asyncCommands.use(InboundMailCommand(), as: "inbound-mail")
        asyncCommands.use(BackupCommand(), as: "backup")
    }
}

/// `waybill migrate`: brings the schema up to date, safely when several processes start at once
/// on one PostgreSQL (they take turns on an advisory lock).
struct MigrateCommand: AsyncCommand {
    struct Signature: CommandSignature {
        @Flag(name: "yes", short: "y", help: "Accepted for compatibility; migrations run without asking.")
        var yes: Bool
        init() {}
    }

    var help: String { "Apply pending database migrations." }

    func run(using context: CommandContext, signature: Signature) async throws {
        try await migrate(context.application)
        context.console.print("Migration successful")
    }
}
