import Fluent
import Foundation
import NIOConcurrencyHelpers
import WaybillCore

/// Group commit of drivers' position reports.
///
/// A thousand drivers reporting once a second made a thousand write transactions of six statements
/// each, one round trip per statement: the server spent its time waiting on those. Here each report
/// joins a queue. One writer takes everything queued and writes it in one transaction
/// (`Tracking.commit`). Reports that arrive while that transaction runs wait for the next one, so
/// the group grows with the load and nothing waits on a timer. Each report is answered only after
/// the transaction holding it has committed, so an acknowledged position survives a crash of the
/// process. One report's problem (off duty, a malformed batch) is its own answer and does not fail
/// the others. A failed transaction fails every report in it; the drivers send them again.
final class PositionCommits: Sendable {
    struct Job: Sendable {
        var driverID: UserID
        var firstName: String
        var batch: [PositionReport]
    }

    /// Writes jobs in one transaction; answers one result per job, in order.
    typealias Writer = @Sendable ([Job]) async throws -> [Result<Tracking.Reported, any Error>]

    private struct Waiting: Sendable {
        var job: Job
        var continuation: CheckedContinuation<Tracking.Reported, any Error>
    }

    private struct State: Sendable {
        var queue: [Waiting] = []
        var writing = false
    }

    /// Reports in one transaction at most (the rest wait for the next): bounds its statements' size.
    let maxPerTransaction: Int
    private let state = NIOLockedValueBox(State())
    /// Groups written and reports in them, for `/metrics` and tests.
    private let counts = NIOLockedValueBox((groups: 0, reports: 0))

    private let metrics: WaybillMetrics?

    init(maxPerTransaction: Int = 500, metrics: WaybillMetrics? = nil) {
        self.maxPerTransaction = max(1, maxPerTransaction)
        self.metrics = metrics
    }

    /// Queues `job`, returning when the transaction that wrote it has committed. The writer of the
    /// first report of a group writes the whole group (every caller passes the same writer).
    func submit(_ job: Job, write: @escaping Writer) async throws -> Tracking.Reported {
        try await withCheckedThrowingContinuation { continuation in
            let start = state.withLockedValue { state in
                state.queue.append(Waiting(job: job, continuation: continuation))
                if state.writing { return false }
                state.writing = true
                return true
            }
            queueChanges.signal()
            // A task of its own (it inherits the caller's clock and trace): the caller's request may
            // be answered while later groups are still being written.
            if start { Task { await self.drain(write) } }
        }
    }

    /// Reports waiting for the next transaction.
    var queued: Int { state.withLockedValue { $0.queue.count } }
    /// Signalled when a report joins the queue or a group leaves it (tests wait on it).
    let queueChanges = ChangeSignal()

    /// (groups written, reports written) so far.
    var written: (groups: Int, reports: Int) { counts.withLockedValue { $0 } }

    private func drain(_ write: Writer) async {
        while true {
            let group: [Waiting] = state.withLockedValue { state in
                guard !state.queue.isEmpty else {
                    state.writing = false
                    return []
                }
                let taken = Array(state.queue.prefix(maxPerTransaction))
                state.queue.removeFirst(taken.count)
                return taken
            }
            guard !group.isEmpty else { return }
            queueChanges.signal()
            do {
                let results = try await write(group.map(\.job))
                counts.withLockedValue { $0.groups += 1; $0.reports += group.count }
                metrics?.positionsWritten(reports: group.count)
                for (waiting, result) in zip(group, results) { waiting.continuation.resume(with: result) }
                // A writer that answered too few (it never does) must not leave anyone waiting.
                for waiting in group.dropFirst(results.count) {
                    waiting.continuation.resume(throwing: WaybillError(.internalServerError, .internalError, "The position was not written."))
                }
            } catch {
                for waiting in group { waiting.continuation.resume(throwing: error) }
            }
        }
    }
}
