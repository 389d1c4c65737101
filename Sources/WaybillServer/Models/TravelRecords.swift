import Fluent
import Foundation
import WaybillCore

/// An area of the hierarchy travellers go between (`WaybillCore.Area`).
final class AreaRecord: Model, @unchecked Sendable {
    static let schema = "areas"

    @ID(custom: "id", generatedBy: .user) var id: String?
    @OptionalField(key: "parent_id") var parentID: String?
    @Field(key: "level") var level: String
    @Field(key: "name") var name: String
    /// Names by language, as JSON.
    @Field(key: "names") var names: String
    @OptionalField(key: "latitude") var latitude: Double?
    @OptionalField(key: "longitude") var longitude: Double?
    /// Other search words, "|"-separated.
    @Field(key: "keywords") var keywords: String
    @Field(key: "updated_at") var updatedAt: Int64

    var properties: [any AnyProperty] { [$id, $parentID, $level, $name, $names, $latitude, $longitude, $keywords, $updatedAt] }

    init() {}

    init(_ area: Area, at now: Int64) {
        id = area.id.rawValue
        updatedAt = now
        set(area)
    }

    func set(_ area: Area) {
        parentID = area.parent?.rawValue
        level = area.level
        name = area.name
        names = (try? String(decoding: JSONEncoder.sorted.encode(area.names), as: UTF8.self)) ?? "{}"
        latitude = area.coordinate?.latitude
        longitude = area.coordinate?.longitude
        keywords = area.keywords.joined(separator: "|")
    }

    var area: Area {
        let coordinate = latitude.flatMap { lat in longitude.map { Coordinate(latitude: lat, longitude: $0) } }
        return Area(id: AreaID(id ?? ""), parent: parentID.map { AreaID(rawValue: $0) }, level: level, name: name,
                    names: (try? JSONDecoder().decode([String: String].self, from: Data(names.utf8))) ?? [:],
                    coordinate: coordinate, keywords: keywords.split(separator: "|").map(String.init))
    }
}

extension JSONEncoder {
    /// Keys sorted: the same value always gives the same text.
    static var sorted: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }
}

/// A trip a traveller posted (`WaybillCore.TripDraft`, `Trip`).
final class TripRecord: Model, @unchecked Sendable {
    static let schema = "trips"

    @ID(custom: "id", generatedBy: .user) var id: TripID?
    @Field(key: "traveller_id") var travellerID: UserID
    @Field(key: "from_area_id") var fromAreaID: String
    @Field(key: "to_area_id") var toAreaID: String
    @OptionalField(key: "from_latitude") var fromLatitude: Double?
    @OptionalField(key: "from_longitude") var fromLongitude: Double?
    @OptionalField(key: "to_latitude") var toLatitude: Double?
    @OptionalField(key: "to_longitude") var toLongitude: Double?
    @Field(key: "departure_date") var departureDate: String
    @Field(key: "earliest") var earliest: String
    @Field(key: "latest") var latest: String
    @Field(key: "time_zone") var timeZone: String
    @Field(key: "departs_from") var departsFrom: Int64
    @Field(key: "departs_until") var departsUntil: Int64
    @Field(key: "capacity_grams") var capacityGrams: Int
    @Field(key: "capacity_parcels") var capacityParcels: Int
    @Field(key: "booked_grams") var bookedGrams: Int
    @Field(key: "booked_parcels") var bookedParcels: Int
    /// Category ids, comma-separated.
    @Field(key: "categories") var categories: String
    @OptionalField(key: "minimum_reward") var minimumReward: Int?
    @Field(key: "currency") var currency: String
    @OptionalField(key: "notes") var notes: String?
    @OptionalField(key: "cancelled_at") var cancelledAt: Int64?
    @Field(key: "created_at") var createdAt: Int64
    @Field(key: "updated_at") var updatedAt: Int64
    /// Hidden by the administration (033), with the reason its author is shown; nil when shown.
    @OptionalField(key: "hidden_at") var hiddenAt: Int64?
    @OptionalField(key: "hidden_reason") var hiddenReason: String?

