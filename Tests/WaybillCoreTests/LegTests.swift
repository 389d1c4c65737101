import Foundation
import Testing
@testable import WaybillCore

@Suite("Shipments with legs: the state machines, the derived status and the hand-over proofs")
struct LegTests {
    static func map(_ decision: OrderDecision) -> String {
        switch decision {
        case .allowed(let to): "allowed \(to.rawValue)"
        case .forbidden: "forbidden"
        case .wrongStatus: "wrong status"
        }
    }

    @Test("Today's order is a shipment with one fleet leg: every action by every capacity in every status decides the same")
    func fleetLegIsTodaysOrder() {
        var cells = 0
        for status in OrderStatus.allCases {
            let (awaiting, legStatus) = status.asFleetLeg
            #expect(ShipmentStatus.derive(awaitingPayment: awaiting, legs: [LegState(.fleet, legStatus)]) == status)
            for action in OrderAction.allCases {
                guard let legAction = action.legAction else { continue }
                for capacity in OrderCapacity.allCases {
                    let expected = Self.map(OrderStateMachine.decide(action, from: status, as: [capacity]))
                    let leg = ShipmentStatus.decide(legAction, leg: LegState(.fleet, legStatus), awaitingPayment: awaiting,
                                                    as: [capacity.legCapacity])
                    let got: String = switch leg {
                    case .allowed(let to):
                        "allowed \(ShipmentStatus.derive(awaitingPayment: awaiting && action != .cancel, legs: [LegState(.fleet, to)]).rawValue)"
                    case .forbidden: "forbidden"
                    case .wrongStatus: "wrong status"
                    }
                    #expect(got == expected, "\(status) \(action) by \(capacity)")
                    cells += 1
                }
            }
        }
        #expect(cells == OrderStatus.allCases.count * 7 * OrderCapacity.allCases.count)
    }

    @Test("Every kind of leg: starts open, can be handed over and cancelled, and nothing leaves a final status")
    func everyKindIsComplete() {
        for kind in LegKind.allCases {
            let reachable = LegStateMachine.statuses(of: kind)
            #expect(reachable.contains(.handedOver) && reachable.contains(.cancelled) && reachable.contains(.failed), "\(kind)")
            #expect(LegStateMachine.decide(.cancel, kind: kind, from: .open, as: [.sender]) == .allowed(.cancelled), "\(kind)")
            for rule in LegStateMachine.rules(for: kind) {
                #expect(rule.from.isDisjoint(with: [.handedOver, .cancelled]), "\(kind) \(rule.action) leaves a final status")
                #expect(rule.from.isSubset(of: reachable), "\(kind) \(rule.action) starts from a status the leg never has")
            }
            // A failed leg goes back to dispatch, who may still cancel it.
            #expect(LegStateMachine.decide(.cancel, kind: kind, from: .failed, as: [.manager]) == .allowed(.cancelled), "\(kind)")
        }
        #expect(LegStateMachine.statuses(of: .carrier) == [.open, .inTransit, .handedOver, .failed, .cancelled])
        #expect(LegStateMachine.statuses(of: .counter) == [.open, .held, .handedOver, .failed, .cancelled])
        #expect(!LegStateMachine.statuses(of: .traveller).contains(.assigned), "nobody assigns a traveller: they accept")
    }

