import AsyncHTTPClient
import Crypto
import Foundation
import NIOConcurrencyHelpers
import NIOSSL
import Vapor
import X509
@testable import WaybillServer

/// A local stand-in for APNs, Google's OAuth token endpoint, FCM and a Web Push service, all on
/// one TLS server that speaks only HTTP/2 (as APNs does), with a self-signed certificate made
/// for the run. It records every request and answers what a test queued, or success.
final class FakePushServer: Sendable {
    struct Recorded: Sendable {
        var path: String
        var headers: HTTPHeaders
        var body: Data
        /// 2 when the request came over HTTP/2.
        var httpMajorVersion: Int

        var json: [String: Any] { ((try? JSONSerialization.jsonObject(with: body)) as? [String: Any]) ?? [:] }
        var form: [String: String] {
            var form: [String: String] = [:]
            for pair in String(decoding: body, as: UTF8.self).split(separator: "&") {
                let kv = pair.split(separator: "=", maxSplits: 1).map { String($0).removingPercentEncoding ?? String($0) }
                if kv.count == 2 { form[kv[0]] = kv[1] }
            }
            return form
        }
    }

    struct Reply: Sendable {
        var status: Int
        var json: String
    }

    let app: Application
    let port: Int
    /// The server's certificate, which test clients trust as their only root.
    let certificate: NIOSSLCertificate
    private let state = NIOLockedValueBox<(requests: [Recorded], replies: [(pathPrefix: String, reply: Reply)], tokens: Int)>(([], [], 0))

    var baseURL: String { "https://localhost:\(port)" }
    var requests: [Recorded] { state.withLockedValue { $0.requests } }

    private init(app: Application, port: Int, certificate: NIOSSLCertificate) {
        self.app = app
        self.port = port
        self.certificate = certificate
    }

    static func start() async throws -> FakePushServer {
        let (certificate, key) = try selfSignedCertificate()
        let app = try await Application.make(.testing)
        app.http.server.configuration.hostname = "127.0.0.1"
        app.http.server.configuration.port = 0
        app.http.server.configuration.supportVersions = [.two]
        app.http.server.configuration.tlsConfiguration = .makeServerConfiguration(
            certificateChain: [.certificate(certificate)], privateKey: .privateKey(key))
        let box = NIOLockedValueBox<FakePushServer?>(nil)
        app.on(.POST, "**") { req async throws -> Response in
            guard let fake = box.withLockedValue({ $0 }) else { throw Abort(.serviceUnavailable) }
            return fake.handle(req)
        }
        try await app.server.start(address: .hostname("127.0.0.1", port: 0))
        guard let port = app.http.server.shared.localAddress?.port else { throw Abort(.internalServerError) }
        let fake = FakePushServer(app: app, port: port, certificate: certificate)
        box.withLockedValue { $0 = fake }
        return fake
    }

    func stop() async {
        await app.server.shutdown()
        try? await app.asyncShutdown()
    }

    /// A client that trusts this server's certificate (and only it), verifying the host name.
    func makeClient() -> HTTPClient {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates([certificate])
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(tlsConfiguration: tls))
    }

    /// Runs `body` with a started server and a client for it, and stops both afterwards.
    static func with(_ body: (FakePushServer, HTTPClient) async throws -> Void) async throws {
        let server = try await start()
        let client = server.makeClient()
        do {
            try await body(server, client)
        } catch {
            try? await client.shutdown()
            await server.stop()
            throw error
        }
        try await client.shutdown()
        await server.stop()
    }

    /// The next request whose path starts with `pathPrefix` gets this answer instead of success.
    func reply(to pathPrefix: String, status: Int, json: String = "{}") {
        state.withLockedValue { $0.replies.append((pathPrefix, Reply(status: status, json: json))) }
    }

    func requests(under pathPrefix: String) -> [Recorded] { requests.filter { $0.path.hasPrefix(pathPrefix) } }

    private func handle(_ req: Request) -> Response {
        let body = req.body.data.map { Data(buffer: $0) } ?? Data()
        let recorded = Recorded(path: req.url.path, headers: req.headers, body: body, httpMajorVersion: req.version.major)
        let (queued, tokenNumber) = state.withLockedValue { s -> (Reply?, Int) in
            s.requests.append(recorded)
            var queued: Reply?
            if let index = s.replies.firstIndex(where: { recorded.path.hasPrefix($0.pathPrefix) }) {
                queued = s.replies.remove(at: index).reply
            }
            if queued == nil, recorded.path == "/token" { s.tokens += 1 }
            return (queued, s.tokens)
        }
        if let queued { return Self.json(queued.json, status: queued.status) }
        switch recorded.path {
        case "/token":
            return Self.json(#"{"access_token":"ya29.fake-\#(tokenNumber)","expires_in":3599,"token_type":"Bearer"}"#)
        case let path where path.hasPrefix("/v1/projects/"):
            return Self.json(#"{"name":"projects/waybill-test/messages/0:1"}"#)
        case let path where path.hasPrefix("/3/device/"):
            let response = Self.json("", status: 200)
            response.headers.replaceOrAdd(name: "apns-id", value: UUID().uuidString)
            return response
        default:
            return Response(status: .created)
        }
    }

    private static func json(_ text: String, status: Int = 200) -> Response {
        var headers = HTTPHeaders()
        if !text.isEmpty { headers.contentType = .json }
        return Response(status: HTTPResponseStatus(statusCode: status), headers: headers, body: .init(string: text))
    }

    /// A fresh P-256 key and a self-signed certificate for `localhost`, valid for a day.
    static func selfSignedCertificate() throws -> (NIOSSLCertificate, NIOSSLPrivateKey) {
        let key = P256.Signing.PrivateKey()
        let name = try DistinguishedName { CommonName("localhost") }
        let now = Date()
        let certificate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(key.publicKey),
            notValidBefore: now.addingTimeInterval(-3600), notValidAfter: now.addingTimeInterval(86400),
            issuer: name, subject: name, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                KeyUsage(digitalSignature: true, keyCertSign: true)
                SubjectAlternativeNames([.dnsName("localhost")])
            },
            issuerPrivateKey: .init(key))
        let pem = try certificate.serializeAsPEM().pemString
        return (try NIOSSLCertificate(bytes: Array(pem.utf8), format: .pem),
                try NIOSSLPrivateKey(bytes: Array(key.pemRepresentation.utf8), format: .pem))
    }
}

/// A JWT taken apart, for checking what a sender signed.
struct DecodedJWT {
    var header: [String: Any]
    var claims: [String: Any]
    var signingInput: Data
    var signature: Data

    init?(_ jwt: String) {
        let parts = jwt.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3,
              let header = Data(base64URLEncoded: parts[0]).flatMap({ try? JSONSerialization.jsonObject(with: $0) }) as? [String: Any],
              let claims = Data(base64URLEncoded: parts[1]).flatMap({ try? JSONSerialization.jsonObject(with: $0) }) as? [String: Any],
              let signature = Data(base64URLEncoded: parts[2])
        else { return nil }
        self.header = header
        self.claims = claims
        self.signingInput = Data((parts[0] + "." + parts[1]).utf8)
        self.signature = signature
    }

    func verifies(with key: P256.Signing.PublicKey) -> Bool {
        guard let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signature) else { return false }
        return key.isValidSignature(signature, for: signingInput)
    }

    func int(_ claim: String) -> Int64? { (claims[claim] as? NSNumber)?.int64Value }
}

