import Foundation
import Testing
@testable import WaybillCore

@Suite("Administration rules: who moderates, re-authentication, reports, the audit log, what a ban withdraws")
struct AdministrationRulesTests {
    @Test("Only admins moderate; managers run the operation and restrict nobody; nobody restricts themself")
    func whoModerates() {
        let me = UserID(UUID()), other = UserID(UUID())
        #expect(Permission.moderate.capabilities == [.admin])
        #expect(CapabilityPolicy.mayRestrict(other, targetHas: [.sender], by: me, having: [.manager, .driver]) == .forbidden)
        #expect(CapabilityPolicy.mayRestrict(other, targetHas: [.admin], by: me, having: [.admin]) == .allowed)
        #expect(CapabilityPolicy.mayRestrict(me, targetHas: [.admin], by: me, having: [.admin]) == .notOnSelf)
    }

    @Test("A password counts as recent for 15 minutes, not before it was proven, and never on overflow")
    func recentPassword() {
        let proven: Int64 = 1_800_000_000_000
        #expect(Reauthentication.isRecent(provenAt: proven, now: proven))
        #expect(Reauthentication.isRecent(provenAt: proven, now: proven + 15 * 60_000))
        #expect(!Reauthentication.isRecent(provenAt: proven, now: proven + 15 * 60_000 + 1))
        #expect(!Reauthentication.isRecent(provenAt: proven, now: proven - 1), "a proof from the future is no proof")
        #expect(!Reauthentication.isRecent(provenAt: .min, now: .max))
        #expect(!Reauthentication.isRecent(provenAt: 0, now: proven))
    }

    @Test("Reports leave the queue once: pending to any decision, reviewed to a final one, closed ones stay closed")
    func reportDecisions() {
        let allowed: Set<String> = ["pending>reviewed", "pending>dismissed", "pending>action_taken", "reviewed>dismissed", "reviewed>action_taken"]
        for from in ReportStatus.allCases {
            for to in ReportStatus.allCases {
                #expect(ReportDecisionRule.next(from: from, to: to) == allowed.contains("\(from.rawValue)>\(to.rawValue)"), "\(from) → \(to)")
            }
        }
    }

    @Test("An audit line's state is a JSON object, keys sorted, nil values left out, every character escaped")
    func snapshots() throws {
        let text = AuditEntry.snapshot(["b": "2", "a": "quote \" and \\ and\nline\u{1}", "gone": nil])
        #expect(text == #"{"a":"quote \" and \\ and\nline\u0001","b":"2"}"#)
        let parsed = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: String]
        #expect(parsed == ["a": "quote \" and \\ and\nline\u{1}", "b": "2"])
        #expect(AuditEntry.snapshot([:]) == "{}")
    }

    @Test("An exported line is UTC, names the operator when nobody signed in acted, and defuses spreadsheet formulas")
    func csvRows() {
        let entry = AuditEntry(id: 7, at: 1_795_000_000_123, actor: nil, action: .accountBanned, targetKind: .user, targetID: "abc",
                               before: "{}", after: #"{"restriction":"banned"}"#, reason: "=HYPERLINK(\"http://evil\")", requestID: "r-1", address: "203.0.113.9")
        let row = entry.csvRow
        #expect(row.count == AuditEntry.csvHeader.count)
        #expect(row[1] == "2026-11-18T11:06:40.123Z" && row[2] == "operator" && row[3] == "account.banned")
        #expect(row[8] == "'=HYPERLINK(\"http://evil\")")
    }

    @Test("A search is checked: a reversed period, a limit out of range, an over-long target; blanks are no filter")
    func searches() {
        #expect(throws: FieldErrorsError.self) { try AuditSearch(from: 10, to: 5).validated().get() }
        #expect(throws: FieldErrorsError.self) { try AuditSearch(limit: 0).validated().get() }
        #expect(throws: FieldErrorsError.self) { try AuditSearch(limit: 201).validated().get() }
        #expect(throws: FieldErrorsError.self) { try AuditSearch(targetID: String(repeating: "x", count: 101)).validated().get() }
        #expect((try? AuditSearch(limit: 50_000).validated(maxLimit: AuditSearch.maxExport).get()) != nil)
        #expect((try? AuditSearch(targetID: "   ").validated().get())?.targetID == nil)
        #expect(AuditAction(rawValue: "nothing") == nil && AuditAction(rawValue: "account.banned") == .accountBanned)
    }

    @Test("A ban withdraws what is not yet under way: waiting requests, shipments not yet picked up; a parcel on its way stays")
    func banWithdrawal() {
        #expect(BanWithdrawal.outcome(request: .requested, shipment: nil) == .cancelRequest)
        for status in [OrderStatus.awaitingPayment, .pending, .assigned, .accepted] {
            #expect(BanWithdrawal.outcome(request: .accepted, shipment: status) == .cancelShipment, "\(status)")
        }
        for status in [OrderStatus.inTransit, .delivered, .failed, .cancelled] {
            #expect(BanWithdrawal.outcome(request: .accepted, shipment: status) == .leave, "\(status)")
        }
        for status in [TripRequestStatus.rejected, .expired, .cancelled, .lapsed] {
            #expect(BanWithdrawal.outcome(request: status, shipment: .pending) == .leave)
        }
        #expect(BanWithdrawal.unpublishesTrip(cancelled: false, departsUntil: 100, now: 50))
        #expect(!BanWithdrawal.unpublishesTrip(cancelled: false, departsUntil: 100, now: 100), "a trip gone by closes by itself")
        #expect(!BanWithdrawal.unpublishesTrip(cancelled: true, departsUntil: 100, now: 50))
    }

    @Test("The server may cancel a paid shipment before pickup (a ban), never once it is on its way")
    func systemCancellation() {
        let leg = LegState(.traveller, .accepted)
        #expect(ShipmentStatus.decide(.cancel, leg: leg, awaitingPayment: false, as: [.system]) == .allowed(.cancelled))
        #expect(ShipmentStatus.decide(.cancel, leg: LegState(.fleet, .assigned), awaitingPayment: false, as: [.system]) == .allowed(.cancelled))
        #expect(ShipmentStatus.decide(.cancel, leg: LegState(.traveller, .inTransit), awaitingPayment: false, as: [.system]) != .allowed(.cancelled))
        #expect(OrderStateMachine.decide(.cancel, from: .inTransit, as: [.system]) == .wrongStatus(.inTransit))
    }
}
