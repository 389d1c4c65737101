import Foundation
import Testing
@testable import WaybillCore

@Suite("Capabilities and restrictions")
struct CapabilityTests {
    let me = UserID.random(), other = UserID.random()

    @Test("Today's roles become capabilities; every account sends and receives")
    func rolesAsCapabilities() {
        for role in Role.allCases {
            let granted = Capability.granted(to: role)
            #expect(Capability.everyone.isSubset(of: granted), "\(role)")
            // The capabilities grant what the role's permissions allow today.
            #expect(granted.contains(.driver) == (role != .customer), "\(role)")
            #expect(granted.contains(.manager) == (role == .manager), "\(role)")
            #expect(!granted.contains(.admin) && !granted.contains(.traveller), "\(role)")
            // The role older clients read comes back from the capabilities.
            #expect(Capability.primaryRole(of: granted) == role, "\(role)")
        }
        #expect(Capability.primaryRole(of: [.admin, .counter]) == .customer)
    }

    @Test("Stored staff capabilities read back as written; unknown names and everyone's capabilities are not stored")
    func storedList() {
        #expect(Capability.storedList([.manager, .driver, .sender]) == "driver,manager")
        #expect(Capability.parseList("driver,manager") == [.driver, .manager])
        #expect(Capability.parseList("driver,pilot,sender,,admin") == [.driver, .admin])
        #expect(Capability.parseList("").isEmpty)
        for subset in 0..<(1 << Capability.staff.count) {
            let set = Set(Capability.staff.sorted { $0.rawValue < $1.rawValue }.enumerated().filter { subset & (1 << $0.offset) != 0 }.map(\.element))
            #expect(Capability.parseList(Capability.storedList(set)) == set)
        }
        // Sending and receiving come with a verified email, not from storage.
        #expect(Capability.held(staff: [.driver], emailVerified: true) == [.sender, .receiver, .driver])
        #expect(Capability.held(staff: [.driver], emailVerified: false) == [.driver])
    }

    @Test("A role change keeps the capabilities a role does not speak of (counter, admin)")
    func roleChange() {
        #expect(Capability.staff(for: .driver, keeping: [.manager, .driver, .admin]) == [.driver, .admin])
        #expect(Capability.staff(for: .manager, keeping: [.counter]) == [.manager, .driver, .counter])
        #expect(Capability.staff(for: .customer, keeping: [.driver, .counter]) == [.counter])
    }

    @Test("A restriction needs a reason; a suspension ends in the future within a year; a ban has no end")
    func restrictionRequests() {
        let now: Int64 = 1_800_000_000_000, day: Int64 = 86_400_000
        func fields(_ kind: Restriction.Kind, _ until: Int64?, _ reason: String) -> [String: String] {
            switch RestrictionRequest(kind: kind, until: until, reason: reason).validated(now: now) {
            case .success: [:]
            case .failure(let error): error.errors.fields
            }
        }
        #expect(fields(.suspended, now + day, "Refused three parcels") == [:])
        #expect(fields(.banned, nil, "Fraud") == [:])
        #expect(fields(.suspended, nil, "x") == ["until": "required"])
        #expect(fields(.suspended, now, "x") == ["until": "in_the_past"])
        #expect(fields(.suspended, now + 400 * day, "x") == ["until": "too_far"])
        #expect(fields(.suspended, .max, "x") == ["until": "too_far"], "no overflow at the end of time")
        #expect(fields(.suspended, .min, "x") == ["until": "in_the_past"])
        #expect(fields(.banned, now + day, "x") == ["until": "not_allowed"])
        #expect(fields(.banned, nil, "   \n") == ["reason": "required"])
        #expect(fields(.banned, nil, String(repeating: "é", count: 501)) == ["reason": "too_long"])
        if case .success(let clean) = RestrictionRequest(kind: .banned, until: nil, reason: "  Fraud \n").validated(now: now) {
            #expect(clean.reason == "Fraud")
        } else { Issue.record("a padded reason is trimmed, not refused") }
    }

    @Test("The restriction an account row keeps is in force until a suspension's end, and a ban always")
    func restrictionInForce() {
        #expect(Restriction.inForce(kind: "banned", until: nil, at: 5) == .banned)
        #expect(Restriction.inForce(kind: "suspended", until: 10, at: 5) == .suspended)
        #expect(Restriction.inForce(kind: "suspended", until: 10, at: 10) == nil)
        #expect(Restriction.inForce(kind: nil, until: nil, at: 5) == nil)
        #expect(Restriction.inForce(kind: "exiled", until: nil, at: 5) == nil)
        let held = Capability.granted(to: .manager)
        #expect(AccountStanding.effective(held, under: .suspended) == [.receiver])
        #expect(AccountStanding.effective(held, under: .banned).isEmpty)
        #expect(AccountStanding.effective(held, under: nil) == held)
    }

