import Foundation
import Testing
@testable import WaybillCore

@Suite("Gazetteer: a carrier's event location placed on the map, offline")
struct GazetteerTests {
    static let gazetteer = Gazetteer.standard

    /// The guess is within `tolerance` degrees of (latitude, longitude), at `precision`.
    static func near(_ guess: GeoGuess?, _ latitude: Double, _ longitude: Double, _ precision: GeoGuess.Precision,
                     tolerance: Double = 0.1) -> Bool {
        guard let guess else { return false }
        return abs(guess.latitude - latitude) <= tolerance && abs(guess.longitude - longitude) <= tolerance
            && guess.precision == precision
    }

    @Test("The shipped gazetteer loads, with its places, and quickly")
    func loads() throws {
        let url = try #require(Gazetteer.resourceURL, "gazetteer.tsv is a resource of WaybillCore")
        let data = try Data(contentsOf: url)
        #expect(data.count < 1_600_000, "\(data.count) bytes")
        let clock = ContinuousClock()
        var loaded: Gazetteer?
        let elapsed = clock.measure { loaded = Gazetteer(tsv: data) }
        let gazetteer = try #require(loaded)
        #expect(gazetteer.count > 40_000, "\(gazetteer.count) places")
        #expect(Self.gazetteer.count == gazetteer.count)
        print("Gazetteer: \(gazetteer.count) places loaded in \(elapsed)")
        #expect(elapsed < .seconds(5))
    }

    @Test("Localities by name, whatever the case and accents: Köln, Zürich, zurich, Zuerich, Genf, St. Gallen")
    func localities() {
        let g = Self.gazetteer
        #expect(Self.near(g.locate("Köln, DE"), 50.94, 6.96, .locality), "\(String(describing: g.locate("Köln, DE")))")
        #expect(Self.near(g.locate("Zürich, CH"), 47.37, 8.54, .locality), "\(String(describing: g.locate("Zürich, CH")))")
        #expect(g.locate("zurich, ch") == g.locate("Zürich, CH"))
        #expect(g.locate("ZUERICH, CH") == g.locate("Zürich, CH"))
        #expect(g.locate("Koeln, Germany") == g.locate("Köln, DE"))
        #expect(Self.near(g.locate("Cologne, DE"), 50.94, 6.96, .locality))
        #expect(Self.near(g.locate("Genf, CH"), 46.20, 6.15, .locality))
        #expect(Self.near(g.locate("Geneve, Switzerland"), 46.20, 6.15, .locality))
        #expect(Self.near(g.locate("St. Gallen, CH"), 47.42, 9.37, .locality))
        #expect(g.locate("Sankt Gallen, CH") == g.locate("St. Gallen, CH"))
        #expect(Self.near(g.locate("Saint-Gall, CH"), 47.42, 9.37, .locality))
        #expect(Self.near(g.locate("Oftringen, CH"), 47.31, 7.94, .locality))
        #expect(Self.near(g.locate("PARIS 08, FR"), 48.86, 2.35, .locality))
        #expect(Self.near(g.locate("Paris Cedex 08, FR"), 48.86, 2.35, .locality))
        #expect(Self.near(g.locate("Frankfurt, DE"), 50.11, 8.68, .locality), "Frankfurt am Main, not Frankfurt (Oder)")
        #expect(Self.near(g.locate("Wien, AT"), 48.21, 16.37, .locality))
        #expect(Self.near(g.locate("Bruxelles, BE"), 50.85, 4.35, .locality))
        #expect(Self.near(g.locate("Amsterdam, NL"), 52.37, 4.90, .locality))
        #expect(Self.near(g.locate("Luxembourg, LU"), 49.61, 6.13, .locality))
        #expect(Self.near(g.locate("Vaduz, LI"), 47.14, 9.52, .locality))
        #expect(Self.near(g.locate("Milano, IT"), 45.46, 9.19, .locality))
        // A hub's name around the town's.
        #expect(Self.near(g.locate("Köln-Eifeltor, DE"), 50.94, 6.96, .locality, tolerance: 0.2))
        #expect(Self.near(g.locate("Paketzentrum Härkingen, CH"), 47.31, 7.82, .locality))
        #expect(Self.near(g.locate("Zürich Mülligen, CH"), 47.37, 8.54, .locality))
        #expect(Self.near(g.locate("Frankfurt am Main Flughafen, DE"), 50.11, 8.68, .locality, tolerance: 0.2))
        #expect(g.locate("Nowhere-ville, FR")?.precision == .country, "no town is guessed from a word of the name")
    }

