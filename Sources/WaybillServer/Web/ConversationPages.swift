import Foundation
import Vapor
import WaybillCore

extension WebRoutes {
    static let conversations = WebPath("/messages")
    static let openConversation = WebPath("/messages/open")
    static let chatSettings = WebPath("/messages/settings")
    static let conversation = WebPath<ConversationID>("/messages/:id") { [$0.uuidString] }
    /// An image message's photo (under `files/`, like an order's: no unread badge to compute).
    static let messageImage = WebPath<(ConversationID, MessageID)>("/messages/:id/files/:message") { [$0.0.uuidString, $0.1.uuidString] }
    static let messageAction = WebPath<(ConversationID, MessageID, String)>("/messages/:id/:message/:action") {
        [$0.0.uuidString, $0.1.uuidString, $0.2]
    }
}

/// Conversations in the web app: the list with unread counts, one conversation (its messages
/// updating live, a form to write, one's own recent messages editable, others' reportable), and the
/// "Messages" button of a delivery's page. The service is `Conversations`; the rules `ConversationPolicy`.
struct ConversationPages {
    func register(_ routes: any RoutesBuilder) {
        routes.get(WebRoutes.conversations, use: list)
        routes.post(WebRoutes.openConversation, use: open)
        routes.post(WebRoutes.chatSettings, use: settings)
        routes.get(WebRoutes.conversation, use: show)
        routes.post(WebRoutes.conversation, use: send)
        routes.post(WebRoutes.messageAction, use: act)
        routes.get(WebRoutes.messageImage, use: image)
    }

    func image(_ req: Request) async throws -> Response {
        let (_, me) = try WebAuth.require(req)
        let (bytes, type) = try await Conversations(request: req).image(try WebRoutes.id(req), message: try WebRoutes.id(req, "message"), for: me)
        var headers = HTTPHeaders()
        headers.replaceOrAdd(name: .contentType, value: type)
        headers.replaceOrAdd(name: .cacheControl, value: "private, max-age=3600")
        headers.replaceOrAdd(name: "Content-Security-Policy", value: "default-src 'none'")
        return Response(status: .ok, headers: headers, body: .init(data: Data(bytes)))
    }

    /// The writing form: its text, its id for retries, and a photo when one is chosen.
    struct ChatForm: Content {
        var text: String?
        var clientMessageId: String?
        var photo: File?
    }

    func list(_ req: Request) async throws -> Response {
        let (ctx, me) = try WebAuth.require(req)
        let chats = Conversations(request: req)
        let (items, _) = try await chats.list(for: me)
        return try ConversationListPage(items: items, me: me.userID, previews: try await chats.previews(for: me),
                                    saved: req.query[String.self, at: "saved"] != nil).response(ctx)
    }

    func settings(_ req: Request) async throws -> Response {
        let (_, me) = try WebAuth.require(req)
        try await Conversations(request: req).setPreviews(try AccountPages.form(req)["previews"] == "on", by: me)
        return req.redirect(to: WebRoutes.conversations(query: "saved=1"), redirectType: .normal)
    }

    /// From a delivery's (or a request's) page: its conversation, made on first use.
    func open(_ req: Request) async throws -> Response {
        let (_, me) = try WebAuth.require(req)
        let form = try AccountPages.form(req)
        guard let raw = form["id"], let uuid = UUID(uuidString: raw),
              let subject = ConversationSubject(kind: form["kind"] ?? "", id: uuid, by: me.userID) else { throw WaybillError.notFound }
        let view = try await Conversations(request: req).open(subject, for: me)
        return req.redirect(to: WebRoutes.conversation(view.id), redirectType: .normal)
    }

    func show(_ req: Request) async throws -> Response {
        let (ctx, me) = try WebAuth.require(req)
        return try await page(req, ctx, me, id: try WebRoutes.id(req)).response(ctx)
    }

