import _CryptoExtras
import Crypto
import Foundation

/// Compact JWS (RFC 7515) for the provider tokens: ES256 for APNs and VAPID, RS256 for Google's
/// service-account assertion. Signed here rather than through JWTKit's key collection because each
/// token needs an exact header (APNs wants `kid` and no `typ`) and is made synchronously inside
/// a lock-held cache, where JWTKit's actor cannot be awaited.
enum JWS {
    struct SigningError: Error {}

    static func es256(header: [String: String], claims: [String: Any], key: P256.Signing.PrivateKey) throws -> String {
        try sign(header: header.merging(["alg": "ES256"]) { _, new in new }, claims: claims) { input in
            // JWS wants the raw 64-byte r || s, not DER.
            try key.signature(for: input).rawRepresentation
        }
    }

    static func rs256(header: [String: String], claims: [String: Any], key: _RSA.Signing.PrivateKey) throws -> String {
        try sign(header: header.merging(["alg": "RS256"]) { _, new in new }, claims: claims) { input in
            try key.signature(for: input, padding: .insecurePKCS1v1_5).rawRepresentation
        }
    }

    private static func sign(header: [String: String], claims: [String: Any], signature: (Data) throws -> Data) throws -> String {
        guard JSONSerialization.isValidJSONObject(claims) else { throw SigningError() }
        let options: JSONSerialization.WritingOptions = [.sortedKeys, .withoutEscapingSlashes]
        let encodedHeader = try JSONSerialization.data(withJSONObject: header, options: options).base64URLEncodedString()
        let encodedClaims = try JSONSerialization.data(withJSONObject: claims, options: options).base64URLEncodedString()
        let input = encodedHeader + "." + encodedClaims
        return input + "." + (try signature(Data(input.utf8))).base64URLEncodedString()
    }
}
