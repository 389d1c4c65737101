import Foundation
import Testing
@testable import WaybillCore

@Suite("Counter legs: where a shipment through counters stands, and what the desk may do")
struct CounterLegTests {
    let here = "A", there = "B"

    @Test("A parcel dropped at a counter is where its driver's leg is until the driver has it; then in transit")
    func statusFollowsTheDriver() {
        func status(_ legs: [LegState]) -> OrderStatus { ShipmentStatus.derive(awaitingPayment: false, legs: legs) }
        #expect(status([LegState(.counter, .open), LegState(.fleet, .open)]) == .pending)
        #expect(status([LegState(.counter, .held), LegState(.fleet, .accepted)]) == .accepted)
        #expect(status([LegState(.counter, .handedOver), LegState(.fleet, .inTransit)]) == .inTransit)
        #expect(status([LegState(.counter, .handedOver), LegState(.fleet, .handedOver), LegState(.counter, .held)]) == .inTransit)
        #expect(status([LegState(.counter, .handedOver), LegState(.fleet, .handedOver), LegState(.counter, .handedOver)]) == .delivered)
        #expect(status([LegState(.counter, .cancelled), LegState(.fleet, .cancelled)]) == .cancelled)
        #expect(ShipmentStatus.derive(awaitingPayment: true, legs: [LegState(.counter, .open), LegState(.fleet, .open)]) == .awaitingPayment)
        // Without counters nothing changed.
        #expect(status([LegState(.fleet, .assigned)]) == .assigned)
    }

    @Test("Order actions move the driver's leg; the driver collects only what the counter holds and never delivers into a counter")
    func actingLeg() {
        let waiting = [LegState(.counter, .open), LegState(.fleet, .accepted), LegState(.counter, .open)]
        #expect(ShipmentRoute.actingLeg(for: .assign, in: waiting) == 1)
        #expect(ShipmentRoute.actingLeg(for: .cancel, in: waiting) == 0)
        #expect(ShipmentRoute.counterWait(.pickUp, at: 1, in: waiting) == .notAtCounterYet)
        #expect(ShipmentRoute.counterWait(.accept, at: 1, in: waiting) == nil)
        let held = [LegState(.counter, .held), LegState(.fleet, .accepted), LegState(.counter, .open)]
        #expect(ShipmentRoute.counterWait(.pickUp, at: 1, in: held) == nil)
        #expect(ShipmentRoute.counterLeft(byPickUpAt: 1, in: held) == 0)
        #expect(ShipmentRoute.counterWait(.handOver, at: 1, in: held) == .counterChecksIn)
        #expect(ShipmentRoute.counterWait(.handOver, at: 0, in: [LegState(.fleet, .inTransit)]) == nil)
        #expect(ShipmentRoute.waitsAtCounter(held) && !ShipmentRoute.waitsAtCounter(waiting))
    }

