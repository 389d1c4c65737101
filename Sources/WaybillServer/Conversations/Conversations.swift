import Fluent
import Foundation
import SQLKit
import Vapor
import WaybillCore

/// One conversation: its subject and how far its numbering went.
final class ConversationRecord: Model, @unchecked Sendable {
    static let schema = "conversations"

    @ID(custom: "id", generatedBy: .user) var id: ConversationID?
    @Field(key: "subject_kind") var subjectKind: String
    @Field(key: "subject_id") var subjectID: UUID
    /// The `seq` of its newest message (0: none yet).
    @Field(key: "last_seq") var lastSeq: Int64
    @OptionalField(key: "last_message_at") var lastMessageAt: Int64?
    @Field(key: "created_at") var createdAt: Int64
    /// A direct conversation's two people (`DirectPair`: the subject id is derived from them).
    @OptionalField(key: "peer_low") var peerLow: UserID?
    @OptionalField(key: "peer_high") var peerHigh: UserID?

    var properties: [any AnyProperty] { [$id, $subjectKind, $subjectID, $lastSeq, $lastMessageAt, $createdAt, $peerLow, $peerHigh] }

    init() {}

    var subject: ConversationSubject? {
        if subjectKind == "direct" {
            guard let low = peerLow, let high = peerHigh, let pair = DirectPair(low, high), pair.id == subjectID else { return nil }
            return .direct(pair)
        }
        return ConversationSubject(kind: subjectKind, id: subjectID)
    }
}

/// One message. Never removed while its conversation is kept: a deletion empties it (a tombstone).
final class MessageRecord: Model, @unchecked Sendable {
    static let schema = "messages"

    @ID(custom: "id", generatedBy: .user) var id: MessageID?
    @Field(key: "conversation_id") var conversationID: ConversationID
    @Field(key: "seq") var seq: Int64
    /// Nil for the server's own messages (status changes).
    @OptionalField(key: "sender_id") var senderID: UserID?
    @Field(key: "kind") var kind: MessageKind
    @Field(key: "body") var body: String
    @OptionalField(key: "shared_order_id") var sharedOrderID: OrderID?
    /// An image message's file (`FileStore`), its type and size.
    @OptionalField(key: "image_name") var imageName: String?
    @OptionalField(key: "image_type") var imageType: String?
    @OptionalField(key: "image_width") var imageWidth: Int?
    @OptionalField(key: "image_height") var imageHeight: Int?
    @OptionalField(key: "client_message_id") var clientMessageID: String?
    @Field(key: "created_at") var createdAt: Int64
    @OptionalField(key: "edited_at") var editedAt: Int64?
    @OptionalField(key: "deleted_at") var deletedAt: Int64?
    /// Hidden by the administration (033), with the reason its author is shown; nil when shown.
    @OptionalField(key: "hidden_at") var hiddenAt: Int64?
    @OptionalField(key: "hidden_reason") var hiddenReason: String?

    var properties: [any AnyProperty] {
        [$id, $conversationID, $seq, $senderID, $kind, $body, $sharedOrderID, $imageName, $imageType, $imageWidth, $imageHeight, $clientMessageID,
         $createdAt, $editedAt, $deletedAt, $hiddenAt, $hiddenReason]
    }

    init() {}
}

/// A report of a message or a person, waiting in the moderation queue.
final class ReportRecord: Model, @unchecked Sendable {
    static let schema = "reports"

    @ID(custom: "id", generatedBy: .user) var id: ReportID?
    @Field(key: "reporter_id") var reporterID: UserID
    @Field(key: "reported_user_id") var reportedUserID: UserID
    @OptionalField(key: "message_id") var messageID: MessageID?
    @OptionalField(key: "conversation_id") var conversationID: ConversationID?
    @Field(key: "reason") var reason: ReportReason
    @OptionalField(key: "note") var note: String?
    @Field(key: "status") var status: ReportStatus
    @Field(key: "created_at") var createdAt: Int64
    @OptionalField(key: "reviewed_by") var reviewedBy: UserID?
    @OptionalField(key: "reviewed_at") var reviewedAt: Int64?
    /// A reported review (033); nil for a message or a person.
    @OptionalField(key: "rating_id") var ratingID: RatingID?
    /// What the moderator noted with their decision (033).
    @OptionalField(key: "decision_note") var decisionNote: String?

    var properties: [any AnyProperty] {
        [$id, $reporterID, $reportedUserID, $messageID, $conversationID, $reason, $note, $status, $createdAt, $reviewedBy, $reviewedAt,
         $ratingID, $decisionNote]
    }

    init() {}
}

extension ReportRecord {
    /// Files this report (its subject already set) for `reporter`: the note trimmed and at most
    /// 2,000 characters, the reporter's daily budget of reports taken, then stored as pending.
    func file(by reporter: UserID, reason: ReportReason, note: String?, services: WaybillServices, on db: any Database) async throws -> ReportRecord {
        let cleanNote = note?.trimmingCharacters(in: .whitespacesAndNewlines)
        if let cleanNote, cleanNote.count > 2000 { throw WaybillError.validation("note", "too_long") }
        if let wait = services.reportLimiter.take(reporter.uuidString) { throw WaybillError.tooManyRequests(retryAfter: wait) }
        id = .generated()
        reporterID = reporter
        self.reason = reason
        self.note = cleanNote?.isEmpty == false ? cleanNote : nil
        status = .pending
        createdAt = UnixTime.nowMillis
        try await db.writeTransaction(services) { db in try await self.create(on: db) }
        return self
    }
}

/// What one person may do with one conversation's subject, worked out from the subject each time
/// (`ConversationPolicy`): nothing about rights is read from the members table.
struct ConversationAccess: Sendable {
    /// The subject as conversations are kept: a traveller's shipment talks in its request's conversation.
    var subject: ConversationSubject
    var roles: Set<ConversationRole>
    /// When the subject ended (delivered, cancelled, declined…), if it did.
    var endedAt: Int64?
    /// Phone numbers and emails are masked (a traveller request not yet paid).
    var masks: Bool
    var order: Order?
    var request: TripRequestRecord?
    /// The parties (staff apart), who are told of new messages.
    var parties: [UserID: ConversationRole]
    /// A direct conversation's two people still share a shipment or a parcel (false: read-only).
    var linked = true

