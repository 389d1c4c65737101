import Foundation
import NIOConcurrencyHelpers

/// An in-memory token bucket per key, for limits that must cost nothing per request (position
/// reports, public tracking look-ups). Each process keeps its own buckets: with N processes behind a
/// load balancer a client may get up to N times the rate, which is acceptable for these limits.
final class TokenBuckets: Sendable {
    let ratePerSecond: Double
    let burst: Double
    private let buckets = NIOLockedValueBox<[String: (tokens: Double, at: Double)]>([:])

    init(ratePerSecond: Double, burst: Double) {
        self.ratePerSecond = ratePerSecond
        self.burst = burst
    }

    /// Spends every key's bucket and more: the next token comes back only after a full burst's
    /// time. For tests that need the limit reached without racing the clock on a loaded machine.
    func exhaustAll(now: Double = Date().timeIntervalSince1970) {
        buckets.withLockedValue { buckets in
            for key in buckets.keys { buckets[key] = (-burst, now) }
        }
    }

    /// Gives back a token taken for something that turned out not to count (a tracking link that
    /// exists: only misses count, but they are counted before the look-up).
    func giveBack(_ key: String) {
        buckets.withLockedValue { buckets in
            guard var bucket = buckets[key] else { return }
            bucket.tokens = min(burst, bucket.tokens + 1)
            buckets[key] = bucket
        }
    }

    /// Takes one token for `key`. Returns nil if allowed, else the seconds until a token is back.
    func take(_ key: String, now: Double = Date().timeIntervalSince1970) -> Int? {
        buckets.withLockedValue { buckets in
            if buckets.count > 100_000 {
                // Forget full buckets (idle keys) rather than grow without bound.
                buckets = buckets.filter { $0.value.tokens + (now - $0.value.at) * ratePerSecond < burst }
            }
            var bucket = buckets[key] ?? (burst, now)
            bucket.tokens = min(burst, bucket.tokens + (now - bucket.at) * ratePerSecond)
            bucket.at = now
            guard bucket.tokens >= 1 else {
                buckets[key] = bucket
                // A rate of (nearly) nothing must not turn into Int(infinity), which traps.
                let wait = ((1 - bucket.tokens) / ratePerSecond).rounded(.up)
                return wait.isFinite && wait < 86_400 ? max(1, Int(wait)) : 86_400
            }
            bucket.tokens -= 1
            buckets[key] = bucket
            return nil
        }
    }
}
