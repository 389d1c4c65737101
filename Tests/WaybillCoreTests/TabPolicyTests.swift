import Foundation
import Testing
@testable import WaybillCore

@Suite("The phone's tab bar: each role's four places")
struct TabPolicyTests {
    func caller(_ capabilities: Set<Capability>) -> Caller { Caller(id: UserID(rawValue: UUID()), capabilities: capabilities) }

    @Test("Customers send and follow parcels, drivers see their day and its map, dispatch its board and routes, counter staff their desk and the scanner")
    func tabsPerRole() {
        #expect(TabPolicy.tabs(for: caller([.sender, .receiver])) == [.send, .parcels, .messages, .account])
        #expect(TabPolicy.tabs(for: caller([.sender, .receiver, .driver])) == [.today, .map, .messages, .account])
        #expect(TabPolicy.tabs(for: caller([.sender, .receiver, .manager])) == [.dispatch, .routes, .messages, .account])
        #expect(TabPolicy.tabs(for: caller([.sender, .receiver, .counter])) == [.counter, .scan, .messages, .account])
        #expect(TabPolicy.tabs(for: caller([.sender, .receiver, .traveller])) == [.send, .parcels, .messages, .account])
        #expect(TabPolicy.tabs(for: caller([])) == [.messages, .account])
        // Never more than four: a bar of five is too narrow for 44-pixel targets with their names.
        #expect(TabPolicy.tabs(for: caller(Set(Capability.allCases))).count == 4)
    }
}
