import Fluent
import SQLKit
import Foundation
import Vapor
import WaybillCore

/// One push to one device, queued in the outbox in the transaction that made the notification.
struct PushJob: Codable, Sendable {
    var deviceID: DeviceID
    var title: String
    var body: String
    var data: [String: String]
    var collapseKey: String?
}

/// Hands queued pushes to the push services. The outbox retries with backoff when this throws;
/// a device the service reports as gone is removed; a push refused for good is dropped.
struct PushDelivery {
    let app: Application

    /// Queues a push to each of `userID`'s devices.
    static func enqueue(userID: UserID, title: String, body: String, data: [String: String], collapseKey: String?,
                        on db: any Database) async throws {
        guard let sql = db.tracedSQL else { return }
        let devices = try await sql.raw("SELECT * FROM \"devices\" WHERE \"user_id\" = \(bind: userID)").all().map(Device.init(row:))
        for device in devices {
            let job = PushJob(deviceID: try device.storedID, title: title, body: body, data: data, collapseKey: collapseKey)
            try await Outbox.enqueueJob(kind: Outbox.pushKind, payload: String(decoding: try Outbox.payloadEncoder.encode(job), as: UTF8.self), on: db)
        }
    }

    struct Retry: Error, CustomStringConvertible {
        let description: String
    }

    func deliver(_ payload: String) async throws {
        let job = try JSONDecoder().decode(PushJob.self, from: Data(payload.utf8))
        // Signed out or unregistered meanwhile: nothing to send.
        guard let device = try await Device.find(job.deviceID, on: app.db),
              let platform = PushPlatform(devicePlatform: device.platform.rawValue) else { return }
        let message = PushMessage(title: job.title, body: job.body, data: job.data, collapseKey: job.collapseKey)
        switch await app.waybill.push.send(message, platform: platform, token: device.pushToken) {
        case .delivered:
            return
        case .gone:
            app.logger.info("Push service says a \(device.platform.rawValue) device is gone; removing it")
            try await app.writeLock.withLock { try await device.delete(on: app.db) }
        case .retry(let reason):
            throw Retry(description: "push to a \(device.platform.rawValue) device: \(reason)")
        case .rejected(let reason):
            app.logger.warning("Push to a \(device.platform.rawValue) device refused for good: \(reason)")
        }
    }
}
