import ArgumentParser
import Foundation
import WaybillClient
import WaybillCore

/// `waybill-client chat`: the conversations of one's deliveries. `chat` lists them with their
/// unread messages, `chat open --shipment ID` opens a shipment's (or `--request ID` a traveller
/// request's), `chat show ID` prints its messages and marks them read, `chat send ID TEXT` writes,
/// `chat follow ID` prints new messages as they come.
struct ChatCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "chat", abstract: "Conversations with the people of your deliveries.",
        subcommands: [List.self, Open.self, Show.self, Send.self, Follow.self], defaultSubcommand: List.self)

    static func conversationID(_ text: String) throws -> ConversationID {
        guard let id = ConversationID(uuidString: text) else { throw ValidationError("Not a conversation id: \(text)") }
        return id
    }

    static func line(_ m: Message) -> String {
        let time = Output.time(m.createdAt)
        if m.deletedAt != nil { return "#\(m.seq) \(time)  (deleted)" }
        if m.kind == .system { return "#\(m.seq) \(time)  status: \(m.text)" }
        let who = m.mine ? "you" : (m.senderName ?? "?")
        let shared = m.sharedShipment.map { "  [delivery \($0.reference)]" } ?? ""
        return "#\(m.seq) \(time)  \(who): \(m.text)\(shared)\(m.editedAt != nil ? " (edited)" : "")"
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "Your conversations, most recent first.")
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            try await options.run { session in
                let (items, total) = try await session.conversations()
                if options.json { return Output.json(Components.Schemas.ConversationList(items: items, totalUnread: total)) }
                if items.isEmpty { return Output.line("No conversations.") }
                for c in items {
                    let with = c.participants.map(\.firstName).joined(separator: ", ")
                    Output.line("\(c.id)  \(c.reference ?? c.subject.kind.rawValue)  with \(with)\(c.unread > 0 ? "  \(c.unread) unread" : "")\(c.closed ? "  (closed)" : "")")
                }
                Output.line("\(total) unread in all")
            }
        }
    }

    struct Open: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "open",
                                                        abstract: "The conversation of a shipment, a traveller request, a counter drop-off booking, or with one person (made on first use).")
        @OptionGroup var options: GlobalOptions
        @Option(help: "A shipment's (order's) id.") var shipment: String?
        @Option(help: "A traveller request's id.") var request: String?
        @Option(name: .customLong("with"), help: "A person's user id: your own conversation with them, while you share a shipment or a parcel.")
        var person: String?
        @Option(help: "A drop-off booked at a counter (its booking id): you and the counter's staff.") var booking: String?

        func run() async throws {
            let order = try shipment.map { text -> OrderID in
                guard let id = OrderID(uuidString: text) else { throw ValidationError("Not a shipment id: \(text)") }
                return id
            }
            let trip = try request.map { text -> TripRequestID in
                guard let id = TripRequestID(uuidString: text) else { throw ValidationError("Not a request id: \(text)") }
                return id
            }
            let other = try person.map { text -> UserID in
                guard let id = UserID(uuidString: text) else { throw ValidationError("Not a user id: \(text)") }
                return id
            }
            let desk = try booking.map { text -> SlotBookingID in
                guard let id = SlotBookingID(uuidString: text) else { throw ValidationError("Not a booking id: \(text)") }
                return id
            }
            guard [order != nil, trip != nil, other != nil, desk != nil].filter({ $0 }).count == 1 else {
                throw ValidationError("Give one of --shipment, --request, --booking or --with.")
            }
            try await options.run { session in
                let c: Conversation = if let order { try await session.openConversation(shipment: order) }
                    else if let trip { try await session.openConversation(request: trip) }
                    else if let desk { try await session.openConversation(booking: desk) }
                    else { try await session.openConversation(with: other!) }
                if options.json { return Output.json(c) }
                Output.line("\(c.id)  \(c.reference ?? c.subject.kind.rawValue)  with \(c.participants.map { "\($0.firstName) (\($0.role.rawValue))" }.joined(separator: ", "))")
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "show", abstract: "A conversation's messages (marked read).")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The conversation's id.") var id: String
        @Option(help: "Only messages after this sequence number.") var after: Int64?

        func run() async throws {
            let conversation = try ChatCommand.conversationID(id)
            try await options.run { session in
                let messages = try await session.messages(in: conversation, after: after, limit: 200)
                if let last = messages.last?.seq { _ = try? await session.markConversation(conversation, delivered: last, read: last) }
                if options.json { return Output.json(messages) }
                if messages.isEmpty { Output.line("No messages.") }
                for m in messages { Output.line(ChatCommand.line(m)) }
            }
        }
    }

    struct Send: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "send", abstract: "Write in a conversation.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The conversation's id.") var id: String
        @Argument(help: "The message.") var text: String
        @Option(help: "Your id for this message: sending again with it does not send twice.") var clientId: String?

        func run() async throws {
            let conversation = try ChatCommand.conversationID(id)
            try await options.run { session in
                let m = try await session.send(text, in: conversation, clientMessageId: clientId ?? UUID().uuidString)
                if options.json { return Output.json(m) }
                Output.line(ChatCommand.line(m))
            }
        }
    }

    struct Follow: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "follow", abstract: "Print a conversation's new messages as they come (Ctrl-C to stop).")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The conversation's id.") var id: String
        @Option(help: "Start after this sequence number (default: from now).") var after: Int64?

        func run() async throws {
            let conversation = try ChatCommand.conversationID(id)
            try await options.run { session in
                let start: Int64
                if let after { start = after } else { start = try await session.conversation(conversation).lastSeq }
                do {
                    for try await event in session.conversation(events: conversation, after: start) {
                        guard case .message(let m) = event else { continue }
                        if options.json { Output.json(m) } else {
                            let who = m.senderName ?? "status"
                            Output.line("#\(m.seq) \(who): \(m.deletedAt != nil ? "(deleted)" : m.text)\(m.editedAt != nil ? " (edited)" : "")")
                        }
                    }
                } catch let error as WaybillError {
                    throw error
                } catch {
                    throw WaybillError.from(error)
                }
            }
        }
    }
}

