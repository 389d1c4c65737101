import Foundation
import NIOCore
import NIOPosix
import NIOSSL

/// Sends mail over SMTP with SwiftNIO: plain, STARTTLS or implicit TLS, AUTH PLAIN or LOGIN.
/// One connection per message; the outbox worker sends one message at a time.
public struct SMTPMailer: Mailer {
    let settings: SMTPSettings
    let group: any EventLoopGroup
    let timeout: TimeAmount

    public init(settings: SMTPSettings, group: any EventLoopGroup, timeout: TimeAmount = .seconds(30)) {
        self.settings = settings
        self.group = group
        self.timeout = timeout
    }

    public func send(_ message: MailMessage, from: MailAddress) async throws {
        let sslContext = settings.security == .none ? nil : try NIOSSLContext(configuration: settings.tls)
        let hostnameForTLS = settings.host.isIPAddress ? nil : settings.host
        let handler = SMTPClientHandler(timeout: timeout)
        let implicitTLS = settings.security == .implicitTLS
        let channel = try await ClientBootstrap(group: group)
            .connectTimeout(.seconds(10))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if implicitTLS, let sslContext {
                        try channel.pipeline.syncOperations.addHandler(
                            try NIOSSLClientHandler(context: sslContext, serverHostname: hostnameForTLS))
                    }
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(SMTPResponseDecoder()))
                    try channel.pipeline.syncOperations.addHandler(handler)
                }
            }
            .connect(host: settings.host, port: settings.port).get()
        do {
            try await converse(channel: channel, handler: handler, message: message, from: from,
                               sslContext: sslContext, hostnameForTLS: hostnameForTLS)
            try? await channel.close().get()
        } catch {
            try? await channel.close().get()
            throw error
        }
    }

    private func converse(channel: any Channel, handler: SMTPClientHandler, message: MailMessage, from: MailAddress,
                          sslContext: NIOSSLContext?, hostnameForTLS: String?) async throws {
        try await handler.greeting(on: channel).expect(220, "greeting")
        var ehlo = try await handler.command("EHLO \(settings.heloName)", on: channel)
        try ehlo.expect(250, "EHLO")
        if settings.security == .startTLS {
            guard ehlo.lines.contains(where: { $0.uppercased().hasPrefix("STARTTLS") }) else {
                throw SMTPError.tlsNotOffered
            }
            try await handler.command("STARTTLS", on: channel).expect(220, "STARTTLS")
            guard let sslContext else { throw SMTPError.tlsNotOffered }
            let tlsHandler = try NIOSSLClientHandler(context: sslContext, serverHostname: hostnameForTLS)
            try await channel.pipeline.addHandler(tlsHandler, position: .first).get()
            ehlo = try await handler.command("EHLO \(settings.heloName)", on: channel)
            try ehlo.expect(250, "EHLO after STARTTLS")
        }
        if let username = settings.username, let password = settings.password {
            let auth = ehlo.lines.first { $0.uppercased().hasPrefix("AUTH") }?.uppercased() ?? ""
            if auth.contains("PLAIN") || !auth.contains("LOGIN") {
                let token = Data("\0\(username)\0\(password)".utf8).base64EncodedString()
                try await handler.command("AUTH PLAIN \(token)", on: channel).expect(235, "AUTH PLAIN")
            } else {
                try await handler.command("AUTH LOGIN", on: channel).expect(334, "AUTH LOGIN")
                try await handler.command(Data(username.utf8).base64EncodedString(), on: channel).expect(334, "AUTH LOGIN user")
                try await handler.command(Data(password.utf8).base64EncodedString(), on: channel).expect(235, "AUTH LOGIN password")
            }
        }
        try await handler.command("MAIL FROM:<\(from.address)>", on: channel).expect(250, "MAIL FROM")
        let rcpt = try await handler.command("RCPT TO:<\(message.to.address)>", on: channel)
        guard rcpt.code == 250 || rcpt.code == 251 else { throw SMTPError.unexpected(command: "RCPT TO", response: rcpt) }
        try await handler.command("DATA", on: channel).expect(354, "DATA")
        let data = MIMEMessage.render(message, from: from, heloName: settings.heloName)
        try await handler.command(data + "\r\n.", on: channel).expect(250, "message body")
        _ = try? await handler.command("QUIT", on: channel)
    }
}

public enum SMTPError: Error, CustomStringConvertible {
    case unexpected(command: String, response: SMTPResponse)
    case tlsNotOffered
    case connectionClosed
    case timeout
    case malformedResponse

    public var description: String {
        switch self {
        case .unexpected(let command, let response): return "SMTP server answered \(response.code) to \(command): \(response.lines.joined(separator: " / "))"
        case .tlsNotOffered: return "SMTP server does not offer STARTTLS"
        case .connectionClosed: return "SMTP connection closed"
        case .timeout: return "SMTP server did not answer in time"
        case .malformedResponse: return "SMTP server sent a malformed response"
        }
    }
}

public struct SMTPResponse: Sendable {
    public var code: Int
    public var lines: [String]

    func expect(_ expected: Int, _ command: String) throws {
        guard code == expected else { throw SMTPError.unexpected(command: command, response: self) }
    }
}

