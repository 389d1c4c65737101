import Foundation
import Vapor
import WaybillServer

// `waybill serve [--hostname H] [--port P] [--demo]`, `waybill migrate`, `waybill user create …`
var arguments = CommandLine.arguments
let demo = arguments.contains("--demo")
arguments.removeAll { $0 == "--demo" }
let command = arguments.dropFirst().first { !$0.hasPrefix("-") }

var env = try Environment.detect(arguments: arguments)
try LoggingSystem.bootstrap(from: &env)
let app = try await Application.make(env)
do {
    let config = try WaybillConfig.fromEnvironment(isProduction: env.isRelease, logger: app.logger)
    try await configure(app, config: config)
    app.registerWaybillCommands()
    if command == nil || command == "serve" {
        try await prepareToServe(app, demo: demo)
    }
    try await app.execute()
} catch {
    app.logger.critical("\(String(describing: error))")
    try? await app.asyncShutdown()
    exit(1)
}
try await app.asyncShutdown()
