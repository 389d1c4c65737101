/// When something two people have in common makes them known to each other: each may see the
/// other's profile picture (`ProfilePicturePolicy.maySee`, its `sharesSomething`) and either may open a
/// direct conversation with the other (`ConversationPolicy.linksDirectly`). Both places ask this one
/// rule.
///
/// Only what both sides take part in counts. Naming an email as the receiver of an order, or
/// sharing a followed parcel with someone, is done by one side alone (anyone may type anyone's
/// address), so by itself it links nobody (second audit, finding 11): a shipment links its receiver
/// only once the parcel is under way (picked up), and a shared parcel links its owner only once the
/// person it was shared with took it up (wrote to them first). A cancelled shipment links nobody.
public enum Acquaintance {
    /// The capacities that make someone one of a shipment's people (a dispatcher is not).
    static let partyCapacities: Set<OrderCapacity> = [.owner, .assignee, .receiver]

    /// The statuses in which a shipment links two of its people. Its customer and its driver
    /// (assigned by staff: neither chose the other) while it is not cancelled; through its receiver
    /// (the address the sender typed) only once the parcel is picked up: on its way or delivered.
    public static func shipmentStatuses(throughReceiver: Bool) -> Set<OrderStatus> {
        throughReceiver ? [.inTransit, .delivered] : Set(OrderStatus.allCases).subtracting([.cancelled])
    }

    /// Whether a shipment in `status` links `a` and `b`: each is one of its people (customer, driver,
    /// receiver with an account), and the status is one of `shipmentStatuses` for how they are
    /// linked (through the receiver when either of them is only its receiver).
    public static func shipmentLinks(_ parties: OrderParties, status: OrderStatus, _ a: Caller, _ b: Caller) -> Bool {
        guard a.id != b.id else { return false }
        let capacitiesA = OrderPolicy.capacities(of: a, for: parties).intersection(partyCapacities)
        let capacitiesB = OrderPolicy.capacities(of: b, for: parties).intersection(partyCapacities)
        guard !capacitiesA.isEmpty, !capacitiesB.isEmpty else { return false }
        let throughReceiver = capacitiesA == [.receiver] || capacitiesB == [.receiver]
        return shipmentStatuses(throughReceiver: throughReceiver).contains(status)
    }

    /// Whether a followed parcel `owner` shared (with `sharedWith`) links the two people of `pair`:
    /// one owns it and shared it with the other, and that other took it up — they are the one
    /// `asking` now (opening the conversation with its owner), or they already opened it
    /// (`conversationOpened`: a direct conversation of the pair exists). The owner cannot be the
    /// first to write, nor see the picture of whoever they shared a parcel with.
    public static func parcelShareLinks(owner: UserID, sharedWith: Set<UserID>, _ pair: DirectPair,
                                        asking: UserID?, conversationOpened: Bool) -> Bool {
        let other: UserID
        if owner == pair.low, sharedWith.contains(pair.high) {
            other = pair.high
        } else if owner == pair.high, sharedWith.contains(pair.low) {
            other = pair.low
        } else {
            return false
        }
        return asking == other || conversationOpened
    }
}
