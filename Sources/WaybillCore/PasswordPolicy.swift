/// What a password must be. bcrypt reads at most 72 bytes, so longer passwords are refused
/// rather than silently cut.
public enum PasswordPolicy {
    public static let minBytes = 8
    public static let maxBytes = 72

    /// Returns the reason a password is refused, or nil when it is acceptable.
    public static func problem(with password: String, email: String? = nil) -> String? {
        let bytes = password.utf8.count
        if bytes == 0 { return "required" }
        if bytes < minBytes { return "too_short" }
        if bytes > maxBytes { return "too_long" }
        let lowered = password.lowercased()
        if commonPasswords.contains(lowered) { return "too_common" }
        if Set(lowered).count == 1 { return "too_common" }
        if let email, !email.isEmpty, lowered == email.lowercased() { return "same_as_email" }
        if let email, let local = email.split(separator: "@").first, local.count >= 4, lowered == local.lowercased() {
            return "same_as_email"
        }
        return nil
    }

    public static func validate(_ password: String?, field: String, email: String? = nil, into errors: inout FieldErrors) {
        if let reason = problem(with: password ?? "", email: email) { errors.add(field, reason) }
    }

    /// The most used passwords of at least eight characters (from published breach-frequency lists),
    /// lowercased. Not exhaustive: it stops the guesses an attacker tries first.
    public static let commonPasswords: Set<String> = [
        "12345678", "123456789", "1234567890", "12345678910", "password", "password1", "password12",
        "password123", "password!", "passw0rd", "p@ssw0rd", "p@ssword", "qwertyuiop", "qwerty123",
        "qwerty12", "qwertyui", "1q2w3e4r", "1q2w3e4r5t", "1qaz2wsx", "zaq12wsx", "iloveyou",
        "iloveyou1", "sunshine", "princess", "football", "baseball", "welcome1", "welcome123",
        "abc12345", "abcd1234", "abcdefgh", "11111111", "00000000", "88888888", "87654321",
        "123123123", "12341234", "11223344", "aa123456", "asdfghjk", "asdfasdf", "superman",
        "trustno1", "letmein1", "letmein123", "starwars", "computer", "whatever", "dragon123",
        "michael1", "jennifer", "charlie1", "monkey123", "shadow123", "master123", "internet",
        "changeme", "changeme1", "admin123", "administrator", "secret123", "mypassword",
        "loveyou1", "football1", "baseball1", "q1w2e3r4", "q1w2e3r4t5", "1234qwer", "qwer1234",
        "azertyuiop", "azerty123", "motdepasse", "soleil123", "bonjour1", "bonjour123",
        "waybill1", "waybill123", "delivery", "delivery1", "courier1", "passwort", "hallo123",
    ]
}