    @Test("Postal codes first when given and known: 75008 Paris, D-50667 Köln, CH-8001 Zürich, 1010 Wien")
    func postalCodes() {
        let g = Self.gazetteer
        #expect(Self.near(g.locate("75008 Paris, FR"), 48.87, 2.31, .postalCode), "\(String(describing: g.locate("75008 Paris, FR")))")
        #expect(Self.near(g.locate("50667 Köln, DE"), 50.94, 6.96, .postalCode))
        #expect(Self.near(g.locate("D-50667 Köln"), 50.94, 6.96, .postalCode))
        #expect(Self.near(g.locate("CH-8001 Zürich"), 47.37, 8.54, .postalCode))
        #expect(Self.near(g.locate("4665 Oftringen, CH"), 47.31, 7.94, .postalCode))
        #expect(Self.near(g.locate("1010 Wien, AT"), 48.21, 16.37, .postalCode))
        #expect(Self.near(g.locate("1011 AB Amsterdam, NL"), 52.37, 4.90, .postalCode))
        // No country: the name picks it.
        #expect(Self.near(g.locate("75008 Paris"), 48.87, 2.31, .postalCode))
        // An unknown code falls back on the name.
        #expect(Self.near(g.locate("75399 Paris Cedex 08, FR"), 48.86, 2.35, .locality))
        #expect(Self.near(g.locate("L-1511 Luxembourg"), 49.61, 6.13, .locality))
    }

    @Test("Two capitals that are a canton's or a province's, not the country's: Bern, BE; Luzern, LU; Siena, SI")
    func subdivisions() {
        let g = Self.gazetteer
        #expect(Self.near(g.locate("Bern, BE"), 46.95, 7.44, .locality))
        #expect(Self.near(g.locate("Luzern, LU"), 47.05, 8.31, .locality))
        #expect(Self.near(g.locate("Chur, GR"), 46.85, 9.53, .locality))
        #expect(Self.near(g.locate("Siena, SI"), 43.32, 11.33, .locality))
        // Written out, the country is the country; elsewhere, no town of another country is taken.
        #expect(g.locate("Bern, Belgium")?.precision == .country)
        #expect(Self.near(g.locate("Paris, US"), 39.83, -98.58, .country))
        #expect(Self.near(g.locate("Toronto, CA"), 56.13, -106.35, .country))
    }

    @Test("No country given: the name alone (Oftringen), or a code ending it (Köln DE)")
    func withoutCountry() {
        let g = Self.gazetteer
        #expect(Self.near(g.locate("Oftringen"), 47.31, 7.94, .locality))
        #expect(Self.near(g.locate("Köln DE"), 50.94, 6.96, .locality))
        #expect(Self.near(g.locate("Paris"), 48.86, 2.35, .locality))
        #expect(g.locate("Nowhere-ville") == nil)
    }

