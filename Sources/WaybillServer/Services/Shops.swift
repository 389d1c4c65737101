import Crypto
import Fluent
import SQLKit
import Vapor
import WaybillCore

/// A shop connected to an account.
final class ShopRecord: Model, @unchecked Sendable {
    static let schema = "shops"

    @ID(custom: .id, generatedBy: .user) var id: ShopID?
    @Field(key: "owner_id") var ownerID: UserID
    @Field(key: "platform") var platform: ShopPlatform
    @Field(key: "name") var name: String
    /// The webhook signing secret, sealed (AES-GCM, bound to the shop): the database alone does not reveal it.
    @Field(key: "secret_sealed") var secretSealed: String
    @Field(key: "created_at") var createdAt: Int64
    @OptionalField(key: "last_delivery_at") var lastDeliveryAt: Int64?
    @Field(key: "numbers_received") var numbersReceived: Int

    var properties: [any AnyProperty] { [$id, $ownerID, $platform, $name, $secretSealed, $createdAt, $lastDeliveryAt, $numbersReceived] }

    init() {}
}

/// Shops whose orders' tracking numbers arrive by themselves (issue "Parcels of every carrier",
/// item 8): Shopify's and WooCommerce's order and fulfilment webhooks, signed with HMAC-SHA256 of
/// the body (base64, `X-Shopify-Hmac-Sha256`, `X-WC-Webhook-Signature`), each delivery handled once;
/// every number becomes a followed parcel of the shop's owner.
struct Shops: WaybillService {
    let services: WaybillServices
    let db: any Database
    let logger: Logger

    init(services: WaybillServices, db: any Database, logger: Logger) {
        self.services = services
        self.db = db
        self.logger = logger
    }

    func webhookURL(_ shop: ShopRecord) throws -> String {
        services.config.publicURL + APIHandler.basePath + "/shops/\(try shop.storedID.uuidString.lowercased())/webhook"
    }

    /// Connects a shop; answers it with its signing secret (shown this once).
    func connect(platform: ShopPlatform, name: String, secret given: String?, by me: Principal) async throws -> (ShopRecord, String) {
        guard ShopPolicy.mayConnect(me.caller) else { throw me.user.restriction != nil ? WaybillError.accountSuspended : WaybillError.forbidden }
        let errors = ShopPolicy.validate(name: name, secret: given)
        guard errors.isEmpty else { throw WaybillError.validation(errors) }
        var generator = Randomness.generator
        let secret = given ?? "wbshop_" + Data((0..<24).map { _ in UInt8.random(in: 0...255, using: &generator) }).base64URLEncodedString()
        let shop = ShopRecord()
        let id = ShopID.generated()
        shop.id = id
        shop.ownerID = me.userID
        shop.platform = platform
        shop.name = name.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let sealed = services.codes.sealSecret(secret, context: "shop|\(id.uuidString)") else {
            throw WaybillError(.internalServerError, .internalError, "The secret could not be sealed.")
        }
        shop.secretSealed = sealed
        shop.createdAt = UnixTime.nowMillis
        shop.numbersReceived = 0
        try await db.writeTransaction(services) { db in
            guard try await ShopRecord.query(on: db).filter(\.$ownerID == me.userID).count() < ShopPolicy.maxPerAccount else {
                throw WaybillError(.conflict, .conflict, "An account connects at most \(ShopPolicy.maxPerAccount) shops.")
            }
            try await shop.create(on: db)
        }
        return (shop, secret)
    }

    func list(for me: Principal) async throws -> [ShopRecord] {
        try await ShopRecord.query(on: db).filter(\.$ownerID == me.userID).sort(\.$createdAt).all()
    }

    func remove(_ id: ShopID, by me: Principal) async throws {
        guard let shop = try await ShopRecord.find(id, on: db), ShopPolicy.maySee(owner: shop.ownerID, by: me.caller) else { throw WaybillError.notFound }
        try await db.writeTransaction(services) { db in try await shop.delete(on: db) }
    }

