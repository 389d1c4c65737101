import Foundation
import Testing
@testable import WaybillServer

@Suite("Background loops sleep between passes")
struct WakeupTests {
    @Test("After a wait that timed out, the next wait still sleeps (no busy loop)")
    func keepsSleeping() async {
        let wakeup = Wakeup()
        let clock = ContinuousClock()
        await wakeup.wait(timeout: .milliseconds(50))
        // A lower bound only: a slow machine makes these longer, never shorter.
        for _ in 0..<3 {
            let elapsed = await clock.measure { await wakeup.wait(timeout: .milliseconds(50)) }
            #expect(elapsed >= .milliseconds(45))
        }
    }

    @Test("A poke wakes the waiter, and a poke with nobody waiting is kept for the next wait")
    func pokes() async throws {
        let wakeup = Wakeup()
        let clock = ContinuousClock()
        // Timeouts of ten minutes: a poke must end the wait long before. (In the full parallel run on
        // two cores a resumed task can wait a minute for a thread, so a shorter bound proves nothing.)
        wakeup.poke()
        let kept = await clock.measure { await wakeup.wait(timeout: .seconds(600)) }
        #expect(kept < .seconds(300))
        let waiting = Task { await clock.measure { await wakeup.wait(timeout: .seconds(600)) } }
        // Poke once the task is known to wait (the wakeup says so), not after some time.
        #expect(try await wakeup.waiterArrived.wait(guard: .seconds(600)) { wakeup.hasWaiter ? true : nil } == true)
        wakeup.poke()
        #expect(await waiting.value < .seconds(300))
    }
}