    var properties: [any AnyProperty] {
        [$id, $travellerID, $fromAreaID, $toAreaID, $fromLatitude, $fromLongitude, $toLatitude, $toLongitude, $departureDate,
         $earliest, $latest, $timeZone, $departsFrom, $departsUntil, $capacityGrams, $capacityParcels, $bookedGrams, $bookedParcels,
         $categories, $minimumReward, $currency, $notes, $cancelledAt, $createdAt, $updatedAt, $hiddenAt, $hiddenReason]
    }

    init() {}

    init(id: TripID, traveller: UserID, plan: Trip.Plan, currency: String, at now: Int64) {
        self.id = id
        travellerID = traveller
        bookedGrams = 0
        bookedParcels = 0
        createdAt = now
        self.currency = currency
        set(plan, at: now)
    }

    func set(_ plan: Trip.Plan, at now: Int64) {
        let d = plan.draft
        fromAreaID = d.from.rawValue
        toAreaID = d.to.rawValue
        fromLatitude = d.fromPoint?.latitude
        fromLongitude = d.fromPoint?.longitude
        toLatitude = d.toPoint?.latitude
        toLongitude = d.toPoint?.longitude
        departureDate = d.date
        earliest = d.earliest
        latest = d.latest
        timeZone = d.timeZone
        departsFrom = plan.departsFrom
        departsUntil = plan.departsUntil
        capacityGrams = d.capacityGrams
        capacityParcels = d.capacityParcels
        categories = d.categories.joined(separator: ",")
        minimumReward = d.minimumReward
        notes = d.notes
        updatedAt = now
    }

    static func point(_ lat: Double?, _ lon: Double?) -> Coordinate? {
        lat.flatMap { la in lon.map { Coordinate(latitude: la, longitude: $0) } }
    }

    var draft: TripDraft {
        TripDraft(from: AreaID(fromAreaID), to: AreaID(toAreaID), fromPoint: Self.point(fromLatitude, fromLongitude),
                  toPoint: Self.point(toLatitude, toLongitude), date: departureDate, earliest: earliest, latest: latest,
                  timeZone: timeZone, capacityGrams: capacityGrams, capacityParcels: capacityParcels,
                  categories: categories.split(separator: ",").map(String.init), minimumReward: minimumReward, notes: notes)
    }

    func status(at now: Int64) -> TripStatus {
        Trip.status(cancelled: cancelledAt != nil, departsUntil: departsUntil, gramsLeft: capacityGrams - bookedGrams,
                    parcelsLeft: capacityParcels - bookedParcels, now: now)
    }

    var candidate: TripCandidate {
        get throws {
            TripCandidate(id: try storedID, traveller: travellerID, from: AreaID(fromAreaID), to: AreaID(toAreaID),
                          fromPoint: Self.point(fromLatitude, fromLongitude), toPoint: Self.point(toLatitude, toLongitude),
                          departsFrom: departsFrom, departsUntil: departsUntil, gramsLeft: capacityGrams - bookedGrams,
                          parcelsLeft: capacityParcels - bookedParcels, categories: categories.split(separator: ",").map(String.init),
                          minimumReward: minimumReward)
        }
    }
}

/// A sender's request for a place on a trip (`WaybillCore.TripRequestDraft`, `TripRequestMachine`).
final class TripRequestRecord: Model, @unchecked Sendable {
    static let schema = "trip_requests"

