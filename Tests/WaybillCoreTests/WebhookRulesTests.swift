import Foundation
import Testing
@testable import WaybillCore

@Suite("Webhook rules: addresses, who hears what, the retry schedule, the signature")
struct WebhookRulesTests {
    @Test("Only https addresses with a host and no credentials; plain http only in development")
    func addresses() {
        #expect(WebhookPolicy.urlProblem("https://hooks.example.com/waybill", allowInsecure: false) == nil)
        #expect(WebhookPolicy.urlProblem("http://hooks.example.com/waybill", allowInsecure: false) == "https_required")
        #expect(WebhookPolicy.urlProblem("http://localhost:9000/h", allowInsecure: true) == nil)
        #expect(WebhookPolicy.urlProblem("https://user:pw@hooks.example.com/", allowInsecure: false) == "invalid_url")
        #expect(WebhookPolicy.urlProblem("ftp://hooks.example.com/", allowInsecure: true) == "https_required")
        #expect(WebhookPolicy.urlProblem("not a url", allowInsecure: false) == "invalid_url")
        #expect(WebhookPolicy.urlProblem("https://" + String(repeating: "a", count: 2100) + ".com", allowInsecure: false) == "too_long")
        let errors = WebhookPolicy.validate(url: nil, events: ["shipment.placed", "ping"], description: nil, allowInsecure: false)
        #expect(errors["events"] == "unknown_event", "ping is sent by hand, never subscribed to")
        #expect(WebhookPolicy.validate(url: nil, events: [], description: nil, allowInsecure: false)["events"] == "required")
    }

    @Test("Company endpoints are for dispatchers and hear shipments only; own endpoints hear what is the owner's")
    func whoHearsWhat() {
        let customer = Caller(id: UserID(), role: .customer), manager = Caller(id: UserID(), role: .manager)
        #expect(WebhookPolicy.mayRegister(.own, by: customer) && !WebhookPolicy.mayRegister(.company, by: customer))
        #expect(WebhookPolicy.mayRegister(.company, by: manager))
        #expect(WebhookPolicy.receivesShipment(.own, event: .shipmentDelivered, ownerCapacities: [.owner], ownerIsPayee: false))
        #expect(!WebhookPolicy.receivesShipment(.own, event: .shipmentDelivered, ownerCapacities: [.receiver], ownerIsPayee: false))
        #expect(!WebhookPolicy.receivesShipment(.own, event: .payoutSent, ownerCapacities: [.owner], ownerIsPayee: false), "the sender is not told of the carrier's pay")
        #expect(WebhookPolicy.receivesShipment(.own, event: .payoutSent, ownerCapacities: [.assignee], ownerIsPayee: true))
        #expect(WebhookPolicy.receivesShipment(.company, event: .shipmentPlaced, ownerCapacities: [.manager], ownerIsPayee: false))
        #expect(!WebhookPolicy.receivesPersonal(.company) && WebhookPolicy.receivesPersonal(.own))
    }

    @Test("Retries: 1 min, 5 min, 30 min, 2 h, 5 h, then every 10 h, for three days; then the endpoint is turned off")
    func schedule() {
        let start: Int64 = 1_000_000
        var now = start, attempts = 0
        var gaps: [Int64] = []
        while let next = WebhookRetry.nextAttempt(createdAt: start, attempts: attempts + 1, now: now) {
            gaps.append((next - now) / 1000)
            attempts += 1
            now = next
        }
        #expect(Array(gaps.prefix(6)) == [60, 300, 1800, 7200, 18_000, 36_000])
        #expect(now - start <= WebhookRetry.windowMillis && now - start > WebhookRetry.windowMillis - 36_000_000)
        #expect(!WebhookRetry.shouldDisable(failingSince: nil, now: now))
        #expect(!WebhookRetry.shouldDisable(failingSince: now - 3_600_000, now: now))
        #expect(WebhookRetry.shouldDisable(failingSince: now - WebhookRetry.disableAfterMillis, now: now))
        #expect(WebhookRetry.shouldDisable(failingSince: start, now: now, gaveUpOn: start), "failed the whole time a delivery was retried")
        #expect(!WebhookRetry.shouldDisable(failingSince: start + 86_400_000, now: now, gaveUpOn: start), "it answered well meanwhile")
    }

