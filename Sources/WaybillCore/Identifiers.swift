import Foundation
@_exported import Tagged

/// Typed ids: the same UUIDs underneath, but an order's id cannot be passed where a user's is
/// meant (`OrderID` and `UserID` are different types). They encode as the bare UUID, in JSON and in
/// the database alike.
public enum Identifiers {
    public enum User {}
    public enum Order {}
    public enum SignIn {}
    public enum OrderFile {}
    public enum Notification {}
    public enum Device {}
    public enum Claim {}
}

public typealias UserID = Tagged<Identifiers.User, UUID>
public typealias OrderID = Tagged<Identifiers.Order, UUID>
public typealias SignInID = Tagged<Identifiers.SignIn, UUID>
public typealias FileID = Tagged<Identifiers.OrderFile, UUID>
public typealias NotificationID = Tagged<Identifiers.Notification, UUID>
public typealias DeviceID = Tagged<Identifiers.Device, UUID>
public typealias ClaimID = Tagged<Identifiers.Claim, UUID>

extension Tagged where RawValue == UUID {
    /// A new random id.
    public static func random() -> Self { Self(rawValue: UUID()) }

    /// The id written as text (a path, a form), or nil when it is not one.
    public init?(uuidString text: String) {
        guard let uuid = UUID(uuidString: text) else { return nil }
        self.init(rawValue: uuid)
    }

    public var uuidString: String { rawValue.uuidString }
}