    var reference: String? { order?.reference }
}

/// A conversation as one participant sees it.
struct ConversationView: Sendable {
    /// The conversation's id (`record`'s, read once).
    var id: ConversationID
    var record: ConversationRecord
    var access: ConversationAccess
    var closed: Bool
    var lastReadSeq: Int64
    var lastDeliveredSeq: Int64
    /// Everyone who takes part or joined, with their first name and role.
    var participants: [(user: User, role: ConversationRole, readSeq: Int64)]
    var last: MessageRecord?

    var unread: Int64 { Unread.count(lastSeq: record.lastSeq, lastReadSeq: lastReadSeq) }
}

/// A message as a participant sees it (masked when its subject asks for it).
struct MessageView: Sendable {
    var record: MessageRecord
    var text: String
    var senderName: String?
    var sharedReference: String?

    var live: LiveChatMessage {
        get throws {
            LiveChatMessage(conversationId: record.conversationID, id: try record.storedID, seq: record.seq, senderId: record.senderID,
                            senderName: senderName, kind: record.kind, text: text, sharedShipmentId: record.sharedOrderID,
                            sharedReference: sharedReference, imageWidth: record.imageWidth, imageHeight: record.imageHeight,
                            clientMessageId: record.clientMessageID, createdAt: record.createdAt,
                            editedAt: record.editedAt, deletedAt: record.deletedAt, hiddenAt: record.hiddenAt)
        }
    }
}

/// Conversations (issue "Conversations, ratings and delivery statistics", items 1–4): one per
/// shipment or traveller request, opened by any of its parties; messages numbered in their write
/// transaction, idempotent by the app's message id, changed or deleted by their author for five
/// minutes; read markers and unread counts; live events and a push to the others; reports into the
/// moderation queue. Membership is the subject's parties, checked on every read and write.
struct Conversations: WaybillService {
    let services: WaybillServices
    let db: any Database
    let logger: Logger

    // MARK: access

    /// Who may take part in a subject's conversation, and on what terms; nil when the subject does
    /// not exist for `caller` (404). `caller` nil: the server (every party, no roles).
    static func access(to subject: ConversationSubject, caller: Caller?, on db: any Database) async throws -> ConversationAccess? {
        switch subject {
        case .shipment(let id):
            guard let order = try await Order.find(id, on: db) else { return nil }
            let receivers = try await Notifier.receiver(of: order, on: db)
            if let request = try await TripRequestRecord.query(on: db).filter(\.$shipmentID == id).first() {
                return try access(request: request, order: order, receivers: receivers, caller: caller)
            }
            return try access(shipment: order, receivers: receivers, caller: caller)
        case .request(let id):
            guard let request = try await TripRequestRecord.find(id, on: db) else { return nil }
            let order: Order? = if let shipment = request.shipmentID { try await Order.find(shipment, on: db) } else { nil }
            let receivers = if let order { try await Notifier.receiver(of: order, on: db) } else { [User]() }
            return try access(request: request, order: order, receivers: receivers, caller: caller)
        case .direct(let pair):
            var roles: Set<ConversationRole> = []
            if let caller {
                roles = ConversationPolicy.roles(direct: pair, caller: caller.id)
                if roles.isEmpty { return nil }
            }
            let people = try await Self.people([pair.low, pair.high], on: db)
            guard let low = people[pair.low], let high = people[pair.high] else { return nil }
            return ConversationAccess(subject: subject, roles: roles, endedAt: nil, masks: false, order: nil, request: nil,
                                      parties: [pair.low: .peer, pair.high: .peer], linked: try await linked(low, high, asking: caller?.id, on: db))
        case .booking(let id):
            // A counter booking: a drop-off slot of a counter's template.
            guard let booking = try await SlotBookingRecord.find(id, on: db), booking.kind == .dropOff,
                  let slot = try await SlotRecord.find(booking.slotID, on: db),
                  let counter = try await SlotTemplateRecord.find(slot.templateID, on: db)?.counterID,
                  let order = try await Order.find(booking.orderID, on: db) else { return nil }
            let staff = (try await Counters.staff(of: [counter], on: db)[counter] ?? []).filter { !$0.isBanned && $0.capabilities.contains(.counter) }
            var roles: Set<ConversationRole> = []
            if let caller {
                roles = ConversationPolicy.roles(booking: OrderPolicy.capacities(of: caller, for: order.parties), status: order.status,
                                                 counterStaff: CounterDesk.mayWorkAt(caller, namedFor: staff.contains { $0.id == caller.id }))
                if roles.isEmpty { return nil }
            }
            var parties: [UserID: ConversationRole] = [order.customerID: .sender]
            for person in staff {
                let id = try person.storedID
                if parties[id] == nil { parties[id] = .counter }
            }
            return ConversationAccess(subject: subject, roles: roles,
                                      endedAt: ConversationPolicy.endedAt(booking: booking.status, updatedAt: booking.updatedAt),
                                      masks: false, order: order, request: nil, parties: parties)
        }
    }

