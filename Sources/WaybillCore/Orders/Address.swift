/// A postal address, with coordinates when the client knows them (a pin on a map, a geocoder).
public struct Address: Sendable, Hashable, Codable {
    public var street: String
    public var postalCode: String
    public var city: String
    /// ISO 3166-1 alpha-2; Switzerland when not given.
    public var country: String
    public var coordinate: Coordinate?

    public init(street: String, postalCode: String, city: String, country: String = "CH", coordinate: Coordinate? = nil) {
        self.street = street
        self.postalCode = postalCode
        self.city = city
        self.country = country
        self.coordinate = coordinate
    }

    /// "Bahnhofstrasse 1, 8001 Zürich"
    public var singleLine: String { "\(street), \(postalCode) \(city)" + (country == "CH" ? "" : ", \(country)") }
}

/// A point on Earth in degrees (WGS 84).
public struct Coordinate: Sendable, Hashable, Codable {
    public var latitude: Double
    public var longitude: Double

    public init(latitude: Double, longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
    }

    public var isValid: Bool {
        latitude.isFinite && longitude.isFinite && (-90...90).contains(latitude) && (-180...180).contains(longitude)
    }

    /// Great-circle distance in metres (haversine, mean Earth radius 6,371,008.8 m).
    public func distance(to other: Coordinate) -> Double {
        let radius = 6_371_008.8
        let φ1 = latitude * .pi / 180, φ2 = other.latitude * .pi / 180
        let Δφ = (other.latitude - latitude) * .pi / 180
        let Δλ = (other.longitude - longitude) * .pi / 180
        // For points on opposite sides of the Earth rounding can make `a` a hair above 1, and
        // (1 - a).squareRoot() NaN, which every Int(...) of the distance would trap on: clamped.
        let a = min(1, max(0, sin(Δφ / 2) * sin(Δφ / 2) + cos(φ1) * cos(φ2) * sin(Δλ / 2) * sin(Δλ / 2)))
        let distance = 2 * radius * atan2(a.squareRoot(), (1 - a).squareRoot())
        return distance.isFinite ? distance : 0
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An address as a client sends it: every field optional, so that all problems are reported at once.
public struct AddressInput: Sendable, Equatable {
    public var street: String?
    public var postalCode: String?
    public var city: String?
    public var country: String?
    public var latitude: Double?
    public var longitude: Double?

    public init(street: String? = nil, postalCode: String? = nil, city: String? = nil, country: String? = nil,
                latitude: Double? = nil, longitude: Double? = nil) {
        self.street = street
        self.postalCode = postalCode
        self.city = city
        self.country = country
        self.latitude = latitude
        self.longitude = longitude
    }

    /// Checks every field, reporting problems as `prefix.field`.
    public func validated(prefix: String, into errors: inout FieldErrors) -> Address {
        let street = Validation.text(street, field: "\(prefix).street", maxLength: Validation.maxAddressLength, into: &errors)
        let postalCode = Validation.postalCode(postalCode, field: "\(prefix).postalCode", into: &errors)
        let city = Validation.text(city, field: "\(prefix).city", maxLength: Validation.maxCityLength, into: &errors)
        var countryCode = "CH"
        if let country {
            let upper = country.trimmingWhitespace().uppercased()
            if upper.count == 2, upper.allSatisfy({ $0.isASCII && $0.isLetter }) { countryCode = upper }
            else { errors.add("\(prefix).country", "invalid") }
        }
        var coordinate: Coordinate?
        switch (latitude, longitude) {
        case (nil, nil):
            break
        case (let lat?, let lon?):
            let candidate = Coordinate(latitude: lat, longitude: lon)
            if candidate.isValid { coordinate = candidate }
            else {
                if !(lat.isFinite && (-90...90).contains(lat)) { errors.add("\(prefix).latitude", "out_of_range") }
                if !(lon.isFinite && (-180...180).contains(lon)) { errors.add("\(prefix).longitude", "out_of_range") }
            }
        case (nil, _):
            errors.add("\(prefix).latitude", "required")
        case (_, nil):
            errors.add("\(prefix).longitude", "required")
        }
        return Address(street: street, postalCode: postalCode, city: city, country: countryCode, coordinate: coordinate)
    }
}
