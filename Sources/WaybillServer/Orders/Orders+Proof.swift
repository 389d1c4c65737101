import Crypto
import Fluent
import Foundation
import SQLKit
import Vapor
import WaybillCore

/// Proof of delivery and photos: recipient codes, image checks, stored files.
extension Orders {
    // MARK: Proof and photos

    struct Upload: Sendable {
        var bytes: [UInt8]
        var field: String
    }

    func deliver(_ id: OrderID, signature: Upload, photo: Upload?, recipientName: String, code: String?, scannedCode: String? = nil,
                 idempotencyKey: String? = nil, by principal: Principal) async throws -> Order {
        try await once(idempotencyKey, id, .deliver, by: principal) { receipt in
            try await deliver(id, signature: signature, photo: photo, recipientName: recipientName, code: code, scannedCode: scannedCode,
                              receipt: receipt, by: principal)
        }
    }

    private func deliver(_ id: OrderID, signature: Upload, photo: Upload?, recipientName: String, code: String?, scannedCode: String?,
                         receipt: StepReceipt?, by principal: Principal) async throws -> Order {
        // Who may deliver, and whether the order is under way, before looking at what was sent.
        let current = try await visibleOrder(id, to: principal)
        let decision = OrderStateMachine.decide(.deliver, from: current.status, as: capacities(of: principal, for: current))
        if let refusal = WaybillError.refused(decision, { WaybillError.invalidTransition($0, .deliver).message }) {
            if scannedCode != nil, refusal.status == .conflict {
                try await Handovers(services: services, db: db, logger: logger).record(id, step: HandOverKind.delivery.rawValue, .replayed, by: principal)
            }
            throw refusal
        }
        try await refuseIfCounterTakesIt(id)
        let qr = try await Handovers(services: services, db: db, logger: logger).proof(scannedCode, for: current, step: .delivery, by: principal)
        let name = recipientName.trimmingCharacters(in: .whitespacesAndNewlines)
        var errors = FieldErrors()
        Validation.text(name, field: "recipientName", maxLength: Validation.maxNameLength, into: &errors)
        if !errors.isEmpty { throw WaybillError.validation(errors) }
        if current.requireRecipientCode {
            try await checkRecipientCode(code, order: current)
        }
        let signatureImage = try await sanitize(signature, allowed: [.png], maxBytes: UploadLimits.signatureBytes,
                                                maxPixels: UploadLimits.signaturePixels)
        let photoImage = try await photo.asyncMap {
            try await sanitize($0, allowed: [.png, .jpeg], maxBytes: UploadLimits.photoBytes, maxPixels: UploadLimits.photoPixels)
        }
        let store = services.files
        let signatureName = try await store.save(signatureImage.bytes, extension: signatureImage.format.fileExtension)
        let photoName = try await photoImage.asyncMap { try await store.save($0.bytes, extension: $0.format.fileExtension) }
        let signatureFile = Self.fileRecord(of: id, kind: .signature, image: signatureImage, name: signatureName, by: principal.userID)
        let photoFile = photoImage.flatMap { image in photoName.map { Self.fileRecord(of: id, kind: .deliveryPhoto, image: image, name: $0, by: principal.userID) } }
        let proof = HandOverProof(signatureFileID: signatureFile.id, photoFileID: photoFile?.id, signedBy: name,
                                  codeChecked: current.requireRecipientCode, qrCode: qr)
        do {
            let delivered = try await transition(id, .deliver, by: principal, proof: proof, receipt: receipt) { order, db in
                try await signatureFile.create(on: db)
                try await photoFile?.create(on: db)
                try await OrderEvent(orderID: id, type: "delivered", status: .delivered, actorID: principal.userID,
                                     note: "Signed by \(name)").insert(on: db)
                return .delivered(signedBy: name)
            }
            if qr != nil { try await Handovers(services: services, db: db, logger: logger).record(id, step: HandOverKind.delivery.rawValue, .accepted, by: principal) }
            return delivered
        } catch {
            await store.delete(signatureName)
            if let photoName { await store.delete(photoName) }
            throw error
        }
    }

