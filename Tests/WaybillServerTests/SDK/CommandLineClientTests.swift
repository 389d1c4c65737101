import Foundation
import Testing
import Vapor
import WaybillCore
@testable import WaybillServer

/// Runs the built `waybill-client` executable, as a person or a script would.
struct CLI: Sendable {
    let server: String
    let sessionFile: String
    /// Runs every command as this API key (`WAYBILL_API_KEY`).
    var apiKey: String? = nil

    /// `.build/debug/waybill-client`, next to the test bundle (or `WAYBILL_CLIENT_BIN`).
    static let executable: URL? = {
        if let path = ProcessInfo.processInfo.environment["WAYBILL_CLIENT_BIN"] { return URL(fileURLWithPath: path) }
        var candidates: [URL] = []
        var dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<5 {
            candidates.append(dir.appendingPathComponent("waybill-client"))
            dir.deleteLastPathComponent()
        }
        // The package's own build folder, found from this file.
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        candidates.append(root.appendingPathComponent(".build/debug/waybill-client"))
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }()

    struct Result: Sendable, CustomStringConvertible {
        var status: Int32
        var stdout: String
        var stderr: String
        var json: JSON { JSON(data: Data(stdout.utf8)) }
        /// One JSON document per line.
        var lines: [JSON] { stdout.split(separator: "\n").map { JSON(data: Data($0.utf8)) } }
        var description: String { "exit \(status)\nstdout: \(stdout)\nstderr: \(stderr)" }
    }

    /// Starts the command (standard input `/dev/null` unless `input`).
    func start(_ arguments: [String], input: Bool = false) throws -> Spawned {
        let executable = try #require(Self.executable, "build waybill-client first (swift build)")
        var environment = ProcessInfo.processInfo.environment
        environment["WAYBILL_SERVER"] = server
        environment["WAYBILL_SESSION_FILE"] = sessionFile
        if let apiKey { environment["WAYBILL_API_KEY"] = apiKey } else { environment.removeValue(forKey: "WAYBILL_API_KEY") }
        environment.removeValue(forKey: "WAYBILL_PASSWORD")
        return try Spawned(executable.path, arguments, environment: environment, input: input)
    }

    /// Runs the command to its end.
    @discardableResult
    func run(_ arguments: String...) async throws -> Result {
        try await run(arguments)
    }

    /// Reads the child's output to its end off the concurrency pool, then waits for its exit.
    /// `readingStderr: false` when something else reads the standard error as it comes.
    ///
    /// On threads of their own, not Dispatch's global queue: on Linux its default-priority threads
    /// are the ones Swift's tasks run on (one per core). Blocked in `read` there until the child ends,
    /// they left no thread for the server the child was waiting on, and the whole test process
    /// stalled until the server dropped the idle connection ten minutes later (the stall watchdog's
    /// backtrace of a full run showed `CLI.finish` in `read` on a `default-qos` thread).
    static func finish(_ child: Spawned, readingStderr: Bool = true, readingStdout: Bool = true) async -> Result {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                let stderrDone = DispatchSemaphore(value: 0)
                nonisolated(unsafe) var stderr = Data()
                if readingStderr {
                    Thread.detachNewThread {
                        stderr = child.stderr.readDataToEndOfFile()
                        stderrDone.signal()
                    }
                } else {
                    stderrDone.signal()
                }
                let stdout = readingStdout ? child.stdout.readDataToEndOfFile() : Data()
                stderrDone.wait()
                let status = child.waitForExit()
                continuation.resume(returning: Result(status: status, stdout: String(decoding: stdout, as: UTF8.self),
                                                      stderr: String(decoding: stderr, as: UTF8.self)))
            }
        }
    }
}

