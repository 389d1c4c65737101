import Testing
@testable import WaybillCore

@Suite("Order state machine")
struct OrderStateMachineTests {
    /// Every (status, action, capacity) that is allowed, written out by hand from the issue, with
    /// where it leads. Everything not listed must be refused.
    static let allowed: [String: OrderStatus] = [
        "awaiting_payment confirm_payment system": .pending,
        "awaiting_payment cancel owner": .cancelled,
        "awaiting_payment cancel manager": .cancelled,
        "awaiting_payment cancel system": .cancelled,
        "pending assign manager": .assigned,
        "pending cancel owner": .cancelled,
        "pending cancel manager": .cancelled,
        "pending cancel system": .cancelled,  // a ban withdraws the shipment, before pickup
        "assigned reassign manager": .assigned,
        "assigned accept assignee": .accepted,
        "assigned fail assignee": .failed,
        "assigned cancel owner": .cancelled,
        "assigned cancel manager": .cancelled,
        "assigned cancel system": .cancelled,
        "accepted reassign manager": .assigned,
        "accepted pickup assignee": .inTransit,
        "accepted fail assignee": .failed,
        "accepted cancel owner": .cancelled,
        "accepted cancel manager": .cancelled,
        "accepted cancel system": .cancelled,
        "in_transit deliver assignee": .delivered,
        "in_transit fail assignee": .failed,
        "in_transit cancel manager": .cancelled,
        "failed assign manager": .assigned,
        "failed cancel manager": .cancelled,
    ]

    @Test("every status × action × single capacity gives exactly the hand-written answer")
    func exhaustiveTable() {
        var checked = 0
        for status in OrderStatus.allCases {
            for action in OrderAction.allCases {
                for capacity in OrderCapacity.allCases {
                    let decision = OrderStateMachine.decide(action, from: status, as: [capacity])
                    let key = "\(status.rawValue) \(action.rawValue) \(capacity.rawValue)"
                    if let target = Self.allowed[key] {
                        #expect(decision == .allowed(target), "\(key)")
                    } else if case .allowed = decision {
                        Issue.record("\(key) should be refused, got \(decision)")
                    }
                    checked += 1
                }
            }
        }
        #expect(checked == 8 * 8 * 5)
    }

    @Test("a capacity that can never take an action is forbidden; one that can, but not now, is told the status")
    func forbiddenVersusWrongStatus() {
        #expect(OrderStateMachine.decide(.assign, from: .pending, as: [.assignee]) == .forbidden)
        #expect(OrderStateMachine.decide(.accept, from: .assigned, as: [.owner]) == .forbidden)
        #expect(OrderStateMachine.decide(.confirmPayment, from: .awaitingPayment, as: [.manager]) == .forbidden)
        #expect(OrderStateMachine.decide(.assign, from: .assigned, as: [.manager]) == .wrongStatus(.assigned))
        #expect(OrderStateMachine.decide(.cancel, from: .inTransit, as: [.owner]) == .wrongStatus(.inTransit))
        #expect(OrderStateMachine.decide(.deliver, from: .accepted, as: [.assignee]) == .wrongStatus(.accepted))
    }

    @Test("a manager who assigned the order to themself can do the driver's steps")
    func managerAsAssignee() {
        let both: Set<OrderCapacity> = [.manager, .assignee]
        #expect(OrderStateMachine.decide(.accept, from: .assigned, as: both) == .allowed(.accepted))
        #expect(OrderStateMachine.decide(.cancel, from: .inTransit, as: both) == .allowed(.cancelled))
        #expect(OrderStateMachine.availableActions(from: .assigned, as: both) == [.reassign, .accept, .fail, .cancel])
    }

    @Test("the buttons offered are exactly the actions the rules allow, for every status and every mix of capacities")
    func availableActionsFollowTheRules() {
        let all = OrderCapacity.allCases
        for status in OrderStatus.allCases {
            for mask in 0..<(1 << all.count) {
                let capacities = Set(all.enumerated().filter { mask & (1 << $0.offset) != 0 }.map(\.element))
                let allowed = OrderAction.allCases.filter {
                    if case .allowed = OrderStateMachine.decide($0, from: status, as: capacities) { return true }
                    return false
                }
                #expect(OrderStateMachine.availableActions(from: status, as: capacities) == allowed, "\(status) as \(capacities)")
            }
        }
        #expect(OrderStateMachine.availableActions(from: .pending, as: [.manager]) == [.assign, .cancel])
        #expect(OrderStateMachine.availableActions(from: .pending, as: []).isEmpty)
    }

    @Test("delivered and cancelled orders accept nothing more, from anyone")
    func finalStatuses() {
        for status in OrderStatus.allCases where status.isFinal {
            #expect(OrderStateMachine.availableActions(from: status, as: Set(OrderCapacity.allCases)).isEmpty)
        }
    }

    @Test("every status can be reached from a new order")
    func reachability() {
        var reached: Set<OrderStatus> = [.awaitingPayment]
        var changed = true
        while changed {
            changed = false
            for rule in OrderStateMachine.rules where !reached.isDisjoint(with: rule.from) && !reached.contains(rule.to) {
                reached.insert(rule.to)
                changed = true
            }
        }
        #expect(reached == Set(OrderStatus.allCases))
    }
}
