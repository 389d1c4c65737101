import AsyncHTTPClient
import Foundation
import NIOConcurrencyHelpers
import Testing
import Vapor
@testable import WaybillServer

/// Issue 21 item 4: with `OTEL_EXPORTER_OTLP_ENDPOINT` set, `waybill serve` sends a span per request
/// and per database call to an OpenTelemetry collector (here a local one speaking OTLP/HTTP with JSON);
/// a caller's `traceparent` continues its trace; no token, address or password ends up in a span.
@Suite struct TracingTests {
    /// A collector on this machine: keeps every `POST /v1/traces` body.
    final class Collector: Sendable {
        let app: Application
        let port: Int
        private let bodies = NIOLockedValueBox<[Data]>([])
        /// Signalled at each export received.
        let received = ChangeSignal()

        init() async throws {
            app = try await Application.make(.testing)
            app.middleware = .init()  // no request log lines
            let bodies = self.bodies, received = self.received
            app.on(.POST, "v1", "traces", body: .collect(maxSize: "16mb")) { req -> Response in
                bodies.withLockedValue { $0.append(Data(buffer: req.body.data ?? ByteBuffer())) }
                received.signal()
                var headers = HTTPHeaders()
                headers.contentType = .json
                return Response(status: .ok, headers: headers, body: .init(string: "{}"))
            }
            try await app.server.start(address: .hostname("127.0.0.1", port: 0))
            port = try #require(app.http.server.shared.localAddress?.port)
        }

        /// Every span received so far, with its resource's service name.
        var spans: [[String: Any]] {
            bodies.withLockedValue { $0 }.flatMap { body -> [[String: Any]] in
                let json = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:]
                return (json["resourceSpans"] as? [[String: Any]] ?? []).flatMap { resource in
                    (resource["scopeSpans"] as? [[String: Any]] ?? []).flatMap { $0["spans"] as? [[String: Any]] ?? [] }
                }
            }
        }
        var raw: String { bodies.withLockedValue { $0 }.map { String(decoding: $0, as: UTF8.self) }.joined() }

