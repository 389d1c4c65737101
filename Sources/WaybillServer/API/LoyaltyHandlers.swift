import Foundation
import OpenAPIRuntime
import WaybillAPI
import WaybillCore

/// Loyalty points: translation only (`Loyalty`, `LoyaltyRules` and `LoyaltyPolicy` decide).
extension APIHandler {
    var loyalty: Loyalty { get throws { Loyalty(request: try request) } }

    func getLoyalty(_ input: Operations.GetLoyalty.Input) async throws -> Operations.GetLoyalty.Output {
        let me = try await principal()
        let account = try await loyalty.account(for: me, limit: input.query.limit ?? 100)
        let rules = try account.rules.rules
        return .ok(.init(body: .json(S.LoyaltyAccount(
            points: account.balance.points,
            worth: Self.money(Money(rules.value(of: account.balance.points) ?? 0, account.currency)),
            nextExpiry: account.balance.nextExpiry.map { .init(points: $0.points, at: Self.date($0.expiresAt)) },
            rules: try Self.loyaltyRules(account.rules, currency: account.currency),
            entries: try account.entries.map { line in
                S.LoyaltyEntry(kind: try wire(line.entry.kind), points: line.entry.points, at: Self.date(line.entry.at),
                               expiresAt: line.entry.kind.sign > 0 ? line.entry.expiresAt.map(Self.date) : nil,
                               orderId: line.entry.order?.uuidString, orderReference: line.reference)
            }))))
    }

    func getLoyaltyRules(_ input: Operations.GetLoyaltyRules.Input) async throws -> Operations.GetLoyaltyRules.Output {
        let me = try await principal()
        let (record, currency) = try await loyalty.rules(for: me)
        return .ok(.init(body: .json(try Self.loyaltyRules(record, currency: currency))))
    }

    func putLoyaltyRules(_ input: Operations.PutLoyaltyRules.Input) async throws -> Operations.PutLoyaltyRules.Output {
        let me = try await principal()
        guard case .json(let body) = input.body else { throw WaybillError.unsupportedBody }
        let rules = LoyaltyRules(pointsPerUnit: body.pointsPerUnit, pointValue: body.pointValue, validityDays: body.validityDays,
                                 minimumRedemption: body.minimumRedemption, maxDiscountPercent: body.maxDiscountPercent)
        let (record, currency) = try await loyalty.replaceRules(rules, by: me)
        return .ok(.init(body: .json(try Self.loyaltyRules(record, currency: currency))))
    }

    static func loyaltyRules(_ record: LoyaltyRulesRecord, currency: String) throws -> S.LoyaltyRules {
        let r = try record.rules
        return S.LoyaltyRules(pointsPerUnit: r.pointsPerUnit, pointValue: r.pointValue, validityDays: r.validityDays,
                              minimumRedemption: r.minimumRedemption, maxDiscountPercent: r.maxDiscountPercent,
                              currency: currency, version: record.id ?? 0, updatedAt: date(record.createdAt))
    }
}
