import _CryptoExtras
import Crypto
import Foundation

/// Credentials for the push services, from the environment. A service whose variables are all
/// missing is off (its pushes go to the log); a service with some variables set but not all, or with
/// a value that does not parse, is a startup error, so a typo never silently disables pushes.
///
/// | variable | meaning |
/// |---|---|
/// | `APNS_KEY_ID` | the 10-character id of the APNs auth key (.p8) |
/// | `APNS_TEAM_ID` | the 10-character Apple developer team id |
/// | `APNS_PRIVATE_KEY` / `APNS_PRIVATE_KEY_PATH` | the .p8 file's PEM contents (`\n` escapes allowed), or its path |
/// | `APNS_TOPIC` | the app's bundle id |
/// | `APNS_ENVIRONMENT` | `production` (default) or `sandbox` (also spelt `development`) |
/// | `APNS_BASE_URL` | overrides the APNs address (tests) |
/// | `FCM_SERVICE_ACCOUNT` / `FCM_SERVICE_ACCOUNT_PATH` | the Firebase service-account JSON, or its path |
/// | `FCM_BASE_URL` | overrides `https://fcm.googleapis.com` (tests) |
/// | `VAPID_PUBLIC_KEY` | base64url uncompressed P-256 point (65 bytes) |
/// | `VAPID_PRIVATE_KEY` | base64url raw P-256 scalar (32 bytes); must match the public key |
/// | `VAPID_SUBJECT` | `mailto:` address or `https:` URL push services can contact |
struct PushSettings: Sendable, Equatable {
    var apns: APNsSettings?
    var fcm: FCMSettings?
    var vapid: VAPIDSettings?

    static func fromEnvironment(
        _ env: [String: String] = ProcessInfo.processInfo.environment,
        readFile: (String) -> Data? = { FileManager.default.contents(atPath: $0) }
    ) throws -> PushSettings {
        let env = env.compactMapValues { value -> String? in
            let trimmed = value.trimmingCharacters(in: .whitespacesAndNewlines)
            return trimmed.isEmpty ? nil : trimmed
        }
        return PushSettings(
            apns: try APNsSettings.fromEnvironment(env, readFile: readFile),
            fcm: try FCMSettings.fromEnvironment(env, readFile: readFile),
            vapid: try VAPIDSettings.fromEnvironment(env))
    }

    /// The inline value of `name`, or the contents of the file `name_PATH` names; both set is an error.
    fileprivate static func inlineOrFile(_ name: String, _ env: [String: String], readFile: (String) -> Data?) throws -> String? {
        let pathName = name + "_PATH"
        switch (env[name], env[pathName]) {
        case (nil, nil): return nil
        case (.some, .some): throw ConfigurationError("Set \(name) or \(pathName), not both.")
        case (let value?, nil): return value
        case (nil, let path?):
            guard let data = readFile(path), let text = String(data: data, encoding: .utf8) else {
                throw ConfigurationError("\(pathName): could not read \(path).")
            }
            return text
        }
    }

    /// `https://host[:port][/path]` without a trailing slash, or an error naming the variable.
    fileprivate static func baseURL(_ raw: String, variable: String) throws -> String {
        let trimmed = raw.hasSuffix("/") ? String(raw.dropLast()) : raw
        guard let url = URL(string: trimmed), url.scheme == "https" || url.scheme == "http", url.host != nil else {
            throw ConfigurationError("\(variable) must be an absolute https URL.")
        }
        return trimmed
    }
}

/// Token-based (.p8) APNs credentials.
struct APNsSettings: Sendable, Equatable {
    static let production = "https://api.push.apple.com"
    static let sandbox = "https://api.sandbox.push.apple.com"

    var keyID: String
    var teamID: String
    var privateKey: P256.Signing.PrivateKey
    /// The app's bundle id, sent as `apns-topic`.
    var topic: String
    var baseURL: String = production

    static func == (a: Self, b: Self) -> Bool {
        a.keyID == b.keyID && a.teamID == b.teamID && a.topic == b.topic && a.baseURL == b.baseURL
            && a.privateKey.rawRepresentation == b.privateKey.rawRepresentation
    }

