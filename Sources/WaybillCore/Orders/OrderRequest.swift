/// How a customer pays.
public enum PaymentMethod: String, Sendable, Hashable, Codable, CaseIterable {
    case card, twint, cash, invoice

    /// Paid online through the payment provider before the order goes to dispatch.
    public var isOnline: Bool { self == .card || self == .twint }
}

/// Why a driver could not deliver.
public enum FailureReason: String, Sendable, Hashable, Codable, CaseIterable {
    case recipientAbsent = "recipient_absent"
    case addressWrong = "address_wrong"
    case refused, damaged, other
}

/// Who receives the parcel.
public struct Recipient: Sendable, Hashable, Codable {
    public var name: String
    public var email: String?
    public var phone: String?

    public init(name: String, email: String? = nil, phone: String? = nil) {
        self.name = name
        self.email = email
        self.phone = phone
    }
}

/// A pickup as the client sends it: the account's own address, or another one.
public struct PickupInput: Sendable, Equatable {
    public var useAccountAddress: Bool
    public var address: AddressInput

    public init(useAccountAddress: Bool = false, address: AddressInput = AddressInput()) {
        self.useAccountAddress = useAccountAddress
        self.address = address
    }
}

/// What a quote needs.
public struct QuoteRequest: Sendable, Equatable {
    public var pickup: PickupInput
    public var dropoff: AddressInput
    public var weightClass: WeightClass
    public var service: ServiceLevel
    /// Reception counters chosen instead of the pickup or the drop-off (their addresses stand for them).
    public var counters: CounterChoice
    /// The value the sender declares to insure it (minor units of the tariff's currency); nil uninsured.
    public var declaredValue: Int?
    /// Loyalty points the sender spends on the price; nil spends none.
    public var redeemPoints: Int?

    public init(pickup: PickupInput, dropoff: AddressInput, weightClass: WeightClass, service: ServiceLevel,
                counters: CounterChoice = CounterChoice(), declaredValue: Int? = nil, redeemPoints: Int? = nil) {
        self.pickup = pickup
        self.dropoff = dropoff
        self.weightClass = weightClass
        self.service = service
        self.counters = counters
        self.declaredValue = declaredValue
        self.redeemPoints = redeemPoints
    }

    /// The insurance asked for, priced by `table` (nil when none is asked); a value that cannot be
    /// insured is a field error on `declaredValue`.
    public func insurance(table: InsuranceTable?, currency: String, into errors: inout FieldErrors) -> InsuranceCover? {
        guard let declaredValue else { return nil }
        guard let table else { errors.add("declaredValue", "unavailable"); return nil }
        switch Insurance.cover(declaredValue, table: table, currency: currency) {
        case .success(let cover): return cover
        case .failure(let problem): errors.add("declaredValue", Insurance.fieldError(problem)); return nil
        }
    }

    /// The two addresses, checked; `accountAddress` is the customer's own (nil if they have none).
    /// A counter chosen for either end is that end's address (what was typed for it is not used).
    public func validatedAddresses(accountAddress: Address?, into errors: inout FieldErrors) -> (pickup: Address, dropoff: Address) {
        var pickupAddress: Address
        if let counter = counters.dropOff {
            pickupAddress = counter
        } else if pickup.useAccountAddress {
            if let accountAddress { pickupAddress = accountAddress }
            else {
                errors.add("pickup.useAccountAddress", "no_account_address")
                pickupAddress = Address(street: "", postalCode: "", city: "")
            }
        } else {
            pickupAddress = pickup.address.validated(prefix: "pickup", into: &errors)
        }
        let dropoffAddress = counters.collection ?? dropoff.validated(prefix: "dropoff", into: &errors)
        if counters.dropOff == nil, pickup.useAccountAddress, let coordinate = pickup.address.coordinateIfComplete {
            pickupAddress.coordinate = coordinate  // the client may pin its own address on a map
        }
        return (pickupAddress, dropoffAddress)
    }
}