    /// A traveller's delivery: the receiver's one-time code is the proof (`HandOverPolicy`), each
    /// try logged in the shipment's history, five tries then locked.
    func deliverWithCode(_ id: OrderID, code: String, signedBy name: String, by principal: Principal) async throws -> Order {
        let current = try await visibleOrder(id, to: principal)
        let decision = OrderStateMachine.decide(.deliver, from: current.status, as: capacities(of: principal, for: current))
        if let refusal = WaybillError.refused(decision, { WaybillError.invalidTransition($0, .deliver).message }) { throw refusal }
        guard let normalized = HandOverCodePolicy.normalized(code) else { throw WaybillError.validation("code", "invalid_format") }
        do {
            try await checkRecipientCode(normalized, order: current)
        } catch let error as WaybillError {
            // Every try is kept (who, when, the outcome), never the code itself.
            try? await transaction { db in
                try await OrderEvent(orderID: id, type: "code_tried", status: nil, actorID: principal.userID, note: error.code.rawValue).insert(on: db)
            }
            throw error
        }
        return try await transition(id, .deliver, by: principal, proof: HandOverProof(signedBy: name, codeChecked: true)) { order, db in
            try await OrderEvent(orderID: id, type: "code_tried", status: nil, actorID: principal.userID, note: "accepted").insert(on: db)
            try await OrderEvent(orderID: id, type: "delivered", status: .delivered, actorID: principal.userID,
                                 note: "Receiver's code given").insert(on: db)
            return .delivered(signedBy: name)
        }
    }

    /// A parcel that goes to a counter is not delivered by its driver (409 before any code is tried).
    func refuseIfCounterTakesIt(_ id: OrderID) async throws {
        let legs = try await Leg.query(on: db).filter(\.$orderID == id).sort(\.$position).all().map(\.state)
        guard let index = ShipmentRoute.actingLeg(for: .handOver, in: legs), let wait = ShipmentRoute.counterWait(.handOver, at: index, in: legs) else { return }
        throw WaybillError.counterWait(wait)
    }

    /// Five tries per code, counted even when the delivery is not completed.
    func checkRecipientCode(_ code: String?, order: Order) async throws {
        guard let code = code?.trimmingCharacters(in: .whitespaces), !code.isEmpty else {
            throw WaybillError.validation("code", "required")
        }
        guard let expected = order.recipientCodeHash, let sql = db.tracedSQL else {
            throw WaybillError(.conflict, .noRecipientCode, "No recipient code was sent for this order.")
        }
        let orderID = try order.storedID
        let counted = try await services.writeLock.withLock {
            try await sql.update(Order.schema)
                .set("recipient_code_attempts", to: SQLRaw("recipient_code_attempts + 1"))
                .where("id", .equal, SQLBind(orderID))
                .where("recipient_code_attempts", .lessThan, SQLBind(OneTimeCodePolicy.maxAttempts))
                .returning("id").all()
        }
        WrittenChanges.note(order: order.id, caches: services.caches)
        guard !counted.isEmpty else {
            throw WaybillError(.unprocessableEntity, .recipientCodeLocked,
                               "Too many wrong codes. Mark the delivery failed or ask a manager.", fields: ["code": "locked"])
        }
        let given = services.codes.hashRecipientCode(code, orderID: orderID)
        guard constantTimeEquals(Data(given.utf8), Data(expected.utf8)) else {
            throw WaybillError(.unprocessableEntity, .invalidRecipientCode, "The recipient's code is wrong.", fields: ["code": "invalid"])
        }
    }

    func sanitize(_ upload: Upload, allowed: Set<ImageFormat>, maxBytes: Int, maxPixels: Int) async throws -> SanitizedImage {
        guard upload.bytes.count <= maxBytes else {
            throw WaybillError(.payloadTooLarge, .payloadTooLarge, "\(upload.field) is larger than \(maxBytes / 1024) KB.",
                               fields: [upload.field: "too_large"])
        }
        let result = try await services.threadPool.runIfActive {
            Result { () throws(ImageProblem) -> SanitizedImage in
                try ImageSanitizer.sanitize(upload.bytes, allowed: allowed, maxWidth: maxPixels, maxHeight: maxPixels)
            }
        }
        switch result {
        case .success(let image): return image
        case .failure(let problem): throw problem.apiError(field: upload.field)
        }
    }

    static func fileRecord(of order: OrderID, kind: OrderFile.Kind, image: SanitizedImage, name: String, by user: UserID) -> OrderFile {
        let file = OrderFile()
        file.id = .generated()
        file.orderID = order
        file.kind = kind
        file.contentType = image.format.contentType
        file.storageName = name
        file.byteCount = image.bytes.count
        file.width = image.width
        file.height = image.height
        file.uploadedBy = user
        file.createdAt = UnixTime.nowMillis
        return file
    }

