import Foundation
import OpenAPIRuntime
import WaybillCore

/// A conversation as the signed-in person sees it: its subject, participants, their markers, unread count.
public typealias Conversation = Components.Schemas.Conversation
/// One message (text, a shared shipment, or a status change written by the server).
public typealias Message = Components.Schemas.Message
/// A report filed with the moderators.
public typealias ModerationReport = Components.Schemas.Report

/// What happens in one conversation while an app shows it (``WaybillSession/conversation(events:)``).
public enum ConversationEvent: Sendable, Equatable {
    /// A new message, or a changed one (an edit, a deletion): keep one per `seq`.
    case message(LiveChatMessage)
    /// How far a participant has received and read.
    case marker(LiveChatMarker)
    /// The live connection is (again) up; what was missed meanwhile has been delivered.
    case connected
    /// The connection dropped; the stream reconnects by itself.
    case disconnected(reason: String)
}

/// Conversations per shipment or traveller request: its parties write to each other, staff join.
extension WaybillSession {
    /// The signed-in person's conversations, most recent first, and their unread messages in all.
    public func conversations() async throws(WaybillError) -> (items: [Conversation], totalUnread: Int64) {
        let list = try await call { try await $0.listConversations().ok.body.json }
        return (list.items, list.totalUnread)
    }

    /// The conversation of a shipment (a traveller's shipment answers its request's), made on first use.
    public func openConversation(shipment: OrderID) async throws(WaybillError) -> Conversation {
        try await open(.init(kind: .shipment, id: shipment.uuidString.lowercased()))
    }

    /// The conversation of a traveller request, from the moment it is sent.
    public func openConversation(request: TripRequestID) async throws(WaybillError) -> Conversation {
        try await open(.init(kind: .request, id: request.uuidString.lowercased()))
    }

    /// The signed-in person's own conversation with another person (one per pair, whoever opens it),
    /// while they share a shipment or a followed parcel; `.notFound` otherwise.
    public func openConversation(with person: UserID) async throws(WaybillError) -> Conversation {
        try await open(.init(kind: .direct, id: person.uuidString.lowercased()))
    }

    /// The conversation about a drop-off booked at a counter: its customer and the counter's staff.
    public func openConversation(booking: SlotBookingID) async throws(WaybillError) -> Conversation {
        try await open(.init(kind: .booking, id: booking.uuidString.lowercased()))
    }

    private func open(_ subject: Components.Schemas.ConversationSubject) async throws(WaybillError) -> Conversation {
        try await call { try await $0.openConversation(body: .json(.init(subject: subject))).ok.body.json }
    }

    public func conversation(_ id: ConversationID) async throws(WaybillError) -> Conversation {
        try await call { try await $0.getConversation(path: .init(conversationId: id.uuidString.lowercased())).ok.body.json }
    }

    /// Messages after `after` (what the app missed, oldest first), or the newest `limit` (before `before`).
    public func messages(in id: ConversationID, after: Int64? = nil, before: Int64? = nil, limit: Int = 50) async throws(WaybillError) -> [Message] {
        try await call {
            try await $0.listMessages(path: .init(conversationId: id.uuidString.lowercased()),
                                      query: .init(after: after, before: before, limit: limit)).ok.body.json.items
        }
    }

    /// Sends a message. Keep `clientMessageId` for the message until it is acknowledged and send it
    /// again with the same id after a failure: the server stores it once.
    public func send(_ text: String, in id: ConversationID, clientMessageId: String = UUID().uuidString,
                     sharing shipment: OrderID? = nil) async throws(WaybillError) -> Message {
        try await call {
            let output = try await $0.sendMessage(path: .init(conversationId: id.uuidString.lowercased()),
                                                  body: .json(.init(clientMessageId: clientMessageId, text: text,
                                                                    sharedShipmentId: shipment?.uuidString.lowercased())))
            switch output {
            case .created(let created): return try created.body.json
            default: return try output.ok.body.json
            }
        }
    }

