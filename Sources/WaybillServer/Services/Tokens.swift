import Foundation
import JWTKit
import Crypto
import Vapor
import WaybillCore

/// Claims of an access token: signature, type, audience and expiry are checked the first time a
/// token's text is seen (`TokenService.verified` keeps it a minute), expiry on every request.
struct AccessClaims: JWTPayload {
    static let audience = "waybill-api"
    static let type = "access"

    var sub: SubjectClaim
    var aud: AudienceClaim
    var exp: ExpirationClaim
    var iat: IssuedAtClaim
    var typ: String
    /// The session (refresh-token family) the token was issued in; revoking it revokes the token.
    var sid: String
    var role: String

    func verify(using algorithm: some JWTAlgorithm) async throws {
        try exp.verifyNotExpired()
        try aud.verifyIntendedAudience(includes: Self.audience)
        guard typ == Self.type else { throw JWTError.claimVerificationFailure(failedClaim: nil, reason: "not an access token") }
    }
}

/// Issues and checks access tokens (JWT, HS256) and refresh tokens (random, stored hashed).
struct TokenService: Sendable {
    static let accessLifetime: TimeInterval = 15 * 60
    static let refreshLifetime: TimeInterval = 60 * 24 * 3600

    let keys: JWTKeyCollection
    /// Tokens whose signature, audience and type were checked, by their exact text, for a minute:
    /// the same text verifies the same way, and checking it (HMAC and two JSON decodings) was 3.6 %
    /// of a price quote's time (docs/performance.md). Expiry is checked again on every use.
    let verified = FreshCache<String, AccessClaims>(freshness: .seconds(60), capacity: 20_000)

    static func make(secret: [UInt8]) async -> TokenService {
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(key: SymmetricKey(data: secret)), digestAlgorithm: .sha256)
        return TokenService(keys: keys)
    }

    func accessToken(userID: UserID, role: Role, sessionID: SignInID, now: Date = Date()) async throws -> String {
        let claims = AccessClaims(
            sub: .init(value: userID.uuidString),
            aud: .init(value: [AccessClaims.audience]),
            exp: .init(value: now.addingTimeInterval(Self.accessLifetime)),
            iat: .init(value: now),
            typ: AccessClaims.type,
            sid: sessionID.uuidString,
            role: role.rawValue
        )
        return try await keys.sign(claims)
    }

    func verifyAccessToken(_ token: String) async throws -> AccessClaims {
        do {
            if let claims = verified.value(token) {
                try claims.exp.verifyNotExpired()
                return claims
            }
            let claims = try await keys.verify(token, as: AccessClaims.self)
            verified.keep(claims, for: token, readAt: verified.generation)
            return claims
        } catch let error as JWTError where error.errorType == .claimVerificationFailure && error.failedClaim is ExpirationClaim {
            throw WaybillError.tokenExpired
        } catch {
            throw WaybillError.invalidToken
        }
    }

    /// 256 random bits, base64url.
    static func newRefreshToken() -> String {
        SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) }.base64URLEncodedString()
    }

    static func hash(_ token: String) -> String {
        SHA256.hash(data: Data(token.utf8)).hexString
    }
}

/// `bytes` random bytes from the system CSPRNG, as lowercase hex (names, ids).
func randomHex(bytes: Int) -> String {
    Randomness.bytes(bytes).hexString
}

extension Sequence where Element == UInt8 {
    /// Lower-case hex, two digits a byte.
    var hexString: String {
        var text: [UInt8] = []
        text.reserveCapacity(underestimatedCount * 2)
        for byte in self {
            text.append(Base64URL.hexDigits[Int(byte >> 4)])
            text.append(Base64URL.hexDigits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}

/// Base64 with the URL- and file-safe alphabet and no padding (RFC 4648 §5), written directly:
/// Foundation's encoder and three `replacingOccurrences` were 2 % of placing an order, which makes
/// two such tokens (docs/performance.md).
enum Base64URL {
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    static let hexDigits = Array("0123456789abcdef".utf8)

    static func encode<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> String {
        var text: [UInt8] = []
        text.reserveCapacity((bytes.underestimatedCount * 4 + 2) / 3)
        var iterator = bytes.makeIterator()
        while let a = iterator.next() {
            let b = iterator.next()
            let c = b == nil ? nil : iterator.next()
            text.append(alphabet[Int(a >> 2)])
            text.append(alphabet[Int((a & 0x03) << 4 | (b ?? 0) >> 4)])
            guard let b else { break }
            text.append(alphabet[Int((b & 0x0F) << 2 | (c ?? 0) >> 6)])
            guard let c else { break }
            text.append(alphabet[Int(c & 0x3F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}

extension Data {
    func base64URLEncodedString() -> String { Base64URL.encode(self) }

    init?(base64URLEncoded string: String) {
        var s = string.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while s.count % 4 != 0 { s += "=" }
        self.init(base64Encoded: s)
    }
}

/// bcrypt, always on the thread pool so the event loops keep serving other requests.
struct PasswordHasher: Sendable {
    let cost: Int
    let threadPool: NIOThreadPool
    /// A real hash to compare against when the account does not exist, so a wrong email takes as
    /// long as a wrong password.
    let decoy: String

    static func make(cost: Int, threadPool: NIOThreadPool) async throws -> PasswordHasher {
        let decoy = try await threadPool.runIfActive { try Bcrypt.hash(UUID().uuidString, cost: cost) }
        return PasswordHasher(cost: cost, threadPool: threadPool, decoy: decoy)
    }

    func hash(_ password: String) async throws -> String {
        let cost = self.cost
        return try await threadPool.runIfActive { try Bcrypt.hash(password, cost: cost) }
    }

    func verify(_ password: String, against hash: String?) async throws -> Bool {
        let target = hash ?? decoy
        let ok = try await threadPool.runIfActive { (try? Bcrypt.verify(password, created: target)) ?? false }
        return ok && hash != nil
    }
}
