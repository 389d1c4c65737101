import Foundation
import NIOConcurrencyHelpers
import Testing
@testable import WaybillServer
import WaybillCore

/// `PositionCommits` with a writer the test lets through one transaction at a time.
@Suite("Group commit of positions: reports that arrive while a transaction runs go together in the next")
struct PositionCommitsTests {
    actor Gate {
        private var waiting: [CheckedContinuation<Void, Never>] = []
        private var permits = 0
        func wait() async {
            if permits > 0 { permits -= 1; return }
            await withCheckedContinuation { waiting.append($0) }
        }
        func open() {
            if waiting.isEmpty { permits += 1 } else { waiting.removeFirst().resume() }
        }
    }

    /// Records each group, waits at the gate, then answers: an empty batch is refused, others accepted.
    final class Writer: Sendable {
        let gate = Gate()
        let groups = NIOLockedValueBox<[[PositionCommits.Job]]>([])
        let failNext = NIOLockedValueBox(false)

        /// Signalled when a group reaches the writer.
        let arrived = ChangeSignal()

        func write(_ jobs: [PositionCommits.Job]) async throws -> [Result<Tracking.Reported, any Error>] {
            groups.withLockedValue { $0.append(jobs) }
            arrived.signal()
            await gate.wait()
            if failNext.withLockedValue({ value in defer { value = false }; return value }) {
                throw WaybillError(.serviceUnavailable, .internalError, "the database went away")
            }
            return jobs.map { job in
                job.batch.isEmpty ? .failure(WaybillError(.conflict, .offDuty, "off duty"))
                    : .success(Tracking.Reported(accepted: job.batch.count, ignored: 0, orders: 0))
            }
        }

        var sizes: [Int] { groups.withLockedValue { $0.map(\.count) } }
    }

    static func job(_ points: Int) -> PositionCommits.Job {
        PositionCommits.Job(driverID: UserID(rawValue: UUID()), firstName: "Luca",
                            batch: (0..<points).map { PositionReport(latitude: 47, longitude: 8, recordedAt: Int64($0)) })
    }

    /// Waits until the writer has been handed groups of these sizes, woken by each hand-over (the
    /// guard is ten minutes: a slow machine must not fail it, a hang must).
    static func until(_ writer: Writer, has sizes: @escaping @Sendable ([Int]) -> Bool) async throws {
        let reached = try await writer.arrived.wait(guard: .seconds(600)) { sizes(writer.sizes) ? true : nil }
        try #require(reached == true, "the writer got \(writer.sizes)")
    }

    /// Waits until `count` reports wait for the next transaction, woken by each change of the queue.
    static func until(_ commits: PositionCommits, queued count: Int) async throws {
        let reached = try await commits.queueChanges.wait(guard: .seconds(600)) { commits.queued == count ? true : nil }
        try #require(reached == true, "\(commits.queued) queued")
    }

    @Test("Five reports that arrive during a transaction are written together by the next one, each answered with its own result")
    func reportsWaitingGoTogether() async throws {
        let commits = PositionCommits()
        let writer = Writer()
        let write: PositionCommits.Writer = { try await writer.write($0) }
        let first = Task { try await commits.submit(Self.job(1), write: write) }
        try await Self.until(writer) { $0 == [1] }
        let later = (0..<5).map { n in Task { try await commits.submit(Self.job(n), write: write) } }
        try await Self.until(commits, queued: 5)
        await writer.gate.open()
        #expect(try await first.value.accepted == 1)
        try await Self.until(writer) { $0.count == 2 }
        await writer.gate.open()
        #expect(writer.sizes == [1, 5])
        // The empty batch is refused on its own; the four others are accepted.
        var refused = 0
        for (n, task) in later.enumerated() {
            do { #expect(try await task.value.accepted == n) } catch let error as WaybillError {
                #expect(n == 0 && error.code == .offDuty)
                refused += 1
            }
        }
        #expect(refused == 1)
        #expect(commits.written.groups == 2 && commits.written.reports == 6)
    }

