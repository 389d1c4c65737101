import Foundation
import Testing
@testable import WaybillCore

/// The rules of who may see and do what, each written out by hand and checked over every status,
/// every role and every combination of capacities, so that a new status or role cannot slip
/// through without somebody deciding what it means.
@Suite("Policies")
struct PolicyTests {
    static let everyCapacitySet: [Set<OrderCapacity>] = {
        let all = OrderCapacity.allCases
        return (0..<(1 << all.count)).map { mask in Set(all.enumerated().filter { mask & (1 << $0.offset) != 0 }.map(\.element)) }
    }()

    @Test("Each role's capabilities give exactly the permissions written here: every account sends, drivers drive, managers manage and drive")
    func permissionsByRole() {
        let expected: [Role: Set<Permission>] = [
            .customer: [.placeOrders],
            .driver: [.placeOrders, .drive],
            .manager: [.placeOrders, .manageUsers, .manageTariff, .dispatch, .drive, .readAllStatements, .decideClaims],
        ]
        for role in Role.allCases {
            let granted = Set(Permission.allCases.filter { $0.isGranted(to: Capability.granted(to: role)) })
            #expect(granted == expected[role], "\(role)")
        }
        // Capabilities one at a time.
        #expect(Set(Permission.allCases.filter { $0.isGranted(to: [.admin]) }) == [.manageUsers, .manageTravel, .manageCounters, .moderate,
                                                                                            .manageInsurance, .decideClaims, .manageLoyalty, .managePlans])
        #expect(Set(Permission.allCases.filter { $0.isGranted(to: [.counter]) }) == [.receiveAtCounter])
        #expect(Set(Permission.allCases.filter { $0.isGranted(to: [.traveller]) }).isEmpty)
        #expect(Set(Permission.allCases.filter { $0.isGranted(to: [.receiver]) }).isEmpty, "a suspended account acts on nothing")
    }

    @Test("Capacities: the customer owns, the driver carries, dispatch manages; a stranger has none")
    func capacities() {
        let customer = UserID.random(), driver = UserID.random(), stranger = UserID.random()
        let parties = OrderParties(customerID: customer, driverID: driver)
        #expect(OrderPolicy.capacities(of: Caller(id: customer, role: .customer), for: parties) == [.owner])
        #expect(OrderPolicy.capacities(of: Caller(id: driver, role: .driver), for: parties) == [.assignee])
        #expect(OrderPolicy.capacities(of: Caller(id: stranger, role: .driver), for: parties).isEmpty)
        #expect(OrderPolicy.capacities(of: Caller(id: stranger, role: .customer), for: parties).isEmpty)
        #expect(OrderPolicy.capacities(of: Caller(id: stranger, role: .manager), for: parties) == [.manager])
        // A manager who took the order themself is both.
        #expect(OrderPolicy.capacities(of: Caller(id: driver, role: .manager), for: parties) == [.manager, .assignee])
        #expect(OrderPolicy.capacities(of: Caller(id: driver, role: .driver), for: OrderParties(customerID: customer, driverID: nil)).isEmpty)
    }

    @Test("Lists open on what one sent, what a driver carries, or everything for dispatch; a suspended account still sees what it sent")
    func listScopes() {
        let id = UserID.random()
        #expect(OrderPolicy.listScope(for: Caller(id: id, role: .customer)) == .placedBy(id))
        #expect(OrderPolicy.listScope(for: Caller(id: id, role: .driver)) == .assignedTo(id))
        #expect(OrderPolicy.listScope(for: Caller(id: id, role: .manager)) == .all)
        #expect(OrderPolicy.defaultBox(for: Caller(id: id, role: .driver)) == .carrying)
        #expect(OrderPolicy.listScope(for: Caller(id: id, capabilities: [.receiver])) == .placedBy(id))
        // A driver sends too, from the box they switch to.
        #expect(OrderPolicy.listScope(for: Caller(id: id, role: .driver), box: .sent) == .placedBy(id))
        #expect(OrderStatus.allCases.filter { !$0.listedForCustomer } == [.awaitingPayment])
        #expect(OrderStatus.allCases.filter { !$0.billed } == [.cancelled], "a cancelled order is on no statement")
    }

    /// "status action capacity" for everything allowed; every other combination is refused.
    static let sideActionsAllowed: Set<String> = {
        var allowed: Set<String> = []
        for status in OrderStatus.allCases {
            // The receiver learns of a shipment once it is on its way, not while its checkout is unpaid.
            for capacity in OrderCapacity.allCases where !(capacity == .receiver && status == .awaitingPayment) {
                allowed.insert("\(status.rawValue) see \(capacity.rawValue)")
            }
            for capacity in [OrderCapacity.owner, .manager, .system] {
                allowed.insert("\(status.rawValue) revoke_tracking_link \(capacity.rawValue)")
                allowed.insert("\(status.rawValue) confirm_payment \(capacity.rawValue)")
                if status != .cancelled {
                    allowed.insert("\(status.rawValue) see_tracking_link \(capacity.rawValue)")
                    allowed.insert("\(status.rawValue) renew_tracking_link \(capacity.rawValue)")
                }
            }
        }
        for status in ["awaiting_payment", "pending", "assigned", "accepted"] { allowed.insert("\(status) add_photo owner") }
        for status in ["accepted", "in_transit"] { allowed.insert("\(status) share_position assignee") }
        allowed.insert("awaiting_payment pay owner")
        // The sender claims the insurance; when is `ClaimPolicy.filing`'s to say.
        for status in OrderStatus.allCases { allowed.insert("\(status.rawValue) file_claim owner") }
        allowed.insert("delivered confirm_receipt receiver")
        allowed.insert("in_transit see_recipient_code receiver")
        for status in ["delivered", "failed"] {
            allowed.insert("\(status) refund manager")
            allowed.insert("\(status) refund system")
        }
        return allowed
    }()

    @Test("Side actions: exactly the written combinations of status, action and capacity are allowed")
    func sideActions() {
        for status in OrderStatus.allCases {
            for action in OrderSideAction.allCases {
                for capacity in OrderCapacity.allCases {
                    let key = "\(status.rawValue) \(action.rawValue) \(capacity.rawValue)"
                    let decision = OrderPolicy.decide(action, status: status, as: [capacity])
                    if Self.sideActionsAllowed.contains(key) {
                        #expect(decision == .allowed(status), "\(key)")
                    } else {
                        #expect(decision != .allowed(status), "\(key) should be refused")
                    }
                }
                #expect(OrderPolicy.decide(action, status: status, as: []) == .forbidden, "nobody: \(status) \(action)")
            }
        }
    }

    @Test("Several capacities allow what any one of them allows")
    func capacitiesCombine() {
        for status in OrderStatus.allCases {
            for action in OrderSideAction.allCases {
                for set in Self.everyCapacitySet where set.count > 1 {
                    let any = set.contains { OrderPolicy.allows(action, status: status, as: [$0]) }
                    #expect(OrderPolicy.allows(action, status: status, as: set) == any, "\(status) \(action) \(set)")
                }
            }
        }
    }

    @Test("A capacity that may act but not now is told so (409), one that never may is forbidden (403)")
    func wrongStatusVersusForbidden() {
        #expect(OrderPolicy.decide(.addPhoto, status: .inTransit, as: [.owner]) == .wrongStatus(.inTransit))
        #expect(OrderPolicy.decide(.addPhoto, status: .pending, as: [.manager]) == .forbidden)
        #expect(OrderPolicy.decide(.renewTrackingLink, status: .cancelled, as: [.owner]) == .wrongStatus(.cancelled))
        #expect(OrderPolicy.decide(.renewTrackingLink, status: .pending, as: [.assignee]) == .forbidden)
        #expect(OrderPolicy.decide(.sharePosition, status: .assigned, as: [.assignee]) == .wrongStatus(.assigned))
    }

    @Test("Live channel: the customer and managers follow everything, the driver their own view, the receiver the tracking link's view")
    func liveFeeds() {
        for set in Self.everyCapacitySet {
            let expected: OrderPolicy.LiveFeedKind? =
                !set.isDisjoint(with: [.owner, .manager, .system]) ? .full : set.contains(.assignee) ? .assignee
                : set.contains(.receiver) ? .receiver : nil
            #expect(OrderPolicy.liveFeed(for: set) == expected, "\(set)")
        }
    }

    @Test("Party details: least exposure for every set of capacities")
    func partyDetails() {
        for set in Self.everyCapacitySet {
            let d = PartyDetails.visible(to: set)
            let staff = set.contains(.manager) || set.contains(.system)
            let receiver = set.contains(.receiver)
            #expect(d.customer == (staff || set.contains(.assignee) || receiver), "\(set)")
            #expect(d.customerEmail == (staff || set.contains(.owner)), "\(set)")
            #expect(d.recipientEmail == (staff || set.contains(.owner) || receiver), "\(set)")
            #expect(d.recipientPhone == (staff || set.contains(.owner) || set.contains(.assignee) || receiver), "\(set)")
            #expect(d.money == (staff || set.contains(.owner) || set.contains(.assignee)), "\(set)")
            #expect(d.driverEmail == staff, "\(set)")
            #expect(d.staffLastNames == (staff || set.contains(.assignee)), "\(set)")
        }
        // The settled disagreements: the driver never sees an email; the customer knows the driver by first name.
        let driver = PartyDetails.visible(to: [.assignee]), customer = PartyDetails.visible(to: [.owner])
        #expect(!driver.customerEmail && !driver.recipientEmail && driver.recipientPhone)
        #expect(!customer.staffLastNames && !customer.driverEmail)
    }

    @Test("The public page: stages always, the driver's first name once they set off, the position only in transit")
    func publicView() {
        let expected: [OrderStatus: (name: Bool, eta: Bool, position: Bool)] = [
            .awaitingPayment: (false, false, false), .pending: (false, false, false), .assigned: (false, false, false),
            .accepted: (true, true, false), .inTransit: (true, true, true), .delivered: (true, false, false),
            .cancelled: (false, false, false), .failed: (false, false, false),
        ]
        for status in OrderStatus.allCases {
            let view = PublicTrackingView.visible(in: status)
            let want = expected[status]!
            #expect(view.driverFirstName == want.name && view.eta == want.eta && view.position == want.position, "\(status)")
        }
    }

    @Test("Status meanings: the driver's list, next stops, set-off, the sender's parcel and the board's columns")
    func statusMeanings() {
        #expect(OrderStatus.driverListStatuses == [.assigned, .accepted, .inTransit])
        #expect(OrderStatus.allCases.filter(\.isOnDriversList) == [.assigned, .accepted, .inTransit])
        #expect(OrderStatus.allCases.compactMap(\.nextStop) == [.pickup, .dropoff])
        #expect(OrderStatus.accepted.nextStop == .pickup && OrderStatus.inTransit.nextStop == .dropoff)
        #expect(OrderStatus.allCases.filter(\.driverHasSetOff) == [.accepted, .inTransit, .delivered])
        #expect(OrderStatus.allCases.filter(\.parcelWithSender) == [.awaitingPayment, .pending, .assigned, .accepted])
        #expect(OrderStatus.allCases.filter(\.endsDriversWork) == [.delivered, .failed])
        // Every status on the driver's list has a rank and no other does.
        #expect(OrderStatus.allCases.filter { $0.driverListRank != nil } == OrderStatus.allCases.filter(\.isOnDriversList))
        #expect(DispatchColumn.new.statuses == [.pending])
        #expect(DispatchColumn.assigned.statuses == [.assigned, .accepted])
        #expect(DispatchColumn.underWay.statuses == [.inTransit])
        #expect(DispatchColumn.failed.statuses == [.failed])
        // Every status is either on the board or final or not yet paid.
        for status in OrderStatus.allCases {
            #expect((status.dispatchColumn != nil) != (status.isFinal || status == .awaitingPayment), "\(status)")
        }
    }

    @Test("Dispatch: assign from new or failed, reassign from assigned or accepted, nothing otherwise")
    func assignOrReassign() {
        let expected: [OrderStatus: OrderAction] = [.pending: .assign, .failed: .assign, .assigned: .reassign, .accepted: .reassign]
        for status in OrderStatus.allCases { #expect(DispatchPolicy.assignAction(for: status) == expected[status], "\(status)") }
    }

    @Test("Dispatch: an order goes to an active driver, or a manager to themself; not to someone whose driver capability was taken back, nor suspended")
    func whoMayCarry() {
        let manager = Caller(id: .random(), role: .manager), other = Caller(id: .random(), role: .manager)
        let driver = Caller(id: .random(), role: .driver), customer = Caller(id: .random(), role: .customer)
        #expect(DispatchPolicy.mayCarry(assignee: driver, disabled: false, assignedBy: manager))
        #expect(!DispatchPolicy.mayCarry(assignee: driver, disabled: true, assignedBy: manager))
        #expect(DispatchPolicy.mayCarry(assignee: manager, disabled: false, assignedBy: manager))
        #expect(!DispatchPolicy.mayCarry(assignee: other, disabled: false, assignedBy: manager))
        #expect(!DispatchPolicy.mayCarry(assignee: customer, disabled: false, assignedBy: manager))
        #expect(!DispatchPolicy.mayCarry(assignee: driver, disabled: false, assignedBy: driver))
        #expect(!DispatchPolicy.mayCarry(assignee: Caller(id: driver.id, capabilities: Capability.everyone), disabled: false, assignedBy: manager))
        #expect(!DispatchPolicy.mayCarry(assignee: Caller(id: driver.id, capabilities: [.receiver]), disabled: false, assignedBy: manager))
        // A customer made a driver is one.
        #expect(DispatchPolicy.mayCarry(assignee: Caller(id: customer.id, capabilities: Capability.everyone.union([.driver])), disabled: false, assignedBy: manager))
    }

    @Test("Ranking: on duty first, then nearest, then the lightest load, then by name")
    func ranking() {
        func c(_ name: String, duty: Bool, load: Int, km: Int?) -> DriverCandidate {
            DriverCandidate(id: .random(), name: name, onDuty: duty, load: load, distanceToPickupMeters: km.map { $0 * 1000 })
        }
        let ranked = DispatchPolicy.rank([
            c("Off", duty: false, load: 0, km: nil), c("Far", duty: true, load: 0, km: 9), c("NearBusy", duty: true, load: 3, km: 1),
            c("NearFree", duty: true, load: 0, km: 1), c("Unknown", duty: true, load: 0, km: nil), c("Anna", duty: true, load: 3, km: 1),
        ])
        #expect(ranked.map(\.name) == ["NearFree", "Anna", "NearBusy", "Far", "Unknown", "Off"])
    }

    @Test("The driver's day: under way, then accepted, then new, each oldest first; nothing else")
    func driverDay() {
        let items: [(OrderStatus, Int64)] = [(.assigned, 1), (.inTransit, 5), (.accepted, 3), (.delivered, 0), (.inTransit, 2), (.assigned, 0)]
        let sorted = DriverDayPolicy.sorted(items, status: \.0, createdAt: \.1)
        #expect(sorted.map { "\($0.0.rawValue)@\($0.1)" } == ["in_transit@2", "in_transit@5", "accepted@3", "assigned@0", "assigned@1"])
    }

    @Test("Payment options: card and cash always, TWINT in francs, invoice for companies staff have vetted")
    func paymentOptions() {
        #expect(PaymentOptions.available(isCompany: false, vetted: false, currency: "CHF") == [.card, .twint, .cash])
        #expect(PaymentOptions.available(isCompany: true, vetted: true, currency: "CHF") == [.card, .twint, .cash, .invoice])
        #expect(PaymentOptions.available(isCompany: true, vetted: false, currency: "CHF") == [.card, .twint, .cash])
        #expect(PaymentOptions.available(isCompany: false, vetted: false, currency: "EUR") == [.card, .cash])
        #expect(PaymentOptions.available(isCompany: true, vetted: true, currency: "EUR") == [.card, .cash, .invoice])
        #expect(PaymentOptions.refusal(.twint, isCompany: true, vetted: true, currency: "EUR") == "twint_requires_chf")
        #expect(PaymentOptions.refusal(.invoice, isCompany: false, vetted: false, currency: "CHF") == "invoice_requires_company")
        #expect(PaymentOptions.refusal(.invoice, isCompany: false, vetted: true, currency: "CHF") == "invoice_requires_company",
                "vetting means nothing on a private account")
        #expect(PaymentOptions.refusal(.invoice, isCompany: true, vetted: false, currency: "CHF") == "company_not_vetted")
        #expect(PaymentOptions.vetted([.sender, .receiver, .invoice]) && !PaymentOptions.vetted(Capability.granted(to: .manager)))
        // The order checks refuse exactly what the options leave out.
        for company in [false, true] {
            for vetted in [false, true] {
                for currency in ["CHF", "EUR"] {
                    for method in PaymentMethod.allCases {
                        let offered = PaymentOptions.available(isCompany: company, vetted: vetted, currency: currency).contains(method)
                        #expect(offered == (PaymentOptions.refusal(method, isCompany: company, vetted: vetted, currency: currency) == nil))
                    }
                }
            }
        }
    }

    @Test("Accounts: only managers manage them, and not their own role or access")
    func accounts() {
        let manager = Caller(id: .random(), role: .manager)
        #expect(AccountPolicy.mayUpdate(.random(), changingRole: true, disabling: true, by: manager) == .allowed)
        #expect(AccountPolicy.mayUpdate(manager.id, changingRole: true, disabling: false, by: manager) == .notOnSelf)
        #expect(AccountPolicy.mayUpdate(manager.id, changingRole: false, disabling: true, by: manager) == .notOnSelf)
        #expect(AccountPolicy.mayUpdate(manager.id, changingRole: false, disabling: false, by: manager) == .allowed)
        for role in [Role.customer, .driver] {
            #expect(AccountPolicy.mayUpdate(.random(), changingRole: false, disabling: false, by: Caller(id: .random(), role: role)) == .forbidden)
        }
        #expect(AccountPolicy.creatableRoles == [.driver, .manager])
    }
}

