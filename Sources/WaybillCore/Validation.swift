/// Input rules for accounts, shared by the API, the web app and the SDK.
public enum Validation {
    public static let maxNameLength = 100
    public static let maxAddressLength = 200
    public static let maxCityLength = 100
    public static let maxPostalCodeLength = 16
    public static let maxEmailLength = 254

    /// Trims surrounding whitespace and lowercases, so one mailbox is one account.
    public static func normalizeEmail(_ email: String) -> String {
        email.trimmingWhitespace().lowercased()
    }

    /// A pragmatic address check: one `@`, a non-empty local part, a dotted domain, no spaces
    /// or control characters. The emailed code is the real proof that the address works.
    public static func isValidEmail(_ email: String) -> Bool {
        guard !email.isEmpty, email.utf8.count <= maxEmailLength else { return false }
        let parts = email.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2 else { return false }
        let local = parts[0], domain = parts[1]
        guard !local.isEmpty, local.utf8.count <= 64, !domain.isEmpty else { return false }
        guard !email.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7F }) else { return false }
        let labels = domain.split(separator: ".", omittingEmptySubsequences: false)
        guard labels.count >= 2, labels.allSatisfy({ !$0.isEmpty && !$0.hasPrefix("-") && !$0.hasSuffix("-") }) else {
            return false
        }
        guard domain.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "." }) else { return false }
        return true
    }

    /// Checks a required free-text field and returns it trimmed.
    @discardableResult
    public static func text(
        _ value: String?, field: String, maxLength: Int, into errors: inout FieldErrors
    ) -> String {
        let trimmed = (value ?? "").trimmingWhitespace()
        if trimmed.isEmpty {
            errors.add(field, "required")
        } else if trimmed.unicodeScalars.count > maxLength {  // JSON Schema's maxLength counts code points
            errors.add(field, "too_long")
        } else if trimmed.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            errors.add(field, "invalid")
        }
        return trimmed
    }

    /// Postal codes worldwide are letters, digits, spaces and dashes.
    @discardableResult
    public static func postalCode(_ value: String?, field: String = "postalCode", into errors: inout FieldErrors) -> String {
        let trimmed = text(value, field: field, maxLength: maxPostalCodeLength, into: &errors)
        if errors[field] == nil,
           !trimmed.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == " " || $0 == "-") }) {
            errors.add(field, "invalid")
        }
        return trimmed
    }

    @discardableResult
    public static func email(_ value: String?, field: String = "email", into errors: inout FieldErrors) -> String {
        let normalized = normalizeEmail(value ?? "")
        if normalized.isEmpty {
            errors.add(field, "required")
        } else if !isValidEmail(normalized) {
            errors.add(field, "invalid_email")
        }
        return normalized
    }
}

extension String {
    func trimmingWhitespace() -> String {
        var scalars = Substring(self)
        while let first = scalars.first, first.isWhitespace { scalars.removeFirst() }
        while let last = scalars.last, last.isWhitespace { scalars.removeLast() }
        return String(scalars)
    }
}
