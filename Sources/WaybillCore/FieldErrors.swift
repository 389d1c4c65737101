/// Problems with individual input fields, keyed by the field's name in the API (camelCase).
///
/// The values are stable, machine-readable reasons (`required`, `invalid_email`, `too_short`, …)
/// that a client can translate.
public struct FieldErrors: Sendable, Equatable, CustomStringConvertible {
    public private(set) var fields: [String: String] = [:]

    public init() {}
    public init(_ fields: [String: String]) { self.fields = fields }

    public var isEmpty: Bool { fields.isEmpty }

    public mutating func add(_ field: String, _ reason: String) {
        // Keep the first problem found for a field: it is usually the most basic one.
        if fields[field] == nil { fields[field] = reason }
    }

    public mutating func merge(_ other: FieldErrors) {
        for (field, reason) in other.fields { add(field, reason) }
    }

    public subscript(field: String) -> String? { fields[field] }

    public var description: String {
        fields.sorted(by: { $0.key < $1.key }).map { "\($0.key): \($0.value)" }.joined(separator: ", ")
    }
}