    /// Whether two people share a shipment or a followed parcel now (`ConversationPolicy.linksDirectly`,
    /// `Acquaintance`), as `asking` (one of them, or nil: the server) sees it; nobody is linked to a
    /// banned account.
    static func linked(_ a: User, _ b: User, asking: UserID?, on db: any Database) async throws -> Bool {
        let (idA, idB) = (try a.storedID, try b.storedID)
        guard !a.isBanned, !b.isBanned, let pair = DirectPair(idA, idB), let sql = db.tracedSQL else { return false }
        // A parcel one of them shared with the other.
        let parcels = try await sql.select().column(SQLColumn("owner_id", table: "p")).column(SQLColumn("user_id", table: "s"))
            .from(SQLAlias(SQLIdentifier("parcels"), as: SQLIdentifier("p")))
            .join(SQLAlias(SQLIdentifier("parcel_shares"), as: SQLIdentifier("s")), method: SQLJoinMethod.inner,
                  on: SQLColumn("parcel_id", table: "s"), .equal, SQLColumn("id", table: "p"))
            .where(SQLColumn("owner_id", table: "p"), .in, SQLBind.group([pair.low, pair.high]))
            .where(SQLColumn("user_id", table: "s"), .in, SQLBind.group([pair.low, pair.high]))
            .limit(10).all()
        // Shared with one of them: linked once that person took it up (opened the conversation).
        var opened: Bool?
        for row in parcels {
            let owner = try row.decode(column: "owner_id", as: UserID.self)
            let sharedWith: Set<UserID> = [try row.decode(column: "user_id", as: UserID.self)]
            if ConversationPolicy.linksDirectly(parcelOwner: owner, sharedWith: sharedWith, pair, asking: asking, conversationOpened: false) { return true }
            if opened == nil {
                let subject = ConversationSubject.direct(pair)
                opened = try await ConversationRecord.query(on: db).filter(\.$subjectKind == subject.kind).filter(\.$subjectID == subject.id).first() != nil
            }
            if ConversationPolicy.linksDirectly(parcelOwner: owner, sharedWith: sharedWith, pair, asking: asking, conversationOpened: opened ?? false) { return true }
        }
        // A shipment both are parties of: candidates by customer, driver and recipient email, in a
        // status that links them that way (`Acquaintance.shipmentStatuses`), then each checked by the
        // policy (what each may see in its status, a traveller's parcel paid).
        let (ca, cb) = (a.caller(id: idA), b.caller(id: idB))
        let direct = Array(Acquaintance.shipmentStatuses(throughReceiver: false))
        let throughReceiver = Array(Acquaintance.shipmentStatuses(throughReceiver: true))
        let candidates = try await Order.query(on: db).group(.or) { or in
            for (x, y) in [(ca, cb), (cb, ca)] {
                or.group(.and) { $0.filter(\.$customerID == x.id).filter(\.$driverID == y.id).filter(\.$status ~~ direct) }
                if let email = y.verifiedEmail {
                    or.group(.and) { $0.filter(\.$customerID == x.id).filter("recipient_email", .equal, email).filter(\.$status ~~ throughReceiver) }
                    or.group(.and) { $0.filter(\.$driverID == x.id).filter("recipient_email", .equal, email).filter(\.$status ~~ throughReceiver) }
                }
            }
        }.sort(\.$createdAt, .descending).limit(100).all()
        guard !candidates.isEmpty else { return false }
        let requests = try await TripRequestRecord.query(on: db).filter(\.$shipmentID ~~ candidates.compactMap(\.id)).all()
        let requestByShipment = Dictionary(requests.compactMap { r in r.shipmentID.map { ($0, r) } }, uniquingKeysWith: { first, _ in first })
        return try candidates.contains { order in
            let masked = requestByShipment[try order.storedID].map { ConversationPolicy.masksContacts(request: $0.status, shipmentPaid: order.paymentStatus == .paid) } ?? false
            return ConversationPolicy.linksDirectly(shipment: order.parties, status: order.status, masked: masked, ca, cb)
        }
    }

    /// A courier shipment's conversation as `caller` may see it, from what was read (its receivers:
    /// the accounts its recipient's email belongs to).
    static func access(shipment order: Order, receivers: [User], caller: Caller?) throws -> ConversationAccess? {
        var roles: Set<ConversationRole> = []
        if let caller {
            roles = ConversationPolicy.roles(shipment: OrderPolicy.capacities(of: caller, for: order.parties), status: order.status)
            if roles.isEmpty { return nil }
        }
        return ConversationAccess(subject: .shipment(try order.storedID), roles: roles,
                                  endedAt: ConversationPolicy.endedAt(shipment: order.status, updatedAt: order.updatedAt),
                                  masks: false, order: order, request: nil, parties: try parties(of: order, receivers: receivers))
    }

    /// A traveller request's conversation (with its shipment once accepted) as `caller` may see it.
    static func access(request: TripRequestRecord, order: Order?, receivers: [User], caller: Caller?) throws -> ConversationAccess? {
        var roles: Set<ConversationRole> = []
        if let caller {
            roles = ConversationPolicy.roles(request: TripRequestMachine.roles(of: caller.id, sender: request.senderID, traveller: request.travellerID))
            if let order {
                roles.formUnion(ConversationPolicy.roles(shipment: OrderPolicy.capacities(of: caller, for: order.parties), status: order.status))
            }
            if roles.isEmpty { return nil }
        }
        var parties: [UserID: ConversationRole] = [request.senderID: .sender, request.travellerID: .carrier]
        var endedAt = ConversationPolicy.endedAt(request: request.status, updatedAt: request.updatedAt)
        if let order {
            parties.merge(try Self.parties(of: order, receivers: receivers)) { current, _ in current }
            if request.status == .accepted { endedAt = ConversationPolicy.endedAt(shipment: order.status, updatedAt: order.updatedAt) }
        }
        return ConversationAccess(subject: .request(try request.storedID), roles: roles, endedAt: endedAt,
                                  masks: ConversationPolicy.masksContacts(request: request.status, shipmentPaid: order?.paymentStatus == .paid),
                                  order: order, request: request, parties: parties)
    }

    /// A shipment's parties: its customer, its driver, and the account it is addressed to once it
    /// would see it.
    static func parties(of order: some OrderColumns, on db: any Database) async throws -> [UserID: ConversationRole] {
        try parties(of: order, receivers: try await Notifier.receiver(of: order, on: db))
    }

    static func parties(of order: some OrderColumns, receivers: [User]) throws -> [UserID: ConversationRole] {
        var parties: [UserID: ConversationRole] = [order.customerID: .sender]
        if let driver = order.driverID, parties[driver] == nil { parties[driver] = .carrier }
        if OrderPolicy.allows(.see, status: order.status, as: [.receiver]) {
            for receiver in receivers where !receiver.isBanned {
                let id = try receiver.storedID
                if parties[id] == nil { parties[id] = .receiver }
            }
        }
        return parties
    }

    func closed(_ access: ConversationAccess) -> Bool {
        ConversationPolicy.isClosed(subjectEndedAt: access.endedAt, linked: access.linked, now: UnixTime.nowMillis,
                                    closeAfterDays: services.config.chatCloseDays)
    }

    /// The conversation and the caller's access, or 404.
    func load(_ id: ConversationID, for caller: Caller) async throws -> (ConversationRecord, ConversationAccess) {
        guard let record = try await ConversationRecord.find(id, on: db), let subject = record.subject,
              let access = try await Self.access(to: subject, caller: caller, on: db) else { throw WaybillError.notFound }
        return (record, access)
    }

