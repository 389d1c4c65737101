import Fluent
import SQLKit
import Vapor
import Crypto
import WaybillCore

/// Mailed 6-digit codes: from the system's CSPRNG, stored as an HMAC under a server key (so a
/// database dump does not reveal them), single use, valid 10 minutes, dead after five wrong tries.
struct OneTimeCodes: Sendable {
    let key: SymmetricKey

    init(secret: [UInt8]) {
        // A key of its own, derived from the server secret, so codes and tokens never share one.
        key = HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: secret),
                                     info: Data("waybill one-time codes".utf8), outputByteCount: 32)
    }

    func hash(_ code: String, userID: UserID, purpose: OneTimeCode.Purpose) -> String {
        let message = Data("\(userID.uuidString)|\(purpose.rawValue)|\(code)".utf8)
        return Data(HMAC<SHA256>.authenticationCode(for: message, using: key)).base64EncodedString()
    }

    static func randomCode() -> String {
        var generator = Randomness.generator
        return String(format: "%06d", Int.random(in: 0..<1_000_000, using: &generator))
    }

    /// Whether another code of this purpose may be mailed to this account now, as seconds to wait
    /// (nil = yes). Limits what anyone can make Waybill send to one mailbox.
    static func sendBlocked(userID: UserID, purpose: OneTimeCode.Purpose, on db: any Database) async throws -> Int64? {
        let hourAgo = UnixTime.now.addingTimeInterval(-3600)
        let recent = try await OneTimeCode.query(on: db)
            .filter(\.$user.$id == userID).filter(\.$purpose == purpose).filter(\.$createdAt > hourAgo)
            .sort(\.$createdAt, .descending).all()
        if recent.count >= OneTimeCodePolicy.maxSendsPerHour, let oldest = recent.last?.createdAt {
            return max(1, Int64(oldest.addingTimeInterval(3600).timeIntervalSinceNow))
        }
        if let last = recent.first?.createdAt {
            let wait = Int64(last.timeIntervalSinceNow) + OneTimeCodePolicy.minSecondsBetweenSends
            if wait > 0 { return wait }
        }
        return nil
    }

    /// Makes a new code for the account (retiring earlier ones of the same purpose) and returns it.
    /// Call inside the transaction that also queues the mail carrying it.
    func issue(userID: UserID, purpose: OneTimeCode.Purpose, on db: any Database) async throws -> String {
        try await OneTimeCode.query(on: db)
            .filter(\.$user.$id == userID).filter(\.$purpose == purpose).filter(\.$consumedAt == nil)
            .set(\.$consumedAt, to: UnixTime.now)
            .update()
        let code = Self.randomCode()
        try await OneTimeCode(userID: userID, purpose: purpose, codeHash: hash(code, userID: userID, purpose: purpose),
                              expiresAt: UnixTime.now.addingTimeInterval(TimeInterval(OneTimeCodePolicy.lifetime)))
            .create(on: db)
        return code
    }

    /// Checks a code. Each check counts as a try, recorded before comparing so parallel guesses
    /// cannot exceed the limit; the count is committed even though the caller then fails.
    /// Returns the code's row so the caller can consume it in its own transaction.
    func check(_ code: String, userID: UserID?, purpose: OneTimeCode.Purpose, on db: any Database) async throws -> OneTimeCode {
        guard let userID else { throw WaybillError.invalidCode }
        guard let row = try await OneTimeCode.query(on: db)
            .filter(\.$user.$id == userID).filter(\.$purpose == purpose).filter(\.$consumedAt == nil)
            .sort(\.$createdAt, .descending).first(),
            let id = row.id
        else { throw WaybillError.invalidCode }
        guard row.expiresAt > UnixTime.now else { throw WaybillError.invalidCode }
        guard let sql = db.tracedSQL else { throw Abort(.internalServerError) }
        let counted = try await sql.update(OneTimeCode.schema)
            .set("attempts", to: SQLRaw("attempts + 1"))
            .where("id", .equal, SQLBind(id))
            .where("attempts", .lessThan, SQLBind(OneTimeCodePolicy.maxAttempts))
            .returning("attempts")
            .all()
        // A dead code answers exactly as a wrong one, and as any code for an unknown account:
        // "locked" would tell a stranger that the account exists.
        guard !counted.isEmpty else { throw WaybillError.invalidCode }
        let expected = Data(row.codeHash.utf8)
        let given = Data(hash(code.trimmingCharacters(in: .whitespaces), userID: userID, purpose: purpose).utf8)
        guard expected.count == given.count, constantTimeEquals(expected, given) else {
            throw WaybillError.invalidCode
        }
        return row
    }

    /// Marks the code used; fails if someone else used it first. Call in the transaction that
    /// makes the change the code allows.
    static func consume(_ row: OneTimeCode, on db: any Database) async throws {
        guard let sql = db.tracedSQL, let id = row.id else { throw Abort(.internalServerError) }
        let done = try await sql.update(OneTimeCode.schema)
            .set("consumed_at", to: SQLBind(UnixTime.now))
            .where("id", .equal, SQLBind(id))
            .where("consumed_at", .is, SQLLiteral.null)
            .returning("id")
            .all()
        guard !done.isEmpty else { throw WaybillError.invalidCode }
    }
}

func constantTimeEquals(_ a: Data, _ b: Data) -> Bool {
    guard a.count == b.count else { return false }
    var difference: UInt8 = 0
    for (x, y) in zip(a, b) { difference |= x ^ y }
    return difference == 0
}
