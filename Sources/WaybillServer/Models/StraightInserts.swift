import FluentKit
import Foundation
import SQLiteNIO
import WaybillCore

extension OrderRow {
    /// The row's values as SQLite stores them, in `columns`' order: exactly what Fluent's insert of
    /// the model binds (ids and enum cases as text, flags as 0 or 1, a missing value as NULL;
    /// `OrderRowTests` checks both inserts store the same row).
    var sqliteValues: [SQLiteData] {
        func text(_ value: String?) -> SQLiteData { value.map { .text($0) } ?? .null }
        func integer(_ value: Int?) -> SQLiteData { value.map { .integer($0) } ?? .null }
        func integer(_ value: Int64?) -> SQLiteData { value.map { .integer(Int($0)) } ?? .null }
        func flag(_ value: Bool?) -> SQLiteData { value.map { .integer($0 ? 1 : 0) } ?? .null }
        func uuid(_ value: UUID?) -> SQLiteData { value.map { .text($0.uuidString) } ?? .null }
        func place(_ address: Address, _ area: String?) -> [SQLiteData] {
            [.text(address.street), .text(address.postalCode), .text(address.city), .text(address.country),
             address.coordinate.map { .float($0.latitude) } ?? .null, address.coordinate.map { .float($0.longitude) } ?? .null, text(area)]
        }
        var values: [SQLiteData] = [uuid(id.rawValue), .text(reference), uuid(customerID.rawValue), uuid(driverID?.rawValue),
                                    .text(status.rawValue), .integer(version), integer(createdAt), integer(updatedAt)]
        values += place(pickup, pickupAreaID)
        values += place(dropoff, dropoffAreaID)
        values += [.text(weightClass.rawValue), .text(service.rawValue), .text(recipient.name), text(recipient.email), text(recipient.phone),
                   text(notes), .integer(priceAmount), .text(currency), integer(distanceMeters), .text(breakdownJSON), .integer(tariffVersion),
                   .text(paymentMethod.rawValue), .text(paymentStatus.rawValue), flag(sandbox), text(checkoutSessionID), text(checkoutURL),
                   text(paymentIntentID), integer(paidAt), text(refundID), integer(refundedAt), integer(cashCollected), text(idempotencyKey),
                   flag(requireRecipientCode), text(recipientCodeHash), .integer(recipientCodeAttempts), text(failureReason?.rawValue),
                   text(failureNote), text(cancellationReason), text(signedBy), integer(deliveredAt), text(trackingToken),
                   text(recipientCodeSealed), text(externalReference), uuid(importID), text(handoverToken), integer(declaredValue),
                   integer(insurancePremium), integer(pointsRedeemed), integer(pointsDiscount), uuid(planSubscriptionID), flag(planIncluded),
                   integer(planDiscount), text(planName)]
        return values
    }
}

extension Order {
    /// Stores this new order (as `create`). In a write transaction on SQLite, as one insert of
    /// `OrderRow`'s values: Fluent's model path collects, binds and reassigns the fifty-odd fields
    /// three times, about a third of placing an order under SQLite's write lock
    /// (docs/performance.md). It notes the write as the model's middleware does
    /// (`ChangeNotingMiddleware`); a middleware added on `Order` must be added here too.
    func insert(on db: any Database) async throws {
        guard let writer = db as? WriterDatabase, id != nil else { return try await create(on: db) }
        let values = OrderRow(self).sqliteValues
        guard values.count == OrderRow.columns.count else { return try await create(on: db) }
        _ = try writer.writer.rows(PlainInsert.text(into: Self.schema, columns: OrderRow.columns, returning: nil), values)
        $id.exists = true
        WrittenChanges.note(order: id, caches: nil)
    }
}

extension Leg {
    /// The columns a new leg's insert names (its id is the database's), in `databaseFields`' order.
    static let insertColumns: [String] = Leg().databaseFields.flatMap(\.keys).map(\.description).filter { $0 != "id" }

    /// Its values in `insertColumns`' order, as Fluent's insert binds them (`OrderRowTests` checks
    /// both inserts store the same row).
    var sqliteValues: [SQLiteData] {
        func text(_ value: String?) -> SQLiteData { value.map { .text($0) } ?? .null }
        func integer(_ value: Int64?) -> SQLiteData { value.map { .integer(Int($0)) } ?? .null }
        func place(_ place: PlaceColumns) -> [SQLiteData] {
            [.text(place.street), .text(place.postalCode), .text(place.city), .text(place.country),
             place.latitude.map { .float($0) } ?? .null, place.longitude.map { .float($0) } ?? .null, text(place.areaID)]
        }
        var values: [SQLiteData] = [.text(orderID.rawValue.uuidString), .integer(position), .text(kind.rawValue), .text(status.rawValue)]
        values += place(from)
        values += place(to)
        values += [integer(windowStart), integer(windowEnd), text(slotID), text(carrierCode), text(trackingNumber),
                   text(assigneeID?.rawValue.uuidString), text(counterID), integer(createdAt), integer(updatedAt)]
        return values
    }

    /// Stores this new leg (as `create`); in a write transaction on SQLite as one insert of its
    /// values, without Fluent's model path (see `Order.insert(on:)`).
    func insert(on db: any Database) async throws {
        guard let writer = db as? WriterDatabase, id == nil else { return try await create(on: db) }
        let values = sqliteValues
        guard values.count == Self.insertColumns.count else { return try await create(on: db) }
        let result = try writer.writer.rows(PlainInsert.text(into: Self.schema, columns: Self.insertColumns, returning: "id"), values)
        guard case .integer(let id)? = result.rows.first?.first else { throw WriterDatabase.Unsupported(what: "an insert that returns no id") }
        self.id = id
        $id.exists = true
    }
}
