import Foundation

// Requests (issue "Travellers", items 4–6): a sender asks for a place on a trip; the traveller
// accepts (room taken at once) or rejects; unanswered requests expire. Once accepted, the request
// is a shipment with one traveller leg: the sender pays first, the traveller picks the parcel up and
// hands it over against the receiver's one-time code. The pure rules: the request's validation, its
// state machine, who may act, and its deadlines.

extension Identifiers { public enum TripRequest {} }
public typealias TripRequestID = Tagged<Identifiers.TripRequest, UUID>

/// Where a request is. After acceptance the shipment's own status tells the rest (paid, picked up,
/// delivered); the request keeps the states a shipment does not have.
public enum TripRequestStatus: String, Sendable, Hashable, Codable, CaseIterable {
    /// Waiting for the traveller's answer.
    case requested
    /// Accepted: a shipment exists, to be paid.
    case accepted
    case rejected
    /// Nobody answered in time (or the trip left first).
    case expired
    /// Withdrawn by the sender, or the shipment was cancelled.
    case cancelled
    /// Accepted but not paid in time: the room is free again.
    case lapsed

    public var isOpen: Bool { self == .requested }
    /// Whether it holds room on the trip.
    public var holdsRoom: Bool { self == .accepted }
}

public enum TripRequestAction: String, Sendable, Hashable, CaseIterable {
    case accept, reject, cancel, expire, lapse
}

/// In what capacity someone acts on a request.
public enum TripRequestRole: String, Sendable, Hashable {
    case sender, traveller, system
}

public enum TripRequestMachine {
    public enum Decision: Sendable, Equatable {
        case allowed(TripRequestStatus)
        case forbidden
        case wrongStatus(TripRequestStatus)
    }

    struct Rule {
        let action: TripRequestAction
        let by: TripRequestRole
        let from: Set<TripRequestStatus>
        let to: TripRequestStatus
    }

    static let rules: [Rule] = [
        Rule(action: .accept, by: .traveller, from: [.requested], to: .accepted),
        Rule(action: .reject, by: .traveller, from: [.requested], to: .rejected),
        // The sender withdraws a request not yet answered; an accepted one is cancelled through
        // its shipment (refunded when paid), which then cancels the request.
        Rule(action: .cancel, by: .sender, from: [.requested], to: .cancelled),
        Rule(action: .cancel, by: .system, from: [.accepted], to: .cancelled),
        Rule(action: .expire, by: .system, from: [.requested], to: .expired),
        Rule(action: .lapse, by: .system, from: [.accepted], to: .lapsed),
    ]

    public static func decide(_ action: TripRequestAction, from status: TripRequestStatus, as roles: Set<TripRequestRole>) -> Decision {
        let applicable = rules.filter { $0.action == action && roles.contains($0.by) }
        if applicable.isEmpty { return .forbidden }
        if let rule = applicable.first(where: { $0.from.contains(status) }) { return .allowed(rule.to) }
        return .wrongStatus(status)
    }

    public static func roles(of caller: UserID, sender: UserID, traveller: UserID) -> Set<TripRequestRole> {
        var roles: Set<TripRequestRole> = []
        if caller == sender { roles.insert(.sender) }
        if caller == traveller { roles.insert(.traveller) }
        return roles
    }
}

/// What a sender asks for, before validation.
public struct TripRequestDraft: Sendable, Equatable {
    public var trip: TripID
    public var category: String
    public var grams: Int
    /// What the contents are worth (minor units of the tariff's currency), for the record and insurance.
    public var declaredValue: Int
    public var description: String
    public var receiver: Recipient
    /// The sender attests that the parcel holds nothing on the prohibited list shown to them.
    public var attestsAllowedContents: Bool
    /// Card or TWINT (the sender pays first, online).
    public var paymentMethod: PaymentMethod

