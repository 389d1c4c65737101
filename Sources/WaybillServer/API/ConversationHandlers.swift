import Foundation
import OpenAPIRuntime
import Vapor
import WaybillAPI
import WaybillCore

/// Conversations: translation only (`Conversations` and `ConversationPolicy` decide).
extension APIHandler {
    var conversations: Conversations { get throws { Conversations(request: try request) } }

    func listConversations(_ input: Operations.ListConversations.Input) async throws -> Operations.ListConversations.Output {
        let me = try await principal()
        let (items, total) = try await conversations.list(for: me)
        return .ok(.init(body: .json(.init(items: try items.map { try Self.conversation($0, for: me.userID) }, totalUnread: total))))
    }

    func openConversation(_ input: Operations.OpenConversation.Input) async throws -> Operations.OpenConversation.Output {
        let me = try await principal()
        guard case .json(let body) = input.body else { throw WaybillError.unsupportedBody }
        let id = try Self.plainID(body.subject.id, "subject.id")
        guard let subject = ConversationSubject(kind: body.subject.kind.rawValue, id: id, by: me.userID) else {
            throw body.subject.kind == .direct ? WaybillError.validation("subject.id", "self") : WaybillError.validation("subject.kind", "invalid")
        }
        return .ok(.init(body: .json(try Self.conversation(try await conversations.open(subject, for: me), for: me.userID))))
    }

    func getConversation(_ input: Operations.GetConversation.Input) async throws -> Operations.GetConversation.Output {
        let me = try await principal()
        let view = try await conversations.conversation(try Self.conversationID(input.path.conversationId), for: me)
        return .ok(.init(body: .json(try Self.conversation(view, for: me.userID))))
    }

    func listMessages(_ input: Operations.ListMessages.Input) async throws -> Operations.ListMessages.Output {
        let me = try await principal()
        let q = input.query
        let (access, items) = try await conversations.messages(try Self.conversationID(input.path.conversationId), after: q.after, before: q.before,
                                                               limit: q.limit ?? 50, for: me)
        return .ok(.init(body: .json(.init(items: try items.map { try Self.message($0, for: me.userID) }, masked: access.masks))))
    }

    func sendMessage(_ input: Operations.SendMessage.Input) async throws -> Operations.SendMessage.Output {
        let me = try await principal()
        guard case .json(let body) = input.body else { throw WaybillError.unsupportedBody }
        let shared = try body.sharedShipmentId.map { OrderID(rawValue: try Self.plainID($0, "sharedShipmentId")) }
        let draft = MessageDraft(text: body.text ?? "", clientMessageId: body.clientMessageId, sharedShipment: shared)
        let (view, created) = try await conversations.send(try Self.conversationID(input.path.conversationId), draft, by: me)
        let message = try Self.message(view, for: me.userID)
        return created ? .created(.init(body: .json(message))) : .ok(.init(body: .json(message)))
    }

    func sendImageMessage(_ input: Operations.SendImageMessage.Input) async throws -> Operations.SendImageMessage.Output {
        let me = try await principal()
        guard case .multipartForm(let form) = input.body else { throw WaybillError.unsupportedBody }
        var photo: [UInt8]?, clientID: String?, caption: String?
        do {
            for try await part in form {
                switch part {
                case .photo(let p): photo = try await Self.collect(p.payload.body, field: "photo", limit: UploadLimits.photoBytes)
                case .clientMessageId(let p): clientID = String(decoding: try await Self.collect(p.payload.body, field: "clientMessageId", limit: 256), as: UTF8.self)
                case .text(let p): caption = String(decoding: try await Self.collect(p.payload.body, field: "text", limit: 16 * 1024), as: UTF8.self)
                case .undocumented: continue
                }
            }
        } catch let error as WaybillError {
            throw error
        } catch {
            if photo != nil && clientID != nil { throw WaybillError(.badRequest, .invalidMultipart, "The multipart body is malformed or repeats a part.") }
        }
        guard let photo, let clientID else {
            var fields = FieldErrors()
            if photo == nil { fields.add("photo", "required") }
            if clientID == nil { fields.add("clientMessageId", "required") }
            throw WaybillError.validation(fields)
        }
        let (view, created) = try await conversations.send(try Self.conversationID(input.path.conversationId),
                                                           MessageDraft(text: caption ?? "", clientMessageId: clientID),
                                                           image: .init(bytes: photo, field: "photo"), by: me)
        let message = try Self.message(view, for: me.userID)
        return created ? .created(.init(body: .json(message))) : .ok(.init(body: .json(message)))
    }

