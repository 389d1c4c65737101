import Foundation

// Trips (issue "Travellers", items 2 and 3): a traveller posts a trip they make anyway, with room
// for a few parcels; senders find it by where and when, and the price comes from the admin's table
// per category and weight, never from a negotiation. The pure rules: validation, a trip's status,
// the tariff, and which trips match a search, in what order.

extension Identifiers { public enum Trip {} }
public typealias TripID = Tagged<Identifiers.Trip, UUID>

/// A kind of parcel travellers carry, with its price.
public struct TravelCategory: Sendable, Hashable, Codable {
    /// A short code ("documents", "small_parcel").
    public var id: String
    /// Its name by language ("en", "fr").
    public var names: [String: String]
    /// The price for any parcel of the category, in minor units.
    public var basePrice: Int
    /// Added per started kilogram beyond the first, in minor units.
    public var pricePerKg: Int
    /// The heaviest parcel of this category, in grams.
    public var maxGrams: Int

    public init(id: String, names: [String: String], basePrice: Int, pricePerKg: Int, maxGrams: Int) {
        self.id = id
        self.names = names
        self.basePrice = basePrice
        self.pricePerKg = pricePerKg
        self.maxGrams = maxGrams
    }

    public func name(in language: String) -> String { names[language] ?? names["en"] ?? id }
}

/// A request's price: what the sender pays, the traveller's share and the platform's fee.
public struct TravelPrice: Sendable, Hashable, Codable {
    public var total: Money
    public var travellerShare: Money
    public var platformFee: Money

    public init(total: Money, travellerShare: Money, platformFee: Money) {
        self.total = total
        self.travellerShare = travellerShare
        self.platformFee = platformFee
    }
}

/// The admin's price table for travellers' deliveries, and what may not be sent.
public struct TravelTariff: Sendable, Hashable, Codable {
    public var currency: String
    public var categories: [TravelCategory]
    /// The platform's share of each price, in percent (the rest goes to the traveller).
    public var platformFeePercent: Int
    /// What may never be sent, shown to senders who attest their parcel holds none of it.
    public var prohibitedItems: [String: [String]]

    public init(currency: String, categories: [TravelCategory], platformFeePercent: Int, prohibitedItems: [String: [String]]) {
        self.currency = currency
        self.categories = categories
        self.platformFeePercent = platformFeePercent
        self.prohibitedItems = prohibitedItems
    }

    public static let maxCategories = 30
    public static let maxPrice = 1_000_000
    public static let maxGrams = 50_000

    public func category(_ id: String) -> TravelCategory? { categories.first { $0.id == id } }

    /// The price of one parcel of `category` weighing `grams`, or nil when the category does not
    /// exist or the parcel is heavier than it allows.
    public func price(category id: String, grams: Int) -> TravelPrice? {
        guard let category = category(id), grams > 0, grams <= category.maxGrams else { return nil }
        // Started kilograms beyond the first: 1 g to 1,000 g costs the base price.
        let extraKg = (grams - 1) / 1000
        let (perKg, o1) = category.pricePerKg.multipliedReportingOverflow(by: extraKg)
        let (total, o2) = category.basePrice.addingReportingOverflow(perKg)
        guard !o1, !o2 else { return nil }
        let fee = total.scaled(by: platformFeePercent, over: 100)
        return TravelPrice(total: Money(total, currency), travellerShare: Money(total - fee, currency), platformFee: Money(fee, currency))
    }

    /// The table cleaned, or its field errors.
    public func validated() -> Result<TravelTariff, FieldErrorsError> {
        var errors = FieldErrors()
        if !Money.isValidCurrency(currency) { errors.add("currency", "invalid") }
        if !(0...50).contains(platformFeePercent) { errors.add("platformFeePercent", "out_of_range") }
        if categories.isEmpty { errors.add("categories", "required") }
        if categories.count > Self.maxCategories { errors.add("categories", "too_many") }
        if Set(categories.map(\.id)).count != categories.count { errors.add("categories", "duplicate") }
        for (i, c) in categories.enumerated() {
            let field = "categories[\(i)]"
            if c.id.isEmpty || c.id.count > 40 || !c.id.allSatisfy({ $0.isASCII && ($0.isLowercase || $0.isNumber || $0 == "_") }) { errors.add(field + ".id", "invalid") }
            if c.names.isEmpty || c.names.values.contains(where: { $0.trimmingCharacters(in: .whitespaces).isEmpty || $0.count > 80 }) { errors.add(field + ".names", "invalid") }
            if !(0...Self.maxPrice).contains(c.basePrice) { errors.add(field + ".basePrice", "out_of_range") }
            if !(0...Self.maxPrice).contains(c.pricePerKg) { errors.add(field + ".pricePerKg", "out_of_range") }
            if !(1...Self.maxGrams).contains(c.maxGrams) { errors.add(field + ".maxGrams", "out_of_range") }
        }
        let items = prohibitedItems.values.flatMap { $0 }
        if items.count > 200 || items.contains(where: { $0.count > 200 }) { errors.add("prohibitedItems", "too_long") }
        return errors.isEmpty ? .success(self) : .failure(FieldErrorsError(errors))
    }

