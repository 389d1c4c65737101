import FluentKit
import Foundation
import Testing
@testable import WaybillServer

/// Every model lists its properties for Fluent instead of letting it find them by reflection for
/// every row read and every save (`Mirror` was a tenth of creating an order); the list must be
/// exactly what the class declares.
@Suite("Models list exactly the properties they declare")
struct ModelPropertiesTests {
    static func declared(_ model: AnyObject) -> [ObjectIdentifier] {
        Mirror(reflecting: model).children.compactMap { ($0.value as? any AnyProperty).map { ObjectIdentifier($0 as AnyObject) } }
    }

    @Test("Every model: every declared property once, in declaration order")
    func listsMatchDeclarations() {
        let models: [any Fields] = [
            Order(), User(), Session(), RefreshToken(), OneTimeCode(), Device(), OutboxMessage(), OrderEvent(), OrderFile(),
            Notification(), TariffRecord(), SandboxCheckout(), SandboxPayout(), PayoutClaim(), StripeEvent(), LedgerRecord(),
            Leg(), HandOver(), CapabilityGrant(), RestrictionRecord(), PlaceColumns(), RecipientColumns(),
            AreaRecord(), TravelTariffRecord(), TripRecord(), TripRequestRecord(), ProfilePicture(), SandboxAccount(), ParcelRecord(), ParcelEventRecord(),
        ]
        for model in models {
            let listed = model.properties.map { ObjectIdentifier($0 as AnyObject) }
            #expect(listed == Self.declared(model), "\(type(of: model))")
            #expect(listed.count >= 3, "\(type(of: model))")
        }
    }
}