    public init(trip: TripID, category: String, grams: Int, declaredValue: Int, description: String, receiver: Recipient,
                attestsAllowedContents: Bool, paymentMethod: PaymentMethod = .card) {
        self.trip = trip
        self.category = category
        self.grams = grams
        self.declaredValue = declaredValue
        self.description = description
        self.receiver = receiver
        self.attestsAllowedContents = attestsAllowedContents
        self.paymentMethod = paymentMethod
    }

    public static let maxDeclaredValue = 5_000_000
    public static let maxDescription = 500

    /// Why a request for a trip cannot be sent at all (as opposed to a field being wrong).
    public enum Refusal: Sendable, Equatable {
        /// One's own trip.
        case ownTrip
        /// Not open: departed, cancelled or full.
        case tripNotOpen(TripStatus)
        /// More than the room left.
        case noRoom
    }

    /// The request cleaned with its price, or why not: field errors, or a refusal about the trip.
    public func validated(trip: TripCandidate, tripStatus: TripStatus, by sender: UserID, tariff: TravelTariff)
        -> Result<(draft: TripRequestDraft, price: TravelPrice), RequestProblem> {
        if trip.traveller == sender { return .failure(.refused(.ownTrip)) }
        if tripStatus != .open { return .failure(.refused(.tripNotOpen(tripStatus))) }
        var errors = FieldErrors()
        var clean = self
        if !trip.categories.contains(category) { errors.add("category", tariff.category(category) == nil ? "unknown_category" : "not_taken") }
        let price = tariff.price(category: category, grams: grams)
        if grams < 1 || price == nil && tariff.category(category) != nil { errors.add("grams", "out_of_range") }
        if !(0...Self.maxDeclaredValue).contains(declaredValue) { errors.add("declaredValue", "out_of_range") }
        clean.description = description.trimmingCharacters(in: .whitespacesAndNewlines)
        if clean.description.isEmpty { errors.add("description", "required") }
        else if clean.description.unicodeScalars.count > Self.maxDescription { errors.add("description", "too_long") }
        clean.receiver.name = receiver.name.trimmingCharacters(in: .whitespacesAndNewlines)
        if clean.receiver.name.isEmpty { errors.add("receiver.name", "required") }
        else if clean.receiver.name.unicodeScalars.count > 100 { errors.add("receiver.name", "too_long") }
        clean.receiver.email = receiver.email?.trimmingCharacters(in: .whitespaces).lowercased()
        if clean.receiver.email?.isEmpty == true { clean.receiver.email = nil }
        clean.receiver.phone = receiver.phone?.trimmingCharacters(in: .whitespaces)
        if clean.receiver.phone?.isEmpty == true { clean.receiver.phone = nil }
        if let email = clean.receiver.email, !Validation.isValidEmail(email) { errors.add("receiver.email", "invalid_email") }
        // The receiver's code goes to their email: without one, nobody could complete the hand-over.
        if clean.receiver.email == nil { errors.add("receiver.email", "required") }
        if let phone = clean.receiver.phone, phone.count > 30 || !phone.allSatisfy({ $0.isNumber || " +-()/".contains($0) }) {
            errors.add("receiver.phone", "invalid")
        }
        if !attestsAllowedContents { errors.add("attestsAllowedContents", "required") }
        if !paymentMethod.isOnline { errors.add("paymentMethod", "not_online") }
        if !errors.isEmpty { return .failure(.fields(FieldErrorsError(errors))) }
        guard let price else { return .failure(.fields(FieldErrorsError(FieldErrors(["grams": "out_of_range"])))) }
        if grams > trip.gramsLeft || trip.parcelsLeft < 1 { return .failure(.refused(.noRoom)) }
        return .success((clean, price))
    }

    public enum RequestProblem: Error, Sendable, Equatable {
        case fields(FieldErrorsError)
        case refused(Refusal)
    }
}

/// When requests run out.
public enum TripRequestDeadlines {
    /// An unanswered request expires after `hours`, or when the trip's departure window opens,
    /// whichever comes first.
    public static func answerBy(sentAt: Int64, hours: Int, departsFrom: Int64) -> Int64 {
        min(sentAt.addingReportingOverflow(Int64(hours) * 3_600_000).partialValue, departsFrom)
    }

