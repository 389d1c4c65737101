/// An amount of money in minor units (centimes, cents) of an ISO 4217 currency. Never a
/// floating-point number: prices are added, multiplied by whole percentages and rounded with
/// integer arithmetic only.
public struct Money: Sendable, Hashable, Codable, CustomStringConvertible {
    public var amount: Int
    public var currency: String

    public init(_ amount: Int, _ currency: String) {
        self.amount = amount
        self.currency = currency
    }

    /// "CHF 12.50" (two minor digits, the usual case for the currencies Waybill offers).
    public var description: String {
        let sign = amount < 0 ? "-" : ""
        let units = abs(amount) / 100, cents = abs(amount) % 100
        return "\(currency) \(sign)\(units).\(cents < 10 ? "0" : "")\(cents)"
    }

    public static func isValidCurrency(_ code: String) -> Bool {
        code.count == 3 && code.allSatisfy { $0.isASCII && $0.isUppercase }
    }
}

extension Int {
    /// `self × numerator / denominator`, rounded half away from zero, in integers.
    func scaled(by numerator: Int, over denominator: Int) -> Int {
        let product = self * numerator
        let half = denominator / 2
        return product >= 0 ? (product + half) / denominator : -((-product + half) / denominator)
    }

    /// Rounded to the nearest multiple of `increment` (halves up), e.g. to 5 centimes in CHF.
    func rounded(toMultipleOf increment: Int) -> Int {
        guard increment > 1 else { return self }
        return ((self + increment / 2) / increment) * increment
    }
}