    // MARK: reading

    /// The subject's conversation, made on first use; 404 for a subject the caller does not take part
    /// in, and for a direct conversation with someone the caller shares nothing with (yet).
    func open(_ subject: ConversationSubject, for me: Principal) async throws -> ConversationView {
        guard let access = try await Self.access(to: subject, caller: me.caller, on: db) else { throw WaybillError.notFound }
        if let existing = try await find(access.subject, on: db) { return try await view(existing, access, for: me.userID) }
        guard access.linked else { throw WaybillError.notFound }
        let record = ConversationRecord()
        record.id = .generated()
        record.subjectKind = access.subject.kind
        record.subjectID = access.subject.id
        if case .direct(let pair) = access.subject { (record.peerLow, record.peerHigh) = (pair.low, pair.high) }
        record.lastSeq = 0
        record.createdAt = UnixTime.nowMillis
        do {
            try await db.writeTransaction(services) { db in
                try await record.create(on: db)
                try await Self.addMembers(access.parties, to: try record.storedID, on: db)
            }
        } catch where Self.isUniqueViolation(error) {
            // Two parties opened it at once: theirs is the one.
        }
        guard let stored = try await find(access.subject, on: db) else { throw WaybillError.notFound }
        return try await view(stored, access, for: me.userID)
    }

    func find(_ subject: ConversationSubject, on db: any Database) async throws -> ConversationRecord? {
        try await ConversationRecord.query(on: db).filter(\.$subjectKind == subject.kind).filter(\.$subjectID == subject.id).first()
    }

    func conversation(_ id: ConversationID, for me: Principal) async throws -> ConversationView {
        let (record, access) = try await load(id, for: me.caller)
        return try await view(record, access, for: me.userID)
    }

    /// The caller's conversations, newest first, and their unread messages in all.
    func list(for me: Principal, limit: Int = 50) async throws -> (items: [ConversationView], totalUnread: Int64) {
        guard let sql = db.tracedSQL else { return ([], 0) }
        let rows = try await sql.select().column(SQLColumn("conversation_id", table: "m"))
            .from(SQLAlias(SQLIdentifier("conversation_members"), as: SQLIdentifier("m")))
            .join(SQLAlias(SQLIdentifier("conversations"), as: SQLIdentifier("c")), method: SQLJoinMethod.inner,
                  on: SQLColumn("id", table: "c"), .equal, SQLColumn("conversation_id", table: "m"))
            .where(SQLColumn("user_id", table: "m"), .equal, SQLBind(me.userID))
            .orderBy(SQLFunction("coalesce", args: SQLColumn("last_message_at", table: "c"), SQLColumn("created_at", table: "c")), SQLDirection.descending)
            .limit(min(max(limit, 1), 100))
            .all()
        let ids = try rows.map { try $0.decode(column: "conversation_id", as: ConversationID.self) }
        guard !ids.isEmpty else { return ([], 0) }
        // Everything the list shows, a query per kind of row rather than per conversation.
        let records = try await ConversationRecord.query(on: db).filter(\.$id ~~ ids).all()
        let byID = Dictionary(uniqueKeysWithValues: try records.map { (try $0.storedID, $0) })
        let requestIDs = records.compactMap { if case .request(let id)? = $0.subject { id } else { nil } }
        let requests = requestIDs.isEmpty ? [] : try await TripRequestRecord.query(on: db).filter(\.$id ~~ requestIDs).all()
        let orderIDs = records.compactMap { if case .shipment(let id)? = $0.subject { id } else { nil } } + requests.compactMap(\.shipmentID)
        let orders = orderIDs.isEmpty ? [] : try await Order.query(on: db).filter(\.$id ~~ orderIDs).all()
        let ordersByID = Dictionary(uniqueKeysWithValues: try orders.map { (try $0.storedID, $0) })
        let emails = Set(orders.compactMap(\.recipientColumns.email))
        let receivers = emails.isEmpty ? [] : try await User.query(on: db).filter(\.$email ~~ Array(emails)).filter(\.$emailVerifiedAt != nil).all()
        let receiversByEmail = Dictionary(grouping: receivers, by: \.email)
        let requestsByID = Dictionary(uniqueKeysWithValues: try requests.map { (try $0.storedID, $0) })
        let members = try await Self.members(of: ids, on: db)
        var accesses: [ConversationID: ConversationAccess] = [:]
        for record in records {
            let conversationID = try record.storedID
            let access: ConversationAccess? = switch record.subject {
            case .shipment(let id)?:
                try ordersByID[id].flatMap { try Self.access(shipment: $0, receivers: $0.recipientColumns.email.flatMap { receiversByEmail[$0] } ?? [], caller: me.caller) }
            case .request(let id)?:
                try requestsByID[id].flatMap { request in
                    let order = request.shipmentID.flatMap { ordersByID[$0] }
                    return try Self.access(request: request, order: order, receivers: order?.recipientColumns.email.flatMap { receiversByEmail[$0] } ?? [],
                                       caller: me.caller)
                }
            case .direct(let pair)?:
                // Few and cheap: whether the two still share something is asked per conversation.
                try await Self.access(to: .direct(pair), caller: me.caller, on: db)
            case .booking(let id)?:
                // As few: a person's counter bookings are their drop-offs.
                try await Self.access(to: .booking(id), caller: me.caller, on: db)
            case nil: nil
            }
            if let access { accesses[conversationID] = access }
        }
        var peopleIDs = Set(accesses.values.flatMap(\.parties.keys))
        for list in members.values { peopleIDs.formUnion(list.keys) }
        let people = try await Self.people(peopleIDs, on: db)
        let lastMessages = try await MessageRecord.query(on: db).filter(\.$conversationID ~~ ids).filter(\.$seq ~~ Set(records.map(\.lastSeq))).all()
        let lastByConversation = Dictionary(lastMessages.filter { byID[$0.conversationID]?.lastSeq == $0.seq }.map { ($0.conversationID, $0) },
                                            uniquingKeysWith: { first, _ in first })
        let items: [ConversationView] = ids.compactMap { id in
            guard let record = byID[id], let access = accesses[id] else { return nil }
            return view(id, record, access, members: members[id] ?? [:], people: people, last: lastByConversation[id], for: me.userID)
        }
        return (items, items.reduce(0) { $0 + $1.unread })
    }

