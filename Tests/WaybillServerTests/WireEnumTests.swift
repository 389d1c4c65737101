import Testing
import WaybillAPI
@testable import WaybillServer
import WaybillCore

/// Issue 50: the API layer converted between WaybillCore's enums and the schema's (generated) ones
/// with `X(rawValue: y.rawValue)!`, which ended the process for any value the other side lacked.
/// It now converts with `wire`, which fails that one request instead; these tests make sure it
/// never has to: for every pair `wire` converts, each case of the side converted from has a case of
/// the same name on the other side.
@Suite("Every enum the API converts has each of its cases on the other side")
struct WireEnumTests {
    typealias S = Components.Schemas

    /// The raw values of `from` that `to` lacks (empty when every one converts).
    static func missing<From: CaseIterable & RawRepresentable, To: CaseIterable & RawRepresentable>(
        _ from: From.Type, in to: To.Type) -> [String] where From.RawValue == String, To.RawValue == String {
        let known = Set(To.allCases.map(\.rawValue))
        return From.allCases.map(\.rawValue).filter { !known.contains($0) }
    }

    /// One pair: its name in a failure, and what the side converted from has that the other lacks.
    struct Pair: CustomTestStringConvertible, Sendable {
        let name: String
        let missing: @Sendable () -> [String]
        var testDescription: String { name }

        init<From: CaseIterable & RawRepresentable, To: CaseIterable & RawRepresentable>(
            _ from: From.Type, _ to: To.Type) where From.RawValue == String, To.RawValue == String {
            name = "\(String(reflecting: From.self)) → \(String(reflecting: To.self))"
            missing = { WireEnumTests.missing(from, in: to) }
        }
    }

    /// What the server sends: a WaybillCore (or server) value shown in an answer.
    static let outgoing: [Pair] = [
        // accounts and administration
        Pair(Capability.self, S.Capability.self),
        Pair(Restriction.Kind.self, S.RestrictionKind.self),
        Pair(ShipmentBox.self, S.ShipmentBox.self),
        Pair(AuditAction.self, S.AuditAction.self),
        Pair(AuditTargetKind.self, S.AuditEntry.TargetKindPayload.self),
        Pair(ModeratedContent.self, Operations.ModerateContent.Output.Ok.Body.JsonPayload.KindPayload.self),
        // orders and shipments
        Pair(OrderStatus.self, S.OrderStatus.self),
        Pair(OrderAction.self, S.OrderAction.self),
        Pair(WeightClass.self, S.WeightClass.self),
        Pair(ServiceLevel.self, S.ServiceLevel.self),
        Pair(PaymentMethod.self, S.PaymentMethod.self),
        Pair(FailureReason.self, S.Order.FailurePayload.ReasonPayload.self),
        Pair(PriceLine.Kind.self, S.PriceLine.KindPayload.self),
        Pair(ShipmentRole.self, S.ShipmentRole.self),
        Pair(LedgerEntryKind.self, S.ShipmentMoney.EntriesPayloadPayload.KindPayload.self),
        Pair(LegKind.self, S.Leg.KindPayload.self),
        Pair(LegStatus.self, S.Leg.StatusPayload.self),
        Pair(HandOverKind.self, S.HandOver.KindPayload.self),
        Pair(ProofKind.self, S.HandOver.ProofPayload.KindsPayloadPayload.self),
        Pair(RoutePlanningPolicy.Unplanned.self, S.UnplannedOrder.ReasonPayload.self),
        Pair(OperationsStatistics.Period.self, S.OperationsReport.PeriodPayload.self),
        Pair(LoyaltyEntryKind.self, S.LoyaltyEntryKind.self),
        Pair(ClaimKind.self, S.ClaimKind.self),
        Pair(ClaimStatus.self, S.ClaimStatus.self),
        Pair(SubscriptionStatus.self, S.SubscriptionStatus.self),
        // conversations, reports and ratings
        Pair(ConversationRole.self, S.ConversationRole.self),
        Pair(MessageKind.self, S.Message.KindPayload.self),
        Pair(ReportReason.self, S.ReportReason.self),
        Pair(ReportStatus.self, S.ReportStatus.self),
        Pair(RatingDirection.self, S.RatingDirection.self),
        Pair(RatingStatus.self, S.Rating.StatusPayload.self),
        // parcels of other carriers and shops
        Pair(ParcelStatus.self, S.ParcelStatus.self),
        Pair(ParcelIncident.self, S.ParcelEvent.ReasonPayload.self),
        Pair(EventPlace.Precision.self, S.ParcelEvent.PlacePrecisionPayload.self),
        Pair(CarrierCandidate.Reason.self, S.CarrierCandidate.ReasonPayload.self),
        Pair(ParcelRelation.self, S.Parcel.RelationPayload.self),
        Pair(ParcelAlerts.self, S.Parcel.AlertsPayload.self),
        Pair(ParcelAlerts.self, S.ParcelAlertSettings.AlertsPayload.self),
        Pair(ShopPlatform.self, S.Shop.PlatformPayload.self),
        Pair(TrackedItem.Kind.self, S.TrackedItem.KindPayload.self),
        Pair(TrackedItem.Direction.self, S.TrackedItem.DirectionPayload.self),
        // timeslots and counters
        Pair(SlotKind.self, S.SlotKind.self),
        Pair(SlotAvailability.self, S.SlotAvailability.self),
        Pair(SlotBookingStatus.self, S.SlotBookingStatus.self),
        Pair(CounterParcel.Stage.self, S.CounterParcel.StagePayload.self),
        // travel
        Pair(TripStatus.self, S.TripStatus.self),
        Pair(TripRequestProgress.self, S.TripRequestStatus.self),
        Pair(TripRequestUserAction.self, S.TripRequest.AvailableActionsPayloadPayload.self),
        Pair(PayoutAccountStatus.self, S.PayoutAccount.StatusPayload.self),
        // integrations
        Pair(WebhookScope.self, S.WebhookEndpoint.ScopePayload.self),
        Pair(WebhookDeliveryRecord.Status.self, S.WebhookDelivery.StatusPayload.self),
    ]

