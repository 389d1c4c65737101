import Foundation

/// What a machine holding an API key may do, each scope a set of API operations.
public enum APIKeyScope: String, Sendable, Codable, CaseIterable {
    /// Quotes, the tariff, one's shipments and their files, trails and statements.
    case readShipments = "shipments:read"
    /// Order, cancel, add photos, confirm payments, tracking links.
    case writeShipments = "shipments:write"
    /// Assign, refund, the fleet (dispatchers' keys only).
    case dispatch
    /// Webhook endpoints and their logs.
    case webhooks
    /// Parcels of other carriers followed, and the combined list.
    case readParcels = "parcels:read"
    /// Follow, rename, refresh and stop following parcels.
    case writeParcels = "parcels:write"
}

/// API keys for server-to-server clients (issue "Integrations", item 2): `wb_live_` and 32 random
/// bytes, shown once, stored as a SHA-256 hash, acting as the account that made them but only
/// within their scopes. Operations outside every scope (sessions, passwords, accounts, keys
/// themselves, the live channel) are refused with a key.
public enum APIKeyPolicy {
    public static let prefix = "wb_live_"
    public static let maxPerAccount = 20
    public static let maxDays = 730
    public static let maxNameLength = 80

    /// The operations a key may call, by the scope each needs; `anyKey` operations need no scope.
    public static let operations: [String: APIKeyScope] = {
        var table: [String: APIKeyScope] = [:]
        for op in ["createQuote", "getTariff", "listOrders", "getOrder", "getOrderFile", "listShipments", "getShipment",
                   "listInvoices", "getOrderTrail", "getPaymentOptions", "listOrderImports", "getOrderImport", "exportCSV"] { table[op] = .readShipments }
        for op in ["createOrder", "cancelOrder", "addOrderPhoto", "confirmPayment", "renewTrackingLink", "revokeTrackingLink",
                   "uploadOrderImport", "commitOrderImport"] {
            table[op] = .writeShipments
        }
        for op in ["assignOrder", "refundOrder", "getFleet", "bulkOrderAction"] { table[op] = .dispatch }
        for op in ["listWebhookEndpoints", "createWebhookEndpoint", "getWebhookEndpoint", "updateWebhookEndpoint", "deleteWebhookEndpoint",
                   "rotateWebhookSecret", "pingWebhookEndpoint", "listWebhookDeliveries", "redeliverWebhook"] { table[op] = .webhooks }
        for op in ["listParcels", "getParcel", "listTracked", "getMyCarrierStatistics"] { table[op] = .readParcels }
        for op in ["createParcel", "updateParcel", "deleteParcel", "refreshParcel", "createParcelsFromText"] { table[op] = .writeParcels }
        return table
    }()

    /// Operations any key may call: who it acts for.
    public static let anyKey: Set<String> = ["getMe"]

    /// Whether a key with `scopes` may call `operation`.
    public static func allows(_ operation: String?, scopes: Set<APIKeyScope>) -> Bool {
        guard let operation else { return false }
        if anyKey.contains(operation) { return true }
        return operations[operation].map(scopes.contains) ?? false
    }

    /// Every account that sends makes keys for itself; the `dispatch` scope is for dispatchers.
    public static func mayCreate(_ scopes: Set<APIKeyScope>, by caller: Caller) -> Bool {
        guard caller.may(.placeOrders) || caller.may(.dispatch) else { return false }
        return !scopes.contains(.dispatch) || caller.may(.dispatch)
    }

    public static func maySee(owner: UserID, by caller: Caller) -> Bool { owner == caller.id }

    public static func validate(name: String, scopes: [String], expiresInDays: Int?) -> FieldErrors {
        var errors = FieldErrors()
        let trimmed = name.trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed.isEmpty { errors.add("name", "required") } else if trimmed.count > maxNameLength { errors.add("name", "too_long") }
        if scopes.isEmpty { errors.add("scopes", "required") }
        else if scopes.contains(where: { APIKeyScope(rawValue: $0) == nil }) { errors.add("scopes", "invalid") }
        if let days = expiresInDays, !(1...maxDays).contains(days) { errors.add("expiresInDays", "out_of_range") }
        return errors
    }

    /// Whether `text` looks like a key at all (before any database read).
    public static func looksLikeKey(_ text: String) -> Bool {
        text.hasPrefix(prefix) && text.count == prefix.count + 43 && text.utf8.allSatisfy { $0 < 128 }
    }
}
