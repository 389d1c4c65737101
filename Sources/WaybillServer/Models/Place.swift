import Fluent
import Foundation
import WaybillCore

/// An address stored as columns (`<prefix>_street`, `_postal_code`, `_city`, `_country`,
/// `_latitude`, `_longitude`, `_area_id`), so statistics and filters can group by city or postal
/// code in SQL. Used for an order's pickup and drop-off and a leg's two ends.
final class PlaceColumns: Fields, @unchecked Sendable {
    @Field(key: "street") var street: String
    @Field(key: "postal_code") var postalCode: String
    @Field(key: "city") var city: String
    /// ISO 3166-1 alpha-2.
    @Field(key: "country") var country: String
    @OptionalField(key: "latitude") var latitude: Double?
    @OptionalField(key: "longitude") var longitude: Double?
    /// The area (travellers' area hierarchy) the place lies in, when known.
    @OptionalField(key: "area_id") var areaID: String?

    init() {}

    var properties: [any AnyProperty] { [$street, $postalCode, $city, $country, $latitude, $longitude, $areaID] }

    var address: Address {
        get {
            let coordinate = latitude.flatMap { lat in longitude.map { Coordinate(latitude: lat, longitude: $0) } }
            return Address(street: street, postalCode: postalCode, city: city, country: country, coordinate: coordinate)
        }
        set {
            street = newValue.street
            postalCode = newValue.postalCode
            city = newValue.city
            country = newValue.country
            latitude = newValue.coordinate?.latitude
            longitude = newValue.coordinate?.longitude
        }
    }
}

/// Who receives a shipment, as columns (`recipient_name`, `_email`, `_phone`). The email is stored
/// lowercased: a receiver with an account finds the shipments addressed to their verified email
/// under "Incoming" through it (an index).
final class RecipientColumns: Fields, @unchecked Sendable {
    @Field(key: "name") var name: String
    @OptionalField(key: "email") var email: String?
    @OptionalField(key: "phone") var phone: String?

    init() {}

    var properties: [any AnyProperty] { [$name, $email, $phone] }

    var recipient: Recipient {
        get { Recipient(name: name, email: email, phone: phone) }
        set {
            name = newValue.name
            email = newValue.email.map { $0.lowercased() }
            phone = newValue.phone
        }
    }
}
