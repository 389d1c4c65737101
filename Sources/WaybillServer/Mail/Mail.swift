import Foundation
import Vapor

/// An address with an optional display name: `Waybill <no-reply@example.com>` or `a@b.example`.
public struct MailAddress: Sendable, Equatable, Codable {
    public var name: String?
    public var address: String

    public init(name: String? = nil, address: String) {
        self.name = name
        self.address = address
    }

    public init?(parsing raw: String) {
        let trimmed = raw.trimmingCharacters(in: .whitespaces)
        if let open = trimmed.lastIndex(of: "<"), trimmed.hasSuffix(">") {
            let address = String(trimmed[trimmed.index(after: open)..<trimmed.index(before: trimmed.endIndex)])
            let name = trimmed[..<open].trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            self.init(name: name.isEmpty ? nil : name, address: address)
        } else {
            self.init(address: trimmed)
        }
        guard address.contains("@"), !address.contains(where: { $0 == " " || $0 == "\r" || $0 == "\n" || $0 == "<" || $0 == ">" })
        else { return nil }
    }
}

/// One plain-text mail.
public struct MailMessage: Sendable, Equatable, Codable {
    public var to: MailAddress
    public var subject: String
    public var text: String
    /// The left part of the `Message-ID`. The outbox sets it from its row, so a mail sent again
    /// after a crash (at-least-once) carries the same id and mail systems keep one copy.
    public var messageID: String?

    public init(to: MailAddress, subject: String, text: String, messageID: String? = nil) {
        self.to = to
        self.subject = subject
        self.text = text
        self.messageID = messageID
    }
}

/// Something that delivers mail. Throws when delivery failed and should be retried.
public protocol Mailer: Sendable {
    func send(_ message: MailMessage, from: MailAddress) async throws
}

/// Development mailer: writes each message, code included, to the log instead of sending it.
public struct LogMailer: Mailer {
    let logger: Logger
    public init(logger: Logger) { self.logger = logger }

    public func send(_ message: MailMessage, from: MailAddress) async throws {
        logger.notice("""
            [mail, not sent: SMTP_URL is not set]
            To: \(message.to.address)
            Subject: \(message.subject)

            \(message.text)
            """)
    }
}

/// The mails Waybill sends, in English and French (the first client writes French).
enum MailTemplates {
    static func verifyEmail(_ user: User, code: String) -> MailMessage {
        MailMessage(
            to: MailAddress(name: user.displayName, address: user.email),
            subject: "Your Waybill code: \(code)",
            text: """
            Hello \(user.firstName),

            Your code to confirm this email address is: \(code)
            It is valid for 10 minutes.

            Bonjour \(user.firstName),
            Votre code pour confirmer cette adresse e-mail : \(code)
            Il est valable 10 minutes.

            If you did not create a Waybill account, ignore this message.
            """
        )
    }

    static func passwordReset(_ user: User, code: String) -> MailMessage {
        MailMessage(
            to: MailAddress(name: user.displayName, address: user.email),
            subject: "Your Waybill password reset code: \(code)",
            text: """
            Hello \(user.firstName),

            Your code to choose a new password is: \(code)
            It is valid for 10 minutes. If you did not ask for it, ignore this message: your password stays as it is.

            Bonjour \(user.firstName),
            Votre code pour choisir un nouveau mot de passe : \(code)
            Il est valable 10 minutes. Si vous ne l'avez pas demandé, ignorez ce message.
            """
        )
    }

    static func invitation(to user: User, code: String, publicURL: String) -> MailMessage {
        MailMessage(
            to: MailAddress(name: user.displayName, address: user.email),
            subject: "Your Waybill \(user.role.rawValue) account",
            text: """
            Hello \(user.firstName),

            A Waybill \(user.role.rawValue) account was created for you at \(publicURL).
            To choose your password, use "Forgot password" with this email address and this code: \(code)
            The code is valid for 10 minutes; after that, "Forgot password" sends you a new one.

            Bonjour \(user.firstName),
            Un compte Waybill a été créé pour vous. Pour choisir votre mot de passe, utilisez
            « Mot de passe oublié » avec cette adresse et ce code : \(code) (valable 10 minutes).
            """
        )
    }
}