extension AddressInput {
    var coordinateIfComplete: Coordinate? {
        guard let latitude, let longitude else { return nil }
        let coordinate = Coordinate(latitude: latitude, longitude: longitude)
        return coordinate.isValid ? coordinate : nil
    }
}

/// A new order as the client sends it.
public struct OrderRequest: Sendable, Equatable {
    public var quote: QuoteRequest
    public var paymentMethod: PaymentMethod
    public var recipientName: String?
    public var recipientEmail: String?
    public var recipientPhone: String?
    public var notes: String?
    public var requireRecipientCode: Bool

    public init(quote: QuoteRequest, paymentMethod: PaymentMethod, recipientName: String?, recipientEmail: String? = nil,
                recipientPhone: String? = nil, notes: String? = nil, requireRecipientCode: Bool = false) {
        self.quote = quote
        self.paymentMethod = paymentMethod
        self.recipientName = recipientName
        self.recipientEmail = recipientEmail
        self.recipientPhone = recipientPhone
        self.notes = notes
        self.requireRecipientCode = requireRecipientCode
    }

    public static let maxNotesLength = 1000

    /// Checks everything at once and returns the order as it will be stored.
    ///
    /// - `invoice` is only for company accounts staff have vetted (`PaymentOptions`); `twint` only
    ///   when the tariff is in CHF.
    /// - A recipient code is mailed to the recipient, so it needs the recipient's email.
    public func validated(accountAddress: Address?, isCompany: Bool, vetted: Bool, currency: String) -> Result<ValidOrder, FieldErrorsError> {
        var errors = FieldErrors()
        let (pickup, dropoff) = quote.validatedAddresses(accountAddress: accountAddress, into: &errors)
        let name = Validation.text(recipientName, field: "recipient.name", maxLength: Validation.maxNameLength, into: &errors)
        var email: String?
        if let recipientEmail, !recipientEmail.trimmingWhitespace().isEmpty {
            email = Validation.email(recipientEmail, field: "recipient.email", into: &errors)
        } else if requireRecipientCode {
            errors.add("recipient.email", "required_for_recipient_code")
        }
        quote.counters.check(paymentMethod: paymentMethod, recipientEmail: recipientEmail, into: &errors)
        var phone: String?
        if let recipientPhone, !recipientPhone.trimmingWhitespace().isEmpty {
            let trimmed = recipientPhone.trimmingWhitespace()
            let digits = trimmed.filter(\.isNumber).count
            let allowed = trimmed.allSatisfy { $0.isASCII && ($0.isNumber || " +-()./".contains($0)) }
            if !allowed || !(6...20).contains(digits) { errors.add("recipient.phone", "invalid") }
            phone = trimmed
        }
        var cleanNotes: String?
        if let notes, !notes.trimmingWhitespace().isEmpty {
            let trimmed = notes.trimmingWhitespace()
            if trimmed.count > Self.maxNotesLength { errors.add("notes", "too_long") }
            cleanNotes = trimmed
        }
        if let refusal = PaymentOptions.refusal(paymentMethod, isCompany: isCompany, vetted: vetted, currency: currency) {
            errors.add("paymentMethod", refusal)
        }
        guard errors.isEmpty else { return .failure(FieldErrorsError(errors)) }
        return .success(ValidOrder(
            pickup: pickup, dropoff: dropoff, weightClass: quote.weightClass, service: quote.service,
            paymentMethod: paymentMethod, recipient: Recipient(name: name, email: email, phone: phone),
            notes: cleanNotes, requireRecipientCode: requireRecipientCode || quote.counters.collectionID != nil,
            counters: quote.counters))
    }
}

/// A checked order, ready to be priced and stored.
public struct ValidOrder: Sendable, Equatable {
    public var pickup: Address
    public var dropoff: Address
    public var weightClass: WeightClass
    public var service: ServiceLevel
    public var paymentMethod: PaymentMethod
    public var recipient: Recipient
    public var notes: String?
    /// The receiver's code is required when asked for, and always at a counter's collection.
    public var requireRecipientCode: Bool
    public var counters: CounterChoice = CounterChoice()
}