@Suite("The command-line client drives a delivery through the SDK")
struct CommandLineClientTests {
    @Test("waybill-client takes an order from sign-up to a delivery with a signature, while `track` follows it live",
          arguments: TestDatabase.available)
    func journey(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            try await server.serving { port in
                let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("waybill-cli-\(UUID().uuidString)")
                try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
                defer { try? FileManager.default.removeItem(at: scratch) }
                let url = "http://127.0.0.1:\(port)"
                let ada = CLI(server: url, sessionFile: scratch.appendingPathComponent("ada.json").path)
                let boss = CLI(server: url, sessionFile: scratch.appendingPathComponent("boss.json").path)
                let luca = CLI(server: url, sessionFile: scratch.appendingPathComponent("luca.json").path)

                // The customer signs up, confirms the address and signs in.
                let registered = try await ada.run("register", "--email", "ada@example.com", "--password", TestServer.password,
                                                   "--first-name", "Ada", "--last-name", "Muster", "--address", "Bahnhofstrasse 1",
                                                   "--postal-code", "8001", "--city", "Zürich")
                #expect(registered.status == 0, "\(registered)")
                let code = try await server.code(for: "ada@example.com")
                #expect(try await ada.run("verify", "--email", "ada@example.com", code).status == 0)
                let login = try await ada.run("login", "--email", "ada@example.com", "--password", TestServer.password, "--json")
                #expect(login.status == 0, "\(login)")
                #expect(login.json["role"].string == "customer")
                let mode = try FileManager.default.attributesOfItem(atPath: ada.sessionFile)[.posixPermissions] as? NSNumber
                #expect(mode?.intValue == 0o600)

                // Staff accounts, as `waybill user create` makes them.
                try await server.createAccount("boss@courier.example", role: .manager)
                try await server.createAccount("luca@courier.example", role: .driver)
                #expect(try await boss.run("login", "--email", "boss@courier.example", "--password", TestServer.password).status == 0)
                #expect(try await luca.run("login", "--email", "luca@courier.example", "--password", TestServer.password).status == 0)

                // A quote, then the order, paid in cash.
                let delivery = ["--to-street", "Bundesplatz 3", "--to-postal-code", "3005", "--to-city", "Bern",
                                "--to-latitude", "46.9466", "--to-longitude", "7.4441", "--from-latitude", "47.3779", "--from-longitude", "8.5403"]
                let quote = try await ada.run(["quote", "--json"] + delivery)
                #expect(quote.status == 0, "\(quote)")
                let price = try #require(quote.json["price"]["amount"].int)
                let created = try await ada.run(["order", "create", "--payment", "cash", "--recipient-name", "Bea Beispiel", "--json"] + delivery)
                #expect(created.status == 0, "\(created)")
                let id = try #require(created.json["order"]["id"].string)
                #expect(created.json["order"]["status"].string == "pending")
                #expect(created.json["order"]["price"]["amount"].int == price)
                #expect(try await ada.run("orders", "--json").json["items"][0]["id"].string == id)

                // The customer follows the order live from another terminal.
                let tracker = try ada.start(["track", id, "--json"])
                // `track` says "(following …)" on stderr once its live stream is open.
                let following = OutputWatch()
                following.watch(tracker.stderr)
                let tracked = Task { await CLI.finish(tracker, readingStderr: false) }
                try #require(try await following.until("(following"), "waybill-client track never said it was following: \(following.output)")

                // The manager assigns the order to the driver by email.
                let drivers = try await boss.run("users", "--role", "driver", "--json")
                #expect(drivers.json["items"].array.map { $0["email"].string } == ["luca@courier.example"])
                let assigned = try await boss.run("assign", id, "--driver", "luca@courier.example", "--json")
                #expect(assigned.status == 0, "\(assigned)")
                #expect(assigned.json["status"].string == "assigned")

                // The driver goes on duty, accepts, reports a position, picks up with the cash and delivers.
                #expect(try await luca.run("duty", "on").status == 0)
                #expect(try await luca.run("accept", id, "--json").json["status"].string == "accepted")
                #expect(try await luca.run("position", "47.3780", "8.5404").status == 0)
                let cash = String(format: "%.2f", Double(price) / 100)
                let picked = try await luca.run("pickup", id, "--cash", cash, "--json")
                #expect(picked.json["status"].string == "in_transit", "\(picked)")
                let signature = scratch.appendingPathComponent("signature.png")
                try Data(SampleImages.signaturePNG).write(to: signature)
                let delivered = try await luca.run("deliver", id, "--signature", signature.path, "--json")
                #expect(delivered.status == 0, "\(delivered)")
                #expect(delivered.json["status"].string == "delivered")
                #expect(delivered.json["proof"]["recipientName"].string == "Bea Beispiel")

                // `track` saw every step and stopped by itself at delivered.
                let track = await tracked.value
                tracker.stderr.readabilityHandler = nil
                #expect(track.status == 0, "\(track)")
                let statuses = track.lines.filter { $0["type"].string == "status" }.map { $0["data"]["status"].string ?? "" }
                #expect(statuses == ["assigned", "accepted", "in_transit", "delivered"])
                #expect(track.lines.contains { $0["type"].string == "location" })

                // For people: the order's detail; and the server's errors, with their code.
                let shown = try await ada.run("order", "show", id)
                #expect(shown.stdout.contains("Status:     delivered"), "\(shown)")
                #expect(shown.stdout.contains("Bea Beispiel"))
                let missing = try await ada.run("order", "show", UUID().uuidString, "--json")
                #expect(missing.status == 1)
                #expect(JSON(data: Data(missing.stderr.utf8))["error"]["code"].string == "not_found", "\(missing)")
                let refused = try await ada.run("accept", id)
                #expect(refused.status == 1)
                #expect(refused.stderr.contains("error:"))

                // Signed out, commands say how to sign in again.
                #expect(try await ada.run("logout").status == 0)
                let after = try await ada.run("orders")
                #expect(after.status == 1)
                #expect(after.stderr.contains("waybill-client login"))
            }
        }
    }

    @Test("waybill-client chat: the driver opens the delivery's conversation, writes; the customer lists it unread, reads and answers",
          arguments: TestDatabase.available)
    func chat(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            try await server.serving { port in
                let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("waybill-cli-\(UUID().uuidString)")
                try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
                defer { try? FileManager.default.removeItem(at: scratch) }
                let cast = try await server.cast()
                let order = try await server.placeOrder(cast.customer.access)
                try await server.advance(order, to: .accepted, cast: cast)
                let url = "http://127.0.0.1:\(port)"
                let ada = CLI(server: url, sessionFile: scratch.appendingPathComponent("ada.json").path)
                let luca = CLI(server: url, sessionFile: scratch.appendingPathComponent("luca.json").path)
                #expect(try await ada.run("login", "--email", "ada@example.com", "--password", TestServer.password).status == 0)
                #expect(try await luca.run("login", "--email", "luca@courier.example", "--password", TestServer.password).status == 0)

                let opened = try await luca.run("chat", "open", "--shipment", order, "--json")
                #expect(opened.status == 0, "\(opened)")
                let id = try #require(opened.json["id"].string)
                let sent = try await luca.run("chat", "send", id, "I am at the door", "--client-id", "luca-1")
                #expect(sent.status == 0 && sent.stdout.contains("#1") && sent.stdout.contains("you: I am at the door"), "\(sent)")
                #expect(try await luca.run("chat", "send", id, "I am at the door", "--client-id", "luca-1").stdout.contains("#1"), "a retry is the same message")
                let list = try await ada.run("chat")
                #expect(list.stdout.contains("1 unread") && list.stdout.contains(id), "\(list)")
                let shown = try await ada.run("chat", "show", id)
                #expect(shown.stdout.contains("Luca: I am at the door"), "\(shown)")
                #expect(try await ada.run("chat", "list").stdout.contains("0 unread in all"))
                #expect(try await ada.run("chat", "send", id, "Coming down").status == 0)
                let stranger = try await ada.run("chat", "show", UUID().uuidString, "--json")
                #expect(stranger.status == 1 && JSON(data: Data(stranger.stderr.utf8))["error"]["code"].string == "not_found", "\(stranger)")

                // Delivered: they rate each other; the first rating waits for the second.
                try await server.advance(order, to: .delivered, cast: cast, from: .accepted)
                let first = try await ada.run("rate", order, "--stars", "5", "--tag", "on_time", "--comment", "Quick")
                #expect(first.status == 0 && first.stdout.contains("pending") && first.stdout.contains("Shown when the other side"), "\(first)")
                let second = try await luca.run("rate", "give", order, "--stars", "4", "--json")
                #expect(second.status == 0 && second.json["status"].string == "published", "\(second)")
                let ratings = try await ada.run("rate", "show", order)
                #expect(ratings.stdout.contains("Ada → Luca  ★★★★★  published  [on_time]  \"Quick\"") && ratings.stdout.contains("Luca → Ada  ★★★★☆"), "\(ratings)")
                let bad = try await ada.run("rate", order, "--stars", "9")
                #expect(bad.status == 1, "\(bad)")
            }
        }
    }

    @Test("waybill-client desk: a customer orders a parcel dropped at a counter and collected at another; the counters' staff list their day, check it in by reference and hand it out with the code",
          arguments: TestDatabase.available)
    func desk(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            try await server.serving { port in
                let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("waybill-cli-\(UUID().uuidString)")
                try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
                defer { try? FileManager.default.removeItem(at: scratch) }
                let cast = try await server.cast()
                let (lausanne, bern, _) = try await CounterDeskTests.counters(server, cast)
                let url = "http://127.0.0.1:\(port)"
                let ada = CLI(server: url, sessionFile: scratch.appendingPathComponent("ada.json").path)
                let bob = CLI(server: url, sessionFile: scratch.appendingPathComponent("bob.json").path)
                #expect(try await ada.run("login", "--email", "ada@example.com", "--password", TestServer.password).status == 0)
                #expect(try await bob.run("login", "--email", "bob@example.com", "--password", TestServer.password).status == 0)

                let created = try await ada.run("order", "create", "--drop-at", lausanne, "--collect-at", bern, "--payment", "card",
                                                "--recipient-name", "Bea Beispiel", "--recipient-email", "bea@example.com", "--json")
                #expect(created.status == 0, "\(created)")
                let order = try #require(created.json["order"]["id"].string)
                let reference = try #require(created.json["order"]["reference"].string)
                #expect(created.json["order"]["pickup"]["city"].string == "Lausanne" && created.json["order"]["dropoff"]["city"].string == "Bern")
                try await CounterDeskTests.pay(server, order, cast)

                let mine = try await bob.run("desk", "mine")
                #expect(mine.stdout.contains("Guichet Gare") && mine.stdout.contains("Schalter Bern"), "\(mine)")
                let checked = try await bob.run("desk", "check-in", lausanne, reference)
                #expect(checked.status == 0 && checked.stdout.contains("waiting_for_driver"), "\(checked)")
                let day = try await bob.run("desk", "day", lausanne)
                #expect(day.stdout.contains("Here:") && day.stdout.contains(reference), "\(day)")
                let again = try await bob.run("desk", "check-in", lausanne, reference, "--json")
                #expect(again.status == 1 && JSON(data: Data(again.stderr.utf8))["error"]["code"].string == "invalid_transition", "a replay: \(again)")

                try await server.advance(order, to: .accepted, cast: cast)
                let token = try await LabelScanTests.token(server, order)
                #expect(try await server.send(.POST, "/orders/\(order)/pickup", json: ["scannedCode": token], token: cast.driver.access).status == .ok)
                // The code mailed at pickup (its subject carries the code alone).
                let code = try await server.code(for: "bea@example.com")
                #expect(try await bob.run("desk", "check-in", bern, "https://waybill.example/h/\(token)").status == 0)
                let out = try await bob.run("desk", "hand-out", bern, reference, "--receiver-code", code, "--name", "Bea Beispiel")
                #expect(out.status == 0 && out.stdout.contains("delivered"), "\(out)")
                #expect(try await ada.run("desk", "check-in", lausanne, reference).status == 1, "a customer is no counter's staff")
            }
        }
    }

    @Test("Every command of waybill-client explains itself with --help")
    func helpOnEveryCommand() async throws {
        let cli = CLI(server: "http://127.0.0.1:9", sessionFile: "/nonexistent/session.json")
        let commands: [[String]] = [
            [], ["register"], ["verify"], ["login"], ["logout"], ["whoami"], ["quote"], ["order"], ["order", "create"],
            ["order", "show"], ["order", "cancel"], ["order", "refund"], ["payouts"], ["parcel", "detect"], ["parcel", "add"], ["parcel", "list"], ["parcel", "show"], ["parcel", "remove"], ["order", "confirm-payment"], ["orders"], ["track"], ["duty"], ["accept"],
            ["pickup"], ["deliver"], ["fail"], ["position"], ["assign"], ["users"], ["users", "create"], ["users", "disable"], ["fleet"],
            ["plan"], ["plan", "make"], ["plan", "show"], ["plan", "apply"], ["plan", "mine"], ["plan", "auto"],
            ["chat"], ["chat", "list"], ["chat", "open"], ["chat", "show"], ["chat", "send"], ["chat", "follow"], ["rate"], ["rate", "give"], ["rate", "show"],
            ["desk"], ["desk", "mine"], ["desk", "day"], ["desk", "check-in"], ["desk", "hand-out"],
            ["admin"], ["admin", "reauth"], ["admin", "reports"], ["admin", "decide"], ["admin", "hide"], ["admin", "restore"], ["admin", "audit"],
        ]
        for command in commands {
            let help = try await cli.run(command + ["--help"])
            #expect(help.status == 0, "\(command): \(help)")
            #expect(help.stdout.contains("USAGE: waybill-client"), "\(command): \(help.stdout)")
            #expect(help.stdout.contains("--json") || command.isEmpty || command == ["order"] || command == ["users"] || command == ["plan"] || command == ["chat"] || command == ["rate"] || command == ["desk"] || command == ["admin"],
                    "\(command) has no --json")
        }
        let deliver = try await cli.run("deliver", "--help")
        #expect(deliver.stdout.contains("--signature <file.png>"))
        #expect(deliver.stdout.contains("signature, a PNG file"))
    }
}