    /// The customer's photo of the parcel or document, before pickup.
    func addPhoto(_ id: OrderID, _ upload: Upload, by principal: Principal) async throws -> OrderFile {
        let order = try await visibleOrder(id, to: principal)
        try check(.addPhoto, on: order, by: principal) { "Photos can be added until the parcel is picked up; this order is \($0.rawValue)." }
        let image = try await sanitize(upload, allowed: [.png, .jpeg], maxBytes: UploadLimits.photoBytes, maxPixels: UploadLimits.photoPixels)
        let store = services.files
        let name = try await store.save(image.bytes, extension: image.format.fileExtension)
        do {
            return try await transaction { db in
                // Parallel uploads queue on the order's row (PostgreSQL; SQLite's writes are
                // serialised already), so the count below cannot be read twice before an insert.
                try await Self.lockOrderRow(id, on: db)
                let count = try await OrderFile.query(on: db).filter(\.$orderID == id).filter(\.$kind == .parcelPhoto).count()
                guard count < UploadLimits.photosPerOrder else {
                    throw WaybillError(.conflict, .tooManyPhotos, "An order has at most \(UploadLimits.photosPerOrder) photos.")
                }
                let file = Self.fileRecord(of: id, kind: .parcelPhoto, image: image, name: name, by: principal.userID)
                try await file.create(on: db)
                try await OrderEvent(orderID: id, type: "photo_added", status: nil, actorID: principal.userID).insert(on: db)
                return file
            }
        } catch {
            await store.delete(name)
            throw error
        }
    }

    /// Holds the order's row until the transaction ends (PostgreSQL's `FOR UPDATE`; on SQLite the
    /// write lock already serialises writers).
    static func lockOrderRow(_ id: OrderID, on db: any Database) async throws {
        guard let sql = db.tracedSQL, sql.dialect.name == "postgresql" else { return }
        try await sql.raw("SELECT id FROM orders WHERE id = \(bind: id) FOR UPDATE").run()
    }

    /// How long a checkout may stay unpaid before the customer's photos of it are deleted.
    static let abandonedPhotoMillis: Int64 = 24 * 3_600_000

    /// Deletes the photos of orders whose checkout was never paid within a day: pictures of
    /// parcels that were never sent are not kept. Returns how many were deleted.
    @discardableResult
    func deleteAbandonedPhotos(now: Int64 = UnixTime.nowMillis) async throws -> Int {
        guard let sql = db.tracedSQL else { return 0 }
        let cutoff = now - Self.abandonedPhotoMillis
        var deleted = 0
        // The photos themselves are selected (not the unpaid orders, most of which have none), in
        // batches, so a backlog of unpaid orders cannot hide the ones that do have photos.
        while true {
            let batch = try await sql.raw("""
                SELECT f.id, f.order_id, f.storage_name FROM order_files f JOIN orders o ON o.id = f.order_id
                WHERE f.kind = \(bind: OrderFile.Kind.parcelPhoto.rawValue) AND o.status = \(bind: OrderStatus.awaitingPayment.rawValue)
                  AND o.created_at < \(bind: cutoff)
                LIMIT 500
                """).all().map { (id: FileID(rawValue: try $0.decode(column: "id", as: UUID.self)),
                                  order: OrderID(rawValue: try $0.decode(column: "order_id", as: UUID.self)),
                                  name: try $0.decode(column: "storage_name", as: String.self)) }
            guard !batch.isEmpty else { break }
            try await transaction { db in
                try await OrderFile.query(on: db).filter(\.$id ~~ batch.map(\.id)).delete()
                for file in batch { WrittenChanges.note(order: file.order, caches: services.caches) }
            }
            // The rows are gone first: a crash here leaves an unreferenced file, never a row without one.
            for file in batch { await services.files.delete(file.name) }
            deleted += batch.count
            if batch.count < 500 { break }
        }
        if deleted > 0 { logger.info("Deleted \(deleted) photos of checkouts abandoned for a day") }
        return deleted
    }

    func file(orderID: OrderID, fileID: FileID, for principal: Principal) async throws -> (OrderFile, Data) {
        let order = try await visibleOrder(orderID, to: principal)
        guard let file = try await OrderFile.query(on: db).filter(\.$id == fileID).filter(\.$orderID == orderID).first(),
              file.kind != .claimPhoto || ClaimPolicy.maySee(claimant: order.customerID, by: principal.caller) else {
            throw WaybillError.notFound
        }
        return (file, try await services.files.read(file.storageName))
    }
}

extension OneTimeCodes {
    func hashRecipientCode(_ code: String, orderID: OrderID) -> String {
        let message = Data("recipient|\(orderID.uuidString)|\(code)".utf8)
        return Data(HMAC<SHA256>.authenticationCode(for: message, using: key)).base64EncodedString()
    }