        func stop() async {
            await app.server.shutdown()
            try? await app.asyncShutdown()
        }
    }

    static func attribute(_ span: [String: Any], _ key: String) -> Any? {
        let value = (span["attributes"] as? [[String: Any]] ?? []).first { $0["key"] as? String == key }?["value"] as? [String: Any]
        return value?["stringValue"] ?? value?["intValue"]
    }

    static var waybill: URL? {
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        let candidates = (0..<5).map { n in (0..<n).reduce(binary) { u, _ in u.deletingLastPathComponent() }.appendingPathComponent("waybill") }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) && !$0.hasDirectoryPath }
    }

    /// A port nobody listens on now.
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    @Test func requestsAndDatabaseCallsReachTheCollectorAsOneTrace() async throws {
        let collector = try await Collector()
        defer { Task { await collector.stop() } }
        let executable = try #require(Self.waybill, "build waybill first")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("waybill-tracing-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let port = try Self.freePort()
        var environment = ProcessInfo.processInfo.environment
        environment.removeValue(forKey: "DATABASE_URL")
        environment.merge([
            "DATABASE_URL": "sqlite://" + folder.path + "/waybill.sqlite", "STORAGE_PATH": folder.path, "LOG_LEVEL": "warning",
            "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:\(collector.port)", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json",
            "OTEL_BSP_SCHEDULE_DELAY": "50", "OTEL_SERVICE_NAME": "waybill-under-test",
        ]) { _, new in new }
        let server = try Spawned(executable.path, ["serve", "--hostname", "127.0.0.1", "--port", "\(port)"], environment: environment)
        // Its output is read to the end off the test's threads, so that the pipes never fill; the
        // test waits for the line that says it listens.
        let said = OutputWatch()
        said.watch(server.stdout)
        async let output = CLI.finish(server, readingStdout: false)
        defer { kill(server.pid, SIGKILL) }  // whatever happens below (after a clean stop: nothing to kill)

        let client = HTTPClient.shared
        let base = "http://127.0.0.1:\(port)"
        guard try await said.until("Waybill is listening on \(base)") else {
            kill(server.pid, SIGKILL)
            Issue.record("waybill serve did not start: \(said.output) \(await output)")
            return
        }

        // A caller's trace: the server's spans join it.
        let traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
        // (swift-otel's JSON gives ids in base64, OTLP's protobuf mapping, rather than hex.)
        @Sendable func hex(_ id: Any?) -> String? {
            guard let text = id as? String else { return nil }
            guard let bytes = Data(base64Encoded: text), text.count != 32, text.count != 16 else { return text.lowercased() }
            return bytes.map { String(format: "%02x", $0) }.joined()
        }
        var login = HTTPClientRequest(url: base + "/api/v1/auth/login")
        login.method = .POST
        login.headers.add(name: "Content-Type", value: "application/json")
        login.headers.add(name: "traceparent", value: "00-\(traceID)-00f067aa0ba902b7-01")
        login.body = .bytes(ByteBuffer(string: #"{"email":"someone.secret@example.com","password":"correct-horse-battery"}"#))
        let answer = try await client.execute(login, timeout: .seconds(10))
        #expect(answer.status == .unauthorized)
        let requestID = answer.headers.first(name: "X-Request-Id")
        _ = try await client.execute(HTTPClientRequest(url: base + "/t/not-a-real-token-but-a-secret-one"), timeout: .seconds(10))

        // The collector signals each export it receives; the test looks again after each.
        _ = try await collector.received.wait(guard: .seconds(60)) {
            let ours = collector.spans.filter { hex($0["traceId"]) == traceID }
            return ours.contains(where: { ($0["name"] as? String) == "POST /api/v1/auth/login" })
                && ours.contains(where: { Self.attribute($0, "db.query.text") != nil })
                && collector.spans.contains(where: { ($0["name"] as? String)?.hasPrefix("GET /t/") == true }) ? true : nil
        }
        let spans = collector.spans.filter { hex($0["traceId"]) == traceID }
        let request = try #require(spans.first { ($0["name"] as? String) == "POST /api/v1/auth/login" }, "\(collector.raw.prefix(4000))")
        #expect(hex(request["parentSpanId"]) == "00f067aa0ba902b7", "the caller's span is the parent")
        #expect(Self.attribute(request, "http.response.status_code") as? String == "401")
        #expect(Self.attribute(request, "waybill.request_id") as? String == requestID)
        // The statements run for the request are its children, with their text.
        let statements = spans.filter { Self.attribute($0, "db.query.text") != nil }
        #expect(!statements.isEmpty && statements.allSatisfy { hex($0["traceId"]) == traceID })
        #expect(statements.contains { ($0["name"] as? String) == "SELECT" || ($0["name"] as? String) == "INSERT" }, "\(statements)")
        #expect(spans.contains { ($0["name"] as? String) == "fluent.query" }, "Fluent's own queries are spans too")
        #expect(collector.raw.contains("waybill-under-test"), "OTEL_SERVICE_NAME names the service")
        // Background work (the outbox, the live feed, migrations) sends no database spans of its own.
        #expect(!collector.spans.contains { ($0["kind"] as? Int) == 3 && (hex($0["parentSpanId"]) ?? "").isEmpty }, "root database spans")
        // The route pattern names a request, never the path: a tracking token stays out.
        #expect(collector.spans.contains { ($0["name"] as? String) == "GET /t/:token" }, "\(collector.spans.compactMap { $0["name"] })")
        for secret in ["correct-horse-battery", "someone.secret@example.com", "not-a-real-token-but-a-secret-one"] {
            #expect(!collector.raw.contains(secret), "\(secret) is in a span")
        }

        // Stopping flushes and ends cleanly.
        kill(server.pid, SIGTERM)
        let ended = await output
        #expect(ended.status == 0, "\(ended)")
    }
}
