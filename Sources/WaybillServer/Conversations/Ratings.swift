import Fluent
import Foundation
import SQLKit
import Vapor
import WaybillCore

/// One rating. Pending ratings are seen by their author alone; published ones by everyone (the
/// private note by the rated person and staff only).
final class RatingRecord: Model, @unchecked Sendable {
    static let schema = "ratings"

    @ID(custom: "id", generatedBy: .user) var id: RatingID?
    /// `shipment` or `parcel` (an outside carrier's).
    @Field(key: "subject_kind") var subjectKind: String
    @Field(key: "subject_id") var subjectID: UUID
    @Field(key: "direction") var direction: RatingDirection
    @Field(key: "reviewer_id") var reviewerID: UserID
    /// `person:<id>` or `carrier:<code>`: one rating per reviewer, subject and ratee.
    @Field(key: "ratee_key") var rateeKey: String
    @OptionalField(key: "ratee_id") var rateeID: UserID?
    @OptionalField(key: "carrier") var carrier: String?
    @Field(key: "stars") var stars: Int
    /// Comma-separated tag codes.
    @Field(key: "tags") var tagList: String
    @OptionalField(key: "comment") var comment: String?
    @OptionalField(key: "private_note") var privateNote: String?
    @Field(key: "status") var status: RatingStatus
    @Field(key: "created_at") var createdAt: Int64
    /// When the subject's rating window closes: a pending rating is published then at the latest.
    @Field(key: "window_closes_at") var windowClosesAt: Int64
    @OptionalField(key: "published_at") var publishedAt: Int64?
    @OptionalField(key: "response") var response: String?
    @OptionalField(key: "responded_at") var respondedAt: Int64?
    /// Hidden by the administration (033), with the reason its author is shown; nil when shown.
    @OptionalField(key: "hidden_at") var hiddenAt: Int64?
    @OptionalField(key: "hidden_reason") var hiddenReason: String?

    var properties: [any AnyProperty] {
        [$id, $subjectKind, $subjectID, $direction, $reviewerID, $rateeKey, $rateeID, $carrier, $stars, $tagList, $comment, $privateNote,
         $status, $createdAt, $windowClosesAt, $publishedAt, $response, $respondedAt, $hiddenAt, $hiddenReason]
    }

    init() {}

    var tags: [String] { tagList.split(separator: ",").map(String.init) }
    var ratee: Ratee { rateeID.map(Ratee.person) ?? .carrier(carrier ?? "") }
}

/// A rating as one reader sees it.
struct RatingView: Sendable {
    var record: RatingRecord
    var reviewerName: String
    var rateeName: String?
    /// The private note, for the rated person and staff.
    var showsPrivateNote: Bool
    /// The viewer may answer it now (`RatingPolicy.mayAnswer`).
    var mayAnswer = false
}

/// Ratings both ways (issue 17, item 5): after delivery, each party of a shipment rates the other
/// (the receiver with an account rates who brought it), and people rate outside carriers for their
/// parcels. A rating whose counterpart may still come stays hidden until both are in or the window
/// closes; aggregates are recomputed only at publication and shown from a minimum count.
struct Ratings: WaybillService {
    let services: WaybillServices
    let db: any Database
    let logger: Logger

    var minimumCount: Int { services.config.ratingsMinimumCount }

    // MARK: shipments

    /// What the caller may still rate on a shipment, whom, and until when.
    struct ShipmentRatings: Sendable {
        var open: [(direction: RatingDirection, ratee: User)]
        var window: RatingPolicy.Window
        var ratings: [RatingView]
    }

    private func shipment(_ id: OrderID, for me: Principal) async throws -> (Order, Set<ShipmentRole>) {
        guard let order = try await Order.find(id, on: db) else { throw WaybillError.notFound }
        let capacities = OrderPolicy.capacities(of: me.caller, for: order.parties)
        guard OrderPolicy.allows(.see, status: order.status, as: capacities) else { throw WaybillError.notFound }
        return (order, Set(capacities.compactMap(\.shipmentRole)))
    }

    static func completedAt(_ order: Order) -> Int64? {
        order.status == .delivered ? (order.deliveredAt ?? order.updatedAt) : nil
    }

