import Fluent
import Foundation
import NIOConcurrencyHelpers
import WaybillCore

extension ClaimKind: TextColumn {}
extension ClaimStatus: TextColumn {}

/// An insurance claim about one shipment: what its sender says happened, staff's decision (two
/// approvals above the table's threshold), and how the compensation was paid.
final class ClaimRecord: Model, @unchecked Sendable {
    static let schema = "claims"

    @ID(custom: .id, generatedBy: .user) var id: ClaimID?
    @Field(key: "order_id") var orderID: OrderID
    @Field(key: "claimant_id") var claimantID: UserID
    @Field(key: "kind") var kind: ClaimKind
    @Field(key: "description") var description: String
    @Field(key: "claimed_amount") var claimedAmount: Int
    @Field(key: "currency") var currency: String
    @Field(key: "status") var status: ClaimStatus
    /// The amount the first approver approved, waiting for a second approval.
    @OptionalField(key: "proposed_amount") var proposedAmount: Int?
    @OptionalField(key: "first_approver_id") var firstApproverID: UserID?
    @OptionalField(key: "first_approved_at") var firstApprovedAt: Int64?
    /// Who approved (the second approver when two were needed) or declined it.
    @OptionalField(key: "decided_by") var decidedBy: UserID?
    @OptionalField(key: "decided_at") var decidedAt: Int64?
    @OptionalField(key: "decline_reason") var declineReason: String?
    @OptionalField(key: "approved_amount") var approvedAmount: Int?
    @OptionalField(key: "refund_id") var refundID: String?
    /// The part of the compensation paid as a refund of the shipment's payment (set before asking
    /// the provider, so a retry refunds the same amount).
    @OptionalField(key: "refunded_amount") var refundedAmount: Int?
    @OptionalField(key: "transfer_id") var transferID: String?
    @OptionalField(key: "paid_at") var paidAt: Int64?
    /// Why the payment waits (no payout account yet), for the claimant's page.
    @OptionalField(key: "payment_note") var paymentNote: String?
    @Field(key: "created_at") var createdAt: Int64
    @Field(key: "updated_at") var updatedAt: Int64

    var properties: [any AnyProperty] {
        [$id, $orderID, $claimantID, $kind, $description, $claimedAmount, $currency, $status, $proposedAmount, $firstApproverID,
         $firstApprovedAt, $decidedBy, $decidedAt, $declineReason, $approvedAmount, $refundID, $refundedAmount, $transferID,
         $paidAt, $paymentNote, $createdAt, $updatedAt]
    }

    init() {}

    /// What the compensation still owes beyond its refund: the approved amount less the refund part.
    var payoutAmount: Int? {
        guard let approvedAmount, let refundedAmount else { return nil }
        return approvedAmount - refundedAmount
    }
}