    func getMessageImage(_ input: Operations.GetMessageImage.Input) async throws -> Operations.GetMessageImage.Output {
        let me = try await principal()
        let (bytes, type) = try await conversations.image(try Self.conversationID(input.path.conversationId),
                                                          message: MessageID(rawValue: try Self.plainID(input.path.messageId, "messageId")), for: me)
        let body = HTTPBody(bytes)
        return .ok(.init(body: type == "image/png" ? .png(body) : .jpeg(body)))
    }

    func editMessage(_ input: Operations.EditMessage.Input) async throws -> Operations.EditMessage.Output {
        let me = try await principal()
        guard case .json(let body) = input.body else { throw WaybillError.unsupportedBody }
        let view = try await conversations.edit(try Self.conversationID(input.path.conversationId),
                                                message: MessageID(rawValue: try Self.plainID(input.path.messageId, "messageId")), text: body.text, by: me)
        return .ok(.init(body: .json(try Self.message(view, for: me.userID))))
    }

    func deleteMessage(_ input: Operations.DeleteMessage.Input) async throws -> Operations.DeleteMessage.Output {
        let me = try await principal()
        let view = try await conversations.delete(try Self.conversationID(input.path.conversationId),
                                                  message: MessageID(rawValue: try Self.plainID(input.path.messageId, "messageId")), by: me)
        return .ok(.init(body: .json(try Self.message(view, for: me.userID))))
    }

    func markConversation(_ input: Operations.MarkConversation.Input) async throws -> Operations.MarkConversation.Output {
        let me = try await principal()
        guard case .json(let body) = input.body else { throw WaybillError.unsupportedBody }
        let view = try await conversations.mark(try Self.conversationID(input.path.conversationId), delivered: body.delivered, read: body.read, by: me)
        return .ok(.init(body: .json(try Self.conversation(view, for: me.userID))))
    }

    func reportInConversation(_ input: Operations.ReportInConversation.Input) async throws -> Operations.ReportInConversation.Output {
        let me = try await principal()
        guard case .json(let body) = input.body else { throw WaybillError.unsupportedBody }
        guard let reason = ReportReason(rawValue: body.reason.rawValue) else { throw WaybillError.validation("reason", "invalid") }
        let report = try await conversations.report(
            message: try body.messageId.map { MessageID(rawValue: try Self.plainID($0, "messageId")) },
            person: try body.userId.map { UserID(rawValue: try Self.plainID($0, "userId")) },
            in: try Self.conversationID(input.path.conversationId), reason: reason, note: body.note, by: me)
        return .created(.init(body: .json(try Self.report(report))))
    }

    func listReports(_ input: Operations.ListReports.Input) async throws -> Operations.ListReports.Output {
        let me = try await principal()
        let status = input.query.status.flatMap { ReportStatus(rawValue: $0.rawValue) }
        return .ok(.init(body: .json(.init(items: try await accounts.reports(status: status, for: me).map(Self.report)))))
    }

    func getChatSettings(_ input: Operations.GetChatSettings.Input) async throws -> Operations.GetChatSettings.Output {
        let me = try await principal()
        return .ok(.init(body: .json(.init(previews: try await conversations.previews(for: me)))))
    }

    func setChatSettings(_ input: Operations.SetChatSettings.Input) async throws -> Operations.SetChatSettings.Output {
        let me = try await principal()
        guard case .json(let body) = input.body else { throw WaybillError.unsupportedBody }
        try await conversations.setPreviews(body.previews, by: me)
        return .ok(.init(body: .json(.init(previews: body.previews))))
    }

    // MARK: translation

