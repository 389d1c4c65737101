import Fluent
import SQLKit
import Vapor
import NIOConcurrencyHelpers

/// Messages leave through the outbox: written in the transaction that caused them, sent afterwards
/// by a worker that retries with growing delays. A crash or an SMTP outage delays mail; it never
/// loses it.
public struct Outbox: Sendable {
    static let mailKind = "mail"
    /// A cancelled order's card or TWINT payment to give back; the payload is the order id.
    static let refundKind = "refund"
    /// One push notification to one device (payload: `PushJob` as JSON).
    static let pushKind = "push"
    /// How long a worker owns a message it is sending before another may try (also how long a
    /// message waits after its sender was killed mid-send).
    static let leaseMillis: Int64 = 2 * 60 * 1000
    static let maxAttempts = 12

    /// Shared: making an encoder per message cost as much as the encoding (one per manager per order).
    static let payloadEncoder = JSONEncoder()

    /// Queues a mail on `db` (pass the transaction's database so both commit together).
    static func enqueue(_ message: MailMessage, on db: any Database) async throws {
        let payload = String(decoding: try payloadEncoder.encode(message), as: UTF8.self)
        try await OutboxMessage(kind: mailKind, payload: payload, nextAttemptAt: UnixTime.nowMillis).insert(on: db)
    }

    /// Queues work for a handler registered with `OutboxWorker.handle(_:with:)`, retried like mail.
    static func enqueueJob(kind: String, payload: String, on db: any Database) async throws {
        try await OutboxMessage(kind: kind, payload: payload, nextAttemptAt: UnixTime.nowMillis).insert(on: db)
    }

    /// Seconds before attempt `n + 1` after `n` failures: 5 s, 10 s, 20 s … capped at one hour.
    static func backoffSeconds(afterAttempts attempts: Int) -> Int64 {
        min(Int64(5) << Int64(min(max(attempts - 1, 0), 20)), 3600)
    }
}

/// Where the server reads the time. The application has one (`WaybillServices.clock`): the
/// system's, or in tests a clock they move forward instead of sleeping.
public struct WaybillClock: Sendable {
    public let now: @Sendable () -> Date

    public init(now: @escaping @Sendable () -> Date) { self.now = now }

    public static let system = WaybillClock { Date() }
}

/// Where the server draws random numbers (order references, codes, link and refresh tokens): the
/// system's cryptographic generator, or in tests a seeded one, so what is drawn can be foreseen.
public struct WaybillRandom: Sendable {
    public let next: @Sendable () -> UInt64

    public init(next: @escaping @Sendable () -> UInt64) { self.next = next }

    public static let system = WaybillRandom {
        var generator = SystemRandomNumberGenerator()
        return generator.next()
    }

    /// SplitMix64 from `seed`: the same numbers in the same order every time. Tests only.
    public static func seeded(_ seed: UInt64) -> WaybillRandom {
        let state = NIOLockedValueBox(seed)
        return WaybillRandom {
            state.withLockedValue { s -> UInt64 in
                s &+= 0x9E37_79B9_7F4A_7C15
                var z = s
                z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
                z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
                return z ^ (z >> 31)
            }
        }
    }
}

/// Runs `body` reading `clock` and `random` through `UnixTime` and `Randomness`: the one way the
/// application's clock and randomness are bound (a request, a background job, a transaction's body,
/// a test calling a service).
func withApplicationContext<T>(clock: WaybillClock, random: WaybillRandom, _ body: () async throws -> T) async rethrows -> T {
    try await UnixTime.$clock.withValue(clock) { try await Randomness.$current.withValue(random) { try await body() } }
}

/// The random numbers of the application serving the current request or job (bound with the
/// clock by `ClockMiddleware` and the background workers); elsewhere the system's.
enum Randomness {
    @TaskLocal static var current: WaybillRandom = .system

    struct Generator: RandomNumberGenerator {
        let source: WaybillRandom
        mutating func next() -> UInt64 { source.next() }
    }

    static var generator: Generator { Generator(source: current) }

    /// `count` random bytes from `current`, eight to each number drawn (not one number a byte,
    /// as `UInt8.random(in:using:)` draws: each of the system's numbers is a system call).
    static func bytes(_ count: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count + 7)
        while bytes.count < count {
            withUnsafeBytes(of: current.next()) { bytes.append(contentsOf: $0) }
        }
        bytes.removeLast(bytes.count - count)
        return bytes
    }

    /// A version 4 UUID drawn from `current`: new ids are the application's randomness like the rest.
    static func uuid() -> UUID {
        let high = current.next(), low = current.next()
        var bytes = withUnsafeBytes(of: high.bigEndian) { Array($0) } + withUnsafeBytes(of: low.bigEndian) { Array($0) }
        bytes[6] = (bytes[6] & 0x0F) | 0x40  // version 4
        bytes[8] = (bytes[8] & 0x3F) | 0x80  // RFC 4122 variant
        return UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                           bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
    }
}

/// Unix time, as stored in integer columns (named so as not to shadow the standard `Clock`). It
/// reads the clock of the application serving the current request or job (`UnixTime.$clock`, bound
/// by `ClockMiddleware` and the background workers); elsewhere the system's.
enum UnixTime {
    @TaskLocal static var clock: WaybillClock = .system

    static var now: Date { clock.now() }
    static var nowMillis: Int64 { Int64(now.timeIntervalSince1970 * 1000) }
    static var nowSeconds: Int64 { Int64(now.timeIntervalSince1970) }

    /// The date of a stored time.
    static func date(_ millis: Int64) -> Date { Date(timeIntervalSince1970: Double(millis) / 1000) }

