import Foundation
import OpenAPIRuntime
import WaybillCore

/// An area as a search or a trip names it.
public typealias AreaSummary = Components.Schemas.AreaSummary
public typealias AreaDetail = Components.Schemas.AreaDetail
public typealias TravellerTrip = Components.Schemas.Trip
public typealias TripMatchResult = Components.Schemas.TripMatch
public typealias TravelTariffTable = Components.Schemas.TravelTariff
public typealias PayoutAccount = Components.Schemas.PayoutAccount

/// Travellers: areas, the travel price table, becoming a traveller, trips and finding them.
extension WaybillSession {
    /// Areas whose name in any language (or a word of it, or a postal code) starts with `query`,
    /// accents and case ignored, best first.
    public func searchAreas(_ query: String, language: String? = nil, within: String? = nil, limit: Int? = nil) async throws(WaybillError) -> [AreaSummary] {
        try await call { try await $0.searchAreas(query: .init(q: query, lang: language, within: within, limit: limit)).ok.body.json.items }
    }

    /// An area with its names, the areas above it and those directly inside it.
    public func area(_ id: String, language: String? = nil) async throws(WaybillError) -> AreaDetail {
        try await call { try await $0.getArea(path: .init(areaId: id), query: .init(lang: language)).ok.body.json }
    }

    /// The categories travellers carry, their prices, the platform's fee and what may not be sent.
    public func travelTariff() async throws(WaybillError) -> TravelTariffTable {
        try await call { try await $0.getTravelTariff().ok.body.json }
    }

    /// Takes on the traveller capability (the travellers' terms accepted).
    public func becomeTraveller() async throws(WaybillError) -> Account {
        try await call { try await $0.becomeTraveller(body: .json(.init(acceptTerms: true))).ok.body.json }
    }

    /// Where the traveller is paid (a Stripe Connect account): `active` once paid requests may be accepted.
    public func payoutAccount() async throws(WaybillError) -> PayoutAccount {
        try await call { try await $0.getPayoutAccount().ok.body.json }
    }

    /// A single-use link to set up (or finish setting up) the payout account; open it in a browser.
    public func startPayoutOnboarding() async throws(WaybillError) -> URL {
        let text = try await call { try await $0.startPayoutOnboarding().ok.body.json.url }
        guard let url = URL(string: text) else { throw WaybillError.unexpectedResponse("the onboarding link is not a URL") }
        return url
    }

    /// Posts a trip (`TripDraft` in WaybillCore says what the server checks).
    public func postTrip(_ trip: TripDraft) async throws(WaybillError) -> TravellerTrip {
        let point = { (c: Coordinate?) in c.map { Components.Schemas.GeoPoint(latitude: $0.latitude, longitude: $0.longitude) } }
        return try await call {
            try await $0.postTrip(body: .json(.init(
                from: trip.from.rawValue, to: trip.to.rawValue, fromPoint: point(trip.fromPoint), toPoint: point(trip.toPoint), date: trip.date,
                earliest: trip.earliest, latest: trip.latest, timeZone: trip.timeZone, capacityGrams: trip.capacityGrams,
                capacityParcels: trip.capacityParcels, categories: trip.categories, minimumReward: trip.minimumReward, notes: trip.notes))).created.body.json
        }
    }

    /// One's own trips, those still to leave first.
    public func myTrips() async throws(WaybillError) -> [TravellerTrip] {
        try await call { try await $0.listMyTrips().ok.body.json.items }
    }

    public func trip(_ id: TripID) async throws(WaybillError) -> TravellerTrip {
        try await call { try await $0.getTrip(path: .init(tripId: id.uuidString.lowercased())).ok.body.json }
    }

    /// Changes the room on a trip (the other fields through the API's PATCH).
    public func updateTrip(_ id: TripID, capacityGrams: Int? = nil, capacityParcels: Int? = nil, notes: String? = nil) async throws(WaybillError) -> TravellerTrip {
        try await call {
            try await $0.updateTrip(path: .init(tripId: id.uuidString.lowercased()),
                                    body: .json(.init(capacityGrams: capacityGrams, capacityParcels: capacityParcels, notes: notes))).ok.body.json
        }
    }

    public func cancelTrip(_ id: TripID) async throws(WaybillError) -> TravellerTrip {
        try await call { try await $0.cancelTrip(path: .init(tripId: id.uuidString.lowercased())).ok.body.json }
    }

    /// Trips that can carry a parcel of `category` weighing `grams` from `from` to `to` (areas, each
    /// with everything inside it), best first, with the price.
    public func findTrips(from: String, to: String, category: String, grams: Int, earliest: Date? = nil, latest: Date? = nil,
                          limit: Int? = nil) async throws(WaybillError) -> [TripMatchResult] {
        try await call {
            try await $0.searchTrips(query: .init(from: from, to: to, category: category, grams: grams, earliest: earliest, latest: latest,
                                                  limit: limit)).ok.body.json.items
        }
    }
}