    func shipmentRatings(_ id: OrderID, for me: Principal) async throws -> ShipmentRatings {
        try await publishDue()
        let (order, roles) = try await shipment(id, for: me)
        let window = RatingPolicy.window(completedAt: Self.completedAt(order), now: UnixTime.nowMillis)
        let records = try await RatingRecord.query(on: db).filter(\.$subjectKind == "shipment").filter(\.$subjectID == id.rawValue).sort(\.$createdAt).all()
        var open: [(RatingDirection, User)] = []
        if case .open = window {
            let people = try await Conversations.people(Set(RatingPolicy.directions(shipment: roles, caller: me.userID, sender: order.customerID,
                                                                                     carrier: order.driverID).map(\.1)), on: db)
            for (direction, ratee) in RatingPolicy.directions(shipment: roles, caller: me.userID, sender: order.customerID, carrier: order.driverID)
                where !records.contains(where: { $0.reviewerID == me.userID && $0.rateeKey == Ratee.person(ratee).key }) {
                if let user = people[ratee] { open.append((direction, user)) }
            }
        }
        let staff = me.may(.dispatch)
        let visible = records.filter {
            RatingPolicy.maySee(reviewer: $0.reviewerID, published: $0.status == .published, hidden: $0.hiddenAt != nil, by: me.caller)
        }
        return ShipmentRatings(open: open, window: window, ratings: try await views(visible, for: me.userID, staff: staff))
    }

    /// Rates a delivered shipment's other party: `ratee` may be left out when there is one only.
    func rate(shipment id: OrderID, ratee: UserID?, _ draft: RatingDraft, by me: Principal) async throws -> RatingView {
        let (order, roles) = try await shipment(id, for: me)
        guard RatingPolicy.ratesShipments(roles) else { throw WaybillError.forbidden }
        let closesAt = try windowCloses(Self.completedAt(order))
        let directions = RatingPolicy.directions(shipment: roles, caller: me.userID, sender: order.customerID, carrier: order.driverID)
        guard !directions.isEmpty else { throw WaybillError(.conflict, .conflict, "There is nobody else to rate on this shipment.") }
        let chosen: (RatingDirection, UserID)
        if let ratee {
            guard let match = directions.first(where: { $0.1 == ratee }) else { throw WaybillError.validation("rateeId", "not_a_party") }
            chosen = match
        } else {
            guard directions.count == 1 else { throw WaybillError.validation("rateeId", "required") }
            chosen = directions[0]
        }
        return try await store(subject: .shipment(id), direction: chosen.0, ratee: .person(chosen.1), draft, closesAt: closesAt, by: me)
    }

    // MARK: outside carriers

    /// Rates the carrier of a delivered parcel one follows (its owner).
    func rate(parcel id: ParcelID, _ draft: RatingDraft, by me: Principal) async throws -> RatingView {
        let record = try await Parcels(services: services, db: db, logger: logger).parcel(id, for: me)
        guard record.ownerID == me.userID else { throw WaybillError.forbidden }
        let closesAt = try windowCloses(record.status == .delivered ? record.updatedAt : nil)
        return try await store(subject: .parcel(id), direction: .personToCarrierCompany, ratee: .carrier(record.carrier), draft,
                               closesAt: closesAt, by: me)
    }

    private func windowCloses(_ completedAt: Int64?) throws -> Int64 {
        switch RatingPolicy.window(completedAt: completedAt, now: UnixTime.nowMillis) {
        case .notYet: throw WaybillError(.conflict, .conflict, "It can be rated once it has been delivered.")
        case .closed: throw WaybillError(.conflict, .conflict, "The \(RatingPolicy.windowDays) days to rate it have passed.")
        case .open(let closesAt): return closesAt
        }
    }

