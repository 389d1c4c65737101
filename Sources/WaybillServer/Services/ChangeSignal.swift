import Foundation
import NIOConcurrencyHelpers

/// Wakes everyone waiting for a change: each waiter looks at the state again after every signal, so
/// nobody polls. A guard ends a wait after its timeout, and cancelling the waiter ends it too.
/// (The live hub's connections and the tests' waits use it.)
final class ChangeSignal: Sendable {
    private let state = NIOLockedValueBox<(generation: Int, waiters: [CheckedContinuation<Void, Never>])>((0, []))

    func signal() {
        let woken = state.withLockedValue { state -> [CheckedContinuation<Void, Never>] in
            state.generation += 1
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in woken { waiter.resume() }
    }

    /// Returns `check()`'s first non-nil answer, or nil when `guard` passed first; throws
    /// `CancellationError` when the waiting task is cancelled.
    func wait<T: Sendable>(guard timeout: Duration, until check: @Sendable () throws -> T?) async throws -> T? {
        let deadline = ContinuousClock.now + timeout
        let guardTask = Task { [weak self] in
            try? await Task.sleep(for: timeout)  // a guard against a hang, not a wait for the answer
            self?.signal()
        }
        defer { guardTask.cancel() }
        return try await withTaskCancellationHandler {
            while true {
                try Task.checkCancellation()  // the test's own time limit ended it
                let generation = state.withLockedValue { $0.generation }
                if let found = try check() { return found }
                if ContinuousClock.now >= deadline { return nil }
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let resumeNow = state.withLockedValue { state -> Bool in
                        // Something arrived between the check and now: look again at once.
                        if state.generation != generation { return true }
                        state.waiters.append(continuation)
                        return false
                    }
                    if resumeNow { continuation.resume() }
                }
            }
        } onCancel: {
            signal()
        }
    }
}