    fileprivate static func fromEnvironment(_ env: [String: String], readFile: (String) -> Data?) throws -> APNsSettings? {
        let names = ["APNS_KEY_ID", "APNS_TEAM_ID", "APNS_PRIVATE_KEY", "APNS_PRIVATE_KEY_PATH", "APNS_TOPIC", "APNS_ENVIRONMENT", "APNS_BASE_URL"]
        guard names.contains(where: { env[$0] != nil }) else { return nil }
        let pem = try PushSettings.inlineOrFile("APNS_PRIVATE_KEY", env, readFile: readFile)
        let missing = ["APNS_KEY_ID", "APNS_TEAM_ID", "APNS_TOPIC"].filter { env[$0] == nil } + (pem == nil ? ["APNS_PRIVATE_KEY"] : [])
        guard missing.isEmpty, let keyID = env["APNS_KEY_ID"], let teamID = env["APNS_TEAM_ID"], let topic = env["APNS_TOPIC"], let pem else {
            throw ConfigurationError("APNs is partly configured: \(missing.joined(separator: ", ")) missing.")
        }
        // Apple shows both ids as 10 letters and digits; anything else is a copy-and-paste slip.
        func isAppleID(_ s: String) -> Bool { s.count == 10 && s.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) } }
        guard isAppleID(keyID) else { throw ConfigurationError("APNS_KEY_ID must be the key's 10-character id.") }
        guard isAppleID(teamID) else { throw ConfigurationError("APNS_TEAM_ID must be the 10-character team id.") }
        guard topic.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "-" || $0 == "_") }) else {
            throw ConfigurationError("APNS_TOPIC must be the app's bundle id, such as com.example.waybill.")
        }
        let key: P256.Signing.PrivateKey
        do {
            // Environment files often carry the PEM on one line with literal \n.
            key = try P256.Signing.PrivateKey(pemRepresentation: pem.replacingOccurrences(of: "\\n", with: "\n"))
        } catch {
            throw ConfigurationError("APNS_PRIVATE_KEY must be the contents of the .p8 key file (a P-256 private key in PEM).")
        }
        let base: String
        switch (env["APNS_BASE_URL"], env["APNS_ENVIRONMENT"]?.lowercased()) {
        case (let url?, _): base = try PushSettings.baseURL(url, variable: "APNS_BASE_URL")
        case (nil, nil), (nil, "production"): base = production
        case (nil, "sandbox"), (nil, "development"): base = sandbox
        default: throw ConfigurationError("APNS_ENVIRONMENT must be production or sandbox.")
        }
        return APNsSettings(keyID: keyID, teamID: teamID, privateKey: key, topic: topic, baseURL: base)
    }
}

/// A Firebase service account, as downloaded from the Firebase console.
struct FCMSettings: Sendable, Equatable {
    static let defaultBaseURL = "https://fcm.googleapis.com"
    static let defaultTokenURI = "https://oauth2.googleapis.com/token"

    var projectID: String
    var clientEmail: String
    var privateKey: _RSA.Signing.PrivateKey
    /// Where the signed assertion is exchanged for an access token.
    var tokenURI: String = defaultTokenURI
    var baseURL: String = defaultBaseURL

    static func == (a: Self, b: Self) -> Bool {
        a.projectID == b.projectID && a.clientEmail == b.clientEmail && a.tokenURI == b.tokenURI && a.baseURL == b.baseURL
            && a.privateKey.derRepresentation == b.privateKey.derRepresentation
    }

    fileprivate static func fromEnvironment(_ env: [String: String], readFile: (String) -> Data?) throws -> FCMSettings? {
        guard let json = try PushSettings.inlineOrFile("FCM_SERVICE_ACCOUNT", env, readFile: readFile) else {
            if env["FCM_BASE_URL"] != nil { throw ConfigurationError("FCM_BASE_URL is set but FCM_SERVICE_ACCOUNT is not.") }
            return nil
        }
        var settings = try serviceAccount(json)
        if let base = env["FCM_BASE_URL"] { settings.baseURL = try PushSettings.baseURL(base, variable: "FCM_BASE_URL") }
        return settings
    }

