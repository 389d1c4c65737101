import Fluent
import WaybillCore

/// Every stored model and group of fields Waybill declares, one entry each (each kind of versioned
/// document too). `ModelPropertiesTests` finds the models in the sources itself and fails when one
/// is missing here, then checks that each lists exactly the properties it declares.
enum StoredModels {
    static let all: [any Fields.Type] = [
        Order.self, OrderEvent.self, OrderFile.self, Notification.self, Leg.self, HandOver.self, LedgerRecord.self,
        PlaceColumns.self, RecipientColumns.self, StepReceipt.self,
        User.self, Session.self, RefreshToken.self, OneTimeCode.self, Device.self, OutboxMessage.self,
        CapabilityGrant.self, RestrictionRecord.self, AuditRecord.self, ReportRecord.self,
        TariffRecord.self, InsuranceTableRecord.self, LoyaltyRulesRecord.self, TravelTariffRecord.self,
        SandboxCheckout.self, SandboxPayout.self, PayoutClaim.self, StripeEvent.self, SandboxAccount.self,
        ClaimRecord.self, LoyaltyEntryRecord.self,
        PlanRecord.self, SubscriptionRecord.self, SubscriptionInvoiceRecord.self, SandboxSubscription.self,
        AreaRecord.self, TripRecord.self, TripRequestRecord.self, ProfilePicture.self,
        ParcelRecord.self, ParcelEventRecord.self, ParcelSettingsRecord.self, DeliverySampleRecord.self, ShopRecord.self,
        ForwardingAddressRecord.self,
        ConversationRecord.self, MessageRecord.self, ChatSetting.self, RatingRecord.self,
        CounterRecord.self, SlotTemplateRecord.self, SlotRecord.self, SlotBookingRecord.self,
        OrderImportRecord.self, APIKeyRecord.self, WebhookEndpointRecord.self, WebhookDeliveryRecord.self, WebhookAttemptRecord.self,
    ]
}