    @Test("Only the country understood: its centre, marked as such; nothing understood: nil")
    func countries() {
        let g = Self.gazetteer
        #expect(Self.near(g.locate("Nowhere-ville, CH"), 46.82, 8.23, .country), "\(String(describing: g.locate("Nowhere-ville, CH")))")
        #expect(Self.near(g.locate("DE"), 51.17, 10.45, .country))
        #expect(Self.near(g.locate("Deutschland"), 51.17, 10.45, .country))
        #expect(Self.near(g.locate("CHICAGO, IL, US"), 39.83, -98.58, .country))
        #expect(Self.near(g.locate("London, GB"), 54.0, -2.5, .country))
        #expect(Self.near(g.locate("Warszawa, Polska"), 51.92, 19.15, .country))
        for country in ["CH", "FR", "DE", "AT", "IT", "BE", "NL", "LU", "LI", "GB", "ES", "PT", "US", "CA", "PL", "CZ", "DK", "SE", "NO"] {
            #expect(g.locate(country)?.precision == .country, "\(country)")
            #expect(g.locate("Xyzzyplugh, \(country)")?.precision == .country, "\(country)")
        }
        for nothing in ["", " ", ",,,", " , ; ,", "Xyzzyplugh", "ZZ", "Xyzzyplugh, ZZ", "🚚📦", "12"] {
            #expect(g.locate(nothing) == nil, "\(nothing)")
        }
    }

    @Test("Folding: case, diacritics, ue/oe/ae, ß, Saint/Sankt/St.")
    func folding() {
        #expect(Gazetteer.fold("Köln") == "koln")
        #expect(Gazetteer.fold("KOELN") == "koln")
        #expect(Gazetteer.fold("  Zürich--Flughafen ") == "zurich flughafen")
        #expect(Gazetteer.fold("Straße") == "strasse")
        #expect(Gazetteer.fold("St. Gallen") == "st gallen")
        #expect(Gazetteer.fold("Saint-Étienne") == "st etienne")
        #expect(Gazetteer.fold("Sainte-Croix") == "ste croix")
        #expect(Gazetteer.fold("Ge\u{0301}ne\u{0300}ve") == "geneve")
        #expect(Gazetteer.fold("🚚") == "")
    }

    @Test("The guess encodes with its precision as the API spells it")
    func codable() throws {
        let guess = GeoGuess(latitude: 1.5, longitude: -2, precision: .postalCode)
        let json = String(decoding: try JSONEncoder().encode(guess), as: UTF8.self)
        #expect(json.contains(#""precision":"postal_code""#))
        #expect(try JSONDecoder().decode(GeoGuess.self, from: Data(json.utf8)) == guess)
    }

    @Test("Arbitrary input never crashes: random strings, huge ones, odd scalars")
    func fuzz() {
        let g = Self.gazetteer
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 ,,;-.'()/\\\t\näöüéèßÆøł\u{0301}\u{200B}\u{FEFF}🚚📦👩‍👩‍👧 CHDEFR-")
        for _ in 0..<500 {
            let length = Int.random(in: 0...60, using: &generator)
            let text = String((0..<length).map { _ in alphabet.randomElement(using: &generator)! })
            if let guess = g.locate(text) {
                #expect((-90...90).contains(guess.latitude) && (-180...180).contains(guess.longitude), "\(text)")
            }
        }
        for _ in 0..<100 {
            let scalars = (0..<Int.random(in: 0...30, using: &generator)).compactMap { _ in
                Unicode.Scalar(UInt32.random(in: 0...0x10FFFF, using: &generator))
            }
            var text = ""
            text.unicodeScalars.append(contentsOf: scalars)
            _ = g.locate(text)
            _ = Gazetteer.fold(text)
        }
        _ = g.locate(String(repeating: "Köln, ", count: 100_000) + "DE")
        _ = g.locate(String(repeating: ",", count: 100_000))
        _ = g.locate(String(repeating: "9", count: 100_000))
        _ = g.locate("D-")
        _ = g.locate("-8000")
        _ = g.locate("CH-")
        #expect(Gazetteer(tsv: Data("garbage\n\t\t\t\t\nXX\tA\t\tnan\t1\n".utf8)).count == 0)
        #expect(Gazetteer(tsv: Data()).locate("Köln, DE")?.precision == .country)
    }
}