    /// The conversation with its newest messages, marked read up to the last one shown (the person
    /// is looking at them; a live refresh marks again).
    func page(_ req: Request, _ ctx: WebContext, _ me: Principal, id: ConversationID) async throws -> ConversationPage {
        let chats = Conversations(request: req)
        let (access, messages) = try await chats.messages(id, after: nil, before: nil, limit: 100, for: me)
        var view = try await chats.conversation(id, for: me)
        if let last = messages.last?.record.seq, last > view.lastReadSeq, view.participants.contains(where: { $0.user.id == me.userID }) {
            view = try await chats.mark(id, delivered: last, read: last, by: me)
        }
        var page = ConversationPage(view: view, messages: messages, me: me.userID, now: UnixTime.nowMillis)
        page.reported = req.query[String.self, at: "reported"] != nil
        _ = access
        return page
    }

    func send(_ req: Request) async throws -> Response {
        let (ctx, me) = try WebAuth.require(req)
        let id: ConversationID = try WebRoutes.id(req)
        let form = (try? req.content.decode(ChatForm.self)) ?? ChatForm()
        let draft = MessageDraft(text: form.text ?? "", clientMessageId: form.clientMessageId ?? "")
        let photo = form.photo.flatMap { $0.data.readableBytes > 0 ? Orders.Upload(bytes: Array($0.data.readableBytesView), field: "photo") : nil }
        do {
            _ = try await Conversations(request: req).send(id, draft, image: photo, by: me)
            return req.redirect(to: WebRoutes.conversation(id) + "#latest", redirectType: .normal)
        } catch let error as WaybillError where error.status != .notFound && error.status != .forbidden {
            var page = try await page(req, ctx, me, id: id)
            page.error = error.fields?["text"].map { _ in ctx.message(error) } ?? ctx.message(error)
            page.draft = draft.text
            page.status = error.status
            return try page.response(ctx)
        }
    }

    /// Edit, delete or report one message.
    func act(_ req: Request) async throws -> Response {
        let (_, me) = try WebAuth.require(req)
        let id: ConversationID = try WebRoutes.id(req)
        let message: MessageID = try WebRoutes.id(req, "message")
        let form = try AccountPages.form(req)
        let chats = Conversations(request: req)
        switch req.parameters.get("action") {
        case "edit": _ = try await chats.edit(id, message: message, text: form["text"] ?? "", by: me)
        case "delete": _ = try await chats.delete(id, message: message, by: me)
        case "report":
            guard let reason = ReportReason(rawValue: form["reason"] ?? "") else { throw WaybillError.validation("reason", "invalid") }
            _ = try await chats.report(message: message, person: nil, in: id, reason: reason, note: form["note"], by: me)
            return req.redirect(to: WebRoutes.conversation(id, query: "reported=1"), redirectType: .normal)
        default: throw WaybillError.notFound
        }
        return req.redirect(to: WebRoutes.conversation(id) + "#latest", redirectType: .normal)
    }

    /// The "Messages" button of a delivery's page, for whoever takes part in its conversation.
    static func button(_ ctx: WebContext, subject: ConversationSubject) -> String {
        """
        <form method="post" action="\(WebRoutes.openConversation())" class="inline"><input type="hidden" name="_csrf" value="\(h(ctx.csrf))">
        <input type="hidden" name="kind" value="\(subject.kind)"><input type="hidden" name="id" value="\(subject.id.uuidString)">
        <button type="submit" class="secondary" id="open-conversation">\(h(ctx.t(.messageTheParties)))</button></form>
        """
    }

    /// A button opening the conversation about a counter booking (the customer's "Write to the
    /// counter", the desk's "Write to the customer").
    static func bookingButton(_ ctx: WebContext, booking: SlotBookingID, label: Text) -> String {
        """
        <form method="post" action="\(WebRoutes.openConversation())" class="inline"><input type="hidden" name="_csrf" value="\(h(ctx.csrf))">
        <input type="hidden" name="kind" value="booking"><input type="hidden" name="id" value="\(booking.uuidString)">
        <button type="submit" class="link" data-booking-conversation="\(booking.uuidString)">\(h(ctx.t(label)))</button></form>
        """
    }

