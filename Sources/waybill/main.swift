import Foundation
import NIOCore
import NIOPosix
import Vapor
import WaybillServer

// A crash ends fast (issue 50, item 4): if the server traps anyway, the Swift runtime's crash
// handler prints the crashed thread's backtrace to standard error (the log) and the process exits
// at once, so a supervisor (systemd's `Restart=always`) starts it again. The runtime reads
// SWIFT_BACKTRACE when the process starts, so `serve` sets it and starts itself again in place
// (same process id) when it is not set; an operator's own SWIFT_BACKTRACE wins. Without these
// options the handler symbolicates every frame with line numbers and inlined frames (seconds to
// minutes on a large binary) and waits for a person at the terminal when there is one.
// docs/deploy.md, "When the server crashes".
#if os(Linux)
if ProcessInfo.processInfo.environment["SWIFT_BACKTRACE"] == nil, WaybillCrashes.serves(CommandLine.arguments) {
    setenv("SWIFT_BACKTRACE", WaybillCrashes.backtraceOptions, 1)
    execv("/proc/self/exe", CommandLine.unsafeArgv)
    // Only reached if the exec failed: serve all the same, with the runtime's default handler.
    FileHandle.standardError.write(Data("waybill: could not restart with SWIFT_BACKTRACE set (errno \(errno)); crashes will use the runtime's defaults\n".utf8))
}
#endif

// Swift Concurrency runs its tasks on NIO's event loops instead of a second pool of threads: a
// request's code then stays on the thread its connection lives on, instead of hopping between the
// two pools at every `await` (the largest single cost of a cheap request on two cores,
// docs/performance.md). Nothing here blocks a thread: bcrypt, SQLite and file reads have their own.
// Before anything else runs asynchronously, as NIO requires.
if ProcessInfo.processInfo.environment["WAYBILL_NIO_EXECUTOR"] != "0" {
    _ = NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
}

#if canImport(Glibc)
// glibc hands freed memory at the top of a heap back to the kernel once 128 KiB of it is free, and
// each thread's heap is trimmed the same way: a page of orders allocates and frees a few hundred
// KiB, so every request faulted its pages in again (6 % of the list in page faults and madvise,
// docs/performance.md). Keep up to 32 MiB free per heap, and grow heaps 1 MiB at a time.
// `MALLOC_TRIM_THRESHOLD_` and `MALLOC_TOP_PAD_` in the environment still win.
// (`mallopt` is not in Swift's Glibc module: looked up by name; -1 and -2 are M_TRIM_THRESHOLD and
// M_TOP_PAD in <malloc.h>.)
if let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") {
    typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
    let mallopt = unsafeBitCast(symbol, to: Mallopt.self)
    if ProcessInfo.processInfo.environment["MALLOC_TRIM_THRESHOLD_"] == nil { _ = mallopt(-1, 32 << 20) }
    if ProcessInfo.processInfo.environment["MALLOC_TOP_PAD_"] == nil { _ = mallopt(-2, 1 << 20) }
}
#endif

// `waybill serve [--hostname H] [--port P] [--demo]`, `waybill migrate`, `waybill user create …`
var arguments = CommandLine.arguments
let demo = arguments.contains("--demo")
arguments.removeAll { $0 == "--demo" }
// The command is the first known command word (options such as `--env production` come with values).
let command = arguments.dropFirst().first { ["serve", "migrate", "user", "routes", "inbound-mail", "backup"].contains($0) }
let wantsHelp = arguments.contains("--help") || arguments.contains("-h")

var env = try Environment.detect(arguments: arguments)
// LOG_FORMAT=json: one JSON object per line (request-scoped lines carry their request-id).
if !JSONLogHandler.bootstrapIfAsked() { try LoggingSystem.bootstrap(from: &env) }
// OTEL_EXPORTER_OTLP_ENDPOINT: OpenTelemetry traces of requests and database calls (off otherwise).
let tracing: TracingExporter?
do {
    tracing = command == "serve" || command == nil ? try WaybillTracing.bootstrapIfAsked(logger: Logger(label: "waybill.tracing")) : nil
} catch {
    Logger(label: "waybill").critical("\(String(describing: error))")
    exit(1)
}
let app = try await Application.make(env)
if let tracing { app.lifecycle.use(tracing) }
do {
    let config = try WaybillConfig.fromEnvironment(isProduction: env == .production, logger: app.logger)
    try await configure(app, config: config)
    app.registerWaybillCommands()
    let serving = command == "serve" || (command == nil && !wantsHelp)
    if serving { try await prepareToServe(app, demo: demo) }
    try await app.execute()
    if serving { await finishRequests(app) }
} catch {
    app.logger.critical("\(String(describing: error))")
    try? await app.asyncShutdown()
    exit(1)
}
try await app.asyncShutdown()
