import Fluent
import Foundation
import Vapor
import WaybillCore

/// `waybill user create …`: accounts from the command line, such as a fresh installation's first manager.
struct UserCommands: AsyncCommandGroup {
    var help: String { "Manage accounts from the command line." }
    var commands: [String: any AnyAsyncCommand] { ["create": UserCreateCommand()] }
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
        try await user.create(on: app.db)
        context.console.info("Created \(role.rawValue) \(email) (\(user.id!.uuidString)).")
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