@Suite("Error codes")
struct ErrorCodeTests {
    @Test("Every error code has a message in English and in French, and they differ")
    func everyCodeSpeaksBothLanguages() {
        for code in ErrorCode.allCases {
            #expect(!code.english.isEmpty && !code.french.isEmpty, "\(code)")
            #expect(code.english != code.french, "\(code.rawValue) is not translated")
            #expect(code.message(french: true) == code.french && code.message(french: false) == code.english)
        }
        #expect(Set(ErrorCode.allCases.map(\.rawValue)).count == ErrorCode.allCases.count)
        #expect(ErrorCode.allCases.allSatisfy { $0.rawValue.allSatisfy { $0.isLowercase || $0 == "_" } })
    }
}

@Suite("Typed ids")
struct TypedIDTests {
    @Test("An id is the bare UUID on the wire, and text that is not a UUID is no id")
    func wireForm() throws {
        let id = OrderID.random()
        let json = try JSONEncoder().encode(["orderId": id])
        #expect(String(decoding: json, as: UTF8.self) == #"{"orderId":"\#(id.uuidString)"}"#)
        #expect(try JSONDecoder().decode([String: OrderID].self, from: json)["orderId"] == id)
        #expect(OrderID(uuidString: id.uuidString.lowercased()) == id)
        #expect(UserID(uuidString: "WB-1234") == nil)
        // That an order's id given where a user's is meant does not compile is the compiler's to check.
    }

