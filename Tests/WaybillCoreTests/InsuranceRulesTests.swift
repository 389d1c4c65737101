import Foundation
import Testing
@testable import WaybillCore

@Suite("Insurance rules: premiums by band, when a claim may be filed, two approvals above the threshold")
struct InsuranceRulesTests {
    let table = InsuranceTable.initial
    let ada = UserID.random(), boss = UserID.random(), ann = UserID.random()

    @Test("The premium is the band's rate, at least its minimum, rounded half up; above the last band nothing is insured")
    func premiums() throws {
        #expect(try Insurance.cover(30_000, table: table, currency: "CHF").get().premium == 600)
        #expect(try Insurance.cover(2_000, table: table, currency: "CHF").get().premium == 200, "the minimum")
        #expect(try Insurance.cover(50_000, table: table, currency: "CHF").get().premium == 1_000, "up to is inclusive")
        #expect(try Insurance.cover(50_001, table: table, currency: "CHF").get().premium == 1_000, "1.5 %, at least CHF 10")
        #expect(try Insurance.cover(133_333, table: table, currency: "CHF").get().premium == 2_000, "1999.995 rounds up")
        #expect(Insurance.cover(500_001, table: table, currency: "CHF") == .failure(.aboveMaximum(500_000)))
        #expect(Insurance.cover(0, table: table, currency: "CHF") == .failure(.invalidValue))
        #expect(Insurance.cover(Int.max, table: table, currency: "CHF") == .failure(.invalidValue), "never traps")
        #expect(Insurance.cover(1_000, table: table, currency: "EUR") == .failure(.otherCurrency))
        let quote = Pricing.quote(tariff: .initial, weightClass: .small, service: .standard, pickup: nil, dropoff: nil,
                                  insurance: InsuranceCover(declaredValue: 30_000, premium: 600))
        #expect(quote.price.amount == 1_500 + 600 && quote.breakdown.last?.kind == .insurance)
    }