/// `waybill-client rate`: rates the other party of a delivered shipment (`--stars 5 --tag on_time`),
/// or with `--parcel` the carrier of a delivered parcel; `rate show ID` prints a shipment's ratings.
struct RateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rate", abstract: "Rate the other party of a delivered shipment, or an outside carrier.",
        subcommands: [Give.self, Show.self], defaultSubcommand: Give.self)

    static func line(_ r: Rating) -> String {
        let stars = String(repeating: "★", count: r.stars) + String(repeating: "☆", count: max(0, 5 - r.stars))
        let whom = r.rateeName ?? r.carrier ?? "?"
        var text = "\(r.reviewerName) → \(whom)  \(stars)  \(r.status.rawValue)"
        if !r.tags.isEmpty { text += "  [\(r.tags.joined(separator: ", "))]" }
        if let comment = r.comment { text += "  \"\(comment)\"" }
        if let response = r.response { text += "  answer: \"\(response)\"" }
        return text
    }

    struct Give: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "give", abstract: "Rate (within 14 days of delivery).")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The shipment's (order's) id, or with --parcel the parcel's.") var id: String
        @Flag(help: "Rate the carrier of a parcel you follow.") var parcel = false
        @Option(help: "1 to 5.") var stars: Int
        @Option(name: .customLong("tag"), help: "A tag (repeat): on_time, careful_with_parcel, friendly, late, ready_on_time, well_packed, fast…") var tags: [String] = []
        @Option(help: "A public comment.") var comment: String?
        @Option(help: "A note for the rated person only.") var privateNote: String?
        @Option(help: "Whom (a user id), when there is more than one party to rate.") var ratee: String?

        func run() async throws {
            guard let uuid = UUID(uuidString: id) else { throw ValidationError("Not an id: \(id)") }
            let draft = RatingDraft(stars: stars, tags: tags, comment: comment, privateNote: privateNote)
            let rateeID = try ratee.map { text -> UserID in
                guard let u = UserID(uuidString: text) else { throw ValidationError("Not a user id: \(text)") }
                return u
            }
            try await options.run { session in
                let rating = parcel ? try await session.rateCarrier(ofParcel: ParcelID(rawValue: uuid), draft)
                    : try await session.rate(shipment: OrderID(rawValue: uuid), ratee: rateeID, draft)
                if options.json { return Output.json(rating) }
                Output.line(RateCommand.line(rating))
                if rating.status == .pending { Output.line("Shown when the other side has rated too, or when the 14 days are over.") }
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "show", abstract: "A shipment's ratings, and whom you may still rate.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The shipment's (order's) id.") var id: String

        func run() async throws {
            guard let order = OrderID(uuidString: id) else { throw ValidationError("Not a shipment id: \(id)") }
            try await options.run { session in
                let result = try await session.ratings(ofShipment: order)
                if options.json { return Output.json(result) }
                for r in result.ratings { Output.line(RateCommand.line(r)) }
                for open in result.open { Output.line("You may rate \(open.rateeName) (\(open.rateeId))") }
                if result.ratings.isEmpty && result.open.isEmpty { Output.line("No ratings.") }
            }
        }
    }
}