    @Test("A signature checks out for the exact bytes and secret, within five minutes, and for any of several v1 values")
    func signature() throws {
        let body = Array(#"{"id":"evt_1","type":"ping"}"#.utf8)
        let at = Date(timeIntervalSince1970: 1_790_000_000)
        let header = WebhookSignature.headerValue(secrets: ["whsec_a"], timestamp: 1_790_000_000, body: body)
        #expect(header.hasPrefix("t=1790000000,v1="))
        try WebhookSignature.verify(body: body, header: header, secret: "whsec_a", now: at)
        #expect(throws: WebhookSignature.Failure.noMatchingSignature) { try WebhookSignature.verify(body: body + [32], header: header, secret: "whsec_a", now: at) }
        #expect(throws: WebhookSignature.Failure.noMatchingSignature) { try WebhookSignature.verify(body: body, header: header, secret: "whsec_b", now: at) }
        #expect(throws: WebhookSignature.Failure.timestampOutsideTolerance) {
            try WebhookSignature.verify(body: body, header: header, secret: "whsec_a", now: at.addingTimeInterval(301))
        }
        #expect(throws: WebhookSignature.Failure.malformedHeader) { try WebhookSignature.verify(body: body, header: "v1=abc", secret: "whsec_a", now: at) }
        let rotating = WebhookSignature.headerValue(secrets: ["whsec_old", "whsec_new"], timestamp: 1_790_000_000, body: body)
        try WebhookSignature.verify(body: body, header: rotating, secret: "whsec_new", now: at)
        // A known answer, computed independently: printf '1790000000.{"id":"evt_1","type":"ping"}' | openssl dgst -sha256 -hmac whsec_a
        #expect(WebhookSignature.signature(secret: "whsec_a", timestamp: 1_790_000_000, body: body) == Self.knownHMAC)
    }

    static let knownHMAC = "fbfdb4b6b6a15475daeb51c4c08db0bc37f3a2da3a28c0df3ad8ff22d66b2857"
}

@Suite("API key rules: scopes by operation, who makes which key")
struct APIKeyRulesTests {
    @Test("A key calls only what its scopes cover; keys, sessions and passwords are never covered")
    func scopes() {
        #expect(APIKeyPolicy.allows("getOrder", scopes: [.readShipments]))
        #expect(!APIKeyPolicy.allows("createOrder", scopes: [.readShipments]))
        #expect(APIKeyPolicy.allows("createOrder", scopes: [.writeShipments]))
        #expect(APIKeyPolicy.allows("getMe", scopes: [.readParcels]), "who the key acts for, with any scope")
        for never in ["createAPIKey", "revokeAPIKey", "listAPIKeys", "changePassword", "logout", "createLiveTicket", "updateUser", nil] {
            #expect(!APIKeyPolicy.allows(never, scopes: Set(APIKeyScope.allCases)), "\(never ?? "no operation")")
        }
    }

    @Test("Every account that sends makes keys for itself; the dispatch scope is for dispatchers")
    func makers() {
        let customer = Caller(id: UserID(), role: .customer), manager = Caller(id: UserID(), role: .manager)
        #expect(APIKeyPolicy.mayCreate([.readShipments, .webhooks], by: customer))
        #expect(!APIKeyPolicy.mayCreate([.dispatch], by: customer))
        #expect(APIKeyPolicy.mayCreate([.dispatch], by: manager))
        #expect(APIKeyPolicy.validate(name: " ", scopes: [], expiresInDays: 0).fields.keys.sorted() == ["expiresInDays", "name", "scopes"])
        #expect(APIKeyPolicy.validate(name: "ERP", scopes: ["teleport"], expiresInDays: nil)["scopes"] == "invalid")
        #expect(APIKeyPolicy.looksLikeKey("wb_live_" + String(repeating: "a", count: 43)) && !APIKeyPolicy.looksLikeKey("wb_live_x"))
    }
}