    /// What a new installation starts with (the admin changes it).
    public static let standard = TravelTariff(
        currency: "CHF",
        categories: [
            TravelCategory(id: "documents", names: ["en": "Documents", "fr": "Documents"], basePrice: 1500, pricePerKg: 0, maxGrams: 1000),
            TravelCategory(id: "small_parcel", names: ["en": "Small parcel", "fr": "Petit colis"], basePrice: 2000, pricePerKg: 300, maxGrams: 5000),
            TravelCategory(id: "clothing", names: ["en": "Clothing", "fr": "Vêtements"], basePrice: 2000, pricePerKg: 300, maxGrams: 10000),
            TravelCategory(id: "electronics", names: ["en": "Electronics", "fr": "Électronique"], basePrice: 3000, pricePerKg: 500, maxGrams: 5000),
            TravelCategory(id: "food", names: ["en": "Food (sealed, non-perishable)", "fr": "Alimentation (scellée, non périssable)"], basePrice: 2000, pricePerKg: 400, maxGrams: 10000),
            TravelCategory(id: "large_parcel", names: ["en": "Large parcel", "fr": "Grand colis"], basePrice: 4000, pricePerKg: 300, maxGrams: 20000),
        ],
        platformFeePercent: 15,
        prohibitedItems: [
            "en": ["Weapons, ammunition and explosives", "Drugs and narcotics", "Flammable, toxic or corrosive goods (batteries not installed in a device included)",
                   "Cash, bearer securities and precious stones", "Live animals and plants", "Alcohol and tobacco",
                   "Counterfeit or stolen goods", "Perishable food and medicines without a prescription"],
            "fr": ["Armes, munitions et explosifs", "Drogues et stupéfiants", "Matières inflammables, toxiques ou corrosives (y compris les batteries non installées dans un appareil)",
                   "Argent liquide, titres au porteur et pierres précieuses", "Animaux et plantes vivants", "Alcool et tabac",
                   "Contrefaçons ou biens volés", "Denrées périssables et médicaments sans ordonnance"],
        ])
}

/// A trip as a traveller describes it, before validation.
public struct TripDraft: Sendable, Equatable {
    public var from: AreaID
    public var to: AreaID
    public var fromPoint: Coordinate?
    public var toPoint: Coordinate?
    /// The day of departure where the traveller leaves ("2026-12-01").
    public var date: String
    /// The departure window that day, local time ("07:00", "09:30").
    public var earliest: String
    public var latest: String
    /// IANA time zone ("Europe/Zurich").
    public var timeZone: String
    public var capacityGrams: Int
    public var capacityParcels: Int
    public var categories: [String]
    /// The least the traveller accepts for one parcel (their share, minor units); nil: any price.
    public var minimumReward: Int?
    public var notes: String?

    public init(from: AreaID, to: AreaID, fromPoint: Coordinate? = nil, toPoint: Coordinate? = nil, date: String, earliest: String,
                latest: String, timeZone: String, capacityGrams: Int, capacityParcels: Int, categories: [String],
                minimumReward: Int? = nil, notes: String? = nil) {
        self.from = from
        self.to = to
        self.fromPoint = fromPoint
        self.toPoint = toPoint
        self.date = date
        self.earliest = earliest
        self.latest = latest
        self.timeZone = timeZone
        self.capacityGrams = capacityGrams
        self.capacityParcels = capacityParcels
        self.categories = categories
        self.minimumReward = minimumReward
        self.notes = notes
    }

    public static let maxParcels = 20
    public static let maxNotes = 1000
    /// How far ahead a trip may be posted.
    public static let maxDaysAhead = 366
    public static let maxWindowHours = 24