    /// Sends a photo (JPEG or PNG; the server re-encodes it) with an optional caption. The same
    /// `clientMessageId` again stores it once.
    public func sendPhoto(_ photo: Data, caption: String? = nil, in id: ConversationID,
                          clientMessageId: String = UUID().uuidString) async throws(WaybillError) -> Message {
        try await call {
            var parts: [Operations.SendImageMessage.Input.Body.MultipartFormPayload] = [
                .photo(.init(payload: .init(body: HTTPBody(photo)), filename: "photo")),
                .clientMessageId(.init(payload: .init(body: HTTPBody(clientMessageId)))),
            ]
            if let caption { parts.append(.text(.init(payload: .init(body: HTTPBody(caption))))) }
            let output = try await $0.sendImageMessage(path: .init(conversationId: id.uuidString.lowercased()), body: .multipartForm(MultipartBody(parts)))
            switch output {
            case .created(let created): return try created.body.json
            default: return try output.ok.body.json
            }
        }
    }

    /// An image message's photo.
    public func photo(of message: MessageID, in id: ConversationID) async throws(WaybillError) -> Data {
        try await call {
            let output = try await $0.getMessageImage(path: .init(conversationId: id.uuidString.lowercased(), messageId: message.uuidString.lowercased()))
            switch try output.ok.body {
            case .jpeg(let body), .png(let body): return try await Data(collecting: body, upTo: 16 * 1024 * 1024)
            }
        }
    }

    /// Changes one's own message within five minutes of sending it.
    public func edit(_ message: MessageID, in id: ConversationID, text: String) async throws(WaybillError) -> Message {
        try await call {
            try await $0.editMessage(path: .init(conversationId: id.uuidString.lowercased(), messageId: message.uuidString.lowercased()),
                                     body: .json(.init(text: text))).ok.body.json
        }
    }

    /// Deletes one's own message within five minutes; a tombstone keeps its place.
    public func delete(_ message: MessageID, in id: ConversationID) async throws(WaybillError) -> Message {
        try await call {
            try await $0.deleteMessage(path: .init(conversationId: id.uuidString.lowercased(), messageId: message.uuidString.lowercased())).ok.body.json
        }
    }

    /// Says how far the person received and read (markers only move forward).
    public func markConversation(_ id: ConversationID, delivered: Int64? = nil, read: Int64? = nil) async throws(WaybillError) -> Conversation {
        try await call {
            try await $0.markConversation(path: .init(conversationId: id.uuidString.lowercased()), body: .json(.init(delivered: delivered, read: read))).ok.body.json
        }
    }

    /// Reports a message (its author) or a participant to the moderators.
    public func report(message: MessageID? = nil, person: UserID? = nil, in id: ConversationID, reason: ReportReason,
                       note: String? = nil) async throws(WaybillError) -> ModerationReport {
        try await call {
            try await $0.reportInConversation(path: .init(conversationId: id.uuidString.lowercased()),
                                              body: .json(.init(messageId: message?.uuidString.lowercased(), userId: person?.uuidString.lowercased(),
                                                                reason: .init(rawValue: reason.rawValue)!, note: note))).created.body.json
        }
    }

    /// Whether push notifications of new messages show their text (off by default).
    public func messagePreviews() async throws(WaybillError) -> Bool {
        try await call { try await $0.getChatSettings().ok.body.json.previews }
    }

    public func setMessagePreviews(_ on: Bool) async throws(WaybillError) {
        _ = try await call { try await $0.setChatSettings(body: .json(.init(previews: on))).ok.body.json }
    }