/// Splits the byte stream into SMTP replies, joining multi-line ones (`250-…` … `250 …`).
struct SMTPResponseDecoder: ByteToMessageDecoder {
    typealias InboundOut = SMTPResponse
    private var lines: [String] = []

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let newline = buffer.readableBytesView.firstIndex(of: UInt8(ascii: "\n")) else {
            if buffer.readableBytes > 4096 { throw SMTPError.malformedResponse }
            return .needMoreData
        }
        let length = newline - buffer.readerIndex + 1
        guard var line = buffer.readString(length: length) else { return .needMoreData }
        while line.hasSuffix("\n") || line.hasSuffix("\r") { line.removeLast() }
        let utf8 = Array(line.utf8)
        guard utf8.count >= 3, let code = Int(String(decoding: utf8[0..<3], as: UTF8.self)) else {
            throw SMTPError.malformedResponse
        }
        let text = utf8.count > 4 ? String(decoding: utf8[4...], as: UTF8.self) : ""
        lines.append(text)
        if utf8.count > 3 && utf8[3] == UInt8(ascii: "-") { return .continue }
        context.fireChannelRead(wrapInboundOut(SMTPResponse(code: code, lines: lines)))
        lines = []
        return .continue
    }
}

/// Pairs each reply with the command that asked for it. State is touched only on the channel's
/// event loop.
final class SMTPClientHandler: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = SMTPResponse
    typealias OutboundOut = ByteBuffer

    private var waiting: [EventLoopPromise<SMTPResponse>] = []
    private var early: [SMTPResponse] = []
    private var failure: (any Error)?
    let timeout: TimeAmount

    init(timeout: TimeAmount) { self.timeout = timeout }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let response = unwrapInboundIn(data)
        if waiting.isEmpty { early.append(response) } else { waiting.removeFirst().succeed(response) }
    }

    func channelInactive(context: ChannelHandlerContext) {
        failAll(SMTPError.connectionClosed)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        failAll(error)
        context.close(promise: nil)
    }

    private func failAll(_ error: any Error) {
        failure = failure ?? error
        let pending = waiting
        waiting = []
        pending.forEach { $0.fail(error) }
    }

    /// Waits for the next reply without sending anything (the server's greeting).
    func greeting(on channel: any Channel) async throws -> SMTPResponse {
        try await exchange(nil, on: channel)
    }

    /// Sends one command line (CRLF added) and waits for its reply.
    func command(_ line: String, on channel: any Channel) async throws -> SMTPResponse {
        try await exchange(line, on: channel)
    }

    private func exchange(_ line: String?, on channel: any Channel) async throws -> SMTPResponse {
        let loop = channel.eventLoop
        let promise = loop.makePromise(of: SMTPResponse.self)
        let timeout = self.timeout
        loop.execute {
            if let failure = self.failure { promise.fail(failure); return }
            if !self.early.isEmpty { promise.succeed(self.early.removeFirst()) } else { self.waiting.append(promise) }
            if let line {
                var buffer = channel.allocator.buffer(capacity: line.utf8.count + 2)
                buffer.writeString(line)
                buffer.writeString("\r\n")
                channel.writeAndFlush(buffer, promise: nil)
            }
            let timer = loop.scheduleTask(in: timeout) { promise.fail(SMTPError.timeout) }
            promise.futureResult.whenComplete { _ in timer.cancel() }
        }
        return try await promise.futureResult.get()
    }
}

/// Renders a plain-text message as RFC 5322 + MIME, UTF-8 in base64 so any text survives.
enum MIMEMessage {
    static func render(_ message: MailMessage, from: MailAddress, heloName: String, date: Date = Date()) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss Z"
        let domain = from.address.split(separator: "@").last.map(String.init) ?? heloName
        let body = Data(message.text.replacingOccurrences(of: "\r\n", with: "\n").replacingOccurrences(of: "\n", with: "\r\n").utf8)
            .base64EncodedString(options: [.lineLength76Characters, .endLineWithCarriageReturn, .endLineWithLineFeed])
        let headers = [
            "From: \(header(from))",
            "To: \(header(message.to))",
            "Subject: \(encodedWord(message.subject))",
            "Date: \(formatter.string(from: date))",
            "Message-ID: <\(message.messageID ?? UUID().uuidString.lowercased())@\(domain)>",
            "MIME-Version: 1.0",
            "Content-Type: text/plain; charset=utf-8",
            "Content-Transfer-Encoding: base64",
            "Auto-Submitted: auto-generated",
        ]
        return headers.joined(separator: "\r\n") + "\r\n\r\n" + body
    }

    static func header(_ address: MailAddress) -> String {
        guard let name = address.name, !name.isEmpty else { return "<\(address.address)>" }
        return "\(encodedWord(name)) <\(address.address)>"
    }

    /// RFC 2047: non-ASCII (or anything that could break a header) becomes =?UTF-8?B?…?=.
    static func encodedWord(_ text: String) -> String {
        let clean = text.replacingOccurrences(of: "\r", with: " ").replacingOccurrences(of: "\n", with: " ")
        if clean.allSatisfy({ $0.isASCII && $0 != "\"" && $0 != "=" }) && clean.count < 70 { return clean }
        return "=?UTF-8?B?\(Data(clean.utf8).base64EncodedString())?="
    }
}

extension String {
    var isIPAddress: Bool {
        (try? SocketAddress(ipAddress: self, port: 0)) != nil
    }
}
