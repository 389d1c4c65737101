import Foundation
import Testing
@testable import WaybillCore

@Suite("Conversations: who takes part, what a message may be, when it closes, what is masked")
struct ConversationRulesTests {
    @Test("A shipment's parties take part in their own capacity; staff read it; nobody else, and a receiver not before it is theirs to see")
    func shipmentRoles() {
        #expect(ConversationPolicy.roles(shipment: [.owner], status: .pending) == [.sender])
        #expect(ConversationPolicy.roles(shipment: [.assignee], status: .accepted) == [.carrier])
        #expect(ConversationPolicy.roles(shipment: [.manager, .assignee], status: .inTransit) == [.staff, .carrier])
        #expect(ConversationPolicy.roles(shipment: [.receiver], status: .inTransit) == [.receiver])
        #expect(ConversationPolicy.roles(shipment: [.receiver], status: .awaitingPayment) == [], "an unpaid checkout is not yet the receiver's")
        #expect(ConversationPolicy.roles(shipment: [], status: .pending) == [])
        #expect(ConversationPolicy.isObserver([.staff]) && !ConversationPolicy.isObserver([.staff, .carrier]))
        #expect(ConversationPolicy.roles(request: [.sender]) == [.sender] && ConversationPolicy.roles(request: [.traveller]) == [.carrier])
        #expect(ConversationPolicy.roles(request: []) == [])
    }

    @Test("Two people have one direct conversation whoever opens it, and nobody has one with themselves; only the two take part")
    func directPairs() throws {
        let ada = UserID(uuidString: "0A000000-0000-4000-8000-000000000001")!, bea = UserID(uuidString: "BE000000-0000-4000-8000-000000000002")!
        let carl = UserID(uuidString: "CA000000-0000-4000-8000-000000000003")!
        let pair = try #require(DirectPair(ada, bea))
        #expect(DirectPair(bea, ada) == pair && DirectPair(bea, ada)?.id == pair.id, "the same pair, the same subject id")
        #expect(DirectPair(ada, ada) == nil)
        #expect(DirectPair(ada, carl)?.id != pair.id && DirectPair(bea, carl)?.id != pair.id)
        #expect(pair.id != ada.rawValue && pair.id != bea.rawValue)
        #expect(pair.other(than: ada) == bea && pair.other(than: bea) == ada && pair.other(than: carl) == nil)
        #expect(ConversationSubject(kind: "direct", id: bea.rawValue, by: ada) == .direct(pair))
        #expect(ConversationSubject(kind: "direct", id: ada.rawValue, by: ada) == nil)
        #expect(ConversationSubject.direct(pair).id(for: ada) == bea.rawValue && ConversationSubject.direct(pair).id(for: bea) == ada.rawValue)
        #expect(ConversationPolicy.roles(direct: pair, caller: ada) == [.peer] && ConversationPolicy.roles(direct: pair, caller: carl) == [])
    }

    @Test("Naming someone as an order's receiver links them only once the parcel is picked up; a cancelled order links nobody; customer and driver are linked while it is not cancelled")
    func acquaintance() throws {
        let ada = Caller(id: UserID.random(), role: .customer, verifiedEmail: "ada@example.com")
        let bea = Caller(id: UserID.random(), role: .customer, verifiedEmail: "bea@example.com")
        let luca = Caller(id: UserID.random(), role: .driver)
        let parties = OrderParties(customerID: ada.id, driverID: luca.id, recipientEmail: "Bea@Example.com")
        for status in OrderStatus.allCases {
            let pickedUp = status == .inTransit || status == .delivered
            #expect(Acquaintance.shipmentLinks(parties, status: status, ada, bea) == pickedUp, "\(status)")
            #expect(Acquaintance.shipmentLinks(parties, status: status, bea, luca) == pickedUp, "\(status)")
            #expect(Acquaintance.shipmentLinks(parties, status: status, ada, luca) == (status != .cancelled), "\(status)")
            #expect(ConversationPolicy.linksDirectly(shipment: parties, status: status, masked: false, bea, ada) == pickedUp, "\(status)")
        }
        #expect(!Acquaintance.shipmentLinks(parties, status: .inTransit, ada, ada))
        // Sending to oneself is being the customer: it links as the customer does.
        let toSelf = OrderParties(customerID: ada.id, driverID: luca.id, recipientEmail: "ada@example.com")
        #expect(Acquaintance.shipmentLinks(toSelf, status: .assigned, ada, luca))
    }