    /// The departure window as Unix ms, from the local date and times in `timeZone`; nil when they
    /// are not a real day and times there.
    public static func window(date: String, earliest: String, latest: String, timeZone: String) -> (from: Int64, until: Int64)? {
        guard let zone = TimeZone(identifier: timeZone) else { return nil }
        let d = date.split(separator: "-", omittingEmptySubsequences: false)
        guard d.count == 3, d[0].count == 4, d[1].count == 2, d[2].count == 2,
              let year = Int(d[0]), let month = Int(d[1]), let day = Int(d[2]), (2000...2200).contains(year) else { return nil }
        func time(_ text: String) -> (Int, Int)? {
            let t = text.split(separator: ":", omittingEmptySubsequences: false)
            guard t.count == 2, t[0].count == 2, t[1].count == 2, let h = Int(t[0]), let m = Int(t[1]), (0...23).contains(h), (0...59).contains(m) else { return nil }
            return (h, m)
        }
        guard let (h1, m1) = time(earliest), let (h2, m2) = time(latest) else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        func instant(_ h: Int, _ m: Int) -> Int64? {
            let components = DateComponents(year: year, month: month, day: day, hour: h, minute: m)
            guard components.isValidDate(in: calendar), let date = calendar.date(from: components) else { return nil }
            return Int64((date.timeIntervalSince1970 * 1000).rounded())
        }
        guard let from = instant(h1, m1), let until = instant(h2, m2) else { return nil }
        return (from, until)
    }

    /// The trip cleaned, with its window in Unix ms, or its field errors. `areaExists` says whether
    /// an area id is known; `tariff` which categories exist.
    public func validated(now: Int64, tariff: TravelTariff, areaExists: (AreaID) -> Bool) -> Result<Trip.Plan, FieldErrorsError> {
        var errors = FieldErrors()
        if !areaExists(from) { errors.add("from", "unknown_area") }
        if !areaExists(to) { errors.add("to", "unknown_area") }
        if from == to { errors.add("to", "same_as_from") }
        if let p = fromPoint, !p.isValid { errors.add("fromPoint", "out_of_range") }
        if let p = toPoint, !p.isValid { errors.add("toPoint", "out_of_range") }
        var window: (from: Int64, until: Int64)?
        if TimeZone(identifier: timeZone) == nil { errors.add("timeZone", "invalid") }
        else if let w = Self.window(date: date, earliest: earliest, latest: latest, timeZone: timeZone) {
            if w.until < w.from { errors.add("latest", "before_earliest") }
            else if w.until - w.from > Int64(Self.maxWindowHours) * 3_600_000 { errors.add("latest", "too_long") }
            else if w.until <= now { errors.add("date", "in_the_past") }
            else if w.from > now + Int64(Self.maxDaysAhead) * 86_400_000 { errors.add("date", "too_far") }
            else { window = w }
        } else {
            errors.add(Self.window(date: date, earliest: "00:00", latest: "00:00", timeZone: timeZone) == nil ? "date" : "earliest", "invalid")
        }
        if !(1...TravelTariff.maxGrams).contains(capacityGrams) { errors.add("capacityGrams", "out_of_range") }
        if !(1...Self.maxParcels).contains(capacityParcels) { errors.add("capacityParcels", "out_of_range") }
        let cats = Array(Set(categories)).sorted()
        if cats.isEmpty { errors.add("categories", "required") }
        else if cats.contains(where: { tariff.category($0) == nil }) { errors.add("categories", "unknown_category") }
        if let minimumReward, !(0...TravelTariff.maxPrice).contains(minimumReward) { errors.add("minimumReward", "out_of_range") }
        let notes = notes?.trimmingCharacters(in: .whitespacesAndNewlines)
        if let notes, notes.unicodeScalars.count > Self.maxNotes { errors.add("notes", "too_long") }
        guard errors.isEmpty, let window else { return .failure(FieldErrorsError(errors)) }
        var clean = self
        clean.categories = cats
        clean.notes = notes?.isEmpty == false ? notes : nil
        return .success(Trip.Plan(draft: clean, departsFrom: window.from, departsUntil: window.until))
    }
}

/// Where a trip is.
public enum TripStatus: String, Sendable, Hashable, Codable, CaseIterable {
    /// Takes requests.
    case open
    /// No room left (kg or parcels) for now; a rejection or a lapse frees room again.
    case full
    /// Its departure window has passed: it takes no more requests (it closed by itself).
    case departed
    case cancelled
}

public enum Trip {
    /// A validated draft with its departure window.
    public struct Plan: Sendable, Equatable {
        public var draft: TripDraft
        public var departsFrom: Int64
        public var departsUntil: Int64
    }

    /// A trip's status now, from what is stored: cancelled stays cancelled; past the end of the
    /// departure window it has departed; with no room left it is full.
    public static func status(cancelled: Bool, departsUntil: Int64, gramsLeft: Int, parcelsLeft: Int, now: Int64) -> TripStatus {
        if cancelled { return .cancelled }
        if departsUntil <= now { return .departed }
        if gramsLeft <= 0 || parcelsLeft <= 0 { return .full }
        return .open
    }
}

