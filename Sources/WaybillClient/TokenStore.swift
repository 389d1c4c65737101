import Foundation
import WaybillCore

/// The tokens of a signed-in session, as a ``TokenStore`` keeps them.
public struct SessionTokens: Sendable, Equatable, Codable {
    /// The short-lived JWT sent as `Authorization: Bearer …`.
    public var accessToken: String
    /// Single use: each refresh retires it and hands out a new one.
    public var refreshToken: String
    /// When the access token stops working (as the server said at sign-in or refresh).
    public var expiresAt: Date
    /// Who is signed in, so an app can pick its screens before asking the server.
    public var userId: UserID?
    public var role: Role?

    public init(accessToken: String, refreshToken: String, expiresAt: Date, userId: UserID? = nil, role: Role? = nil) {
        self.accessToken = accessToken
        self.refreshToken = refreshToken
        self.expiresAt = expiresAt
        self.userId = userId
        self.role = role
    }
}

/// Where a ``WaybillSession`` keeps its tokens between requests and between launches.
///
/// The session reads the store once, when it first needs a token, and writes every new pair
/// after a sign-in or a refresh. It clears the store when the session ends. Apps supply one:
/// ``InMemoryTokenStore`` (forgets on quit), `KeychainTokenStore` on Apple platforms, or
/// ``FileTokenStore`` for command-line tools.
public protocol TokenStore: Sendable {
    func load() async throws -> SessionTokens?
    func save(_ tokens: SessionTokens) async throws
    func clear() async throws
}

/// Keeps the tokens in memory only: the person signs in again on every launch.
public actor InMemoryTokenStore: TokenStore {
    private var tokens: SessionTokens?

    public init(_ tokens: SessionTokens? = nil) { self.tokens = tokens }

    public func load() -> SessionTokens? { tokens }
    public func save(_ tokens: SessionTokens) { self.tokens = tokens }
    public func clear() { tokens = nil }
}

/// Keeps the tokens in a JSON file readable by its owner only (mode 0600), for command-line tools
/// and desktop programs without a keychain.
public actor FileTokenStore: TokenStore {
    public let url: URL

    public init(url: URL) { self.url = url }

    public func load() throws -> SessionTokens? {
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try decoder.decode(SessionTokens.self, from: Data(contentsOf: url))
    }

    public func save(_ tokens: SessionTokens) throws {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let data = try encoder.encode(tokens)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        // Create with 0600 before writing, so the tokens are never readable by others.
        if !FileManager.default.fileExists(atPath: url.path) {
            _ = FileManager.default.createFile(atPath: url.path, contents: nil, attributes: [.posixPermissions: 0o600])
        }
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: url.path)
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        try handle.truncate(atOffset: 0)
        try handle.write(contentsOf: data)
    }

    public func clear() throws {
        if FileManager.default.fileExists(atPath: url.path) { try FileManager.default.removeItem(at: url) }
    }
}

#if canImport(Security)
import Security

/// Keeps the tokens in the Keychain (a generic password item), available after the first unlock
/// and never synced to other devices.
public actor KeychainTokenStore: TokenStore {
    public let service: String
    public let account: String

    public init(service: String = "waybill", account: String = "session") {
        self.service = service
        self.account = account
    }

    private var query: [String: Any] {
        [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service, kSecAttrAccount as String: account]
    }

    public func load() throws -> SessionTokens? {
        var query = self.query
        query[kSecReturnData as String] = true
        query[kSecMatchLimit as String] = kSecMatchLimitOne
        var item: CFTypeRef?
        let status = SecItemCopyMatching(query as CFDictionary, &item)
        if status == errSecItemNotFound { return nil }
        guard status == errSecSuccess, let data = item as? Data else { throw KeychainError(status: status) }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try decoder.decode(SessionTokens.self, from: data)
    }

    public func save(_ tokens: SessionTokens) throws {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        let data = try encoder.encode(tokens)
        let attributes: [String: Any] = [kSecValueData as String: data,
                                         kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly]
        var status = SecItemUpdate(query as CFDictionary, attributes as CFDictionary)
        if status == errSecItemNotFound {
            var add = query
            add.merge(attributes) { $1 }
            status = SecItemAdd(add as CFDictionary, nil)
        }
        guard status == errSecSuccess else { throw KeychainError(status: status) }
    }

    public func clear() throws {
        let status = SecItemDelete(query as CFDictionary)
        guard status == errSecSuccess || status == errSecItemNotFound else { throw KeychainError(status: status) }
    }

    public struct KeychainError: Error, Sendable { public var status: OSStatus }
}
#endif
