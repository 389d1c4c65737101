/// A tab of the web app's bottom bar on phones (issue "The web app feels like the native app").
public enum AppTab: String, Sendable, Hashable, CaseIterable {
    case send, parcels, messages, account
    case today, map
    case dispatch, routes
    case counter, scan
}

/// Which tabs a person's phone shows, from what they may do: four, the work first, then their
/// messages and their account. Everything else stays in the menu.
public enum TabPolicy {
    public static func tabs(for caller: Caller) -> [AppTab] {
        let work: [AppTab] = if caller.may(.dispatch) { [.dispatch, .routes] }
            else if caller.may(.drive) { [.today, .map] }
            else if caller.may(.receiveAtCounter) { [.counter, .scan] }
            else if caller.may(.placeOrders) { [.send, .parcels] }
            else { [] }
        return work + [.messages, .account]
    }
}