extension CLI {
    @discardableResult
    func run(_ arguments: [String]) async throws -> Result {
        await Self.finish(try start(arguments))
    }

    /// Runs the command with `input` on its standard input.
    @discardableResult
    func run(_ arguments: [String], input: String) async throws -> Result {
        let child = try start(arguments, input: true)
        try child.stdin?.write(contentsOf: Data(input.utf8))
        try child.stdin?.close()
        return await Self.finish(child)
    }
}

/// Watches `track`'s standard error for the line saying it is subscribed.
/// What a spawned process writes, watched as it comes: a test waits for a line (woken by each chunk)
/// instead of trying again and again. Install with `watch(_:)` on the process's stdout or stderr.
final class OutputWatch: @unchecked Sendable {
    private let lock = NSLock()
    private var text = ""
    private let arrivals = Arrivals()

    func watch(_ handle: FileHandle) {
        handle.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            if data.isEmpty { handle.readabilityHandler = nil }  // the end: no more calls
            self?.read(data)
        }
    }

    func read(_ data: Data) {
        lock.withLock { text += String(decoding: data, as: UTF8.self) }
        arrivals.signal()
    }

    var output: String { lock.withLock { text } }

    /// Waits until the output holds `needle` (false after `guard`: a process that never says it).
    func until(_ needle: String, guard timeout: Duration = .seconds(120)) async throws -> Bool {
        try await arrivals.wait(guard: timeout, until: { self.output.contains(needle) ? true : nil }) ?? false
    }
}
