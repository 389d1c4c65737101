import Foundation
import Testing
import Vapor
import WaybillClient
import WaybillCore
@testable import WaybillServer

/// Collects a conversation's live events.
actor ChatRecorder {
    private(set) var events: [ConversationEvent] = []
    private var task: Task<Void, Never>?

    func start(_ stream: AsyncThrowingStream<ConversationEvent, any Error>) {
        task = Task {
            do { for try await event in stream { self.append(event) } } catch {}
            self.wake()
        }
    }

    /// Who waits for the next event (`wait(for:)`), woken by it.
    private var waiters: [CheckedContinuation<Void, Never>] = []

    private func append(_ event: ConversationEvent) {
        events.append(event)
        wake()
    }
    private func wake() {
        let woken = waiters
        waiters = []
        for waiter in woken { waiter.resume() }
    }

    func stop() { task?.cancel() }

    /// The text of each message by sequence number (the newest version of each).
    var texts: [Int64: String] {
        var result: [Int64: String] = [:]
        for case .message(let m) in events { result[m.seq] = m.text }
        return result
    }

    var connections: Int { events.filter { $0 == .connected }.count }

    /// Waits until `condition` holds, looking again after each event (the test's time limit bounds
    /// the wait: its cancellation ends it).
    func wait(for what: String, _ condition: @Sendable (ChatRecorder) async -> Bool) async throws {
        while !(await condition(self)) {
            try Task.checkCancellation()
            await withTaskCancellationHandler {
                await withCheckedContinuation { waiters.append($0) }
            } onCancel: {
                Task { await self.wake() }
            }
        }
    }
}

@Suite("The Swift SDK speaks conversations: write, read, follow live, resume after the server went away")
struct SDKConversationTests {
    @Test("Through the SDK the customer writes to the driver; the driver's stream gets it, and after a restart the messages sent meanwhile, once each",
          arguments: TestDatabase.available)
    func chatThroughSDK(db: TestDatabase) async throws {
        try await TestServer.run(db) { server in
            try await server.serving { port in
                let cast = try await server.cast()
                let order = try #require(OrderID(uuidString: try await server.placeOrder(cast.customer.access)))
                try await server.advance(order.uuidString, to: .accepted, cast: cast)
                let ada = server.sdk(port: port), luca = server.sdk(port: port)
                try await ada.signIn(email: "ada@example.com", password: TestServer.password)
                try await luca.signIn(email: "luca@courier.example", password: TestServer.password)

                let conversation = try await ada.openConversation(shipment: order)
                let id = try #require(ConversationID(uuidString: conversation.id))
                #expect(conversation.roles == [.sender] && conversation.unread == 0)
                // The two of them, privately: one conversation whoever opens it.
                let private_ = try await ada.openConversation(with: try #require(UserID(uuidString: cast.driver.userID)))
                #expect(private_.subject.kind == .direct && private_.roles == [.peer] && private_.id != conversation.id)
                #expect(try await luca.openConversation(with: try #require(UserID(uuidString: cast.customer.userID))).id == private_.id)
                let chat = ChatRecorder()
                await chat.start(luca.conversation(events: id, options: LiveOptions(initialBackoff: .milliseconds(50), maxBackoff: .milliseconds(500))))
                try await chat.wait(for: "connected") { await $0.connections == 1 }

                let first = try await ada.send("Ring twice", in: id, clientMessageId: "ada-1")
                #expect(first.seq == 1 && first.mine)
                #expect(try await ada.send("Ring twice", in: id, clientMessageId: "ada-1").id == first.id, "a retry is the same message")
                try await chat.wait(for: "the first message") { await $0.texts[1] == "Ring twice" }
                #expect(try await luca.conversations().totalUnread == 1)
                #expect(try await luca.markConversation(id, read: 1).unread == 0)

                // The server goes away; two messages are written meanwhile (straight to its services).
                await server.stopHTTP()
                _ = try await server.send(.POST, "/conversations/\(id.uuidString)/messages", json: ["text": "Hello?", "clientMessageId": "ada-2"], token: cast.customer.access)
                _ = try await server.send(.POST, "/conversations/\(id.uuidString)/messages", json: ["text": "Gate 4", "clientMessageId": "ada-3"], token: cast.customer.access)
                try await server.startHTTP(port: port)
                try await chat.wait(for: "what was sent while away") { await $0.texts.count == 3 }
                let delivered = await chat.events.compactMap { if case .message(let m) = $0 { m.seq } else { nil } }
                #expect(delivered == [1, 2, 3], "each once, in order: \(delivered)")

                let edited = try await ada.edit(try #require(MessageID(uuidString: first.id)), in: id, text: "Ring three times")
                #expect(edited.editedAt != nil)
                try await chat.wait(for: "the edit") { await $0.texts[1] == "Ring three times" }
                try await ada.setMessagePreviews(true)
                #expect(try await ada.messagePreviews())
                let photo = try await ada.sendPhoto(Data(SampleImages.photoJPEG), caption: "The door", in: id, clientMessageId: "ada-photo")
                #expect(photo.kind == .image && photo.image != nil)
                let bytes = try await luca.photo(of: try #require(MessageID(uuidString: photo.id)), in: id)
                #expect(bytes.count > 100)
                try await chat.wait(for: "the photo") { await $0.texts[photo.seq] == "The door" }
                let page = try await luca.messages(in: id, after: 1)
                #expect(page.map(\.text) == ["Hello?", "Gate 4", "The door"])

                // Delivered: they rate each other through the SDK; Ada's waits for Luca's.
                try await server.advance(order.uuidString, to: .delivered, cast: cast, from: .accepted)
                let open = try await ada.ratings(ofShipment: order)
                #expect(open.window == .open && open.open.map(\.rateeName) == ["Luca"])
                let mine = try await ada.rate(shipment: order, RatingDraft(stars: 5, tags: ["on_time"], comment: "Quick", privateNote: "Thanks"))
                #expect(mine.status == .pending && mine.privateNote == "Thanks")
                let theirs = try await luca.rate(shipment: order, RatingDraft(stars: 4))
                #expect(theirs.status == .published)
                let answered = try await luca.respond(toRating: try #require(RatingID(uuidString: mine.id)), "Thank you")
                #expect(answered.response == "Thank you")
                let profile = try await ada.ratings(ofPerson: try #require(UserID(uuidString: cast.driver.userID)))
                #expect(profile.count == 1 && profile.average == nil, "below the minimum count")
                await chat.stop()
            }
        }
    }
}
