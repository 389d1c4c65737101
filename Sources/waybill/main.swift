import Foundation
import Vapor
import WaybillServer

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
let app = try await Application.make(env)
do {
    let config = try WaybillConfig.fromEnvironment(isProduction: env == .production, logger: app.logger)
    try await configure(app, config: config)
    app.registerWaybillCommands()
    if command == "serve" || (command == nil && !wantsHelp) {
        try await prepareToServe(app, demo: demo)
    }
    try await app.execute()
} catch {
    app.logger.critical("\(String(describing: error))")
    try? await app.asyncShutdown()
    exit(1)
}
try await app.asyncShutdown()