    @ID(custom: "id", generatedBy: .user) var id: TripRequestID?
    @Field(key: "trip_id") var tripID: TripID
    @Field(key: "sender_id") var senderID: UserID
    @Field(key: "traveller_id") var travellerID: UserID
    @Field(key: "status") var status: TripRequestStatus
    @Field(key: "category") var category: String
    @Field(key: "grams") var grams: Int
    @Field(key: "declared_value") var declaredValue: Int
    @Field(key: "description") var description: String
    @Field(key: "receiver_name") var receiverName: String
    @OptionalField(key: "receiver_email") var receiverEmail: String?
    @OptionalField(key: "receiver_phone") var receiverPhone: String?
    @Field(key: "payment_method") var paymentMethod: PaymentMethod
    @Field(key: "price_total") var priceTotal: Int
    @Field(key: "traveller_share") var travellerShare: Int
    @Field(key: "platform_fee") var platformFee: Int
    @Field(key: "currency") var currency: String
    @Field(key: "attestation") var attestation: String
    @Field(key: "attested_at") var attestedAt: Int64
    @OptionalField(key: "photo_name") var photoName: String?
    @OptionalField(key: "photo_type") var photoType: String?
    @OptionalField(key: "photo_width") var photoWidth: Int?
    @OptionalField(key: "photo_height") var photoHeight: Int?
    @OptionalField(key: "photo_bytes") var photoBytes: Int?
    @OptionalField(key: "shipment_id") var shipmentID: OrderID?
    @Field(key: "answer_by") var answerBy: Int64
    @OptionalField(key: "pay_by") var payBy: Int64?
    @Field(key: "created_at") var createdAt: Int64
    @Field(key: "updated_at") var updatedAt: Int64
    @OptionalField(key: "reason") var reason: String?

    var properties: [any AnyProperty] {
        [$id, $tripID, $senderID, $travellerID, $status, $category, $grams, $declaredValue, $description, $receiverName,
         $receiverEmail, $receiverPhone, $paymentMethod, $priceTotal, $travellerShare, $platformFee, $currency, $attestation,
         $attestedAt, $photoName, $photoType, $photoWidth, $photoHeight, $photoBytes, $shipmentID, $answerBy, $payBy, $createdAt, $updatedAt, $reason]
    }

    init() {}

    var receiver: Recipient { Recipient(name: receiverName, email: receiverEmail, phone: receiverPhone) }
    var price: TravelPrice {
        TravelPrice(total: Money(priceTotal, currency), travellerShare: Money(travellerShare, currency), platformFee: Money(platformFee, currency))
    }
}

/// An account's profile picture (`WaybillCore.ProfilePicturePolicy`): square, sanitized, in the file store.
final class ProfilePicture: Model, @unchecked Sendable {
    static let schema = "profile_pictures"

    @ID(custom: "user_id", generatedBy: .user) var id: UserID?
    @Field(key: "storage_name") var storageName: String
    @Field(key: "content_type") var contentType: String
    @Field(key: "side") var side: Int
    @Field(key: "byte_count") var byteCount: Int
    @Field(key: "updated_at") var updatedAt: Int64
    /// Hidden by the administration (033): shown to nobody but its owner and admins.
    @OptionalField(key: "hidden_at") var hiddenAt: Int64?
    @OptionalField(key: "hidden_reason") var hiddenReason: String?

    var properties: [any AnyProperty] { [$id, $storageName, $contentType, $side, $byteCount, $updatedAt, $hiddenAt, $hiddenReason] }

    init() {}
}

/// A connected account of the sandbox payment provider (development: onboarding is a test page).
final class SandboxAccount: Model, @unchecked Sendable {
    static let schema = "sandbox_accounts"

    @ID(custom: "id", generatedBy: .user) var id: String?
    @Field(key: "user_id") var userID: UserID
    @Field(key: "details_submitted") var detailsSubmitted: Bool
    /// The transfers capability: `inactive` until the test onboarding is completed, then `active`.
    @Field(key: "transfers") var transfers: String
    @Field(key: "created_at") var createdAt: Int64

    var properties: [any AnyProperty] { [$id, $userID, $detailsSubmitted, $transfers, $createdAt] }

    init() {}
}

/// A parcel of another carrier a person follows (`WaybillCore.ParcelDraft`).
final class ParcelRecord: Model, @unchecked Sendable {
    static let schema = "parcels"