    @Test("Only the carrier's own events move a carrier leg; only counter staff move a counter leg")
    func whoMovesWhat() {
        for capacity in LegCapacity.allCases where capacity != .system {
            #expect(LegStateMachine.decide(.handOver, kind: .carrier, from: .inTransit, as: [capacity]) == .forbidden, "\(capacity)")
        }
        for capacity in LegCapacity.allCases where capacity != .counterStaff {
            #expect(LegStateMachine.decide(.dropOff, kind: .counter, from: .open, as: [capacity]) == .forbidden, "\(capacity)")
        }
        #expect(LegStateMachine.decide(.decline, kind: .traveller, from: .accepted, as: [.assignee]) == .allowed(.open))
        #expect(LegStateMachine.decide(.decline, kind: .traveller, from: .inTransit, as: [.assignee]) == .wrongStatus(.inTransit))
        #expect(ShipmentStatus.decide(.accept, leg: LegState(.traveller, .open), awaitingPayment: true, as: [.assignee]) == .wrongStatus(.open),
                "a traveller's leg waits for the sender's payment")
    }

    @Test("The shipment's status follows its first unfinished leg, and is in transit once any leg is done")
    func derivedFromLegs() {
        func status(_ legs: LegState..., awaiting: Bool = false) -> OrderStatus { ShipmentStatus.derive(awaitingPayment: awaiting, legs: legs) }
        #expect(status(LegState(.counter, .open), LegState(.fleet, .open)) == .pending)
        // Dropped at a counter, the parcel waits for its driver: the shipment is where the driver's leg is.
        #expect(status(LegState(.counter, .held), LegState(.fleet, .open)) == .pending)
        #expect(status(LegState(.counter, .handedOver), LegState(.fleet, .assigned)) == .inTransit)
        #expect(status(LegState(.fleet, .handedOver), LegState(.carrier, .open)) == .inTransit)
        #expect(status(LegState(.fleet, .handedOver), LegState(.carrier, .handedOver)) == .delivered)
        #expect(status(LegState(.fleet, .handedOver), LegState(.counter, .failed)) == .failed)
        #expect(status(LegState(.traveller, .open), awaiting: true) == .awaitingPayment)
        #expect(status(LegState(.traveller, .cancelled), awaiting: true) == .cancelled)
        #expect(status(LegState(.traveller, .accepted)) == .accepted)
        // Every combination of two legs gives a status, and a delivered shipment has every leg handed over.
        for first in LegStatus.allCases {
            for second in LegStatus.allCases {
                let derived = status(LegState(.fleet, first), LegState(.counter, second))
                #expect((derived == .delivered) == (first == .handedOver && second == .handedOver), "\(first) \(second)")
            }
        }
    }

    @Test("Each hand-over names the proof it needs")
    func handOverProof() {
        #expect(HandOverPolicy.required(.delivery, carriedBy: .fleet, recipientCode: false) == [.signature])
        #expect(HandOverPolicy.required(.delivery, carriedBy: .fleet, recipientCode: true) == [.signature, .code])
        #expect(HandOverPolicy.required(.delivery, carriedBy: .traveller, recipientCode: false) == [.code])
        #expect(HandOverPolicy.required(.pickup, carriedBy: .traveller, recipientCode: false) == [])
        #expect(HandOverPolicy.required(.delivery, carriedBy: .carrier, recipientCode: true) == [.carrierEvent])
        for kind in LegKind.allCases {
            #expect(HandOverPolicy.required(.counterDropOff, carriedBy: kind, recipientCode: false) == [.qrScan])
            #expect(HandOverPolicy.required(.legToLeg, carriedBy: kind, recipientCode: false) == [.qrScan])
            #expect(!HandOverPolicy.required(.delivery, carriedBy: kind, recipientCode: false).isEmpty, "every delivery is proven: \(kind)")
        }
        #expect(HandOverPolicy.kind(of: .pickUp, legKind: .fleet, index: 0, count: 2) == .pickup)
        #expect(HandOverPolicy.kind(of: .pickUp, legKind: .fleet, index: 1, count: 2) == .legToLeg)
        #expect(HandOverPolicy.kind(of: .handOver, legKind: .fleet, index: 1, count: 2) == .delivery)
        #expect(HandOverPolicy.kind(of: .handOver, legKind: .counter, index: 0, count: 2) == .legToLeg)
        #expect(HandOverPolicy.kind(of: .dropOff, legKind: .counter, index: 0, count: 2) == .counterDropOff)
        #expect(HandOverPolicy.kind(of: .assign, legKind: .fleet, index: 0, count: 1) == nil)
    }
}
