import Fluent
import Foundation
import NIOConcurrencyHelpers
import OTel
import SQLKit
import ServiceLifecycle
import Tracing
import Vapor

/// OpenTelemetry traces, off unless `OTEL_EXPORTER_OTLP_ENDPOINT` (or `…_TRACES_ENDPOINT`) is set:
/// one server span per request (named by method and route pattern, never the path, whose tokens and
/// ids stay out of the trace), a client span per database call (Fluent's `fluent.query`, and ours per
/// SQL statement with its text, whose values are bound parameters and never in it), exported in
/// batches by OTLP over HTTP (`http/protobuf`, or `http/json` by `OTEL_EXPORTER_OTLP_PROTOCOL`).
/// A caller's `traceparent` header continues its trace. The standard `OTEL_*` variables tune the
/// rest (service name, sampler, batch delay, headers for the collector's credentials).
public enum WaybillTracing {
    private static let enabledBox = NIOLockedValueBox(false)
    /// Whether spans are recorded (decided once, at start-up).
    static var isEnabled: Bool { enabledBox.withLockedValue { $0 } }

    /// Starts the tracer when the environment asks for it; returns what to run for as long as the process serves.
    /// Call once per process, before the application is configured.
    public static func bootstrapIfAsked(environment: [String: String] = ProcessInfo.processInfo.environment,
                                        logger: Logger) throws -> TracingExporter? {
        let endpoint = environment["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] ?? environment["OTEL_EXPORTER_OTLP_ENDPOINT"]
        guard let endpoint, !endpoint.isEmpty, environment["OTEL_TRACES_EXPORTER"] != "none",
              environment["OTEL_SDK_DISABLED"]?.lowercased() != "true" else { return nil }
        if let chosen = environment["OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"] ?? environment["OTEL_EXPORTER_OTLP_PROTOCOL"],
           !["http/protobuf", "http/json"].contains(chosen) {
            throw ConfigurationError("OTEL_EXPORTER_OTLP_PROTOCOL=\(chosen): Waybill exports traces over HTTP only (http/protobuf or http/json).")
        }
        var configuration = OTel.Configuration.default
        configuration.serviceName = "waybill"
        configuration.diagnosticLogger = .custom(logger)
        configuration.metrics.enabled = false
        configuration.logs.enabled = false
        configuration.traces.exporter = .otlp
        configuration.traces.otlpExporter.protocol = .httpProtobuf
        // The standard variables (OTEL_SERVICE_NAME, OTEL_EXPORTER_OTLP_*, OTEL_BSP_*, OTEL_TRACES_SAMPLER…) apply on top.
        let backend = try OTel.makeTracingBackend(configuration: configuration)
        InstrumentationSystem.bootstrap(RequestScopedTracer(base: backend.factory))
        enabledBox.withLockedValue { $0 = true }
        logger.info("Tracing: spans exported by OTLP to \(endpoint)")
        return TracingExporter(service: backend.service, logger: logger)
    }
}

/// The tracer's batching and export, run beside the server and flushed when it stops.
public final class TracingExporter: LifecycleHandler, Sendable {
    private let group: ServiceGroup
    private let running = NIOLockedValueBox<Task<Void, Never>?>(nil)
    private let logger: Logger

    init(service: some Service, logger: Logger) {
        // No signal handling of its own: Vapor's shutdown ends it (and flushes the last spans).
        self.group = ServiceGroup(configuration: .init(services: [.init(service: service)], gracefulShutdownSignals: [], logger: logger))
        self.logger = logger
    }

    public func willBootAsync(_ application: Application) async throws {
        let group = self.group, logger = self.logger
        running.withLockedValue { task in
            task = Task {
                do { try await group.run() } catch { logger.warning("Tracing stopped: \(String(describing: error))") }
            }
        }
    }

    public func shutdownAsync(_ application: Application) async {
        guard let task = running.withLockedValue({ task in defer { task = nil }; return task }) else { return }
        await group.triggerGracefulShutdown()
        await task.value
    }
}

/// A server span per request: `POST /api/v1/orders`, with the method, the route pattern, the final
/// status and the request id (the one in logs and error bodies). Sits outside the error middleware so
/// that the status is the one sent.
struct RequestSpanMiddleware: AsyncMiddleware {
    func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        var parent = request.serviceContext
        InstrumentationSystem.instrument.extract(request.headers, into: &parent, using: HeadersExtractor())
        parent[ServingKey.self] = true
        let route = request.route.map { "/" + $0.path.map(\.description).joined(separator: "/") }
        return try await withSpan("\(request.method.rawValue) \(route ?? "unmatched")", context: parent, ofKind: .server) { span in
            request.serviceContext = span.context
            defer { request.serviceContext = parent }
            span.updateAttributes { attributes in
                attributes["http.request.method"] = request.method.rawValue
                attributes["http.route"] = route
                attributes["waybill.request_id"] = request.id
            }
            do {
                let response = try await next.respond(to: request)
                span.attributes["http.response.status_code"] = Int(response.status.code)
                if response.status.code >= 500 { span.setStatus(.init(code: .error)) }
                return response
            } catch {
                let status = (error as? any AbortError)?.status.code ?? 500
                span.attributes["http.response.status_code"] = Int(status)
                if status >= 500 { span.setStatus(.init(code: .error)) }
                throw error
            }
        }
    }

    private struct HeadersExtractor: Extractor {
        func extract(key: String, from headers: HTTPHeaders) -> String? { headers.first(name: key) }
    }
}