    @Test("An id is written as text exactly as Foundation writes it, for every byte value")
    func textMatchesFoundation() {
        var ids = (0..<500).map { _ in UUID() }
        ids.append(UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)))
        ids.append(UUID(uuid: (255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255)))
        ids.append(UUID(uuid: (0x01, 0x23, 0x45, 0x67, 0x89, 0xAB, 0xCD, 0xEF, 0xFE, 0xDC, 0xBA, 0x98, 0x76, 0x54, 0x32, 0x10)))
        for id in ids {
            #expect(id.text == id.uuidString)
            #expect(OrderID(rawValue: id).uuidString == id.uuidString)
        }
    }
}

@Suite("The receiver and the boxes")
struct ReceiverPolicyTests {
    let customer = UserID.random(), driver = UserID.random(), bea = UserID.random()

    @Test("The receiver is whoever has verified the recipient's email, in any case; an unverified or other email is nobody")
    func receiverByVerifiedEmail() {
        let parties = OrderParties(customerID: customer, driverID: driver, recipientEmail: "Bea@Example.com")
        #expect(OrderPolicy.capacities(of: Caller(id: bea, role: .customer, verifiedEmail: "bea@example.COM"), for: parties) == [.receiver])
        #expect(OrderPolicy.capacities(of: Caller(id: bea, role: .customer), for: parties).isEmpty)
        #expect(OrderPolicy.capacities(of: Caller(id: bea, role: .customer, verifiedEmail: "bob@example.com"), for: parties).isEmpty)
        #expect(OrderPolicy.capacities(of: Caller(id: bea, role: .customer, verifiedEmail: "bea@example.com"),
                                       for: OrderParties(customerID: customer, driverID: nil)).isEmpty, "no recipient email, no receiver")
        // The sender who sends to themself is both.
        #expect(OrderPolicy.capacities(of: Caller(id: customer, role: .customer, verifiedEmail: "bea@example.com"), for: parties) == [.owner, .receiver])
    }

    @Test("Each account has the boxes its permissions give; incoming needs a verified email; a box not theirs is no scope")
    func boxes() {
        let verified = Caller(id: bea, role: .customer, verifiedEmail: "bea@example.com")
        #expect(OrderPolicy.boxes(for: verified) == [.sent, .incoming])
        #expect(OrderPolicy.boxes(for: Caller(id: bea, role: .customer)) == [.sent])
        #expect(OrderPolicy.boxes(for: Caller(id: driver, role: .driver, verifiedEmail: "d@x.ch")) == [.sent, .incoming, .carrying])
        #expect(OrderPolicy.boxes(for: Caller(id: customer, role: .manager, verifiedEmail: "m@x.ch")) == [.sent, .incoming, .carrying, .all])
        // A traveller (a completed traveller profile) switches between sending, receiving and carrying.
        #expect(OrderPolicy.boxes(for: Caller(id: bea, capabilities: Capability.everyone.union([.traveller]), verifiedEmail: "bea@example.com"))
                == [.sent, .incoming, .carrying])
        // Suspended: only what comes to them.
        #expect(OrderPolicy.boxes(for: Caller(id: bea, capabilities: [.receiver], verifiedEmail: "bea@example.com")) == [.incoming])
        #expect(OrderPolicy.listScope(for: verified, box: .incoming) == .addressedTo("bea@example.com"))
        #expect(OrderPolicy.listScope(for: verified, box: .all) == nil)
        #expect(OrderPolicy.listScope(for: verified, box: nil) == OrderPolicy.listScope(for: verified))
    }

    @Test("What a receiver sees: the sender's name and their own contact, never the money or the staff's emails")
    func receiverSeesNoMoney() {
        let details = PartyDetails.visible(to: [.receiver])
        #expect(details.customer && !details.customerEmail && details.recipientEmail && !details.money && !details.driverEmail)
        let shipment = ShipmentVisibility.visible(to: [.receiver])
        #expect(shipment.senderName && !shipment.money && !shipment.amountDue && shipment.proofs && !shipment.trackingLink)
        #expect(OrderCapacity.receiver.shipmentRole == .receiver)
    }
}