    func view(_ record: ConversationRecord, _ access: ConversationAccess, for userID: UserID) async throws -> ConversationView {
        let id = try record.storedID
        let members = try await Self.members(of: id, on: db)
        var ids = Set(access.parties.keys)
        ids.formUnion(members.keys)
        let people = try await Self.people(ids, on: db)
        let last = try await MessageRecord.query(on: db).filter(\.$conversationID == id).filter(\.$seq == record.lastSeq).first()
        return view(id, record, access, members: members, people: people, last: last, for: userID)
    }

    func view(_ conversationID: ConversationID, _ record: ConversationRecord, _ access: ConversationAccess, members: [UserID: Member], people: [UserID: User], last: MessageRecord?,
              for userID: UserID) -> ConversationView {
        let mine = members[userID]
        var participants: [(user: User, role: ConversationRole, readSeq: Int64)] = []
        for (id, role) in access.parties.sorted(by: { $0.value.rawValue < $1.value.rawValue }) {
            if let user = people[id] { participants.append((user, role, members[id]?.read ?? 0)) }
        }
        for (id, member) in members.sorted(by: { $0.key.uuidString < $1.key.uuidString }) where access.parties[id] == nil && member.role == .staff {
            if let user = people[id] { participants.append((user, .staff, member.read)) }
        }
        return ConversationView(id: conversationID, record: record, access: access, closed: closed(access), lastReadSeq: mine?.read ?? 0,
                                lastDeliveredSeq: mine?.delivered ?? 0, participants: participants, last: last)
    }

    /// Messages after `after` (oldest first: what an app missed), or the newest before `before`.
    func messages(_ id: ConversationID, after: Int64?, before: Int64?, limit: Int, for me: Principal) async throws -> (ConversationAccess, [MessageView]) {
        guard ConversationPolicy.pageRange.contains(limit) else { throw WaybillError.invalidParameter("limit", "out_of_range") }
        if let after, after < 0 { throw WaybillError.invalidParameter("after", "out_of_range") }
        if let before, before < 1 { throw WaybillError.invalidParameter("before", "out_of_range") }
        let (_, access) = try await load(id, for: me.caller)
        var query = MessageRecord.query(on: db).filter(\.$conversationID == id)
        let records: [MessageRecord]
        if let after {
            records = try await query.filter(\.$seq > after).sort(\.$seq).limit(limit).all()
        } else {
            if let before { query = query.filter(\.$seq < before) }
            records = try await query.sort(\.$seq, .descending).limit(limit).all().reversed()
        }
        return (access, try await views(records, access))
    }

    func views(_ records: [MessageRecord], _ access: ConversationAccess) async throws -> [MessageView] {
        let people = try await Self.people(Set(records.compactMap(\.senderID)), on: db)
        let shared = Set(records.compactMap(\.sharedOrderID))
        var references: [OrderID: String] = [:]
        if !shared.isEmpty {
            for order in try await Order.query(on: db).filter(\.$id ~~ Array(shared)).all() { references[try order.storedID] = order.reference }
        }
        return records.map { Self.view($0, access: access, sender: $0.senderID.flatMap { people[$0] }, references: references) }
    }

    static func view(_ record: MessageRecord, access: ConversationAccess, sender: User?, references: [OrderID: String]) -> MessageView {
        // Deleted by its author or hidden by the moderators: its place stays, its content goes.
        let gone = record.deletedAt != nil || record.hiddenAt != nil
        var text = gone ? "" : record.body
        if access.masks && record.kind == .text { text = ContactMasking.masked(text) }
        return MessageView(record: record, text: text, senderName: sender?.firstName,
                           sharedReference: gone ? nil : record.sharedOrderID.flatMap { references[$0] })
    }

    // MARK: writing

    private struct Replay: Error { let message: MessageRecord }

    /// Sends a message as the caller. The same `clientMessageId` again gives back the stored message
    /// (`created` false) instead of a second one.
    func send(_ id: ConversationID, _ draft: MessageDraft, image: Orders.Upload? = nil, by me: Principal) async throws -> (MessageView, created: Bool) {
        var draft = draft
        draft.withImage = image != nil
        let errors = draft.validate()
        guard errors.isEmpty else { throw WaybillError.validation(errors) }
        let (_, access) = try await load(id, for: me.caller)
        if let existing = try await MessageRecord.query(on: db).filter(\.$conversationID == id).filter(\.$senderID == me.userID)
            .filter(\.$clientMessageID == draft.clientMessageId).first() {
            return (try await views([existing], access)[0], false)
        }
        if closed(access) { throw WaybillError(.conflict, .conversationClosed, ErrorCode.conversationClosed.english) }
        var sharedReference: String?
        if let shared = draft.sharedShipment {
            // Only a shipment the sender may see can be shared, and it then opens for the others
            // only as far as their own rights go (its public tracking, or nothing).
            guard let order = try await Order.find(shared, on: db),
                  OrderPolicy.allows(.see, status: order.status, as: OrderPolicy.capacities(of: me.caller, for: order.parties)) else {
                throw WaybillError.validation("sharedShipmentId", "not_found")
            }
            sharedReference = order.reference
        }
        if let wait = services.messageLimiter.take(me.userID.uuidString) {
            throw WaybillError.tooManyRequests(retryAfter: wait, "Too many messages at once; wait a moment.")
        }
        let message = MessageRecord()
        message.id = .generated()
        message.conversationID = id
        message.senderID = me.userID
        message.kind = image != nil ? .image : draft.sharedShipment == nil ? .text : .shipment
        message.body = draft.cleanText
        if let image {
            // The same sanitizer as proofs: decoded, checked, re-encoded without metadata.
            let clean = try await Orders(services: services, db: db, logger: logger)
                .sanitize(image, allowed: [.png, .jpeg], maxBytes: UploadLimits.photoBytes, maxPixels: UploadLimits.photoPixels)
            message.imageName = try await services.files.save(clean.bytes, extension: clean.format.fileExtension)
            message.imageType = clean.format.contentType
            message.imageWidth = clean.width
            message.imageHeight = clean.height
        }
        message.sharedOrderID = draft.sharedShipment
        message.clientMessageID = draft.clientMessageId
        message.createdAt = UnixTime.nowMillis
        let role = access.parties[me.userID] ?? .staff
        let sender = me.user
        let clientID = draft.clientMessageId
        let references: [OrderID: String] = if let shared = draft.sharedShipment, let sharedReference { [shared: sharedReference] } else { [:] }
        do {
            try await db.writeTransaction(services) { db in
                // Numbering first: on PostgreSQL the row stays locked until commit, so a retry racing
                // this one finds this message below and gives it back.
                message.seq = try await Self.nextSeq(id, at: message.createdAt, on: db)
                if let existing = try await MessageRecord.query(on: db).filter(\.$conversationID == id).filter(\.$senderID == me.userID)
                    .filter(\.$clientMessageID == clientID).first() {
                    throw Replay(message: existing)
                }
                try await message.create(on: db)
                var members = access.parties
                members[me.userID] = role
                try await Self.addMembers(members, to: id, on: db)
                try await Self.setMarkers(id, user: me.userID, read: message.seq, on: db)
                let view = Self.view(message, access: access, sender: sender, references: references)
                try await Self.announce(view, in: id, from: me.userID, preview: view.text, on: db)
            }
        } catch let replay as Replay {
            if let name = message.imageName { await services.files.delete(name) }
            return (try await views([replay.message], access)[0], false)
        } catch {
            if let name = message.imageName { await services.files.delete(name) }
            throw error
        }
        return (try await views([message], access)[0], true)
    }

