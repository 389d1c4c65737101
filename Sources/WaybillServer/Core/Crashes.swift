import Vapor

/// How the server's process ends if it traps anyway (issue 50, item 4; docs/deploy.md).
public enum WaybillCrashes {
    /// The Swift runtime's crash handler options `waybill serve` runs with unless SWIFT_BACKTRACE is
    /// set: no waiting for a person at a terminal, the crashed thread only, symbols without line
    /// numbers or inlined frames (the slow part on a large binary), to standard error. The process
    /// then exits, within a second or two, for its supervisor to start it again.
    public static let backtraceOptions =
        "enable=yes,interactive=no,symbolicate=fast,threads=crashed,registers=none,images=none,sanitize=yes,output-to=stderr"

    /// The commands `waybill` runs as a server: `serve`, or no command at all (as `main` decides).
    public static func serves(_ arguments: [String]) -> Bool {
        let known: Set<String> = ["serve", "migrate", "user", "routes", "inbound-mail", "backup"]
        let command = arguments.dropFirst().first { known.contains($0) }
        return command == "serve" || (command == nil && !arguments.contains("--help") && !arguments.contains("-h"))
    }
}

extension WaybillCrashes {
    /// Set to 1 (outside production) for `scripts/crash-test`: `GET /_crash-test/trap` then traps in
    /// the request's own task, exactly as a failed force unwrap in a handler would, so the test sees
    /// the real crash handler end the real process. Never registered in production, nor without it.
    public static let trapRouteVariable = "WAYBILL_CRASH_TEST_TRAP_ROUTE"

    static func registerTrapRoute(on app: Application) {
        guard app.environment != .production, Environment.get(trapRouteVariable) == "1" else { return }
        app.logger.warning("\(trapRouteVariable)=1: GET /_crash-test/trap ends this process (for scripts/crash-test only)")
        app.get("_crash-test", "trap") { req -> HTTPStatus in
            let nothing = Int(req.headers.first(name: "X-Crash-Test") ?? "not a number")
            _ = nothing!  // cannot fail: in service (route only with trapRouteVariable=1, never in production); the crash test's trap
            return .ok
        }
    }
}
