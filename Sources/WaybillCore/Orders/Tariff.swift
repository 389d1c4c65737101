/// The three parcel sizes of the specification.
public enum WeightClass: String, Sendable, Hashable, Codable, CaseIterable {
    case small, medium, large
}

/// Standard, or express (priced with the tariff's multiplier).
public enum ServiceLevel: String, Sendable, Hashable, Codable, CaseIterable {
    case standard, express
}

/// The company's prices. Every amount is in minor units of `currency`.
public struct Tariff: Sendable, Equatable, Codable {
    public struct Rate: Sendable, Equatable, Codable {
        /// Charged on every order of the class.
        public var baseFee: Int
        /// Added per kilometre of great-circle distance when both ends have coordinates.
        public var perKm: Int
        /// Charged instead of base fee + distance when the distance is not known.
        public var flatFee: Int

        public init(baseFee: Int, perKm: Int, flatFee: Int) {
            self.baseFee = baseFee
            self.perKm = perKm
            self.flatFee = flatFee
        }
    }

    public var currency: String
    public var small: Rate
    public var medium: Rate
    public var large: Rate
    /// Express price = standard price × this / 100 (150 means one and a half times).
    public var expressMultiplierPercent: Int
    /// Totals are rounded to a multiple of this (5 centimes in Switzerland).
    public var roundingIncrement: Int

    public init(currency: String, small: Rate, medium: Rate, large: Rate, expressMultiplierPercent: Int, roundingIncrement: Int) {
        self.currency = currency
        self.small = small
        self.medium = medium
        self.large = large
        self.expressMultiplierPercent = expressMultiplierPercent
        self.roundingIncrement = roundingIncrement
    }

    /// What a new installation starts with; managers change it with `PUT /tariff`.
    public static let initial = Tariff(
        currency: "CHF",
        small: Rate(baseFee: 900, perKm: 150, flatFee: 1500),
        medium: Rate(baseFee: 1200, perKm: 180, flatFee: 2000),
        large: Rate(baseFee: 1800, perKm: 250, flatFee: 3000),
        expressMultiplierPercent: 150,
        roundingIncrement: 5)

    public func rate(for weightClass: WeightClass) -> Rate {
        switch weightClass {
        case .small: small
        case .medium: medium
        case .large: large
        }
    }

    public static let maxAmount = 10_000_000

    /// Every problem with the tariff, keyed by field (`small.baseFee`, `expressMultiplierPercent`, …).
    public func validated() -> Result<Tariff, FieldErrorsError> {
        var errors = FieldErrors()
        var clean = self
        clean.currency = currency.uppercased()
        if !Money.isValidCurrency(clean.currency) { errors.add("currency", "invalid") }
        for (name, rate) in [("small", small), ("medium", medium), ("large", large)] {
            for (field, value) in [("baseFee", rate.baseFee), ("perKm", rate.perKm), ("flatFee", rate.flatFee)]
            where !(0...Self.maxAmount).contains(value) {
                errors.add("\(name).\(field)", "out_of_range")
            }
        }
        if !(100...1000).contains(expressMultiplierPercent) { errors.add("expressMultiplierPercent", "out_of_range") }
        if !(1...100).contains(roundingIncrement) { errors.add("roundingIncrement", "out_of_range") }
        return errors.isEmpty ? .success(clean) : .failure(FieldErrorsError(errors))
    }
}

/// One line of a price's breakdown.
public struct PriceLine: Sendable, Equatable, Codable {
    public enum Kind: String, Sendable, Codable, CaseIterable {
        case baseFee = "base_fee", distance, flatRate = "flat_rate", express, plan, insurance, rounding, points
    }
    public var kind: Kind
    public var label: String
    public var amount: Int

    public init(kind: Kind, label: String, amount: Int) {
        self.kind = kind
        self.label = label
        self.amount = amount
    }
}

/// A price and how it was reached.
public struct Quote: Sendable, Equatable, Codable {
    public var price: Money
    /// Great-circle distance in metres, when both ends have coordinates.
    public var distanceMeters: Int?
    public var breakdown: [PriceLine]
    /// The declared value insured and its premium (part of `price`), when the sender insured it.
    public var insurance: InsuranceCover? = nil
    /// Loyalty points spent on it and what they took off `price` (the last line of the breakdown).
    public var points: LoyaltyRedemption? = nil
    /// What the customer's subscription plan took off it (its `plan` lines).
    public var plan: PlanApplied? = nil