    /// The person's unread messages as they change (in one conversation and in all): for the badge.
    public func unreadMessages(options: LiveOptions = LiveOptions()) -> AsyncThrowingStream<LiveUnread, any Error> {
        let events = live([.notifications], options: options)
        return AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    for try await event in events { if case .unread(let unread) = event.payload { continuation.yield(unread) } }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// One conversation live: new and changed messages and markers, as long as the caller iterates.
    ///
    /// Start it after loading the messages the app shows and pass the last `seq` as `after`. After
    /// every (re)connection, the messages numbered above the last one delivered are fetched over HTTP
    /// too, so a message is never missed, whatever the live channel kept; one already delivered is
    /// not delivered again unless it changed.
    public func conversation(events id: ConversationID, after: Int64 = 0, options: LiveOptions = LiveOptions())
        -> AsyncThrowingStream<ConversationEvent, any Error> {
        let updates = liveUpdates([.conversation(id)], options: options)
        return AsyncThrowingStream { continuation in
            let task = Task {
                var lastSeq = after
                var seen: [Int64: LiveChatMessage] = [:]
                func deliver(_ message: LiveChatMessage) {
                    if seen[message.seq] == message { return }
                    seen[message.seq] = message
                    lastSeq = max(lastSeq, message.seq)
                    continuation.yield(.message(message))
                }
                do {
                    for try await update in updates {
                        switch update {
                        case .event(let event):
                            switch event.payload {
                            case .message(let message): deliver(message)
                            case .marker(let marker): continuation.yield(.marker(marker))
                            default: break
                            }
                        case .connected, .missedEvents:
                            // Whatever happened while away, by sequence number.
                            var more = true
                            while more {
                                let page = try await self.messages(in: id, after: lastSeq, limit: 200)
                                for message in page { deliver(Self.live(message)) }
                                more = page.count == 200
                            }
                            if case .connected = update { continuation.yield(.connected) }
                        case .disconnected(let reason):
                            continuation.yield(.disconnected(reason: reason))
                        }
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// A message read over HTTP, as the live channel carries it.
    static func live(_ m: Message) -> LiveChatMessage {
        func millis(_ date: Date?) -> Int64? { date.map { Int64(($0.timeIntervalSince1970 * 1000).rounded()) } }
        return LiveChatMessage(conversationId: ConversationID(uuidString: m.conversationId)!, id: MessageID(uuidString: m.id)!, seq: m.seq,
                               senderId: m.senderId.flatMap(UserID.init(uuidString:)), senderName: m.senderName,
                               kind: MessageKind(rawValue: m.kind.rawValue) ?? .text, text: m.text,
                               sharedShipmentId: m.sharedShipment.flatMap { OrderID(uuidString: $0.id) }, sharedReference: m.sharedShipment?.reference,
                               clientMessageId: m.clientMessageId, createdAt: millis(m.createdAt) ?? 0, editedAt: millis(m.editedAt),
                               deletedAt: millis(m.deletedAt))
    }
}

/// A rating (1–5 stars with tags, a comment and a private note).
public typealias Rating = Components.Schemas.Rating
/// A shipment's ratings as the signed-in person sees them, and whom they may still rate.
public typealias ShipmentRatings = Components.Schemas.ShipmentRatings
/// A person's or a carrier's published ratings and their average (from the minimum count on).
public typealias RatingProfile = Components.Schemas.RatingProfile

/// Ratings both ways, after delivery.
extension WaybillSession {
    public func ratings(ofShipment id: OrderID) async throws(WaybillError) -> ShipmentRatings {
        try await call { try await $0.getShipmentRatings(path: .init(shipmentId: id.uuidString.lowercased())).ok.body.json }
    }

    /// Rates the other party of a delivered shipment (`ratee` may be left out when there is one).
    public func rate(shipment id: OrderID, ratee: UserID? = nil, _ draft: RatingDraft) async throws(WaybillError) -> Rating {
        try await call {
            try await $0.rateShipment(path: .init(shipmentId: id.uuidString.lowercased()),
                                      body: .json(.init(value1: Self.ratingInput(draft), value2: .init(rateeId: ratee?.uuidString.lowercased())))).created.body.json
        }
    }

    /// Rates the carrier of a delivered parcel one follows.
    public func rateCarrier(ofParcel id: ParcelID, _ draft: RatingDraft) async throws(WaybillError) -> Rating {
        try await call {
            try await $0.rateParcelCarrier(path: .init(parcelId: id.uuidString.lowercased()), body: .json(Self.ratingInput(draft))).created.body.json
        }
    }

    public func ratings(ofPerson id: UserID) async throws(WaybillError) -> RatingProfile {
        try await call { try await $0.getPersonRatings(path: .init(userId: id.uuidString.lowercased())).ok.body.json }
    }

    public func ratings(ofCarrier code: String) async throws(WaybillError) -> RatingProfile {
        try await call { try await $0.getCarrierRatings(path: .init(carrier: code)).ok.body.json }
    }

    /// Answers a published rating of oneself, publicly, once.
    public func respond(toRating id: RatingID, _ text: String) async throws(WaybillError) -> Rating {
        try await call { try await $0.respondToRating(path: .init(ratingId: id.uuidString.lowercased()), body: .json(.init(text: text))).ok.body.json }
    }

    static func ratingInput(_ draft: RatingDraft) -> Components.Schemas.RatingInput {
        .init(stars: draft.stars, tags: draft.tags, comment: draft.comment, privateNote: draft.privateNote)
    }
}
