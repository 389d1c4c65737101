import Fluent
import Foundation
import NIOConcurrencyHelpers
import WaybillCore

/// A kind of document the staff edit as a whole and whose every version is kept: its table and
/// what it holds (a value of WaybillCore, stored as JSON).
protocol DocumentKind: Sendable {
    associatedtype Content: Codable & Sendable
    /// Its table: `version` (the key), `data`, `created_by`, `created_at`.
    static var schema: String { get }
    /// Its versions' contents decoded so far, by their text (`VersionedDocument.content`).
    static var decoded: NIOLockedValueBox<[String: Content]> { get }
}

/// The company's tariff (`Tariff`).
enum TariffDocument: DocumentKind {
    typealias Content = Tariff
    static let schema = "tariffs"
    static let decoded = NIOLockedValueBox<[String: Tariff]>([:])
}

/// The insurance premium table (`InsuranceTable`).
enum InsuranceTableDocument: DocumentKind {
    typealias Content = InsuranceTable
    static let schema = "insurance_tables"
    static let decoded = NIOLockedValueBox<[String: InsuranceTable]>([:])
}

/// The loyalty rules (`LoyaltyRules`).
enum LoyaltyRulesDocument: DocumentKind {
    typealias Content = LoyaltyRules
    static let schema = "loyalty_rules"
    static let decoded = NIOLockedValueBox<[String: LoyaltyRules]>([:])
}

/// The price table for travellers' trips (`TravelTariff`).
enum TravelTariffDocument: DocumentKind {
    typealias Content = TravelTariff
    static let schema = "travel_tariffs"
    static let decoded = NIOLockedValueBox<[String: TravelTariff]>([:])
}

/// One version of a document the staff edit (the tariff, the insurance table, the loyalty rules,
/// the travel tariff): the newest is in force, a change writes the next version, and no row is
/// ever changed, so what an order was priced with stays readable. The one model of all four.
final class VersionedDocument<Kind: DocumentKind>: Model, @unchecked Sendable {
    static var schema: String { Kind.schema }

    @ID(custom: "version", generatedBy: .user) var id: Int?
    @Field(key: "data") var data: String
    @OptionalField(key: "created_by") var createdBy: UserID?
    @Field(key: "created_at") var createdAt: Int64

    /// Listed so Fluent does not find them by reflection on every save and read.
    var properties: [any AnyProperty] { [$id, $data, $createdBy, $createdAt] }

    init() {}

    init(version: Int, _ content: Kind.Content, createdBy: UserID?) {
        self.id = version
        self.data = Order.json(content)
        self.createdBy = createdBy
        self.createdAt = UnixTime.nowMillis
    }

    /// Its version (1, 2, …).
    var version: Int { id ?? 0 }

    /// What it holds, decoded once per distinct text: every quote reads the current tariff.
    var content: Kind.Content {
        get throws {
            if let known = Kind.decoded.withLockedValue({ $0[data] }) { return known }
            let content = try Order.decoder.decode(Kind.Content.self, from: Data(data.utf8))
            Kind.decoded.withLockedValue { cache in
                if cache.count >= 64 { cache.removeAll() }  // versions are few; bounded all the same
                cache[data] = content
            }
            return content
        }
    }

    /// The version in force: the newest, or nil before the first.
    static func current(on db: any Database) async throws -> VersionedDocument? {
        try await query(on: db).sort(\.$id, .descending).first()
    }

    /// Writes `content` as the next version, by `author`, in the caller's transaction `db`; returns
    /// it with the version it replaced (nil for the first).
    static func replace(with content: Kind.Content, by author: UserID?, on db: any Database) async throws
        -> (record: VersionedDocument, previous: VersionedDocument?) {
        let current = try await current(on: db)
        let record = VersionedDocument(version: (current?.version ?? 0) + 1, content, createdBy: author)
        try await record.create(on: db)
        return (record, current)
    }
}

typealias TariffRecord = VersionedDocument<TariffDocument>
typealias InsuranceTableRecord = VersionedDocument<InsuranceTableDocument>
typealias LoyaltyRulesRecord = VersionedDocument<LoyaltyRulesDocument>
typealias TravelTariffRecord = VersionedDocument<TravelTariffDocument>

extension VersionedDocument where Kind == TariffDocument {
    var tariff: Tariff { get throws { try content } }
}

extension VersionedDocument where Kind == InsuranceTableDocument {
    var table: InsuranceTable { get throws { try content } }
}

extension VersionedDocument where Kind == LoyaltyRulesDocument {
    var rules: LoyaltyRules { get throws { try content } }
}