    /// The quote with `redemption` taken off its price, as its last line.
    public func applying(_ redemption: LoyaltyRedemption?) -> Quote {
        guard let redemption, redemption.discount > 0 else { return self }
        var quote = self
        quote.breakdown.append(PriceLine(kind: .points, label: "Loyalty points (\(redemption.points))", amount: -redemption.discount))
        quote.price.amount -= redemption.discount
        quote.points = redemption
        return quote
    }

    /// Kilometres with one decimal, for display.
    public var distanceKm: Double? { distanceMeters.map { Double(($0 + 50) / 100) / 10 } }
}

public enum Pricing {
    /// The price of carrying a parcel of `weightClass` from `pickup` to `dropoff`.
    ///
    /// With both coordinates: base fee + per-km rate × great-circle kilometres (rounded to the
    /// metre, the product rounded to the minor unit). Without: the class's flat fee. Express
    /// multiplies the subtotal by the tariff's percentage. The total is rounded to the tariff's
    /// increment. Integers throughout: the lines add up exactly to the price.
    ///
    /// A subscription `plan` then applies to the delivery charge (never to the insurance): an
    /// included delivery takes off everything but the express surcharge (that too when the plan
    /// includes express); otherwise express included takes off the surcharge, and the plan's
    /// discount a share of what is left.
    public static func quote(tariff: Tariff, weightClass: WeightClass, service: ServiceLevel,
                             pickup: Coordinate?, dropoff: Coordinate?, insurance: InsuranceCover? = nil,
                             plan: PlanBenefit? = nil) -> Quote {
        let rate = tariff.rate(for: weightClass)
        var lines: [PriceLine] = []
        var distanceMeters: Int?
        if let pickup, let dropoff, pickup.isValid, dropoff.isValid {
            let meters = Int(pickup.distance(to: dropoff).rounded())
            distanceMeters = meters
            lines.append(PriceLine(kind: .baseFee, label: "Base fee (\(weightClass.rawValue))", amount: rate.baseFee))
            let km = Double((meters + 50) / 100) / 10
            lines.append(PriceLine(kind: .distance, label: "Distance \(km) km", amount: rate.perKm.scaled(by: meters, over: 1000)))
        } else {
            lines.append(PriceLine(kind: .flatRate, label: "Flat rate (\(weightClass.rawValue))", amount: rate.flatFee))
        }
        var subtotal = lines.reduce(0) { $0 + $1.amount }
        let standard = subtotal
        var surcharge = 0
        if service == .express {
            surcharge = subtotal.scaled(by: tariff.expressMultiplierPercent, over: 100) - subtotal
            lines.append(PriceLine(kind: .express, label: "Express", amount: surcharge))
            subtotal += surcharge
        }
        var applied: PlanApplied?
        if let plan {
            let terms = plan.terms
            var off = 0
            if terms.expressIncluded, surcharge > 0 {
                lines.append(PriceLine(kind: .plan, label: "Express included (\(terms.name))", amount: -surcharge))
                off += surcharge
            }
            let included = plan.includedLeft > 0
            if included {
                lines.append(PriceLine(kind: .plan, label: "Included in \(terms.name) (\(plan.includedLeft) of \(terms.includedDeliveries) left)",
                                       amount: -standard))
                off += standard
            } else if terms.discountPercent > 0 {
                let discount = (subtotal - off).scaled(by: terms.discountPercent, over: 100)
                if discount > 0 {
                    lines.append(PriceLine(kind: .plan, label: "\(terms.name) (−\(terms.discountPercent) %)", amount: -discount))
                    off += discount
                }
            }
            subtotal -= off
            if off > 0 || included { applied = PlanApplied(name: terms.name, included: included, discount: off) }
        }
        if let insurance {
            lines.append(PriceLine(kind: .insurance, label: "Insurance (declared value \(Money(insurance.declaredValue, tariff.currency)))",
                                   amount: insurance.premium))
            subtotal += insurance.premium
        }
        let total = subtotal.rounded(toMultipleOf: tariff.roundingIncrement)
        if total != subtotal {
            lines.append(PriceLine(kind: .rounding, label: "Rounding", amount: total - subtotal))
        }
        return Quote(price: Money(total, tariff.currency), distanceMeters: distanceMeters, breakdown: lines, insurance: insurance, plan: applied)
    }
}
