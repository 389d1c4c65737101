import Fluent
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import SQLKit
import WaybillCore

/// Values read from the database and kept for at most `freshness`, so a burst of requests asks once
/// instead of once each (every statement is two thread hops, the largest cost of a cheap request:
/// docs/performance.md).
///
/// A read that began before something was forgotten is not kept: `generation` is taken before the
/// database is asked, and `keep` drops the value when a `forget` happened since. So a value kept
/// here is never older than the last `forget` in this process; what another process changes is
/// seen within `freshness` (or sooner, when it says so on the live channel).
final class FreshCache<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    let freshness: TimeAmount
    let capacity: Int
    private struct Entry { let value: Value; let expires: NIODeadline }
    private struct State {
        var entries: [Key: Entry] = [:]
        var generation: UInt64 = 0
        var hits: UInt64 = 0
        var misses: UInt64 = 0
    }
    private let state = NIOLockedValueBox(State())
    /// The monotonic clock freshness is counted on (tests move their own).
    private let now: @Sendable () -> NIODeadline

    init(freshness: TimeAmount, capacity: Int, now: @escaping @Sendable () -> NIODeadline = { .now() }) {
        self.freshness = freshness
        self.capacity = capacity
        self.now = now
    }

    /// The value kept for `key`, if it is fresh.
    func value(_ key: Key) -> Value? {
        let now = self.now()
        return state.withLockedValue { state in
            guard let entry = state.entries[key] else {
                state.misses &+= 1
                return nil
            }
            if entry.expires <= now {
                state.entries.removeValue(forKey: key)
                state.misses &+= 1
                return nil
            }
            state.hits &+= 1
            return entry.value
        }
    }

    /// Lookups so far that found a fresh value and that did not, and the values kept now (`/metrics`).
    var statistics: ReadCaches.Statistics {
        state.withLockedValue { .init(hits: $0.hits, misses: $0.misses, entries: $0.entries.count) }
    }

    /// To give `keep` along with what the database said.
    var generation: UInt64 { state.withLockedValue { $0.generation } }

    /// Keeps `value` unless something was forgotten since `generation` was read.
    func keep(_ value: Value, for key: Key, readAt generation: UInt64) {
        guard freshness > .zero else { return }
        let expires = now() + freshness
        state.withLockedValue { state in
            guard state.generation == generation else { return }
            if state.entries.count >= capacity {
                let now = self.now()
                state.entries = state.entries.filter { $0.value.expires > now }
                if state.entries.count >= capacity { state.entries.removeAll(keepingCapacity: true) }
            }
            state.entries[key] = Entry(value: value, expires: expires)
        }
    }

    /// Forgets the values `matching` says, and every read under way.
    func forget(where matching: (Key, Value) -> Bool) {
        state.withLockedValue { state in
            state.generation &+= 1
            state.entries = state.entries.filter { !matching($0.key, $0.value.value) }
        }
    }

    /// Forgets the values of `keys`, and every read under way; no walk over the other values.
    func forget(keys: some Collection<Key>) {
        guard !keys.isEmpty else { return }
        state.withLockedValue { state in
            state.generation &+= 1
            for key in keys { state.entries.removeValue(forKey: key) }
        }
    }

    func forgetAll() { forget { _, _ in true } }
}

/// The caches of one process (`WaybillServices.caches`).
final class ReadCaches: Sendable {
    /// Each session's row of the account and session (`Accounts.authenticate(bearer:)`), for a
    /// second. Forgotten for an account when a transaction that changed it or one of its sessions
    /// commits in this process (`WrittenChanges`), and when another process says on the live channel
    /// that a session ended or the account's access changed.
    let principals = FreshCache<SignInID, PrincipalRow>(freshness: .seconds(1), capacity: 50_000)
    /// The tariff in force, for a second: every quote and order reads it. Forgotten when this
    /// process writes a tariff; another process's new tariff applies here within the second.
    let tariff = FreshCache<Int, any SQLRow>(freshness: .seconds(1), capacity: 1)

    /// Each account's paid subscription row for a price quote (`Subscriptions.benefit(for:kept:)`),
    /// for a second; most accounts have none, and that is kept too. Forgotten with the account
    /// (`forget(accounts:)`): a write to a subscription notes its account like a write to the account
    /// does. Placing an order reads the plan afresh, since it takes an included delivery.
    let plans = FreshCache<UserID, KeptPlan>(freshness: .seconds(1), capacity: 50_000)

    struct KeptPlan: Sendable {
        let row: (any SQLRow)?
    }

    /// What an order's detail reads, whoever asks (`Orders.detail`), for a second: the order, its
    /// history, the people it names and its files. Who may see it, its tracking and the receiver's
    /// code are worked out on every request. Forgotten for an order when a transaction that changed
    /// it, its history or its files commits in this process (`WrittenChanges`), with the accounts it
    /// names (`forget(accounts:)`), and when any process writes a live event on the order's topic
    /// (`LiveHub.deliver`): every change of status, driver or step does.
    let orders: FreshCache<OrderID, KeptOrder>

