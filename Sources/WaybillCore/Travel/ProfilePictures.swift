import Foundation

// Profile pictures (issue "Travellers", item 8): every account may show a square picture, seen
// only by people who have something to do with its owner.

public enum ProfilePicturePolicy {
    public static let minSide = 64
    public static let maxSide = 2048
    public static let maxBytes = 2 * 1024 * 1024

    /// A picture is square (apps and the web page crop it before sending), between 64 and 2,048
    /// pixels a side; nil when it is, else the reason.
    public static func problem(width: Int, height: Int) -> String? {
        if width != height { return "not_square" }
        if width < minSide { return "too_small" }
        if width > maxSide { return "too_large" }
        return nil
    }

    /// Who sees `owner`'s picture: themself, staff (people managers, dispatchers, admins), and
    /// people who share something with them: a shipment (its sender, carrier or receiver), a
    /// request for a trip (its sender and traveller), or a trip open to requests (everyone who may
    /// send sees who would carry their parcel).
    /// A picture the moderators hid (`ModeratedContent.picture`) is its owner's and the admins' only.
    public static func maySee(owner: UserID, viewer: Caller, sharesSomething: Bool, hidden: Bool = false) -> Bool {
        if hidden { return viewer.id == owner || viewer.capabilities.contains(.admin) }
        return viewer.id == owner || viewer.may(.manageUsers) || viewer.may(.dispatch) || sharesSomething
    }

    /// Who is shown whether someone's picture is hidden, and may hide it or show it again: moderators.
    public static func maySeeModeration(by viewer: Caller) -> Bool { viewer.may(.moderate) }
}