/// Who may do what to a trip.
public enum TripPolicy {
    public enum Decision: Sendable, Equatable {
        case allowed
        /// Not theirs (or they may not post trips at all).
        case forbidden
        /// Not in this status.
        case wrongStatus(TripStatus)
        /// The change would break what was already promised (route or date with accepted parcels,
        /// capacity below what is booked).
        case booked
    }

    /// Who sees what a traveller was paid for a request's shipment: the traveller, and dispatch.
    public static func maySeePayouts(traveller: UserID, by caller: Caller) -> Bool {
        caller.id == traveller || caller.may(.dispatch)
    }

    /// Posting trips: travellers (a traveller profile gives the capability).
    public static func mayPost(_ caller: Caller) -> Bool { caller.capabilities.contains(.traveller) }

    /// Whether `caller` sees the trip: everyone signed in sees open trips (to request a place);
    /// its traveller and staff see it in any status.
    /// A trip the administration hid (`ModeratedContent.trip`) is its traveller's and the admins' only.
    public static func maySee(traveller: UserID, status: TripStatus, hidden: Bool = false, by caller: Caller) -> Bool {
        if hidden { return caller.id == traveller || caller.capabilities.contains(.admin) }
        return caller.id == traveller || caller.may(.dispatch) || caller.capabilities.contains(.admin) || status == .open || status == .full
    }

    /// Editing: the traveller, while it is open or full; the route and date only while nothing is
    /// booked; capacity never below what is booked.
    public static func mayEdit(traveller: UserID, status: TripStatus, bookedGrams: Int, bookedParcels: Int,
                               changingRouteOrDate: Bool, newCapacity: (grams: Int, parcels: Int), by caller: Caller) -> Decision {
        guard caller.id == traveller, mayPost(caller) else { return .forbidden }
        guard status == .open || status == .full else { return .wrongStatus(status) }
        if changingRouteOrDate, bookedGrams > 0 || bookedParcels > 0 { return .booked }
        if newCapacity.grams < bookedGrams || newCapacity.parcels < bookedParcels { return .booked }
        return .allowed
    }

    /// What the traveller asks per parcel is theirs to see: senders only see the trips that would
    /// accept the price.
    public static func showsMinimumReward(traveller: UserID, to caller: Caller) -> Bool { caller.id == traveller }

    /// Cancelling: the traveller (or an admin) until it departs, and not while parcels are booked
    /// on it (their senders paid; those shipments are cancelled and refunded first).
    public static func mayCancel(traveller: UserID, status: TripStatus, bookedParcels: Int = 0, by caller: Caller) -> Decision {
        guard caller.id == traveller || caller.capabilities.contains(.admin) else { return .forbidden }
        guard status == .open || status == .full else { return .wrongStatus(status) }
        return bookedParcels > 0 ? .booked : .allowed
    }
}

/// What a sender looks for.
public struct TripSearch: Sendable, Equatable {
    public var from: AreaID
    public var to: AreaID
    /// The earliest and latest departure that suit the sender (Unix ms); nil: from now, any time.
    public var earliest: Int64?
    public var latest: Int64?
    public var grams: Int
    public var category: String
    /// Where the parcel is and where it goes, for the detour.
    public var pickup: Coordinate?
    public var dropoff: Coordinate?

    public init(from: AreaID, to: AreaID, earliest: Int64? = nil, latest: Int64? = nil, grams: Int, category: String,
                pickup: Coordinate? = nil, dropoff: Coordinate? = nil) {
        self.from = from
        self.to = to
        self.earliest = earliest
        self.latest = latest
        self.grams = grams
        self.category = category
        self.pickup = pickup
        self.dropoff = dropoff
    }

    public func validated(now: Int64, tariff: TravelTariff, areaExists: (AreaID) -> Bool) -> Result<TripSearch, FieldErrorsError> {
        var errors = FieldErrors()
        if !areaExists(from) { errors.add("from", "unknown_area") }
        if !areaExists(to) { errors.add("to", "unknown_area") }
        if let earliest, let latest, latest < earliest { errors.add("latest", "before_earliest") }
        if let c = tariff.category(category) {
            if !(1...c.maxGrams).contains(grams) { errors.add("grams", "out_of_range") }
        } else {
            errors.add("category", "unknown_category")
        }
        if let p = pickup, !p.isValid { errors.add("pickup", "out_of_range") }
        if let p = dropoff, !p.isValid { errors.add("dropoff", "out_of_range") }
        return errors.isEmpty ? .success(self) : .failure(FieldErrorsError(errors))
    }
}