/// Set in the context of a request's span: what runs under it is kept.
enum ServingKey: ServiceContextKey { typealias Value = Bool }

/// OpenTelemetry's tracer, minus the database spans of work done for no request: the outbox, the
/// live feed and the pollers query every second or so, and a root trace per poll would drown the
/// requests' traces (and a collector's budget) in noise.
struct RequestScopedTracer<Base: Tracer>: Tracer {
    let base: Base

    func startSpan<Instant: TracerInstant>(_ operationName: String, context: @autoclosure () -> ServiceContext, ofKind kind: SpanKind,
                                           at instant: @autoclosure () -> Instant, function: String, file fileID: String,
                                           line: UInt) -> ScopedSpan<Base.Span> {
        let context = context()
        guard kind != .client || context[ServingKey.self] == true else { return .dropped(NoOpTracer.NoOpSpan(context: context)) }
        return .kept(base.startSpan(operationName, context: context, ofKind: kind, at: instant(), function: function, file: fileID, line: line))
    }

    func forceFlush() { base.forceFlush() }

    func extract<Carrier, Extract: Extractor>(_ carrier: Carrier, into context: inout ServiceContext, using extractor: Extract)
    where Extract.Carrier == Carrier {
        base.extract(carrier, into: &context, using: extractor)
    }

    func inject<Carrier, Inject: Injector>(_ context: ServiceContext, into carrier: inout Carrier, using injector: Inject)
    where Inject.Carrier == Carrier {
        base.inject(context, into: &carrier, using: injector)
    }
}

/// A span of the tracer's, or none.
enum ScopedSpan<Kept: Span>: Span {
    case kept(Kept)
    case dropped(NoOpTracer.NoOpSpan)

    private var span: any Span {
        switch self {
        case .kept(let span): span
        case .dropped(let span): span
        }
    }

    var context: ServiceContext { span.context }
    var operationName: String {
        get { span.operationName }
        nonmutating set { span.operationName = newValue }
    }
    var attributes: SpanAttributes {
        get { span.attributes }
        nonmutating set { span.attributes = newValue }
    }
    var isRecording: Bool { span.isRecording }
    func setStatus(_ status: SpanStatus) { span.setStatus(status) }
    func addEvent(_ event: SpanEvent) { span.addEvent(event) }
    func addLink(_ link: SpanLink) { span.addLink(link) }
    func recordError<Instant: TracerInstant>(_ error: any Error, attributes: SpanAttributes, at instant: @autoclosure () -> Instant) {
        span.recordError(error, attributes: attributes, at: instant())
    }
    func end<Instant: TracerInstant>(at instant: @autoclosure () -> Instant) { span.end(at: instant()) }
}

extension Database {
    /// This database as SQLKit's, with a span per statement when tracing is on.
    var tracedSQL: (any SQLDatabase)? {
        guard let sql = self as? any SQLDatabase else { return nil }
        return WaybillTracing.isEnabled ? TracedSQLDatabase(base: sql) : sql
    }
}

/// Forwards to a SQL database, recording each statement as a client span (`SELECT`, `INSERT`…) with
/// the statement's text (values are bound parameters, so none is in it) and the database system.
struct TracedSQLDatabase: SQLDatabase {
    let base: any SQLDatabase

    var logger: Logger { base.logger }
    var eventLoop: any EventLoop { base.eventLoop }
    var version: (any SQLDatabaseReportedVersion)? { base.version }
    var dialect: any SQLDialect { base.dialect }
    var queryLogLevel: Logger.Level? { base.queryLogLevel }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> ()) -> EventLoopFuture<Void> {
        let span = startSpan(query)
        return base.execute(sql: query, onRow).always { result in
            if case .failure(let error) = result { span.recordError(error); span.setStatus(.init(code: .error)) }
            span.end()
        }
    }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> ()) async throws {
        let span = startSpan(query)
        defer { span.end() }
        do {
            try await ServiceContext.$current.withValue(span.context) { try await base.execute(sql: query, onRow) }
        } catch {
            span.recordError(error)
            span.setStatus(.init(code: .error))
            throw error
        }
    }

    func withSession<R>(_ closure: @escaping @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        try await base.withSession { try await closure(TracedSQLDatabase(base: $0)) }
    }

    private func startSpan(_ query: any SQLExpression) -> any Span {
        Self.startSpan(base.serialize(query).sql, system: dialect.name)
    }

    private static func startSpan(_ text: String, system: String) -> any Span {
        // The statement's verb names the span (OpenTelemetry's database conventions: low cardinality).
        let verb = text.prefix { !$0.isWhitespace && $0 != "(" }.uppercased()
        let span = InstrumentationSystem.tracer.startSpan(verb.isEmpty ? "SQL" : verb, context: ServiceContext.current ?? .topLevel,
                                                             ofKind: .client)
        span.updateAttributes { attributes in
            attributes["db.system.name"] = system
            attributes["db.query.text"] = String(text.prefix(2_000))
        }
        return span
    }

    /// A statement sent past SQLKit (straight to PostgresNIO), as a span when `when` is true.
    static func span<T>(_ text: String, system: String, when: Bool, _ body: () async throws -> T) async throws -> T {
        guard when else { return try await body() }
        let span = startSpan(text, system: system)
        defer { span.end() }
        do {
            return try await ServiceContext.$current.withValue(span.context) { try await body() }
        } catch {
            span.recordError(error)
            span.setStatus(.init(code: .error))
            throw error
        }
    }
}
