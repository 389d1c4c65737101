import NIOConcurrencyHelpers

/// Lets a background loop sleep until poked or until a timeout, whichever comes first.
///
/// (An `AsyncStream` raced against a sleep in a task group does not do: cancelling the task that
/// waits on the stream finishes the stream for good, and every later wait returns at once, which
/// turned the outbox and the live feed into busy loops.)
final class Wakeup: Sendable {
    private struct State {
        var pending = false
        var waiter: CheckedContinuation<Void, Never>?
        var generation = 0
    }
    private let state = NIOLockedValueBox(State())
    /// Signalled when a waiter starts waiting (tests poke a waiter that is known to wait).
    let waiterArrived = ChangeSignal()
    var hasWaiter: Bool { state.withLockedValue { $0.waiter != nil } }

    /// Wakes the waiter now, or the next one to wait if nobody waits.
    func poke() {
        let waiter = state.withLockedValue { state -> CheckedContinuation<Void, Never>? in
            guard let waiter = state.waiter else {
                state.pending = true
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume()
    }

    /// Returns when poked (or if a poke came since the last wait), after `timeout`, or when the
    /// task is cancelled. One waiter at a time.
    func wait(timeout: Duration) async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let generation = state.withLockedValue { state -> Int? in
                    if state.pending || Task.isCancelled {
                        state.pending = false
                        return nil
                    }
                    state.generation += 1
                    state.waiter = continuation
                    return state.generation
                }
                guard let generation else {
                    continuation.resume()
                    return
                }
                waiterArrived.signal()
                Task { [weak self] in
                    try? await Task.sleep(for: timeout)
                    self?.expire(generation)
                }
            }
        } onCancel: {
            poke()
        }
    }

    private func expire(_ generation: Int) {
        let waiter = state.withLockedValue { state -> CheckedContinuation<Void, Never>? in
            guard state.generation == generation, let waiter = state.waiter else { return nil }
            state.waiter = nil
            return waiter
        }
        waiter?.resume()
    }
}
