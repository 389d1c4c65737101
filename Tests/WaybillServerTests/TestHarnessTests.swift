import Foundation
import Testing

/// The harness's own guard: a test that hangs once its database is ready fails by itself.
@Suite("The test harness stops a test that hangs")
struct TestHarnessTests {
    @Test("A body still running at its time limit is cancelled and the test fails; one that finishes in time passes")
    func hangingBodyIsCancelled() async throws {
        let started = ContinuousClock.now
        await withKnownIssue("the body overran its limit on purpose") {
            try await TestServer.withTimeLimit(.milliseconds(200)) {
                try await Task.sleep(for: .seconds(120))
            }
        }
        // Cancelled at the limit, not after the two minutes the body asked for.
        #expect(ContinuousClock.now - started < .seconds(60))
        var ran = false
        try await TestServer.withTimeLimit(.seconds(60)) { ran = true }
        #expect(ran)
    }
}