    @Test("A table is checked field by field: ascending bands, rates within 100 %, a window of 1 to 365 days")
    func validation() throws {
        var bad = table
        bad.bands = [.init(upTo: 100, rateBasisPoints: 20_000, minimumPremium: -1), .init(upTo: 50, rateBasisPoints: 0, minimumPremium: 0)]
        bad.claimWindowDays = 0
        bad.currency = "chf"
        guard case .failure(let error) = bad.validated() else { Issue.record("accepted"); return }
        #expect(error.errors.fields == ["bands.0.rateBasisPoints": "out_of_range", "bands.0.minimumPremium": "out_of_range",
                                        "bands.1.upTo": "not_ascending", "claimWindowDays": "out_of_range"])
        var empty = table
        empty.bands = []
        #expect((try? empty.validated().get()) == nil)
    }

    @Test("Damage is claimed once delivered, a loss once failed or cancelled after pickup or two days overdue; within the window")
    func filing() {
        let day: Int64 = 86_400_000, now: Int64 = 100 * day
        func filing(_ kind: ClaimKind, _ status: OrderStatus, pickedUp: Int64? = 90 * day, delivered: Int64? = nil, changed: Int64 = 95 * day,
                    insured: Bool = true) -> ClaimPolicy.Filing {
            ClaimPolicy.filing(kind, insured: insured, status: status, pickedUpAt: pickedUp, deliveredAt: delivered, changedAt: changed,
                               windowDays: 30, now: now)
        }
        #expect(filing(.damaged, .delivered, delivered: 95 * day) == .allowed(deadline: 125 * day))
        #expect(filing(.damaged, .delivered, delivered: 60 * day) == .windowClosed)
        #expect(filing(.damaged, .inTransit) == .notYet)
        #expect(filing(.lost, .failed) == .allowed(deadline: 125 * day))
        #expect(filing(.lost, .cancelled, pickedUp: nil) == .notYet, "cancelled before pickup: nothing was lost")
        #expect(filing(.lost, .inTransit, pickedUp: 99 * day) == .notYet, "not two days overdue yet")
        #expect(filing(.lost, .inTransit, pickedUp: 97 * day) == .allowed(deadline: 129 * day))
        #expect(filing(.lost, .inTransit, pickedUp: .max) == .notYet, "never traps")
        #expect(filing(.damaged, .delivered, delivered: 95 * day, insured: false) == .notInsured)
    }

    @Test("One staff member approves up to the threshold; above it a second, different one confirms the same amount; nobody decides their own claim")
    func decisions() {
        func decide(_ decision: ClaimPolicy.Decision, _ status: ClaimStatus = .submitted, first: UserID? = nil, proposed: Int? = nil,
                    by decider: UserID) -> Result<ClaimPolicy.Outcome, ClaimPolicy.Refusal> {
            ClaimPolicy.decide(decision, status: status, claimant: ada, claimed: 80_000, insured: 100_000, firstApprover: first,
                               proposed: proposed, threshold: 50_000, by: decider)
        }
        #expect(decide(.approve(amount: 50_000), by: boss) == .success(.approved(amount: 50_000)))
        #expect(decide(.approve(amount: 50_001), by: boss) == .success(.awaitingSecondApproval(amount: 50_001)))
        #expect(decide(.approve(amount: 80_001), by: boss) == .failure(.amountOutOfRange), "more than claimed")
        #expect(decide(.approve(amount: 0), by: boss) == .failure(.amountOutOfRange))
        #expect(decide(.approve(amount: 10), by: ada) == .failure(.ownClaim))
        #expect(decide(.approve(amount: 60_000), .awaitingSecondApproval, first: boss, proposed: 60_000, by: boss) == .failure(.sameApprover))
        #expect(decide(.approve(amount: 59_000), .awaitingSecondApproval, first: boss, proposed: 60_000, by: ann) == .failure(.amountDiffers))
        #expect(decide(.approve(amount: 60_000), .awaitingSecondApproval, first: boss, proposed: 60_000, by: ann) == .success(.approved(amount: 60_000)))
        #expect(decide(.decline(reason: "  "), by: boss) == .failure(.reasonRequired))
        #expect(decide(.decline(reason: " Not covered "), .awaitingSecondApproval, first: boss, proposed: 60_000, by: boss)
                == .success(.declined(reason: "Not covered")), "the first approver may still decline")
        #expect(decide(.approve(amount: 10), .paid, by: boss) == .failure(.decided))
        #expect(ClaimPolicy.split(80_000, refundable: 2_100) == (2_100, 77_900))
        #expect(ClaimPolicy.split(1_000, refundable: 2_100) == (1_000, 0))
        #expect(ClaimPolicy.split(1_000, refundable: -5) == (0, 1_000))
    }

    @Test("What a viewer may do with a claim is what the decision allows them: every status, claimant, first approver and role")
    func actionsAgreeWithDecide() {
        for status in ClaimStatus.allCases {
            for first in [nil, boss, ann] {
                for (id, role) in [(ada, Role.customer), (boss, .manager), (ann, .manager), (ann, .driver)] {
                    let caller = Caller(id: id, role: role)
                    let actions = ClaimPolicy.actions(status: status, claimant: ada, firstApprover: status == .awaitingSecondApproval ? first : nil, by: caller)
                    let proposed = status == .awaitingSecondApproval ? 60_000 : nil
                    func allowed(_ decision: ClaimPolicy.Decision) -> Bool {
                        guard caller.may(.decideClaims) else { return false }
                        if case .success = ClaimPolicy.decide(decision, status: status, claimant: ada, claimed: 80_000, insured: 100_000,
                                                              firstApprover: status == .awaitingSecondApproval ? first : nil, proposed: proposed,
                                                              threshold: 50_000, by: id) { return true }
                        return false
                    }
                    #expect(actions.contains(.approve) == allowed(.approve(amount: proposed ?? 10_000)), "\(status) \(String(describing: first)) \(role)")
                    #expect(actions.contains(.decline) == allowed(.decline(reason: "Not covered")), "\(status) \(String(describing: first)) \(role)")
                }
            }
        }
        #expect(ClaimPolicy.shownProposal(status: .awaitingSecondApproval, proposed: 60_000) == 60_000)
        #expect(ClaimPolicy.shownProposal(status: .approved, proposed: 60_000) == nil)
    }
}
