import FluentKit
import Foundation
import NIOCore
import PostgresNIO
import SQLiteNIO
import WaybillCore

// Typed ids (`WaybillCore/Identifiers.swift`) in the database: stored exactly as the UUID they wrap,
// read and written by the drivers' fast paths rather than the generic Codable machinery.

extension Tagged: @retroactive RandomGeneratable where RawValue == UUID {
    public static func generateRandom() -> Self { generated() }
}

extension Tagged where RawValue == UUID {
    /// A new id from the application's randomness (`Randomness.current`): the system's generator,
    /// or a test's seeded one, so a test can foresee the ids a server makes.
    static func generated() -> Self { Self(rawValue: Randomness.uuid()) }
}

extension Tagged: @retroactive SQLiteDataConvertible where RawValue: SQLiteDataConvertible {
    public init?(sqliteData: SQLiteData) {
        guard let raw = RawValue(sqliteData: sqliteData) else { return nil }
        self.init(rawValue: raw)
    }
    public var sqliteData: SQLiteData? { rawValue.sqliteData }
}

extension Tagged: @retroactive PostgresThrowingDynamicTypeEncodable where RawValue: PostgresEncodable {}

extension Tagged: @retroactive PostgresEncodable where RawValue: PostgresEncodable {
    public static var psqlType: PostgresDataType { RawValue.psqlType }
    public static var psqlFormat: PostgresFormat { RawValue.psqlFormat }
    public func encode<E: PostgresJSONEncoder>(into byteBuffer: inout ByteBuffer, context: PostgresEncodingContext<E>) throws {
        try rawValue.encode(into: &byteBuffer, context: context)
    }
}

extension Tagged: @retroactive PostgresDecodable where RawValue: PostgresDecodable {
    public init<D: PostgresJSONDecoder>(from byteBuffer: inout ByteBuffer, type: PostgresDataType, format: PostgresFormat,
                                        context: PostgresDecodingContext<D>) throws {
        self.init(rawValue: try RawValue(from: &byteBuffer, type: type, format: format, context: context))
    }
}

/// A typed id column, which `RowOutput` reads as the UUID it is.
protocol UUIDColumn { init(rawValue: UUID) }
extension Tagged: UUIDColumn where RawValue == UUID {}

/// What a delivery sample or a rating is about: one of Waybill's shipments or a followed parcel of
/// another carrier. Stored as its kind and its id (`subject_kind`/`kind`, `subject_id`).
enum DeliverySubject: Sendable, Hashable {
    case shipment(OrderID)
    case parcel(ParcelID)

    /// The kind as stored: `shipment` or `parcel`.
    var kind: String {
        switch self {
        case .shipment: "shipment"
        case .parcel: "parcel"
        }
    }

    /// The id as stored.
    var uuid: UUID {
        switch self {
        case .shipment(let id): id.rawValue
        case .parcel(let id): id.rawValue
        }
    }
}