    @Test("Managers grant staff capabilities, only admins grant admin, nobody grants themself one, and nobody grants sender, receiver or traveller")
    func granting() {
        for capability in Capability.allCases {
            for having in [Set<Capability>(), [.manager], [.admin], [.driver], [.counter]] {
                let decision = CapabilityPolicy.mayChange(capability, on: other, by: me, having: having)
                let expected: CapabilityPolicy.Decision
                if !Capability.staff.contains(capability) { expected = .notGranted }
                else if capability == .admin { expected = having.contains(.admin) ? .allowed : .forbidden }
                else { expected = having.contains(.manager) || having.contains(.admin) ? .allowed : .forbidden }
                #expect(decision == expected, "\(capability) by \(having)")
                if Capability.staff.contains(capability) {
                    #expect(CapabilityPolicy.mayChange(capability, on: me, by: me, having: [.admin, .manager]) == .notOnSelf)
                }
            }
        }
    }

    @Test("A ban ends everything; a suspension lasts until its time and leaves only receiving; only admins restrict")
    func restrictions() {
        let caps = Capability.granted(to: .driver)
        let suspended = Restriction(kind: .suspended, until: 2_000, reason: "late twice", setBy: other, setAt: 1_000)
        let banned = Restriction(kind: .banned, until: nil, reason: "fraud", setBy: other, setAt: 1_500)
        #expect(AccountStanding.of(capabilities: caps, restrictions: [], at: 1_000) == AccountStanding(capabilities: caps, maySignIn: true, restriction: nil))
        #expect(AccountStanding.of(capabilities: caps, restrictions: [suspended], at: 1_999).capabilities == [.receiver])
        #expect(AccountStanding.of(capabilities: caps, restrictions: [suspended], at: 2_000).capabilities == caps, "over at its end")
        let both = AccountStanding.of(capabilities: caps, restrictions: [suspended, banned], at: 1_600)
        #expect(!both.maySignIn && both.capabilities.isEmpty && both.restriction == banned)
        #expect(CapabilityPolicy.mayRestrict(other, targetHas: [.admin], by: me, having: [.manager]) == .forbidden)
        #expect(CapabilityPolicy.mayRestrict(other, targetHas: [.admin], by: me, having: [.admin]) == .allowed)
        #expect(CapabilityPolicy.mayRestrict(other, targetHas: [.sender], by: me, having: [.manager]) == .forbidden, "managers run the operation, admins ban")
        #expect(CapabilityPolicy.mayRestrict(me, targetHas: [.sender], by: me, having: [.admin]) == .notOnSelf)
        #expect(CapabilityPolicy.mayRestrict(other, targetHas: [.sender], by: me, having: [.driver, .traveller]) == .forbidden)
    }
}

@Suite("The money ledger")
struct LedgerTests {
    let shipment = OrderID.random(), customer = UserID.random(), traveller = UserID.random()

    func entry(_ kind: LedgerEntryKind, _ amount: Int, _ currency: String = "CHF") -> LedgerEntry {
        LedgerEntry(kind: kind, amount: amount, currency: currency, shipment: shipment,
                    account: kind == .payout || kind == .transferReversal ? traveller : customer, at: 1)
    }

    @Test("A traveller's shipment: charged, fee and premium inside the charge, paid out, partly refunded")
    func balances() throws {
        let entries = [entry(.charge, 4_000), entry(.platformFee, 600), entry(.insurancePremium, 300), entry(.payout, 3_100), entry(.refund, 500)]
        let balance = try #require(try Ledger.balance(entries))
        #expect(balance.paidByCustomer == 3_500 && balance.refunded == 500 && balance.paidOut == 3_100)
        #expect(balance.platformFees == 600 && balance.insurancePremiums == 300 && balance.retained == 400)
        #expect(Ledger.mayRefund(3_500, of: entries) && !Ledger.mayRefund(3_501, of: entries))
        #expect(Ledger.mayPayOut(400, of: entries) && !Ledger.mayPayOut(401, of: entries))
        #expect(try Ledger.balance(entries + [entry(.transferReversal, 3_100)])?.paidOut == 0)
    }

    @Test("Every kind moves exactly the sums it should; no entries, no balance")
    func everyKind() throws {
        for kind in LedgerEntryKind.allCases {
            let balance = try #require(try Ledger.balance([entry(kind, 100)]))
            #expect(balance.paidByCustomer == kind.customerSide * 100, "\(kind)")
            #expect(balance.paidOut == kind.carrierSide * 100, "\(kind)")
        }
        #expect(try Ledger.balance([]) == nil)
    }