    static func conversationID(_ text: String) throws -> ConversationID {
        ConversationID(rawValue: try plainID(text, "conversationId"))
    }

    static func conversation(_ v: ConversationView, for userID: UserID) throws -> S.Conversation {
        let kind: S.ConversationSubject.KindPayload = switch v.access.subject {
        case .shipment: .shipment
        case .request: .request
        case .direct: .direct
        case .booking: .booking
        }
        return try S.Conversation(
            id: v.id.uuidString,
            subject: .init(kind: kind, id: v.access.subject.id(for: userID).uuidString),
            shipmentId: v.access.order?.id?.uuidString, reference: v.access.reference,
            roles: v.access.roles.sorted { $0.rawValue < $1.rawValue }.compactMap { S.ConversationRole(rawValue: $0.rawValue) },
            observer: ConversationPolicy.isObserver(v.access.roles) && !v.participants.contains { $0.user.id == userID },
            closed: v.closed, masked: v.access.masks, lastSeq: v.record.lastSeq, lastReadSeq: v.lastReadSeq,
            lastDeliveredSeq: v.lastDeliveredSeq, unread: v.unread,
            lastMessage: v.last.map { try message(Conversations.view($0, access: v.access, sender: nil, references: [:]), for: userID) },
            participants: v.participants.map { .init(userId: try $0.user.storedID.uuidString, firstName: $0.user.firstName,
                                                     role: try wire($0.role), readSeq: $0.readSeq) },
            createdAt: date(v.record.createdAt), lastMessageAt: v.record.lastMessageAt.map(date))
    }

    static func message(_ v: MessageView, for userID: UserID) throws -> S.Message {
        let r = v.record
        let id = try r.storedID
        return S.Message(
            id: id.uuidString, conversationId: r.conversationID.uuidString, seq: r.seq,
            kind: try wire(r.kind), text: v.text, senderId: r.senderID?.uuidString,
            senderName: v.senderName, mine: r.senderID == userID,
            sharedShipment: r.sharedOrderID.flatMap { id in v.sharedReference.map { .init(id: id.uuidString, reference: $0) } },
            image: r.imageName == nil || r.deletedAt != nil || r.hiddenAt != nil ? nil
                : .init(url: "/conversations/\(r.conversationID.uuidString)/messages/\(id.uuidString)/image", width: r.imageWidth ?? 0, height: r.imageHeight ?? 0),
            clientMessageId: r.senderID == userID ? r.clientMessageID : nil,
            createdAt: date(r.createdAt), editedAt: r.editedAt.map(date), deletedAt: r.deletedAt.map(date), hiddenAt: r.hiddenAt.map(date))
    }

    static func report(_ r: ReportRecord) throws -> S.Report {
        S.Report(id: try r.storedID.uuidString, reporterId: r.reporterID.uuidString, reportedUserId: r.reportedUserID.uuidString,
                 conversationId: r.conversationID?.uuidString, messageId: r.messageID?.uuidString, ratingId: r.ratingID?.uuidString,
                 reason: try wire(r.reason), note: r.note,
                 status: try wire(r.status), createdAt: date(r.createdAt),
                 decidedBy: r.reviewedBy?.uuidString, decidedAt: r.reviewedAt.map(date), decisionNote: r.decisionNote)
    }
}

/// Ratings: translation only (`Ratings` and `RatingPolicy` decide).
extension APIHandler {
    var ratings: Ratings { get throws { Ratings(request: try request) } }

    func getShipmentRatings(_ input: Operations.GetShipmentRatings.Input) async throws -> Operations.GetShipmentRatings.Output {
        let me = try await principal()
        let result = try await ratings.shipmentRatings(OrderID(rawValue: try Self.plainID(input.path.shipmentId, "shipmentId")), for: me)
        let (window, closesAt): (S.ShipmentRatings.WindowPayload, Int64?) = switch result.window {
        case .notYet: (.notYet, nil)
        case .open(let at): (.open, at)
        case .closed: (.closed, nil)
        }
        return .ok(.init(body: .json(.init(
            ratings: try result.ratings.map { try Self.rating($0, for: me.userID) },
            open: try result.open.map { .init(direction: try wire($0.direction), rateeId: try $0.ratee.storedID.uuidString,
                                          rateeName: $0.ratee.firstName, tags: $0.direction.tags) },
            window: window, windowClosesAt: closesAt.map(Self.date)))))
    }

