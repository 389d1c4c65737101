import FluentKit
import Foundation
import SQLiteNIO
import WaybillCore

/// The values of a row as SQLite stores them, as Fluent's insert binds them: ids and enum cases as
/// text, flags as 0 or 1, a missing value as NULL.
enum StoredValue {
    static func text(_ value: String?) -> SQLiteData { value.map { .text($0) } ?? .null }
    static func integer(_ value: Int?) -> SQLiteData { value.map { .integer($0) } ?? .null }
    static func integer(_ value: Int64?) -> SQLiteData { value.map { .integer(Int($0)) } ?? .null }
    static func uuid(_ value: UUID?) -> SQLiteData { value.map { .text($0.uuidString) } ?? .null }
    static func uuid<Tag>(_ value: Tagged<Tag, UUID>?) -> SQLiteData { uuid(value?.rawValue) }
    static func flag(_ value: Bool?) -> SQLiteData { value.map { .integer($0 ? 1 : 0) } ?? .null }
    /// A `Date` as SQLiteNIO binds it: seconds since 1970, as a real.
    static func date(_ value: Date?) -> SQLiteData { value.map { .float($0.timeIntervalSince1970) } ?? .null }
}

extension OrderRow {
    /// The row's values as SQLite stores them, in `columns`' order: exactly what Fluent's insert of
    /// the model binds (ids and enum cases as text, flags as 0 or 1, a missing value as NULL;
    /// `OrderRowTests` checks both inserts store the same row).
    var sqliteValues: [SQLiteData] {
        typealias V = StoredValue
        let text = V.text, uuid = V.uuid, flag = V.flag
        func integer(_ value: Int?) -> SQLiteData { V.integer(value) }
        func integer(_ value: Int64?) -> SQLiteData { V.integer(value) }
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
                   text(recipientCodeSealed), text(externalReference), uuid(importID?.rawValue), text(handoverToken), integer(declaredValue),
                   integer(insurancePremium), integer(pointsRedeemed), integer(pointsDiscount), uuid(planSubscriptionID?.rawValue), flag(planIncluded),
                   integer(planDiscount), text(planName)]
        return values
    }
}

extension WriterDatabase {
    /// One new row inserted straight from its values (`values` in `columns`' order): one prepared
    /// statement, without Fluent's model path. Returns the `returning` column's value, if named.
    @discardableResult
    func insert(into table: String, columns: [String], values: [SQLiteData], returning: String? = nil) throws -> SQLiteData? {
        guard values.count == columns.count else { throw Unsupported(what: "an insert of \(values.count) values into \(columns.count) columns") }
        return try writer.rows(PlainInsert.text(into: table, columns: columns, returning: returning), values).rows.first?.first
    }
}

extension OrderEvent {
    static let insertColumns = ["order_id", "type", "status", "actor_id", "note", "at"]

    var sqliteValues: [SQLiteData] {
        [.text(orderID.rawValue.uuidString), .text(type), StoredValue.text(status?.rawValue), StoredValue.uuid(actorID?.rawValue),
         StoredValue.text(note), .integer(Int(at))]
    }

    /// Stores this new event (as `create`); on SQLite's writer as one insert of its values, noting
    /// its order's change as the model's middleware does.
    func insert(on db: any Database) async throws {
        guard let writer = db as? WriterDatabase, id == nil else { return try await create(on: db) }
        guard case .integer(let id)? = try writer.insert(into: Self.schema, columns: Self.insertColumns, values: sqliteValues, returning: "id") else {
            throw WriterDatabase.Unsupported(what: "an insert that returns no id")
        }
        self.id = id
        $id.exists = true
        WrittenChanges.note(order: orderID, caches: nil)
    }
}

extension Notification {
    static let insertColumns = ["id", "user_id", "order_id", "kind", "title", "body", "read_at", "created_at"]

    var sqliteValues: [SQLiteData] {
        [StoredValue.uuid(id?.rawValue), .text(userID.rawValue.uuidString), StoredValue.uuid(orderID?.rawValue), .text(kind), .text(title),
         .text(body), StoredValue.integer(readAt), .integer(Int(createdAt))]
    }

    /// Stores this new notification (as `create`, which draws its id); on SQLite's writer as one insert.
    func insert(on db: any Database) async throws {
        guard let writer = db as? WriterDatabase else { return try await create(on: db) }
        if id == nil { id = .generated() }
        try writer.insert(into: Self.schema, columns: Self.insertColumns, values: sqliteValues)
        $id.exists = true
    }
}

extension OutboxMessage {
    static let insertColumns = ["id", "kind", "payload", "status", "attempts", "next_attempt_at", "last_error", "sent_at", "created_at"]

    var sqliteValues: [SQLiteData] {
        [StoredValue.uuid(id), .text(kind), StoredValue.text(payload), .text(status.rawValue), .integer(attempts), .integer(Int(nextAttemptAt)),
         StoredValue.text(lastError), StoredValue.date(sentAt), StoredValue.date(createdAt)]
    }

    /// Stores this new message (as `create`, which draws its id and stamps `createdAt`); on SQLite's
    /// writer as one insert.
    func insert(on db: any Database) async throws {
        guard let writer = db as? WriterDatabase else { return try await create(on: db) }
        if id == nil { id = .generated() }
        if createdAt == nil { createdAt = Date() }
        try writer.insert(into: Self.schema, columns: Self.insertColumns, values: sqliteValues)
        $id.exists = true
    }
}

extension Order {
    /// The values its row stores on SQLite, in `OrderRow.columns`' order.
    var storedValues: [SQLiteData] { get throws { try OrderRow(self).sqliteValues } }

    /// Stores this new order (as `create`). In a write transaction on SQLite, as one insert of
    /// `OrderRow`'s values: Fluent's model path collects, binds and reassigns the fifty-odd fields
    /// three times, about a third of placing an order under SQLite's write lock
    /// (docs/performance.md). It notes the write as the model's middleware does
    /// (`ChangeNotingMiddleware`); a middleware added on `Order` must be added here too.
    ///
    /// `values`: `storedValues` taken before the transaction, when nothing changes the order in
    /// between (placing an order makes them before it waits for the write lock).
    func insert(on db: any Database, values: [SQLiteData]? = nil) async throws {
        guard let writer = db as? WriterDatabase, id != nil else { return try await create(on: db) }
        let values = try values ?? storedValues
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
        let text = StoredValue.text
        func integer(_ value: Int64?) -> SQLiteData { StoredValue.integer(value) }
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