    private func store(subject: DeliverySubject, direction: RatingDirection, ratee: Ratee, _ draft: RatingDraft, closesAt: Int64,
                       by me: Principal) async throws -> RatingView {
        let errors = draft.validate(direction: direction)
        guard errors.isEmpty else { throw WaybillError.validation(errors) }
        let record = RatingRecord()
        record.id = .generated()
        record.subjectKind = subject.kind
        record.subjectID = subject.uuid
        record.direction = direction
        record.reviewerID = me.userID
        record.rateeKey = ratee.key
        switch ratee {
        case .person(let id): record.rateeID = id
        case .carrier(let code): record.carrier = code
        }
        record.stars = draft.stars
        record.tagList = draft.tags.joined(separator: ",")
        record.comment = RatingDraft.clean(draft.comment)
        record.privateNote = RatingDraft.clean(draft.privateNote)
        record.status = .pending
        record.createdAt = UnixTime.nowMillis
        record.windowClosesAt = closesAt
        do {
            try await db.writeTransaction(services) { db in
                if try await RatingRecord.query(on: db).filter(\.$subjectKind == subject.kind).filter(\.$subjectID == subject.uuid)
                    .filter(\.$reviewerID == record.reviewerID).filter(\.$rateeKey == record.rateeKey).first() != nil {
                    throw WaybillError(.conflict, .conflict, "You have rated this already.")
                }
                try await record.create(on: db)
                // Its counterpart: the other side's rating of this reviewer on the same subject.
                var counterpart: RatingRecord?
                if let other = direction.counterpart, let rateeID = record.rateeID {
                    counterpart = try await RatingRecord.query(on: db).filter(\.$subjectKind == subject.kind).filter(\.$subjectID == subject.uuid)
                        .filter(\.$direction == other).filter(\.$reviewerID == rateeID).filter(\.$rateeKey == Ratee.person(me.userID).key).first()
                }
                if RatingPolicy.publishesAtOnce(direction, counterpartIn: counterpart != nil) {
                    try await Self.publish([record] + (counterpart.map { $0.status == .pending ? [$0] : [] } ?? []), on: db)
                }
            }
        } catch where Conversations.isUniqueViolation(error) {
            throw WaybillError(.conflict, .conflict, "You have rated this already.")
        }
        return try await views([record], for: me.userID, staff: me.may(.dispatch))[0]
    }

    /// Publishes ratings and adds them to their ratees' aggregates, in the caller's transaction.
    static func publish(_ records: [RatingRecord], on db: any Database) async throws {
        guard let sql = db.tracedSQL else { return }
        let now = UnixTime.nowMillis
        for record in records where record.status == .pending {
            record.status = .published
            record.publishedAt = now
            try await record.save(on: db)
            // Hidden by the moderators before publication: it joins the average when shown again.
            if record.hiddenAt == nil { try await count(record, sign: 1, on: sql) }
        }
    }

    /// Adds a rating to its ratee's aggregate (`sign` 1), or takes it out (-1: hidden by the moderators).
    static func count(_ record: RatingRecord, sign: Int, on sql: any SQLDatabase) async throws {
        let now = UnixTime.nowMillis
        try await sql.insert(into: "rating_aggregates").columns("ratee_key", "count", "stars_total", "updated_at")
            .values(SQLBind(record.rateeKey), SQLBind(sign), SQLBind(sign * record.stars), SQLBind(now))
            .onConflict(with: ["ratee_key"]) { conflict in
                conflict.set(SQLIdentifier("count"), to: SQLBinaryExpression(SQLColumn("count", table: "rating_aggregates"), .add, SQLBind(sign)))
                    .set(SQLIdentifier("stars_total"), to: SQLBinaryExpression(SQLColumn("stars_total", table: "rating_aggregates"), .add, SQLBind(sign * record.stars)))
                    .set("updated_at", to: SQLBind(now))
            }.run()
    }

    /// Pending ratings whose window has closed are published (their counterpart did not come).
    func publishDue() async throws {
        let now = UnixTime.nowMillis
        let due = try await RatingRecord.query(on: db).filter(\.$status == .pending).filter(\.$windowClosesAt <= now).limit(500).all()
        guard !due.isEmpty else { return }
        let ids = try due.map { try $0.storedID }
        try await db.writeTransaction(services) { db in
            // Read again inside: another process may have published them meanwhile.
            let still = try await RatingRecord.query(on: db).filter(\.$id ~~ ids).filter(\.$status == .pending).all()
            try await Self.publish(still, on: db)
        }
    }

    // MARK: reading

