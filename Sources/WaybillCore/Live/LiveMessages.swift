import Foundation

/// The messages of the live channel (`GET /api/v1/live`), defined once for the server and the SDK.
///
/// Every message is one JSON object with a `type`. Events carry an `id` (increasing, shared by all
/// topics and all server processes) that a client hands back as `since` after reconnecting to get
/// what it missed. Times are Unix milliseconds.
public enum LiveTopic: Sendable, Hashable {
    /// One order: its status, its driver's position while accepted or in transit, the ETA.
    case order(OrderID)
    /// Managers: every on-duty driver's position and every order's status changes.
    case fleet
    /// The signed-in person's own notifications.
    case notifications
    /// An order seen through its public tracking link.
    case tracking(String)
    /// A conversation its participants (and staff) read: new, changed and deleted messages, read markers.
    case conversation(ConversationID)

    public init?(_ text: String) {
        if text == "fleet" { self = .fleet }
        else if text == "notifications" { self = .notifications }
        else if text.hasPrefix("order:"), let id = OrderID(uuidString: String(text.dropFirst(6))) { self = .order(id) }
        else if text.hasPrefix("tracking:"), text.count > 9, text.count <= 200 { self = .tracking(String(text.dropFirst(9))) }
        else if text.hasPrefix("conversation:"), let id = ConversationID(uuidString: String(text.dropFirst(13))) { self = .conversation(id) }
        else { return nil }
    }

    public var name: String {
        switch self {
        case .order(let id): "order:\(id.uuidString)"
        case .fleet: "fleet"
        case .notifications: "notifications"
        case .tracking(let token): "tracking:\(token)"
        case .conversation(let id): "conversation:\(id.uuidString)"
        }
    }
}

/// A driver's position as a watcher sees it. `driverId` and `orderId` are left out for the public.
public struct LiveLocation: Sendable, Hashable, Codable {
    public var driverId: UserID?
    public var driverFirstName: String?
    public var orderId: OrderID?
    /// The order's status when the position was taken (on order topics).
    public var orderStatus: String?
    public var latitude: Double
    public var longitude: Double
    public var accuracy: Double?
    public var heading: Double?
    public var speed: Double?
    public var recordedAt: Int64

    public init(driverId: UserID?, driverFirstName: String?, orderId: OrderID?, orderStatus: String? = nil, position: PositionReport) {
        self.driverId = driverId
        self.driverFirstName = driverFirstName
        self.orderId = orderId
        self.orderStatus = orderStatus
        latitude = position.latitude
        longitude = position.longitude
        accuracy = position.accuracy
        heading = position.heading
        speed = position.speed
        recordedAt = position.recordedAt
    }
}

/// An order's new status.
public struct LiveStatus: Sendable, Hashable, Codable {
    public var orderId: OrderID?
    public var reference: String?
    public var status: String
    public var driverId: UserID?
    public var at: Int64

    public init(orderId: OrderID?, reference: String?, status: String, driverId: UserID?, at: Int64) {
        self.orderId = orderId
        self.reference = reference
        self.status = status
        self.driverId = driverId
        self.at = at
    }
}

/// A new arrival estimate for an order's next stop.
public struct LiveETA: Sendable, Hashable, Codable {
    public var orderId: OrderID?
    public var stop: ArrivalEstimate.Stop
    public var arrivesAt: Int64
    public var distanceMeters: Int

    public init(orderId: OrderID?, estimate: ArrivalEstimate) {
        self.orderId = orderId
        stop = estimate.stop
        arrivesAt = estimate.arrivesAt
        distanceMeters = estimate.distanceMeters
    }
}

/// A notification for the signed-in person (the same one `/notifications` lists).
public struct LiveNotification: Sendable, Hashable, Codable {
    public var id: NotificationID
    public var kind: String
    public var title: String
    public var body: String
    public var orderId: OrderID?
    public var createdAt: Int64

    public init(id: NotificationID, kind: String, title: String, body: String, orderId: OrderID?, createdAt: Int64) {
        self.id = id
        self.kind = kind
        self.title = title
        self.body = body
        self.orderId = orderId
        self.createdAt = createdAt
    }
}

