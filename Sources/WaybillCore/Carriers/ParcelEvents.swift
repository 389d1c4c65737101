import Foundation

/// One event of a parcel at its carrier, normalised (issue "Parcels of every carrier", item 2).
public struct ParcelEvent: Sendable, Hashable, Codable {
    /// Unix milliseconds. When the carrier gave no time zone (UPS) the local time is read as UTC
    /// and `timeZoneKnown` is false.
    public var at: Int64
    public var timeZoneKnown: Bool
    /// The time as the carrier wrote it (`2026-11-20T14:03:00+01:00`, `20261120 140300`).
    public var localTime: String
    /// The carrier's own code, kept as it came.
    public var rawCode: String
    /// nil: the code maps to no status (flagged, to be added to the table).
    public var status: ParcelStatus?
    public var description: String
    public var location: String?
    public var latitude: Double?
    public var longitude: Double?
    /// Why it did not go as planned, when the carrier says.
    public var reason: ParcelIncident?

    public init(at: Int64, timeZoneKnown: Bool, localTime: String, rawCode: String, status: ParcelStatus?, description: String,
                location: String? = nil, latitude: Double? = nil, longitude: Double? = nil, reason: ParcelIncident? = nil) {
        self.reason = reason
        self.at = at
        self.timeZoneKnown = timeZoneKnown
        self.localTime = localTime
        self.rawCode = rawCode
        self.status = status
        self.description = description
        self.location = location
        self.latitude = latitude
        self.longitude = longitude
    }

    /// Two reports of the same event (a carrier repeats its whole history on every call).
    public var identity: String { "\(at)|\(rawCode)|\(description)" }
}

/// What a carrier said about one parcel.
public struct CarrierReport: Sendable, Equatable {
    public var number: String
    public var events: [ParcelEvent]
    public var delivered: Bool
    public var estimatedDelivery: Int64?
    public var signedBy: String?

    public init(number: String, events: [ParcelEvent], delivered: Bool = false, estimatedDelivery: Int64? = nil, signedBy: String? = nil) {
        self.number = number
        self.events = events
        self.delivered = delivered
        self.estimatedDelivery = estimatedDelivery
        self.signedBy = signedBy
    }
}

public enum ParcelTracking {
    /// The parcel's status from its events (Karrio's rule): delivered if the carrier says so; no
    /// events, or only "created", pending; else the newest event's status that maps to one;
    /// else in transit.
    public static func overall(_ events: [ParcelEvent], delivered: Bool) -> ParcelStatus {
        if delivered { return .delivered }
        let newestFirst = events.sorted { $0.at > $1.at }
        if newestFirst.isEmpty || newestFirst.allSatisfy({ $0.status == .pending }) { return .pending }
        return newestFirst.lazy.compactMap(\.status).first ?? .inTransit
    }

    /// Stored events plus those newly reported, each once, oldest first.
    public static func merge(_ stored: [ParcelEvent], _ reported: [ParcelEvent]) -> (all: [ParcelEvent], new: [ParcelEvent]) {
        var seen = Set(stored.map(\.identity))
        var added: [ParcelEvent] = []
        for event in reported where seen.insert(event.identity).inserted { added.append(event) }
        return ((stored + added).sorted { $0.at < $1.at }, added.sorted { $0.at < $1.at })
    }

    /// When to ask the carrier again (polling that respects carriers): every `pulse`, sooner (a
    /// quarter of it) while out for delivery; never once final, nor after 90 days (then `expired`).
    public static func nextCheck(status: ParcelStatus, now: Int64, addedAt: Int64, pulseMinutes: Int) -> Int64? {
        if status.isFinal { return nil }
        let (age, overflow) = now.subtractingReportingOverflow(addedAt)
        if overflow || age > 90 * 86_400_000 { return nil }
        let minutes = status == .outForDelivery ? max(5, pulseMinutes / 4) : pulseMinutes
        return now + Int64(minutes) * 60_000
    }