    /// What everyone sees of a person's or a carrier's ratings: the count, the average from the
    /// minimum count on, and the newest published ratings with their answers.
    func profile(_ ratee: Ratee, for me: Principal) async throws -> (summary: RatingSummary, items: [RatingView]) {
        try await publishDue()
        if case .person(let id) = ratee, try await User.find(id, on: db) == nil { throw WaybillError.notFound }
        if case .carrier(let code) = ratee, CarrierDetection.standard.carrierNames[code] == nil { throw WaybillError.notFound }
        guard let sql = db.tracedSQL else { throw WaybillError.notFound }
        let row = try await sql.select().columns("count", "stars_total").from("rating_aggregates").where("ratee_key", .equal, SQLBind(ratee.key)).first()
        let count = try row?.decode(column: "count", as: Int.self) ?? 0
        let total = try row?.decode(column: "stars_total", as: Int.self) ?? 0
        let summary = RatingSummary(count: count, starsTotal: total, minimumCount: minimumCount)
        // The ratings themselves show from the same count: a single one would reveal who said what.
        guard summary.average != nil else { return (summary, []) }
        // A profile shows what everyone may read: reviews the moderators hid are left out (and out of the average).
        let records = try await RatingRecord.query(on: db).filter(\.$rateeKey == ratee.key).filter(\.$status == .published)
            .filter(\.$hiddenAt == nil).sort(\.$publishedAt, .descending).limit(50).all()
        return (summary, try await views(records, for: me.userID, staff: me.may(.dispatch)))
    }

    /// The rated person answers a published rating publicly, once.
    func respond(_ id: RatingID, text: String, by me: Principal) async throws -> RatingView {
        guard let record = try await RatingRecord.find(id, on: db),
              record.rateeID == me.userID || record.reviewerID == me.userID || me.may(.dispatch),
              RatingPolicy.maySee(reviewer: record.reviewerID, published: record.status == .published, hidden: record.hiddenAt != nil,
                                  by: me.caller) else { throw WaybillError.notFound }
        guard record.rateeID == me.userID else { throw WaybillError.forbidden }
        guard record.status == .published else { throw WaybillError(.conflict, .conflict, "A rating is answered once it is published.") }
        guard record.response == nil else { throw WaybillError(.conflict, .conflict, "You have answered this rating already.") }
        guard let answer = RatingDraft.clean(text) else { throw WaybillError.validation("text", "required") }
        let errors = RatingDraft(stars: 1, comment: answer).validate(direction: record.direction)
        if let reason = errors["comment"] { throw WaybillError.validation("text", reason) }
        record.response = answer
        record.respondedAt = UnixTime.nowMillis
        try await db.writeTransaction(services) { db in try await record.save(on: db) }
        return try await views([record], for: me.userID, staff: me.may(.dispatch))[0]
    }

    /// Reports a published review (its author is the person reported) to the moderators. Its
    /// author cannot; anyone who may read it can. Counted with reports from conversations.
    func report(_ id: RatingID, reason: ReportReason, note: String?, by me: Principal) async throws -> ReportRecord {
        guard let record = try await RatingRecord.find(id, on: db),
              RatingPolicy.maySee(reviewer: record.reviewerID, published: record.status == .published, hidden: record.hiddenAt != nil,
                                  by: me.caller) else { throw WaybillError.notFound }
        if record.reviewerID == me.userID { throw WaybillError.validation("ratingId", "self") }
        guard record.status == .published else { throw WaybillError(.conflict, .conflict, "A review is reported once it is published.") }
        let report = ReportRecord()
        report.reportedUserID = record.reviewerID
        report.ratingID = id
        return try await report.file(by: me.userID, reason: reason, note: note, services: services, on: db)
    }

    func views(_ records: [RatingRecord], for userID: UserID, staff: Bool) async throws -> [RatingView] {
        let people = try await Conversations.people(Set(records.map(\.reviewerID) + records.compactMap(\.rateeID)), on: db)
        return records.map { r in
            RatingView(record: r, reviewerName: people[r.reviewerID]?.firstName ?? "",
                       rateeName: r.rateeID.flatMap { people[$0]?.firstName },
                       showsPrivateNote: r.reviewerID == userID || (r.status == .published && (r.rateeID == userID || staff)),
                       mayAnswer: RatingPolicy.mayAnswer(ratee: r.rateeID, published: r.status == .published, answered: r.response != nil, by: userID))
        }
    }
}