/// A driver going on or off duty (fleet watchers drop a driver from the map when off duty).
public struct LiveDuty: Sendable, Hashable, Codable {
    public var driverId: UserID
    public var onDuty: Bool
    public var at: Int64

    public init(driverId: UserID, onDuty: Bool, at: Int64) {
        self.driverId = driverId
        self.onDuty = onDuty
        self.at = at
    }
}

/// A message of a conversation, new or changed: clients keep one per `seq` (an edit or a deletion
/// comes again with the same `seq`).
public struct LiveChatMessage: Sendable, Hashable, Codable {
    public var conversationId: ConversationID
    public var id: MessageID
    public var seq: Int64
    /// Nil for the server's own messages.
    public var senderId: UserID?
    public var senderName: String?
    public var kind: MessageKind
    /// Empty once deleted. For `system`, the new status.
    public var text: String
    public var sharedShipmentId: OrderID?
    public var sharedReference: String?
    /// For `image` messages: its size; the picture is at `GET /conversations/{id}/messages/{messageId}/image`.
    public var imageWidth: Int?
    public var imageHeight: Int?
    public var clientMessageId: String?
    public var createdAt: Int64
    public var editedAt: Int64?
    public var deletedAt: Int64?
    /// Hidden by the moderators: its text and photo are gone for everyone, as a deleted one's.
    public var hiddenAt: Int64?

    public init(conversationId: ConversationID, id: MessageID, seq: Int64, senderId: UserID?, senderName: String?, kind: MessageKind,
                text: String, sharedShipmentId: OrderID?, sharedReference: String?, imageWidth: Int? = nil, imageHeight: Int? = nil,
                clientMessageId: String?, createdAt: Int64, editedAt: Int64?, deletedAt: Int64?, hiddenAt: Int64? = nil) {
        self.conversationId = conversationId
        self.id = id
        self.seq = seq
        self.senderId = senderId
        self.senderName = senderName
        self.kind = kind
        self.text = text
        self.sharedShipmentId = sharedShipmentId
        self.sharedReference = sharedReference
        self.imageWidth = imageWidth
        self.imageHeight = imageHeight
        self.clientMessageId = clientMessageId
        self.createdAt = createdAt
        self.editedAt = editedAt
        self.deletedAt = deletedAt
        self.hiddenAt = hiddenAt
    }
}

/// How far one participant has received and read a conversation.
public struct LiveChatMarker: Sendable, Hashable, Codable {
    public var conversationId: ConversationID
    public var userId: UserID
    public var deliveredSeq: Int64
    public var readSeq: Int64

    public init(conversationId: ConversationID, userId: UserID, deliveredSeq: Int64, readSeq: Int64) {
        self.conversationId = conversationId
        self.userId = userId
        self.deliveredSeq = deliveredSeq
        self.readSeq = readSeq
    }
}

/// A person's unread messages changed (on their `notifications` topic): in one conversation and in all.
public struct LiveUnread: Sendable, Hashable, Codable {
    public var conversationId: ConversationID
    public var unread: Int64
    public var total: Int64

    public init(conversationId: ConversationID, unread: Int64, total: Int64) {
        self.conversationId = conversationId
        self.unread = unread
        self.total = total
    }
}

/// What an event says.
public enum LivePayload: Sendable, Hashable {
    case location(LiveLocation)
    case status(LiveStatus)
    case eta(LiveETA)
    case notification(LiveNotification)
    case duty(LiveDuty)
    case message(LiveChatMessage)
    case marker(LiveChatMarker)
    case unread(LiveUnread)

    public var type: String {
        switch self {
        case .location: "location"
        case .status: "status"
        case .eta: "eta"
        case .notification: "notification"
        case .duty: "duty"
        case .message: "message"
        case .marker: "marker"
        case .unread: "unread"
        }
    }
}

/// An event as it travels on the live channel:
/// `{"type": "location", "id": 42, "topic": "order:…", "at": 1700000000000, "data": {…}}`.
public struct LiveEvent: Sendable, Hashable, Codable {
    public var id: Int64
    public var topic: String
    public var at: Int64
    public var payload: LivePayload