    @Test("A transaction that fails fails every report in it, and the next reports are written normally")
    func failedTransaction() async throws {
        let commits = PositionCommits()
        let writer = Writer()
        let write: PositionCommits.Writer = { try await writer.write($0) }
        writer.failNext.withLockedValue { $0 = true }
        let first = Task { try await commits.submit(Self.job(1), write: write) }
        try await Self.until(writer) { $0 == [1] }
        let second = Task { try await commits.submit(Self.job(2), write: write) }
        try await Self.until(commits, queued: 1)
        await writer.gate.open()
        await #expect(throws: WaybillError.self) { try await first.value }
        try await Self.until(writer) { $0.count == 2 }
        await writer.gate.open()
        #expect(try await second.value.accepted == 2)
        let third = Task { try await commits.submit(Self.job(3), write: write) }
        await writer.gate.open()
        #expect(try await third.value.accepted == 3, "the writer starts again after the queue ran dry")
    }

    @Test("No transaction holds more than its limit: the rest wait for the next")
    func limitPerTransaction() async throws {
        let commits = PositionCommits(maxPerTransaction: 2)
        let writer = Writer()
        let write: PositionCommits.Writer = { try await writer.write($0) }
        let first = Task { try await commits.submit(Self.job(1), write: write) }
        try await Self.until(writer) { $0 == [1] }
        let later = (1...5).map { n in Task { try await commits.submit(Self.job(n), write: write) } }
        try await Self.until(commits, queued: 5)
        for _ in 0..<4 { await writer.gate.open() }
        _ = try await first.value
        for task in later { _ = try await task.value }
        #expect(writer.sizes == [1, 2, 2, 1])
    }
}

@Suite("Live events to other processes: a group of events goes out in notifications under PostgreSQL's size limit")
struct LiveNotificationTests {
    @Test("Many events make several notifications, each under the limit, together holding every event in order; an event too large, or holding a raw tab, is named for fetching")
    func splitUnderTheLimit() throws {
        var rows = (1...120).map { id in
            LiveRow(id: Int64(id), topic: "order:\(UUID().uuidString)", type: "location",
                    data: #"{"latitude":47.\#(id),"longitude":8.5,"driverFirstName":"Luca"}"#, at: 1_700_000_000_000)
        }
        rows.insert(LiveRow(id: 121, topic: "fleet", type: "status", data: "\"" + String(repeating: "x", count: 9_000) + "\"", at: 0), at: 60)
        rows.insert(LiveRow(id: 123, topic: "fleet", type: "odd", data: "\"a\tb\"", at: 0), at: 10)  // a raw tab: read from the table
        rows.append(LiveRow(id: 122, topic: "user:1", type: "notification", data: #"{"title":"Caf\u00e9 \"ok\"\n"}"#, at: -5))
        let payloads = LiveLog.notifications(rows)
        #expect(payloads.count > 3)
        #expect(payloads.allSatisfy { $0.utf8.count <= LiveLog.maxNotifyBytes })
        var read: [LiveRow] = [], fetched: [Int64] = []
        for payload in payloads {
            let (rows, fetch) = try #require(LiveLog.parseNotification(payload))
            read += rows
            fetched += fetch
        }
        #expect(read == rows.filter { $0.id != 121 && $0.id != 123 }, "every row comes back as it was written")
        #expect(fetched == [123, 121])
        // Payloads of the earlier format, from a process not yet upgraded, are still read.
        let earlier = String(decoding: try JSONEncoder().encode(Array(rows.prefix(2))), as: UTF8.self)
        #expect(LiveLog.parseNotification(earlier)?.rows == Array(rows.prefix(2)))
        #expect(LiveLog.parseNotification(#"{"fetch":[7,8]}"#)?.fetch == [7, 8])
        #expect(LiveLog.parseNotification("R\nnot a row") == nil)
    }
}