    @Test("People may write directly while they share a shipment (as its customer, driver or receiver, each able to see it; a traveller's parcel once paid) or a parcel one shared with the other; staff and strangers may not")
    func directLinks() throws {
        let ada = Caller(id: UserID.random(), role: .customer, verifiedEmail: "ada@example.com")
        let bea = Caller(id: UserID.random(), role: .customer, verifiedEmail: "bea@example.com")
        let luca = Caller(id: UserID.random(), role: .driver)
        let boss = Caller(id: UserID.random(), role: .manager)
        let parties = OrderParties(customerID: ada.id, driverID: luca.id, recipientEmail: "bea@example.com")
        #expect(ConversationPolicy.linksDirectly(shipment: parties, status: .inTransit, masked: false, ada, luca))
        #expect(ConversationPolicy.linksDirectly(shipment: parties, status: .inTransit, masked: false, bea, ada))
        #expect(ConversationPolicy.linksDirectly(shipment: parties, status: .delivered, masked: false, luca, bea))
        #expect(!ConversationPolicy.linksDirectly(shipment: parties, status: .awaitingPayment, masked: false, bea, ada), "not yet the receiver's to see")
        #expect(!ConversationPolicy.linksDirectly(shipment: parties, status: .inTransit, masked: true, ada, luca), "a traveller's parcel not paid yet")
        #expect(!ConversationPolicy.linksDirectly(shipment: parties, status: .inTransit, masked: false, boss, ada), "a dispatcher is not a party")
        #expect(!ConversationPolicy.linksDirectly(shipment: parties, status: .inTransit, masked: false, ada, ada))
        let stranger = Caller(id: UserID.random(), role: .customer, verifiedEmail: "carl@example.com")
        #expect(!ConversationPolicy.linksDirectly(shipment: parties, status: .inTransit, masked: false, ada, stranger))
        let pair = try #require(DirectPair(ada.id, bea.id))
        // A shared parcel: the person it is shared with opens the conversation; its owner cannot be first.
        #expect(ConversationPolicy.linksDirectly(parcelOwner: ada.id, sharedWith: [bea.id], pair, asking: bea.id, conversationOpened: false))
        #expect(!ConversationPolicy.linksDirectly(parcelOwner: ada.id, sharedWith: [bea.id], pair, asking: ada.id, conversationOpened: false))
        #expect(ConversationPolicy.linksDirectly(parcelOwner: ada.id, sharedWith: [bea.id], pair, asking: ada.id, conversationOpened: true))
        #expect(ConversationPolicy.linksDirectly(parcelOwner: bea.id, sharedWith: [ada.id], pair, asking: ada.id, conversationOpened: false))
        #expect(!ConversationPolicy.linksDirectly(parcelOwner: ada.id, sharedWith: [stranger.id], pair, asking: bea.id, conversationOpened: true))
        #expect(!ConversationPolicy.linksDirectly(parcelOwner: stranger.id, sharedWith: [ada.id, bea.id], pair, asking: ada.id, conversationOpened: true),
                "two friends of one owner are not linked")
        // No longer linked: read-only whatever the subject's end; retention counts from the last message.
        #expect(ConversationPolicy.isClosed(subjectEndedAt: nil, linked: false, now: 0, closeAfterDays: 14))
        #expect(!ConversationPolicy.isClosed(subjectEndedAt: nil, linked: true, now: 0, closeAfterDays: 14))
        #expect(ConversationPolicy.retainedFrom(.direct(pair), endedAt: nil, lastMessageAt: 5) == 5)
        #expect(ConversationPolicy.retainedFrom(.shipment(OrderID.random()), endedAt: 7, lastMessageAt: 9) == 7)
    }

    @Test("Only the author changes a message, for five minutes, while the conversation is open; never the server's own")
    func changeWindow() {
        let ada = UserID(UUID()), bob = UserID(UUID())
        let sent: Int64 = 1_000_000
        func decide(_ by: UserID, at now: Int64, kind: MessageKind = .text, deleted: Bool = false, closed: Bool = false, author: UserID? = nil) -> ConversationPolicy.Decision {
            ConversationPolicy.mayChange(messageBy: author ?? ada, kind: kind, sentAt: sent, deleted: deleted, by: by, now: now, closed: closed)
        }
        #expect(decide(ada, at: sent + 1000) == .allowed)
        #expect(decide(ada, at: sent + ConversationPolicy.editWindowMillis) == .allowed)
        #expect(decide(ada, at: sent + ConversationPolicy.editWindowMillis + 1) == .tooLate)
        #expect(decide(bob, at: sent + 1000) == .forbidden)
        #expect(decide(ada, at: sent + 1000, kind: .system) == .forbidden)
        #expect(decide(ada, at: sent + 1000, deleted: true) == .tooLate)
        #expect(decide(ada, at: sent + 1000, closed: true) == .closed)
        #expect(decide(ada, at: sent - 5000) == .allowed, "a clock set back counts as just sent")
        #expect(ConversationPolicy.mayChange(messageBy: ada, kind: .text, sentAt: .min, deleted: false, by: ada, now: .max, closed: false) == .tooLate,
                "times from outside never trap")
        #expect(ConversationPolicy.mayChange(messageBy: nil, kind: .system, sentAt: sent, deleted: false, by: ada, now: sent, closed: false) == .forbidden)
    }

    @Test("A conversation closes the configured number of days after its subject ends, not before, and never while it is going on")
    func closing() {
        let day: Int64 = 86_400_000
        let ended: Int64 = 10 * day
        #expect(!ConversationPolicy.isClosed(subjectEndedAt: nil, now: .max, closeAfterDays: 14))
        #expect(!ConversationPolicy.isClosed(subjectEndedAt: ended, now: ended + 14 * day - 1, closeAfterDays: 14))
        #expect(ConversationPolicy.isClosed(subjectEndedAt: ended, now: ended + 14 * day, closeAfterDays: 14))
        #expect(ConversationPolicy.isClosed(subjectEndedAt: ended, now: ended, closeAfterDays: 0))
        #expect(!ConversationPolicy.isClosed(subjectEndedAt: .max - 5, now: .max, closeAfterDays: 14), "no overflow")
        #expect(ConversationPolicy.endedAt(shipment: .delivered, updatedAt: 5) == 5 && ConversationPolicy.endedAt(shipment: .cancelled, updatedAt: 5) == 5)
        for status in OrderStatus.allCases where !status.isFinal { #expect(ConversationPolicy.endedAt(shipment: status, updatedAt: 5) == nil, "\(status)") }
        #expect(ConversationPolicy.endedAt(request: .requested, updatedAt: 5) == nil && ConversationPolicy.endedAt(request: .accepted, updatedAt: 5) == nil)
        for status in [TripRequestStatus.rejected, .expired, .cancelled, .lapsed] { #expect(ConversationPolicy.endedAt(request: status, updatedAt: 5) == 5) }
    }

    @Test("Contact details are masked until a traveller's parcel is paid")
    func masksUntilPaid() {
        for status in TripRequestStatus.allCases {
            #expect(ConversationPolicy.masksContacts(request: status, shipmentPaid: false), "\(status)")
        }
        #expect(!ConversationPolicy.masksContacts(request: .accepted, shipmentPaid: true))
    }

    @Test("Phone numbers and email addresses are masked, in the usual disguises; dates, prices, times and references stay",
          arguments: [
              ("Call +41 79 123 45 67", "Call •••"),
              ("Mon numéro : 06 12 34 56 78.", "Mon numéro : •••."),
              ("0041791234567 or 079/123.45.67", "••• or •••"),
              ("(079) 123 45 67", "(•••"),
              ("Write bob.smith+x@example.co.uk now", "Write ••• now"),
              ("bob at example dot com", "•••"),
              ("bob (at) example (dot) ch", "•••"),
              ("On 2026-11-26 at 14:30, CHF 1200, WB-7K3M9Q, 3005 Bern", "On 2026-11-26 at 14:30, CHF 1200, WB-7K3M9Q, 3005 Bern"),
              ("Code 4411", "Code 4411"),
              ("", ""),
          ])
    func masking(input: String, expected: String) {
        #expect(ContactMasking.masked(input) == expected)
    }

    @Test("Email addresses are masked plain, spelled out in English or French, bracketed or spaced out; the words around them stay",
          arguments: [
              ("ada@example.com", "•••"),
              ("Mail: ada.l_x%y+z@mail.example.ch, merci", "Mail: •••, merci"),
              ("two a@b.ch and c@d.fr", "two ••• and •••"),
              ("bob AT example DOT com", "•••"),
              ("bob [at] example [dot] org please", "••• please"),
              ("bob ( at ) example ( dot ) com", "•••"),
              ("bob   at\texample\n dot   com", "•••"),
              ("jean.dupont arobase gmail point com", "•••"),
              ("Écris à jean arobase orange point fr ce soir", "Écris à ••• ce soir"),
              ("bobatexampledotcom", "•••"),
              // Not addresses: no domain ending, a lone @, the words alone.
              ("meet at noon", "meet at noon"),
              ("a@b", "a@b"),
              ("@home at 5", "@home at 5"),
              ("the dot com bubble", "the dot com bubble"),
          ])
    func emailMasking(input: String, expected: String) {
        #expect(ContactMasking.masked(input) == expected)
    }

    /// The two expressions masking emails used before (security audit 2, finding 7), to compare with.
    static let formerEmailPatterns = [
        #"[A-Za-z0-9._%+\-]+@[A-Za-z0-9.\-]+\.[A-Za-z]{2,}"#,
        #"[A-Za-z0-9._%+\-]+\s*[\(\[]?\s*(?:at|AT|arobase)\s*[\)\]]?\s*[A-Za-z0-9\-]+\s*[\(\[]?\s*(?:dot|DOT|point)\s*[\)\]]?\s*[A-Za-z]{2,}"#,
    ]

    @Test("The linear scan masks exactly what the two former regular expressions masked, on thousands of short random texts")
    func emailMaskingAsBefore() {
        // Pieces that make and break addresses: keywords, their fragments, brackets, all kinds of spaces.
        let pieces = ["bob", "example", "com", "uk", "fr", "a", "t", "A", "T", "at", "AT", "dot", "DOT", "point", "arobase", "ar",
                      "po", "d", "o", "x", "1", "-", "_", ".", "%", "+", "@", "@", " ", "  ", " at ", " dot ", "(at)", "[dot]",
                      "(", ")", "[", "]", "\t", "\n", "\r", "\u{0B}", "\u{0C}", "\u{85}", "\u{A0}", "\u{2003}", "\u{2028}",
                      "é", "e\u{301}", "😀", "•"]
        var random = SplitMix64(seed: 7)
        var differences: [String] = []
        for _ in 0..<5_000 {
            let text = (0..<Int.random(in: 0...24, using: &random)).map { _ in pieces[Int.random(in: 0..<pieces.count, using: &random)] }.joined()
            var former = text
            for pattern in Self.formerEmailPatterns {
                former = former.replacingOccurrences(of: pattern, with: ContactMasking.mask, options: .regularExpression)
            }
            var work = 0
            if ContactMasking.maskEmails(text, work: &work) != former { differences.append(text) }
        }
        #expect(differences.isEmpty, "\(differences.prefix(5).map(\.debugDescription))")
    }

    @Test("Masking costs a bounded number of steps per character, whatever the text: a 4,000-letter word, a letter, 3,998 spaces and a letter, and other worst cases of the former expressions")
    func maskingWorkIsLinear() {
        let texts: [(String, String)] = [
            ("4,000 letters", String(repeating: "a", count: 4_000)),
            ("a letter, 3,998 spaces, a letter", "a" + String(repeating: " ", count: 3_998) + "b"),
            ("at at at…", String(repeating: "at", count: 2_000)),
            ("a@a@a@…", String(repeating: "a@", count: 2_000)),
            ("a@b.b.b.…", "a@" + String(repeating: "b.", count: 1_999)),
            ("x at x at…", String(repeating: "x at ", count: 800)),
            ("a at dot-dot-…", "a at " + String(repeating: "dot-", count: 999)),
            ("a at b dot a at b dot…", String(repeating: "a at b dot ", count: 363)),
            ("1 1 1…", String(repeating: "1 ", count: 2_000)),
            ("4,000 é", String(repeating: "é", count: 4_000)),
        ]
        for (name, text) in texts {
            var work = 0
            _ = ContactMasking.masked(text, work: &work)
            let length = text.unicodeScalars.count
            // About 10 steps a character (three run tables, the two scans, phones); the former
            // expressions took millions of steps on the first two.
            #expect(work > 0 && work <= 15 * length, "\(name): \(work) steps for \(length) characters")
        }
    }

    @Test("A message needs text or a shared shipment, at most 4,000 characters, no control characters, and an app id for retries")
    func drafts() {
        #expect(MessageDraft(text: "Hello", clientMessageId: "a-1").validate().isEmpty)
        #expect(MessageDraft(text: " \n ", clientMessageId: "a-1").validate()["text"] == "required")
        #expect(MessageDraft(text: "", clientMessageId: "a-1", sharedShipment: OrderID(UUID())).validate().isEmpty)
        #expect(MessageDraft(text: String(repeating: "é", count: 4000), clientMessageId: "a").validate().isEmpty)
        #expect(MessageDraft(text: String(repeating: "é", count: 4001), clientMessageId: "a").validate()["text"] == "too_long")
        #expect(MessageDraft(text: "a\u{0}b", clientMessageId: "a").validate()["text"] == "invalid_character")
        #expect(MessageDraft(text: "line\nnext\ttab", clientMessageId: "a").validate().isEmpty)
        #expect(MessageDraft(text: "x", clientMessageId: "").validate()["clientMessageId"] == "required")
        #expect(MessageDraft(text: "x", clientMessageId: String(repeating: "a", count: 65)).validate()["clientMessageId"] == "invalid")
        #expect(MessageDraft(text: "x", clientMessageId: "ünï").validate()["clientMessageId"] == "invalid")
        #expect(MessageDraft(text: "  hi\r\n", clientMessageId: "a").cleanText == "hi")
        #expect(Unread.count(lastSeq: 5, lastReadSeq: 2) == 3 && Unread.count(lastSeq: 5, lastReadSeq: 9) == 0 && Unread.count(lastSeq: 0, lastReadSeq: 0) == 0)
    }

    @Test("Ratings: each party rates the other once the shipment is delivered, for 14 days; the receiver rates who brought it; staff never rate")
    func ratingRules() {
        let ada = UserID(UUID()), luca = UserID(UUID()), bea = UserID(UUID())
        func directions(_ roles: Set<ShipmentRole>, _ me: UserID, carrier: UserID? = nil) -> [String] {
            RatingPolicy.directions(shipment: roles, caller: me, sender: ada, carrier: carrier ?? luca).map { "\($0.0.rawValue)>\($0.1 == ada ? "ada" : "luca")" }
        }
        #expect(directions([.sender], ada) == ["sender_to_carrier>luca"])
        #expect(directions([.carrier], luca) == ["carrier_to_sender>ada"])
        #expect(directions([.receiver], bea) == ["receiver_to_carrier>luca"])
        #expect(directions([.sender, .receiver], ada) == ["sender_to_carrier>luca"], "a sender who is also the receiver rates once")
        #expect(directions([.sender, .carrier], ada, carrier: ada).isEmpty, "nobody rates themself")
        #expect(RatingPolicy.directions(shipment: [.sender], caller: ada, sender: ada, carrier: nil).isEmpty, "nobody carried it")
        #expect(!RatingPolicy.ratesShipments([.manager]) && RatingPolicy.ratesShipments([.receiver]))

        let day: Int64 = 86_400_000
        #expect(RatingPolicy.window(completedAt: nil, now: 0) == .notYet)
        #expect(RatingPolicy.window(completedAt: 0, now: 14 * day - 1) == .open(closesAt: 14 * day))
        #expect(RatingPolicy.window(completedAt: 0, now: 14 * day) == .closed)
        #expect(RatingPolicy.window(completedAt: .max, now: 0) == .open(closesAt: .max), "no overflow")

        #expect(RatingDirection.senderToCarrier.counterpart == .carrierToSender && RatingDirection.receiverToCarrier.counterpart == nil)
        #expect(!RatingPolicy.publishesAtOnce(.senderToCarrier, counterpartIn: false) && RatingPolicy.publishesAtOnce(.senderToCarrier, counterpartIn: true))
        #expect(RatingPolicy.publishesAtOnce(.personToCarrierCompany, counterpartIn: false))

        #expect(RatingDraft(stars: 5, tags: ["on_time"]).validate(direction: .senderToCarrier).isEmpty)
        #expect(RatingDraft(stars: 6).validate(direction: .senderToCarrier)["stars"] == "out_of_range")
        #expect(RatingDraft(stars: 3, tags: ["well_packed"]).validate(direction: .senderToCarrier)["tags"] == "unknown:well_packed")
        #expect(RatingDraft(stars: 3, tags: ["late", "late"]).validate(direction: .senderToCarrier)["tags"] == "repeated")
        #expect(RatingDraft(stars: 3, comment: String(repeating: "x", count: 1001)).validate(direction: .senderToCarrier)["comment"] == "too_long")
        #expect(RatingDraft.clean("  \n ") == nil && RatingDraft.clean(" ok ") == "ok")

        #expect(RatingSummary(count: 2, starsTotal: 9, minimumCount: 3).average == nil)
        #expect(RatingSummary(count: 3, starsTotal: 14, minimumCount: 3).average == 4.7)
        #expect(RatingSummary(count: 0, starsTotal: 0, minimumCount: 0).average == nil)
    }
}