    /// The next number in a conversation, taken in the caller's transaction.
    static func nextSeq(_ id: ConversationID, at now: Int64, on db: any Database) async throws -> Int64 {
        guard let sql = db.tracedSQL else { throw WaybillError.notFound }
        let row = try await sql.update("conversations")
            .set(SQLIdentifier("last_seq"), to: SQLBinaryExpression(SQLIdentifier("last_seq"), .add, SQLLiteral.numeric("1")))
            .set("last_message_at", to: SQLBind(now))
            .where("id", .equal, SQLBind(id))
            .returning("last_seq").first()
        guard let row else { throw WaybillError.notFound }
        return try row.decode(column: "last_seq", as: Int64.self)
    }

    /// The live event of a new or changed message, the others' unread counts, and (new messages
    /// only) a push to wake their apps: no text in it unless they allowed previews.
    static func announce(_ view: MessageView, in id: ConversationID, from sender: UserID?, preview: String?, on db: any Database) async throws {
        var events: [(payload: LivePayload, topic: String)] = [(.message(try view.live), LiveTopic.conversation(id).name)]
        guard preview != nil || view.record.kind == .system else {
            return try await LiveLog.publish(events, on: db)
        }
        let members = try await self.members(of: id, on: db)
        let recipients = members.keys.filter { $0 != sender }
        let totals = try await totalUnread(recipients, on: db)
        let lastSeq = view.record.seq
        for user in recipients {
            let unread = Unread.count(lastSeq: lastSeq, lastReadSeq: members[user]?.read ?? 0)
            events.append((.unread(LiveUnread(conversationId: id, unread: unread, total: totals[user] ?? unread)), LiveLog.userTopic(user)))
        }
        try await LiveLog.publish(events, on: db)
        guard let preview, view.record.kind != .system, !recipients.isEmpty else { return }
        let allowing = Set(try await ChatSetting.query(on: db).filter(\.$id ~~ recipients).filter(\.$previews == true).all().compactMap(\.id))
        for user in recipients {
            let name = view.senderName ?? "Waybill"
            let body = allowing.contains(user) && !preview.isEmpty ? String(preview.prefix(140)) : "Open Waybill to read it."
            try await PushDelivery.enqueue(userID: user, title: "New message from \(name)", body: body,
                                           data: ["kind": "message", "conversationId": id.uuidString, "seq": String(view.record.seq),
                                                  "path": WebRoutes.conversation(id)],
                                           collapseKey: "conversation:\(id.uuidString)", on: db)
        }
    }

    /// Changes the text of one's own message within five minutes.
    func edit(_ id: ConversationID, message messageID: MessageID, text: String, by me: Principal) async throws -> MessageView {
        let (_, access) = try await load(id, for: me.caller)
        let message = try await ownMessage(messageID, in: id, access: access, by: me)
        let draft = MessageDraft(text: text, clientMessageId: message.clientMessageID ?? "edit", sharedShipment: message.sharedOrderID,
                                 withImage: message.imageName != nil)
        let errors = draft.validate()
        guard errors.isEmpty else { throw WaybillError.validation(errors) }
        message.body = draft.cleanText
        message.editedAt = UnixTime.nowMillis
        return try await save(message, access: access, by: me)
    }

    /// Deletes one's own message within five minutes: a tombstone keeps its place (its photo goes).
    func delete(_ id: ConversationID, message messageID: MessageID, by me: Principal) async throws -> MessageView {
        let (_, access) = try await load(id, for: me.caller)
        let message = try await ownMessage(messageID, in: id, access: access, by: me)
        let file = message.imageName
        message.deletedAt = UnixTime.nowMillis
        message.body = ""
        message.sharedOrderID = nil
        message.imageName = nil
        message.imageType = nil
        let view = try await save(message, access: access, by: me)
        if let file { await services.files.delete(file) }
        return view
    }

    /// An image message's picture, for whoever may read the conversation.
    func image(_ id: ConversationID, message messageID: MessageID, for me: Principal) async throws -> (bytes: [UInt8], contentType: String) {
        _ = try await load(id, for: me.caller)
        guard let message = try await MessageRecord.find(messageID, on: db), message.conversationID == id, message.deletedAt == nil,
              message.hiddenAt == nil, let name = message.imageName, let type = message.imageType,
              let data = try? await services.files.read(name) else { throw WaybillError.notFound }
        return (Array(data), type)
    }