    /// "Write to … privately": opens the caller's direct conversation with `person` (the server
    /// answers 404 unless they share a shipment or a parcel).
    static func directButton(_ ctx: WebContext, to person: UserID, name: String) -> String {
        """
        <form method="post" action="\(WebRoutes.openConversation())" class="inline"><input type="hidden" name="_csrf" value="\(h(ctx.csrf))">
        <input type="hidden" name="kind" value="direct"><input type="hidden" name="id" value="\(person.uuidString)">
        <button type="submit" class="secondary" data-direct="\(person.uuidString)">\(h(ctx.t(.writePrivately, name)))</button></form>
        """
    }
}

extension ConversationView {
    /// Its title: the delivery's reference, that it is a traveller request, or whom it is with.
    func title(_ ctx: WebContext, me: UserID) -> String {
        if case .direct = access.subject { return ctx.t(.conversationWith, others(of: me)) }
        return access.reference.map { ctx.t(.conversationAbout, $0) } ?? ctx.t(.conversationRequest)
    }

    /// The others' first names.
    func others(of me: UserID) -> String {
        participants.filter { $0.user.id != me }.map(\.user.firstName).joined(separator: ", ")
    }
}

struct ConversationListPage: PageView {
    var items: [ConversationView]
    var me: UserID
    var previews: Bool
    var saved = false

    func page(_ ctx: WebContext) -> WebPage {
        let rows = items.map { item -> String in
            let last = item.last.map { message -> String in
                if message.deletedAt != nil { return ctx.t(.messageDeleted) }
                if message.hiddenAt != nil { return ctx.t(.messageHidden) }
                if message.kind == .system { return ctx.t(.statusMessage, OrderStatus(rawValue: message.body).map { ctx.status($0) } ?? message.body) }
                if message.kind == .image && message.body.isEmpty { return ctx.t(.photoMessage) }
                let text = item.access.masks && message.kind == .text ? ContactMasking.masked(message.body) : message.body
                return String(text.prefix(80))
            } ?? ctx.t(.noMessagesYet)
            let badge = item.unread > 0 ? " <span class=\"badge\" data-conversation-unread>\(h(ctx.t(.unreadMessages, String(item.unread))))</span>" : ""
            return """
                <li class="conversation\(item.unread > 0 ? " unread" : "")"><a href="\(WebRoutes.conversation(item.id))"><strong>\(h(item.title(ctx, me: me)))</strong>\(badge)</a>
                <br><span class="hint">\(h(ctx.t(.withPeople, item.others(of: me))))\(item.record.lastMessageAt.map { " · " + ctx.time($0) } ?? "")</span>
                <br>\(h(last))</li>
                """
        }.joined()
        let settings = """
            <form method="post" action="\(WebRoutes.chatSettings())" class="stack" id="chat-settings"><input type="hidden" name="_csrf" value="\(h(ctx.csrf))">
            <p><label><input type="checkbox" name="previews"\(previews ? " checked" : "")> \(h(ctx.t(.messagePreviews)))</label></p>
            <button type="submit" class="secondary">\(h(ctx.t(.savePreviews)))</button></form>
            """
        return WebPage(title: ctx.t(.messages), body: """
            <h1>\(h(ctx.t(.messages)))</h1>
            \(saved ? "<div class=\"alert ok\" role=\"status\">\(h(ctx.t(.saved)))</div>" : "")
            <p class="hint">\(h(ctx.t(.messagesIntro)))</p>
            <div id="conversation-list" data-live-refresh="unread">
            \(items.isEmpty ? "<p>\(h(ctx.t(.noConversations)))</p>" : "<ul class=\"conversations\">\(rows)</ul>")
            </div>
            \(settings)
            """)
    }
}

struct ConversationPage: PageView {
    var view: ConversationView
    var messages: [MessageView]
    var me: UserID
    var now: Int64
    var error: String?
    var draft = ""
    var reported = false
    var status: HTTPResponseStatus = .ok

