import Foundation
import NIOSSL

/// Where and how to deliver mail, from `SMTP_URL`.
public struct SMTPSettings: Sendable {
    public enum Security: String, Sendable {
        /// Plain SMTP (a local relay). Credentials are refused over it.
        case none
        /// Plain connection upgraded with STARTTLS before anything else is said.
        case startTLS
        /// TLS from the first byte (usually port 465).
        case implicitTLS
    }

    public var host: String
    public var port: Int
    public var security: Security
    public var username: String?
    public var password: String?
    /// TLS settings; tests may add a trust root. Verification is always on.
    public var tls: TLSConfiguration
    public var heloName: String

    public init(host: String, port: Int, security: Security, username: String? = nil, password: String? = nil,
                tls: TLSConfiguration = .makeClientConfiguration(), heloName: String = "localhost") {
        self.host = host
        self.port = port
        self.security = security
        self.username = username
        self.password = password
        self.tls = tls
        self.heloName = heloName
    }

    public init(url raw: String) throws {
        guard let components = URLComponents(string: raw), let scheme = components.scheme?.lowercased(),
              let host = components.host, !host.isEmpty else {
            throw ConfigurationError("SMTP_URL must look like smtp://host:port, smtp+starttls://user:pass@host:port or smtps://user:pass@host:port.")
        }
        let security: Security
        let defaultPort: Int
        switch scheme {
        case "smtp": security = .none; defaultPort = 25
        case "smtp+starttls": security = .startTLS; defaultPort = 587
        case "smtps": security = .implicitTLS; defaultPort = 465
        default: throw ConfigurationError("SMTP_URL scheme must be smtp, smtp+starttls or smtps.")
        }
        let username = components.percentEncodedUser.flatMap { $0.removingPercentEncoding }
        let password = components.percentEncodedPassword.flatMap { $0.removingPercentEncoding }
        if security == .none, username != nil {
            throw ConfigurationError("SMTP_URL sends a password over an unencrypted connection; use smtp+starttls:// or smtps://.")
        }
        self.init(host: host, port: components.port ?? defaultPort, security: security,
                  username: username, password: password)
    }
}