    private func ownMessage(_ messageID: MessageID, in id: ConversationID, access: ConversationAccess, by me: Principal) async throws -> MessageRecord {
        guard let message = try await MessageRecord.find(messageID, on: db), message.conversationID == id else { throw WaybillError.notFound }
        switch ConversationPolicy.mayChange(messageBy: message.senderID, kind: message.kind, sentAt: message.createdAt, deleted: message.deletedAt != nil,
                                            by: me.userID, now: UnixTime.nowMillis, closed: closed(access)) {
        case .allowed: return message
        case .forbidden: throw WaybillError.forbidden
        case .tooLate: throw WaybillError(.conflict, .editWindowPassed, ErrorCode.editWindowPassed.english)
        case .closed: throw WaybillError(.conflict, .conversationClosed, ErrorCode.conversationClosed.english)
        }
    }

    private func save(_ message: MessageRecord, access: ConversationAccess, by me: Principal) async throws -> MessageView {
        let sender = me.user
        let view = try await views([message], access)[0]
        try await db.writeTransaction(services) { db in
            try await message.save(on: db)
            try await Self.announce(MessageView(record: message, text: view.text, senderName: sender.firstName, sharedReference: view.sharedReference),
                                    in: message.conversationID, from: me.userID, preview: nil, on: db)
        }
        return view
    }

    /// Moves the caller's delivered and read markers forward (never back, never past the last message).
    func mark(_ id: ConversationID, delivered: Int64?, read: Int64?, by me: Principal) async throws -> ConversationView {
        for (name, value) in [("delivered", delivered), ("read", read)] {
            if let value, value < 0 { throw WaybillError.validation(name, "out_of_range") }
        }
        let (record, access) = try await load(id, for: me.caller)
        let lastSeq = record.lastSeq
        let userID = me.userID
        let role = access.parties[userID]
        try await db.writeTransaction(services) { db in
            if let role { try await Self.addMembers([userID: role], to: id, on: db) }
            guard let (newDelivered, newRead) = try await Self.setMarkers(id, user: userID, delivered: delivered.map { min($0, lastSeq) },
                                                                         read: read.map { min($0, lastSeq) }, on: db) else { return }
            let total = try await Self.totalUnread([userID], on: db)[userID] ?? 0
            try await LiveLog.publish([
                (.marker(LiveChatMarker(conversationId: id, userId: userID, deliveredSeq: newDelivered, readSeq: newRead)), LiveTopic.conversation(id).name),
                (.unread(LiveUnread(conversationId: id, unread: Unread.count(lastSeq: lastSeq, lastReadSeq: newRead), total: total)), LiveLog.userTopic(userID)),
            ], on: db)
        }
        return try await conversation(id, for: me)
    }

    // MARK: members and markers

    struct Member: Sendable { var role: ConversationRole; var read: Int64; var delivered: Int64 }

    static func members(of id: ConversationID, on db: any Database) async throws -> [UserID: Member] {
        try await members(of: [id], on: db)[id] ?? [:]
    }

    static func members(of ids: [ConversationID], on db: any Database) async throws -> [ConversationID: [UserID: Member]] {
        guard !ids.isEmpty, let sql = db.tracedSQL else { return [:] }
        var result: [ConversationID: [UserID: Member]] = [:]
        for row in try await sql.select().columns("conversation_id", "user_id", "role", "last_read_seq", "last_delivered_seq").from("conversation_members")
            .where("conversation_id", .in, SQLBind.group(ids)).all() {
            result[try row.decode(column: "conversation_id", as: ConversationID.self), default: [:]][try row.decode(column: "user_id", as: UserID.self)] = Member(
                role: ConversationRole(rawValue: try row.decode(column: "role", as: String.self)) ?? .staff,
                read: try row.decode(column: "last_read_seq", as: Int64.self),
                delivered: try row.decode(column: "last_delivered_seq", as: Int64.self))
        }
        return result
    }

    /// Makes the parties members (kept for their markers and their list); those already members stay as they are.
    static func addMembers(_ members: [UserID: ConversationRole], to id: ConversationID, on db: any Database) async throws {
        guard !members.isEmpty, let sql = db.tracedSQL else { return }
        let now = UnixTime.nowMillis
        var insert = sql.insert(into: "conversation_members").columns("conversation_id", "user_id", "role", "last_read_seq", "last_delivered_seq", "joined_at")
        for (user, role) in members.sorted(by: { $0.key.uuidString < $1.key.uuidString }) {
            insert = insert.values(SQLBind(id), SQLBind(user), SQLBind(role.rawValue), SQLBind(Int64(0)), SQLBind(Int64(0)), SQLBind(now))
        }
        try await insert.ignoringConflicts(with: ["conversation_id", "user_id"]).run()
    }

    /// Sets a member's markers to at least the given values; answers the new ones (nil: not a member).
    @discardableResult
    static func setMarkers(_ id: ConversationID, user: UserID, delivered: Int64? = nil, read: Int64?, on db: any Database) async throws -> (Int64, Int64)? {
        guard let sql = db.tracedSQL else { return nil }
        let read = read ?? 0
        let delivered = max(delivered ?? 0, read)
        let greatest = sql.dialect.name == "sqlite" ? "max" : "greatest"
        let row = try await sql.update("conversation_members")
            .set(SQLIdentifier("last_read_seq"), to: SQLFunction(greatest, args: SQLIdentifier("last_read_seq"), SQLBind(read)))
            .set(SQLIdentifier("last_delivered_seq"), to: SQLFunction(greatest, args: SQLIdentifier("last_delivered_seq"), SQLBind(delivered)))
            .where("conversation_id", .equal, SQLBind(id)).where("user_id", .equal, SQLBind(user))
            .returning("last_delivered_seq", "last_read_seq").first()
        guard let row else { return nil }
        return (try row.decode(column: "last_delivered_seq", as: Int64.self), try row.decode(column: "last_read_seq", as: Int64.self))
    }

    /// Unread messages per person over every conversation they are a member of.
    static func totalUnread(_ users: [UserID], on db: any Database) async throws -> [UserID: Int64] {
        guard !users.isEmpty, let sql = db.tracedSQL else { return [:] }
        let rows = try await sql.raw("""
            SELECT m.user_id AS user_id, CAST(SUM(c.last_seq - m.last_read_seq) AS BIGINT) AS unread
            FROM conversation_members m JOIN conversations c ON c.id = m.conversation_id
            WHERE m.user_id IN \(SQLBind.group(users)) GROUP BY m.user_id
            """).all()
        var result: [UserID: Int64] = [:]
        for row in rows {
            result[try row.decode(column: "user_id", as: UserID.self)] = try row.decode(column: "unread", as: Int64?.self) ?? 0
        }
        return result
    }