    /// Reads the fields Waybill needs from a service-account JSON file.
    static func serviceAccount(_ json: String) throws -> FCMSettings {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(json.utf8))) as? [String: Any] else {
            throw ConfigurationError("FCM_SERVICE_ACCOUNT must be the service-account JSON (or FCM_SERVICE_ACCOUNT_PATH its file).")
        }
        func field(_ name: String) throws -> String {
            guard let value = object[name] as? String, !value.isEmpty else {
                throw ConfigurationError("FCM_SERVICE_ACCOUNT has no \(name).")
            }
            return value
        }
        let projectID = try field("project_id")
        // It goes into the request path: letters, digits, hyphens (and the dot and colon of old domain-scoped ids).
        guard projectID.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-.:".contains($0)) }) else {
            throw ConfigurationError("FCM_SERVICE_ACCOUNT's project_id is not a project id.")
        }
        let clientEmail = try field("client_email")
        let key: _RSA.Signing.PrivateKey
        do {
            key = try _RSA.Signing.PrivateKey(pemRepresentation: try field("private_key"))
        } catch let error as ConfigurationError {
            throw error
        } catch {
            throw ConfigurationError("FCM_SERVICE_ACCOUNT's private_key is not an RSA private key in PEM.")
        }
        let tokenURI = try (object["token_uri"] as? String).map { try PushSettings.baseURL($0, variable: "FCM_SERVICE_ACCOUNT's token_uri") }
        return FCMSettings(projectID: projectID, clientEmail: clientEmail, privateKey: key, tokenURI: tokenURI ?? defaultTokenURI)
    }
}

/// The application server's VAPID key pair (RFC 8292) and contact.
struct VAPIDSettings: Sendable, Equatable {
    var privateKey: P256.Signing.PrivateKey
    /// `mailto:` or `https:`, for push services to reach the operator.
    var subject: String

    /// What browsers pass to `pushManager.subscribe` as `applicationServerKey`.
    var publicKeyBase64URL: String { privateKey.publicKey.x963Representation.base64URLEncodedString() }

    static func == (a: Self, b: Self) -> Bool {
        a.subject == b.subject && a.privateKey.rawRepresentation == b.privateKey.rawRepresentation
    }

    fileprivate static func fromEnvironment(_ env: [String: String]) throws -> VAPIDSettings? {
        let names = ["VAPID_PUBLIC_KEY", "VAPID_PRIVATE_KEY", "VAPID_SUBJECT"]
        guard names.contains(where: { env[$0] != nil }) else { return nil }
        guard let publicRaw = env["VAPID_PUBLIC_KEY"], let privateRaw = env["VAPID_PRIVATE_KEY"], let subject = env["VAPID_SUBJECT"] else {
            throw ConfigurationError("Web Push is partly configured: \(names.filter { env[$0] == nil }.joined(separator: ", ")) missing.")
        }
        guard let scalar = Data(base64URLEncoded: privateRaw), scalar.count == 32,
              let key = try? P256.Signing.PrivateKey(rawRepresentation: scalar) else {
            throw ConfigurationError("VAPID_PRIVATE_KEY must be a base64url P-256 private key (32 bytes).")
        }
        guard let point = Data(base64URLEncoded: publicRaw), point.count == 65,
              (try? P256.Signing.PublicKey(x963Representation: point)) != nil else {
            throw ConfigurationError("VAPID_PUBLIC_KEY must be a base64url uncompressed P-256 public key (65 bytes).")
        }
        // Browsers subscribed with the public key; signing with another key would make every push fail.
        guard key.publicKey.x963Representation == point else {
            throw ConfigurationError("VAPID_PUBLIC_KEY is not the public key of VAPID_PRIVATE_KEY.")
        }
        guard isSubject(subject) else {
            throw ConfigurationError("VAPID_SUBJECT must be a mailto: address or an https: URL, such as mailto:ops@example.com.")
        }
        return VAPIDSettings(privateKey: key, subject: subject)
    }

    static func isSubject(_ subject: String) -> Bool {
        if subject.hasPrefix("mailto:") { return subject.dropFirst(7).contains("@") && !subject.contains(where: \.isWhitespace) }
        guard let url = URL(string: subject) else { return false }
        return url.scheme == "https" && url.host?.isEmpty == false
    }
}