    func page(_ ctx: WebContext) throws -> WebPage {
        let id = view.id
        let csrf = "<input type=\"hidden\" name=\"_csrf\" value=\"\(h(ctx.csrf))\">"
        // How far the others read: "Read" under my newest message they have all seen.
        let othersRead = view.participants.filter { $0.user.id != me }.map(\.readSeq).min() ?? 0
        let myLastRead = messages.last { $0.record.senderID == me && $0.record.seq <= othersRead }?.record.seq
        let items = try messages.map { message -> String in
            let r = message.record, messageID = try r.storedID
            let mine = r.senderID == me
            let time = "<time>\(ctx.time(r.createdAt))</time>"
            if r.kind == .system {
                let status = OrderStatus(rawValue: r.body).map { ctx.status($0) } ?? r.body
                return "<li class=\"message system\" id=\"m-\(r.seq)\">\(h(ctx.t(.statusMessage, status))) · \(time)</li>"
            }
            let who = mine ? ctx.t(.you) : (message.senderName ?? "")
            var body: String
            if r.deletedAt != nil {
                body = "<em>\(h(ctx.t(.messageDeleted)))</em>"
            } else if r.hiddenAt != nil {
                body = "<em>\(h(ctx.t(.messageHidden)))</em>"
            } else {
                body = message.text.isEmpty ? "" : "<p>\(h(message.text).replacingOccurrences(of: "\n", with: "<br>"))</p>"
                if r.imageName != nil {
                    body = "<p><img src=\"\(WebRoutes.messageImage((id, messageID)))\" width=\"\(r.imageWidth ?? 0)\" height=\"\(r.imageHeight ?? 0)\" alt=\"\(h(ctx.t(.photoFrom, who)))\" loading=\"lazy\" class=\"chat-photo\"></p>" + body
                }
                if let shared = r.sharedOrderID, let reference = message.sharedReference {
                    body += "<p class=\"card\"><a href=\"\(WebRoutes.order(shared))\">\(h(ctx.t(.sharedDelivery, reference))) · \(h(ctx.t(.openTracking)))</a></p>"
                }
            }
            var tools = ""
            if !view.closed, r.deletedAt == nil, r.hiddenAt == nil {
                let mayChange = ConversationPolicy.mayChange(messageBy: r.senderID, kind: r.kind, sentAt: r.createdAt, deleted: false,
                                                             by: me, now: now, closed: view.closed) == .allowed
                if mayChange {
                    tools = """
                        <details><summary>\(h(ctx.t(.editMessage)))</summary>
                        <form method="post" action="\(WebRoutes.messageAction((id, messageID, "edit")))" class="stack">\(csrf)
                        <textarea id="edit-\(r.seq)" name="text" rows="2" maxlength="\(MessageDraft.maxLength)" aria-label="\(h(ctx.t(.editMessage)))">\(h(r.body))</textarea>
                        <button type="submit" class="secondary">\(h(ctx.t(.saveMessage)))</button></form>
                        <form method="post" action="\(WebRoutes.messageAction((id, messageID, "delete")))">\(csrf)
                        <button type="submit" class="danger">\(h(ctx.t(.deleteMessage)))</button></form></details>
                        """
                } else if !mine, r.senderID != nil {
                    let reasons = ReportReason.allCases.map { "<option value=\"\($0.rawValue)\">\(h(ctx.t(.reason($0))))</option>" }.joined()
                    tools = """
                        <details><summary>\(h(ctx.t(.reportMessage)))</summary>
                        <form method="post" action="\(WebRoutes.messageAction((id, messageID, "report")))" class="stack">\(csrf)
                        <div class="field"><label for="report-\(r.seq)">\(h(ctx.t(.reportReason)))</label><select id="report-\(r.seq)" name="reason">\(reasons)</select></div>
                        <div class="field"><label for="report-note-\(r.seq)">\(h(ctx.t(.note)))</label><input id="report-note-\(r.seq)" name="note" maxlength="2000"></div>
                        <button type="submit" class="danger">\(h(ctx.t(.reportMessage)))</button></form></details>
                        """
                }
            }
            let read = r.seq == myLastRead ? " · <span class=\"read-marker\">\(h(ctx.t(.readBy)))</span>" : ""
            return """
                <li class="message\(mine ? " mine" : "")" id="m-\(r.seq)" data-seq="\(r.seq)"><span class="who">\(h(who))</span> · \(time)\(r.editedAt != nil && r.deletedAt == nil ? " · " + h(ctx.t(.edited)) : "")\(read)
                \(body)\(tools)</li>
                """
        }.joined()
        var notes = ""
        if view.closed { notes += "<p class=\"alert info\" role=\"note\">\(h(ctx.t(view.access.linked ? .conversationClosedNote : .directClosedNote)))</p>" }
        if view.access.masks { notes += "<p class=\"alert info\" role=\"note\">\(h(ctx.t(.conversationMaskedNote)))</p>" }
        if ConversationPolicy.isObserver(view.access.roles), !view.participants.contains(where: { $0.user.id == me }) {
            notes += "<p class=\"hint\">\(h(ctx.t(.observerNote)))</p>"
        }
        if reported { notes += "<div class=\"alert ok\" role=\"status\">\(h(ctx.t(.reportSent)))</div>" }
        let people = view.participants.map { "\(h($0.user.id == me ? ctx.t(.you) : $0.user.firstName)) (\(h(ctx.t(.role($0.role)))))" }.joined(separator: ", ")
        let subjectLink = try view.access.order.map { "<p><a href=\"\(WebRoutes.order(try $0.storedID))\">\(h(ctx.t(.openTracking)))</a></p>" } ?? ""
        // A party may write to another party privately (not in a direct conversation already, and not
        // while contact details are masked: the pair would not be linked yet).
        var direct = ""
        if view.access.parties[me] != nil, !view.access.masks, !view.closed {
            if case .direct = view.access.subject {} else {
                direct = view.participants.compactMap { p -> String? in
                    guard let user = p.user.id, user != me, view.access.parties[user] != nil else { return nil }
                    return ConversationPages.directButton(ctx, to: user, name: p.user.firstName)
                }.joined(separator: " ")
            }
        }
        if !direct.isEmpty { direct = "<div class=\"direct-links\">\(direct)</div>" }
        let form = view.closed ? "" : """
            <form method="post" action="\(WebRoutes.conversation(id))" class="stack chat-form" id="chat-form" enctype="multipart/form-data">\(csrf)
            <input type="hidden" name="clientMessageId" value="\(UUID().uuidString)">
            \(error.map { "<div class=\"alert error\" role=\"alert\">\(h($0))</div>" } ?? "")
            <div class="field"><label for="chat-text">\(h(ctx.t(.writeMessage)))</label>
            <textarea id="chat-text" name="text" rows="3" maxlength="\(MessageDraft.maxLength)">\(h(draft))</textarea></div>
            <div class="field"><label for="chat-photo">\(h(ctx.t(.addPhoto)))</label>
            <input id="chat-photo" name="photo" type="file" accept="image/jpeg,image/png" capture="environment"></div>
            <button type="submit" class="primary" id="chat-send">\(h(ctx.t(.send)))</button></form>
            """
        let title = view.title(ctx, me: me)
        return WebPage(title: title, body: """
            <h1>\(h(title))</h1>
            <p class="hint">\(h(ctx.t(.withPeople, people)))</p>
            \(subjectLink)
            \(direct)
            \(notes)
            <ol class="messages" id="chat-messages" data-live-refresh="message marker" aria-live="polite" aria-relevant="additions">
            \(items.isEmpty ? "<li class=\"hint\">\(h(ctx.t(.noMessagesYet)))</li>" : items)
            </ol>
            <a id="latest"></a>
            \(form)
            """, status: status, liveTopics: ["conversation:\(id.uuidString)"])
    }
}