    public init(id: Int64, topic: String, at: Int64, payload: LivePayload) {
        self.id = id
        self.topic = topic
        self.at = at
        self.payload = payload
    }

    enum CodingKeys: String, CodingKey { case type, id, topic, at, data }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(Int64.self, forKey: .id)
        topic = try c.decode(String.self, forKey: .topic)
        at = try c.decode(Int64.self, forKey: .at)
        payload = try LivePayload.decode(type: c.decode(String.self, forKey: .type), from: c.superDecoder(forKey: .data))
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(payload.type, forKey: .type)
        try c.encode(id, forKey: .id)
        try c.encode(topic, forKey: .topic)
        try c.encode(at, forKey: .at)
        try payload.encodeData(to: c.superEncoder(forKey: .data))
    }
}

extension LivePayload {
    public static func decode(type: String, from decoder: any Decoder) throws -> LivePayload {
        switch type {
        case "location": .location(try LiveLocation(from: decoder))
        case "status": .status(try LiveStatus(from: decoder))
        case "eta": .eta(try LiveETA(from: decoder))
        case "notification": .notification(try LiveNotification(from: decoder))
        case "duty": .duty(try LiveDuty(from: decoder))
        case "message": .message(try LiveChatMessage(from: decoder))
        case "marker": .marker(try LiveChatMarker(from: decoder))
        case "unread": .unread(try LiveUnread(from: decoder))
        default: throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "unknown event type \(type)"))
        }
    }

    public func encodeData(to encoder: any Encoder) throws {
        switch self {
        case .location(let value): try value.encode(to: encoder)
        case .status(let value): try value.encode(to: encoder)
        case .eta(let value): try value.encode(to: encoder)
        case .notification(let value): try value.encode(to: encoder)
        case .duty(let value): try value.encode(to: encoder)
        case .message(let value): try value.encode(to: encoder)
        case .marker(let value): try value.encode(to: encoder)
        case .unread(let value): try value.encode(to: encoder)
        }
    }
}

/// What a client sends.
public enum LiveCommand: Sendable, Hashable, Codable {
    /// Start receiving a topic; with `since`, first every stored event after that id.
    case subscribe(topic: String, since: Int64?)
    case unsubscribe(topic: String)
    case ping
    /// A driver's positions, as `POST /drivers/me/locations` takes them (times in Unix
    /// milliseconds), over the connection the app has open anyway: no HTTP request and no session
    /// check per report. Answered with a `reported` reply carrying the same `ref`.
    case report(ref: String?, positions: [PositionReport])

    enum CodingKeys: String, CodingKey { case type, topic, since, ref, positions }

    /// The `since` a client may send: event ids are positive and stay below 2^53 (what JavaScript
    /// numbers hold exactly). Anything else is answered `invalid_since`, never used in arithmetic.
    public static let validSince: ClosedRange<Int64> = 0...(Int64(1) << 53 - 1)

    /// Whether a subscription's `since` may be used.
    public static func isValidSince(_ since: Int64?) -> Bool {
        since.map(validSince.contains) ?? true
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        switch try c.decode(String.self, forKey: .type) {
        case "subscribe": self = .subscribe(topic: try c.decode(String.self, forKey: .topic), since: try c.decodeIfPresent(Int64.self, forKey: .since))
        case "unsubscribe": self = .unsubscribe(topic: try c.decode(String.self, forKey: .topic))
        case "ping": self = .ping
        case "report":
            self = .report(ref: try c.decodeIfPresent(String.self, forKey: .ref), positions: try c.decode([PositionReport].self, forKey: .positions))
        case let other: throw DecodingError.dataCorruptedError(forKey: .type, in: c, debugDescription: "unknown command \(other)")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .subscribe(let topic, let since):
            try c.encode("subscribe", forKey: .type)
            try c.encode(topic, forKey: .topic)
            try c.encodeIfPresent(since, forKey: .since)
        case .unsubscribe(let topic):
            try c.encode("unsubscribe", forKey: .type)
            try c.encode(topic, forKey: .topic)
        case .ping:
            try c.encode("ping", forKey: .type)
        case .report(let ref, let positions):
            try c.encode("report", forKey: .type)
            try c.encodeIfPresent(ref, forKey: .ref)
            try c.encode(positions, forKey: .positions)
        }
    }
}

