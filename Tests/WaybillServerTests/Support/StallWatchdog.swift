import Foundation
import NIOConcurrencyHelpers

/// A diagnostic for the test process, not a test: when Swift's concurrency threads have run nothing
/// for `quiet` (a task that only sleeps a second and notes the time), it writes what every thread of
/// the process is doing to standard error, once per stall, between `STALL-WATCHDOG` lines that
/// scripts/test prints again at the end of a failed run. A stalled run then says where its threads
/// wait (a lock, a sleep in SQLite, a socket) instead of only which tests timed out.
///
/// The backtraces come from gdb when it is installed and may attach (scripts/test installs it; as
/// root it may, elsewhere Yama's ptrace scope may refuse);
/// otherwise each thread's name, state and the kernel's wait channel from /proc.
enum StallWatchdog {
    /// Longer than a task of the full run waits for a thread on two cores when nothing is wrong
    /// (`WAYBILL_TEST_STALL_SECONDS` to try the watchdog itself).
    static let quiet: TimeInterval = ProcessInfo.processInfo.environment["WAYBILL_TEST_STALL_SECONDS"].flatMap(TimeInterval.init) ?? 90

    /// Starts the watchdog once per process.
    static let started: Void = {
        let lastBeat = NIOLockedValueBox(Date())
        Task.detached {
            while true {
                lastBeat.withLockedValue { $0 = Date() }
                try? await Task.sleep(for: .seconds(1))
            }
        }
        let thread = Thread {
            var reported = false
            while true {
                Thread.sleep(forTimeInterval: 5)
                let silent = Date().timeIntervalSince(lastBeat.withLockedValue { $0 })
                if silent < quiet { reported = false; continue }
                if reported { continue }
                reported = true
                report(silent: silent)
            }
        }
        thread.name = "stall-watchdog"
        thread.start()
    }()

    private static func report(silent: TimeInterval) {
        var text = "STALL-WATCHDOG begin: no concurrency task has run for \(Int(silent)) s (pid \(getpid()))\n"
        text += threadStates()
        if let traces = gdbBacktraces() { text += traces }
        text += "STALL-WATCHDOG end\n"
        FileHandle.standardError.write(Data(text.utf8))
    }

    /// Each thread's name, state (R running, S sleeping, D in the kernel), wait channel and system call.
    private static func threadStates() -> String {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        var lines = ""
        for tid in tasks.sorted(by: { (Int($0) ?? 0) < (Int($1) ?? 0) }) {
            func read(_ name: String) -> String {
                ((try? String(contentsOfFile: "/proc/self/task/\(tid)/\(name)", encoding: .utf8)) ?? "?")
                    .trimmingCharacters(in: .whitespacesAndNewlines)
            }
            let stat = read("stat")
            // The state is the field after the parenthesized name.
            let state = stat.range(of: ") ").map { String(stat[$0.upperBound...].prefix(1)) } ?? "?"
            let syscall = read("syscall").split(separator: " ").first.map(String.init) ?? "?"
            lines += "STALL-WATCHDOG thread \(tid) \(read("comm")) state=\(state) wchan=\(read("wchan")) syscall=\(syscall)\n"
        }
        return lines
    }

    private static func gdbBacktraces() -> String? {
        guard let gdb = ["/usr/bin/gdb", "/usr/local/bin/gdb"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            return nil
        }
        // Into a file, not a pipe: gdb stops this process, this thread included, while it writes.
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("stall-watchdog-\(getpid()).txt")
        guard FileManager.default.createFile(atPath: file.path, contents: nil), let handle = try? FileHandle(forWritingTo: file) else { return nil }
        defer { try? FileManager.default.removeItem(at: file) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: gdb)
        process.arguments = ["-p", "\(getpid())", "-batch", "-nx", "-ex", "set pagination off", "-ex", "thread apply all bt 25"]
        process.standardOutput = handle
        process.standardError = handle
        do { try process.run() } catch { return nil }
        process.waitUntilExit()
        try? handle.close()
        guard let text = try? String(contentsOf: file, encoding: .utf8) else { return nil }
        return text.split(separator: "\n", omittingEmptySubsequences: false).map { "STALL-WATCHDOG | \($0)\n" }.joined()
    }
}