    @Test("A counter checks in what passes through it: the sender's drop-off once paid, a driver's parcel once the driver has it; never twice")
    func checkIn() {
        let counters: [String?] = [here, nil, there]
        let new = [LegState(.counter, .open), LegState(.fleet, .open), LegState(.counter, .open)]
        #expect(CounterDesk.checkIn(legs: new, counters: counters, here: here, awaitingPayment: true) == .failure(.notPaid))
        #expect(CounterDesk.checkIn(legs: new, counters: counters, here: here, awaitingPayment: false)
                == .success(.init(counterLeg: 0, endsLeg: nil, handOver: .counterDropOff)))
        #expect(CounterDesk.checkIn(legs: new, counters: counters, here: there, awaitingPayment: false) == .failure(.notArrived))
        #expect(CounterDesk.checkIn(legs: new, counters: counters, here: "C", awaitingPayment: false) == .failure(.notHere))
        let held = [LegState(.counter, .held), LegState(.fleet, .open), LegState(.counter, .open)]
        #expect(CounterDesk.checkIn(legs: held, counters: counters, here: here, awaitingPayment: false) == .failure(.alreadyDone))
        let onTheWay = [LegState(.counter, .handedOver), LegState(.fleet, .inTransit), LegState(.counter, .open)]
        #expect(CounterDesk.checkIn(legs: onTheWay, counters: counters, here: there, awaitingPayment: false)
                == .success(.init(counterLeg: 2, endsLeg: 1, handOver: .legToLeg)))
        #expect(CounterDesk.checkIn(legs: [LegState(.counter, .cancelled), LegState(.fleet, .cancelled)], counters: [here, nil], here: here,
                                    awaitingPayment: false) == .failure(.cancelled))
    }

    @Test("The receiver collects at the last counter once it holds the parcel, once; a typed reference stands for a scan at a desk")
    func handOut() {
        let counters: [String?] = [nil, there]
        #expect(CounterDesk.handOut(legs: [LegState(.fleet, .inTransit), LegState(.counter, .open)], counters: counters, here: there) == .failure(.notArrived))
        #expect(CounterDesk.handOut(legs: [LegState(.fleet, .handedOver), LegState(.counter, .held)], counters: counters, here: there) == .success(1))
        #expect(CounterDesk.handOut(legs: [LegState(.fleet, .handedOver), LegState(.counter, .handedOver)], counters: counters, here: there) == .failure(.alreadyDone))
        #expect(CounterDesk.handOut(legs: [LegState(.counter, .held), LegState(.fleet, .open)], counters: [there, nil], here: there) == .failure(.notHere))
        let required = HandOverPolicy.required(.delivery, carriedBy: .counter, recipientCode: true)
        #expect(required.isSubset(of: CounterDesk.proof(scanned: false, typedReference: true, receiverCode: true)))
        #expect(!required.isSubset(of: CounterDesk.proof(scanned: true, typedReference: false, receiverCode: false)))
    }

    @Test("What choosing counters asks of an order: no cash at a drop-off counter, the receiver's email for a collection, two different counters")
    func choice() {
        var errors = FieldErrors()
        CounterChoice(dropOffID: here, collectionID: here).check(paymentMethod: .cash, recipientEmail: nil, into: &errors)
        #expect(errors.fields["paymentMethod"] == "not_with_counter_drop_off" && errors.fields["recipient.email"] == "required_for_counter_collection")
        #expect(errors.fields["collectionCounterId"] == "same_as_drop_off")
        #expect(CounterChoice(dropOffID: here).legKinds == [.counter, .fleet] && CounterChoice().legKinds == [.fleet])
    }

    @Test("A reference typed from a label reads however it was typed", arguments: [
        ("wb-7k3m9q2a", "WB-7K3M9Q2A"), ("WB 7K3M 9Q2A", "WB-7K3M9Q2A"), ("7k3m9q2a", "WB-7K3M9Q2A"), ("WB-7K3MOQ2I", "WB-7K3M0Q21"),
    ])
    func reference(typed: String, read: String) {
        #expect(OrderReference.normalized(typed) == read)
    }

    @Test("Not a reference", arguments: ["", "WB-", "WB-7K3M9Q2", "WB-7K3M9Q2AB", "WB-7K3M9Q2U", "../../etc"])
    func notAReference(text: String) {
        #expect(OrderReference.normalized(text) == nil)
    }

    @Test("A counter booking's conversation is its customer's and the counter's staff's, and ends with the booking")
    func bookingConversation() {
        #expect(ConversationPolicy.roles(booking: [.owner], status: .pending, counterStaff: false) == [.sender])
        #expect(ConversationPolicy.roles(booking: [.owner], status: .pending, counterStaff: true) == [.sender, .counter])
        #expect(ConversationPolicy.roles(booking: [.manager], status: .pending, counterStaff: false).isEmpty, "dispatch does not read the desk's conversations")
        #expect(ConversationPolicy.roles(booking: [.assignee, .receiver], status: .inTransit, counterStaff: false).isEmpty)
        #expect(ConversationPolicy.endedAt(booking: .booked, updatedAt: 5) == nil && ConversationPolicy.endedAt(booking: .pending, updatedAt: 5) == nil)
        #expect(ConversationPolicy.endedAt(booking: .completed, updatedAt: 5) == 5 && ConversationPolicy.endedAt(booking: .cancelled, updatedAt: 6) == 6)
        let id = UUID()
        #expect(ConversationSubject(kind: "booking", id: id) == .booking(SlotBookingID(rawValue: id)) && ConversationSubject.booking(SlotBookingID(rawValue: id)).kind == "booking")
    }

    @Test("A driver collects a parcel from its counter once it is there, or from the end of its drop-off slot still to come")
    func counterPickup() {
        #expect(RoutePlanningPolicy.counterPickup(held: true, dropOffSlotEnd: nil, now: 100) == .now)
        #expect(RoutePlanningPolicy.counterPickup(held: false, dropOffSlotEnd: 500, now: 100) == .from(500))
        #expect(RoutePlanningPolicy.counterPickup(held: false, dropOffSlotEnd: 50, now: 100) == .notYet, "the slot ended without the parcel")
        #expect(RoutePlanningPolicy.counterPickup(held: false, dropOffSlotEnd: nil, now: 100) == .notYet)
    }

    @Test("A desk's one field reads a typed reference as one, and anything else as what a scanner read")
    func labelEntry() {
        #expect(LabelEntry(" wb 7k3m 9q2a ") == .typed("wb 7k3m 9q2a"))
        #expect(LabelEntry("https://waybill.example/h/AbCdEfGhIjKlMnOpQrStUvWx") == .scanned("https://waybill.example/h/AbCdEfGhIjKlMnOpQrStUvWx"))
        #expect(LabelEntry("AbCdEfGhIjKlMnOpQrStUvWx").scanned != nil && LabelEntry("not a label").scanned == "not a label")
        #expect(LabelEntry("WB-7K3M9Q2A").typed == "WB-7K3M9Q2A" && LabelEntry("WB-7K3M9Q2A").scanned == nil)
    }
}
