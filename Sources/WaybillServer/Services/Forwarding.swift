import Fluent
import Vapor
import WaybillCore

final class ForwardingAddressRecord: Model, @unchecked Sendable {
    static let schema = "forwarding_addresses"

    @ID(custom: "user_id", generatedBy: .user) var id: UserID?
    @Field(key: "token") var token: String
    @Field(key: "created_at") var createdAt: Int64

    var properties: [any AnyProperty] { [$id, $token, $createdAt] }

    init() {}
}

/// A personal address to forward shipping confirmations to (`parcels+TOKEN@INBOUND_MAIL_DOMAIN`):
/// the mail server hands each message to `waybill inbound-mail`, which finds the account by its
/// token and follows every tracking number in the text (`MailText`, `Parcels.addAll`). Off
/// without `INBOUND_MAIL_DOMAIN`.
struct Forwarding {
    let services: WaybillServices
    let db: any Database
    let logger: Logger

    static let localPart = "parcels"

    /// 60 bits, lowercase letters and digits: an address is not guessed.
    static func newToken() -> String {
        var generator = Randomness.generator
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz0123456789")
        return String((0..<12).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &generator)] })
    }

    func address(_ token: String) -> String? {
        services.config.inboundMailDomain.map { "\(Self.localPart)+\(token)@\($0)" }
    }

    /// The caller's address (made on first ask; `renew` makes a new one and the old stops working).
    func address(for me: Principal, renew: Bool = false) async throws -> String {
        guard let domain = services.config.inboundMailDomain else {
            throw WaybillError(.conflict, .conflict, "This server receives no mail (INBOUND_MAIL_DOMAIN is not set); paste the confirmation instead.")
        }
        guard ParcelPolicy.allows(.change, as: .owner, by: me.caller) else { throw WaybillError.accountSuspended }
        let token = try await db.writeTransaction(services) { db -> String in
            if let existing = try await ForwardingAddressRecord.find(me.userID, on: db) {
                guard renew else { return existing.token }
                existing.token = Self.newToken()
                try await existing.save(on: db)
                return existing.token
            }
            let record = ForwardingAddressRecord()
            record.id = me.userID
            record.token = Self.newToken()
            record.createdAt = UnixTime.nowMillis
            try await record.create(on: db)
            return record.token
        }
        return "\(Self.localPart)+\(token)@\(domain)"  // as `address(_:)`
    }

    /// One message from the mail server. Returns the numbers followed; nil when it is addressed to
    /// no known forwarding address (the mail server then bounces it).
    func receive(_ raw: String, recipient: String?) async throws -> (followed: Int, skipped: Int)? {
        let message = MailText.read(raw)
        let candidates = ([recipient?.lowercased()].compactMap { $0 } + message.recipients)
        let prefix = Self.localPart + "+"
        let tokens = candidates.compactMap { address -> String? in
            guard address.hasPrefix(prefix), let at = address.firstIndex(of: "@") else { return nil }
            let token = String(address[address.index(address.startIndex, offsetBy: prefix.count)..<at])
            return token.count == 12 && token.allSatisfy({ $0.isASCII && ($0.isLowercase || $0.isNumber) }) ? token : nil
        }
        for token in tokens {
            guard let record = try await ForwardingAddressRecord.query(on: db).filter(\.$token == token).first(),
                  let user = try await User.find(try record.storedID, on: db) else { continue }
            let me = try Principal(user: user, sessionID: SignInID())
            guard ParcelPolicy.allows(.change, as: .owner, by: me.caller) else { return (0, 0) }
            do {
                let (added, skipped) = try await Parcels(services: services, db: db, logger: logger)
                    .addAll(from: [message.subject ?? "", message.text].joined(separator: "\n"), name: message.subject.map { String($0.prefix(80)) }, by: me)
                return (added.count, skipped.count)
            } catch let error as WaybillError where error.status == .unprocessableEntity {
                return (0, 0) // no tracking number in it
            }
        }
        return nil
    }
}

/// `waybill inbound-mail [--recipient ADDRESS]`: reads one message on standard input (Postfix's
/// `pipe`, Exim's `pipe` transport) and follows the tracking numbers in it for the account its
/// forwarding address belongs to. Exit status 67 (EX_NOUSER) when no account has that address.
struct InboundMailCommand: AsyncCommand {
    struct Signature: CommandSignature {
        @Option(name: "recipient", help: "The envelope recipient (Postfix: ${recipient}); else read from the headers.")
        var recipient: String?
        init() {}
    }

    var help: String { "Follows the tracking numbers of a forwarded shipping confirmation read from standard input." }

    func run(using context: CommandContext, signature: Signature) async throws {
        let app = context.application
        try await migrate(app)
        var data = Data()
        while let chunk = try FileHandle.standardInput.read(upToCount: 65_536), !chunk.isEmpty, data.count < 2_000_000 { data.append(chunk) }
        let raw = String(decoding: data, as: UTF8.self)
        let forwarding = Forwarding(services: app.waybill, db: app.db, logger: app.logger)
        guard let result = try await forwarding.receive(raw, recipient: signature.recipient) else {
            context.console.error("No Waybill account has this forwarding address.")
            // EX_NOUSER: the mail server bounces the message.
            exit(67)
        }
        context.console.info("Followed \(result.followed) tracking numbers (\(result.skipped) already followed).")
    }
}
