import Fluent
import SQLKit
import Vapor
import WaybillCore

/// Profile pictures: one's own to set and remove; others' only as `ProfilePicturePolicy` allows.
extension Accounts {
    func setPicture(_ upload: Orders.Upload, by me: Principal) async throws -> ProfilePicture {
        let orders = Orders(services: services, db: db, logger: logger)
        let image = try await orders.sanitize(upload, allowed: [.png, .jpeg], maxBytes: ProfilePicturePolicy.maxBytes,
                                              maxPixels: ProfilePicturePolicy.maxSide)
        if let problem = ProfilePicturePolicy.problem(width: image.width, height: image.height) {
            throw WaybillError(.unprocessableEntity, .validationFailed,
                               "A profile picture is square, 64 to 2,048 pixels a side; crop it before sending.", fields: [upload.field: problem])
        }
        let name = try await services.files.save(image.bytes, extension: image.format.fileExtension)
        do {
            let (saved, previous) = try await transaction { db -> (ProfilePicture, String?) in
                let existing = try await ProfilePicture.find(me.userID, on: db)
                let picture = existing ?? { let p = ProfilePicture(); p.id = me.userID; return p }()
                let previous = existing?.storageName
                picture.storageName = name
                picture.contentType = image.format.contentType
                picture.side = image.width
                picture.byteCount = image.bytes.count
                picture.updatedAt = UnixTime.nowMillis
                try await picture.save(on: db)
                return (picture, previous)
            }
            if let previous { await services.files.delete(previous) }
            return saved
        } catch {
            await services.files.delete(name)
            throw error
        }
    }

    func deletePicture(by me: Principal) async throws {
        let name = try await transaction { db -> String? in
            guard let picture = try await ProfilePicture.find(me.userID, on: db) else { return nil }
            try await picture.delete(on: db)
            return picture.storageName
        }
        if let name { await services.files.delete(name) }
    }

    /// Whether a page may show `owner`'s picture to the caller: there is one, and the moderators have
    /// not hidden it from them.
    func showsPicture(of owner: UserID, to me: Principal) async throws -> Bool {
        guard let picture = try await ProfilePicture.find(owner, on: db) else { return false }
        return ProfilePicturePolicy.maySee(owner: owner, viewer: me.caller, sharesSomething: true, hidden: picture.hiddenAt != nil)
    }

    /// Whether the caller has a picture of their own.
    func hasPicture(_ me: Principal) async throws -> Bool {
        try await ProfilePicture.find(me.userID, on: db) != nil
    }

    /// Whether `owner`'s picture is hidden, for those who moderate (`ProfilePicturePolicy.maySeeModeration`);
    /// nil for everyone else, and when there is no picture.
    func pictureHidden(of owner: UserID, for me: Principal) async throws -> Bool? {
        guard ProfilePicturePolicy.maySeeModeration(by: me.caller) else { return nil }
        return try await ProfilePicture.find(owner, on: db).map { $0.hiddenAt != nil }
    }

    /// `owner`'s picture, if the caller may see it (else 404, as if there were none).
    func picture(of owner: UserID, for me: Principal) async throws -> (ProfilePicture, Data) {
        guard let picture = try await ProfilePicture.find(owner, on: db) else { throw WaybillError.notFound }
        let shares = me.userID == owner ? true : try await sharesSomething(owner, with: me)
        guard ProfilePicturePolicy.maySee(owner: owner, viewer: me.caller, sharesSomething: shares, hidden: picture.hiddenAt != nil) else {
            throw WaybillError.notFound
        }
        guard let data = try? await services.files.read(picture.storageName) else { throw WaybillError.notFound }
        return (picture, data)
    }

    /// Whether the two accounts share a shipment that links them (`Acquaintance.shipmentLinks`: not
    /// cancelled, and through its receiver only once picked up), a trip request, or `owner` has a
    /// trip open to requests.
    func sharesSomething(_ owner: UserID, with me: Principal) async throws -> Bool {
        guard let sql = db.tracedSQL, let ownerUser = try await User.find(owner, on: db) else { return false }
        let viewer = me.userID
        // An account without a verified email receives nothing: NULL, which equals no row's recipient.
        let viewerEmail: String? = me.caller.verifiedEmail
        let ownerEmail: String? = ownerUser.emailVerifiedAt == nil ? nil : ownerUser.email.lowercased()
        // Customer and driver in a status that links them so; one of them the receiver in a status
        // that links through the receiver. Each row found is then asked of the rule itself.
        let direct = Acquaintance.shipmentStatuses(throughReceiver: false).map(\.rawValue).sorted()
        let throughReceiver = Acquaintance.shipmentStatuses(throughReceiver: true).map(\.rawValue).sorted()
        let shipments = try await sql.raw("""
            SELECT customer_id, driver_id, recipient_email, status FROM orders WHERE
              (((customer_id = \(bind: owner) AND driver_id = \(bind: viewer)) OR (customer_id = \(bind: viewer) AND driver_id = \(bind: owner)))
               AND status IN (\(binds: direct)))
              OR ((((customer_id = \(bind: owner) OR driver_id = \(bind: owner)) AND recipient_email = \(bind: viewerEmail))
                   OR ((customer_id = \(bind: viewer) OR driver_id = \(bind: viewer)) AND recipient_email = \(bind: ownerEmail)))
                  AND status IN (\(binds: throughReceiver)))
            LIMIT 10
            """).all()
        let ownerCaller = ownerUser.caller(id: owner)
        for row in shipments {
            let parties = OrderParties(customerID: try row.decode(column: "customer_id", as: UserID.self),
                                       driverID: try row.decode(column: "driver_id", as: UserID?.self),
                                       recipientEmail: try row.decode(column: "recipient_email", as: String?.self))
            guard let status = OrderStatus(rawValue: try row.decode(column: "status", as: String.self)) else { continue }
            if Acquaintance.shipmentLinks(parties, status: status, ownerCaller, me.caller) { return true }
        }
        let request = try await sql.raw("""
            SELECT 1 AS hit FROM trip_requests WHERE (sender_id = \(bind: owner) AND traveller_id = \(bind: viewer))
              OR (sender_id = \(bind: viewer) AND traveller_id = \(bind: owner)) LIMIT 1
            """).first()
        if request != nil { return true }
        guard me.caller.may(.placeOrders) else { return false }
        let trip = try await sql.raw("""
            SELECT 1 AS hit FROM trips WHERE traveller_id = \(bind: owner) AND cancelled_at IS NULL AND departs_until > \(bind: UnixTime.nowMillis) LIMIT 1
            """).first()
        return trip != nil
    }
}