    func rateShipment(_ input: Operations.RateShipment.Input) async throws -> Operations.RateShipment.Output {
        let me = try await principal()
        guard case .json(let body) = input.body else { throw WaybillError.unsupportedBody }
        let ratee = try body.value2.rateeId.map { UserID(rawValue: try Self.plainID($0, "rateeId")) }
        let view = try await ratings.rate(shipment: OrderID(rawValue: try Self.plainID(input.path.shipmentId, "shipmentId")), ratee: ratee,
                                          Self.ratingDraft(body.value1), by: me)
        return .created(.init(body: .json(try Self.rating(view, for: me.userID))))
    }

    func rateParcelCarrier(_ input: Operations.RateParcelCarrier.Input) async throws -> Operations.RateParcelCarrier.Output {
        let me = try await principal()
        guard case .json(let body) = input.body else { throw WaybillError.unsupportedBody }
        let view = try await ratings.rate(parcel: ParcelID(rawValue: try Self.plainID(input.path.parcelId, "parcelId")), Self.ratingDraft(body), by: me)
        return .created(.init(body: .json(try Self.rating(view, for: me.userID))))
    }

    func getPersonRatings(_ input: Operations.GetPersonRatings.Input) async throws -> Operations.GetPersonRatings.Output {
        let me = try await principal()
        let (summary, items) = try await ratings.profile(.person(UserID(rawValue: try Self.plainID(input.path.userId, "userId"))), for: me)
        return .ok(.init(body: .json(.init(count: summary.count, average: summary.average, items: try items.map { try Self.rating($0, for: me.userID) }))))
    }

    func getCarrierRatings(_ input: Operations.GetCarrierRatings.Input) async throws -> Operations.GetCarrierRatings.Output {
        let me = try await principal()
        let (summary, items) = try await ratings.profile(.carrier(input.path.carrier), for: me)
        return .ok(.init(body: .json(.init(count: summary.count, average: summary.average, items: try items.map { try Self.rating($0, for: me.userID) }))))
    }

    func respondToRating(_ input: Operations.RespondToRating.Input) async throws -> Operations.RespondToRating.Output {
        let me = try await principal()
        guard case .json(let body) = input.body else { throw WaybillError.unsupportedBody }
        let view = try await ratings.respond(RatingID(rawValue: try Self.plainID(input.path.ratingId, "ratingId")), text: body.text, by: me)
        return .ok(.init(body: .json(try Self.rating(view, for: me.userID))))
    }

    static func ratingDraft(_ body: S.RatingInput) -> RatingDraft {
        RatingDraft(stars: body.stars, tags: body.tags ?? [], comment: body.comment, privateNote: body.privateNote)
    }

    static func rating(_ v: RatingView, for userID: UserID) throws -> S.Rating {
        let r = v.record
        guard let subjectKind = S.Rating.SubjectKindPayload(rawValue: r.subjectKind) else {
            throw WaybillError.inconsistent("rating subject kind \(r.subjectKind) has no S.Rating.SubjectKindPayload")
        }
        return S.Rating(
            id: try r.storedID.uuidString, subjectKind: subjectKind, subjectId: r.subjectID.uuidString,
            direction: try wire(r.direction), reviewerName: v.reviewerName, rateeId: r.rateeID?.uuidString,
            rateeName: v.rateeName, carrier: r.carrier, stars: r.stars, tags: r.tags, comment: r.comment,
            privateNote: v.showsPrivateNote ? r.privateNote : nil, status: try wire(r.status),
            mine: r.reviewerID == userID, createdAt: date(r.createdAt), windowClosesAt: date(r.windowClosesAt),
            publishedAt: r.publishedAt.map(date), response: r.response, respondedAt: r.respondedAt.map(date), mayAnswer: v.mayAnswer)
    }
}