public typealias TravelRequest = Components.Schemas.TripRequest

/// Requests for a place on a trip: the sender's side and the traveller's.
extension WaybillSession {
    /// Asks the traveller of `parcel.trip` to carry it (`TripRequestDraft` in WaybillCore says what the server checks).
    public func sendRequest(_ parcel: TripRequestDraft) async throws(WaybillError) -> TravelRequest {
        try await call {
            try await $0.sendTripRequest(path: .init(tripId: parcel.trip.uuidString.lowercased()), body: .json(.init(
                category: parcel.category, grams: parcel.grams, declaredValue: parcel.declaredValue, description: parcel.description,
                receiver: .init(name: parcel.receiver.name, email: parcel.receiver.email ?? "", phone: parcel.receiver.phone),
                attestsAllowedContents: parcel.attestsAllowedContents,
                paymentMethod: .init(rawValue: parcel.paymentMethod.rawValue)))).created.body.json
        }
    }

    /// Requests one sent (`received: false`) or received on one's trips, newest first.
    public func tripRequests(received: Bool = false, trip: TripID? = nil) async throws(WaybillError) -> [TravelRequest] {
        try await call {
            try await $0.listTripRequests(query: .init(box: received ? .received : .sent, tripId: trip?.uuidString.lowercased())).ok.body.json.items
        }
    }

    public func tripRequest(_ id: TripRequestID) async throws(WaybillError) -> TravelRequest {
        try await call { try await $0.getTripRequest(path: .init(requestId: id.uuidString.lowercased())).ok.body.json }
    }

    /// The parcel's photo (JPEG or PNG), by its sender until pickup.
    public func setRequestPhoto(_ id: TripRequestID, photo: Data) async throws(WaybillError) -> TravelRequest {
        try await call {
            try await $0.setTripRequestPhoto(path: .init(requestId: id.uuidString.lowercased()), body: .multipartForm(MultipartBody([
                .photo(.init(payload: .init(body: HTTPBody(photo)), filename: "photo")),
            ]))).ok.body.json
        }
    }

    /// The traveller accepts: the room is taken and the sender is asked to pay.
    public func acceptRequest(_ id: TripRequestID) async throws(WaybillError) -> TravelRequest {
        try await call { try await $0.acceptTripRequest(path: .init(requestId: id.uuidString.lowercased())).ok.body.json }
    }

    public func rejectRequest(_ id: TripRequestID, reason: String? = nil) async throws(WaybillError) -> TravelRequest {
        try await call { try await $0.rejectTripRequest(path: .init(requestId: id.uuidString.lowercased()), body: .json(.init(reason: reason))).ok.body.json }
    }

    /// The sender withdraws a request, or cancels its shipment until pickup (refunded if paid).
    public func cancelRequest(_ id: TripRequestID, reason: String? = nil) async throws(WaybillError) -> TravelRequest {
        try await call { try await $0.cancelTripRequest(path: .init(requestId: id.uuidString.lowercased()), body: .json(.init(reason: reason))).ok.body.json }
    }

    /// The traveller has the parcel; the receiver's code is mailed to them.
    public func pickUpRequest(_ id: TripRequestID) async throws(WaybillError) -> TravelRequest {
        try await call { try await $0.pickUpTripRequest(path: .init(requestId: id.uuidString.lowercased())).ok.body.json }
    }

    /// The receiver's code completes the hand-over; the traveller is paid.
    public func deliverRequest(_ id: TripRequestID, code: String) async throws(WaybillError) -> TravelRequest {
        try await call { try await $0.deliverTripRequest(path: .init(requestId: id.uuidString.lowercased()), body: .json(.init(code: code))).ok.body.json }
    }
}

/// Profile pictures: square JPEG or PNG, 64 to 2,048 pixels a side (crop before sending).
extension WaybillSession {
    public func setProfilePicture(_ image: Data) async throws(WaybillError) {
        try await call {
            _ = try await $0.setProfilePicture(body: .multipartForm(MultipartBody([
                .photo(.init(payload: .init(body: HTTPBody(image)), filename: "picture")),
            ]))).noContent
        }
    }

    public func deleteProfilePicture() async throws(WaybillError) {
        try await call { _ = try await $0.deleteProfilePicture().noContent }
    }

    /// Someone's picture, if one shares a shipment, a trip request or an open trip with them.
    public func profilePicture(of id: UserID) async throws(WaybillError) -> Data {
        try await call { client in
            let output = try await client.getProfilePicture(path: .init(userId: id.uuidString.lowercased())).ok.body
            let body: HTTPBody
            switch output {
            case .jpeg(let b): body = b
            case .png(let b): body = b
            }
            return try await Data(collecting: body, upTo: 4 << 20)
        }
    }
}
