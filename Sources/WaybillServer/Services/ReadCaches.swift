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
    }
    private let state = NIOLockedValueBox(State())

    init(freshness: TimeAmount, capacity: Int) {
        self.freshness = freshness
        self.capacity = capacity
    }

    /// The value kept for `key`, if it is fresh.
    func value(_ key: Key) -> Value? {
        let now = NIODeadline.now()
        return state.withLockedValue { state in
            guard let entry = state.entries[key] else { return nil }
            if entry.expires <= now {
                state.entries.removeValue(forKey: key)
                return nil
            }
            return entry.value
        }
    }

    /// To give `keep` along with what the database said.
    var generation: UInt64 { state.withLockedValue { $0.generation } }

    /// Keeps `value` unless something was forgotten since `generation` was read.
    func keep(_ value: Value, for key: Key, readAt generation: UInt64) {
        let expires = NIODeadline.now() + freshness
        state.withLockedValue { state in
            guard state.generation == generation else { return }
            if state.entries.count >= capacity {
                let now = NIODeadline.now()
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

    func forgetAll() { forget { _, _ in true } }
}

/// The caches of one process (`WaybillServices.caches`).
final class ReadCaches: Sendable {
    /// Each session's row of the account and session (`Accounts.authenticate(bearer:)`), for a
    /// second. Forgotten for an account when a transaction that changed it or one of its sessions
    /// commits in this process (`AccountChanges`), and when another process says on the live channel
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

    struct PrincipalRow: Sendable {
        let user: UserID
        let row: any SQLRow
    }

    func forget(accounts: some Sequence<UserID>) {
        let accounts = Set(accounts)
        guard !accounts.isEmpty else { return }
        principals.forget { _, entry in accounts.contains(entry.user) }
        plans.forget { account, _ in accounts.contains(account) }
    }
}

/// The accounts a write transaction changed (their row or a session), forgotten from
/// `ReadCaches.principals` once it commits. Writes outside `writeTransaction` forget at once.
final class AccountChanges: Sendable {
    @TaskLocal static var current: AccountChanges?

    private let users = NIOLockedValueBox<Set<UserID>>([])
    var changed: Set<UserID> { users.withLockedValue { $0 } }

    /// Notes that `user`'s account or sessions changed: after the transaction commits when there
    /// is one under way, at once otherwise.
    static func note(_ user: UserID?, caches: ReadCaches?) {
        guard let user else { return }
        if let current { current.users.withLockedValue { _ = $0.insert(user) } } else { caches?.forget(accounts: [user]) }
    }
}

/// Notes every change to an account or a session made through Fluent's models. A new row is never
/// kept already (a new session is not yet checked), and neither model is soft-deleted: updates and
/// deletions are what counts. A sign-in, which makes a session, forgets nothing.
struct AccountChangeMiddleware<M: Model>: AsyncModelMiddleware {
    typealias Model = M
    let caches: ReadCaches
    let account: @Sendable (M) -> UserID?

    func update(model: M, on db: any Database, next: any AnyAsyncModelResponder) async throws {
        try await next.update(model, on: db)
        AccountChanges.note(account(model), caches: caches)
    }

    func delete(model: M, force: Bool, on db: any Database, next: any AnyAsyncModelResponder) async throws {
        try await next.delete(model, force: force, on: db)
        AccountChanges.note(account(model), caches: caches)
    }
}

/// Notes the account of every subscription written through its model (a new request, a cancel or
/// resume), so its kept plan (`ReadCaches.plans`) is forgotten when the write commits.
struct SubscriptionChangeMiddleware: AsyncModelMiddleware {
    typealias Model = SubscriptionRecord
    let caches: ReadCaches

    func create(model: SubscriptionRecord, on db: any Database, next: any AnyAsyncModelResponder) async throws {
        try await next.create(model, on: db)
        AccountChanges.note(model.accountID, caches: caches)
    }

    func update(model: SubscriptionRecord, on db: any Database, next: any AnyAsyncModelResponder) async throws {
        try await next.update(model, on: db)
        AccountChanges.note(model.accountID, caches: caches)
    }

    func delete(model: SubscriptionRecord, force: Bool, on db: any Database, next: any AnyAsyncModelResponder) async throws {
        try await next.delete(model, force: force, on: db)
        AccountChanges.note(model.accountID, caches: caches)
    }
}

/// Forgets the kept tariff when one is written through its model (a manager's change, a test's).
struct TariffChangeMiddleware: AsyncModelMiddleware {
    typealias Model = TariffRecord
    let caches: ReadCaches

    func create(model: TariffRecord, on db: any Database, next: any AnyAsyncModelResponder) async throws {
        try await next.create(model, on: db)
        caches.tariff.forgetAll()
    }
}