    /// The receiver's app shows the code, so a copy is kept sealed (AES-GCM under a key of its own,
    /// bound to the order): a database dump alone does not reveal it. Erased at delivery.
    func sealRecipientCode(_ code: String, orderID: OrderID) -> String? {
        Self.seal(code, key: sealKey, context: orderID.uuidString)
    }

    func unsealRecipientCode(_ sealed: String, orderID: OrderID) -> String? {
        Self.unseal(sealed, key: sealKey, context: orderID.uuidString)
    }

    /// AES-GCM, bound to `context`, base64: the one sealing every kept secret goes through.
    static func seal(_ plain: String, key: SymmetricKey, context: String) -> String? {
        try? AES.GCM.seal(Data(plain.utf8), using: key, authenticating: Data(context.utf8)).combined?.base64EncodedString()
    }

    static func unseal(_ sealed: String, key: SymmetricKey, context: String) -> String? {
        guard let data = Data(base64Encoded: sealed), let box = try? AES.GCM.SealedBox(combined: data),
              let plain = try? AES.GCM.open(box, using: key, authenticating: Data(context.utf8)) else { return nil }
        return String(data: plain, encoding: .utf8)
    }

    private var sealKey: SymmetricKey {
        HKDF<SHA256>.deriveKey(inputKeyMaterial: key, info: Data("waybill recipient code seal".utf8), outputByteCount: 32)
    }
}

extension MailTemplates {
    static func recipientCode(to recipient: MailAddress, reference: String, code: String) -> MailMessage {
        MailMessage(to: recipient, subject: "Your delivery code: \(code)", text: """
            Hello,

            A parcel (\(reference)) is on its way to you. Give the driver this code when you receive it: \(code)

            Bonjour,
            Un colis (\(reference)) est en route vers vous. Donnez ce code au livreur à la réception : \(code)
            """)
    }
}

/// The receiver's side: confirming receipt.
extension Orders {
    /// The receiver (an account with the recipient's verified email) says the parcel reached them,
    /// with a photo if they took one: a `receipt` hand-over on the last leg. Once per shipment (409).
    func confirmReceipt(_ id: OrderID, photo: Upload?, scannedCode: String? = nil, by principal: Principal) async throws -> Order {
        let order = try await visibleOrder(id, to: principal)
        let handovers = Handovers(services: services, db: db, logger: logger)
        let qr = try await handovers.proof(scannedCode, for: order, step: .receipt, by: principal)
        return try await handovers.scanned(qr, order: id, step: .receipt, by: principal) {
            try await confirmReceipt(order, photo: photo, qr: qr, by: principal)
        }
    }

    private func confirmReceipt(_ order: Order, photo: Upload?, qr: String?, by principal: Principal) async throws -> Order {
        let id = try order.storedID
        try check(.confirmReceipt, on: order, by: principal) { "The parcel can be confirmed once delivered; this shipment is \($0.rawValue)." }
        let image = try await photo.asyncMap {
            try await sanitize($0, allowed: [.png, .jpeg], maxBytes: UploadLimits.photoBytes, maxPixels: UploadLimits.photoPixels)
        }
        let store = services.files
        let name = try await image.asyncMap { try await store.save($0.bytes, extension: $0.format.fileExtension) }
        let events = services.events
        do {
            return try await transaction { db in
                try await Self.lockOrderRow(id, on: db)
                guard try await Orders(services: services, db: db, logger: logger).receipt(of: id) == nil else {
                    throw WaybillError(.conflict, .alreadyConfirmed, "Receipt of this shipment is already confirmed.")
                }
                let file = image.flatMap { image in name.map { Self.fileRecord(of: id, kind: .receiptPhoto, image: image, name: $0, by: principal.userID) } }
                try await file?.create(on: db)
                let last = try await Leg.query(on: db).filter(\.$orderID == id).sort(\.$position, .descending).first()
                let handOver = HandOver(orderID: id, legPosition: last?.position ?? 0, kind: .receipt, actorID: principal.userID)
                HandOverProof(photoFileID: file?.id, qrCode: qr).apply(to: handOver)
                try await handOver.create(on: db)
                try await OrderEvent(orderID: id, type: "receipt_confirmed", status: nil, actorID: principal.userID).insert(on: db)
                try await events.record(.shipment(try OrderRow(order), .receiptConfirmed(receiver: try principal.person)), on: db)
                return order
            }
        } catch {
            if let name { await store.delete(name) }
            throw error
        }
    }
}
