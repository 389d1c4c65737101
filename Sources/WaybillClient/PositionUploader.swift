import Foundation

/// Keeps a driver's recorded positions until the server has them, across launches if the app
/// wants: ``InMemoryPositionBuffer`` or ``FilePositionBuffer``.
public protocol PositionBuffer: Sendable {
    func load() async throws -> [PositionReport]
    func save(_ positions: [PositionReport]) async throws
}

public actor InMemoryPositionBuffer: PositionBuffer {
    private var positions: [PositionReport] = []
    public init() {}
    public func load() -> [PositionReport] { positions }
    public func save(_ positions: [PositionReport]) { self.positions = positions }
}

/// Positions not yet sent, in a JSON file (so a driver app that is killed offline loses nothing).
public actor FilePositionBuffer: PositionBuffer {
    public let url: URL
    public init(url: URL) { self.url = url }

    public func load() throws -> [PositionReport] {
        guard FileManager.default.fileExists(atPath: url.path) else { return [] }
        return try JSONDecoder().decode([PositionReport].self, from: Data(contentsOf: url))
    }

    public func save(_ positions: [PositionReport]) throws {
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try JSONEncoder().encode(positions).write(to: url, options: .atomic)
    }
}

/// Sends a driver's positions to the server: in order, in batches, and, while the network is gone,
/// later.
///
/// ```swift
/// let uploader = PositionUploader(session: session)
/// Task { await uploader.run() }              // for as long as the driver is on duty
/// // from CLLocationManager's delegate:
/// await uploader.record(PositionReport(latitude: …, longitude: …, recordedAt: millis))
/// ```
///
/// Positions are kept in order of recording and removed only once the server has acknowledged
/// them, so none is lost; a batch resent after an answer was lost is safe, because the server
/// ignores points it already has, so none arrives twice. Network errors, server errors and 429
/// (honouring `Retry-After`) are retried with backoff; call ``networkDidBecomeAvailable()`` (from
/// `NWPathMonitor`, say) to retry at once. Points the server calls impossible (422, named by index)
/// are dropped, since sending them again cannot work. Times are sent to the second.
///
/// With `overLiveChannel: true` batches go as `report` commands on a live connection of the
/// uploader's own (``LivePositionChannel``) instead of one HTTP request each: the same answers and
/// rules, less work for the phone and the server when reporting every second all day.
public actor PositionUploader {
    public enum State: Sendable, Equatable {
        case idle
        case sending
        /// Waiting to retry after a failure (network, server, rate limit, off duty).
        case waiting(reason: String)
        /// The session ended; nothing more is sent.
        case stopped
    }

    public let session: WaybillSession
    public let maxBatch: Int
    let buffer: any PositionBuffer
    let initialBackoff: Duration
    let maxBackoff: Duration
    /// Set with `overLiveChannel`: where batches go instead of `POST /drivers/me/locations`.
    public let channel: LivePositionChannel?

    public private(set) var pending: [PositionReport] = [] { didSet { publish() } }
    public private(set) var state: State = .idle { didSet { publish() } }
    /// Points the server stored, and points it already had (resent) or found too close together.
    public private(set) var accepted = 0 { didSet { publish() } }
    public private(set) var ignored = 0 { didSet { publish() } }
    /// Points dropped because the server called them impossible.
    public private(set) var rejected: [PositionReport] = [] { didSet { publish() } }

    /// Where the uploader stands, for an app's "3 positions waiting to be sent" line.
    public struct Progress: Sendable, Equatable {
        public let pending: Int
        public let state: State
        public let accepted: Int
        public let ignored: Int
        public let rejected: Int
    }

    public var progress: Progress {
        Progress(pending: pending.count, state: state, accepted: accepted, ignored: ignored, rejected: rejected.count)
    }

    /// The current ``progress``, then each change of it, as it happens (no polling).
    public func progressUpdates() -> AsyncStream<Progress> {
        let (stream, continuation) = AsyncStream.makeStream(of: Progress.self, bufferingPolicy: .bufferingNewest(64))
        let id = UUID()
        observers[id] = continuation
        continuation.yield(progress)
        continuation.onTermination = { [weak self] _ in
            Task { await self?.stopObserving(id) }
        }
        return stream
    }

    private var observers: [UUID: AsyncStream<Progress>.Continuation] = [:]
    private func stopObserving(_ id: UUID) { observers[id] = nil }
    private func publish() {
        guard !observers.isEmpty else { return }
        let now = progress
        for observer in observers.values { observer.yield(now) }
    }
    private var loaded = false
    private var lastRecorded: Int64?
    private var waiter: CheckedContinuation<Void, Never>?
    private var generation = 0
    private var failures = 0

    public init(session: WaybillSession, buffer: any PositionBuffer = InMemoryPositionBuffer(), maxBatch: Int = 500,
                initialBackoff: Duration = .seconds(1), maxBackoff: Duration = .seconds(60), overLiveChannel: Bool = false) {
        self.session = session
        channel = overLiveChannel ? LivePositionChannel(session: session) : nil
        self.buffer = buffer
        self.maxBatch = min(max(maxBatch, 1), 500)
        self.initialBackoff = initialBackoff
        self.maxBackoff = maxBackoff
    }

    private func loadIfNeeded() async {
        guard !loaded else { return }
        loaded = true
        let stored = (try? await buffer.load()) ?? []
        pending = stored + pending
    }

    /// Adds a position to send. Positions travel to the second, so one in the same second as the
    /// last one recorded, or older, is left out (the server would ignore it).
    public func record(_ position: PositionReport) async {
        await loadIfNeeded()
        if let last = lastRecorded ?? pending.last?.recordedAt, position.recordedAt / 1000 <= last / 1000 { return }
        lastRecorded = position.recordedAt
        pending.append(position)
        try? await buffer.save(pending)
        wake()
    }

    /// Tells the uploader the network is back: retry now rather than after the backoff.
    public func networkDidBecomeAvailable() {
        failures = 0
        wake()
    }

    /// Sends everything pending now, batch after batch, oldest first. Throws the first failure;
    /// what was not acknowledged stays pending.
    public func flush() async throws(WaybillError) {
        await loadIfNeeded()
        while !pending.isEmpty {
            let batch = Array(pending.prefix(maxBatch))
            state = .sending
            do {
                let receipt = try await send(batch)
                accepted += receipt.accepted
                ignored += receipt.ignored
                remove(batch)
            } catch {
                if case .server(let problem) = error, problem.status == 422 {
                    let bad = Self.indices(in: problem.fields).filter { $0 < batch.count }
                    // Nothing named: the batch itself is the problem; keep sending the rest.
                    let drop = bad.isEmpty ? Array(batch.indices) : bad.sorted()
                    rejected += drop.map { batch[$0] }
                    remove(drop.map { batch[$0] })
                    continue
                }
                throw error
            }
            try? await buffer.save(pending)
        }
        state = .idle
    }

    /// One batch, over the live channel or HTTP: what the server stored and what it already had.
    private func send(_ batch: [PositionReport]) async throws(WaybillError) -> (accepted: Int, ignored: Int) {
        if let channel {
            let receipt = try await channel.report(batch)
            return (receipt.accepted, receipt.ignored)
        }
        let receipt = try await session.reportPositions(batch)
        return (receipt.accepted, receipt.ignored)
    }

    private func remove(_ sent: [PositionReport]) {
        var gone = Set(sent.map(\.recordedAt))
        pending.removeAll { point in
            if gone.contains(point.recordedAt) { gone.remove(point.recordedAt); return true }
            return false
        }
    }

    /// `positions[3].latitude` → 3.
    static func indices(in fields: [String: String]) -> Set<Int> {
        var result: Set<Int> = []
        for key in fields.keys where key.hasPrefix("positions[") {
            let digits = key.dropFirst("positions[".count).prefix { $0.isNumber }
            if let index = Int(digits) { result.insert(index) }
        }
        return result
    }

    /// Sends positions as they are recorded until the task is cancelled or the session ends.
    public func run() async {
        await sendAsRecorded()
        await channel?.close()
    }

    private func sendAsRecorded() async {
        await loadIfNeeded()
        while !Task.isCancelled {
            if pending.isEmpty {
                state = .idle
                await wait(upTo: nil)
                continue
            }
            do {
                try await flush()
                failures = 0
            } catch {
                switch error {
                case .sessionEnded, .notSignedIn:
                    state = .stopped
                    return
                default:
                    let delay: Duration
                    if case .server(let problem) = error, let seconds = problem.retryAfter {
                        delay = .seconds(max(seconds, 1))
                    } else {
                        delay = min(initialBackoff * (1 << min(failures, 16)), maxBackoff)
                    }
                    failures += 1
                    state = .waiting(reason: error.code ?? error.description)
                    await wait(upTo: delay)
                }
            }
        }
    }

    private func wait(upTo delay: Duration?) async {
        generation += 1
        let mine = generation
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                if Task.isCancelled { continuation.resume(); return }
                waiter = continuation
                if let delay {
                    Task { [weak self] in
                        try? await Task.sleep(for: delay)
                        await self?.wake(generation: mine)
                    }
                }
            }
        } onCancel: {
            Task { await self.wake() }
        }
    }

    private func wake(generation: Int? = nil) {
        if let generation, generation != self.generation { return }
        waiter?.resume()
        waiter = nil
    }
}