    /// An accepted request not paid within `minutes` lapses (and never later than the window's end).
    public static func payBy(acceptedAt: Int64, minutes: Int, departsUntil: Int64) -> Int64 {
        min(acceptedAt.addingReportingOverflow(Int64(minutes) * 60_000).partialValue, departsUntil)
    }
}

/// The receiver's code at a traveller's delivery: 6 digits (the shipment's recipient code, hashed,
/// tries counted by `OneTimeCodePolicy`).
public enum HandOverCodePolicy {
    public static let digits = 6

    /// Only digits, exactly six (spaces ignored).
    public static func normalized(_ raw: String) -> String? {
        let digits = raw.filter { !$0.isWhitespace }
        return digits.count == Self.digits && digits.allSatisfy({ $0.isASCII && $0.isNumber }) ? digits : nil
    }
}

/// Where a request stands for the people in it: the request's own state until it is accepted, then
/// its shipment's.
public enum TripRequestProgress: String, Sendable, Hashable, Codable, CaseIterable {
    case requested
    case awaitingPayment = "awaiting_payment"
    /// Paid, waiting for the traveller to take the parcel.
    case paid
    case pickedUp = "picked_up"
    case delivered
    case rejected, expired, cancelled, lapsed
    /// The delivery could not be completed (the shipment failed); staff decide.
    case failed

    public static func of(_ status: TripRequestStatus, shipment: OrderStatus?) -> TripRequestProgress {
        switch status {
        case .requested: return .requested
        case .rejected: return .rejected
        case .expired: return .expired
        case .cancelled: return .cancelled
        case .lapsed: return .lapsed
        case .accepted:
            switch shipment {
            case nil, .awaitingPayment?: return .awaitingPayment
            case .pending?, .assigned?, .accepted?: return .paid
            case .inTransit?: return .pickedUp
            case .delivered?: return .delivered
            case .cancelled?: return .cancelled
            case .failed?: return .failed
            }
        }
    }

    /// What each side may do now (the buttons an app shows). The services check again.
    public func actions(for roles: Set<TripRequestRole>) -> [TripRequestUserAction] {
        var actions: [TripRequestUserAction] = []
        let sender = roles.contains(.sender), traveller = roles.contains(.traveller)
        switch self {
        case .requested:
            if traveller { actions += [.accept, .reject] }
            if sender { actions.append(.cancel) }
        case .awaitingPayment:
            if sender { actions += [.pay, .cancel] }
        case .paid:
            if traveller { actions.append(.pickUp) }
            if sender { actions.append(.cancel) }
        case .pickedUp:
            if traveller { actions.append(.deliver) }
        case .delivered, .rejected, .expired, .cancelled, .lapsed, .failed:
            break
        }
        return actions
    }
}

/// What each side of a request sees of the other details (the API and the pages show no more).
public struct TripRequestVisibility: Sendable, Equatable {
    /// The receiver's email: the sender's own data; the traveller never needs it (the code is mailed).
    public var receiverEmail: Bool
    /// The receiver's phone: the sender's, and the traveller's once the parcel is paid for.
    public var receiverPhone: Bool
    /// Where to pay: the sender's, while payment is awaited.
    public var paymentLink: Bool

    public static func of(_ progress: TripRequestProgress, for roles: Set<TripRequestRole>) -> TripRequestVisibility {
        let sender = roles.contains(.sender)
        let paid = [TripRequestProgress.paid, .pickedUp, .delivered].contains(progress)
        return TripRequestVisibility(receiverEmail: sender, receiverPhone: sender || paid && roles.contains(.traveller),
                                     paymentLink: sender && progress == .awaitingPayment)
    }
}

public enum TripRequestUserAction: String, Sendable, Hashable, Codable, CaseIterable {
    case accept, reject, cancel, pay
    case pickUp = "pick_up"
    case deliver
}
