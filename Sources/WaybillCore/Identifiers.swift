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

    public var uuidString: String { rawValue.text }
}

extension UUID {
    /// The UUID as `uuidString` writes it (upper-case hex, 8-4-4-4-12), without the C library's
    /// `snprintf` that Foundation formats it with: a page of orders writes a few hundred ids, and
    /// that formatting was 3 % of the list (docs/performance.md).
    public var text: String {
        let digits: StaticString = "0123456789ABCDEF"
        return withUnsafeBytes(of: uuid) { raw in
            String(unsafeUninitializedCapacity: 36) { out in
                digits.withUTF8Buffer { hex in
                    var at = 0
                    for index in 0..<16 {
                        if index == 4 || index == 6 || index == 8 || index == 10 {
                            out[at] = UInt8(ascii: "-")
                            at += 1
                        }
                        let byte = raw[index]
                        out[at] = hex[Int(byte >> 4)]
                        out[at + 1] = hex[Int(byte & 0x0F)]
                        at += 2
                    }
                }
                return 36
            }
        }
    }
}