    @Test("Mixed currencies, empty amounts and sums beyond 64 bits are refused, never trapped on")
    func refusals() {
        #expect(throws: Ledger.Problem.mixedCurrencies) { try Ledger.balance([entry(.charge, 1), entry(.charge, 1, "EUR")]) }
        #expect(throws: Ledger.Problem.invalidEntry) { try Ledger.balance([entry(.charge, 0)]) }
        #expect(throws: Ledger.Problem.invalidEntry) { try Ledger.balance([entry(.charge, -5)]) }
        #expect(throws: Ledger.Problem.overflow) { try Ledger.balance([entry(.charge, .max), entry(.cashCollected, 1)]) }
        #expect(!Ledger.mayRefund(.max, of: [entry(.charge, .max), entry(.charge, .max)]))
        #expect(!Ledger.mayPayOut(0, of: [entry(.charge, 10)]))
    }
}

@Suite("Shipment parties and what each sees")
struct ShipmentPartyTests {
    static let everyRoleSet: [Set<ShipmentRole>] = (0..<(1 << ShipmentRole.allCases.count)).map { mask in
        Set(ShipmentRole.allCases.enumerated().filter { mask & (1 << $0.offset) != 0 }.map(\.element))
    }

    @Test("Today's order details are the one-fleet-leg case: the same answers for every set of capacities")
    func agreesWithPartyDetails() {
        for mask in 0..<(1 << 3) {
            let capacities = Set([OrderCapacity.owner, .assignee, .manager].enumerated().filter { mask & (1 << $0.offset) != 0 }.map(\.element))
            let old = PartyDetails.visible(to: capacities)
            let new = ShipmentVisibility.visible(to: Set(capacities.compactMap(\.shipmentRole)))
            #expect(old.customer == new.senderName && old.customerEmail == new.senderEmail, "\(capacities)")
            #expect(old.recipientEmail == new.receiverEmail && old.recipientPhone == new.receiverPhone, "\(capacities)")
            #expect(old.driverEmail == new.carrierEmail && old.staffLastNames == new.carrierLastNames, "\(capacities)")
            #expect(new.trackingLink == OrderPolicy.allows(.seeTrackingLink, status: .pending, as: capacities), "\(capacities)")
        }
    }

    @Test("Least exposure: a receiver sees no money and no emails; counter staff no money, no emails and no proofs; nobody but staff a carrier's email")
    func leastExposure() {
        let receiver = ShipmentVisibility.visible(to: [.receiver])
        #expect(receiver.senderName && receiver.proofs && !receiver.money && !receiver.amountDue && !receiver.senderEmail && !receiver.receiverEmail)
        let counter = ShipmentVisibility.visible(to: [.counterStaff])
        #expect(counter.senderName && counter.receiverPhone && !counter.money && !counter.senderEmail && !counter.proofs && !counter.trackingLink)
        for roles in Self.everyRoleSet {
            let seen = ShipmentVisibility.visible(to: roles)
            #expect(seen.carrierEmail == roles.contains(.manager), "\(roles)")
            #expect(!seen.money || roles.contains(.manager) || roles.contains(.sender), "\(roles)")
            // More roles never see less.
            for role in ShipmentRole.allCases {
                let more = ShipmentVisibility.visible(to: roles.union([role]))
                for (a, b) in [(seen.senderName, more.senderName), (seen.money, more.money), (seen.proofs, more.proofs),
                               (seen.receiverPhone, more.receiverPhone), (seen.trackingLink, more.trackingLink)] {
                    #expect(!a || b, "\(roles) + \(role)")
                }
            }
        }
    }

    @Test("Roles come from the parties; counter staff need the counter capability; a stranger has none (404)")
    func roles() {
        let sender = UserID.random(), receiver = UserID.random(), driver = UserID.random(), clerk = UserID.random()
        let parties = ShipmentParties(sender: sender, receiver: receiver, carriers: [driver], counterStaff: [clerk])
        #expect(parties.roles(of: sender, capabilities: Capability.everyone) == [.sender])
        #expect(parties.roles(of: receiver, capabilities: Capability.everyone) == [.receiver])
        #expect(parties.roles(of: driver, capabilities: Capability.granted(to: .driver)) == [.carrier])
        #expect(parties.roles(of: clerk, capabilities: [.counter]) == [.counterStaff])
        #expect(parties.roles(of: clerk, capabilities: Capability.everyone).isEmpty)
        #expect(parties.roles(of: .random(), capabilities: Capability.everyone).isEmpty)
        #expect(parties.roles(of: .random(), capabilities: [.manager]) == [.manager])
    }
}
