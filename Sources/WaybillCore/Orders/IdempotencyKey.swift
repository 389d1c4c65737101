import Foundation

/// What a client sends as `Idempotency-Key` (an order created, a driver's step): any text of at
/// most 200 characters, spaces around it ignored. The same key from the same person is the same
/// request, answered again rather than done twice.
public enum IdempotencyKey {
    public static let maxLength = 200

    /// The key to keep, or nil when it cannot be one (empty, too long, or with control characters).
    public static func normalized(_ raw: String) -> String? {
        let trimmed = raw.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty, trimmed.count <= maxLength,
              !trimmed.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else { return nil }
        return trimmed
    }
}
