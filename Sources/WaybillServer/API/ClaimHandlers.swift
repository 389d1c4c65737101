import Foundation
import OpenAPIRuntime
import WaybillAPI
import WaybillCore

/// Insurance: translation only (`Claims`, `Insurance` and `ClaimPolicy` decide).
extension APIHandler {
    var claims: Claims { get throws { Claims(request: try request) } }

    func getInsuranceTable(_ input: Operations.GetInsuranceTable.Input) async throws -> Operations.GetInsuranceTable.Output {
        let me = try await principal()
        return .ok(.init(body: .json(try Self.insuranceTable(try await claims.table(for: me)))))
    }

    func putInsuranceTable(_ input: Operations.PutInsuranceTable.Input) async throws -> Operations.PutInsuranceTable.Output {
        let me = try await principal()
        guard case .json(let body) = input.body else { throw WaybillError.unsupportedBody }
        let table = InsuranceTable(currency: body.currency,
                                   bands: body.bands.map { .init(upTo: $0.upTo, rateBasisPoints: $0.rateBasisPoints, minimumPremium: $0.minimumPremium) },
                                   claimWindowDays: body.claimWindowDays, secondApprovalAbove: body.secondApprovalAbove)
        return .ok(.init(body: .json(try Self.insuranceTable(try await claims.replaceTable(table, by: me)))))
    }

    func fileClaim(_ input: Operations.FileClaim.Input) async throws -> Operations.FileClaim.Output {
        let me = try await principal()
        let id: OrderID = try Self.uuid(input.path.orderId)
        guard case .multipartForm(let form) = input.body else { throw WaybillError.unsupportedBody }
        var kind: String?, amount: String?, description: String?
        var photos: [Orders.Upload] = []
        do {
            for try await part in form {
                switch part {
                case .kind(let p): kind = String(decoding: try await Self.collect(p.payload.body, field: "kind", limit: 20), as: UTF8.self)
                case .amount(let p): amount = String(decoding: try await Self.collect(p.payload.body, field: "amount", limit: 12), as: UTF8.self)
                case .description(let p):
                    description = String(decoding: try await Self.collect(p.payload.body, field: "description", limit: 8 * ClaimPolicy.descriptionLimit),
                                         as: UTF8.self)
                case .photos(let p):
                    guard photos.count < ClaimPolicy.photosPerClaim else { throw WaybillError.validation("photos", "too_many") }
                    photos.append(.init(bytes: try await Self.collect(p.payload.body, field: "photos", limit: UploadLimits.photoBytes), field: "photos"))
                case .undocumented: continue
                }
            }
        } catch let error as WaybillError {
            throw error
        } catch {
            throw WaybillError(.badRequest, .invalidMultipart, "The multipart body is malformed or repeats a part.")
        }
        var errors = FieldErrors()
        let claimKind = kind.flatMap(ClaimKind.init(rawValue:))
        if claimKind == nil { errors.add("kind", kind == nil ? "required" : "invalid") }
        let value = amount.flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        if value == nil { errors.add("amount", amount == nil ? "required" : "invalid") }
        if description == nil { errors.add("description", "required") }
        guard errors.isEmpty, let claimKind, let value, let description else { throw WaybillError.validation(errors) }
        let claim = try await claims.file(id, .init(kind: claimKind, description: description, amount: value, photos: photos), by: me)
        return .created(.init(body: .json(try Self.claim(try await claims.claim(try claim.storedID, for: me)))))
    }

    func listClaims(_ input: Operations.ListClaims.Input) async throws -> Operations.ListClaims.Output {
        let me = try await principal()
        let status = input.query.status.flatMap { ClaimStatus(rawValue: $0.rawValue) }
        let views = try await claims.list(status: status, limit: input.query.limit ?? 100, for: me)
        return .ok(.init(body: .json(.init(items: try views.map(Self.claim)))))
    }

    func getClaim(_ input: Operations.GetClaim.Input) async throws -> Operations.GetClaim.Output {
        let me = try await principal()
        return .ok(.init(body: .json(try Self.claim(try await claims.claim(try Self.uuid(input.path.claimId), for: me)))))
    }

    func decideClaim(_ input: Operations.DecideClaim.Input) async throws -> Operations.DecideClaim.Output {
        let me = try await principal()
        guard case .json(let body) = input.body else { throw WaybillError.unsupportedBody }
        let decision: ClaimPolicy.Decision
        switch body.decision {
        case .approve:
            guard let amount = body.amount else { throw WaybillError.validation("amount", "required") }
            decision = .approve(amount: amount)
        case .decline: decision = .decline(reason: body.reason ?? "")
        }
        return .ok(.init(body: .json(try Self.claim(try await claims.decide(try Self.uuid(input.path.claimId), decision, by: me)))))
    }

    func getClaimPhoto(_ input: Operations.GetClaimPhoto.Input) async throws -> Operations.GetClaimPhoto.Output {
        let me = try await principal()
        let (file, data) = try await claims.photo(try Self.uuid(input.path.claimId), file: try Self.uuid(input.path.fileId), for: me)
        let body = HTTPBody(data)
        return .ok(.init(body: file.contentType == "image/png" ? .png(body) : .jpeg(body)))
    }

    static func insuranceTable(_ record: InsuranceTableRecord) throws -> S.InsuranceTable {
        let t = try record.table
        return S.InsuranceTable(
            value1: S.InsuranceTableInput(currency: t.currency,
                                          bands: t.bands.map { S.InsuranceBand(upTo: $0.upTo, rateBasisPoints: $0.rateBasisPoints, minimumPremium: $0.minimumPremium) },
                                          claimWindowDays: t.claimWindowDays, secondApprovalAbove: t.secondApprovalAbove),
            value2: .init(version: record.id ?? 0, maxInsurableValue: t.maxInsurableValue, updatedAt: date(record.createdAt)))
    }

    static func claim(_ view: Claims.View) throws -> S.Claim {
        let c = view.claim
        let claimID = try c.storedID
        func amount(_ value: Int?) -> S.Money? { value.map { money(Money($0, c.currency)) } }
        return S.Claim(
            id: claimID.uuidString, orderId: c.orderID.uuidString, reference: view.order.reference,
            claimant: try view.claimant.map { try person($0, withEmail: true) },
            kind: try wire(c.kind), description: c.description, claimed: money(Money(c.claimedAmount, c.currency)),
            declaredValue: money(Money(view.order.declaredValue ?? 0, c.currency)), status: try wire(c.status),
            proposed: amount(ClaimPolicy.shownProposal(status: c.status, proposed: c.proposedAmount)), firstApproverId: c.firstApproverID?.uuidString,
            approved: amount(c.approvedAmount), decidedBy: c.decidedBy?.uuidString, decidedAt: c.decidedAt.map(date),
            declineReason: c.declineReason, refunded: c.refundID == nil ? nil : amount(c.refundedAmount), paidAt: c.paidAt.map(date),
            paymentNote: c.paymentNote, createdAt: date(c.createdAt),
            photos: try view.photos.map {
                let photoID = try $0.storedID
                return S.ClaimPhoto(id: photoID.uuidString, url: "/api/v1/claims/\(claimID.uuidString)/photos/\(photoID.uuidString)",
                                    contentType: $0.contentType, width: $0.width, height: $0.height)
            },
            availableActions: try view.actions.map { try wire($0) })
    }
}