/// A trip as matching sees it.
public struct TripCandidate: Sendable, Equatable {
    public var id: TripID
    public var traveller: UserID
    public var from: AreaID
    public var to: AreaID
    public var fromPoint: Coordinate?
    public var toPoint: Coordinate?
    public var departsFrom: Int64
    public var departsUntil: Int64
    public var gramsLeft: Int
    public var parcelsLeft: Int
    public var categories: [String]
    public var minimumReward: Int?
    /// The traveller's average rating (1–5), once ratings exist.
    public var rating: Double?

    public init(id: TripID, traveller: UserID, from: AreaID, to: AreaID, fromPoint: Coordinate? = nil, toPoint: Coordinate? = nil,
                departsFrom: Int64, departsUntil: Int64, gramsLeft: Int, parcelsLeft: Int, categories: [String],
                minimumReward: Int? = nil, rating: Double? = nil) {
        self.id = id
        self.traveller = traveller
        self.from = from
        self.to = to
        self.fromPoint = fromPoint
        self.toPoint = toPoint
        self.departsFrom = departsFrom
        self.departsUntil = departsUntil
        self.gramsLeft = gramsLeft
        self.parcelsLeft = parcelsLeft
        self.categories = categories
        self.minimumReward = minimumReward
        self.rating = rating
    }
}

/// One matching trip, with why it ranks where it does.
public struct TripMatch: Sendable, Equatable {
    public var trip: TripCandidate
    public var price: TravelPrice
    /// From the sender's earliest departure (or now) to the trip's, in minutes.
    public var waitMinutes: Int
    /// The extra distance the traveller would go to pick up and drop off, in metres (when the
    /// trip's points and the sender's are known).
    public var detourMeters: Int?
    public var score: Double
}

public enum TripMatching {
    /// The trips that match `search` (any trip of `by` itself left out), ranked best first: a trip
    /// matches when it leaves from the searched area or one inside it and goes to the other, is
    /// open at `now`, departs within the sender's window, has room for the parcel, takes its
    /// category, and would pay the traveller at least what they ask.
    public static func rank(_ trips: [TripCandidate], for search: TripSearch, tariff: TravelTariff, areas: AreaIndex,
                            by sender: UserID?, now: Int64) -> [TripMatch] {
        guard let price = tariff.price(category: search.category, grams: search.grams) else { return [] }
        var matches = [TripMatch]()
        for trip in trips {
            guard trip.traveller != sender,
                  Trip.status(cancelled: false, departsUntil: trip.departsUntil, gramsLeft: trip.gramsLeft, parcelsLeft: trip.parcelsLeft, now: now) == .open,
                  trip.gramsLeft >= search.grams, trip.parcelsLeft >= 1, trip.categories.contains(search.category),
                  (trip.minimumReward ?? 0) <= price.travellerShare.amount,
                  areas.isWithin(trip.from, search.from), areas.isWithin(trip.to, search.to) else { continue }
            // The sender's window: a trip leaving outside it does not match.
            if let latest = search.latest, trip.departsFrom > latest { continue }
            if let earliest = search.earliest, trip.departsUntil < earliest { continue }
            var detour: Int?
            if let a = trip.fromPoint, let b = trip.toPoint, let p = search.pickup, let d = search.dropoff {
                let direct = a.distance(to: b)
                let via = a.distance(to: p) + p.distance(to: d) + d.distance(to: b)
                detour = Int(max(0, via - direct).rounded())
            }
            // Date fit: the sooner after the sender's earliest (or now) it leaves, the better; each
            // km of detour counts as ten minutes of waiting; a good rating brings a trip forward
            // by up to a day.
            let wait = max(0, trip.departsFrom - max(now, search.earliest ?? now))
            var score = Double(wait) / 3_600_000
            if let detour { score += Double(detour) / 1000 / 6 }
            if let rating = trip.rating { score -= max(0, min(5, rating) - 3) * 12 }
            matches.append(TripMatch(trip: trip, price: price, waitMinutes: Int(wait / 60_000), detourMeters: detour, score: score))
        }
        return matches.sorted { $0.score != $1.score ? $0.score < $1.score : $0.trip.id.uuidString < $1.trip.id.uuidString }
    }
}

/// How a traveller is named to people who have not booked with them: first name and initial.
public enum TravellerName {
    public static func short(first: String, last: String) -> String {
        guard let initial = last.trimmingCharacters(in: .whitespaces).first else { return first }
        return "\(first) \(initial)."
    }
}