    /// Times from outside are kept within ±2^53 ms (about ±285,000 years): far beyond any real time,
    /// and every sum or difference of two of them fits in 64 bits.
    static let outsideRange: ClosedRange<Int64> = -(Int64(1) << 53)...(Int64(1) << 53)

    /// Milliseconds of a date that came from outside, or nil if it is not a finite time in range
    /// (`Int64(x)` traps on a Double out of range, as a date in the year 300,000,000 would be).
    static func millis(_ date: Date) -> Int64? {
        let value = (date.timeIntervalSince1970 * 1000).rounded()
        guard value.isFinite, let millis = Int64(exactly: value), outsideRange.contains(millis) else { return nil }
        return millis
    }

    /// The same, clamped into range: for a filter bound, where "after the year 300,000,000" simply
    /// matches nothing.
    static func clampedMillis(_ date: Date) -> Int64 {
        let value = date.timeIntervalSince1970 * 1000
        guard value.isFinite else { return value > 0 ? outsideRange.upperBound : outsideRange.lowerBound }
        return Int64(min(max(value, Double(outsideRange.lowerBound)), Double(outsideRange.upperBound)))
    }
}

/// Sends what the outbox holds. One runs in each `waybill serve` process; several processes on one
/// PostgreSQL share the work safely, because each message is claimed with a conditional update.
public final class OutboxWorker: Sendable {
    let db: @Sendable () -> any Database
    let writeLock: WriteLock
    let mailer: any Mailer
    let from: MailAddress
    let logger: Logger
    let interval: Duration
    /// The process's counters (`/metrics`); the outbox counts its failed attempts there.
    let metrics = WaybillMetrics()
    private let handlers = NIOLockedValueBox<[String: @Sendable (String) async throws -> Void]>([:])
    private let wakeup = Wakeup()

    init(db: @escaping @Sendable () -> any Database, writeLock: WriteLock, mailer: any Mailer, from: MailAddress,
         logger: Logger, interval: Duration = .seconds(1)) {
        self.db = db
        self.writeLock = writeLock
        self.mailer = mailer
        self.from = from
        self.logger = logger
        self.interval = interval
    }

    /// Registers what to do with messages of `kind` other than mail.
    func handle(_ kind: String, with handler: @escaping @Sendable (String) async throws -> Void) {
        handlers.withLockedValue { $0[kind] = handler }
    }

    /// Asks the worker to look now rather than at its next tick.
    public func poke() { wakeup.poke() }

    /// Runs until the task is cancelled.
    public func run() async {
        logger.debug("Outbox worker started")
        while !Task.isCancelled {
            do {
                _ = try await runOnce()
            } catch {
                logger.warning("Outbox pass failed: \(String(describing: error))")
            }
            // Wait for a poke or the next tick, whichever comes first.
            await wakeup.wait(timeout: interval)
        }
    }

    /// One pass: sends every message that is due. Returns how many were delivered.
    @discardableResult
    public func runOnce(limit: Int = 50) async throws -> Int {
        let db = self.db()
        guard let sql = db.tracedSQL else { return 0 }
        let now = UnixTime.nowMillis
        let due = try await OutboxMessage.query(on: db)
            .filter(\.$status == .pending)
            .filter(\.$nextAttemptAt <= now)
            .sort(\.$nextAttemptAt)
            .limit(limit)
            .all()
        var delivered = 0
        for message in due {
            guard let id = message.id else { continue }
            // Claim it: only one worker wins the conditional update.
            let claimed = try await writeLock.withLock {
                try await sql.update(OutboxMessage.schema)
                    .set("next_attempt_at", to: SQLBind(now + Outbox.leaseMillis))
                    .where("id", .equal, SQLBind(id))
                    .where("status", .equal, SQLBind(OutboxMessage.Status.pending.rawValue))
                    .where("next_attempt_at", .equal, SQLBind(message.nextAttemptAt))
                    .returning("id")
                    .all()
            }
            guard !claimed.isEmpty else { continue }
            do {
                try await deliver(message)
                message.status = .sent
                message.sentAt = UnixTime.now
                message.payload = nil
                message.lastError = nil
                message.attempts += 1
                try await writeLock.withLock { try await message.save(on: db) }
                delivered += 1
            } catch {
                metrics.outboxFailure(kind: message.kind)
                message.attempts += 1
                message.lastError = String(String(describing: error).prefix(500))
                if message.attempts >= Outbox.maxAttempts {
                    message.status = .dead
                    logger.error("Outbox message \(id) given up after \(message.attempts) attempts: \(message.lastError ?? "")")
                } else {
                    message.nextAttemptAt = UnixTime.nowMillis + Outbox.backoffSeconds(afterAttempts: message.attempts) * 1000
                    logger.warning("Outbox message \(id) failed (attempt \(message.attempts)), retrying: \(message.lastError ?? "")")
                }
                try await writeLock.withLock { try await message.save(on: db) }
            }
        }
        return delivered
    }

    private func deliver(_ message: OutboxMessage) async throws {
        switch message.kind {
        case Outbox.mailKind:
            guard let payload = message.payload else { return }
            var mail = try JSONDecoder().decode(MailMessage.self, from: Data(payload.utf8))
            // Delivery is at least once (a crash between the server's "250 OK" and marking the row
            // sent means sending again): the same Message-ID lets mail systems keep one copy.
            mail.messageID = mail.messageID ?? "outbox-\(message.id?.uuidString.lowercased() ?? UUID().uuidString.lowercased())"
            try await mailer.send(mail, from: from)
        default:
            guard let handler = handlers.withLockedValue({ $0[message.kind] }) else {
                throw Abort(.internalServerError, reason: "Unknown outbox kind \(message.kind)")
            }
            try await handler(message.payload ?? "")
        }
    }
}