    /// One webhook delivery: 404 for an unknown shop, 401 for a wrong signature, else the numbers
    /// followed (0 for a delivery already handled, or one without tracking numbers).
    func receive(_ id: ShopID, body: [UInt8], signature: String?, deliveryID: String?) async throws -> Int {
        if let wait = services.shopWebhookLimiter.take(id.uuidString) { throw WaybillError.tooManyRequests(retryAfter: wait) }
        guard let shop = try await ShopRecord.find(id, on: db),
              let secret = services.codes.unsealSecret(shop.secretSealed, context: "shop|\(id.uuidString)") else { throw WaybillError.notFound }
        let expected = Data(HMAC<SHA256>.authenticationCode(for: body, using: SymmetricKey(data: Data(secret.utf8)))).base64EncodedString()
        guard let signature, Data(signature.utf8).count == Data(expected.utf8).count,
              zip(Data(signature.utf8), Data(expected.utf8)).reduce(0, { $0 | ($1.0 ^ $1.1) }) == 0 else {
            logger.notice("Shop webhook refused: signature mismatch (\(shop.platform.rawValue))")
            throw WaybillError(.unauthorized, .invalidSignature, "The webhook's signature does not match this shop's secret.")
        }
        guard let json = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] else {
            throw WaybillError(.badRequest, .invalidJSON, "The body is not a JSON object.")
        }
        let numbers = ShopOrders.trackingNumbers(shop.platform, json)
        // A suspended owner's shop is heard but adds nothing (the shop must not give up on the endpoint).
        guard let owner = try await User.find(shop.ownerID, on: db), ParcelPolicy.allows(.change, as: .owner, by: owner.caller(id: shop.ownerID)) else { return 0 }
        // Each delivery once: retried deliveries carry the same id.
        if let deliveryID, !deliveryID.isEmpty {
            do {
                try await db.writeTransaction(services) { db in
                    guard let sql = db.tracedSQL else { return }
                    try await sql.insert(into: "shop_deliveries").columns("shop_id", "delivery_id", "received_at")
                        .values(SQLBind(id), SQLBind(String(deliveryID.prefix(200))), SQLBind(UnixTime.nowMillis)).run()
                }
            } catch let error as any DatabaseError where error.isConstraintFailure {
                return 0
            }
        }
        // The shop acts for its owner, through the same service and rules as the owner's own requests.
        let me = try Principal(user: owner, sessionID: SignInID())
        let parcels = Parcels(services: services, db: db, logger: logger)
        var followed = 0
        for found in numbers {
            let name = [found.order, shop.name].compactMap { $0 }.joined(separator: " · ")
            do {
                _ = try await parcels.add(ParcelDraft(number: found.number, carrier: found.carrier, name: String(name.prefix(80))), by: me)
                followed += 1
            } catch let error as WaybillError where error.status == .conflict || error.status == .unprocessableEntity {
                continue // followed already, or a number no carrier knows and the shop named none
            }
        }
        shop.lastDeliveryAt = UnixTime.nowMillis
        shop.numbersReceived += followed
        try await db.writeTransaction(services) { db in try await shop.save(on: db) }
        return followed
    }
}

extension OneTimeCodes {
    /// Secrets Waybill must read back (a shop's webhook key), sealed under a key of their own and
    /// bound to what they belong to.
    func sealSecret(_ secret: String, context: String) -> String? {
        Self.seal(secret, key: secretKey, context: context)
    }

    func unsealSecret(_ sealed: String, context: String) -> String? {
        Self.unseal(sealed, key: secretKey, context: context)
    }

    private var secretKey: SymmetricKey {
        HKDF<SHA256>.deriveKey(inputKeyMaterial: key, info: Data("waybill stored secret seal".utf8), outputByteCount: 32)
    }
}