    /// Codes each carrier uses, mapped to Waybill's statuses. A code missing here keeps its raw
    /// value and no status (flagged). DHL's `statusCode` of the Unified API; La Poste Suivi v2's
    /// event codes; UPS's activity `status.type` (the raw code is `type/code`, `I/OR`; an exact
    /// `type/code` entry wins over the type); FedEx's `derivedStatusCode`; USPS's `eventCode`; GLS's
    /// event `code`.
    public static let statusCodes: [String: [String: ParcelStatus]] = [
        "dhl": [
            "pre-transit": .pending, "transit": .inTransit, "delivered": .delivered, "failure": .deliveryFailed, "unknown": .unknown,
        ],
        "la_poste": [
            "DR1": .pending, "PC1": .pickedUp, "PC2": .pickedUp, "ET1": .inTransit, "ET2": .inTransit, "ET3": .inTransit,
            "ET4": .inTransit, "EP1": .onHold, "DO1": .inTransit, "DO2": .inTransit, "DO3": .onHold, "PB1": .onHold,
            "PB2": .deliveryFailed, "MD2": .outForDelivery, "ND1": .deliveryFailed, "AG1": .readyForPickup,
            "RE1": .returnToSender, "DI0": .delivered, "DI1": .delivered, "DI2": .delivered, "DI3": .delivered,
        ],
        "ups": [
            "M": .pending, "MV": .cancelled, "P": .pickedUp, "I": .inTransit, "O": .outForDelivery, "I/OT": .outForDelivery,
            "D": .delivered, "DO": .delivered, "DD": .delivered, "X": .onHold, "X/48": .deliveryFailed, "RS": .returnToSender,
            "W": .onHold, "NA": .unknown,
        ],
        "fedex": [
            "IN": .pending, "OC": .pending, "PU": .pickedUp, "PX": .pickedUp, "AR": .inTransit, "DP": .inTransit, "IT": .inTransit,
            "AF": .inTransit, "AA": .inTransit, "AD": .inTransit, "AP": .inTransit, "OF": .inTransit, "CC": .inTransit,
            "OD": .outForDelivery, "DL": .delivered, "DE": .deliveryFailed, "DY": .deliveryDelayed, "DD": .deliveryDelayed,
            "SE": .onHold, "CD": .onHold, "HL": .readyForPickup, "HP": .readyForPickup, "RS": .returnToSender,
            "RP": .returnToSender, "CA": .cancelled,
        ],
        "usps": [
            "GX": .pending, "MA": .pending, "03": .pickedUp, "80": .pickedUp, "OA": .pickedUp, "10": .inTransit,
            "07": .inTransit, "U1": .inTransit, "A1": .inTransit, "T1": .inTransit, "L1": .inTransit, "82": .inTransit,
            "OF": .outForDelivery, "01": .delivered, "17": .delivered, "02": .deliveryFailed, "04": .deliveryFailed,
            "05": .deliveryFailed, "21": .deliveryFailed, "22": .deliveryFailed, "53": .readyForPickup,
            "09": .returnToSender, "31": .returnToSender, "16": .deliveryDelayed,
        ],
        "gls": [
            "PREADVICE": .pending, "INPICKUP": .pickedUp, "INTRANSIT": .inTransit, "INWAREHOUSE": .inTransit,
            "INDELIVERY": .outForDelivery, "DELIVERED": .delivered, "DELIVEREDPS": .delivered, "NOTDELIVERED": .deliveryFailed,
            "INPARCELSHOP": .readyForPickup, "RETURNED": .returnToSender, "CANCELED": .cancelled, "HOLD": .onHold,
        ],
    ]

    /// Incident reasons by carrier: FedEx's `exceptionCode`, USPS's `eventCode`, La Poste's event
    /// code, UPS's `type/code` of an exception.
    public static let reasonCodes: [String: [String: ParcelIncident]] = [
        "fedex": ["08": .consigneeNotHome, "07": .consigneeRefused, "03": .incorrectAddress, "A12": .customs, "16": .damaged,
                  "34": .weather, "15": .carrierDelay, "04": .consigneeRefused, "05": .incorrectAddress],
        "usps": ["02": .consigneeNotHome, "04": .consigneeRefused, "05": .incorrectAddress, "21": .incorrectAddress,
                 "22": .incorrectAddress, "16": .carrierDelay],
        "la_poste": ["ND1": .incorrectAddress, "PB2": .consigneeNotHome, "DO3": .customs],
        "ups": ["X/48": .consigneeNotHome, "X/4A": .consigneeRefused, "X/B5": .incorrectAddress, "X/CN": .customs, "X/WT": .weather],
    ]

    public static func reason(carrier: String, code: String) -> ParcelIncident? {
        reasonCodes[carrier]?[code]
    }

    public static func status(carrier: String, code: String) -> ParcelStatus? {
        guard let table = statusCodes[carrier] else { return nil }
        if let exact = table[code] { return exact }
        guard let slash = code.firstIndex(of: "/") else { return nil }
        return table[String(code[..<slash])]
    }
}

/// Where an event happened, for the map: the carrier's own coordinates, or its place text looked
/// up in the offline gazetteer (a postal code, a locality, or only the country's centre), which is
/// approximate and shown as such.
public struct EventPlace: Sendable, Equatable, Codable {
    public enum Precision: String, Sendable, Codable, CaseIterable {
        /// Coordinates the carrier gave.
        case carrier
        case postalCode = "postal_code"
        case locality
        case country
    }

    public var latitude: Double
    public var longitude: Double
    public var precision: Precision
    public var approximate: Bool { precision != .carrier }

    public init(latitude: Double, longitude: Double, precision: Precision) {
        self.latitude = latitude
        self.longitude = longitude
        self.precision = precision
    }
}

extension ParcelEvent {
    /// The event's place on a map, or nil when neither the carrier nor the gazetteer knows it.
    public func place(in gazetteer: Gazetteer = .standard) -> EventPlace? {
        if let latitude, let longitude, latitude.isFinite, longitude.isFinite, abs(latitude) <= 90, abs(longitude) <= 180 {
            return EventPlace(latitude: latitude, longitude: longitude, precision: .carrier)
        }
        guard let location, let guess = gazetteer.locate(location) else { return nil }
        let precision: EventPlace.Precision = switch guess.precision {
        case .postalCode: .postalCode
        case .locality: .locality
        case .country: .country
        }
        return EventPlace(latitude: guess.latitude, longitude: guess.longitude, precision: precision)
    }
}