    /// What the server is sent: a value the schema let through, read as WaybillCore's.
    static let incoming: [Pair] = [
        Pair(S.Capability.self, Capability.self),
        Pair(S.RestrictionKind.self, Restriction.Kind.self),
        Pair(S.ShipmentBox.self, ShipmentBox.self),
        Pair(S.PaymentMethod.self, PaymentMethod.self),
        Pair(S.FailRequest.ReasonPayload.self, FailureReason.self),
        Pair(S.WeightClass.self, WeightClass.self),
        Pair(S.ServiceLevel.self, ServiceLevel.self),
        Pair(S.ParcelStatus.self, ParcelStatus.self),
        Pair(S.ParcelAlertSettings.AlertsPayload.self, ParcelAlerts.self),
        Pair(Operations.ConnectShop.Input.Body.JsonPayload.PlatformPayload.self, ShopPlatform.self),
        Pair(S.SlotKind.self, SlotKind.self),
        Pair(S.SlotBookingStatus.self, SlotBookingStatus.self),
        Pair(Operations.DecideSlotBooking.Input.Body.JsonPayload.ActionPayload.self, SlotBookingAction.self),
    ]

    @Test("Every value the server shows has its case in openapi.yaml", arguments: outgoing)
    func outgoingCases(pair: Pair) {
        #expect(pair.missing() == [], "\(pair.name): no case in the schema for \(pair.missing())")
    }

    @Test("Every value the schema lets in has its case in WaybillCore", arguments: incoming)
    func incomingCases(pair: Pair) {
        #expect(pair.missing() == [], "\(pair.name): no case in WaybillCore for \(pair.missing())")
    }

    @Test("Every action a shipment offers (the order's, and confirming receipt) is a ShipmentAction")
    func shipmentActions() {
        let offered = OrderAction.allCases.map(\.rawValue) + [OrderSideAction.confirmReceipt.rawValue]
        let listed = Set(S.ShipmentAction.allCases.map(\.rawValue))
        #expect(offered.filter { !listed.contains($0) } == [])
    }
}
