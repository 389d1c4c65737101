import Foundation
import SQLKit
import WaybillCore

/// What naming a person needs, whichever way the account was read: the Fluent model `User` (for
/// sign-in and writes) or the plain `PersonRow` (the people of an order and of a list).
protocol PersonNaming {
    /// Throws for a `User` never saved (`storedID`); a `PersonRow` always has it.
    var personID: UserID { get throws }
    var role: Role { get }
    var email: String { get }
    var firstName: String { get }
    var lastName: String { get }
    var companyName: String? { get }
}

extension PersonNaming {
    var displayName: String { "\(firstName) \(lastName)" }
}

extension User: PersonNaming {
    var personID: UserID { get throws { try storedID } }
}

/// A person as an order's answer and pages name them, read straight from the row (`PlainRows`): a
/// page of orders names up to a hundred people, and filling Fluent's `User` model for each (twenty
/// property wrappers, read through generic code) was 4 % of the list (docs/performance.md).
struct PersonRow: PersonNaming, Sendable, Equatable {
    var personID: UserID
    var role: Role
    var email: String
    var firstName: String
    var lastName: String
    var companyName: String?

    /// The columns `init(reading:)` reads, in its order.
    static let selection = SQLRaw(#""id", "role", "email", "first_name", "last_name", "company_name""#)

    init(reading r: inout ColumnCursor) throws {
        personID = try r.id()
        role = try r.text()
        email = try r.string()
        firstName = try r.string()
        lastName = try r.string()
        companyName = try r.optional { try $0.string() }
    }

    init(_ user: User) throws {
        personID = try user.storedID
        role = user.role
        email = user.email
        firstName = user.firstName
        lastName = user.lastName
        companyName = user.companyName
    }

    /// The people with these ids, by id (one statement).
    static func read(_ ids: some Collection<UserID>, on sql: any SQLDatabase) async throws -> [UserID: PersonRow] {
        guard !ids.isEmpty else { return [:] }
        let select = sql.select().column(selection).from(User.schema).where("id", .in, SQLBind.group(Array(ids)))
        var people: [UserID: PersonRow] = [:]
        var rows = try await PlainRows.read(select, sql: sql)
        for index in rows.indices {
            let person = try PersonRow(reading: &rows[index])
            people[person.personID] = person
        }
        return people
    }
}
