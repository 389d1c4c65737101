import Foundation
import Testing
@testable import WaybillCore

/// The rules the second architecture review found restated in pages and handlers (its table F3),
/// each now with one home here; the server's tests check that the API and the pages read them.
@Suite("What a viewer is shown and may do: one rule each")
struct ViewerRulesTests {
    let ada = UserID.random(), luca = UserID.random(), boss = UserID.random()

    @Test("Only the newest route plan, while proposed, may be applied")
    func routePlans() {
        for status in RoutePlanStatus.allCases {
            #expect(RoutePlanningPolicy.mayApply(status, isNewest: true) == (status == .proposed))
            #expect(!RoutePlanningPolicy.mayApply(status, isNewest: false), "an older plan is never applied")
        }
    }

    @Test("A plan's grace date only while past due; its checkout link only while its first payment is missing")
    func subscriptions() {
        for status in SubscriptionStatus.allCases {
            #expect((SubscriptionPolicy.graceEnds(status, at: 42) != nil) == (status == .pastDue))
            #expect((SubscriptionPolicy.checkoutLink(status, "https://pay") != nil) == (status == .incomplete))
            #expect(SubscriptionPolicy.graceEnds(status, at: nil) == nil && SubscriptionPolicy.checkoutLink(status, nil) == nil)
        }
        #expect(InvoiceStatus(rawValue: "paid") == .paid && InvoiceStatus(rawValue: "failed") == .failed, "the stored words")
    }

    @Test("The rated person answers a published rating, once; nobody else")
    func ratingAnswers() {
        #expect(RatingPolicy.mayAnswer(ratee: luca, published: true, answered: false, by: luca))
        #expect(!RatingPolicy.mayAnswer(ratee: luca, published: false, answered: false, by: luca), "not before it is published")
        #expect(!RatingPolicy.mayAnswer(ratee: luca, published: true, answered: true, by: luca), "once")
        #expect(!RatingPolicy.mayAnswer(ratee: luca, published: true, answered: false, by: ada), "not the reviewer")
        #expect(!RatingPolicy.mayAnswer(ratee: nil, published: true, answered: false, by: ada), "an outside carrier's rating has nobody to answer")
    }

    @Test("A traveller's payouts: the traveller and dispatch see them; the sender does not")
    func payouts() {
        #expect(TripPolicy.maySeePayouts(traveller: luca, by: Caller(id: luca, role: .customer)))
        #expect(TripPolicy.maySeePayouts(traveller: luca, by: Caller(id: boss, role: .manager)))
        #expect(!TripPolicy.maySeePayouts(traveller: luca, by: Caller(id: ada, role: .customer)))
    }

    @Test("Whether a picture is hidden is shown to moderators only")
    func pictureModeration() {
        #expect(ProfilePicturePolicy.maySeeModeration(by: Caller(id: boss, capabilities: [.admin])))
        #expect(!ProfilePicturePolicy.maySeeModeration(by: Caller(id: boss, role: .manager)), "a manager does not moderate")
        #expect(!ProfilePicturePolicy.maySeeModeration(by: Caller(id: ada, role: .customer)))
        #expect(!ProfilePicturePolicy.maySeeModeration(by: Caller(id: luca, role: .driver)))
    }

    @Test("The public sees the position only while the parcel is on its way; an order's map drops its driver once it ended for them")
    func publicPositionAndMaps() {
        #expect(OrderStatus.allCases.filter { PublicTrackingView.visible(in: $0).position } == [.inTransit])
        #expect(Set(OrderStatus.allCases.filter(\.endsTheDrive)) == [.delivered, .cancelled, .failed])
    }
}
