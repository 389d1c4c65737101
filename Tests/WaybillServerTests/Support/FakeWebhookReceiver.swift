import Foundation
import NIOConcurrencyHelpers
import NIOSSL
import Vapor
import WaybillCore
@testable import WaybillServer

/// An integrator's endpoint on this machine: HTTPS with a certificate made for the run, checking
/// every delivery's signature as docs/integrations.md tells integrators to, and answering what a test
/// queued: an error, a redirect, or no answer at all (longer than the server waits).
final class FakeWebhookReceiver: Sendable {
    struct Received: Sendable {
        var path: String
        var headers: HTTPHeaders
        var body: [UInt8]
        /// Whether the signature checked out under the secret set at the time.
        var verified: Bool

        var json: [String: Any] { ((try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any]) ?? [:] }
        var type: String? { json["type"] as? String }
        var shipmentID: String? { ((json["data"] as? [String: Any])?["shipment"] as? [String: Any])?["id"] as? String }
    }

    enum Answer: Sendable { case status(Int), redirect(String), hang(seconds: Double) }

    let app: Application
    let port: Int
    let certificate: NIOSSLCertificate
    private let state = NIOLockedValueBox<(received: [Received], answers: [Answer], secrets: [String: String])>(([], [], [:]))
    /// The receiver's clock: the test server's, which tests move forward by days.
    private let now = NIOLockedValueBox<@Sendable () -> Date>({ Date() })

    func useClock(_ clock: @escaping @Sendable () -> Date) { now.withLockedValue { $0 = clock } }

    /// An endpoint's address here (one receiver plays several endpoints, one per path).
    func url(_ path: String) -> String { "https://localhost:\(port)\(path)" }
    var received: [Received] { state.withLockedValue { $0.received } }
    func received(at path: String) -> [Received] { received.filter { $0.path == path } }

    private init(app: Application, port: Int, certificate: NIOSSLCertificate) {
        self.app = app
        self.port = port
        self.certificate = certificate
    }

    /// The endpoint's secret, as the integrator stores it.
    func use(secret: String, at path: String) { state.withLockedValue { $0.secrets[path] = secret } }

    func secret(at path: String) -> String? { state.withLockedValue { $0.secrets[path] } }

    /// Forgets the answers queued and not used: from now on, success.
    func clearAnswers() { state.withLockedValue { $0.answers = [] } }

    /// The next deliveries get these answers, in order (afterwards: 200).
    func answer(_ answers: Answer...) { state.withLockedValue { $0.answers += answers } }

    static func start() async throws -> FakeWebhookReceiver {
        let (certificate, key) = try FakePushServer.selfSignedCertificate()
        let app = try await Application.make(.testing)
        app.http.server.configuration.hostname = "127.0.0.1"
        app.http.server.configuration.port = 0
        app.http.server.configuration.tlsConfiguration = .makeServerConfiguration(
            certificateChain: [.certificate(certificate)], privateKey: .privateKey(key))
        let box = NIOLockedValueBox<FakeWebhookReceiver?>(nil)
        app.on(.POST, "**", body: .collect(maxSize: "1mb")) { req async throws -> Response in
            guard let fake = box.withLockedValue({ $0 }) else { throw Abort(.serviceUnavailable) }
            return try await fake.handle(req)
        }
        try await app.server.start(address: .hostname("127.0.0.1", port: 0))
        guard let port = app.http.server.shared.localAddress?.port else { throw Abort(.internalServerError) }
        let fake = FakeWebhookReceiver(app: app, port: port, certificate: certificate)
        box.withLockedValue { $0 = fake }
        return fake
    }

    func stop() async {
        await app.server.shutdown()
        try? await app.asyncShutdown()
    }

    static func with(_ body: (FakeWebhookReceiver) async throws -> Void) async throws {
        let receiver = try await start()
        do {
            try await body(receiver)
        } catch {
            await receiver.stop()
            throw error
        }
        await receiver.stop()
    }

    private func handle(_ req: Request) async throws -> Response {
        let body = req.body.data.map { Array($0.readableBytesView) } ?? []
        let header = req.headers.first(name: WebhookSignature.header) ?? ""
        let (answer, secret) = state.withLockedValue { s -> (Answer?, String?) in
            (s.answers.isEmpty ? nil : s.answers.removeFirst(), s.secrets[req.url.path])
        }
        var verified = false
        if let secret {
            do {
                try WebhookSignature.verify(body: body, header: header, secret: secret, now: now.withLockedValue { $0 }())
                verified = true
            } catch {}
        }
        state.withLockedValue { $0.received.append(Received(path: req.url.path, headers: req.headers, body: body, verified: verified)) }
        switch answer {
        case .status(let code): return Response(status: HTTPResponseStatus(statusCode: code))
        case .redirect(let location):
            return Response(status: .found, headers: ["Location": location])
        case .hang(let seconds):
            try await Task.sleep(for: .seconds(seconds))
            return Response(status: .ok)
        case nil:
            return Response(status: verified ? .ok : .unauthorized)
        }
    }
}