/// The answer to a `report` command: what `POST /drivers/me/locations` answers, or its error.
public struct LiveReportReceipt: Sendable, Hashable, Codable {
    public struct Refusal: Sendable, Hashable, Codable {
        public var code: String
        public var message: String
        public var fields: [String: String]?

        public init(code: String, message: String, fields: [String: String]? = nil) {
            self.code = code
            self.message = message
            self.fields = fields
        }
    }

    /// The command's `ref`, so that an app with several reports under way knows which this is.
    public var ref: String?
    public var accepted: Int
    public var ignored: Int
    public var orders: Int
    /// Set when nothing was stored: `off_duty`, `validation_failed` (with `fields`), `rate_limited`, `forbidden`…
    public var error: Refusal?

    public init(ref: String?, accepted: Int = 0, ignored: Int = 0, orders: Int = 0, error: Refusal? = nil) {
        self.ref = ref
        self.accepted = accepted
        self.ignored = ignored
        self.orders = orders
        self.error = error
    }
}

/// The server's answers to commands.
public enum LiveReply: Sendable, Hashable, Codable {
    /// Subscribed; `replayed` stored events were sent first. `complete` is false when older events
    /// than `since` had already been pruned: refetch the state over HTTP.
    case subscribed(topic: String, replayed: Int, complete: Bool)
    case unsubscribed(topic: String)
    case error(code: String, message: String, topic: String?)
    case pong
    case reported(LiveReportReceipt)

    enum CodingKeys: String, CodingKey { case type, topic, replayed, complete, code, message }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        switch try c.decode(String.self, forKey: .type) {
        case "subscribed":
            self = .subscribed(topic: try c.decode(String.self, forKey: .topic), replayed: try c.decode(Int.self, forKey: .replayed),
                               complete: try c.decode(Bool.self, forKey: .complete))
        case "unsubscribed": self = .unsubscribed(topic: try c.decode(String.self, forKey: .topic))
        case "error":
            self = .error(code: try c.decode(String.self, forKey: .code), message: try c.decode(String.self, forKey: .message),
                          topic: try c.decodeIfPresent(String.self, forKey: .topic))
        case "pong": self = .pong
        case "reported": self = .reported(try LiveReportReceipt(from: decoder))
        case let other: throw DecodingError.dataCorruptedError(forKey: .type, in: c, debugDescription: "unknown reply \(other)")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .subscribed(let topic, let replayed, let complete):
            try c.encode("subscribed", forKey: .type)
            try c.encode(topic, forKey: .topic)
            try c.encode(replayed, forKey: .replayed)
            try c.encode(complete, forKey: .complete)
        case .unsubscribed(let topic):
            try c.encode("unsubscribed", forKey: .type)
            try c.encode(topic, forKey: .topic)
        case .error(let code, let message, let topic):
            try c.encode("error", forKey: .type)
            try c.encode(code, forKey: .code)
            try c.encode(message, forKey: .message)
            try c.encodeIfPresent(topic, forKey: .topic)
        case .pong:
            try c.encode("pong", forKey: .type)
        case .reported(let receipt):
            try c.encode("reported", forKey: .type)
            try receipt.encode(to: encoder)
        }
    }
}

/// Anything the server sends: an event or a reply. Clients decode this.
public enum LiveServerMessage: Sendable, Hashable, Decodable {
    case event(LiveEvent)
    case reply(LiveReply)

    enum CodingKeys: String, CodingKey { case type }

    public init(from decoder: any Decoder) throws {
        let type = try decoder.container(keyedBy: CodingKeys.self).decode(String.self, forKey: .type)
        switch type {
        case "subscribed", "unsubscribed", "error", "pong", "reported": self = .reply(try LiveReply(from: decoder))
        default: self = .event(try LiveEvent(from: decoder))
        }
    }
}
