import Foundation
import Testing
import WaybillCore

@Suite("Who may do what with a followed parcel, and when people are told")
struct ParcelRulesTests {
    let owner = UserID(UUID()), friend = UserID(UUID()), stranger = UserID(UUID())

    /// A suspended account keeps its id but uses no capability (`Caller`).
    func caller(_ id: UserID, suspended: Bool = false) -> Caller {
        Caller(id: id, capabilities: suspended ? [] : [.sender, .receiver])
    }

    @Test("The owner does everything; someone it is shared with sees, asks, chooses alerts and leaves; a stranger nothing")
    func policy() {
        let shared: Set<UserID> = [friend]
        let asOwner = ParcelPolicy.relation(owner: owner, sharedWith: shared, caller: caller(owner))
        let asFriend = ParcelPolicy.relation(owner: owner, sharedWith: shared, caller: caller(friend))
        #expect(asOwner == .owner && asFriend == .shared)
        #expect(ParcelPolicy.relation(owner: owner, sharedWith: shared, caller: caller(stranger)) == nil)
        for action in ParcelAction.allCases {
            #expect(ParcelPolicy.allows(action, as: .owner, by: caller(owner)) == (action != .leave), "\(action)")
            #expect(ParcelPolicy.allows(action, as: .shared, by: caller(friend)) == [.see, .refresh, .setAlerts, .leave].contains(action), "\(action)")
            #expect(!ParcelPolicy.allows(action, as: nil, by: caller(stranger)))
        }
        // Suspended: no new shares or changes, but removing stays possible.
        #expect(!ParcelPolicy.allows(.share, as: .owner, by: caller(owner, suspended: true)))
        #expect(ParcelPolicy.allows(.remove, as: .owner, by: caller(owner, suspended: true)))
    }

    @Test("Every change, only the important ones, or none; a parcel's own setting wins; no news without a change")
    func alerts() {
        #expect(ParcelAlerts.tells(parcel: nil, account: .all, from: .pending, to: .inTransit))
        #expect(!ParcelAlerts.tells(parcel: nil, account: .important, from: .pending, to: .inTransit))
        #expect(ParcelAlerts.tells(parcel: nil, account: .important, from: .inTransit, to: .outForDelivery))
        #expect(ParcelAlerts.tells(parcel: .important, account: .off, from: .inTransit, to: .delivered))
        #expect(!ParcelAlerts.tells(parcel: .off, account: .all, from: .inTransit, to: .delivered))
        #expect(!ParcelAlerts.tells(parcel: .all, account: .all, from: .delivered, to: .delivered))
    }

    @Test("Incident reasons come from the carrier's own codes")
    func reasons() {
        #expect(ParcelTracking.reason(carrier: "fedex", code: "08") == .consigneeNotHome)
        #expect(ParcelTracking.reason(carrier: "usps", code: "04") == .consigneeRefused)
        #expect(ParcelTracking.reason(carrier: "dhl", code: "transit") == nil)
        #expect(ParcelTracking.status(carrier: "ups", code: "I/AR") == .inTransit)
        #expect(ParcelTracking.status(carrier: "ups", code: "I/OT") == .outForDelivery)
        #expect(ParcelTracking.status(carrier: "ups", code: "Q/ZZ") == nil)
    }
}
