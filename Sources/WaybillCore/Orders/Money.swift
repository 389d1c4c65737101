import Foundation

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

    /// Minor units (cents) from an amount a person typed ("12.5", "12,50", "0.005"), rounded half
    /// away from zero to the cent, never truncated; nil unless it is a number from 0 to `maximum`.
    public static func minorUnits(fromText raw: String, maximum: Decimal) -> Int? {
        let text = raw.replacingOccurrences(of: ",", with: ".").trimmingCharacters(in: .whitespaces)
        guard !text.isEmpty, text.count <= 32, text.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
              text.filter({ $0 == "." }).count <= 1,
              let value = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")), value >= 0, value <= maximum else { return nil }
        var scaled = value * 100
        var rounded = Decimal()
        NSDecimalRound(&rounded, &scaled, 0, .plain)
        return Int(exactly: NSDecimalNumber(decimal: rounded).int64Value)
    }

    /// "CHF 12.50" (two minor digits, the usual case for the currencies Waybill offers).
    public var description: String {
        let sign = amount < 0 ? "-" : ""
        let units = amount.magnitude / 100, cents = amount.magnitude % 100
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
