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
    public enum RefreshToken {}
    public enum OneTimeCode {}
    public enum OutboxMessage {}
    public enum StepReceipt {}
    public enum LoyaltyEntry {}
    public enum Plan {}
    public enum Subscription {}
    public enum Report {}
    public enum Shop {}
    public enum OrderImport {}
    public enum APIKey {}
    public enum WebhookEndpoint {}
    public enum WebhookDelivery {}
    public enum WebhookEvent {}
    public enum RoutePlan {}
}

public typealias UserID = Tagged<Identifiers.User, UUID>
public typealias OrderID = Tagged<Identifiers.Order, UUID>
public typealias SignInID = Tagged<Identifiers.SignIn, UUID>
public typealias FileID = Tagged<Identifiers.OrderFile, UUID>
public typealias NotificationID = Tagged<Identifiers.Notification, UUID>
public typealias DeviceID = Tagged<Identifiers.Device, UUID>
public typealias ClaimID = Tagged<Identifiers.Claim, UUID>
/// A refresh token's row (its value is stored only as a hash).
public typealias RefreshTokenID = Tagged<Identifiers.RefreshToken, UUID>
public typealias OneTimeCodeID = Tagged<Identifiers.OneTimeCode, UUID>
/// A mail, push or job waiting in the outbox.
public typealias OutboxMessageID = Tagged<Identifiers.OutboxMessage, UUID>
/// A driver's step remembered by its idempotency key.
public typealias StepReceiptID = Tagged<Identifiers.StepReceipt, UUID>
public typealias LoyaltyEntryID = Tagged<Identifiers.LoyaltyEntry, UUID>
/// A subscription plan on offer.
public typealias PlanID = Tagged<Identifiers.Plan, UUID>
/// A customer's subscription to a plan.
public typealias SubscriptionID = Tagged<Identifiers.Subscription, UUID>
/// A report of a message or a person in the moderation queue.
public typealias ReportID = Tagged<Identifiers.Report, UUID>
/// A shop connected to send its orders' tracking numbers.
public typealias ShopID = Tagged<Identifiers.Shop, UUID>
/// A file of orders imported (checked, then committed).
public typealias OrderImportID = Tagged<Identifiers.OrderImport, UUID>
public typealias APIKeyID = Tagged<Identifiers.APIKey, UUID>
public typealias WebhookEndpointID = Tagged<Identifiers.WebhookEndpoint, UUID>
public typealias WebhookDeliveryID = Tagged<Identifiers.WebhookDelivery, UUID>
/// One event as webhooks send it: every endpoint's delivery of it shares this id.
public typealias WebhookEventID = Tagged<Identifiers.WebhookEvent, UUID>
/// A plan of the day's routes.
public typealias RoutePlanID = Tagged<Identifiers.RoutePlan, UUID>

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
