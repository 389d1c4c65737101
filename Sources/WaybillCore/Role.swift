/// The three kinds of account. The login decides what each sees.
public enum Role: String, Codable, Sendable, CaseIterable {
    case customer
    case driver
    case manager

    /// Roles a manager may give to an account they create (customers register themselves).
    public static let staff: Set<Role> = [.driver, .manager]
}

/// Platforms that can receive push notifications.
public enum DevicePlatform: String, Codable, Sendable, CaseIterable {
    case ios
    case android
    case web
}
