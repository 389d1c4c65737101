/// Rules for one-time codes sent by mail (email verification, password reset, invitations).
public enum OneTimeCodePolicy {
    public static let digits = 6
    /// Seconds a code stays valid.
    public static let lifetime: Int64 = 10 * 60
    /// Wrong tries after which a code is dead.
    public static let maxAttempts = 5
    /// Codes of one purpose mailed to one account: at most this many per hour…
    public static let maxSendsPerHour = 5
    /// …and no two within this many seconds.
    public static let minSecondsBetweenSends: Int64 = 30
}

/// Growing delays after failed sign-ins, rather than a lockout that an attacker could trigger at will.
///
/// Attempts are counted in a one-hour window *before* the password is compared (a success takes
/// its count back), so parallel guesses cannot slip past the count. The first `freeFailures`
/// attempts are heard at once; from then on each one doubles the wait before the next attempt
/// is heard, up to `maxDelay` seconds. At `maxFailuresPerWindow` no attempt is heard until the
/// window ends.
public struct LoginThrottlePolicy: Sendable, Equatable {
    public var freeFailures: Int
    public var maxDelay: Int64
    public var maxFailuresPerWindow: Int
    public var window: Int64

    public init(freeFailures: Int, maxDelay: Int64, maxFailuresPerWindow: Int, window: Int64 = 3600) {
        self.freeFailures = freeFailures
        self.maxDelay = maxDelay
        self.maxFailuresPerWindow = maxFailuresPerWindow
        self.window = window
    }

    /// Per account: at most 100 failures an hour, a delay from the sixth.
    public static let perAccount = LoginThrottlePolicy(freeFailures: 5, maxDelay: 30, maxFailuresPerWindow: 100)
    /// Per client address: more generous (offices share addresses), same shape.
    public static let perClient = LoginThrottlePolicy(freeFailures: 20, maxDelay: 30, maxFailuresPerWindow: 1000)

    /// Seconds to wait after the `failures`-th failure in the current window (0 = none).
    public func delay(afterFailures failures: Int) -> Int64 {
        guard failures >= freeFailures else { return 0 }
        let exponent = min(failures - freeFailures, 20)
        return min(Int64(1) << Int64(exponent), maxDelay)
    }

    /// When the next attempt may be heard, given the failures so far in a window that started at
    /// `windowStart` and whose last failure was at `lastFailure` (Unix seconds). `nil` = now.
    public func nextAttemptAllowed(failures: Int, windowStart: Int64, lastFailure: Int64, now: Int64) -> Int64? {
        let (windowEnd, endOverflow) = windowStart.addingReportingOverflow(window)
        if endOverflow || now >= windowEnd { return nil }
        if failures >= maxFailuresPerWindow { return windowEnd }
        let wait = delay(afterFailures: failures)
        guard wait > 0 else { return nil }
        // Times are whole seconds: a wait of d seconds ends d seconds after the end of the second
        // the last attempt was counted in, so it can never shrink to a few milliseconds at a
        // second's boundary. Stored times are ours, but saturate rather than trap all the same.
        let next = lastFailure.addingReportingOverflow(wait + 1)
        if next.overflow { return windowEnd }
        return next.partialValue > now ? next.partialValue : nil
    }
}