    @ID(custom: .id, generatedBy: .user) var id: ParcelID?
    @Field(key: "owner_id") var ownerID: UserID
    @Field(key: "number") var number: String
    @Field(key: "carrier") var carrier: String
    @OptionalField(key: "format") var format: String?
    @Field(key: "pinned") var pinned: Bool
    @OptionalField(key: "name") var name: String?
    @OptionalField(key: "notes") var notes: String?
    @Field(key: "status") var status: ParcelStatus
    @Field(key: "created_at") var createdAt: Int64
    @Field(key: "updated_at") var updatedAt: Int64
    /// When the poller asks the carrier next (nil: never again: final, or older than 90 days).
    @OptionalField(key: "next_check_at") var nextCheckAt: Int64?
    @OptionalField(key: "last_checked_at") var lastCheckedAt: Int64?
    @OptionalField(key: "estimated_delivery") var estimatedDelivery: Int64?
    @Field(key: "check_failures") var checkFailures: Int
    /// The secret of its public link (`/p/{token}`); nil: no link.
    @OptionalField(key: "share_token") var shareToken: String?
    /// The owner's own setting for this parcel; nil: their account's.
    @OptionalField(key: "alerts") var alerts: ParcelAlerts?

    var properties: [any AnyProperty] {
        [$id, $ownerID, $number, $carrier, $format, $pinned, $name, $notes, $status, $createdAt, $updatedAt, $nextCheckAt,
         $lastCheckedAt, $estimatedDelivery, $checkFailures, $shareToken, $alerts]
    }

    init() {}
}

/// One event of a followed parcel at its carrier (`WaybillCore.ParcelEvent`), stored once.
final class ParcelEventRecord: Model, @unchecked Sendable {
    static let schema = "parcel_events"

    @ID(custom: .id, generatedBy: .database) var id: Int64?
    @Field(key: "parcel_id") var parcelID: ParcelID
    @Field(key: "identity") var identity: String
    @Field(key: "at") var at: Int64
    @Field(key: "time_zone_known") var timeZoneKnown: Bool
    @Field(key: "local_time") var localTime: String
    @Field(key: "raw_code") var rawCode: String
    @OptionalField(key: "status") var status: ParcelStatus?
    @Field(key: "description") var eventDescription: String
    @OptionalField(key: "location") var location: String?
    @OptionalField(key: "latitude") var latitude: Double?
    @OptionalField(key: "longitude") var longitude: Double?
    @OptionalField(key: "reason") var reason: ParcelIncident?

    var properties: [any AnyProperty] {
        [$id, $parcelID, $identity, $at, $timeZoneKnown, $localTime, $rawCode, $status, $eventDescription, $location, $latitude, $longitude, $reason]
    }

    init() {}

    init(parcel: ParcelID, _ e: ParcelEvent) {
        parcelID = parcel
        identity = String(e.identity.prefix(700))
        at = e.at
        timeZoneKnown = e.timeZoneKnown
        localTime = String(e.localTime.prefix(60))
        rawCode = String(e.rawCode.prefix(60))
        status = e.status
        eventDescription = e.description
        location = e.location
        latitude = e.latitude
        longitude = e.longitude
        reason = e.reason
    }

    var event: ParcelEvent {
        ParcelEvent(at: at, timeZoneKnown: timeZoneKnown, localTime: localTime, rawCode: rawCode, status: status, description: eventDescription,
                    location: location, latitude: latitude, longitude: longitude, reason: reason)
    }
}

/// When an account is told about its parcels' news, and how (in the app always).
final class ParcelSettingsRecord: Model, @unchecked Sendable {
    static let schema = "parcel_settings"

    @ID(custom: "user_id", generatedBy: .user) var id: UserID?
    @Field(key: "alerts") var alerts: ParcelAlerts
    @Field(key: "mail") var mail: Bool
    @Field(key: "push") var push: Bool

    var properties: [any AnyProperty] { [$id, $alerts, $mail, $push] }

    init() {}

    /// Every change, in the app, by push and by mail, until the person says otherwise.
    static func defaults(_ user: UserID) -> ParcelSettingsRecord {
        let record = ParcelSettingsRecord()
        record.id = user
        record.alerts = .all
        record.mail = true
        record.push = true
        return record
    }

    static func of(_ user: UserID, on db: any Database) async throws -> ParcelSettingsRecord {
        try await ParcelSettingsRecord.find(user, on: db) ?? .defaults(user)
    }
}