    /// A page of orders (`Orders.list`) by its scope and filter, for a second, with the people it
    /// names: a dashboard asked again and again while nothing changes. Every change to any order
    /// forgets every page (`forget(orders:)`), as do changes to the accounts a page names.
    let lists: FreshCache<ListKey, KeptList>

    /// `keepOrders` false (`ORDER_READ_CACHE=0`): orders and pages are read afresh every time.
    init(keepOrders: Bool = true) {
        let freshness: TimeAmount = keepOrders ? .seconds(1) : .zero
        orders = FreshCache(freshness: freshness, capacity: 5_000)
        lists = FreshCache(freshness: freshness, capacity: 256)
    }

    struct ListKey: Hashable, Sendable {
        let scope: OrderPolicy.ListScope
        let customerID: UserID?
        let driverID: UserID?
        let statuses: [OrderStatus]
        let from: Date?
        let to: Date?
        let cursor: String?
        let limit: Int
    }

    struct KeptList: Sendable {
        /// One more than the page holds when there is a next page.
        let orders: [OrderRow]
        let people: [UserID: PersonRow]
        /// The legs of its orders, as their rules see them (what each viewer may do is worked out from them).
        let legs: [OrderID: [ShipmentState.Leg]]
    }

    /// Shared by every request that reads the order while it is kept: its history's and files'
    /// model objects are only read, never changed or saved.
    struct KeptOrder: Sendable {
        let order: OrderRow
        let events: [OrderEvent]
        let people: [UserID: PersonRow]
        let files: [OrderFile]
        let legs: [ShipmentState.Leg]
    }

    struct PrincipalRow: Sendable {
        let user: UserID
        let row: any SQLRow
    }

    struct Statistics: Sendable {
        let hits: UInt64
        let misses: UInt64
        let entries: Int
    }

    /// Each cache by the name `/metrics` gives it.
    var statistics: [(cache: String, Statistics)] {
        [("sessions", principals.statistics), ("tariff", tariff.statistics), ("plans", plans.statistics),
         ("orders", orders.statistics), ("order_pages", lists.statistics)]
    }

    func forget(accounts: some Sequence<UserID>) {
        let accounts = Set(accounts)
        guard !accounts.isEmpty else { return }
        principals.forget { _, entry in accounts.contains(entry.user) }
        plans.forget { account, _ in accounts.contains(account) }
        orders.forget { _, kept in kept.people.keys.contains(where: accounts.contains) }
        lists.forget { _, kept in kept.people.keys.contains(where: accounts.contains) }
    }

    func forget(orders changed: some Collection<OrderID>) {
        guard !changed.isEmpty else { return }
        orders.forget(keys: changed)
        lists.forgetAll()
    }
}

/// The accounts (their row or a session) and the orders (their row, history or files) a write
/// transaction changed, forgotten from `ReadCaches` once it commits. Writes outside
/// `writeTransaction` forget at once.
final class WrittenChanges: Sendable {
    @TaskLocal static var current: WrittenChanges?

    private struct Changed { var users: Set<UserID> = []; var orders: Set<OrderID> = [] }
    private let state = NIOLockedValueBox(Changed())

    /// Notes that `user`'s account or sessions changed: after the transaction commits when there
    /// is one under way, at once otherwise.
    static func note(_ user: UserID?, caches: ReadCaches?) {
        guard let user else { return }
        if let current { current.state.withLockedValue { _ = $0.users.insert(user) } } else { caches?.forget(accounts: [user]) }
    }

    /// Notes that an order, its history or its files changed, as `note(_:caches:)` does an account.
    static func note(order: OrderID?, caches: ReadCaches?) {
        guard let order else { return }
        if let current { current.state.withLockedValue { _ = $0.orders.insert(order) } } else { caches?.forget(orders: [order]) }
    }

    /// After the commit: what it changed is read again from now on.
    func forget(in caches: ReadCaches) {
        let changed = state.withLockedValue { $0 }
        caches.forget(accounts: changed.users)
        caches.forget(orders: changed.orders)
    }
}

/// Runs `note` after each write of an `M` through Fluent's models, so what the caches kept of it is
/// forgotten (through `WrittenChanges`, when the write's transaction commits). `creates` false: a new
/// row cannot have been kept already (a new session is not yet checked; a sign-in forgets nothing).
/// The uses, one per model, are in `configure.swift`.
struct ChangeNotingMiddleware<M: Model>: AsyncModelMiddleware {
    typealias Model = M
    let creates: Bool
    let note: @Sendable (M) -> Void

    func create(model: M, on db: any Database, next: any AnyAsyncModelResponder) async throws {
        try await next.create(model, on: db)
        if creates { note(model) }
    }

    func update(model: M, on db: any Database, next: any AnyAsyncModelResponder) async throws {
        try await next.update(model, on: db)
        note(model)
    }

    func delete(model: M, force: Bool, on db: any Database, next: any AnyAsyncModelResponder) async throws {
        try await next.delete(model, force: force, on: db)
        note(model)
    }
}