    static func people(_ ids: Set<UserID>, on db: any Database) async throws -> [UserID: User] {
        guard !ids.isEmpty, let sql = db.tracedSQL else { return [:] }
        return try await Orders.accounts(ids, on: sql)
    }

    static func isUniqueViolation(_ error: any Error) -> Bool {
        let text = String(reflecting: error).lowercased()
        return text.contains("unique") || text.contains("23505")
    }

    // MARK: status changes and membership, from the domain events

    /// A shipment's status changes appear in its conversation (if it has one), and a driver who lost
    /// the order leaves it.
    static func handle(_ event: DomainEvent, on db: any Database) async throws {
        guard case .shipment(let order, let fact) = event, fact.changesStatus, let sql = db.tracedSQL else { return }
        let orderID = order.id
        // Placed in this very transaction (its first version: placing it, or an import): nothing can
        // name it yet, neither a conversation nor a trip request. Two statements fewer under the
        // write lock for every order placed (docs/performance.md).
        if case .placed = fact, order.version == 1 { return }
        // Plain SQL: every status change asks, inside its transaction (docs/performance.md).
        let request = try await sql.raw("SELECT * FROM \"trip_requests\" WHERE \"shipment_id\" = \(bind: orderID) LIMIT 1").first()
            .map(TripRequestRecord.init(row:))
        let subject: ConversationSubject = try request.map { .request(try $0.storedID) } ?? .shipment(orderID)
        guard let conversation = try await sql.raw("""
            SELECT * FROM "conversations" WHERE "subject_kind" = \(bind: subject.kind) AND "subject_id" = \(bind: subject.id) LIMIT 1
            """).first().map(ConversationRecord.init(row:)), let id = conversation.id else { return }
        if case .assigned(_, let previous?, _) = fact, previous != order.driverID {
            try await sql.delete(from: "conversation_members").where("conversation_id", .equal, SQLBind(id))
                .where("user_id", .equal, SQLBind(previous)).run()
        }
        if case .assigned = fact {} else if case .placed = fact {} else {
            let message = MessageRecord()
            message.id = .generated()
            message.conversationID = id
            message.kind = .system
            message.body = order.status.rawValue
            message.createdAt = UnixTime.nowMillis
            message.seq = try await nextSeq(id, at: message.createdAt, on: db)
            try await message.create(on: db)
            let view = MessageView(record: message, text: message.body, senderName: nil, sharedReference: nil)
            try await announce(view, in: id, from: nil, preview: nil, on: db)
        }
        // Whoever the order now concerns becomes a member (a newly assigned driver sees it in their list).
        var parties = try await parties(of: order, on: db)
        if let request { parties[request.senderID] = parties[request.senderID] ?? .sender }
        try await addMembers(parties, to: id, on: db)
    }

    // MARK: reports and settings

    /// Reports a message (its author is the person reported) or a person the caller shares a
    /// conversation with. Nobody reports themself.
    func report(message messageID: MessageID?, person: UserID?, in id: ConversationID, reason: ReportReason, note: String?,
                by me: Principal) async throws -> ReportRecord {
        let (_, access) = try await load(id, for: me.caller)
        var reported: UserID
        if let messageID {
            guard let message = try await MessageRecord.find(messageID, on: db), message.conversationID == id, let author = message.senderID else {
                throw WaybillError.validation("messageId", "not_found")
            }
            reported = author
        } else if let person {
            let members = try await Self.members(of: id, on: db)
            guard access.parties[person] != nil || members[person] != nil else { throw WaybillError.validation("userId", "not_found") }
            reported = person
        } else {
            throw WaybillError.validation("messageId", "required")
        }
        if reported == me.userID { throw WaybillError.validation(messageID == nil ? "userId" : "messageId", "self") }
        let report = ReportRecord()
        report.reportedUserID = reported
        report.messageID = messageID
        report.conversationID = id
        return try await report.file(by: me.userID, reason: reason, note: note, services: services, on: db)
    }


    func setPreviews(_ on: Bool, by me: Principal) async throws {
        let userID = me.userID
        try await db.writeTransaction(services) { db in
            if let setting = try await ChatSetting.find(userID, on: db) {
                setting.previews = on
                try await setting.save(on: db)
            } else {
                let setting = ChatSetting()
                setting.id = userID
                setting.previews = on
                try await setting.create(on: db)
            }
        }
    }

    func previews(for me: Principal) async throws -> Bool {
        try await ChatSetting.find(me.userID, on: db)?.previews ?? false
    }

    // MARK: retention

    /// Deletes the messages of conversations closed for longer than `CHAT_RETENTION_DAYS`.
    func deleteExpired() async throws {
        let config = services.config
        let days = Int64(config.chatCloseDays + config.chatRetentionDays)
        let horizon = UnixTime.nowMillis - days * 86_400_000
        // Only a conversation quiet for that long can be past it.
        let quiet = try await ConversationRecord.query(on: db).filter(\.$lastMessageAt < horizon).filter(\.$lastSeq > 0).limit(500).all()
        for record in quiet {
            guard let subject = record.subject, let access = try await Self.access(to: subject, caller: nil, on: db),
                  let ended = ConversationPolicy.retainedFrom(subject, endedAt: access.endedAt, lastMessageAt: record.lastMessageAt),
                  ended < horizon else { continue }
            let id = try record.storedID
            let files = try await MessageRecord.query(on: db).filter(\.$conversationID == id).filter(\.$imageName != nil).all().compactMap(\.imageName)
            try await db.writeTransaction(services) { db in
                try await MessageRecord.query(on: db).filter(\.$conversationID == id).delete()
            }
            for file in files { await services.files.delete(file) }
        }
    }
}

/// Whether someone's push notifications show the message text.
final class ChatSetting: Model, @unchecked Sendable {
    static let schema = "chat_settings"

    @ID(custom: "user_id", generatedBy: .user) var id: UserID?
    @Field(key: "previews") var previews: Bool

    var properties: [any AnyProperty] { [$id, $previews] }

    init() {}
}
